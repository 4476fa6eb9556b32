/*
 * store_sqlite_queue — the delivery queue, retention purge and gauges of the
 * SQLite backend (store.h "The delivery queue").  SQLite has one writer at a
 * time, so a claim is simply BEGIN IMMEDIATE, take the oldest claimable row,
 * read its message, COMMIT: two deliverers can never take the same row.
 * Every write holds this process's writer of the file (store_sqlite_writer.c)
 * so it queues with the accepts instead of sleeping in SQLite's busy
 * handler, and runs on the writer's connection (whose page cache the
 * accepts' batches keep warm; a write on another connection would make it
 * cold).  The gauges read on the handle's own connection.
 * Statements are prepared at the first use on a connection (after the
 * schema exists) and finalized at close.
 */
#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "store_int.h"
#include "store_sqlite_int.h"
#include "../util/buf.h"

enum store_sqlite_queue_stmt {
	STORE_SQQ_BEGIN,
	STORE_SQQ_COMMIT,
	STORE_SQQ_ROLLBACK,
	STORE_SQQ_CLAIM,
	STORE_SQQ_SEL_INBOX,
	STORE_SQQ_N_PARTS,
	STORE_SQQ_SEL_PARTS,
	STORE_SQQ_DONE,
	STORE_SQQ_PROCESSED,
	STORE_SQQ_RETRY,
	STORE_SQQ_PURGE,
	STORE_SQQ_KEPT,
	STORE_SQQ_STATS,
	STORE_SQQ_COUNT
};

_Static_assert(STORE_SQQ_COUNT == STORE_SQLITE_QUEUE_STMTS,
    "STORE_SQLITE_QUEUE_STMTS must count the queue statements");

/*
 * The cutoff of inbox row i for a purge: its leg's from the JSON legs in ?2
 * ([["id",ms],...]), else the default ?3.
 */
#define STORE_SQQ_CUTOFF \
	"coalesce((SELECT l.value ->> 1 FROM json_each(?2) l" \
	" WHERE l.value ->> 0 = i.pmode_id LIMIT 1), ?3)"

/* Past its cutoff: ?1 (the latest cutoff) bounds the received_at index scan. */
#define STORE_SQQ_PAST \
	" i.received_at < ?1 AND i.received_at < " STORE_SQQ_CUTOFF

static const struct {
	const char *what;  /* for "could not <what>: <sqlite message>" */
	const char *sql;
} store_sqlite_queue_stmts[STORE_SQQ_COUNT] = {
	[STORE_SQQ_BEGIN] = { "begin transaction", "BEGIN IMMEDIATE" },
	[STORE_SQQ_COMMIT] = { "commit", "COMMIT" },
	[STORE_SQQ_ROLLBACK] = { "roll back", "ROLLBACK" },
	/* the WHERE repeats delivery_pending_idx's term (002_delivery.sql) */
	[STORE_SQQ_CLAIM] = { "claim delivery",
	    "UPDATE delivery SET state = 'claimed', claimed_at = ?1,"
	    " attempts = attempts + 1"
	    " WHERE rowid = (SELECT rowid FROM delivery"
	    " WHERE state IN ('ready', 'claimed')"
	    " AND ((state = 'ready' AND (not_before IS NULL OR not_before <= ?1))"
	    " OR (state = 'claimed' AND claimed_at < ?2))"
	    " ORDER BY created_at LIMIT 1)"
	    " RETURNING message_id, attempts, from_party" },
	[STORE_SQQ_SEL_INBOX] = { "read claimed inbox row",
	    "SELECT from_party, to_party, service, action, conversation_id,"
	    " agreement_ref, pmode_id, received_at, business_key,"
	    " business_duplicate_of FROM inbox"
	    " WHERE from_party = ?2 AND message_id = ?1" },
	[STORE_SQQ_N_PARTS] = { "count claimed payloads",
	    "SELECT count(*) FROM payload"
	    " WHERE from_party = ?2 AND message_id = ?1" },
	/* the bytes only up to ?3, STORE_CLAIM_INLINE_MAX (store.h) */
	[STORE_SQQ_SEL_PARTS] = { "read claimed payloads",
	    "SELECT part_no, content_id, mime_type, properties,"
	    " CASE WHEN size IS NULL AND length(content) <= ?3 THEN content END,"
	    " coalesce(size, length(content))"
	    " FROM payload WHERE from_party = ?2 AND message_id = ?1"
	    " ORDER BY part_no" },
	[STORE_SQQ_DONE] = { "mark delivery done",
	    "UPDATE delivery SET state = 'done', done_at = ?2"
	    " WHERE from_party = ?3 AND message_id = ?1"
	    " AND state = 'claimed'" },
	[STORE_SQQ_PROCESSED] = { "mark inbox row processed",
	    "UPDATE inbox SET processed_at = ?2"
	    " WHERE from_party = ?3 AND message_id = ?1" },
	[STORE_SQQ_RETRY] = { "release delivery",
	    "UPDATE delivery SET state = 'ready', claimed_at = NULL,"
	    " not_before = ?2, last_error = ?4, last_error_at = ?5"
	    " WHERE from_party = ?3 AND message_id = ?1"
	    " AND state = 'claimed'" },
	[STORE_SQQ_PURGE] = { "purge inbox rows",
	    "DELETE FROM inbox WHERE rowid IN (SELECT i.rowid"
	    " FROM inbox i LEFT JOIN delivery d ON d.from_party = i.from_party"
	    " AND d.message_id = i.message_id"
	    " WHERE" STORE_SQQ_PAST
	    " AND (?4 OR d.state IS NULL OR d.state = 'done')"
	    " ORDER BY i.received_at LIMIT ?5)" },
	/* CROSS JOIN: walk the (few) pending rows, not all old inbox rows */
	[STORE_SQQ_KEPT] = { "count undelivered rows",
	    "SELECT count(*) FROM (SELECT 1 FROM delivery d"
	    " CROSS JOIN inbox i ON i.from_party = d.from_party"
	    " AND i.message_id = d.message_id"
	    " WHERE d.state IN ('ready', 'claimed') AND" STORE_SQQ_PAST
	    " LIMIT ?5)" },
	[STORE_SQQ_STATS] = { "read queue sizes",
	    "SELECT (SELECT count(*) FROM inbox),"
	    " (SELECT count(*) FROM delivery"
	    " WHERE state IN ('ready', 'claimed') AND state = 'ready'),"
	    " (SELECT count(*) FROM delivery"
	    " WHERE state IN ('ready', 'claimed') AND state = 'claimed')" },
};

