/*
 * store_sqlite_chunk — payloads stored in chunks on SQLite (issue 14;
 * store.h "STORE_CHUNK_BYTES", 007_payload_chunk.sql): writing a large
 * part's chunk rows inside the accept transaction, and reading a payload
 * back one piece at a time (store_payload_read).
 *
 * Writing: the part's bytes (usually a mapping of a spool file) are read
 * in order, STORE_CHUNK_BYTES per row, inserted as a zeroblob and filled
 * by incremental blob I/O (one copy, into SQLite's pages), and
 * released with spool_done() once the row is in, so the resident part of a
 * 1 GiB payload stays one chunk; SQLite spills dirty pages to the WAL as
 * its page cache fills, so the transaction does not hold the payload in
 * memory either.  A failure or a crash before COMMIT leaves no chunk: the
 * rows are part of the batch's transaction (rolled back to the request's
 * savepoint, or by WAL recovery).
 *
 * Reading: one read transaction (BEGIN ... COMMIT on the handle's own
 * connection: a WAL snapshot), the payload row first (its size says
 * whether it is chunked), then its chunks in primary-key order, so there
 * is no sort and SQLite holds one chunk at a time.
 */
#include "store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

#include "store_int.h"
#include "store_sqlite_int.h"
#include "../spool/spool.h"

#define STORE_SQC_PART \
	"SELECT size, content FROM payload" \
	" WHERE from_party = ?1 AND message_id = ?2 AND part_no = ?3"
/* the primary key's order: an index range scan, no sorter */
#define STORE_SQC_CHUNKS \
	"SELECT chunk_no, content FROM payload_chunk" \
	" WHERE from_party = ?1 AND message_id = ?2 AND part_no = ?3" \
	" ORDER BY chunk_no"

/* how often a large payload's WAL is sent on its way to the disk */
#define STORE_SQLITE_KICK ((size_t)32 << 20)
_Static_assert(STORE_SQLITE_KICK % STORE_CHUNK_BYTES == 0, "kick on a chunk");

/* a writer reads the part in pieces no larger than a spool reader's */
_Static_assert(STORE_CHUNK_BYTES <= SPOOL_CHUNK, "chunk within SPOOL_CHUNK");

/*
 * Fill the content of chunk row rowid (inserted as a zeroblob) from data
 * through incremental blob I/O: SQLite copies the bytes straight into the
 * row's overflow pages, where binding them would first build a record of
 * the whole chunk in a fresh allocation (a copy, and page faults, per
 * chunk).  *blob is opened on the first call and moved on the next ones.
 */
static int
store_sqlite_chunk_fill(struct store_sqlite *s, sqlite3_blob **blob,
    sqlite3_int64 rowid, const unsigned char *data, size_t n, struct err *err)
{
	int rc;

	rc = *blob == NULL ? sqlite3_blob_open(s->db, "main", "payload_chunk",
	    "content", rowid, 1, blob) : sqlite3_blob_reopen(*blob, rowid);
	if (rc == SQLITE_OK)
		rc = sqlite3_blob_write(*blob, data, (int)n, 0);
	if (rc != SQLITE_OK)
		return store_sqlite_fail(s, "write payload chunk", err);
	return 0;
}

static uint64_t store_sqlite_kicked;  /* store_sqlite_wal_kicks() */

/*
 * Start writing the WAL out now (SYNC_FILE_RANGE_WRITE: it does not wait
 * for the disk), every STORE_SQLITE_KICK bytes of chunks: the kernel would
 * otherwise hold a large payload's frames dirty until the COMMIT's fsync,
 * which then waits for all of them, while the Receipt waits for it.
 * Best effort; the WAL's name is SQLite's documented one.
 */
static void
store_sqlite_wal_kick(struct store_sqlite *s)
{
	const char *db = sqlite3_db_filename(s->db, "main");
	char wal[4096];
	int fd;

	if (db == NULL || db[0] == '\0' ||
	    (size_t)snprintf(wal, sizeof(wal), "%s-wal", db) >= sizeof(wal))
		return;
	fd = open(wal, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return;
	if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) == 0)
		(void)__atomic_fetch_add(&store_sqlite_kicked, 1,
		    __ATOMIC_RELAXED);
	(void)close(fd);
}

uint64_t
store_sqlite_wal_kicks(void)
{
	return __atomic_load_n(&store_sqlite_kicked, __ATOMIC_RELAXED);
}

/* The chunk rows of p (store_sqlite_int.h): each inserted with a zeroblob
 * of its length (the CHECK on length(content) still applies), then filled. */
int
store_sqlite_chunk_insert(struct store_sqlite *s, sqlite3_stmt *st,
    const struct store_message *m, const struct store_part *p,
    struct err *err)
{
	sqlite3_blob *blob = NULL;
	size_t off, n;
	int b, no = 0, rc = 0;

