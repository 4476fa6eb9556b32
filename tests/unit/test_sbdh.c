/*
 * Unit tests for src/sbdh: a table of good and hostile Standard Business
 * Documents (missing and repeated parts, wrong namespace, two business
 * documents, values past the limit, DTD, control characters) and, when
 * ../shared is there, phase4's recorded Peppol SBD.  Issue 12 item 3;
 * tests/NEGATIVE-CASES-EXTRA.md "SBDH payloads".
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbdh/sbdh.h"
#include "testutil.h"
#include "util/arena.h"
#include "util/err.h"
#include "xml/xml.h"

#define DOCID "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::" \
	"Invoice##urn:cen.eu:en16931:2017#compliant#" \
	"urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1"
#define PROCID "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0"

/* A Peppol SBD as the Business Message Envelope 2.0 describes it. */
static const char GOOD[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<StandardBusinessDocument xmlns=\"" NS_SBDH "\">\n"
	" <StandardBusinessDocumentHeader>\n"
	"  <HeaderVersion>1.0</HeaderVersion>\n"
	"  <Sender><Identifier Authority=\"iso6523-actorid-upis\">"
	"0088:sender</Identifier></Sender>\n"
	"  <Receiver><Identifier Authority=\"iso6523-actorid-upis\">"
	"0088:receiver</Identifier></Receiver>\n"
	"  <DocumentIdentification>\n"
	"   <Standard>urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	"</Standard>\n"
	"   <TypeVersion>2.1</TypeVersion>\n"
	"   <InstanceIdentifier>inst-1</InstanceIdentifier>\n"
	"   <Type>Invoice</Type>\n"
	"   <CreationDateAndTime>2026-12-01T10:00:00Z</CreationDateAndTime>\n"
	"  </DocumentIdentification>\n"
	"  <BusinessScope>\n"
	"   <Scope><Type>DOCUMENTID</Type><InstanceIdentifier>" DOCID
	"</InstanceIdentifier><Identifier>busdox-docid-qns</Identifier></Scope>\n"
	"   <Scope><Type>PROCESSID</Type><InstanceIdentifier>" PROCID
	"</InstanceIdentifier><Identifier>cenbii-procid-ubl</Identifier></Scope>\n"
	"   <Scope><Type>COUNTRY_C1</Type><InstanceIdentifier>DE"
	"</InstanceIdentifier></Scope>\n"
	"  </BusinessScope>\n"
	" </StandardBusinessDocumentHeader>\n"
	" <Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:"
	"Invoice-2\"><ID>1</ID></Invoice>\n"
	"</StandardBusinessDocument>\n";

/* GOOD with the first `from` replaced by `to` (malloc'd; NULL from: GOOD). */
static char *
mk(const char *from, const char *to)
{
	const char *at = from != NULL ? strstr(GOOD, from) : NULL;
	size_t n = sizeof(GOOD) + (to != NULL ? strlen(to) : 0);
	char *out = malloc(n);

	assert_non_null(out);
	if (from == NULL) {
		memcpy(out, GOOD, sizeof(GOOD));
		return out;
	}
	assert_non_null(at);
	(void)snprintf(out, n, "%.*s%s%s", (int)(at - GOOD), GOOD, to,
	    at + strlen(from));
	return out;
}

/* Parse text with default limits (max_value: 0 = default). */
static int
parse(struct arena *a, const char *text, size_t max_value, struct sbdh *s,
    struct err *err)
{
	struct sbdh_limits lim;

	sbdh_limits_default(&lim);
	if (max_value != 0)
		lim.max_value_bytes = max_value;
	err_clear(err);
	return sbdh_parse(a, (const unsigned char *)text, strlen(text), &lim,
	    s, err);
}

static void
test_good(void **state)
{
	struct arena *a = arena_new(0);
	struct sbdh s;
	struct err err;
	char *t = mk(NULL, NULL);

	(void)state;
	assert_int_equal(parse(a, t, 0, &s, &err), 0);
	assert_string_equal(s.header_version, "1.0");
	assert_string_equal(s.sender.scheme, "iso6523-actorid-upis");
	assert_string_equal(s.sender.value, "0088:sender");
	assert_string_equal(s.receiver.scheme, "iso6523-actorid-upis");
	assert_string_equal(s.receiver.value, "0088:receiver");
	assert_string_equal(s.standard,
	    "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2");
	assert_string_equal(s.type_version, "2.1");
	assert_string_equal(s.instance_id, "inst-1");
	assert_string_equal(s.type, "Invoice");
	assert_string_equal(s.creation, "2026-12-01T10:00:00Z");
	assert_string_equal(s.document_type.scheme, "busdox-docid-qns");
	assert_string_equal(s.document_type.value, DOCID);
	assert_string_equal(s.process.scheme, "cenbii-procid-ubl");
	assert_string_equal(s.process.value, PROCID);
	assert_string_equal(s.country_c1, "DE");
	assert_string_equal(s.document_name, "Invoice");
	assert_string_equal(s.document_ns,
	    "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2");
	free(t);
	arena_free(a);
}

/* Optional parts absent: NULL, not an error. */
static void
test_optional(void **state)
{
	struct arena *a = arena_new(0);
	struct sbdh s;
	struct err err;
	char *t1 = mk(" Authority=\"iso6523-actorid-upis\">0088:sender", ">x");
	char *t2 = mk("<Identifier>busdox-docid-qns</Identifier>", "");
	char *t3 = mk("<BusinessScope>", "<BusinessScope xmlns=\"urn:other\">");
	/* a qualified x:Authority is not the Authority attribute */
	char *t4 = mk("<Sender><Identifier Authority=\"iso6523-actorid-upis\">",
	    "<Sender><Identifier xmlns:x=\"urn:x\" x:Authority=\"a\">");

	(void)state;
	assert_int_equal(parse(a, t1, 0, &s, &err), 0);
	assert_null(s.sender.scheme);
	assert_string_equal(s.sender.value, "x");
	assert_int_equal(parse(a, t2, 0, &s, &err), 0);
	assert_null(s.document_type.scheme);
	assert_string_equal(s.document_type.value, DOCID);
	if (parse(a, t4, 0, &s, &err) != 0)
		fail_msg("%s (%s)", err.msg, err.detail);
	assert_null(s.sender.scheme);
	assert_int_equal(parse(a, t3, 0, &s, &err), 0);
	assert_null(s.document_type.value);
	assert_null(s.process.value);
	assert_null(s.country_c1);
	free(t1);
	free(t2);
	free(t3);
	free(t4);
	arena_free(a);
}

struct bad {
	const char *name;
	const char *from, *to;   /* the edit of GOOD; from NULL: to is the text */
	const char *msg;         /* expected err.msg */
	size_t max_value;
};

#define BIG_ID_LEN 1100
static char big_id[BIG_ID_LEN + 64];

static const struct bad bads[] = {
	{ "wrong namespace", NS_SBDH, "urn:not:sbdh",
	  "payload is not an SBDH document", 0 },
	{ "other root", NULL, "<Invoice xmlns=\"urn:x\"/>",
	  "payload is not an SBDH document", 0 },
	{ "not xml", NULL, "%PDF-1.4 binary", "payload is not an SBDH document",
	  0 },
	{ "dtd", "<StandardBusinessDocument ",
	  "<!DOCTYPE StandardBusinessDocument [<!ENTITY x \"y\">]>"
	  "<StandardBusinessDocument ", "payload is not an SBDH document", 0 },
	{ "header missing", "<StandardBusinessDocumentHeader>",
	  "<Extra/><StandardBusinessDocumentHeader>",
	  "SBDH StandardBusinessDocumentHeader missing", 0 },
	{ "header version missing", "<HeaderVersion>1.0</HeaderVersion>", "",
	  "SBDH HeaderVersion missing", 0 },
	{ "sender missing", "<Sender>", "<Sender xmlns=\"urn:other\">",
	  "SBDH Sender missing", 0 },
	{ "two senders", "<Sender>",
	  "<Sender><Identifier>a</Identifier></Sender><Sender>",
	  "SBDH Sender repeated", 0 },
	{ "receiver missing", "<Receiver>", "<Receiver xmlns=\"urn:other\">", "SBDH Receiver missing",
	  0 },
	{ "two receiver identifiers", "<Receiver>",
	  "<Receiver><Identifier>a</Identifier>", "SBDH Identifier repeated",
	  0 },
	{ "empty sender", "0088:sender", "", "SBDH Sender empty", 0 },
	{ "empty authority", "Authority=\"iso6523-actorid-upis\"",
	  "Authority=\" \"", "SBDH Identifier/@Authority empty", 0 },
	{ "sender child element", "0088:sender", "<b>0088:sender</b>",
	  "SBDH Sender has child elements", 0 },
	{ "control character", "0088:sender", "0088:&#9;sender",
	  "SBDH Sender has a control character", 0 },
	{ "docident missing", "<DocumentIdentification>",
	  "<DocumentIdentification xmlns=\"urn:other\">", "SBDH DocumentIdentification missing", 0 },
	{ "instance id missing", "<InstanceIdentifier>inst-1</InstanceIdentifier>",
	  "", "SBDH InstanceIdentifier missing", 0 },
	{ "creation missing", "<CreationDateAndTime>",
	  "<CreationDateAndTime xmlns=\"urn:other\">", "SBDH CreationDateAndTime missing", 0 },
	{ "standard repeated", "<Standard>", "<Standard>a</Standard><Standard>",
	  "SBDH Standard repeated", 0 },
	{ "two business scopes", "<BusinessScope>",
	  "<BusinessScope/><BusinessScope>", "SBDH BusinessScope repeated", 0 },
	{ "two document types", "<Scope><Type>PROCESSID",
	  "<Scope><Type>DOCUMENTID</Type><InstanceIdentifier>x"
	  "</InstanceIdentifier></Scope><Scope><Type>PROCESSID",
	  "SBDH Scope type repeated", 0 },
	{ "scope without type", "<Type>PROCESSID</Type>", "",
	  "SBDH Type missing", 0 },
	{ "scope without value", "<InstanceIdentifier>" PROCID
	  "</InstanceIdentifier>", "", "SBDH InstanceIdentifier missing", 0 },
	{ "no business document", "<Invoice xmlns=\"urn:oasis:names:"
	  "specification:ubl:schema:xsd:Invoice-2\"><ID>1</ID></Invoice>", "",
	  "SBDH business document missing", 0 },
	{ "two business documents", "<ID>1</ID></Invoice>",
	  "<ID>1</ID></Invoice><Invoice/>",
	  "SBDH business document repeated", 0 },
	{ "identifier over the limit", "0088:receiver", big_id,
	  "SBDH Receiver too long", 0 },
	/* with 64 bytes, the first value too long is the DOCUMENTID's */
	{ "identifier over a small limit", NULL, NULL,
	  "SBDH InstanceIdentifier too long", 64 },
};

static void
test_bad(void **state)
{
	size_t i;

	(void)state;
	memset(big_id, 'x', BIG_ID_LEN);
	big_id[BIG_ID_LEN] = '\0';
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		struct arena *a = arena_new(0);
		struct sbdh s;
		struct err err;
		char *t = b->from != NULL ? mk(b->from, b->to) :
		    b->to != NULL ? strdup(b->to) : mk(NULL, NULL);
		const char *want = b->msg;

		if (parse(a, t, b->max_value, &s, &err) != -1 ||
		    err.kind != ERR_EBMS ||
		    strcmp(err.ebms_code, SBDH_EBMS_CODE) != 0 ||
		    strcmp(err.msg, want) != 0)
			fail_msg("%s: kind %d msg \"%s\" (%s), want \"%s\"",
			    b->name, err.kind, err.msg, err.detail, want);
		free(t);
		arena_free(a);
	}
}