/* Finalize the queue's statements; the next use prepares them again. */
void
store_sqlite_queue_finalize(struct store_sqlite *s)
{
	size_t i;

	for (i = 0; i < STORE_SQQ_COUNT; i++) {
		(void)sqlite3_finalize(s->q[i]);
		s->q[i] = NULL;
	}
}

/*
 * Prepare the queue's statements once per connection; fails unmigrated.
 * Also puts synchronous back to FULL should a duplicate-only batch have
 * failed to (store_sqlite_writer.c).
 */
static int
store_sqlite_queue_prepare(struct store_sqlite *s, struct err *err)
{
	size_t i;

	if (store_sqlite_sync(s, 0, err) == -1)
		return -1;
	if (s->q[0] != NULL)
		return 0;
	for (i = 0; i < STORE_SQQ_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, store_sqlite_queue_stmts[i].sql,
		    -1, SQLITE_PREPARE_PERSISTENT, &s->q[i], NULL) !=
		    SQLITE_OK) {
			(void)store_sqlite_fail(s, "prepare statement", err);
			store_sqlite_queue_finalize(s);
			return -1;
		}
	}
	return 0;
}

/* store_sqlite_step() of a queue statement. */
static int
store_sqlite_queue_run(struct store_sqlite *s,
    enum store_sqlite_queue_stmt id, int bind_rc, struct err *err)
{
	return store_sqlite_step(s, s->q[id], bind_rc,
	    store_sqlite_queue_stmts[id].what, err);
}

/* Prepare and BEGIN IMMEDIATE (waits for the write lock up to the timeout). */
static int
store_sqlite_queue_begin(struct store_sqlite *s, struct err *err)
{
	if (store_sqlite_queue_prepare(s, err) == -1)
		return -1;
	return store_sqlite_queue_run(s, STORE_SQQ_BEGIN, SQLITE_OK, err);
}

/* COMMIT when rc is not -1; roll back whatever is still open.  Returns rc,
 * or -1 when the COMMIT failed. */
static int
store_sqlite_queue_end(struct store_sqlite *s, int rc, struct err *err)
{
	if (rc != -1 &&
	    store_sqlite_queue_run(s, STORE_SQQ_COMMIT, SQLITE_OK, err) == -1)
		rc = -1;
	if (sqlite3_get_autocommit(s->db) == 0)
		(void)store_sqlite_queue_run(s, STORE_SQQ_ROLLBACK, SQLITE_OK,
		    NULL);
	return rc;
}

