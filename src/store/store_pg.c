/*
 * store_pg — the PostgreSQL backend on libpq.  One PGconn per struct store,
 * named statements prepared once per connection (again after a reconnect),
 * bytea sent and read in binary, READ COMMITTED transactions.  The inbox
 * primary key is the only coordination several gateways need: a concurrent
 * INSERT of the same MessageId waits for the first to commit, then conflicts.
 *
 * accept is one round trip: one call of as4gw_accept() (migration 003),
 * with the payloads as binary arrays, in a single-statement transaction.
 * Messages with large payloads, and fault builds with a store.* point armed,
 * run the same function inside BEGIN ... COMMIT instead (the large payloads
 * streamed with COPY, those over STORE_CHUNK_THRESHOLD as payload_chunk
 * rows: store_pg_chunk.c).  The NOTIFY of a new message follows in a transaction
 * of its own whose answer is read at the connection's next use.
 *
 * A failure never leaves a transaction open (ROLLBACK, or the connection is
 * gone).  A lost connection is ERR_STORE; the next call tries PQreset first.
 * The delivery queue is in store_pg_queue.c.
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
#include "store_sql.h"
#include "../util/buf.h"
#include "../util/fault.h"

/* Advisory lock key held while migrating ("as4g" in ASCII). */
#define STORE_PG_MIGRATE_LOCK "1634940007"

/* A DSN may override these; client_encoding is forced after it. */
#define STORE_PG_APP_NAME "as4gw"
/* connect_timeout (s): the store's timeout, at most this */
#define STORE_PG_CONNECT_TIMEOUT_MAX 10
/* TCP keepalives (libpq "keepalives_*"): a primary cut off the network is
 * noticed after idle + interval * count seconds, not the kernel's 2 hours
 * (the request gets 503, the next call reconnects to the new primary). */
#define STORE_PG_KEEPALIVES_IDLE "10"
#define STORE_PG_KEEPALIVES_INTERVAL "5"
#define STORE_PG_KEEPALIVES_COUNT "3"
/* How long store_close waits for the answer of a NOTIFY sent. */
#define STORE_PG_CLOSE_WAIT_MS 1000

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

static const struct store_pg_stmt store_pg_stmts[STORE_PG_COUNT] = {
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

/* libpq prints NOTICEs to stderr by default; library code stays quiet. */
static void
store_pg_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Record ERR_STORE with the server's (or libpq's) message, newline trimmed. */
int
store_pg_fail(struct store_pg *s, const char *what, const PGresult *res,
    struct err *err)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	const char *state = res != NULL ?
	    PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	size_t n;

	(void)snprintf(s->state, sizeof(s->state), "%s",
	    state != NULL ? state : "");
	(void)store_pg_gone(s, res);
	if (s->timed_out)
		return err_set(err, ERR_STORE, NULL, "could not %s: no answer "
		    "from postgresql within %d ms (storeTimeoutSeconds)", what,
		    s->timeout_ms);
	if (*msg == '\0')
		msg = PQerrorMessage(s->conn);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return err_set(err, ERR_STORE, NULL, "could not %s: %.*s", what,
	    (int)n, msg);
}

/* SQLSTATEs after which this connection cannot write again (PostgreSQL
 * "Appendix A. Error Codes"): 25006 read_only_sql_transaction (a standby or
 * a read-only server), class 57P operator intervention, class 08. */
static int
store_pg_stale_state(const char *state)
{
	return state != NULL && (strcmp(state, "25006") == 0 ||
	    strncmp(state, "57P", 3) == 0 || strncmp(state, "08", 2) == 0);
}

/* The connection is lost or stale (store_pg_int.h). */
int
store_pg_gone(struct store_pg *s, const PGresult *res)
{
	if (res != NULL && store_pg_stale_state(PQresultErrorField(res,
	    PG_DIAG_SQLSTATE)))
		s->stale = 1;
	return s->stale || PQstatus(s->conn) != CONNECTION_OK;
}

/* Settle; reconnect if the connection was lost or is stale (prepared
 * statements and LISTEN go with it). */
