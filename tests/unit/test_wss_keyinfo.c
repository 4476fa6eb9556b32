/*
 * Unit tests for src/wss/wss_keyinfo.c: resolving ds:KeyInfo to a
 * certificate (BinarySecurityToken X509v3 and X509PKIPathv1,
 * SubjectKeyIdentifier, ThumbprintSHA1, IssuerSerial with the issuer name
 * written the Java, .NET and OpenSSL ways, inline certificates) and
 * refusing ds:KeyValue, over the shared test PKI (testpki.c); the KeyInfo
 * of real messages in ../shared/corpus must resolve to the certificate the
 * corpus README names, and pass trust_chain_check at the message's instant.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "testpki.h"
#include "testutil.h"
#include "trust/trust.h"
#include "util/arena.h"
#include "util/err.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define X509TP "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0"
#define VT_X509V3 X509TP "#X509v3"
#define VT_PKIPATH X509TP "#X509PKIPathv1"
#define VT_SKI X509TP "#X509SubjectKeyIdentifier"
#define VT_THUMB "http://docs.oasis-open.org/wss/" \
	"oasis-wss-soap-message-security-1.1#ThumbprintSHA1"
#define ENC_B64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define NS_XENC_ "http://www.w3.org/2001/04/xmlenc#"

/* Template tokens "{NAME}" and their values (malloc). */
enum { T_LEAF, T_LEAFX, T_PATH, T_PATH11, T_SKI, T_SKI_NOSKI, T_THUMB,
	T_SERIAL, T_BIG, T_COUNT };
static const char *const token_names[T_COUNT] = {
	"LEAF", "LEAFX", "PATH", "PATH11", "SKI", "SKI_NOSKI", "THUMB",
	"SERIAL", "BIG",
};


static struct {
	char *tokens[T_COUNT];
	struct trust *trust;       /* anchors: root */
} fx;

/* Base64 (no line breaks) of len bytes (malloc). */
static char *
b64(const unsigned char *p, size_t len)
{
	char *out = malloc(4 * ((len + 2) / 3) + 1);

	assert_non_null(out);
	(void)EVP_EncodeBlock((unsigned char *)out, p, (int)len);
	return out;
}

/* DER of a certificate (OPENSSL_malloc). */
static int
der_of(X509 *cert, unsigned char **ret)
{
	int len;

	*ret = NULL;
	len = i2d_X509(cert, ret);
	assert_true(len > 0);
	return len;
}

/* PKIPath: SEQUENCE OF the given certificates, as base64 (malloc). */
static char *
pkipath(const int *which, size_t n)
{
	unsigned char body[65536], *der, out[65536 + 8];
	size_t len = 0, hl = 0, i;
	int dl;

	for (i = 0; i < n; i++) {
		dl = der_of(pki.certs[which[i]], &der);
		assert_true(len + (size_t)dl <= sizeof(body));
		memcpy(body + len, der, (size_t)dl);
		len += (size_t)dl;
		OPENSSL_free(der);
	}
	out[hl++] = 0x30;
	if (len < 128) {
		out[hl++] = (unsigned char)len;
	} else if (len < 256) {
		out[hl++] = 0x81;
		out[hl++] = (unsigned char)len;
	} else {
		out[hl++] = 0x82;
		out[hl++] = (unsigned char)(len >> 8);
		out[hl++] = (unsigned char)len;
	}
	memcpy(out + hl, body, len);
	return b64(out, hl + len);
}

