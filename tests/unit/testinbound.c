/*
 * testinbound — the fixture of the wss_inbound tests; see testinbound.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testinbound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/templates.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>

#include "testutil.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/clock.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define X509V3 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0#X509v3"
#define B64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define MIN_MS (60 * 1000LL)
#define DAY_MS (24 * 60 * MIN_MS)

static struct {
	char dir[64];
	struct wss_key *id[3];      /* enum who, RSA */
	struct _xmlSecKey *ec_key;  /* K_EC: P-256, issued by the CA */
	char *ec_b64;               /* its certificate, base64 DER */
	struct trust *trust;    /* signer sender.crt, anchor ca.crt */
	struct trust *trust_ec; /* signer ec.crt, anchor ca.crt */
	struct trust *trust_attacker; /* attacker.crt, anchor ca.crt */
	char keyvalue[2048];        /* the attacker's ds:KeyValue */
} fx;

static const char env_fmt[] =
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\" xmlns:eb=\"" NS_EB "\" "
    "xmlns:wsu=\"" NS_WSU "\" xmlns:wsse=\"" NS_WSSE "\"><env:Header>"
    "<wsse:Security env:mustUnderstand=\"true\">"
    "<wsse:BinarySecurityToken wsu:Id=\"X509-1\" EncodingType=\"" B64 "\" "
    "ValueType=\"" X509V3 "\">%s</wsse:BinarySecurityToken>%s"
    "</wsse:Security>"
    "<eb:Messaging env:mustUnderstand=\"true\" wsu:Id=\"msg-1\">"
    "<eb:UserMessage><eb:MessageInfo>"
    "<eb:Timestamp>2025-01-01T00:00:00Z</eb:Timestamp>"
    "<eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>"
    "<eb:PayloadInfo><eb:PartInfo href=\"cid:p1@test\"/>"
    "<eb:PartInfo href=\"cid:p2@test\"/></eb:PayloadInfo>"
    "</eb:UserMessage></eb:Messaging></env:Header>"
    "<env:Body wsu:Id=\"body-1\"/></env:Envelope>";

static const char ts_fmt[] =
    "<wsu:Timestamp wsu:Id=\"ts-%d\"><wsu:Created>%s</wsu:Created>"
    "<wsu:Expires>%s</wsu:Expires></wsu:Timestamp>";

const char part1[] = "<x:Doc xmlns:x=\"urn:x\">one</x:Doc>";
const unsigned char part2[12] = { 0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00,
	0x41, 0x42, 0x0a, 0x0d, 0x00, 0x80 };

/* Fresh copies of the two attachments (wss_inbound may rewrite them). */
void
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

/* The attacker's RSA public key as a ds:KeyValue (base64 big-endian
 * modulus and exponent, XML Signature 4.5.2.1), into fx.keyvalue. */
static int
keyvalue_make(void)
{
	char path[128], *m = NULL, *e = NULL;
	unsigned char bin[1024];
	BIGNUM *n = NULL, *x = NULL;
	EVP_PKEY *pk;
	FILE *f;
	int rc = -1;

	(void)snprintf(path, sizeof(path), "%s/attacker.key", fx.dir);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	pk = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	(void)fclose(f);
	if (pk == NULL || EVP_PKEY_get_bn_param(pk, "n", &n) != 1 ||
	    EVP_PKEY_get_bn_param(pk, "e", &x) != 1 ||
	    BN_num_bytes(n) > (int)sizeof(bin) / 2)
		goto out;
	m = (char *)bin + sizeof(bin) / 2;
	(void)EVP_EncodeBlock((unsigned char *)m, bin,
	    BN_bn2bin(n, bin) > 0 ? BN_num_bytes(n) : 0);
	(void)snprintf(fx.keyvalue, sizeof(fx.keyvalue), "<ds:KeyValue>"
	    "<ds:RSAKeyValue><ds:Modulus>%s</ds:Modulus>", m);
	e = fx.keyvalue + strlen(fx.keyvalue);
	(void)EVP_EncodeBlock((unsigned char *)m, bin, BN_bn2bin(x, bin));
	(void)snprintf(e, sizeof(fx.keyvalue) - (size_t)(e - fx.keyvalue),
	    "<ds:Exponent>%s</ds:Exponent></ds:RSAKeyValue></ds:KeyValue>", m);
	rc = 0;
out:
	BN_free(n);
	BN_free(x);
	EVP_PKEY_free(pk);
	return rc;
}

