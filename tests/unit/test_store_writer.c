/*
 * Unit tests for src/store/store_sqlite_writer.c: the writers of one process
 * on one SQLite file share a queue, commits (group commit) and one
 * connection, and none of the store's guarantees changes.  Each test gets
 * a fresh database file in a temp directory; rows are inspected with
 * sqlite3 directly.  No assertion depends on timing: where a test needs
 * requests to meet in one batch it holds the writer and polls the queue
 * length until they are all queued.
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
#include <unistd.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_sqlite_int.h"

#define N_THREADS 16
#define N_PER_THREAD 200
#define N_PRE 50                /* ids inserted before the threads start */
#define N_IDS 450               /* ids 0..N_PRE-1 pre-inserted, the rest not */
#define RECEIVED_MS INT64_C(1767323045678)
#define RLEN 32

/* The database of one test. */
struct wctx {
	char dir[64];
	char path[256];
	char dsn[300];
};

/* A fresh temp directory and a migrated database in it. */
static int
setup(void **state)
{
	struct wctx *c = calloc(1, sizeof(*c));
	struct store *s = NULL;
	struct err err = { 0 };

	if (c == NULL)
		return -1;
	(void)snprintf(c->dir, sizeof(c->dir), "/tmp/as4gw-writer-XXXXXX");
	if (mkdtemp(c->dir) == NULL)
		return -1;
	(void)snprintf(c->path, sizeof(c->path), "%s/inbox.db", c->dir);
	(void)snprintf(c->dsn, sizeof(c->dsn), "sqlite:%s", c->path);
	if (store_open(c->dsn, &s, &err) == -1 || store_migrate(s, &err) == -1)
		return -1;
	store_close(s);
	*state = c;
	return 0;
}

/* Remove the database files and the directory. */
static int
teardown(void **state)
{
	struct wctx *c = *state;
	const char *sfx[] = { "", "-wal", "-shm" };
	char p[300];
	size_t i;

	for (i = 0; i < 3; i++) {
		(void)snprintf(p, sizeof(p), "%s%s", c->path, sfx[i]);
		(void)unlink(p);
	}
	(void)rmdir(c->dir);
	free(c);
	return 0;
}

/* Open a store on the test's file (migrated already). */
static struct store *
wopen(const struct wctx *c)
{
	struct store *s = NULL;
	struct err err = { 0 };

	if (store_open(c->dsn, &s, &err) == -1)
		fail_msg("open: %s", err.msg);
	return s;
}

/* The writer behind a store handle. */
static struct store_sqlite_writer *
wwriter(struct store *s)
{
	return ((struct store_sqlite *)s)->w;
}

/* One integer from sql over a fresh connection. */
static int64_t
wint(const struct wctx *c, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n;

	assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	n = sqlite3_column_int64(st, 0);
	(void)sqlite3_finalize(st);
	(void)sqlite3_close(db);
	return n;
}

/* Run sql (no result) over a fresh connection: the SQLite result code
 * (no cmocka assertion: it also runs on other threads). */
static int
wexec(const struct wctx *c, const char *sql)
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

/* ---- messages --------------------------------------------------------- */

struct wmsg {
	struct store_message m;
	struct store_part parts[2];
	char id[64];
	char receipt[RLEN];
	unsigned char data[2][16];
};

/* Message "w-<k>" with two parts; variant != 0 changes the content (hash). */
static void
wmsg_init(struct wmsg *t, int k, int variant, const char *receipt)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	(void)snprintf(t->id, sizeof(t->id), "w-%d@as4gw.test", k);
	t->m.message_id = t->id;
	t->m.from_party = "urn:from";
	t->m.to_party = "urn:to";
	t->m.service = "svc";
	t->m.action = "act";
	t->m.conversation_id = "conv";
	t->m.pmode_id = "leg";
	t->m.partition_key = "2026-01";
	t->m.received_at_ms = RECEIVED_MS;
	memset(t->m.content_hash, 0x40 + variant, STORE_HASH_LEN);
	memcpy(t->m.content_hash, &k, sizeof(k));
	memcpy(t->m.content_hash_v1, t->m.content_hash, STORE_HASH_LEN);
	t->m.field_hashes = t->m.content_hash;  /* one digest: a v2 row */
	t->m.field_hashes_len = STORE_HASH_LEN;
	if (receipt != NULL) {
		(void)snprintf(t->receipt, sizeof(t->receipt), "%s", receipt);
		t->m.receipt = (const unsigned char *)t->receipt;
		t->m.receipt_len = strlen(t->receipt);
	}
	for (i = 0; i < 2; i++) {
		memset(t->data[i], 'a' + (int)i + variant, sizeof(t->data[i]));
		t->parts[i].part_no = (int)i;
		t->parts[i].content_id = i == 0 ? "cid:a" : "cid:b";
		t->parts[i].mime_type = "application/octet-stream";
		t->parts[i].data = t->data[i];
		t->parts[i].len = sizeof(t->data[i]);
	}
	t->m.parts = t->parts;
	t->m.n_parts = 2;
}