int
store_pg_ensure(struct store_pg *s, struct err *err)
{
	store_pg_settle(s, -1);
	if (!store_pg_gone(s, NULL))
		return 0;
	s->stale = 0;
	s->timed_out = 0;
	s->prepared = 0;
	s->listening = 0;
	PQreset(s->conn);
	if (PQstatus(s->conn) != CONNECTION_OK)
		return store_pg_fail(s, "reconnect to postgresql", NULL, err);
	return 0;
}

/* Run SQL text expecting success (store_pg_int.h). */
int
store_pg_cmd(struct store_pg *s, const char *sql, const char *what,
    struct err *err)
{
	PGresult *res = store_pg_query(s, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = store_pg_fail(s, what, res, err);
	PQclear(res);
	return rc;
}

/*
 * Open a unit of work: reconnect if needed, prepare, run its first command.
 * A connection that did not see the server restart still looks CONNECTION_OK
 * until it is used; when the first command fails and the connection turns
 * out to be dead, nothing was sent inside a transaction, so reconnect and try
 * once more instead of failing the request for a stale socket.
 */
int
store_pg_begin(struct store_pg *s, const char *sql, const char *what,
    struct err *err)
{
	struct err first = {0};

	if (store_pg_ensure(s, &first) == 0 && store_pg_prepare(s, &first) == 0 &&
	    store_pg_cmd(s, sql, what, &first) == 0)
		return 0;
	if (!store_pg_gone(s, NULL) || s->timed_out) {
		*err = first;
		return -1;
	}
	if (store_pg_ensure(s, err) == -1 || store_pg_prepare(s, err) == -1)
		return -1;
	return store_pg_cmd(s, sql, what, err);
}

/*
 * COMMIT, and make sure it was one: COMMIT of a failed transaction answers
 * "ROLLBACK" without an error.
 */
static int
store_pg_commit(struct store_pg *s, struct err *err)
{
	PGresult *res = store_pg_query(s, "COMMIT");
	int rc = -1;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		(void)store_pg_fail(s, "commit", res, err);
	else if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		(void)err_set(err, ERR_STORE, NULL,
		    "could not commit: transaction was rolled back");
	else
		rc = 0;
	PQclear(res);
	return rc;
}

/* End whatever transaction is open (store_pg_int.h). */
void
store_pg_abort(struct store_pg *s)
{
	PGTransactionStatusType ts = PQtransactionStatus(s->conn);

	if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)
		PQclear(store_pg_query(s, "ROLLBACK"));
}

/* Prepare n statements of one table; -1 at the first failure. */
static int
store_pg_prepare_table(struct store_pg *s, const struct store_pg_stmt *t,
    size_t n, struct err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		PGresult *res = store_pg_finish(s, PQsendPrepare(s->conn,
		    t[i].name, t[i].sql, t[i].n_params, t[i].types));
		int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

		if (!ok)
			(void)store_pg_fail(s, "prepare statement", res, err);
		PQclear(res);
		if (!ok)
			return -1;
	}
	return 0;
}

/*
 * Prepare the named statements (accept's and the queue's) once per
 * connection; fails if not migrated.
 */
int
store_pg_prepare(struct store_pg *s, struct err *err)
{
	if (s->prepared)
		return 0;
	if (store_pg_prepare_table(s, store_pg_stmts, STORE_PG_COUNT,
	    err) == -1 || store_pg_prepare_table(s, store_pg_queue_stmts,
	    store_pg_queue_count, err) == -1) {
		/* so the next attempt can prepare them all again */
		PQclear(store_pg_query(s, "DEALLOCATE ALL"));
		return -1;
	}
	s->prepared = 1;
	return 0;
}

/*
 * Execute a prepared statement; the result (caller clears it) or NULL with
 * err set.  binary_result asks for bytea columns as raw bytes.
 */
PGresult *
store_pg_exec(struct store_pg *s, const struct store_pg_stmt *stmt,
    const struct store_pg_params *p, int binary_result, struct err *err)
{
	PGresult *res;
	ExecStatusType st;

	res = store_pg_finish(s, PQsendQueryPrepared(s->conn, stmt->name,
	    stmt->n_params, p->values, p->lengths, p->formats, binary_result));
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		(void)store_pg_fail(s, stmt->what, res, err);
		PQclear(res);
		res = NULL;
	}
	return res;
}

