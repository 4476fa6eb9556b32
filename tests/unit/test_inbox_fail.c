/*
 * Unit tests for src/inbox: what inbox_accept() refuses and how the store's
 * failures come back, the two-step API with a probe, and the retry hint
 * (inbox_recent) (testinbox.h: the SQLite fixture and the message
 * specs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testinbox.h"
#include "testutil.h"

/* ---- failures -------------------------------------------------------- */

/* Which store a failure case runs against. */
enum fail_store { FS_MIGRATED, FS_UNMIGRATED, FS_NULL };

struct fail_case {
	const char *name;
	enum mut mut;
	int no_receipt;
	size_t budget;          /* arena budget for the call; 0 = none */
	enum fail_store store;
	enum err_kind kind;
	const char *msg;        /* a part of err.msg */
};

/* Run one failure case: -1 with the expected kind and message, *ret
 * untouched, no row for the message. */
static void
run_fail_case(struct tstate *t, const struct fail_case *c)
{
	struct store_result res, sentinel;
	struct store *s = t->s, *raw = NULL;
	struct arena *a = t->a;
	struct err err;
	struct tmsg m;
	char dsn[300];

	err_clear(&err);
	t_base(&m, c->name);
	t_mutate(&m, c->mut);
	if (c->budget > 0)
		a = arena_new(c->budget);
	assert_non_null(a);
	if (c->store == FS_UNMIGRATED) {
		(void)snprintf(dsn, sizeof(dsn), "sqlite:%s", t->raw);
		assert_int_equal(store_open(dsn, &raw, &err), 0);
		s = raw;
	} else if (c->store == FS_NULL) {
		s = NULL;
	}
	memset(&res, 0xa5, sizeof(res));
	sentinel = res;
	if (inbox_accept(s, a, t_build(t->a, &m),
	    c->mut == MUT_NO_LEG ? NULL : &T_LEG, "192.0.2.7",
	    RECEIPT_A, c->no_receipt ? 0 : sizeof(RECEIPT_A) - 1, &res,
	    &err) != -1)
		fail_msg("%s: accepted", c->name);
	if (err.kind != c->kind || strstr(err.msg, c->msg) == NULL)
		fail_msg("%s: %s \"%s\", want %s \"...%s...\"", c->name,
		    err_kind_name(err.kind), err.msg, err_kind_name(c->kind),
		    c->msg);
	assert_null(err.ebms_code);
	assert_memory_equal(&res, &sentinel, sizeof(res));
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 0);
	store_close(raw);
	if (a != t->a)
		arena_free(a);
}

/*
 * Every way inbox_accept fails without a decision: no leg, a message or
 * receipt the store refuses, the request arena exhausted, no tables (a
 * database failure), no store at all (ERR_STORE, not a crash).  Nothing is
 * written.
 */
static void
test_inbox_failures(void **state)
{
	static const struct fail_case cases[] = {
		{ "no-leg", MUT_NO_LEG, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "no P-Mode leg for the inbox row" },
		{ "empty-id", MUT_EMPTY_ID, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "message id empty or too long" },
		{ "long-id", MUT_LONG_ID, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "message id empty or too long" },
		{ "no-conv", MUT_NO_CONVERSATION, 0, 0, FS_MIGRATED,
		    ERR_INTERNAL, "a required field is missing" },
		{ "empty-receipt", MUT_NONE, 1, 0, FS_MIGRATED, ERR_INTERNAL,
		    "empty receipt" },
		{ "arena", MUT_NONE, 0, 32, FS_MIGRATED, ERR_INTERNAL,
		    "could not build the inbox row" },
		{ "unmigrated", MUT_NONE, 0, 0, FS_UNMIGRATED, ERR_STORE,
		    "no such table" },
		{ "null-store", MUT_NONE, 0, 0, FS_NULL, ERR_STORE,
		    "no store connection" },
	};
	struct tstate *t = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_fail_case(t, &cases[i]);
	assert_int_equal(db_int(t, "SELECT count(*) FROM inbox", NULL, NULL),
	    0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM payload", NULL, NULL),
	    0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM delivery", NULL,
	    NULL), 0);
}

