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

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	/* run at the first call, before the hashes are in (may be NULL) */
	void (*during)(struct tp_wait *w);
	const struct tctx *c;
	long long seen;               /* what during saw */
	pthread_mutex_t *mu;          /* the race of t_early_conflict */
	pthread_cond_t *cv;
	int *state;
	unsigned char v1_byte;        /* lazy version 1 (tp_lazy) */
	int v1_rc, v1_calls;
};

/* store_pending.v1: fills content_hash_v1 with v1_byte, answers v1_rc. */
static int
tp_v1_cb(void *ctx)
{
	struct tp_wait *w = ctx;

	w->v1_calls++;
	if (w->v1_rc == 0)
		memset(w->t->m.content_hash_v1, w->v1_byte, STORE_HASH_LEN);
	return w->v1_rc;
}

/* w's version 1 hash only on demand: v1_byte, answering rc. */
static void
tp_lazy(struct tp_wait *w, unsigned char v1_byte, int rc)
{
	w->base.v1 = tp_v1_cb;
	w->v1_byte = v1_byte;
	w->v1_rc = rc;
}

static int
tp_wait_cb(void *ctx)
{
	struct tp_wait *w = ctx;

	if (w->calls++ == 0 && w->during != NULL)
		w->during(w);
	if (w->rc == 0) {
		memset(w->t->m.content_hash, w->hash_byte, STORE_HASH_LEN);
		if (w->base.v1 == NULL)   /* else only tp_v1_cb fills it */
			memset(w->t->m.content_hash_v1, w->hash_byte,
			    STORE_HASH_LEN);
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

/* PostgreSQL's chunks ahead of the decision (store_pg_early.c). */

/* during: how many of the store's connections sit in a transaction whose
 * last statement was the chunks' COPY (the accept's, waiting for us). */
static void
tp_copied(struct tp_wait *w)
{
	char sql[512];

	(void)snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity"
	    " WHERE application_name = '%s' AND state = 'idle in transaction'"
	    " AND query LIKE 'COPY payload_chunk %%'", w->c->app);
	w->seen = tq_int(w->c, sql);
}

/* The chunks are COPYed while the hashes are pending, and a NEW keeps
 * them: every chunk row of the part is stored, in order. */
static void
t_early_chunks_first(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct tp_wait w;
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tp_msg(&t, &w, "early-1@as4gw.test", 0x61, 0, big);
	w.during = tp_copied;
	w.c = c;
	(void)taccept(s, a, &t, STORE_NEW);
	assert_int_equal(w.seen, 1);
	tp_stored(c, 0x61);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NOT NULL", 1);
	tcount(c, "SELECT count(*) FROM (SELECT chunk_no, row_number() OVER"
	    " (ORDER BY chunk_no) - 1 AS k FROM payload_chunk) AS x"
	    " WHERE chunk_no <> k", 0);
	tcount(c, "SELECT sum(octet_length(content)) FROM payload_chunk",
	    (int64_t)TP_BIG);
	store_close(s);
	arena_free(a);
	free(big);
}

/* during: another connection stores the same MessageId (small parts, no
 * chunks; hash byte w->seen) and commits. */
static void
tp_racer(struct tp_wait *w)
{
	struct arena *a = arena_new(0);
	struct store *s = topen(w->c);
	struct tmsg r;

	tmsg_init(&r, w->t->m.message_id, (unsigned char)w->seen,
	    "receipt-racer");
	(void)taccept(s, a, &r, STORE_NEW);
	store_close(s);
	arena_free(a);
}

/* A row stored while the chunks were going in: the decision is made
 * against it, the chunks are rolled back, and the answer is the usual
 * one: a DUPLICATE with the stored Receipt, counted once; a DRIFT. */
static void
t_early_raced(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct store_result r;
	struct tmsg t;
	struct tp_wait w;
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tp_msg(&t, &w, "early-2@as4gw.test", 0x62, 0, big);
	w.during = tp_racer;
	w.c = c;
	w.seen = 0x62;
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(r.receipt_len, strlen("receipt-racer"));
	assert_memory_equal(r.receipt, "receipt-racer", r.receipt_len);
	tcount(c, "SELECT duplicates FROM inbox", 1);
	tp_msg(&t, &w, "early-3@as4gw.test", 0x63, 0, big);
	w.during = tp_racer;
	w.c = c;
	w.seen = 0x64;
	(void)taccept(s, a, &t, STORE_DRIFT);
	tcount(c, "SELECT count(*) FROM inbox", 2);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	tcount(c, "SELECT count(*) FROM payload WHERE size IS NOT NULL", 0);
	store_close(s);
	arena_free(a);
	free(big);
}

/* The first request of a race, on its own thread: its hashes are held
 * back until the main thread lets them go (state 2). */
struct tp_first {
	const struct tctx *c;
	struct tmsg t;
	struct tp_wait w;
	unsigned char *big;
	int rc;
	enum store_outcome outcome;
	unsigned char receipt[64];    /* the answer's first bytes */
};

static void
tp_hold(struct tp_wait *w)
{
	pthread_mutex_lock(w->mu);
	*w->state = 1;
	pthread_cond_broadcast(w->cv);
	while (*w->state != 2)
		pthread_cond_wait(w->cv, w->mu);
	pthread_mutex_unlock(w->mu);
}

/* No cmocka assertion on this thread: the main thread checks rc. */
static void *
tp_first_run(void *arg)
{
	struct tp_first *f = arg;
	struct arena *a = arena_new(0);
	struct store *s = NULL;
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };

	f->rc = -1;
	if (a != NULL && store_open(f->c->dsn, &s, &err) == 0) {
		f->rc = store_accept(s, &f->t.m, a, &r, &err);
		f->outcome = r.outcome;
		if (r.receipt != NULL)
			memcpy(f->receipt, r.receipt, r.receipt_len <
			    sizeof(f->receipt) ? r.receipt_len :
			    sizeof(f->receipt));
		store_close(s);
	}
	arena_free(a);
	return NULL;
}

