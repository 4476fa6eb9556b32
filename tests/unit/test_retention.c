/*
 * Unit tests for src/retention: cutoffs per P-Mode leg and by default,
 * undelivered rows kept or purged, bounded batches, the stop flag, store
 * errors, metrics, and the background thread of `serve` — against SQLite
 * (a temp directory) and, when AS4GW_TEST_PG_DSN is set, PostgreSQL (each
 * test in its own schema; teststore.h).  Rows go in through
 * store_accept(); they are inspected and marked delivered with sqlite3 /
 * libpq directly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "teststore.h"
#include "testutil.h"
#include "metrics/metrics.h"
#include "retention/retention.h"
#include "util/clock.h"
#include "util/log.h"

#define DAY_MS INT64_C(86400000)
#define HOUR_MS INT64_C(3600000)
#define NOW_MS INT64_C(1780000000000) /* 2026-05-28T20:26:40Z */

/* Rows in inbox, payload and delivery. */
static void
ttotals(const struct tctx *c, int64_t inbox)
{
	tcount(c, "SELECT count(*) FROM inbox", inbox);
	tcount(c, "SELECT count(*) FROM payload", inbox * 2);
	tcount(c, "SELECT count(*) FROM delivery", inbox);
}

/* 1 when id is still in the inbox. */
static int
tpresent(const struct tctx *c, const char *id)
{
	char q[512];

	(void)snprintf(q, sizeof(q), "SELECT count(*) FROM inbox WHERE "
	    "message_id = '%s'", id);
	return (int)tq_int(c, q);
}

/* Accept id (leg pmode, may be NULL) received at ms, with delivery state
 * state ("ready", "claimed" or "done"): teststore's two-part message. */
static void
tput_state(const struct tctx *c, struct store *s, const char *id,
    const char *pmode, int64_t ms, const char *state)
{
	struct arena *a = arena_new(0);
	char q[512];

	tput(s, a, id, ms - T0, pmode);
	arena_free(a);
	if (strcmp(state, "ready") != 0) {
		(void)snprintf(q, sizeof(q), "UPDATE delivery SET state = '%s' "
		    "WHERE message_id = '%s'", state, id);
		tq_exec(c, q);
	}
}

/* ---- the configuration ------------------------------------------------ */

static char leg_short[] = "short";   /* retentionDays 10 */
static char leg_dflt[] = "dflt";     /* no retentionDays: the gateway's 30 */

struct tconf {
	struct conf c;
	struct pmode_leg legs[2];
	struct retention_schedule sched;
};

/* A conf with the two legs above and the gateway's 30 days. */
static void
tconf_init(struct tconf *t, const struct tctx *ctx)
{
	memset(t, 0, sizeof(*t));
	t->legs[0].id = leg_short;
	t->legs[0].retention_days = 10;
	t->legs[1].id = leg_dflt;
	t->c.legs = t->legs;
	t->c.n_legs = 2;
	t->c.retention_days = 30;
	t->c.retry_window_days = 7;
	t->c.purge_batch = 500;
	t->c.purge_interval_s = 0;
	t->c.store_dsn = (char *)(uintptr_t)ctx->dsn;
}

/* The value of one metric line "as4gw_<name> N" (-1 when absent). */
static long long
tmetric(const char *name)
{
	struct buf b = { 0 };
	char key[128];
	const char *p;
	long long v = -1;

	assert_int_equal(metrics_render(&b), 0);
	(void)snprintf(key, sizeof(key), "\nas4gw_%s ", name);
	if ((p = strstr(b.data, key)) != NULL)
		v = strtoll(p + strlen(key), NULL, 10);
	buf_free(&b);
	return v;
}

/* ---- retention_purge -------------------------------------------------- */

/* Rows of every kind around their cutoffs (see tcutoff_rows). */
static const struct {
	const char *id;
	const char *pmode;
	int64_t age_ms;
	const char *state;
	int purged;               /* with undelivered kept */
} tcutoff_rows[] = {
	{ "short-old", "short", 10 * DAY_MS + HOUR_MS, "done", 1 },
	{ "short-young", "short", 10 * DAY_MS - HOUR_MS, "done", 0 },
	{ "dflt-old", "dflt", 30 * DAY_MS + HOUR_MS, "done", 1 },
	{ "dflt-young", "dflt", 29 * DAY_MS, "done", 0 },
	{ "other-old", "unknown-leg", 30 * DAY_MS + HOUR_MS, "done", 1 },
	{ "other-young", "unknown-leg", 11 * DAY_MS, "done", 0 },
	{ "none-old", NULL, 31 * DAY_MS, "done", 1 },
	{ "none-young", NULL, 1 * DAY_MS, "done", 0 },
	{ "ready-old", "short", 100 * DAY_MS, "ready", 0 },
	{ "claimed-old", "dflt", 100 * DAY_MS, "claimed", 0 },
	{ "ready-young", "short", 1 * DAY_MS, "ready", 0 },
};
#define N_CUTOFF_ROWS (sizeof(tcutoff_rows) / sizeof(tcutoff_rows[0]))

