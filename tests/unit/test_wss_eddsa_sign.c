/*
 * Unit tests for wss_eddsa.c and wss_sigalg.c (issue 13): Ed25519
 * (eddsa-ed25519, RFC 9231 / RFC 8032) as our xmlsec transform and the
 * ECDSA curves of eDelivery AS4 2.0 and BDEW, on envelopes.
 *  - outside references: xmlsec's own Ed25519 vectors (../shared/vectors)
 *    verify through our transform with the key from the certificate given
 *    (never the KeyInfo in the file); Ed25519ph / Ed25519ctx are unknown;
 *    a tampered vector fails;
 *  - round trips: wss_sign_envelope with Ed25519, P-256, P-384, P-521 and
 *    brainpoolP256r1 keys, verified by wss_verify_envelope, the method the
 *    key calls for (wss_sign_method_uri);
 *  - negatives: a flipped bit, an ECDSA value in DER, an Ed25519 S + L
 *    (non-canonical, refused by OpenSSL's RFC 8032 5.1.7 check), methods
 *    that do not fit the key, secp256k1 and explicit curve parameters,
 *    Ed448.
 * The identities: testeddsa.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testeddsa.h"
#include "testutil.h"

#define VEC "vectors/xmlsec/aleksey-xmldsig-01/"
#define VEC_KEYS "vectors/xmlsec/keys/eddsa/"

static const char envelope12[] =
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\" xmlns:eb=\"" NS_EB "\">"
    "<env:Header><eb:Messaging env:mustUnderstand=\"true\">"
    "<eb:SignalMessage><eb:MessageInfo>"
    "<eb:Timestamp>2025-01-01T00:00:00.000Z</eb:Timestamp>"
    "<eb:MessageId>t1@test</eb:MessageId></eb:MessageInfo>"
    "<eb:Receipt><x:Any xmlns:x=\"urn:x\"/></eb:Receipt>"
    "</eb:SignalMessage></eb:Messaging></env:Header>"
    "<env:Body><x:Payload xmlns:x=\"urn:x\">hello</x:Payload></env:Body>"
    "</env:Envelope>";

/* envelope12 signed with identity i, serialised. */
static char *
signed_text(struct arena *a, enum id i)
{
	xmlDocPtr doc = parse(a, envelope12, strlen(envelope12));
	struct err err;

	err_clear(&err);
	if (wss_sign_envelope(doc, fx.key[i], &err) != 0)
		fail_msg("sign %s: %s %s", ids[i].name, err.msg, err.detail);
	return dump(a, doc);
}

/* wss_verify_envelope of text with certificate c. */
static int
verify(struct arena *a, const char *text, const struct wss_cert *c,
    struct err *err)
{
	err_clear(err);
	return wss_verify_envelope(parse(a, text, strlen(text)), c, err);
}

/* Expect an EBMS:0101 refusal whose detail holds detail. */
static void
assert_refused(int rc, const struct err *err, const char *detail)
{
	assert_int_equal(rc, -1);
	assert_int_equal(err->kind, ERR_EBMS);
	assert_string_equal(err->ebms_code, "EBMS:0101");
	if (detail != NULL && strstr(err->detail, detail) == NULL)
		fail_msg("detail \"%s\" lacks \"%s\"", err->detail, detail);
}

/* ---- xmlsec's vectors through our transform ------------------------- */

/* Verify a vector under ../shared with the key of cert: rc of
 * xmlSecDSigCtxVerify, the status in *ret_ok (1 succeeded).  The context
 * is ours plus what xmlsec's vectors use (inclusive c14n, the enveloped
 * and XPath transforms, the whole-document reference "").  -2 when the
 * vector is absent. */
