/*
 * Unit tests for src/store: the same table of cases against SQLite (a temp
 * directory under /tmp) and, when AS4GW_TEST_PG_DSN is set, PostgreSQL (each
 * test in its own schema, dropped afterwards).  Rows are inspected with
 * sqlite3 / libpq directly, never through the store API.
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

#include <libpq-fe.h>
#include <sqlite3.h>

#include "testutil.h"
#include "store/store.h"

#define N_THREADS 16
#define BIG_LEN ((size_t)1 << 20)
#define RECEIVED_MS INT64_C(1767323045678)

/* One backend under test; the state every test receives. */
struct tctx {
	int pg;
	int skip;               /* pg requested but AS4GW_TEST_PG_DSN unset */
	char dsn[2048];         /* what the store opens */
	char path[256];         /* sqlite: the database file */
	char dir[64];           /* sqlite: its temp directory */
	char base_dsn[1024];    /* pg: AS4GW_TEST_PG_DSN */
	char schema[64];        /* pg: the per-test schema */
	char app[64];           /* pg: application_name of store connections */
};

static struct tctx ctx_sqlite = { .pg = 0 };
static struct tctx ctx_pg = { .pg = 1 };

/* Keep NOTICEs ("drop cascades to ...") out of the test output. */
static void
pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Run sql over a fresh admin connection to the base DSN (pg only). */
static void
pg_admin(const struct tctx *c, const char *sql)
{
	PGconn *conn = PQconnectdb(c->base_dsn);
	PGresult *res;

	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	(void)PQsetNoticeProcessor(conn, pg_quiet, NULL);
	res = PQexec(conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
}

/* A fresh temp directory; the database file is created by the store. */
static int
setup_sqlite(struct tctx *c)
{
	(void)snprintf(c->dir, sizeof(c->dir), "/tmp/as4gw-store-XXXXXX");
	if (mkdtemp(c->dir) == NULL)
		return -1;
	(void)snprintf(c->path, sizeof(c->path), "%s/inbox.db", c->dir);
	(void)snprintf(c->dsn, sizeof(c->dsn), "sqlite:%s", c->path);
	return 0;
}

/*
 * A fresh schema, reached through search_path in the store's DSN; the
 * application_name lets a test find the store's server processes.
 */
static int
setup_pg(struct tctx *c)
{
	static int serial;
	const char *env = getenv("AS4GW_TEST_PG_DSN");
	char sql[128];

	c->skip = env == NULL || *env == '\0';
	if (c->skip)
		return 0;
	(void)snprintf(c->base_dsn, sizeof(c->base_dsn), "%s", env);
	(void)snprintf(c->schema, sizeof(c->schema), "as4gw_test_%ld_%d",
	    (long)getpid(), ++serial);
	(void)snprintf(c->app, sizeof(c->app), "as4gw_store_test_%ld",
	    (long)getpid());
	(void)snprintf(c->dsn, sizeof(c->dsn),
	    "%s%coptions=-csearch_path%%3D%s&application_name=%s", env,
	    strchr(env, '?') != NULL ? '&' : '?', c->schema, c->app);
	(void)snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", c->schema);
	pg_admin(c, sql);
	return 0;
}

/* Per-test setup for the backend in *state. */
static int
setup(void **state)
{
	struct tctx *c = *state;

	return c->pg ? setup_pg(c) : setup_sqlite(c);
}

/* Drop the schema / remove the database files. */
static int
teardown(void **state)
{
	struct tctx *c = *state;
	char p[300];

	if (c->pg && !c->skip) {
		(void)snprintf(p, sizeof(p), "DROP SCHEMA %s CASCADE", c->schema);
		pg_admin(c, p);
	} else if (!c->pg) {
		(void)unlink(c->path);
		(void)snprintf(p, sizeof(p), "%s-wal", c->path);
		(void)unlink(p);
		(void)snprintf(p, sizeof(p), "%s-shm", c->path);
		(void)unlink(p);
		(void)rmdir(c->dir);
	}
	return 0;
}

#define NEED(c) do { \
	if ((c)->skip) \
		testutil_skip("AS4GW_TEST_PG_DSN not set: postgresql store test"); \
} while (0)