/* ---- many threads, one file -------------------------------------------- */

enum wkind { WK_NEW, WK_PROBE, WK_DRIFT, WK_PRE };

/* What one accept of the mix returned. */
struct wres {
	int k;
	enum wkind kind;
	int rc;
	enum store_outcome outcome;
	char sent[RLEN];        /* the receipt sent ("" for a probe) */
	char got[RLEN];         /* the receipt returned */
	int64_t duplicates;
};

struct wthread {
	const struct wctx *c;
	int t;
	struct wres res[N_PER_THREAD];
};

/* The i-th accept of thread t: which id, which kind (see t_mix). */
static void
wmix_pick(int t, int i, int *k, enum wkind *kind)
{
	switch (i % 10) {
	case 0:
		*kind = WK_DRIFT;
		*k = (t + i) % N_PRE;
		break;
	case 1:
		*kind = WK_PROBE;
		*k = N_PRE + (t * 31 + i * 17) % (N_IDS - N_PRE);
		break;
	case 2:
		*kind = WK_PRE;
		*k = (t * 3 + i) % N_PRE;
		break;
	default:
		/* groups of four threads race for the same ids */
		*kind = WK_NEW;
		*k = N_PRE + (i * 7 + t % 4) % (N_IDS - N_PRE);
		break;
	}
}

/* One accept of the mix, recorded into r. */
static void
wmix_one(struct store *s, int t, int i, struct wres *r)
{
	struct arena *a = arena_new(0);
	struct store_result sr;
	struct err err = { 0 };
	struct wmsg m;

	wmix_pick(t, i, &r->k, &r->kind);
	if (r->kind != WK_PROBE)
		(void)snprintf(r->sent, sizeof(r->sent), "r-%d-%d-%d", r->k, t,
		    i);
	wmsg_init(&m, r->k, r->kind == WK_DRIFT,
	    r->kind == WK_PROBE ? NULL : r->sent);
	memset(&sr, 0, sizeof(sr));
	r->rc = store_accept(s, &m.m, a, &sr, &err);
	r->outcome = sr.outcome;
	r->duplicates = sr.duplicates;
	if (sr.receipt != NULL && sr.receipt_len < RLEN)
		memcpy(r->got, sr.receipt, sr.receipt_len);
	arena_free(a);
}

/* A thread of the mix: its own store handle on the shared file. */
static void *
wmix_thread(void *arg)
{
	struct wthread *w = arg;
	struct store *s = wopen(w->c);
	int i;

	for (i = 0; i < N_PER_THREAD; i++)
		wmix_one(s, w->t, i, &w->res[i]);
	store_close(s);
	return NULL;
}

/* Per id: what the threads saw, summed up. */
struct wid {
	int news, dups, sent;
	const char *winner;     /* the receipt the NEW stored */
};

