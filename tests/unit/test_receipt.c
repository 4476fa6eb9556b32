/*
 * Unit tests for src/receipt: the signed AS4 Receipt (copy of the
 * eb:UserMessage, or NRR with copies of the ds:References; RefToMessageId)
 * and the signed eb:Error signal (code, severity, category, references,
 * escaped description).  The UserMessage is
 * built by hand from a parsed document, independent of ebms_parse; keys come
 * from certs/gen-dev-pki.sh run into a temporary directory.
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

#include <libxml/c14n.h>
#include <libxml/tree.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlschemas.h>

#include "testutil.h"
#include "receipt/receipt.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "wss/wss.h"
#include "xml/xml.h"

static const char *const pki_files[] = {
	"ca.key", "ca.crt", "gateway.key", "gateway.crt", "sender.key",
	"sender.crt", "tls.key", "tls.crt",
};

static struct {
	char dir[64];
	struct wss_key *key;
	struct wss_cert *cert;
	void *schema;          /* ebMS3 header schema */
	void *ebbp;            /* ebBP signals schema */
} fx;

/* A received UserMessage; its namespaces are declared on the Envelope only,
 * with other prefixes than ours, so the copy must re-declare them. */
static const char request[] =
    "<S12:Envelope xmlns:S12=\"" NS_SOAP12 "\" xmlns:eb3=\"" NS_EB "\">"
    "<S12:Header><eb3:Messaging S12:mustUnderstand=\"true\">"
    "<eb3:UserMessage><eb3:MessageInfo>"
    "<eb3:Timestamp>2025-02-08T17:45:20.000Z</eb3:Timestamp>"
    "<eb3:MessageId>um-1@sender.example</eb3:MessageId></eb3:MessageInfo>"
    "<eb3:PartyInfo><eb3:From><eb3:PartyId type=\"urn:oasis:names:tc:"
    "ebcore:partyid-type:unregistered\">blue</eb3:PartyId><eb3:Role>"
    "urn:r:initiator</eb3:Role></eb3:From><eb3:To><eb3:PartyId type=\""
    "urn:oasis:names:tc:ebcore:partyid-type:unregistered\">red</eb3:PartyId>"
    "<eb3:Role>urn:r:responder</eb3:Role></eb3:To></eb3:PartyInfo>"
    "<eb3:CollaborationInfo><eb3:Service type=\"t\">svc</eb3:Service>"
    "<eb3:Action>act</eb3:Action><eb3:ConversationId>c1</eb3:ConversationId>"
    "</eb3:CollaborationInfo><eb3:PayloadInfo><eb3:PartInfo "
    "href=\"cid:p1@sender\"/></eb3:PayloadInfo></eb3:UserMessage>"
    "</eb3:Messaging></S12:Header><S12:Body/></S12:Envelope>";

/* Make the development PKI and load the gateway key and the schema. */
static int
group_setup(void **state)
{
	char c[128], k[128], cmd[512];
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_receipt.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || wss_global_init(&err) < 0)
		return -1;
	(void)snprintf(cmd, sizeof(cmd), "bash %s/certs/gen-dev-pki.sh %s "
	    ">/dev/null", AS4GW_SOURCE_DIR, fx.dir);
	if (system(cmd) != 0)
		return -1;
	(void)snprintf(c, sizeof(c), "%s/gateway.crt", fx.dir);
	(void)snprintf(k, sizeof(k), "%s/gateway.key", fx.dir);
	if (wss_key_load(c, k, &fx.key, &err) < 0 ||
	    wss_cert_load(c, &fx.cert, &err) < 0 ||
	    xml_schema_load("ebms-header-3_0-200704.xsd", &fx.schema, &err) < 0 ||
	    xml_schema_load("ebbp-signals-2.0.4.xsd", &fx.ebbp, &err) < 0)
		return -1;
	return 0;
}

