/*
 * store_copy_cut — the payload_chunk rows `as4gw copy` writes into
 * PostgreSQL, cut as the PostgreSQL store cuts them (store_pg_int.h
 * "Payload bytes per payload_chunk row", issue 14): a SQLite chunk row
 * holds 1 MiB (STORE_CHUNK_BYTES), a PostgreSQL one at most
 * store_pg_chunk_len(party, MessageId) bytes, one heap page (migration
 * 010 stores content PLAIN: a 1 MiB row is "too big").  The bytes of one
 * payload part arrive in order (source chunks, or pieces of a payload
 * stored whole) and leave as rows of exactly that length, the last one
 * shorter, chunk_no 0..n-1 per part; one row's bytes are held.
 */
#include "store_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_copy_int.h"
#include "store_pg_int.h"

/* See store_copy_int.h. */
int
store_copy_cut_init(struct store_copy_cut *c, store_copy_cut_put_fn put,
    void *ctx, struct err *err)
{
	memset(c, 0, sizeof(*c));
	if ((c->buf = malloc(STORE_PG_CHUNK_BYTES)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	c->put = put;
	c->ctx = ctx;
	c->part = -1;
	c->row.n = 5;
	c->row.v[2] = c->row.num[2];
	c->row.v[3] = c->row.num[3];
	c->row.v[4] = (const char *)c->buf;
	c->row.fmt[4] = 1;
	return 0;
}

void
store_copy_cut_free(struct store_copy_cut *c)
{
	free(c->buf);
	c->buf = NULL;
}

/* See store_copy_int.h: the keys' row length (never above the buffer). */
void
store_copy_cut_key(struct store_copy_cut *c, const char *from,
    const char *id)
{
	c->row.v[0] = from;
	c->row.v[1] = id;
	c->len = store_pg_chunk_len(from, id);
	c->part = -1;
}

/* The held bytes as the part's next row. */
static int
store_copy_cut_flush(struct store_copy_cut *c, struct err *err)
{
	if (c->fill == 0)
		return 0;
	(void)snprintf(c->row.num[3], sizeof(c->row.num[3]), "%lld",
	    (long long)c->chunk_no);
	c->row.len[4] = (int)c->fill;
	if (c->put(c->ctx, &c->row, err) == -1)
		return -1;
	c->chunk_no++;
	c->rows++;
	c->fill = 0;
	return 0;
}

/* See store_copy_int.h: the rows a part of these bytes must have are
 * counted from its length, not from what was written. */
int
store_copy_cut_end(struct store_copy_cut *c, struct err *err)
{
	if (c->part == -1)
		return 0;
	if (store_copy_cut_flush(c, err) == -1)
		return -1;
	c->want_rows += (c->part_bytes + (int64_t)c->len - 1) / (int64_t)c->len;
	c->bytes += c->part_bytes;
	c->part = -1;
	return 0;
}

/* See store_copy_int.h. */
int
store_copy_cut_feed(struct store_copy_cut *c, int64_t part, const void *p,
    size_t n, struct err *err)
{
	const unsigned char *src = p;
	size_t take;

	if (part != c->part) {
		if (store_copy_cut_end(c, err) == -1)
			return -1;
		c->part = part;
		c->part_bytes = 0;
		c->chunk_no = 0;
		c->fill = 0;
		(void)snprintf(c->row.num[2], sizeof(c->row.num[2]), "%lld",
		    (long long)part);
	}
	c->part_bytes += (int64_t)n;
	while (n > 0) {
		take = c->len - c->fill < n ? c->len - c->fill : n;
		memcpy(c->buf + c->fill, src, take);
		c->fill += take;
		src += take;
		n -= take;
		if (c->fill == c->len && store_copy_cut_flush(c, err) == -1)
			return -1;
	}
	return 0;
}
