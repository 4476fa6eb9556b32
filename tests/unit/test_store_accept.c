/*
 * Unit tests for src/store, accept (teststore.h: SQLite and PostgreSQL):
 * new, duplicate, drift and probe answers, the stored rows and bytes, what a
 * failure leaves (nothing), refused messages and DSNs, a lost PostgreSQL
 * connection, a process killed at a fault point.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "teststore.h"
#include "testutil.h"

/* A new id: one row in each table, the caller's receipt back. */
static void
t_accept_new(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct store_result r;
	unsigned char *v;
	size_t len;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "new-1@as4gw.test", 0x11, "receipt-one");
	r = taccept(s, a, &t, STORE_NEW);
	assert_ptr_equal(r.receipt, t.m.receipt);
	assert_int_equal(r.receipt_len, t.m.receipt_len);
	assert_int_equal(r.duplicates, 0);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'"
	    " AND attempts = 0 AND claimed_at IS NULL AND not_before IS NULL",
	    1);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id ="
	    " 'new-1@as4gw.test' AND duplicates = 0 AND processed_at IS NULL"
	    " AND last_duplicate_at IS NULL AND partition_key = '2026-01'"
	    " AND from_party LIKE '%:sender' AND pmode_id = 'leg-1'"
	    " AND source = '192.0.2.7' AND agreement_ref = 'urn:agreement:1'", 1);
	tcount(c, c->pg ? "SELECT count(*) FROM inbox WHERE received_at ="
	    " to_timestamp(1767323045.678)" : "SELECT count(*) FROM inbox"
	    " WHERE received_at = 1767323045678", 1);
	v = tq_value(c, "SELECT receipt FROM inbox", &len);
	assert_int_equal(len, strlen("receipt-one"));
	assert_memory_equal(v, "receipt-one", len);
	free(v);
	v = tq_value(c, "SELECT content_hash FROM inbox", &len);
	assert_int_equal(len, STORE_HASH_LEN);
	assert_memory_equal(v, t.m.content_hash, len);
	free(v);
	store_close(s);
	arena_free(a);
}

/* The same id and hash again: the stored receipt, counted, one row. */
static void
t_accept_duplicate(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t1, t2;
	struct store_result r;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t1, "dup-1@as4gw.test", 0x22, "receipt-first");
	tmsg_init(&t2, "dup-1@as4gw.test", 0x22, "receipt-second-differs");
	(void)taccept(s, a, &t1, STORE_NEW);
	r = taccept(s, a, &t2, STORE_DUPLICATE);
	assert_int_equal(r.receipt_len, strlen("receipt-first"));
	assert_memory_equal(r.receipt, "receipt-first", r.receipt_len);
	assert_ptr_not_equal(r.receipt, t1.m.receipt);  /* a copy in the arena */
	assert_int_equal(r.duplicates, 1);
	tcount(c, "SELECT duplicates FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE last_duplicate_at IS NOT NULL", 1);
	r = taccept(s, a, &t2, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 2);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	store_close(s);
	arena_free(a);
}

/* The same id with another hash: drift, the original untouched. */
static void
t_accept_drift(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t1, t2;
	struct store_result r;
	unsigned char *v;
	size_t len;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t1, "drift-1@as4gw.test", 0x33, "receipt-original");
	tmsg_init(&t2, "drift-1@as4gw.test", 0x34, "receipt-other");
	t2.m.n_parts = 1;
	(void)taccept(s, a, &t1, STORE_NEW);
	r = taccept(s, a, &t2, STORE_DRIFT);
	assert_null(r.receipt);
	assert_int_equal(r.receipt_len, 0);
	tcount(c, "SELECT count(*) FROM inbox WHERE duplicates = 0"
	    " AND last_duplicate_at IS NULL", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	v = tq_value(c, "SELECT content_hash FROM inbox", &len);
	assert_int_equal(len, STORE_HASH_LEN);
	assert_memory_equal(v, t1.m.content_hash, len);
	free(v);
	v = tq_value(c, "SELECT receipt FROM inbox", &len);
	assert_memory_equal(v, "receipt-original", len);
	free(v);
	/* and the original content is still a duplicate, not drift */
	(void)taccept(s, a, &t1, STORE_DUPLICATE);
	store_close(s);
	arena_free(a);
}

