/*
 * Unit tests for src/deliver, the directory target (--to-dir) against a
 * real store, SQLite and, when AS4GW_TEST_PG_DSN is set, PostgreSQL
 * (testdeliver.h over teststore.h): messages written exactly as expected,
 * a stale claim and a killed deliverer taken over, a directory that cannot
 * be written.
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

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"

#include "testdeliver.h"

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
	tdeliver_accept(s, "m1@as4gw.test");
	tdeliver_accept(s, "q\"uo\\te@as4gw.test");
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
	tdeliver_accept(s, "crash@as4gw.test");
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
		(void)execl(tself, "test_deliver_dir", "--crash-child", c->dsn,
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
	tdeliver_accept(s, "fault-1@as4gw.test");
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
	tdeliver_accept(s, "nodir@as4gw.test");
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

#define DIR_TESTS(ctx) \
	DT(t_dir_delivers, ctx), DT(t_dir_redeliver_stale_claim, ctx), \
	DT(t_dir_crash_faults, ctx), DT(t_dir_unwritable, ctx)

/* Each backend; or the crash child. */
int
main(int argc, char **argv)
{
	const struct CMUnitTest sqlite_tests[] = { DIR_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = { DIR_TESTS(&ctx_pg) };
	int fails = 0;

	if (argc == 4 && strcmp(argv[1], "--crash-child") == 0)
		return crash_child(argv[2], argv[3]);
	if (argc > 0 && strchr(argv[0], '/') != NULL)
		tself = argv[0];
	fails += cmocka_run_group_tests_name("deliver dir sqlite",
	    sqlite_tests, NULL, NULL);
	fails += cmocka_run_group_tests_name("deliver dir postgresql",
	    pg_tests, NULL, NULL);
	return fails;
}
