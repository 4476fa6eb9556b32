/*
 * Unit tests for src/ebms: eb:Messaging parsing (recorded corpus messages
 * and inline cases for every semantic rule), PartInfo <-> MIME binding, and
 * the error catalogue.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebms/ebms.h"
#include "testutil.h"
#include "util/arena.h"
#include "util/err.h"
#include "xml/xml.h"

#define EB "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
#define P4 "corpus/messages/phax_phase4/phase4-lib/src/test/resources/external/"
#define P4T "corpus/messages/phax_phase4/phase4-test/src/test/resources/testfiles/"
#define X4 "corpus/extracted/"

static struct ebms_schema *schema;

/* Group setup: compile the ebMS3 header schema once. */
static int
setup_schema(void **state)
{
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	if (ebms_schema_load(&schema, &err) != 0) {
		fprintf(stderr, "schema: %s (%s)\n", err.msg, err.detail);
		return -1;
	}
	return 0;
}

static int
teardown_schema(void **state)
{
	(void)state;
	ebms_schema_free(schema);
	ebms_schema_free(NULL);
	return 0;
}

/*
 * phase4 test files start with a licence comment, some followed by an XML
 * declaration (ill-formed as it stands): skip such a comment.
 */
static const char *
skip_licence(const char *text, size_t *len)
{
	const char *end;

	if (strncmp(text, "<!--", 4) != 0 || (end = strstr(text, "-->")) == NULL)
		return text;
	end += 3;
	while (*end == '\n' || *end == '\r' || *end == ' ')
		end++;
	if (strncmp(end, "<?xml", 5) != 0)
		return text;
	*len -= (size_t)(end - text);
	return end;
}

/* Parse text up to ebms_parse; xml/soap failures fail the test. */
static int
parse_text(struct arena *a, const char *text, size_t len,
    struct soap_env *env, struct ebms_user_message **um, const char **mid,
    struct err *err)
{
	xmlDocPtr doc = NULL;

	text = skip_licence(text, &len);
	if (xml_parse(a, text, len, NULL, &doc, err) != 0 ||
	    soap_open(doc, env, err) != 0)
		fail_msg("not SOAP: %s (%s)", err->msg, err->detail);
	return ebms_parse(a, schema, env, um, mid, err);
}

/* ---- corpus positives ---- */

struct positive {
	const char *path;
	enum soap_version version;
	const char *message_id, *timestamp;
	const char *from_id, *from_type, *from_role, *to_id, *to_role;
	const char *agreement, *agreement_pmode;
	const char *service, *service_type, *action, *conversation;
	size_t n_props, n_parts;
	const char *href0, *cid0, *mime0, *compression0;
};

static const struct positive positives[] = {
	{P4 "soap12test/UserMessage12.xml", SOAP_12,
	    "2011-921@5209999001264.example.com", "2011-04-03T14:49:28.886Z",
	    "5209999001264", "urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088",
	    "Seller", "5209999001295", "Buyer", NULL, NULL,
	    "http://docs.oasis-open.org/ebxml-msg/as4/200902/service", NULL,
	    "http://docs.oasis-open.org/ebxml-msg/as4/200902/action", "2011-921",
	    0, 1, "#_f8aa8b55-b31c-4364-94d0-3615ca65aa40", NULL, NULL, NULL},
	{P4 "soap11test/UserMessage.xml", SOAP_11,
	    "UUID-1@requester.example.com", NULL,
	    "uri:requester.example.com", NULL, "http://example.org/roles/Buyer",
	    "QRS543", "http://example.org/roles/Seller",
	    "http://registry.example.com/cpa/123456", NULL, "QuoteToCollect",
	    "MyServiceTypes", "NewPurchaseOrder", "4321", 2, 1,
	    "cid:part@example.com", "part@example.com", "application/xml", NULL},
	{X4 "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.UnitTests/"
	    "Resources/as4_single_payload.as4/envelope.xml", SOAP_12,
	    "fd85bf2e-2366-408b-b187-010ad63d0070@10.124.29.152",
	    "2017-05-08T05:47:41.2208238Z", "org:eu:europa:as4:example", NULL,
	    "Sender", "org:holodeckb2b:example:company:B", "Receiver",
	    "http://agreements.holodeckb2b.org/examples/agreement0",
	    "8.1.1-pmode",
	    "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/service",
	    "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/service",
	    "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/test",
	    "eu:edelivery:as4:sampleconversation", 2, 1, "cid:earth2", "earth2",
	    NULL, NULL},
	{X4 "phax_phase4/phase4-peppol-client/src/test/resources/dump-raw.as4out/"
	    "envelope.xml", SOAP_12, "17a7c374-efe3-41e2-ac0d-8a8f47529e47@phase4",
	    "2026-01-29T15:39:03.805Z", "POP000306",
	    "urn:fdc:peppol.eu:2017:identifiers:ap",
	    "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator",
	    "POP000306",
	    "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder",
	    "urn:fdc:peppol.eu:2017:agreements:tia:ap_provider", NULL,
	    "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0", "cenbii-procid-ubl",
	    "busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:"
	    "Invoice-2::Invoice##urn:cen.eu:en16931:2017#compliant#urn:fdc:"
	    "peppol.eu:2017:poacc:billing:3.0::2.1",
	    "phase4@Conv-4045816466640743733", 2, 1,
	    "cid:phase4-att-ff0f8ad5-f982-48ba-b8e2-26997600f496@cid",
	    "phase4-att-ff0f8ad5-f982-48ba-b8e2-26997600f496@cid",
	    "application/xml", "application/gzip"},
	/* AS4.NET: empty <eb:PartProperties/> tolerated (see ebms_validate) */
	{X4 "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.UnitTests/"
	    "Resources/as4-encrypted-compressed-message.as4/envelope.xml", SOAP_12,
	    "user-55b50d25-5f75-4d2e-8d75-c4e7fe492169",
	    "2018-07-02T05:32:10.1322382Z", "https://eu.edelivery.as4.sender",
	    "Nothing<String>", "Sender", "https://eu.edelivery.as4.receiver",
	    "Receiver", "https://eu.edelivery.as4.agreement", NULL,
	    "https://eu.edelivery.as4.service", NULL, "Decryption",
	    "sample:conversation", 0, 2, "cid:flower", "flower", NULL, NULL},
	/* AS4.NET again; its second PartInfo names no MIME part (EBMS:0011
	 * comes from ebms_bind_parts, not from parsing) */
	{X4 "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.ComponentTests/"
	    "Resources/receiveagent_message_nonexist_attachment.as4/envelope.xml",
	    SOAP_12, "dcba3db3-9e20-44dd-a8b0-2f51ed53aeb0@192.168.1.116",
	    "2017-05-12T16:36:12.0043442Z",
	    "org:eu:europa:as4:example:accesspoint:A", NULL, "Sender",
	    "org:eu:europa:as4:example:accesspoint:B", "Receiver",
	    "http://agreements.europa.org/agreement", NULL, "getting:started",
	    "eu:europa:services", "eu:sample:01", "1", 0, 2, "cid:earth", "earth",
	    NULL, NULL},
};

