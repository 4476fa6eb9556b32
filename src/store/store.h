/*
 * store — the inbox tables behind one ops struct (OpenSMTPD queue backends):
 * `sqlite:PATH` (embedded default) and `postgresql://...` (libpq, production).
 * One struct store is one connection; use it from one thread at a time.
 * Migrations come from sql/<backend>/NNN_*.sql (embedded at build time) and
 * are applied under a lock: at open (serve) and by `as4gw migrate`.
 */
#ifndef AS4GW_STORE_H
#define AS4GW_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "../util/arena.h"
#include "../util/err.h"

#define STORE_HASH_LEN 32
#define STORE_MESSAGE_ID_MAX 255 /* bytes; the inbox key (ebMS3 5.2.2.1) */
#define STORE_BUSINESS_KEY_MAX 1024 /* bytes of a business key (issue 12) */

/*
 * Business-level duplicates (issue 12 item 4; migration sqlite 005 /
 * postgresql 006): what a new MessageId whose business key (the SBDH
 * InstanceIdentifier, an EDIFACT interchange's sender, recipient and
 * control reference; payload.h) is already held by another row of the
 * same sending party becomes.
 */
enum store_business {
	STORE_BUSINESS_OFF = 0,       /* no key: not checked, not stored */
	STORE_BUSINESS_FLAG,          /* stored, marked with the holder's id */
	STORE_BUSINESS_REFUSE         /* nothing stored: STORE_BUSINESS_DUP */
};

/*
 * Payloads of any size (issue 14 item 2; migration sqlite 007 /
 * postgresql 008).  A final payload longer than STORE_CHUNK_THRESHOLD is
 * stored as rows of table payload_chunk, STORE_CHUNK_BYTES each on SQLite,
 * STORE_PG_CHUNK_BYTES on PostgreSQL (the last may be shorter), in chunk_no
 * order, inside the same accept transaction
 * as its inbox row and Receipt; its payload row then holds its size and no
 * content.  Smaller payloads stay whole in payload.content as before.
 *
 * Why 8 MiB: at or below it nothing changes for the payloads most
 * partners send (one value, every existing reader of payload.content keeps
 * working); above it no single value comes near the ~1 GB limit of a bytea
 * or SQLite value, and the accept reads the (spooled) part in SPOOL_CHUNK
 * pieces with spool_done() behind.  A reader holds one chunk at a time, or
 * one whole value of at most 8 MiB (store_payload_read): a bound per
 * piece, not per message.  8 MiB is also half a SQLite group-commit batch
 * (STORE_SQLITE_BATCH_BYTES), so one inline part never fills a batch
 * alone, and small next to what a request's arena may hold.
 * 1 MiB chunks (SQLite): SPOOL_CHUNK, the reader's piece; big enough that
 * the rows' overhead (key, index entry) is lost in the noise, small enough
 * for SQLite's overflow pages to handle cheaply.  PostgreSQL writes chunks
 * of at most STORE_PG_CHUNK_BYTES (8000: one row on one page, no TOAST;
 * store_pg_int.h); readers of both take chunks of any size.
 */
#define STORE_CHUNK_BYTES ((size_t)1 << 20)
#define STORE_CHUNK_THRESHOLD ((size_t)8 << 20)

struct store_part {
	int part_no;                  /* 0-based order of PartInfo */
	const char *content_id;       /* NULL for a payload in the SOAP Body */
	const char *mime_type;
	const char *properties;       /* PartProperties as JSON object text */
	const unsigned char *data;    /* final bytes (store_accept: read in
	                               * order, spool_done() behind each
	                               * piece); store_claim: NULL for a
	                               * payload longer than
	                               * STORE_CLAIM_INLINE_MAX
	                               * (store_part_streamed) */
	size_t len;
};

/*
 * What a claim (store_claim) carries of a payload in memory: its bytes up
 * to this size.  A longer payload, stored whole or in chunks, comes with
 * data NULL and len its size, and the deliverer streams it with
 * store_payload_read(): the claim holds at most one chunk's worth per
 * part, whatever the message's size.
 */
