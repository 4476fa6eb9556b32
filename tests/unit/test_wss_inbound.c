/*
 * Unit tests for wss_inbound.c and wss_policy.c: the algorithm vocabulary,
 * then signed UserMessages built here with xmlsec templates (development PKI
 * from certs/gen-dev-pki.sh in a temporary directory, two SwA attachments)
 * and one hostile variant per NEGATIVE-CASES item 28-46, 50 and 51 that can
 * be built at this level, each checked for its exact ebMS code.  Tampering
 * is done on the serialised message, as an attacker would.  Last, recorded
 * traffic from ../shared: a Holodeck message signed with SKI (rsa-sha384)
 * and an AS4.NET message signed (IssuerSerial) and encrypted.
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
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/templates.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>

#include "testutil.h"
#include "mime/mime.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "wss/wss.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define EXC_C14N "http://www.w3.org/2001/10/xml-exc-c14n#"
#define X509V3 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0#X509v3"
#define B64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define EXC_T "<ds:Transform Algorithm=\"" EXC_C14N "\"/>"
#define SHA256_DM "<ds:DigestMethod Algorithm=" \
	"\"http://www.w3.org/2001/04/xmlenc#sha256\"/>"
#define WRAP_OPEN "<x:W xmlns:x=\"urn:x\">"
#define MIN_MS (60 * 1000LL)
#define DAY_MS (24 * 60 * MIN_MS)

#define AS4NET "corpus/messages/thomsonreuters_eessi-as4.net/source/"
#define AS4NET_X "corpus/extracted/thomsonreuters_eessi-as4.net/source/"
#define HOLODECK "Eu.EDelivery.AS4.ComponentTests/Resources/" \
	"signed_holodeck_message.as4"
#define ENCSIGNED "Eu.EDelivery.AS4.UnitTests/Resources/" \
	"as4-encrypted-signed-issuerserial.as4"
#define HOLODECK_CT "multipart/related; boundary=\"MIMEBoundary_" \
	"bcb27a6f984295aa9962b01ef2fb3e8d982de76d061ab23f\"; " \
	"type=\"application/soap+xml\""
#define ENCSIGNED_CT "multipart/related; boundary=\"MIMEBoundary_" \
	"416ba07b9ac392cc88fdb1c2ed23ba5e2e6d64fdf13325f1\"; " \
	"type=\"application/soap+xml\""
#define KEY_A "corpus/keys/5e320e3a1dda" /* CN=AccessPointA */
#define KEY_B "corpus/keys/3da5db472d77" /* CN=AccessPointB */

/* What a message signature covers (bits). */
enum { R_MSG = 1, R_BODY = 2, R_TS = 4, R_P1 = 8, R_P2 = 16,
	R_ALL = R_MSG | R_BODY | R_P1 | R_P2 };
/* Which identity signs / sits in the BST. */
enum who { K_SENDER = 0, K_GATEWAY, K_ATTACKER, K_EC };
/* Algorithm choices the signer can make (default = eDelivery). */
enum alg { A_DEFAULT = 0, A_RSA_SHA1, A_SHA1, A_SHA384, A_INCL_C14N,
	A_EXC_COMMENTS, A_RSA_SHA512, A_ECDSA_SHA256, A_ECDSA_SHA384 };
/* wsu:Timestamp variants. */
enum ts { TS_NONE = 0, TS_GOOD, TS_EXPIRED, TS_FUTURE, TS_BACKWARDS,
	TS_TWO };
/* Policy variants. */
enum pol { P_DEFAULT = 0, P_ENC_REQUIRED, P_ENC_NEVER, P_SIGN_NEVER,
	P_SIGN_OPTIONAL, P_NO_RSA_SHA256, P_FUTURE, P_PAST, P_NO_TRUST,
	P_MAX_REFS_3, P_ONLY_ENC, P_EC, P_EC_NO_ECDSA, P_ATTACKER_BOUND,
	P_XML_NODES_1, P_XML_DEPTH_1, P_XML_MEMORY_1, P_TS_REQUIRED };

struct spec {
	unsigned refs;        /* 0 = R_ALL */
	enum ts ts;
	enum alg c14n, sig, dig;
	enum who key, bst;
	int keyvalue;         /* KeyInfo: KeyValue instead of a BST reference */
};

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

static const char part1[] = "<x:Doc xmlns:x=\"urn:x\">one</x:Doc>";
static const unsigned char part2[] = { 0x1f, 0x8b, 0x08, 0x00, 0xff, 0x00,
	0x41, 0x42, 0x0a, 0x0d, 0x00, 0x80 };

/* Fresh copies of the two attachments (wss_inbound may rewrite them). */
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

static char *tamper(char *s, const char *from, const char *to);
static char *slice(const char *s, const char *start, const char *end);

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

/* Make the PKI, load the keys, build the trusts. */
static int
group_setup(void **state)
{
	static const char *const names[3] = { "sender", "gateway", "attacker" };
	char crt[128], key[128];
	struct err err;
	int i;

	(void)state;
	err_clear(&err);
	xml_global_init();
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_wss_inbound.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || wss_global_init(&err) < 0)
		return -1;
	/* the SwA transforms and cid: resolver, unless wss_global_init()
	 * registered them already */
	if (xmlSecTransformIdListFind(xmlSecTransformIdsGet(),
	    wss_swa_content_sig_id()) != 1 && wss_swa_init(&err) < 0)
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
static int
group_teardown(void **state)
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
static void
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
static char *
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
static char *
sign_default(void)
{
	struct spec sp = { 0 };

	return sign_message(&sp);
}

