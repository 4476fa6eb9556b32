/*
 * store_pg_accept — the accept of the PostgreSQL backend (store_pg.c has
 * the connection, the migrations and the ops table).  One round trip: one
 * call of as4gw_accept() (migration 003) with the payloads as binary
 * arrays, in a single-statement transaction.  Messages with large payloads,
 * and fault builds with a store.* point armed, run the same function inside
 * BEGIN ... COMMIT instead (the payloads streamed with COPY, those over
 * STORE_CHUNK_THRESHOLD as payload_chunk rows: store_pg_copy.c; a large new
 * message's chunk rows COPYed while its hashes are computed:
 * store_pg_early.c).  A failure never leaves a transaction open.
 */
#include "store.h"

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_pg_int.h"
#include "../util/buf.h"
#include "../util/fault.h"

/* Type OIDs of the accept parameters (PostgreSQL's pg_type.dat; fixed). */
#define STORE_PG_BYTEA 17u
#define STORE_PG_INT8 20u
#define STORE_PG_INT4 23u
#define STORE_PG_TEXT 25u
#define STORE_PG_BYTEA_ARRAY 1001u
#define STORE_PG_INT4_ARRAY 1007u
#define STORE_PG_TEXT_ARRAY 1009u

/*
 * Payload bytes up to which a message goes in the one as4gw_accept() call.
 * Its bytea[] parameter is a copy of the payloads (the binary array is built
 * in memory, then libpq copies it into its send buffer, which keeps that
 * size for the connection's life).  Larger payloads are streamed with COPY
 * in chunks (store_pg_copy_parts): libpq then holds no copy of them, and
 * three more round trips cost less than moving the bytes.
 */
#define STORE_PG_INLINE_MAX ((size_t)256 * 1024)
enum store_pg_stmt_id { STORE_PG_ACCEPT, STORE_PG_COUNT };

/* The parameters of as4gw_accept(), in order (006_business_key.sql). */
enum store_pg_arg {
	STORE_PG_A_ID, STORE_PG_A_FROM, STORE_PG_A_TO, STORE_PG_A_SERVICE,
	STORE_PG_A_ACTION, STORE_PG_A_CONV, STORE_PG_A_AGREEMENT,
	STORE_PG_A_PMODE, STORE_PG_A_SOURCE, STORE_PG_A_HASH,
	STORE_PG_A_HASH_V1, STORE_PG_A_FIELDS, STORE_PG_A_RECEIPT,
	STORE_PG_A_RECEIVED, STORE_PG_A_PARTITION,
	STORE_PG_A_PART_NO, STORE_PG_A_CID, STORE_PG_A_MIME, STORE_PG_A_PROPS,
	STORE_PG_A_CONTENT, STORE_PG_A_BUSINESS_KEY, STORE_PG_A_BUSINESS_MODE,
	STORE_PG_A_COUNT
};

/* The payload arrays: PART_NO .. CONTENT. */
#define STORE_PG_N_ARRAYS (STORE_PG_A_CONTENT + 1 - STORE_PG_A_PART_NO)

static const Oid store_pg_accept_types[STORE_PG_A_COUNT] = {
	STORE_PG_TEXT, STORE_PG_TEXT, STORE_PG_TEXT, STORE_PG_TEXT,
	STORE_PG_TEXT, STORE_PG_TEXT, STORE_PG_TEXT, STORE_PG_TEXT,
	STORE_PG_TEXT, STORE_PG_BYTEA, STORE_PG_BYTEA, STORE_PG_BYTEA,
	STORE_PG_BYTEA, STORE_PG_INT8,
	STORE_PG_TEXT, STORE_PG_INT4_ARRAY, STORE_PG_TEXT_ARRAY,
	STORE_PG_TEXT_ARRAY, STORE_PG_TEXT_ARRAY, STORE_PG_BYTEA_ARRAY,
	STORE_PG_TEXT, STORE_PG_INT4,
};

/* Element types of the payload arrays, in parameter order. */
static const Oid store_pg_elem_types[STORE_PG_N_ARRAYS] = {
	STORE_PG_INT4, STORE_PG_TEXT, STORE_PG_TEXT, STORE_PG_TEXT,
	STORE_PG_BYTEA,
};

