/*
 * Unit tests for src/deliver: the directory and command targets against a
 * real store, SQLite (a temp directory) and, when AS4GW_TEST_PG_DSN is set,
 * PostgreSQL (each test in its own schema).  Messages go in through
 * store_accept(); rows are inspected with sqlite3 / libpq directly.
 *
 * The crash tests re-run this binary ("--crash-child") with AS4GW_FAULT set
 * so the fault point kills a fresh process (fault.c reads the variable
 * once); they need a -Dfault_injection=true build and skip loudly without.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "testutil.h"
#include "conf/conf.h"
#include "deliver/deliver.h"
#include "deliver/deliver_int.h"
#include "util/clock.h"
#include "util/codec.h"

#define RECEIVED_MS INT64_C(1767323045678) /* 2026-01-02T03:04:05.678Z */
#define RECEIVED_ISO "2026-01-02T03:04:05.678Z"

/* One backend under test. */
struct tctx {
	int pg;
	int skip;               /* pg requested but AS4GW_TEST_PG_DSN unset */
	char dsn[2048];
	char path[256];         /* sqlite: the database file */
	char dir[64];           /* sqlite: its temp directory */
	char out[64];           /* the delivery directory (and scratch) */
	char base_dsn[1024];    /* pg: AS4GW_TEST_PG_DSN */
	char schema[64];
};

static struct tctx ctx_sqlite = { .pg = 0 };
static struct tctx ctx_pg = { .pg = 1 };

/* ---- backends --------------------------------------------------------- */

/* The test's own connection to the schema under test (pg), opened on first
 * use and closed by teardown: one per query would dominate the run time. */
static PGconn *tpg;

/* tpg, connected to dsn. */
static PGconn *
tpg_conn(const char *dsn)
{
	if (tpg == NULL) {
		tpg = PQconnectdb(dsn);
		if (PQstatus(tpg) != CONNECTION_OK)
			fail_msg("%s", PQerrorMessage(tpg));
	}
	return tpg;
}

/* Keep NOTICEs out of the test output. */
static void
pg_quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Run sql over a fresh connection to dsn (pg only). */
static void
pg_exec(const char *dsn, const char *sql)
{
	PGconn *conn = PQconnectdb(dsn);
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

/* Fresh database (sqlite file or pg schema) and delivery directory. */
static int
setup(void **state)
{
	static int serial;
	struct tctx *c = *state;
	const char *env = getenv("AS4GW_TEST_PG_DSN");
	char sql[128];

	(void)snprintf(c->out, sizeof(c->out), "/tmp/as4gw-deliver-out-XXXXXX");
	if (mkdtemp(c->out) == NULL)
		return -1;
	if (!c->pg) {
		(void)snprintf(c->dir, sizeof(c->dir), "/tmp/as4gw-deliver-XXXXXX");
		if (mkdtemp(c->dir) == NULL)
			return -1;
		(void)snprintf(c->path, sizeof(c->path), "%s/inbox.db", c->dir);
		(void)snprintf(c->dsn, sizeof(c->dsn), "sqlite:%s", c->path);
		return 0;
	}
	c->skip = env == NULL || *env == '\0';
	if (c->skip)
		return 0;
	(void)snprintf(c->base_dsn, sizeof(c->base_dsn), "%s", env);
	(void)snprintf(c->schema, sizeof(c->schema), "as4gw_dtest_%ld_%d",
	    (long)getpid(), ++serial);
	(void)snprintf(c->dsn, sizeof(c->dsn),
	    "%s%coptions=-csearch_path%%3D%s", env,
	    strchr(env, '?') != NULL ? '&' : '?', c->schema);
	(void)snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", c->schema);
	pg_exec(c->base_dsn, sql);
	return 0;
}

/* Remove a directory tree with rm -rf (test scratch only). */
static void
rm_rf(const char *path)
{
	char cmd[400];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", path);
}

/* Drop the schema / remove the files. */
static int
teardown(void **state)
{
	struct tctx *c = *state;
	char sql[128];

	rm_rf(c->out);
	PQfinish(tpg);
	tpg = NULL;
	if (c->pg && !c->skip) {
		(void)snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE",
		    c->schema);
		pg_exec(c->base_dsn, sql);
	} else if (!c->pg) {
		rm_rf(c->dir);
	}
	return 0;
}

#define NEED(c) do { \
	if ((c)->skip) \
		testutil_skip("AS4GW_TEST_PG_DSN not set: postgresql deliver test"); \
} while (0)