/* Free keys and schema, remove the temporary PKI. */
static int
group_teardown(void **state)
{
	char p[128];
	size_t i;

	(void)state;
	wss_key_free(fx.key);
	wss_cert_free(fx.cert);
	xmlSchemaFree(fx.schema);
	xmlSchemaFree(fx.ebbp);
	for (i = 0; i < sizeof(pki_files) / sizeof(pki_files[0]); i++) {
		(void)snprintf(p, sizeof(p), "%s/%s", fx.dir, pki_files[i]);
		(void)unlink(p);
	}
	(void)rmdir(fx.dir);
	wss_global_shutdown();
	return 0;
}

static xmlDocPtr
parse(struct arena *a, const char *xml, size_t len)
{
	struct err err;
	xmlDocPtr doc = NULL;

	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, len, NULL, &doc, &err), 0);
	return doc;
}

/* Header/eb:Messaging of a parsed envelope. */
static xmlNodePtr
messaging_of(xmlDocPtr doc)
{
	return xml_child(xml_child(xmlDocGetRootElement(doc), NS_SOAP12,
	    "Header"), NS_EB, "Messaging");
}

/* eb:Messaging/eb:SignalMessage/eb:MessageInfo/eb:<name> text, or NULL. */
static const char *
info_text(struct arena *a, xmlDocPtr doc, const char *name)
{
	xmlNodePtr info = xml_child(xml_child(messaging_of(doc), NS_EB,
	    "SignalMessage"), NS_EB, "MessageInfo");
	xmlNodePtr n = xml_child(info, NS_EB, name);

	return n != NULL ? xml_text(a, n) : NULL;
}

/* Checks every signal shares: XML declaration, SOAP 1.2, one SignalMessage,
 * a fresh MessageId and Timestamp, empty Body, valid signature. */
static xmlDocPtr
check_signal(struct arena *a, const struct buf *out)
{
	xmlDocPtr doc;
	struct err err;
	int64_t ts = 0;
	const char *mid;

	assert_non_null(out->data);
	assert_true(strncmp(out->data,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>", 38) == 0);
	doc = parse(a, out->data, out->len);
	assert_true(xml_is(xmlDocGetRootElement(doc), NS_SOAP12, "Envelope"));
	assert_string_equal(xml_attr(a, messaging_of(doc), NS_SOAP12,
	    "mustUnderstand"), "true");
	assert_int_equal(xml_count(messaging_of(doc), NS_EB, "SignalMessage"),
	    1);
	mid = info_text(a, doc, "MessageId");
	assert_non_null(mid);
	assert_int_equal(strlen(mid), 36 + strlen("@as4gw"));
	assert_string_equal(mid + 36, "@as4gw");
	assert_int_equal(clock_parse_iso8601(info_text(a, doc, "Timestamp"),
	    &ts), 0);
	assert_true(ts > clock_epoch_ms() - 60000 && ts <= clock_epoch_ms());
	assert_null(xml_child(xml_child(xmlDocGetRootElement(doc), NS_SOAP12,
	    "Body"), NULL, NULL));
	err_clear(&err);
	assert_int_equal(wss_verify_envelope(doc, fx.cert, &err), 0);
	return doc;
}

/* A hand-built model of the request: only the fields receipts use. */
static void
user_message(struct arena *a, struct ebms_user_message *um)
{
	xmlDocPtr doc = parse(a, request, sizeof(request) - 1);

	memset(um, 0, sizeof(*um));
	um->message_id = "um-1@sender.example";
	um->messaging = messaging_of(doc);
	um->node = xml_child(um->messaging, NS_EB, "UserMessage");
	assert_non_null(um->node);
}

static void
test_receipt(void **state)
{
	struct arena *a = arena_new(0);
	struct ebms_user_message um;
	struct buf out = { 0 };
	const char *mid = NULL;
	struct err err;
	xmlDocPtr doc;
	xmlNodePtr copy, party;

	(void)state;
	err_clear(&err);
	user_message(a, &um);
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 0, &out, &mid,
	    &err), 0);
	doc = check_signal(a, &out);
	assert_string_equal(info_text(a, doc, "MessageId"), mid);
	assert_string_equal(info_text(a, doc, "RefToMessageId"),
	    "um-1@sender.example");
	/* AS4 5.1.8 (a): eb:Receipt holds a copy of eb:UserMessage */
	copy = xml_child(xml_child(xml_child(messaging_of(doc), NS_EB,
	    "SignalMessage"), NS_EB, "Receipt"), NULL, NULL);
	assert_true(xml_is(copy, NS_EB, "UserMessage"));
	assert_null(xml_next(copy, NULL, NULL));
	assert_string_equal(xml_text(a, xml_child(xml_child(copy, NS_EB,
	    "MessageInfo"), NS_EB, "MessageId")), "um-1@sender.example");
	party = xml_child(xml_child(xml_child(copy, NS_EB, "PartyInfo"), NS_EB,
	    "From"), NS_EB, "PartyId");
	assert_string_equal(xml_text(a, party), "blue");
	assert_string_equal(xml_attr(a, party, NULL, "type"),
	    "urn:oasis:names:tc:ebcore:partyid-type:unregistered");
	assert_string_equal(xml_attr(a, xml_child(xml_child(copy, NS_EB,
	    "PayloadInfo"), NS_EB, "PartInfo"), NULL, "href"), "cid:p1@sender");
	buf_free(&out);
	arena_free(a);
}

