/*
 * store_pg_int — what store_pg.c (connection, migrations) shares with
 * store_pg_accept.c (accept), store_pg_queue.c (claim, finish, purge,
 * stats, wait, notify) and store_pg_answer.c (as4gw_accept()'s answer).
 * Not for callers of the store.
 */
#ifndef AS4GW_STORE_PG_INT_H
#define AS4GW_STORE_PG_INT_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "store.h"
#include "../util/buf.h"

/* The channel a NEW accept NOTIFYs and store_wait LISTENs on. */
#define STORE_PG_CHANNEL "as4gw_inbox"

/* One named statement, prepared once per connection (again after a reset). */
struct store_pg_stmt {
	const char *name;  /* prepared statement name */
	const char *what;  /* for "could not <what>: <server message>" */
	int n_params;
	const char *sql;
	const Oid *types;  /* n_params parameter types; NULL: the server infers */
};

/* Parameters of one statement call: text unless a format says binary. */
#define STORE_PG_MAX_PARAMS 22
struct store_pg_params {
	const char *values[STORE_PG_MAX_PARAMS];
	int lengths[STORE_PG_MAX_PARAMS];
	int formats[STORE_PG_MAX_PARAMS];
};

struct store_pg {
	struct store base;
	PGconn *conn;
	int prepared;   /* every statement (accept's and the queue's) exists */
	int listening;  /* LISTEN as4gw_inbox done on this connection */
	int pending;    /* a NOTIFY was sent, its answer not read yet */
	int stale;      /* the server is no primary any more: reconnect */
	int timed_out;  /* a wait passed timeout_ms: stale, not retried */
	int timeout_ms; /* <storeTimeoutSeconds>: per wait for the server */
	char state[6];  /* SQLSTATE of store_pg_fail's last failure, or "" */
};

/*
 * The deadline on waits for the server (store_pg_wait.c).  store_pg_await:
 * until a result can be read without blocking; 0, or -1 when the server
 * said nothing for timeout_ms — then store_pg_expire() has shut the socket
 * down (libpq's next call fails at once) and marked the connection stale
 * and timed out.  store_pg_result: PQgetResult after it.  store_pg_finish:
 * PQexec's end for a command sent with PQsend* (sent: what that returned).
 * store_pg_query: PQexec.
 */
void store_pg_expire(struct store_pg *s);
int store_pg_await(struct store_pg *s);
PGresult *store_pg_result(struct store_pg *s);
PGresult *store_pg_finish(struct store_pg *s, int sent);
PGresult *store_pg_query(struct store_pg *s, const char *sql);


/* The queue's statements (store_pg_queue.c), prepared with accept's
 * (store_pg_accept.c). */
extern const struct store_pg_stmt store_pg_queue_stmts[];
extern const size_t store_pg_queue_count;
extern const struct store_pg_stmt store_pg_accept_stmts[];
extern const size_t store_pg_accept_count;

/* The accept transaction of the ops table (store.h; store_pg_accept.c). */
int store_pg_accept(struct store *base, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err);

/* Record ERR_STORE with the server's (or libpq's) message, and in
 * s->state its SQLSTATE ("" when it gave none). */
int store_pg_fail(struct store_pg *s, const char *what, const PGresult *res,
    struct err *err);

/* Run SQL text (one or more statements) expecting success; any result
 * rows are discarded.  0, or -1 with err set (store_pg_fail). */
int store_pg_cmd(struct store_pg *s, const char *sql, const char *what,
    struct err *err);

/* COMMIT the open transaction: 0, or -1 with err set (a COMMIT the server
 * turned into a ROLLBACK is an error too). */
int store_pg_commit(struct store_pg *s, struct err *err);

/* End whatever transaction is open, if the connection is still there. */
void store_pg_abort(struct store_pg *s);

/*
 * Read the answer of a NOTIFY sent without waiting (store_pg_accept), so the
 * connection is idle again; its errors are ignored.  Every use of the
 * connection starts with it (store_pg_ensure does), timeout_ms -1: within
 * the store's timeout (store_pg_await); store_close waits timeout_ms at
 * most, then leaves it unread.
 */
void store_pg_settle(struct store_pg *s, int timeout_ms);