static int
vector_verify(const char *rel, const char *from, const char *to,
    const struct wss_cert *cert, int *ret_ok)
{
	struct arena *a = arena_new(0);
	size_t len = 0;
	char *text = testutil_read_shared(rel, &len), *xml;
	xmlSecDSigCtxPtr ctx = NULL;
	xmlDocPtr doc;
	xmlNodePtr sig;
	struct err err;
	int rc;

	*ret_ok = 0;
	if (text == NULL) {
		arena_free(a);
		return -2;
	}
	xml = from != NULL ? replace(a, text, from, to) : text;
	doc = parse(a, xml, from != NULL ? strlen(xml) : len);
	err_clear(&err);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	sig = xmlSecFindNode(xmlDocGetRootElement(doc), xmlSecNodeSignature,
	    xmlSecDSigNs);
	assert_non_null(sig);
	ctx = wss_dsig_ctx_new(1);
	assert_non_null(ctx);
	ctx->enabledReferenceUris |= xmlSecTransformUriTypeEmpty;
	assert_int_equal(xmlSecDSigCtxEnableSignatureTransform(ctx,
	    xmlSecTransformInclC14NId), 0);
	assert_int_equal(xmlSecDSigCtxEnableReferenceTransform(ctx,
	    xmlSecTransformEnvelopedId), 0);
	assert_int_equal(xmlSecDSigCtxEnableReferenceTransform(ctx,
	    xmlSecTransformXPathId), 0);
	ctx->signKey = wss_cert_xmlsec(cert);
	assert_non_null(ctx->signKey);
	rc = xmlSecDSigCtxVerify(ctx, sig);
	*ret_ok = rc == 0 && ctx->status == xmlSecDSigStatusSucceeded;
	xmlSecDSigCtxDestroy(ctx);
	free(text);
	arena_free(a);
	return rc;
}

/* The two Ed25519 vectors verify; Ed25519ph / ctx are unknown; tampered
 * ones fail. */
static void
test_xmlsec_vectors(void **state)
{
	static const char *const good[] = {
		VEC "enveloped-sha256-eddsa-ed25519.xml",
		VEC "enveloping-sha256-eddsa-ed25519-der-encoded-key-value.xml",
	};
	static const char *const unknown[] = {
		VEC "enveloped-sha256-eddsa-ed25519ph.xml",
		VEC "enveloped-sha256-eddsa-ed25519ph-with-context-string.xml",
		VEC "enveloped-sha256-eddsa-ed25519ctx-with-context-string.xml",
	};
	struct wss_cert *cert = NULL, *ed448 = NULL;
	char p[1024], *probe;
	struct err err;
	int ok;

	(void)state;
	err_clear(&err);
	probe = testutil_read_shared(VEC_KEYS "eddsa-ed25519-cert.pem", NULL);
	free(probe);
	if (probe == NULL)
		testutil_skip("xmlsec Ed25519 vectors not found under "
		    "../shared/vectors (set AS4GW_SHARED)");
	(void)snprintf(p, sizeof(p), "%s/" VEC_KEYS "eddsa-ed25519-cert.pem",
	    testutil_shared_dir());
	assert_int_equal(wss_cert_load(p, &cert, &err), 0);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(vector_verify(good[i], NULL, NULL, cert, &ok),
		    0);
		if (!ok)
			fail_msg("%s does not verify", good[i]);
	}
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(vector_verify(unknown[i], NULL, NULL, cert,
		    &ok), -1);
		assert_int_equal(ok, 0);
	}
	assert_int_equal(wss_alg_from_uri(MORE21 "eddsa-ed25519ph"), 0);
	assert_int_equal(wss_alg_from_uri(MORE21 "eddsa-ed25519ctx"), 0);
	/* tampered: the signed data, then the SignatureValue */
	(void)vector_verify(good[0], "Hello, World!", "Hello, World?", cert,
	    &ok);
	assert_int_equal(ok, 0);
	(void)vector_verify(good[1], ">some text<", ">some text!<", cert, &ok);
	assert_int_equal(ok, 0);
	(void)vector_verify(good[0], "e9Ku8jwx", "e9Ku8jwy", cert, &ok);
	assert_int_equal(ok, 0);
	/* Ed448 is no key of ours */
	(void)snprintf(p, sizeof(p), "%s/" VEC_KEYS "eddsa-ed448-cert.pem",
	    testutil_shared_dir());
	err_clear(&err);
	assert_int_equal(wss_cert_load(p, &ed448, &err), -1);
	assert_null(ed448);
	wss_cert_free(cert);
}

