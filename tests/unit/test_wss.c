/*
 * Unit tests for src/wss: key and certificate loading, signing an envelope
 * the Domibus way, verifying it against one certificate, and the failures
 * verification must catch (wrong key, tampering, unsigned eb:Messaging,
 * duplicate Ids, signature wrapping).  Keys come from certs/gen-dev-pki.sh
 * run into a temporary directory; the real Domibus 5 Receipt from ../shared
 * must verify too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libxml/tree.h>

#include "testutil.h"
#include "util/arena.h"
#include "util/err.h"
#include "wss/wss.h"
#include "xml/xml.h"

#define DOMIBUS_RECEIPT "corpus/messages/Basic-Data-Infrastructure_" \
	"BDI-event-choreography-Edelivery/README.md.reconstructed/" \
	"receipt-envelope.xml"
#define DOMIBUS_CERT "corpus/keys/220425c3f25e.pem"
#define RSA_SHA256 "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
#define EXC_C14N "http://www.w3.org/2001/10/xml-exc-c14n#"
#define SHA256 "http://www.w3.org/2001/04/xmlenc#sha256"
#define X509V3 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0#X509v3"

static const char *const pki_files[] = {
	"ca.key", "ca.crt", "gateway.key", "gateway.crt", "sender.key",
	"sender.crt", "tls.key", "tls.crt", "enc.key", "ec.key", "trad.key",
	"garbage.pem", "x448.key",
};

static struct {
	char dir[64];
	struct wss_key *key;          /* gateway */
	struct wss_cert *cert;        /* gateway */
	struct wss_cert *other;       /* sender */
} fx;

static const char envelope12[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\" xmlns:eb=\"" NS_EB "\">"
    "<env:Header><eb:Messaging env:mustUnderstand=\"true\">"
    "<eb:SignalMessage><eb:MessageInfo>"
    "<eb:Timestamp>2025-01-01T00:00:00.000Z</eb:Timestamp>"
    "<eb:MessageId>t1@test</eb:MessageId></eb:MessageInfo>"
    "<eb:Receipt><x:Any xmlns:x=\"urn:x\"/></eb:Receipt>"
    "</eb:SignalMessage></eb:Messaging></env:Header>"
    "<env:Body><x:Payload xmlns:x=\"urn:x\">hello</x:Payload></env:Body>"
    "</env:Envelope>";

static const char envelope11[] =
    "<S:Envelope xmlns:S=\"" NS_SOAP11 "\">"
    "<S:Header><eb:Messaging xmlns:eb=\"" NS_EB "\" S:mustUnderstand=\"1\">"
    "<eb:SignalMessage/></eb:Messaging></S:Header>"
    "<S:Body/></S:Envelope>";

static const char envelope_noheader[] =
    "<env:Envelope xmlns:env=\"" NS_SOAP12 "\"><env:Body/></env:Envelope>";

/* fx.dir/name into out. */
static const char *
pki_path(char *out, size_t size, const char *name)
{
	(void)snprintf(out, size, "%s/%s", fx.dir, name);
	return out;
}

/* Run a shell command for the fixture; 0 when it exited 0. */
static int
run(const char *cmd)
{
	return system(cmd) == 0 ? 0 : -1;
}

/* Make the development PKI (via the real script) and a few bad keys. */
static int
group_setup(void **state)
{
	char a[128], b[128], cmd[1024];
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_wss.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || wss_global_init(&err) < 0)
		return -1;
	(void)snprintf(cmd, sizeof(cmd), "bash %s/certs/gen-dev-pki.sh %s "
	    ">/dev/null", AS4GW_SOURCE_DIR, fx.dir);
	if (run(cmd) < 0)
		return -1;
	(void)snprintf(cmd, sizeof(cmd), "cd %s && openssl pkey -in "
	    "gateway.key -aes256 -passout pass:secret -out enc.key "
	    "2>/dev/null && "
	    "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 "
	    "-out ec.key 2>/dev/null && openssl genpkey -algorithm X448 "
	    "-out x448.key 2>/dev/null && openssl rsa -in gateway.key "
	    "-traditional -out trad.key 2>/dev/null && "
	    "echo garbage > garbage.pem", fx.dir);
	if (run(cmd) < 0)
		return -1;
	if (wss_key_load(pki_path(a, sizeof(a), "gateway.crt"),
	    pki_path(b, sizeof(b), "gateway.key"), &fx.key, &err) < 0 ||
	    wss_cert_load(a, &fx.cert, &err) < 0 ||
	    wss_cert_load(pki_path(a, sizeof(a), "sender.crt"), &fx.other,
	    &err) < 0)
		return -1;
	return 0;
}