#define STORE_CLAIM_INLINE_MAX STORE_CHUNK_BYTES

/*
 * A part of a claimed delivery whose bytes are not in memory (longer than
 * STORE_CLAIM_INLINE_MAX): data NULL and len (its size) > 0, which
 * store_accept never takes as input.  Read it with store_payload_read().
 */
static inline int
store_part_streamed(const struct store_part *p)
{
	return p->data == NULL && p->len > 0;
}

/*
 * The inbox key is (from_party, message_id): a MessageId is unique per
 * sending party (ebMS3 Core 5.2.2.1 asks senders for globally unique ids,
 * but one partner must not be able to block or probe another's).
 */
struct store_message {
	const char *message_id;       /* eb:MessageInfo/MessageId, the key */
	const char *from_party;       /* the matched leg's canonical parties (conf.h */
	const char *to_party;         /* struct conf_party name): "type:value" or
	                               * value; from_party with message_id is
	                               * the key */
	const char *service;
	const char *action;
	const char *conversation_id;
	const char *agreement_ref;    /* may be NULL */
	const char *pmode_id;
	const char *source;           /* peer address */
	const char *partition_key;    /* YYYY-MM of received_at */
	unsigned char content_hash[STORE_HASH_LEN];   /* version 2, stored */
	unsigned char content_hash_v1[STORE_HASH_LEN]; /* version 1 of the same
	                               * message: matches only a row stored
	                               * before migration postgresql 004 /
	                               * sqlite 003 (payload.h) */
	const unsigned char *field_hashes; /* per-field digests stored with a
	                               * new row (STORE_HASH_LEN each); may be
	                               * NULL (then the row has none) */
	size_t field_hashes_len;
	const unsigned char *receipt; /* signed Receipt bytes to store and return;
	                               * NULL: a probe (see store_accept) */
	size_t receipt_len;
	int64_t received_at_ms;
	const struct store_part *parts;
	size_t n_parts;
	const char *business_key;     /* NULL: none (business_mode is then
	                               * ignored); at most
	                               * STORE_BUSINESS_KEY_MAX bytes */
	enum store_business business_mode;
	const struct store_pending *pending; /* NULL: the hashes above are
	                               * in; else they are still being
	                               * computed (see struct store_pending) */
};

/*
 * Content hashes computed while the store works (issue 14): wait(ctx)
 * returns once content_hash, content_hash_v1 (unless v1 is set) and the
 * bytes field_hashes points to (its pointer and length are set already)
 * hold the message's hashes: 0, or -1 when hashing failed.  Calling it
 * again gives the same answer at once.  A store calls it (store_hashes)
 * before it reads any of them: SQLite after writing a NEW message's
 * payload rows, so both run at the same time; PostgreSQL while it writes
 * the chunk rows of a new message (store_pg_early.c), else first.
 * v1(ctx), when not NULL: content_hash_v1 is computed only by it (after
 * wait; the same rules), because only a row stored before the field
 * digests existed is compared with it (store_hash_v1); a store asks for
 * it only when it finds such a row.
 */
struct store_pending {
	int (*wait)(void *ctx);
	int (*v1)(void *ctx);
	void *ctx;
};

/* m's hashes in (m->pending->wait): 0, or -1 with err set (ERR_INTERNAL). */
int store_hashes(const struct store_message *m, struct err *err);

/* Whether m's content_hash_v1 waits for store_hash_v1 (pending->v1). */
int store_v1_lazy(const struct store_message *m);

/* m's content_hash_v1 in (store_hashes, then m->pending->v1 if any): 0, or
 * -1 with err set (ERR_INTERNAL). */
int store_hash_v1(const struct store_message *m, struct err *err);

enum store_outcome { STORE_NEW = 1, STORE_DUPLICATE, STORE_DRIFT, STORE_ABSENT,
	STORE_BUSINESS_DUP };