/* ---- our own round trips and their negatives -------------------------- */

/* Each key signs with its method and verifies; another key does not. */
static void
test_round_trips(void **state)
{
	struct arena *a = arena_new(0);
	struct err err;

	(void)state;
	for (int i = 0; i < I_N; i++) {
		char *text = signed_text(a, (enum id)i);
		char *m = arena_sprintf(a, "SignatureMethod Algorithm=\"%s\"",
		    ids[i].method);

		print_message("%s: %s\n", ids[i].name,
		    wss_sign_method_uri(fx.key[i]));
		assert_string_equal(wss_sign_method_uri(fx.key[i]),
		    ids[i].method);
		assert_non_null(strstr(text, m));
		if (verify(a, text, fx.cert[i], &err) != 0)
			fail_msg("%s: %s (%s)", ids[i].name, err.msg,
			    err.detail);
		assert_refused(verify(a, text, fx.cert[(i + 1) % I_N], &err),
		    &err, NULL);
	}
	arena_free(a);
}

/* text with the content of every <tag>...</tag> emptied (arena). */
static char *
blank(struct arena *a, const char *text, const char *tag)
{
	char *open = arena_sprintf(a, "<%s>", tag), *out = arena_strdup(a, "");
	const char *p = text, *b, *e;

	while ((b = strstr(p, open)) != NULL) {
		b += strlen(open);
		e = strstr(b, "</");
		assert_non_null(e);
		out = arena_sprintf(a, "%s%.*s", out, (int)(b - p), p);
		p = e;
	}
	return arena_sprintf(a, "%s%s", out, p);
}

/* The signature of text made again by xmlsec with method uri instead of
 * the one our signing chose for identity i (arena). */
static char *
resign(struct arena *a, const char *text, enum id i, const char *uri)
{
	char *t = replace(a, text, ids[i].method, uri);
	xmlDocPtr doc;
	xmlSecDSigCtxPtr ctx = wss_dsig_ctx_new(1);
	struct err err;

	t = blank(a, blank(a, t, "ds:DigestValue"), "ds:SignatureValue");
	doc = parse(a, t, strlen(t));
	err_clear(&err);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	assert_non_null(ctx);
	ctx->signKey = wss_key_xmlsec(fx.key[i]);
	if (xmlSecDSigCtxSign(ctx, xmlSecFindNode(xmlDocGetRootElement(doc),
	    xmlSecNodeSignature, xmlSecDSigNs)) != 0)
		fail_msg("%s: xmlsec cannot sign with %s", ids[i].name, uri);
	xmlSecDSigCtxDestroy(ctx);
	return dump(a, doc);
}

/* xmlsec's ecdsa-sha256/384/512 on every curve we allow, whatever the
 * digest size: signed by xmlsec, verified by wss_verify_envelope (r || s
 * each of the order's size, also for P-521's 66 octets). */
static void
test_ecdsa_digests_on_curves(void **state)
{
	static const char *const m[] = { MORE "ecdsa-sha256",
		MORE "ecdsa-sha384", MORE "ecdsa-sha512" };
	static const enum id ec[] = { I_P256, I_P384, I_P521, I_BP256 };
	static const size_t half[] = { 32, 48, 66, 32 };
	struct arena *a = arena_new(0);
	struct err err;
	size_t len;

	(void)state;
	for (size_t i = 0; i < sizeof(ec) / sizeof(ec[0]); i++) {
		char *text = signed_text(a, ec[i]);

		for (size_t j = 0; j < 3; j++) {
			char *t = strcmp(m[j], ids[ec[i]].method) == 0 ? text :
			    resign(a, text, ec[i], m[j]);

			assert_non_null(strstr(t, m[j]));
			(void)sigvalue(a, t, &len);
			assert_int_equal(len, 2 * half[i]);
			if (verify(a, t, fx.cert[ec[i]], &err) != 0)
				fail_msg("%s with %s: %s (%s)", ids[ec[i]].name,
				    m[j], err.msg, err.detail);
		}
	}
	arena_free(a);
}

