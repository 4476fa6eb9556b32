/*
 * store_sqlite_int — what store_sqlite.c (connection, one accept's SQL)
 * shares with store_sqlite_queue.c (claim, finish, purge, stats, wait),
 * store_sqlite_writer.c (the process's writer queue and group commit) and
 * store_sqlite_migrate.c (migrations).  Not for callers of the store.
 */
#ifndef AS4GW_STORE_SQLITE_INT_H
#define AS4GW_STORE_SQLITE_INT_H

#include <sqlite3.h>

#include "store.h"

struct spool;

/* Statements of accept (store_sqlite.c) and of the queue
 * (store_sqlite_queue.c), each set prepared at its first use. */
#define STORE_SQLITE_ACCEPT_STMTS 14
#define STORE_SQLITE_QUEUE_STMTS 13

/* Group commit bounds: requests and bytes (receipts + payloads) per batch;
 * a batch always takes at least one request. */
#define STORE_SQLITE_BATCH_MAX 64
#define STORE_SQLITE_BATCH_BYTES ((size_t)16 << 20)

/* store_sqlite_ckpt.c: the WAL length (frames) that wakes the checkpoint
 * thread (SQLite's own wal_autocheckpoint default: 16 MiB of WAL with the
 * page size of a new file), and journal_size_limit: the size a WAL grown by
 * a large transaction is truncated back to. */
#define STORE_SQLITE_CKPT_FRAMES 1000
#define STORE_SQLITE_WAL_LIMIT_SQL "67108864"     /* 64 MiB */

/* The page size of a new database file (an existing one keeps its own: a
 * WAL database cannot change it).  Larger than SQLite's 4096 because a
 * large payload's chunk rows (store_sqlite_chunk.c) go through the WAL a
 * page at a time, two pwrite(2) and the page cache's work per page: 16 KiB
 * pages took a quarter less CPU for 256 MiB than 4 KiB (bench/big, README
 * "Performance"), while a small message's commit, a few pages, writes a
 * few tens of KiB more WAL. */
#define STORE_SQLITE_PAGE_SIZE_SQL "16384"

/* The checkpoints of one writer (store_sqlite_ckpt.c; opaque). */
struct store_sqlite_ckpt;

/* Shared by the handles of one process on one database file (opaque,
 * store_sqlite_writer.c). */
struct store_sqlite_writer;

/* A handle (store_sqlite_open) or a writer's own connection
 * (store_sqlite_connect: w NULL, never handed to callers). */
struct store_sqlite {
	struct store base;
	sqlite3 *db;
	struct store_sqlite_writer *w; /* never NULL once open (handles) */
	int sync_normal;              /* synchronous=NORMAL is set (for a
	                               * duplicate-only batch); FULL otherwise */
	sqlite3_stmt *st[STORE_SQLITE_ACCEPT_STMTS]; /* NULL until first use */
	sqlite3_stmt *q[STORE_SQLITE_QUEUE_STMTS];  /* likewise */
};

/*
 * One accept waiting in the writer queue.  It lives on the stack of the
 * thread that called store_accept, which blocks until done is set; until
 * then the leader of its batch reads m and writes ret, err and (a stored
 * receipt) a, on the writer's connection.
 */
struct store_sqlite_req {
	const struct store_message *m;
	struct arena *a;
	struct store_result *ret;
	struct err *err;              /* may be NULL */
	size_t bytes;                 /* what it adds to a batch */
	struct spool *spool;          /* the requester's bound spool: the
	                               * leader binds it while it writes r,
	                               * so spool_done() behind r's chunks
	                               * works on any thread (spool.h) */
	int answered;                 /* leader: by store_sqlite_look */
	int retry;                    /* leader: undone, queue it again */
	int done;                     /* under the writer's lock */
	int rc;                       /* 0 / -1 once done */
	struct store_sqlite_req *next;
};

