/*
 * Unit tests for src/store/store_sqlite_writer.c, one batch: requests that
 * queue behind a held writer run as one batch (one COMMIT) — one of them
 * failing, duplicates only (no fsync of their own) and one turning out NEW,
 * a COMMIT that fails — and probes that need no write lock.  Each test gets
 * a fresh migrated database file in a temp directory (testwriter.h); rows
 * are inspected with sqlite3 directly.  No assertion depends on timing:
 * where a test needs requests to meet in one batch it holds the writer and
 * polls the queue length until they are all queued.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "testwriter.h"

/* Run sql (no result) over a fresh connection: the SQLite result code
 * (no cmocka assertion: it also runs on other threads). */
static int
wexec(const struct tctx *c, const char *sql)
{
	sqlite3 *db = NULL;
	int rc;

	rc = sqlite3_open(c->path, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(db, 10000);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	(void)sqlite3_close(db);
	return rc;
}

/* ---- one batch ------------------------------------------------------------ */

/* One accept on its own thread and handle, for the batch tests. */
struct wone {
	struct store *s;
	struct wmsg m;
	int rc;
	struct store_result r;
	struct err err;
	struct arena *a;
};

/* Thread body: accept o->m on a fresh handle. */
static void *
wone_thread(void *arg)
{
	struct wone *o = arg;

	o->rc = store_accept(o->s, &o->m.m, o->a, &o->r, &o->err);
	return NULL;
}

/* Wait (polling, no deadline) until n requests queue behind the writer. */
static void
wwait_queued(struct store_sqlite_writer *w, size_t n)
{
	const struct timespec pause = { 0, 1000000 };
	uint64_t batches;
	size_t q = 0;

	for (;;) {
		store_sqlite_writer_counts(w, &q, &batches);
		if (q >= n)
			break;
		(void)nanosleep(&pause, NULL);
	}
	assert_int_equal(q, n);
}

/* A commit hook that turns every COMMIT into a ROLLBACK. */
static int
wrefuse_commit(void *arg)
{
	(void)arg;
	return 1;
}

/* SQL to run (on a connection of its own) when the writer's connection
 * next starts a BEGIN IMMEDIATE: after the batch's reads, before its lock. */
struct wbegin {
	const struct tctx *c;
	const char *sql;
	int rc;
};

/* Trace callback: run b->sql once, at the first BEGIN IMMEDIATE. */
static int
wbegin_trace(unsigned mask, void *arg, void *p, void *x)
{
	struct wbegin *b = arg;

	(void)mask;
	(void)p;
	if (b->sql != NULL && strcmp(x, "BEGIN IMMEDIATE") == 0) {
		b->rc = wexec(b->c, b->sql);
		b->sql = NULL;
	}
	return 0;
}

/*
 * Run the accepts of o[0..n-1], each on its own handle and thread, while
 * the writer is held, so that they all queue, then let go: they run as ONE
 * batch (n <= STORE_SQLITE_BATCH_MAX).  refuse: every COMMIT of the
 * writer's connection fails; sql (unless NULL) runs once the batch has
 * read its rows, just before its BEGIN IMMEDIATE.
 */
static void
wone_batch(const struct tctx *c, struct wone *o, size_t n, int refuse,
    const char *sql, uint64_t *ret_batches)
{
	struct store *hold = wopen(c);
	struct store_sqlite_writer *w = wwriter(hold);
	sqlite3 *wdb = store_sqlite_writer_conn(
	    (struct store_sqlite *)hold)->db;
	struct wbegin b = { c, sql, SQLITE_OK };
	pthread_t tid[16];
	uint64_t b0, b1;
	size_t i, q;

	assert_true(n <= 16);
	store_sqlite_writer_counts(w, &q, &b0);
	store_sqlite_writer_lock(w);
	(void)sqlite3_commit_hook(wdb, refuse ? wrefuse_commit : NULL, NULL);
	(void)sqlite3_trace_v2(wdb, SQLITE_TRACE_STMT, wbegin_trace, &b);
	for (i = 0; i < n; i++) {
		o[i].s = wopen(c);
		o[i].a = arena_new(0);
		assert_int_equal(pthread_create(&tid[i], NULL, wone_thread,
		    &o[i]), 0);
	}
	wwait_queued(w, n);
	store_sqlite_writer_unlock(w);
	for (i = 0; i < n; i++) {
		assert_int_equal(pthread_join(tid[i], NULL), 0);
		store_close(o[i].s);
	}
	(void)sqlite3_commit_hook(wdb, NULL, NULL);
	(void)sqlite3_trace_v2(wdb, 0, NULL, NULL);
	assert_null(b.sql);
	assert_int_equal(b.rc, SQLITE_OK);
	store_sqlite_writer_counts(w, &q, &b1);
	*ret_batches = b1 - b0;
	store_close(hold);
}

/*
 * One message of a batch fails (part_no repeated: the payload primary key
 * fails): it alone gets ERR_STORE and leaves nothing; the others of the same
 * batch (one COMMIT) are stored; one duplicate among them is counted.
 */
static void
t_batch_one_fails(void **state)
{
	const struct tctx *c = *state;
	struct wone o[8];
	uint64_t batches;
	size_t i;
	char rc[RLEN];

	memset(o, 0, sizeof(o));
	for (i = 0; i < 7; i++) {
		(void)snprintf(rc, sizeof(rc), "rb-%zu", i);
		wmsg_init(&o[i].m, 1000 + (int)i, 0, rc);
	}
	wmsg_init(&o[7].m, 1003, 0, "rb-other");  /* races o[3] for 1003 */
	o[5].m.parts[1].part_no = 0;              /* the failing one */
	wone_batch(c, o, 8, 0, NULL, &batches);
	assert_int_equal(batches, 1);
	for (i = 0; i < 8; i++) {
		if (i == 5) {
			assert_int_equal(o[i].rc, -1);
			assert_int_equal(o[i].err.kind, ERR_STORE);
		} else {
			assert_int_equal(o[i].rc, 0);
			assert_int_equal(o[i].err.kind, ERR_NONE);
		}
	}
	/* 1003 twice in one batch: the first queued is NEW, the other DUP
	 * with the receipt the first stored */
	assert_int_equal(o[3].r.outcome + o[7].r.outcome,
	    STORE_NEW + STORE_DUPLICATE);
	assert_int_equal(o[3].r.receipt_len, o[7].r.receipt_len);
	assert_memory_equal(o[3].r.receipt, o[7].r.receipt,
	    o[3].r.receipt_len);
	for (i = 0; i < 8; i++)
		arena_free(o[i].a);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"), 6);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM payload"), 12);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM delivery"), 6);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox WHERE"
	    " message_id = 'w-1005@as4gw.test'"), 0);
	assert_int_equal(tq_int(c, "SELECT duplicates FROM inbox WHERE"
	    " message_id = 'w-1003@as4gw.test'"), 1);
}

