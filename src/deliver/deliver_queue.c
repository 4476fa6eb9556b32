/*
 * deliver_queue — the delivery queue loop behind `as4gw deliver` (deliver.h):
 * claim, hand over (deliver.c), release; and riding out a store that fails
 * for a while (issue 11 item 1: a PostgreSQL restart, a full SQLite disk).
 *
 * A store failure never loses or doubles a message: a failed claim changed
 * nothing (its transaction rolled back) and is simply tried again; a failed
 * release of a message already handed over is retried with the same
 * outcome until it succeeds (store_finish changes only a 'claimed' row, so
 * a release that did commit but whose answer was lost is not applied
 * twice), so the row does not wait for --stale-seconds.  Between tries the
 * deliverer sleeps DELIVER_OUTAGE_MIN_MS doubling to DELIVER_OUTAGE_MAX_MS;
 * the next store call reconnects (and store_wait LISTENs again).  The
 * caller hears of each outage twice: when it starts and when it is over.
 * One window stays: a claim whose COMMIT went through but whose answer was
 * lost with the connection leaves its row 'claimed' until stale_ms, when a
 * deliverer takes it over (handed over once: it never reached the target).
 */
#include "deliver_int.h"

#include <string.h>
#include <time.h>

#include "../util/clock.h"
#include "../util/fault.h"

/* One outage in progress (failures 0: none). */
struct deliver_retry {
	const struct deliver_opts *o;
	const atomic_int *stop;
	int64_t since_ms;            /* clock_mono_ms() of the first failure */
	int64_t delay_ms;            /* the next sleep */
	int failures;
	const char *what;            /* what failed first */
	const char *step;            /* what deliver_step is doing */
};

/* 1 when the caller asked to stop. */
static int
deliver_stopped(const struct deliver_retry *r)
{
	return r->stop != NULL && atomic_load(r->stop);
}

/* Sleep ms, in slices so that a stop request is seen within 50 ms. */
static void
deliver_nap(const struct deliver_retry *r, int64_t ms)
{
	int64_t end = clock_mono_ms() + ms, left;
	struct timespec ts;

	while (!deliver_stopped(r) && (left = end - clock_mono_ms()) > 0) {
		if (left > 50)
			left = 50;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)left * 1000000L;
		(void)nanosleep(&ts, NULL);
	}
}

/* Tell the caller about the outage (o->outage may be NULL). */
static void
deliver_outage_report(const struct deliver_retry *r, const struct err *err)
{
	struct deliver_outage e;

	if (r->o->outage == NULL)
		return;
	memset(&e, 0, sizeof(e));
	e.recovered = err == NULL;
	e.what = r->what;
	e.err = err;
	e.down_ms = clock_mono_ms() - r->since_ms;
	e.retries = r->failures;
	r->o->outage(r->o->report_arg, &e);
}

/* The store failed doing what: report a new outage, then back off. */
static void
deliver_retry_fail(struct deliver_retry *r, const char *what,
    const struct err *err)
{
	if (r->failures++ == 0) {
		r->since_ms = clock_mono_ms();
		r->delay_ms = DELIVER_OUTAGE_MIN_MS;
		r->what = what;
		deliver_outage_report(r, err);
	}
	deliver_nap(r, r->delay_ms);
	r->delay_ms = r->delay_ms * 2 < DELIVER_OUTAGE_MAX_MS ?
	    r->delay_ms * 2 : DELIVER_OUTAGE_MAX_MS;
}

/* The store answered: end an outage in progress. */
static void
deliver_retry_ok(struct deliver_retry *r)
{
	if (r->failures == 0)
		return;
	deliver_outage_report(r, NULL);
	r->failures = 0;
}

/* Tell the caller what became of d. */
static void
deliver_report(const struct deliver_opts *o, const struct store_delivery *d,
    const char *name, int64_t retry_in_ms, const struct err *err)
{
	struct deliver_report r;

	if (o->report == NULL)
		return;
	r.message_id = d->message_id;
	r.from_party = d->from_party;
	r.name = name;
	r.attempts = d->attempts;
	r.ok = err == NULL;
	r.retry_in_ms = retry_in_ms;
	r.err = err;
	o->report(o->report_arg, &r);
}

/*
 * Mark the row of d done (ok) or 'ready' again at retry_at with why (the
 * target's error, for `as4gw inbox show`), retrying while the store fails:
 * until it works or a stop is asked for (follow), or for
 * DELIVER_RELEASE_TRIES tries (otherwise).  0 ok, -1 gave up (the row then
 * waits for stale_ms).
 */
static int
deliver_release(struct store *s, struct deliver_retry *r,
    const struct store_delivery *d, int ok, int64_t retry, const char *why,
    struct err *err)
{
	int64_t now;
	int tries = 0;

