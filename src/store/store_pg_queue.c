/*
 * store_pg_queue — the delivery queue, retention purge, gauges and
 * LISTEN/NOTIFY wake-up of the PostgreSQL backend (store.h "The delivery
 * queue"; the NOTIFY after a NEW accept is sent from here too).  Every
 * operation is ONE statement in its own implicit transaction: claim takes
 * a row with SELECT ... FOR UPDATE SKIP LOCKED, so deliverers on any number
 * of connections or hosts never take the same row and never wait for each
 * other, and returns the message and its payloads in the same round trip.
 *
 * A statement that fails on a connection that turns out dead (a server
 * restart) is run once more on a fresh connection (store_pg_call).  That is
 * safe for each of them: finish only changes a 'claimed' row, purge deletes
 * what is purgeable at the time, and a claim whose COMMIT happened but whose
 * answer was lost leaves a 'claimed' row that is taken over once stale.
 */
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_int.h"
#include "store_pg_int.h"
#include "../util/buf.h"
#include "../util/clock.h"

/* ms since the epoch as a timestamptz. */
#define STORE_PGQ_TS(n) "to_timestamp($" #n "::bigint / 1000.0)"

/* The cutoff of inbox row i: its leg's, else the default $3. */
#define STORE_PGQ_PAST \
	" i.received_at < " STORE_PGQ_TS(1) \
	" AND i.received_at < to_timestamp(coalesce((SELECT l.cutoff_ms" \
	" FROM legs l WHERE l.pmode_id = i.pmode_id LIMIT 1), $3::bigint)" \
	" / 1000.0)"

/* STORE_CLAIM_INLINE_MAX (store.h) as SQL text: the claim carries the bytes
 * of a payload up to this size, the size of a longer one. */
#define STORE_PGQ_INLINE_MAX "1048576"
_Static_assert(STORE_CLAIM_INLINE_MAX == 1048576, "STORE_PGQ_INLINE_MAX");

enum store_pg_queue_stmt {
	STORE_PGQ_CLAIM,
	STORE_PGQ_DONE,
	STORE_PGQ_RETRY,
	STORE_PGQ_PURGE,
	STORE_PGQ_STATS,
	STORE_PGQ_NOTIFY,
	STORE_PGQ_COUNT
};

/* Columns of the claim result: one row per payload (at least one row). */
enum store_pg_queue_col {
	STORE_PGQ_C_ID, STORE_PGQ_C_FROM, STORE_PGQ_C_TO, STORE_PGQ_C_SERVICE,
	STORE_PGQ_C_ACTION, STORE_PGQ_C_CONV, STORE_PGQ_C_AGREEMENT,
	STORE_PGQ_C_PMODE, STORE_PGQ_C_RECEIVED, STORE_PGQ_C_ATTEMPTS,
	STORE_PGQ_C_PART_NO, STORE_PGQ_C_CID, STORE_PGQ_C_MIME,
	STORE_PGQ_C_PROPS, STORE_PGQ_C_CONTENT, STORE_PGQ_C_BUSINESS_KEY,
	STORE_PGQ_C_BUSINESS_DUP_OF, STORE_PGQ_C_SIZE
};