/* ---- inspection through the backend library ------------------------- */

/* One row, one column of sql as bytes (malloc'd; NULL for SQL NULL). */
static unsigned char *
tq_value(const struct tctx *c, const char *sql, size_t *ret_len)
{
	unsigned char *out = NULL;

	*ret_len = 0;
	if (c->pg) {
		PGconn *conn = PQconnectdb(c->dsn);
		PGresult *res = PQexecParams(conn, sql, 0, NULL, NULL, NULL,
		    NULL, 1);

		if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
			fail_msg("%s: %s", sql, PQerrorMessage(conn));
		if (!PQgetisnull(res, 0, 0)) {
			*ret_len = (size_t)PQgetlength(res, 0, 0);
			out = malloc(*ret_len + 1);
			assert_non_null(out);
			memcpy(out, PQgetvalue(res, 0, 0), *ret_len);
		}
		PQclear(res);
		PQfinish(conn);
	} else {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW)
			fail_msg("%s: %s", sql, sqlite3_errmsg(db));
		if (sqlite3_column_type(st, 0) != SQLITE_NULL) {
			const void *p = sqlite3_column_blob(st, 0);

			*ret_len = (size_t)sqlite3_column_bytes(st, 0);
			out = malloc(*ret_len + 1);
			assert_non_null(out);
			if (*ret_len > 0)
				memcpy(out, p, *ret_len);
		}
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	return out;
}

/* A count or integer column (SQL must cast to a 64-bit integer on pg). */
static int64_t
tq_int(const struct tctx *c, const char *sql)
{
	char q[512];
	size_t len;
	unsigned char *v;
	int64_t n = 0;
	int i;

	/* text rendering in both backends: cast to text */
	(void)snprintf(q, sizeof(q), "SELECT CAST((%s) AS text)", sql);
	v = tq_value(c, q, &len);
	assert_non_null(v);
	v[len] = '\0';
	for (i = 0; v[i] != '\0'; i++) {
		assert_true(v[i] >= '0' && v[i] <= '9');
		n = n * 10 + (v[i] - '0');
	}
	free(v);
	return n;
}

/* ---- messages --------------------------------------------------------- */

struct tmsg {
	struct store_message m;
	struct store_part parts[4];
	unsigned char *big;
};

static const unsigned char nul_bytes[7] = { 'a', 0, 'b', 0, 0, 'c', 0 };

/* A message with two parts (one full of NULs); hash_byte picks the content. */
static void
tmsg_init(struct tmsg *t, const char *id, unsigned char hash_byte,
    const char *receipt)
{
	memset(t, 0, sizeof(*t));
	t->m.message_id = id;
	t->m.from_party = "urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender";
	t->m.to_party = "receiver";
	t->m.service = "urn:example:service";
	t->m.action = "Deliver";
	t->m.conversation_id = "conv-1";
	t->m.agreement_ref = "urn:agreement:1";
	t->m.pmode_id = "leg-1";
	t->m.source = "192.0.2.7";
	t->m.partition_key = "2026-01";
	memset(t->m.content_hash, hash_byte, STORE_HASH_LEN);
	t->m.receipt = (const unsigned char *)receipt;
	t->m.receipt_len = strlen(receipt);
	t->m.received_at_ms = RECEIVED_MS;
	t->parts[0] = (struct store_part){ 0, "part1@as4gw.test",
	    "application/xml", "{\"MimeType\":\"application/xml\"}",
	    (const unsigned char *)"<a/>", 4 };
	t->parts[1] = (struct store_part){ 1, "part2@as4gw.test",
	    "application/octet-stream", NULL, nul_bytes, sizeof(nul_bytes) };
	t->m.parts = t->parts;
	t->m.n_parts = 2;
}

