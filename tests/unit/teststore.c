/*
 * teststore — the two-backend store fixture of the test_store_*.c programs
 * and of the deliver and retention tests (STYLE.md 18): SQLite in a temp directory under /tmp and, when
 * AS4GW_TEST_PG_DSN is set, PostgreSQL (each test in its own schema, dropped
 * afterwards); rows inspected with sqlite3 / libpq directly, never through
 * the store API; test messages, queue and wait helpers, racing connections,
 * databases of earlier versions and the fault-point child.
 */
#include "teststore.h"

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

long long
tmigrations(const char *backend)
{
	size_t pos = 0;
	long long n = 0;

	while (store_migration_next(backend, &pos) != NULL)
		n++;
	return n;
}

struct tctx ctx_sqlite = { .pg = 0 };
struct tctx ctx_pg = { .pg = 1 };

/* Keep NOTICEs ("drop cascades to ...") out of the test output. */
static void
pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Run sql over a fresh admin connection to the base DSN (pg only). */
void
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

/* How long an inspecting SQLite connection waits for a store that is
 * writing at the same time (the deliver and retention threads). */
#define TSTORE_BUSY_MS 10000

/*
 * The test's own connection to the schema under test (pg), opened on first
 * use and closed by tstore_teardown: a connection per query would dominate
 * the run time of the tests that poll (deliver, retention).  It does not
 * carry the store's application_name, so tpg_terminate spares it; tq_mu
 * lets a test's threads inspect while the main thread does.
 */
static PGconn *tq_conn;
static pthread_mutex_t tq_mu = PTHREAD_MUTEX_INITIALIZER;

/* Run sql on tq_conn (several statements; binary: one, results in binary
 * format); NULL when no connection could be made. */
static PGresult *
tq_pg(const struct tctx *c, const char *sql, int binary)
{
	char dsn[sizeof(c->dsn)];
	PGresult *res = NULL;

	(void)pthread_mutex_lock(&tq_mu);
	if (tq_conn == NULL) {
		(void)snprintf(dsn, sizeof(dsn), "%s%coptions=-csearch_path%%3D%s",
		    c->base_dsn, strchr(c->base_dsn, '?') != NULL ? '&' : '?',
		    c->schema);
		tq_conn = PQconnectdb(dsn);
		(void)PQsetNoticeProcessor(tq_conn, pg_quiet, NULL);
	}
	if (PQstatus(tq_conn) != CONNECTION_OK) {
		PQfinish(tq_conn);
		tq_conn = NULL;
	} else if (binary) {
		res = PQexecParams(tq_conn, sql, 0, NULL, NULL, NULL, NULL, 1);
	} else {
		res = PQexec(tq_conn, sql);
	}
	(void)pthread_mutex_unlock(&tq_mu);
	return res;
}

/* The error of a tq_pg result, for a failure message. */
static const char *
tq_pg_error(const PGresult *res)
{
	return res != NULL ? PQresultErrorMessage(res) :
	    "could not connect to the test schema";
}