const struct store_pg_stmt store_pg_queue_stmts[STORE_PGQ_COUNT] = {
	/*
	 * $1 now, $2 the stale cutoff (ms).  The WHERE of t repeats
	 * delivery_pending_idx's predicate (002_delivery.sql); t is run once
	 * and its one row found again by the primary key (from_party,
	 * message_id).  Documented in the README.
	 */
	[STORE_PGQ_CLAIM] = { "as4gw_claim", "claim delivery", 2,
	    "WITH t AS MATERIALIZED (SELECT from_party, message_id"
	    " FROM delivery WHERE state IN ('ready', 'claimed')"
	    " AND ((state = 'ready' AND (not_before IS NULL"
	    " OR not_before <= " STORE_PGQ_TS(1) "))"
	    " OR (state = 'claimed' AND claimed_at < " STORE_PGQ_TS(2) "))"
	    " ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED),"
	    " c AS (UPDATE delivery AS d SET state = 'claimed',"
	    " claimed_at = " STORE_PGQ_TS(1) ", attempts = d.attempts + 1"
	    " FROM t WHERE d.from_party = t.from_party"
	    " AND d.message_id = t.message_id"
	    " RETURNING d.from_party, d.message_id, d.attempts)"
	    " SELECT c.message_id, i.from_party, i.to_party, i.service,"
	    " i.action, i.conversation_id, i.agreement_ref, i.pmode_id,"
	    " round(extract(epoch FROM i.received_at) * 1000)::bigint::text,"
	    " c.attempts::text, p.part_no::text, p.content_id, p.mime_type,"
	    " p.properties, CASE WHEN p.size IS NULL AND"
	    " octet_length(p.content) <= " STORE_PGQ_INLINE_MAX
	    " THEN p.content END, i.business_key, i.business_duplicate_of,"
	    " coalesce(p.size, octet_length(p.content))::text"
	    " FROM c JOIN inbox i ON i.from_party = c.from_party"
	    " AND i.message_id = c.message_id"
	    " LEFT JOIN payload p ON p.from_party = c.from_party"
	    " AND p.message_id = c.message_id"
	    " ORDER BY p.part_no" },
	/* $1 message id, $2 now, $3 sending party */
	[STORE_PGQ_DONE] = { "as4gw_done", "mark delivery done", 3,
	    "WITH d AS (UPDATE delivery SET state = 'done',"
	    " done_at = " STORE_PGQ_TS(2)
	    " WHERE from_party = $3 AND message_id = $1"
	    " AND state = 'claimed' RETURNING from_party, message_id)"
	    " UPDATE inbox SET processed_at = " STORE_PGQ_TS(2)
	    " FROM d WHERE inbox.from_party = d.from_party"
	    " AND inbox.message_id = d.message_id" },
	/* $1 message id, $2 not before, $3 sending party, $4 the error, $5
	 * now */
	[STORE_PGQ_RETRY] = { "as4gw_retry", "release delivery", 5,
	    "UPDATE delivery SET state = 'ready', claimed_at = NULL,"
	    " not_before = " STORE_PGQ_TS(2) ", last_error = $4,"
	    " last_error_at = " STORE_PGQ_TS(5)
	    " WHERE from_party = $3 AND message_id = $1"
	    " AND state = 'claimed'" },
	/*
	 * $1 the latest cutoff (bounds the received_at index scan), $2 the
	 * legs as JSON, $3 the default cutoff, $4 undelivered too, $5 batch.
	 * SKIP LOCKED: two purgers (two gateways) never wait for each other.
	 */
	[STORE_PGQ_PURGE] = { "as4gw_purge", "purge inbox rows", 5,
	    "WITH legs AS MATERIALIZED (SELECT l ->> 0 AS pmode_id,"
	    " (l ->> 1)::bigint AS cutoff_ms"
	    " FROM json_array_elements($2::json) l),"
	    " victim AS MATERIALIZED (SELECT i.from_party, i.message_id"
	    " FROM inbox i LEFT JOIN delivery d ON d.from_party = i.from_party"
	    " AND d.message_id = i.message_id"
	    " WHERE" STORE_PGQ_PAST
	    " AND ($4::boolean OR d.state IS NULL OR d.state = 'done')"
	    " ORDER BY i.received_at LIMIT $5::bigint"
	    " FOR UPDATE OF i SKIP LOCKED),"
	    " gone AS (DELETE FROM inbox AS g USING victim AS v"
	    " WHERE g.from_party = v.from_party"
	    " AND g.message_id = v.message_id RETURNING 1)"
	    " SELECT (SELECT count(*) FROM gone)::text,"
	    " (SELECT count(*) FROM (SELECT 1 FROM inbox i"
	    " JOIN delivery d ON d.from_party = i.from_party"
	    " AND d.message_id = i.message_id"
	    " WHERE NOT $4::boolean AND" STORE_PGQ_PAST
	    " AND d.state IN ('ready', 'claimed') LIMIT $5::bigint) k)::text" },
	/* inbox: the planner's estimate; an exact count until first ANALYZE */
	[STORE_PGQ_STATS] = { "as4gw_stats", "read queue sizes", 0,
	    "SELECT (CASE WHEN c.reltuples < 0"
	    " THEN (SELECT count(*) FROM inbox)"
	    " ELSE c.reltuples::bigint END)::text,"
	    " (SELECT count(*) FROM delivery WHERE state IN ('ready', 'claimed')"
	    " AND state = 'ready')::text,"
	    " (SELECT count(*) FROM delivery WHERE state IN ('ready', 'claimed')"
	    " AND state = 'claimed')::text"
	    " FROM pg_class c WHERE c.oid = 'inbox'::regclass" },
	/*
	 * $1 message id.  Its own transaction, not waited for
	 * (store_pg_queue_notify), without synchronous_commit: a lost wake-up
	 * costs a poll interval (PostgreSQL 15 does not even flush a
	 * NOTIFY-only commit).
	 */
	[STORE_PGQ_NOTIFY] = { "as4gw_notify", "notify deliverers", 1,
	    "SELECT set_config('synchronous_commit', 'off', true),"
	    " pg_notify('" STORE_PG_CHANNEL "', $1)" },
};

