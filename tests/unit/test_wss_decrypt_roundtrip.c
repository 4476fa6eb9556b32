/*
 * Unit tests for src/sender and src/wss/wss_decrypt.c: the round trip
 * sender_encrypt_parts() -> wss_decrypt(), in memory and spooled, and what
 * the sender refuses to encrypt (testdecrypt.h: the keys, t_same_0102).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testdecrypt.h"
#include "testutil.h"

/* ------------------------------------------------------------------ */
/* Round trip: sender_encrypt_parts() -> wss_decrypt()                    */
/* ------------------------------------------------------------------ */

static const char rt_envelope[] = "<S:Envelope xmlns:S=\"" NS_SOAP12 "\">"
    "<S:Header><wsse:Security xmlns:wsse=\"" NS_WSSE "\" "
    "S:mustUnderstand=\"true\"><wsse:BinarySecurityToken>AAAA"
    "</wsse:BinarySecurityToken></wsse:Security></S:Header><S:Body/>"
    "</S:Envelope>";

/* The EncryptedKey says what eDelivery AS4 1.15 specifies, and plain
 * OpenSSL can unwrap its key (interoperability). */
static void
t_rt_check_ek(struct arena *a, xmlNodePtr ek)
{
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(fx.cert);
	xmlNodePtr m = xml_child(ek, NS_XENC, "EncryptionMethod");
	xmlNodePtr kid = xml_child(xml_child(xml_child(ek, NS_DS, "KeyInfo"),
	    NS_WSSE, "SecurityTokenReference"), NS_WSSE, "KeyIdentifier");
	EVP_PKEY_CTX *c;
	unsigned char *ct, key[512];
	size_t n = 0, klen = sizeof(key);

	assert_string_equal(xml_attr(a, m, NULL, "Algorithm"), KT_XENC11);
	assert_string_equal(xml_attr(a, xml_child(m, NS_DS, "DigestMethod"),
	    NULL, "Algorithm"), NS_XENC "sha256");
	assert_string_equal(xml_attr(a, xml_child(m, XENC11, "MGF"), NULL,
	    "Algorithm"), XENC11 "mgf1sha256");
	assert_non_null(strstr(xml_attr(a, kid, NULL, "ValueType"),
	    "#X509SubjectKeyIdentifier"));
	assert_non_null(ski);
	assert_string_equal(xml_text(a, kid), codec_base64(a,
	    ASN1_STRING_get0_data(ski), (size_t)ASN1_STRING_length(ski)));
	ct = t_unbase64(a, xml_child(xml_child(ek, NS_XENC, "CipherData"),
	    NS_XENC, "CipherValue"), &n);
	c = EVP_PKEY_CTX_new(fx.priv, NULL);
	assert_non_null(c);
	assert_int_equal(EVP_PKEY_decrypt_init(c), 1);
	assert_true(EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) >
	    0);
	assert_true(EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) > 0);
	assert_true(EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) > 0);
	assert_int_equal(EVP_PKEY_decrypt(c, key, &klen, ct, n), 1);
	assert_int_equal(klen, 16);
	EVP_PKEY_CTX_free(c);
}

/* The Security header after encryption: EncryptedKey first, then one
 * EncryptedData per part (Content-Only, MimeType kept), then the BST. */
static void
t_rt_check(struct arena *a, xmlNodePtr sec, const struct wss_part *parts,
    const struct wss_part *orig, size_t n_parts)
{
	xmlNodePtr n = xml_child(sec, NULL, NULL);
	size_t i;

	assert_true(xml_is(n, NS_XENC, "EncryptedKey"));
	t_rt_check_ek(a, n);
	for (i = 0; i < n_parts; i++) {
		n = xml_next(n, NULL, NULL);
		assert_true(xml_is(n, NS_XENC, "EncryptedData"));
		assert_string_equal(xml_attr(a, n, NULL, "Type"),
		    SWA "Attachment-Content-Only");
		assert_string_equal(xml_attr(a, n, NULL, "MimeType"),
		    orig[i].content_type);
		assert_string_equal(parts[i].content_type,
		    "application/octet-stream");
		assert_int_equal(parts[i].len, orig[i].len + 28);
	}
	assert_true(xml_is(xml_next(n, NULL, NULL), NS_WSSE,
	    "BinarySecurityToken"));
}

/* Encrypt three parts (text, binary of bin_len with an odd Content-ID,
 * empty), check the structure, serialise and re-parse, decrypt; with
 * flip, the last GCM tag byte of the binary part flipped first: EBMS:0102
 * and no part changed. */