/* The development PKI (the real script), a self-signed attacker and an
 * EC P-256 signer issued by the development CA. */
static int
pki_make(void)
{
	char cmd[2048];

	(void)snprintf(cmd, sizeof(cmd), "bash %s/certs/gen-dev-pki.sh %s "
	    ">/dev/null && cd %s && openssl req -x509 -newkey rsa:2048 "
	    "-nodes -keyout attacker.key -out attacker.crt -days 30 "
	    "-subj /CN=attacker 2>/dev/null && "
	    "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
	    "-out ec.key && openssl req -new -key ec.key -subj /CN=ec-sender "
	    "-out ec.csr && printf 'keyUsage=critical,digitalSignature\\n' "
	    ">ec.ext && openssl x509 -req -in ec.csr -CA ca.crt -CAkey ca.key "
	    "-set_serial 7 -days 30 -sha256 -extfile ec.ext -out ec.crt "
	    "2>/dev/null && openssl x509 -in ec.crt -outform DER | "
	    "base64 -w0 >ec.b64", AS4GW_SOURCE_DIR, fx.dir, fx.dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Trust: signer fx.dir/<signer>.crt, anchor fx.dir/ca.crt. */
static int
trust_make(const char *signer, struct trust **ret)
{
	char crt[128], ca[128];
	const char *s = crt, *c = ca;
	struct err err;

	err_clear(&err);
	(void)snprintf(crt, sizeof(crt), "%s/%s.crt", fx.dir, signer);
	(void)snprintf(ca, sizeof(ca), "%s/ca.crt", fx.dir);
	return trust_new(&(struct trust_files){ .signers = &s, .n_signers = 1,
	    .anchors = &c, .n_anchors = 1 }, ret, &err);
}

/* The libraries: libxml2, xmlsec and the SwA transforms. */
static int
tinbound_libs(void)
{
	struct err err;

	err_clear(&err);
	xml_global_init();
	if (wss_global_init(&err) < 0)
		return -1;
	/* the SwA transforms and cid: resolver, unless wss_global_init()
	 * registered them already */
	if (xmlSecTransformIdListFind(xmlSecTransformIdsGet(),
	    wss_swa_content_sig_id()) != 1 && wss_swa_init(&err) < 0)
		return -1;
	return 0;
}

/* Group setup of the libraries alone. */
int
tinbound_libs_setup(void **state)
{
	(void)state;
	return tinbound_libs();
}

/* Shut the libraries down. */
int
tinbound_libs_teardown(void **state)
{
	(void)state;
	wss_global_shutdown();
	return 0;
}

/* Make the PKI, load the keys, build the trusts. */
int
tinbound_setup(void **state)
{
	static const char *const names[3] = { "sender", "gateway", "attacker" };
	char crt[128], key[128];
	struct err err;
	int i;

	(void)state;
	err_clear(&err);
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_wss_inbound.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || tinbound_libs() < 0)
		return -1;
	if (pki_make() < 0 || keyvalue_make() < 0)
		return -1;
	for (i = 0; i < 3; i++) {
		(void)snprintf(crt, sizeof(crt), "%s/%s.crt", fx.dir, names[i]);
		(void)snprintf(key, sizeof(key), "%s/%s.key", fx.dir, names[i]);
		if (wss_key_load(crt, key, &fx.id[i], &err) < 0)
			return -1;
	}
	(void)snprintf(key, sizeof(key), "%s/ec.key", fx.dir);
	(void)snprintf(crt, sizeof(crt), "%s/ec.b64", fx.dir);
	fx.ec_key = xmlSecCryptoAppKeyLoad(key, xmlSecKeyDataFormatPem, NULL,
	    NULL, NULL);
	fx.ec_b64 = testutil_read(crt, NULL);
	if (fx.ec_key == NULL || fx.ec_b64 == NULL)
		return -1;
	return trust_make("sender", &fx.trust) == 0 &&
	    trust_make("ec", &fx.trust_ec) == 0 &&
	    trust_make("attacker", &fx.trust_attacker) == 0 ? 0 : -1;
}

/* Free keys and trust, remove the temporary PKI. */
int
tinbound_teardown(void **state)
{
	char cmd[128];
	int i;

	(void)state;
	for (i = 0; i < 3; i++)
		wss_key_free(fx.id[i]);
	if (fx.ec_key != NULL)
		xmlSecKeyDestroy(fx.ec_key);
	free(fx.ec_b64);
	trust_free(fx.trust);
	trust_free(fx.trust_ec);
	trust_free(fx.trust_attacker);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", fx.dir);
	(void)system(cmd);
	wss_global_shutdown();
	return 0;
}

/* The policy of a variant. */
void
policy(enum pol v, struct wss_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->signing = WSS_REQUIRED;
	p->encryption = WSS_OPTIONAL;
	p->algs = WSS_ALGS_DEFAULT;
	p->trust = fx.trust;
	p->skew_ms = 5 * MIN_MS;
	p->max_references = 30;
	p->max_transforms = 5;
	switch (v) {
	case P_ENC_REQUIRED: p->encryption = WSS_REQUIRED; break;
	case P_ENC_NEVER: p->encryption = WSS_NEVER; break;
	case P_SIGN_NEVER: p->signing = WSS_NEVER; break;
	case P_SIGN_OPTIONAL: p->signing = WSS_OPTIONAL; break;
	case P_NO_RSA_SHA256: p->algs &= ~(unsigned)WSS_SIG_RSA_SHA256; break;
	case P_FUTURE: p->at_ms = clock_epoch_ms() + 3 * 365 * DAY_MS; break;
	case P_PAST: p->at_ms = clock_epoch_ms() - 2 * DAY_MS; break;
	case P_NO_TRUST: p->trust = NULL; break;
	case P_MAX_REFS_3: p->max_references = 3; break;
	case P_ONLY_ENC:
		p->signing = WSS_OPTIONAL;
		p->encryption = WSS_REQUIRED;
		break;
	case P_EC: p->trust = fx.trust_ec; break;
	case P_EC_NO_ECDSA:
		p->trust = fx.trust_ec;
		p->algs &= ~(unsigned)(WSS_SIG_ECDSA_SHA256 |
		    WSS_SIG_ECDSA_SHA384);
		break;
	case P_ATTACKER_BOUND: p->trust = fx.trust_attacker; break;
	case P_XML_NODES_1: p->max_xml_nodes = 1; break;
	case P_XML_DEPTH_1: p->max_xml_depth = 1; break;
	case P_XML_MEMORY_1: p->max_memory = 1; break;
	case P_TS_REQUIRED: p->require_timestamp = 1; break;
	default: break;
	}
}

/* xmlsec transform for a signer's choice (def when A_DEFAULT). */
static xmlSecTransformId
alg_id(enum alg a, xmlSecTransformId def)
{
	switch (a) {
	case A_RSA_SHA1: return xmlSecTransformRsaSha1Id;
	case A_SHA1: return xmlSecTransformSha1Id;
	case A_SHA384: return xmlSecTransformSha384Id;
	case A_INCL_C14N: return xmlSecTransformInclC14NId;
	case A_EXC_COMMENTS: return xmlSecTransformExclC14NWithCommentsId;
	case A_RSA_SHA512: return xmlSecTransformRsaSha512Id;
	case A_ECDSA_SHA256: return xmlSecTransformEcdsaSha256Id;
	case A_ECDSA_SHA384: return xmlSecTransformEcdsaSha384Id;
	default: return def;
	}
}

/* The wsu:Timestamp element(s) of a variant ("" for none). */
static void
timestamp_xml(enum ts ts, char *out, size_t size)
{
	int64_t now = clock_epoch_ms(), c = now, e = now + 5 * MIN_MS;
	char cs[CLOCK_ISO_LEN], es[CLOCK_ISO_LEN];
	int n;

	out[0] = '\0';
	if (ts == TS_NONE)
		return;
	if (ts == TS_EXPIRED) {
		c = now - 20 * MIN_MS;
		e = now - 10 * MIN_MS;
	} else if (ts == TS_FUTURE) {
		c = now + 10 * MIN_MS;
		e = now + 20 * MIN_MS;
	} else if (ts == TS_BACKWARDS) {
		e = now - 1000;
	}
	clock_iso8601(c, cs);
	clock_iso8601(e, es);
	n = snprintf(out, size, ts_fmt, 1, cs, es);
	if (ts == TS_TWO)
		(void)snprintf(out + n, size - (size_t)n, ts_fmt, 2, cs, es);
}

/* Add one reference with its single transform to the template. */
static void
add_ref(xmlNodePtr sig, xmlSecTransformId dig, const char *uri,
    xmlSecTransformId t)
{
	xmlNodePtr ref = xmlSecTmplSignatureAddReference(sig, dig, NULL,
	    (const xmlChar *)uri, NULL);

	assert_non_null(ref);
	assert_non_null(xmlSecTmplReferenceAddTransform(ref, t));
}

/* KeyInfo: a SecurityTokenReference to the BST (sign_message swaps it
 * for a KeyValue afterwards when the spec asks for one). */
static void
add_keyinfo(xmlNodePtr sig, xmlNodePtr sec)
{
	xmlNodePtr ki = xmlSecTmplSignatureEnsureKeyInfo(sig, NULL), str, r;

	assert_non_null(ki);
	str = xmlNewChild(ki, sec->ns,
	    (const xmlChar *)"SecurityTokenReference", NULL);
	r = xmlNewChild(str, sec->ns, (const xmlChar *)"Reference", NULL);
	assert_non_null(r);
	(void)xmlNewProp(r, (const xmlChar *)"URI", (const xmlChar *)"#X509-1");
	(void)xmlNewProp(r, (const xmlChar *)"ValueType",
	    (const xmlChar *)X509V3);
}

/* The ds:Signature template in sec for sp. */
static xmlNodePtr
make_template(xmlNodePtr sec, const struct spec *sp)
{
	unsigned refs = sp->refs != 0 ? sp->refs : R_ALL;
	xmlSecTransformId dig = alg_id(sp->dig, xmlSecTransformSha256Id);
	xmlSecTransformId swa = wss_swa_content_sig_id();
	xmlNodePtr sig = xmlSecTmplSignatureCreateNsPref(sec->doc,
	    alg_id(sp->c14n, xmlSecTransformExclC14NId),
	    alg_id(sp->sig, xmlSecTransformRsaSha256Id), NULL,
	    (const xmlChar *)"ds");

	assert_non_null(sig);
	assert_non_null(xmlAddChild(sec, sig));
	if (refs & R_MSG)
		add_ref(sig, dig, "#msg-1", xmlSecTransformExclC14NId);
	if (refs & R_BODY)
		add_ref(sig, dig, "#body-1", xmlSecTransformExclC14NId);
	if (refs & R_TS)
		add_ref(sig, dig, "#ts-1", xmlSecTransformExclC14NId);
	if (refs & R_P1)
		add_ref(sig, dig, "cid:p1@test", swa);
	if (refs & R_P2)
		add_ref(sig, dig, "cid:p2@test", swa);
	add_keyinfo(sig, sec);
	return sig;
}

/* s (freed) with its SecurityTokenReference replaced by the attacker's
 * KeyValue (NEGATIVE-CASES 41). */
static char *
keyvalue(char *s)
{
	char *str = slice(s, "<wsse:SecurityTokenReference",
	    "</wsse:SecurityTokenReference>");

	s = tamper(s, str, fx.keyvalue);
	free(str);
	return s;
}

/* A signed message for sp, serialised (free with free()). */
char *
sign_message(const struct spec *sp)
{
	struct arena *a = arena_new(0);
	char ts[1024], *env, *out;
	struct wss_part parts[2];
	xmlSecDSigCtxPtr ctx;
	xmlChar *mem = NULL;
	xmlDocPtr doc = NULL;
	xmlNodePtr sec, sig;
	struct err err;
	int len = 0;

	err_clear(&err);
	timestamp_xml(sp->ts, ts, sizeof(ts));
	env = arena_sprintf(a, env_fmt, sp->bst == K_EC ? fx.ec_b64 :
	    wss_key_cert_b64(fx.id[sp->bst]), ts);
	assert_int_equal(xml_parse(a, env, strlen(env), NULL, &doc, &err), 0);
	sec = xml_child(xml_child(xmlDocGetRootElement(doc), NS_SOAP12,
	    "Header"), NS_WSSE, "Security");
	sig = make_template(sec, sp);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	ctx = xmlSecDSigCtxCreate(NULL);
	assert_non_null(ctx);
	ctx->signKey = sp->key == K_EC ? xmlSecKeyDuplicate(fx.ec_key) :
	    wss_key_xmlsec(fx.id[sp->key]);
	parts_init(parts);
	wss_swa_bind(parts, 2, NULL);
	if (xmlSecDSigCtxSign(ctx, sig) != 0)
		fail_msg("could not sign the test message (sig %d dig %d "
		    "c14n %d keyvalue %d)", (int)sp->sig, (int)sp->dig,
		    (int)sp->c14n, sp->keyvalue);
	wss_swa_unbind();
	xmlSecDSigCtxDestroy(ctx);
	xmlDocDumpMemory(doc, &mem, &len);
	out = strndup((const char *)mem, (size_t)len);
	xmlFree(mem);
	arena_free(a);
	return sp->keyvalue ? keyvalue(out) : out;
}

/* The message with sp = default: Messaging, Body and both parts. */
char *
sign_default(void)
{
	struct spec sp = { 0 };

	return sign_message(&sp);
}

/* s with the first `from` replaced by `to` (s is freed). */
char *
tamper(char *s, const char *from, const char *to)
{
	char *at = strstr(s, from), *out;
	size_t pre, flen = strlen(from), tlen = strlen(to);

	if (at == NULL)
		fail_msg("tamper: \"%s\" not in message", from);
	pre = (size_t)(at - s);
	out = malloc(strlen(s) - flen + tlen + 1);
	assert_non_null(out);
	memcpy(out, s, pre);
	memcpy(out + pre, to, tlen);
	strcpy(out + pre + tlen, at + flen);
	free(s);
	return out;
}

/* The text of s from `start` through the end of `end` (malloc). */
char *
slice(const char *s, const char *start, const char *end)
{
	const char *b = strstr(s, start), *e;

	assert_non_null(b);
	e = strstr(b, end);
	assert_non_null(e);
	return strndup(b, (size_t)(e - b) + strlen(end));
}

/* Process xml as the gateway would: parse, locate Messaging and Body by
 * position, wss_inbound; the arena keeps the results alive. */
int
process(struct arena *a, const char *xml, struct run *r)
{
	struct soap_env env;
	struct wss_policy pol;
	xmlDocPtr doc = NULL;

	err_clear(&r->err);
	memset(&r->res, 0, sizeof(r->res));
	policy(r->pol, &pol);
	assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc, &r->err),
	    0);
	assert_int_equal(soap_open(doc, &env, &r->err), 0);
	return wss_inbound(a, doc, xml_child(env.header, NS_EB, "Messaging"),
	    env.body, r->parts, r->n_parts, &pol, &r->res, &r->err);
}

/* A run with fresh copies of both attachments under policy v. */
void
run_init(struct run *r, enum pol v)
{
	memset(r, 0, sizeof(*r));
	parts_init(r->parts);
	r->n_parts = 2;
	r->pol = v;
}

/* Process xml with fresh attachments under v; expect code (NULL = ok). */
void
expect(const char *name, const char *xml, enum pol v, const char *code)
{
	struct arena *a = arena_new(0);
	struct run r;
	int rc;

	run_init(&r, v);
	rc = process(a, xml, &r);
	if (code == NULL && rc != 0)
		fail_msg("%s: refused: %s %s (%s)", name,
		    r.err.ebms_code ? r.err.ebms_code : "-", r.err.msg,
		    r.err.detail);
	if (code != NULL && (rc != -1 || r.err.ebms_code == NULL ||
	    strcmp(r.err.ebms_code, code) != 0))
		fail_msg("%s: expected %s, got rc %d %s %s (%s)", name, code,
		    rc, r.err.ebms_code ? r.err.ebms_code : "-", r.err.msg,
		    r.err.detail);
	if (code == NULL)
		assert_int_equal(r.res.verified, 1);
	arena_free(a);
}
