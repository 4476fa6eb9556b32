/*
 * Unit tests for wss_inbound with the signature methods of issue 13
 * (wss_eddsa.c, wss_sigalg.c): Ed25519 and brainpool messages with two SwA
 * attachments under the eDelivery AS4 2.0 profiles, the same under the 1.x
 * default, an RSA signature on a 2.0 leg (downgrade), the key references
 * (SKI, IssuerSerial, BinarySecurityToken, PKIPath) and a tampered
 * attachment.  The identities: testeddsa.h; the two attachments:
 * testinbound.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testeddsa.h"
#include "testinbound.h"
#include "testutil.h"

/* A UserMessage with two attachments (as test_wss_inbound.c sends). */
static const char user_message[] =
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\" xmlns:eb=\"" NS_EB "\">"
    "<env:Header><eb:Messaging env:mustUnderstand=\"true\">"
    "<eb:UserMessage><eb:MessageInfo>"
    "<eb:Timestamp>2025-01-01T00:00:00Z</eb:Timestamp>"
    "<eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>"
    "<eb:PayloadInfo><eb:PartInfo href=\"cid:p1@test\"/>"
    "<eb:PartInfo href=\"cid:p2@test\"/></eb:PayloadInfo>"
    "</eb:UserMessage></eb:Messaging></env:Header>"
    "<env:Body/></env:Envelope>";

/* ---- wss_inbound ------------------------------------------------------- */

/* user_message signed with identity i over Messaging, Body and both
 * attachments, serialised (arena). */
static char *
signed_user_message(struct arena *a, enum id i)
{
	xmlDocPtr doc = parse(a, user_message, strlen(user_message));
	struct wss_part parts[2];
	struct err err;

	err_clear(&err);
	parts_init(parts);
	if (wss_sign_parts(doc, fx.key[i], parts, 2, &err) != 0)
		fail_msg("sign %s: %s %s", ids[i].name, err.msg, err.detail);
	return dump(a, doc);
}

/* wss_inbound over text with fresh attachments, signer trust t and the
 * algorithms algs; the ebMS code of a refusal into code (NULL: ok). */
static void
inbound(const char *name, const char *text, const struct trust *t,
    unsigned algs, const char *code)
{
	struct arena *a = arena_new(0);
	struct wss_policy pol = { .signing = WSS_REQUIRED,
		.encryption = WSS_OPTIONAL, .algs = algs, .trust = t,
		.skew_ms = 300000, .max_references = 30, .max_transforms = 5 };
	struct wss_part parts[2];
	struct wss_result res = { 0 };
	struct soap_env env;
	xmlDocPtr doc = parse(a, text, strlen(text));
	struct err err;
	int rc;

	err_clear(&err);
	parts_init(parts);
	assert_int_equal(soap_open(doc, &env, &err), 0);
	rc = wss_inbound(a, doc, xml_child(env.header, NS_EB, "Messaging"),
	    env.body, parts, 2, &pol, &res, &err);
	if (code == NULL && (rc != 0 || !res.verified ||
	    res.n_references != 4))
		fail_msg("%s: refused: %s %s (%s)", name,
		    err.ebms_code ? err.ebms_code : "-", err.msg, err.detail);
	if (code != NULL && (rc != -1 || err.ebms_code == NULL ||
	    strcmp(err.ebms_code, code) != 0))
		fail_msg("%s: expected %s, got rc %d %s %s (%s)", name, code,
		    rc, err.ebms_code ? err.ebms_code : "-", err.msg,
		    err.detail);
	arena_free(a);
}

/* 2.0 and 2.0-EC legs take their signatures; the 1.x default refuses
 * Ed25519 as it refuses any algorithm it does not list (EBMS:0103, as
 * NEGATIVE-CASES 37); a 2.0 leg refuses RSA (no downgrade). */