/* The values of the template tokens. */
static void
make_tokens(void)
{
	static const int path[] = { C_CA, C_INT, C_LEAF };
	int path11[11], i, len;
	unsigned char *der, md[SHA_DIGEST_LENGTH], bytes[8192];
	const unsigned char *pk;
	const ASN1_OCTET_STRING *ski;
	X509_PUBKEY *xpk;

	len = der_of(pki.certs[C_LEAF], &der);
	fx.tokens[T_LEAF] = b64(der, (size_t)len);
	assert_true((size_t)len + 3 <= sizeof(bytes));
	memcpy(bytes, der, (size_t)len);
	memset(bytes + len, 0, 3);
	fx.tokens[T_LEAFX] = b64(bytes, (size_t)len + 3);
	(void)SHA1(der, (size_t)len, md);
	fx.tokens[T_THUMB] = b64(md, sizeof(md));
	OPENSSL_free(der);
	fx.tokens[T_PATH] = pkipath(path, 3);
	for (i = 0; i < 11; i++)
		path11[i] = C_LEAF;
	fx.tokens[T_PATH11] = pkipath(path11, 11);
	ski = X509_get0_subject_key_id(pki.certs[C_LEAF]);
	assert_non_null(ski);
	fx.tokens[T_SKI] = b64(ASN1_STRING_get0_data(ski),
	    (size_t)ASN1_STRING_length(ski));
	/* RFC 5280 4.2.1.2 (1): SHA-1 of the subjectPublicKey BIT STRING */
	assert_null(X509_get0_subject_key_id(pki.certs[C_NOSKI]));
	xpk = X509_get_X509_PUBKEY(pki.certs[C_NOSKI]);
	assert_int_equal(X509_PUBKEY_get0_param(NULL, &pk, &len, NULL, xpk), 1);
	(void)SHA1(pk, (size_t)len, md);
	fx.tokens[T_SKI_NOSKI] = b64(md, sizeof(md));
	fx.tokens[T_SERIAL] = strdup(testpki_specs[C_LEAF].serial);
	fx.tokens[T_BIG] = malloc(70001);
	assert_non_null(fx.tokens[T_BIG]);
	memset(fx.tokens[T_BIG], 'A', 70000);
	fx.tokens[T_BIG][70000] = '\0';
}

/* A trust from pki.dir file names. */
static struct trust *
make_trust(const char *signers, const char *anchors)
{
	char s[128], a[128];
	const char *sv[] = { testpki_path(s, sizeof(s), signers) };
	const char *av[] = { testpki_path(a, sizeof(a), anchors) };
	struct trust_files f = { .signers = sv, .n_signers = 1,
		.anchors = av, .n_anchors = 1 };
	struct trust *t = NULL;
	struct err err;

	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), 0);
	return t;
}

/* Generate the PKI, the tokens and the trust. */
static int
group_setup(void **state)
{
	(void)state;
	xml_global_init();
	if (testpki_setup("test_wss_keyinfo") < 0)
		return -1;
	make_tokens();
	fx.trust = make_trust("signers.pem", "ca.pem");
	return 0;
}

/* Free everything and remove the temporary files. */
static int
group_teardown(void **state)
{
	size_t i;

	(void)state;
	trust_free(fx.trust);
	for (i = 0; i < T_COUNT; i++)
		free(fx.tokens[i]);
	testpki_teardown();
	return 0;
}

/* ---- wss_keyinfo_resolve ---- */

static const char doc_head[] =
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\" xmlns:wsse=\"" NS_WSSE "\" "
    "xmlns:wsu=\"" NS_WSU "\" xmlns:ds=\"" NS_DS "\" "
    "xmlns:dsig11=\"http://www.w3.org/2009/xmldsig11#\">"
    "<env:Header><wsse:Security>";
static const char doc_mid[] =
    "<ds:Signature><ds:SignedInfo/><ds:SignatureValue/><ds:KeyInfo>";
static const char doc_mid2[] =
    "</ds:KeyInfo></ds:Signature></wsse:Security></env:Header>"
    "<env:Body wsu:Id=\"body\">";
static const char doc_tail[] = "</env:Body></env:Envelope>";

/* Append s to the growing string *out. */
static void
append(char **out, size_t *len, const char *s, size_t n)
{
	*out = realloc(*out, *len + n + 1);
	assert_non_null(*out);
	memcpy(*out + *len, s, n);
	*len += n;
	(*out)[*len] = '\0';
}

/* Append tpl with "{NAME}" tokens replaced. */
static void
expand(char **out, size_t *len, const char *tpl)
{
	const char *p = tpl, *open, *close;
	size_t i;

	while ((open = strchr(p, '{')) != NULL &&
	    (close = strchr(open, '}')) != NULL) {
		append(out, len, p, (size_t)(open - p));
		for (i = 0; i < T_COUNT; i++)
			if (strlen(token_names[i]) == (size_t)(close - open - 1) &&
			    strncmp(open + 1, token_names[i],
			    (size_t)(close - open - 1)) == 0)
				break;
		assert_true(i < T_COUNT);
		append(out, len, fx.tokens[i], strlen(fx.tokens[i]));
		p = close + 1;
	}
	append(out, len, p, strlen(p));
}