/* Wait (up to 30 s) until one of the store's connections waits for a
 * lock: the second request's COPY, on the first request's chunk rows. */
static void
tp_until_blocked(const struct tctx *c)
{
	char sql[512];
	int i;

	(void)snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity"
	    " WHERE application_name = '%s' AND wait_event_type = 'Lock'",
	    c->app);
	for (i = 0; i < 3000 && tq_int(c, sql) == 0; i++)
		(void)nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	if (i == 3000)
		fail_msg("the second request never waited for the first's rows");
}

/* Request f of a race: big's message with receipt, hashes 0x65. */
static void
tp_first_init(struct tp_first *f, const struct tctx *c, unsigned char *big,
    const char *receipt)
{
	memset(f, 0, sizeof(*f));
	f->c = c;
	f->big = big;
	tp_msg(&f->t, &f->w, "early-4@as4gw.test", 0x65, 0, big);
	f->t.m.receipt = (const unsigned char *)receipt;
	f->t.m.receipt_len = strlen(receipt);
}

/* Two requests with one MessageId, both ahead with their chunks: the
 * second's COPY waits on the first's rows, fails on the key once the
 * first commits, and the usual path answers it DUPLICATE with the first's
 * Receipt; one row, counted once, its chunks once. */
static void
t_early_conflict(void **state)
{
	struct tctx *c = *state;
	pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	struct tp_first *f = calloc(2, sizeof(*f));
	unsigned char *big = tp_bytes();
	pthread_t tid[2];
	int held = 0;

	NEED(c);
	assert_non_null(f);
	store_close(topen(c));        /* the tables */
	tp_first_init(&f[0], c, big, "receipt-first");
	f[0].w.during = tp_hold;
	f[0].w.mu = &mu;
	f[0].w.cv = &cv;
	f[0].w.state = &held;
	tp_first_init(&f[1], c, big, "receipt-second");
	assert_int_equal(pthread_create(&tid[0], NULL, tp_first_run, &f[0]),
	    0);
	pthread_mutex_lock(&mu);
	while (held != 1)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	/* the first's chunks are in, its hashes held: the second starts */
	assert_int_equal(pthread_create(&tid[1], NULL, tp_first_run, &f[1]),
	    0);
	tp_until_blocked(c);
	pthread_mutex_lock(&mu);
	held = 2;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	assert_int_equal(pthread_join(tid[0], NULL), 0);
	assert_int_equal(pthread_join(tid[1], NULL), 0);
	assert_int_equal(f[0].rc, 0);
	assert_int_equal(f[0].outcome, STORE_NEW);
	assert_int_equal(f[1].rc, 0);
	assert_int_equal(f[1].outcome, STORE_DUPLICATE);
	assert_memory_equal(f[1].receipt, "receipt-first",
	    strlen("receipt-first"));
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT duplicates FROM inbox", 1);
	tcount(c, "SELECT sum(octet_length(content)) FROM payload_chunk",
	    (int64_t)TP_BIG);
	free(f);
	free(big);
}