/* Free the keys and remove the temporary PKI. */
static int
group_teardown(void **state)
{
	char p[128];
	size_t i;

	(void)state;
	wss_key_free(fx.key);
	wss_cert_free(fx.cert);
	wss_cert_free(fx.other);
	for (i = 0; i < sizeof(pki_files) / sizeof(pki_files[0]); i++)
		(void)unlink(pki_path(p, sizeof(p), pki_files[i]));
	(void)rmdir(fx.dir);
	wss_global_shutdown();
	return 0;
}

/* Parse with the hardened parser; the arena owns the document. */
static xmlDocPtr
parse(struct arena *a, const char *xml)
{
	struct err err;
	xmlDocPtr doc = NULL;

	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc, &err), 0);
	return doc;
}

/* Serialise doc (UTF-8 with declaration) into the arena. */
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

/* The envelope's parts by name. */
static xmlNodePtr
part(xmlDocPtr doc, const char *name)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(doc, &soap);
	xmlNodePtr header = xml_child(env, soap, "Header");
	xmlNodePtr sec = xml_child(header, NS_WSSE, "Security");

	if (strcmp(name, "Header") == 0)
		return header;
	if (strcmp(name, "Body") == 0)
		return xml_child(env, soap, "Body");
	if (strcmp(name, "Messaging") == 0)
		return xml_child(header, NS_EB, "Messaging");
	if (strcmp(name, "Security") == 0)
		return sec;
	if (strcmp(name, "Signature") == 0)
		return xml_child(sec, NS_DS, "Signature");
	fail_msg("unknown part %s", name);
	return NULL;
}

/* Sign envelope12 and return the serialised result. */
static char *
signed_text(struct arena *a)
{
	xmlDocPtr doc = parse(a, envelope12);
	struct err err;

	err_clear(&err);
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), 0);
	return dump(a, doc);
}

/* Verify text with cert; returns the result, err filled. */
static int
verify_text(struct arena *a, const char *text, const struct wss_cert *cert,
    struct err *err)
{
	err_clear(err);
	return wss_verify_envelope(parse(a, text), cert, err);
}

static void
assert_auth_failure(int rc, const struct err *err, const char *detail)
{
	assert_int_equal(rc, -1);
	assert_int_equal(err->kind, ERR_EBMS);
	assert_string_equal(err->ebms_code, "EBMS:0101");
	if (detail != NULL && strstr(err->detail, detail) == NULL)
		fail_msg("detail \"%s\" lacks \"%s\"", err->detail, detail);
}

/* An attribute value (ns may be NULL) or "" for comparisons. */
static const char *
attr(struct arena *a, const xmlNode *n, const char *ns, const char *name)
{
	char *v = xml_attr(a, n, ns, name);

	return v != NULL ? v : "";
}

static void
test_sign_then_verify(void **state)
{
	struct arena *a = arena_new(0);
	struct err err;

	(void)state;
	assert_int_equal(verify_text(a, signed_text(a), fx.cert, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	arena_free(a);
}

/* Verification also works on the signed document itself (no re-parse). */
static void
test_verify_same_document(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, envelope12);
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), 0);
	assert_int_equal(wss_verify_envelope(doc, fx.cert, &err), 0);
	arena_free(a);
}

