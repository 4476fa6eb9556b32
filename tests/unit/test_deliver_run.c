/*
 * Unit tests for src/deliver, the run loop (deliver_run) against a real
 * store, SQLite and, when AS4GW_TEST_PG_DSN is set, PostgreSQL
 * (testdeliver.h over teststore.h): --max and the stop flag, --follow
 * woken by a new message, a release that fails (full disk) retried until
 * the store works again, a store that is not migrated.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"

#include "testdeliver.h"

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
	tdeliver_accept(s, "max-1@as4gw.test");
	tdeliver_accept(s, "max-2@as4gw.test");
	tdeliver_accept(s, "max-3@as4gw.test");
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

/* Wait (10 s at most) until one delivery row is done. */
static void
tfollow_wait_done(const struct tfollow *f)
{
	struct timespec poll = { 0, 20000000 };
	int i;

	for (i = 0; i < 500; i++) {
		if (tq_int(f->c, "SELECT count(*) FROM delivery WHERE "
		    "state = 'done'") == 1)
			break;
		(void)nanosleep(&poll, NULL);
	}
}

/* Set the stop flag of the deliverer that follows. */
static void
tfollow_stop(struct tfollow *f)
{
	atomic_store(&f->stop, 1);
	if (f->c->pg) /* wake the deliverer's store_wait() to see the flag */
		tq_exec(f->c, "NOTIFY as4gw_inbox");
}

/* The pushing thread: accept, wait until delivered, set the stop flag. */
static void *
tfollow_main(void *arg)
{
	struct tfollow *f = arg;
	struct timespec ts = { 0, 300000000 };
	struct store *s = topen(f->c);
	int64_t t0;

	(void)nanosleep(&ts, NULL);
	t0 = clock_mono_ms();
	tdeliver_accept(s, "late@as4gw.test");
	tfollow_wait_done(f);
	f->ms = clock_mono_ms() - t0;
	tfollow_stop(f);
	store_close(s);
	return NULL;
}

/* deliver_run with o and --follow on s while thread runs beside it on f
 * (it sets the stop flag); it must succeed and deliver one message. */
static struct deliver_counts
tfollow_run(struct store *s, struct deliver_opts *o, struct tfollow *f,
    void *(*thread)(void *))
{
	struct deliver_counts n = { 0 };
	struct err err = { 0 };
	pthread_t th;

	atomic_init(&f->stop, 0);
	o->follow = 1;
	assert_int_equal(pthread_create(&th, NULL, thread, f), 0);
	assert_int_equal(deliver_run(s, o, &f->stop, &n, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(n.delivered, 1);
	return n;
}

/* follow: an idle deliverer wakes for a new message (NOTIFY on pg) and
 * stops when asked. */
static void
t_run_follow(void **state)
{
	struct tctx *c = *state;
	struct tfollow f = { .c = c };
	struct deliver_opts o;
	struct store *s;

	NEED(c);
	s = topen(c);
	o = tdir_opts(c);
	(void)tfollow_run(s, &o, &f, tfollow_main);
	if (f.ms > 3000)
		fail_msg("new message delivered after %lld ms", (long long)f.ms);
	store_close(s);
}

/* A release ("done") that fails as on a full disk (issue 11 item 1). */
static void
tdisk_full(const struct tctx *c, int on)
{
	if (on && c->pg)
		tq_exec(c, "CREATE FUNCTION tfull() RETURNS trigger LANGUAGE "
		    "plpgsql AS $$BEGIN IF NEW.state = 'done' THEN RAISE "
		    "EXCEPTION 'could not extend file: No space left on "
		    "device'; END IF; RETURN NEW; END$$; CREATE TRIGGER tfull "
		    "BEFORE UPDATE ON delivery FOR EACH ROW EXECUTE FUNCTION "
		    "tfull()");
	else if (on)
		tq_exec(c, "CREATE TRIGGER tfull BEFORE UPDATE ON delivery "
		    "WHEN NEW.state = 'done' BEGIN SELECT RAISE(ABORT, "
		    "'database or disk is full'); END");
	else
		tq_exec(c, c->pg ? "DROP TRIGGER tfull ON delivery; DROP "
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
	struct timespec ts = { 0, 700000000 };

	(void)nanosleep(&ts, NULL);
	tdisk_full(f->c, 0);
	tfollow_wait_done(f);
	tfollow_stop(f);
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
	struct tfollow f = { .c = c };
	struct toutages out = { 0 };
	struct deliver_opts o;
	struct store *s;

	NEED(c);
	s = topen(c);
	tdeliver_accept(s, "full@as4gw.test");
	tdisk_full(c, 1);
	o = tdir_opts(c);
	o.outage = toutage;
	o.report_arg = &out;
	assert_int_equal(tfollow_run(s, &o, &f, tfull_main).failed, 0);
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

#define RUN_TESTS(ctx) \
	DT(t_run_max_and_stop, ctx), DT(t_run_follow, ctx), \
	DT(t_release_retried, ctx), DT(t_store_error, ctx)

/* Each backend. */
int
main(void)
{
	const struct CMUnitTest sqlite_tests[] = { RUN_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = { RUN_TESTS(&ctx_pg) };
	int fails = 0;

	fails += cmocka_run_group_tests_name("deliver run sqlite",
	    sqlite_tests, NULL, NULL);
	fails += cmocka_run_group_tests_name("deliver run postgresql",
	    pg_tests, NULL, NULL);
	return fails;
}