const struct store_pg_stmt store_pg_accept_stmts[STORE_PG_COUNT] = {
	[STORE_PG_ACCEPT] = { "as4gw_accept", "store message",
	    STORE_PG_A_COUNT,
	    "SELECT outcome, receipt, duplicates, field_hashes,"
	    " business_duplicate_of"
	    " FROM as4gw_accept($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
	    " $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)",
	    store_pg_accept_types },
};

/* One as4gw_accept() call: its parameters and the buffers behind them. */
struct store_pg_accept_call {
	struct store_pg_params p;
	char ms[24];
	struct buf arr[STORE_PG_N_ARRAYS];
	int streamed;  /* the payloads go by COPY after a NEW, not in arr */
	int early;     /* its chunk rows are in already (store_pg_early) */
};

/*
 * Start the binary form of a one-dimensional array of n elements of type
 * elem, as PostgreSQL's array_recv reads it: dimensions (0 when empty),
 * has-nulls flag (set by store_pg_elem), element type, then the length and
 * lower bound (1) of the dimension.  The elements follow as fields.
 */
static int
store_pg_array(struct buf *b, Oid elem, size_t n)
{
	if (store_pg_put32(b, n > 0) == -1 || store_pg_put32(b, 0) == -1 ||
	    store_pg_put32(b, elem) == -1)
		return -1;
	if (n == 0)
		return 0;
	return store_pg_put32(b, (uint32_t)n) == -1 ||
	    store_pg_put32(b, 1) == -1 ? -1 : 0;
}

/* One element of an array begun by store_pg_array(). */
static int
store_pg_elem(struct buf *b, const char *s)
{
	if (s == NULL)
		b->data[7] = 1;  /* the low byte of the has-nulls flag */
	return store_pg_str(b, s);
}

/*
 * Parameter i as bytes (binary); empty is "" so it is not NULL.  -1 when
 * longer than libpq can send (bytea stops at 1 GiB anyway).
 */
static int
store_pg_bytes(struct store_pg_params *p, int i, const void *data, size_t len,
    struct err *err)
{
	if (len > INT_MAX)
		return err_set(err, ERR_STORE, NULL,
		    "could not store %zu bytes: too large for postgresql", len);
	p->values[i] = len > 0 ? (const char *)data : "";
	p->lengths[i] = (int)len;
	p->formats[i] = 1;
	return 0;
}

/*
 * The payload arrays of the call, one element per part (all empty when the
 * parts are streamed instead).  This is where the payload bytes are copied
 * once, into the bytea[] parameter.
 */
static int
store_pg_accept_arrays(struct store_pg_accept_call *c,
    const struct store_message *m, struct err *err)
{
	struct buf *arr = c->arr;
	size_t n = c->streamed ? 0 : m->n_parts, i, k;
	int rc = 0;

	for (k = 0; rc == 0 && k < STORE_PG_N_ARRAYS; k++)
		rc = store_pg_array(&arr[k], store_pg_elem_types[k], n);
	for (i = 0; rc == 0 && i < n; i++) {
		const struct store_part *pt = &m->parts[i];
		unsigned char no[4];

		store_pg_be32(no, (uint32_t)pt->part_no);
		if (store_pg_field(&arr[0], no, sizeof(no)) == -1 ||
		    store_pg_elem(&arr[1], pt->content_id) == -1 ||
		    store_pg_elem(&arr[2], pt->mime_type) == -1 ||
		    store_pg_elem(&arr[3], pt->properties != NULL ?
		    pt->properties : "{}") == -1 ||
		    store_pg_field(&arr[4], pt->len > 0 ? pt->data :
		    (const unsigned char *)"", pt->len) == -1)
			rc = -1;
	}
	if (rc == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "out of memory building the accept call");
	for (k = 0; rc == 0 && k < STORE_PG_N_ARRAYS; k++)
		rc = store_pg_bytes(&c->p, STORE_PG_A_PART_NO + (int)k,
		    arr[k].data, arr[k].len, err);
	return rc;
}