/* s with the first `from` replaced by `to` (s is freed). */
static char *
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
static char *
slice(const char *s, const char *start, const char *end)
{
	const char *b = strstr(s, start), *e;

	assert_non_null(b);
	e = strstr(b, end);
	assert_non_null(e);
	return strndup(b, (size_t)(e - b) + strlen(end));
}

/* One run of wss_inbound over a message and its attachments. */
struct run {
	struct wss_part parts[2];
	size_t n_parts;
	enum pol pol;
	struct wss_result res;
	struct err err;
};

/* Process xml as the gateway would: parse, locate Messaging and Body by
 * position, wss_inbound; the arena keeps the results alive. */
static int
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
static void
run_init(struct run *r, enum pol v)
{
	memset(r, 0, sizeof(*r));
	parts_init(r->parts);
	r->n_parts = 2;
	r->pol = v;
}

/* Process xml with fresh attachments under v; expect code (NULL = ok). */
static void
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

/* ---- wss_policy.c ---------------------------------------------------- */

/* Exact URIs map to their bit; SHA-1, MD5 and near misses to 0. */
static void
test_alg_from_uri(void **state)
{
	static const struct { const char *uri; unsigned bit; } t[] = {
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
		    WSS_SIG_RSA_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
		    WSS_SIG_RSA_SHA384 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
		    WSS_SIG_RSA_SHA512 },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
		    WSS_SIG_ECDSA_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
		    WSS_SIG_ECDSA_SHA384 },
		{ "http://www.w3.org/2001/04/xmlenc#sha256", WSS_DIG_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#sha384",
		    WSS_DIG_SHA384 },
		{ "http://www.w3.org/2001/04/xmlenc#sha512", WSS_DIG_SHA512 },
		{ "http://www.w3.org/2009/xmlenc11#rsa-oaep", WSS_KT_RSA_OAEP },
		{ "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
		    WSS_KT_RSA_OAEP_MGF1P },
		{ "http://www.w3.org/2001/04/xmlenc#rsa-1_5", WSS_KT_RSA_1_5 },
		{ "http://www.w3.org/2009/xmlenc11#aes128-gcm",
		    WSS_ENC_AES128_GCM },
		{ "http://www.w3.org/2009/xmlenc11#aes256-gcm",
		    WSS_ENC_AES256_GCM },
		{ "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
		    WSS_ENC_AES_CBC },
		{ "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
		    WSS_ENC_AES_CBC },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
		    WSS_SIG_ECDSA_SHA512 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519",
		    WSS_SIG_ED25519 },
		{ "http://www.w3.org/2021/04/xmldsig-more#x25519",
		    WSS_KA_X25519 },
		{ "http://www.w3.org/2009/xmlenc11#ECDH-ES", WSS_KA_ECDH_ES },
		{ "http://www.w3.org/2021/04/xmldsig-more#hkdf", WSS_KDF_HKDF },
		{ "http://www.w3.org/2009/xmlenc11#ConcatKDF", WSS_KDF_CONCAT },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes128", WSS_KW_AES128 },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes192", WSS_KW_AES192 },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes256", WSS_KW_AES256 },
		/* Ed25519ph / Ed25519ctx and Ed448 are not eDelivery's */
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519ph", 0 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519ctx", 0 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed448", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#eddsa-ed25519", 0 },
		{ "http://www.w3.org/2009/xmlenc11#ecdh-es", 0 },
		{ "http://www.w3.org/2000/09/xmldsig#rsa-sha1", 0 },
		{ "http://www.w3.org/2000/09/xmldsig#sha1", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#md5", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256x", 0 },
		{ "HTTP://www.w3.org/2001/04/xmldsig-more#rsa-sha256", 0 },
		{ "http://www.w3.org/2001/04/xmlenc#sha384", 0 },
		{ "", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (wss_alg_from_uri(t[i].uri) != t[i].bit)
			fail_msg("%s: got %#x", t[i].uri,
			    wss_alg_from_uri(t[i].uri));
	assert_int_equal(wss_alg_from_uri(NULL), 0);
}

/* Configuration names, separators, "default"; unknown names refused. */
static void
test_alg_parse(void **state)
{
	static const struct { const char *list; int rc; unsigned bits; } t[] = {
		{ "rsa-sha256 sha256", 0, WSS_SIG_RSA_SHA256 | WSS_DIG_SHA256 },
		{ " ecdsa-sha384,\tsha512\n", 0,
		    WSS_SIG_ECDSA_SHA384 | WSS_DIG_SHA512 },
		{ "default rsa-1_5 aes-cbc", 0,
		    WSS_ALGS_DEFAULT | WSS_KT_RSA_1_5 | WSS_ENC_AES_CBC },
		{ "rsa-sha384 rsa-sha512 ecdsa-sha256 sha384 rsa-oaep "
		    "rsa-oaep-mgf1p aes128-gcm aes256-gcm", 0,
		    WSS_SIG_RSA_SHA384 | WSS_SIG_RSA_SHA512 |
		    WSS_SIG_ECDSA_SHA256 | WSS_DIG_SHA384 | WSS_KT_RSA_OAEP |
		    WSS_KT_RSA_OAEP_MGF1P | WSS_ENC_AES128_GCM |
		    WSS_ENC_AES256_GCM },
		{ "edelivery-1.x", 0, WSS_ALGS_DEFAULT },
		{ "edelivery-2.0", 0, WSS_ALGS_EDELIVERY_2_0 },
		{ "edelivery-2.0-ec", 0, WSS_ALGS_EDELIVERY_2_0_EC },
		{ "ecdsa-sha256 sha256 ecdh-es concatkdf kw-aes128 aes128-gcm",
		    0, WSS_SIG_ECDSA_SHA256 | WSS_DIG_SHA256 | WSS_KA_ECDH_ES |
		    WSS_KDF_CONCAT | WSS_KW_AES128 | WSS_ENC_AES128_GCM },
		{ "eddsa-ed25519 x25519 hkdf kw-aes192 ecdsa-sha512", 0,
		    WSS_SIG_ED25519 | WSS_KA_X25519 | WSS_KDF_HKDF |
		    WSS_KW_AES192 | WSS_SIG_ECDSA_SHA512 },
		{ "edelivery-2", -1, 0 },
		{ "rsa-sha256 rsa-sha1", -1, 0 },
		{ "md5", -1, 0 },
		{ "RSA-SHA256", -1, 0 },
		{ "", -1, 0 },
		{ "  ", -1, 0 },
	};
	struct err err;
	unsigned bits;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err_clear(&err);
		bits = 12345;
		assert_int_equal(wss_alg_parse(t[i].list, &bits, &err),
		    t[i].rc);
		if (t[i].rc == 0)
			assert_int_equal(bits, t[i].bits);
		else
			assert_true(bits == 12345 && err.kind == ERR_CONF);
	}
	err_clear(&err);
	assert_int_equal(wss_alg_parse("sha256 bogus-alg", &bits, &err), -1);
	assert_non_null(strstr(err.msg, "bogus-alg"));
}

