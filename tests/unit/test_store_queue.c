/*
 * Unit tests for src/store, the delivery queue (issue 4; teststore.h:
 * SQLite and PostgreSQL): claim order, retry, stale claims, finish, stats,
 * wait and NOTIFY, concurrent deliverers, SKIP LOCKED, reconnects, and
 * store_find with the delivery history.
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
#include <unistd.h>

#include <libpq-fe.h>

#include "teststore.h"
#include "testutil.h"

/* A claimed message comes back whole: fields, parts, bytes. */
static void
tcheck_delivery(const struct store_delivery *d, const struct tmsg *t)
{
	size_t i;

	assert_string_equal(d->from_party, t->m.from_party);
	assert_string_equal(d->to_party, t->m.to_party);
	assert_string_equal(d->service, t->m.service);
	assert_string_equal(d->action, t->m.action);
	assert_string_equal(d->conversation_id, t->m.conversation_id);
	assert_string_equal(d->agreement_ref, t->m.agreement_ref);
	assert_int_equal(d->received_at_ms, t->m.received_at_ms);
	assert_int_equal(d->n_parts, t->m.n_parts);
	for (i = 0; i < d->n_parts; i++) {
		const struct store_part *g = &d->parts[i], *w = &t->parts[i];

		assert_int_equal(g->part_no, w->part_no);
		if (w->content_id == NULL)
			assert_null(g->content_id);
		else
			assert_string_equal(g->content_id, w->content_id);
		assert_string_equal(g->mime_type, w->mime_type);
		assert_string_equal(g->properties,
		    w->properties != NULL ? w->properties : "{}");
		assert_int_equal(g->len, w->len);
		assert_non_null(g->data);
		if (w->len > 0)
			assert_memory_equal(g->data, w->data, w->len);
	}
}

/* Oldest first by received time; every field and payload byte back. */
static void
t_claim_order(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;
	struct tmsg t, big, none;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "q-1", 0x42, "receipt");
	t.m.received_at_ms = T0 + 1000;
	(void)taccept(s, a, &t, STORE_NEW);
	tput(s, a, "q-2", 3000, NULL);
	tput(s, a, "q-3", 2000, "leg-1");
	tmsg_init(&big, "q-big", 0x43, "receipt");
	big.m.received_at_ms = T0 + 4000;
	tmsg_add_big(&big);
	(void)taccept(s, a, &big, STORE_NEW);
	tmsg_init(&none, "q-none", 0x44, "receipt");
	none.m.received_at_ms = T0 + 5000;
	none.m.n_parts = 0;
	(void)taccept(s, a, &none, STORE_NEW);
	d = tclaim(s, a, 10000, 60000, "q-1");
	assert_int_equal(d.attempts, 1);
	assert_string_equal(d.pmode_id, "leg-1");
	tcheck_delivery(&d, &t);
	d = tclaim(s, a, 10000, 60000, "q-3");
	d = tclaim(s, a, 10000, 60000, "q-2");
	assert_null(d.pmode_id);
	assert_int_equal(d.received_at_ms, T0 + 3000);
	d = tclaim(s, a, 10000, 60000, "q-big");
	tcheck_delivery(&d, &big);
	d = tclaim(s, a, 10000, 60000, "q-none");
	tcheck_delivery(&d, &none);
	(void)tclaim(s, a, 10000, 60000, NULL);
	tcountf(c, 5, "SELECT count(*) FROM delivery WHERE state = 'claimed'"
	    " AND attempts = 1 AND %s = %lld", MS(c, "claimed_at"),
	    (long long)(T0 + 10000));
	free(big.big);
	store_close(s);
	arena_free(a);
}