/*
 * Is the connection of no more use: lost, or res (may be NULL) failed with
 * a SQLSTATE saying the server is no writable primary any more (read-only:
 * a demoted or standby server; shutting down).  Marks it stale so the next
 * store_pg_ensure() reconnects, which with a multi-host DSN and
 * target_session_attrs=read-write finds the new primary.
 */
int store_pg_gone(struct store_pg *s, const PGresult *res);

/* Settle, then reconnect if the connection was lost (statements and LISTEN
 * go with it). */
int store_pg_ensure(struct store_pg *s, struct err *err);

/* Prepare every named statement once per connection. */
int store_pg_prepare(struct store_pg *s, struct err *err);

/*
 * Reconnect if needed, prepare, run sql; when it fails on a connection that
 * turns out dead (a stale socket after a server restart), reconnect and run
 * it once more.
 */
int store_pg_begin(struct store_pg *s, const char *sql, const char *what,
    struct err *err);

/*
 * Execute prepared statement st; the result (caller clears it) or NULL with
 * err set.  binary_result asks for every column as raw bytes.
 */
PGresult *store_pg_exec(struct store_pg *s, const struct store_pg_stmt *st,
    const struct store_pg_params *p, int binary_result, struct err *err);

/*
 * A statement that is its own transaction: reconnect and prepare if needed,
 * store_pg_exec(); when it fails on a connection that turns out dead, once
 * more on a fresh connection.  Only for statements that may run twice (see
 * each caller).  err may be NULL.
 */
PGresult *store_pg_call(struct store_pg *s, const struct store_pg_stmt *st,
    const struct store_pg_params *p, int binary_result, struct err *err);

/* Binary wire helpers (store_pg_wire.c) for arrays and COPY rows: v as 4 bytes
 * in network order at p / appended to b; a field (int32 length, -1 for
 * NULL data, then the bytes) and a string field (NULL stays NULL).  The
 * appending ones return 0, or -1 when out of memory. */
void store_pg_be32(unsigned char *p, uint32_t v);
int store_pg_put32(struct buf *b, uint32_t v);
int store_pg_field(struct buf *b, const void *data, size_t len);
int store_pg_str(struct buf *b, const char *s);

/*
 * Insert the payload rows of m into the open transaction with a binary
 * COPY, streamed (store_pg_copy.c), then, unless they are in already
 * (chunks 0: store_pg_early), the chunk rows of its parts longer than
 * STORE_CHUNK_THRESHOLD (store_pg_chunk_copy); 0, or -1 with ERR_STORE
 * (the transaction must then be rolled back).
 */
int store_pg_copy_parts(struct store_pg *s, const struct store_message *m,
    int chunks, struct err *err);

/*
 * Chunks ahead of the decision (store_pg_early.c): for a new message with
 * chunked parts whose content hashes are still pending, open the accept
 * transaction and COPY its chunk rows while the hashes are computed.
 * 1: they are in, the transaction is open (its payload rows and the
 * decision follow: store_pg.c); 0: not taken, or given up because another
 * request holds or stored the same MessageId (no transaction open: accept
 * as usual); -1: error, err set, nothing open.
 */
int store_pg_early(struct store_pg *s, const struct store_message *m,
    struct err *err);

/* Binary COPY framing (PostgreSQL docs, COPY "Binary Format"): the
 * header (signature, flags 0, no extension) and the trailer. */
#define STORE_PG_COPY_HEAD "PGCOPY\n\377\r\n\0" "\0\0\0\0" "\0\0\0\0"
#define STORE_PG_COPY_END "\377\377"

/* Send b's bytes as one CopyData message and empty b; 0 or -1. */
int store_pg_copy_send(struct store_pg *s, struct buf *b);

/* End a COPY (aborted unless ok) and read its result; 0, or -1 ERR_STORE. */
int store_pg_copy_end(struct store_pg *s, int ok, struct err *err);

