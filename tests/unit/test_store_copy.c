/*
 * Unit tests for src/store/store_copy*.c (`as4gw copy`, issue 15 item 4):
 * the refusals decided on the SQLite source before the target is touched
 * (the target DSN here points at a port nothing listens on, so reaching it
 * would fail differently), one table-driven case each.  The copy itself
 * runs over the real binary and PostgreSQL in
 * tests/integration/test_copy.py.
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_refusals),
		cmocka_unit_test(t_source_before_target),
		cmocka_unit_test(t_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