static void
check_str(const char *what, const char *got, const char *want)
{
	if (want == NULL && got == NULL)
		return;
	if (want == NULL || got == NULL || strcmp(got, want) != 0)
		fail_msg("%s: got \"%s\", want \"%s\"", what,
		    got != NULL ? got : "(null)", want != NULL ? want : "(null)");
}

/* Recorded UserMessages parse with the expected field values. */
static void
test_parse_corpus_positive(void **state)
{
	size_t i, ran = 0;

	(void)state;
	for (i = 0; i < sizeof(positives) / sizeof(positives[0]); i++) {
		const struct positive *p = &positives[i];
		struct ebms_user_message *um = NULL;
		struct arena *a = arena_new(0);
		const char *mid = NULL;
		struct soap_env env;
		struct err err;
		size_t len;
		char *text = testutil_read_shared(p->path, &len);

		if (text == NULL) {
			testutil_skip_note(p->path);
			arena_free(a);
			continue;
		}
		err_clear(&err);
		if (parse_text(a, text, len, &env, &um, &mid, &err) != 0)
			fail_msg("%s: %s (%s)", p->path, err.msg, err.detail);
		assert_int_equal(env.version, p->version);
		check_str("message id", um->message_id, p->message_id);
		check_str("ret message id", mid, p->message_id);
		if (p->timestamp != NULL)
			check_str("timestamp", um->timestamp, p->timestamp);
		assert_true(um->timestamp_ms != 0);
		assert_int_equal(um->from.n_ids, 1);
		check_str("from", um->from.ids[0].value, p->from_id);
		check_str("from type", um->from.ids[0].type, p->from_type);
		check_str("from role", um->from.role, p->from_role);
		check_str("to", um->to.ids[0].value, p->to_id);
		check_str("to role", um->to.role, p->to_role);
		check_str("agreement", um->agreement_ref, p->agreement);
		check_str("pmode", um->agreement_pmode, p->agreement_pmode);
		check_str("service", um->service, p->service);
		check_str("service type", um->service_type, p->service_type);
		check_str("action", um->action, p->action);
		check_str("conversation", um->conversation_id, p->conversation);
		assert_int_equal(um->n_props, p->n_props);
		assert_int_equal(um->n_parts, p->n_parts);
		check_str("href", um->parts[0].href, p->href0);
		check_str("cid", um->parts[0].content_id, p->cid0);
		check_str("mime", um->parts[0].mime_type, p->mime0);
		check_str("compression", um->parts[0].compression_type,
		    p->compression0);
		assert_true(xml_is(um->messaging, EB, "Messaging"));
		assert_true(xml_is(um->node, EB, "UserMessage"));
		assert_ptr_equal(um->parts[0].node->parent->parent, um->node);
		ran++;
		free(text);
		arena_free(a);
	}
	if (ran == 0)
		testutil_skip("no corpus message available");
}

/* ---- corpus negatives ---- */

static const struct {
	const char *path;
	const char *code;  /* NULL: refused by soap_open (ERR_SOAP) */
	const char *mid;   /* expected ret_message_id, NULL = none */
} negatives[] = {
	{P4T "TwoUserMessages.xml", "EBMS:0003", "UUID-2@receiver.example.com"},
	{P4T "UserMessageNoPartyID.xml", "EBMS:0009",
	    "UUID-2@receiver.example.com"},
	{P4 "soap11test/EmptyMessaging.xml", "EBMS:0009", NULL},
	/* not an Envelope at all: a bare eb:Messaging -> SOAP Fault */
	{P4 "soap11test/NoMessaging.xml", NULL, NULL},
	{P4 "soap11test/MessageInfoMissing.xml", "EBMS:0009", NULL},
	{P4 "soap11test/MessageInfoIDMissing.xml", "EBMS:0009", NULL},
	{P4 "soap11test/MessageInfoImaginaryTimestamp.xml", "EBMS:0009",
	    "UUID-1@requester.example.com"},
	{P4 "soap11test/PullRequest.xml", "EBMS:0004",
	    "UUID-2@initiator.example.com"},
	{P4 "soap12test/PullRequest12.xml", "EBMS:0004",
	    "msg123@smallco.example.com"},
	{P4 "soap11test/ReceiptMessage.xml", "EBMS:0004",
	    "uiwtoruiopwr2543890@b.example.com"},
	{P4T "TestReceipt12.xml", "EBMS:0004",
	    "d36e26c0-5d4d-4950-ad81-dc620681b5f9@phase4"},
	{P4 "soap11test/ErrorMessage.xml", "EBMS:0004",
	    "UUID-2@receiver.example.com"},
};