/* One integer from sql (cast to text so both backends answer alike). */
static int64_t
tq_int(const struct tctx *c, const char *sql)
{
	char q[768], text[64] = "";

	(void)snprintf(q, sizeof(q), "SELECT CAST((%s) AS text)", sql);
	if (c->pg) {
		PGconn *conn = tpg_conn(c->dsn);
		PGresult *res = PQexec(conn, q);

		if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
			fail_msg("%s: %s", q, PQerrorMessage(conn));
		if (!PQgetisnull(res, 0, 0))
			(void)snprintf(text, sizeof(text), "%s", PQgetvalue(res, 0, 0));
		PQclear(res);
	} else {
		sqlite3 *db = NULL;
		sqlite3_stmt *st = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		(void)sqlite3_busy_timeout(db, 10000);
		if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK ||
		    sqlite3_step(st) != SQLITE_ROW)
			fail_msg("%s: %s", q, sqlite3_errmsg(db));
		if (sqlite3_column_type(st, 0) != SQLITE_NULL)
			(void)snprintf(text, sizeof(text), "%s",
			    (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
		sqlite3_close(db);
	}
	if (text[0] == '\0')
		return -1; /* SQL NULL */
	return strtoll(text, NULL, 10);
}

/* A time column as ms since the epoch (-1 for NULL). */
static int64_t
tq_ms(const struct tctx *c, const char *col, const char *table,
    const char *id)
{
	char q[512];

	if (c->pg)
		(void)snprintf(q, sizeof(q), "SELECT CAST(round(extract(epoch "
		    "FROM %s) * 1000) AS bigint) FROM %s WHERE message_id = '%s'",
		    col, table, id);
	else
		(void)snprintf(q, sizeof(q), "SELECT %s FROM %s WHERE "
		    "message_id = '%s'", col, table, id);
	return tq_int(c, q);
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

/* The state of one delivery row, checked. */
static void
tstate(const struct tctx *c, const char *id, const char *state, int attempts)
{
	char q[512];

	(void)snprintf(q, sizeof(q), "SELECT count(*) FROM delivery WHERE "
	    "message_id = '%s' AND state = '%s' AND attempts = %d", id, state,
	    attempts);
	tcount(c, q, 1);
}

/* Open and migrate. */
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

/* ---- messages --------------------------------------------------------- */

struct tmsg {
	struct store_message m;
	struct store_part parts[3];
};

#define TSENDER "urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender"

static const unsigned char nul_bytes[7] = { 'a', 0, 'b', 0, 0, 'c', 0 };

/* A writable string (conf.h has char *; -Wwrite-strings). */
#define TS(x) ((char[]){ x })

/* The leg of tmsg_init's messages, for message.json (deliver_json.c):
 * the sender's party type and id, roles, service type, encryption. */
static struct conf_party_id tleg_from_id = { TS("sender"),
    TS("urn:oasis:names:tc:ebcore:partyid-type:unregistered") };
static struct conf_party_id tleg_to_id = { TS("receiver"), NULL };
static struct pmode_leg tleg = {
	.id = TS("leg-1"),
	.from = { &tleg_from_id, 1, TS(TSENDER), TS("urn:example:role:sender") },
	.to = { &tleg_to_id, 1, TS("receiver"), NULL },
	.service = TS("urn:example:service"),
	.service_type = TS("urn:example:service-type"),
	.action = TS("Deliver"),
	.encryption = CONF_REQUIRED,
};
static struct conf tconf = { .legs = &tleg, .n_legs = 1 };

/* A message with three parts: XML, bytes with NULs, an empty Body payload. */
static void
tmsg_init(struct tmsg *t, const char *id)
{
	memset(t, 0, sizeof(*t));
	t->m.message_id = id;
	t->m.from_party = TSENDER;
	t->m.to_party = "receiver";
	t->m.service = "urn:example:service";
	t->m.action = "Deliver";
	t->m.conversation_id = "conv-1";
	t->m.agreement_ref = NULL;
	t->m.pmode_id = "leg-1";
	t->m.source = "192.0.2.7";
	t->m.partition_key = "2026-01";
	(void)codec_sha256(id, strlen(id), t->m.content_hash);
	t->m.receipt = (const unsigned char *)"receipt";
	t->m.receipt_len = 7;
	t->m.received_at_ms = RECEIVED_MS;
	t->parts[0] = (struct store_part){ 0, "part1@as4gw.test",
	    "application/xml", "{\"MimeType\":\"application/xml\"}",
	    (const unsigned char *)"<a/>", 4 };
	t->parts[1] = (struct store_part){ 1, "part2@as4gw.test",
	    "application/octet-stream",
	    "{\"CompressionType\":\"application/gzip\"}", nul_bytes,
	    sizeof(nul_bytes) };
	t->parts[2] = (struct store_part){ 2, NULL, NULL,
	    "{\"a\\\"b\":\"\\u0001\"}", NULL, 0 };
	t->m.parts = t->parts;
	t->m.n_parts = 3;
}

/* Accept a new message with id into s. */
static void
taccept(struct store *s, const char *id)
{
	struct arena *a = arena_new(0);
	struct store_result r;
	struct err err = { 0 };
	struct tmsg t;

	tmsg_init(&t, id);
	if (store_accept(s, &t.m, a, &r, &err) != 0)
		fail_msg("store_accept: %s", err.msg);
	assert_int_equal(r.outcome, STORE_NEW);
	arena_free(a);
}

/* The message.json deliver must write for tmsg_init(id) (id plain); the
 * same bytes whatever the attempt (the argument only documents the call). */
static char *
texpected_json(const char *id_json, int attempts)
{
	static char out[4096];

	(void)snprintf(out, sizeof(out),
	    "{\n"
	    "  \"message_id\": \"%s\",\n"
	    "  \"from\": \"urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender\",\n"
	    "  \"to\": \"receiver\",\n"
	    "  \"from_party\": {\"type\": "
	    "\"urn:oasis:names:tc:ebcore:partyid-type:unregistered\", "
	    "\"id\": \"sender\", \"role\": \"urn:example:role:sender\"},\n"
	    "  \"to_party\": {\"type\": null, \"id\": \"receiver\", "
	    "\"role\": null},\n"
	    "  \"service\": \"urn:example:service\",\n"
	    "  \"service_type\": \"urn:example:service-type\",\n"
	    "  \"action\": \"Deliver\",\n"
	    "  \"conversation_id\": \"conv-1\",\n"
	    "  \"agreement_ref\": null,\n"
	    "  \"pmode\": \"leg-1\",\n"
	    "  \"received_at\": \"" RECEIVED_ISO "\",\n"
	    "  \"business_key\": null,\n"
	    "  \"duplicate_of\": null,\n"
	    "  \"parts\": [\n"
	    "    {\"part_no\": 0, \"content_id\": \"part1@as4gw.test\", "
	    "\"mime_type\": \"application/xml\", \"properties\": "
	    "{\"MimeType\":\"application/xml\"}, \"file\": \"part-0.bin\", "
	    "\"size\": 4, \"sha256\": \"29114363f749a0226b6988dda3ca2492a954117a"
	    "b6b5f382706c20300dabc079\", \"transformations\": "
	    "[\"decrypted\"]},\n"
	    "    {\"part_no\": 1, \"content_id\": \"part2@as4gw.test\", "
	    "\"mime_type\": \"application/octet-stream\", \"properties\": "
	    "{\"CompressionType\":\"application/gzip\"}, "
	    "\"file\": \"part-1.bin\", \"size\": 7, \"sha256\": "
	    "\"47f0c90c6590fd0f93144a2c1ed6cd2218b1d8668acaa80945b6e698a9e9ff8a\", "
	    "\"transformations\": [\"decrypted\", \"decompressed\"]},\n"
	    "    {\"part_no\": 2, \"content_id\": null, \"mime_type\": null, "
	    "\"properties\": {\"a\\\"b\":\"\\u0001\"}, \"file\": \"part-2.bin\", "
	    "\"size\": 0, \"sha256\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
	    "649b934ca495991b7852b855\", \"transformations\": []}\n"
	    "  ]\n"
	    "}\n", id_json);
	(void)attempts;
	return out;
}

/* Assert dir/name holds exactly the files of tmsg_init with this JSON. */
static void
tcheck_dir(const char *dir, const char *name, const char *json)
{
	static const char *const files[] = { "message.json", "part-0.bin",
	    "part-1.bin", "part-2.bin" };
	const void *want[] = { json, "<a/>", nul_bytes, "" };
	const size_t want_len[] = { strlen(json), 4, sizeof(nul_bytes), 0 };
	char p[512];
	struct dirent *de;
	size_t i, len, n = 0;
	char *got;
	DIR *d;

	for (i = 0; i < 4; i++) {
		(void)snprintf(p, sizeof(p), "%s/%s/%s", dir, name, files[i]);
		if ((got = testutil_read(p, &len)) == NULL)
			fail_msg("missing %s", p);
		if (len != want_len[i] || memcmp(got, want[i], len) != 0)
			fail_msg("%s: got %zu bytes: %.*s", p, len, (int)len, got);
		free(got);
	}
	(void)snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(d = opendir(p));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	(void)closedir(d);
	assert_int_equal(n, 4);
}

/* Entries of dir: total count; fails on leftovers (.tmp-*, .old-*). */
static size_t
tentries(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_name[0] == '.')
			fail_msg("leftover %s/%s", dir, de->d_name);
		n++;
	}
	(void)closedir(d);
	return n;
}