struct store_result {
	enum store_outcome outcome;
	const unsigned char *receipt; /* NEW: m->receipt; DUPLICATE: the stored bytes (arena); DRIFT, ABSENT: NULL */
	size_t receipt_len;
	int64_t duplicates;           /* the row's duplicate counter after this call */
	const unsigned char *stored_fields; /* DRIFT: the stored row's field
	                               * digests (arena), NULL for a row that
	                               * has none (stored before 004/003) */
	size_t stored_fields_len;
	const char *business_duplicate_of; /* NEW under STORE_BUSINESS_FLAG
	                               * and STORE_BUSINESS_DUP: the MessageId
	                               * of the row holding the business key
	                               * (arena); NULL otherwise */
};

/* One claimed delivery: the inbox row and its payloads (arena memory). */
struct store_delivery {
	const char *message_id;
	const char *from_party;       /* with message_id, the key */
	const char *to_party, *service, *action;
	const char *conversation_id;
	const char *agreement_ref;    /* may be NULL */
	const char *pmode_id;         /* may be NULL */
	int64_t received_at_ms;
	int attempts;                 /* claims so far, this one included */
	const char *business_key;     /* may be NULL */
	const char *business_duplicate_of; /* a flagged business duplicate:
	                               * the holder's MessageId; else NULL */
	struct store_part *parts;     /* in part_no order */
	size_t n_parts;
};

/*
 * Retention purge (issue 4): delete inbox rows, with their payload and
 * delivery rows, received before their cutoff.  Rows of leg pmode_ids[i]
 * use cutoffs_ms[i]; every other row (another or no pmode_id) uses
 * default_cutoff_ms.  Unless undelivered is set, a row whose delivery is not
 * 'done' is kept.
 */
struct store_purge {
	const char *const *pmode_ids;
	const int64_t *cutoffs_ms;    /* parallel to pmode_ids */
	size_t n_legs;
	int64_t default_cutoff_ms;
	size_t batch;                 /* at most this many inbox rows per call */
	int undelivered;
};

/*
 * One inbox row as `as4gw inbox show` prints it (issue 11 item 10; store_find),
 * with its payloads' sizes (never their bytes) and its delivery row.  Arena
 * memory.  Times are ms since the epoch, -1 when not set.
 */
struct store_found_part {
	int part_no;
	const char *content_id;       /* may be NULL */
	const char *mime_type;        /* may be NULL */
	int64_t size;                 /* bytes of the final payload */
};

struct store_found {
	const char *message_id, *from_party, *to_party, *service, *action;
	const char *conversation_id;
	const char *agreement_ref, *pmode_id, *source; /* may be NULL */
	unsigned char content_hash[STORE_HASH_LEN];
	int64_t received_at_ms, processed_at_ms;
	int64_t duplicates, last_duplicate_at_ms;
	const char *state;            /* ready|claimed|done; NULL: no row */
	int attempts;
	int64_t claimed_at_ms, not_before_ms;
	const char *last_error;       /* the last failed hand-off's error, or
	                               * NULL (kept once done) */
	int64_t last_error_at_ms, done_at_ms;
	const char *business_key;     /* may be NULL */
	const char *business_duplicate_of; /* may be NULL */
	struct store_found_part *parts; /* in part_no order */
	size_t n_parts;
	struct store_found *next;     /* the next party's row, or NULL */
};

/* Bytes of a delivery's last error kept (store_finish_error). */
#define STORE_ERROR_MAX 1000

struct store_stats {
	int64_t inbox_rows;           /* approximate on PostgreSQL (planner estimate) */
	int64_t delivery_ready;       /* exact */
	int64_t delivery_claimed;     /* exact */
};

/*
 * The purge log (issue 11 item 6; migration sqlite 006 / postgresql 007):
 * one row per retention purge run, whoever ran it, so that every `serve`
 * process's /metrics counts the runs of `as4gw purge` and of every other
 * process's background purge.  Sources and outcomes in label order.
 */
