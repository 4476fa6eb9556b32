/*
 * Unit tests for src/store/store_sqlite_ckpt.c: the WAL of a SQLite store is
 * checkpointed by a thread of its own after a commit leaves it long, and a
 * WAL grown by a large transaction is truncated back to journal_size_limit.
 * Each test gets a fresh migrated database file in a temp directory
 * (testwriter.h, shared with the writer tests).  No assertion depends on
 * timing: a test waits for the checkpoint thread's run counter
 * to move (and fails only if it never does within a minute).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "testwriter.h"

#define MIB ((size_t)1 << 20)

/* A message "w-<k>" with one part of len bytes (seeded pattern). */
struct cmsg {
	struct wmsg w;
	unsigned char *data;
};

static void
cmsg_init(struct cmsg *t, int k, size_t len)
{
	size_t i;

	wmsg_init(&t->w, k, 0, "receipt");
	t->data = malloc(len > 0 ? len : 1);
	assert_non_null(t->data);
	for (i = 0; i < len; i++)
		t->data[i] = (unsigned char)(i * 131 + (size_t)k);
	t->w.parts[0].data = t->data;
	t->w.parts[0].len = len;
	t->w.m.n_parts = 1;
}

/* Accept t as NEW on s. */
static void
caccept(struct store *s, struct cmsg *t)
{
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };

	assert_int_equal(store_accept(s, &t->w.m, a, &r, &err), 0);
	assert_int_equal(r.outcome, STORE_NEW);
	arena_free(a);
}

/* The checkpoint thread of s's file has run more than n times; fails the
 * test when it has not within a minute (it is woken by the commit). */
static void
cwait_runs(struct store *s, uint64_t n)
{
	struct store_sqlite_writer *w = ((struct store_sqlite *)s)->w;
	const struct timespec ms10 = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 6000; i++) {
		if (store_sqlite_writer_ckpt_runs(w) > n)
			return;
		(void)nanosleep(&ms10, NULL);
	}
	fail_msg("the checkpoint thread never ran");
}

/* One integer from sql on the database FILE alone (immutable: the WAL is
 * not read), i.e. what a checkpoint has copied there. */
static int64_t
cfile_int(const struct tctx *c, const char *sql)
{
	char uri[400];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t n;

	(void)snprintf(uri, sizeof(uri), "file:%s?immutable=1", c->path);
	assert_int_equal(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_URI, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	n = sqlite3_column_int64(st, 0);
	(void)sqlite3_finalize(st);
	(void)sqlite3_close(db);
	return n;
}

/*
 * A commit that leaves more than STORE_SQLITE_CKPT_FRAMES frames (a 20 MiB
 * payload: 1280+ pages of 16 KiB) wakes the thread, whose checkpoint copies
 * the rows into the database file: read without the WAL, the file then
 * holds the message and all 20 chunks, while the handle still reads them
 * back whole.
 */
static void
t_ckpt_copies_into_file(void **state)
{
	const struct tctx *c = *state;
	struct store *s = NULL;
	struct err err = { 0 };
	struct cmsg m;
	uint64_t runs;

	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	runs = store_sqlite_writer_ckpt_runs(((struct store_sqlite *)s)->w);
	cmsg_init(&m, 1, 20 * MIB);
	caccept(s, &m);
	cwait_runs(s, runs);
	assert_int_equal(cfile_int(c, "SELECT count(*) FROM inbox"), 1);
	assert_int_equal(cfile_int(c,
	    "SELECT count(*) FROM payload_chunk"), 20);
	assert_int_equal(cfile_int(c,
	    "SELECT sum(length(content)) FROM payload_chunk"),
	    (int64_t)(20 * MIB));
	free(m.data);
	store_close(s);
}

/* A small commit does not wake the thread (below the frame count). */
static void
t_ckpt_small_commit_waits(void **state)
{
	const struct tctx *c = *state;
	struct store *s = NULL;
	struct err err = { 0 };
	struct cmsg m;
	uint64_t runs;

	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	runs = store_sqlite_writer_ckpt_runs(((struct store_sqlite *)s)->w);
	cmsg_init(&m, 2, 100);
	caccept(s, &m);
	assert_int_equal(store_sqlite_writer_ckpt_runs(
	    ((struct store_sqlite *)s)->w), runs);
	assert_int_equal(cfile_int(c, "SELECT count(*) FROM inbox"), 0);
	free(m.data);
	store_close(s);
}

/*
 * journal_size_limit: a 72 MiB payload grows the WAL past 64 MiB; once the
 * thread has checkpointed it, the next commit restarts the WAL and
 * truncates the file to the limit (STORE_SQLITE_WAL_LIMIT_SQL).
 */
static void
t_ckpt_wal_truncated(void **state)
{
	const struct tctx *c = *state;
	struct store *s = NULL;
	struct err err = { 0 };
	struct cmsg big, small;
	struct stat st;
	char wal[300];
	uint64_t runs;

	(void)snprintf(wal, sizeof(wal), "%s-wal", c->path);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	runs = store_sqlite_writer_ckpt_runs(((struct store_sqlite *)s)->w);
	cmsg_init(&big, 3, 72 * MIB);
	caccept(s, &big);
	assert_int_equal(stat(wal, &st), 0);
	assert_true(st.st_size > (off_t)(72 * MIB));
	cwait_runs(s, runs);
	cmsg_init(&small, 4, 100);
	caccept(s, &small);
	assert_int_equal(stat(wal, &st), 0);
	assert_true(st.st_size <= (off_t)atoll(STORE_SQLITE_WAL_LIMIT_SQL));
	assert_int_equal(cfile_int(c,
	    "SELECT count(*) FROM payload_chunk"), 72);
	free(big.data);
	free(small.data);
	store_close(s);
}

/*
 * A large payload's WAL is sent on to the disk while its chunks are
 * written (every 32 MiB: one kick for 40 MiB), so the COMMIT's fsync does
 * not wait for all of it; a small message does not.
 */
static void
t_wal_kicked(void **state)
{
	const struct tctx *c = *state;
	struct store *s = NULL;
	struct err err = { 0 };
	struct cmsg big, small;
	uint64_t kicks;

	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	kicks = store_sqlite_wal_kicks();
	cmsg_init(&small, 5, 100);
	caccept(s, &small);
	assert_true(store_sqlite_wal_kicks() == kicks);
	cmsg_init(&big, 6, 40 * MIB);
	caccept(s, &big);
	assert_true(store_sqlite_wal_kicks() == kicks + 1);
	free(big.data);
	free(small.data);
	store_close(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		WT(t_ckpt_copies_into_file),
		WT(t_ckpt_small_commit_waits),
		WT(t_ckpt_wal_truncated),
		WT(t_wal_kicked),
	};

	return cmocka_run_group_tests_name("store ckpt", tests, NULL, NULL);
}