const size_t store_pg_queue_count = STORE_PGQ_COUNT;

/* Execute queue statement id (binary results) with store_pg_call(). */
static PGresult *
store_pg_queue_run(struct store_pg *s, enum store_pg_queue_stmt id,
    const struct store_pg_params *p, struct err *err)
{
	return store_pg_call(s, &store_pg_queue_stmts[id], p, 1, err);
}

/* Column col of row r as an arena string (NULL stays NULL); -1 no memory. */
static int
store_pg_queue_text(const PGresult *res, int r, int col, struct arena *a,
    const char **ret)
{
	*ret = NULL;
	if (PQgetisnull(res, r, col))
		return 0;
	*ret = arena_strndup(a, PQgetvalue(res, r, col),
	    (size_t)PQgetlength(res, r, col));
	return *ret != NULL ? 0 : -1;
}

/* The message columns of the claim result (its first row) into d. */
static int
store_pg_queue_row(const PGresult *res, struct arena *a,
    struct store_delivery *d)
{
	const char **txt[] = { &d->message_id, &d->from_party, &d->to_party,
	    &d->service, &d->action, &d->conversation_id, &d->agreement_ref,
	    &d->pmode_id };
	int i;

	for (i = 0; i < (int)(sizeof(txt) / sizeof(txt[0])); i++)
		if (store_pg_queue_text(res, 0, STORE_PGQ_C_ID + i, a,
		    txt[i]) == -1)
			return -1;
	if (store_pg_queue_text(res, 0, STORE_PGQ_C_BUSINESS_KEY, a,
	    &d->business_key) == -1 ||
	    store_pg_queue_text(res, 0, STORE_PGQ_C_BUSINESS_DUP_OF, a,
	    &d->business_duplicate_of) == -1)
		return -1;
	d->received_at_ms = strtoll(PQgetvalue(res, 0, STORE_PGQ_C_RECEIVED),
	    NULL, 10);
	d->attempts = (int)strtol(PQgetvalue(res, 0, STORE_PGQ_C_ATTEMPTS),
	    NULL, 10);
	return 0;
}

/* The payloads of the claim result (one per row, unless none) into d. */
static int
store_pg_queue_parts(const PGresult *res, struct arena *a,
    struct store_delivery *d)
{
	size_t n = (size_t)PQntuples(res), i;

	if (PQgetisnull(res, 0, STORE_PGQ_C_PART_NO))
		n = 0;
	d->parts = arena_calloc(a, n, sizeof(*d->parts));
	if (d->parts == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		struct store_part *p = &d->parts[i];
		int r = (int)i;

		p->part_no = (int)strtol(PQgetvalue(res, r,
		    STORE_PGQ_C_PART_NO), NULL, 10);
		if (store_pg_queue_text(res, r, STORE_PGQ_C_CID, a,
		    &p->content_id) == -1 ||
		    store_pg_queue_text(res, r, STORE_PGQ_C_MIME, a,
		    &p->mime_type) == -1 ||
		    store_pg_queue_text(res, r, STORE_PGQ_C_PROPS, a,
		    &p->properties) == -1)
			return -1;
		/* longer than STORE_CLAIM_INLINE_MAX: size, no bytes */
		if (PQgetisnull(res, r, STORE_PGQ_C_CONTENT)) {
			p->len = (size_t)strtoull(PQgetvalue(res, r,
			    STORE_PGQ_C_SIZE), NULL, 10);
			continue;
		}
		p->len = (size_t)PQgetlength(res, r, STORE_PGQ_C_CONTENT);
		p->data = arena_memdup(a, PQgetvalue(res, r,
		    STORE_PGQ_C_CONTENT), p->len);
		if (p->data == NULL)
			return -1;
	}
	d->n_parts = n;
	return 0;
}

