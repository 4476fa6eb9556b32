/*
 * Unit tests for src/store, payloads stored in chunks (issue 14; sqlite
 * 007 / postgresql 008, 010; teststore.h: SQLite and PostgreSQL): both
 * sides of the threshold, read back byte-identical, a missing chunk, a
 * reader that stops, a process killed at a fault point, an old database
 * migrated; PostgreSQL: chunk rows of one page each (no TOAST), also with
 * long keys, and chunks of 1 MiB written by older versions still read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teststore.h"
#include "testutil.h"
#include "store/store_pg_int.h"

#define TCH_BELOW STORE_CHUNK_THRESHOLD          /* stored whole */
#define TCH_ABOVE (STORE_CHUNK_THRESHOLD + 1)    /* chunked, the last 1 B */
/* TCH_ABOVE's chunks: SQLite 9 of 1 MiB, PostgreSQL 1049 of 8000 bytes
 * (keys as short as these tests' give STORE_PG_CHUNK_BYTES) */
#define TCH_CHUNK(c) ((c)->pg ? STORE_PG_CHUNK_BYTES : STORE_CHUNK_BYTES)
#define TCH_CHUNKS(c) ((TCH_ABOVE + TCH_CHUNK(c) - 1) / TCH_CHUNK(c))
/* the pieces a reader gets of TCH_ABOVE: a chunk each, except that
 * PostgreSQL gathers chunks of n bytes into pieces of up to
 * STORE_PG_READ_BATCH (SQLite 9, PostgreSQL 33 of 32 chunks) */
#define TCH_PIECE(c, n) ((c)->pg ? STORE_PG_READ_BATCH / (n) * (n) : (n))
#define TCH_PIECES(c, n) ((TCH_ABOVE + TCH_PIECE(c, n) - 1) / TCH_PIECE(c, n))

/* n bytes of a pattern picked by seed (malloc'd). */
static unsigned char *
tch_bytes(size_t n, unsigned seed)
{
	unsigned char *p = malloc(n);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 2654435761u + seed) >> 13);
	return p;
}

/* t with a part of exactly the threshold (part 1) and one a byte over it
 * (part 2) after its <a/> part; the bytes in below / above. */
static void
tch_msg(struct tmsg *t, const char *id, unsigned char hash_byte,
    unsigned char *below, unsigned char *above)
{
	tmsg_init(t, id, hash_byte, "receipt");
	t->parts[1] = (struct store_part){ 1, "below@as4gw.test",
	    "application/octet-stream", NULL, below, TCH_BELOW };
	t->parts[2] = (struct store_part){ 2, "above@as4gw.test",
	    "application/octet-stream", "{}", above, TCH_ABOVE };
	t->m.n_parts = 3;
}

/* What store_payload_read gave: the bytes, in how many pieces. */
struct tch_read {
	unsigned char *buf;
	size_t len, cap, pieces, max_piece;
	size_t stop_after;            /* 0: never stop; else after n pieces */
};

static int
tch_read_cb(void *ctx, const unsigned char *p, size_t n)
{
	struct tch_read *r = ctx;

	if (r->stop_after != 0 && r->pieces == r->stop_after)
		return -1;
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2;
		r->buf = realloc(r->buf, r->cap);
		assert_non_null(r->buf);
	}
	memcpy(r->buf + r->len, p, n);
	r->len += n;
	r->pieces++;
	if (n > r->max_piece)
		r->max_piece = n;
	return 0;
}

/* store_payload_read of (TSENDER, id, part_no): its answer, r filled. */
static int
tch_read(struct store *s, const char *id, int part_no, struct tch_read *r,
    struct err *err)
{
	struct store_payload_key k = { TSENDER, id, part_no };

	return store_payload_read(s, &k, tch_read_cb, r, err);
}

/* Read part_no of id and compare it with want[0, len). */
static void
tch_expect(struct store *s, const char *id, int part_no,
    const unsigned char *want, size_t len, size_t pieces)
{
	struct tch_read r = { 0 };
	struct err err = { 0 };

	if (tch_read(s, id, part_no, &r, &err) != 1)
		fail_msg("store_payload_read %s/%d: %s", id, part_no, err.msg);
	assert_int_equal(r.len, len);
	assert_int_equal(r.pieces, pieces);
	assert_true(r.max_piece <= (pieces > 1 ? STORE_CHUNK_BYTES : len));
	if (len > 0)
		assert_memory_equal(r.buf, want, len);
	free(r.buf);
}

/*
 * Both sides of the threshold: a part of exactly STORE_CHUNK_THRESHOLD
 * bytes stays whole in payload.content, one a byte longer becomes nine
 * chunk rows (its payload row: size, no content); both read back
 * byte-identical, the claim hands the chunked one over by size, find
 * reports its size; a duplicate and a drift write no chunk; the purge
 * takes the chunks with their rows.
 */
