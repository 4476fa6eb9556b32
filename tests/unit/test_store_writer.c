/*
 * Unit tests for src/store/store_sqlite_writer.c, many writers on one file:
 * the writers of one process on one SQLite file share a queue, commits
 * (group commit) and one connection, and none of the store's guarantees
 * changes — 16 racing threads, two processes, the registry of writers and
 * the writer's one connection.  (The batches themselves:
 * test_store_writer_batch.c.)  Each test gets a fresh migrated database
 * file in a temp directory (testwriter.h); rows are inspected with sqlite3
 * directly.  No assertion depends on timing.
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
#include <unistd.h>
#include <sys/wait.h>

#include <sqlite3.h>

#include "testwriter.h"

#define N_PER_THREAD 200
#define N_PRE 50                /* ids inserted before the threads start */
#define N_IDS 450               /* ids 0..N_PRE-1 pre-inserted, the rest not */

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
	const struct tctx *c;
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
wmix_check(const struct tctx *c, struct wthread *th, struct wid *ids)
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
		assert_int_equal(tq_int(c, q), d->dups);
		(void)snprintf(q, sizeof(q), "SELECT count(*) FROM payload"
		    " WHERE message_id = 'w-%d@as4gw.test'", k);
		assert_int_equal(tq_int(c, q), 2);
		/* drift changed nothing: the stored hash is variant 0's */
		(void)snprintf(q, sizeof(q), "SELECT hex(content_hash) LIKE"
		    " '%%40404040' FROM inbox WHERE message_id = 'w-%d@as4gw.test'",
		    k);
		assert_int_equal(tq_int(c, q), 1);
		(void)snprintf(stored, sizeof(stored), "pre-%d", k);
		if (d->winner == NULL)
			d->winner = k < N_PRE ? strdup(stored) : NULL;
	}
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"), rows);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM delivery"), rows);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM payload"), 2 * rows);
}

/* Every DUPLICATE carried the receipt stored by its id's NEW (or pre-). */
static void
wmix_check_receipts(const struct tctx *c, struct wthread *th, struct wid *ids)
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
		assert_int_equal(tq_int(c, q), 1);
	}
}

/* Insert ids 0..N_PRE-1 (receipt "pre-<k>") before the mix starts. */
static void
wmix_preinsert(const struct tctx *c)
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
	const struct tctx *c = *state;
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
wproc_child(const struct tctx *c, int p)
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
	const struct tctx *c = *state;
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
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"), 100);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM inbox"
	    " WHERE duplicates = 1"), 100);
	assert_int_equal(tq_int(c, "SELECT count(*) FROM payload"), 200);
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
	const struct tctx *c = *state;
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
	const struct tctx *c = *state;
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
	assert_int_equal(tq_int(c, "SELECT count(*) FROM delivery"
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
		WT(t_mix),
		WT(t_two_processes),
		WT(t_registry),
		WT(t_writer_conn),
	};

	return cmocka_run_group_tests_name("store writer", tests, NULL, NULL);
}