/* ---- positives --------------------------------------------------------- */

/* The eDelivery shape verifies; the result lists the references in
 * SignedInfo order and names the signer. */
static void
test_valid(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default();
	struct run r;
	xmlChar *uri;

	(void)state;
	run_init(&r, P_DEFAULT);
	if (process(a, xml, &r) != 0)
		fail_msg("refused: %s (%s)", r.err.msg, r.err.detail);
	assert_int_equal(r.res.verified, 1);
	assert_int_equal(r.res.decrypted, 0);
	assert_int_equal(r.res.n_references, 4);
	assert_true(xml_is(r.res.references[0], NS_DS, "Reference"));
	uri = xmlGetNoNsProp(r.res.references[3], (const xmlChar *)"URI");
	assert_string_equal((const char *)uri, "cid:p2@test");
	xmlFree(uri);
	assert_non_null(strstr(r.res.signer, "CN=as4gw-dev-sender"));
	arena_free(a);
	free(xml);
}

/* Variants that must still be accepted. */
static void
test_valid_variants(void **state)
{
	struct spec ts = { .refs = R_ALL | R_TS, .ts = TS_GOOD };
	struct spec sha512 = { .sig = A_RSA_SHA512 };
	struct spec ec256 = { .sig = A_ECDSA_SHA256, .key = K_EC, .bst = K_EC };
	struct spec ec384 = { .sig = A_ECDSA_SHA384, .dig = A_SHA384,
		.key = K_EC, .bst = K_EC };
	char *xml;

	(void)state;
	xml = sign_message(&ts);
	expect("signed timestamp", xml, P_DEFAULT, NULL);
	expect("signed timestamp, required", xml, P_TS_REQUIRED, NULL);
	free(xml);
	xml = sign_message(&sha512);
	expect("rsa-sha512", xml, P_DEFAULT, NULL);
	free(xml);
	xml = sign_message(&ec256);
	expect("ecdsa-sha256", xml, P_EC, NULL);
	free(xml);
	xml = sign_message(&ec384);
	expect("ecdsa-sha384, sha384", xml, P_EC, NULL);
	free(xml);
	xml = sign_default();
	/* a leg requiring a signed wsu:Timestamp refuses one without */
	expect("timestamp required, none", xml, P_TS_REQUIRED, "EBMS:0103");
	/* a signature is verified even where the leg does not require one */
	expect("signing never", xml, P_SIGN_NEVER, NULL);
	expect("signing optional", xml, P_SIGN_OPTIONAL, NULL);
	/* header blocks for other roles are not ours */
	xml = tamper(xml, "</env:Header>", "<wsse:Security env:role=\"urn:x\">"
	    "<x:Y xmlns:x=\"urn:x\"/></wsse:Security></env:Header>");
	expect("other role security", xml, P_DEFAULT, NULL);
	free(xml);
}

/* No Security header where the leg does not ask for one. */
static void
test_unsigned_optional(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");
	struct run r;

	(void)state;
	xml = tamper(xml, sec, "");
	run_init(&r, P_SIGN_OPTIONAL);
	assert_int_equal(process(a, xml, &r), 0);
	assert_int_equal(r.res.verified, 0);
	assert_int_equal(r.res.n_references, 0);
	arena_free(a);
	free(sec);
	free(xml);
}

/* ---- NEGATIVE-CASES built by signing differently ------------------------ */

struct scase {
	const char *name;
	struct spec sp;
	enum pol pol;
	const char *code;
};