/*
 * Fill the as4gw_accept() parameters for m and decide whether its payloads
 * are streamed (more than STORE_PG_INLINE_MAX bytes).  Frees with
 * store_pg_accept_free() whatever it returns.
 */
static int
store_pg_accept_init(struct store_pg_accept_call *c,
    const struct store_message *m, struct err *err)
{
	const char *const text[] = { m->message_id, m->from_party, m->to_party,
	    m->service, m->action, m->conversation_id, m->agreement_ref,
	    m->pmode_id, m->source };
	size_t total = 0, i;

	memset(c, 0, sizeof(*c));
	/* no part above STORE_CHUNK_THRESHOLD goes whole (chunks do), so
	 * every content field's length fits a COPY field's int32 */
	_Static_assert(STORE_CHUNK_THRESHOLD <= INT_MAX, "COPY field length");
	for (i = 0; i < m->n_parts && total <= STORE_PG_INLINE_MAX; i++)
		total += m->parts[i].len;
	c->streamed = total > STORE_PG_INLINE_MAX;
	for (i = 0; i < sizeof(text) / sizeof(text[0]); i++)
		c->p.values[STORE_PG_A_ID + i] = text[i];
	(void)snprintf(c->ms, sizeof(c->ms), "%" PRId64, m->received_at_ms);
	c->p.values[STORE_PG_A_RECEIVED] = c->ms;
	c->p.values[STORE_PG_A_PARTITION] = m->partition_key;
	c->p.values[STORE_PG_A_BUSINESS_KEY] = m->business_key;
	c->p.values[STORE_PG_A_BUSINESS_MODE] =
	    m->business_mode == STORE_BUSINESS_REFUSE ? "2" : "1";
	/* a probe sends the receipt as NULL */
	if (store_pg_bytes(&c->p, STORE_PG_A_HASH, m->content_hash,
	    STORE_HASH_LEN, err) == -1 ||
	    store_pg_bytes(&c->p, STORE_PG_A_HASH_V1, m->content_hash_v1,
	    STORE_HASH_LEN, err) == -1 || (m->field_hashes != NULL &&
	    store_pg_bytes(&c->p, STORE_PG_A_FIELDS, m->field_hashes,
	    m->field_hashes_len, err) == -1) || (m->receipt != NULL &&
	    store_pg_bytes(&c->p, STORE_PG_A_RECEIPT, m->receipt,
	    m->receipt_len, err) == -1))
		return -1;
	return store_pg_accept_arrays(c, m, err);
}

/* Free the buffers of a call (after any store_pg_accept_init, failed too). */
static void
store_pg_accept_free(struct store_pg_accept_call *c)
{
	size_t k;

	for (k = 0; k < STORE_PG_N_ARRAYS; k++)
		buf_free(&c->arr[k]);
}

/*
 * accept as one statement, its own transaction: one round trip.  On a
 * connection found dead (store_pg_call) the call is made once more on a
 * fresh one.  That is right even when the first call committed and only
 * its answer was lost: the second finds the row with the same hash and
 * answers DUPLICATE with the stored receipt, the very bytes the first
 * stored (the caller's), so the partner gets the Receipt it would have got;
 * only the counter says one duplicate more and no NOTIFY is sent (the
 * deliverers' poll finds the row).  A probe writes nothing, a DUPLICATE
 * only counts, a DRIFT changes nothing.
 */
static int
store_pg_accept_one(struct store_pg *s, const struct store_message *m,
    const struct store_pg_params *p, struct arena *a,
    struct store_result *ret, struct err *err)
{
	PGresult *res = store_pg_call(s, &store_pg_accept_stmts[STORE_PG_ACCEPT], p, 1,
	    err);
	int rc = -1;

	if (res != NULL)
		rc = store_pg_outcome(res, m, a, ret, err);
	PQclear(res);
	if (rc == 0 && ret->outcome == STORE_NEW)
		store_pg_queue_notify(s, m->message_id);
	return rc;
}