/* Recorded negatives give the expected ebMS code (NEGATIVE-CASES 24-26). */
static void
test_parse_corpus_negative(void **state)
{
	size_t i, ran = 0;

	(void)state;
	for (i = 0; i < sizeof(negatives) / sizeof(negatives[0]); i++) {
		struct ebms_user_message *um = NULL;
		struct arena *a = arena_new(0);
		const char *mid = NULL;
		struct soap_env env;
		struct err err;
		size_t len;
		char *text = testutil_read_shared(negatives[i].path, &len);

		if (text == NULL) {
			testutil_skip_note(negatives[i].path);
			arena_free(a);
			continue;
		}
		err_clear(&err);
		if (negatives[i].code == NULL) {
			xmlDocPtr doc = NULL;
			const char *t = skip_licence(text, &len);

			assert_int_equal(xml_parse(a, t, len, NULL, &doc, &err), 0);
			assert_int_equal(soap_open(doc, &env, &err), -1);
			assert_int_equal(err.kind, ERR_SOAP);
			assert_int_equal(err.http_status, 400);
			free(text);
			arena_free(a);
			continue;
		}
		if (parse_text(a, text, len, &env, &um, &mid, &err) != -1)
			fail_msg("%s: accepted", negatives[i].path);
		assert_int_equal(err.kind, ERR_EBMS);
		if (strcmp(err.ebms_code, negatives[i].code) != 0)
			fail_msg("%s: %s %s (%s)", negatives[i].path, err.ebms_code,
			    err.msg, err.detail);
		check_str(negatives[i].path, mid, negatives[i].mid);
		assert_null(um);
		ran++;
		free(text);
		arena_free(a);
	}
	if (ran == 0)
		testutil_skip("no corpus message available");
}

/* ---- inline envelopes ---- */

#define D_MI "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03.805Z" \
	"</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>"
#define D_FROM "<eb:From><eb:PartyId type='urn:t'>A</eb:PartyId>" \
	"<eb:Role>urn:r:i</eb:Role></eb:From>"
#define D_TO "<eb:To><eb:PartyId type='urn:t'>B</eb:PartyId>" \
	"<eb:Role>urn:r:r</eb:Role></eb:To>"
#define D_CI "<eb:CollaborationInfo><eb:AgreementRef type='t' pmode='pm1'>" \
	"urn:agr</eb:AgreementRef><eb:Service type='st'>S</eb:Service>" \
	"<eb:Action>Act</eb:Action><eb:ConversationId>c1</eb:ConversationId>" \
	"</eb:CollaborationInfo><eb:MessageProperties><eb:Property name='p1' " \
	"type='pt'>v1</eb:Property><eb:Property name='p2'> v2 </eb:Property>" \
	"</eb:MessageProperties>"
#define D_PAY "<eb:PayloadInfo><eb:PartInfo href='cid:p1@x'><eb:PartProperties>" \
	"<eb:Property name='MimeType'>text/xml</eb:Property></eb:PartProperties>" \
	"</eb:PartInfo></eb:PayloadInfo>"

struct inline_case {
	const char *name;
	const char *mi, *from, *to, *ci, *pay;  /* NULL = the default */
	const char *code;                       /* NULL = accepted */
	int want_mid;                           /* ret_message_id is "m1@test" */
};

/* Build a SOAP 1.2 UserMessage from the case's pieces into buf. */
static void
build(char *buf, size_t size, const char *mi, const char *from,
    const char *to, const char *ci, const char *pay, const char *body)
{
	int n = snprintf(buf, size,
	    "<S:Envelope xmlns:S='http://www.w3.org/2003/05/soap-envelope' "
	    "xmlns:eb='" EB "' xmlns:wsu='" NS_WSU "'><S:Header>"
	    "<eb:Messaging S:mustUnderstand='true' wsu:Id='m'>"
	    "<eb:UserMessage>%s<eb:PartyInfo>%s%s</eb:PartyInfo>%s%s"
	    "</eb:UserMessage></eb:Messaging></S:Header>"
	    "<S:Body wsu:Id='body1'>%s</S:Body></S:Envelope>",
	    mi != NULL ? mi : D_MI, from != NULL ? from : D_FROM,
	    to != NULL ? to : D_TO, ci != NULL ? ci : D_CI,
	    pay != NULL ? pay : D_PAY, body != NULL ? body : "");

	assert_true(n > 0 && (size_t)n < size);
}

static char long_id[300];