	for (off = 0; rc == 0 && off < p->len; off += n, no++) {
		n = p->len - off < STORE_CHUNK_BYTES ? p->len - off :
		    STORE_CHUNK_BYTES;
		b = store_sqlite_bind_text(st, 1, m->from_party);
		b |= store_sqlite_bind_text(st, 2, m->message_id);
		b |= sqlite3_bind_int(st, 3, p->part_no);
		b |= sqlite3_bind_int(st, 4, no);
		b |= sqlite3_bind_zeroblob64(st, 5, (sqlite3_uint64)n);
		rc = store_sqlite_step(s, st, b, "insert payload chunk", err);
		if (rc == 0)
			rc = store_sqlite_chunk_fill(s, &blob,
			    sqlite3_last_insert_rowid(s->db), p->data + off, n,
			    err);
		if (rc == 0)
			spool_done(p->data + off, n);
		if (rc == 0 && (off + n) % STORE_SQLITE_KICK == 0)
			store_sqlite_wal_kick(s);
	}
	/* an open blob counts as a statement running: closed before COMMIT */
	if (blob != NULL && sqlite3_blob_close(blob) != SQLITE_OK && rc == 0)
		rc = store_sqlite_fail(s, "write payload chunk", err);
	return rc;
}

/* Prepare sql and bind the payload key k to ?1 ?2 ?3; NULL on failure. */
static sqlite3_stmt *
store_sqlite_chunk_stmt(struct store_sqlite *s, const char *sql,
    const struct store_payload_key *k, struct err *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 1, k->from_party) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, k->message_id) != SQLITE_OK ||
	    sqlite3_bind_int(st, 3, k->part_no) != SQLITE_OK) {
		(void)store_sqlite_fail(s, "read payload", err);
		(void)sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/*
 * The chunks of a payload of size bytes, in order, to fn; a missing or
 * misnumbered chunk, or a total other than size, is ERR_STORE
 * (store_chunk_take, store_chunk_end).
 */
static int
store_sqlite_chunk_stream(struct store_sqlite *s,
    const struct store_payload_key *k, int64_t size, store_read_fn fn,
    void *ctx, struct err *err)
{
	sqlite3_stmt *st = store_sqlite_chunk_stmt(s, STORE_SQC_CHUNKS, k, err);
	struct store_chunk_rd rd = { fn, ctx, size, 0, 0 };
	const void *p;
	int r, rc = -1;

	if (st == NULL)
		return -1;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		p = sqlite3_column_blob(st, 1);  /* before its size: SQLite */
		if (store_chunk_take(&rd, sqlite3_column_int64(st, 0), p,
		    sqlite3_column_bytes(st, 1), err) == -1)
			goto out;
	}
	if (r != SQLITE_DONE)
		(void)store_sqlite_fail(s, "read payload chunk", err);
	else
		rc = store_chunk_end(&rd, err);
out:
	(void)sqlite3_finalize(st);
	return rc;
}

/* The payload row of k, then (chunked) its chunks: 1, 0 or -1. */
static int
store_sqlite_chunk_read(struct store_sqlite *s,
    const struct store_payload_key *k, store_read_fn fn, void *ctx,
    struct err *err)
{
	sqlite3_stmt *st = store_sqlite_chunk_stmt(s, STORE_SQC_PART, k, err);
	int rc = -1;

	if (st == NULL)
		return -1;
	switch (sqlite3_step(st)) {
	case SQLITE_DONE:
		rc = 0;
		break;
	case SQLITE_ROW:
		if (sqlite3_column_type(st, 0) == SQLITE_NULL)
			rc = store_chunk_give(fn, ctx,
			    sqlite3_column_blob(st, 1),
			    (size_t)sqlite3_column_bytes(st, 1), err);
		else
			rc = store_sqlite_chunk_stream(s, k,
			    sqlite3_column_int64(st, 0), fn, ctx, err);
		rc = rc == 0 ? 1 : -1;
		break;
	default:
		(void)store_sqlite_fail(s, "read payload", err);
		break;
	}
	(void)sqlite3_finalize(st);
	return rc;
}

/* store_payload_read (store.h) in one read transaction. */
int
store_sqlite_payload_read(struct store *base,
    const struct store_payload_key *k, store_read_fn fn, void *ctx,
    struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	int rc;

	if (store_sqlite_exec(s, "BEGIN", "begin transaction", err) == -1)
		return -1;
	rc = store_sqlite_chunk_read(s, k, fn, ctx, err);
	if (store_sqlite_exec(s, rc == -1 ? "ROLLBACK" : "COMMIT",
	    "end transaction", rc == -1 ? NULL : err) == -1)
		rc = -1;
	return rc;
}