/* The envelope is appended to what out holds; a full buffer fails cleanly. */
static void
test_receipt_appends_and_limits(void **state)
{
	struct arena *a = arena_new(0);
	struct ebms_user_message um;
	struct buf out = { 0 };
	struct err err;

	(void)state;
	err_clear(&err);
	user_message(a, &um);
	assert_int_equal(buf_puts(&out, "X"), 0);
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 0, &out, NULL,
	    &err), 0);
	assert_int_equal(out.data[0], 'X');
	assert_true(strncmp(out.data + 1, "<?xml", 5) == 0);
	buf_free(&out);
	out.limit = 100;
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 0, &out, NULL,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	arena_free(a);
}

/* No usable UserMessage: programmer error reported, nothing written. */
static void
test_receipt_refusals(void **state)
{
	struct arena *a = arena_new(0), *tiny = arena_new(16);
	struct ebms_user_message um;
	struct buf out = { 0 };
	struct err err;

	(void)state;
	user_message(a, &um);
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, NULL, NULL, 0, &out, NULL,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	um.message_id = "with space";
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 0, &out, NULL,
	    &err), -1);
	um.message_id = "um-1@sender.example";
	um.node = um.messaging;            /* not an eb:UserMessage */
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 0, &out, NULL,
	    &err), -1);
	um.node = xml_child(um.messaging, NS_EB, "UserMessage");
	err_clear(&err);                   /* arena budget exhausted */
	assert_int_equal(receipt_build(tiny, fx.key, &um, NULL, 0, &out,
	    NULL, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	arena_free(tiny);
	arena_free(a);
}

struct error_case {
	const char *code, *ref, *description;
	const char *want_code, *want_severity, *want_category, *want_short;
	const char *want_ref;          /* NULL: no reference expected */
	const char *want_description;  /* NULL: no eb:Description expected */
	const char *detail;            /* eb:ErrorDetail asked for, or NULL */
	const char *want_detail;       /* NULL: no eb:ErrorDetail expected */
};

static const struct error_case error_cases[] = {
	{ "EBMS:0010", "um-1@sender.example", "no P-Mode matches the message",
	  "EBMS:0010", "failure", "Processing", "ProcessingModeMismatch",
	  "um-1@sender.example", "no P-Mode matches the message", NULL, NULL },
	{ "EBMS:0101", NULL, "signature check failed",
	  "EBMS:0101", "failure", "Processing", "FailedAuthentication",
	  NULL, "signature check failed", NULL, NULL },
	{ "EBMS:0006", "m@x", NULL,
	  "EBMS:0006", "warning", "Communication",
	  "EmptyMessagePartitionChannel", "m@x", NULL, NULL, NULL },
	{ "EBMS:9999", "m@x", "",
	  "EBMS:0004", "failure", "Content", "Other", "m@x", NULL, NULL, NULL },
	{ "EBMS:0009", "bad id", "a < b & c > \"d\" 'e'",
	  "EBMS:0009", "failure", "Unpackaging", "InvalidHeader",
	  NULL, "a < b & c > \"d\" 'e'", NULL, NULL },
	{ "EBMS:0004", "bad\x01id", "ctl\x01\x1f" "char\ttab",
	  "EBMS:0004", "failure", "Content", "Other", NULL, "ctl  char\ttab",
	  NULL, NULL },
	{ "EBMS:0004", "bad\xff", "bad utf-8 \xff\xfe end",
	  "EBMS:0004", "failure", "Content", "Other", NULL,
	  "bad utf-8 ?? end", NULL, NULL },
	{ "EBMS:0004", "", "caf\xc3\xa9",
	  "EBMS:0004", "failure", "Content", "Other", NULL, "caf\xc3\xa9",
	  NULL, NULL },
	/* Peppol AS4 profile: a document type or process not served */
	{ "EBMS:0004", "m@x", "PEPPOL:NOT_SERVICED",
	  "EBMS:0004", "failure", "Content", "Other", "m@x",
	  "PEPPOL:NOT_SERVICED", "PEPPOL:NOT_SERVICED", "PEPPOL:NOT_SERVICED" },
	/* a detail without a description; an empty one is left out */
	{ "EBMS:0004", "m@x", NULL,
	  "EBMS:0004", "failure", "Content", "Other", "m@x", NULL,
	  "PEPPOL:NOT_SERVICED", "PEPPOL:NOT_SERVICED" },
	{ "EBMS:0010", "m@x", "no P-Mode", "EBMS:0010", "failure", "Processing",
	  "ProcessingModeMismatch", "m@x", "no P-Mode", "", NULL },
	/* the detail is cleaned and escaped as the description is */
	{ "EBMS:0004", "m@x", "d", "EBMS:0004", "failure", "Content", "Other",
	  "m@x", "d", "a<b>&\x01" "c", "a<b>& c" },
};

/* Check one eb:Error signal against its case. */
static void
check_error(struct arena *a, const struct buf *out,
    const struct error_case *c)
{
	xmlDocPtr doc = check_signal(a, out);
	xmlNodePtr sm = xml_child(messaging_of(doc), NS_EB, "SignalMessage");
	xmlNodePtr e = xml_child(sm, NS_EB, "Error");
	xmlNodePtr d = xml_child(e, NS_EB, "Description");
	xmlNodePtr ed = xml_child(e, NS_EB, "ErrorDetail");
	const char *ref = info_text(a, doc, "RefToMessageId");
	struct err err;

	assert_int_equal(xml_count(sm, NS_EB, "Error"), 1);
	assert_string_equal(xml_attr(a, e, NULL, "errorCode"), c->want_code);
	assert_string_equal(xml_attr(a, e, NULL, "severity"), c->want_severity);
	assert_string_equal(xml_attr(a, e, NULL, "category"), c->want_category);
	assert_string_equal(xml_attr(a, e, NULL, "shortDescription"),
	    c->want_short);
	assert_string_equal(xml_attr(a, e, NULL, "origin"), "ebMS");
	if (c->want_ref != NULL) {
		assert_string_equal(ref, c->want_ref);
		assert_string_equal(xml_attr(a, e, NULL, "refToMessageInError"),
		    c->want_ref);
	} else {
		assert_null(ref);
		assert_null(xml_attr(a, e, NULL, "refToMessageInError"));
	}
	if (c->want_description != NULL) {
		assert_string_equal(xml_text(a, d), c->want_description);
		assert_string_equal(xml_attr(a, d,
		    "http://www.w3.org/XML/1998/namespace", "lang"), "en");
	} else {
		assert_null(d);
	}
	if (c->want_detail != NULL) {
		/* ebMS3 Core 6.2: the last child, after any eb:Description */
		assert_string_equal(xml_text(a, ed), c->want_detail);
		assert_ptr_equal(xmlLastElementChild(e), ed);
		assert_int_equal(xml_count(e, NS_EB, "ErrorDetail"), 1);
	} else {
		assert_null(ed);
	}
	err_clear(&err);     /* ebMS3 header schema */
	assert_int_equal(xml_validate(fx.schema, messaging_of(doc), "EBMS:0009",
	    &err), 0);
}

static void
test_error_signals(void **state)
{
	struct arena *a = arena_new(0);
	const struct error_case *c;
	struct receipt_error re;
	struct buf out = { 0 };
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		c = &error_cases[i];
		print_message("error signal %zu: %s\n", i, c->code);
		re = (struct receipt_error){ c->ref, c->code, c->description,
		    c->detail };
		err_clear(&err);
		assert_int_equal(receipt_build_error(a, fx.key, &re, &out,
		    &err), 0);
		check_error(a, &out, c);
		buf_free(&out);
	}
	arena_free(a);
}

