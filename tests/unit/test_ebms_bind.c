/*
 * Unit tests for src/ebms: PartInfo <-> MIME binding (ebms_bind_parts,
 * inline and on recorded corpus bodies), the error catalogue and the age
 * check (testebms.h: the schema and the envelopes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testebms.h"
#include "testutil.h"

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
		cmocka_unit_test(test_bind_parts),
		cmocka_unit_test(test_bind_parts_no_mime),
		cmocka_unit_test(test_bind_parts_corpus_body),
		cmocka_unit_test(test_bind_parts_corpus_missing),
		cmocka_unit_test(test_error_catalogue),
		cmocka_unit_test(test_age_check),
	};

	return cmocka_run_group_tests(tests, setup_schema, teardown_schema);
}