/* Payload bytes come back exactly: NULs, 1 MiB, empty, no content id. */
static void
t_payload_roundtrip(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	unsigned char *v;
	size_t len;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "rt-1@as4gw.test", 0x44, "r");
	tmsg_add_big(&t);
	(void)taccept(s, a, &t, STORE_NEW);
	v = tq_value(c, "SELECT content FROM payload WHERE part_no = 1", &len);
	assert_int_equal(len, sizeof(nul_bytes));
	assert_memory_equal(v, nul_bytes, len);
	free(v);
	v = tq_value(c, "SELECT content FROM payload WHERE part_no = 2", &len);
	assert_int_equal(len, BIG_LEN);
	assert_memory_equal(v, t.big, len);
	free(v);
	v = tq_value(c, "SELECT content FROM payload WHERE part_no = 3", &len);
	assert_non_null(v);  /* empty, not NULL */
	assert_int_equal(len, 0);
	free(v);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 3"
	    " AND content_id IS NULL AND mime_type = 'text/plain'"
	    " AND properties = '{\"a\\\"b\":\"\\u0001\"}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1"
	    " AND properties = '{}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 0"
	    " AND content_id = 'part1@as4gw.test'"
	    " AND properties = '{\"MimeType\":\"application/xml\"}'", 1);
	free(t.big);
	store_close(s);
	arena_free(a);
}

/* A failure half-way (duplicate part_no) stores nothing, reserves nothing. */
static void
t_failure_rolls_back(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "fail-1@as4gw.test", 0x55, "r1");
	t.parts[1].part_no = 0;
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(r.outcome, 0);  /* ret untouched on failure */
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
	t.parts[1].part_no = 1;
	(void)taccept(s, a, &t, STORE_NEW);  /* connection usable, id free */
	tcount(c, "SELECT count(*) FROM payload", 2);
	store_close(s);
	arena_free(a);
}

/* Before migration accept fails cleanly, and works once migrated. */
static void
t_not_migrated(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s = NULL;
	struct tmsg t;
	struct store_result r;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	tmsg_init(&t, "nm-1@as4gw.test", 0x66, "r");
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_migrate(s, &err), 0);
	(void)taccept(s, a, &t, STORE_NEW);
	store_close(s);
	arena_free(a);
}

/*
 * No room in the request arena for the stored receipt: fail.  sqlite copies
 * it before COMMIT and counts nothing; postgresql's one statement has
 * committed the count when the receipt arrives (like a duplicate whose
 * answer never reached the partner).
 */