/* Transaction control on one connection (store_sqlite_txn). */
enum store_sqlite_txn {
	STORE_SQLITE_BEGIN,           /* BEGIN IMMEDIATE */
	STORE_SQLITE_COMMIT,
	STORE_SQLITE_ROLLBACK,
	STORE_SQLITE_SAVEPOINT,       /* one savepoint name: never nested */
	STORE_SQLITE_RELEASE,
	STORE_SQLITE_ROLLBACK_TO
};

/* Record the connection's last failure as ERR_STORE ("could not <what>"). */
int store_sqlite_fail(struct store_sqlite *s, const char *what,
    struct err *err);

/* Bind text; NULL binds SQL NULL. */
int store_sqlite_bind_text(sqlite3_stmt *st, int i, const char *t);

/* Forget a statement's bindings and results so it can run again. */
void store_sqlite_done(sqlite3_stmt *st);

/*
 * Step a bound statement that returns no row, then reset it; bind_rc is the
 * OR of the bind results, so a failed bind fails here as "could not <what>".
 */
int store_sqlite_step(struct store_sqlite *s, sqlite3_stmt *st, int bind_rc,
    const char *what, struct err *err);

/*
 * Open path (creating the file) and configure one connection like a
 * handle's (NOMUTEX, busy timeout, foreign keys, synchronous=FULL, WAL), but
 * with no writer: the writer's own connection.
 */
int store_sqlite_connect(const char *path, struct store_sqlite **ret,
    struct err *err);

/* Finalize its statements, close and free a connection; accepts NULL.
 * Leaves s->w alone. */
void store_sqlite_disconnect(struct store_sqlite *s);

/* Run SQL text without results (pragmas, DDL, transaction control);
 * failure is ERR_STORE "could not <what>". */
int store_sqlite_exec(struct store_sqlite *s, const char *sql,
    const char *what, struct err *err);

/* The migrate op (store_sqlite_migrate.c; store.h "store_migrate"). */
int store_sqlite_migrate(struct store *base, struct err *err);

/* Prepare accept's statements once per connection; fails if not migrated. */
int store_sqlite_prepare(struct store_sqlite *s, struct err *err);

/* Run one transaction control statement (prepared). */
int store_sqlite_txn(struct store_sqlite *s, enum store_sqlite_txn op,
    struct err *err);

/*
 * Set synchronous=NORMAL (normal != 0) or FULL on the connection when it is
 * not set already; outside a transaction only (SQLite refuses it inside).
 */
int store_sqlite_sync(struct store_sqlite *s, int normal, struct err *err);

/*
 * Outside a transaction, before a batch: 1 m needs no write (a drifted row,
 * its stored field digests copied into a, or a probe of an absent one),
 * answered into ret; 0 it needs the write
 * transaction (*may_insert: no row seen and not a probe).
 */
int store_sqlite_look(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, int *may_insert);

/*
 * Inside an open write transaction: decide and record new / duplicate /
 * drift (or absent, for a probe) for m; a stored receipt is copied into a.
 * Fault point store.after-insert once a NEW's rows are written.
 */
int store_sqlite_decide(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err);

/*
 * The writer shared by this process's handles on the database file path
 * (canonical: realpath; "" or NULL: a private writer, e.g. ":memory:"),
 * created at the first open, with its own connection (not for a private
 * writer), and counted.  ERR_INTERNAL when out of memory, ERR_STORE when
 * its connection cannot be opened.
 */
int store_sqlite_writer_get(const char *path,
    struct store_sqlite_writer **ret, struct err *err);

/* Drop one reference (the last closes its connection and frees it);
 * accepts NULL. */
void store_sqlite_writer_put(struct store_sqlite_writer *w);

/*
 * The connection that writes for handle s: its writer's own connection, or
 * s itself for a private writer.  Use it only while leading a batch or
 * holding store_sqlite_writer_lock().
 */
struct store_sqlite *store_sqlite_writer_conn(struct store_sqlite *s);

/*
 * Queue r (r->m, a, ret, err, bytes set; the rest zero) behind the
 * process's other writers of the file and wait: the thread that finds no
 * leader runs the queued requests in batches on the writer's connection
 * (store_sqlite_writer_conn(s)), group commit, until its own is done.
 * Returns r->rc.
 */