/* Check every result of the mix against the rows (see t_mix). */
static void
wmix_check(const struct wctx *c, struct wthread *th, struct wid *ids)
{
	char q[160], stored[RLEN];
	size_t t, i;
	int k, rows = N_PRE;

	for (t = 0; t < N_THREADS; t++)
		for (i = 0; i < N_PER_THREAD; i++) {
			struct wres *r = &th[t].res[i];
			struct wid *d = &ids[r->k];

			assert_int_equal(r->rc, 0);
			d->sent += r->kind == WK_NEW;
			if (r->kind == WK_DRIFT) {
				assert_int_equal(r->outcome, STORE_DRIFT);
				continue;
			}
			if (r->outcome == STORE_NEW) {
				assert_int_equal(r->kind, WK_NEW);
				assert_string_equal(r->got, r->sent);
				d->winner = r->sent;
				d->news++;
			} else if (r->outcome == STORE_DUPLICATE)
				d->dups++;
			else {
				assert_int_equal(r->outcome, STORE_ABSENT);
				assert_int_equal(r->kind, WK_PROBE);
			}
		}
	for (k = 0; k < N_IDS; k++) {
		struct wid *d = &ids[k];

		if (k >= N_PRE) {
			assert_int_equal(d->news, d->sent > 0 ? 1 : 0);
			rows += d->sent > 0;
		}
		if (d->news + d->dups == 0 && k >= N_PRE)
			continue;
		(void)snprintf(q, sizeof(q), "SELECT duplicates FROM inbox"
		    " WHERE message_id = 'w-%d@as4gw.test'", k);
		assert_int_equal(wint(c, q), d->dups);
		(void)snprintf(q, sizeof(q), "SELECT count(*) FROM payload"
		    " WHERE message_id = 'w-%d@as4gw.test'", k);
		assert_int_equal(wint(c, q), 2);
		/* drift changed nothing: the stored hash is variant 0's */
		(void)snprintf(q, sizeof(q), "SELECT hex(content_hash) LIKE"
		    " '%%40404040' FROM inbox WHERE message_id = 'w-%d@as4gw.test'",
		    k);
		assert_int_equal(wint(c, q), 1);
		(void)snprintf(stored, sizeof(stored), "pre-%d", k);
		if (d->winner == NULL)
			d->winner = k < N_PRE ? strdup(stored) : NULL;
	}
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"), rows);
	assert_int_equal(wint(c, "SELECT count(*) FROM delivery"), rows);
	assert_int_equal(wint(c, "SELECT count(*) FROM payload"), 2 * rows);
}

/* Every DUPLICATE carried the receipt stored by its id's NEW (or pre-). */
static void
wmix_check_receipts(const struct wctx *c, struct wthread *th, struct wid *ids)
{
	char q[160];
	size_t t, i;
	int k;

	for (t = 0; t < N_THREADS; t++)
		for (i = 0; i < N_PER_THREAD; i++) {
			struct wres *r = &th[t].res[i];

			if (r->outcome != STORE_DUPLICATE)
				continue;
			assert_non_null(ids[r->k].winner);
			assert_string_equal(r->got, ids[r->k].winner);
		}
	for (k = 0; k < N_IDS; k++) {
		if (ids[k].winner == NULL)
			continue;
		(void)snprintf(q, sizeof(q), "SELECT CAST(receipt AS text) = '%s'"
		    " FROM inbox WHERE message_id = 'w-%d@as4gw.test'",
		    ids[k].winner, k);
		assert_int_equal(wint(c, q), 1);
	}
}

/* Insert ids 0..N_PRE-1 (receipt "pre-<k>") before the mix starts. */
static void
wmix_preinsert(const struct wctx *c)
{
	struct store *s = wopen(c);
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct wmsg m;
	char rc[RLEN];
	int k;

	for (k = 0; k < N_PRE; k++) {
		(void)snprintf(rc, sizeof(rc), "pre-%d", k);
		wmsg_init(&m, k, 0, rc);
		assert_int_equal(store_accept(s, &m.m, a, &r, &err), 0);
		assert_int_equal(r.outcome, STORE_NEW);
	}
	arena_free(a);
	store_close(s);
}

/*
 * 16 threads x 200 accepts, each thread with its own handle on one file: a
 * mix of new messages (groups of four threads racing for the same ids, each
 * sender with its own receipt), duplicates of pre-inserted rows, drifted
 * versions of them and probes.  Afterwards: exactly one NEW and one row per
 * id sent, each DUPLICATE returned the receipt the NEW stored, the counters
 * equal the DUPLICATEs returned, drift changed nothing, nothing else stored.
 */
static void
t_mix(void **state)
{
	const struct wctx *c = *state;
	struct wthread *th = calloc(N_THREADS, sizeof(*th));
	struct wid *ids = calloc(N_IDS, sizeof(*ids));
	pthread_t tid[N_THREADS];
	int t, k;

	assert_non_null(th);
	assert_non_null(ids);
	wmix_preinsert(c);
	for (t = 0; t < N_THREADS; t++) {
		th[t].c = c;
		th[t].t = t;
		assert_int_equal(pthread_create(&tid[t], NULL, wmix_thread,
		    &th[t]), 0);
	}
	for (t = 0; t < N_THREADS; t++)
		assert_int_equal(pthread_join(tid[t], NULL), 0);
	wmix_check(c, th, ids);
	wmix_check_receipts(c, th, ids);
	for (k = 0; k < N_PRE; k++)
		free((char *)(uintptr_t)ids[k].winner);
	free(ids);
	free(th);
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
	const struct wctx *c;
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
wone_batch(const struct wctx *c, struct wone *o, size_t n, int refuse,
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
	const struct wctx *c = *state;
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
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"), 6);
	assert_int_equal(wint(c, "SELECT count(*) FROM payload"), 12);
	assert_int_equal(wint(c, "SELECT count(*) FROM delivery"), 6);
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox WHERE"
	    " message_id = 'w-1005@as4gw.test'"), 0);
	assert_int_equal(wint(c, "SELECT duplicates FROM inbox WHERE"
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
	const struct wctx *c = *state;
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
	assert_int_equal(wint(c, "SELECT sum(duplicates) FROM inbox"), 3);
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox WHERE"
	    " message_id = 'w-2003@as4gw.test' AND receipt = CAST('again' AS blob)"),
	    1);
	assert_int_equal(wint(c, "SELECT count(*) FROM payload"), 8);
	assert_int_equal(wint(c, "SELECT count(*) FROM delivery"), 4);
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
	const struct wctx *c = *state;
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
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(wint(c, "SELECT count(*) FROM payload"), 2);
	arena_free(a);
	store_close(s);
}

