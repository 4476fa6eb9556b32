/*
 * store_int — helpers shared by the store backends (store_sqlite*.c,
 * store_pg*.c), implemented in store.c.  Not for callers of the store.
 */
#ifndef AS4GW_STORE_INT_H
#define AS4GW_STORE_INT_H

#include <stdint.h>

#include "store.h"
#include "../util/buf.h"

/* Times handed to SQL are clamped to [0, 9999-12-31T23:59:59.999Z]. */
#define STORE_MS_MAX INT64_C(253402300799999)

/* ms clamped into [0, STORE_MS_MAX]: PostgreSQL timestamps have a range. */
int64_t store_clamp_ms(int64_t ms);

/*
 * The per-leg cutoffs of a purge as JSON text for the purge query,
 * [["<pmode_id>",<cutoff_ms>],...] (cutoffs clamped), appended to *json
 * (caller frees), and *ret_max = the latest cutoff of all, the default's
 * included: the received_at index range the query scans.  0 ok, -1
 * ERR_INTERNAL (out of memory).
 */
int store_purge_legs(const struct store_purge *p, struct buf *json,
    int64_t *ret_max, struct err *err);

/*
 * The columns of a find query (store_find), in this order, every one as
 * text (NULL for SQL NULL): the inbox row, its delivery row (LEFT JOIN),
 * then one payload (LEFT JOIN: NULL part_no when it has none), then the
 * inbox row's business_key and business_duplicate_of; times in
 * ms since the epoch, the content hash in hex; rows in (from_party,
 * part_no) order.  Both backends' queries yield these, so one decoder
 * reads them.
 */
enum store_found_col {
	STORE_FOUND_C_ID, STORE_FOUND_C_FROM, STORE_FOUND_C_TO,
	STORE_FOUND_C_SERVICE, STORE_FOUND_C_ACTION, STORE_FOUND_C_CONV,
	STORE_FOUND_C_AGREEMENT, STORE_FOUND_C_PMODE, STORE_FOUND_C_SOURCE,
	STORE_FOUND_C_HASH, STORE_FOUND_C_RECEIVED, STORE_FOUND_C_PROCESSED,
	STORE_FOUND_C_DUPLICATES, STORE_FOUND_C_LAST_DUP, STORE_FOUND_C_STATE,
	STORE_FOUND_C_ATTEMPTS, STORE_FOUND_C_CLAIMED, STORE_FOUND_C_NOT_BEFORE,
	STORE_FOUND_C_ERROR, STORE_FOUND_C_ERROR_AT, STORE_FOUND_C_DONE,
	STORE_FOUND_C_PART_NO, STORE_FOUND_C_CID, STORE_FOUND_C_MIME,
	STORE_FOUND_C_SIZE, STORE_FOUND_C_BUSINESS_KEY,
	STORE_FOUND_C_BUSINESS_DUP_OF, STORE_FOUND_NCOLS
};

/*
 * Add one result row (cols[STORE_FOUND_NCOLS]) to the list *head..*tail:
 * a new entry when its from_party differs from *tail's, its payload (if
 * any) appended to that entry.  Arena memory; 0, or -1 (ERR_INTERNAL out
 * of memory, ERR_STORE a row without a party).
 */
int store_found_row(struct arena *a, const char *const *cols,
    struct store_found **head, struct store_found **tail, struct err *err);

/*
 * A payload read back in chunks (store_payload_read, issue 14), the checks
 * both backends run on every chunk row: numbered 0, 1, 2 ... in order,
 * each non-empty and within the payload row's size, and all of them
 * adding up to it, so a gap is ERR_STORE, never short output that looks
 * whole.  Fill fn, ctx and size; total and no start at 0.
 */
struct store_chunk_rd {
	store_read_fn fn;
	void *ctx;
	int64_t size;                 /* the payload row's size */
	int64_t total;                /* bytes given so far */
	int64_t no;                   /* the chunk_no expected next */
};

/*
 * One chunk row, numbered no, n bytes at p: checked, then given to
 * rd->fn.  0 go on; -1 stop: ERR_STORE "chunk N missing or out of order",
 * or the reader stopped (store_chunk_give).
 */
int store_chunk_take(struct store_chunk_rd *rd, int64_t no, const void *p,
    int64_t n, struct err *err);

/* After the last chunk row: 0 when the chunks held rd->size bytes, else
 * -1 ERR_STORE. */
int store_chunk_end(const struct store_chunk_rd *rd, struct err *err);

/*
 * One piece of n bytes at p (NULL when n is 0) to fn: 0, or -1 with err
 * ERR_IO "payload reader stopped" unless fn set err (store_read_fn).
 */
int store_chunk_give(store_read_fn fn, void *ctx, const void *p, size_t n,
    struct err *err);

#endif
