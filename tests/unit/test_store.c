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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "testutil.h"
#include "store/store.h"

#define N_THREADS 16
#define TSENDER "urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender"
#define BIG_LEN ((size_t)1 << 20)
/* The embedded migrations of the backend (numbers may have gaps: each
 * change adds its own). */
#define N_MIGRATIONS(c) tmigrations((c)->pg ? "postgresql" : "sqlite")
#define TBIZKEY "edifact:5790000000001:14/5790000000002:14/REF1"
#define RECEIVED_MS INT64_C(1767323045678)

static long long
tmigrations(const char *backend)
{
	size_t pos = 0;
	long long n = 0;

	while (store_migration_next(backend, &pos) != NULL)
		n++;
	return n;
}

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
	unsigned char fields[2 * STORE_HASH_LEN]; /* its field digests */
};

static const unsigned char nul_bytes[7] = { 'a', 0, 'b', 0, 0, 'c', 0 };

/* A message with two parts (one full of NULs); hash_byte picks the content. */
static void
tmsg_init(struct tmsg *t, const char *id, unsigned char hash_byte,
    const char *receipt)
{
	memset(t, 0, sizeof(*t));
	t->m.message_id = id;
	t->m.from_party = TSENDER;
	t->m.to_party = "receiver";
	t->m.service = "urn:example:service";
	t->m.action = "Deliver";
	t->m.conversation_id = "conv-1";
	t->m.agreement_ref = "urn:agreement:1";
	t->m.pmode_id = "leg-1";
	t->m.source = "192.0.2.7";
	t->m.partition_key = "2026-01";
	memset(t->m.content_hash, hash_byte, STORE_HASH_LEN);
	memset(t->m.content_hash_v1, hash_byte, STORE_HASH_LEN);
	memset(t->fields, hash_byte, sizeof(t->fields));
	t->m.field_hashes = t->fields;  /* a row of today's hash version */
	t->m.field_hashes_len = sizeof(t->fields);
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

/* tcount() with a printf-built query. */
static void __attribute__((format(printf, 3, 4)))
tcountf(const struct tctx *c, int64_t want, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	tcount(c, sql, want);
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

/* ---- concurrency ------------------------------------------------------ */

struct tthread {
	const struct tctx *c;
	pthread_barrier_t *bar;
	int migrate_only;
	enum store_business business; /* OFF: all accept one MessageId; else
	                               * each its own, with one business key */
	char id[64];
	char dup_of[64];
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
		tmsg_init(&t, th->business != STORE_BUSINESS_OFF ? th->id :
		    "race-1@as4gw.test", 0x99, th->receipt);
		if (th->business != STORE_BUSINESS_OFF) {
			t.m.business_key = TBIZKEY;
			t.m.business_mode = th->business;
		}
		th->rc = store_accept(s, &t.m, a, &r, &err);
		if (th->rc == 0 && r.business_duplicate_of != NULL)
			(void)snprintf(th->dup_of, sizeof(th->dup_of), "%s",
			    r.business_duplicate_of);
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
trun_threads_biz(const struct tctx *c, struct tthread *th, int n,
    int migrate_only, enum store_business business)
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
		th[i].business = business;
		(void)snprintf(th[i].id, sizeof(th[i].id), "biz-%02d@as4gw.test",
		    i);
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

/* trun_threads_biz() of one MessageId (no business key). */
static void
trun_threads(const struct tctx *c, struct tthread *th, int n, int migrate_only)
{
	trun_threads_biz(c, th, n, migrate_only, STORE_BUSINESS_OFF);
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

/* ---- the delivery queue, purge, stats, wait (issue 4) ------------------ */

#define T0 RECEIVED_MS  /* queue times are T0 + an offset in ms */
/* A time column in ms, as SQL text for either backend. */
#define MS(c, col) ((c)->pg ? "round(extract(epoch FROM " col ") * 1000)" : col)

/* Run sql without looking at results (test set-up of rows). */
static void
tq_exec(const struct tctx *c, const char *sql)
{
	if (c->pg) {
		PGconn *conn = PQconnectdb(c->dsn);
		PGresult *res = PQexec(conn, sql);

		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("%s: %s", sql, PQerrorMessage(conn));
		PQclear(res);
		PQfinish(conn);
	} else {
		sqlite3 *db = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			fail_msg("%s: %s", sql, sqlite3_errmsg(db));
		sqlite3_close(db);
	}
}

/* Accept message id, received at T0 + off_ms on leg pmode (NULL: none). */
static void
tput(struct store *s, struct arena *a, const char *id, int64_t off_ms,
    const char *pmode)
{
	struct tmsg t;

	tmsg_init(&t, id, 0x42, "receipt");
	t.m.received_at_ms = T0 + off_ms;
	t.m.pmode_id = pmode;
	(void)taccept(s, a, &t, STORE_NEW);
}

/* Claim at T0 + now_off; expect want's id (NULL: nothing to claim). */
static struct store_delivery
tclaim(struct store *s, struct arena *a, int64_t now_off, int64_t stale_ms,
    const char *want)
{
	struct store_delivery d;
	struct err err = { 0 };
	int rc;

	memset(&d, 0, sizeof(d));
	rc = store_claim(s, T0 + now_off, stale_ms, a, &d, &err);
	if (rc == -1)
		fail_msg("store_claim: %s", err.msg);
	if (want == NULL && rc != 0)
		fail_msg("claimed %s, want nothing", d.message_id);
	if (want != NULL && rc != 1)
		fail_msg("claimed nothing, want %s", want);
	if (want != NULL)
		assert_string_equal(d.message_id, want);
	else
		assert_null(d.message_id);
	return d;
}

/* Finish id at T0 + now_off (retry at T0 + retry_off), expecting 0. */
static void
tfinish(struct store *s, const char *id, int ok, int64_t now_off,
    int64_t retry_off)
{
	struct err err = { 0 };

	if (store_finish(s, TSENDER, id, ok, T0 + now_off, T0 + retry_off,
	    &err) != 0)
		fail_msg("store_finish %s: %s", id, err.msg);
}

/* A claimed message comes back whole: fields, parts, bytes. */
static void
tcheck_delivery(const struct store_delivery *d, const struct tmsg *t)
{
	size_t i;

	assert_string_equal(d->from_party, t->m.from_party);
	assert_string_equal(d->to_party, t->m.to_party);
	assert_string_equal(d->service, t->m.service);
	assert_string_equal(d->action, t->m.action);
	assert_string_equal(d->conversation_id, t->m.conversation_id);
	assert_string_equal(d->agreement_ref, t->m.agreement_ref);
	assert_int_equal(d->received_at_ms, t->m.received_at_ms);
	assert_int_equal(d->n_parts, t->m.n_parts);
	for (i = 0; i < d->n_parts; i++) {
		const struct store_part *g = &d->parts[i], *w = &t->parts[i];

		assert_int_equal(g->part_no, w->part_no);
		if (w->content_id == NULL)
			assert_null(g->content_id);
		else
			assert_string_equal(g->content_id, w->content_id);
		assert_string_equal(g->mime_type, w->mime_type);
		assert_string_equal(g->properties,
		    w->properties != NULL ? w->properties : "{}");
		assert_int_equal(g->len, w->len);
		assert_non_null(g->data);
		if (w->len > 0)
			assert_memory_equal(g->data, w->data, w->len);
	}
}

/* Oldest first by received time; every field and payload byte back. */
static void
t_claim_order(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;
	struct tmsg t, big, none;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "q-1", 0x42, "receipt");
	t.m.received_at_ms = T0 + 1000;
	(void)taccept(s, a, &t, STORE_NEW);
	tput(s, a, "q-2", 3000, NULL);
	tput(s, a, "q-3", 2000, "leg-1");
	tmsg_init(&big, "q-big", 0x43, "receipt");
	big.m.received_at_ms = T0 + 4000;
	tmsg_add_big(&big);
	(void)taccept(s, a, &big, STORE_NEW);
	tmsg_init(&none, "q-none", 0x44, "receipt");
	none.m.received_at_ms = T0 + 5000;
	none.m.n_parts = 0;
	(void)taccept(s, a, &none, STORE_NEW);
	d = tclaim(s, a, 10000, 60000, "q-1");
	assert_int_equal(d.attempts, 1);
	assert_string_equal(d.pmode_id, "leg-1");
	tcheck_delivery(&d, &t);
	d = tclaim(s, a, 10000, 60000, "q-3");
	d = tclaim(s, a, 10000, 60000, "q-2");
	assert_null(d.pmode_id);
	assert_int_equal(d.received_at_ms, T0 + 3000);
	d = tclaim(s, a, 10000, 60000, "q-big");
	tcheck_delivery(&d, &big);
	d = tclaim(s, a, 10000, 60000, "q-none");
	tcheck_delivery(&d, &none);
	(void)tclaim(s, a, 10000, 60000, NULL);
	tcountf(c, 5, "SELECT count(*) FROM delivery WHERE state = 'claimed'"
	    " AND attempts = 1 AND %s = %lld", MS(c, "claimed_at"),
	    (long long)(T0 + 10000));
	free(big.big);
	store_close(s);
	arena_free(a);
}

/* Nothing to claim: 0 and *ret untouched; a negative stale time refused. */
static void
t_claim_empty(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d = { .message_id = "sentinel" };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	assert_int_equal(store_claim(s, T0, 1000, a, &d, &err), 0);
	assert_string_equal(d.message_id, "sentinel");
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(store_claim(s, T0, -1, a, &d, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_string_equal(d.message_id, "sentinel");
	store_close(s);
	arena_free(a);
}

/* ok -> done + processed_at; !ok -> ready after not_before, others first. */
static void
t_finish_retry(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "q-1", 1000, "leg-1");
	tput(s, a, "q-2", 2000, "leg-1");
	(void)tclaim(s, a, 10000, 60000, "q-1");
	tfinish(s, "q-1", 0, 11000, 30000);
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE message_id = 'q-1'"
	    " AND state = 'ready' AND claimed_at IS NULL AND attempts = 1"
	    " AND %s = %lld", MS(c, "not_before"), (long long)(T0 + 30000));
	(void)tclaim(s, a, 12000, 60000, "q-2");  /* q-1 waits */
	tfinish(s, "q-2", 1, 13000, 0);
	tcountf(c, 1, "SELECT count(*) FROM inbox WHERE message_id = 'q-2'"
	    " AND %s = %lld", MS(c, "processed_at"), (long long)(T0 + 13000));
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 1);
	(void)tclaim(s, a, 29999, 60000, NULL);
	d = tclaim(s, a, 30000, 60000, "q-1");
	assert_int_equal(d.attempts, 2);
	tfinish(s, "q-1", 1, 31000, 0);
	(void)tclaim(s, a, 99000, 60000, NULL);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'", 2);
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 0);
	store_close(s);
	arena_free(a);
}

/* A claim older than stale_ms is taken over; the row ends done once. */
static void
t_stale_takeover(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "q-1", 1000, NULL);
	(void)tclaim(s, a, 10000, 5000, "q-1");
	(void)tclaim(s, a, 15000, 5000, NULL);  /* exactly stale_ms: not yet */
	d = tclaim(s, a, 15001, 5000, "q-1");
	assert_int_equal(d.attempts, 2);
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE %s = %lld",
	    MS(c, "claimed_at"), (long long)(T0 + 15001));
	tfinish(s, "q-1", 1, 16000, 0);
	tfinish(s, "q-1", 0, 16001, 20000);  /* the first deliverer, late */
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'"
	    " AND not_before IS NULL AND attempts = 2", 1);
	(void)tclaim(s, a, 99000, 0, NULL);
	store_close(s);
	arena_free(a);
}