enum store_purge_source {
	STORE_PURGE_CLI,              /* `as4gw purge` */
	STORE_PURGE_BACKGROUND,       /* the background purge of `serve` */
	STORE_PURGE_N_SOURCES
};

enum store_purge_outcome {
	STORE_PURGE_OK,               /* ran until nothing was left */
	STORE_PURGE_STOPPED,          /* a signal ended it between batches */
	STORE_PURGE_FAILED,           /* an error ended it */
	STORE_PURGE_N_OUTCOMES
};

struct store_purge_run {
	enum store_purge_source source;
	enum store_purge_outcome outcome;
	int64_t started_ms, finished_ms;  /* epoch ms */
	size_t purged, kept, batches;     /* struct retention_counts */
	const char *error;            /* FAILED: why (cut at STORE_ERROR_MAX
	                               * bytes), else NULL */
};

/* Runs kept in the log; the totals are kept for ever. */
#define STORE_PURGE_LOG_KEEP 1000

/* Running totals of every logged run, per source (and outcome). */
struct store_purge_totals {
	int64_t runs[STORE_PURGE_N_SOURCES][STORE_PURGE_N_OUTCOMES];
	int64_t purged[STORE_PURGE_N_SOURCES];   /* inbox rows deleted */
	int64_t last_ok_ms[STORE_PURGE_N_SOURCES]; /* end of the last ok run;
	                               * 0 = none */
};

/* Which payload store_payload_read() reads. */
struct store_payload_key {
	const char *from_party;
	const char *message_id;
	int part_no;
};

/*
 * Called by store_payload_read() with the payload's bytes in order, one
 * piece at a time (p valid during the call only).  0 go on; -1 stop (the
 * callback keeps its own error; store_payload_read returns -1 with err
 * kind ERR_IO "payload reader stopped" unless the callback set err).
 */
typedef int (*store_read_fn)(void *ctx, const unsigned char *p, size_t n);

struct store;

struct store_ops {
	const char *name;
	int (*migrate)(struct store *s, struct err *err);
	int (*ping)(struct store *s, struct err *err);
	int (*lost)(struct store *s);  /* NULL: the backend has no connection */
	int (*accept)(struct store *s, const struct store_message *m,
	    struct arena *a, struct store_result *ret, struct err *err);
	void (*close)(struct store *s);
	int (*claim)(struct store *s, int64_t now_ms, int64_t stale_ms,
	    struct arena *a, struct store_delivery *ret, struct err *err);
	int (*finish)(struct store *s, const char *from_party,
	    const char *message_id, int ok, int64_t now_ms,
	    int64_t retry_at_ms, const char *error, struct err *err);
	int (*purge)(struct store *s, const struct store_purge *p,
	    size_t *purged, size_t *kept, struct err *err);
	int (*stats)(struct store *s, struct store_stats *ret, struct err *err);
	int (*wait)(struct store *s, int timeout_ms, struct err *err);
	int (*find)(struct store *s, const char *message_id,
	    const char *from_party, struct arena *a, struct store_found **ret,
	    struct err *err);
	int (*purge_log)(struct store *s, const struct store_purge_run *r,
	    struct err *err);
	int (*purge_totals)(struct store *s, struct store_purge_totals *ret,
	    struct err *err);
	int (*payload_read)(struct store *s, const struct store_payload_key *k,
	    store_read_fn fn, void *ctx, struct err *err);
};

/* Every backend's handle starts with this. */
struct store {
	const struct store_ops *ops;
	size_t migrated;   /* migrations the last store_migrate() applied */
};

/*
 * Open one connection for dsn ("sqlite:PATH" or "postgresql://..." /
 * "postgres://..."); unknown scheme -> ERR_CONF.  Does not migrate.
 */
int store_open(const char *dsn, struct store **ret, struct err *err);

