/*
 * Unit tests for src/store, payload parts (teststore.h: SQLite and
 * PostgreSQL): parts of every shape, none, large ones streamed with COPY,
 * every other operation right after an accept, and PostgreSQL's
 * as4gw_accept() called directly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "teststore.h"
#include "testutil.h"

/* bytes[i] = a pattern of seed (payload test data). */
static unsigned char *
tpattern(size_t len, unsigned seed)
{
	unsigned char *p = malloc(len > 0 ? len : 1);
	size_t i;

	assert_non_null(p);
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((i * 31 + seed) ^ (i >> 9));
	return p;
}

/* Part no of t stored with exactly these bytes. */
static void
tpart_bytes(const struct tctx *c, int no, const unsigned char *want,
    size_t len)
{
	char sql[128];
	unsigned char *v;
	size_t got;

	(void)snprintf(sql, sizeof(sql),
	    "SELECT content FROM payload WHERE part_no = %d", no);
	v = tq_value(c, sql, &got);
	assert_non_null(v);  /* empty, not NULL */
	assert_int_equal(got, len);
	if (len > 0)
		assert_memory_equal(v, want, len);
	free(v);
}

/* Parts of every shape in one call: empty without data, NULL content id
 * and MIME type, no properties, NULs, part numbers with gaps. */
static void
t_accept_part_shapes(void **state)
{
	struct tctx *c = *state;
	unsigned char *bin = tpattern(3000, 7);
	const struct store_part parts[] = {
		{ 0, NULL, NULL, NULL, NULL, 0 },
		{ 1, "c1@as4gw.test", "text/plain", "{\"k\":\"v\"}",
		  (const unsigned char *)"hello", 5 },
		{ 2, "c2@as4gw.test", NULL, NULL, nul_bytes, sizeof(nul_bytes) },
		{ 7, NULL, "application/octet-stream", "{}", bin, 3000 },
	};
	struct arena *a;
	struct store *s;
	struct tmsg t;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "shapes-1@as4gw.test", 0x61, "receipt");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 4);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 0 AND"
	    " content_id IS NULL AND mime_type IS NULL AND properties = '{}'",
	    1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id = 'c1@as4gw.test' AND mime_type = 'text/plain'"
	    " AND properties = '{\"k\":\"v\"}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " mime_type IS NULL AND properties = '{}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 7 AND"
	    " content_id IS NULL AND mime_type = 'application/octet-stream'",
	    1);
	tpart_bytes(c, 0, NULL, 0);
	tpart_bytes(c, 1, (const unsigned char *)"hello", 5);
	tpart_bytes(c, 2, nul_bytes, sizeof(nul_bytes));
	tpart_bytes(c, 7, bin, 3000);
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	free(bin);
	store_close(s);
	arena_free(a);
}

/* A message without payloads: inbox and delivery rows, no payload row. */
static void
t_accept_no_parts(void **state)
{
	struct tctx *c = *state;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct store_result r;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "empty-1@as4gw.test", 0x62, "receipt-empty");
	t.m.parts = NULL;
	t.m.n_parts = 0;
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 0);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 1);
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-empty", r.receipt_len);
	store_close(s);
	arena_free(a);
}

/*
 * Payloads above postgresql's inline limit (256 KiB) are streamed with COPY
 * inside a transaction: whole bytes back (a 1 MiB part, parts that are not
 * a multiple of the chunk, small ones between), the same duplicate, drift
 * and probe answers, and a failing part rolls everything back.
 */