/* Markup in the description is escaped on the wire, never interpreted. */
static void
test_error_description_escaped(void **state)
{
	struct arena *a = arena_new(0);
	struct buf out = { 0 };
	const struct receipt_error re = { NULL, "EBMS:0004",
	    "</eb:Description><eb:Injected/>&amp;", NULL };
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(receipt_build_error(a, fx.key, &re, &out, &err), 0);
	assert_non_null(strstr(out.data,
	    "&lt;/eb:Description&gt;&lt;eb:Injected/&gt;&amp;amp;"));
	assert_null(strstr(out.data, "<eb:Injected"));
	buf_free(&out);
	arena_free(a);
}

/* A long description or detail is cut to 1 KiB on a character boundary. */
static void
test_error_description_cut(void **state)
{
	struct arena *a = arena_new(0);
	struct buf out = { 0 };
	char long_text[3001];
	struct receipt_error re;
	xmlNodePtr e;
	const char *text;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i + 2 <= 3000; i += 2)
		memcpy(long_text + i, "\xc3\xa9", 2);   /* e-acute */
	long_text[3000] = '\0';
	err_clear(&err);
	re = (struct receipt_error){ NULL, "EBMS:0004", long_text, long_text };
	assert_int_equal(receipt_build_error(a, fx.key, &re, &out, &err), 0);
	e = xml_child(xml_child(messaging_of(check_signal(a, &out)), NS_EB,
	    "SignalMessage"), NS_EB, "Error");
	text = xml_text(a, xml_child(e, NS_EB, "Description"));
	assert_int_equal(strlen(text), 1024);
	assert_int_equal(memcmp(text, long_text, 1024), 0);
	text = xml_text(a, xml_child(e, NS_EB, "ErrorDetail"));
	assert_int_equal(strlen(text), 1024);
	assert_int_equal(memcmp(text, long_text, 1024), 0);
	buf_free(&out);
	arena_free(a);
}