static void
test_inbound_profiles(void **state)
{
	struct arena *a = arena_new(0);
	char *ed = signed_user_message(a, I_ED25519);
	char *bp = signed_user_message(a, I_BP256);
	char *p521 = signed_user_message(a, I_P521);
	char *rsa = signed_user_message(a, I_RSA);
	struct trust *t = NULL;
	char *k1;

	(void)state;
	inbound("ed25519 on 2.0", ed, fx.trust[I_ED25519],
	    WSS_ALGS_EDELIVERY_2_0, NULL);
	inbound("brainpool on 2.0-ec", bp, fx.trust[I_BP256],
	    WSS_ALGS_EDELIVERY_2_0_EC, NULL);
	inbound("p-521 ecdsa-sha512 on 2.0-ec", p521, fx.trust[I_P521],
	    WSS_ALGS_EDELIVERY_2_0_EC, NULL);
	inbound("ed25519 non-canonical S", ed25519_s_plus_l(a, ed),
	    fx.trust[I_ED25519], WSS_ALGS_EDELIVERY_2_0, "EBMS:0101");
	inbound("rsa on 1.x", rsa, fx.trust[I_RSA], WSS_ALGS_DEFAULT, NULL);
	inbound("ed25519 on 1.x", ed, fx.trust[I_ED25519], WSS_ALGS_DEFAULT,
	    "EBMS:0103");
	inbound("p-521 on 1.x (no ecdsa-sha512)", p521, fx.trust[I_P521],
	    WSS_ALGS_DEFAULT, "EBMS:0103");
	inbound("rsa on 2.0 (downgrade)", rsa, fx.trust[I_RSA],
	    WSS_ALGS_EDELIVERY_2_0, "EBMS:0103");
	inbound("rsa on 2.0-ec (downgrade)", rsa, fx.trust[I_RSA],
	    WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103");
	inbound("ed25519 on 2.0-ec", ed, fx.trust[I_ED25519],
	    WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103");
	/* the method must fit the key, whatever the leg allows */
	inbound("ed25519 key, ecdsa-sha256 method", replace(a, ed,
	    MORE21 "eddsa-ed25519", MORE "ecdsa-sha256"), fx.trust[I_ED25519],
	    WSS_ALGS_EDELIVERY_2_0 | WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0101");
	/* a secp256k1 certificate in the BST, bound to the leg: refused
	 * when its key is adopted, before any crypto */
	k1 = testutil_read(arena_sprintf(a, "%s/k1.b64", fx.dir), NULL);
	assert_non_null(k1);
	assert_int_equal(trust_make("k1", &t), 0);
	inbound("secp256k1 signer", replace(a, signed_user_message(a,
	    I_P256), wss_key_cert_b64(fx.key[I_P256]), k1), t,
	    WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0101");
	trust_free(t);
	free(k1);
	arena_free(a);
}

/* text with its SecurityTokenReference replaced by to (arena). */
static char *
with_str(struct arena *a, const char *text, const char *to)
{
	const char *b = strstr(text, "<wsse:SecurityTokenReference");
	const char *e = b != NULL ? strstr(b,
	    "</wsse:SecurityTokenReference>") : NULL;

	assert_non_null(e);
	e += strlen("</wsse:SecurityTokenReference>");
	return arena_sprintf(a, "%.*s%s%s", (int)(b - text), text, to, e);
}

/* The signer certificate of identity i named by SKI (the extension, or
 * RFC 5280 4.2.1.2 (1)) and by X509IssuerSerial, as WS-Security X.509
 * Token Profile 1.1 3.2 writes them; both verify for Ed25519 and
 * brainpool signers, and a serial not the signer's does not. */
static void
test_inbound_key_references(void **state)
{
	static const enum id which[] = { I_ED25519, I_BP256 };
	struct arena *a = arena_new(0);

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		X509 *x = wss_key_x509(fx.key[which[i]]);
		const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(x);
		unsigned char md[EVP_MAX_MD_SIZE];
		unsigned md_len = 0;
		BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x),
		    NULL);
		char *dec = BN_bn2dec(bn), *text, *by_ski, *by_is;
		unsigned algs = which[i] == I_ED25519 ?
		    WSS_ALGS_EDELIVERY_2_0 : WSS_ALGS_EDELIVERY_2_0_EC;

		if (ski != NULL) {
			md_len = (unsigned)ASN1_STRING_length(ski);
			memcpy(md, ASN1_STRING_get0_data(ski), md_len);
		} else {
			assert_int_equal(X509_pubkey_digest(x, EVP_sha1(), md,
			    &md_len), 1);
		}
		text = signed_user_message(a, which[i]);
		by_ski = with_str(a, text, arena_sprintf(a,
		    "<wsse:SecurityTokenReference><wsse:KeyIdentifier "
		    "EncodingType=\"http://docs.oasis-open.org/wss/2004/01/"
		    "oasis-200401-wss-soap-message-security-1.0#Base64Binary\" "
		    "ValueType=\"http://docs.oasis-open.org/wss/2004/01/"
		    "oasis-200401-wss-x509-token-profile-1.0#"
		    "X509SubjectKeyIdentifier\">%s</wsse:KeyIdentifier>"
		    "</wsse:SecurityTokenReference>", codec_base64(a, md,
		    md_len)));
		by_is = arena_sprintf(a, "<wsse:SecurityTokenReference>"
		    "<ds:X509Data><ds:X509IssuerSerial><ds:X509IssuerName>"
		    "CN=test-ca</ds:X509IssuerName><ds:X509SerialNumber>%s"
		    "</ds:X509SerialNumber></ds:X509IssuerSerial></ds:X509Data>"
		    "</wsse:SecurityTokenReference>", dec);
		inbound("by SKI", by_ski, fx.trust[which[i]], algs, NULL);
		inbound("by IssuerSerial", with_str(a, text, by_is),
		    fx.trust[which[i]], algs, NULL);
		inbound("by another serial", with_str(a, text, replace(a,
		    by_is, dec, "12345")), fx.trust[which[i]], algs,
		    "EBMS:0101");
		OPENSSL_free(dec);
		BN_free(bn);
	}
	arena_free(a);
}

/* WS-Security X.509 Token Profile 1.1 3.1: an X509PKIPathv1 token, the
 * DER SEQUENCE OF Certificate from the CA to the leaf, base64 (arena). */
static char *
pkipath_b64(struct arena *a, X509 *ca, X509 *leaf)
{
	unsigned char *d1 = NULL, *d2 = NULL, *seq;
	int n1 = i2d_X509(ca, &d1), n2 = i2d_X509(leaf, &d2);
	size_t n = (size_t)n1 + (size_t)n2;
	char *b64;

	assert_true(n1 > 0 && n2 > 0 && n < 65536);
	seq = arena_alloc(a, n + 4);
	assert_non_null(seq);
	seq[0] = 0x30;
	seq[1] = 0x82;
	seq[2] = (unsigned char)(n >> 8);
	seq[3] = (unsigned char)n;
	memcpy(seq + 4, d1, (size_t)n1);
	memcpy(seq + 4 + n1, d2, (size_t)n2);
	b64 = codec_base64(a, seq, n + 4);
	OPENSSL_free(d1);
	OPENSSL_free(d2);
	return b64;
}

/* An Ed25519 signer whose token is an X509PKIPathv1 (the 2.0 texts allow
 * it beside X509v3) verifies; the leaf is the last certificate. */
static void
test_inbound_pkipath(void **state)
{
	struct arena *a = arena_new(0);
	char *text = signed_user_message(a, I_ED25519), p[128];
	struct err err;
	X509 *ca = NULL;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_read_cert(path(p, sizeof(p), "ca.crt"), &ca,
	    &err), 0);
	text = replace(a, text, wss_key_cert_b64(fx.key[I_ED25519]),
	    pkipath_b64(a, ca, wss_key_x509(fx.key[I_ED25519])));
	text = replace(a, text, "#X509v3\"", "#X509PKIPathv1\"");
	text = replace(a, text, "#X509v3\"", "#X509PKIPathv1\"");
	inbound("ed25519 in a PKIPath", text, fx.trust[I_ED25519],
	    WSS_ALGS_EDELIVERY_2_0, NULL);
	X509_free(ca);
	arena_free(a);
}

