/*
 * Unit tests for src/inbox: inbox_accept() of a retry — a DUPLICATE gets
 * the stored Receipt and is counted, any other content under the same key
 * is DRIFT (EBMS:0004) and changes nothing; the key is (sending party,
 * MessageId); rows from before migration 003 keep matching (testinbox.h:
 * the SQLite fixture and the message specs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testinbox.h"
#include "testutil.h"

static const unsigned char RECEIPT_B[] =
    "<eb:Receipt>second, longer one</eb:Receipt>";

/* Everything stored for one message except the duplicate bookkeeping, as
 * one text (blobs quoted as X'..'), to prove a call changed nothing. */
#define SNAPSHOT_SQL \
	"SELECT (SELECT quote(from_party) || quote(to_party)" \
	" || quote(service) || quote(action) || quote(conversation_id)" \
	" || quote(agreement_ref) || quote(pmode_id) || quote(source)" \
	" || quote(content_hash) || quote(receipt) || quote(received_at)" \
	" || quote(processed_at) || quote(partition_key)" \
	" FROM inbox WHERE message_id = ?1)" \
	" || '#' || (SELECT group_concat(quote(part_no) || quote(content_id)" \
	" || quote(mime_type) || quote(properties) || quote(content), ';')" \
	" FROM (SELECT * FROM payload WHERE message_id = ?1" \
	" ORDER BY part_no))" \
	" || '#' || (SELECT group_concat(quote(state) || quote(attempts)" \
	" || quote(claimed_at) || quote(created_at)) FROM delivery" \
	" WHERE message_id = ?1)"

/* ---- DUPLICATE ------------------------------------------------------- */

/*
 * The same message again (rebuilt in a fresh arena, with another Timestamp,
 * which the content hash leaves out) is a duplicate: the FIRST receipt comes
 * back although another is offered, the counter moves, nothing else does.
 */
static void
test_inbox_duplicate(void **state)
{
	struct tstate *t = *state;
	struct tmsg m;
	char *snap, *again;
	int64_t n;

	t_base(&m, "dup");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	snap = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
	assert_non_null(snap);
	m.timestamp = "2026-01-02T03:09:00Z";
	for (n = 1; n <= 2; n++) {
		struct arena *a2 = arena_new(0);
		struct store_result res;
		struct err err;

		assert_non_null(a2);
		err_clear(&err);
		assert_int_equal(inbox_accept(t->s, a2, t_build(a2, &m), &T_LEG,
		    "198.51.100.1", RECEIPT_B, sizeof(RECEIPT_B) - 1, &res,
		    &err), 0);
		assert_int_equal(err.kind, ERR_NONE);
		assert_int_equal(res.outcome, STORE_DUPLICATE);
		assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
		assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
		assert_int_equal(res.duplicates, n);
		arena_free(a2);
		assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), n);
		assert_true(db_int(t, LAST_DUP_SQL, m.message_id, NULL) > 0);
		again = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(again);
		assert_string_equal(again, snap);
		free(again);
	}
	free(snap);
}

/* ---- DRIFT ----------------------------------------------------------- */

/*
 * The MessageId reused for other content: -1 with EBMS:0004, outcome
 * STORE_DRIFT and no receipt, and the stored row (counter included) is left
 * exactly as it was.
 */
static void
test_inbox_drift(void **state)
{
	static const struct {
		const char *name;
		enum mut mut;
		const char *field;  /* named in err.detail (the log) */
	} cases[] = {
		{ "payload-byte", MUT_PAYLOAD_BYTE,
		    "PartInfo[0] payload bytes" },
		{ "last-byte", MUT_LAST_BYTE, "PartInfo[1] payload bytes" },
		{ "property", MUT_PROPERTY, "PartInfo[0] PartProperties" },
		{ "service", MUT_SERVICE, "Service" },
		{ "to-type", MUT_TO_TYPE, "To" },
		{ "from-type", MUT_FROM_TYPE, "From" },
		{ "drop-part", MUT_DROP_PART, "PartInfo count" },
	};
	struct tstate *t = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct store_result res;
		struct err err;
		struct tmsg m;
		char *snap, *after;

		t_base(&m, cases[i].name);
		accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
		snap = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(snap);
		t_mutate(&m, cases[i].mut);
		err_clear(&err);
		memset(&res, 0, sizeof(res));
		assert_int_equal(inbox_accept(t->s, t->a, t_build(t->a, &m),
		    &T_LEG, "192.0.2.7", RECEIPT_B, sizeof(RECEIPT_B) - 1, &res,
		    &err), -1);
		assert_int_equal(err.kind, ERR_EBMS);
		assert_non_null(err.ebms_code);
		assert_string_equal(err.ebms_code, "EBMS:0004");
		assert_true(err.msg[0] != '\0');
		/* the field is for the log; the partner's text stays fixed */
		assert_non_null(strstr(err.detail, cases[i].field));
		assert_null(strstr(err.msg, cases[i].field));
		assert_string_equal(err.msg,
		    "message id already used for other content");
		assert_int_equal(res.outcome, STORE_DRIFT);
		assert_null(res.receipt);
		after = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(after);
		assert_string_equal(after, snap);
		assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 0);
		assert_int_equal(db_int(t, LAST_DUP_SQL, m.message_id, NULL),
		    -1);
		free(snap);
		free(after);
	}
}