static void
t_arena_exhausted(void **state)
{
	struct tctx *c = *state;
	struct arena *a, *tiny;
	struct store *s;
	struct tmsg t;
	struct store_result r;
	struct err err = { 0 };
	char receipt[200];

	NEED(c);
	a = arena_new(0);
	tiny = arena_new(64);
	memset(receipt, 'r', sizeof(receipt) - 1);
	receipt[sizeof(receipt) - 1] = '\0';
	s = topen(c);
	tmsg_init(&t, "arena-1@as4gw.test", 0x77, receipt);
	(void)taccept(s, a, &t, STORE_NEW);
	assert_int_equal(store_accept(s, &t.m, tiny, &r, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	tcount(c, "SELECT duplicates FROM inbox", c->pg ? 1 : 0);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, c->pg ? 2 : 1);
	store_close(s);
	arena_free(tiny);
	arena_free(a);
}

/* Messages built wrongly are refused before the database is touched. */
static void
t_invalid_message(void **state)
{
	struct tctx *c = *state;
	char long_id[STORE_MESSAGE_ID_MAX + 2];
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct store_result r;
	struct err err;
	int i;

	NEED(c);
	a = arena_new(0);
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	s = topen(c);
	for (i = 0; i < 8; i++) {
		tmsg_init(&t, "bad@as4gw.test", 0x01, "r");
		switch (i) {
		case 0: t.m.message_id = NULL; break;
		case 1: t.m.message_id = ""; break;
		case 2: t.m.message_id = long_id; break;
		case 3: t.m.from_party = NULL; break;
		case 4: t.m.receipt_len = 0; break;
		case 5: t.parts[0].data = NULL; break;
		case 6: t.parts[1].part_no = -1; break;
		default: t.m.parts = NULL; break;
		}
		err_clear(&err);
		if (store_accept(s, &t.m, a, &r, &err) != -1 ||
		    err.kind != ERR_INTERNAL)
			fail_msg("invalid message case %d accepted", i);
	}
	tcount(c, "SELECT count(*) FROM inbox", 0);
	/* the longest valid id is fine */
	long_id[STORE_MESSAGE_ID_MAX] = '\0';
	tmsg_init(&t, long_id, 0x01, "r");
	(void)taccept(s, a, &t, STORE_NEW);
	store_close(s);
	arena_free(a);
}

/* A probe (no receipt): an absent id writes nothing; a stored id with the
 * same hash is a counted duplicate with the stored receipt; another hash is
 * drift and is not counted. */
static void
t_probe(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t, probe;
	struct store_result r;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&probe, "probe-1@as4gw.test", 0x5a, "unused");
	probe.m.receipt = NULL;
	probe.m.receipt_len = 0;
	r = taccept(s, a, &probe, STORE_ABSENT);
	assert_null(r.receipt);
	assert_int_equal(r.receipt_len, 0);
	assert_int_equal(r.duplicates, 0);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
	tmsg_init(&t, "probe-1@as4gw.test", 0x5a, "receipt-stored");
	(void)taccept(s, a, &t, STORE_NEW);
	r = taccept(s, a, &probe, STORE_DUPLICATE);
	assert_int_equal(r.receipt_len, strlen("receipt-stored"));
	assert_memory_equal(r.receipt, "receipt-stored", r.receipt_len);
	assert_int_equal(r.duplicates, 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE duplicates = 1"
	    " AND last_duplicate_at IS NOT NULL", 1);
	memset(probe.m.content_hash, 0x5b, STORE_HASH_LEN);
	r = taccept(s, a, &probe, STORE_DRIFT);
	assert_null(r.receipt);
	assert_int_equal(r.receipt_len, 0);
	tcount(c, "SELECT duplicates FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	/* a full call after the probe still decides as usual */
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 2);
	store_close(s);
	arena_free(a);
}

/* Lost connection: the next unit of work reconnects by itself (a real
 * outage is ERR_STORE: see the integration tests' PostgreSQL outage). */
