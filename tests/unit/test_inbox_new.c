/*
 * Unit tests for src/inbox: inbox_accept() of a new message — the inbox
 * row, its payload rows and one 'ready' delivery, the parties recorded as
 * the matched leg's, the properties as JSON (testinbox.h: the SQLite
 * fixture and the message specs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testinbox.h"
#include "testutil.h"

/* Assert that sql(a1, a2) reads exactly the text want (NULL: SQL NULL). */
static void
db_text_eq(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, const char *want)
{
	char *got = db_value(t, sql, a1, a2, NULL);

	if ((want == NULL) != (got == NULL) ||
	    (want != NULL && strcmp(got, want) != 0))
		fail_msg("%s [%s]: want \"%s\", got \"%s\"", sql, a1,
		    want != NULL ? want : "(null)",
		    got != NULL ? got : "(null)");
	free(got);
}
#define PART(col) \
	"SELECT " col " FROM payload WHERE message_id = ?1 AND part_no = ?2"
#define DELIVERY(col) "SELECT " col " FROM delivery WHERE message_id = ?1"

/* "YYYY-MM" (UTC) of epoch_ms into out[8]. */
static void
month_of(int64_t epoch_ms, char out[8])
{
	time_t secs = (time_t)(epoch_ms / 1000);
	struct tm tm;

	assert_non_null(gmtime_r(&secs, &tm));
	assert_int_equal(strftime(out, 8, "%Y-%m", &tm), 7);
}

/* ---- NEW --------------------------------------------------------------- */

/*
 * From/To columns (issue 10): the matched leg's canonical party names,
 * whatever PartyIds the message names and in whatever order: never the
 * message's first PartyId.
 */
static void
test_inbox_new_parties(void **state)
{
	static const struct {
		const char *from_type, *from_value, *to_type, *to_value;
		const char *leg_from, *leg_to;
	} cases[] = {
		{ PTYPE, "sender", NULL, "receiver", PTYPE ":sender", "receiver" },
		{ NULL, "urn:x:first", "urn:x:type", "receiver",
		    PTYPE ":sender", "urn:x:type:receiver" },
		{ NULL, "urn:x:plain", NULL, "b", "urn:x:canonical", "b" },
		{ "t", "v:w", "t2", "x", "t:v:w", "gw" },
	};
	struct tstate *t = *state;
	char id[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmode_leg leg = T_LEG;
		struct ebms_user_message *um;
		struct store_result res;
		struct err err;
		struct tmsg m;

		(void)snprintf(id, sizeof(id), "party-%zu", i);
		t_base(&m, id);
		m.from.ids[0] = (struct ebms_party_id){ cases[i].from_type,
		    cases[i].from_value };
		m.to.ids[0] = (struct ebms_party_id){ cases[i].to_type,
		    cases[i].to_value };
		leg.from.name = (char *)(uintptr_t)cases[i].leg_from;
		leg.to.name = (char *)(uintptr_t)cases[i].leg_to;
		um = t_build(t->a, &m);
		err_clear(&err);
		if (inbox_accept(t->s, t->a, um, &leg, "192.0.2.7", RECEIPT_A,
		    sizeof(RECEIPT_A) - 1, &res, &err) != 0)
			fail_msg("%s: %s", m.message_id, err.msg);
		assert_int_equal(res.outcome, STORE_NEW);
		db_text_eq(t, ROW("from_party"), m.message_id, NULL,
		    cases[i].leg_from);
		db_text_eq(t, ROW("to_party"), m.message_id, NULL,
		    cases[i].leg_to);
	}
}

/* The inbox row's columns after NEW (pmode id, peer, agreement may be NULL). */
static void
check_row(struct tstate *t, const struct ebms_user_message *um,
    const char *leg_id, const char *peer, int64_t before, int64_t after)
{
	unsigned char hash[CODEC_SHA256_LEN];
	char m0[8], m1[8], *part;
	const char *id = um->message_id;

	db_text_eq(t, ROW("service"), id, NULL, "urn:as4gw:test:service");
	db_text_eq(t, ROW("action"), id, NULL, "Deliver");
	db_text_eq(t, ROW("conversation_id"), id, NULL, "conv-1");
	db_text_eq(t, ROW("agreement_ref"), id, NULL, um->agreement_ref);
	db_text_eq(t, ROW("pmode_id"), id, NULL, leg_id);
	db_text_eq(t, ROW("source"), id, NULL, peer);
	db_bytes_eq(t, ROW("receipt"), id, NULL, RECEIPT_A,
	    sizeof(RECEIPT_A) - 1);
	{
		unsigned char *fields;
		size_t flen;

		/* version 2 and its field digests (payload.h) */
		assert_int_equal(payload_content_hash2(t->a, um, hash,
		    &fields, &flen), 0);
		db_bytes_eq(t, ROW("content_hash"), id, NULL, hash,
		    sizeof(hash));
		db_bytes_eq(t, ROW("field_hashes"), id, NULL, fields, flen);
	}
	assert_in_range(db_int(t, ROW("received_at"), id, NULL), before,
	    after);
	month_of(before, m0);
	month_of(after, m1);
	part = db_value(t, ROW("partition_key"), id, NULL, NULL);
	assert_non_null(part);
	if (strcmp(part, m0) != 0 && strcmp(part, m1) != 0)
		fail_msg("partition_key %s, want %s", part, m0);
	free(part);
	assert_int_equal(db_int(t, DUPS_SQL, id, NULL), 0);
	assert_int_equal(db_int(t, LAST_DUP_SQL, id, NULL), -1);
	assert_int_equal(db_int(t, ROW("processed_at"), id, NULL), -1);
}

