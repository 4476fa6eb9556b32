/*
 * store_pg_early — a large message's chunk rows written while its content
 * hashes are still being computed (issue 14; store_pg_int.h
 * store_pg_early, 012_payload_chunk_cascade.sql).
 *
 * as4gw_accept() decides NEW, DUPLICATE or DRIFT from the content hashes,
 * and those of a message with 8 MiB of payload or more are computed on a
 * thread of their own (payload_job.c).  Waiting for them and then COPYing
 * a gigabyte of chunk rows adds the two up; here the server writes the
 * chunks while the thread hashes:
 *
 *   BEGIN
 *   SELECT: is (from_party, message_id) stored?   yes: ROLLBACK, usual path
 *   COPY payload_chunk ...                        (the hashes meanwhile)
 *   -- store_pg.c: wait for the hashes, as4gw_accept(); a NEW: COPY
 *   -- payload rows, COMMIT (chunk rows have no foreign key, 012);
 *   -- anything else: ROLLBACK, and accept again the usual way
 *
 * Still one transaction: a crash or an error at any point leaves nothing,
 * and the Receipt still goes out only after the COMMIT.  The chunk rows'
 * primary key is the message's key, so two requests with one MessageId
 * cannot both get here: the second's COPY waits on the first's rows and,
 * once the first commits, fails on the key (unique_violation) — then it
 * is given up here and the usual path answers DUPLICATE or DRIFT from the
 * stored row.  A message whose row is stored already (a retry) does not
 * COPY at all: the SELECT sends it the usual way at the cost of one round
 * trip.  A stored row without chunk rows (a drift, its parts small) is
 * only found by as4gw_accept(): that is the ROLLBACK in store_pg.c, as is
 * a business-level duplicate refused (its chunks were written for nothing).
 * A second request whose COPY waits on the first's chunk rows is blocked
 * sending (the server stops reading): libpq's tcp_user_timeout bounds that
 * wait as the store's timeout bounds a wait for a result (store_pg_wait.c),
 * then the answer is a 503, as it was when the wait was in as4gw_accept().
 */
#include "store.h"

#include <string.h>

#include <libpq-fe.h>

#include "store_pg_int.h"
#include "../util/fault.h"

#define STORE_PG_EARLY_BEGIN "BEGIN ISOLATION LEVEL READ COMMITTED"
#define STORE_PG_EARLY_STORED "SELECT 1 FROM inbox" \
	" WHERE from_party = $1 AND message_id = $2"

/* Whether m is a new message with chunked parts and pending hashes. */
static int
store_pg_early_wanted(const struct store_message *m)
{
	size_t i;

	/* a probe has no receipt: it stores nothing */
	if (m->pending == NULL || m->receipt == NULL)
		return 0;
	for (i = 0; i < m->n_parts; i++)
		if (m->parts[i].len > STORE_CHUNK_THRESHOLD)
			return 1;
	return 0;
}

/* Whether m's row is stored (committed): 1 yes, 0 no, -1 error. */
static int
store_pg_early_stored(struct store_pg *s, const struct store_message *m,
    struct err *err)
{
	const char *v[2] = { m->from_party, m->message_id };
	PGresult *res = store_pg_finish(s, PQsendQueryParams(s->conn,
	    STORE_PG_EARLY_STORED, 2, NULL, v, NULL, NULL, 0));
	int rc;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = store_pg_fail(s, "look up message", res, err);
	else
		rc = PQntuples(res) > 0;
	PQclear(res);
	return rc;
}

/* Whether the failure in s->state means another request holds or stored
 * the same key: unique_violation (23505), or a deadlock it was chosen to
 * end (40P01: none is expected, but the usual path is the answer to it). */
static int
store_pg_early_lost(const struct store_pg *s)
{
	return strcmp(s->state, "23505") == 0 ||
	    strcmp(s->state, "40P01") == 0;
}

/* The chunks ahead of the decision (store_pg_int.h). */
int
store_pg_early(struct store_pg *s, const struct store_message *m,
    struct err *err)
{
	struct err lost = { 0 };
	int stored;

	if (!store_pg_early_wanted(m))
		return 0;
	if (store_pg_begin(s, STORE_PG_EARLY_BEGIN, "begin transaction",
	    err) == -1)
		goto fail;
	if ((stored = store_pg_early_stored(s, m, err)) == -1)
		goto fail;
	if (stored) {
		store_pg_abort(s);
		return 0;
	}
	s->state[0] = '\0';
	if (store_pg_chunk_copy(s, m, &lost) == 0) {
		fault_point("store.early-chunks");
		return 1;
	}
	if (store_pg_early_lost(s)) {
		store_pg_abort(s);
		return 0;
	}
	*err = lost;
fail:
	store_pg_abort(s);
	return -1;
}
