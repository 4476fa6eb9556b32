/*
 * retention — the inbox purge (see retention.h): cutoffs per P-Mode leg,
 * store_purge() batches until one comes back short, and the background
 * thread of `serve`.
 */
#include "retention.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../metrics/metrics.h"
#include "../util/clock.h"
#include "../util/log.h"

#define RETENTION_DAY_MS INT64_C(86400000)
#define RETENTION_NAP_MS 100u    /* longest sleep between two looks at *stop */

struct retention_thread {
	const struct conf *c;
	struct retention_schedule *sched;
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;           /* signalled by retention_stop() */
	atomic_int stop;
	struct store *s;             /* NULL until opened, and after an error */
};

/* 1 when *stop asks us to end (stop may be NULL). */
static int
retention_stopped(const atomic_int *stop)
{
	return stop != NULL && atomic_load(stop) != 0;
}

/* Sleep ms in short naps, returning early once *stop is set. */
static void
retention_pause(unsigned ms, const atomic_int *stop)
{
	struct timespec ts;
	unsigned nap;

	while (ms > 0 && !retention_stopped(stop)) {
		nap = ms < RETENTION_NAP_MS ? ms : RETENTION_NAP_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)nap * 1000000L;
		(void)nanosleep(&ts, NULL);
		ms -= nap;
	}
}

/* now_ms - days (a conf built without retention: the 30-day default). */
static int64_t
retention_cutoff(int64_t now_ms, int days)
{
	if (days <= 0)
		days = RETENTION_DAYS_DEFAULT;
	return now_ms - (int64_t)days * RETENTION_DAY_MS;
}

/*
 * The purge request for c at now_ms: one cutoff per leg (its retentionDays,
 * else the gateway's), the gateway's for every other row.  The arrays are
 * malloc'd into *ids and *cutoffs; the caller frees both.
 */
static int
retention_plan(const struct conf *c, int64_t now_ms, struct store_purge *p,
    const char ***ids, int64_t **cutoffs, struct err *err)
{
	size_t i, n = c->n_legs;

	*ids = calloc(n > 0 ? n : 1, sizeof(**ids));
	*cutoffs = calloc(n > 0 ? n : 1, sizeof(**cutoffs));
	if (*ids == NULL || *cutoffs == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		(*ids)[i] = c->legs[i].id;
		(*cutoffs)[i] = retention_cutoff(now_ms,
		    c->legs[i].retention_days > 0 ? c->legs[i].retention_days :
		    c->retention_days);
	}
	memset(p, 0, sizeof(*p));
	p->pmode_ids = *ids;
	p->cutoffs_ms = *cutoffs;
	p->n_legs = n;
	p->default_cutoff_ms = retention_cutoff(now_ms, c->retention_days);
	p->batch = c->purge_batch > 0 ? c->purge_batch :
	    RETENTION_BATCH_DEFAULT;
	p->undelivered = c->purge_undelivered;
	return 0;
}

/* Purge in batches until one comes back short or *stop (retention.h). */
int
retention_purge(struct store *s, const struct conf *c, int64_t now_ms,
    unsigned pause_ms, const atomic_int *stop, struct retention_counts *ret,
    struct err *err)
{
	struct retention_counts run = {0};
	struct store_purge p;
	const char **ids = NULL;
	int64_t *cutoffs = NULL;
	size_t purged, kept;
	int rc = -1;

	if (retention_plan(c, now_ms, &p, &ids, &cutoffs, err) == -1)
		goto out;
	while (!retention_stopped(stop)) {
		if (run.batches > 0)
			retention_pause(pause_ms, stop);
		if (retention_stopped(stop))
			break;
		purged = kept = 0;
		if (store_purge(s, &p, &purged, &kept, err) == -1)
			goto out;
		run.batches++;
		run.purged += purged;
		/* the same undelivered rows are seen again by every batch */
		if (kept > run.kept)
			run.kept = kept;
		if (purged < p.batch) {
			run.complete = 1;
			break;
		}
	}
	rc = 0;
out:
	if (run.batches > 0 || rc == 0)
		metrics_purged(run.purged, run.kept);
	if (ret != NULL) {
		ret->purged += run.purged;
		ret->kept += run.kept;
		ret->batches += run.batches;
		ret->complete = run.complete;
	}
	free(ids);
	free(cutoffs);
	return rc;
}