/* ---- non-repudiation of receipt (AS4 profile 5.1.8 (b)) */

#define SHM_ENV "corpus/extracted/thomsonreuters_eessi-as4.net/source/" \
	"Eu.EDelivery.AS4.ComponentTests/Resources/signed_holodeck_message.as4/" \
	"envelope.xml"
#define BDI_DIR "corpus/messages/Basic-Data-Infrastructure_BDI-event-" \
	"choreography-Edelivery/README.md.reconstructed/"
#define NRR_MAX 8

/* A SignedInfo whose References use a default namespace and indentation:
 * the copies must bring the default namespace and keep the whitespace. */
static const char default_ns_signed_info[] =
    "<S12:Envelope xmlns:S12=\"" NS_SOAP12 "\"><S12:Header>"
    "<wsse:Security xmlns:wsse=\"" NS_WSSE "\">"
    "<Signature xmlns=\"" NS_DS "\"><SignedInfo>\n"
    "  <Reference URI=\"#body\" Id=\"ref-1\">\n"
    "    <Transforms><Transform Algorithm=\"http://www.w3.org/2001/10/"
    "xml-exc-c14n#\"><ec:InclusiveNamespaces xmlns:ec=\"http://www.w3.org/"
    "2001/10/xml-exc-c14n#\" PrefixList=\"S12 wsse\"/></Transform>"
    "</Transforms>\n"
    "    <DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#"
    "sha512\"/>\n"
    "    <DigestValue>AAAA</DigestValue>\n  </Reference>\n"
    "  <Reference URI=\"cid:a@b\"><Transforms><Transform Algorithm=\""
    "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-"
    "Content-Signature-Transform\"/></Transforms><DigestMethod Algorithm="
    "\"http://www.w3.org/2001/04/xmlenc#sha256\"/><DigestValue>BBBB"
    "</DigestValue></Reference>\n"
    "</SignedInfo></Signature></wsse:Security></S12:Header><S12:Body/>"
    "</S12:Envelope>";