/* A text column copied into a (NULL stays NULL); -1 when out of memory. */
static int
store_sqlite_queue_text(struct arena *a, sqlite3_stmt *st, int col,
    const char **ret)
{
	const char *t = (const char *)sqlite3_column_text(st, col);

	*ret = NULL;
	if (t == NULL)
		return 0;
	*ret = arena_strndup(a, t, (size_t)sqlite3_column_bytes(st, col));
	return *ret != NULL ? 0 : -1;
}

/* The request arena ran out while copying a claimed message. */
static int
store_sqlite_queue_oom(struct err *err)
{
	return err_set(err, ERR_INTERNAL, NULL,
	    "memory exhausted copying a claimed message");
}

/* Claim the oldest claimable row: 1 (id, attempts in d), 0 none, -1. */
static int
store_sqlite_queue_take(struct store_sqlite *s, int64_t now_ms,
    int64_t stale_ms, struct arena *a, struct store_delivery *d,
    struct err *err)
{
	sqlite3_stmt *st = s->q[STORE_SQQ_CLAIM];
	int64_t now = store_clamp_ms(now_ms);
	int rc = -1, b;

	b = sqlite3_bind_int64(st, 1, now);
	b |= sqlite3_bind_int64(st, 2, now - stale_ms);
	switch (b == SQLITE_OK ? sqlite3_step(st) : b) {
	case SQLITE_ROW:
		d->attempts = sqlite3_column_int(st, 1);
		if (store_sqlite_queue_text(a, st, 0, &d->message_id) == -1 ||
		    store_sqlite_queue_text(a, st, 2, &d->from_party) == -1 ||
		    d->message_id == NULL || d->from_party == NULL)
			(void)store_sqlite_queue_oom(err);
		else
			rc = 1;
		break;
	case SQLITE_DONE:
		rc = 0;
		break;
	default:
		(void)store_sqlite_fail(s, "claim delivery", err);
		break;
	}
	store_sqlite_done(st);
	return rc;
}

/* The claimed message's inbox row into d. */
static int
store_sqlite_queue_row(struct store_sqlite *s, struct arena *a,
    struct store_delivery *d, struct err *err)
{
	sqlite3_stmt *st = s->q[STORE_SQQ_SEL_INBOX];
	const char **txt[] = { &d->from_party, &d->to_party, &d->service,
	    &d->action, &d->conversation_id, &d->agreement_ref, &d->pmode_id,
	    NULL, &d->business_key, &d->business_duplicate_of };
	int rc = -1, i;

	if (store_sqlite_bind_text(st, 1, d->message_id) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, d->from_party) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		(void)store_sqlite_fail(s, "read claimed inbox row", err);
		goto out;
	}
	for (i = 0; i < (int)(sizeof(txt) / sizeof(txt[0])); i++)
		if (txt[i] != NULL &&    /* 7: received_at */
		    store_sqlite_queue_text(a, st, i, txt[i]) == -1) {
			(void)store_sqlite_queue_oom(err);
			goto out;
		}
	d->received_at_ms = sqlite3_column_int64(st, 7);
	rc = 0;
out:
	store_sqlite_done(st);
	return rc;
}

/* Number of payload rows of the claimed message, to size d->parts. */
static int
store_sqlite_queue_n_parts(struct store_sqlite *s,
    const struct store_delivery *d, size_t *ret, struct err *err)
{
	sqlite3_stmt *st = s->q[STORE_SQQ_N_PARTS];
	int rc = -1;

	if (store_sqlite_bind_text(st, 1, d->message_id) == SQLITE_OK &&
	    store_sqlite_bind_text(st, 2, d->from_party) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		*ret = (size_t)sqlite3_column_int64(st, 0);
		rc = 0;
	} else
		(void)store_sqlite_fail(s, "count claimed payloads", err);
	store_sqlite_done(st);
	return rc;
}

/* One payload row (the statement is on it) into p. */
static int
store_sqlite_queue_part(sqlite3_stmt *st, struct arena *a,
    struct store_part *p)
{
	p->part_no = sqlite3_column_int(st, 0);
	if (store_sqlite_queue_text(a, st, 1, &p->content_id) == -1 ||
	    store_sqlite_queue_text(a, st, 2, &p->mime_type) == -1 ||
	    store_sqlite_queue_text(a, st, 3, &p->properties) == -1)
		return -1;
	/* longer than STORE_CLAIM_INLINE_MAX: its size, no bytes */
	if (sqlite3_column_type(st, 4) == SQLITE_NULL) {
		p->len = (size_t)sqlite3_column_int64(st, 5);
		p->data = NULL;
		return 0;
	}
	p->len = (size_t)sqlite3_column_bytes(st, 4);
	p->data = arena_memdup(a, sqlite3_column_blob(st, 4), p->len);
	return p->data != NULL ? 0 : -1;
}