/* finish on a row that is not claimed (or absent) changes nothing. */
static void
t_finish_harmless(void **state)
{
	struct tctx *c = *state;
	char long_id[STORE_MESSAGE_ID_MAX + 2];
	const char *bad[] = { NULL, "", long_id };
	struct arena *a;
	struct store *s;
	struct err err;
	size_t i;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	tput(s, a, "q-1", 1000, NULL);
	tfinish(s, "absent", 1, 2000, 0);
	tfinish(s, "absent", 0, 2000, 3000);
	tfinish(s, "q-1", 1, 2000, 0);
	tfinish(s, "q-1", 0, 2000, 50000);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'"
	    " AND not_before IS NULL AND attempts = 0", 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err_clear(&err);
		assert_int_equal(store_finish(s, TSENDER, bad[i], 1, T0, T0,
		    &err), -1);
		assert_int_equal(err.kind, ERR_INTERNAL);
	}
	(void)tclaim(s, a, 3000, 1000, "q-1");
	store_close(s);
	arena_free(a);
}

/* Before migration every queue call fails as ERR_STORE, then works. */
static void
t_queue_unmigrated(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .batch = 10 };
	struct store_delivery d;
	struct store_stats st;
	struct arena *a;
	struct store *s = NULL;
	struct err err = { 0 };
	size_t n1 = 0, n2 = 0;

	NEED(c);
	a = arena_new(0);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	assert_int_equal(store_claim(s, T0, 0, a, &d, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_finish(s, TSENDER, "q-1", 1, T0, T0, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_stats(s, &st, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_migrate(s, &err), 0);
	(void)tclaim(s, a, 0, 0, NULL);
	store_close(s);
	arena_free(a);
}

/* No room for the claimed message: -1, and the row is claimable again. */
static void
t_claim_arena_exhausted(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a, *tiny;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	tiny = arena_new(64);
	s = topen(c);
	tput(s, a, "q-1", 1000, NULL);
	assert_int_equal(store_claim(s, T0 + 2000, 60000, tiny, &d, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	/* sqlite rolls the claim back; postgresql has committed it and puts
	 * the row back at once */
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE state = 'ready'"
	    " AND claimed_at IS NULL AND attempts = %d", c->pg ? 1 : 0);
	d = tclaim(s, a, 3000, 60000, "q-1");
	assert_int_equal(d.attempts, c->pg ? 2 : 1);
	store_close(s);
	arena_free(tiny);
	arena_free(a);
}

/* Mark every delivery row done (set-up for the purge tests). */
static void
tdone_all(const struct tctx *c)
{
	tq_exec(c, "UPDATE delivery SET state = 'done'");
}

/* Per-leg cutoffs, the default for other and no legs, escaping of ids. */
static void
t_purge_cutoffs(void **state)
{
	static const char *const ids[] = { "leg-1", "leg-2", "le\"g\\1" };
	static const int64_t cut[] = { T0 + 400, T0 + 50, T0 + 700 };
	struct tctx *c = *state;
	struct store_purge p = { .pmode_ids = ids, .cutoffs_ms = cut,
	    .n_legs = 3, .default_cutoff_ms = T0 + 350, .batch = 100 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 99, kept = 99;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "p-a", 100, "leg-1");    /* past leg-1: purged */
	tput(s, a, "p-b", 500, "leg-1");    /* before leg-1's cutoff */
	tput(s, a, "p-c", 100, "leg-2");    /* before leg-2's cutoff */
	tput(s, a, "p-d", 100, NULL);       /* past the default: purged */
	tput(s, a, "p-e", 300, "leg-x");    /* past the default: purged */
	tput(s, a, "p-f", 600, "le\"g\\1"); /* past its own: purged */
	tput(s, a, "p-g", 400, "leg-x");    /* before the default */
	tdone_all(c);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 4);
	assert_int_equal(kept, 0);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id"
	    " IN ('p-b', 'p-c', 'p-g')", 3);
	tcount(c, "SELECT count(*) FROM inbox", 3);
	tcount(c, "SELECT count(*) FROM payload", 6);
	tcount(c, "SELECT count(*) FROM delivery", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE message_id NOT IN"
	    " (SELECT message_id FROM inbox)", 0);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	store_close(s);
	arena_free(a);
}

/* Undelivered rows are kept (and counted) unless undelivered is set; a
 * row without a delivery row counts as delivered. */
static void
t_purge_undelivered(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0 + 1000, .batch = 100 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 0, kept = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "u-ready", 100, NULL);
	tput(s, a, "u-claimed", 200, NULL);
	tput(s, a, "u-done", 300, NULL);
	tput(s, a, "u-nodeliv", 400, NULL);
	tput(s, a, "u-new", 5000, NULL);
	tq_exec(c, "UPDATE delivery SET state = 'claimed', claimed_at ="
	    " created_at WHERE message_id = 'u-claimed'");
	tq_exec(c, "UPDATE delivery SET state = 'done'"
	    " WHERE message_id = 'u-done'");
	tq_exec(c, "DELETE FROM delivery WHERE message_id = 'u-nodeliv'");
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 2);
	assert_int_equal(kept, 2);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(kept, 2);
	p.undelivered = 1;
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 2);
	assert_int_equal(kept, 0);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id = 'u-new'", 1);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	store_close(s);
	arena_free(a);
}