static void
t_pg_connection_lost(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t1, t2, t3;
	struct store_result r;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t1, "lost-1@as4gw.test", 0x01, "r1");
	tmsg_init(&t2, "lost-2@as4gw.test", 0x02, "r2");
	tmsg_init(&t3, "lost-3@as4gw.test", 0x03, "r3");
	tmsg_add_big(&t3);  /* streamed: BEGIN ... COMMIT */
	(void)taccept(s, a, &t1, STORE_NEW);
	tpg_terminate(c);
	/* the connection still looks fine; reading the answer of the NEW's
	 * NOTIFY finds it dead, so it is reset before the accept */
	(void)taccept(s, a, &t2, STORE_NEW);
	(void)taccept(s, a, &t1, STORE_DUPLICATE);
	tpg_terminate(c);
	/* nothing pending: the accept statement itself fails on the dead
	 * socket; it is its own transaction, so it is run once more on a fresh
	 * connection and the caller sees no error (store_pg_call) */
	r = taccept(s, a, &t1, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 2);
	tpg_terminate(c);
	/* the same for the BEGIN of a streamed accept (store_pg_begin) */
	(void)taccept(s, a, &t3, STORE_NEW);
	(void)taccept(s, a, &t3, STORE_DUPLICATE);
	tpg_terminate(c);
	assert_int_equal(store_ping(s, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	tcount(c, "SELECT count(*) FROM inbox", 3);
	tcount(c, "SELECT count(*) FROM payload", 8);
	free(t3.big);
	store_close(s);
	arena_free(a);
}

/* A process killed at a store fault point leaves nothing half-stored. */
static void
t_fault_accept(void **state)
{
#ifdef AS4GW_FAULT_INJECTION
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;

	NEED(c);
	a = arena_new(0);
	store_close(topen(c));
	tmsg_init(&t, "f-1", 0x42, "receipt");  /* what the child sends */
	tfault_child(c, "store.after-insert");
	tfault_child(c, "store.before-commit");
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
	s = topen(c);
	(void)taccept(s, a, &t, STORE_NEW);
	tfault_child(c, "store.before-commit");  /* a DUPLICATE */
	tcount(c, "SELECT duplicates FROM inbox", 0);
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	tcount(c, "SELECT duplicates FROM inbox", 1);
	store_close(s);
	arena_free(a);
#else
	(void)state;
	testutil_skip("built without -Dfault_injection=true");
#endif
}

/* ---- no backend needed -------------------------------------------------- */

/* Unknown schemes are ERR_CONF; unreachable databases ERR_STORE. */
static void
t_open_bad_dsn(void **state)
{
	static const struct {
		const char *dsn;
		enum err_kind kind;
	} cases[] = {
		{ "", ERR_CONF },
		{ "mysql://localhost/db", ERR_CONF },
		{ "sqlite:", ERR_CONF },
		{ "SQLITE:/tmp/x.db", ERR_CONF },
		{ "postgresq://localhost/db", ERR_CONF },
		{ "/tmp/as4gw.db", ERR_CONF },
		{ "sqlite:/nonexistent-as4gw-dir/inbox.db", ERR_STORE },
		/* no server on this socket: refused at once */
		{ "postgresql://postgres@/postgres?host=/nonexistent-as4gw&port=1",
		  ERR_STORE },
		{ "postgres://nobody:secret@127.0.0.1:1/db?connect_timeout=2",
		  ERR_STORE },
	};
	static struct store sentinel;
	struct store *s = &sentinel;  /* must stay untouched */
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err_clear(&err);
		if (store_open(cases[i].dsn, &s, &err) != -1 ||
		    err.kind != cases[i].kind)
			fail_msg("dsn \"%s\": kind %d", cases[i].dsn, err.kind);
		assert_ptr_equal(s, &sentinel);
		assert_null(strstr(err.msg, "secret"));
	}
	err_clear(&err);
	assert_int_equal(store_open(NULL, &s, &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
	store_close(NULL);
}

#define ACCEPT_TESTS(ctx) \
	BT(t_accept_new, ctx), BT(t_accept_duplicate, ctx), \
	BT(t_accept_drift, ctx), BT(t_payload_roundtrip, ctx), \
	BT(t_failure_rolls_back, ctx), BT(t_not_migrated, ctx), \
	BT(t_arena_exhausted, ctx), BT(t_invalid_message, ctx), \
	BT(t_probe, ctx), BT(t_fault_accept, ctx)

static const struct CMUnitTest common[] = {
	cmocka_unit_test(t_open_bad_dsn),
};

static const struct CMUnitTest sqlite_tests[] = {
	ACCEPT_TESTS(&ctx_sqlite)
};
static const struct CMUnitTest pg_tests[] = {
	ACCEPT_TESTS(&ctx_pg),
	BT(t_pg_connection_lost, &ctx_pg),
};

int
main(int argc, char **argv)
{
	const struct tstore_groups g = {
		.name = "store accept",
		.common = common, .n_common = TSTORE_N(common),
		.sqlite = sqlite_tests, .n_sqlite = TSTORE_N(sqlite_tests),
		.pg = pg_tests, .n_pg = TSTORE_N(pg_tests),
	};

	return tstore_main(argc, argv, &g);
}
