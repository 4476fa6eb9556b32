/*
 * Unit tests for src/store/store_copy*.c (`as4gw copy`, issue 15 item 4):
 * the refusals decided on the SQLite source before the target is touched
 * (the target DSN here points at a port nothing listens on, so reaching it
 * would fail differently), one table-driven case each.  The copy itself
 * runs over the real binary and PostgreSQL in
 * tests/integration/test_copy.py; the re-cut of chunk rows into
 * PostgreSQL's (store_copy_cut.c) is checked here row by row.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store/store_copy.h"
#include "store/store_copy_int.h"
#include "store/store_pg_int.h"
#include "testutil.h"

#define NOWHERE "postgresql://127.0.0.1:1/none?connect_timeout=1"

struct tcase {
	const char *name;
	const char *setup_sql;   /* run on a migrated store; NULL: none */
	int migrated;            /* a migrated as4gw store, else a plain file */
	const char *from;        /* NULL: the case's file */
	const char *to;
	enum err_kind kind;
	const char *msg;         /* in err.msg */
};

static const struct tcase cases[] = {
	{ "source not sqlite", NULL, 1, NOWHERE, NOWHERE, ERR_CONF,
	    "source must be sqlite:FILE" },
	{ "target not postgresql", NULL, 1, NULL, "sqlite:/tmp/x.db", ERR_CONF,
	    "target must be postgresql" },
	{ "source missing", NULL, 1, "sqlite:/nonexistent/as4gw.db", NOWHERE,
	    ERR_STORE, "No such file or directory" },
	{ "not an as4gw store", "CREATE TABLE t (x)", 0, NULL, NOWHERE,
	    ERR_STORE, "is not an as4gw sqlite store" },
	{ "older schema", "DELETE FROM schema_migrations WHERE name ="
	    " 'sqlite/007_payload_chunk.sql'", 1, NULL, NOWHERE, ERR_STORE,
	    "it lacks sqlite/007_payload_chunk.sql): run `as4gw migrate`" },
	{ "newer schema", "INSERT INTO schema_migrations VALUES"
	    " ('sqlite/999_future.sql', 0)", 1, NULL, NOWHERE, ERR_STORE,
	    "it has sqlite/999_future.sql): written by a newer as4gw" },
};

/* A file for the case: a migrated as4gw store or a plain SQLite file,
 * then the case's SQL. */