static const struct scase signed_cases[] = {
	{ "29 messaging not signed", { .refs = R_BODY | R_P1 | R_P2 },
	    P_DEFAULT, "EBMS:0103" },
	{ "29 body not signed", { .refs = R_MSG | R_P1 | R_P2 },
	    P_DEFAULT, "EBMS:0103" },
	{ "30 payload not signed", { .refs = R_MSG | R_BODY | R_P1 },
	    P_DEFAULT, "EBMS:0103" },
	{ "36 too many references", { 0 }, P_MAX_REFS_3, "EBMS:0103" },
	{ "37 rsa-sha1", { .sig = A_RSA_SHA1 }, P_DEFAULT,
	    "EBMS:0103" },
	{ "37 sha1 digest", { .dig = A_SHA1 }, P_DEFAULT, "EBMS:0103" },
	{ "37 rsa-sha256 not allowed", { 0 }, P_NO_RSA_SHA256,
	    "EBMS:0103" },
	{ "38 inclusive c14n", { .c14n = A_INCL_C14N }, P_DEFAULT,
	    "EBMS:0103" },
	{ "38 exclusive c14n with comments",
	    { .c14n = A_EXC_COMMENTS }, P_DEFAULT, "EBMS:0103" },
	{ "41 attacker key in KeyValue",
	    { .key = K_ATTACKER, .keyvalue = 1 }, P_DEFAULT,
	    "EBMS:0101" },
	{ "41 attacker signs, BST names the sender",
	    { .key = K_ATTACKER }, P_DEFAULT, "EBMS:0101" },
	{ "42 self-signed signer",
	    { .key = K_ATTACKER, .bst = K_ATTACKER }, P_DEFAULT,
	    "EBMS:0101" },
	{ "43 expired certificate", { 0 }, P_FUTURE, "EBMS:0101" },
	{ "43 certificate not yet valid", { 0 }, P_PAST, "EBMS:0101" },
	{ "42 bound but not chaining to an anchor",
	    { .key = K_ATTACKER, .bst = K_ATTACKER }, P_ATTACKER_BOUND,
	    "EBMS:0101" },
	{ "ecdsa signer not bound to the leg", { .sig =
	    A_ECDSA_SHA256, .key = K_EC, .bst = K_EC }, P_DEFAULT,
	    "EBMS:0101" },
	{ "ecdsa not allowed by the leg", { .sig = A_ECDSA_SHA256,
	    .key = K_EC, .bst = K_EC }, P_EC_NO_ECDSA, "EBMS:0103" },
	{ "44 trusted but not bound to the party",
	    { .key = K_GATEWAY, .bst = K_GATEWAY }, P_DEFAULT,
	    "EBMS:0101" },
	{ "no trust for the leg", { 0 }, P_NO_TRUST, "EBMS:0101" },
	{ "45 expired timestamp",
	    { .refs = R_ALL | R_TS, .ts = TS_EXPIRED }, P_DEFAULT,
	    "EBMS:0101" },
	{ "45 timestamp created in the future",
	    { .refs = R_ALL | R_TS, .ts = TS_FUTURE }, P_DEFAULT,
	    "EBMS:0101" },
	{ "45 timestamp expires before created",
	    { .refs = R_ALL | R_TS, .ts = TS_BACKWARDS }, P_DEFAULT,
	    "EBMS:0101" },
	{ "46 two timestamps", { .refs = R_ALL | R_TS, .ts = TS_TWO },
	    P_DEFAULT, "EBMS:0103" },
	{ "46 unsigned timestamp", { .ts = TS_GOOD }, P_DEFAULT,
	    "EBMS:0103" },
	{ "51 payloads not encrypted", { 0 }, P_ENC_REQUIRED,
	    "EBMS:0103" },
};

/* Each variant a differently signed message shows, with its code. */
static void
test_signed_negatives(void **state)
{
	size_t i;
	char *xml;

	(void)state;
	for (i = 0; i < sizeof(signed_cases) / sizeof(signed_cases[0]); i++) {
		xml = sign_message(&signed_cases[i].sp);
		expect(signed_cases[i].name, xml, signed_cases[i].pol,
		    signed_cases[i].code);
		free(xml);
	}
}

/* ---- NEGATIVE-CASES built by editing a valid message -------------------- */

struct tcase {
	const char *name;
	const char *from, *to;
	enum pol pol;
	const char *code;
};