/* The header has the shape Domibus sends (our model), with a BST. */
static void
test_sign_structure(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, signed_text(a));
	xmlNodePtr sec = part(doc, "Security"), sig = part(doc, "Signature");
	xmlNodePtr si = xml_child(sig, NS_DS, "SignedInfo"), ref, bst, str;
	char *bst_uri;

	(void)state;
	assert_null(xml_next(sec, NULL, NULL));       /* last header block */
	assert_ptr_equal(xml_next(part(doc, "Messaging"), NULL, NULL), sec);
	assert_string_equal(attr(a, sec, NS_SOAP12, "mustUnderstand"), "true");
	bst = xml_child(sec, NS_WSSE, "BinarySecurityToken");
	assert_non_null(bst);
	assert_string_equal(attr(a, bst, NULL, "ValueType"), X509V3);
	assert_true(strlen(xml_text(a, bst)) > 500);
	assert_string_equal(attr(a, xml_child(si, NS_DS, "SignatureMethod"),
	    NULL, "Algorithm"), RSA_SHA256);
	assert_string_equal(attr(a, xml_child(si, NS_DS,
	    "CanonicalizationMethod"), NULL, "Algorithm"), EXC_C14N);
	assert_int_equal(xml_count(si, NS_DS, "Reference"), 2);
	ref = xml_child(si, NS_DS, "Reference");
	assert_string_equal(attr(a, ref, NULL, "URI") + 1,
	    attr(a, part(doc, "Messaging"), NS_WSU, "Id"));
	assert_string_equal(attr(a, xml_child(ref, NS_DS, "DigestMethod"),
	    NULL, "Algorithm"), SHA256);
	assert_string_equal(attr(a, xml_child(xml_child(ref, NS_DS,
	    "Transforms"), NS_DS, "Transform"), NULL, "Algorithm"), EXC_C14N);
	ref = xml_next(ref, NS_DS, "Reference");
	assert_string_equal(attr(a, ref, NULL, "URI") + 1,
	    attr(a, part(doc, "Body"), NS_WSU, "Id"));
	str = xml_child(xml_child(sig, NS_DS, "KeyInfo"), NS_WSSE,
	    "SecurityTokenReference");
	bst_uri = arena_sprintf(a, "#%s", attr(a, bst, NS_WSU, "Id"));
	assert_string_equal(attr(a, xml_child(str, NS_WSSE, "Reference"), NULL,
	    "URI"), bst_uri);
	/* compact: no whitespace text inside the signature */
	assert_null(strstr(strstr(dump(a, doc), "<ds:Signature"), ">\n<"));
	arena_free(a);
}

static void
test_verify_other_cert_fails(void **state)
{
	struct arena *a = arena_new(0);
	struct err err;
	int rc;

	(void)state;
	rc = verify_text(a, signed_text(a), fx.other, &err);
	/* refused over SignedInfo before any reference is digested */
	assert_auth_failure(rc, &err, "SignatureValue does not verify");
	arena_free(a);
}

static void
tamper_body(xmlDocPtr doc)
{
	xmlNodeSetContent(xml_child(part(doc, "Body"), NULL, NULL),
	    (const xmlChar *)"HELLO");
}

static void
tamper_messaging(xmlDocPtr doc)
{
	xmlNodePtr mi = xml_child(xml_child(part(doc, "Messaging"), NS_EB,
	    "SignalMessage"), NS_EB, "MessageInfo");

	xmlNodeSetContent(xml_child(mi, NS_EB, "MessageId"),
	    (const xmlChar *)"forged@test");
}

static void
tamper_signature_value(xmlDocPtr doc)
{
	xmlNodePtr sv = xml_child(part(doc, "Signature"), NS_DS,
	    "SignatureValue");
	xmlChar *v = xmlNodeGetContent(sv);

	v[10] = v[10] == 'A' ? 'B' : 'A';
	xmlNodeSetContent(sv, v);
	xmlFree(v);
}

/* Another element carries the Body's wsu:Id. */
static void
tamper_duplicate_id(xmlDocPtr doc)
{
	xmlNodePtr body = part(doc, "Body");
	xmlChar *id = xmlGetNsProp(body, (const xmlChar *)"Id",
	    (const xmlChar *)NS_WSU);
	xmlNodePtr dup = xmlNewChild(body, NULL, (const xmlChar *)"Other",
	    NULL);

	xmlSetProp(dup, (const xmlChar *)"Id", id);
	xmlFree(id);
}