static void
make_source(const char *path, const struct tcase *tc)
{
	char dsn[512];
	struct store *s = NULL;
	struct err err = { 0 };
	sqlite3 *db;

	(void)unlink(path);
	if (tc->migrated) {
		(void)snprintf(dsn, sizeof(dsn), "sqlite:%s", path);
		assert_int_equal(store_open(dsn, &s, &err), 0);
		assert_int_equal(store_migrate(s, &err), 0);
		store_close(s);
	}
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (tc->setup_sql != NULL)
		assert_int_equal(sqlite3_exec(db, tc->setup_sql, NULL, NULL,
		    NULL), SQLITE_OK);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* Every case is refused with its kind and message, counting nothing. */
static void
t_refusals(void **state)
{
	char dir[] = "/tmp/as4gw-copy-XXXXXX", path[300], from[320];
	struct store_copy_report r;
	struct store_copy_opts o;
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	(void)snprintf(path, sizeof(path), "%s/as4gw.db", dir);
	(void)snprintf(from, sizeof(from), "sqlite:%s", path);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err err = { 0 };

		make_source(path, &cases[i]);
		memset(&o, 0, sizeof(o));
		o.from = cases[i].from != NULL ? cases[i].from : from;
		o.to = cases[i].to;
		assert_int_equal(store_copy(&o, &r, &err), -1);
		if (err.kind != cases[i].kind ||
		    strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("%s: got %d \"%s\"", cases[i].name,
			    (int)err.kind, err.msg);
		assert_int_equal(r.source.v[STORE_COPY_INBOX], 0);
		assert_int_equal(r.verified, 0);
	}
	(void)unlink(path);
	(void)rmdir(dir);
}

/* A migrated, empty source is read (counted) before the target is
 * reached: the failure is the target's connection, not the source. */
static void
t_source_before_target(void **state)
{
	char dir[] = "/tmp/as4gw-copy-XXXXXX", path[300], from[320];
	const struct tcase plain = { "plain", NULL, 1, NULL, NULL, 0, NULL };
	struct store_copy_report r;
	struct store_copy_opts o = { 0 };
	struct err err = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	(void)snprintf(path, sizeof(path), "%s/as4gw.db", dir);
	(void)snprintf(from, sizeof(from), "sqlite:%s", path);
	make_source(path, &plain);
	o.from = from;
	o.to = NOWHERE;
	assert_int_equal(store_copy(&o, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_non_null(strstr(err.msg, "connect to postgresql"));
	assert_int_equal(r.source.v[STORE_COPY_PURGE_RUNS], 0);
	(void)unlink(path);
	(void)rmdir(dir);
}

/* Every measure has its report label. */
static void
t_names(void **state)
{
	int m;

	(void)state;
	for (m = 0; m < STORE_COPY_N; m++) {
		assert_non_null(store_copy_measure_name(m));
		assert_string_not_equal(store_copy_measure_name(m), "?");
	}
	assert_string_equal(store_copy_measure_name(STORE_COPY_N), "?");
}

/* What the cutter wrote: every row's part, chunk_no and bytes. */
#define CUT_MAX 2048
struct cut_sink {
	int n;
	long long part[CUT_MAX], no[CUT_MAX];
	int len[CUT_MAX];
	unsigned char *bytes;         /* every row's content, in order */
	size_t off;
	int fail_at;                  /* this row's put fails (-1 never) */
};

static int
cut_put(void *ctx, const struct store_copy_row *r, struct err *err)
{
	struct cut_sink *k = ctx;

	assert_int_equal(r->n, 5);
	assert_true(k->n < CUT_MAX);
	if (k->n == k->fail_at)
		return err_set(err, ERR_STORE, NULL, "put refused");
	k->part[k->n] = strtoll(r->v[2], NULL, 10);
	k->no[k->n] = strtoll(r->v[3], NULL, 10);
	k->len[k->n] = r->len[4];
	assert_int_equal(r->fmt[4], 1);
	memcpy(k->bytes + k->off, r->v[4], (size_t)r->len[4]);
	k->off += (size_t)r->len[4];
	k->n++;
	return 0;
}

/* One key: part 0 fed as the source holds it (1 MiB rows, the last one
 * short), part 1 in odd pieces; every row len bytes but each part's last,
 * chunk_no 0..n-1 per part, the bytes in order, the counts from lengths. */
static void
cut_one(const char *from, const char *id, size_t len)
{
	static const size_t sizes[2] = { (size_t)2 * 1048576 + 12345, 70001 };
	struct store_copy_cut c;
	struct cut_sink *k = calloc(1, sizeof(*k));
	unsigned char *in = malloc(sizes[0] + sizes[1]);
	struct err err = { 0 };
	size_t off, n, i, want[2], step;
	int p, row = 0;

	assert_non_null(k);
	assert_non_null(in);
	k->bytes = malloc(sizes[0] + sizes[1]);
	k->fail_at = -1;
	for (i = 0; i < sizes[0] + sizes[1]; i++)
		in[i] = (unsigned char)(i * 31 + i / 7);
	assert_int_equal(store_copy_cut_init(&c, cut_put, k, &err), 0);
	store_copy_cut_key(&c, from, id);
	assert_int_equal(c.len, len);
	for (p = 0, off = 0; p < 2; p++) {
		step = p == 0 ? 1048576 : 4099;
		for (i = 0; i < sizes[p]; i += n) {
			n = sizes[p] - i < step ? sizes[p] - i : step;
			assert_int_equal(store_copy_cut_feed(&c, p,
			    in + off + i, n, &err), 0);
		}
		off += sizes[p];
		want[p] = (sizes[p] + len - 1) / len;
	}
	assert_int_equal(store_copy_cut_end(&c, &err), 0);
	assert_int_equal(c.want_rows, want[0] + want[1]);
	assert_int_equal(c.rows, c.want_rows);
	assert_int_equal(c.bytes, sizes[0] + sizes[1]);
	for (p = 0; p < 2; p++)
		for (i = 0; i < want[p]; i++, row++) {
			assert_int_equal(k->part[row], p);
			assert_int_equal(k->no[row], i);
			assert_int_equal(k->len[row], i + 1 < want[p] ? len :
			    sizes[p] - (want[p] - 1) * len);
		}
	assert_int_equal(k->n, row);
	assert_memory_equal(k->bytes, in, sizes[0] + sizes[1]);
	store_copy_cut_free(&c);
	free(k->bytes);
	free(k);
	free(in);
}

/* The re-cut into PostgreSQL's chunk rows: short keys get
 * STORE_PG_CHUNK_BYTES, long ones store_pg_chunk_len's shorter rows; a
 * failed put fails the feed. */
static void
t_cut(void **state)
{
	char party[400], id[300];
	struct store_copy_cut c;
	struct cut_sink *k = calloc(1, sizeof(*k));
	unsigned char buf[20000] = { 0 };
	struct err err = { 0 };

	(void)state;
	cut_one("urn:as4gw:dev:sender", "m1@example.org", STORE_PG_CHUNK_BYTES);
	memset(party, 'p', sizeof(party) - 1);
	party[sizeof(party) - 1] = '\0';
	memset(id, 'i', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	assert_true(store_pg_chunk_len(party, id) < STORE_PG_CHUNK_BYTES);
	cut_one(party, id, store_pg_chunk_len(party, id));
	assert_non_null(k);
	k->bytes = malloc(sizeof(buf));
	k->fail_at = 1;
	assert_int_equal(store_copy_cut_init(&c, cut_put, k, &err), 0);
	store_copy_cut_key(&c, "a", "b");
	assert_int_equal(store_copy_cut_feed(&c, 0, buf, sizeof(buf), &err),
	    -1);
	assert_non_null(strstr(err.msg, "put refused"));
	store_copy_cut_free(&c);
	free(k->bytes);
	free(k);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_refusals),
		cmocka_unit_test(t_source_before_target),
		cmocka_unit_test(t_names),
		cmocka_unit_test(t_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