/*
 * A batch of duplicates only (committed without its own fsync) counts them
 * and returns the stored receipt; a request of such a batch that turns out
 * NEW (its row was deleted after the batch's read, by another connection) is
 * undone and run again in a batch that syncs: it is stored, with its own
 * receipt.
 */
static void
t_batch_duplicates(void **state)
{
	const struct tctx *c = *state;
	struct store *s = wopen(c);
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct wone o[4];
	uint64_t batches;
	size_t i;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 4; i++) {
		wmsg_init(&o[i].m, 2000 + (int)i, 0, "stored");
		assert_int_equal(store_accept(s, &o[i].m.m, a, &r, &err), 0);
		assert_int_equal(r.outcome, STORE_NEW);
		wmsg_init(&o[i].m, 2000 + (int)i, 0, i == 2 ? NULL : "again");
	}
	/* the batch reads (rows present); then 2003's row goes */
	wone_batch(c, o, 4, 0,
	    "DELETE FROM payload WHERE message_id = 'w-2003@as4gw.test';"
	    "DELETE FROM delivery WHERE message_id = 'w-2003@as4gw.test';"
	    "DELETE FROM inbox WHERE message_id = 'w-2003@as4gw.test'",
	    &batches);
	assert_int_equal(batches, 2);  /* the NEW ran again in its own batch */
	for (i = 0; i < 4; i++) {
		assert_int_equal(o[i].rc, 0);
		assert_int_equal(o[i].r.outcome, i == 3 ? STORE_NEW :
		    STORE_DUPLICATE);
		assert_int_equal(o[i].r.receipt_len, i == 3 ? 5 : 6);
		assert_memory_equal(o[i].r.receipt, i == 3 ? "again" : "stored",
		    o[i].r.receipt_len);
		arena_free(o[i].a);
	}
	assert_int_equal(tq_int(c, "SELECT sum(duplicates) FROM inbox"), 3);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox WHERE"
	    " message_id = 'w-2003@as4gw.test' AND receipt = CAST('again' AS blob)"),
	    1);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM payload"), 8);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM delivery"), 4);
	/* the writer's connection is back to FULL after the NORMAL batch */
	assert_int_equal(store_sqlite_writer_conn(
	    (struct store_sqlite *)s)->sync_normal, 0);
	arena_free(a);
	store_close(s);
}

