/*
 * Unit tests for src/store, purge (issue 4; teststore.h: SQLite and
 * PostgreSQL): per-leg cutoffs, undelivered rows, batches, refused
 * arguments.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>

#include "teststore.h"
#include "testutil.h"

/* Mark every delivery row done (set-up for the purge tests). */
static void
tdone_all(const struct tctx *c)
{
	tq_exec(c, "UPDATE delivery SET state = 'done'");
}

/* Per-leg cutoffs, the default for other and no legs, escaping of ids. */
static void
t_purge_cutoffs(void **state)
{
	static const char *const ids[] = { "leg-1", "leg-2", "le\"g\\1" };
	static const int64_t cut[] = { T0 + 400, T0 + 50, T0 + 700 };
	struct tctx *c = *state;
	struct store_purge p = { .pmode_ids = ids, .cutoffs_ms = cut,
	    .n_legs = 3, .default_cutoff_ms = T0 + 350, .batch = 100 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 99, kept = 99;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "p-a", 100, "leg-1");    /* past leg-1: purged */
	tput(s, a, "p-b", 500, "leg-1");    /* before leg-1's cutoff */
	tput(s, a, "p-c", 100, "leg-2");    /* before leg-2's cutoff */
	tput(s, a, "p-d", 100, NULL);       /* past the default: purged */
	tput(s, a, "p-e", 300, "leg-x");    /* past the default: purged */
	tput(s, a, "p-f", 600, "le\"g\\1"); /* past its own: purged */
	tput(s, a, "p-g", 400, "leg-x");    /* before the default */
	tdone_all(c);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 4);
	assert_int_equal(kept, 0);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id"
	    " IN ('p-b', 'p-c', 'p-g')", 3);
	tcount(c, "SELECT count(*) FROM inbox", 3);
	tcount(c, "SELECT count(*) FROM payload", 6);
	tcount(c, "SELECT count(*) FROM delivery", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE message_id NOT IN"
	    " (SELECT message_id FROM inbox)", 0);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	store_close(s);
	arena_free(a);
}

/* Undelivered rows are kept (and counted) unless undelivered is set; a
 * row without a delivery row counts as delivered. */
static void
t_purge_undelivered(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0 + 1000, .batch = 100 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 0, kept = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "u-ready", 100, NULL);
	tput(s, a, "u-claimed", 200, NULL);
	tput(s, a, "u-done", 300, NULL);
	tput(s, a, "u-nodeliv", 400, NULL);
	tput(s, a, "u-new", 5000, NULL);
	tq_exec(c, "UPDATE delivery SET state = 'claimed', claimed_at ="
	    " created_at WHERE message_id = 'u-claimed'");
	tq_exec(c, "UPDATE delivery SET state = 'done'"
	    " WHERE message_id = 'u-done'");
	tq_exec(c, "DELETE FROM delivery WHERE message_id = 'u-nodeliv'");
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 2);
	assert_int_equal(kept, 2);
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(kept, 2);
	p.undelivered = 1;
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 2);
	assert_int_equal(kept, 0);
	tcount(c, "SELECT count(*) FROM inbox WHERE message_id = 'u-new'", 1);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	store_close(s);
	arena_free(a);
}

/* At most batch rows per call, oldest first; kept capped at batch. */
static void
t_purge_batch(void **state)
{
	static const size_t want[] = { 2, 2, 1, 0 };
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0 + 1000, .batch = 2 };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };
	size_t purged = 0, kept = 0, i;
	char id[16];

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	for (i = 1; i <= 5; i++) {
		(void)snprintf(id, sizeof(id), "b-%zu", i);
		tput(s, a, id, (int64_t)(600 - i * 100), NULL);  /* b-5 oldest */
	}
	tdone_all(c);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
		assert_int_equal(purged, want[i]);
		assert_int_equal(kept, 0);
		if (i == 0)
			tcount(c, "SELECT count(*) FROM inbox WHERE message_id"
			    " IN ('b-1', 'b-2', 'b-3')", 3);
	}
	for (i = 1; i <= 5; i++) {
		(void)snprintf(id, sizeof(id), "k-%zu", i);
		tput(s, a, id, (int64_t)(i * 100), NULL);
	}
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(purged, 0);
	assert_int_equal(kept, 2);
	p.batch = 10;
	assert_int_equal(store_purge(s, &p, &purged, &kept, &err), 0);
	assert_int_equal(kept, 5);
	store_close(s);
	arena_free(a);
}

/* A purge built wrongly is refused; the counters stay untouched. */
static void
t_purge_invalid(void **state)
{
	static const char *const null_id[] = { NULL };
	static const int64_t cut[] = { T0 };
	struct tctx *c = *state;
	const struct store_purge bad[] = {
		{ .batch = 0 },
		{ .batch = (size_t)INT32_MAX + 1 },
		{ .batch = 1, .n_legs = 1, .cutoffs_ms = cut },
		{ .batch = 1, .n_legs = 1, .pmode_ids = null_id },
		{ .batch = 1, .n_legs = 1, .pmode_ids = null_id,
		  .cutoffs_ms = cut },
	};
	struct store *s;
	struct err err;
	size_t purged = 77, kept = 88, i;

	NEED(c);
	s = topen(c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err_clear(&err);
		if (store_purge(s, &bad[i], &purged, &kept, &err) != -1 ||
		    err.kind != ERR_INTERNAL)
			fail_msg("invalid purge %zu accepted", i);
		assert_int_equal(purged, 77);
		assert_int_equal(kept, 88);
	}
	store_close(s);
}

#define PURGE_TESTS(ctx) \
	BT(t_purge_cutoffs, ctx), BT(t_purge_undelivered, ctx), \
	BT(t_purge_batch, ctx), BT(t_purge_invalid, ctx)

TSTORE_MAIN("store purge", PURGE_TESTS, TSTORE_PG_NONE)