static const struct tcase tampered[] = {
	{ "28 security header for another role",
	    "<wsse:Security env:mustUnderstand=\"true\">",
	    "<wsse:Security env:role=\"urn:x\">", P_DEFAULT, "EBMS:0103" },
	{ "32 duplicate id, forged copy first", "<env:Header>",
	    "<env:Header>" WRAP_OPEN "<eb:Messaging wsu:Id=\"msg-1\"/></x:W>",
	    P_DEFAULT, "EBMS:0101" },
	{ "34 http reference", "URI=\"#body-1\"",
	    "URI=\"http://127.0.0.1:9/x\"", P_DEFAULT, "EBMS:0103" },
	{ "34 file reference", "URI=\"#body-1\"", "URI=\"file:///etc/passwd\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "34 xpointer reference", "URI=\"#body-1\"",
	    "URI=\"#xpointer(id('body-1'))\"", P_DEFAULT, "EBMS:0103" },
	{ "34 whole document", "URI=\"#body-1\"", "URI=\"\"", P_DEFAULT,
	    "EBMS:0103" },
	{ "34 bare #", "URI=\"#body-1\"", "URI=\"#\"", P_DEFAULT, "EBMS:0103" },
	{ "34 empty cid", "URI=\"cid:p2@test\"", "URI=\"cid:\"", P_DEFAULT,
	    "EBMS:0103" },
	{ "35 xpath", EXC_T, "<ds:Transform Algorithm=\"http://www.w3.org/TR/"
	    "1999/REC-xpath-19991116\"><ds:XPath>1</ds:XPath></ds:Transform>",
	    P_DEFAULT, "EBMS:0103" },
	{ "35 xpath-filter2", EXC_T, "<ds:Transform Algorithm=\"http://www.w3."
	    "org/2002/06/xmldsig-filter2\"><f:XPath xmlns:f=\"http://www.w3."
	    "org/2002/06/xmldsig-filter2\" Filter=\"union\">/</f:XPath>"
	    "</ds:Transform>", P_DEFAULT, "EBMS:0103" },
	{ "35 xslt", EXC_T, "<ds:Transform Algorithm=\"http://www.w3.org/TR/"
	    "1999/REC-xslt-19991116\"><xsl:stylesheet xmlns:xsl=\"http://www."
	    "w3.org/1999/XSL/Transform\" version=\"1.0\"/></ds:Transform>",
	    P_DEFAULT, "EBMS:0103" },
	{ "35 enveloped-signature", EXC_T, "<ds:Transform Algorithm=\"http://"
	    "www.w3.org/2000/09/xmldsig#enveloped-signature\"/>", P_DEFAULT,
	    "EBMS:0103" },
	{ "35 swa transform on an id reference", EXC_T, "<ds:Transform "
	    "Algorithm=\"" WSS_SWA_NS "Attachment-Content-Signature-"
	    "Transform\"/>", P_DEFAULT, "EBMS:0103" },
	{ "35 c14n with an xpath child", EXC_T, "<ds:Transform Algorithm=\""
	    EXC_C14N "\"><ds:XPath>1</ds:XPath></ds:Transform>", P_DEFAULT,
	    "EBMS:0103" },
	{ "36 six transforms", EXC_T, EXC_T EXC_T EXC_T EXC_T EXC_T EXC_T,
	    P_DEFAULT, "EBMS:0103" },
	{ "36 two transforms", EXC_T, EXC_T EXC_T, P_DEFAULT, "EBMS:0103" },
	{ "37 md5 digest", SHA256_DM, "<ds:DigestMethod Algorithm=\"http://"
	    "www.w3.org/2001/04/xmldsig-more#md5\"/>", P_DEFAULT,
	    "EBMS:0103" },
	{ "40 attribute added to the body", "<env:Body wsu:Id",
	    "<env:Body x=\"1\" wsu:Id", P_DEFAULT, "EBMS:0101" },
	{ "reference to an unknown id", "URI=\"#body-1\"", "URI=\"#nope\"",
	    P_DEFAULT, "EBMS:0101" },
	{ "reference to the token", "URI=\"#body-1\"", "URI=\"#X509-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "element referenced twice", "URI=\"#body-1\"", "URI=\"#msg-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "reference to a missing part", "URI=\"cid:p2@test\"",
	    "URI=\"cid:p3@test\"", P_DEFAULT, "EBMS:0101" },
	{ "two security headers", "<env:Header>",
	    "<env:Header><wsse:Security/>", P_DEFAULT, "EBMS:0103" },
	{ "unknown element in security", "</wsse:Security>",
	    "<x:Y xmlns:x=\"urn:x\"/></wsse:Security>", P_DEFAULT,
	    "EBMS:0103" },
	{ "object in signature", "</ds:Signature>",
	    "<ds:Object/></ds:Signature>", P_DEFAULT, "EBMS:0103" },
	{ "46 unsigned timestamp added", "</wsse:Security>",
	    "<wsu:Timestamp><wsu:Created>2020-01-01T00:00:00Z</wsu:Created>"
	    "</wsu:Timestamp></wsse:Security>", P_DEFAULT, "EBMS:0103" },
	{ "45 timestamp without created", "</wsse:Security>",
	    "<wsu:Timestamp/></wsse:Security>", P_DEFAULT, "EBMS:0101" },
	{ "50 encrypted data in a header wrapper", "</env:Header>",
	    WRAP_OPEN "<xenc:EncryptedData xmlns:xenc=\"" NS_XENC "\" "
	    "Id=\"ED-1\"/></x:W></env:Header>", P_DEFAULT, "EBMS:0101" },
	{ "50 encrypted data in the body", "<env:Body wsu:Id=\"body-1\"/>",
	    "<env:Body wsu:Id=\"body-1\"><xenc:EncryptedData xmlns:xenc=\""
	    NS_XENC "\"/></env:Body>", P_DEFAULT, "EBMS:0101" },
	{ "encrypted message on a leg without encryption", "</wsse:Security>",
	    "<xenc:EncryptedKey xmlns:xenc=\"" NS_XENC "\"/></wsse:Security>",
	    P_ENC_NEVER, "EBMS:0103" },
	/* issue 10 item 8: "#" + NCName only ('^' is XPointer's escape) */
	{ "8 caret in a reference", "URI=\"#body-1\"", "URI=\"#body^-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "8 reference not starting with a letter", "URI=\"#body-1\"",
	    "URI=\"#1body\"", P_DEFAULT, "EBMS:0103" },
	{ "8 colon in a reference", "URI=\"#body-1\"", "URI=\"#b:ody\"",
	    P_DEFAULT, "EBMS:0103" },
};

/* Each edit of a valid message, with its code. */
static void
test_tampered(void **state)
{
	size_t i;
	char *xml;

	(void)state;
	for (i = 0; i < sizeof(tampered) / sizeof(tampered[0]); i++) {
		xml = tamper(sign_default(), tampered[i].from, tampered[i].to);
		expect(tampered[i].name, xml, tampered[i].pol,
		    tampered[i].code);
		free(xml);
	}
}

/* 28: no Security header at all where signing (or encryption) is required. */
static void
test_unsigned(void **state)
{
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");

	(void)state;
	xml = tamper(xml, sec, "");
	expect("28 unsigned", xml, P_DEFAULT, "EBMS:0103");
	expect("51 unsigned, encryption required", xml, P_ONLY_ENC,
	    "EBMS:0103");
	free(sec);
	free(xml);
}

