/*
 * store_pg_chunk — payloads stored in chunks on PostgreSQL (issue 14;
 * 008_payload_chunk.sql, 010_payload_chunk_plain.sql): the chunk rows of
 * a new message's large parts, STORE_PG_CHUNK_BYTES each (store_pg_int.h:
 * one row, one page, no TOAST), streamed into the open accept transaction
 * with one binary COPY (after the COPY of its payload rows:
 * store_pg_copy.c), and reading a payload back one chunk at a time
 * (store_payload_read), whatever size its chunks were written with (rows
 * of older versions: 1 MiB).
 *
 * Writing: the chunks are read from the part's memory (usually a spool
 * mapping) in order, a few rows gathered per CopyData message
 * (STORE_PG_CHUNK_BATCH), with spool_done() behind, so neither libpq nor
 * the process holds more than about one batch.  No extra round trip
 * per chunk: the whole of them is one COPY (one round trip).  Only a NEW
 * gets here (as4gw_accept() decided it first, store_pg.c), so a duplicate
 * or a drift never writes a chunk; a failure or a crash before COMMIT
 * leaves none (the rows belong to the accept transaction).
 *
 * Reading: one REPEATABLE READ, READ ONLY transaction (one snapshot): the
 * payload row (its size says whether it is chunked), then its chunks in
 * primary-key order with libpq's single-row mode, so libpq holds one row
 * at a time (a GiB is some 134,000 rows: one query, no row held twice),
 * gathered into pieces of up to STORE_PG_READ_BATCH bytes for the reader.
 * A reader that stops makes us cancel the query.
 */
#include "store.h"

#include <stdint.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_int.h"
#include "store_pg_int.h"
#include "../spool/spool.h"
#include "../util/buf.h"

#define STORE_PG_CHUNK_COPY "COPY payload_chunk (from_party, message_id," \
	" part_no, chunk_no, content) FROM STDIN (FORMAT binary)"
#define STORE_PG_CHUNK_ROW "\0\5"
/* Bytes of chunk rows per CopyData message: one send(2) for several rows
 * (libpq sends what it holds in 8 KiB multiples; a row is about 8 KiB). */
#define STORE_PG_CHUNK_BATCH ((size_t)64 * 1024)
_Static_assert(STORE_PG_READ_BATCH <= STORE_CHUNK_BYTES, "a reader's piece");

#define STORE_PG_CHUNK_PART "SELECT size, content FROM payload" \
	" WHERE from_party = $1 AND message_id = $2 AND part_no = $3::int4"
#define STORE_PG_CHUNK_SEL "SELECT chunk_no, content FROM payload_chunk" \
	" WHERE from_party = $1 AND message_id = $2 AND part_no = $3::int4" \
	" ORDER BY chunk_no"

/* a writer reads the part in pieces no larger than a spool reader's */
_Static_assert(STORE_PG_CHUNK_BYTES <= SPOOL_CHUNK, "chunk in SPOOL_CHUNK");
/* the CHECK of 008_payload_chunk.sql */
_Static_assert(STORE_PG_CHUNK_BYTES <= 1048576, "chunk within the CHECK");

/* The bytes a text key takes in a tuple (PostgreSQL varlena: a 1-byte
 * header up to 126 bytes, else 4 and up to 3 of alignment). */
static size_t
store_pg_chunk_key(const char *k)
{
	size_t n = strlen(k);

	return n <= 126 ? n + 1 : n + 7;
}

/* store_pg_chunk_len (store_pg_int.h): the page arithmetic there. */
size_t
store_pg_chunk_len(const char *from_party, const char *message_id)
{
	size_t keys = store_pg_chunk_key(from_party) +
	    store_pg_chunk_key(message_id) + 3 + 8 + 4;

	if (keys >= STORE_PG_CHUNK_ROW_MAX - STORE_PG_CHUNK_MIN)
		return STORE_PG_CHUNK_MIN;
	return STORE_PG_CHUNK_ROW_MAX - keys < STORE_PG_CHUNK_BYTES ?
	    STORE_PG_CHUNK_ROW_MAX - keys : STORE_PG_CHUNK_BYTES;
}

/* What a chunk writer sends: the rows gather in b, sent as one CopyData
 * message once they reach STORE_PG_CHUNK_BATCH bytes. */
struct store_pg_chunk_w {
	struct store_pg *s;
	const struct store_message *m;
	size_t chunk;                 /* store_pg_chunk_len of m's keys */
	struct buf b;
};

/* One chunk row of part pt: chunk_no no, n bytes at p, into w->b (sent
 * when full). */
