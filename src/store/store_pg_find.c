/*
 * store_pg_find — the read-only inbox queries of the PostgreSQL backend for
 * the operator (store.h "store_find"; `as4gw inbox show`).  One statement,
 * so one snapshot; unnamed (an operator's query is rare, and the gateway's
 * connections need not prepare it), with text results.
 */
#include "store.h"

#include <libpq-fe.h>

#include "store_int.h"
#include "store_pg_int.h"

/* ms since the epoch of a timestamptz column, as text (NULL stays NULL). */
#define STORE_PGF_MS(c) "round(extract(epoch FROM " c ") * 1000)::bigint"

/* $1 message id, $2 the sending party or NULL (every party). */
#define STORE_PGF_FIND \
	"SELECT i.message_id, i.from_party, i.to_party, i.service, i.action," \
	" i.conversation_id, i.agreement_ref, i.pmode_id, i.source," \
	" encode(i.content_hash, 'hex'), " STORE_PGF_MS("i.received_at") "," \
	" " STORE_PGF_MS("i.processed_at") ", i.duplicates," \
	" " STORE_PGF_MS("i.last_duplicate_at") ", d.state, d.attempts," \
	" " STORE_PGF_MS("d.claimed_at") ", " STORE_PGF_MS("d.not_before") "," \
	" d.last_error, " STORE_PGF_MS("d.last_error_at") "," \
	" " STORE_PGF_MS("d.done_at") ", p.part_no, p.content_id," \
	" p.mime_type, coalesce(p.size, octet_length(p.content))," \
	" i.business_key," \
	" i.business_duplicate_of" \
	" FROM inbox i LEFT JOIN delivery d ON d.from_party = i.from_party" \
	" AND d.message_id = i.message_id" \
	" LEFT JOIN payload p ON p.from_party = i.from_party" \
	" AND p.message_id = i.message_id" \
	" WHERE i.message_id = $1::text" \
	" AND ($2::text IS NULL OR i.from_party = $2::text)" \
	" ORDER BY i.from_party, p.part_no"

/* Run the query; once more on a fresh connection if this one was dead. */
static PGresult *
store_pg_find_exec(struct store_pg *s, const char *const *values,
    struct err *err)
{
	PGresult *res = NULL;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		PQclear(res);
		res = NULL;
		if (store_pg_ensure(s, err) == -1)
			return NULL;
		res = store_pg_finish(s, PQsendQueryParams(s->conn,
		    STORE_PGF_FIND, 2, NULL, values, NULL, NULL, 0));
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			return res;
		if (!store_pg_gone(s, res) || s->timed_out)
			break;
	}
	(void)store_pg_fail(s, "look up message", res, err);
	PQclear(res);
	return NULL;
}

/* The inbox rows of message_id (store.h "store_find"): 1, 0 or -1. */
int
store_pg_find(struct store *base, const char *message_id,
    const char *from_party, struct arena *a, struct store_found **ret,
    struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_found *head = NULL, *tail = NULL;
	const char *values[2] = { message_id, from_party };
	const char *cols[STORE_FOUND_NCOLS];
	PGresult *res;
	int rc = -1, r, c;

	if ((res = store_pg_find_exec(s, values, err)) == NULL)
		return -1;
	if (PQnfields(res) != STORE_FOUND_NCOLS) {
		(void)err_set(err, ERR_STORE, NULL,
		    "could not look up message: unexpected result");
		goto out;
	}
	for (r = 0; r < PQntuples(res); r++) {
		for (c = 0; c < STORE_FOUND_NCOLS; c++)
			cols[c] = PQgetisnull(res, r, c) ? NULL :
			    PQgetvalue(res, r, c);
		if (store_found_row(a, cols, &head, &tail, err) == -1)
			goto out;
	}
	*ret = head;
	rc = head != NULL;
out:
	PQclear(res);
	return rc;
}
