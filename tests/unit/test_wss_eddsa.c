/*
 * Unit tests for wss_eddsa.c and wss_sigalg.c (issue 13): Ed25519
 * (eddsa-ed25519, RFC 9231 / RFC 8032) as our xmlsec transform and the
 * ECDSA curves of eDelivery AS4 2.0 and BDEW.
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
 *    Ed448;
 *  - wss_inbound: Ed25519 and brainpool messages with two SwA attachments
 *    under the 2.0 profiles, the same under the 1.x default, an RSA
 *    signature on a 2.0 leg (downgrade).
 * The keys and certificates are made with the openssl command into a
 * temporary directory (a P-256 CA issuing each leaf).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmltree.h>

#include "testutil.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"
#include "wss/wss.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define VEC "vectors/xmlsec/aleksey-xmldsig-01/"
#define VEC_KEYS "vectors/xmlsec/keys/eddsa/"
#define MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define MORE21 "http://www.w3.org/2021/04/xmldsig-more#"

/* The signer identities made by group_setup (leaf certificates issued by
 * a P-256 CA; RSA for the 1.x comparison). */
enum id { I_ED25519 = 0, I_P256, I_P384, I_P521, I_BP256, I_RSA, I_N };

static const struct {
	const char *name;
	const char *genpkey;   /* openssl genpkey arguments */
	const char *method;    /* SignatureMethod our signing picks */
} ids[I_N] = {
	{ "ed25519", "-algorithm ED25519", MORE21 "eddsa-ed25519" },
	{ "p256", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256",
	  MORE "ecdsa-sha256" },
	{ "p384", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384",
	  MORE "ecdsa-sha384" },
	{ "p521", "-algorithm EC -pkeyopt ec_paramgen_curve:P-521",
	  MORE "ecdsa-sha512" },
	{ "bp256", "-algorithm EC -pkeyopt ec_paramgen_curve:brainpoolP256r1",
	  MORE "ecdsa-sha256" },
	{ "rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048",
	  MORE "rsa-sha256" },
};

static struct {
	char dir[64];
	struct wss_key *key[I_N];
	struct wss_cert *cert[I_N];
	struct trust *trust[I_N];
} fx;

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

static const char part1[] = "<x:Doc xmlns:x=\"urn:x\">one</x:Doc>";
static const unsigned char part2[] = { 0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00,
	0x41, 0x42, 0x0a, 0x0d, 0x00, 0x80 };

/* Fresh copies of the two attachments. */
static void
parts_init(struct wss_part p[2])
{
	memset(p, 0, 2 * sizeof(*p));
	p[0].content_id = "p1@test";
	p[0].content_type = "application/xml";
	p[0].data = (const unsigned char *)part1;
	p[0].len = strlen(part1);
	p[1].content_id = "p2@test";
	p[1].content_type = "application/octet-stream";
	p[1].data = part2;
	p[1].len = sizeof(part2);
}

/* fx.dir/name into out. */
static const char *
path(char *out, size_t size, const char *name)
{
	(void)snprintf(out, size, "%s/%s", fx.dir, name);
	return out;
}

/* Run a shell command (printf format) in fx.dir; 0 when it exited 0. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n;

	n = snprintf(cmd, sizeof(cmd), "cd %s && ", fx.dir);
	va_start(ap, fmt);
	(void)vsnprintf(cmd + n, sizeof(cmd) - (size_t)n, fmt, ap);
	va_end(ap);
	return system(cmd) == 0 ? 0 : -1;
}

/* A leaf name.crt (key name.key from genpkey args) issued by the CA. */
static int
leaf_make(const char *name, const char *genpkey)
{
	return sh("openssl genpkey %2$s -out %1$s.key 2>/dev/null && "
	    "openssl req -new -key %1$s.key -subj /CN=%1$s -out %1$s.csr && "
	    "openssl x509 -req -in %1$s.csr -CA ca.crt -CAkey ca.key "
	    "-set_serial 0x$(openssl rand -hex 8) -days 30 -sha256 "
	    "-extfile leaf.ext -out %1$s.crt 2>/dev/null", name, genpkey);
}

/* The CA, one leaf per identity, and the leaves that must be refused:
 * secp256k1, explicit P-256 parameters. */
static int
pki_make(void)
{
	if (sh("openssl req -x509 -newkey ec -pkeyopt "
	    "ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt "
	    "-subj /CN=test-ca -days 30 -addext "
	    "basicConstraints=critical,CA:TRUE%s%s 2>/dev/null && "
	    "printf 'keyUsage=critical,digitalSignature\\n' >leaf.ext",
	    " -addext keyUsage=critical,keyCertSign,cRLSign", "") < 0)
		return -1;
	for (int i = 0; i < I_N; i++)
		if (leaf_make(ids[i].name, ids[i].genpkey) < 0)
			return -1;
	if (leaf_make("k1", "-algorithm EC -pkeyopt "
	    "ec_paramgen_curve:secp256k1") < 0 ||
	    sh("openssl x509 -in k1.crt -outform DER | base64 -w0 "
	    ">k1.b64") < 0)
		return -1;
	return sh("openssl ecparam -name prime256v1 -param_enc explicit "
	    "-genkey -noout -out %s.key 2>/dev/null && openssl req -x509 "
	    "-key %s.key -subj /CN=explicit -days 30 -out explicit.crt "
	    "2>/dev/null", "explicit", "explicit");
}