/* Close tq_conn (teardown). */
static void
tq_pg_close(void)
{
	(void)pthread_mutex_lock(&tq_mu);
	PQfinish(tq_conn);
	tq_conn = NULL;
	(void)pthread_mutex_unlock(&tq_mu);
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
int
tstore_setup(void **state)
{
	struct tctx *c = *state;

	return c->pg ? setup_pg(c) : setup_sqlite(c);
}

/* Drop the schema / remove the database files. */
int
tstore_teardown(void **state)
{
	struct tctx *c = *state;
	char p[300];

	tq_pg_close();
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

/* ---- inspection through the backend library ------------------------- */

/* One row, one column of sql as bytes (malloc'd; NULL for SQL NULL). */
unsigned char *
tq_value(const struct tctx *c, const char *sql, size_t *ret_len)
{
	unsigned char *out = NULL;

	*ret_len = 0;
	if (c->pg) {
		PGresult *res = tq_pg(c, sql, 1);

		if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
			fail_msg("%s: %s", sql, tq_pg_error(res));
		if (!PQgetisnull(res, 0, 0)) {
			*ret_len = (size_t)PQgetlength(res, 0, 0);
			out = malloc(*ret_len + 1);
			assert_non_null(out);
			memcpy(out, PQgetvalue(res, 0, 0), *ret_len);
		}
		PQclear(res);
	} else {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		(void)sqlite3_busy_timeout(db, TSTORE_BUSY_MS);
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
int64_t
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

/* Run sql without looking at results (test set-up of rows). */
void
tq_exec(const struct tctx *c, const char *sql)
{
	if (c->pg) {
		PGresult *res = tq_pg(c, sql, 0);

		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK)
			fail_msg("%s: %s", sql, tq_pg_error(res));
		PQclear(res);
	} else {
		sqlite3 *db = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		(void)sqlite3_busy_timeout(db, TSTORE_BUSY_MS);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
			fail_msg("%s: %s", sql, sqlite3_errmsg(db));
		sqlite3_close(db);
	}
}

/* ---- messages --------------------------------------------------------- */

const unsigned char nul_bytes[7] = { 'a', 0, 'b', 0, 0, 'c', 0 };

/* A message with two parts (one full of NULs); hash_byte picks the content. */
void
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
void
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
struct store *
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
struct store_result
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
void
tcount(const struct tctx *c, const char *sql, int64_t want)
{
	int64_t got = tq_int(c, sql);

	if (got != want)
		fail_msg("%s: got %lld, want %lld", sql, (long long)got,
		    (long long)want);
}

/* tcount() with a printf-built query. */
void
tcountf(const struct tctx *c, int64_t want, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	tcount(c, sql, want);
}

/* Accept t with business key key (NULL: none) under mode: the outcome's
 * business_duplicate_of ("" for NULL) must be want_of. */
void
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

/* ---- the delivery queue and wait (issue 4) ----------------------------- */

/* Accept message id, received at T0 + off_ms on leg pmode (NULL: none). */
void
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
struct store_delivery
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
void
tfinish(struct store *s, const char *id, int ok, int64_t now_off,
    int64_t retry_off)
{
	struct err err = { 0 };

	if (store_finish(s, TSENDER, id, ok, T0 + now_off, T0 + retry_off,
	    &err) != 0)
		fail_msg("store_finish %s: %s", id, err.msg);
}

/* Milliseconds store_wait(s, timeout_ms) took (it must succeed). */
int64_t
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
void
tbetween(const char *what, int64_t ms, int64_t lo, int64_t hi)
{
	if (ms < lo || ms > hi)
		fail_msg("%s took %lld ms, want %lld..%lld", what,
		    (long long)ms, (long long)lo, (long long)hi);
}

/* ---- concurrency ------------------------------------------------------ */

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
void
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
void
trun_threads(const struct tctx *c, struct tthread *th, int n, int migrate_only)
{
	trun_threads_biz(c, th, n, migrate_only, STORE_BUSINESS_OFF);
}

/* ---- postgresql: the connection goes away ----------------------------- */

/* Kill the store's server processes and wait until they are gone. */
void
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

/* ---- databases of earlier versions ------------------------------------ */

/* Run the file sql/<backend>/<name> of the source tree on c's database and
 * record it as the migration runner would. */
void
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
void
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

/* The database of the previous version bb574aa (migrations up to sqlite 002
 * / postgresql 003, recorded as the runner would) with told_rows in it. */
void
told_database(const struct tctx *c)
{
	tq_exec(c, c->pg ? "CREATE TABLE schema_migrations (name text NOT NULL"
	    " PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())" :
	    "CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,"
	    " applied_at integer NOT NULL)");
	told_migration(c, "001_inbox.sql");
	told_migration(c, "002_delivery.sql");
	if (c->pg)
		told_migration(c, "003_accept.sql");
	told_rows(c);
}

/* ---- a process killed at a store fault point -------------------------- */

#ifdef AS4GW_FAULT_INJECTION
static const char *tself;  /* argv[0]: this test binary */

/*
 * The child side, run as `test_store_* --fault-child DSN` with AS4GW_FAULT
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
void
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

/* Run a store test program's groups: common (no backend, named "store"),
 * then "<name> sqlite" and "<name> postgresql"; `--fault-child DSN` runs
 * tfault_child_main instead, before any group. */
int
tstore_main(int argc, char **argv, const struct tstore_groups *g)
{
	char group[128];
	int fails = 0;

#ifdef AS4GW_FAULT_INJECTION
	if (argc == 3 && strcmp(argv[1], "--fault-child") == 0)
		return tfault_child_main(argv[2]);
	tself = argv[0];
#endif
	(void)argc;
	(void)argv;
	if (g->n_common > 0)
		fails += _cmocka_run_group_tests("store", g->common,
		    g->n_common, NULL, NULL);
	(void)snprintf(group, sizeof(group), "%s sqlite", g->name);
	fails += _cmocka_run_group_tests(group, g->sqlite, g->n_sqlite, NULL,
	    NULL);
	(void)snprintf(group, sizeof(group), "%s postgresql", g->name);
	fails += _cmocka_run_group_tests(group, g->pg, g->n_pg, NULL, NULL);
	return fails;
}