/* 31: the signed Body moved into a header wrapper keeping its Id, another
 * Body in place; 33: the same with eb:Messaging. */
static void
test_wrapping(void **state)
{
	char *xml = sign_default(), *msg, *wrapped;

	(void)state;
	xml = tamper(xml, "<env:Body wsu:Id=\"body-1\"/>",
	    "<env:Body><x:Evil xmlns:x=\"urn:x\"/></env:Body>");
	xml = tamper(xml, "</env:Header>", WRAP_OPEN
	    "<env:Body wsu:Id=\"body-1\"/></x:W></env:Header>");
	expect("31 body wrapped", xml, P_DEFAULT, "EBMS:0101");
	free(xml);

	xml = sign_default();
	msg = slice(xml, "<eb:Messaging", "</eb:Messaging>");
	wrapped = malloc(strlen(msg) + 64);
	assert_non_null(wrapped);
	(void)sprintf(wrapped, "%s%s</x:W>", WRAP_OPEN, msg);
	xml = tamper(xml, msg, "<eb:Messaging env:mustUnderstand=\"true\" "
	    "wsu:Id=\"forged\"><eb:UserMessage/></eb:Messaging>");
	xml = tamper(xml, "</env:Header>", wrapped);
	xml = tamper(xml, "</x:W>", "</x:W></env:Header>");
	expect("33 messaging wrapped", xml, P_DEFAULT, "EBMS:0101");
	free(wrapped);
	free(msg);
	free(xml);
}

/* A second ds:Signature, and a signature without KeyInfo. */
static void
test_signature_shape(void **state)
{
	char *xml = sign_default(), *sig = slice(xml, "<ds:Signature",
	    "</ds:Signature>"), *ki = slice(xml, "<ds:KeyInfo",
	    "</ds:KeyInfo>");
	char *two = malloc(2 * strlen(sig) + 1);

	(void)state;
	assert_non_null(two);
	(void)sprintf(two, "%s%s", sig, sig);
	xml = tamper(xml, sig, two);
	expect("two signatures", xml, P_DEFAULT, "EBMS:0103");
	free(xml);
	xml = tamper(sign_default(), ki, "");
	expect("no key info", xml, P_DEFAULT, "EBMS:0101");
	free(xml);
	free(two);
	free(sig);
	free(ki);
}

/* 36: more than 30 references (copies of the first one). */
static void
test_too_many_references(void **state)
{
	char *xml = sign_default(), *ref = slice(xml, "<ds:Reference",
	    "</ds:Reference>"), *many;
	size_t i, n = strlen(ref);

	(void)state;
	many = malloc(31 * n + 1);
	assert_non_null(many);
	for (i = 0; i < 31; i++)
		memcpy(many + i * n, ref, n);
	many[31 * n] = '\0';
	xml = tamper(xml, ref, many);
	expect("36 34 references", xml, P_DEFAULT, "EBMS:0103");
	free(many);
	free(ref);
	free(xml);
}

/* 39: one attachment byte flipped after signing. */
static void
test_attachment_flipped(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default();
	unsigned char copy[sizeof(part2)];
	struct run r;

	(void)state;
	run_init(&r, P_DEFAULT);
	memcpy(copy, part2, sizeof(copy));
	copy[5] ^= 0x01;
	r.parts[1].data = copy;
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	/* a signed cid: reference to a part the message does not have */
	run_init(&r, P_DEFAULT);
	r.n_parts = 1;
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	arena_free(a);
	free(xml);
}

/* Issue 10 item 8: an Id with '^' named by "#" + that Id (the ID index
 * finds it; xmlsec's XPointer would unescape "^^" to "^") is refused. */
static void
test_id_reference_ncname(void **state)
{
	char *xml = sign_default();

	(void)state;
	xml = tamper(xml, "wsu:Id=\"body-1\"", "wsu:Id=\"body^^-1\"");
	xml = tamper(xml, "URI=\"#body-1\"", "URI=\"#body^^-1\"");
	expect("8 id with carets", xml, P_DEFAULT, "EBMS:0103");
	free(xml);
}

/* Issue 10 item 6: AES-CBC authenticates nothing, so CBC-encrypted
 * payloads without a signature are refused before any cryptography, even
 * where signing is optional. */
static void
test_cbc_unsigned(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");
	struct run r;

	(void)state;
	xml = tamper(xml, sec, "<wsse:Security><xenc:EncryptedData xmlns:xenc="
	    "\"" NS_XENC "\"><xenc:EncryptionMethod Algorithm=\"" NS_XENC
	    "aes128-cbc\"/></xenc:EncryptedData></wsse:Security>");
	run_init(&r, P_SIGN_OPTIONAL);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0103");
	assert_non_null(strstr(r.err.msg, "AES-CBC"));
	arena_free(a);
	free(sec);
	free(xml);
}

/* Issue 10 item 3: a forged SignatureValue is refused before a single
 * reference is dereferenced: an XML attachment that would not even parse
 * is never looked at (the reason names the SignatureValue, not the part). */
static void
test_signature_value_first(void **state)
{
	static const char broken[] = "<x:Doc xmlns:x=\"urn:x\">one</x:Do";
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sv, *p, orig;
	struct run r;

	(void)state;
	sv = strstr(xml, "<ds:SignatureValue>");
	assert_non_null(sv);
	p = sv + strlen("<ds:SignatureValue>") + 10;
	orig = *p;
	*p = orig == 'A' ? 'B' : 'A';
	run_init(&r, P_DEFAULT);
	r.parts[0].data = (const unsigned char *)broken;
	r.parts[0].len = strlen(broken);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	assert_non_null(strstr(r.err.detail, "SignatureValue does not verify"));
	assert_null(strstr(r.err.detail, "XML attachment"));
	/* the same part under the genuine signature: xmlsec gets to it */
	*p = orig;
	run_init(&r, P_DEFAULT);
	r.parts[0].data = (const unsigned char *)broken;
	r.parts[0].len = strlen(broken);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	if (strstr(r.err.detail, "XML attachment refused") == NULL)
		fail_msg("%s", r.err.detail);
	arena_free(a);
	free(xml);
}