/*
 * The two-step API with a probe (receipt NULL): an unknown MessageId is
 * STORE_ABSENT and writes nothing; after the accept, a probe of the same
 * content is a DUPLICATE with the stored Receipt and counts; a probe of other
 * content is drift (EBMS:0004) and changes nothing.
 */
static void
test_inbox_probe(void **state)
{
	struct tstate *t = *state;
	struct store_message sm;
	struct store_result res;
	struct err err;
	struct tmsg m;

	t_base(&m, "probe");
	err_clear(&err);
	assert_int_equal(inbox_prepare(t->a, t_build(t->a, &m), &T_LEG,
	    "192.0.2.7", &sm, &err), 0);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_ABSENT);
	assert_null(res.receipt);
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM delivery", NULL, NULL),
	    0);
	/* the same prepared message, now with its receipt: NEW */
	assert_int_equal(inbox_submit(t->s, t->a, &sm, RECEIPT_A,
	    sizeof(RECEIPT_A) - 1, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_NEW);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_DUPLICATE);
	assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
	assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
	assert_int_equal(res.duplicates, 1);
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	t_mutate(&m, MUT_PAYLOAD_BYTE);
	assert_int_equal(inbox_prepare(t->a, t_build(t->a, &m), &T_LEG,
	    "192.0.2.7", &sm, &err), 0);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err),
	    -1);
	assert_int_equal(res.outcome, STORE_DRIFT);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	err_clear(&err);
	assert_int_equal(inbox_submit(NULL, t->a, &sm, NULL, 0, &res, &err),
	    -1);
	assert_int_equal(err.kind, ERR_STORE);
}

/*
 * The retry hint: a noted id is seen, others are not (a different id in
 * the same slot evicts it: only a hint); NULL table and NULL id are safe;
 * sizes out of range are refused.
 */
static void
test_inbox_recent(void **state)
{
	struct inbox_recent *r = inbox_recent_new(4);
	char id[32];
	int i, seen = 0;

	(void)state;
	assert_non_null(r);
	assert_null(inbox_recent_new(0));
	assert_null(inbox_recent_new(25));
	assert_int_equal(inbox_recent_seen(r, "A", "a@x"), 0);
	inbox_recent_note(r, "A", "a@x");
	assert_int_equal(inbox_recent_seen(r, "A", "a@x"), 1);
	assert_int_equal(inbox_recent_seen(r, "A", "b@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "A", ""), 0);
	/* the key is (party, id): another party's id is not a retry, and the
	 * NUL between them keeps ("Aa", "@x") apart from ("A", "a@x") */
	assert_int_equal(inbox_recent_seen(r, "B", "a@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "Aa", "@x"), 0);
	/* 16 slots: 100 more ids leave at most 16 of them seen */
	for (i = 0; i < 100; i++) {
		(void)snprintf(id, sizeof(id), "m%d@x", i);
		inbox_recent_note(r, "A", id);
	}
	for (i = 0; i < 100; i++) {
		(void)snprintf(id, sizeof(id), "m%d@x", i);
		seen += inbox_recent_seen(r, "A", id);
	}
	assert_true(seen >= 1 && seen <= 16);
	assert_int_equal(inbox_recent_seen(NULL, "A", "a@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "A", NULL), 0);
	assert_int_equal(inbox_recent_seen(r, NULL, "a@x"), 0);
	inbox_recent_note(NULL, "A", "a@x");
	inbox_recent_note(r, "A", NULL);
	inbox_recent_note(r, NULL, "a@x");
	inbox_recent_free(r);
	inbox_recent_free(NULL);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_inbox_failures),
		T(test_inbox_probe), T(test_inbox_recent),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