/*
 * accept inside BEGIN ... COMMIT: for streamed payloads (COPY after a NEW)
 * and, in fault builds, so the store.* fault points sit inside the
 * transaction.  Only the BEGIN is retried on a dead connection.  c->early:
 * the transaction is open with m's chunk rows in (store_pg_early); then
 * anything but a NEW ends it and returns 1, and the caller accepts again
 * the usual way (the decision was against a row stored meanwhile; the
 * chunks must not stay, a duplicate's count must).
 */
static int
store_pg_accept_txn(struct store_pg *s, const struct store_message *m,
    const struct store_pg_accept_call *c, struct arena *a,
    struct store_result *ret, struct err *err)
{
	PGresult *res = NULL;
	int early = c->early, rc = -1;

	if (!early && store_pg_begin(s, "BEGIN ISOLATION LEVEL READ COMMITTED",
	    "begin transaction", err) == -1)
		goto out;
	res = store_pg_exec(s, &store_pg_accept_stmts[STORE_PG_ACCEPT], &c->p, 1, err);
	if (res == NULL || store_pg_outcome(res, m, a, ret, err) == -1)
		goto out;
	if (early && ret->outcome != STORE_NEW) {
		rc = 1;
		goto out;
	}
	if (ret->outcome == STORE_NEW) {
		if (c->streamed && store_pg_copy_parts(s, m, !early, err) == -1)
			goto out;
		fault_point("store.after-insert");
	}
	/* Drift, absent, a refused business duplicate changed nothing: end
	 * without writing. */
	if (ret->outcome == STORE_DRIFT || ret->outcome == STORE_ABSENT ||
	    ret->outcome == STORE_BUSINESS_DUP)
		rc = store_pg_cmd(s, "ROLLBACK", "roll back", err);
	else {
		fault_point("store.before-commit");
		rc = store_pg_commit(s, err);
	}
	if (rc == 0 && ret->outcome == STORE_NEW)
		store_pg_queue_notify(s, m->message_id);
out:
	PQclear(res);
	store_pg_abort(s);
	return rc;
}

/* The accept the usual way: one statement, or a transaction where payload
 * rows are COPYed or fault points armed. */
static int
store_pg_accept_usual(struct store_pg *s, const struct store_message *m,
    const struct store_pg_accept_call *c, struct arena *a,
    struct store_result *ret, struct err *err)
{
	return c->streamed || fault_armed("store.after-insert") ||
	    fault_armed("store.before-commit") ?
	    store_pg_accept_txn(s, m, c, a, ret, err) :
	    store_pg_accept_one(s, m, &c->p, a, ret, err);
}

/* The accept transaction (store.h); never leaves a transaction open. */
int
store_pg_accept(struct store *base, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	struct store_pg_accept_call c;
	int early, rc = -1;

	/* a large new message's chunks go in while its hashes are computed;
	 * as4gw_accept() decides from the hashes, before any payload row */
	if ((early = store_pg_early(s, m, err)) == -1)
		return -1;
	memset(&c, 0, sizeof(c));
	if (store_hashes(m, err) == -1 || store_pg_accept_init(&c, m,
	    err) == -1) {
		store_pg_abort(s);
		store_pg_accept_free(&c);
		return -1;
	}
	/* a version 1 hash not computed yet: NULL matches no stored row */
	if (store_v1_lazy(m))
		c.p.values[STORE_PG_A_HASH_V1] = NULL;
	if ((c.early = early) != 0)
		rc = store_pg_accept_txn(s, m, &c, a, ret, err);
	c.early = 0;
	if (!early || rc == 1)
		rc = store_pg_accept_usual(s, m, &c, a, ret, err);
	/* a drift against a row stored before field digests: compare with
	 * version 1, computed now */
	if (rc == 0 && c.p.values[STORE_PG_A_HASH_V1] == NULL &&
	    ret->outcome == STORE_DRIFT && ret->stored_fields == NULL) {
		if (store_hash_v1(m, err) == -1)
			rc = -1;
		else {
			c.p.values[STORE_PG_A_HASH_V1] =
			    (const char *)m->content_hash_v1;
			rc = store_pg_accept_usual(s, m, &c, a, ret, err);
		}
	}
	store_pg_accept_free(&c);
	return rc;
}

const size_t store_pg_accept_count = STORE_PG_COUNT;