/* The directory name of id, checked for shape. */
static void
tname(const char *id, char name[65])
{
	struct err err = { 0 };
	size_t i;

	assert_int_equal(deliver_name(TSENDER, id, name, &err), 0);
	assert_int_equal(strlen(name), 64);
	for (i = 0; i < 64; i++)
		assert_non_null(strchr("0123456789abcdef", name[i]));
}

/* deliver_opts for the directory target of c. */
static struct deliver_opts
tdir_opts(const struct tctx *c)
{
	struct deliver_opts o;

	memset(&o, 0, sizeof(o));
	o.to_dir = c->out;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	o.conf = &tconf;
	return o;
}

/* deliver_opts for a command. */
static struct deliver_opts
texec_opts(const char *cmd, unsigned timeout_s)
{
	struct deliver_opts o;

	memset(&o, 0, sizeof(o));
	o.exec_cmd = cmd;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	o.conf = &tconf;
	o.exec_timeout_s = timeout_s;
	return o;
}

/* deliver_report_fn collecting what it is told. */
struct treports {
	int n, ok, attempts;
	int64_t retry_in_ms;
	char id[256], name[65], msg[256];
};

/* Record one report into the struct treports at arg. */
static void
treport(void *arg, const struct deliver_report *r)
{
	struct treports *t = arg;

	t->n++;
	t->ok = r->ok;
	t->attempts = r->attempts;
	t->retry_in_ms = r->retry_in_ms;
	(void)snprintf(t->id, sizeof(t->id), "%s", r->message_id);
	(void)snprintf(t->name, sizeof(t->name), "%s", r->name);
	(void)snprintf(t->msg, sizeof(t->msg), "%s",
	    r->err != NULL ? r->err->msg : "");
	assert_true(r->ok == (r->err == NULL));
}

/* ---- the directory target --------------------------------------------- */

/* Two messages: both written exactly as expected, rows done, report lines;
 * a second run finds nothing. */