/* inbox_accept() of m on leg in a fresh arena: the outcome (0 return) or
 * -1. */
static int
t_again(struct tstate *t, const struct pmode_leg *leg, const struct tmsg *m,
    struct err *err)
{
	struct arena *a = arena_new(0);
	struct store_result res;
	int rc;

	assert_non_null(a);
	err_clear(err);
	memset(&res, 0, sizeof(res));
	rc = inbox_accept(t->s, a, t_build(a, m), leg, "192.0.2.7",
	    RECEIPT_B, sizeof(RECEIPT_B) - 1, &res, err);
	if (rc == 0)
		rc = (int)res.outcome;
	arena_free(a);
	return rc;
}

/*
 * The key is (sending party, MessageId), the party being the matched leg's:
 * the same MessageId from another party is a new row, not a drift, and
 * leaves the first row alone; a retry rebuilt with fresh Content-IDs is a
 * duplicate (hash version 2, payload.h).
 */
static void
test_inbox_party_key(void **state)
{
	static char b_id[] = "leg-b", b_from[] = "partner-b";
	struct tstate *t = *state;
	struct pmode_leg leg_b = T_LEG;
	struct tmsg m, other;
	struct err err;

	t_base(&m, "key");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	leg_b.id = b_id;
	leg_b.from.name = b_from;
	other = m;
	t_mutate(&other, MUT_FROM_TYPE);
	other.parts[0].data[0] ^= 1;    /* and other content */
	assert_int_equal(t_again(t, &leg_b, &other, &err), STORE_NEW);
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 2);
	assert_int_equal(db_int(t, "SELECT count(*) FROM payload"
	    " WHERE message_id = ?1", m.message_id, NULL), 6);
	assert_int_equal(t_again(t, &leg_b, &other, &err), STORE_DUPLICATE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	t_mutate(&m, MUT_CONTENT_IDS);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	t_mutate(&m, MUT_SERVICE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	/* the first party's row: its receipt, one duplicate per retry; the
	 * other party's: its own receipt */
	db_bytes_eq(t, ROW("receipt") " AND from_party = ?2", m.message_id,
	    PTYPE ":sender-gw", RECEIPT_A, sizeof(RECEIPT_A) - 1);
	assert_int_equal(db_int(t, DUPS_SQL " AND from_party = ?2",
	    m.message_id, PTYPE ":sender-gw"), 2);
	db_bytes_eq(t, ROW("receipt") " AND from_party = ?2", m.message_id,
	    b_from, RECEIPT_B, sizeof(RECEIPT_B) - 1);
	assert_int_equal(db_int(t, DUPS_SQL " AND from_party = ?2",
	    m.message_id, b_from), 1);
}

/*
 * A row stored before migration 003 (version 1 hash, no field digests)
 * keeps matching its retries (the same Content-IDs): a duplicate with its
 * stored Receipt, not a drift; other content is still a drift, logged as
 * a row without digests.
 */
static void
test_inbox_v1_row(void **state)
{
	struct tstate *t = *state;
	struct tmsg m;
	struct ebms_user_message *um;
	unsigned char v1[32];
	char hex[65], sql[300];
	struct err err;
	sqlite3 *db;
	size_t i;

	t_base(&m, "old");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	um = t_build(t->a, &m);
	assert_int_equal(payload_content_hash(um, v1), 0);
	for (i = 0; i < sizeof(v1); i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", v1[i]);
	(void)snprintf(sql, sizeof(sql), "UPDATE inbox SET field_hashes ="
	    " NULL, content_hash = X'%s'", hex);
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	t_mutate(&m, MUT_SERVICE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	assert_non_null(strstr(err.detail, "before per-field digests"));
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_inbox_duplicate),
		T(test_inbox_drift),
		T(test_inbox_party_key), T(test_inbox_v1_row),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
