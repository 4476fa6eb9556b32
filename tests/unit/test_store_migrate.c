/*
 * Unit tests for src/store, migrations and racing connections
 * (teststore.h: SQLite and PostgreSQL): migrating twice and at once,
 * databases of earlier versions with rows in them, 16 connections
 * accepting one message at once.
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

#include "teststore.h"
#include "store/store_sqlite_int.h"
#include "testutil.h"

/* Migrating twice is a no-op; the schema is there and empty; ping works. */
static void
t_migrate_twice(void **state)
{
	struct tctx *c = *state;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	s = topen(c);
	assert_int_equal(store_migrate(s, &err), 0);
	assert_int_equal(store_ping(s, &err), 0);
	assert_int_equal(store_ping(s, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	store_close(s);
	s = topen(c);  /* a second process */
	store_close(s);
	tcount(c, "SELECT count(*) FROM schema_migrations", N_MIGRATIONS(c));
	tcount(c, "SELECT count(*) FROM schema_migrations"
	    " WHERE name LIKE '%/001_inbox.sql'", 1);
	tcount(c, "SELECT count(*) FROM schema_migrations"
	    " WHERE name LIKE '%/002_delivery.sql'", 1);
	if (c->pg) {
		tcount(c, "SELECT count(*) FROM schema_migrations"
		    " WHERE name = 'postgresql/003_accept.sql'", 1);
		/* created once, in the schema the store works in */
		tcountf(c, 1, "SELECT count(*) FROM pg_proc p JOIN pg_namespace n"
		    " ON n.oid = p.pronamespace WHERE p.proname = 'as4gw_accept'"
		    " AND n.nspname = '%s' AND NOT p.prosecdef", c->schema);
	}
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
}

/* 16 connections accept one message at once: one NEW, one receipt. */
static void
t_concurrent_accept(void **state)
{
	struct tctx *c = *state;
	struct tthread th[N_THREADS];
	int i, n_new = 0, n_dup = 0, winner = -1;

	NEED(c);
	store_close(topen(c));
	trun_threads(c, th, N_THREADS, 0);
	for (i = 0; i < N_THREADS; i++) {
		if (th[i].outcome == STORE_NEW) {
			n_new++;
			winner = i;
		} else if (th[i].outcome == STORE_DUPLICATE)
			n_dup++;
	}
	assert_int_equal(n_new, 1);
	assert_int_equal(n_dup, N_THREADS - 1);
	for (i = 0; i < N_THREADS; i++) {
		assert_int_equal(th[i].got_len, strlen(th[winner].receipt));
		assert_memory_equal(th[i].got, th[winner].receipt, th[i].got_len);
	}
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT duplicates FROM inbox", N_THREADS - 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
}

/* Several gateways migrating one fresh database at once do not race. */
static void
t_concurrent_migrate(void **state)
{
	struct tctx *c = *state;
	struct tthread th[8];

	NEED(c);
	trun_threads(c, th, 8, 1);
	tcount(c, "SELECT count(*) FROM schema_migrations", N_MIGRATIONS(c));
	tcount(c, "SELECT count(*) FROM inbox", 0);
}

/*
 * A database created by the previous version (bb574aa: migrations up to
 * sqlite 002 / postgresql 003) with rows in it takes the party-key
 * migration: every row kept, payload and delivery rows following their
 * inbox row (composite foreign keys, cascade), the old rows compared with
 * their version 1 hash, the key scoped to the party, the queue working.
 */
static void
t_migrate_old_rows(void **state)
{
	struct tctx *c = *state;
	struct arena *a = arena_new(0);
	struct store_delivery d;
	struct err err = { 0 };
	struct store *s;
	struct tmsg t;

	NEED(c);
	assert_non_null(a);
	told_database(c);
	s = topen(c);   /* migrates */
	tcount(c, "SELECT count(*) FROM schema_migrations", N_MIGRATIONS(c));
	tcount(c, "SELECT count(*) FROM inbox WHERE field_hashes IS NULL", 2);
	tcount(c, "SELECT count(*) FROM payload WHERE from_party = 'A'"
	    " AND message_id = 'old-1'", 2);
	tcount(c, "SELECT count(*) FROM delivery WHERE from_party = 'A'"
	    " AND message_id = 'old-1' AND state = 'ready'", 1);
	tcount(c, "SELECT count(*) FROM delivery WHERE from_party = 'B'"
	    " AND message_id = 'old-2' AND state = 'done'", 1);
	/* old-1's retry: its version 1 hash matches, its receipt comes back */
	tmsg_init(&t, "old-1", 0x99, "new-receipt");
	t.m.from_party = "A";
	memset(t.m.content_hash_v1, c->pg ? 0x11 : 0, STORE_HASH_LEN);
	assert_int_equal(taccept(s, a, &t, STORE_DUPLICATE).receipt[0], 'r');
	/* a version 2 hash equal to nothing stored is not a match */
	memset(t.m.content_hash_v1, 0x98, STORE_HASH_LEN);
	(void)taccept(s, a, &t, STORE_DRIFT);
	/* old-2 from another party: a row of its own */
	tmsg_init(&t, "old-2", 0x99, "receipt-a");
	t.m.from_party = "A";
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id = 'old-2'", 2);
	/* the queue: old-1 first, whole, finished by its key */
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.message_id, "old-1");
	assert_string_equal(d.from_party, "A");
	assert_int_equal(d.n_parts, 2);
	assert_int_equal(store_finish(s, "B", "old-1", 1, T0, T0, &err), 0);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'claimed'", 1);
	assert_int_equal(store_finish(s, "A", "old-1", 1, T0, T0, &err), 0);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'claimed'", 0);
	/* the composite foreign keys cascade */
	tq_exec(c, c->pg ? "DELETE FROM inbox WHERE from_party = 'A'"
	    " AND message_id = 'old-1'" : "PRAGMA foreign_keys = ON;"
	    " DELETE FROM inbox WHERE from_party = 'A'"
	    " AND message_id = 'old-1'");
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery"
	    " WHERE message_id = 'old-1'", 0);
	store_close(s);
	arena_free(a);
}