/* At most batch rows per call, oldest first; kept capped at batch. */
static void
t_purge_batch(void **state)
{
	static const size_t want[] = { 2, 2, 1, 0 };
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0 + 1000, .batch = 2 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 0, kept = 0, i;
	char id[16];

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	for (i = 1; i <= 5; i++) {
		(void)snprintf(id, sizeof(id), "b-%zu", i);
		tput(s, a, id, (int64_t)(600 - i * 100), NULL);  /* b-5 oldest */
	}
	tdone_all(c);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
		assert_int_equal(purged, want[i]);
		assert_int_equal(kept, 0);
		if (i == 0)
			tcount(c, "SELECT count(*) FROM inbox WHERE message_id"
			    " IN ('b-1', 'b-2', 'b-3')", 3);
	}
	for (i = 1; i <= 5; i++) {
		(void)snprintf(id, sizeof(id), "k-%zu", i);
		tput(s, a, id, (int64_t)(i * 100), NULL);
	}
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(kept, 2);
	p.batch = 10;
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(kept, 5);
	store_close(s);
	arena_free(a);
}

/* A purge built wrongly is refused; the counters stay untouched. */
static void
t_purge_invalid(void **state)
{
	static const char *const null_id[] = { NULL };
	static const int64_t cut[] = { T0 };
	struct tctx *c = *state;
	const struct store_purge bad[] = {
		{ .batch = 0 },
		{ .batch = (size_t)INT32_MAX + 1 },
		{ .batch = 1, .n_legs = 1, .cutoffs_ms = cut },
		{ .batch = 1, .n_legs = 1, .pmode_ids = null_id },
		{ .batch = 1, .n_legs = 1, .pmode_ids = null_id,
		  .cutoffs_ms = cut },
	};
	struct store *s;
	struct err err;
	size_t purged = 77, kept = 88, i;

	NEED(c);
	s = topen(c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err_clear(&err);
		if (store_purge(s, &bad[i], &purged, &kept, &err) != -1 ||
		    err.kind != ERR_INTERNAL)
			fail_msg("invalid purge %zu accepted", i);
		assert_int_equal(purged, 77);
		assert_int_equal(kept, 88);
	}
	store_close(s);
}

/* Take stats and compare all three values. */
static void
tstats(struct store *s, int64_t inbox, int64_t ready, int64_t claimed)
{
	struct store_stats st;
	struct err err = { 0 };

	if (store_stats(s, &st, &err) != 0)
		fail_msg("store_stats: %s", err.msg);
	assert_int_equal(st.inbox_rows, inbox);
	assert_int_equal(st.delivery_ready, ready);
	assert_int_equal(st.delivery_claimed, claimed);
}

/* Gauges follow the queue; postgresql's inbox count is an estimate. */
static void
t_stats(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	char sql[128];

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tstats(s, 0, 0, 0);
	tput(s, a, "q-1", 1000, NULL);
	tput(s, a, "q-2", 2000, NULL);
	tput(s, a, "q-3", 3000, NULL);
	tstats(s, 3, 3, 0);  /* never analyzed: an exact count */
	(void)tclaim(s, a, 10000, 60000, "q-1");
	tstats(s, 3, 2, 1);
	tfinish(s, "q-1", 1, 11000, 0);
	tstats(s, 3, 2, 0);
	if (c->pg) {
		(void)snprintf(sql, sizeof(sql), "ANALYZE %s.inbox", c->schema);
		pg_admin(c, sql);
		tput(s, a, "q-4", 4000, NULL);
		tstats(s, 3, 3, 0);  /* the planner's estimate, until analyzed */
		pg_admin(c, sql);
		tstats(s, 4, 3, 0);
	}
	store_close(s);
	arena_free(a);
}

/* Milliseconds store_wait(s, timeout_ms) took (it must succeed). */
static int64_t
twait(struct store *s, int timeout_ms)
{
	struct timespec t1, t2;
	struct err err = { 0 };

	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	if (store_wait(s, timeout_ms, &err) != 0)
		fail_msg("store_wait: %s", err.msg);
	(void)clock_gettime(CLOCK_MONOTONIC, &t2);
	return (int64_t)(t2.tv_sec - t1.tv_sec) * 1000 +
	    (t2.tv_nsec - t1.tv_nsec) / 1000000;
}

/* Fail unless lo <= ms <= hi. */
static void
tbetween(const char *what, int64_t ms, int64_t lo, int64_t hi)
{
	if (ms < lo || ms > hi)
		fail_msg("%s took %lld ms, want %lld..%lld", what,
		    (long long)ms, (long long)lo, (long long)hi);
}

struct twaiter {
	struct store *s;
	int64_t ms;
};

/* A deliverer blocked in store_wait. */
static void *
twaiter_run(void *arg)
{
	struct twaiter *w = arg;

	w->ms = twait(w->s, 10000);
	return NULL;
}

/*
 * postgresql: a private database for c's test.  NOTIFY channels are per
 * database, and other processes sharing the test server accept messages
 * too: their NOTIFYs must not wake our waiters.
 */
static void
tpg_private_db(const struct tctx *c, struct tctx *ret, int create)
{
	char sql[160];

	*ret = *c;
	(void)snprintf(ret->schema, sizeof(ret->schema), "as4gw_wait_%ld",
	    (long)getpid());
	(void)snprintf(ret->dsn, sizeof(ret->dsn),
	    "%s%cdbname=%s&application_name=%s", c->base_dsn,
	    strchr(c->base_dsn, '?') != NULL ? '&' : '?', ret->schema, c->app);
	(void)snprintf(sql, sizeof(sql), create ? "CREATE DATABASE %s" :
	    "DROP DATABASE %s WITH (FORCE)", ret->schema);
	pg_admin(c, sql);
}

/* postgresql: a NEW accept on one connection wakes a waiter on another;
 * duplicates do not; nothing times out. */
static void
twait_pg(const struct tctx *shared)
{
	struct tctx own, *c = &own;
	struct arena *a = arena_new(0);
	struct store *s1, *s2;
	struct twaiter w = { .s = NULL };
	struct tmsg t;
	pthread_t tid;

	tpg_private_db(shared, c, 1);
	s1 = topen(c);
	s2 = topen(c);
	w.s = s2;
	tbetween("wait 0 (listen)", twait(s2, 0), 0, 1000);
	tbetween("wait without notify", twait(s2, 300), 290, 2000);
	tput(s1, a, "w-1", 1000, NULL);
	tbetween("wait after NEW", twait(s2, 5000), 0, 1000);
	tmsg_init(&t, "w-1", 0x42, "receipt");
	(void)taccept(s1, a, &t, STORE_DUPLICATE);
	tbetween("wait after DUPLICATE", twait(s2, 300), 290, 2000);
	assert_int_equal(pthread_create(&tid, NULL, twaiter_run, &w), 0);
	(void)nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	tput(s1, a, "w-2", 2000, NULL);
	assert_int_equal(pthread_join(tid, NULL), 0);
	tbetween("blocked wait woken by NEW", w.ms, 250, 5000);
	store_close(s2);
	store_close(s1);
	arena_free(a);
	tpg_private_db(shared, c, 0);
}

/* sqlite sleeps min(timeout, 1000); postgresql waits for NOTIFY. */
static void
t_wait(void **state)
{
	struct tctx *c = *state;
	struct store *s;

	NEED(c);
	if (c->pg) {
		twait_pg(c);
		return;
	}
	s = topen(c);
	tbetween("wait 200", twait(s, 200), 190, 900);
	tbetween("wait 5000 (capped)", twait(s, 5000), 990, 2000);
	tbetween("wait -1", twait(s, -1), 0, 100);
	store_close(s);
}

struct tclaimer {
	const struct tctx *c;
	pthread_barrier_t *bar;
	char ids[64][16];
	size_t n;
	int rc;
	char msg[256];
};

/* Own connection; claim and finish until the queue is empty. */
static void *
tclaimer_run(void *arg)
{
	struct tclaimer *cl = arg;
	struct store *s = NULL;
	struct arena *a = arena_new(0);
	struct store_delivery d;
	struct err err = { 0 };

	cl->rc = store_open(cl->c->dsn, &s, &err);
	(void)pthread_barrier_wait(cl->bar);
	while (cl->rc == 0 && cl->n < 64) {
		cl->rc = store_claim(s, T0 + 10000, 60000, a, &d, &err);
		if (cl->rc != 1)
			break;
		(void)snprintf(cl->ids[cl->n++], sizeof(cl->ids[0]), "%s",
		    d.message_id);
		cl->rc = store_finish(s, d.from_party, d.message_id, 1,
		    T0 + 10000, 0, &err);
	}
	(void)snprintf(cl->msg, sizeof(cl->msg), "%s", err.msg);
	store_close(s);
	arena_free(a);
	return NULL;
}

