/*
 * Unit tests for src/wss/wss_decrypt.c on recorded AS4.NET / Holodeck
 * traffic (../shared/corpus): payloads must equal the extracted ground
 * truth, the *wrong-encrypted* and tampered negatives must give the one
 * EBMS:0102 answer (testdecrypt.h: the keys, t_same_0102).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testdecrypt.h"
#include "testutil.h"

#define RES "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.%s/" \
	"Resources/%s"
#define MAX_PARTS 8

/* ------------------------------------------------------------------ */
/* Recorded traffic                                                    */
/* ------------------------------------------------------------------ */

/* A raw multipart body split into the root part and attachments. */
struct tmime {
	const char *root;
	size_t root_len;
	struct wss_part parts[MAX_PARTS];
	size_t n;
};

/* First occurrence of needle in h[0..n), or NULL. */
static const char *
t_find(const char *h, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(h + i, needle, k) == 0)
			return h + i;
	return NULL;
}

/* A header value from a part's header block (arena), "<>" stripped. */
static const char *
t_header(struct arena *a, const char *h, size_t n, const char *name)
{
	size_t k = strlen(name), i = 0, j;

	while (i < n) {
		for (j = i; j < n && h[j] != '\r' && h[j] != '\n'; j++)
			;
		if (j - i > k && h[i + k] == ':' &&
		    strncasecmp(h + i, name, k) == 0) {
			i += k + 1;
			while (i < j && (h[i] == ' ' || h[i] == '<'))
				i++;
			while (j > i && (h[j - 1] == ' ' || h[j - 1] == '>'))
				j--;
			return arena_strndup(a, h + i, j - i);
		}
		i = j;
		while (i < n && (h[i] == '\r' || h[i] == '\n'))
			i++;
	}
	return NULL;
}

/* Split a recorded body (boundary sniffed from its first delimiter line;
 * a BOM or blank lines before it are preamble). */
static void
t_mime(struct arena *a, const char *body, size_t len, struct tmime *m)
{
	const char *end = body + len, *p = t_find(body, len, "--"), *eol;
	const char *next, *hend;
	char delim[128];
	size_t dl;

	assert_non_null(p);
	for (eol = p; eol < end && *eol != '\r' && *eol != '\n'; eol++)
		;
	dl = (size_t)snprintf(delim, sizeof(delim), "\r\n--%.*s",
	    (int)(eol - p - 2), p + 2);
	for (p = eol + 2, m->n = 0;; m->n++) {
		next = t_find(p, (size_t)(end - p), delim);
		hend = next != NULL ? t_find(p, (size_t)(next - p),
		    "\r\n\r\n") : NULL;
		assert_non_null(hend);
		assert_true(m->n <= MAX_PARTS);
		if (m->n == 0) {
			m->root = hend + 4;
			m->root_len = (size_t)(next - m->root);
		} else {
			struct wss_part *q = &m->parts[m->n - 1];

			q->content_id = t_header(a, p, (size_t)(hend - p),
			    "Content-ID");
			q->content_type = t_header(a, p, (size_t)(hend - p),
			    "Content-Type");
			q->data = (const unsigned char *)hend + 4;
			q->len = (size_t)(next - (hend + 4));
		}
		p = next + dl;
		if (p + 2 <= end && p[0] == '-' && p[1] == '-')
			break;
		p += 2;
	}
}

/* A recorded message ready for wss_decrypt(). */
struct trec {
	struct arena *a;
	char *raw;
	xmlDocPtr doc;
	struct tmime mime;
	struct wss_key *key;
	struct wss_keyring *ring;  /* the same pair as a leg's keyring */
};

/* Load corpus message rel and the corpus key <sha>; 0, or -1 when
 * ../shared is absent (the caller skips). */