/*
 * Signature wrapping: the signed eb:Messaging moves into a wrapper and a
 * forged, unsigned eb:Messaging takes its place.  Every digest still
 * matches; only the node-identity check catches it.
 */
static void
tamper_wrap_messaging(xmlDocPtr doc)
{
	xmlNodePtr orig = part(doc, "Messaging");
	xmlNodePtr forged = xmlCopyNode(orig, 1);
	xmlNodePtr wrapper = xmlNewNode(NULL, (const xmlChar *)"Wrapper");

	xmlUnsetNsProp(forged, xmlSearchNsByHref(doc, orig,
	    (const xmlChar *)NS_WSU), (const xmlChar *)"Id");
	xmlAddPrevSibling(orig, forged);
	xmlAddPrevSibling(orig, wrapper);
	xmlUnlinkNode(orig);
	xmlAddChild(wrapper, orig);
	tamper_messaging(doc);
}

static void
tamper_second_messaging(xmlDocPtr doc)
{
	xmlAddChild(part(doc, "Header"), xmlCopyNode(part(doc, "Messaging"),
	    2));
}

static void
tamper_no_signature(xmlDocPtr doc)
{
	xmlNodePtr sig = part(doc, "Signature");

	xmlUnlinkNode(sig);
	xmlFreeNode(sig);
}

static void
tamper_no_security(xmlDocPtr doc)
{
	xmlNodePtr sec = part(doc, "Security");

	xmlUnlinkNode(sec);
	xmlFreeNode(sec);
}

struct tamper_case {
	const char *name;
	void (*fn)(xmlDocPtr doc);
	const char *detail;   /* expected in err.detail */
};

static const struct tamper_case tamper_cases[] = {
	{ "body", tamper_body, "mismatch" },
	{ "messaging", tamper_messaging, "mismatch" },
	{ "signature value", tamper_signature_value,
	  "SignatureValue does not verify" },
	{ "duplicate id", tamper_duplicate_id, "possible wrapping" },
	{ "wrapped messaging", tamper_wrap_messaging,
	  "eb:Messaging is not signed" },
	{ "second messaging", tamper_second_messaging, "one eb:Messaging" },
	{ "no signature", tamper_no_signature, "one ds:Signature" },
	{ "no security", tamper_no_security, "one wsse:Security" },
};

static void
test_tampering_detected(void **state)
{
	struct arena *a = arena_new(0);
	const char *text = signed_text(a);
	struct err err;
	xmlDocPtr doc;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tamper_cases) / sizeof(tamper_cases[0]); i++) {
		doc = parse(a, text);
		tamper_cases[i].fn(doc);
		err_clear(&err);
		print_message("tamper: %s\n", tamper_cases[i].name);
		assert_auth_failure(wss_verify_envelope(doc, fx.cert, &err),
		    &err, tamper_cases[i].detail);
	}
	arena_free(a);
}

/* A signature that leaves out eb:Messaging (or the Body) is refused even
 * though it is cryptographically valid. */
static void
test_partial_coverage_fails(void **state)
{
	static const char *const parts[] = { "Body", "Messaging" };
	static const char *const missing[] = { "eb:Messaging is not signed",
	    "SOAP Body is not signed" };
	struct arena *a = arena_new(0);
	struct err err;
	xmlDocPtr doc;
	xmlNodePtr node;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		doc = parse(a, envelope12);
		node = part(doc, parts[i]);
		err_clear(&err);
		assert_int_equal(wss_sign_nodes(doc, fx.key, &node, 1, &err),
		    0);
		assert_auth_failure(verify_text(a, dump(a, doc), fx.cert, &err),
		    &err, missing[i]);
	}
	arena_free(a);
}

/* A reference that is not a plain "#id" (here an escaped one) is refused
 * even when xmlsec can resolve and verify it. */