/* The first element named ns:name in document order, or NULL. */
static xmlNodePtr
find(xmlNodePtr node, const char *ns, const char *name)
{
	xmlNodePtr c, hit;

	if (xml_is(node, ns, name))
		return node;
	for (c = node != NULL ? node->children : NULL; c != NULL; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    (hit = find(c, ns, name)) != NULL)
			return hit;
	return NULL;
}

/* Parse a test document; the ids are indexed as wss_inbound does. */
static xmlDocPtr
parse_doc(struct arena *a, const char *sec, const char *keyinfo,
    const char *body)
{
	char *xml = NULL;
	size_t len = 0;
	xmlDocPtr doc = NULL;
	struct err err;

	append(&xml, &len, doc_head, strlen(doc_head));
	expand(&xml, &len, sec);
	append(&xml, &len, doc_mid, strlen(doc_mid));
	expand(&xml, &len, keyinfo);
	append(&xml, &len, doc_mid2, strlen(doc_mid2));
	expand(&xml, &len, body);
	append(&xml, &len, doc_tail, strlen(doc_tail));
	err_clear(&err);
	if (xml_parse(a, xml, len, NULL, &doc, &err) != 0)
		fail_msg("parse: %s %s", err.msg, err.detail);
	free(xml);
	assert_int_equal(wss_ids_index(doc, &err), 0);
	return doc;
}

#define BST(id, vt, val) "<wsse:BinarySecurityToken wsu:Id=\"" id "\" " \
	"EncodingType=\"" ENC_B64 "\" ValueType=\"" vt "\">" val \
	"</wsse:BinarySecurityToken>"
#define STR(x) "<wsse:SecurityTokenReference>" x \
	"</wsse:SecurityTokenReference>"
#define REF(uri, vt) "<wsse:Reference URI=\"" uri "\" ValueType=\"" vt "\"/>"
#define KEYID(vt, val) "<wsse:KeyIdentifier EncodingType=\"" ENC_B64 "\" " \
	"ValueType=\"" vt "\">" val "</wsse:KeyIdentifier>"
#define ISSER(name, serial) "<ds:X509Data><ds:X509IssuerSerial>" \
	"<ds:X509IssuerName>" name "</ds:X509IssuerName>" \
	"<ds:X509SerialNumber>" serial "</ds:X509SerialNumber>" \
	"</ds:X509IssuerSerial></ds:X509Data>"