static void
t_chunk_roundtrip(void **state)
{
	struct tctx *c = *state;
	unsigned char *below = tch_bytes(TCH_BELOW, 1);
	unsigned char *above = tch_bytes(TCH_ABOVE, 2);
	struct store_purge p = { 0 };
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t n1, n2;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tch_msg(&t, "ch-1", 0x51, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NULL", 2);
	tcountf(c, 1, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " size = %zu AND (content IS NULL OR length(content) = 0)",
	    TCH_ABOVE);
	tcount(c, "SELECT count(*) FROM payload_chunk WHERE part_no = 2",
	    TCH_CHUNKS(c));
	tcount(c, "SELECT sum(length(content)) FROM payload_chunk",
	    (int64_t)TCH_ABOVE);
	tcount(c, "SELECT max(chunk_no) FROM payload_chunk", TCH_CHUNKS(c) - 1);
	tch_expect(s, "ch-1", 2, above, TCH_ABOVE, 
	    TCH_PIECES(c, TCH_CHUNK(c)));
	tch_expect(s, "ch-1", 1, below, TCH_BELOW, 1);
	tch_expect(s, "ch-1", 0, (const unsigned char *)"<a/>", 4, 1);
	assert_int_equal(tch_read(s, "ch-1", 3, &(struct tch_read){ 0 },
	    &err), 0);
	assert_int_equal(store_find(s, "ch-1", NULL, a, &f, &err), 1);
	assert_int_equal(f->n_parts, 3);
	assert_int_equal(f->parts[1].size, (int64_t)TCH_BELOW);
	assert_int_equal(f->parts[2].size, (int64_t)TCH_ABOVE);
	/* the claim carries bytes up to STORE_CLAIM_INLINE_MAX, sizes else */
	d = tclaim(s, a, 1000, 1000, "ch-1");
	assert_int_equal(d.n_parts, 3);
	assert_false(store_part_streamed(&d.parts[0]));
	assert_memory_equal(d.parts[0].data, "<a/>", 4);
	assert_true(store_part_streamed(&d.parts[1]));
	assert_int_equal(d.parts[1].len, TCH_BELOW);
	assert_true(store_part_streamed(&d.parts[2]));
	assert_int_equal(d.parts[2].len, TCH_ABOVE);
	/* a retry: the stored receipt, no chunk written twice */
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	tch_msg(&t, "ch-1", 0x52, below, above);   /* drift */
	(void)taccept(s, a, &t, STORE_DRIFT);
	tcount(c, "SELECT count(*) FROM payload_chunk", TCH_CHUNKS(c));
	tch_msg(&t, "ch-2", 0x53, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload_chunk", 2 * TCH_CHUNKS(c));
	p.default_cutoff_ms = T0 + 86400000;
	p.batch = 100;
	p.undelivered = 1;
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), 0);
	assert_int_equal(n1, 2);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	assert_int_equal(tch_read(s, "ch-2", 2, &(struct tch_read){ 0 },
	    &err), 0);
	free(below);
	free(above);
	store_close(s);
	arena_free(a);
}

/*
 * A chunk missing is an error, never a short payload that looks whole; a
 * reader that stops ends the read (PostgreSQL: the query is cancelled and
 * the connection works on).
 */