/* A flipped bit in any SignatureValue is refused. */
static void
test_flipped_bit(void **state)
{
	struct arena *a = arena_new(0);
	struct err err;
	size_t len;

	(void)state;
	for (int i = 0; i < I_N; i++) {
		char *text = signed_text(a, (enum id)i);
		unsigned char *raw = sigvalue(a, text, &len);

		raw[len / 3] ^= 0x10;
		assert_refused(verify(a, with_sigvalue(a, text, raw, len),
		    fx.cert[i], &err), &err, "does not verify");
	}
	arena_free(a);
}

/* XML Signature 1.1 6.4.3: ECDSA is raw r || s; the same signature in
 * DER (what Java's Signature class yields) or shortened is refused. */
static void
test_ecdsa_der_refused(void **state)
{
	static const enum id ec[] = { I_P256, I_P384, I_P521, I_BP256 };
	struct arena *a = arena_new(0);
	struct err err;

	(void)state;
	for (size_t i = 0; i < sizeof(ec) / sizeof(ec[0]); i++) {
		char *text = signed_text(a, ec[i]);
		size_t len;
		unsigned char *raw = sigvalue(a, text, &len), *der = NULL;
		ECDSA_SIG *s = ECDSA_SIG_new();
		int n;

		assert_int_equal(ECDSA_SIG_set0(s, BN_bin2bn(raw,
		    (int)(len / 2), NULL), BN_bin2bn(raw + len / 2,
		    (int)(len / 2), NULL)), 1);
		n = i2d_ECDSA_SIG(s, &der);
		assert_true(n > 0);
		assert_refused(verify(a, with_sigvalue(a, text, der,
		    (size_t)n), fx.cert[ec[i]], &err), &err,
		    "does not verify");
		OPENSSL_free(der);
		ECDSA_SIG_free(s);
		/* one octet short: r and s cut by one */
		assert_refused(verify(a, with_sigvalue(a, text, raw + 1,
		    len - 2), fx.cert[ec[i]], &err), &err, "does not verify");
	}
	arena_free(a);
}

/* Does xmlsec alone (wss_dsig_ctx_new(1), no precheck) find text's
 * signature valid with the key of c? */
static int
xmlsec_verifies(struct arena *a, const char *text, const struct wss_cert *c)
{
	xmlDocPtr doc = parse(a, text, strlen(text));
	xmlSecDSigCtxPtr ctx = wss_dsig_ctx_new(1);
	struct err err;
	int ok;

	err_clear(&err);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	assert_non_null(ctx);
	ctx->signKey = wss_cert_xmlsec(c);
	ok = xmlSecDSigCtxVerify(ctx, xmlSecFindNode(xmlDocGetRootElement(doc),
	    xmlSecNodeSignature, xmlSecDSigNs)) == 0 &&
	    ctx->status == xmlSecDSigStatusSucceeded;
	xmlSecDSigCtxDestroy(ctx);
	return ok;
}

/* RFC 8032 5.1.7: S must be < L.  S + L satisfies the group equation
 * all the same ([S]B = [S + L]B), so only that check refuses it — in
 * wss_verify_envelope and in our xmlsec transform alone. */
static void
test_ed25519_noncanonical_s(void **state)
{
	struct arena *a = arena_new(0);
	char *text = signed_text(a, I_ED25519);
	char *bad = ed25519_s_plus_l(a, text);
	struct err err;

	(void)state;
	assert_refused(verify(a, bad, fx.cert[I_ED25519], &err), &err,
	    "does not verify");
	/* the transform alone, without wss_sigvalue_check */
	assert_true(xmlsec_verifies(a, text, fx.cert[I_ED25519]));
	assert_false(xmlsec_verifies(a, bad, fx.cert[I_ED25519]));
	arena_free(a);
}