/* The ds:Reference children of the first ds:SignedInfo in the document
 * (depth-first); returns how many were stored in refs. */
static size_t
signed_info_refs(xmlNodePtr n, xmlNodePtr *refs, size_t max)
{
	xmlNodePtr c, r;
	size_t k = 0;

	if (xml_is(n, NS_DS, "SignedInfo")) {
		for (r = xml_child(n, NS_DS, "Reference"); r != NULL && k < max;
		    r = xml_next(r, NS_DS, "Reference"))
			refs[k++] = r;
		return k;
	}
	for (c = xml_child(n, NULL, NULL); c != NULL && k == 0;
	    c = xml_next(c, NULL, NULL))
		k = signed_info_refs(c, refs, max);
	return k;
}

/* xmlC14NIsVisibleCallback: nodes inside the subtree rooted at root. */
static int
in_subtree(void *root, xmlNodePtr node, xmlNodePtr parent)
{
	xmlNodePtr n = node != NULL && node->type != XML_NAMESPACE_DECL ?
	    node : parent;

	for (; n != NULL; n = n->parent)
		if (n == root)
			return 1;
	return 0;
}

/* Exclusive c14n of the subtree at node, in its own document (malloc). */
static char *
exc_c14n(xmlNodePtr node)
{
	xmlOutputBufferPtr ob = xmlAllocOutputBuffer(NULL);
	char *s;

	assert_non_null(ob);
	assert_true(xmlC14NExecute(node->doc, in_subtree, node,
	    XML_C14N_EXCLUSIVE_1_0, NULL, 0, ob) >= 0);
	s = strndup((const char *)xmlOutputBufferGetContent(ob),
	    xmlOutputBufferGetSize(ob));
	assert_non_null(s);
	/* the subtree and nothing else: "<prefix:Reference ... </...>" */
	assert_true(s[0] == '<' && strstr(s, "Reference") != NULL);
	assert_true(strcmp(s + strlen(s) - strlen("Reference>"),
	    "Reference>") == 0 || strcmp(s + strlen(s) -
	    strlen("MessagePartNRInformation>"), "MessagePartNRInformation>") ==
	    0);
	(void)xmlOutputBufferClose(ob);
	return s;
}