static const struct inline_case inline_cases[] = {
	{"defaults", NULL, NULL, NULL, NULL, NULL, NULL, 1},
	{"no payload info", NULL, NULL, NULL, NULL, "", NULL, 1},
	{"message id 255", "", NULL, NULL, NULL, NULL, NULL, 0},
	{"message id 256", "", NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message id empty", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId></eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message id blank", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>   </eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message id space", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>a b@c</eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message id tab", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>a&#9;b@c</eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message id brackets", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>&lt;a@b&gt;</eb:MessageId>"
	    "</eb:MessageInfo>", NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"message info missing", "", NULL, NULL, NULL, NULL, "EBMS:0009", 0},
	{"timestamp invalid", "<eb:MessageInfo><eb:Timestamp>2026-13-45T99:00:00Z"
	    "</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, "EBMS:0009", 1},
	{"timestamp no zone", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03"
	    "</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId></eb:MessageInfo>",
	    NULL, NULL, NULL, NULL, NULL, 1},
	{"ref to message id", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId><eb:RefToMessageId>"
	    "r@x</eb:RefToMessageId></eb:MessageInfo>", NULL, NULL, NULL, NULL,
	    NULL, 1},
	{"ref to message id bad", "<eb:MessageInfo><eb:Timestamp>2026-01-29T15:39:03Z"
	    "</eb:Timestamp><eb:MessageId>m1@test</eb:MessageId><eb:RefToMessageId>"
	    "r x</eb:RefToMessageId></eb:MessageInfo>", NULL, NULL, NULL, NULL,
	    "EBMS:0009", 1},
	{"party id blank", NULL, "<eb:From><eb:PartyId type='t'>  </eb:PartyId>"
	    "<eb:Role>r</eb:Role></eb:From>", NULL, NULL, NULL, "EBMS:0009", 1},
	{"party id missing", NULL, "<eb:From><eb:Role>r</eb:Role></eb:From>",
	    NULL, NULL, NULL, "EBMS:0009", 1},
	/* ebMS3 5.2.2.4 sets no syntax for an untyped PartyId: accepted */
	{"party id untyped not uri", NULL, "<eb:From><eb:PartyId>12345"
	    "</eb:PartyId><eb:Role>r</eb:Role></eb:From>", NULL, NULL, NULL,
	    NULL, 1},
	{"party id untyped uri", NULL, "<eb:From><eb:PartyId>urn:x:12345"
	    "</eb:PartyId><eb:Role>r</eb:Role></eb:From>", NULL, NULL, NULL,
	    NULL, 1},
	{"second party id not uri", NULL, NULL, "<eb:To><eb:PartyId type='t'>B"
	    "</eb:PartyId><eb:PartyId>not a uri</eb:PartyId><eb:Role>r</eb:Role>"
	    "</eb:To>", NULL, NULL, NULL, 1},
	{"agreement untyped not uri", NULL, NULL, NULL, "<eb:CollaborationInfo>"
	    "<eb:AgreementRef>agreement 7</eb:AgreementRef>"
	    "<eb:Service>urn:svc</eb:Service><eb:Action>A</eb:Action>"
	    "<eb:ConversationId>c</eb:ConversationId></eb:CollaborationInfo>",
	    NULL, "EBMS:0003", 1},
	{"agreement typed not uri", NULL, NULL, NULL, "<eb:CollaborationInfo>"
	    "<eb:AgreementRef type='t'>agreement 7</eb:AgreementRef>"
	    "<eb:Service>urn:svc</eb:Service><eb:Action>A</eb:Action>"
	    "<eb:ConversationId>c</eb:ConversationId></eb:CollaborationInfo>",
	    NULL, NULL, 1},
	{"role blank", NULL, NULL, "<eb:To><eb:PartyId type='t'>B</eb:PartyId>"
	    "<eb:Role> </eb:Role></eb:To>", NULL, NULL, "EBMS:0009", 1},
	{"role missing", NULL, NULL, "<eb:To><eb:PartyId type='t'>B</eb:PartyId>"
	    "</eb:To>", NULL, NULL, "EBMS:0009", 1},
	{"service blank", NULL, NULL, NULL, "<eb:CollaborationInfo><eb:Service "
	    "type='t'>  </eb:Service><eb:Action>A</eb:Action><eb:ConversationId>c"
	    "</eb:ConversationId></eb:CollaborationInfo>", NULL, "EBMS:0009", 1},
	{"service untyped not uri", NULL, NULL, NULL, "<eb:CollaborationInfo>"
	    "<eb:Service>Svc</eb:Service><eb:Action>A</eb:Action>"
	    "<eb:ConversationId>c</eb:ConversationId></eb:CollaborationInfo>",
	    NULL, "EBMS:0003", 1},
	{"service untyped uri", NULL, NULL, NULL, "<eb:CollaborationInfo>"
	    "<eb:Service>urn:svc</eb:Service><eb:Action>A</eb:Action>"
	    "<eb:ConversationId>c</eb:ConversationId></eb:CollaborationInfo>",
	    NULL, NULL, 1},
	{"action blank", NULL, NULL, NULL, "<eb:CollaborationInfo><eb:Service "
	    "type='t'>S</eb:Service><eb:Action> </eb:Action><eb:ConversationId>c"
	    "</eb:ConversationId></eb:CollaborationInfo>", NULL, "EBMS:0009", 1},
	{"action missing", NULL, NULL, NULL, "<eb:CollaborationInfo><eb:Service "
	    "type='t'>S</eb:Service><eb:ConversationId>c</eb:ConversationId>"
	    "</eb:CollaborationInfo>", NULL, "EBMS:0009", 1},
	{"unknown eb element", NULL, NULL, NULL, NULL, D_PAY "<eb:Extra/>",
	    "EBMS:0009", 1},
	{"href http", NULL, NULL, NULL, NULL, "<eb:PayloadInfo><eb:PartInfo "
	    "href='http://127.0.0.1:9/p'/></eb:PayloadInfo>", "EBMS:0011", 1},
	{"href file", NULL, NULL, NULL, NULL, "<eb:PayloadInfo><eb:PartInfo "
	    "href='file:///etc/passwd'/></eb:PayloadInfo>", "EBMS:0011", 1},
	{"href hash only", NULL, NULL, NULL, NULL, "<eb:PayloadInfo><eb:PartInfo "
	    "href='#'/></eb:PayloadInfo>", "EBMS:0011", 1},
	{"href empty cid", NULL, NULL, NULL, NULL, "<eb:PayloadInfo><eb:PartInfo "
	    "href='cid:'/></eb:PayloadInfo>", "EBMS:0011", 1},
	{"as4.net empty partproperties and schemas", NULL, NULL, NULL, NULL,
	    "<eb:PayloadInfo><eb:PartInfo href='cid:a'><eb:Schemas/>"
	    "<eb:PartProperties/></eb:PartInfo></eb:PayloadInfo>", NULL, 1},
	{"schemas with content", NULL, NULL, NULL, NULL, "<eb:PayloadInfo>"
	    "<eb:PartInfo href='cid:a'><eb:Schemas><eb:Schema location='urn:x'/>"
	    "</eb:Schemas></eb:PartInfo></eb:PayloadInfo>", "EBMS:0009", 1},
	{"empty partproperties with attribute", NULL, NULL, NULL, NULL,
	    "<eb:PayloadInfo><eb:PartInfo href='cid:a'><eb:PartProperties a='1'/>"
	    "</eb:PartInfo></eb:PayloadInfo>", "EBMS:0009", 1},
	{"property without name", NULL, NULL, NULL, NULL, "<eb:PayloadInfo>"
	    "<eb:PartInfo href='cid:a'><eb:PartProperties><eb:Property>x"
	    "</eb:Property></eb:PartProperties></eb:PartInfo></eb:PayloadInfo>",
	    "EBMS:0009", 1},
};

/* Every semantic rule of ebms_parse, one inline envelope each. */
static void
test_parse_inline(void **state)
{
	static char buf[8192], mi[512];
	size_t i;

	(void)state;
	memset(long_id, 'x', 255);
	for (i = 0; i < sizeof(inline_cases) / sizeof(inline_cases[0]); i++) {
		const struct inline_case *c = &inline_cases[i];
		struct ebms_user_message *um = NULL;
		struct arena *a = arena_new(0);
		const char *mid = NULL, *m = c->mi;
		struct soap_env env;
		struct err err;
		int rc;

		if (strncmp(c->name, "message id 25", 13) == 0) {
			long_id[255] = c->name[13] == '6' ? 'y' : '\0';
			long_id[256] = '\0';
			(void)snprintf(mi, sizeof(mi), "<eb:MessageInfo>"
			    "<eb:Timestamp>2026-01-29T15:39:03Z</eb:Timestamp>"
			    "<eb:MessageId>%s</eb:MessageId></eb:MessageInfo>",
			    long_id);
			m = mi;
		}
		build(buf, sizeof(buf), m, c->from, c->to, c->ci, c->pay,
		    "<x/>");
		err_clear(&err);
		rc = parse_text(a, buf, strlen(buf), &env, &um, &mid, &err);
		if (c->code == NULL && rc != 0)
			fail_msg("%s: %s %s (%s)", c->name, err.ebms_code,
			    err.msg, err.detail);
		if (c->code != NULL && (rc != -1 || err.kind != ERR_EBMS ||
		    strcmp(err.ebms_code, c->code) != 0))
			fail_msg("%s: rc %d code %s (%s)", c->name, rc,
			    err.ebms_code != NULL ? err.ebms_code : "-", err.msg);
		if (c->want_mid)
			check_str(c->name, mid, "m1@test");
		else if (c->code != NULL)
			assert_null(mid);
		arena_free(a);
	}
}

/* The defaults land in the model as written (trimmed). */
static void
test_parse_model(void **state)
{
	static char buf[8192];
	struct ebms_user_message *um = NULL;
	struct arena *a = arena_new(0);
	struct soap_env env;
	struct err err;

	(void)state;
	build(buf, sizeof(buf), NULL, NULL, NULL, NULL, NULL, "<x/>");
	err_clear(&err);
	assert_int_equal(parse_text(a, buf, strlen(buf), &env, &um, NULL,
	    &err), 0);
	check_str("id", um->message_id, "m1@test");
	assert_null(um->ref_to_message_id);
	assert_null(um->mpc);
	check_str("from", um->from.ids[0].value, "A");
	check_str("from type", um->from.ids[0].type, "urn:t");
	check_str("from role", um->from.role, "urn:r:i");
	check_str("to", um->to.ids[0].value, "B");
	check_str("agreement", um->agreement_ref, "urn:agr");
	check_str("agreement type", um->agreement_type, "t");
	check_str("pmode", um->agreement_pmode, "pm1");
	check_str("service", um->service, "S");
	check_str("service type", um->service_type, "st");
	check_str("action", um->action, "Act");
	check_str("conversation", um->conversation_id, "c1");
	assert_int_equal(um->n_props, 2);
	check_str("p1", um->props[0].name, "p1");
	check_str("p1 type", um->props[0].type, "pt");
	check_str("p1 value", um->props[0].value, "v1");
	check_str("p2 value", um->props[1].value, "v2");
	assert_null(um->props[1].type);
	assert_int_equal(um->n_parts, 1);
	check_str("cid", um->parts[0].content_id, "p1@x");
	check_str("mime", um->parts[0].mime_type, "text/xml");
	assert_int_equal(um->parts[0].n_props, 1);
	/* 2026-01-29T15:39:03.805Z */
	assert_true(um->timestamp_ms == INT64_C(1769701143805));
	arena_free(a);
}

/* Structural cases: Messaging count, Header, signals, two UserMessages. */
static void
test_parse_structure(void **state)
{
#define ENV(h) "<S:Envelope xmlns:S='http://www.w3.org/2003/05/soap-envelope' " \
	"xmlns:eb='" EB "'>" h "<S:Body/></S:Envelope>"
#define UM "<eb:UserMessage>" D_MI "<eb:PartyInfo>" D_FROM D_TO \
	"</eb:PartyInfo>" D_CI "</eb:UserMessage>"
#define SIG(x) "<eb:SignalMessage>" D_MI x "</eb:SignalMessage>"
	static const struct {
		const char *name, *text, *code, *msg;
	} cases[] = {
		{"no header", ENV(""), "EBMS:0009", NULL},
		{"header without messaging", ENV("<S:Header><x xmlns='urn:x'/>"
		    "</S:Header>"), "EBMS:0009", NULL},
		{"empty messaging", ENV("<S:Header><eb:Messaging/></S:Header>"),
		    "EBMS:0009", NULL},
		{"two messaging", ENV("<S:Header><eb:Messaging>" UM "</eb:Messaging>"
		    "<eb:Messaging>" UM "</eb:Messaging></S:Header>"), "EBMS:0003",
		    NULL},
		{"two user messages", ENV("<S:Header><eb:Messaging>" UM UM
		    "</eb:Messaging></S:Header>"), "EBMS:0003", NULL},
		{"pull request", ENV("<S:Header><eb:Messaging>"
		    SIG("<eb:PullRequest/>") "</eb:Messaging></S:Header>"),
		    "EBMS:0004", "pull requests are not served by this gateway"},
		{"receipt", ENV("<S:Header><eb:Messaging>"
		    SIG("<eb:Receipt><x xmlns='urn:x'/></eb:Receipt>")
		    "</eb:Messaging></S:Header>"), "EBMS:0004",
		    "receipts are not accepted here"},
		{"error", ENV("<S:Header><eb:Messaging>"
		    SIG("<eb:Error errorCode='EBMS:0004' severity='failure'/>")
		    "</eb:Messaging></S:Header>"), "EBMS:0004",
		    "error signals are not accepted here"},
		{"bare signal", ENV("<S:Header><eb:Messaging>" SIG("")
		    "</eb:Messaging></S:Header>"), "EBMS:0004", NULL},
		{"signal and user message", ENV("<S:Header><eb:Messaging>"
		    SIG("<eb:PullRequest/>") UM "</eb:Messaging></S:Header>"),
		    NULL, NULL},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ebms_user_message *um = NULL;
		struct arena *a = arena_new(0);
		const char *mid = NULL;
		struct soap_env env;
		struct err err;
		int rc;

		err_clear(&err);
		rc = parse_text(a, cases[i].text, strlen(cases[i].text), &env,
		    &um, &mid, &err);
		if (cases[i].code == NULL) {
			if (rc != 0)
				fail_msg("%s: %s", cases[i].name, err.msg);
		} else if (rc != -1 || strcmp(err.ebms_code, cases[i].code) != 0)
			fail_msg("%s: rc %d %s %s", cases[i].name, rc,
			    err.ebms_code != NULL ? err.ebms_code : "-", err.msg);
		if (cases[i].msg != NULL)
			assert_string_equal(err.msg, cases[i].msg);
		arena_free(a);
	}
#undef ENV
#undef UM
#undef SIG
}

/* ---- ebms_bind_parts ---- */

struct bind_case {
	const char *name;
	const char *pay;        /* PayloadInfo */
	const char *body;       /* SOAP Body content */
	size_t n_mime;          /* parts used from the fixture below (root first) */
	int multipart;
	const char *code;       /* NULL = bound */
	const char *data0;      /* expected bytes of payload 0 */
	const char *media0;
};

#define PI(attrs, props) "<eb:PartInfo " attrs "><eb:PartProperties>" props \
	"<eb:Property name='x'>y</eb:Property></eb:PartProperties></eb:PartInfo>"
#define PAY(x) "<eb:PayloadInfo>" x "</eb:PayloadInfo>"
#define MT(t) "<eb:Property name='MimeType'>" t "</eb:Property>"
#define CT(t) "<eb:Property name='CompressionType'>" t "</eb:Property>"
#define INV "<inv:Invoice xmlns:inv='urn:inv' wsu:Id='inv1'><inv:N>1</inv:N>" \
	"</inv:Invoice>"
#define INV_OUT "<inv:Invoice xmlns:inv=\"urn:inv\" " \
	"xmlns:wsu=\"" NS_WSU "\" wsu:Id=\"inv1\"><inv:N>1</inv:N></inv:Invoice>"

static const struct bind_case bind_cases[] = {
	{"one attachment", PAY(PI("href='cid:p1@x'", "")), "", 2, 1, NULL,
	    "hello", "application/octet-stream"},
	{"mime type property wins", PAY(PI("href='cid:p1@x'", MT("text/plain"))),
	    "", 2, 1, NULL, "hello", "text/plain"},
	{"percent-encoded cid", PAY(PI("href='cid:p1%40x'", "")), "", 2, 1, NULL,
	    "hello", "application/octet-stream"},
	{"two attachments", PAY(PI("href='cid:p1@x'", "") PI("href='cid:p2@x'",
	    "")), "", 3, 1, NULL, "hello", "application/octet-stream"},
	{"cid without mime part", PAY(PI("href='cid:p9@x'", "")), "", 2, 1,
	    "EBMS:0011", NULL, NULL},
	{"cid naming the root", PAY(PI("href='cid:root@x'", "")), "", 2, 1,
	    "EBMS:0011", NULL, NULL},
	{"unreferenced mime part", PAY(PI("href='cid:p1@x'", "")), "", 3, 1,
	    "EBMS:0011", NULL, NULL},
	{"two partinfo one part", PAY(PI("href='cid:p1@x'", "")
	    PI("href='cid:p1@x'", "")), "", 2, 1, "EBMS:0011", NULL, NULL},
	{"no payloads, root only", "", "", 1, 1, NULL, NULL, NULL},
	{"no payloads, extra part", "", "", 2, 1, "EBMS:0011", NULL, NULL},
	{"cid on a bare soap body", PAY(PI("href='cid:p1@x'", "")), "", 1, 0,
	    "EBMS:0011", NULL, NULL},
	{"body payload", PAY(PI("", "")), INV, 1, 0, NULL, INV_OUT,
	    "application/xml"},
	{"body payload with mime type", PAY(PI("", MT("text/xml"))), INV, 1, 0,
	    NULL, INV_OUT, "text/xml"},
	{"body payload empty body", PAY(PI("", "")), "", 1, 0, "EBMS:0011",
	    NULL, NULL},
	{"hash to element", PAY(PI("href='#inv1'", "")), INV, 1, 0, NULL,
	    INV_OUT, "application/xml"},
	{"hash to body", PAY(PI("href='#body1'", "")), INV, 1, 0, NULL, INV_OUT,
	    "application/xml"},
	{"hash to nothing", PAY(PI("href='#nope'", "")), INV, 1, 0, "EBMS:0011",
	    NULL, NULL},
	{"hash to header", PAY(PI("href='#m'", "")), INV, 1, 0, "EBMS:0011",
	    NULL, NULL},
	{"two body payloads", PAY(PI("", "") PI("href='#inv1'", "")), INV, 1, 0,
	    "EBMS:0011", NULL, NULL},
	{"body and attachment", PAY(PI("", "") PI("href='cid:p1@x'", "")), INV,
	    2, 1, NULL, INV_OUT, "application/xml"},
	{"compressed", PAY(PI("href='cid:p1@x'", MT("application/xml")
	    CT("application/gzip"))), "", 2, 1, NULL, "hello", "application/xml"},
	{"compressed without mime type", PAY(PI("href='cid:p1@x'",
	    CT("application/gzip"))), "", 2, 1, "EBMS:0303", NULL, NULL},
	{"unknown compression", PAY(PI("href='cid:p1@x'", MT("application/xml")
	    CT("application/zip"))), "", 2, 1, "EBMS:0303", NULL, NULL},
	{"compressed body payload", PAY(PI("", MT("application/xml")
	    CT("application/gzip"))), INV, 1, 0, "EBMS:0003", NULL, NULL},
};

/* Hand-built MIME fixture: root, p1, p2. */
static struct mime_part bind_mime_parts[] = {
	{"root@x", "application/soap+xml", "application/soap+xml", "binary",
	    (const unsigned char *)"<env/>", 6, NULL, 0},
	{"p1@x", "application/octet-stream", "application/octet-stream",
	    "binary", (const unsigned char *)"hello", 5, NULL, 0},
	{"p2@x", "image/png", "image/png", "binary",
	    (const unsigned char *)"\x89PNG", 4, NULL, 0},
};

/* Every rule of ebms_bind_parts (NEGATIVE-CASES 14-16, AS4 3.1). */
static void
test_bind_parts(void **state)
{
	static char buf[8192];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bind_cases) / sizeof(bind_cases[0]); i++) {
		const struct bind_case *c = &bind_cases[i];
		struct mime_message mime = {c->multipart, bind_mime_parts,
		    c->n_mime, 0};
		struct ebms_user_message *um = NULL;
		struct arena *a = arena_new(0);
		struct soap_env env;
		struct err err;
		int rc;

		build(buf, sizeof(buf), NULL, NULL, NULL, NULL, c->pay, c->body);
		err_clear(&err);
		if (parse_text(a, buf, strlen(buf), &env, &um, NULL, &err) != 0)
			fail_msg("%s: parse: %s", c->name, err.msg);
		rc = ebms_bind_parts(a, um, &mime, &env, &err);
		if (c->code == NULL && rc != 0)
			fail_msg("%s: %s %s", c->name, err.ebms_code, err.msg);
		if (c->code != NULL && (rc != -1 || err.kind != ERR_EBMS ||
		    strcmp(err.ebms_code, c->code) != 0))
			fail_msg("%s: rc %d %s %s", c->name, rc,
			    err.ebms_code != NULL ? err.ebms_code : "-", err.msg);
		if (c->data0 != NULL) {
			if (um->parts[0].len != strlen(c->data0) ||
			    memcmp(um->parts[0].data, c->data0,
			    um->parts[0].len) != 0)
				fail_msg("%s: data \"%.*s\"", c->name,
				    (int)um->parts[0].len,
				    (const char *)um->parts[0].data);
			check_str(c->name, um->parts[0].media_type, c->media0);
			assert_true((um->parts[0].mime != NULL) ==
			    (um->parts[0].content_id != NULL));
		}
		arena_free(a);
	}
}

