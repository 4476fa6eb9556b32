/*
 * store_pg_copy — the payload rows of a new message with large payloads,
 * streamed into the open accept transaction with COPY FROM STDIN in binary
 * format (store_pg.c decides when: more than STORE_PG_INLINE_MAX bytes).
 * libpq then holds at most about STORE_PG_COPY_CHUNK bytes of them.  A part
 * longer than STORE_CHUNK_THRESHOLD gets a payload row with its size and
 * no content; its bytes follow as payload_chunk rows (store_pg_chunk.c).
 */
#include "store.h"

#include <stdint.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_pg_int.h"
#include "../spool/spool.h"
#include "../util/buf.h"

/* Bytes per CopyData message: what libpq buffers of a streamed payload. */
#define STORE_PG_COPY_CHUNK ((size_t)64 * 1024)

/* COPY of payload rows in binary format (PostgreSQL docs, COPY "Binary
 * Format"; the header is store_pg_int.h's): 8 fields a row. */
#define STORE_PG_COPY_SQL "COPY payload (from_party, message_id, part_no," \
	" content_id, mime_type, properties, content, size)" \
	" FROM STDIN (FORMAT binary)"
#define STORE_PG_COPY_ROW "\0\10"

/* Send b's bytes as one CopyData message and empty b (store_pg_int.h). */
int
store_pg_copy_send(struct store_pg *s, struct buf *b)
{
	int ok = b->len == 0 ||
	    PQputCopyData(s->conn, b->data, (int)b->len) == 1;

	buf_reset(b);
	return ok ? 0 : -1;
}

/*
 * One payload row of the binary COPY: its fields go into b, and so do the
 * content bytes of a small part; a large part's bytes go straight from the
 * caller's memory in chunks; a part longer than STORE_CHUNK_THRESHOLD has
 * content NULL and its size (its chunks follow: store_pg_chunk.c).
 */
static int
store_pg_copy_row(struct store_pg *s, const char *from, const char *id,
    const struct store_part *pt, struct buf *b)
{
	const char *data = (const char *)pt->data;
	uint64_t size = pt->len;
	size_t off, n;

	if (buf_append(b, STORE_PG_COPY_ROW, 2) == -1 ||
	    store_pg_str(b, from) == -1 || store_pg_str(b, id) == -1 ||
	    store_pg_put32(b, 4) == -1 ||
	    store_pg_put32(b, (uint32_t)pt->part_no) == -1 ||
	    store_pg_str(b, pt->content_id) == -1 ||
	    store_pg_str(b, pt->mime_type) == -1 ||
	    store_pg_str(b, pt->properties != NULL ? pt->properties : "{}") ==
	    -1)
		return -1;
	if (pt->len > STORE_CHUNK_THRESHOLD)  /* content NULL, size int8 */
		return store_pg_field(b, NULL, 0) == -1 ||
		    store_pg_put32(b, 8) == -1 ||
		    store_pg_put32(b, (uint32_t)(size >> 32)) == -1 ||
		    store_pg_put32(b, (uint32_t)size) == -1 ? -1 : 0;
	if (store_pg_put32(b, (uint32_t)pt->len) == -1)
		return -1;
	if (pt->len < STORE_PG_COPY_CHUNK)
		return buf_append(b, data != NULL ? data : "", pt->len) == -1 ||
		    store_pg_field(b, NULL, 0) == -1 ? -1 : 0;
	if (store_pg_copy_send(s, b) == -1)
		return -1;
	for (off = 0; off < pt->len; off += n) {
		n = pt->len - off < STORE_PG_COPY_CHUNK ? pt->len - off :
		    STORE_PG_COPY_CHUNK;
		if (PQputCopyData(s->conn, data + off, (int)n) != 1)
			return -1;
	}
	spool_done(data, pt->len);  /* sent: release it behind */
	return store_pg_field(b, NULL, 0);  /* size NULL */
}

/* End the COPY (aborting it unless ok) and read its result
 * (store_pg_int.h). */
int
store_pg_copy_end(struct store_pg *s, int ok, struct err *err)
{
	PGresult *res;
	int rc = 0;

	if (PQputCopyEnd(s->conn, ok ? NULL : "as4gw: payload not sent") != 1)
		rc = store_pg_fail(s, "insert payload", NULL, err);
	while ((res = store_pg_result(s)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st != PGRES_COMMAND_OK)
			rc = store_pg_fail(s, "insert payload", res, err);
		PQclear(res);
		if (st == PGRES_COPY_IN)  /* still copying: ROLLBACK ends it */
			break;
	}
	if (!ok)
		rc = err_set(err, ERR_STORE, NULL,
		    "could not insert payload: sending failed");
	return rc;
}

/*
 * Insert the payload rows of m into the open transaction with COPY FROM
 * STDIN in binary format, streamed: libpq holds at most about
 * STORE_PG_COPY_CHUNK bytes of them at a time.
 */
int
store_pg_copy_parts(struct store_pg *s, const struct store_message *m,
    int chunks, struct err *err)
{
	PGresult *res = store_pg_query(s, STORE_PG_COPY_SQL);
	struct buf b = { 0 };
	size_t i;
	int ok;

	ok = PQresultStatus(res) == PGRES_COPY_IN;
	if (!ok)
		(void)store_pg_fail(s, "insert payload", res, err);
	PQclear(res);
	if (!ok)
		return -1;
	ok = buf_append(&b, STORE_PG_COPY_HEAD,
	    sizeof(STORE_PG_COPY_HEAD) - 1) == 0;
	for (i = 0; ok && i < m->n_parts; i++)
		ok = store_pg_copy_row(s, m->from_party, m->message_id,
		    &m->parts[i], &b) == 0 &&
		    (b.len < STORE_PG_COPY_CHUNK ||
		    store_pg_copy_send(s, &b) == 0);
	ok = ok && buf_append(&b, STORE_PG_COPY_END, 2) == 0 &&
	    store_pg_copy_send(s, &b) == 0;
	buf_free(&b);
	if (store_pg_copy_end(s, ok, err) == -1)
		return -1;
	return chunks ? store_pg_chunk_copy(s, m, err) : 0;
}