/*
 * Claim (store.h) in one statement, committed when it returns.  If the
 * arena cannot hold the message, the row is put back to 'ready' at once
 * (best effort: else it is taken over once stale).
 */
int
store_pg_queue_claim(struct store *base, int64_t now_ms, int64_t stale_ms,
    struct arena *a, struct store_delivery *ret, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_pg_params p;
	int64_t now = store_clamp_ms(now_ms);
	char now_s[24], stale_s[24];
	PGresult *res;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	(void)snprintf(now_s, sizeof(now_s), "%" PRId64, now);
	(void)snprintf(stale_s, sizeof(stale_s), "%" PRId64,
	    store_clamp_ms(now - stale_ms));
	p.values[0] = now_s;
	p.values[1] = stale_s;
	res = store_pg_queue_run(s, STORE_PGQ_CLAIM, &p, err);
	if (res == NULL)
		goto out;
	if (PQntuples(res) == 0)
		rc = 0;
	else if (store_pg_queue_row(res, a, ret) == -1 ||
	    store_pg_queue_parts(res, a, ret) == -1) {
		(void)err_set(err, ERR_INTERNAL, NULL,
		    "memory exhausted copying a claimed message");
		(void)store_pg_queue_finish(base,
		    PQgetvalue(res, 0, STORE_PGQ_C_FROM),
		    PQgetvalue(res, 0, STORE_PGQ_C_ID), 0, now, now,
		    "out of memory reading the message", NULL);
	} else
		rc = 1;
out:
	PQclear(res);
	return rc;
}

/* ok: 'done' and processed_at in one statement; else back to 'ready' with
 * the error. */
int
store_pg_queue_finish(struct store *base, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_pg_params p;
	char ms[24], now[24];
	PGresult *res;

	memset(&p, 0, sizeof(p));
	(void)snprintf(ms, sizeof(ms), "%" PRId64,
	    store_clamp_ms(ok ? now_ms : retry_at_ms));
	(void)snprintf(now, sizeof(now), "%" PRId64, store_clamp_ms(now_ms));
	p.values[0] = message_id;
	p.values[1] = ms;
	p.values[2] = from_party;
	p.values[3] = error;
	p.values[4] = now;
	res = store_pg_queue_run(s, ok ? STORE_PGQ_DONE : STORE_PGQ_RETRY, &p,
	    err);
	PQclear(res);
	return res != NULL ? 0 : -1;
}

/* One purge batch in one statement (see STORE_PGQ_PURGE). */
int
store_pg_queue_purge(struct store *base, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_pg_params pp;
	struct buf legs = { 0 };
	char max_s[24], def_s[24], batch_s[24];
	int64_t max = 0;
	PGresult *res = NULL;
	int rc = -1;

	if (store_purge_legs(p, &legs, &max, err) == -1)
		goto out;
	memset(&pp, 0, sizeof(pp));
	(void)snprintf(max_s, sizeof(max_s), "%" PRId64, max);
	(void)snprintf(def_s, sizeof(def_s), "%" PRId64,
	    store_clamp_ms(p->default_cutoff_ms));
	(void)snprintf(batch_s, sizeof(batch_s), "%zu", p->batch);
	pp.values[0] = max_s;
	pp.values[1] = legs.data;
	pp.values[2] = def_s;
	pp.values[3] = p->undelivered ? "true" : "false";
	pp.values[4] = batch_s;
	res = store_pg_queue_run(s, STORE_PGQ_PURGE, &pp, err);
	if (res == NULL)
		goto out;
	if (PQntuples(res) != 1) {
		(void)err_set(err, ERR_STORE, NULL,
		    "could not purge inbox rows: no result");
		goto out;
	}
	*purged = (size_t)strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	*kept = (size_t)strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	rc = 0;
out:
	PQclear(res);
	buf_free(&legs);
	return rc;
}

/* Inbox rows (estimate, see STORE_PGQ_STATS) and exact queue sizes. */
int
store_pg_queue_stats(struct store *base, struct store_stats *ret,
    struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_pg_params p;
	PGresult *res;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	res = store_pg_queue_run(s, STORE_PGQ_STATS, &p, err);
	if (res == NULL)
		return -1;
	if (PQntuples(res) == 1) {
		ret->inbox_rows = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		ret->delivery_ready = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
		ret->delivery_claimed = strtoll(PQgetvalue(res, 0, 2), NULL,
		    10);
		rc = 0;
	} else
		(void)err_set(err, ERR_STORE, NULL,
		    "could not read queue sizes: no inbox table");
	PQclear(res);
	return rc;
}