/* ---- processes, registry ------------------------------------------------- */

struct wproc {
	struct store *s;
	int p, t, bad;
};

/* Thread of a child process: ids 4000..4099, both processes send them all. */
static void *
wproc_thread(void *arg)
{
	struct wproc *w = arg;
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct wmsg m;
	char rc[RLEN];
	int k;

	for (k = 4000 + w->t; k < 4100; k += 4) {
		(void)snprintf(rc, sizeof(rc), "p%d-%d", w->p, k);
		wmsg_init(&m, k, 0, rc);
		if (store_accept(w->s, &m.m, a, &r, &err) == -1 ||
		    (r.outcome != STORE_NEW && r.outcome != STORE_DUPLICATE))
			w->bad++;
	}
	arena_free(a);
	return NULL;
}

/* A child process: four threads with their own handles; exit 0 if all ok. */
static int
wproc_child(const struct wctx *c, int p)
{
	struct wproc w[4];
	pthread_t tid[4];
	int t, bad = 0;
	struct err err = { 0 };

	for (t = 0; t < 4; t++) {
		w[t].p = p;
		w[t].t = t;
		w[t].bad = 0;
		if (store_open(c->dsn, &w[t].s, &err) == -1)
			return 2;
		if (pthread_create(&tid[t], NULL, wproc_thread, &w[t]) != 0)
			return 3;
	}
	for (t = 0; t < 4; t++) {
		(void)pthread_join(tid[t], NULL);
		bad += w[t].bad;
		store_close(w[t].s);
	}
	return bad == 0 ? 0 : 1;
}

/*
 * Two processes writing the same file at once (each with its own writer;
 * they meet through SQLite's lock and busy timeout): every id stored once,
 * sent twice, so counted once as a duplicate.  The parent keeps a handle
 * open across fork(): the children must not reuse its writer.
 */
static void
t_two_processes(void **state)
{
	const struct wctx *c = *state;
	struct store *keep = wopen(c);
	pid_t pid[2];
	int p, status;

	for (p = 0; p < 2; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (pid[p] == 0)
			_exit(wproc_child(c, p));
	}
	for (p = 0; p < 2; p++) {
		assert_int_equal(waitpid(pid[p], &status, 0), pid[p]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"), 100);
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"
	    " WHERE duplicates = 1"), 100);
	assert_int_equal(wint(c, "SELECT count(*) FROM payload"), 200);
	store_close(keep);
}

/*
 * The registry: handles on one file share one writer, also when the path
 * is spelled differently or reached through a symlink; a handle closed does
 * not disturb the others; once all are closed a new open works; an
 * in-memory database gets a writer of its own.
 */