/*
 * A statement that is its own transaction (store_pg_int.h): as
 * store_pg_begin(), a connection found dead when the statement fails is
 * replaced and the statement run once more.
 */
PGresult *
store_pg_call(struct store_pg *s, const struct store_pg_stmt *st,
    const struct store_pg_params *p, int binary_result, struct err *err)
{
	struct err first = { 0 };
	PGresult *res = NULL;

	if (store_pg_ensure(s, &first) == 0 &&
	    store_pg_prepare(s, &first) == 0 &&
	    (res = store_pg_exec(s, st, p, binary_result, &first)) != NULL)
		return res;
	if (!store_pg_gone(s, NULL) || s->timed_out) {
		if (err != NULL)
			*err = first;
		return NULL;
	}
	if (store_pg_ensure(s, err) == -1 || store_pg_prepare(s, err) == -1)
		return NULL;
	return store_pg_exec(s, st, p, binary_result, err);
}

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
	PGresult *res = store_pg_call(s, &store_pg_stmts[STORE_PG_ACCEPT], p, 1,
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
	res = store_pg_exec(s, &store_pg_stmts[STORE_PG_ACCEPT], &c->p, 1, err);
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

/* The accept transaction (store.h); never leaves a transaction open. */
static int
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
	if ((c.early = early) != 0)
		rc = store_pg_accept_txn(s, m, &c, a, ret, err);
	c.early = 0;
	if (!early || rc == 1)
		rc = c.streamed || fault_armed("store.after-insert") ||
		    fault_armed("store.before-commit") ?
		    store_pg_accept_txn(s, m, &c, a, ret, err) :
		    store_pg_accept_one(s, m, &c.p, a, ret, err);
	store_pg_accept_free(&c);
	return rc;
}

/* Whether migration name is recorded: 1 yes, 0 no, -1 error. */
static int
store_pg_applied(struct store_pg *s, const char *name, struct err *err)
{
	const char *values[1] = { name };
	PGresult *res;
	int rc = -1;

	res = store_pg_finish(s, PQsendQueryParams(s->conn,
	    "SELECT 1 FROM schema_migrations WHERE name = $1", 1, NULL, values,
	    NULL, NULL, 0));
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		rc = PQntuples(res) > 0 ? 1 : 0;
	else
		(void)store_pg_fail(s, "read schema_migrations", res, err);
	PQclear(res);
	return rc;
}

/* Note migration name as applied now. */
static int
store_pg_record(struct store_pg *s, const char *name, struct err *err)
{
	const char *values[1] = { name };
	PGresult *res;
	int rc = 0;

	res = store_pg_finish(s, PQsendQueryParams(s->conn,
	    "INSERT INTO schema_migrations (name) VALUES ($1)", 1, NULL, values,
	    NULL, NULL, 0));
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = store_pg_fail(s, "record migration", res, err);
	PQclear(res);
	return rc;
}

/*
 * Apply one migration if it is not recorded yet, in its own transaction
 * holding a transaction-scoped advisory lock: a second gateway migrating at
 * the same time waits, then finds the migration recorded.
 */
static int
store_pg_migrate_one(struct store_pg *s, const struct store_sql *f,
    struct err *err)
{
	int rc = -1, applied;

	if (store_pg_cmd(s, "BEGIN", "begin migration", err) == -1 ||
	    store_pg_cmd(s, "SELECT pg_advisory_xact_lock("
	    STORE_PG_MIGRATE_LOCK ")", "take the migration lock", err) == -1 ||
	    store_pg_cmd(s, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    " name text NOT NULL PRIMARY KEY,"
	    " applied_at timestamptz NOT NULL DEFAULT now())",
	    "create schema_migrations", err) == -1)
		goto out;
	applied = store_pg_applied(s, f->name, err);
	if (applied == -1)
		goto out;
	if (applied == 0 &&
	    (store_pg_cmd(s, f->text, "apply migration", err) == -1 ||
	    store_pg_record(s, f->name, err) == -1))
		goto out;
	rc = store_pg_commit(s, err);
	if (rc == 0 && applied == 0)
		s->base.migrated++;
out:
	if (rc == -1)
		err_detail(err, "migration %s", f->name);
	store_pg_abort(s);
	return rc;
}

