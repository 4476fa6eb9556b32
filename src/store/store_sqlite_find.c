/*
 * store_sqlite_find — the read-only inbox queries of the SQLite backend for
 * the operator (store.h "store_find"; `as4gw inbox show`).  They run on the
 * handle's own connection, never on the writer's, so they neither queue
 * behind accepts nor hold the write lock; one SELECT reads one snapshot.
 * Prepared at each call: an operator's query is rare.
 */
#include "store.h"

#include <sqlite3.h>

#include "store_int.h"
#include "store_sqlite_int.h"

/* ?1 message id, ?2 the sending party or NULL (every party). */
#define STORE_SQF_FIND \
	"SELECT i.message_id, i.from_party, i.to_party, i.service, i.action," \
	" i.conversation_id, i.agreement_ref, i.pmode_id, i.source," \
	" lower(hex(i.content_hash)), i.received_at, i.processed_at," \
	" i.duplicates, i.last_duplicate_at, d.state, d.attempts," \
	" d.claimed_at, d.not_before, d.last_error, d.last_error_at," \
	" d.done_at, p.part_no, p.content_id, p.mime_type," \
	" coalesce(p.size, length(p.content))," \
	" i.business_key, i.business_duplicate_of" \
	" FROM inbox i LEFT JOIN delivery d ON d.from_party = i.from_party" \
	" AND d.message_id = i.message_id" \
	" LEFT JOIN payload p ON p.from_party = i.from_party" \
	" AND p.message_id = i.message_id" \
	" WHERE i.message_id = ?1 AND (?2 IS NULL OR i.from_party = ?2)" \
	" ORDER BY i.from_party, p.part_no"

/* The current row of st into the list (store_found_row). */
static int
store_sqlite_find_row(sqlite3_stmt *st, struct arena *a,
    struct store_found **head, struct store_found **tail, struct err *err)
{
	const char *cols[STORE_FOUND_NCOLS];
	int i;

	for (i = 0; i < STORE_FOUND_NCOLS; i++)
		cols[i] = (const char *)sqlite3_column_text(st, i);
	return store_found_row(a, cols, head, tail, err);
}

/* The inbox rows of message_id (store.h "store_find"): 1, 0 or -1. */
int
store_sqlite_find(struct store *base, const char *message_id,
    const char *from_party, struct arena *a, struct store_found **ret,
    struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	struct store_found *head = NULL, *tail = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -1, r;

	if (sqlite3_prepare_v2(s->db, STORE_SQF_FIND, -1, &st, NULL) !=
	    SQLITE_OK ||
	    store_sqlite_bind_text(st, 1, message_id) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, from_party) != SQLITE_OK) {
		(void)store_sqlite_fail(s, "look up message", err);
		goto out;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		if (store_sqlite_find_row(st, a, &head, &tail, err) == -1)
			goto out;
	if (r != SQLITE_DONE) {
		(void)store_sqlite_fail(s, "look up message", err);
		goto out;
	}
	*ret = head;
	rc = head != NULL;
out:
	(void)sqlite3_finalize(st);
	return rc;
}