static int
t_rec_load(struct trec *r, const char *rel, const char *sha)
{
	char path[512], cert[512], key[512];
	size_t len = 0;
	struct wss_keyring_spec spec = { NULL, NULL, 0 };
	struct err err;

	memset(r, 0, sizeof(*r));
	(void)snprintf(path, sizeof(path), "corpus/messages/%s", rel);
	r->raw = testutil_read_shared(path, &len);
	if (r->raw == NULL)
		return -1;
	r->a = arena_new(0);
	t_mime(r->a, r->raw, len, &r->mime);
	err_clear(&err);
	assert_int_equal(xml_parse(r->a, r->mime.root, r->mime.root_len, NULL,
	    &r->doc, &err), 0);
	(void)snprintf(cert, sizeof(cert), "%s/corpus/keys/%s.pem",
	    testutil_shared_dir(), sha);
	(void)snprintf(key, sizeof(key), "%s/corpus/keys/%s.key.pem",
	    testutil_shared_dir(), sha);
	if (wss_key_load(cert, key, &r->key, &err) < 0)
		fail_msg("key %s: %s", sha, err.msg);
	spec.cert = cert;
	spec.key = key;
	if (wss_keyring_new(&spec, 1, &r->ring, &err) < 0)
		fail_msg("keyring %s: %s", sha, err.msg);
	return 0;
}

/* Release a recorded message. */
static void
t_rec_free(struct trec *r)
{
	wss_key_free(r->key);
	wss_keyring_free(r->ring);
	arena_free(r->a);
	free(r->raw);
}

/* wss_decrypt() on a recorded message under the default policy. */
static int
t_rec_decrypt(struct trec *r, struct err *err)
{
	struct wss_policy pol = t_policy(r->ring, 0);
	struct wss_dec_report rep;

	err_clear(err);
	/* as wss_inbound: IDs first, for BinarySecurityToken references */
	if (wss_ids_index(r->doc, err) < 0)
		return -1;
	return wss_decrypt(r->a, r->doc, t_security(r->doc), r->mime.parts,
	    r->mime.n, &pol, &rep, err);
}

/* One recorded message that must decrypt to the extracted ground truth:
 * pairs of Content-ID and decrypted-*.bin file name. */
static void
t_rec_ok(const char *rel, const char *sha, const char *const *pairs,
    size_t n_pairs)
{
	char path[512];
	struct trec r;
	struct err err;
	size_t i, j, len;
	char *want;

	if (t_rec_load(&r, rel, sha) < 0)
		testutil_skip("corpus not in ../shared");
	if (t_rec_decrypt(&r, &err) < 0)
		fail_msg("%s: %s", rel, err.msg);
	for (i = 0; i < n_pairs; i++) {
		for (j = 0; j < r.mime.n; j++)
			if (strcmp(r.mime.parts[j].content_id, pairs[2 * i]) ==
			    0)
				break;
		assert_true(j < r.mime.n);
		assert_int_equal(r.mime.parts[j].decrypted, 1);
		(void)snprintf(path, sizeof(path), "corpus/extracted/%s/%s",
		    rel, pairs[2 * i + 1]);
		want = testutil_read_shared(path, &len);
		assert_non_null(want);
		assert_int_equal(r.mime.parts[j].len, len);
		assert_memory_equal(r.mime.parts[j].data, want, len);
		free(want);
	}
	t_rec_free(&r);
}

#define PARTYC "21f569479758"
#define ACCESS_POINT_B "3da5db472d77"
#define PARTYA "0d512bdcd9f1"
#define ISSUERSERIAL_CID "b545c3a0-e57f-46aa-862f-381eb4b7009-"
#define BUNDLED_CID "30392f3c-bc9c-4a1f-ba5e-5d4d81382ee-"

/* AS4.NET: xenc11 rsa-oaep (SHA-256 digest, default MGF) + aes128-gcm. */
static void
test_corpus_compressed(void **state)
{
	static const char *const pairs[] = {
		"flower", "decrypted-flower.bin",
		"xmldoc", "decrypted-xmldoc.bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-compressed-message.as4");
	t_rec_ok(rel, PARTYC, pairs, 2);
}