/* How resolution of each KeyInfo must end. */
static const struct resolve_case {
	const char *name, *sec, *keyinfo, *body;
	int cert;                 /* C_NONE: must fail */
	int chain;                /* number of untrusted chain certificates */
	const char *msg;          /* failure msg substring */
} resolve_cases[] = {
	{ "bst x509v3", BST("X1", VT_X509V3, "{LEAF}"),
	    STR(REF("#X1", VT_X509V3)), "", C_LEAF, 0, NULL },
	{ "bst x509v3, reference without ValueType", BST("X1", VT_X509V3,
	    "\n{LEAF}\n"), STR("<wsse:Reference URI=\"#X1\"/>"), "", C_LEAF,
	    0, NULL },
	{ "bst without ValueType", "<wsse:BinarySecurityToken wsu:Id=\"X1\">"
	    "{LEAF}</wsse:BinarySecurityToken>",
	    STR("<wsse:Reference URI=\"#X1\"/>"), "", C_LEAF, 0, NULL },
	{ "bst pkipath", BST("P1", VT_PKIPATH, "{PATH}"),
	    STR(REF("#P1", VT_PKIPATH)), "", C_LEAF, 2, NULL },
	{ "pkipath of 11", BST("P1", VT_PKIPATH, "{PATH11}"),
	    STR(REF("#P1", VT_PKIPATH)), "", C_NONE, 0, "malformed" },
	{ "pkipath empty", BST("P1", VT_PKIPATH, "MAA="),
	    STR(REF("#P1", VT_PKIPATH)), "", C_NONE, 0, "malformed" },
	{ "pkipath holding x509v3", BST("P1", VT_PKIPATH, "{LEAF}"),
	    STR(REF("#P1", VT_PKIPATH)), "", C_NONE, 0, "malformed" },
	{ "bst over 64 KiB", BST("X1", VT_X509V3, "{BIG}"),
	    STR(REF("#X1", VT_X509V3)), "", C_NONE, 0, "malformed" },
	{ "bst not base64", BST("X1", VT_X509V3, "!!not base64!!"),
	    STR(REF("#X1", VT_X509V3)), "", C_NONE, 0, "malformed" },
	{ "bst empty", BST("X1", VT_X509V3, ""),
	    STR(REF("#X1", VT_X509V3)), "", C_NONE, 0, "malformed" },
	{ "bst with trailing bytes", BST("X1", VT_X509V3, "{LEAFX}"),
	    STR(REF("#X1", VT_X509V3)), "", C_NONE, 0, "malformed" },
	{ "bst with element content", BST("X1", VT_X509V3, "<x/>"),
	    STR(REF("#X1", VT_X509V3)), "", C_NONE, 0, "malformed" },
	{ "bst hex encoding", "<wsse:BinarySecurityToken wsu:Id=\"X1\" "
	    "EncodingType=\"urn:hex\" ValueType=\"" VT_X509V3 "\">{LEAF}"
	    "</wsse:BinarySecurityToken>", STR(REF("#X1", VT_X509V3)), "",
	    C_NONE, 0, "unsupported" },
	{ "bst unknown ValueType", BST("X1", X509TP "#PKCS7", "{LEAF}"),
	    STR("<wsse:Reference URI=\"#X1\"/>"), "", C_NONE, 0,
	    "unsupported" },
	{ "reference ValueType differs", BST("X1", VT_X509V3, "{LEAF}"),
	    STR(REF("#X1", VT_PKIPATH)), "", C_NONE, 0, "unsupported" },
	{ "reference to the Body", "", STR(REF("#body", VT_X509V3)), "",
	    C_NONE, 0, "token not found" },
	{ "reference to nothing", "", STR(REF("#nope", VT_X509V3)), "",
	    C_NONE, 0, "token not found" },
	{ "reference external", BST("X1", VT_X509V3, "{LEAF}"),
	    STR(REF("http://evil/x#X1", VT_X509V3)), "", C_NONE, 0,
	    "token not found" },
	{ "reference xpointer", BST("X1", VT_X509V3, "{LEAF}"),
	    STR(REF("#xpointer(id('X1'))", VT_X509V3)), "", C_NONE, 0,
	    "token not found" },
	{ "bst outside wsse:Security", "", STR(REF("#X1", VT_X509V3)),
	    BST("X1", VT_X509V3, "{LEAF}"), C_NONE, 0, "token not found" },
	{ "ski", "", STR(KEYID(VT_SKI, "{SKI}")), "", C_LEAF, 0, NULL },
	{ "ski computed (no extension)", "",
	    STR(KEYID(VT_SKI, " {SKI_NOSKI} ")), "", C_NOSKI, 0, NULL },
	{ "ski unknown", "", STR(KEYID(VT_SKI, "AAAAAAAAAAAAAAAAAAAAAAAAAAA=")),
	    "", C_NONE, 0, "no configured certificate" },
	{ "ski too long", "", STR(KEYID(VT_SKI, "{BIG}")), "", C_NONE, 0,
	    "malformed" },
	{ "thumbprint sha1", "", STR(KEYID(VT_THUMB, "{THUMB}")), "", C_LEAF,
	    0, NULL },
	{ "keyidentifier x509v3 inline", "", STR(KEYID(VT_X509V3, "{LEAF}")),
	    "", C_LEAF, 0, NULL },
	{ "keyidentifier without ValueType", "",
	    STR("<wsse:KeyIdentifier>{SKI}</wsse:KeyIdentifier>"), "", C_NONE,
	    0, "unsupported" },
	{ "keyidentifier unknown ValueType", "",
	    STR(KEYID("urn:x", "{SKI}")), "", C_NONE, 0, "unsupported" },
	{ "issuerserial compact", "",
	    STR(ISSER("CN=Test Intermediate,O=Test Org,ST=Brussels,C=BE",
	    "{SERIAL}")), "", C_LEAF, 0, NULL },
	{ "issuerserial spaced (Java toString)", "",
	    STR(ISSER("CN=Test Intermediate, O=Test Org, ST=Brussels, C=BE",
	    " {SERIAL} ")), "", C_LEAF, 0, NULL },
	{ "issuerserial .NET keywords", "",
	    STR(ISSER("CN=Test Intermediate, O=Test Org, S=Brussels, C=BE",
	    "{SERIAL}")), "", C_LEAF, 0, NULL },
	{ "issuerserial forward order", "",
	    STR(ISSER("C=BE, ST=Brussels, O=Test Org, CN=Test Intermediate",
	    "{SERIAL}")), "", C_LEAF, 0, NULL },
	{ "issuerserial case, escapes, quotes", "",
	    STR(ISSER("cn=test\\20intermediate;o=\"TEST ORG\" ; st = Brussels"
	    " ;c=be", "{SERIAL}")), "", C_LEAF, 0, NULL },
	{ "issuerserial hex value and OIDs", "",
	    STR(ISSER("2.5.4.3=#0c115465737420496e7465726d656469617465,"
	    "OID.2.5.4.10=Test Org,ST=Brussels,C=BE", "{SERIAL}")), "",
	    C_LEAF, 0, NULL },
	{ "issuerserial multi-valued RDN", "",
	    STR(ISSER("UID=42 + CN=self, O=Test Org", "14")), "", C_SELF, 0,
	    NULL },
	{ "issuerserial RDN grouping differs", "",
	    STR(ISSER("UID=42, CN=self, O=Test Org", "14")), "", C_NONE, 0,
	    "no configured certificate" },
	{ "issuerserial in ds:KeyInfo directly", "",
	    ISSER("CN=Test Intermediate,O=Test Org,ST=Brussels,C=BE",
	    "{SERIAL}"), "", C_LEAF, 0, NULL },
	{ "issuerserial wrong serial", "",
	    STR(ISSER("CN=Test Intermediate,O=Test Org,ST=Brussels,C=BE",
	    "123456789012345678901234567891")), "", C_NONE, 0,
	    "no configured certificate" },
	{ "issuerserial wrong issuer", "",
	    STR(ISSER("CN=Test Root CA,O=Test Org,C=BE", "{SERIAL}")), "",
	    C_NONE, 0, "no configured certificate" },
	{ "issuerserial attribute missing", "",
	    STR(ISSER("CN=Test Intermediate,O=Test Org,C=BE", "{SERIAL}")), "",
	    C_NONE, 0, "no configured certificate" },
	{ "issuername without '='", "", STR(ISSER("CN", "{SERIAL}")), "",
	    C_NONE, 0, "malformed" },
	{ "issuername unknown keyword", "", STR(ISSER("XYZ=1", "{SERIAL}")),
	    "", C_NONE, 0, "malformed" },
	{ "issuername trailing comma", "", STR(ISSER("CN=x,", "{SERIAL}")),
	    "", C_NONE, 0, "malformed" },
	{ "issuername unterminated quote", "",
	    STR(ISSER("CN=\"x, O=y", "{SERIAL}")), "", C_NONE, 0, "malformed" },
	{ "issuername bad hex value", "", STR(ISSER("CN=#zz", "{SERIAL}")),
	    "", C_NONE, 0, "malformed" },
	{ "issuername empty", "", STR(ISSER("", "{SERIAL}")), "", C_NONE, 0,
	    "malformed" },
	{ "serial in hex", "", STR(ISSER("CN=x", "0x10")), "", C_NONE, 0,
	    "malformed" },
	{ "serial empty", "", STR(ISSER("CN=x", "")), "", C_NONE, 0,
	    "malformed" },
	{ "issuerserial without serial", "",
	    STR("<ds:X509Data><ds:X509IssuerSerial><ds:X509IssuerName>CN=x"
	    "</ds:X509IssuerName></ds:X509IssuerSerial></ds:X509Data>"), "",
	    C_NONE, 0, "malformed" },
	{ "x509certificate inline", "", STR("<ds:X509Data><ds:X509Certificate>"
	    "{LEAF}</ds:X509Certificate></ds:X509Data>"), "", C_LEAF, 0, NULL },
	{ "x509ski", "", STR("<ds:X509Data><ds:X509SKI>{SKI}</ds:X509SKI>"
	    "</ds:X509Data>"), "", C_LEAF, 0, NULL },
	{ "x509data with two children", "", STR("<ds:X509Data><ds:X509SKI>"
	    "{SKI}</ds:X509SKI><ds:X509Certificate>{LEAF}</ds:X509Certificate>"
	    "</ds:X509Data>"), "", C_NONE, 0, "unsupported" },
	{ "x509subjectname", "", STR("<ds:X509Data><ds:X509SubjectName>CN=leaf"
	    "</ds:X509SubjectName></ds:X509Data>"), "", C_NONE, 0,
	    "unsupported" },
	{ "keyvalue", "", "<ds:KeyValue><ds:RSAKeyValue><ds:Modulus>AQAB"
	    "</ds:Modulus><ds:Exponent>AQAB</ds:Exponent></ds:RSAKeyValue>"
	    "</ds:KeyValue>", "", C_NONE, 0, "key not taken from KeyValue" },
	{ "keyvalue next to a valid reference", "",
	    STR(KEYID(VT_SKI, "{SKI}")) "<ds:KeyValue/>", "", C_NONE, 0,
	    "key not taken from KeyValue" },
	{ "der-encoded key value", "", "<dsig11:DEREncodedKeyValue>AQAB"
	    "</dsig11:DEREncodedKeyValue>", "", C_NONE, 0,
	    "key not taken from KeyValue" },
	{ "empty keyinfo", "", "", "", C_NONE, 0, "unsupported" },
	{ "keyname", "", "<ds:KeyName>leaf</ds:KeyName>", "", C_NONE, 0,
	    "unsupported" },
	{ "two key references", "", STR(KEYID(VT_SKI, "{SKI}")
	    KEYID(VT_SKI, "{SKI}")), "", C_NONE, 0, "unsupported" },
	{ "embedded token", "", STR("<wsse:Embedded/>"), "", C_NONE, 0,
	    "unsupported" },
};