/* The NRR receipt's eb:Receipt holds exactly one NonRepudiationInformation
 * with one MessagePartNRInformation per reference, each an exact copy. */
static xmlNodePtr
check_nrr(struct arena *a, xmlDocPtr doc, xmlNodePtr const *refs, size_t n)
{
	xmlNodePtr receipt = xml_child(xml_child(messaging_of(doc), NS_EB,
	    "SignalMessage"), NS_EB, "Receipt");
	xmlNodePtr nri = xml_child(receipt, NULL, NULL), part, copy;
	char *c1, *c2;
	size_t i = 0;

	assert_true(xml_is(nri, NS_EBBP, "NonRepudiationInformation"));
	assert_null(xml_next(nri, NULL, NULL));     /* no eb:UserMessage */
	assert_int_equal(xml_count(nri, NULL, NULL), n);
	for (part = xml_child(nri, NULL, NULL); part != NULL;
	    part = xml_next(part, NULL, NULL), i++) {
		assert_true(xml_is(part, NS_EBBP, "MessagePartNRInformation"));
		copy = xml_child(part, NULL, NULL);
		assert_true(xml_is(copy, NS_DS, "Reference"));
		assert_null(xml_next(copy, NULL, NULL));
		assert_string_equal(xml_attr(a, copy, NULL, "URI"),
		    xml_attr(a, refs[i], NULL, "URI"));
		assert_string_equal(xml_text(a, xml_child(copy, NS_DS,
		    "DigestValue")), xml_text(a, xml_child(refs[i], NS_DS,
		    "DigestValue")));
		c1 = exc_c14n(refs[i]);
		c2 = exc_c14n(copy);
		assert_string_equal(c2, c1);
		free(c1);
		free(c2);
	}
	return nri;
}

/* Build the NRR receipt for refs, check it fully; returns the parsed doc. */
static xmlDocPtr
nrr_receipt(struct arena *a, xmlNodePtr const *refs, size_t n)
{
	struct ebms_user_message um;
	struct buf out = { 0 };
	const char *mid = NULL;
	struct err err;
	xmlDocPtr doc;

	err_clear(&err);
	user_message(a, &um);
	assert_int_equal(receipt_build(a, fx.key, &um, refs, n, &out, &mid,
	    &err), 0);
	doc = check_signal(a, &out);       /* signature verifies */
	assert_string_equal(info_text(a, doc, "MessageId"), mid);
	assert_string_equal(info_text(a, doc, "RefToMessageId"),
	    "um-1@sender.example");
	/* AS4 5.1.8 (b): a valid ebbpsig:NonRepudiationInformation */
	assert_int_equal(xml_validate(fx.schema, messaging_of(doc), "EBMS:0009",
	    &err), 0);
	assert_int_equal(xml_validate(fx.ebbp, check_nrr(a, doc, refs, n),
	    "EBMS:0009", &err), 0);
	buf_free(&out);
	return doc;
}

/* References from the recorded Holodeck message (SKI, rsa-sha384, two SwA
 * attachment references, InclusiveNamespaces) and a default-namespace one. */
static void
test_receipt_nrr(void **state)
{
	static const char bad_nri[] =
	    "<ebbp:NonRepudiationInformation xmlns:ebbp=\"" NS_EBBP "\">"
	    "<ebbp:MessagePartNRInformation/></ebbp:NonRepudiationInformation>";
	struct arena *a = arena_new(0);
	xmlNodePtr refs[NRR_MAX];
	struct err err;
	size_t len, n;
	char *env;

	(void)state;
	env = testutil_read_shared(SHM_ENV, &len);
	if (env == NULL) {
		arena_free(a);
		testutil_skip("signed_holodeck_message.as4 not under ../shared");
	}
	n = signed_info_refs(xmlDocGetRootElement(parse(a, env, len)), refs,
	    NRR_MAX);
	assert_int_equal(n, 4);
	(void)nrr_receipt(a, refs, n);
	(void)nrr_receipt(a, refs + 2, 1);   /* a subset, in the order given */
	free(env);
	n = signed_info_refs(xmlDocGetRootElement(parse(a,
	    default_ns_signed_info, sizeof(default_ns_signed_info) - 1)), refs,
	    NRR_MAX);
	assert_int_equal(n, 2);
	(void)nrr_receipt(a, refs, n);
	/* the ebBP schema really checks: an empty MessagePartNRInformation
	 * (neither MessagePartIdentifier nor ds:Reference) is refused */
	err_clear(&err);
	assert_int_equal(xml_validate(fx.ebbp, xmlDocGetRootElement(parse(a,
	    bad_nri, sizeof(bad_nri) - 1)), "EBMS:0009", &err), -1);
	arena_free(a);
}

