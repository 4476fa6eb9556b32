/*
 * Unit tests for src/deliver, the command target (--exec) against a real
 * store, SQLite and, when AS4GW_TEST_PG_DSN is set, PostgreSQL
 * (testdeliver.h over teststore.h): what the command sees (directory,
 * environment, stdin, stdout, process group), failures and their back-off,
 * a timeout that kills the whole process group, a failing message that
 * does not hold up the others.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#include "testdeliver.h"

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
	tdeliver_accept(s, "exec-1@as4gw.test");
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
		tdeliver_accept(s, id);
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
	tdeliver_accept(s, "again@as4gw.test");
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
	tdeliver_accept(s, "slow@as4gw.test");
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
	tdeliver_accept(s, "a-fails@as4gw.test");
	tdeliver_accept(s, "b-works@as4gw.test");
	tdeliver_accept(s, "c-works@as4gw.test");
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

#define EXEC_TESTS(ctx) \
	DT(t_exec_success, ctx), DT(t_exec_failure, ctx), \
	DT(t_exec_retry_doubles, ctx), DT(t_exec_timeout, ctx), \
	DT(t_backoff_does_not_block, ctx)

/* Each backend. */
int
main(void)
{
	const struct CMUnitTest sqlite_tests[] = { EXEC_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = { EXEC_TESTS(&ctx_pg) };
	int fails = 0;

	fails += cmocka_run_group_tests_name("deliver exec sqlite",
	    sqlite_tests, NULL, NULL);
	fails += cmocka_run_group_tests_name("deliver exec postgresql",
	    pg_tests, NULL, NULL);
	return fails;
}
