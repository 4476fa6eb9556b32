/*
 * store_sqlite_int — what store_sqlite.c (connection, migrations, accept)
 * shares with store_sqlite_queue.c (claim, finish, purge, stats, wait).
 * Not for callers of the store.
 */
#ifndef AS4GW_STORE_SQLITE_INT_H
#define AS4GW_STORE_SQLITE_INT_H

#include <sqlite3.h>

#include "store.h"

/* Statements of accept (store_sqlite.c) and of the queue
 * (store_sqlite_queue.c), each set prepared at its first use. */
#define STORE_SQLITE_ACCEPT_STMTS 8
#define STORE_SQLITE_QUEUE_STMTS 13

struct store_sqlite {
	struct store base;
	sqlite3 *db;
	sqlite3_stmt *st[STORE_SQLITE_ACCEPT_STMTS]; /* NULL until first use */
	sqlite3_stmt *q[STORE_SQLITE_QUEUE_STMTS];  /* likewise */
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

/* The ops of store_sqlite_queue.c (see store.h for each). */
int store_sqlite_queue_claim(struct store *base, int64_t now_ms,
    int64_t stale_ms, struct arena *a, struct store_delivery *ret,
    struct err *err);
int store_sqlite_queue_finish(struct store *base, const char *message_id,
    int ok, int64_t now_ms, int64_t retry_at_ms, struct err *err);
int store_sqlite_queue_purge(struct store *base, const struct store_purge *p,
    size_t *purged, size_t *kept, struct err *err);
int store_sqlite_queue_stats(struct store *base, struct store_stats *ret,
    struct err *err);
int store_sqlite_queue_wait(struct store *base, int timeout_ms,
    struct err *err);

/* Finalize the queue's statements (at close); accepts none prepared. */
void store_sqlite_queue_finalize(struct store_sqlite *s);

#endif