/*
 * After a NEW accept commit: wake the deliverers (store_wait) with a NOTIFY
 * in a transaction of its own, sent without waiting for its answer
 * (store_pg_settle reads it at the connection's next use).  Inside the
 * accept transaction it would hold PostgreSQL's database-wide notify lock
 * across the commit's WAL flush and so serialise every accept (2-5x fewer
 * accepts per second measured).  Best effort: a NOTIFY lost to a crash or a
 * failure costs a deliverer one poll interval, never a message.
 */
void
store_pg_queue_notify(struct store_pg *s, const char *message_id)
{
	const char *values[1] = { message_id };

	if (PQsendQueryPrepared(s->conn, store_pg_queue_stmts[STORE_PGQ_NOTIFY]
	    .name, 1, values, NULL, NULL, 0) == 1)
		s->pending = 1;
}

/* Wait until the connection is not busy: 0, or -1 when it failed or
 * timeout_ms passed first (negative: the store's timeout,
 * store_pg_await). */
static int
store_pg_queue_idle(struct store_pg *s, int64_t deadline, int timeout_ms)
{
	struct pollfd pfd;
	int64_t left;

	while (PQisBusy(s->conn)) {
		if (timeout_ms < 0)
			return store_pg_await(s);  /* the store's deadline */
		left = deadline - clock_mono_ms();
		pfd.fd = PQsocket(s->conn);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0 ||
		    PQconsumeInput(s->conn) == 0)
			return -1;
	}
	return 0;
}

/* Read the answer of a NOTIFY sent without waiting (store_pg_int.h). */
void
store_pg_settle(struct store_pg *s, int timeout_ms)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	PGresult *res;

	if (!s->pending)
		return;
	s->pending = 0;
	while (store_pg_queue_idle(s, deadline, timeout_ms) == 0 &&
	    (res = PQgetResult(s->conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		PQclear(res);
		/* a NOTIFY never leaves a COPY running: do not spin on one */
		if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT)
			break;
	}
}

/* LISTEN on this connection unless done (reconnecting first if needed). */
static int
store_pg_queue_listen(struct store_pg *s, struct err *err)
{
	if (s->listening && !store_pg_gone(s, NULL))
		return 0;
	if (store_pg_begin(s, "LISTEN " STORE_PG_CHANNEL,
	    "listen for new messages", err) == -1)
		return -1;
	s->listening = 1;
	return 0;
}

/* Read what the server sent; 1 when a notification was among it, 0 none,
 * -1 the connection failed. */
static int
store_pg_queue_drain(struct store_pg *s)
{
	PGnotify *n;
	int got = 0;

	if (PQconsumeInput(s->conn) == 0)
		return -1;
	while ((n = PQnotifies(s->conn)) != NULL) {
		got = 1;
		PQfreemem(n);
	}
	return got;
}

/*
 * Wait for a NOTIFY on as4gw_inbox for up to timeout_ms (store.h).  The
 * notifications that came in while the connection ran other statements
 * count (libpq queued them).  A connection lost while waiting is
 * re-established at once (and LISTENs again): 0 then, since messages may
 * have arrived meanwhile; -1 if that fails.  A signal ends the wait (0).
 */
int
store_pg_queue_wait(struct store *base, int timeout_ms, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	int64_t deadline = clock_mono_ms() + timeout_ms;
	struct pollfd pfd;
	int got;

	store_pg_settle(s, -1);  /* our own NOTIFY's answer, if any */
	if (store_pg_queue_listen(s, err) == -1)
		return -1;
	while ((got = store_pg_queue_drain(s)) == 0) {
		int64_t left = deadline - clock_mono_ms();

		if (left <= 0)
			return 0;
		pfd.fd = PQsocket(s->conn);
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)left) == -1)
			return errno == EINTR ? 0 :
			    err_set(err, ERR_STORE, NULL,
			    "could not wait for postgresql: %s",
			    strerror(errno));
	}
	if (got == -1 && PQstatus(s->conn) == CONNECTION_OK)
		return store_pg_fail(s, "read notifications", NULL, err);
	if (got == -1)
		return store_pg_queue_listen(s, err);
	return 0;
}