/* Table: each KeyInfo resolves to the expected certificate or fails. */
static void
test_resolve_table(void **state)
{
	const struct resolve_case *c;
	struct arena *a;
	xmlDocPtr doc;
	X509 *cert;
	STACK_OF(X509) *chain;
	struct err err;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(resolve_cases) / sizeof(*resolve_cases); i++) {
		c = &resolve_cases[i];
		a = arena_new(0);
		doc = parse_doc(a, c->sec, c->keyinfo, c->body);
		err_clear(&err);
		cert = NULL;
		chain = NULL;
		rc = wss_keyinfo_resolve(fx.trust, a, doc,
		    find(xmlDocGetRootElement(doc), NS_DS, "KeyInfo"), &cert,
		    &chain, &err);
		if (c->cert == C_NONE) {
			if (rc != -1 || err.kind != ERR_EBMS ||
			    strcmp(err.ebms_code, "EBMS:0101") != 0 ||
			    strstr(err.msg, c->msg) == NULL)
				fail_msg("%s: rc %d msg \"%s\"", c->name, rc,
				    err.msg);
		} else {
			if (rc != 0)
				fail_msg("%s: %s (%s)", c->name, err.msg,
				    err.detail);
			if (X509_cmp(cert, pki.certs[c->cert]) != 0 ||
			    (chain == NULL ? 0 : sk_X509_num(chain)) != c->chain)
				fail_msg("%s: wrong certificate or chain",
				    c->name);
		}
		arena_free(a);
	}
}