static int
store_pg_chunk_row(struct store_pg_chunk_w *w, const struct store_part *pt,
    int no, const unsigned char *p, size_t n)
{
	struct buf *b = &w->b;

	if (buf_append(b, STORE_PG_CHUNK_ROW, 2) == -1 ||
	    store_pg_str(b, w->m->from_party) == -1 ||
	    store_pg_str(b, w->m->message_id) == -1 ||
	    store_pg_put32(b, 4) == -1 ||
	    store_pg_put32(b, (uint32_t)pt->part_no) == -1 ||
	    store_pg_put32(b, 4) == -1 || store_pg_put32(b, (uint32_t)no) == -1 ||
	    store_pg_put32(b, (uint32_t)n) == -1 || buf_append(b, p, n) == -1)
		return -1;
	return b->len < STORE_PG_CHUNK_BATCH ? 0 : store_pg_copy_send(w->s, b);
}

/* The chunk rows of part pt in order, its spool mapping released behind
 * in SPOOL_CHUNK pieces (not per chunk: a chunk is no whole number of
 * pages). */
static int
store_pg_chunk_part(struct store_pg_chunk_w *w, const struct store_part *pt)
{
	const unsigned char *rel = pt->data;
	size_t off, n;
	int no;

	for (off = 0, no = 0; off < pt->len; off += n, no++) {
		n = pt->len - off < w->chunk ? pt->len - off : w->chunk;
		if (store_pg_chunk_row(w, pt, no, pt->data + off, n) == -1)
			return -1;
		spool_done_behind(&rel, pt->data + off + n);
	}
	spool_done(rel, (size_t)(pt->data + pt->len - rel));
	return 0;
}

/* The chunk rows of m (store_pg_int.h). */
int
store_pg_chunk_copy(struct store_pg *s, const struct store_message *m,
    struct err *err)
{
	struct store_pg_chunk_w w = { s, m,
	    store_pg_chunk_len(m->from_party, m->message_id), { 0 } };
	PGresult *res;
	size_t i;
	int ok;

	for (i = 0; i < m->n_parts; i++)
		if (m->parts[i].len > STORE_CHUNK_THRESHOLD)
			break;
	if (i == m->n_parts)
		return 0;
	res = store_pg_query(s, STORE_PG_CHUNK_COPY);
	if (PQresultStatus(res) != PGRES_COPY_IN) {
		(void)store_pg_fail(s, "insert payload chunk", res, err);
		PQclear(res);
		return -1;
	}
	PQclear(res);
	ok = buf_append(&w.b, STORE_PG_COPY_HEAD,
	    sizeof(STORE_PG_COPY_HEAD) - 1) == 0;
	for (; ok && i < m->n_parts; i++)
		if (m->parts[i].len > STORE_CHUNK_THRESHOLD)
			ok = store_pg_chunk_part(&w, &m->parts[i]) == 0;
	ok = ok && buf_append(&w.b, STORE_PG_COPY_END, 2) == 0 &&
	    store_pg_copy_send(s, &w.b) == 0;
	buf_free(&w.b);
	return store_pg_copy_end(s, ok, err);
}

/*
 * Run sql with the payload key k as its text parameters, binary results.
 * ret_sent NULL: wait for the result (NULL on failure, err set).  Else
 * only send it, in single-row mode (the caller reads the rows with
 * PQgetResult): *ret_sent 1, or 0 with err set; NULL is returned.
 */
static PGresult *
store_pg_chunk_query(struct store_pg *s, const char *sql,
    const struct store_payload_key *k, int *ret_sent, struct err *err)
{
	char no[16];
	const char *v[3] = { k->from_party, k->message_id, no };
	PGresult *res;

	(void)snprintf(no, sizeof(no), "%d", k->part_no);
	if (ret_sent != NULL) {
		*ret_sent = PQsendQueryParams(s->conn, sql, 3, NULL, v, NULL,
		    NULL, 1) == 1 && PQsetSingleRowMode(s->conn) == 1;
		if (!*ret_sent)
			(void)store_pg_fail(s, "read payload", NULL, err);
		return NULL;
	}
	res = store_pg_finish(s, PQsendQueryParams(s->conn, sql, 3, NULL, v,
	    NULL, NULL, 1));
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		(void)store_pg_fail(s, "read payload", res, err);
		PQclear(res);
		return NULL;
	}
	return res;
}

/* Stop the running query (a reader gave up) and read what is left. */
static void
store_pg_chunk_drain(struct store_pg *s, int cancel)
{
	/* not to a server that did not answer: PQcancel would wait on it */
	PGcancel *c = cancel && !s->timed_out ? PQgetCancel(s->conn) : NULL;
	char buf[256];
	PGresult *res;

	if (c != NULL) {
		(void)PQcancel(c, buf, (int)sizeof(buf));
		PQfreeCancel(c);
	}
	while ((res = store_pg_result(s)) != NULL)
		PQclear(res);
}

/* One row of the chunk query to store_chunk_take (store_int.h): 0 go on,
 * -1 stop (err set). */
static int
store_pg_chunk_give(const PGresult *res, struct store_chunk_rd *rd,
    struct err *err)
{
	int64_t no = PQgetlength(res, 0, 0) == 4 ?
	    (int64_t)store_pg_get(PQgetvalue(res, 0, 0), 4) : -1;