/* XML limits apply: a node cap below the document's size refuses it. */
static void
test_xml_limits(void **state)
{
	struct arena *a = arena_new(0);
	struct sbdh_limits lim;
	struct sbdh s;
	struct err err;

	(void)state;
	sbdh_limits_default(&lim);
	lim.xml.max_nodes = 20;
	err_clear(&err);
	assert_int_equal(sbdh_parse(a, (const unsigned char *)GOOD,
	    strlen(GOOD), &lim, &s, &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.msg, "payload is not an SBDH document");
	arena_free(a);
}

/* phase4's recorded Peppol SBD (old style: Scope without Identifier). */
static void
test_corpus(void **state)
{
	const char *rel = "corpus/messages/phax_phase4/phase4-test/src/test/"
	    "resources/PayloadXML.xml";
	struct arena *a = arena_new(0);
	struct sbdh s;
	struct err err;
	size_t len;
	char *t = testutil_read_shared(rel, &len);

	(void)state;
	if (t == NULL) {
		arena_free(a);
		testutil_skip("../shared/corpus absent: phase4 PayloadXML.xml");
	}
	assert_int_equal(parse(a, t, 0, &s, &err), 0);
	assert_string_equal(s.sender.scheme, "iso6523-actorid-upis");
	assert_string_equal(s.sender.value, "9915:test");
	assert_string_equal(s.receiver.value, "9915:test");
	assert_string_equal(s.instance_id, "123123");
	assert_string_equal(s.type, "Invoice");
	assert_null(s.document_type.scheme);
	assert_non_null(strstr(s.document_type.value, "Invoice-2::Invoice##"));
	assert_string_equal(s.process.value,
	    "urn:www.cenbii.eu:profile:bii04:ver2.0");
	assert_string_equal(s.document_name, "Invoice");
	free(t);
	arena_free(a);
}

/*
 * A recorded UserMessage carrying an SBD (AS4.NET's copy of a ph-as4
 * message, its SBD in the SOAP Body; its originalSender "C1-test" would
 * not match the SBDH's 9915:test on a Peppol leg): sbdh_read() on the
 * Body's element, as the parsed-document entry point.
 */
static void
test_corpus_envelope(void **state)
{
	const char *rel = "corpus/extracted/thomsonreuters_eessi-as4.net/"
	    "source/Eu.EDelivery.AS4.UnitTests/Resources/as4_soapattachment.as4/"
	    "envelope.xml";
	struct arena *a = arena_new(0);
	struct xml_limits lim;
	xmlNodePtr body;
	xmlDocPtr doc;
	struct sbdh s;
	struct err err;
	size_t len;
	char *t = testutil_read_shared(rel, &len);

	(void)state;
	if (t == NULL) {
		arena_free(a);
		testutil_skip("../shared/corpus absent: AS4.NET "
		    "as4_soapattachment.as4");
	}
	xml_limits_default(&lim);
	err_clear(&err);
	assert_int_equal(xml_parse(a, t, len, &lim, &doc, &err), 0);
	body = xml_child(xmlDocGetRootElement(doc), NS_SOAP12, "Body");
	assert_non_null(body);
	if (sbdh_read(a, xml_child(body, NULL, NULL), SBDH_MAX_VALUE_DEFAULT,
	    &s, &err) != 0)
		fail_msg("%s (%s)", err.msg, err.detail);
	assert_string_equal(s.sender.scheme, "iso6523-actorid-upis");
	assert_string_equal(s.sender.value, "9915:test");
	assert_string_equal(s.receiver.value, "9915:test");
	assert_non_null(s.document_type.value);
	assert_non_null(s.process.value);
	free(t);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_optional),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_xml_limits),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_corpus_envelope),
	};

	xml_global_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