/* ---- probes ---------------------------------------------------------------- */

/*
 * Probe mode (receipt NULL): absent -> STORE_ABSENT and nothing written;
 * present -> DUPLICATE with the stored receipt; drifted -> DRIFT.  The absent
 * and drift answers need no write lock: they come even while another
 * connection holds SQLite's write lock (a writer would wait the busy
 * timeout and fail), and nothing is queued in the writer.
 */
static void
t_probe(void **state)
{
	const struct tctx *c = *state;
	struct store *s = wopen(c);
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct wmsg m;
	sqlite3 *lock = NULL;
	uint64_t b0, b1;
	size_t q;

	wmsg_init(&m, 3000, 0, "kept");
	assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
	assert_int_equal(sqlite3_open(c->path, &lock), SQLITE_OK);
	assert_int_equal(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	store_sqlite_writer_counts(wwriter(s), &q, &b0);
	wmsg_init(&m, 3001, 0, NULL);
	assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_ABSENT);
	assert_null(r.receipt);
	wmsg_init(&m, 3000, 1, NULL);                   /* drifted probe */
	assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_DRIFT);
	wmsg_init(&m, 3000, 1, "other");                /* drifted accept */
	assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_DRIFT);
	store_sqlite_writer_counts(wwriter(s), &q, &b1);
	assert_int_equal(b1, b0);                       /* no batch ran */
	assert_int_equal(sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL),
	    SQLITE_OK);
	(void)sqlite3_close(lock);
	wmsg_init(&m, 3000, 0, NULL);                   /* present */
	assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 1);
	assert_int_equal(r.receipt_len, 4);
	assert_memory_equal(r.receipt, "kept", 4);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM payload"), 2);
	arena_free(a);
	store_close(s);
}

/* A COMMIT that fails fails the whole batch: every request of it that
 * needed the write transaction gets ERR_STORE and nothing is stored (a
 * probe of an absent row, answered by the batch's read, is ABSENT); the
 * handles work afterwards. */
static void
t_batch_fails(void **state)
{
	const struct tctx *c = *state;
	struct wone o[4];
	uint64_t batches;
	size_t i;

	memset(o, 0, sizeof(o));
	for (i = 0; i < 4; i++)
		wmsg_init(&o[i].m, 6000 + (int)i, i == 2, i >= 2 ? NULL : "r");
	assert_int_equal(wexec(c, "INSERT INTO inbox (message_id,"
	    " from_party, to_party, service, action, conversation_id,"
	    " content_hash, receipt, received_at, partition_key) VALUES"
	    " ('w-6002@as4gw.test', 'urn:from', 't', 's', 'a', 'c',"
	    " zeroblob(32),"
	    " CAST('x' AS blob), 0, '2026-01')"),
	    SQLITE_OK);
	/* o[2]: a probe that is a duplicate */
	memset(o[2].m.m.content_hash, 0, STORE_HASH_LEN);
	memset(o[2].m.m.content_hash_v1, 0, STORE_HASH_LEN);
	wone_batch(c, o, 4, 1, NULL, &batches);
	assert_int_equal(batches, 1);
	for (i = 0; i < 4; i++) {
		assert_int_equal(o[i].rc, i == 3 ? 0 : -1);
		assert_int_equal(o[i].err.kind, i == 3 ? ERR_NONE : ERR_STORE);
		arena_free(o[i].a);
	}
	assert_int_equal(o[3].r.outcome, STORE_ABSENT);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(tq_int(c, "SELECT duplicates FROM inbox"), 0);
	memset(o, 0, sizeof(o));
	wmsg_init(&o[0].m, 6000, 0, "r");
	wone_batch(c, o, 1, 0, NULL, &batches);
	assert_int_equal(o[0].rc, 0);
	assert_int_equal(o[0].r.outcome, STORE_NEW);
	arena_free(o[0].a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		WT(t_batch_one_fails),
		WT(t_batch_duplicates),
		WT(t_probe),
		WT(t_batch_fails),
	};

	return cmocka_run_group_tests_name("store writer batch", tests, NULL,
	    NULL);
}