/* Concurrent deliverers on their own connections: each row once. */
static void
t_concurrent_claim(void **state)
{
	enum { N_MSG = 40, N_CL = 8 };
	struct tctx *c = *state;
	struct tclaimer cl[N_CL];
	pthread_t tid[N_CL];
	pthread_barrier_t bar;
	struct arena *a;
	struct store *s;
	char seen[N_MSG] = { 0 }, id[16];
	size_t i, j, total = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	for (i = 0; i < N_MSG; i++) {
		(void)snprintf(id, sizeof(id), "cc-%02zu", i);
		tput(s, a, id, (int64_t)i, NULL);
	}
	assert_int_equal(pthread_barrier_init(&bar, NULL, N_CL), 0);
	for (i = 0; i < N_CL; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].c = c;
		cl[i].bar = &bar;
		assert_int_equal(pthread_create(&tid[i], NULL, tclaimer_run,
		    &cl[i]), 0);
	}
	for (i = 0; i < N_CL; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	(void)pthread_barrier_destroy(&bar);
	for (i = 0; i < N_CL; i++) {
		if (cl[i].rc != 0)
			fail_msg("claimer %zu: %s", i, cl[i].msg);
		for (j = 0; j < cl[i].n; j++) {
			unsigned k = (unsigned)atoi(cl[i].ids[j] + 3);

			assert_true(k < N_MSG);
			if (seen[k]++)
				fail_msg("%s claimed twice", cl[i].ids[j]);
			total++;
		}
	}
	assert_int_equal(total, N_MSG);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'"
	    " AND attempts = 1", N_MSG);
	store_close(s);
	arena_free(a);
}

/* postgresql: a row locked by another transaction is skipped, not waited
 * for (FOR UPDATE SKIP LOCKED), and taken once the lock is gone. */
static void
t_pg_skip_locked(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	PGconn *conn;
	PGresult *res;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "s-1", 1000, NULL);
	tput(s, a, "s-2", 2000, NULL);
	conn = PQconnectdb(c->dsn);
	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	PQclear(PQexec(conn, "BEGIN"));
	res = PQexec(conn, "SELECT 1 FROM delivery WHERE message_id = 's-1'"
	    " FOR UPDATE");
	assert_int_equal(PQntuples(res), 1);
	PQclear(res);
	(void)tclaim(s, a, 10000, 60000, "s-2");
	(void)tclaim(s, a, 10000, 60000, NULL);
	PQclear(PQexec(conn, "ROLLBACK"));
	(void)tclaim(s, a, 10000, 60000, "s-1");
	PQfinish(conn);
	store_close(s);
	arena_free(a);
}

/* postgresql: every queue call reconnects after the server dropped the
 * connection; a waiter LISTENs again on its new connection. */
static void
t_pg_queue_reconnect(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0, .batch = 10 };
	struct arena *a;
	struct store *s1, *s2;
	struct err err = { 0 };
	size_t n1, n2;

	NEED(c);
	a = arena_new(0);
	s1 = topen(c);
	s2 = topen(c);
	tput(s1, a, "r-1", 1000, NULL);
	tbetween("wait 0 (listen)", twait(s2, 0), 0, 1000);
	tpg_terminate(c);
	(void)tclaim(s1, a, 10000, 60000, "r-1");
	tpg_terminate(c);
	tfinish(s1, "r-1", 1, 11000, 0);
	tpg_terminate(c);
	tstats(s1, 1, 0, 0);
	tpg_terminate(c);
	assert_int_equal(store_purge(s1, &p, &n1, &n2, &err), 0);
	/* the waiter's connection is gone: it reconnects, LISTENs, returns */
	tbetween("wait on a dropped connection", twait(s2, 5000), 0, 4000);
	tput(s1, a, "r-2", 2000, NULL);
	tbetween("wait after reconnect", twait(s2, 5000), 0, 1000);
	store_close(s2);
	store_close(s1);
	arena_free(a);
}

/* ---- probes, part shapes, streamed payloads (issue 5) ------------------ */

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

/* bytes[i] = a pattern of seed (payload test data). */
static unsigned char *
tpattern(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len > 0 ? len : 1);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 31 + seed) ^ (i >> 9));
	return p;
}

/* Part no of t stored with exactly these bytes. */
static void
tpart_bytes(const struct tctx *c, int no, const unsigned char *want,
    size_t len)
{
	char sql[128];
	unsigned char *v;
	size_t got;

	(void)snprintf(sql, sizeof(sql),
	    "SELECT content FROM payload WHERE part_no = %d", no);
	v = tq_value(c, sql, &got);
	assert_non_null(v);  /* empty, not NULL */
	assert_int_equal(got, len);
	if (len > 0)
		assert_memory_equal(v, want, len);
	free(v);
}

/* Parts of every shape in one call: empty without data, NULL content id
 * and MIME type, no properties, NULs, part numbers with gaps. */
static void
t_accept_part_shapes(void **state)
{
	struct tctx *c = *state;
	unsigned char *bin = tpattern(3000, 7);
	const struct store_part parts[] = {
		{ 0, NULL, NULL, NULL, NULL, 0 },
		{ 1, "c1@as4gw.test", "text/plain", "{\"k\":\"v\"}",
		  (const unsigned char *)"hello", 5 },
		{ 2, "c2@as4gw.test", NULL, NULL, nul_bytes, sizeof(nul_bytes) },
		{ 7, NULL, "application/octet-stream", "{}", bin, 3000 },
	};
	struct arena *a;
	struct store *s;
	struct tmsg t;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "shapes-1@as4gw.test", 0x61, "receipt");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 4);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 0 AND"
	    " content_id IS NULL AND mime_type IS NULL AND properties = '{}'",
	    1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id = 'c1@as4gw.test' AND mime_type = 'text/plain'"
	    " AND properties = '{\"k\":\"v\"}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " mime_type IS NULL AND properties = '{}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 7 AND"
	    " content_id IS NULL AND mime_type = 'application/octet-stream'",
	    1);
	tpart_bytes(c, 0, NULL, 0);
	tpart_bytes(c, 1, (const unsigned char *)"hello", 5);
	tpart_bytes(c, 2, nul_bytes, sizeof(nul_bytes));
	tpart_bytes(c, 7, bin, 3000);
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	free(bin);
	store_close(s);
	arena_free(a);
}

/* A message without payloads: inbox and delivery rows, no payload row. */
static void
t_accept_no_parts(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct store_result r;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "empty-1@as4gw.test", 0x62, "receipt-empty");
	t.m.parts = NULL;
	t.m.n_parts = 0;
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 1);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-empty", r.receipt_len);
	store_close(s);
	arena_free(a);
}

/*
 * Payloads above postgresql's inline limit (256 KiB) are streamed with COPY
 * inside a transaction: whole bytes back (a 1 MiB part, parts that are not
 * a multiple of the chunk, small ones between), the same duplicate, drift
 * and probe answers, and a failing part rolls everything back.
 */
static void
t_accept_streamed(void **state)
{
	struct tctx *c = *state;
	unsigned char *big = tpattern(BIG_LEN, 1), *odd = tpattern(200001, 2);
	struct store_part parts[] = {
		{ 0, "a@as4gw.test", "application/xml", NULL,
		  (const unsigned char *)"<a/>", 4 },
		{ 1, "big@as4gw.test", NULL, "{}", big, BIG_LEN },
		{ 2, NULL, "text/plain", NULL, NULL, 0 },
		{ 3, "odd@as4gw.test", "x/y", "{\"n\":3}", odd, 200001 },
		{ 4, "nul@as4gw.test", "x/y", NULL, nul_bytes, sizeof(nul_bytes) },
	};
	struct arena *a;
	struct store *s;
	struct tmsg t, probe;
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "stream-1@as4gw.test", 0x63, "receipt-streamed");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	probe = t;
	probe.m.receipt = NULL;
	(void)taccept(s, a, &probe, STORE_ABSENT);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 5);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id = 'big@as4gw.test' AND mime_type IS NULL", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " content_id IS NULL AND properties = '{}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 3 AND"
	    " properties = '{\"n\":3}'", 1);
	tpart_bytes(c, 0, (const unsigned char *)"<a/>", 4);
	tpart_bytes(c, 1, big, BIG_LEN);
	tpart_bytes(c, 2, NULL, 0);
	tpart_bytes(c, 3, odd, 200001);
	tpart_bytes(c, 4, nul_bytes, sizeof(nul_bytes));
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-streamed", r.receipt_len);
	r = taccept(s, a, &probe, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 2);
	t.m.content_hash[0] ^= 1;
	(void)taccept(s, a, &t, STORE_DRIFT);
	tcount(c, "SELECT duplicates FROM inbox", 2);
	/* part 4 numbered like part 3: nothing of this message stays */
	tmsg_init(&t, "stream-2@as4gw.test", 0x64, "receipt");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	parts[4].part_no = 3;
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(r.outcome, 0);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 5);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	parts[4].part_no = 4;
	(void)taccept(s, a, &t, STORE_NEW);  /* connection usable, id free */
	tcount(c, "SELECT count(*) FROM payload", 10);
	free(odd);
	free(big);
	store_close(s);
	arena_free(a);
}