/* Nothing to claim: 0 and *ret untouched; a negative stale time refused. */
static void
t_claim_empty(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d = { .message_id = "sentinel" };
	struct arena *a;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	assert_int_equal(store_claim(s, T0, 1000, a, &d, &err), 0);
	assert_string_equal(d.message_id, "sentinel");
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(store_claim(s, T0, -1, a, &d, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_string_equal(d.message_id, "sentinel");
	store_close(s);
	arena_free(a);
}

/* ok -> done + processed_at; !ok -> ready after not_before, others first. */
static void
t_finish_retry(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "q-1", 1000, "leg-1");
	tput(s, a, "q-2", 2000, "leg-1");
	(void)tclaim(s, a, 10000, 60000, "q-1");
	tfinish(s, "q-1", 0, 11000, 30000);
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE message_id = 'q-1'"
	    " AND state = 'ready' AND claimed_at IS NULL AND attempts = 1"
	    " AND %s = %lld", MS(c, "not_before"), (long long)(T0 + 30000));
	(void)tclaim(s, a, 12000, 60000, "q-2");  /* q-1 waits */
	tfinish(s, "q-2", 1, 13000, 0);
	tcountf(c, 1, "SELECT count(*) FROM inbox WHERE message_id = 'q-2'"
	    " AND %s = %lld", MS(c, "processed_at"), (long long)(T0 + 13000));
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 1);
	(void)tclaim(s, a, 29999, 60000, NULL);
	d = tclaim(s, a, 30000, 60000, "q-1");
	assert_int_equal(d.attempts, 2);
	tfinish(s, "q-1", 1, 31000, 0);
	(void)tclaim(s, a, 99000, 60000, NULL);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'", 2);
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 0);
	store_close(s);
	arena_free(a);
}

/* A claim older than stale_ms is taken over; the row ends done once. */
static void
t_stale_takeover(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "q-1", 1000, NULL);
	(void)tclaim(s, a, 10000, 5000, "q-1");
	(void)tclaim(s, a, 15000, 5000, NULL);  /* exactly stale_ms: not yet */
	d = tclaim(s, a, 15001, 5000, "q-1");
	assert_int_equal(d.attempts, 2);
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE %s = %lld",
	    MS(c, "claimed_at"), (long long)(T0 + 15001));
	tfinish(s, "q-1", 1, 16000, 0);
	tfinish(s, "q-1", 0, 16001, 20000);  /* the first deliverer, late */
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'"
	    " AND not_before IS NULL AND attempts = 2", 1);
	(void)tclaim(s, a, 99000, 0, NULL);
	store_close(s);
	arena_free(a);
}

/* finish on a row that is not claimed (or absent) changes nothing. */
static void
t_finish_harmless(void **state)
{
	struct tctx *c = *state;
	char long_id[STORE_MESSAGE_ID_MAX + 2];
	const char *bad[] = { NULL, "", long_id };
	struct arena *a;
	struct store *s;
	struct err err;
	size_t i;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	tput(s, a, "q-1", 1000, NULL);
	tfinish(s, "absent", 1, 2000, 0);
	tfinish(s, "absent", 0, 2000, 3000);
	tfinish(s, "q-1", 1, 2000, 0);
	tfinish(s, "q-1", 0, 2000, 50000);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'"
	    " AND not_before IS NULL AND attempts = 0", 1);
	tcount(c, "SELECT count(*) FROM inbox WHERE processed_at IS NULL", 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err_clear(&err);
		assert_int_equal(store_finish(s, TSENDER, bad[i], 1, T0, T0,
		    &err), -1);
		assert_int_equal(err.kind, ERR_INTERNAL);
	}
	(void)tclaim(s, a, 3000, 1000, "q-1");
	store_close(s);
	arena_free(a);
}