/*
 * A database of the previous version (migrations up to sqlite 004 /
 * postgresql 005, rows written before the party key and carried through
 * it) takes the business-key migration: rows kept without a key, their
 * retries still duplicates whatever key they now carry, new keys checked.
 */
static void
t_migrate_business_rows(void **state)
{
	struct tctx *c = *state;
	struct arena *a = arena_new(0);
	struct store_found *f = NULL;
	struct err err = { 0 };
	struct store *s;
	struct tmsg t;

	NEED(c);
	assert_non_null(a);
	told_database(c);
	told_migration(c, c->pg ? "004_party_key.sql" : "003_party_key.sql");
	told_migration(c, c->pg ? "005_delivery_error.sql" :
	    "004_delivery_error.sql");
	s = topen(c);   /* migrates: the business key and what came after it */
	assert_int_equal(s->migrated, N_MIGRATIONS(c) - (c->pg ? 5 : 4));
	tcount(c, "SELECT count(*) FROM schema_migrations", N_MIGRATIONS(c));
	tcount(c, "SELECT count(*) FROM inbox WHERE business_key IS NULL"
	    " AND business_duplicate_of IS NULL", 2);
	tcount(c, "SELECT count(*) FROM payload", 2);
	assert_int_equal(store_find(s, "old-1", "A", a, &f, &err), 1);
	assert_null(f->business_key);
	/* old-1's retry, now with a key under refuse: a duplicate */
	tmsg_init(&t, "old-1", 0x99, "new-receipt");
	t.m.from_party = "A";
	memset(t.m.content_hash_v1, c->pg ? 0x11 : 0, STORE_HASH_LEN);
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_DUPLICATE, "");
	tmsg_init(&t, "new-1", 0x01, "receipt-1");
	t.m.from_party = "A";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	tmsg_init(&t, "new-2", 0x02, "receipt-2");
	t.m.from_party = "A";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_BUSINESS_DUP,
	    "new-1");
	tcount(c, "SELECT count(*) FROM inbox", 3);
	store_close(s);
	arena_free(a);
}

/* Remove the test's SQLite database with its WAL and index. */
static void
t_unlink_db(const struct tctx *c)
{
	const char *sfx[] = { "", "-wal", "-shm" };
	char p[300];
	size_t i;

	for (i = 0; i < 3; i++) {
		(void)snprintf(p, sizeof(p), "%s%s", c->path, sfx[i]);
		(void)unlink(p);
	}
}

/*
 * SQLite's page size: a new database file gets STORE_SQLITE_PAGE_SIZE_SQL,
 * one made before it keeps its 4096 (a WAL file cannot change it) and
 * takes messages as before.
 */
static void
t_page_size(void **state)
{
	struct tctx *c = *state;
	struct arena *a = arena_new(0);
	struct store *s;
	struct tmsg t;

	NEED(c);
	s = topen(c);
	tcount(c, "SELECT page_size FROM pragma_page_size()", atoll(STORE_SQLITE_PAGE_SIZE_SQL));
	store_close(s);
	t_unlink_db(c);
	told_database(c);
	tcount(c, "SELECT page_size FROM pragma_page_size()", 4096);
	s = topen(c);
	tcount(c, "SELECT page_size FROM pragma_page_size()", 4096);
	tmsg_init(&t, "page-1", 0x01, "receipt-1");
	tmsg_add_big(&t);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id = 'page-1'", 1);
	tcount(c, "SELECT length(content) FROM payload WHERE part_no = 2",
	    BIG_LEN);
	store_close(s);
	arena_free(a);
}

#define MIGRATE_TESTS(ctx) \
	BT(t_migrate_twice, ctx), BT(t_concurrent_accept, ctx), \
	BT(t_concurrent_migrate, ctx), BT(t_migrate_old_rows, ctx), \
	BT(t_migrate_business_rows, ctx)

TSTORE_MAIN3("store migrate", MIGRATE_TESTS, BT(t_page_size, &ctx_sqlite),
    TSTORE_PG_NONE)