/* Issue 10 item 3: an XML attachment is parsed under the policy's (the
 * request's) limits: nodes, depth and memory; the valid message passes
 * under the defaults. */
static void
test_xml_attachment_limits(void **state)
{
	static const enum pol pols[] = { P_XML_NODES_1, P_XML_DEPTH_1,
		P_XML_MEMORY_1 };
	static const char *const why[] = { "XML too complex",
		"XML too complex", "memory budget" };
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *two;
	struct run r;
	size_t i;

	(void)state;
	expect("defaults", xml, P_DEFAULT, NULL);
	two = tamper(strdup(part1), "one", "<x:In>one</x:In>");
	for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		run_init(&r, pols[i]);
		if (pols[i] == P_XML_DEPTH_1)   /* the root alone is depth 1 */
			r.parts[0].data = (const unsigned char *)two;
		if (pols[i] == P_XML_DEPTH_1)
			r.parts[0].len = strlen(two);
		assert_int_equal(process(a, xml, &r), -1);
		assert_string_equal(r.err.ebms_code, "EBMS:0101");
		if (strstr(r.err.detail, why[i]) == NULL)
			fail_msg("%zu: %s", i, r.err.detail);
	}
	free(two);
	arena_free(a);
	free(xml);
}

/* ---- recorded traffic --------------------------------------------------- */

/* A recorded message split and parsed the way the gateway does it. */
struct corpus_msg {
	struct wss_part parts[8];
	size_t n_parts;
	xmlDocPtr doc;
	xmlNodePtr messaging, body;
};

/* Read, split and parse rel (Content-Type ct); 0 ok, 1 corpus absent. */
static int
corpus_load(struct arena *a, const char *rel, const char *ct,
    struct corpus_msg *cm)
{
	struct mime_message m;
	struct soap_env env;
	struct err err;
	size_t len, i;
	char *body = testutil_read_shared(rel, &len);
	const struct mime_part *root;

	memset(cm, 0, sizeof(*cm));
	err_clear(&err);
	if (body == NULL)
		return 1;
	assert_int_equal(arena_cleanup(a, free, body), 0);
	assert_int_equal(mime_parse(a, ct, (const unsigned char *)body, len,
	    NULL, &m, &err), 0);
	root = &m.parts[m.root];
	assert_int_equal(xml_parse(a, (const char *)root->data, root->len,
	    NULL, &cm->doc, &err), 0);
	assert_int_equal(soap_open(cm->doc, &env, &err), 0);
	for (i = 0; i < m.n_parts && cm->n_parts < 8; i++) {
		struct wss_part *p = &cm->parts[cm->n_parts];

		if (i == m.root)
			continue;
		p->content_id = m.parts[i].content_id;
		p->content_type = m.parts[i].content_type;
		p->data = m.parts[i].data;
		p->len = m.parts[i].len;
		cm->n_parts++;
	}
	cm->messaging = xml_child(env.header, NS_EB, "Messaging");
	cm->body = env.body;
	return 0;
}

/* wss_inbound over a loaded recorded message. */
static int
corpus_inbound(struct arena *a, struct corpus_msg *cm,
    const struct wss_policy *pol, struct wss_result *res, struct err *err)
{
	err_clear(err);
	return wss_inbound(a, cm->doc, cm->messaging, cm->body, cm->parts,
	    cm->n_parts, pol, res, err);
}

/* Trust with one self-signed certificate as signer and anchor. */
static struct trust *
corpus_trust(const char *rel)
{
	char path[4096];
	const char *p = path;
	struct trust *t = NULL;
	struct err err;

	err_clear(&err);
	(void)snprintf(path, sizeof(path), "%s/%s.pem", testutil_shared_dir(),
	    rel);
	assert_int_equal(trust_new(&(struct trust_files){ .signers = &p,
	    .n_signers = 1, .anchors = &p, .n_anchors = 1 }, &t, &err), 0);
	return t;
}

/* Holodeck -> AS4.NET: rsa-sha384, SKI, 2 cid: references (corpus row
 * 110); the same with one attachment byte flipped (39). */
static void
test_corpus_holodeck(void **state)
{
	struct arena *a = arena_new(0);
	struct trust *t;
	struct corpus_msg cm;
	struct wss_policy pol;
	struct wss_result res;
	struct err err;
	unsigned char *copy;

	(void)state;
	if (corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm) != 0) {
		arena_free(a);
		testutil_skip("corpus message " HOLODECK " is not present");
	}
	policy(P_DEFAULT, &pol);
	pol.trust = t = corpus_trust(KEY_B);
	assert_int_equal(clock_parse_iso8601("2018-01-24T16:12:22Z",
	    &pol.at_ms), 0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("refused: %s %s (%s)", err.ebms_code, err.msg,
		    err.detail);
	assert_int_equal(cm.n_parts, 2);
	assert_true(res.verified && res.n_references == 4);
	assert_non_null(strstr(res.signer, "CN=AccessPointB"));

	assert_int_equal(corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm), 0);
	copy = arena_memdup(a, cm.parts[1].data, cm.parts[1].len);
	assert_non_null(copy);
	copy[cm.parts[1].len / 2] ^= 0x20;
	cm.parts[1].data = copy;
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0101");
	/* nothing is cached between calls: an intact copy verifies again */
	assert_int_equal(corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm), 0);
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), 0);
	trust_free(t);
	arena_free(a);
}