/* Insert tcutoff_rows relative to NOW_MS. */
static void
tcutoff_insert(const struct tctx *c, struct store *s)
{
	size_t i;

	for (i = 0; i < N_CUTOFF_ROWS; i++)
		tput_state(c, s, tcutoff_rows[i].id, tcutoff_rows[i].pmode,
		    NOW_MS - tcutoff_rows[i].age_ms, tcutoff_rows[i].state);
}

/* Leg cutoffs (its own retention or the gateway's), the default for other
 * and no legs; undelivered rows past retention kept and counted. */
static void
t_purge_cutoffs(void **state)
{
	struct tctx *c = *state;
	struct retention_counts n = { 0 };
	struct tconf t;
	struct store *s;
	struct err err = { 0 };
	long long before;
	size_t i;

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	tcutoff_insert(c, s);
	before = tmetric("purged_total");
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 0, NULL, &n, &err), 0);
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(n.purged, 4);
	assert_int_equal(n.kept, 2);
	assert_int_equal(n.batches, 1);
	for (i = 0; i < N_CUTOFF_ROWS; i++)
		if (tpresent(c, tcutoff_rows[i].id) == tcutoff_rows[i].purged)
			fail_msg("%s: present %d", tcutoff_rows[i].id,
			    tpresent(c, tcutoff_rows[i].id));
	ttotals(c, (int64_t)N_CUTOFF_ROWS - 4);
	assert_int_equal(tmetric("purged_total"), before + 4);
	assert_int_equal(tmetric("purge_kept_undelivered"), 2);
	/* a second run: nothing more, the same rows kept */
	memset(&n, 0, sizeof(n));
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 0, NULL, &n, &err), 0);
	assert_int_equal(n.purged, 0);
	assert_int_equal(n.kept, 2);
	store_close(s);
}

/* undelivered="purge": rows not delivered go too. */
static void
t_purge_undelivered(void **state)
{
	struct tctx *c = *state;
	struct retention_counts n = { 0 };
	struct tconf t;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	t.c.purge_undelivered = 1;
	tcutoff_insert(c, s);
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 0, NULL, &n, &err), 0);
	assert_int_equal(n.purged, 6);
	assert_int_equal(n.kept, 0);
	assert_int_equal(tpresent(c, "ready-old"), 0);
	assert_int_equal(tpresent(c, "claimed-old"), 0);
	assert_int_equal(tpresent(c, "ready-young"), 1);
	ttotals(c, (int64_t)N_CUTOFF_ROWS - 6);
	store_close(s);
}

/* Batches of purge_batch rows until one comes back short; batch 0 in a
 * conf means the default. */
static void
t_purge_batches(void **state)
{
	static const struct {
		unsigned rows, batch;
		size_t batches;
	} cases[] = {
		{ 7, 3, 3 }, { 6, 3, 3 }, { 0, 3, 1 }, { 5, 1, 6 },
		{ 2, 500, 1 }, { 4, 0, 1 },
	};
	struct tctx *c = *state;
	struct retention_counts n;
	struct tconf t;
	struct store *s;
	struct err err = { 0 };
	char id[64];
	size_t i, k;

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	tput_state(c, s, "young", "dflt", NOW_MS - DAY_MS, "done");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (k = 0; k < cases[i].rows; k++) {
			(void)snprintf(id, sizeof(id), "b%zu-%zu", i, k);
			tput_state(c, s, id, k % 2 ? "short" : NULL,
			    NOW_MS - 40 * DAY_MS - (int64_t)k, "done");
		}
		t.c.purge_batch = cases[i].batch;
		memset(&n, 0, sizeof(n));
		assert_int_equal(retention_purge(s, &t.c, NOW_MS, 1, NULL, &n,
		    &err), 0);
		if (n.purged != cases[i].rows || n.batches != cases[i].batches)
			fail_msg("case %zu: purged %zu in %zu batches", i,
			    n.purged, n.batches);
		ttotals(c, 1);
	}
	store_close(s);
}

/* Sets the stop flag after a while. */
static void *
tstopper(void *arg)
{
	struct timespec ts = { 0, 250000000 };

	(void)nanosleep(&ts, NULL);
	atomic_store((atomic_int *)arg, 1);
	return NULL;
}

/* The stop flag: honoured before the first batch and between batches;
 * what was committed stays purged and is counted. */