	return store_chunk_take(rd, no, PQgetvalue(res, 0, 1),
	    PQgetlength(res, 0, 1), err);
}

/* The reader's fn behind store_pg_chunk_gather. */
struct store_pg_chunk_g {
	store_read_fn fn;
	void *ctx;
	struct buf b;                 /* chunks not yet given */
	int oom;
};

/* store_read_fn: small chunks gathered into pieces of up to
 * STORE_PG_READ_BATCH bytes for the reader (one write(2) per piece, not
 * per 8000 bytes); a chunk of that size or more (rows of older versions,
 * 1 MiB) goes through as it is. */
static int
store_pg_chunk_gather(void *ctx, const unsigned char *p, size_t n)
{
	struct store_pg_chunk_g *g = ctx;

	if (g->b.len > 0 && g->b.len + n > STORE_PG_READ_BATCH) {
		if (g->fn(g->ctx, (const unsigned char *)g->b.data,
		    g->b.len) != 0)
			return -1;
		buf_reset(&g->b);
	}
	if (g->b.len == 0 && n >= STORE_PG_READ_BATCH)
		return g->fn(g->ctx, p, n);
	g->oom = buf_append(&g->b, p, n) == -1;
	return g->oom ? -1 : 0;
}

/* The chunks of a payload of size bytes, in order, to fn (single-row
 * mode, gathered: store_pg_chunk_gather); a gap or a total other than
 * size is ERR_STORE (store_chunk_take, store_chunk_end), and then what
 * was gathered is not given. */
static int
store_pg_chunk_stream(struct store_pg *s, const struct store_payload_key *k,
    int64_t size, store_read_fn fn, void *ctx, struct err *err)
{
	struct store_pg_chunk_g g = { fn, ctx, { 0 }, 0 };
	struct store_chunk_rd rd = { store_pg_chunk_gather, &g, size, 0, 0 };
	PGresult *res;
	int rc = 0, failed = 0, sent;

	(void)store_pg_chunk_query(s, STORE_PG_CHUNK_SEL, k, &sent, err);
	if (!sent) {
		store_pg_chunk_drain(s, 0);
		return -1;
	}
	while (rc == 0 && (res = store_pg_result(s)) != NULL) {
		switch (PQresultStatus(res)) {
		case PGRES_SINGLE_TUPLE:
			rc = store_pg_chunk_give(res, &rd, err);
			break;
		case PGRES_TUPLES_OK:
			break;
		default:
			rc = store_pg_fail(s, "read payload chunk", res, err);
			failed = 1;
			break;
		}
		PQclear(res);
	}
	store_pg_chunk_drain(s, rc == -1 && !failed);
	if (g.oom) {                  /* not "payload reader stopped" */
		err_clear(err);
		rc = err_set(err, ERR_INTERNAL, NULL, "could not read payload:"
		    " out of memory");
	}
	if (rc == 0)
		rc = store_chunk_end(&rd, err);
	if (rc == 0 && g.b.len > 0)
		rc = store_chunk_give(fn, ctx, g.b.data, g.b.len, err);
	buf_free(&g.b);
	return rc;
}

/* The payload row of k, then (chunked) its chunks: 1, 0 or -1. */
static int
store_pg_chunk_read(struct store_pg *s, const struct store_payload_key *k,
    store_read_fn fn, void *ctx, struct err *err)
{
	PGresult *res = store_pg_chunk_query(s, STORE_PG_CHUNK_PART, k, NULL,
	    err);
	int rc = -1;

	if (res == NULL)
		return -1;
	if (PQntuples(res) == 0)
		rc = 0;
	else if (PQgetisnull(res, 0, 0)) {
		rc = store_chunk_give(fn, ctx, PQgetvalue(res, 0, 1),
		    (size_t)PQgetlength(res, 0, 1), err) == 0 ? 1 : -1;
	} else if (PQgetlength(res, 0, 0) == 8)
		rc = store_pg_chunk_stream(s, k,
		    (int64_t)store_pg_get(PQgetvalue(res, 0, 0), 8), fn, ctx,
		    err) == 0 ? 1 : -1;
	else
		(void)err_set(err, ERR_STORE, NULL,
		    "could not read payload: bad size");
	PQclear(res);
	return rc;
}

/* store_payload_read (store.h) in one read-only snapshot. */
int
store_pg_payload_read(struct store *base, const struct store_payload_key *k,
    store_read_fn fn, void *ctx, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	PGresult *res;
	int rc;

	if (store_pg_begin(s, "BEGIN ISOLATION LEVEL REPEATABLE READ,"
	    " READ ONLY", "begin transaction", err) == -1)
		return -1;
	rc = store_pg_chunk_read(s, k, fn, ctx, err);
	res = store_pg_query(s, rc == -1 ? "ROLLBACK" : "COMMIT");
	if (rc != -1 && PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = store_pg_fail(s, "end transaction", res, err);
	PQclear(res);
	return rc;
}