/*
 * Every other operation right after a NEW on the same connection (on
 * postgresql the NEW leaves its NOTIFY's answer unread), and close right
 * after one.
 */
static void
t_accept_then_use(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0, .batch = 10 };
	struct store_stats st;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct err err = { 0 };
	size_t n1 = 0, n2 = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "use-1", 1000, NULL);
	tmsg_init(&t, "use-1", 0x42, "receipt");
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	tput(s, a, "use-2", 2000, NULL);
	tput(s, a, "use-3", 3000, NULL);
	assert_int_equal(store_ping(s, &err), 0);
	tput(s, a, "use-4", 4000, NULL);
	(void)tclaim(s, a, 10000, 60000, "use-1");
	tput(s, a, "use-5", 5000, NULL);
	tfinish(s, "use-1", 1, 11000, 0);
	tput(s, a, "use-6", 6000, NULL);
	assert_int_equal(store_stats(s, &st, &err), 0);
	assert_int_equal(st.delivery_ready, 5);
	tput(s, a, "use-7", 7000, NULL);
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), 0);
	tput(s, a, "use-8", 8000, NULL);
	assert_int_equal(store_migrate(s, &err), 0);
	tput(s, a, "use-9", 9000, NULL);
	tbetween("wait after NEW", twait(s, 0), 0, 1000);
	tput(s, a, "use-10", 10000, NULL);
	store_close(s);  /* with the NOTIFY unanswered */
	assert_int_equal(err.kind, ERR_NONE);
	tcount(c, "SELECT count(*) FROM inbox", 10);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 9);
	arena_free(a);
}

/* The first value of sql's first row on conn, as text (fails the test on
 * error or no row). */
static void
tpg_one(PGconn *conn, const char *sql, char *out, size_t n)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
		fail_msg("%s: %s", sql, PQerrorMessage(conn));
	(void)snprintf(out, n, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* Run sql on conn, which must succeed. */
static void
tpg_ok(PGconn *conn, const char *sql)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
}

/* as4gw_accept(id, party, hash byte, receipt, parts...) as SQL text:
 * outcome/receipt/duplicates/length of the stored field digests. */
#define TPG_CALLP(id, from, hash, receipt, parts) \
	"SELECT outcome::text || '/' || coalesce(encode(receipt, 'hex'), '-')" \
	" || '/' || coalesce(duplicates::text, '-') || '/' ||" \
	" coalesce(octet_length(field_hashes)::text, '-') FROM as4gw_accept('" \
	id "', '" from "', 'to', 'svc', 'act', 'conv', NULL, NULL, NULL," \
	" decode(repeat('" hash "', 32), 'hex'), decode(repeat('" hash "'," \
	" 32), 'hex'), decode(repeat('" hash "', 64), 'hex'), " receipt "," \
	" 1767323045678, '2026-01', " parts ", NULL, NULL)"
#define TPG_CALL(id, hash, receipt, parts) \
	TPG_CALLP(id, "from", hash, receipt, parts)
#define TPG_PARTS3 "ARRAY[0, 1, 5], ARRAY['c0', NULL, 'c5']," \
	" ARRAY['text/plain', NULL, NULL], ARRAY['{}', '{}', '{\"a\":1}']," \
	" ARRAY['\\x00ff'::bytea, ''::bytea, '\\x41'::bytea]"
#define TPG_PARTS0 "'{}'::int[], '{}'::text[], '{}'::text[], '{}'::text[]," \
	" '{}'::bytea[]"

/* postgresql: as4gw_accept() called directly (migration 003): the four
 * outcomes, the rows, and an asynchronous commit for duplicates only. */