/* Compare a decrypted part with the corpus ground truth. */
static void
corpus_same(const struct wss_part *p, const char *rel)
{
	size_t len;
	char *want = testutil_read_shared(rel, &len);

	assert_non_null(want);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, want, len);
	free(want);
}

/* A keyring of the one pair crt + key; 0 / -1. */
static int
t_ring(const char *crt, const char *key, struct wss_keyring **ret)
{
	struct wss_keyring_spec spec = { crt, key, 0 };
	struct err err;

	err_clear(&err);
	return wss_keyring_new(&spec, 1, ret, &err);
}

/* AS4.NET: signed by AccessPointA (IssuerSerial), encrypted for
 * AccessPointB (rsa-oaep-mgf1p/sha256, aes128-gcm) (corpus row 126). */
static void
test_corpus_encrypted_signed(void **state)
{
	static const char dir[] = AS4NET_X ENCSIGNED "/decrypted-b545c3a0-e57f"
	    "-46aa-862f-381eb4b7009-";
	struct arena *a = arena_new(0);
	char crt[4096], key[4096], want[512];
	struct wss_keyring *dk = NULL;
	struct wss_keyring_spec two[2];
	char crt_a[4096], key_a[4096];
	struct trust *t;
	struct corpus_msg cm;
	struct wss_policy pol;
	struct wss_result res;
	struct err err;
	size_t i;

	(void)state;
	if (corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm) != 0) {
		arena_free(a);
		testutil_skip("corpus message " ENCSIGNED " is not present");
	}
	err_clear(&err);
	(void)snprintf(crt, sizeof(crt), "%s/" KEY_B ".pem",
	    testutil_shared_dir());
	(void)snprintf(key, sizeof(key), "%s/" KEY_B ".key.pem",
	    testutil_shared_dir());
	assert_int_equal(t_ring(crt, key, &dk), 0);
	policy(P_ENC_REQUIRED, &pol);
	pol.trust = t = corpus_trust(KEY_A);
	pol.decrypt_keys = dk;
	assert_int_equal(clock_parse_iso8601("2018-12-19T08:56:26Z",
	    &pol.at_ms), 0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("refused: %s %s (%s)", err.ebms_code, err.msg,
		    err.detail);
	assert_true(res.verified && res.decrypted && res.n_references == 4);
	assert_non_null(strstr(res.signer, "CN=AccessPointA"));
	assert_int_equal(cm.n_parts, 2);
	for (i = 0; i < cm.n_parts; i++) {
		assert_true(cm.parts[i].decrypted);
		(void)snprintf(want, sizeof(want), "%s%s.bin", dir,
		    strstr(cm.parts[i].content_id, "1650194442") != NULL ?
		    "1650194442@CLT-SMOREELS." : "291596031@CLT-SMOREELS.m");
		corpus_same(&cm.parts[i], want);
	}
	/* AccessPointA's pair beside AccessPointB's: the EncryptedKey's
	 * IssuerSerial picks B's, and the message decrypts as before */
	wss_keyring_free(dk);
	dk = NULL;
	(void)snprintf(crt_a, sizeof(crt_a), "%s/" KEY_A ".pem",
	    testutil_shared_dir());
	(void)snprintf(key_a, sizeof(key_a), "%s/" KEY_A ".key.pem",
	    testutil_shared_dir());
	two[0] = (struct wss_keyring_spec){ crt_a, key_a, 0 };
	two[1] = (struct wss_keyring_spec){ crt, key, 1 };
	assert_int_equal(wss_keyring_new(two, 2, &dk, &err), 0);
	pol.decrypt_keys = dk;
	assert_int_equal(corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm),
	    0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("two pairs: %s (%s)", err.msg, err.detail);
	assert_true(res.decrypted);
	assert_non_null(res.decrypted_retiring);    /* B is the retiring one */
	/* AccessPointA's alone: the reference names no pair -> EBMS:0102,
	 * the log detail names the reference and the pair's fingerprint */
	wss_keyring_free(dk);
	dk = NULL;
	assert_int_equal(t_ring(crt_a, key_a, &dk), 0);
	pol.decrypt_keys = dk;
	assert_int_equal(corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm),
	    0);
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0102");
	assert_string_equal(err.msg, "decryption failed");
	assert_non_null(strstr(err.detail, "X509IssuerSerial \"CN=AccessPointB\""));
	assert_non_null(strstr(err.detail, "sha256:"));
	trust_free(t);
	wss_keyring_free(dk);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alg_from_uri),
		cmocka_unit_test(test_alg_parse),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_valid_variants),
		cmocka_unit_test(test_unsigned_optional),
		cmocka_unit_test(test_signed_negatives),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_unsigned),
		cmocka_unit_test(test_wrapping),
		cmocka_unit_test(test_signature_shape),
		cmocka_unit_test(test_too_many_references),
		cmocka_unit_test(test_attachment_flipped),
		cmocka_unit_test(test_signature_value_first),
		cmocka_unit_test(test_cbc_unsigned),
		cmocka_unit_test(test_id_reference_ncname),
		cmocka_unit_test(test_xml_attachment_limits),
		cmocka_unit_test(test_corpus_holodeck),
		cmocka_unit_test(test_corpus_encrypted_signed),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