static void
t_chunk_gap(void **state)
{
	struct tctx *c = *state;
	unsigned char *below = tch_bytes(TCH_BELOW, 3);
	unsigned char *above = tch_bytes(TCH_ABOVE, 4);
	struct tch_read r = { .stop_after = 2 };
	struct err err = { 0 };
	char sql[128];
	struct arena *a;
	struct store *s;
	struct tmsg t;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tch_msg(&t, "gap-1", 0x61, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	tch_msg(&t, "gap-2", 0x62, below, above);
	(void)taccept(s, a, &t, STORE_NEW);
	assert_int_equal(tch_read(s, "gap-1", 2, &r, &err), -1);
	assert_int_equal(r.pieces, 2);
	free(r.buf);
	tch_expect(s, "gap-1", 2, above, TCH_ABOVE, 
	    TCH_PIECES(c, TCH_CHUNK(c)));
	tq_exec(c, "DELETE FROM payload_chunk WHERE message_id = 'gap-1'"
	    " AND chunk_no = 3");
	memset(&r, 0, sizeof(r));
	err_clear(&err);
	assert_int_equal(tch_read(s, "gap-1", 2, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	/* SQLite: the chunks before the gap were given; PostgreSQL: they
	 * were still being gathered and are not (a failed read either way) */
	assert_int_equal(r.len, c->pg ? 0 : 3 * STORE_CHUNK_BYTES);
	free(r.buf);
	(void)snprintf(sql, sizeof(sql), "DELETE FROM payload_chunk"
	    " WHERE message_id = 'gap-2' AND chunk_no = %zu",
	    TCH_CHUNKS(c) - 1);   /* the last */
	tq_exec(c, sql);
	memset(&r, 0, sizeof(r));
	err_clear(&err);
	assert_int_equal(tch_read(s, "gap-2", 2, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	free(r.buf);
	tch_expect(s, "gap-2", 1, below, TCH_BELOW, 1);
	free(below);
	free(above);
	store_close(s);
	arena_free(a);
}

/* A process killed at a store fault point while storing a message with a
 * chunked payload leaves no row and no chunk. */
static void
t_chunk_fault(void **state)
{
#ifdef AS4GW_FAULT_INJECTION
	struct tctx *c = *state;

	NEED(c);
	store_close(topen(c));
	assert_int_equal(setenv("TSTORE_CHILD_BIG", "1", 1), 0);
	tfault_child(c, "store.after-insert");
	tfault_child(c, "store.before-commit");
	assert_int_equal(unsetenv("TSTORE_CHILD_BIG"), 0);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
#else
	(void)state;
	testutil_skip("built without -Dfault_injection=true");
#endif
}

/*
 * A database of the previous version (every migration before sqlite 007 /
 * postgresql 008) with rows in it takes the chunk migration: the rows stay
 * whole (size NULL), are claimed and read back as before; new large
 * payloads go in chunks.
 */
static void
t_migrate_chunk_rows(void **state)
{
	static const char *const sq[] = { "003_party_key.sql",
	    "004_delivery_error.sql", "005_business_key.sql",
	    "006_purge_log.sql" };
	static const char *const pg[] = { "004_party_key.sql",
	    "005_delivery_error.sql", "006_business_key.sql",
	    "007_purge_log.sql" };
	struct tctx *c = *state;
	unsigned char *above = tch_bytes(TCH_ABOVE, 5);
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t i;

	NEED(c);
	a = arena_new(0);
	told_database(c);
	for (i = 0; i < 4; i++)
		told_migration(c, c->pg ? pg[i] : sq[i]);
	s = topen(c);   /* migrates: the chunk table */
	/* pg: and 009, 010, 011, 012 */
	assert_int_equal(s->migrated, c->pg ? 5 : 1);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NULL", 2);
	assert_int_equal(store_find(s, "old-1", "A", a, &f, &err), 1);
	assert_int_equal(f->parts[0].size, 2);
	assert_int_equal(f->parts[1].size, 0);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.message_id, "old-1");
	assert_int_equal(d.n_parts, 2);
	assert_false(store_part_streamed(&d.parts[0]));
	assert_false(store_part_streamed(&d.parts[1]));
	assert_memory_equal(d.parts[0].data, "\x00\xff", 2);
	{
		struct store_payload_key k = { "A", "old-1", 0 };
		struct tch_read r = { 0 };

		assert_int_equal(store_payload_read(s, &k, tch_read_cb, &r,
		    &err), 1);
		assert_int_equal(r.len, 2);
		assert_memory_equal(r.buf, "\x00\xff", 2);
		free(r.buf);
	}
	tch_msg(&t, "new-1", 0x71, above, above);
	t.parts[1].len = 3;
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload_chunk", TCH_CHUNKS(c));
	tch_expect(s, "new-1", 2, above, TCH_ABOVE, 
	    TCH_PIECES(c, TCH_CHUNK(c)));
	free(above);
	store_close(s);
	arena_free(a);
}

/* PostgreSQL: the rows of the chunks of message id: one heap page each
 * (8 KiB pages hold one such tuple only, so pages == rows), content
 * inline and uncompressed, nothing ever written to the table's TOAST. */
static void
tch_pages(const struct tctx *c, const char *id, int64_t rows)
{
	tcountf(c, rows, "SELECT count(*) FROM payload_chunk"
	    " WHERE message_id = '%s'", id);
	tcount(c, "SELECT count(*) FROM payload_chunk WHERE"
	    " pg_column_compression(content) IS NOT NULL", 0);
	tcount(c, "SELECT count(*) - count(DISTINCT (ctid::text::point)[0])"
	    " FROM payload_chunk", 0);
	tcount(c, "SELECT pg_relation_size('payload_chunk') / 8192 - count(*)"
	    " FROM payload_chunk", 0);
	tcount(c, "SELECT pg_relation_size(reltoastrelid) FROM pg_class"
	    " WHERE oid = 'payload_chunk'::regclass", 0);
}

/*
 * PostgreSQL (010_payload_chunk_plain.sql): chunks of STORE_PG_CHUNK_BYTES
 * stored PLAIN, one row on one page and none in TOAST; a message with a
 * MessageId of the longest kind (255 bytes) gets chunks a little shorter
 * (store_pg_chunk_len) and its rows fit their page too, keys inline.
 * Both read back byte-identical, one piece per chunk.
 */
static void
t_chunk_pages(void **state)
{
	struct tctx *c = *state;
	unsigned char *above = tch_bytes(TCH_ABOVE, 6);
	char id[STORE_MESSAGE_ID_MAX + 1];
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t n;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tcount(c, "SELECT count(*) FROM pg_attribute WHERE attrelid ="
	    " 'payload_chunk'::regclass AND attname = 'content'"
	    " AND attstorage = 'p'", 1);
	tch_msg(&t, "pg-1", 0x81, above, above);
	t.parts[1].len = 3;
	(void)taccept(s, a, &t, STORE_NEW);
	tch_pages(c, "pg-1", (int64_t)TCH_CHUNKS(c));
	tcount(c, "SELECT count(*) FROM payload_chunk WHERE message_id ="
	    " 'pg-1' AND length(content) <> 8000", 1);   /* the last */
	tch_expect(s, "pg-1", 2, above, TCH_ABOVE, 
	    TCH_PIECES(c, TCH_CHUNK(c)));
	memset(id, 'x', STORE_MESSAGE_ID_MAX);
	id[STORE_MESSAGE_ID_MAX] = '\0';
	n = store_pg_chunk_len(TSENDER, id);
	assert_true(n < STORE_PG_CHUNK_BYTES && n > 7000);
	tch_msg(&t, id, 0x82, above, above);
	t.parts[1].len = 3;
	(void)taccept(s, a, &t, STORE_NEW);
	tcountf(c, (int64_t)n, "SELECT max(length(content)) FROM"
	    " payload_chunk WHERE message_id = '%s'", id);
	tch_pages(c, id, (int64_t)((TCH_ABOVE + n - 1) / n));
	tch_expect(s, id, 2, above, TCH_ABOVE, TCH_PIECES(c, n));
	free(above);
	store_close(s);
	arena_free(a);
}

/*
 * PostgreSQL: a payload stored by an older version, in chunks of 1 MiB
 * (TOASTed, 009's EXTERNAL storage), is still read back whole and in
 * order after 010, one 1 MiB piece per chunk; the purge takes them.
 */
static void
t_chunk_old_size(void **state)
{
	struct tctx *c = *state;
	unsigned char *above = tch_bytes(TCH_ABOVE, 7);
	struct store_purge p = { 0 };
	struct err err = { 0 };
	struct arena *a;
	struct store *s;
	struct tmsg t;
	size_t n1, n2;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tch_msg(&t, "old-c", 0x91, above, above);
	t.parts[1].len = 3;
	(void)taccept(s, a, &t, STORE_NEW);
	/* its chunks as the older version wrote them: 1 MiB each, TOAST */
	tq_exec(c, "ALTER TABLE payload_chunk ALTER COLUMN content SET"
	    " STORAGE EXTERNAL;"
	    " CREATE TEMP TABLE whole AS SELECT from_party, message_id,"
	    " part_no, string_agg(content, ''::bytea ORDER BY chunk_no) AS b"
	    " FROM payload_chunk GROUP BY 1, 2, 3;"
	    " DELETE FROM payload_chunk;"
	    " INSERT INTO payload_chunk SELECT from_party, message_id,"
	    " part_no, g, substring(b FROM g * 1048576 + 1 FOR 1048576)"
	    " FROM whole, generate_series(0, (length(b) - 1) / 1048576) g;"
	    " ALTER TABLE payload_chunk ALTER COLUMN content SET"
	    " STORAGE PLAIN");
	tcount(c, "SELECT count(*) FROM payload_chunk WHERE length(content) ="
	    " 1048576", 8);
	tcount(c, "SELECT (pg_relation_size(reltoastrelid) > 0)::int FROM pg_class"
	    " WHERE oid = 'payload_chunk'::regclass", 1);
	tch_expect(s, "old-c", 2, above, TCH_ABOVE, 9);
	p.default_cutoff_ms = T0 + 86400000;
	p.batch = 100;
	p.undelivered = 1;
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), 0);
	assert_int_equal(n1, 1);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	free(above);
	store_close(s);
	arena_free(a);
}

#define CHUNK_TESTS(ctx) \
	BT(t_chunk_roundtrip, ctx), BT(t_chunk_gap, ctx), \
	BT(t_migrate_chunk_rows, ctx), BT(t_chunk_fault, ctx)
#define CHUNK_PG_ONLY \
	BT(t_chunk_pages, &ctx_pg), BT(t_chunk_old_size, &ctx_pg)

TSTORE_MAIN("store chunk", CHUNK_TESTS, CHUNK_PG_ONLY)