static void
t_pg_accept_function(void **state)
{
	struct tctx *c = *state;
	char v[128];
	PGconn *conn;

	NEED(c);
	store_close(topen(c));
	conn = PQconnectdb(c->dsn);
	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	tpg_one(conn, TPG_CALL("fn-1", "ab", "'\\x0102'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tcount(c, "SELECT count(*) FROM payload WHERE message_id = 'fn-1'", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id IS NULL AND mime_type IS NULL AND content = ''", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 5 AND"
	    " content = '\\x41' AND properties = '{\"a\":1}'", 1);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 1);
	tpg_one(conn, TPG_CALL("fn-1", "ab", "'\\x0303'", TPG_PARTS0), v,
	    sizeof(v));
	assert_string_equal(v, "2/0102/1/-");
	tpg_one(conn, TPG_CALL("fn-1", "ab", "NULL", TPG_PARTS0), v, sizeof(v));
	assert_string_equal(v, "2/0102/2/-");
	tpg_one(conn, TPG_CALL("fn-1", "cd", "'\\x0303'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "3/-/-/64");
	tpg_one(conn, TPG_CALL("fn-2", "cd", "NULL", TPG_PARTS3), v, sizeof(v));
	assert_string_equal(v, "4/-/-/-");
	tpg_one(conn, TPG_CALL("fn-3", "cd", "'\\x03'", TPG_PARTS0), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	/* another party's fn-1: its own row, neither blocked nor counted */
	tpg_one(conn, TPG_CALLP("fn-1", "other", "cd", "'\\x0404'",
	    TPG_PARTS3), v, sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tpg_one(conn, TPG_CALLP("fn-1", "other", "cd", "NULL", TPG_PARTS0),
	    v, sizeof(v));
	assert_string_equal(v, "2/0404/1/-");
	tcount(c, "SELECT count(*) FROM inbox", 3);
	tcount(c, "SELECT count(*) FROM payload", 6);
	tcount(c, "SELECT count(*) FROM delivery WHERE message_id = 'fn-1'", 2);
	tcount(c, "SELECT duplicates FROM inbox WHERE message_id = 'fn-1'"
	    " AND from_party = 'from'", 2);
	/* only a duplicate's transaction commits without waiting for WAL */
	tpg_ok(conn, "BEGIN");
	tpg_one(conn, TPG_CALL("fn-1", "ab", "NULL", TPG_PARTS0), v, sizeof(v));
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_equal(v, "off");
	tpg_ok(conn, "ROLLBACK");
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_not_equal(v, "off");
	tpg_ok(conn, "BEGIN");
	tpg_one(conn, TPG_CALL("fn-4", "ab", "'\\x01'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_not_equal(v, "off");
	tpg_ok(conn, "ROLLBACK");
	PQfinish(conn);
}

#ifdef AS4GW_FAULT_INJECTION
static const char *tself;  /* argv[0]: this test binary */

/*
 * The child side, run as `test_store --fault-child DSN` with AS4GW_FAULT
 * set (a fresh process: fault.c reads the variable once): accept f-1; the
 * fault point must kill it before it returns.
 */
static int
tfault_child_main(const char *dsn)
{
	struct store_result r;
	struct err err = { 0 };
	struct store *s = NULL;
	struct arena *a = arena_new(0);
	struct tmsg t;

	tmsg_init(&t, "f-1", 0x42, "receipt");
	if (getenv("TSTORE_CHILD_BIG") != NULL) {
		/* a part stored in chunks (STORE_CHUNK_THRESHOLD) */
		size_t n = STORE_CHUNK_THRESHOLD + 1;
		unsigned char *big = calloc(1, n);

		t.parts[2] = (struct store_part){ 2, "big@as4gw.test",
		    "application/octet-stream", "{}", big, n };
		t.m.n_parts = big != NULL ? 3 : 2;
	}
	if (store_open(dsn, &s, &err) == 0)
		(void)store_accept(s, &t.m, a, &r, &err);
	return 3;  /* the fault point did not fire */
}

/* Run the child with AS4GW_FAULT=fault; it must die by SIGKILL. */
static void
tfault_child(const struct tctx *c, const char *fault)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (setenv("AS4GW_FAULT", fault, 1) == 0)
			(void)execlp(tself, tself, "--fault-child", c->dsn,
			    (char *)NULL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		fail_msg("%s: child was not killed (status %d)", fault, status);
}
#endif

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

/* store_find of id (every party), expecting want (1 found, 0 none). */
static struct store_found *
tfind(struct store *s, struct arena *a, const char *id, const char *from,
    int want)
{
	struct store_found *f = NULL;
	struct err err = { 0 };
	int rc = store_find(s, id, from, a, &f, &err);

	if (rc == -1)
		fail_msg("store_find %s: %s", id, err.msg);
	assert_int_equal(rc, want);
	return f;
}

/*
 * Issue 11 item 10: store_find reads the inbox row, payload sizes and the
 * delivery row with its history; store_finish_error records the error of a
 * failed hand-off (cut, bytes outside printable ASCII as '?') and keeps it
 * once done; done_at is the done time.
 */
static void
t_find_history(void **state)
{
	struct tctx *c = *state;
	char long_err[STORE_ERROR_MAX + 50];
	struct store_found *f;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	(void)tfind(s, a, "q-1", NULL, 0);
	tput(s, a, "q-1", 1000, "leg-1");
	f = tfind(s, a, "q-1", NULL, 1);
	assert_null(f->next);
	assert_string_equal(f->from_party, TSENDER);
	assert_string_equal(f->pmode_id, "leg-1");
	assert_string_equal(f->source, "192.0.2.7");
	assert_int_equal(f->received_at_ms, T0 + 1000);
	assert_int_equal(f->content_hash[0], 0x42);
	assert_int_equal(f->content_hash[STORE_HASH_LEN - 1], 0x42);
	assert_int_equal(f->processed_at_ms, -1);
	assert_int_equal(f->duplicates, 0);
	assert_string_equal(f->state, "ready");
	assert_int_equal(f->attempts, 0);
	assert_null(f->last_error);
	assert_int_equal(f->done_at_ms, -1);
	assert_int_equal(f->n_parts, 2);
	assert_string_equal(f->parts[0].content_id, "part1@as4gw.test");
	assert_int_equal(f->parts[0].size, 4);
	assert_int_equal(f->parts[1].size, sizeof(nul_bytes));
	(void)tfind(s, a, "q-1", "another party", 0);
	(void)tfind(s, a, "q-1", TSENDER, 1);
	(void)tclaim(s, a, 10000, 60000, "q-1");
	assert_int_equal(store_finish_error(s, TSENDER, "q-1", 0, T0 + 11000,
	    T0 + 12000, "bad\x01 th\xc3\xa9ng", &err), 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_string_equal(f->state, "ready");
	assert_int_equal(f->attempts, 1);
	assert_string_equal(f->last_error, "bad? th??ng");
	assert_int_equal(f->last_error_at_ms, T0 + 11000);
	assert_int_equal(f->not_before_ms, T0 + 12000);
	(void)tclaim(s, a, 13000, 60000, "q-1");
	memset(long_err, 'x', sizeof(long_err) - 1);
	long_err[sizeof(long_err) - 1] = '\0';
	assert_int_equal(store_finish_error(s, TSENDER, "q-1", 0, T0 + 14000,
	    T0 + 14000, long_err, &err), 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_int_equal(strlen(f->last_error), STORE_ERROR_MAX);
	(void)tclaim(s, a, 15000, 60000, "q-1");
	tfinish(s, "q-1", 1, 16000, 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_string_equal(f->state, "done");
	assert_int_equal(f->attempts, 3);
	assert_int_equal(f->done_at_ms, T0 + 16000);
	assert_int_equal(f->processed_at_ms, T0 + 16000);
	assert_int_equal(f->last_error_at_ms, T0 + 14000);
	store_close(s);
	arena_free(a);
}

/*
 * Issue 12 item 4: 16 connections accept 16 MessageIds carrying one
 * business key at once under refuse: exactly one stored, every other
 * refused naming it, nothing of theirs stored.
 */
static void
t_business_race_refuse(void **state)
{
	struct tctx *c = *state;
	struct tthread th[N_THREADS];
	int i, n_new = 0, winner = -1;

	NEED(c);
	store_close(topen(c));
	trun_threads_biz(c, th, N_THREADS, 0, STORE_BUSINESS_REFUSE);
	for (i = 0; i < N_THREADS; i++)
		if (th[i].outcome == STORE_NEW) {
			n_new++;
			winner = i;
			assert_string_equal(th[i].dup_of, "");
		}
	assert_int_equal(n_new, 1);
	for (i = 0; i < N_THREADS; i++)
		if (i != winner) {
			assert_int_equal(th[i].outcome, STORE_BUSINESS_DUP);
			assert_string_equal(th[i].dup_of, th[winner].id);
		}
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE business_key = '"
	    TBIZKEY "' AND business_duplicate_of IS NULL", 1);
}

/* The same race under flag: all 16 stored, one holder, 15 marked with it. */
static void
t_business_race_flag(void **state)
{
	struct tctx *c = *state;
	struct tthread th[N_THREADS];
	int i, holder = -1;

	NEED(c);
	store_close(topen(c));
	trun_threads_biz(c, th, N_THREADS, 0, STORE_BUSINESS_FLAG);
	for (i = 0; i < N_THREADS; i++) {
		if (th[i].outcome != STORE_NEW)
			fail_msg("thread %d: outcome %d (%s)", i,
			    (int)th[i].outcome, th[i].msg);
		if (th[i].dup_of[0] == '\0') {
			assert_int_equal(holder, -1);
			holder = i;
		}
	}
	assert_true(holder >= 0);
	for (i = 0; i < N_THREADS; i++)
		if (i != holder)
			assert_string_equal(th[i].dup_of, th[holder].id);
	tcount(c, "SELECT count(*) FROM inbox", N_THREADS);
	tcount(c, "SELECT count(*) FROM delivery", N_THREADS);
	tcount(c, "SELECT count(*) FROM inbox WHERE business_duplicate_of"
	    " IS NULL", 1);
	tcountf(c, N_THREADS - 1, "SELECT count(*) FROM inbox WHERE"
	    " business_duplicate_of = '%s'", th[holder].id);
}

/* Accept t with business key key (NULL: none) under mode: the outcome's
 * business_duplicate_of ("" for NULL) must be want_of. */
static void
tbiz(struct store *s, struct arena *a, struct tmsg *t, const char *key,
    enum store_business mode, enum store_outcome want, const char *want_of)
{
	struct store_result r;

	t->m.business_key = key;
	t->m.business_mode = mode;
	r = taccept(s, a, t, want);
	assert_string_equal(r.business_duplicate_of != NULL ?
	    r.business_duplicate_of : "", want_of);
}

/*
 * One party's business key across MessageIds (store.h "store_accept"):
 * refused, flagged, a retry of the same MessageId always the plain
 * duplicate, another party's key its own, a probe never refused; find and
 * claim carry key and mark; a purged holder frees the key.
 */
static void
t_business_key(void **state)
{
	struct tctx *c = *state;
	struct arena *a = arena_new(0);
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct store *s;
	struct tmsg t;

	NEED(c);
	assert_non_null(a);
	s = topen(c);
	tmsg_init(&t, "b-1", 0x01, "receipt-1");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	tmsg_init(&t, "b-2", 0x02, "receipt-2");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_BUSINESS_DUP,
	    "b-1");
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tmsg_init(&t, "b-1", 0x01, "receipt-x");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_DUPLICATE, "");
	tmsg_init(&t, "b-2", 0x02, "receipt-2");
	t.m.received_at_ms = RECEIVED_MS + 1;   /* claimed after b-1 */
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_FLAG, STORE_NEW, "b-1");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_FLAG, STORE_DUPLICATE, "");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_DUPLICATE, "");
	t.m.receipt = NULL;     /* a probe of a new id is never refused */
	t.m.message_id = "b-6";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_ABSENT, "");
	tmsg_init(&t, "b-3", 0x03, "receipt-3");
	t.m.received_at_ms = RECEIVED_MS + 2;
	t.m.from_party = "another-party";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	tmsg_init(&t, "b-4", 0x04, "receipt-4");
	t.m.received_at_ms = RECEIVED_MS + 3;
	tbiz(s, a, &t, NULL, STORE_BUSINESS_OFF, STORE_NEW, "");
	tcount(c, "SELECT count(*) FROM inbox", 4);
	assert_int_equal(store_find(s, "b-2", NULL, a, &f, &err), 1);
	assert_string_equal(f->business_key, TBIZKEY);
	assert_string_equal(f->business_duplicate_of, "b-1");
	assert_int_equal(store_find(s, "b-4", NULL, a, &f, &err), 1);
	assert_null(f->business_key);
	assert_null(f->business_duplicate_of);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.message_id, "b-1");
	assert_string_equal(d.business_key, TBIZKEY);
	assert_null(d.business_duplicate_of);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.business_duplicate_of, "b-1");
	/* a large message (streamed with COPY on PostgreSQL) is refused
	 * before its payloads are written */
	tmsg_init(&t, "b-7", 0x07, "receipt-7");
	tmsg_add_big(&t);
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_BUSINESS_DUP,
	    "b-1");
	free(t.big);
	tcount(c, "SELECT count(*) FROM payload WHERE message_id = 'b-7'", 0);
	/* the holder purged: the key is free again (b-2 was never one) */
	tq_exec(c, "DELETE FROM inbox WHERE message_id = 'b-1'");
	tmsg_init(&t, "b-5", 0x05, "receipt-5");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	store_close(s);
	arena_free(a);
}