/* PKIPath: the chain holds the rest of the path in order, and the
 * resolved leaf passes the check with it (and fails without it). */
static void
test_resolve_pkipath_then_check(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse_doc(a, BST("P1", VT_PKIPATH, "{PATH}"),
	    STR(REF("#P1", VT_PKIPATH)), "");
	X509 *cert = NULL;
	STACK_OF(X509) *chain = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_keyinfo_resolve(fx.trust, a, doc,
	    find(xmlDocGetRootElement(doc), NS_DS, "KeyInfo"), &cert, &chain,
	    &err), 0);
	assert_int_equal(sk_X509_num(chain), 2);
	assert_int_equal(X509_cmp(sk_X509_value(chain, 0), pki.certs[C_CA]), 0);
	assert_int_equal(X509_cmp(sk_X509_value(chain, 1), pki.certs[C_INT]), 0);
	assert_int_equal(trust_chain_check(fx.trust, cert, chain, 0, &err), 0);
	assert_int_equal(trust_chain_check(fx.trust, cert, NULL, 0, &err), -1);
	assert_string_equal(err.msg, "certificate not trusted");
	/* resolving something that is not a ds:KeyInfo */
	err_clear(&err);
	assert_int_equal(wss_keyinfo_resolve(fx.trust, a, doc,
	    find(xmlDocGetRootElement(doc), NS_DS, "Signature"), &cert, &chain,
	    &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0101");
	arena_free(a);
}

/* ---- corpus: real KeyInfo from recorded messages ---- */

#define CX "corpus/extracted/"
#define AS4NET CX "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4."
#define DOMIBUS CX "cefedelivery_domibus/Domibus-MSH/src/test/resources/" \
	"dataset/as4/"
#define BDI CX "Basic-Data-Infrastructure_BDI-event-choreography-Edelivery/" \
	"README.md.reconstructed/"

static const struct corpus_case {
	const char *envelope;    /* under ../shared */
	int encrypted_key;       /* 1: the xenc:EncryptedKey's KeyInfo */
	const char *signer;      /* the certificate it must resolve to */
	int chain;
	const char *anchor;      /* NULL: no check; "@0": first of the chain */
	int64_t at_s;            /* the message's own timestamp */
	int now_rc;              /* check at "now": 0, -1, or 1 = not tried */
} corpus_cases[] = {
	{ AS4NET "UnitTests/Resources/as4-encrypted-signed-issuerserial.as4/"
	    "envelope.xml", 0, "corpus/keys/5e320e3a1dda.pem", 0,
	    "corpus/keys/5e320e3a1dda.pem", 1545209786, 0 },
	{ AS4NET "UnitTests/Resources/as4-encrypted-signed-issuerserial.as4/"
	    "envelope.xml", 1, "corpus/keys/3da5db472d77.pem", 0, NULL, 0, 1 },
	{ AS4NET "ComponentTests/Resources/signed_holodeck_message.as4/"
	    "envelope.xml", 0, "corpus/keys/3da5db472d77.pem", 0,
	    "corpus/keys/3da5db472d77.pem", 1516810342, 0 },
	{ AS4NET "UnitTests/Resources/holodeck-as4message.xml/envelope.xml", 0,
	    "corpus/keys/0d512bdcd9f1.pem", 0, "corpus/keys/0d512bdcd9f1.pem",
	    1474377705, -1 },
	{ BDI "request-envelope.xml/envelope.xml", 0,
	    "corpus/keys/8dd6a4a297e1.pem", 0, "corpus/keys/8dd6a4a297e1.pem",
	    1739036726, 1 },
	{ BDI "receipt-envelope.xml/envelope.xml", 0,
	    "corpus/keys/220425c3f25e.pem", 0, "corpus/keys/220425c3f25e.pem",
	    1739036728, 1 },
	{ DOMIBUS "bst_X509PKIPathv1_incoming_message.xml/envelope.xml", 0,
	    "corpus/keys/9acb57f4335a.pem", 2, "@0", 1542625277, 1 },
	{ DOMIBUS "bst_x509v3_incoming_message.xml/envelope.xml", 0,
	    "corpus/keys/9acb57f4335a.pem", 0, NULL, 0, 1 },
	{ DOMIBUS "is_incoming_message.xml/envelope.xml", 0,
	    "corpus/keys/9acb57f4335a.pem", 0, NULL, 0, 1 },
	{ DOMIBUS "is_incoming_message.xml/envelope.xml", 1,
	    "corpus/keys/220425c3f25e.pem", 0, NULL, 0, 1 },
	{ DOMIBUS "ski_incoming_message.xml/envelope.xml", 0,
	    "corpus/keys/9acb57f4335a.pem", 0, NULL, 0, 1 },
	{ CX "phax_phase4/phase4-peppol-client/src/test/resources/external/"
	    "verify/governikus.as4in/envelope.xml", 0,
	    "corpus/keys/821e53a11883.pem", 0, "corpus/keys/a0627c7d3e96.pem",
	    1646674888, -1 },
};

/* An absolute path under ../shared. */
static const char *
shared_path(char *out, size_t size, const char *rel)
{
	(void)snprintf(out, size, "%s/%s", testutil_shared_dir(), rel);
	return out;
}

/* Load one PEM certificate from ../shared. */
static X509 *
shared_cert(const char *rel)
{
	char path[4096];
	BIO *bio = BIO_new_file(shared_path(path, sizeof(path), rel), "r");
	X509 *cert;

	assert_non_null(bio);
	cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	assert_non_null(cert);
	return cert;
}

/* The KeyInfo a corpus case names. */
static xmlNodePtr
corpus_key_info(xmlDocPtr doc, int encrypted_key)
{
	xmlNodePtr sec = find(xmlDocGetRootElement(doc), NS_WSSE, "Security");
	xmlNodePtr owner = encrypted_key ? find(sec, NS_XENC_, "EncryptedKey") :
	    xml_child(sec, NS_DS, "Signature");

	assert_non_null(owner);
	return xml_child(owner, NS_DS, "KeyInfo");
}

/* Check a resolved corpus certificate against its anchor, at the message's
 * own instant and now. */
static void
corpus_check(const struct corpus_case *c, X509 *cert, STACK_OF(X509) *chain)
{
	char sp[4096], ap[4096], decoy[128];
	const char *sv[2], *av[1];
	struct trust *t = NULL;
	struct err err;
	FILE *f;

	sv[0] = shared_path(sp, sizeof(sp), c->signer);
	sv[1] = testpki_path(decoy, sizeof(decoy), "signers.pem");
	if (strcmp(c->anchor, "@0") == 0) {
		av[0] = testpki_path(ap, sizeof(ap), "anchor0.pem");
		f = fopen(av[0], "w");
		assert_non_null(f);
		assert_int_equal(PEM_write_X509(f, sk_X509_value(chain, 0)), 1);
		assert_int_equal(fclose(f), 0);
	} else {
		av[0] = shared_path(ap, sizeof(ap), c->anchor);
	}
	err_clear(&err);
	assert_int_equal(trust_new(&(struct trust_files){ .signers = sv,
	    .n_signers = 2, .anchors = av, .n_anchors = 1 }, &t, &err), 0);
	if (trust_chain_check(t, cert, chain, c->at_s * 1000, &err) != 0)
		fail_msg("%s: %s (%s)", c->envelope, err.msg, err.detail);
	if (c->now_rc != 1)
		assert_int_equal(trust_chain_check(t, cert, chain, 0, &err),
		    c->now_rc);
	trust_free(t);
	/* NEGATIVE-CASES 44: the same certificate, a leg bound to others */
	err_clear(&err);
	assert_int_equal(trust_chain_check(fx.trust, cert, chain,
	    c->at_s * 1000, &err), -1);
	assert_string_equal(err.msg, "certificate not bound to the sending "
	    "party");
}

/* Resolve one corpus case against a trust holding its signer and decoys. */
static void
corpus_one(const struct corpus_case *c)
{
	char sp[4096], decoy[128], ap[128];
	const char *sv[] = { testpki_path(decoy, sizeof(decoy), "signers.pem"),
		shared_path(sp, sizeof(sp), c->signer) };
	const char *av[] = { testpki_path(ap, sizeof(ap), "ca.pem") };
	struct trust *t = NULL;
	struct arena *a = arena_new(0);
	STACK_OF(X509) *chain = NULL;
	X509 *cert = NULL, *want = shared_cert(c->signer);
	xmlDocPtr doc = NULL;
	struct err err;
	size_t len;
	char *xml = testutil_read_shared(c->envelope, &len);

	assert_non_null(xml);
	err_clear(&err);
	assert_int_equal(trust_new(&(struct trust_files){ .signers = sv,
	    .n_signers = 2, .anchors = av, .n_anchors = 1 }, &t, &err), 0);
	if (xml_parse(a, xml, len, NULL, &doc, &err) != 0 ||
	    wss_ids_index(doc, &err) != 0)
		fail_msg("%s: %s (%s)", c->envelope, err.msg, err.detail);
	if (wss_keyinfo_resolve(t, a, doc, corpus_key_info(doc,
	    c->encrypted_key), &cert, &chain, &err) != 0)
		fail_msg("%s: %s (%s)", c->envelope, err.msg, err.detail);
	assert_int_equal(X509_cmp(cert, want), 0);
	assert_int_equal(chain == NULL ? 0 : sk_X509_num(chain), c->chain);
	if (c->anchor != NULL)
		corpus_check(c, cert, chain);
	trust_free(t);
	X509_free(want);
	arena_free(a);
	free(xml);
}

/* Every corpus KeyInfo resolves to the certificate the README names. */
static void
test_corpus(void **state)
{
	size_t i;

	(void)state;
	if (testutil_shared_dir() == NULL)
		testutil_skip("../shared (the corpus) is absent: corpus key "
		    "references not tested");
	for (i = 0; i < sizeof(corpus_cases) / sizeof(*corpus_cases); i++)
		corpus_one(&corpus_cases[i]);
}


int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve_table),
		cmocka_unit_test(test_resolve_pkipath_then_check),
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