static void
t_accept_streamed(void **state)
{
	struct tctx *c = *state;
	unsigned char *big = tpattern(BIG_LEN, 1), *odd = tpattern(200001, 2);
	struct store_part parts[] = {
		{ 0, "a@as4gw.test", "application/xml", NULL,
		  (const unsigned char *)"<a/>", 4 },
		{ 1, "big@as4gw.test", NULL, "{}", big, BIG_LEN },
		{ 2, NULL, "text/plain", NULL, NULL, 0 },
		{ 3, "odd@as4gw.test", "x/y", "{\"n\":3}", odd, 200001 },
		{ 4, "nul@as4gw.test", "x/y", NULL, nul_bytes, sizeof(nul_bytes) },
	};
	struct arena *a;
	struct store *s;
	struct tmsg t, probe;
	struct store_result r = { .outcome = 0 };
	struct err err = { 0 };

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tmsg_init(&t, "stream-1@as4gw.test", 0x63, "receipt-streamed");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	probe = t;
	probe.m.receipt = NULL;
	(void)taccept(s, a, &probe, STORE_ABSENT);
	tcount(c, "SELECT count(*) FROM inbox", 0);
	(void)taccept(s, a, &t, STORE_NEW);
	tcount(c, "SELECT count(*) FROM payload", 5);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id = 'big@as4gw.test' AND mime_type IS NULL", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 2 AND"
	    " content_id IS NULL AND properties = '{}'", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 3 AND"
	    " properties = '{\"n\":3}'", 1);
	tpart_bytes(c, 0, (const unsigned char *)"<a/>", 4);
	tpart_bytes(c, 1, big, BIG_LEN);
	tpart_bytes(c, 2, NULL, 0);
	tpart_bytes(c, 3, odd, 200001);
	tpart_bytes(c, 4, nul_bytes, sizeof(nul_bytes));
	r = taccept(s, a, &t, STORE_DUPLICATE);
	assert_memory_equal(r.receipt, "receipt-streamed", r.receipt_len);
	r = taccept(s, a, &probe, STORE_DUPLICATE);
	assert_int_equal(r.duplicates, 2);
	t.m.content_hash[0] ^= 1;
	(void)taccept(s, a, &t, STORE_DRIFT);
	tcount(c, "SELECT duplicates FROM inbox", 2);
	/* part 4 numbered like part 3: nothing of this message stays */
	tmsg_init(&t, "stream-2@as4gw.test", 0x64, "receipt");
	t.m.parts = parts;
	t.m.n_parts = sizeof(parts) / sizeof(parts[0]);
	parts[4].part_no = 3;
	memset(&r, 0, sizeof(r));
	assert_int_equal(store_accept(s, &t.m, a, &r, &err), -1);
	assert_int_equal(err.kind, ERR_STORE);
	assert_int_equal(r.outcome, 0);
	tcount(c, "SELECT count(*) FROM inbox", 1);
	tcount(c, "SELECT count(*) FROM payload", 5);
	tcount(c, "SELECT count(*) FROM delivery", 1);
	parts[4].part_no = 4;
	(void)taccept(s, a, &t, STORE_NEW);  /* connection usable, id free */
	tcount(c, "SELECT count(*) FROM payload", 10);
	free(odd);
	free(big);
	store_close(s);
	arena_free(a);
}

/*
 * Every other operation right after a NEW on the same connection (on
 * postgresql the NEW leaves its NOTIFY's answer unread), and close right
 * after one.
 */
static void
t_accept_then_use(void **state)
{
	struct tctx *c = *state;
	struct store_purge p = { .default_cutoff_ms = T0, .batch = 10 };
	struct store_stats st;
	struct arena *a;
	struct store *s;
	struct tmsg t;
	struct err err = { 0 };
	size_t n1 = 0, n2 = 0;

	NEED(c);
	a = arena_new(0);
	s = topen(c);
	tput(s, a, "use-1", 1000, NULL);
	tmsg_init(&t, "use-1", 0x42, "receipt");
	(void)taccept(s, a, &t, STORE_DUPLICATE);
	tput(s, a, "use-2", 2000, NULL);
	tput(s, a, "use-3", 3000, NULL);
	assert_int_equal(store_ping(s, &err), 0);
	tput(s, a, "use-4", 4000, NULL);
	(void)tclaim(s, a, 10000, 60000, "use-1");
	tput(s, a, "use-5", 5000, NULL);
	tfinish(s, "use-1", 1, 11000, 0);
	tput(s, a, "use-6", 6000, NULL);
	assert_int_equal(store_stats(s, &st, &err), 0);
	assert_int_equal(st.delivery_ready, 5);
	tput(s, a, "use-7", 7000, NULL);
	assert_int_equal(store_purge(s, &p, &n1, &n2, &err), 0);
	tput(s, a, "use-8", 8000, NULL);
	assert_int_equal(store_migrate(s, &err), 0);
	tput(s, a, "use-9", 9000, NULL);
	tbetween("wait after NEW", twait(s, 0), 0, 1000);
	tput(s, a, "use-10", 10000, NULL);
	store_close(s);  /* with the NOTIFY unanswered */
	assert_int_equal(err.kind, ERR_NONE);
	tcount(c, "SELECT count(*) FROM inbox", 10);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 9);
	arena_free(a);
}

/* The first value of sql's first row on conn, as text (fails the test on
 * error or no row). */