static void
test_odd_reference_uri_fails(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, envelope12);
	struct err err;

	(void)state;
	err_clear(&err);
	xmlSetNsProp(part(doc, "Body"), xmlNewNs(part(doc, "Body"),
	    (const xmlChar *)NS_WSU, (const xmlChar *)"wsu"),
	    (const xmlChar *)"Id", (const xmlChar *)"b%41");
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), 0);
	assert_auth_failure(verify_text(a, dump(a, doc), fx.cert, &err), &err,
	    "not \"#id\"");
	arena_free(a);
}

static void
test_soap11_envelope(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, envelope11);
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), 0);
	assert_string_equal(attr(a, part(doc, "Security"), NS_SOAP11,
	    "mustUnderstand"), "1");
	assert_int_equal(verify_text(a, dump(a, doc), fx.cert, &err), 0);
	arena_free(a);
}

/* A missing Header is created as the Envelope's first child. */
static void
test_sign_creates_header(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, envelope_noheader);
	xmlNodePtr body = part(doc, "Body");
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_sign_nodes(doc, fx.key, &body, 1, &err), 0);
	assert_ptr_equal(xml_child(xmlDocGetRootElement(doc), NULL, NULL),
	    part(doc, "Header"));
	assert_non_null(part(doc, "Signature"));
	arena_free(a);
}

