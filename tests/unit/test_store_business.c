/*
 * Unit tests for src/store, business keys (issue 12 item 4; teststore.h:
 * SQLite and PostgreSQL): refused, flagged, per party, under a race of 16
 * connections, carried by find and claim, freed by a purge.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "teststore.h"
#include "testutil.h"

/*
 * Issue 12 item 4: 16 connections accept 16 MessageIds carrying one
 * business key at once under refuse: exactly one stored, every other
 * refused naming it, nothing of theirs stored.
 */
static void
t_business_race_refuse(void **state)
{
	struct tctx *c = *state;
	struct tthread th[N_THREADS];
	int i, n_new = 0, winner = -1;

	NEED(c);
	store_close(topen(c));
	trun_threads_biz(c, th, N_THREADS, 0, STORE_BUSINESS_REFUSE);
	for (i = 0; i < N_THREADS; i++)
		if (th[i].outcome == STORE_NEW) {
			n_new++;
			winner = i;
			assert_string_equal(th[i].dup_of, "");
		}
	assert_int_equal(n_new, 1);
	for (i = 0; i < N_THREADS; i++)
		if (i != winner) {
			assert_int_equal(th[i].outcome, STORE_BUSINESS_DUP);
			assert_string_equal(th[i].dup_of, th[winner].id);
		}
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE business_key = '"
	    TBIZKEY "' AND business_duplicate_of IS NULL", 1);
}

/* The same race under flag: all 16 stored, one holder, 15 marked with it. */
static void
t_business_race_flag(void **state)
{
	struct tctx *c = *state;
	struct tthread th[N_THREADS];
	int i, holder = -1;

	NEED(c);
	store_close(topen(c));
	trun_threads_biz(c, th, N_THREADS, 0, STORE_BUSINESS_FLAG);
	for (i = 0; i < N_THREADS; i++) {
		if (th[i].outcome != STORE_NEW)
			fail_msg("thread %d: outcome %d (%s)", i,
			    (int)th[i].outcome, th[i].msg);
		if (th[i].dup_of[0] == '\0') {
			assert_int_equal(holder, -1);
			holder = i;
		}
	}
	assert_true(holder >= 0);
	for (i = 0; i < N_THREADS; i++)
		if (i != holder)
			assert_string_equal(th[i].dup_of, th[holder].id);
	tcount(c, "SELECT count(*) FROM inbox", N_THREADS);
	tcount(c, "SELECT count(*) FROM delivery", N_THREADS);
	tcount(c, "SELECT count(*) FROM inbox WHERE business_duplicate_of"
	    " IS NULL", 1);
	tcountf(c, N_THREADS - 1, "SELECT count(*) FROM inbox WHERE"
	    " business_duplicate_of = '%s'", th[holder].id);
}

/*
 * One party's business key across MessageIds (store.h "store_accept"):
 * refused, flagged, a retry of the same MessageId always the plain
 * duplicate, another party's key its own, a probe never refused; find and
 * claim carry key and mark; a purged holder frees the key.
 */
static void
t_business_key(void **state)
{
	struct tctx *c = *state;
	struct arena *a = arena_new(0);
	struct store_found *f = NULL;
	struct store_delivery d;
	struct err err = { 0 };
	struct store *s;
	struct tmsg t;

	NEED(c);
	assert_non_null(a);
	s = topen(c);
	tmsg_init(&t, "b-1", 0x01, "receipt-1");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	tmsg_init(&t, "b-2", 0x02, "receipt-2");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_BUSINESS_DUP,
	    "b-1");
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 2);
	tmsg_init(&t, "b-1", 0x01, "receipt-x");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_DUPLICATE, "");
	tmsg_init(&t, "b-2", 0x02, "receipt-2");
	t.m.received_at_ms = RECEIVED_MS + 1;   /* claimed after b-1 */
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_FLAG, STORE_NEW, "b-1");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_FLAG, STORE_DUPLICATE, "");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_DUPLICATE, "");
	t.m.receipt = NULL;     /* a probe of a new id is never refused */
	t.m.message_id = "b-6";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_ABSENT, "");
	tmsg_init(&t, "b-3", 0x03, "receipt-3");
	t.m.received_at_ms = RECEIVED_MS + 2;
	t.m.from_party = "another-party";
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	tmsg_init(&t, "b-4", 0x04, "receipt-4");
	t.m.received_at_ms = RECEIVED_MS + 3;
	tbiz(s, a, &t, NULL, STORE_BUSINESS_OFF, STORE_NEW, "");
	tcount(c, "SELECT count(*) FROM inbox", 4);
	assert_int_equal(store_find(s, "b-2", NULL, a, &f, &err), 1);
	assert_string_equal(f->business_key, TBIZKEY);
	assert_string_equal(f->business_duplicate_of, "b-1");
	assert_int_equal(store_find(s, "b-4", NULL, a, &f, &err), 1);
	assert_null(f->business_key);
	assert_null(f->business_duplicate_of);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.message_id, "b-1");
	assert_string_equal(d.business_key, TBIZKEY);
	assert_null(d.business_duplicate_of);
	assert_int_equal(store_claim(s, T0 + 1000, 1000, a, &d, &err), 1);
	assert_string_equal(d.business_duplicate_of, "b-1");
	/* a large message (streamed with COPY on PostgreSQL) is refused
	 * before its payloads are written */
	tmsg_init(&t, "b-7", 0x07, "receipt-7");
	tmsg_add_big(&t);
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_BUSINESS_DUP,
	    "b-1");
	free(t.big);
	tcount(c, "SELECT count(*) FROM payload WHERE message_id = 'b-7'", 0);
	/* the holder purged: the key is free again (b-2 was never one) */
	tq_exec(c, "DELETE FROM inbox WHERE message_id = 'b-1'");
	tmsg_init(&t, "b-5", 0x05, "receipt-5");
	tbiz(s, a, &t, TBIZKEY, STORE_BUSINESS_REFUSE, STORE_NEW, "");
	store_close(s);
	arena_free(a);
}

#define BUSINESS_TESTS(ctx) \
	BT(t_business_key, ctx), BT(t_business_race_refuse, ctx), \
	BT(t_business_race_flag, ctx)

TSTORE_MAIN("store business", BUSINESS_TESTS, TSTORE_PG_NONE)