static void
tpg_one(PGconn *conn, const char *sql, char *out, size_t n)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) < 1)
		fail_msg("%s: %s", sql, PQerrorMessage(conn));
	(void)snprintf(out, n, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* Run sql on conn, which must succeed. */
static void
tpg_ok(PGconn *conn, const char *sql)
{
	PGresult *res = PQexec(conn, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		fail_msg("%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
}

/* as4gw_accept(id, party, hash byte, receipt, parts...) as SQL text:
 * outcome/receipt/duplicates/length of the stored field digests. */
#define TPG_CALLP(id, from, hash, receipt, parts) \
	"SELECT outcome::text || '/' || coalesce(encode(receipt, 'hex'), '-')" \
	" || '/' || coalesce(duplicates::text, '-') || '/' ||" \
	" coalesce(octet_length(field_hashes)::text, '-') FROM as4gw_accept('" \
	id "', '" from "', 'to', 'svc', 'act', 'conv', NULL, NULL, NULL," \
	" decode(repeat('" hash "', 32), 'hex'), decode(repeat('" hash "'," \
	" 32), 'hex'), decode(repeat('" hash "', 64), 'hex'), " receipt "," \
	" 1767323045678, '2026-01', " parts ", NULL, NULL)"
#define TPG_CALL(id, hash, receipt, parts) \
	TPG_CALLP(id, "from", hash, receipt, parts)
#define TPG_PARTS3 "ARRAY[0, 1, 5], ARRAY['c0', NULL, 'c5']," \
	" ARRAY['text/plain', NULL, NULL], ARRAY['{}', '{}', '{\"a\":1}']," \
	" ARRAY['\\x00ff'::bytea, ''::bytea, '\\x41'::bytea]"
#define TPG_PARTS0 "'{}'::int[], '{}'::text[], '{}'::text[], '{}'::text[]," \
	" '{}'::bytea[]"

/* postgresql: as4gw_accept() called directly (migration 003): the four
 * outcomes, the rows, and an asynchronous commit for duplicates only. */
static void
t_pg_accept_function(void **state)
{
	struct tctx *c = *state;
	char v[128];
	PGconn *conn;

	NEED(c);
	store_close(topen(c));
	conn = PQconnectdb(c->dsn);
	assert_int_equal(PQstatus(conn), CONNECTION_OK);
	tpg_one(conn, TPG_CALL("fn-1", "ab", "'\\x0102'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tcount(c, "SELECT count(*) FROM payload WHERE message_id = 'fn-1'", 3);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 1 AND"
	    " content_id IS NULL AND mime_type IS NULL AND content = ''", 1);
	tcount(c, "SELECT count(*) FROM payload WHERE part_no = 5 AND"
	    " content = '\\x41' AND properties = '{\"a\":1}'", 1);
	tcount(c, "SELECT count(*) FROM delivery WHERE state = 'ready'", 1);
	tpg_one(conn, TPG_CALL("fn-1", "ab", "'\\x0303'", TPG_PARTS0), v,
	    sizeof(v));
	assert_string_equal(v, "2/0102/1/-");
	tpg_one(conn, TPG_CALL("fn-1", "ab", "NULL", TPG_PARTS0), v, sizeof(v));
	assert_string_equal(v, "2/0102/2/-");
	tpg_one(conn, TPG_CALL("fn-1", "cd", "'\\x0303'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "3/-/-/64");
	tpg_one(conn, TPG_CALL("fn-2", "cd", "NULL", TPG_PARTS3), v, sizeof(v));
	assert_string_equal(v, "4/-/-/-");
	tpg_one(conn, TPG_CALL("fn-3", "cd", "'\\x03'", TPG_PARTS0), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	/* another party's fn-1: its own row, neither blocked nor counted */
	tpg_one(conn, TPG_CALLP("fn-1", "other", "cd", "'\\x0404'",
	    TPG_PARTS3), v, sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tpg_one(conn, TPG_CALLP("fn-1", "other", "cd", "NULL", TPG_PARTS0),
	    v, sizeof(v));
	assert_string_equal(v, "2/0404/1/-");
	tcount(c, "SELECT count(*) FROM inbox", 3);
	tcount(c, "SELECT count(*) FROM payload", 6);
	tcount(c, "SELECT count(*) FROM delivery WHERE message_id = 'fn-1'", 2);
	tcount(c, "SELECT duplicates FROM inbox WHERE message_id = 'fn-1'"
	    " AND from_party = 'from'", 2);
	/* only a duplicate's transaction commits without waiting for WAL */
	tpg_ok(conn, "BEGIN");
	tpg_one(conn, TPG_CALL("fn-1", "ab", "NULL", TPG_PARTS0), v, sizeof(v));
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_equal(v, "off");
	tpg_ok(conn, "ROLLBACK");
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_not_equal(v, "off");
	tpg_ok(conn, "BEGIN");
	tpg_one(conn, TPG_CALL("fn-4", "ab", "'\\x01'", TPG_PARTS3), v,
	    sizeof(v));
	assert_string_equal(v, "1/-/0/-");
	tpg_one(conn, "SHOW synchronous_commit", v, sizeof(v));
	assert_string_not_equal(v, "off");
	tpg_ok(conn, "ROLLBACK");
	PQfinish(conn);
}

#define PARTS_TESTS(ctx) \
	BT(t_accept_part_shapes, ctx), BT(t_accept_no_parts, ctx), \
	BT(t_accept_streamed, ctx), BT(t_accept_then_use, ctx)

#define PARTS_PG_ONLY \
	BT(t_pg_accept_function, &ctx_pg)

TSTORE_MAIN("store parts", PARTS_TESTS, PARTS_PG_ONLY)