/*
 * store_open() with a deadline on every wait for a database server
 * (PostgreSQL; <storeTimeoutSeconds>): a query's answer, a connection
 * attempt, sent bytes unacknowledged.  Per wait, not per statement: a long
 * COPY that makes progress goes on.  On expiry the connection is given up
 * (ERR_STORE; the next call reconnects).  timeout_ms <= 0: STORE_TIMEOUT_MS.
 * SQLite has its own lock wait (STORE_SQLITE_BUSY_MS) and ignores it.
 */
#define STORE_TIMEOUT_MS 30000
int store_open_timeout(const char *dsn, int timeout_ms, struct store **ret,
    struct err *err);

/* Apply pending migrations under a lock (idempotent); s->migrated says
 * how many this call applied (0: the schema was current). */
int store_migrate(struct store *s, struct err *err);

/* Cheap liveness check for /readyz; reconnects when the connection was lost. */
int store_ping(struct store *s, struct err *err);

/*
 * 1 if the connection the last call used is gone (PostgreSQL: closed by the
 * server or the network; the next call reconnects), 0 otherwise and always
 * for SQLite.  No I/O: tells a failure of reach from a failure of commit.
 */
int store_lost(struct store *s);

/*
 * The accept transaction (DESIGN.md "inbox"), all in ONE database
 * transaction, keyed on (from_party, message_id) — a row of another party
 * with the same MessageId is never read, counted or revealed:
 *  - key new: insert inbox row (with receipt and field digests), payload
 *    rows and a delivery row (state 'ready'); COMMIT -> STORE_NEW.
 *  - key present with the same content: increment duplicates, set
 *    last_duplicate_at; COMMIT -> STORE_DUPLICATE with the stored receipt.
 *    The same content: the stored content_hash equals m->content_hash, or
 *    the row has no field digests (stored before migration 004/003) and
 *    its hash equals m->content_hash_v1.
 *  - present with other content: change nothing -> STORE_DRIFT, with the
 *    stored field digests (ret->stored_fields) for the log.
 *  - key new, m->business_key set and held by another row of the same
 *    from_party (the holder: the first row stored with that key, its
 *    business_duplicate_of NULL): under STORE_BUSINESS_REFUSE nothing is
 *    written -> STORE_BUSINESS_DUP; under STORE_BUSINESS_FLAG the row is
 *    stored as NEW with business_duplicate_of = the holder's MessageId.
 *    Both report the holder in ret->business_duplicate_of.  A key already
 *    present (a retry of the same MessageId) is never a business
 *    duplicate: it is decided as above.  The check is inside the same
 *    transaction as the insert: concurrent accepts of two MessageIds with
 *    one business key end in one holder (SQLite: the write lock;
 *    PostgreSQL: a partial unique index on (from_party, business_key) of
 *    the holders, on which a concurrent insert waits).
 * Concurrent calls for one key end in one row and one NEW, the rest
 * DUPLICATE.  Any database failure rolls back and is ERR_STORE (503).
 *
 * A probe (m->receipt NULL, so the caller need not sign a Receipt for a
 * message it has probably seen): DUPLICATE and DRIFT as above; a MessageId
 * not present is STORE_ABSENT and nothing is written (the caller then signs
 * and calls again with the receipt; a concurrent insert in between is
 * decided by that second call as usual).  A probe reads only message_id,
 * from_party (both required), the two content hashes and received_at_ms
 * (for last_duplicate_at): the other fields may be NULL and n_parts 0
 * (gateway_replay.c sends such probes).
 *
 * Durability: a NEW commit is durable when store_accept returns (fsync /
 * synchronous_commit as configured).  A DUPLICATE changes only the counter
 * and last_duplicate_at, never anything a partner was promised: its commit
 * may be asynchronous (PostgreSQL synchronous_commit off for that
 * transaction, SQLite no fsync of its own).  The stored receipt it returns is
 * durable already (a row is visible only once its own commit was flushed).
 *
 * PostgreSQL: one round trip per call (the as4gw_accept() function of
 * migration 004, in a single-statement transaction) for messages with up to
 * 256 KiB of payload; larger payloads are streamed with COPY inside BEGIN ...
 * COMMIT (four round trips, but libpq never holds a copy of them; one more
 * COPY for the chunk rows of payloads over STORE_CHUNK_THRESHOLD).  On NEW it then sends
 * NOTIFY on channel "as4gw_inbox" with the MessageId without waiting for
 * its answer (read at the connection's next use): a NOTIFY inside the accept
 * transaction would serialise concurrent commits on PostgreSQL's notify
 * lock; a lost NOTIFY (crash) costs a deliverer one poll interval, never a
 * message.  With a store.* fault point armed (fault builds only) the same
 * function runs inside BEGIN ... COMMIT so the points sit inside the
 * transaction.  Fault points (util/fault.h): store.after-insert once the NEW
 * rows are written, store.before-commit just before COMMIT (NEW and
 * DUPLICATE both).
 *
 * SQLite: concurrent accepts of one process queue in the process (no busy
 * sleeps), and may share one commit (group commit).
 *
 * Both: a part longer than STORE_CHUNK_THRESHOLD is written as chunk rows
 * in the same transaction, only for a NEW (a duplicate, drift, probe or
 * refused business duplicate writes none), read from part->data in order
 * with spool_done() behind each chunk.
 *
 * Hashes still being computed (m->pending): a comparison with a stored
 * row waits for them; a NEW on SQLite writes its payload rows meanwhile
 * (struct store_pending).  store_accept returns with them in, or failed (then
 * -1), whatever the outcome.
 */