	for (;;) {
		err_clear(err);
		now = clock_epoch_ms();
		if (store_finish_error(s, d->from_party, d->message_id, ok,
		    now, now + retry, why, err) == 0)
			return 0;
		if (deliver_stopped(r) || (!r->o->follow &&
		    ++tries >= DELIVER_RELEASE_TRIES))
			return -1;
		deliver_retry_fail(r, "release", err);
	}
}

/*
 * Hand the claimed d to the target, then mark the row: done after success,
 * 'ready' after the back-off otherwise.  1, 2 or -1 as deliver_one().
 */
static int
deliver_claimed(struct store *s, struct deliver_retry *r,
    const struct store_delivery *d, struct arena *a, struct err *err)
{
	char name[DELIVER_NAME_LEN + 1];
	struct err terr = {0};
	int64_t retry = 0;
	int ok;

	if (deliver_name(d->from_party, d->message_id, name, err) == -1)
		return -1;
	ok = deliver_target(s, r->o, d, name, a, &terr) == 0;
	if (ok)
		fault_point("deliver.after-target");
	else
		retry = deliver_backoff_ms(d->attempts);
	if (deliver_release(s, r, d, ok, retry, ok ? NULL : terr.msg,
	    err) == -1)
		return -1;
	deliver_retry_ok(r);
	deliver_report(r->o, d, name, retry, ok ? NULL : &terr);
	if (!ok && err != NULL)
		*err = terr;
	return ok ? 1 : 2;
}

/* Claim one message and hand it over: 1, 0, 2 or -1 (deliver.h). */
static int
deliver_one_retry(struct store *s, struct deliver_retry *r, struct err *err)
{
	const struct deliver_opts *o = r->o;
	struct store_delivery d;
	struct arena *a = NULL;
	int rc = -1;

	if ((o->to_dir == NULL) == (o->exec_cmd == NULL)) {
		err_set(err, ERR_INTERNAL, NULL,
		    "exactly one of a directory and a command is needed");
		goto out;
	}
	if ((a = arena_new(0)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	memset(&d, 0, sizeof(d));
	rc = store_claim(s, clock_epoch_ms(), o->stale_ms >= 0 ? o->stale_ms :
	    DELIVER_STALE_MS_DEFAULT, a, &d, err);
	if (rc == 1) {
		/* committed: from here a crash leaves the row 'claimed' */
		fault_point("deliver.after-claim");
		rc = deliver_claimed(s, r, &d, a, err);
	}
out:
	arena_free(a);
	return rc;
}

/* Claim one message and hand it over (deliver.h): 1, 0, 2 or -1. */
int
deliver_one(struct store *s, const struct deliver_opts *o, struct err *err)
{
	struct deliver_retry r;

	memset(&r, 0, sizeof(r));
	r.o = o;
	return deliver_one_retry(s, &r, err);
}

/*
 * One step of deliver_run: claim and hand over one message, or wait for
 * one (follow).  1 or 2 a message (as deliver_one), 0 nothing (the caller
 * stops unless it follows), -1 the store failed.
 */
static int
deliver_step(struct store *s, struct deliver_retry *r, struct err *e)
{
	int rc;

	r->step = "claim";
	if ((rc = deliver_one_retry(s, r, e)) != 0)
		return rc;
	deliver_retry_ok(r);
	if (!r->o->follow || deliver_stopped(r))
		return 0;
	r->step = "wait";
	if (store_wait(s, DELIVER_WAIT_MS, e) == -1)
		return -1;
	return 3;  /* waited: claim again */
}

/* deliver_one() until the queue is empty or *stop (deliver.h). */
int
deliver_run(struct store *s, const struct deliver_opts *o,
    const atomic_int *stop, struct deliver_counts *ret, struct err *err)
{
	struct deliver_retry r;
	struct err e = {0};
	size_t n = 0;
	int rc = 0;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.stop = stop;
	while (!deliver_stopped(&r) &&
	    (o->max_messages == 0 || n < o->max_messages)) {
		err_clear(&e); /* each message's own failure */
		if ((rc = deliver_step(s, &r, &e)) == -1) {
			if (!o->follow || deliver_stopped(&r))
				break;
			deliver_retry_fail(&r, r.step, &e);
			rc = 0;
			continue;
		}
		if (rc == 0)
			break;
		if (rc == 3)
			continue;
		n++;
		if (rc == 1)
			ret->delivered++;
		else
			ret->failed++;
	}
	if (rc == -1 && err != NULL && err->kind == ERR_NONE)
		*err = e;
	return rc == -1 ? -1 : 0;
}