static void
t_registry(void **state)
{
	const struct wctx *c = *state;
	struct store *s1 = wopen(c), *s2 = NULL, *s3 = NULL, *m1 = NULL,
	    *m2 = NULL;
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct wmsg m;
	char dsn[400], link[300];

	(void)snprintf(dsn, sizeof(dsn), "sqlite:%s/./inbox.db", c->dir);
	assert_int_equal(store_open(dsn, &s2, &err), 0);
	(void)snprintf(link, sizeof(link), "%s/link.db", c->dir);
	assert_int_equal(symlink(c->path, link), 0);
	(void)snprintf(dsn, sizeof(dsn), "sqlite:%s", link);
	assert_int_equal(store_open(dsn, &s3, &err), 0);
	assert_ptr_equal(wwriter(s1), wwriter(s2));
	assert_ptr_equal(wwriter(s1), wwriter(s3));
	store_close(s1);
	wmsg_init(&m, 5000, 0, "r");
	assert_int_equal(store_accept(s2, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_NEW);
	store_close(s2);
	assert_int_equal(store_accept(s3, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_DUPLICATE);
	store_close(s3);
	(void)unlink(link);
	s1 = wopen(c);
	assert_int_equal(store_accept(s1, &m.m, a, &r, &err), 0);
	assert_int_equal(r.duplicates, 2);
	store_close(s1);
	assert_int_equal(store_open("sqlite::memory:", &m1, &err), 0);
	assert_int_equal(store_open("sqlite::memory:", &m2, &err), 0);
	assert_ptr_not_equal(wwriter(m1), wwriter(m2));
	assert_ptr_equal(store_sqlite_writer_conn((struct store_sqlite *)m1),
	    (struct store_sqlite *)m1);
	assert_int_equal(store_migrate(m1, &err), 0);
	assert_int_equal(store_accept(m1, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_NEW);
	store_close(m1);
	store_close(m2);
	store_close(NULL);
	arena_free(a);
}

/* A COMMIT that fails fails the whole batch: every request of it that
 * needed the write transaction gets ERR_STORE and nothing is stored (a
 * probe of an absent row, answered by the batch's read, is ABSENT); the
 * handles work afterwards. */
static void
t_batch_fails(void **state)
{
	const struct wctx *c = *state;
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
	assert_int_equal(wint(c, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(wint(c, "SELECT duplicates FROM inbox"), 0);
	memset(o, 0, sizeof(o));
	wmsg_init(&o[0].m, 6000, 0, "r");
	wone_batch(c, o, 1, 0, NULL, &batches);
	assert_int_equal(o[0].rc, 0);
	assert_int_equal(o[0].r.outcome, STORE_NEW);
	arena_free(o[0].a);
}

/*
 * All writes of the process go through the writer's one connection: accepts
 * (any handle), claim, finish, purge and migrate change nothing through the
 * handles' own connections.  The writer's connection outlives a closed
 * handle and is closed with the last one (SQLite then removes the -wal
 * file, which only the last connection on the file does).
 */
static void
t_writer_conn(void **state)
{
	const struct wctx *c = *state;
	struct store *s1 = wopen(c), *s2 = wopen(c);
	struct store_sqlite *h1 = (struct store_sqlite *)s1,
	    *h2 = (struct store_sqlite *)s2, *wc = store_sqlite_writer_conn(h1);
	const struct store_purge p = { .default_cutoff_ms = INT64_MAX,
	    .batch = 10, .undelivered = 1 };
	struct arena *a = arena_new(0);
	struct store_delivery d;
	struct store_result r;
	struct err err = { 0 };
	struct wmsg m;
	size_t purged, kept;
	char wal[300];

	assert_ptr_equal(wc, store_sqlite_writer_conn(h2));
	assert_ptr_not_equal(wc, h1);
	wmsg_init(&m, 7000, 0, "r");
	assert_int_equal(store_accept(s1, &m.m, a, &r, &err), 0);
	assert_int_equal(store_accept(s2, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_DUPLICATE);
	assert_int_equal(store_migrate(s1, &err), 0);
	assert_int_equal(store_claim(s1, RECEIVED_MS, 1000, a, &d, &err), 1);
	assert_int_equal(store_finish(s1, m.m.from_party, m.id, 1,
	    RECEIVED_MS, 0, &err), 0);
	assert_int_equal(wint(c, "SELECT count(*) FROM delivery"
	    " WHERE state = 'done'"), 1);
	assert_int_equal(store_purge(s2, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 1);
	assert_int_equal(sqlite3_total_changes64(h1->db) +
	    sqlite3_total_changes64(h2->db), 0);
	assert_true(sqlite3_total_changes64(wc->db) >= 6);
	store_close(s1);
	assert_int_equal(store_accept(s2, &m.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_NEW);
	(void)snprintf(wal, sizeof(wal), "%s-wal", c->path);
	assert_int_equal(access(wal, F_OK), 0);
	store_close(s2);
	assert_int_equal(access(wal, F_OK), -1);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_mix, setup, teardown),
		cmocka_unit_test_setup_teardown(t_batch_one_fails, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(t_batch_duplicates, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(t_probe, setup, teardown),
		cmocka_unit_test_setup_teardown(t_two_processes, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(t_registry, setup, teardown),
		cmocka_unit_test_setup_teardown(t_batch_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(t_writer_conn, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
