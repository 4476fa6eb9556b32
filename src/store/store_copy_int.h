/*
 * store_copy_int — what store_copy.c (the order of the copy, its checks)
 * shares with store_copy_src.c (the SQLite source, read-only) and
 * store_copy_dst.c (the PostgreSQL target).  Not for callers of the store.
 */
#ifndef AS4GW_STORE_COPY_INT_H
#define AS4GW_STORE_COPY_INT_H

#include <sqlite3.h>
#include <libpq-fe.h>

#include "store.h"
#include "store_copy.h"

/*
 * The tables copied, in the order they are written (a payload row before
 * its chunks).  Each has one source query and one target statement whose
 * columns match one to one (store_copy_tables, store_copy.c).
 */
enum store_copy_table {
	STORE_COPY_T_INBOX,           /* every inbox row */
	STORE_COPY_T_PAYLOAD,         /* of one key (?1 party, ?2 MessageId) */
	STORE_COPY_T_CHUNK,           /* of one key */
	STORE_COPY_T_DELIVERY,        /* of one key */
	STORE_COPY_T_PURGE_LOG,       /* every logged run */
	STORE_COPY_T_PURGE_TOTALS,    /* per source: totals less the log */
	STORE_COPY_T_N
};

struct store_copy_table_sql {
	const char *name;             /* for messages, and the prepared name */
	const char *src;              /* SQLite SELECT */
	const char *dst;              /* PostgreSQL INSERT / UPDATE */
	int n_cols;                   /* its parameters: the query's first
	                               * columns */
	int n_src;                    /* the query's columns (0: n_cols) */
};

/* The extra columns of the payload query: a payload stored whole before
 * the chunked storage (SQLite migration 007) and longer than
 * STORE_CHUNK_THRESHOLD goes into chunk rows (store_copy_legacy). */
#define STORE_COPY_P_ROWID 8
#define STORE_COPY_P_LEGACY 9
#define STORE_COPY_LEGACY_MIN 8388608   /* in SQL text: the threshold */
_Static_assert(STORE_COPY_LEGACY_MIN == STORE_CHUNK_THRESHOLD,
    "STORE_COPY_LEGACY_MIN must be STORE_CHUNK_THRESHOLD");

extern const struct store_copy_table_sql store_copy_tables[STORE_COPY_T_N];

/*
 * One source row as target statement parameters: SQL NULL stays NULL,
 * integers and text go as text, blobs as binary (a zero-length blob as "",
 * never NULL).  Pointers into the source statement's row: valid until it
 * steps again.
 */
#define STORE_COPY_MAX_COLS 20
struct store_copy_row {
	int n;
	const char *v[STORE_COPY_MAX_COLS];
	int len[STORE_COPY_MAX_COLS];
	int fmt[STORE_COPY_MAX_COLS];
	char num[STORE_COPY_MAX_COLS][24];
};

/*
 * The payload_chunk rows of one key as the PostgreSQL store cuts them
 * (store_copy_cut.c): every part's bytes, fed in order, leave as rows of
 * store_pg_chunk_len(party, MessageId) bytes (the last one shorter),
 * chunk_no 0..n-1 per part; one row's bytes are held.
 */
typedef int (*store_copy_cut_put_fn)(void *ctx,
    const struct store_copy_row *r, struct err *err);

struct store_copy_cut {
	store_copy_cut_put_fn put;    /* writes one row (its params valid
	                               * for the call only) */
	void *ctx;
	struct store_copy_row row;    /* party, MessageId, part, chunk_no,
	                               * content */
	unsigned char *buf;           /* STORE_PG_CHUNK_BYTES */
	size_t len;                   /* the row length of the key */
	size_t fill;                  /* bytes held */
	int64_t part;                 /* the part being cut, -1 none */
	int64_t part_bytes;           /* its bytes so far */
	int64_t chunk_no;             /* its next row's number */
	int64_t rows;                 /* rows written, in all */
	int64_t want_rows;            /* rows the finished parts must have:
	                               * ceil(bytes / len) each */
	int64_t bytes;                /* the finished parts' bytes */
};

/* Allocate the row buffer; 0 or -1 ERR_INTERNAL.  Free it with
 * store_copy_cut_free (also after a failed init). */
int store_copy_cut_init(struct store_copy_cut *c, store_copy_cut_put_fn put,
    void *ctx, struct err *err);
void store_copy_cut_free(struct store_copy_cut *c);

/* The next key's rows (text valid until it is done; the part before
 * ended with store_copy_cut_end). */
