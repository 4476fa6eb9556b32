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

#endif