/* The payload rows after NEW: one per PartInfo, in order. */
static void
check_payloads(struct tstate *t, const struct tmsg *m)
{
	static const char *const want_mime[] = { "application/xml",
	    "text/plain", NULL };
	static const char *const want_props[] = {
		"{\"MimeType\":\"application/xml\",\"CharacterSet\":\"utf-8\"}",
		"{\"q\\\"name\\\\\":\"say \\\"hi\\\" \\\\o/\","
		    "\"ctl\":\"a\\nb\\rc\\td\\u0001e\\u001f\\u007f\"}",
		"{}",
	};
	const char *id = m->message_id;
	char no[4];
	size_t i;

	assert_int_equal(db_int(t, "SELECT count(*) FROM payload WHERE "
	    "message_id = ?1", id, NULL), 3);
	for (i = 0; i < 3; i++) {
		(void)snprintf(no, sizeof(no), "%zu", i);
		db_text_eq(t, PART("content_id"), id, no,
		    m->parts[i].content_id);
		db_text_eq(t, PART("mime_type"), id, no, want_mime[i]);
		db_text_eq(t, PART("properties"), id, no, want_props[i]);
		db_bytes_eq(t, PART("content"), id, no, m->parts[i].data,
		    m->parts[i].len);
	}
	assert_int_equal(db_int(t, DELIVERY("count(*)"), id, NULL), 1);
	db_text_eq(t, DELIVERY("state"), id, NULL, "ready");
	assert_int_equal(db_int(t, DELIVERY("attempts"), id, NULL), 0);
}

/* NEW: the row, its payloads and one 'ready' delivery, with and without
 * the optional columns. */
static void
test_inbox_new_row(void **state)
{
	static char leg_id[] = "leg-1";
	static const struct {
		const char *id;
		int with_leg;
		const char *peer;
		int agreement;
	} cases[] = {
		{ "row-full", 1, "192.0.2.7", 1 },
		{ "row-bare", 0, NULL, 0 },     /* T_LEG, no peer, no agreement */
	};
	struct tstate *t = *state;
	struct pmode_leg leg;
	size_t i;

	leg = T_LEG;
	leg.id = leg_id;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ebms_user_message *um;
		struct store_result res;
		struct err err;
		struct tmsg m;
		int64_t before, after;

		err_clear(&err);
		t_base(&m, cases[i].id);
		if (!cases[i].agreement)
			m.agreement = NULL;
		um = t_build(t->a, &m);
		before = clock_epoch_ms();
		assert_int_equal(inbox_accept(t->s, t->a, um,
		    cases[i].with_leg ? &leg : &T_LEG, cases[i].peer, RECEIPT_A,
		    sizeof(RECEIPT_A) - 1, &res, &err), 0);
		after = clock_epoch_ms();
		assert_int_equal(res.outcome, STORE_NEW);
		assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
		assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
		assert_int_equal(res.duplicates, 0);
		assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL),
		    1);
		check_row(t, um, cases[i].with_leg ? leg_id : t_leg_id,
		    cases[i].peer, before, after);
		check_payloads(t, &m);
	}
}

/*
 * PartProperties JSON: exact text for escaping (quotes, backslashes,
 * control characters, DEL; UTF-8 passes through), and SQLite's own JSON
 * parser reads every name and value back unchanged.
 */
static void
test_inbox_props_json(void **state)
{
	static const struct {
		struct ebms_property props[3];
		size_t n;
		const char *want;
	} cases[] = {
		{ { { 0 } }, 0, "{}" },
		{ { { "MimeType", "string", "text/xml" } }, 1,
		    "{\"MimeType\":\"text/xml\"}" },
		{ { { "a\"b", NULL, "c\\d" }, { "\"", NULL, "\\\"" } }, 2,
		    "{\"a\\\"b\":\"c\\\\d\",\"\\\"\":\"\\\\\\\"\"}" },
		{ { { "ctl", NULL, "\n\r\t\x01\x1f\x7f" "end" } }, 1,
		    "{\"ctl\":\"\\n\\r\\t\\u0001\\u001f\\u007fend\"}" },
		{ { { "z", NULL, "1" }, { "a", NULL, "2" }, { "m", NULL, "" } },
		    3, "{\"z\":\"1\",\"a\":\"2\",\"m\":\"\"}" },
		{ { { "name", NULL, "caf\xc3\xa9 \xe2\x82\xac" } }, 1,
		    "{\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"}" },
	};
	struct tstate *t = *state;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tmsg m;
		char id[32];

		(void)snprintf(id, sizeof(id), "props-%zu", i);
		t_base(&m, id);
		m.n_parts = 1;
		memcpy(m.parts[0].props, cases[i].props,
		    sizeof(cases[i].props));
		m.parts[0].n_props = cases[i].n;
		accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
		db_text_eq(t, PART("properties"), m.message_id, "0",
		    cases[i].want);
		assert_int_equal(db_int(t, PART("json_valid(properties)"),
		    m.message_id, "0"), 1);
		for (j = 0; j < cases[i].n; j++)
			db_text_eq(t, "SELECT j.value FROM payload, "
			    "json_each(payload.properties) AS j WHERE "
			    "payload.message_id = ?1 AND j.key = ?2",
			    m.message_id, cases[i].props[j].name,
			    cases[i].props[j].value);
	}
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_inbox_new_parties), T(test_inbox_new_row),
		T(test_inbox_props_json),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