static void
t_purge_stop(void **state)
{
	struct tctx *c = *state;
	struct retention_counts n = { 0 };
	struct tconf t;
	struct store *s;
	struct err err = { 0 };
	atomic_int stop;
	pthread_t th;
	char id[64];
	size_t k;

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	t.c.purge_batch = 1;
	for (k = 0; k < 20; k++) {
		(void)snprintf(id, sizeof(id), "s-%zu", k);
		tput_state(c, s, id, "dflt", NOW_MS - 40 * DAY_MS, "done");
	}
	atomic_init(&stop, 1);
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 0, &stop, &n, &err), 0);
	assert_int_equal(n.batches, 0);
	assert_int_equal(n.purged, 0);
	ttotals(c, 20);
	atomic_store(&stop, 0);
	assert_int_equal(pthread_create(&th, NULL, tstopper, &stop), 0);
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 100, &stop, &n, &err), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	if (n.batches < 1 || n.batches >= 20 || n.purged != n.batches)
		fail_msg("stopped after %zu batches, %zu rows", n.batches,
		    n.purged);
	ttotals(c, 20 - (int64_t)n.purged);
	store_close(s);
}

/* A store without the schema: -1 with ERR_STORE, nothing counted. */
static void
t_purge_store_error(void **state)
{
	struct tctx *c = *state;
	struct retention_counts n = { 0 };
	struct tconf t;
	struct store *s = NULL;
	struct err err = { 0 };

	NEED(c);
	tconf_init(&t, c);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	assert_int_equal(retention_purge(s, &t.c, NOW_MS, 0, NULL, &n, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(n.purged + n.kept + n.batches, 0);
	store_close(s);
}

/* ---- the background thread -------------------------------------------- */

/* Log lines go to a temp file (append mode; log.c flushes every line)
 * for the thread tests, and are read back through the path. */
static FILE *tlog;
static char tlog_path[64];

/* Send the log to a fresh temp file. */
static void
tlog_open(void)
{
	int fd;

	(void)snprintf(tlog_path, sizeof(tlog_path), "/tmp/as4gw-ret-log-XXXXXX");
	assert_true((fd = mkstemp(tlog_path)) != -1);
	assert_non_null(tlog = fdopen(fd, "a"));
	log_init(tlog, LOG_DEBUG);
}

/* Back to stderr; remove the file. */
static void
tlog_close(void)
{
	log_init(stderr, LOG_INFO);
	(void)fclose(tlog);
	(void)unlink(tlog_path);
}

/* The whole log written so far (malloc'd). */
static char *
tlog_text(void)
{
	size_t len;
	char *s = testutil_read(tlog_path, &len);

	assert_non_null(s);
	return s;
}

/* Wait up to ms for the log to contain what; 1 when it did. */
static int
tlog_wait(const char *what, int64_t ms)
{
	struct timespec ts = { 0, 50000000 };
	int64_t end = clock_mono_ms() + ms;
	char *text;
	int found = 0;

	while (!found && clock_mono_ms() < end) {
		text = tlog_text();
		found = strstr(text, what) != NULL;
		free(text);
		if (!found)
			(void)nanosleep(&ts, NULL);
	}
	return found;
}

/* Run every second: old rows go, one log line per run; stop is prompt. */
static void
t_thread_runs(void **state)
{
	struct tctx *c = *state;
	struct retention_thread *th = NULL;
	struct tconf t;
	struct store *s;
	struct err err = { 0 };
	int64_t now = clock_epoch_ms(), t0;

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	t.c.purge_interval_s = 1;
	tput_state(c, s, "old-1", "short", now - 20 * DAY_MS, "done");
	tput_state(c, s, "old-2", NULL, now - 40 * DAY_MS, "done");
	tput_state(c, s, "young", NULL, now - DAY_MS, "done");
	tlog_open();
	assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
	assert_non_null(th);
	assert_true(tlog_wait("purge: purged 2, kept 0 undelivered in 1 batches", 5000));
	ttotals(c, 1);
	assert_true(tlog_wait("purge: purged 0, kept 0", 3000)); /* next run */
	t0 = clock_mono_ms();
	retention_stop(th);
	assert_true(clock_mono_ms() - t0 < 1000);
	tlog_close();
	store_close(s);
}

/* Count the occurrences of what in the log. */
static int
tlog_count(const char *what)
{
	char *text = tlog_text();
	const char *p = text;
	int n = 0;

	while ((p = strstr(p, what)) != NULL) {
		n++;
		p++;
	}
	free(text);
	return n;
}

/* A store that cannot be opened: logged, tried again each run, no crash. */
static void
t_thread_store_error(void **state)
{
	struct timespec ts = { 0, 100000000 };
	struct retention_thread *th = NULL;
	struct tconf t;
	struct err err = { 0 };
	struct tctx bad = { 0 };
	int i;

	(void)state;
	(void)snprintf(bad.dsn, sizeof(bad.dsn),
	    "sqlite:/nonexistent-as4gw-dir/inbox.db");
	tconf_init(&t, &bad);
	t.c.purge_interval_s = 1;
	tlog_open();
	assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
	for (i = 0; i < 50 && tlog_count("purge: could not open the store") < 2; i++)
		(void)nanosleep(&ts, NULL);
	assert_true(tlog_count("purge: could not open the store") >= 2);
	/* issue 10 item 9b: no success for two intervals is said out loud */
	for (i = 0; i < 50 && tlog_count("purge overdue: no successful run") == 0; i++)
		(void)nanosleep(&ts, NULL);
	assert_true(tlog_count("purge overdue: no successful run") >= 1);
	retention_stop(th);
	tlog_close();
}

/* A run that fails (no schema yet) closes the connection; a later run
 * opens a new one and purges once the schema is there. */
static void
t_thread_recovers(void **state)
{
	struct tctx *c = *state;
	struct retention_thread *th = NULL;
	struct tconf t;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	tconf_init(&t, c);
	t.c.purge_interval_s = 1;
	tlog_open();
	assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
	assert_true(tlog_wait("purge failed after 0 rows in 0 batches", 5000));
	s = topen(c);
	tput_state(c, s, "late-old", NULL, clock_epoch_ms() - 40 * DAY_MS,
	    "done");
	assert_true(tlog_wait("purge: purged 1, kept 0 undelivered", 5000));
	ttotals(c, 0);
	retention_stop(th);
	tlog_close();
	store_close(s);
}

/* Issue 10 item 9b: restarted more often than its interval (a SIGHUP
 * each time), the purge still runs on its schedule; a later start keeps
 * the schedule and the time of the last success. */
static void
t_thread_schedule_survives_restarts(void **state)
{
	struct timespec half = { 0, 500000000 };
	struct tctx *c = *state;
	struct retention_thread *th = NULL;
	struct tconf t;
	struct store *s;
	struct err err = { 0 };
	int i;

	NEED(c);
	s = topen(c);
	tconf_init(&t, c);
	t.c.purge_interval_s = 2;
	tput_state(c, s, "old-1", NULL, clock_epoch_ms() - 40 * DAY_MS, "done");
	tlog_open();
	for (i = 0; i < 10 && tlog_count("purge: purged 1,") == 0; i++) {
		assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
		(void)nanosleep(&half, NULL);
		retention_stop(th);
	}
	if (tlog_count("purge: purged 1,") != 1)
		fail_msg("%s", tlog_text());
	assert_true(i <= 6);    /* due 2 s after the first start */
	assert_true(t.sched.last_ok_ms > 0);
	ttotals(c, 0);
	tlog_close();
	store_close(s);
}

/* interval 0: nothing starts; stop accepts NULL; a long interval stops
 * at once. */
static void
t_thread_start_stop(void **state)
{
	struct retention_thread *th = (struct retention_thread *)&th;
	struct tconf t;
	struct err err = { 0 };
	struct tctx none = { 0 };
	int64_t t0;

	(void)state;
	(void)snprintf(none.dsn, sizeof(none.dsn), "sqlite:/nonexistent/x.db");
	tconf_init(&t, &none);
	assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
	assert_null(th);
	retention_stop(NULL);
	t.c.purge_interval_s = 3600;
	assert_int_equal(retention_start(&t.c, &t.sched, &th, &err), 0);
	assert_non_null(th);
	t0 = clock_mono_ms();
	retention_stop(th);
	assert_true(clock_mono_ms() - t0 < 500);
	assert_int_equal(err.kind, ERR_NONE);
}

#define BACKEND_TESTS(ctx) \
	BT(t_purge_cutoffs, ctx), BT(t_purge_undelivered, ctx), \
	BT(t_purge_batches, ctx), BT(t_purge_stop, ctx), \
	BT(t_purge_store_error, ctx), BT(t_thread_runs, ctx), \
	BT(t_thread_recovers, ctx), BT(t_thread_schedule_survives_restarts, ctx)

/* The common group, then each backend. */
int
main(void)
{
	const struct CMUnitTest common[] = {
		cmocka_unit_test(t_thread_start_stop),
		cmocka_unit_test(t_thread_store_error),
	};
	const struct CMUnitTest sqlite_tests[] = { BACKEND_TESTS(&ctx_sqlite) };
	const struct CMUnitTest pg_tests[] = { BACKEND_TESTS(&ctx_pg) };
	int fails = 0;

	metrics_init();
	fails += cmocka_run_group_tests_name("retention", common, NULL, NULL);
	fails += cmocka_run_group_tests_name("retention sqlite", sqlite_tests,
	    NULL, NULL);
	fails += cmocka_run_group_tests_name("retention postgresql", pg_tests,
	    NULL, NULL);
	return fails;
}