/*
 * Payload bytes per payload_chunk row on PostgreSQL (issue 14; migration
 * 010_payload_chunk_plain.sql): a chunk row is one heap tuple stored
 * whole on one 8 KiB page, content inline (STORAGE PLAIN), nothing in
 * TOAST.  TOAST would cut a 1 MiB chunk into some 525 rows of its own
 * plus their index entries: server CPU that made PostgreSQL the
 * bottleneck of a large accept (2-3x the CPU of 8000-byte rows in place
 * for the same WAL; README "Performance").  The page arithmetic
 * (PostgreSQL's bufpage.h / htup_details.h, BLCKSZ 8192, fillfactor 100):
 *   8192 - 24 page header - 4 item pointer = 8164, MAXALIGNed down:
 *     MaxHeapTupleSize 8160 (also 010's toast_tuple_target);
 *   - 24 tuple header (23 bytes MAXALIGNed; no null bitmap: no NULLs)
 *   = 8136 bytes of columns (STORE_PG_CHUNK_ROW_MAX): the two text keys
 *   (a 1-byte length header each below 127 bytes, else 4 and up to 3 of
 *   alignment), up to 3 bytes of alignment, part_no and chunk_no (4 + 4),
 *   content's 4-byte header, then the chunk.
 * 8000 + 4 + 8 + 3 leaves 121 bytes for the keys: a 59-byte ebCore party
 * with a 60-byte MessageId.  Longer keys take their excess from the chunk
 * (store_pg_chunk_len), so that every row still fits its page; a reader
 * takes chunks of any size (rows of older versions hold 1 MiB).
 */
#define STORE_PG_CHUNK_BYTES ((size_t)8000)
#define STORE_PG_CHUNK_ROW_MAX ((size_t)8136)
/* the shortest chunk store_pg_chunk_len gives (keys of several KiB; their
 * rows then keep the keys out of line, 010's toast_tuple_target) */
#define STORE_PG_CHUNK_MIN ((size_t)1024)

/* What store_payload_read gives its reader per call from chunks this small:
 * they are gathered up to this many bytes (store_pg_chunk_gather). */
#define STORE_PG_READ_BATCH ((size_t)256 * 1024)

/* The chunk length of a payload of the message (from_party, message_id):
 * STORE_PG_CHUNK_BYTES, or less so that a row with these keys fits. */
size_t store_pg_chunk_len(const char *from_party, const char *message_id);

/*
 * The payload_chunk rows of m's parts longer than STORE_CHUNK_THRESHOLD
 * (none: nothing sent), one binary COPY, the bytes read from the parts in
 * order with spool_done() behind each chunk (store_pg_chunk.c).  0, or -1
 * with ERR_STORE (roll back).
 */
int store_pg_chunk_copy(struct store_pg *s, const struct store_message *m,
    struct err *err);

/* store_payload_read (store_pg_chunk.c; store.h). */
int store_pg_payload_read(struct store *base,
    const struct store_payload_key *k, store_read_fn fn, void *ctx,
    struct err *err);

/* An n-byte network-order integer of a binary result column
 * (store_pg_wire.c). */
uint64_t store_pg_get(const char *p, int n);

/*
 * as4gw_accept()'s answer (binary: int4 outcome, bytea receipt, int8
 * duplicates, bytea field_hashes, text business_duplicate_of) into ret,
 * copies in a (store_pg_answer.c).  0, or -1: ERR_STORE for an answer
 * that cannot be (absent after a full call: the conflicting row was purged
 * meanwhile, the partner retries), ERR_INTERNAL when a is exhausted.
 */
int store_pg_outcome(const PGresult *res, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err);

/* The ops of store_pg_queue.c (see store.h for each). */
int store_pg_queue_claim(struct store *base, int64_t now_ms,
    int64_t stale_ms, struct arena *a, struct store_delivery *ret,
    struct err *err);
int store_pg_queue_finish(struct store *base, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err);
int store_pg_queue_purge(struct store *base, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err);
int store_pg_queue_stats(struct store *base, struct store_stats *ret,
    struct err *err);
int store_pg_queue_wait(struct store *base, int timeout_ms, struct err *err);

/* store_find (store_pg_find.c; see store.h). */
int store_pg_find(struct store *base, const char *message_id,
    const char *from_party, struct arena *a, struct store_found **ret,
    struct err *err);

/* After a NEW commit: NOTIFY the channel with the MessageId, without
 * waiting for the answer (store_pg_settle reads it). */
void store_pg_queue_notify(struct store_pg *s, const char *message_id);

/* The purge log (store_pg_purgelog.c; store.h "store_purge_log"). */
int store_pg_purge_log(struct store *base, const struct store_purge_run *r,
    struct err *err);
int store_pg_purge_totals(struct store *base, struct store_purge_totals *ret,
    struct err *err);

#endif