/* Record one run in the purge log (retention.h). */
int
retention_record(struct store *s, enum store_purge_source source,
    int64_t started_ms, const struct retention_counts *n, const char *failed,
    struct err *err)
{
	struct store_purge_run r;

	memset(&r, 0, sizeof(r));
	r.source = source;
	r.outcome = failed != NULL ? STORE_PURGE_FAILED :
	    n->complete ? STORE_PURGE_OK : STORE_PURGE_STOPPED;
	r.started_ms = started_ms;
	r.finished_ms = clock_epoch_ms();
	r.purged = n->purged;
	r.kept = n->kept;
	r.batches = n->batches;
	r.error = failed;
	return store_purge_log(s, &r, err);
}

/* ---- the background thread of `serve` --------------------------------- */

/*
 * Wait until the schedule's next run is due or until retention_stop(); 1
 * when it is time for a run, 0 when stopping.
 */
static int
retention_wait(struct retention_thread *t)
{
	int64_t due = t->sched->next_mono_ms;
	struct timespec until;
	int run = 1;

	until.tv_sec = (time_t)(due / 1000);
	until.tv_nsec = (long)(due % 1000) * 1000000L;
	(void)pthread_mutex_lock(&t->mu);
	while (!atomic_load(&t->stop) && clock_mono_ms() < due) {
		if (pthread_cond_timedwait(&t->cv, &t->mu, &until) == ETIMEDOUT)
			break;
	}
	if (atomic_load(&t->stop))
		run = 0;
	(void)pthread_mutex_unlock(&t->mu);
	return run;
}

/* Seconds since the last successful run (or the first start) when that is
 * more than two intervals ago, else 0. */
static int64_t
retention_overdue_s(const struct retention_thread *t)
{
	const struct retention_schedule *s = t->sched;
	int64_t ref = s->last_ok_ms != 0 ? s->last_ok_ms : s->since_ms;
	int64_t ago = (clock_epoch_ms() - ref) / 1000;

	return ago > 2 * (int64_t)t->c->purge_interval_s ? ago : 0;
}

/* A run that failed (its line logged): reconnect next time; say so louder
 * once overdue. */
static void
retention_failed(struct retention_thread *t, int store_error)
{
	int64_t overdue = retention_overdue_s(t);

	if (store_error)
		metrics_store_error();
	if (overdue > 0)
		log_msg(LOG_WARN, "purge overdue: no successful run for %lld s "
		    "(intervalSeconds %u)", (long long)overdue,
		    t->c->purge_interval_s);
	store_close(t->s); /* reconnect on the next run */
	t->s = NULL;
}

/* Record the background run in the purge log; a failure only logged. */
static void
retention_log_run(struct retention_thread *t, int64_t started_ms,
    const struct retention_counts *n, const char *failed)
{
	struct err err = {0};

	if (retention_record(t->s, STORE_PURGE_BACKGROUND, started_ms, n,
	    failed, &err) == -1)
		log_msg(LOG_WARN, "purge: could not record the run in the "
		    "purge log: %s", err.msg);
}

/* One scheduled run: (re)open the store if needed, purge, record it, log
 * one line. */
