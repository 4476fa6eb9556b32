/*
 * Unit tests for src/store/store_sqlite_ckpt.c: the WAL of a SQLite store is
 * checkpointed by a thread of its own after a commit leaves it long, and a
 * WAL grown by a large transaction is truncated back to journal_size_limit.
 * Each test gets a fresh database file in a temp directory.  No assertion
 * depends on timing: a test waits for the checkpoint thread's run counter
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

#include "store/store.h"
#include "store/store_sqlite_int.h"

#define RECEIVED_MS INT64_C(1767323045678)
#define MIB ((size_t)1 << 20)

/* The database of one test. */
struct cctx {
	char dir[64];
	char path[256];
	char dsn[300];
};

/* A fresh temp directory and a migrated database in it. */
static int
setup(void **state)
{
	struct cctx *c = calloc(1, sizeof(*c));
	struct store *s = NULL;
	struct err err = { 0 };

	if (c == NULL)
		return -1;
	(void)snprintf(c->dir, sizeof(c->dir), "/tmp/as4gw-ckpt-XXXXXX");
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
	struct cctx *c = *state;
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

/* A message "ck-<k>" with one part of len bytes (seeded pattern). */
struct cmsg {
	struct store_message m;
	struct store_part part;
	char id[64];
	unsigned char *data;
};

static void
cmsg_init(struct cmsg *t, int k, size_t len)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	(void)snprintf(t->id, sizeof(t->id), "ck-%d@as4gw.test", k);
	t->m.message_id = t->id;
	t->m.from_party = "urn:from";
	t->m.to_party = "urn:to";
	t->m.service = "svc";
	t->m.action = "act";
	t->m.conversation_id = "conv";
	t->m.pmode_id = "leg";
	t->m.partition_key = "2026-01";
	t->m.received_at_ms = RECEIVED_MS;
	memset(t->m.content_hash, 0x40, STORE_HASH_LEN);
	memcpy(t->m.content_hash, &k, sizeof(k));
	memcpy(t->m.content_hash_v1, t->m.content_hash, STORE_HASH_LEN);
	t->m.field_hashes = t->m.content_hash;
	t->m.field_hashes_len = STORE_HASH_LEN;
	t->m.receipt = (const unsigned char *)"receipt";
	t->m.receipt_len = 7;
	t->data = malloc(len > 0 ? len : 1);
	assert_non_null(t->data);
	for (i = 0; i < len; i++)
		t->data[i] = (unsigned char)(i * 131 + (size_t)k);
	t->part.part_no = 0;
	t->part.content_id = "cid:a";
	t->part.mime_type = "application/octet-stream";
	t->part.data = t->data;
	t->part.len = len;
	t->m.parts = &t->part;
	t->m.n_parts = 1;
}

/* Accept t as NEW on s. */
static void
caccept(struct store *s, struct cmsg *t)
{
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };

	assert_int_equal(store_accept(s, &t->m, a, &r, &err), 0);
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
cfile_int(const struct cctx *c, const char *sql)
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
	const struct cctx *c = *state;
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
	const struct cctx *c = *state;
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
	const struct cctx *c = *state;
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_ckpt_copies_into_file,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(t_ckpt_small_commit_waits,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(t_ckpt_wal_truncated,
		    setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