/* Signing refuses what it cannot do and leaves no half-built header. */
static void
test_sign_refusals(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = parse(a, envelope12), other;
	xmlNodePtr node;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), 0);
	assert_int_equal(wss_sign_envelope(doc, fx.key, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_int_equal(xml_count(part(doc, "Header"), NS_WSSE, "Security"),
	    1);
	err_clear(&err);      /* no eb:Messaging */
	assert_int_equal(wss_sign_envelope(parse(a, envelope_noheader), fx.key,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	err_clear(&err);      /* not an envelope */
	other = parse(a, "<x:Envelope xmlns:x=\"urn:x\"><x:Body/>"
	    "</x:Envelope>");
	node = xmlDocGetRootElement(other);
	assert_int_equal(wss_sign_nodes(other, fx.key, &node, 1, &err), -1);
	err_clear(&err);      /* node of another document, empty list */
	assert_int_equal(wss_sign_nodes(parse(a, envelope12), fx.key, &node, 1,
	    &err), -1);
	err_clear(&err);
	assert_int_equal(wss_sign_nodes(doc, fx.key, &node, 0, &err), -1);
	arena_free(a);
}

struct load_case {
	const char *cert, *key;
	int rc;
	enum err_kind kind;
	const char *msg;
};

static const struct load_case load_cases[] = {
	{ "gateway.crt", "gateway.key", 0, ERR_NONE, NULL },
	{ "gateway.crt", "trad.key", 0, ERR_NONE, NULL },
	{ "gateway.crt", "sender.key", -1, ERR_CONF, "does not match" },
	{ "sender.crt", "gateway.key", -1, ERR_CONF, "does not match" },
	{ "gateway.crt", "enc.key", -1, ERR_CONF, "unencrypted" },
	/* EC, Ed25519 and X25519 keys load (issue 13); this one's certificate
	 * is RSA */
	{ "gateway.crt", "ec.key", -1, ERR_CONF, "does not match" },
	{ "gateway.crt", "x448.key", -1, ERR_CONF, "not an RSA, EC, Ed25519 or "
	  "X25519 key" },
	{ "gateway.crt", "gateway.crt", -1, ERR_CONF, "private key" },
	{ "gateway.crt", "missing.key", -1, ERR_IO, "could not open key" },
	{ "missing.crt", "gateway.key", -1, ERR_IO, "could not open cert" },
	{ "garbage.pem", "gateway.key", -1, ERR_CONF, "PEM certificate" },
	{ "gateway.key", "gateway.key", -1, ERR_CONF, "PEM certificate" },
};

static void
test_key_load(void **state)
{
	char c[128], k[128];
	struct wss_key *key;
	struct err err;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		err_clear(&err);
		key = NULL;
		rc = wss_key_load(pki_path(c, sizeof(c), load_cases[i].cert),
		    pki_path(k, sizeof(k), load_cases[i].key), &key, &err);
		print_message("load %s + %s: %s\n", load_cases[i].cert,
		    load_cases[i].key, err.msg);
		assert_int_equal(rc, load_cases[i].rc);
		assert_int_equal(err.kind, load_cases[i].kind);
		if (rc == 0)
			assert_non_null(key);
		else
			assert_non_null(strstr(err.msg, load_cases[i].msg));
		wss_key_free(key);
	}
	wss_key_free(NULL);
}

static void
test_cert_load(void **state)
{
	struct wss_cert *cert = NULL;
	struct err err;
	char p[128];

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_cert_load(pki_path(p, sizeof(p), "none.crt"),
	    &cert, &err), -1);
	assert_int_equal(err.kind, ERR_IO);
	err_clear(&err);
	assert_int_equal(wss_cert_load(pki_path(p, sizeof(p), "garbage.pem"),
	    &cert, &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
	assert_null(cert);
	wss_cert_free(NULL);
}

static void
test_ids_index(void **state)
{
	struct arena *a = arena_new(0);
	struct err err;
	xmlDocPtr doc;

	(void)state;
	err_clear(&err);
	doc = parse(a, "<r xmlns:wsu=\"" NS_WSU "\"><a wsu:Id=\"x\" Id=\"x\"/>"
	    "<b id=\"y\"/><c Id=\"\"/></r>");
	assert_int_equal(wss_ids_index(doc, &err), 0);
	assert_int_equal(wss_ids_index(doc, &err), 0);   /* idempotent */
	assert_string_equal((const char *)wss_id_find(doc, "x")->name, "a");
	assert_string_equal((const char *)wss_id_find(doc, "y")->name, "b");
	assert_null(wss_id_find(doc, "z"));
	doc = parse(a, "<r xmlns:wsu=\"" NS_WSU "\"><a wsu:Id=\"x\"/>"
	    "<b xml:id=\"x\"/></r>");
	assert_auth_failure(wss_ids_index(doc, &err), &err, "two elements");
	arena_free(a);
}

/*
 * The real Receipt Domibus 5.1.6 sent (byte-exact capture): SKI KeyInfo,
 * references "#N65667" (Body) and the eb:Messaging wsu:Id, InclusiveNamespaces
 * prefix lists.  It verifies with the signer's certificate only.
 */
static void
test_domibus_receipt(void **state)
{
	struct arena *a = arena_new(0);
	struct wss_cert *cert = NULL;
	char *xml = testutil_read_shared(DOMIBUS_RECEIPT, NULL), *bad;
	char path[4096];
	struct err err;

	(void)state;
	if (xml == NULL) {
		arena_free(a);
		testutil_skip("../shared corpus absent: Domibus receipt "
		    "not verified");
	}
	err_clear(&err);
	(void)snprintf(path, sizeof(path), "%s/%s", testutil_shared_dir(),
	    DOMIBUS_CERT);
	assert_int_equal(wss_cert_load(path, &cert, &err), 0);
	assert_int_equal(verify_text(a, xml, cert, &err), 0);
	assert_auth_failure(verify_text(a, xml, fx.cert, &err), &err, NULL);
	bad = strstr(xml, "7a491929");   /* RefToMessageId, in eb:Messaging */
	assert_non_null(bad);
	bad[0] = '8';
	assert_auth_failure(verify_text(a, xml, cert, &err), &err, "mismatch");
	wss_cert_free(cert);
	free(xml);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sign_then_verify),
		cmocka_unit_test(test_verify_same_document),
		cmocka_unit_test(test_sign_structure),
		cmocka_unit_test(test_verify_other_cert_fails),
		cmocka_unit_test(test_tampering_detected),
		cmocka_unit_test(test_partial_coverage_fails),
		cmocka_unit_test(test_odd_reference_uri_fails),
		cmocka_unit_test(test_soap11_envelope),
		cmocka_unit_test(test_sign_creates_header),
		cmocka_unit_test(test_sign_refusals),
		cmocka_unit_test(test_key_load),
		cmocka_unit_test(test_cert_load),
		cmocka_unit_test(test_ids_index),
		cmocka_unit_test(test_domibus_receipt),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