/* The Receipt Domibus 5.1.6 sent for a recorded request: ours, built from
 * the request's references, has c14n-identical NRR content. */
static void
test_receipt_nrr_like_domibus(void **state)
{
	struct arena *a = arena_new(0);
	xmlNodePtr refs[NRR_MAX], want[NRR_MAX], got;
	size_t len1, len2, n, i;
	char *req, *rcpt, *c1, *c2;

	(void)state;
	req = testutil_read_shared(BDI_DIR "request-envelope.xml", &len1);
	rcpt = testutil_read_shared(BDI_DIR "receipt-envelope.xml", &len2);
	if (req == NULL || rcpt == NULL) {
		free(req);
		free(rcpt);
		arena_free(a);
		testutil_skip("BDI Domibus request/receipt not under ../shared");
	}
	n = signed_info_refs(xmlDocGetRootElement(parse(a, req, len1)), refs,
	    NRR_MAX);
	assert_int_equal(n, 3);
	got = xml_child(check_nrr(a, nrr_receipt(a, refs, n), refs, n), NULL,
	    NULL);
	want[0] = xml_child(xml_child(xml_child(xml_child(messaging_of(parse(a,
	    rcpt, len2)), NS_EB, "SignalMessage"), NS_EB, "Receipt"), NS_EBBP,
	    "NonRepudiationInformation"), NS_EBBP, "MessagePartNRInformation");
	for (i = 0; i < n; i++, got = xml_next(got, NULL, NULL)) {
		if (i > 0)
			want[i] = xml_next(want[i - 1], NULL, NULL);
		assert_non_null(want[i]);
		c1 = exc_c14n(want[i]);
		c2 = exc_c14n(got);
		assert_string_equal(c2, c1);
		free(c1);
		free(c2);
	}
	assert_null(got);
	free(req);
	free(rcpt);
	arena_free(a);
}

/* NRR references that are not ds:Reference elements: programmer error. */
static void
test_receipt_nrr_refusals(void **state)
{
	struct arena *a = arena_new(0);
	struct ebms_user_message um;
	struct buf out = { 0 };
	xmlNodePtr bad[1];
	struct err err;

	(void)state;
	user_message(a, &um);
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, &um, NULL, 1, &out, NULL,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	bad[0] = um.node;                  /* an eb:UserMessage */
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, &um, bad, 1, &out, NULL,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	bad[0] = NULL;
	err_clear(&err);
	assert_int_equal(receipt_build(a, fx.key, &um, bad, 1, &out, NULL,
	    &err), -1);
	assert_int_equal(out.len, 0);
	buf_free(&out);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_receipt),
		cmocka_unit_test(test_receipt_appends_and_limits),
		cmocka_unit_test(test_receipt_refusals),
		cmocka_unit_test(test_receipt_nrr),
		cmocka_unit_test(test_receipt_nrr_like_domibus),
		cmocka_unit_test(test_receipt_nrr_refusals),
		cmocka_unit_test(test_error_signals),
		cmocka_unit_test(test_error_description_escaped),
		cmocka_unit_test(test_error_description_cut),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