/* Holodeck: rsa-oaep-mgf1p with SHA-256, IssuerSerial, signed too. */
static void
test_corpus_issuerserial(void **state)
{
	static const char *const pairs[] = {
		ISSUERSERIAL_CID "291596031@CLT-SMOREELS.mshome.net",
		"decrypted-" ISSUERSERIAL_CID "291596031@CLT-SMOREELS.m.bin",
		ISSUERSERIAL_CID "1650194442@CLT-SMOREELS.mshome.net",
		"decrypted-" ISSUERSERIAL_CID "1650194442@CLT-SMOREELS..bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-signed-issuerserial.as4");
	t_rec_ok(rel, ACCESS_POINT_B, pairs, 2);
}

/* Holodeck UserMessage bundled with a Receipt, 3.3 MB payload. */
static void
test_corpus_bundled(void **state)
{
	static const char *const pairs[] = {
		BUNDLED_CID "1136335733@CLT-SNEIRINCK",
		"decrypted-" BUNDLED_CID "1136335733@CLT-SNEIRINCK.bin",
		BUNDLED_CID "1427821804@CLT-SNEIRINCK",
		"decrypted-" BUNDLED_CID "1427821804@CLT-SNEIRINCK.bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4_bundled_encrypted_message");
	t_rec_ok(rel, PARTYC, pairs, 2);
}

/* AS4.NET test 8.4.6: corrupted attachments -> EBMS:0102, the same bytes
 * as every generated failure. */
static void
test_corpus_wrong_encrypted(void **state)
{
	static const char *const files[][2] = {
		{ "ComponentTests",
		    "receiveagent-wrong-encrypted-message.as4" },
		{ "IntegrationTests", "as4-soap-wrong-encrypted-message.txt" },
		{ "UnitTests", "as4-soap-wrong-encrypted-message" },
	};
	char rel[256];
	struct trec r;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		(void)snprintf(rel, sizeof(rel), RES, files[i][0], files[i][1]);
		if (t_rec_load(&r, rel, PARTYA) < 0)
			testutil_skip("corpus not in ../shared");
		assert_int_equal(t_rec_decrypt(&r, &err), -1);
		assert_string_equal(err.ebms_code, "EBMS:0102");
		assert_int_equal(r.mime.parts[0].decrypted, 0);
		t_same_0102(&err, files[i][1]);
		t_rec_free(&r);
	}
}

/* Tampering with a valid recorded message: a flipped attachment byte
 * (GCM tag) -> EBMS:0102; the EncryptedKey switched to rsa-1_5 ->
 * EBMS:0103 under the default policy. */
static void
test_corpus_tampered(void **state)
{
	char rel[256];
	struct trec r;
	struct err err;
	xmlNodePtr ek;
	unsigned char *copy;

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-compressed-message.as4");
	if (t_rec_load(&r, rel, PARTYC) < 0)
		testutil_skip("corpus not in ../shared");
	copy = arena_memdup(r.a, r.mime.parts[1].data, r.mime.parts[1].len);
	copy[r.mime.parts[1].len / 2] ^= 0x80;
	r.mime.parts[1].data = copy;
	assert_int_equal(t_rec_decrypt(&r, &err), -1);
	t_same_0102(&err, "flipped attachment byte");
	ek = xml_child(t_security(r.doc), NS_XENC, "EncryptedKey");
	xmlSetProp(xml_child(ek, NS_XENC, "EncryptionMethod"),
	    (const xmlChar *)"Algorithm", (const xmlChar *)KT_PKCS1);
	assert_int_equal(t_rec_decrypt(&r, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0103");
	t_rec_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_compressed),
		cmocka_unit_test(test_corpus_issuerserial),
		cmocka_unit_test(test_corpus_bundled),
		cmocka_unit_test(test_corpus_wrong_encrypted),
		cmocka_unit_test(test_corpus_tampered),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
