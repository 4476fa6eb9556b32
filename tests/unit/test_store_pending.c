/*
 * Unit tests for src/store, content hashes computed while the store works
 * (issue 14; store.h struct store_pending; teststore.h: SQLite and
 * PostgreSQL): a NEW stores the hashes its wait delivered, not the
 * placeholder SQLite writes first (a retry is then a duplicate); a failed
 * wait stores nothing; a probe and a stored row's comparison wait for the
 * hashes; store_accept returns with them in on every outcome.  The wait
 * here fills the hashes itself: the thread that computes them in the
 * gateway (payload_job.c) has tests of its own (test_payload_spool.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "teststore.h"
#include "testutil.h"

/* A part one byte over the threshold: stored in chunks before the wait. */
#define TP_BIG (STORE_CHUNK_THRESHOLD + 1)

/* What the wait delivers, and how often it was called. */
struct tp_wait {
	struct store_pending base;
	struct tmsg *t;
	unsigned char hash_byte;      /* the hashes it fills in */
	int rc;                       /* its answer */
	int calls;
};

static int
tp_wait_cb(void *ctx)
{
	struct tp_wait *w = ctx;

	w->calls++;
	if (w->rc == 0) {
		memset(w->t->m.content_hash, w->hash_byte, STORE_HASH_LEN);
		memset(w->t->m.content_hash_v1, w->hash_byte, STORE_HASH_LEN);
		memset(w->t->fields, w->hash_byte, sizeof(w->t->fields));
	}
	return w->rc;
}

/* t as tmsg_init with a chunked part 1 (big), its hashes pending: zeros
 * until w's wait fills in hash_byte (answering rc). */
static void
tp_msg(struct tmsg *t, struct tp_wait *w, const char *id,
    unsigned char hash_byte, int rc, unsigned char *big)
{
	tmsg_init(t, id, 0, "receipt-pending");
	t->parts[1] = (struct store_part){ 1, "big@as4gw.test",
	    "application/octet-stream", "{}", big, TP_BIG };
	memset(w, 0, sizeof(*w));
	w->base.wait = tp_wait_cb;
	w->base.ctx = w;
	w->t = t;
	w->hash_byte = hash_byte;
	w->rc = rc;
	t->m.pending = &w->base;
}

/* TP_BIG bytes of a pattern (malloc'd). */
static unsigned char *
tp_bytes(void)
{
	unsigned char *p = malloc(TP_BIG);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < TP_BIG; i++)
		p[i] = (unsigned char)((i * 40503u) >> 7);
	return p;
}

/* The stored row's content hash and field digests are hash_byte's. */
static void
tp_stored(const struct tctx *c, unsigned char hash_byte)
{
	unsigned char want[2 * STORE_HASH_LEN], *v;
	size_t len;

	memset(want, hash_byte, sizeof(want));
	v = tq_value(c, "SELECT content_hash FROM inbox", &len);
	assert_int_equal(len, STORE_HASH_LEN);
	assert_memory_equal(v, want, len);
	free(v);
	v = tq_value(c, "SELECT field_hashes FROM inbox", &len);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(v, want, len);
	free(v);
}

/* A NEW: the hashes the wait delivered are stored (the placeholder is
 * gone), its chunks with it; the same content again is a duplicate. */
static void
t_pending_new(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t, again;
	struct tp_wait w;
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tp_msg(&t, &w, "pending-1@as4gw.test", 0x5a, 0, big);
	(void)taccept(s, a, &t, STORE_NEW);
	assert_true(w.calls >= 1);
	tp_stored(c, 0x5a);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT CASE WHEN count(*) > 0 THEN 1 ELSE 0 END"
	    " FROM payload_chunk", 1);
	tmsg_init(&again, "pending-1@as4gw.test", 0x5a, "receipt-again");
	(void)taccept(s, a, &again, STORE_DUPLICATE);
	store_close(s);
	arena_free(a);
	free(big);
}

/* The hashes fail: an error, nothing stored, and the id is still free. */
static void
t_pending_fails(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct tp_wait w;
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tp_msg(&t, &w, "pending-2@as4gw.test", 0x5b, -1, big);
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_non_null(strstr(err.msg, "hash"));
	assert_int_equal(r.outcome, 0);
	assert_true(w.calls >= 1);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM delivery", 0);
	w.rc = 0;                     /* the same message, hashed this time */
	(void)taccept(s, a, &t, STORE_NEW);
	tp_stored(c, 0x5b);
	store_close(s);
	arena_free(a);
	free(big);
}

/* A stored row: a probe, a retry and a drift each wait before they
 * compare (zeros, the placeholder, would be a drift every time). */
static void
t_pending_compared(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t, first;
	struct tp_wait w;
	struct store_result r;
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&first, "pending-3@as4gw.test", 0x5c, "receipt-first");
	(void)taccept(s, a, &first, STORE_NEW);
	tp_msg(&t, &w, "pending-3@as4gw.test", 0x5c, 0, big);
	t.m.receipt = NULL;           /* a probe */
	t.m.receipt_len = 0;
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(r.receipt_len, strlen("receipt-first"));
	assert_true(w.calls >= 1);
	tp_msg(&t, &w, "pending-3@as4gw.test", 0x5c, 0, big);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-first", r.receipt_len);
	tp_msg(&t, &w, "pending-3@as4gw.test", 0x5d, 0, big);
	(void)taccept(s, a, &t, STORE_DRIFT);
	assert_true(w.calls >= 1);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tp_stored(c, 0x5c);
	store_close(s);
	arena_free(a);
	free(big);
}

#define PENDING_TESTS(ctx) \
	BT(t_pending_new, ctx), BT(t_pending_fails, ctx), \
	BT(t_pending_compared, ctx)

static const struct CMUnitTest sqlite_tests[] = {
	PENDING_TESTS(&ctx_sqlite)
};
static const struct CMUnitTest pg_tests[] = {
	PENDING_TESTS(&ctx_pg)
};

int
main(int argc, char **argv)
{
	const struct tstore_groups g = {
		.name = "store pending hashes",
		.sqlite = sqlite_tests, .n_sqlite = TSTORE_N(sqlite_tests),
		.pg = pg_tests, .n_pg = TSTORE_N(pg_tests),
	};

	return tstore_main(argc, argv, &g);
}
