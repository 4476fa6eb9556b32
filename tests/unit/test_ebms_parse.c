/*
 * Unit tests for src/ebms: eb:Messaging parsing — recorded corpus
 * messages (positives with their field values, negatives with their ebMS
 * code), inline envelopes for every semantic rule, the model as written
 * and the structure checks (testebms.h: the schema and the envelopes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testebms.h"
#include "testutil.h"
#define P4T "corpus/messages/phax_phase4/phase4-test/src/test/resources/testfiles/"

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

struct inline_case {
	const char *name;
	const char *mi, *from, *to, *ci, *pay;  /* NULL = the default */
	const char *code;                       /* NULL = accepted */
	int want_mid;                           /* ret_message_id is "m1@test" */
};

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_corpus_positive),
		cmocka_unit_test(test_parse_corpus_negative),
		cmocka_unit_test(test_parse_inline),
		cmocka_unit_test(test_parse_model),
		cmocka_unit_test(test_parse_structure),
		cmocka_unit_test(test_parse_quirk_keeps_document),
	};

	return cmocka_run_group_tests(tests, setup_schema, teardown_schema);
}