/* Add a 1 MiB part and an empty Body payload without content id. */
static void
tmsg_add_big(struct tmsg *t)
{
	size_t i;

	t->big = malloc(BIG_LEN);
	assert_non_null(t->big);
	for (i = 0; i < BIG_LEN; i++)
		t->big[i] = (unsigned char)((i * 7919) >> 3);
	t->parts[2] = (struct store_part){ 2, "big@as4gw.test",
	    "application/octet-stream", "{}", t->big, BIG_LEN };
	t->parts[3] = (struct store_part){ 3, NULL, "text/plain",
	    "{\"a\\\"b\":\"\\u0001\"}", NULL, 0 };
	t->m.n_parts = 4;
}

/* Open and migrate, failing the test on error. */
static struct store *
topen(const struct tctx *c)
{
	struct store *s = NULL;
	struct err err = { 0 };

	if (store_open(c->dsn, &s, &err) != 0)
		fail_msg("store_open: %s", err.msg);
	if (store_migrate(s, &err) != 0)
		fail_msg("store_migrate: %s", err.msg);
	return s;
}

/* Accept t and check the outcome; returns the result (receipt in a). */
static struct store_result
taccept(struct store *s, struct arena *a, const struct tmsg *t,
    enum store_outcome want)
{
	struct store_result r;
	struct err err = { 0 };

	memset(&r, 0, sizeof(r));
	if (store_accept(s, &t->m, a, &r, &err) != 0)
		fail_msg("store_accept: %s", err.msg);
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(r.outcome, want);
	return r;
}

/* Assert that the integer sql yields is want. */
static void
tcount(const struct tctx *c, const char *sql, int64_t want)
{
	int64_t got = tq_int(c, sql);

	if (got != want)
		fail_msg("%s: got %lld, want %lld", sql, (long long)got,
		    (long long)want);
}

/* ---- the table of cases --------------------------------------------- */

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
	tcount(c, "SELECT count(*) FROM schema_migrations", 1);
	tcount(c, "SELECT count(*) FROM schema_migrations"
	    " WHERE name LIKE '%/001_inbox.sql'", 1);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
}

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
	    " AND attempts = 0 AND claimed_at IS NULL", 1);
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

/* No room in the request arena for the stored receipt: fail, count nothing. */
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
	tcount(c, "SELECT duplicates FROM inbox", 0);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 1);
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

/* ---- concurrency ------------------------------------------------------ */

struct tthread {
	const struct tctx *c;
	pthread_barrier_t *bar;
	int migrate_only;
	char receipt[64];
	int rc;
	enum store_outcome outcome;
	unsigned char got[64];
	size_t got_len;
	char msg[256];
};

/* Own connection, then all threads accept (or migrate) at once. */
static void *
tthread_run(void *arg)
{
	struct tthread *th = arg;
	struct store *s = NULL;
	struct arena *a = arena_new(0);
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };
	struct tmsg t;

	th->rc = store_open(th->c->dsn, &s, &err);
	(void)pthread_barrier_wait(th->bar);
	if (th->rc == 0 && th->migrate_only)
		th->rc = store_migrate(s, &err);
	else if (th->rc == 0) {
		tmsg_init(&t, "race-1@as4gw.test", 0x99, th->receipt);
		th->rc = store_accept(s, &t.m, a, &r, &err);
	}
	if (th->rc == 0 && !th->migrate_only) {
		th->outcome = r.outcome;
		th->got_len = r.receipt_len < sizeof(th->got) ?
		    r.receipt_len : sizeof(th->got);
		memcpy(th->got, r.receipt, th->got_len);
	}
	(void)snprintf(th->msg, sizeof(th->msg), "%s", err.msg);
	store_close(s);
	arena_free(a);
	return NULL;
}

