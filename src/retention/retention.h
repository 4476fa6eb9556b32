/*
 * retention — the inbox purge (DESIGN.md "Retention"): delete messages, with
 * their payloads and delivery rows, older than their P-Mode leg's retention
 * (retentionDays of the leg, else of the gateway; never shorter than
 * partnerRetryWindowDays, which conf enforces) in bounded batches, each its
 * own short transaction, so receiving is never blocked for long.
 *
 * A retried message that arrives after its row was purged is accepted as
 * new: that is why retention may not be shorter than the partners' retry
 * window (README "Retention").
 *
 * Used by `as4gw purge` (cron) and by a background thread in `serve`.
 * Depends on store, conf and metrics.
 */
#ifndef AS4GW_RETENTION_H
#define AS4GW_RETENTION_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../conf/conf.h"
#include "../store/store.h"
#include "../util/err.h"

#define RETENTION_DAYS_DEFAULT 30     /* a conf without retention_days */
#define RETENTION_BATCH_DEFAULT 500   /* a conf with purge_batch 0 */
#define RETENTION_PAUSE_MS 20u        /* between batches of the serve thread */

struct retention_counts {
	size_t purged;       /* inbox rows deleted */
	size_t kept;         /* past retention but kept: not delivered yet */
	size_t batches;      /* transactions run */
	int complete;        /* the last batch came back short: nothing left */
};

/*
 * Purge everything past retention at now_ms in batches of c->purge_batch
 * (c->purge_undelivered decides undelivered rows), until a batch deletes
 * fewer than the batch size or *stop becomes non-zero (stop may be NULL).
 * Pauses pause_ms between batches (0 = none) to let writers in.
 * Adds to *ret (zero it first; may be NULL) also on failure, what the
 * committed batches did; kept is the largest count of one batch (every
 * batch sees the same undelivered rows).  Reports the run to
 * metrics_purged(); ret->complete is 1 when the run ended with a short
 * batch (nothing left), 0 when *stop cut it short.  0 ok, -1 err.
 */
int retention_purge(struct store *s, const struct conf *c, int64_t now_ms,
    unsigned pause_ms, const atomic_int *stop, struct retention_counts *ret,
    struct err *err);

/*
 * Record one run in the store's purge log (store_purge_log; issue 11 item
 * 6): source, its start (epoch ms), what *n counted and how it ended —
 * failed (why, not NULL: the run's err.msg), else ok when n->complete,
 * else stopped.  Its end is now.  0 ok, -1 err (the run stays unrecorded;
 * the caller says so in its log).
 */
int retention_record(struct store *s, enum store_purge_source source,
    int64_t started_ms, const struct retention_counts *n, const char *failed,
    struct err *err);

struct retention_thread;

/*
 * The schedule of the background purge.  Its owner (`serve`) keeps it
 * across reloads, which stop the thread and start it again on the new
 * configuration: the next run stays due when it was instead of being put
 * off by a whole interval at every SIGHUP (issue 10 item 9b).  Zero it
 * before the first retention_start(); while a thread runs, only the
 * thread writes it.
 */
struct retention_schedule {
	int64_t since_ms;      /* epoch ms of the first start; 0 = not started */
	int64_t next_mono_ms;  /* clock_mono_ms() at which the next run is due */
	int64_t last_ok_ms;    /* epoch ms of the last successful run; 0 = none */
};

/*
 * Start the background purge of `serve`: a thread with its own store
 * connection (opened from c->store_dsn, reopened after errors) that runs
 * retention_purge() every c->purge_interval_s seconds on *sched: first one
 * interval after the first start, then one interval after each run; a run
 * cut short by retention_stop() is due again at once, and a shorter
 * interval after a reload takes effect now.  Records each run it could
 * open the store for in the purge log (source background; a run cut short
 * by retention_stop() as stopped).  Logs one line per run, and a
 * warning while no run has succeeded for two intervals; reports the
 * schedule to metrics_purge_schedule().  c and sched must outlive the
 * thread.  With purge_interval_s 0, *ret = NULL and nothing starts (0
 * returned).
 */
int retention_start(const struct conf *c, struct retention_schedule *sched,
    struct retention_thread **ret, struct err *err);

/* Stop (interrupting a run between batches) and join; accepts NULL. */
void retention_stop(struct retention_thread *t);

#endif