#define BT(f, ctx) cmocka_unit_test_prestate_setup_teardown(f, setup, \
	teardown, ctx)
#define BACKEND_TESTS(ctx) \
	BT(t_migrate_twice, ctx), BT(t_accept_new, ctx), \
	BT(t_accept_duplicate, ctx), BT(t_accept_drift, ctx), \
	BT(t_payload_roundtrip, ctx), BT(t_failure_rolls_back, ctx), \
	BT(t_not_migrated, ctx), BT(t_arena_exhausted, ctx), \
	BT(t_invalid_message, ctx), BT(t_concurrent_accept, ctx), \
	BT(t_concurrent_migrate, ctx), BT(t_claim_order, ctx), \
	BT(t_claim_empty, ctx), BT(t_finish_retry, ctx), \
	BT(t_stale_takeover, ctx), BT(t_finish_harmless, ctx), \
	BT(t_queue_unmigrated, ctx), BT(t_claim_arena_exhausted, ctx), \
	BT(t_purge_cutoffs, ctx), BT(t_purge_undelivered, ctx), \
	BT(t_purge_batch, ctx), BT(t_purge_invalid, ctx), BT(t_stats, ctx), \
	BT(t_wait, ctx), BT(t_concurrent_claim, ctx), BT(t_fault_accept, ctx), \
	BT(t_probe, ctx), BT(t_accept_part_shapes, ctx), \
	BT(t_accept_no_parts, ctx), BT(t_accept_streamed, ctx), \
	BT(t_accept_then_use, ctx), BT(t_migrate_old_rows, ctx), \
	BT(t_find_history, ctx), BT(t_business_key, ctx), \
	BT(t_business_race_refuse, ctx), BT(t_business_race_flag, ctx), \
	BT(t_migrate_business_rows, ctx), BT(t_chunk_roundtrip, ctx), \
	BT(t_chunk_gap, ctx), BT(t_migrate_chunk_rows, ctx), \
	BT(t_chunk_fault, ctx)

/* ---- migration of a database of the previous version (bb574aa) ---- */

/* Run the file sql/<backend>/<name> of the source tree on c's database and
 * record it as the migration runner would. */
static void
told_migration(const struct tctx *c, const char *name)
{
	char path[512], rec[256];
	FILE *f;
	char *text;
	long n;

	(void)snprintf(path, sizeof(path), "%s/sql/%s/%s", AS4GW_SOURCE_DIR,
	    c->pg ? "postgresql" : "sqlite", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	(void)fclose(f);
	tq_exec(c, text);
	free(text);
	(void)snprintf(rec, sizeof(rec), "INSERT INTO schema_migrations (name,"
	    " applied_at) VALUES ('%s/%s', %s)",
	    c->pg ? "postgresql" : "sqlite", name, c->pg ? "now()" : "0");
	tq_exec(c, rec);
}

/* Rows of the previous schema: old-1 from A (two parts, ready), old-2
 * from B (no part, done), both keyed by MessageId alone. */
static void
told_rows(const struct tctx *c)
{
	const char *at = c->pg ? "to_timestamp(1767323045.678)" :
	    "1767323045678";
	char sql[2048];

	(void)snprintf(sql, sizeof(sql),
	    "INSERT INTO inbox (message_id, from_party, to_party, service,"
	    " action, conversation_id, content_hash, receipt, received_at,"
	    " partition_key) VALUES"
	    " ('old-1', 'A', 'to', 's', 'a', 'c', %s, %s, %s, '2026-01'),"
	    " ('old-2', 'B', 'to', 's', 'a', 'c', %s, %s, %s, '2026-01');"
	    "INSERT INTO payload (message_id, part_no, content_id, mime_type,"
	    " content) VALUES ('old-1', 0, 'c0', 'text/plain', %s),"
	    " ('old-1', 1, NULL, NULL, %s);"
	    "INSERT INTO delivery (message_id, state, created_at) VALUES"
	    " ('old-1', 'ready', %s), ('old-2', 'done', %s)",
	    c->pg ? "decode(repeat('11', 32), 'hex')" : "zeroblob(32)",
	    c->pg ? "'\\x72'::bytea" : "X'72'", at,
	    c->pg ? "decode(repeat('22', 32), 'hex')" : "zeroblob(32)",
	    c->pg ? "'\\x73'::bytea" : "X'73'", at,
	    c->pg ? "'\\x00ff'::bytea" : "X'00ff'",
	    c->pg ? "''::bytea" : "X''", at, at);
	tq_exec(c, sql);
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
	tq_exec(c, c->pg ? "CREATE TABLE schema_migrations (name text NOT NULL"
	    " PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())" :
	    "CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,"
	    " applied_at integer NOT NULL)");
	told_migration(c, "001_inbox.sql");
	told_migration(c, "002_delivery.sql");
	if (c->pg)
		told_migration(c, "003_accept.sql");
	told_rows(c);
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
	tq_exec(c, c->pg ? "CREATE TABLE schema_migrations (name text NOT NULL"
	    " PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())" :
	    "CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,"
	    " applied_at integer NOT NULL)");
	told_migration(c, "001_inbox.sql");
	told_migration(c, "002_delivery.sql");
	if (c->pg)
		told_migration(c, "003_accept.sql");
	told_rows(c);
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

/* ---- payloads stored in chunks (issue 14; sqlite 007 / postgresql 008) -- */

#define TCH_BELOW STORE_CHUNK_THRESHOLD          /* stored whole */
#define TCH_ABOVE (STORE_CHUNK_THRESHOLD + 1)    /* 9 chunks, the last 1 B */
#define TCH_CHUNKS 9

/* n bytes of a pattern picked by seed (malloc'd). */
static unsigned char *
tch_bytes(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 2654435761u + seed) >> 13);
	return p;
}

/* t with a part of exactly the threshold (part 1) and one a byte over it
 * (part 2) after its <a/> part; the bytes in below / above. */
static void
tch_msg(struct tmsg *t, const char *id, unsigned char hash_byte,
    unsigned char *below, unsigned char *above)
{
	tmsg_init(t, id, hash_byte, "receipt");
	t->parts[1] = (struct store_part){ 1, "below@as4gw.test",
	    "application/octet-stream", NULL, below, TCH_BELOW };
	t->parts[2] = (struct store_part){ 2, "above@as4gw.test",
	    "application/octet-stream", "{}", above, TCH_ABOVE };
	t->m.n_parts = 3;
}

/* What store_payload_read gave: the bytes, in how many pieces. */
struct tch_read {
	unsigned char *buf;
	size_t len, cap, pieces, max_piece;
	size_t stop_after;            /* 0: never stop; else after n pieces */
};

static int
tch_read_cb(void *ctx, const unsigned char *p, size_t n)
{
	struct tch_read *r = ctx;

	if (r->stop_after != 0 && r->pieces == r->stop_after)
		return -1;
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->buf = realloc(r->buf, r->cap);
		assert_non_null(r->buf);
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	r->pieces++;
	if (n > r->max_piece)
		r->max_piece = n;
	return 0;
}

/* store_payload_read of (TSENDER, id, part_no): its answer, r filled. */
static int
tch_read(struct store *s, const char *id, int part_no, struct tch_read *r,
    struct err *err)
{
	struct store_payload_key k = { TSENDER, id, part_no };

	return store_payload_read(s, &k, tch_read_cb, r, err);
}

/* Read part_no of id and compare it with want[0, len). */
static void
tch_expect(struct store *s, const char *id, int part_no,
    const unsigned char *want, size_t len, size_t pieces)
{
	struct tch_read r = { 0 };
	struct err err = { 0 };

	if (tch_read(s, id, part_no, &r, &err) != 1)
		fail_msg("store_payload_read %s/%d: %s", id, part_no, err.msg);
	assert_int_equal(r.len, len);
	assert_int_equal(r.pieces, pieces);
	assert_true(r.max_piece <= (pieces > 1 ? STORE_CHUNK_BYTES : len));
	if (len > 0)
		assert_memory_equal(r.buf, want, len);
	free(r.buf);
}

/*
 * Both sides of the threshold: a part of exactly STORE_CHUNK_THRESHOLD
 * bytes stays whole in payload.content, one a byte longer becomes nine
 * chunk rows (its payload row: size, no content); both read back
 * byte-identical, the claim hands the chunked one over by size, find
 * reports its size; a duplicate and a drift write no chunk; the purge
 * takes the chunks with their rows.
 */