/* Trust: signer fx.dir/<name>.crt, anchor fx.dir/ca.crt. */
static int
trust_make(const char *name, struct trust **ret)
{
	char crt[128], ca[128], file[64];
	const char *s = crt, *c = ca;
	struct err err;

	err_clear(&err);
	(void)snprintf(file, sizeof(file), "%s.crt", name);
	path(crt, sizeof(crt), file);
	path(ca, sizeof(ca), "ca.crt");
	return trust_new(&(struct trust_files){ .signers = &s, .n_signers = 1,
	    .anchors = &c, .n_anchors = 1 }, ret, &err);
}

/* Make the PKI, load every pair and certificate, build the trusts. */
static int
group_setup(void **state)
{
	char crt[128], key[128], f1[64], f2[64];
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_wss_eddsa.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || wss_global_init(&err) < 0 ||
	    pki_make() < 0)
		return -1;
	for (int i = 0; i < I_N; i++) {
		(void)snprintf(f1, sizeof(f1), "%s.crt", ids[i].name);
		(void)snprintf(f2, sizeof(f2), "%s.key", ids[i].name);
		if (wss_key_load(path(crt, sizeof(crt), f1),
		    path(key, sizeof(key), f2), &fx.key[i], &err) < 0 ||
		    wss_cert_load(crt, &fx.cert[i], &err) < 0 ||
		    trust_make(ids[i].name, &fx.trust[i]) < 0) {
			fprintf(stderr, "setup %s: %s %s\n", ids[i].name,
			    err.msg, err.detail);
			return -1;
		}
	}
	return 0;
}

/* Free everything, remove the temporary PKI. */
static int
group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < I_N; i++) {
		wss_key_free(fx.key[i]);
		wss_cert_free(fx.cert[i]);
		trust_free(fx.trust[i]);
	}
	(void)sh("cd / && rm -rf %s", fx.dir);
	wss_global_shutdown();
	return 0;
}

/* Parse with the hardened parser; the arena owns the document. */
static xmlDocPtr
parse(struct arena *a, const char *xml, size_t len)
{
	struct err err;
	xmlDocPtr doc = NULL;

	err_clear(&err);
	if (xml_parse(a, xml, len, NULL, &doc, &err) != 0)
		fail_msg("parse: %s %s", err.msg, err.detail);
	return doc;
}

/* Serialise doc into the arena. */
static char *
dump(struct arena *a, xmlDocPtr doc)
{
	xmlChar *mem = NULL;
	int len = 0;
	char *s;

	xmlDocDumpMemoryEnc(doc, &mem, &len, "UTF-8");
	assert_non_null(mem);
	s = arena_strndup(a, (const char *)mem, (size_t)len);
	xmlFree(mem);
	return s;
}

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

/* The decoded SignatureValue of text (arena). */
static unsigned char *
sigvalue(struct arena *a, const char *text, size_t *ret_len)
{
	const char *b = strstr(text, "SignatureValue>");
	const char *e = b != NULL ? strstr(b, "</") : NULL;
	unsigned char *raw = NULL;

	assert_non_null(e);
	b += strlen("SignatureValue>");
	assert_int_equal(codec_unbase64(a, b, (size_t)(e - b), &raw,
	    ret_len), 0);
	return raw;
}

/* text with its SignatureValue replaced by raw (arena). */
static char *
with_sigvalue(struct arena *a, const char *text, const unsigned char *raw,
    size_t len)
{
	const char *b = strstr(text, "SignatureValue>");
	const char *e = strstr(b, "</");
	char *b64 = codec_base64(a, raw, len);

	b += strlen("SignatureValue>");
	return arena_sprintf(a, "%.*s%s%s", (int)(b - text), text, b64, e);
}

/* text with the first from replaced by to (arena). */
static char *
replace(struct arena *a, const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);

	if (at == NULL)
		fail_msg("\"%s\" not in the text", from);
	return arena_sprintf(a, "%.*s%s%s", (int)(at - text), text, to,
	    at + strlen(from));
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

/* text (Ed25519-signed) with L added to the S half of its signature
 * (arena).  L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032
 * 5.1); S + L < 2^256 since S < L. */
static char *
ed25519_s_plus_l(struct arena *a, const char *text)
{
	static const unsigned char l[32] = {  /* little-endian, as S is */
		0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58,
		0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
	};
	size_t len;
	unsigned char *raw = sigvalue(a, text, &len);
	unsigned carry = 0;

	assert_int_equal(len, 64);
	for (int i = 0; i < 32; i++) {
		carry += (unsigned)raw[32 + i] + l[i];
		raw[32 + i] = (unsigned char)carry;
		carry >>= 8;
	}
	assert_int_equal(carry, 0);
	return with_sigvalue(a, text, raw, len);
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
		cmocka_unit_test(test_xmlsec_vectors),
		cmocka_unit_test(test_round_trips),
		cmocka_unit_test(test_ecdsa_digests_on_curves),
		cmocka_unit_test(test_flipped_bit),
		cmocka_unit_test(test_ecdsa_der_refused),
		cmocka_unit_test(test_ed25519_noncanonical_s),
		cmocka_unit_test(test_method_key_mismatch),
		cmocka_unit_test(test_curve_allowlist),
		cmocka_unit_test(test_inbound_profiles),
		cmocka_unit_test(test_inbound_key_references),
		cmocka_unit_test(test_inbound_pkipath),
		cmocka_unit_test(test_inbound_attachment_tampered),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