/* Before migration every queue call fails as ERR_STORE, then works. */
static void
t_queue_unmigrated(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .batch = 10 };
	struct store_delivery d;
	struct store_stats st;
	struct arena *a;
	struct store *s = NULL;
	struct err err = { 0 };
	size_t n1 = 0, n2 = 0;

	NEED(c);
	a = arena_new(0);
	assert_int_equal(store_open(c->dsn, &s, &err), 0);
	assert_int_equal(store_claim(s, T0, 0, a, &d, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_finish(s, TSENDER, "q-1", 1, T0, T0, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_stats(s, &st, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	assert_int_equal(store_migrate(s, &err), 0);
	(void)tclaim(s, a, 0, 0, NULL);
	store_close(s);
	arena_free(a);
}

/* No room for the claimed message: -1, and the row is claimable again. */
static void
t_claim_arena_exhausted(void **state)
{
	struct tctx *c = *state;
	struct store_delivery d;
	struct arena *a, *tiny;
	struct store *s;
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	tiny = arena_new(64);
	s = topen(c);
	tput(s, a, "q-1", 1000, NULL);
	assert_int_equal(store_claim(s, T0 + 2000, 60000, tiny, &d, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	/* sqlite rolls the claim back; postgresql has committed it and puts
	 * the row back at once */
	tcountf(c, 1, "SELECT count(*) FROM delivery WHERE state = 'ready'"
	    " AND claimed_at IS NULL AND attempts = %d", c->pg ? 1 : 0);
	d = tclaim(s, a, 3000, 60000, "q-1");
	assert_int_equal(d.attempts, c->pg ? 2 : 1);
	store_close(s);
	arena_free(tiny);
	arena_free(a);
}

/* Take stats and compare all three values. */
static void
tstats(struct store *s, int64_t inbox, int64_t ready, int64_t claimed)
{
	struct store_stats st;
	struct err err = { 0 };

	if (store_stats(s, &st, &err) != 0)
		fail_msg("store_stats: %s", err.msg);
	assert_int_equal(st.inbox_rows, inbox);
	assert_int_equal(st.delivery_ready, ready);
	assert_int_equal(st.delivery_claimed, claimed);
}

/* Gauges follow the queue; postgresql's inbox count is an estimate. */
static void
t_stats(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	char sql[128];

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tstats(s, 0, 0, 0);
	tput(s, a, "q-1", 1000, NULL);
	tput(s, a, "q-2", 2000, NULL);
	tput(s, a, "q-3", 3000, NULL);
	tstats(s, 3, 3, 0);  /* never analyzed: an exact count */
	(void)tclaim(s, a, 10000, 60000, "q-1");
	tstats(s, 3, 2, 1);
	tfinish(s, "q-1", 1, 11000, 0);
	tstats(s, 3, 2, 0);
	if (c->pg) {
		(void)snprintf(sql, sizeof(sql), "ANALYZE %s.inbox", c->schema);
		pg_admin(c, sql);
		tput(s, a, "q-4", 4000, NULL);
		tstats(s, 3, 3, 0);  /* the planner's estimate, until analyzed */
		pg_admin(c, sql);
		tstats(s, 4, 3, 0);
	}
	store_close(s);
	arena_free(a);
}

struct twaiter {
	struct store *s;
	int64_t ms;
};

/* A deliverer blocked in store_wait. */
static void *
twaiter_run(void *arg)
{
	struct twaiter *w = arg;

	w->ms = twait(w->s, 10000);
	return NULL;
}

/*
 * postgresql: a private database for c's test.  NOTIFY channels are per
 * database, and other processes sharing the test server accept messages
 * too: their NOTIFYs must not wake our waiters.
 */
static void
tpg_private_db(const struct tctx *c, struct tctx *ret, int create)
{
	char sql[160];

	*ret = *c;
	(void)snprintf(ret->schema, sizeof(ret->schema), "as4gw_wait_%ld",
	    (long)getpid());
	(void)snprintf(ret->dsn, sizeof(ret->dsn),
	    "%s%cdbname=%s&application_name=%s", c->base_dsn,
	    strchr(c->base_dsn, '?') != NULL ? '&' : '?', ret->schema, c->app);
	(void)snprintf(sql, sizeof(sql), create ? "CREATE DATABASE %s" :
	    "DROP DATABASE %s WITH (FORCE)", ret->schema);
	pg_admin(c, sql);
}

/* postgresql: a NEW accept on one connection wakes a waiter on another;
 * duplicates do not; nothing times out. */
static void
twait_pg(const struct tctx *shared)
{
	struct tctx own, *c = &own;
	struct arena *a = arena_new(0);
	struct store *s1, *s2;
	struct twaiter w = { .s = NULL };
	struct tmsg t;
	pthread_t tid;

	tpg_private_db(shared, c, 1);
	s1 = topen(c);
	s2 = topen(c);
	w.s = s2;
	tbetween("wait 0 (listen)", twait(s2, 0), 0, 1000);
	tbetween("wait without notify", twait(s2, 300), 290, 2000);
	tput(s1, a, "w-1", 1000, NULL);
	tbetween("wait after NEW", twait(s2, 5000), 0, 1000);
	tmsg_init(&t, "w-1", 0x42, "receipt");
	(void)taccept(s1, a, &t, STORE_DUPLICATE);
	tbetween("wait after DUPLICATE", twait(s2, 300), 290, 2000);
	assert_int_equal(pthread_create(&tid, NULL, twaiter_run, &w), 0);
	(void)nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	tput(s1, a, "w-2", 2000, NULL);
	assert_int_equal(pthread_join(tid, NULL), 0);
	tbetween("blocked wait woken by NEW", w.ms, 250, 5000);
	store_close(s2);
	store_close(s1);
	arena_free(a);
	tpg_private_db(shared, c, 0);
}

/* sqlite sleeps min(timeout, 1000); postgresql waits for NOTIFY. */
static void
t_wait(void **state)
{
	struct tctx *c = *state;
	struct store *s;

	NEED(c);
	if (c->pg) {
		twait_pg(c);
		return;
	}
	s = topen(c);
	tbetween("wait 200", twait(s, 200), 190, 900);
	tbetween("wait 5000 (capped)", twait(s, 5000), 990, 2000);
	tbetween("wait -1", twait(s, -1), 0, 100);
	store_close(s);
}

struct tclaimer {
	const struct tctx *c;
	pthread_barrier_t *bar;
	char ids[64][16];
	size_t n;
	int rc;
	char msg[256];
};

/* Own connection; claim and finish until the queue is empty. */
static void *
tclaimer_run(void *arg)
{
	struct tclaimer *cl = arg;
	struct store *s = NULL;
	struct arena *a = arena_new(0);
	struct store_delivery d;
	struct err err = { 0 };

	cl->rc = store_open(cl->c->dsn, &s, &err);
	(void)pthread_barrier_wait(cl->bar);
	while (cl->rc == 0 && cl->n < 64) {
		cl->rc = store_claim(s, T0 + 10000, 60000, a, &d, &err);
		if (cl->rc != 1)
			break;
		(void)snprintf(cl->ids[cl->n++], sizeof(cl->ids[0]), "%s",
		    d.message_id);
		cl->rc = store_finish(s, d.from_party, d.message_id, 1,
		    T0 + 10000, 0, &err);
	}
	(void)snprintf(cl->msg, sizeof(cl->msg), "%s", err.msg);
	store_close(s);
	arena_free(a);
	return NULL;
}

/* Concurrent deliverers on their own connections: each row once. */
static void
t_concurrent_claim(void **state)
{
	enum { N_MSG = 40, N_CL = 8 };
	struct tctx *c = *state;
	struct tclaimer cl[N_CL];
	pthread_t tid[N_CL];
	pthread_barrier_t bar;
	struct arena *a;
	struct store *s;
	char seen[N_MSG] = { 0 }, id[16];
	size_t i, j, total = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	for (i = 0; i < N_MSG; i++) {
		(void)snprintf(id, sizeof(id), "cc-%02zu", i);
		tput(s, a, id, (int64_t)i, NULL);
	}
	assert_int_equal(pthread_barrier_init(&bar, NULL, N_CL), 0);
	for (i = 0; i < N_CL; i++) {
		memset(&cl[i], 0, sizeof(cl[i]));
		cl[i].c = c;
		cl[i].bar = &bar;
		assert_int_equal(pthread_create(&tid[i], NULL, tclaimer_run,
		    &cl[i]), 0);
	}
	for (i = 0; i < N_CL; i++)
		assert_int_equal(pthread_join(tid[i], NULL), 0);
	(void)pthread_barrier_destroy(&bar);
	for (i = 0; i < N_CL; i++) {
		if (cl[i].rc != 0)
			fail_msg("claimer %zu: %s", i, cl[i].msg);
		for (j = 0; j < cl[i].n; j++) {
			unsigned k = (unsigned)atoi(cl[i].ids[j] + 3);

			assert_true(k < N_MSG);
			if (seen[k]++)
				fail_msg("%s claimed twice", cl[i].ids[j]);
			total++;
		}
	}
	assert_int_equal(total, N_MSG);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'done'"
	    " AND attempts = 1", N_MSG);
	store_close(s);
	arena_free(a);
}

/* postgresql: a row locked by another transaction is skipped, not waited
 * for (FOR UPDATE SKIP LOCKED), and taken once the lock is gone. */
static void
t_pg_skip_locked(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	PGconn *conn;
	PGresult *res;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "s-1", 1000, NULL);
	tput(s, a, "s-2", 2000, NULL);
	conn = PQconnectdb(c->dsn);
	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	PQclear(PQexec(conn, "BEGIN"));
	res = PQexec(conn, "SELECT 1 FROM delivery WHERE message_id = 's-1'"
	    " FOR UPDATE");
	assert_int_equal(PQntuples(res), 1);
	PQclear(res);
	(void)tclaim(s, a, 10000, 60000, "s-2");
	(void)tclaim(s, a, 10000, 60000, NULL);
	PQclear(PQexec(conn, "ROLLBACK"));
	(void)tclaim(s, a, 10000, 60000, "s-1");
	PQfinish(conn);
	store_close(s);
	arena_free(a);
}

/* postgresql: every queue call reconnects after the server dropped the
 * connection; a waiter LISTENs again on its new connection. */
static void
t_pg_queue_reconnect(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0, .batch = 10 };
	struct arena *a;
	struct store *s1, *s2;
	struct err err = { 0 };
	size_t n1, n2;

	NEED(c);
	a = arena_new(0);
	s1 = topen(c);
	s2 = topen(c);
	tput(s1, a, "r-1", 1000, NULL);
	tbetween("wait 0 (listen)", twait(s2, 0), 0, 1000);
	tpg_terminate(c);
	(void)tclaim(s1, a, 10000, 60000, "r-1");
	tpg_terminate(c);
	tfinish(s1, "r-1", 1, 11000, 0);
	tpg_terminate(c);
	tstats(s1, 1, 0, 0);
	tpg_terminate(c);
	assert_int_equal(store_purge(s1, &p, &n1, &n2, &err), 0);
	/* the waiter's connection is gone: it reconnects, LISTENs, returns */
	tbetween("wait on a dropped connection", twait(s2, 5000), 0, 4000);
	tput(s1, a, "r-2", 2000, NULL);
	tbetween("wait after reconnect", twait(s2, 5000), 0, 1000);
	store_close(s2);
	store_close(s1);
	arena_free(a);
}

/* store_find of id (every party), expecting want (1 found, 0 none). */
static struct store_found *
tfind(struct store *s, struct arena *a, const char *id, const char *from,
    int want)
{
	struct store_found *f = NULL;
	struct err err = { 0 };
	int rc = store_find(s, id, from, a, &f, &err);

	if (rc == -1)
		fail_msg("store_find %s: %s", id, err.msg);
	assert_int_equal(rc, want);
	return f;
}

/*
 * Issue 11 item 10: store_find reads the inbox row, payload sizes and the
 * delivery row with its history; store_finish_error records the error of a
 * failed hand-off (cut, bytes outside printable ASCII as '?') and keeps it
 * once done; done_at is the done time.
 */
static void
t_find_history(void **state)
{
	struct tctx *c = *state;
	char long_err[STORE_ERROR_MAX + 50];
	struct store_found *f;
	struct err err = { 0 };
	struct arena *a;
	struct store *s;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	(void)tfind(s, a, "q-1", NULL, 0);
	tput(s, a, "q-1", 1000, "leg-1");
	f = tfind(s, a, "q-1", NULL, 1);
	assert_null(f->next);
	assert_string_equal(f->from_party, TSENDER);
	assert_string_equal(f->pmode_id, "leg-1");
	assert_string_equal(f->source, "192.0.2.7");
	assert_int_equal(f->received_at_ms, T0 + 1000);
	assert_int_equal(f->content_hash[0], 0x42);
	assert_int_equal(f->content_hash[STORE_HASH_LEN - 1], 0x42);
	assert_int_equal(f->processed_at_ms, -1);
	assert_int_equal(f->duplicates, 0);
	assert_string_equal(f->state, "ready");
	assert_int_equal(f->attempts, 0);
	assert_null(f->last_error);
	assert_int_equal(f->done_at_ms, -1);
	assert_int_equal(f->n_parts, 2);
	assert_string_equal(f->parts[0].content_id, "part1@as4gw.test");
	assert_int_equal(f->parts[0].size, 4);
	assert_int_equal(f->parts[1].size, sizeof(nul_bytes));
	(void)tfind(s, a, "q-1", "another party", 0);
	(void)tfind(s, a, "q-1", TSENDER, 1);
	(void)tclaim(s, a, 10000, 60000, "q-1");
	assert_int_equal(store_finish_error(s, TSENDER, "q-1", 0, T0 + 11000,
	    T0 + 12000, "bad\x01 th\xc3\xa9ng", &err), 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_string_equal(f->state, "ready");
	assert_int_equal(f->attempts, 1);
	assert_string_equal(f->last_error, "bad? th??ng");
	assert_int_equal(f->last_error_at_ms, T0 + 11000);
	assert_int_equal(f->not_before_ms, T0 + 12000);
	(void)tclaim(s, a, 13000, 60000, "q-1");
	memset(long_err, 'x', sizeof(long_err) - 1);
	long_err[sizeof(long_err) - 1] = '\0';
	assert_int_equal(store_finish_error(s, TSENDER, "q-1", 0, T0 + 14000,
	    T0 + 14000, long_err, &err), 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_int_equal(strlen(f->last_error), STORE_ERROR_MAX);
	(void)tclaim(s, a, 15000, 60000, "q-1");
	tfinish(s, "q-1", 1, 16000, 0);
	f = tfind(s, a, "q-1", NULL, 1);
	assert_string_equal(f->state, "done");
	assert_int_equal(f->attempts, 3);
	assert_int_equal(f->done_at_ms, T0 + 16000);
	assert_int_equal(f->processed_at_ms, T0 + 16000);
	assert_int_equal(f->last_error_at_ms, T0 + 14000);
	store_close(s);
	arena_free(a);
}

#define QUEUE_TESTS(ctx) \
	BT(t_claim_order, ctx), BT(t_claim_empty, ctx), \
	BT(t_finish_retry, ctx), BT(t_stale_takeover, ctx), \
	BT(t_finish_harmless, ctx), BT(t_queue_unmigrated, ctx), \
	BT(t_claim_arena_exhausted, ctx), BT(t_stats, ctx), BT(t_wait, ctx), \
	BT(t_concurrent_claim, ctx), BT(t_find_history, ctx)

#define QUEUE_PG_ONLY \
	BT(t_pg_skip_locked, &ctx_pg), BT(t_pg_queue_reconnect, &ctx_pg)

TSTORE_MAIN("store queue", QUEUE_TESTS, QUEUE_PG_ONLY)