static void
t_chunk_roundtrip(void **state)
{
	struct tctx *c = *state;
	unsigned char *below = tch_bytes(TCH_BELOW, 1);
	unsigned char *above = tch_bytes(TCH_ABOVE, 2);
	struct store_purge p = { 0 };
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t n1, n2;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tch_msg(&t, "ch-1", 0x51, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NULL", 2);
	tcountf(c, 1, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " size = %zu AND (content IS NULL OR length(content) = 0)",
	    TCH_ABOVE);
	tcount(c, "SELECT count(*) FROM payload_chunk WHERE part_no = 2",
	    TCH_CHUNKS);
	tcount(c, "SELECT sum(length(content)) FROM payload_chunk",
	    (int64_t)TCH_ABOVE);
	tcount(c, "SELECT max(chunk_no) FROM payload_chunk", TCH_CHUNKS - 1);
	tch_expect(s, "ch-1", 2, above, TCH_ABOVE, TCH_CHUNKS);
	tch_expect(s, "ch-1", 1, below, TCH_BELOW, 1);
	tch_expect(s, "ch-1", 0, (const unsigned char *)"<a/>", 4, 1);
	assert_int_equal(tch_read(s, "ch-1", 3, &(struct tch_read){ 0 },
	    &err), 0);
	assert_int_equal(store_find(s, "ch-1", NULL, a, &f, &err), 1);
	assert_int_equal(f->n_parts, 3);
	assert_int_equal(f->parts[1].size, (int64_t)TCH_BELOW);
	assert_int_equal(f->parts[2].size, (int64_t)TCH_ABOVE);
	/* the claim carries bytes up to STORE_CLAIM_INLINE_MAX, sizes else */
	d = tclaim(s, a, 1000, 1000, "ch-1");
	assert_int_equal(d.n_parts, 3);
	assert_false(store_part_streamed(&d.parts[0]));
	assert_memory_equal(d.parts[0].data, "<a/>", 4);
	assert_true(store_part_streamed(&d.parts[1]));
	assert_int_equal(d.parts[1].len, TCH_BELOW);
	assert_true(store_part_streamed(&d.parts[2]));
	assert_int_equal(d.parts[2].len, TCH_ABOVE);
	/* a retry: the stored receipt, no chunk written twice */
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	tch_msg(&t, "ch-1", 0x52, below, above);   /* drift */
	(void)taccept(s, a, &t, STORE_DRIFT);
	tcount(c, "SELECT count(*) FROM payload_chunk", TCH_CHUNKS);
	tch_msg(&t, "ch-2", 0x53, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload_chunk", 2 * TCH_CHUNKS);
	p.default_cutoff_ms = T0 + 86400000;
	p.batch = 100;
	p.undelivered = 1;
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), 0);
	assert_int_equal(n1, 2);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	assert_int_equal(tch_read(s, "ch-2", 2, &(struct tch_read){ 0 },
	    &err), 0);
	free(below);
	free(above);
	store_close(s);
	arena_free(a);
}

/*
 * A chunk missing is an error, never a short payload that looks whole; a
 * reader that stops ends the read (PostgreSQL: the query is cancelled and
 * the connection works on).
 */
static void
t_chunk_gap(void **state)
{
	struct tctx *c = *state;
	unsigned char *below = tch_bytes(TCH_BELOW, 3);
	unsigned char *above = tch_bytes(TCH_ABOVE, 4);
	struct tch_read r = { .stop_after = 2 };
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tch_msg(&t, "gap-1", 0x61, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tch_msg(&t, "gap-2", 0x62, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	assert_int_equal(tch_read(s, "gap-1", 2, &r, &err), -1);
	assert_int_equal(r.pieces, 2);
	free(r.buf);
	tch_expect(s, "gap-1", 2, above, TCH_ABOVE, TCH_CHUNKS);
	tq_exec(c, "DELETE FROM payload_chunk WHERE message_id = 'gap-1'"
	    " AND chunk_no = 3");
	memset(&r, 0, sizeof(r));
	err_clear(&err);
	assert_int_equal(tch_read(s, "gap-1", 2, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(r.len, 3 * STORE_CHUNK_BYTES);
	free(r.buf);
	tq_exec(c, "DELETE FROM payload_chunk WHERE message_id = 'gap-2'"
	    " AND chunk_no = 8");
	memset(&r, 0, sizeof(r));
	err_clear(&err);
	assert_int_equal(tch_read(s, "gap-2", 2, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	free(r.buf);
	tch_expect(s, "gap-2", 1, below, TCH_BELOW, 1);
	free(below);
	free(above);
	store_close(s);
	arena_free(a);
}

/* A process killed at a store fault point while storing a message with a
 * chunked payload leaves no row and no chunk. */
static void
t_chunk_fault(void **state)
{
#ifdef AS4GW_FAULT_INJECTION
	struct tctx *c = *state;

	NEED(c);
	store_close(topen(c));
	assert_int_equal(setenv("TSTORE_CHILD_BIG", "1", 1), 0);
	tfault_child(c, "store.after-insert");
	tfault_child(c, "store.before-commit");
	assert_int_equal(unsetenv("TSTORE_CHILD_BIG"), 0);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
#else
	(void)state;
	testutil_skip("built without -Dfault_injection=true");
#endif
}

/*
 * A database of the previous version (every migration before sqlite 007 /
 * postgresql 008) with rows in it takes the chunk migration: the rows stay
 * whole (size NULL), are claimed and read back as before; new large
 * payloads go in chunks.
 */
static void
t_migrate_chunk_rows(void **state)
{
	static const char *const sq[] = { "003_party_key.sql",
	    "004_delivery_error.sql", "005_business_key.sql",
	    "006_purge_log.sql" };
	static const char *const pg[] = { "004_party_key.sql",
	    "005_delivery_error.sql", "006_business_key.sql",
	    "007_purge_log.sql" };
	struct tctx *c = *state;
	unsigned char *above = tch_bytes(TCH_ABOVE, 5);
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t i;

	NEED(c);
	a = arena_new(0);
	tq_exec(c, c->pg ? "CREATE TABLE schema_migrations (name text NOT NULL"
	    " PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())" :
	    "CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,"
	    " applied_at integer NOT NULL)");
	told_migration(c, "001_inbox.sql");
	told_migration(c, "002_delivery.sql");
	if (c->pg)
		told_migration(c, "003_accept.sql");
	told_rows(c);
	for (i = 0; i < 4; i++)
		told_migration(c, c->pg ? pg[i] : sq[i]);
	s = topen(c);   /* migrates: the chunk table */
	assert_int_equal(s->migrated, 1);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NULL", 2);
	assert_int_equal(store_find(s, "old-1", "A", a, &f, &err), 1);
	assert_int_equal(f->parts[0].size, 2);
	assert_int_equal(f->parts[1].size, 0);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.message_id, "old-1");
	assert_int_equal(d.n_parts, 2);
	assert_false(store_part_streamed(&d.parts[0]));
	assert_false(store_part_streamed(&d.parts[1]));
	assert_memory_equal(d.parts[0].data, "\x00\xff", 2);
	{
		struct store_payload_key k = { "A", "old-1", 0 };
		struct tch_read r = { 0 };

		assert_int_equal(store_payload_read(s, &k, tch_read_cb, &r,
		    &err), 1);
		assert_int_equal(r.len, 2);
		assert_memory_equal(r.buf, "\x00\xff", 2);
		free(r.buf);
	}
	tch_msg(&t, "new-1", 0x71, above, above);
	t.parts[1].len = 3;
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload_chunk", TCH_CHUNKS);
	tch_expect(s, "new-1", 2, above, TCH_ABOVE, TCH_CHUNKS);
	free(above);
	store_close(s);
	arena_free(a);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest common[] = {
		cmocka_unit_test(t_open_bad_dsn),
	};
	const struct CMUnitTest sqlite_tests[] = { BACKEND_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = {
		BACKEND_TESTS(&ctx_pg),
		BT(t_pg_connection_lost, &ctx_pg),
		BT(t_pg_skip_locked, &ctx_pg),
		BT(t_pg_queue_reconnect, &ctx_pg),
		BT(t_pg_accept_function, &ctx_pg),
	};
	int fails = 0;

#ifdef AS4GW_FAULT_INJECTION
	if (argc == 3 && strcmp(argv[1], "--fault-child") == 0)
		return tfault_child_main(argv[2]);
	tself = argv[0];
#endif
	(void)argc;
	(void)argv;
	fails += cmocka_run_group_tests_name("store", common, NULL, NULL);
	fails += cmocka_run_group_tests_name("store sqlite", sqlite_tests,
	    NULL, NULL);
	fails += cmocka_run_group_tests_name("store postgresql", pg_tests,
	    NULL, NULL);
	return fails;
}