int store_accept(struct store *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err);
/*
 * (store_accept also refuses, as ERR_INTERNAL and before touching the
 * database, a message the caller built wrongly: message_id empty or longer
 * than STORE_MESSAGE_ID_MAX, a required field NULL (all but agreement_ref,
 * pmode_id, source, and a part's content_id, mime_type, properties), a
 * receipt of length 0 that is not NULL, a part with len > 0 and data NULL,
 * or a negative part_no.  A part
 * with properties NULL is stored as "{}".  *ret is written only when 0 is
 * returned; DRIFT is a 0 return.)
 */

/*
 * The delivery queue (DESIGN.md "Backend hand-off").  Claim the oldest
 * delivery row that is 'ready', or 'claimed' with claimed_at older than
 * now_ms - stale_ms (its deliverer died): set state 'claimed', claimed_at =
 * now, attempts + 1, COMMIT, and return the message with its payloads
 * (those longer than STORE_CLAIM_INLINE_MAX by size only: read them with
 * store_payload_read, store_part_streamed).
 * 1 claimed (*ret filled, arena memory), 0 nothing to claim, -1 ERR_STORE.
 * PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED, so several deliverers never
 * claim one row twice; SQLite: BEGIN IMMEDIATE.
 * Fault point deliver.after-claim is NOT in the store (deliver/ has it).
 */
int store_claim(struct store *s, int64_t now_ms, int64_t stale_ms,
    struct arena *a, struct store_delivery *ret, struct err *err);

/*
 * After the target: ok -> state 'done' and inbox.processed_at = now_ms;
 * !ok -> state 'ready' again (claimed_at NULL; attempts kept) with
 * not_before = retry_at_ms, so it is retried after a back-off while other
 * rows go first.  Only a row in state 'claimed' changes (a row already
 * 'done' stays done); 0 ok, -1 ERR_STORE.
 * (Migration 002 adds delivery.not_before, NULL = at once; store_claim only
 * takes 'ready' rows with not_before NULL or <= now_ms.)
 */
int store_finish(struct store *s, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    struct err *err);

/*
 * store_finish() that also records what happened for `as4gw inbox show`
 * (migration sqlite 004 / postgresql 005): ok -> delivery.done_at = now_ms;
 * !ok -> last_error = error (NULL: "hand-off failed"; cut at
 * STORE_ERROR_MAX bytes, bytes outside printable ASCII as '?') and
 * last_error_at = now_ms.  store_finish() is this with error NULL.
 */
int store_finish_error(struct store *s, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err);