/* Start n threads on one barrier, join them; every one must succeed. */
static void
trun_threads(const struct tctx *c, struct tthread *th, int n, int migrate_only)
{
	pthread_t tid[N_THREADS];
	pthread_barrier_t bar;
	int i;

	assert_true(n <= N_THREADS);
	assert_int_equal(pthread_barrier_init(&bar, NULL, (unsigned)n), 0);
	for (i = 0; i < n; i++) {
		memset(&th[i], 0, sizeof(th[i]));
		th[i].c = c;
		th[i].bar = &bar;
		th[i].migrate_only = migrate_only;
		(void)snprintf(th[i].receipt, sizeof(th[i].receipt),
		    "receipt-from-thread-%02d", i);
		assert_int_equal(pthread_create(&tid[i], NULL, tthread_run,
		    &th[i]), 0);
	}
	for (i = 0; i < n; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	(void)pthread_barrier_destroy(&bar);
	for (i = 0; i < n; i++)
		if (th[i].rc != 0)
			fail_msg("thread %d: %s", i, th[i].msg);
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
	tcount(c, "SELECT count(*) FROM schema_migrations", 1);
	tcount(c, "SELECT count(*) FROM inbox", 0);
}

/* ---- postgresql only: the connection goes away ---------------------- */

/* Kill the store's server processes and wait until they are gone. */
static void
tpg_terminate(const struct tctx *c)
{
	char sql[256];
	int i;

	(void)snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(pid)"
	    " FROM pg_stat_activity WHERE application_name = '%s'", c->app);
	pg_admin(c, sql);
	for (i = 0; i < 100; i++) {
		PGconn *conn = PQconnectdb(c->base_dsn);
		PGresult *res;
		int left;

		(void)snprintf(sql, sizeof(sql), "SELECT 1 FROM pg_stat_activity"
		    " WHERE application_name = '%s'", c->app);
		res = PQexec(conn, sql);
		left = PQntuples(res);
		PQclear(res);
		PQfinish(conn);
		if (left == 0)
			return;
		(void)nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
	}
	fail_msg("server processes for %s did not go away", c->app);
}

/* Lost connection: the next unit of work reconnects by itself (a real
 * outage is ERR_STORE: see the integration tests' PostgreSQL outage). */
static void
t_pg_connection_lost(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t1, t2;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t1, "lost-1@as4gw.test", 0x01, "r1");
	tmsg_init(&t2, "lost-2@as4gw.test", 0x02, "r2");
	(void)taccept(s, a, &t1, STORE_NEW);
	tpg_terminate(c);
	/* the connection still looks fine; its first command fails on the dead
	 * socket, nothing was inside a transaction, so it is reset and retried
	 * once: the caller sees no error (store_pg_begin) */
	(void)taccept(s, a, &t2, STORE_NEW);
	(void)taccept(s, a, &t1, STORE_DUPLICATE);
	tpg_terminate(c);
	assert_int_equal(store_ping(s, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	tcount(c, "SELECT count(*) FROM inbox", 2);
	store_close(s);
	arena_free(a);
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

#define BT(f, ctx) cmocka_unit_test_prestate_setup_teardown(f, setup, \
	teardown, ctx)
#define BACKEND_TESTS(ctx) \
	BT(t_migrate_twice, ctx), BT(t_accept_new, ctx), \
	BT(t_accept_duplicate, ctx), BT(t_accept_drift, ctx), \
	BT(t_payload_roundtrip, ctx), BT(t_failure_rolls_back, ctx), \
	BT(t_not_migrated, ctx), BT(t_arena_exhausted, ctx), \
	BT(t_invalid_message, ctx), BT(t_concurrent_accept, ctx), \
	BT(t_concurrent_migrate, ctx)

int
main(void)
{
	const struct CMUnitTest common[] = {
		cmocka_unit_test(t_open_bad_dsn),
	};
	const struct CMUnitTest sqlite_tests[] = { BACKEND_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = {
		BACKEND_TESTS(&ctx_pg),
		BT(t_pg_connection_lost, &ctx_pg),
	};
	int fails = 0;

	fails += cmocka_run_group_tests_name("store", common, NULL, NULL);
	fails += cmocka_run_group_tests_name("store sqlite", sqlite_tests,
	    NULL, NULL);
	fails += cmocka_run_group_tests_name("store postgresql", pg_tests,
	    NULL, NULL);
	return fails;
}