static void
t_round_trip(size_t bin_len, int flip)
{
	static const char *const ids[3] = { "a@x", "b c/d%@x", "empty@x" };
	struct arena *a = arena_new(0);
	struct wss_policy pol = t_policy(fx.ring, 0);
	struct wss_part parts[3], orig[3];
	unsigned char *bin = malloc(bin_len);
	xmlDocPtr doc = NULL, doc2 = NULL;
	xmlNodePtr sec;
	xmlChar *out = NULL;
	struct wss_dec_report rep;
	struct err err;
	size_t i;
	int out_len = 0;

	assert_non_null(bin);
	assert_int_equal(RAND_bytes(bin, (int)bin_len), 1);
	memset(parts, 0, sizeof(parts));
	for (i = 0; i < 3; i++) {
		parts[i].content_id = ids[i];
		parts[i].content_type = i == 0 ? "application/xml" :
		    "application/gzip";
	}
	parts[0].data = (const unsigned char *)"<doc>hello</doc>";
	parts[0].len = 16;
	parts[1].data = bin;
	parts[1].len = bin_len;
	parts[2].data = (const unsigned char *)"";
	memcpy(orig, parts, sizeof(parts));
	err_clear(&err);
	assert_int_equal(xml_parse(a, rt_envelope, strlen(rt_envelope), NULL,
	    &doc, &err), 0);
	sec = t_security(doc);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 3, fx.cert,
	    &err), 0);
	t_rt_check(a, sec, parts, orig, 3);
	xmlDocDumpMemory(doc, &out, &out_len);
	assert_int_equal(xml_parse(a, (const char *)out, (size_t)out_len, NULL,
	    &doc2, &err), 0);
	xmlFree(out);
	/* the wrong recipient key fails, the right one decrypts */
	pol.decrypt_keys = fx.ring_other;
	assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts, 3, &pol,
	    &rep, &err), -1);
	t_same_0102(&err, "round trip, other key");
	pol.decrypt_keys = fx.ring;
	err_clear(&err);
	if (flip) {
		struct wss_part enc[3];
		/* the sender may have left the ciphertext in a read-only
		 * spool mapping (a large part, issue 14): flip a copy */
		unsigned char *ct = malloc(parts[1].len);

		assert_non_null(ct);
		memcpy(ct, parts[1].data, parts[1].len);
		ct[parts[1].len - 1] ^= 1;
		parts[1].data = ct;
		memcpy(enc, parts, sizeof(enc));
		assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts,
		    3, &pol, &rep, &err), -1);
		t_same_0102(&err, "round trip, last tag byte");
		assert_memory_equal(parts, enc, sizeof(enc));
		free(ct);
		goto out;
	}
	assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts, 3, &pol,
	    &rep, &err), 0);
	assert_int_equal(rep.n_decrypted, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(parts[i].len, orig[i].len);
		assert_memory_equal(parts[i].data, orig[i].data, orig[i].len);
	}
out:
	free(bin);
	arena_free(a);
}

static void
test_round_trip(void **state)
{
	(void)state;
	t_round_trip(1000, 0);
}

/* Issue 14: parts over several SPOOL_CHUNKs decrypted into a spool file
 * (threshold 0); a tag failure at the end of the last chunk: EBMS:0102,
 * nothing changed. */
static void
test_round_trip_spooled(void **state)
{
	char dir[] = "/tmp/as4gw-test-dec-XXXXXX";
	struct spool *sp = t_spool_bind(dir, 0);

	(void)state;
	t_round_trip(3 * SPOOL_CHUNK + 1, 0);
	t_round_trip(SPOOL_CHUNK - 1, 0);
	t_round_trip(2 * SPOOL_CHUNK + 5, 1);
	(void)spool_bind(NULL);
	spool_free(sp);
	assert_int_equal(rmdir(dir), 0);
}

/* sender_encrypt_parts() refusals leave document and parts unchanged. */
static void
test_encrypt_refusals(void **state)
{
	struct arena *a = arena_new(0);
	struct wss_part parts[2];
	xmlDocPtr doc = NULL;
	xmlNodePtr sec;
	struct err err;

	(void)state;
	memset(parts, 0, sizeof(parts));
	parts[0].content_id = "a@x";
	parts[0].data = (const unsigned char *)"x";
	parts[0].len = 1;
	parts[1].data = (const unsigned char *)"y"; /* no Content-ID */
	parts[1].len = 1;
	err_clear(&err);
	assert_int_equal(xml_parse(a, rt_envelope, strlen(rt_envelope), NULL,
	    &doc, &err), 0);
	sec = t_security(doc);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 0, fx.cert,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	err_clear(&err);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 2, fx.cert,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_int_equal(xml_count(sec, NULL, NULL), 1);
	assert_string_equal((const char *)parts[0].data, "x");
	assert_null(parts[0].content_type);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_spooled),
		cmocka_unit_test(test_encrypt_refusals),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