int store_sqlite_writer_accept(struct store_sqlite *s,
    struct store_sqlite_req *r);

/*
 * Exclusive use of the writer (and of its connection) for a transaction of
 * another kind (claim, finish, purge, migrate): waits while a batch runs,
 * then holds off the queue until store_sqlite_writer_unlock().
 */
void store_sqlite_writer_lock(struct store_sqlite_writer *w);
void store_sqlite_writer_unlock(struct store_sqlite_writer *w);

/*
 * Start a thread that checkpoints the WAL of path on a connection of its
 * own whenever a commit of the writer connection w leaves the WAL
 * STORE_SQLITE_CKPT_FRAMES long; w's commits then no longer checkpoint
 * themselves (store_sqlite_ckpt.c).  ERR_STORE / ERR_INTERNAL on failure.
 */
int store_sqlite_ckpt_start(const char *path, struct store_sqlite *w,
    struct store_sqlite_ckpt **ret, struct err *err);

/* Unhook w, stop the thread after the checkpoint it runs, free; accepts
 * NULL. */
void store_sqlite_ckpt_stop(struct store_sqlite_ckpt *c,
    struct store_sqlite *w);

/* Checkpoints the thread has run so far (tests); 0 for NULL. */
uint64_t store_sqlite_ckpt_runs(struct store_sqlite_ckpt *c);

/* The checkpoints run for w's file so far (tests; 0: a private writer). */
uint64_t store_sqlite_writer_ckpt_runs(struct store_sqlite_writer *w);

/* How often a large payload's WAL was sent on to the disk before its
 * COMMIT (store_sqlite_chunk.c), in this process (for tests). */
uint64_t store_sqlite_wal_kicks(void);

/* For tests and gauges: requests queued (not yet taken into a batch), and
 * write transactions of batches run so far, by the writer w. */
void store_sqlite_writer_counts(struct store_sqlite_writer *w, size_t *queued,
    uint64_t *batches);

/* The ops of store_sqlite_queue.c (see store.h for each). */
int store_sqlite_queue_claim(struct store *base, int64_t now_ms,
    int64_t stale_ms, struct arena *a, struct store_delivery *ret,
    struct err *err);
int store_sqlite_queue_finish(struct store *base, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err);
int store_sqlite_queue_purge(struct store *base, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err);
int store_sqlite_queue_stats(struct store *base, struct store_stats *ret,
    struct err *err);
int store_sqlite_queue_wait(struct store *base, int timeout_ms,
    struct err *err);

/* store_find (store_sqlite_find.c; see store.h). */
int store_sqlite_find(struct store *base, const char *message_id,
    const char *from_party, struct arena *a, struct store_found **ret,
    struct err *err);

/* Finalize the queue's statements (at close); accepts none prepared. */
void store_sqlite_queue_finalize(struct store_sqlite *s);

/*
 * Inside the accept transaction, after p's payload row (size set, no
 * content): p's bytes as payload_chunk rows of STORE_CHUNK_BYTES, through
 * st (accept's prepared INSERT INTO payload_chunk), read from p->data in
 * order with spool_done() behind each chunk (store_sqlite_chunk.c).
 */
int store_sqlite_chunk_insert(struct store_sqlite *s, sqlite3_stmt *st,
    const struct store_message *m, const struct store_part *p,
    struct err *err);

/* store_payload_read on the handle's own connection (store_sqlite_chunk.c;
 * store.h). */
int store_sqlite_payload_read(struct store *base,
    const struct store_payload_key *k, store_read_fn fn, void *ctx,
    struct err *err);

/* The purge log (store_sqlite_purgelog.c; store.h "store_purge_log"). */
int store_sqlite_purge_log(struct store *base,
    const struct store_purge_run *r, struct err *err);
int store_sqlite_purge_totals(struct store *base,
    struct store_purge_totals *ret, struct err *err);

#endif