/* The SignatureMethod must fit the key: eddsa-ed25519 with an RSA
 * certificate, rsa-sha256 or ecdsa-sha256 with an Ed25519 one, and
 * eddsa-ed25519 with an EC one are refused before any crypto. */
static void
test_method_key_mismatch(void **state)
{
	struct arena *a = arena_new(0);
	char *rsa = signed_text(a, I_RSA), *ed = signed_text(a, I_ED25519);
	struct err err;

	(void)state;
	assert_refused(verify(a, replace(a, rsa, MORE "rsa-sha256",
	    MORE21 "eddsa-ed25519"), fx.cert[I_RSA], &err), &err,
	    "does not fit");
	assert_refused(verify(a, replace(a, ed, MORE21 "eddsa-ed25519",
	    MORE "rsa-sha256"), fx.cert[I_ED25519], &err), &err,
	    "does not fit");
	assert_refused(verify(a, replace(a, ed, MORE21 "eddsa-ed25519",
	    MORE "ecdsa-sha256"), fx.cert[I_ED25519], &err), &err,
	    "does not fit");
	assert_refused(verify(a, replace(a, signed_text(a, I_P256),
	    MORE "ecdsa-sha256", MORE21 "eddsa-ed25519"), fx.cert[I_P256],
	    &err), &err, "does not fit");
	/* an Ed25519 signature presented to the RSA certificate */
	assert_refused(verify(a, ed, fx.cert[I_RSA], &err), &err,
	    "does not fit");
	/* xmlsec alone (without wss_sigvalue_check) finds no key either:
	 * our transforms ask for their own key data klass */
	assert_false(xmlsec_verifies(a, replace(a, ed, MORE21 "eddsa-ed25519",
	    MORE "rsa-sha256"), fx.cert[I_ED25519]));
	assert_false(xmlsec_verifies(a, replace(a, rsa, MORE "rsa-sha256",
	    MORE21 "eddsa-ed25519"), fx.cert[I_RSA]));
	assert_true(xmlsec_verifies(a, ed, fx.cert[I_ED25519]));
	arena_free(a);
}

/* Keys outside the allowlist: secp256k1, explicit P-256 parameters. */
static void
test_curve_allowlist(void **state)
{
	static const char *const certs[] = { "k1.crt", "explicit.crt" };
	struct wss_cert *c = NULL;
	struct wss_key *k = NULL;
	char p1[128], p2[128];
	struct err err;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		err_clear(&err);
		assert_int_equal(wss_cert_load(path(p1, sizeof(p1), certs[i]),
		    &c, &err), -1);
		assert_non_null(strstr(err.msg, "unsupported public key"));
		assert_null(c);
	}
	err_clear(&err);
	assert_int_equal(wss_key_load(path(p1, sizeof(p1), "k1.crt"),
	    path(p2, sizeof(p2), "k1.key"), &k, &err), -1);
	assert_null(k);
	assert_int_equal(err.kind, ERR_CONF);
	assert_non_null(strstr(err.msg, "not on a named curve"));
	err_clear(&err);
	assert_int_equal(wss_key_load(path(p1, sizeof(p1), "explicit.crt"),
	    path(p2, sizeof(p2), "explicit.key"), &k, &err), -1);
	assert_null(k);
	assert_int_equal(err.kind, ERR_CONF);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xmlsec_vectors),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_ecdsa_digests_on_curves),
		cmocka_unit_test(test_flipped_bit),
		cmocka_unit_test(test_ecdsa_der_refused),
		cmocka_unit_test(test_ed25519_noncanonical_s),
		cmocka_unit_test(test_method_key_mismatch),
		cmocka_unit_test(test_curve_allowlist),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