static void
t_dir_delivers(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct treports rep = { 0 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	char name[65], p[512];

	NEED(c);
	s = topen(c);
	taccept(s, "m1@as4gw.test");
	taccept(s, "q\"uo\\te@as4gw.test");
	o = tdir_opts(c);
	o.report = treport;
	o.report_arg = &rep;
	assert_int_equal(deliver_run(s, &o, NULL, &n, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(n.delivered, 2);
	assert_int_equal(n.failed, 0);
	assert_int_equal(rep.n, 2);
	assert_true(rep.ok);
	assert_string_equal(rep.id, "q\"uo\\te@as4gw.test");
	assert_int_equal(rep.attempts, 1);
	tname("m1@as4gw.test", name);
	tcheck_dir(c->out, name, texpected_json("m1@as4gw.test", 1));
	tname("q\"uo\\te@as4gw.test", name);
	assert_string_equal(rep.name, name);
	tcheck_dir(c->out, name, texpected_json("q\\\"uo\\\\te@as4gw.test", 1));
	assert_int_equal(tentries(c->out), 2);
	tstate(c, "m1@as4gw.test", "done", 1);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'", 2);
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 0);
	/* nothing left: a second run delivers nothing, changes nothing */
	memset(&n, 0, sizeof(n));
	assert_int_equal(deliver_one(s, &o, &err), 0);
	assert_int_equal(deliver_run(s, &o, NULL, &n, &err), 0);
	assert_int_equal(n.delivered + n.failed, 0);
	assert_int_equal(rep.n, 2);
	assert_int_equal(tentries(c->out), 2);
	(void)snprintf(p, sizeof(p), "%s/%s/message.json", c->out, name);
	assert_int_equal(access(p, R_OK), 0);
	store_close(s);
}

/*
 * A deliverer died after its claim (and after writing a partial or complete
 * directory): the row stays claimed until stale, then the next one replaces
 * the directory with the same content, attempts 2, and one directory only.
 */
static void
t_dir_redeliver_stale_claim(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct deliver_opts o;
	struct arena *a = arena_new(0);
	struct store *s;
	struct err err = { 0 };
	char name[65], p[512];
	FILE *f;

	NEED(c);
	s = topen(c);
	taccept(s, "crash@as4gw.test");
	assert_int_equal(store_claim(s, clock_epoch_ms(), 300000, a, &d, &err), 1);
	tname("crash@as4gw.test", name);
	/* what the dead deliverer left: a stale directory with other content */
	(void)snprintf(p, sizeof(p), "%s/%s", c->out, name);
	assert_int_equal(mkdir(p, 0750), 0);
	(void)snprintf(p, sizeof(p), "%s/%s/junk", c->out, name);
	assert_non_null(f = fopen(p, "w"));
	(void)fclose(f);
	o = tdir_opts(c);
	assert_int_equal(deliver_one(s, &o, &err), 0); /* claim not stale yet */
	tstate(c, "crash@as4gw.test", "claimed", 1);
	o.stale_ms = 0;
	assert_int_equal(deliver_one(s, &o, &err), 1);
	assert_int_equal(err.kind, ERR_NONE);
	tcheck_dir(c->out, name, texpected_json("crash@as4gw.test", 2));
	assert_int_equal(tentries(c->out), 1);
	tstate(c, "crash@as4gw.test", "done", 2);
	assert_int_equal(deliver_one(s, &o, &err), 0);
	store_close(s);
	arena_free(a);
}

/* This test binary (argv[0] when it is a path: under valgrind
 * /proc/self/exe is valgrind). */
static const char *tself = "/proc/self/exe";

/* Run this binary as a deliverer that SIGKILLs itself at fault point. */
static void
tcrash_child(const struct tctx *c, const char *point)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == 0) {
		(void)setenv("AS4GW_FAULT", point, 1);
		(void)execl(tself, "test_deliver", "--crash-child", c->dsn,
		    c->out, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		fail_msg("crash child at %s: status 0x%x, not SIGKILL", point, st);
}

/*
 * The real thing: a deliverer process killed at deliver.after-claim (no
 * directory yet) and at deliver.after-target (directory complete, row not
 * done); each time the next run delivers once, identical but for attempts.
 */
static void
t_dir_crash_faults(void **state)
{
	struct tctx *c = *state;
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	char name[65];

	NEED(c);
#ifndef AS4GW_FAULT_INJECTION
	testutil_skip("built without -Dfault_injection=true: no fault points");
#endif
	s = topen(c);
	taccept(s, "fault-1@as4gw.test");
	tname("fault-1@as4gw.test", name);
	tcrash_child(c, "deliver.after-claim");
	tstate(c, "fault-1@as4gw.test", "claimed", 1);
	assert_int_equal(tentries(c->out), 0);
	tcrash_child(c, "deliver.after-target"); /* stale 0: takes it over */
	tstate(c, "fault-1@as4gw.test", "claimed", 2);
	tcheck_dir(c->out, name, texpected_json("fault-1@as4gw.test", 2));
	o = tdir_opts(c);
	o.stale_ms = 0;
	assert_int_equal(deliver_one(s, &o, &err), 1);
	tcheck_dir(c->out, name, texpected_json("fault-1@as4gw.test", 3));
	assert_int_equal(tentries(c->out), 1);
	tstate(c, "fault-1@as4gw.test", "done", 3);
	assert_int_equal(deliver_one(s, &o, &err), 0);
	store_close(s);
}

/* A directory that cannot be written: the row goes back with a back-off. */
static void
t_dir_unwritable(void **state)
{
	struct tctx *c = *state;
	struct treports rep = { 0 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	char missing[128];
	int64_t before = clock_epoch_ms(), nb;

	NEED(c);
	s = topen(c);
	taccept(s, "nodir@as4gw.test");
	(void)snprintf(missing, sizeof(missing), "%s/missing", c->out);
	o = tdir_opts(c);
	o.to_dir = missing;
	o.report = treport;
	o.report_arg = &rep;
	assert_int_equal(deliver_one(s, &o, &err), 2);
	assert_int_equal(err.kind, ERR_IO);
	assert_non_null(strstr(err.msg, "could not open directory"));
	assert_int_equal(rep.n, 1);
	assert_false(rep.ok);
	assert_int_equal(rep.retry_in_ms, 1000);
	assert_string_equal(rep.msg, err.msg);
	tstate(c, "nodir@as4gw.test", "ready", 1);
	nb = tq_ms(c, "not_before", "delivery", "nodir@as4gw.test");
	assert_true(nb >= before + 1000 && nb <= clock_epoch_ms() + 1000);
	tcount(c, "SELECT count(*) FROM delivery WHERE claimed_at IS NULL", 1);
	assert_int_equal(tentries(c->out), 0);
	store_close(s);
}

/* ---- the command target ----------------------------------------------- */

/* What the command of t_exec_success recorded in c->out: environment,
 * stdin, stdout, process group; and its directory gone afterwards. */
static void
tcheck_exec_outputs(const struct tctx *c, const char *name)
{
	char p[512], line[1024], *got, *dir;
	size_t len;

	(void)snprintf(p, sizeof(p), "%s/env", c->out);
	assert_non_null(got = testutil_read(p, &len));
	(void)snprintf(line, sizeof(line), "|exec-1@as4gw.test|urn:oasis:names:"
	    "tc:ebcore:partyid-type:unregistered:sender|urn:example:service|"
	    "Deliver|kept\n");
	assert_non_null(strstr(got, line));
	dir = strchr(got, '|');
	assert_non_null(dir);
	*dir = '\0';
	assert_true(strncmp(dir + 1, got, strlen(got)) == 0); /* $1 = AS4GW_DIR */
	assert_true(strlen(got) > 65);
	assert_string_equal(got + strlen(got) - 64, name);
	assert_int_equal(access(got, F_OK), -1); /* removed after */
	got[strlen(got) - 65] = '\0';
	assert_int_equal(access(got, F_OK), -1); /* the private parent too */
	free(got);
	(void)snprintf(p, sizeof(p), "%s/stdin", c->out);
	assert_non_null(got = testutil_read(p, &len));
	assert_int_equal(len, 0);
	free(got);
	(void)snprintf(p, sizeof(p), "%s/fd", c->out);
	assert_non_null(got = testutil_read(p, &len));
	assert_string_equal(got, "same\n");
	free(got);
	(void)snprintf(p, sizeof(p), "%s/pgrp", c->out);
	assert_non_null(got = testutil_read(p, &len));
	assert_non_null(dir = strchr(got, '\n'));
	assert_true(strncmp(got, dir + 1, (size_t)(dir - got)) == 0);
	free(got);
}

/*
 * The command sees the directory as $1 and $AS4GW_DIR, the AS4GW_*
 * variables (ours replacing inherited ones), stdin /dev/null, stdout on
 * stderr, its own process group; the temporary directory is gone after.
 */
static void
t_exec_success(void **state)
{
	struct tctx *c = *state;
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	char cmd[1024], p[512], name[65], *got;
	size_t len;
	int saved, fd, rc;

	NEED(c);
	s = topen(c);
	taccept(s, "exec-1@as4gw.test");
	tname("exec-1@as4gw.test", name);
	(void)setenv("AS4GW_DIR", "inherited-must-not-win", 1);
	(void)setenv("AS4GW_TEST_KEEP", "kept", 1);
	(void)snprintf(cmd, sizeof(cmd),
	    "set -e; O='%s'; mkdir \"$O/copy\"; cp \"$1\"/* \"$O/copy/\"; "
	    "printf '%%s|%%s|%%s|%%s|%%s|%%s|%%s\\n' \"$1\" \"$AS4GW_DIR\" "
	    "\"$AS4GW_MESSAGE_ID\" \"$AS4GW_FROM\" \"$AS4GW_SERVICE\" "
	    "\"$AS4GW_ACTION\" \"$AS4GW_TEST_KEEP\" > \"$O/env\"; "
	    "cat > \"$O/stdin\"; "
	    "if [ /dev/stdout -ef /dev/stderr ]; then echo same > \"$O/fd\"; fi; "
	    "tr '\\0' '\\n' < /proc/$$/environ | "
	    "grep -c '^AS4GW_DIR=' > \"$O/count\"; "
	    "awk '{print $5}' /proc/$$/stat > \"$O/pgrp\"; echo $$ >> \"$O/pgrp\"",
	    c->out);
	o = texec_opts(cmd, 30);
	/* our stdout a file of its own: the command's must not land there */
	(void)fflush(stdout);
	assert_true((saved = dup(STDOUT_FILENO)) != -1);
	(void)snprintf(p, sizeof(p), "%s/our-stdout", c->out);
	assert_true((fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600)) != -1);
	assert_int_equal(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	rc = deliver_one(s, &o, &err);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	(void)close(saved);
	(void)close(fd);
	assert_int_equal(rc, 1);
	assert_int_equal(err.kind, ERR_NONE);
	assert_non_null(got = testutil_read(p, &len));
	assert_int_equal(len, 0);
	free(got);
	(void)unlink(p);
	(void)snprintf(p, sizeof(p), "%s/count", c->out);
	assert_non_null(got = testutil_read(p, &len));
	assert_string_equal(got, "1\n"); /* ours replaced the inherited one */
	free(got);
	(void)unlink(p);
	(void)unsetenv("AS4GW_DIR");
	(void)unsetenv("AS4GW_TEST_KEEP");
	tcheck_dir(c->out, "copy", texpected_json("exec-1@as4gw.test", 1));
	tstate(c, "exec-1@as4gw.test", "done", 1);
	tcheck_exec_outputs(c, name);
	store_close(s);
}

/* Exit status, signal, missing shell command: each a failed attempt with
 * the back-off; the row is ready again, not claimable before not_before. */
static void
t_exec_failure(void **state)
{
	static const struct {
		const char *cmd;
		const char *msg;
	} cases[] = {
		{ "exit 3", "command exited with status 3" },
		{ "kill -TERM $$", "command killed by signal 15" },
		{ "/nonexistent/as4gw-backend \"$1\"", "command exited with status 127" },
	};
	struct tctx *c = *state;
	struct deliver_opts o;
	struct store *s;
	struct err err;
	char id[64];
	int64_t before, nb;
	size_t i;

	NEED(c);
	s = topen(c);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		(void)snprintf(id, sizeof(id), "fail-%zu@as4gw.test", i);
		taccept(s, id);
		o = texec_opts(cases[i].cmd, 30);
		err_clear(&err);
		before = clock_epoch_ms();
		assert_int_equal(deliver_one(s, &o, &err), 2);
		assert_int_equal(err.kind, ERR_IO);
		assert_string_equal(err.msg, cases[i].msg);
		tstate(c, id, "ready", 1);
		nb = tq_ms(c, "not_before", "delivery", id);
		assert_true(nb >= before + 1000 && nb <= clock_epoch_ms() + 1000);
		/* backing off (the first only: earlier rows may be due again
		 * under a slow valgrind) */
		if (i == 0 && clock_epoch_ms() < nb - 500)
			assert_int_equal(deliver_one(s, &o, &err), 0);
	}
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NOT NULL", 0);
	store_close(s);
}

/* After the back-off the message is claimed again, the next back-off is
 * twice as long. */
static void
t_exec_retry_doubles(void **state)
{
	struct tctx *c = *state;
	struct timespec ts = { 1, 100000000 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	int64_t before, nb;

	NEED(c);
	s = topen(c);
	taccept(s, "again@as4gw.test");
	o = texec_opts("exit 1", 30);
	assert_int_equal(deliver_one(s, &o, &err), 2);
	(void)nanosleep(&ts, NULL);
	before = clock_epoch_ms();
	err_clear(&err);
	assert_int_equal(deliver_one(s, &o, &err), 2);
	tstate(c, "again@as4gw.test", "ready", 2);
	nb = tq_ms(c, "not_before", "delivery", "again@as4gw.test");
	assert_true(nb >= before + 2000 && nb <= clock_epoch_ms() + 2000);
	o = texec_opts("exit 0", 30);
	assert_int_equal(deliver_one(s, &o, &err), 0);
	store_close(s);
}

/* A command past its timeout is killed with its whole process group. */
static void
t_exec_timeout(void **state)
{
	struct tctx *c = *state;
	struct timespec ts = { 0, 50000000 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	char cmd[512], p[512], proc[64], *got;
	int64_t t0;
	size_t len;
	long pid;
	int i, alive = 1;

	NEED(c);
	s = topen(c);
	taccept(s, "slow@as4gw.test");
	(void)snprintf(cmd, sizeof(cmd), "sleep 60 & echo $! > '%s/pid'; wait",
	    c->out);
	o = texec_opts(cmd, 1);
	t0 = clock_mono_ms();
	assert_int_equal(deliver_one(s, &o, &err), 2);
	assert_true(clock_mono_ms() - t0 < 5000);
	assert_string_equal(err.msg, "command timed out after 1 s");
	tstate(c, "slow@as4gw.test", "ready", 1);
	(void)snprintf(p, sizeof(p), "%s/pid", c->out);
	assert_non_null(got = testutil_read(p, &len));
	pid = strtol(got, NULL, 10);
	free(got);
	assert_true(pid > 1);
	/* the background sleep went with the group (dead or a zombie) */
	for (i = 0; i < 100 && alive; i++) {
		(void)snprintf(proc, sizeof(proc), "/proc/%ld/stat", pid);
		got = testutil_read(proc, &len);
		alive = got != NULL && strstr(got, ") Z ") == NULL;
		free(got);
		if (alive)
			(void)nanosleep(&ts, NULL);
	}
	assert_false(alive);
	store_close(s);
}

/* A message whose target keeps failing does not hold up the others. */
static void
t_backoff_does_not_block(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	s = topen(c);
	taccept(s, "a-fails@as4gw.test");
	taccept(s, "b-works@as4gw.test");
	taccept(s, "c-works@as4gw.test");
	o = texec_opts("[ \"$AS4GW_MESSAGE_ID\" != a-fails@as4gw.test ]", 30);
	assert_int_equal(deliver_run(s, &o, NULL, &n, &err), 0);
	assert_int_equal(n.delivered, 2);
	/* once, or more when the run outlasted a back-off (valgrind) */
	assert_true(n.failed >= 1);
	tstate(c, "a-fails@as4gw.test", "ready", (int)n.failed);
	tstate(c, "b-works@as4gw.test", "done", 1);
	tstate(c, "c-works@as4gw.test", "done", 1);
	store_close(s);
}

/* --max stops after N claims; a stop flag set before stops at once. */
static void
t_run_max_and_stop(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	atomic_int stop;

	NEED(c);
	s = topen(c);
	taccept(s, "max-1@as4gw.test");
	taccept(s, "max-2@as4gw.test");
	taccept(s, "max-3@as4gw.test");
	o = tdir_opts(c);
	o.max_messages = 1;
	assert_int_equal(deliver_run(s, &o, NULL, &n, &err), 0);
	assert_int_equal(n.delivered, 1);
	tstate(c, "max-1@as4gw.test", "done", 1);
	atomic_init(&stop, 1);
	o.max_messages = 0;
	o.follow = 1;
	assert_int_equal(deliver_run(s, &o, &stop, &n, &err), 0);
	assert_int_equal(n.delivered, 1);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 2);
	store_close(s);
}

/* A second connection that pushes a message while deliver_run follows. */
struct tfollow {
	const struct tctx *c;
	atomic_int stop;
	int64_t ms;          /* accept to done */
};

/* The pushing thread: accept, wait until delivered, set the stop flag. */
static void *
tfollow_main(void *arg)
{
	struct tfollow *f = arg;
	struct timespec ts = { 0, 300000000 }, poll = { 0, 20000000 };
	struct store *s = topen(f->c);
	int64_t t0;
	int i;

	(void)nanosleep(&ts, NULL);
	t0 = clock_mono_ms();
	taccept(s, "late@as4gw.test");
	for (i = 0; i < 500; i++) {
		if (tq_int(f->c, "SELECT count(*) FROM delivery WHERE "
		    "state = 'done'") == 1)
			break;
		(void)nanosleep(&poll, NULL);
	}
	f->ms = clock_mono_ms() - t0;
	atomic_store(&f->stop, 1);
	if (f->c->pg) /* wake the deliverer's store_wait() to see the flag */
		PQclear(PQexec(tpg_conn(f->c->dsn), "NOTIFY as4gw_inbox"));
	store_close(s);
	return NULL;
}

/* follow: an idle deliverer wakes for a new message (NOTIFY on pg) and
 * stops when asked. */
static void
t_run_follow(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct tfollow f = { .c = c };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	pthread_t th;

	NEED(c);
	s = topen(c);
	atomic_init(&f.stop, 0);
	o = tdir_opts(c);
	o.follow = 1;
	assert_int_equal(pthread_create(&th, NULL, tfollow_main, &f), 0);
	assert_int_equal(deliver_run(s, &o, &f.stop, &n, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(n.delivered, 1);
	if (f.ms > 3000)
		fail_msg("new message delivered after %lld ms", (long long)f.ms);
	store_close(s);
}

/* Run sql (several statements) on the store under test. */
static void
tsql(const struct tctx *c, const char *sql)
{
	if (c->pg) {
		PGresult *res = PQexec(tpg_conn(c->dsn), sql);

		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			fail_msg("%s: %s", sql, PQerrorMessage(tpg_conn(c->dsn)));
		PQclear(res);
	} else {
		sqlite3 *db = NULL;
		char *msg = NULL;

		assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
		(void)sqlite3_busy_timeout(db, 10000);
		if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
			fail_msg("%s: %s", sql, msg);
		sqlite3_close(db);
	}
}

/* A release ("done") that fails as on a full disk (issue 11 item 1). */
static void
tdisk_full(const struct tctx *c, int on)
{
	if (on && c->pg)
		tsql(c, "CREATE FUNCTION tfull() RETURNS trigger LANGUAGE "
		    "plpgsql AS $$BEGIN IF NEW.state = 'done' THEN RAISE "
		    "EXCEPTION 'could not extend file: No space left on "
		    "device'; END IF; RETURN NEW; END$$; CREATE TRIGGER tfull "
		    "BEFORE UPDATE ON delivery FOR EACH ROW EXECUTE FUNCTION "
		    "tfull()");
	else if (on)
		tsql(c, "CREATE TRIGGER tfull BEFORE UPDATE ON delivery WHEN "
		    "NEW.state = 'done' BEGIN SELECT RAISE(ABORT, "
		    "'database or disk is full'); END");
	else
		tsql(c, c->pg ? "DROP TRIGGER tfull ON delivery; DROP "
		    "FUNCTION tfull()" : "DROP TRIGGER tfull");
}

/* deliver_outage_fn counting starts and recoveries. */
struct toutages {
	int down, up;
	char what[16];
};

static void
toutage(void *arg, const struct deliver_outage *e)
{
	struct toutages *t = arg;

	if (e->recovered) {
		t->up++;
		assert_true(e->retries > 0);
		return;
	}
	t->down++;
	assert_non_null(e->err);
	(void)snprintf(t->what, sizeof(t->what), "%s", e->what);
}

/* The thread of t_release_retried: end the "full disk" after a while, then
 * stop the deliverer once the row is done. */
static void *
tfull_main(void *arg)
{
	struct tfollow *f = arg;
	struct timespec ts = { 0, 700000000 }, poll = { 0, 20000000 };
	int i;

	(void)nanosleep(&ts, NULL);
	tdisk_full(f->c, 0);
	for (i = 0; i < 500; i++) {
		if (tq_int(f->c, "SELECT count(*) FROM delivery WHERE "
		    "state = 'done'") == 1)
			break;
		(void)nanosleep(&poll, NULL);
	}
	atomic_store(&f->stop, 1);
	if (f->c->pg)
		PQclear(PQexec(tpg_conn(f->c->dsn), "NOTIFY as4gw_inbox"));
	return NULL;
}

/*
 * follow: a release that fails (full disk) is retried until the store
 * works again: the message is handed over once, its row is done (not left
 * 'claimed' for stale_ms), one outage start and one recovery reported.
 */
static void
t_release_retried(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct tfollow f = { .c = c };
	struct toutages out = { 0 };
	struct deliver_opts o;
	struct store *s;
	struct err err = { 0 };
	pthread_t th;

	NEED(c);
	s = topen(c);
	taccept(s, "full@as4gw.test");
	tdisk_full(c, 1);
	atomic_init(&f.stop, 0);
	o = tdir_opts(c);
	o.follow = 1;
	o.outage = toutage;
	o.report_arg = &out;
	assert_int_equal(pthread_create(&th, NULL, tfull_main, &f), 0);
	assert_int_equal(deliver_run(s, &o, &f.stop, &n, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(n.delivered, 1);
	assert_int_equal(n.failed, 0);
	assert_int_equal(out.down, 1);
	assert_int_equal(out.up, 1);
	assert_string_equal(out.what, "release");
	tstate(c, "full@as4gw.test", "done", 1);
	assert_int_equal(tentries(c->out), 1);
	store_close(s);
}

/* A store that is not migrated: -1 with ERR_STORE from deliver_run. */
static void
t_store_error(void **state)
{
	struct tctx *c = *state;
	struct deliver_counts n = { 0 };
	struct deliver_opts o;
	struct store *s = NULL;
	struct err err = { 0 };

	NEED(c);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	o = tdir_opts(c);
	assert_int_equal(deliver_run(s, &o, NULL, &n, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(n.delivered + n.failed, 0);
	store_close(s);
}

/* ---- no backend needed ------------------------------------------------ */

/* message.json: party type and id from the leg even when the value holds
 * ':'; a name the configuration does not know is not split; a quoted
 * "CompressionType" inside a property value is not a key. */
static void
t_json_parties(void **state)
{
	struct conf_party_id id = { TS("a:b"), TS("t:x") };
	struct pmode_leg leg = {
		.id = TS("L"), .from = { &id, 1, TS("t:x:a:b"), NULL },
		.to = { &id, 1, TS("t:x:a:b"), TS("r") }, .service = TS("s"),
	};
	struct conf conf = { .legs = &leg, .n_legs = 1 };
	struct store_part part = { 0, "c", "m",
	    "{\"x\": \"\\\"CompressionType\\\": 1\"}", (const unsigned char *)"z",
	    1 };
	struct store_delivery d = { .message_id = "m", .from_party = "t:x:a:b",
	    .to_party = "other:p", .service = "s", .action = "a",
	    .pmode_id = "L", .parts = &part, .n_parts = 1 };
	struct buf b = { 0 };

	(void)state;
	assert_int_equal(deliver_json(&b, &d, &conf), 0);
	assert_int_equal(buf_append(&b, "", 1), 0);
	assert_non_null(strstr(b.data, "\"from_party\": {\"type\": \"t:x\", "
	    "\"id\": \"a:b\", \"role\": null}"));
	assert_non_null(strstr(b.data, "\"to_party\": {\"type\": null, "
	    "\"id\": null, \"role\": null}"));
	assert_non_null(strstr(b.data, "\"service_type\": null"));
	assert_non_null(strstr(b.data, "\"transformations\": []"));
	buf_free(&b);
	d.pmode_id = "gone";  /* a leg no longer configured */
	d.to_party = "plain";
	assert_int_equal(deliver_json(&b, &d, &conf), 0);
	assert_int_equal(buf_append(&b, "", 1), 0);
	assert_non_null(strstr(b.data, "\"from_party\": {\"type\": null, "
	    "\"id\": null, \"role\": null}"));
	assert_non_null(strstr(b.data, "\"to_party\": {\"type\": null, "
	    "\"id\": \"plain\", \"role\": null}"));
	buf_free(&b);
}

/* --exec: one program path runs without a shell; anything else with. */
static void
t_exec_direct(void **state)
{
	static const struct { const char *cmd; int direct; } t[] = {
		{ "/usr/local/bin/backend.sh", 1 }, { "./hand-off", 1 },
		{ "true", 1 }, { "/opt/a+b/x_y-1.2,3@%:", 1 },
		{ "cp -r \"$1\" /x", 0 }, { "/bin/x arg", 0 },
		{ "/bin/x;rm", 0 }, { "$HOME/x", 0 }, { "~/x", 0 },
		{ "A=1", 0 }, { "x|y", 0 }, { "x*", 0 }, { "", 0 },
		{ "x\ty", 0 }, { "'x'", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (deliver_exec_direct(t[i].cmd) != t[i].direct)
			fail_msg("%s: want %d", t[i].cmd, t[i].direct);
}

/* Entries of dir, dot entries included (but . and ..). */
static size_t
tcount_all(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL)
		n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	(void)closedir(d);
	return n;
}

/* Sweep: leftovers of a dead pid go; a live pid's (pid 1, ours) stay
 * unless older than stale_ms (ours: never); other names stay. */
static void
t_sweep(void **state)
{
	char dir[] = "/tmp/as4gw-sweep-XXXXXX", p[512], h[65];
	struct deliver_opts o;
	pid_t dead;
	int st;

	(void)state;
	memset(h, 'a', 64);
	h[64] = '\0';
	assert_non_null(mkdtemp(dir));
	if ((dead = fork()) == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, &st, 0), dead);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld", dir, h, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld/part-0.bin", dir, h,
	    (long)dead);
	assert_int_equal(close(open(p, O_WRONLY | O_CREAT, 0600)), 0);
	(void)snprintf(p, sizeof(p), "%s/.old-%s-%ld", dir, h, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-1", dir, h);
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-%s-%ld", dir, h, (long)getpid());
	assert_int_equal(mkdir(p, 0700), 0);
	(void)snprintf(p, sizeof(p), "%s/.tmp-other-%ld", dir, (long)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	memset(&o, 0, sizeof(o));
	o.to_dir = dir;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	assert_int_equal(deliver_sweep(&o), 2);
	assert_int_equal(tcount_all(dir), 3);
	o.stale_ms = 0;  /* pid 1 is alive, but its directory is "old" */
	(void)nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	assert_int_equal(deliver_sweep(&o), 1);
	assert_int_equal(tcount_all(dir), 2);
	rm_rf(dir);
}

/* 1 s doubling to 60 s. */
static void
t_backoff(void **state)
{
	static const struct {
		int attempts;
		int64_t ms;
	} cases[] = {
		{ -1, 1000 }, { 0, 1000 }, { 1, 1000 }, { 2, 2000 }, { 3, 4000 },
		{ 5, 16000 }, { 6, 32000 }, { 7, 60000 }, { 8, 60000 },
		{ 64, 60000 }, { 1000000, 60000 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (deliver_backoff_ms(cases[i].attempts) != cases[i].ms)
			fail_msg("attempts %d: %lld", cases[i].attempts,
			    (long long)deliver_backoff_ms(cases[i].attempts));
}

/* The name is the hex SHA-256 over party, NUL, id (the inbox key): two
 * parties' messages with one MessageId get two directories. */
static void
t_name(void **state)
{
	char name[65], other[65];
	struct err err = { 0 };

	(void)state;
	assert_int_equal(deliver_name("urn:a", "abc", name, &err), 0);
	/* python3: hashlib.sha256(b"urn:a\x00abc").hexdigest() */
	assert_string_equal(name, "66d32f71074e4ed6ae700eac47a90cfa"
	    "37affd27bcd5c75d4cc2f179d88833d9");
	assert_int_equal(deliver_name("urn:b", "abc", other, &err), 0);
	assert_string_not_equal(name, other);
	assert_int_equal(deliver_name("urn:a", "bc", other, &err), 0);
	assert_string_not_equal(name, other);
	assert_int_equal(deliver_name("urn:ab", "c", other, &err), 0);
	assert_string_not_equal(name, other);
	tname("../../etc/passwd", name);
	assert_null(strchr(name, '/'));
}

/* Exactly one target: both or none is a programmer error, store untouched. */
static void
t_opts_invalid(void **state)
{
	struct deliver_opts o;
	struct err err = { 0 };

	(void)state;
	memset(&o, 0, sizeof(o));
	assert_int_equal(deliver_one(NULL, &o, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	o.to_dir = "/tmp";
	o.exec_cmd = "true";
	err_clear(&err);
	assert_int_equal(deliver_one(NULL, &o, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

/* --crash-child DSN DIR: one deliver_one with stale 0 (AS4GW_FAULT set). */
static int
crash_child(const char *dsn, const char *dir)
{
	struct deliver_opts o;
	struct store *s = NULL;
	struct err err = { 0 };
	int rc;

	memset(&o, 0, sizeof(o));
	o.to_dir = dir;
	o.stale_ms = 0;
	o.conf = &tconf;
	if (store_open(dsn, &s, &err) == -1)
		return 3;
	rc = deliver_one(s, &o, &err);
	store_close(s);
	return rc == 1 ? 0 : 4;
}

#define BT(f, ctx) cmocka_unit_test_prestate_setup_teardown(f, setup, \
	teardown, ctx)
#define BACKEND_TESTS(ctx) \
	BT(t_dir_delivers, ctx), BT(t_dir_redeliver_stale_claim, ctx), \
	BT(t_dir_crash_faults, ctx), BT(t_dir_unwritable, ctx), \
	BT(t_exec_success, ctx), BT(t_exec_failure, ctx), \
	BT(t_exec_retry_doubles, ctx), BT(t_exec_timeout, ctx), \
	BT(t_backoff_does_not_block, ctx), BT(t_run_max_and_stop, ctx), \
	BT(t_run_follow, ctx), BT(t_release_retried, ctx), \
	BT(t_store_error, ctx)

/* The common group, then each backend; or the crash child. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest common[] = {
		cmocka_unit_test(t_backoff),
		cmocka_unit_test(t_name),
		cmocka_unit_test(t_opts_invalid),
		cmocka_unit_test(t_json_parties),
		cmocka_unit_test(t_exec_direct),
		cmocka_unit_test(t_sweep),
	};
	const struct CMUnitTest sqlite_tests[] = { BACKEND_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = { BACKEND_TESTS(&ctx_pg) };
	int fails = 0;

	if (argc == 4 && strcmp(argv[1], "--crash-child") == 0)
		return crash_child(argv[2], argv[3]);
	if (argc > 0 && strchr(argv[0], '/') != NULL)
		tself = argv[0];
	fails += cmocka_run_group_tests_name("deliver", common, NULL, NULL);
	fails += cmocka_run_group_tests_name("deliver sqlite", sqlite_tests,
	    NULL, NULL);
	fails += cmocka_run_group_tests_name("deliver postgresql", pg_tests,
	    NULL, NULL);
	return fails;
}