/* The claimed message's payloads, in part_no order, into d. */
static int
store_sqlite_queue_parts(struct store_sqlite *s, struct arena *a,
    struct store_delivery *d, struct err *err)
{
	sqlite3_stmt *st = s->q[STORE_SQQ_SEL_PARTS];
	size_t n = 0;
	int rc = -1, r = SQLITE_DONE;

	if (store_sqlite_queue_n_parts(s, d, &n, err) == -1)
		return -1;
	d->parts = arena_calloc(a, n, sizeof(*d->parts));
	if (d->parts == NULL)
		return store_sqlite_queue_oom(err);
	if (store_sqlite_bind_text(st, 1, d->message_id) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, d->from_party) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 3, (sqlite3_int64)STORE_CLAIM_INLINE_MAX) !=
	    SQLITE_OK)
		r = SQLITE_ERROR;
	for (d->n_parts = 0; r != SQLITE_ERROR && d->n_parts < n;
	    d->n_parts++) {
		if ((r = sqlite3_step(st)) != SQLITE_ROW)
			break;
		if (store_sqlite_queue_part(st, a,
		    &d->parts[d->n_parts]) == -1) {
			(void)store_sqlite_queue_oom(err);
			goto out;
		}
	}
	if (r == SQLITE_ROW || r == SQLITE_DONE)
		rc = 0;
	else
		(void)store_sqlite_fail(s, "read claimed payloads", err);
out:
	store_sqlite_done(st);
	return rc;
}

/* Claim (store.h): BEGIN IMMEDIATE, take, read, COMMIT; 1, 0 or -1. */
int
store_sqlite_queue_claim(struct store *base, int64_t now_ms,
    int64_t stale_ms, struct arena *a, struct store_delivery *ret,
    struct err *err)
{
	struct store_sqlite *h = (struct store_sqlite *)base;
	struct store_sqlite *s = store_sqlite_writer_conn(h);
	int rc = -1;

	store_sqlite_writer_lock(h->w);
	if (store_sqlite_queue_begin(s, err) == -1)
		goto out;
	rc = store_sqlite_queue_take(s, now_ms, stale_ms, a, ret, err);
	if (rc == 1 && (store_sqlite_queue_row(s, a, ret, err) == -1 ||
	    store_sqlite_queue_parts(s, a, ret, err) == -1))
		rc = -1;
out:
	rc = store_sqlite_queue_end(s, rc, err);
	store_sqlite_writer_unlock(h->w);
	return rc;
}

/* Back to 'ready' after a failed hand-off, with its error (one autocommit
 * statement). */
static int
store_sqlite_queue_retry(struct store_sqlite *s, const char *from_party,
    const char *message_id, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err)
{
	sqlite3_stmt *st;
	int b;

	if (store_sqlite_queue_prepare(s, err) == -1)
		return -1;
	st = s->q[STORE_SQQ_RETRY];
	b = store_sqlite_bind_text(st, 1, message_id);
	b |= sqlite3_bind_int64(st, 2, retry_at_ms);
	b |= store_sqlite_bind_text(st, 3, from_party);
	b |= store_sqlite_bind_text(st, 4, error);
	b |= sqlite3_bind_int64(st, 5, now_ms);
	return store_sqlite_queue_run(s, STORE_SQQ_RETRY, b, err);
}

/* ok: 'done', done_at and processed_at, in one transaction (writer
 * held). */
static int
store_sqlite_queue_done(struct store_sqlite *s, const char *from_party,
    const char *message_id, int64_t now_ms, struct err *err)
{
	sqlite3_stmt *st;
	int rc = -1, b;

	if (store_sqlite_queue_begin(s, err) == -1)
		goto out;
	st = s->q[STORE_SQQ_DONE];
	b = store_sqlite_bind_text(st, 1, message_id);
	b |= sqlite3_bind_int64(st, 2, now_ms);
	b |= store_sqlite_bind_text(st, 3, from_party);
	if (store_sqlite_queue_run(s, STORE_SQQ_DONE, b, err) == -1)
		goto out;
	if (sqlite3_changes(s->db) == 1) {
		st = s->q[STORE_SQQ_PROCESSED];
		b = store_sqlite_bind_text(st, 1, message_id);
		b |= sqlite3_bind_int64(st, 2, now_ms);
		b |= store_sqlite_bind_text(st, 3, from_party);
		if (store_sqlite_queue_run(s, STORE_SQQ_PROCESSED, b,
		    err) == -1)
			goto out;
	}
	rc = 0;
out:
	return store_sqlite_queue_end(s, rc, err);
}