/*
 * Read-only: the inbox rows of message_id — of from_party only, or (NULL)
 * of every sending party, in from_party order — each with its payloads
 * and delivery row, read in one snapshot.  1 found (*ret, a list through
 * next, arena memory), 0 none, -1 ERR_STORE (e.g. not migrated).
 */
int store_find(struct store *s, const char *message_id,
    const char *from_party, struct arena *a, struct store_found **ret,
    struct err *err);

/*
 * One purge batch (see struct store_purge) in one transaction: *purged =
 * inbox rows deleted (with their payload and delivery rows), *kept = rows
 * past their cutoff that were kept because undelivered (count capped at
 * p->batch).  Call again until *purged < p->batch.
 */
int store_purge(struct store *s, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err);

/*
 * Stream one stored payload (issue 14 item 3): fn gets its bytes in order,
 * a payload stored whole as one piece (at most STORE_CHUNK_THRESHOLD
 * bytes), one stored in chunks in pieces of at most STORE_CHUNK_BYTES (a
 * chunk; PostgreSQL's small chunks gathered, store_pg_int.h), so the
 * caller's memory does not grow with the payload.  The chunks are
 * checked as they come: numbered 0, 1, 2 ... and adding up to the stored
 * size (a gap is ERR_STORE, never short output that looks whole).
 * 1 read, 0 no such payload
 * (fn not called), -1 ERR_STORE or fn stopped (see store_read_fn).
 * Read-only; SQLite reads in one read transaction, PostgreSQL reads the
 * chunks with one query in single-row mode (libpq holds about one row).
 */
int store_payload_read(struct store *s, const struct store_payload_key *k,
    store_read_fn fn, void *ctx, struct err *err);

/* Queue and inbox sizes for /metrics. */
int store_stats(struct store *s, struct store_stats *ret, struct err *err);

/*
 * Record one purge run (struct store_purge_run) in one autocommit INSERT:
 * a trigger adds it to its source's totals and trims the log to the last
 * STORE_PURGE_LOG_KEEP runs.  0 ok, -1 ERR_STORE (e.g. not migrated).
 */
int store_purge_log(struct store *s, const struct store_purge_run *r,
    struct err *err);

/* The purge totals for /metrics (zero for a source that never ran). */
int store_purge_totals(struct store *s, struct store_purge_totals *ret,
    struct err *err);

/* "cli" / "background" and "ok" / "stopped" / "failed": the log's words
 * (and the labels of /metrics). */
const char *store_purge_source_name(enum store_purge_source v);
const char *store_purge_outcome_name(enum store_purge_outcome v);

/*
 * Block until a new message may be ready or timeout_ms passed: PostgreSQL
 * LISTENs on channel "as4gw_inbox" (store_accept NOTIFYs it with the
 * MessageId after a NEW COMMIT); SQLite just sleeps min(timeout_ms, 1000).  0 woke
 * or timed out, -1 ERR_STORE.
 */
int store_wait(struct store *s, int timeout_ms, struct err *err);

/* Accepts NULL. */
void store_close(struct store *s);

/*
 * For the backends (store_sqlite.c, store_pg.c) only; callers use
 * store_open().  Both validate nothing about the DSN beyond what they need.
 */

/* How long a SQLite writer waits for the lock before ERR_STORE. */
#define STORE_SQLITE_BUSY_MS 10000

/* Open (creating the file if needed) the SQLite database at path. */
int store_sqlite_open(const char *path, struct store **ret, struct err *err);

/* Connect to PostgreSQL with the whole libpq DSN/URI. */
int store_pg_open(const char *dsn, int timeout_ms, struct store **ret,
    struct err *err);

/*
 * Iterate the embedded migrations of one backend ("sqlite", "postgresql") in
 * name order: start with *pos = 0; returns the next one and advances *pos, or
 * NULL after the last.  The returned struct is static.
 */
struct store_sql;
const struct store_sql *store_migration_next(const char *backend, size_t *pos);

#endif