/* A cid: payload with no MIME message at all. */
static void
test_bind_parts_no_mime(void **state)
{
	static char buf[8192];
	struct ebms_user_message *um = NULL;
	struct arena *a = arena_new(0);
	struct soap_env env;
	struct err err;

	(void)state;
	build(buf, sizeof(buf), NULL, NULL, NULL, NULL, NULL, "");
	err_clear(&err);
	assert_int_equal(parse_text(a, buf, strlen(buf), &env, &um, NULL,
	    &err), 0);
	assert_int_equal(ebms_bind_parts(a, um, NULL, &env, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0011");
	arena_free(a);
}

/* The corpus UserMessage12 (href="#<Body wsu:Id>") binds to the invoice. */
static void
test_bind_parts_corpus_body(void **state)
{
	struct ebms_user_message *um = NULL;
	struct arena *a = arena_new(0);
	struct soap_env env;
	struct err err;
	size_t len;
	char *text = testutil_read_shared(P4 "soap12test/UserMessage12.xml",
	    &len);

	(void)state;
	if (text == NULL) {
		arena_free(a);
		testutil_skip("corpus UserMessage12.xml not available");
	}
	err_clear(&err);
	assert_int_equal(parse_text(a, text, len, &env, &um, NULL, &err), 0);
	assert_int_equal(ebms_bind_parts(a, um, NULL, &env, &err), 0);
	assert_non_null(strstr((const char *)um->parts[0].data,
	    "<CrossIndustryInvoice xmlns=\"urn:un:unece:uncefact:data:standard:"
	    "CrossIndustryInvoice:2\""));
	free(text);
	arena_free(a);
}

/* The AS4.NET allowance validates a copy: the request document (covered by
 * signatures) keeps its empty elements. */
static void
test_parse_quirk_keeps_document(void **state)
{
	static char buf[8192];
	struct ebms_user_message *um = NULL;
	struct arena *a = arena_new(0);
	struct soap_env env;
	struct err err;

	(void)state;
	build(buf, sizeof(buf), NULL, NULL, NULL, NULL, "<eb:PayloadInfo>"
	    "<eb:PartInfo href='cid:p1@x'><eb:Schemas/><eb:PartProperties/>"
	    "</eb:PartInfo></eb:PayloadInfo>", "");
	err_clear(&err);
	assert_int_equal(parse_text(a, buf, strlen(buf), &env, &um, NULL,
	    &err), 0);
	assert_non_null(xml_child(um->parts[0].node, EB, "Schemas"));
	assert_non_null(xml_child(um->parts[0].node, EB, "PartProperties"));
	assert_int_equal(um->parts[0].n_props, 0);
	arena_free(a);
}

/* Recorded AS4.NET negative: second PartInfo names no MIME part -> 0011. */
static void
test_bind_parts_corpus_missing(void **state)
{
	struct mime_message mime = {1, NULL, 2, 0};
	struct mime_part parts[2] = {
		{"root", "application/soap+xml", "application/soap+xml",
		    "binary", (const unsigned char *)"x", 1, NULL, 0},
		{"earth", "image/jpeg", "image/jpeg", "binary",
		    (const unsigned char *)"jpg", 3, NULL, 0},
	};
	struct ebms_user_message *um = NULL;
	struct arena *a = arena_new(0);
	struct soap_env env;
	struct err err;
	size_t len;
	char *text = testutil_read_shared(X4 "thomsonreuters_eessi-as4.net/"
	    "source/Eu.EDelivery.AS4.ComponentTests/Resources/"
	    "receiveagent_message_nonexist_attachment.as4/envelope.xml", &len);

	(void)state;
	if (text == NULL) {
		arena_free(a);
		testutil_skip("corpus receiveagent_message_nonexist_attachment");
	}
	mime.parts = parts;
	err_clear(&err);
	assert_int_equal(parse_text(a, text, len, &env, &um, NULL, &err), 0);
	assert_int_equal(ebms_bind_parts(a, um, &mime, &env, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0011");
	free(text);
	arena_free(a);
}

/* ---- error catalogue ---- */

/* ebMS3 Core 6.7.1-6.7.3 and AS4 3.1/3.2, exactly as the tables say. */
static void
test_error_catalogue(void **state)
{
	static const struct ebms_error_def want[] = {
		{"EBMS:0001", "ValueNotRecognized", "failure", "Content"},
		{"EBMS:0002", "FeatureNotSupported", "warning", "Content"},
		{"EBMS:0003", "ValueInconsistent", "failure", "Content"},
		{"EBMS:0004", "Other", "failure", "Content"},
		{"EBMS:0005", "ConnectionFailure", "failure", "Communication"},
		{"EBMS:0006", "EmptyMessagePartitionChannel", "warning",
		    "Communication"},
		{"EBMS:0007", "MimeInconsistency", "failure", "Unpackaging"},
		{"EBMS:0008", "FeatureNotSupported", "failure", "Unpackaging"},
		{"EBMS:0009", "InvalidHeader", "failure", "Unpackaging"},
		{"EBMS:0010", "ProcessingModeMismatch", "failure", "Processing"},
		{"EBMS:0011", "ExternalPayloadError", "failure", "Content"},
		{"EBMS:0101", "FailedAuthentication", "failure", "Processing"},
		{"EBMS:0102", "FailedDecryption", "failure", "Processing"},
		{"EBMS:0103", "PolicyNoncompliance", "failure", "Processing"},
		{"EBMS:0201", "DysfunctionalReliability", "failure", "Processing"},
		{"EBMS:0202", "DeliveryFailure", "failure", "Communication"},
		{"EBMS:0301", "MissingReceipt", "failure", "Communication"},
		{"EBMS:0302", "InvalidReceipt", "failure", "Communication"},
		{"EBMS:0303", "DecompressionFailure", "failure", "Communication"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct ebms_error_def *d = ebms_error_find(want[i].code);

		assert_non_null(d);
		assert_string_equal(d->code, want[i].code);
		assert_string_equal(d->short_desc, want[i].short_desc);
		assert_string_equal(d->severity, want[i].severity);
		assert_string_equal(d->category, want[i].category);
	}
	assert_string_equal(ebms_error_find("EBMS:9999")->code, "EBMS:0004");
	assert_string_equal(ebms_error_find(NULL)->code, "EBMS:0004");
	assert_string_equal(ebms_error_find("")->short_desc, "Other");
}

/*
 * ebms_age_check (ebms_age.c): retention 2 days, skew 60 s at the instant
 * T = 10^12 ms: accepted from T - (2 d - 1 h) to T + 60 s, both ends
 * included; outside EBMS:0101 with the reason in the detail.
 */
static void
test_age_check(void **state)
{
	static const int64_t T = INT64_C(1000000000000);
	static const int64_t H = INT64_C(3600000);
	static const struct {
		int64_t ts;
		int ok;
		const char *detail;
	} cases[] = {
		{ INT64_C(1000000000000), 1, NULL },
		{ INT64_C(1000000000000) - 47 * INT64_C(3600000), 1, NULL },
		{ INT64_C(1000000000000) - 47 * INT64_C(3600000) - 1, 0,
		    "47 h old" },
		{ INT64_C(1000000000000) - 400 * INT64_C(3600000), 0,
		    "not distinguishable from a replay" },
		{ INT64_C(1000000000000) + 60000, 1, NULL },
		{ INT64_C(1000000000000) + 60001, 0, "in the future" },
	};
	struct ebms_user_message um;
	struct ebms_age bound;
	int64_t from, until;
	size_t i;

	(void)state;
	ebms_age_bound(2, 60, &bound);
	assert_true(bound.max_age_ms == 47 * H);
	assert_true(bound.skew_ms == 60000);
	ebms_age_window(T, &bound, &from, &until);
	assert_true(from == T - 60000 && until == T + 47 * H);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err err = {0};
		int rc;

		memset(&um, 0, sizeof(um));
		um.timestamp_ms = cases[i].ts;
		rc = ebms_age_check(&um, T, &bound, &err);
		if (rc != (cases[i].ok ? 0 : -1))
			fail_msg("case %zu: rc %d", i, rc);
		if (cases[i].ok) {
			assert_int_equal(err.kind, ERR_NONE);
			continue;
		}
		assert_int_equal(err.kind, ERR_EBMS);
		assert_string_equal(err.ebms_code, "EBMS:0101");
		assert_string_equal(err.msg,
		    "eb:Timestamp outside the accepted window");
		if (strstr(err.detail, cases[i].detail) == NULL)
			fail_msg("case %zu: detail \"%s\"", i, err.detail);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_corpus_positive),
		cmocka_unit_test(test_parse_corpus_negative),
		cmocka_unit_test(test_parse_inline),
		cmocka_unit_test(test_parse_model),
		cmocka_unit_test(test_parse_structure),
		cmocka_unit_test(test_bind_parts),
		cmocka_unit_test(test_bind_parts_no_mime),
		cmocka_unit_test(test_bind_parts_corpus_body),
		cmocka_unit_test(test_parse_quirk_keeps_document),
		cmocka_unit_test(test_bind_parts_corpus_missing),
		cmocka_unit_test(test_error_catalogue),
		cmocka_unit_test(test_age_check),
	};

	return cmocka_run_group_tests(tests, setup_schema, teardown_schema);
}