/* Apply the pending postgresql/ migrations in name order. */
static int
store_pg_migrate(struct store *base, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	const struct store_sql *f;
	size_t pos = 0;

	if (store_pg_ensure(s, err) == -1)
		return -1;
	while ((f = store_migration_next("postgresql", &pos)) != NULL)
		if (store_pg_migrate_one(s, f, err) == -1)
			return -1;
	return 0;
}

/* Liveness: reconnect if the connection was lost, then SELECT 1. */
static int
store_pg_ping(struct store *base, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;

	return store_pg_begin(s, "SELECT 1", "reach postgresql", err);
}

/* The connection is gone; store_pg_ensure() replaces it on the next call. */
static int
store_pg_lost(struct store *base)
{
	struct store_pg *s = (struct store_pg *)base;

	return store_pg_gone(s, NULL);
}

/*
 * Close the connection once a NOTIFY sent has been answered, but wait for
 * that at most STORE_PG_CLOSE_WAIT_MS (a shutdown must not hang on a lost
 * network; the server runs what it received before the close anyway).
 */
static void
store_pg_close(struct store *base)
{
	struct store_pg *s = (struct store_pg *)base;

	if (s->conn != NULL)
		store_pg_settle(s, STORE_PG_CLOSE_WAIT_MS);
	PQfinish(s->conn);
	free(s);
}

static const struct store_ops store_pg_ops = {
	.name = "postgresql",
	.migrate = store_pg_migrate,
	.ping = store_pg_ping,
	.lost = store_pg_lost,
	.accept = store_pg_accept,
	.close = store_pg_close,
	.claim = store_pg_queue_claim,
	.finish = store_pg_queue_finish,
	.find = store_pg_find,
	.purge_log = store_pg_purge_log,
	.purge_totals = store_pg_purge_totals,
	.payload_read = store_pg_payload_read,
	.purge = store_pg_queue_purge,
	.stats = store_pg_queue_stats,
	.wait = store_pg_queue_wait,
};

/*
 * Connect with the whole DSN.  Keywords before "dbname" are defaults the DSN
 * may override; client_encoding after it is forced (texts are UTF-8).  A
 * multi-host DSN (postgresql://h1:p1,h2:p2/db?target_session_attrs=read-write)
 * follows the primary: every reconnect (PQreset) tries the hosts in turn
 * and keeps the first that takes writes.
 */
int
store_pg_open(const char *dsn, int timeout_ms, struct store **ret,
    struct err *err)
{
	char ct[16], ut[16];
	const char *const keys[] = { "application_name", "connect_timeout",
	    "tcp_user_timeout", "keepalives_idle", "keepalives_interval",
	    "keepalives_count", "dbname", "client_encoding", NULL };
	const char *const vals[] = { STORE_PG_APP_NAME, ct, ut,
	    STORE_PG_KEEPALIVES_IDLE, STORE_PG_KEEPALIVES_INTERVAL,
	    STORE_PG_KEEPALIVES_COUNT, dsn, "UTF8", NULL };
	struct store_pg *s;
	int rc = -1;

	if (timeout_ms <= 0)
		timeout_ms = STORE_TIMEOUT_MS;
	/* a connection attempt waits the store's timeout too (libpq: whole
	 * seconds, at least 2), per host of a multi-host DSN */
	(void)snprintf(ct, sizeof(ct), "%d", timeout_ms / 1000 <
	    STORE_PG_CONNECT_TIMEOUT_MAX ? (timeout_ms + 999) / 1000 :
	    STORE_PG_CONNECT_TIMEOUT_MAX);
	(void)snprintf(ut, sizeof(ut), "%d", timeout_ms);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	s->base.ops = &store_pg_ops;
	s->timeout_ms = timeout_ms;
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn == NULL) {
		(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	(void)PQsetNoticeProcessor(s->conn, store_pg_notice, NULL);
	/* one line per error: no "PL/pgSQL function ..." context lines */
	(void)PQsetErrorContextVisibility(s->conn, PQSHOW_CONTEXT_NEVER);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		(void)store_pg_fail(s, "connect to postgresql", NULL, err);
		goto out;
	}
	*ret = &s->base;
	rc = 0;
out:
	if (rc == -1)
		store_pg_close(&s->base);
	return rc;
}