/* ok: 'done' and processed_at; else back to 'ready' with the error
 * (store.h). */
int
store_sqlite_queue_finish(struct store *base, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err)
{
	struct store_sqlite *h = (struct store_sqlite *)base;
	struct store_sqlite *s = store_sqlite_writer_conn(h);
	int rc;

	store_sqlite_writer_lock(h->w);
	if (ok)
		rc = store_sqlite_queue_done(s, from_party, message_id, now_ms,
		    err);
	else
		rc = store_sqlite_queue_retry(s, from_party, message_id,
		    now_ms, retry_at_ms, error, err);
	store_sqlite_writer_unlock(h->w);
	return rc;
}

/* Bind the purge parameters ?1..?5 shared by PURGE and KEPT. */
static int
store_sqlite_queue_bind_purge(sqlite3_stmt *st, const struct store_purge *p,
    const struct buf *legs, int64_t max)
{
	int b;

	b = sqlite3_bind_int64(st, 1, max);
	b |= sqlite3_bind_text(st, 2, legs->data, -1, SQLITE_STATIC);
	b |= sqlite3_bind_int64(st, 3, store_clamp_ms(p->default_cutoff_ms));
	b |= sqlite3_bind_int(st, 4, p->undelivered != 0);
	b |= sqlite3_bind_int64(st, 5, (sqlite3_int64)p->batch);
	return b;
}

/* How many undelivered rows past their cutoff are kept (at most batch). */
static int
store_sqlite_queue_kept(struct store_sqlite *s, const struct store_purge *p,
    const struct buf *legs, int64_t max, size_t *kept, struct err *err)
{
	sqlite3_stmt *st = s->q[STORE_SQQ_KEPT];
	int rc = -1;

	if (store_sqlite_queue_bind_purge(st, p, legs, max) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		*kept = (size_t)sqlite3_column_int64(st, 0);
		rc = 0;
	} else
		(void)store_sqlite_fail(s, "count undelivered rows", err);
	store_sqlite_done(st);
	return rc;
}

/*
 * One purge batch in one transaction: DELETE the oldest p->batch purgeable
 * inbox rows (foreign keys are on: payload and delivery rows cascade).
 */
int
store_sqlite_queue_purge(struct store *base, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err)
{
	struct store_sqlite *h = (struct store_sqlite *)base;
	struct store_sqlite *s = store_sqlite_writer_conn(h);
	struct buf legs = { 0 };
	int64_t max = 0;
	int rc = -1, b;

	store_sqlite_writer_lock(h->w);
	if (store_purge_legs(p, &legs, &max, err) == -1 ||
	    store_sqlite_queue_begin(s, err) == -1)
		goto out;
	*kept = 0;
	if (!p->undelivered &&
	    store_sqlite_queue_kept(s, p, &legs, max, kept, err) == -1)
		goto out;
	b = store_sqlite_queue_bind_purge(s->q[STORE_SQQ_PURGE], p, &legs,
	    max);
	if (store_sqlite_queue_run(s, STORE_SQQ_PURGE, b, err) == -1)
		goto out;
	*purged = (size_t)sqlite3_changes(s->db);
	rc = 0;
out:
	rc = store_sqlite_queue_end(s, rc, err);
	store_sqlite_writer_unlock(h->w);
	buf_free(&legs);
	return rc;
}

/* Exact counts: count(*) of inbox, and of the pending delivery rows. */
int
store_sqlite_queue_stats(struct store *base, struct store_stats *ret,
    struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st;
	int rc = -1;

	if (store_sqlite_queue_prepare(s, err) == -1)
		return -1;
	st = s->q[STORE_SQQ_STATS];
	if (sqlite3_step(st) == SQLITE_ROW) {
		ret->inbox_rows = sqlite3_column_int64(st, 0);
		ret->delivery_ready = sqlite3_column_int64(st, 1);
		ret->delivery_claimed = sqlite3_column_int64(st, 2);
		rc = 0;
	} else
		(void)store_sqlite_fail(s, "read queue sizes", err);
	store_sqlite_done(st);
	return rc;
}

/*
 * SQLite has no notifications: sleep min(timeout_ms, 1000) and let the
 * caller poll.  A signal ends the sleep early (a stopping deliverer).
 */
int
store_sqlite_queue_wait(struct store *base, int timeout_ms, struct err *err)
{
	int ms = timeout_ms < 1000 ? timeout_ms : 1000;
	struct timespec ts;

	(void)base;
	if (ms <= 0)
		return 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (nanosleep(&ts, NULL) == -1 && errno != EINTR)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not sleep: %s", strerror(errno));
	return 0;
}