/* An attachment changed after signing fails the Ed25519 and the
 * brainpool signature (the digest over the SwA transform). */
static void
test_inbound_attachment_tampered(void **state)
{
	struct arena *a = arena_new(0);
	struct wss_policy pol = { .signing = WSS_REQUIRED,
		.encryption = WSS_OPTIONAL, .skew_ms = 300000,
		.max_references = 30, .max_transforms = 5 };
	static const enum id which[] = { I_ED25519, I_BP256 };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		char *text = signed_user_message(a, which[i]);
		xmlDocPtr doc = parse(a, text, strlen(text));
		struct wss_part parts[2];
		struct wss_result res = { 0 };
		struct soap_env env;
		struct err err;
		unsigned char copy[sizeof(part2)];

		err_clear(&err);
		pol.trust = fx.trust[which[i]];
		pol.algs = which[i] == I_ED25519 ? WSS_ALGS_EDELIVERY_2_0 :
		    WSS_ALGS_EDELIVERY_2_0_EC;
		parts_init(parts);
		memcpy(copy, part2, sizeof(copy));
		copy[5] ^= 1;
		parts[1].data = copy;
		assert_int_equal(soap_open(doc, &env, &err), 0);
		assert_int_equal(wss_inbound(a, doc, xml_child(env.header,
		    NS_EB, "Messaging"), env.body, parts, 2, &pol, &res,
		    &err), -1);
		assert_string_equal(err.ebms_code, "EBMS:0101");
	}
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inbound_profiles),
		cmocka_unit_test(test_inbound_key_references),
		cmocka_unit_test(test_inbound_pkipath),
		cmocka_unit_test(test_inbound_attachment_tampered),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