static int
retention_run(struct retention_thread *t)
{
	struct retention_counts n = {0};
	struct err err = {0};
	int64_t started = clock_mono_ms(), at = clock_epoch_ms();

	if (t->s == NULL && store_open_timeout(t->c->store_dsn,
	    t->c->store_timeout_ms, &t->s, &err) == -1) {
		t->s = NULL;
		log_msg(LOG_WARN, "purge: could not open the store: %s",
		    err.msg);
		retention_failed(t, 1);
		return -1;
	}
	if (retention_purge(t->s, t->c, at, RETENTION_PAUSE_MS, &t->stop, &n,
	    &err) == -1) {
		log_msg(LOG_WARN, "purge failed after %zu rows in %zu "
		    "batches: %s", n.purged, n.batches, err.msg);
		retention_log_run(t, at, &n, err.msg);
		retention_failed(t, err.kind == ERR_STORE);
		return -1;
	}
	retention_log_run(t, at, &n, NULL);
	if (!n.complete)
		return 1;       /* stopped between batches: due again at restart */
	t->sched->last_ok_ms = clock_epoch_ms();
	metrics_purge_ok(t->sched->last_ok_ms);
	log_msg(LOG_INFO, "purge: purged %zu, kept %zu undelivered in %zu "
	    "batches (%lld ms)", n.purged, n.kept, n.batches,
	    (long long)(clock_mono_ms() - started));
	return 0;
}

/* The thread: wait until due, run, schedule the next run, until stopped. */
static void *
retention_main(void *arg)
{
	struct retention_thread *t = arg;

	while (retention_wait(t)) {
		if (retention_run(t) == 1)
			break;
		t->sched->next_mono_ms = clock_mono_ms() +
		    (int64_t)t->c->purge_interval_s * 1000;
	}
	return NULL;
}

/* Initialise the mutex and the condition variable on the monotonic clock. */
static int
retention_sync_init(struct retention_thread *t)
{
	pthread_condattr_t ca;
	int rc = -1;

	if (pthread_condattr_init(&ca) != 0)
		return -1;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	    pthread_cond_init(&t->cv, &ca) == 0) {
		if (pthread_mutex_init(&t->mu, NULL) == 0)
			rc = 0;
		else
			(void)pthread_cond_destroy(&t->cv);
	}
	(void)pthread_condattr_destroy(&ca);
	return rc;
}

/* Carry *s over to c: a first start, or a restart after a reload. */
static void
retention_schedule_init(struct retention_schedule *s, const struct conf *c)
{
	int64_t at = clock_mono_ms() + (int64_t)c->purge_interval_s * 1000;

	if (s->since_ms == 0) {
		s->since_ms = clock_epoch_ms();
		s->next_mono_ms = at;
	} else if (s->next_mono_ms > at) {
		s->next_mono_ms = at;   /* the interval got shorter */
	}
}

/* Start the background purge thread of `serve` (retention.h). */
int
retention_start(const struct conf *c, struct retention_schedule *sched,
    struct retention_thread **ret, struct err *err)
{
	struct retention_thread *t;

	*ret = NULL;
	if (c->purge_interval_s == 0) {
		metrics_purge_schedule(0, 0);
		return 0;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	t->c = c;
	t->sched = sched;
	atomic_init(&t->stop, 0);
	retention_schedule_init(sched, c);
	metrics_purge_schedule(c->purge_interval_s, sched->since_ms);
	if (retention_sync_init(t) == -1) {
		free(t);
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not set up the purge thread");
	}
	if (pthread_create(&t->tid, NULL, retention_main, t) != 0) {
		(void)pthread_cond_destroy(&t->cv);
		(void)pthread_mutex_destroy(&t->mu);
		free(t);
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not start the purge thread");
	}
	*ret = t;
	return 0;
}

/* Stop the purge thread between batches and join it; accepts NULL. */
void
retention_stop(struct retention_thread *t)
{
	if (t == NULL)
		return;
	(void)pthread_mutex_lock(&t->mu);
	atomic_store(&t->stop, 1);
	(void)pthread_cond_signal(&t->cv);
	(void)pthread_mutex_unlock(&t->mu);
	(void)pthread_join(t->tid, NULL);
	store_close(t->s);
	(void)pthread_cond_destroy(&t->cv);
	(void)pthread_mutex_destroy(&t->mu);
	free(t);
}