/* Version 1 on demand: a retry of a row stored with a version 2 hash
 * never asks for it; one of a row stored before the field digests (none
 * stored) asks, then compares with it: a DUPLICATE when it matches, a
 * DRIFT when not, an error (nothing changed) when it cannot be computed. */
static void
t_pending_lazy_v1(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct store_result r;
	struct err err = { 0 };
	struct tmsg t, old;
	struct tp_wait w;
	unsigned char *big = tp_bytes();

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&old, "lazy-1@as4gw.test", 0x71, "receipt-v2");
	(void)taccept(s, a, &old, STORE_NEW);
	tp_msg(&t, &w, "lazy-1@as4gw.test", 0x71, 0, big);
	tp_lazy(&w, 0x7f, 0);
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	assert_int_equal(w.v1_calls, 0);
	/* a version 1 row: its hash is the message's version 1 hash */
	tmsg_init(&old, "lazy-2@as4gw.test", 0x72, "receipt-v1");
	old.m.field_hashes = NULL;
	old.m.field_hashes_len = 0;
	(void)taccept(s, a, &old, STORE_NEW);
	tcount(c, "SELECT count(*) FROM inbox WHERE field_hashes IS NULL", 1);
	tp_msg(&t, &w, "lazy-2@as4gw.test", 0x73, 0, big);
	tp_lazy(&w, 0x72, 0);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-v1", r.receipt_len);
	assert_true(w.v1_calls >= 1);
	tp_msg(&t, &w, "lazy-2@as4gw.test", 0x73, 0, big);
	tp_lazy(&w, 0x74, 0);
	(void)taccept(s, a, &t, STORE_DRIFT);
	assert_true(w.v1_calls >= 1);
	tp_msg(&t, &w, "lazy-2@as4gw.test", 0x73, 0, big);
	tp_lazy(&w, 0x72, -1);
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	tcount(c, "SELECT duplicates FROM inbox"
	    " WHERE message_id = 'lazy-2@as4gw.test'", 1);
	tcount(c, "SELECT count(*) FROM inbox", 2);
	tcount(c, "SELECT count(*) FROM payload_chunk", 0);
	store_close(s);
	arena_free(a);
	free(big);
}

#define PENDING_TESTS(ctx) \
	BT(t_pending_new, ctx), BT(t_pending_fails, ctx), \
	BT(t_pending_compared, ctx), BT(t_pending_lazy_v1, ctx)

static const struct CMUnitTest sqlite_tests[] = {
	PENDING_TESTS(&ctx_sqlite)
};
static const struct CMUnitTest pg_tests[] = {
	PENDING_TESTS(&ctx_pg),
	BT(t_early_chunks_first, &ctx_pg), BT(t_early_raced, &ctx_pg),
	BT(t_early_conflict, &ctx_pg),
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