void store_copy_cut_key(struct store_copy_cut *c, const char *from,
    const char *id);

/* The next n bytes of part (another part than the last fed: the last
 * one ends first).  0 or -1 (the put's error). */
int store_copy_cut_feed(struct store_copy_cut *c, int64_t part,
    const void *p, size_t n, struct err *err);

/* End the part being cut: its last, shorter row written; counted in
 * want_rows and bytes.  0 or -1. */
int store_copy_cut_end(struct store_copy_cut *c, struct err *err);

/* The source: one read-only connection, one read transaction. */
struct store_copy_src {
	const char *path;
	sqlite3 *db;
	sqlite3_stmt *st[STORE_COPY_T_N];
	sqlite3_stmt *counts_key;     /* the counts of one key */
};

/*
 * Open path read-only and start its read transaction: refused when the
 * file is missing, another process has it open (a running gateway: the
 * WAL index's dead-man-switch lock is held), it is not an as4gw store, or
 * its schema is not this version's.  0, or -1 with ERR_STORE; close it
 * either way.
 */
int store_copy_src_open(const char *path, struct store_copy_src *s,
    struct err *err);
void store_copy_src_close(struct store_copy_src *s);

/* The counts of the whole source (from NULL) or of one key, added to
 * *ret.  0 or -1 ERR_STORE. */
int store_copy_src_counts(struct store_copy_src *s, const char *from,
    const char *id, struct store_copy_counts *ret, struct err *err);

/* The next row of table t's query (bind the key first for the keyed
 * tables): 1 a row in *r, 0 none left (the query is reset), -1 ERR_STORE. */
int store_copy_src_next(struct store_copy_src *s, enum store_copy_table t,
    struct store_copy_row *r, struct err *err);

/* Bind the key of the keyed queries (text valid until they are done). */
int store_copy_src_key(struct store_copy_src *s, enum store_copy_table t,
    const char *from, const char *id, struct err *err);

/*
 * Open the content of payload row rowid for reading in pieces (SQLite
 * incremental blob I/O: never read whole); *ret_len its length.  Close it
 * with sqlite3_blob_close().  0 or -1 ERR_STORE.
 */
int store_copy_src_blob(struct store_copy_src *s, int64_t rowid,
    sqlite3_blob **ret, int *ret_len, struct err *err);

/* The target: the store handle (migrations) and its connection. */
struct store_copy_dst {
	struct store *store;
	PGconn *conn;
	int in_txn;
	int pipeline;                 /* rows are pipelined */
	int pending;                  /* statements sent, answers unread */
	size_t bytes;                 /* their binary parameters' bytes */
};

/*
 * Connect to dsn (a PostgreSQL DSN: store_copy checks) and, unless dry_run,
 * migrate it.  *ret_schema: 1 the as4gw tables exist (after migrating:
 * always).  0, or -1 with err; close it either way.
 */
int store_copy_dst_open(const char *dsn, int dry_run,
    struct store_copy_dst *d, int *ret_schema, struct err *err);
void store_copy_dst_close(struct store_copy_dst *d);

/* BEGIN, LOCK TABLE inbox IN EXCLUSIVE MODE, prepare the statements. */
int store_copy_dst_begin(struct store_copy_dst *d, struct err *err);

/* COMMIT (commit) or ROLLBACK; 0 or -1 ERR_STORE. */
int store_copy_dst_end(struct store_copy_dst *d, int commit, struct err *err);

/* The target's counts (in its open transaction, if any). */
int store_copy_dst_counts(struct store_copy_dst *d,
    struct store_copy_counts *ret, struct err *err);

/*
 * Pipelined writes (a copy into an empty target: no answer is needed
 * before the next row) on, or off: the answers of every row sent are read
 * and the first failure returned.  0 or -1 ERR_STORE.
 */
int store_copy_dst_pipeline(struct store_copy_dst *d, int on,
    struct err *err);

/* Write one row of table t: *ret_rows = rows the statement changed
 * (0: an inbox key already present; pipelined: always 1, a failure
 * surfaces at the next sync and a conflict in the final counts).  0 or -1
 * ERR_STORE. */
int store_copy_dst_put(struct store_copy_dst *d, enum store_copy_table t,
    const struct store_copy_row *r, int *ret_rows, struct err *err);

/* The target's inbox row of the key has this content hash: 1 yes, 0 no
 * (or no row), -1 ERR_STORE. */
int store_copy_dst_same(struct store_copy_dst *d, const char *from,
    const char *id, const void *hash, int hash_len, struct err *err);

#endif
