/*
 * Unit tests for src/inbox: inbox_accept() over a real SQLite file in a temp
 * directory (store_open + store_migrate), with UserMessages built by hand in
 * an arena.  Rows are read back with sqlite3 directly, never through the
 * store API, so what is checked is what a backend reading the inbox sees.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "testutil.h"
#include "inbox/inbox.h"
#include "payload/payload.h"
#include "util/clock.h"

#define ROLE_INIT "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"
#define ROLE_RESP "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"
#define PTYPE "urn:oasis:names:tc:ebcore:partyid-type:unregistered"

static const unsigned char RECEIPT_A[] = "<eb:Receipt>first</eb:Receipt>";
static const unsigned char RECEIPT_B[] =
    "<eb:Receipt>second, longer one</eb:Receipt>";

/* Per-test state: the database file, an open migrated store, an arena. */
struct tstate {
	char dir[64];
	char path[256];     /* the migrated database */
	char raw[256];      /* a second database, never migrated */
	struct store *s;
	struct arena *a;
};

/* ---- the matched leg -------------------------------------------------- */

/*
 * The leg every accept runs under (the gateway passes the one pmode_match
 * chose): its parties' canonical names are what the row records, whatever
 * PartyIds the message names (issue 10).
 */
static char t_leg_id[] = "leg-0";
static char t_leg_from[] = PTYPE ":sender-gw";
static char t_leg_to[] = "receiver-gw";

static const struct pmode_leg T_LEG = {
	.id = t_leg_id,
	.from = { .name = t_leg_from },
	.to = { .name = t_leg_to },
};

/* ---- the message spec, turned into an arena UserMessage -------------- */

struct tparty {
	struct ebms_party_id ids[2];
	size_t n_ids;
};

struct tpart {
	const char *content_id;     /* NULL: payload in the SOAP Body */
	const char *media_type;
	const char *mime_type;
	unsigned char data[32];
	size_t len;
	struct ebms_property props[3];
	size_t n_props;
};

struct tmsg {
	char message_id[300];
	const char *timestamp;
	struct tparty from, to;
	const char *service, *service_type, *action, *conversation_id;
	const char *agreement;
	struct tpart parts[3];
	size_t n_parts;
};

/* Arena copy of s, NULL for NULL. */
static const char *
t_dup(struct arena *a, const char *s)
{
	char *r;

	if (s == NULL)
		return NULL;
	r = arena_strdup(a, s);
	assert_non_null(r);
	return r;
}

/* One party of the spec into p (role given). */
static void
t_party(struct arena *a, struct ebms_party *p, const struct tparty *tp,
    const char *role)
{
	size_t i;

	p->role = t_dup(a, role);
	p->n_ids = tp->n_ids;
	if (tp->n_ids == 0)
		return;
	p->ids = arena_calloc(a, tp->n_ids, sizeof(*p->ids));
	assert_non_null(p->ids);
	for (i = 0; i < tp->n_ids; i++) {
		p->ids[i].type = t_dup(a, tp->ids[i].type);
		p->ids[i].value = t_dup(a, tp->ids[i].value);
	}
}

/* One PartInfo of the spec into p, as ebms_bind_parts() would leave it. */
static void
t_part(struct arena *a, struct ebms_part *p, const struct tpart *tp)
{
	size_t i;

	p->content_id = t_dup(a, tp->content_id);
	p->href = tp->content_id != NULL ?
	    arena_sprintf(a, "cid:%s", tp->content_id) : NULL;
	p->media_type = t_dup(a, tp->media_type);
	p->mime_type = t_dup(a, tp->mime_type);
	p->data = arena_memdup(a, tp->data, tp->len);
	assert_non_null(p->data);
	p->len = tp->len;
	p->n_props = tp->n_props;
	if (tp->n_props > 0) {
		p->props = arena_calloc(a, tp->n_props, sizeof(*p->props));
		assert_non_null(p->props);
	}
	for (i = 0; i < tp->n_props; i++) {
		p->props[i].name = t_dup(a, tp->props[i].name);
		p->props[i].type = t_dup(a, tp->props[i].type);
		p->props[i].value = t_dup(a, tp->props[i].value);
	}
}

/* The UserMessage of spec t, every byte of it in arena a. */
static struct ebms_user_message *
t_build(struct arena *a, const struct tmsg *t)
{
	struct ebms_user_message *um = arena_calloc(a, 1, sizeof(*um));
	size_t i;

	assert_non_null(um);
	um->message_id = t_dup(a, t->message_id);
	um->timestamp = t_dup(a, t->timestamp);
	t_party(a, &um->from, &t->from, ROLE_INIT);
	t_party(a, &um->to, &t->to, ROLE_RESP);
	um->service = t_dup(a, t->service);
	um->service_type = t_dup(a, t->service_type);
	um->action = t_dup(a, t->action);
	um->conversation_id = t_dup(a, t->conversation_id);
	um->agreement_ref = t_dup(a, t->agreement);
	um->n_parts = t->n_parts;
	if (t->n_parts > 0) {
		um->parts = arena_calloc(a, t->n_parts, sizeof(*um->parts));
		assert_non_null(um->parts);
	}
	for (i = 0; i < t->n_parts; i++)
		t_part(a, &um->parts[i], &t->parts[i]);
	return um;
}

/* Set part p of a spec: identity, media types and bytes. */
static void
t_set_part(struct tpart *p, const char *cid, const char *media,
    const char *mime, const void *data, size_t len)
{
	assert_true(len <= sizeof(p->data));
	p->content_id = cid;
	p->media_type = media;
	p->mime_type = mime;
	memcpy(p->data, data, len);
	p->len = len;
}

/*
 * The base message "<id>@as4gw.test": From with two PartyIds (the first
 * typed), To untyped; three parts: a cid: payload with its media type, a
 * binary cid: payload whose properties need JSON escaping and whose media
 * type comes from the MimeType property only, and a SOAP Body payload with
 * neither media type nor properties.
 */
static void
t_base(struct tmsg *t, const char *id)
{
	static const unsigned char bin[] = { 0x00, 0xff, 0x10, 0x00, 'z' };

	memset(t, 0, sizeof(*t));
	(void)snprintf(t->message_id, sizeof(t->message_id), "%s@as4gw.test",
	    id);
	t->timestamp = "2026-01-02T03:04:05.678Z";
	t->from.ids[0] = (struct ebms_party_id){ PTYPE, "sender-gw" };
	t->from.ids[1] = (struct ebms_party_id){ NULL, "second-id" };
	t->from.n_ids = 2;
	t->to.ids[0] = (struct ebms_party_id){ NULL, "receiver-gw" };
	t->to.n_ids = 1;
	t->service = "urn:as4gw:test:service";
	t->action = "Deliver";
	t->conversation_id = "conv-1";
	t->agreement = "urn:as4gw:agreement:1";
	t->n_parts = 3;
	t_set_part(&t->parts[0], "part0@as4gw.test", "application/xml",
	    "application/xml", "<a>x</a>", 8);
	t->parts[0].props[0] = (struct ebms_property){ "MimeType", NULL,
	    "application/xml" };
	t->parts[0].props[1] = (struct ebms_property){ "CharacterSet",
	    "string", "utf-8" };
	t->parts[0].n_props = 2;
	t_set_part(&t->parts[1], "part1@as4gw.test", NULL, "text/plain", bin,
	    sizeof(bin));
	t->parts[1].props[0] = (struct ebms_property){ "q\"name\\", NULL,
	    "say \"hi\" \\o/" };
	t->parts[1].props[1] = (struct ebms_property){ "ctl", NULL,
	    "a\nb\rc\td\x01" "e\x1f\x7f" };
	t->parts[1].n_props = 2;
	t_set_part(&t->parts[2], NULL, NULL, NULL, "<body/>", 7);
}

/* ---- fixtures ---------------------------------------------------------- */

/* A temp directory with a migrated SQLite inbox and an arena. */
static int
setup(void **state)
{
	struct tstate *t = calloc(1, sizeof(*t));
	struct err err;
	char dsn[300];

	err_clear(&err);
	if (t == NULL)
		return -1;
	*state = t;
	(void)snprintf(t->dir, sizeof(t->dir), "/tmp/as4gw-inbox-XXXXXX");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	(void)snprintf(t->path, sizeof(t->path), "%s/inbox.db", t->dir);
	(void)snprintf(t->raw, sizeof(t->raw), "%s/raw.db", t->dir);
	(void)snprintf(dsn, sizeof(dsn), "sqlite:%s", t->path);
	t->a = arena_new(0);
	if (t->a == NULL || store_open(dsn, &t->s, &err) == -1 ||
	    store_migrate(t->s, &err) == -1) {
		print_error("setup: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Remove a database file and its WAL companions. */
static void
unlink_db(const char *path)
{
	char p[300];

	(void)unlink(path);
	(void)snprintf(p, sizeof(p), "%s-wal", path);
	(void)unlink(p);
	(void)snprintf(p, sizeof(p), "%s-shm", path);
	(void)unlink(p);
}

/* Close the store, free the arena, remove the directory. */
static int
teardown(void **state)
{
	struct tstate *t = *state;

	if (t == NULL)
		return 0;
	store_close(t->s);
	arena_free(t->a);
	unlink_db(t->path);
	unlink_db(t->raw);
	(void)rmdir(t->dir);
	free(t);
	return 0;
}

/* ---- reading the database file directly ------------------------------ */

struct dbq {
	sqlite3 *db;
	sqlite3_stmt *st;
};

/* Run sql (?1 = a1, ?2 = a2 when not NULL) and step to its first row. */
static void
dbq_run(struct dbq *q, const char *path, const char *sql, const char *a1,
    const char *a2)
{
	if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK)
		fail_msg("open %s: %s", path, sqlite3_errmsg(q->db));
	if (sqlite3_prepare_v2(q->db, sql, -1, &q->st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(q->db));
	if (a1 != NULL)
		assert_int_equal(sqlite3_bind_text(q->st, 1, a1, -1,
		    SQLITE_STATIC), SQLITE_OK);
	if (a2 != NULL)
		assert_int_equal(sqlite3_bind_text(q->st, 2, a2, -1,
		    SQLITE_STATIC), SQLITE_OK);
	if (sqlite3_step(q->st) != SQLITE_ROW)
		fail_msg("%s [%s]: no row: %s", sql, a1 != NULL ? a1 : "",
		    sqlite3_errmsg(q->db));
}

/* Finalize and close. */
static void
dbq_done(struct dbq *q)
{
	sqlite3_finalize(q->st);
	sqlite3_close(q->db);
}

/* The first column of the first row as malloc'd bytes (NUL-terminated);
 * NULL for SQL NULL. */
static char *
db_value(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, size_t *ret_len)
{
	struct dbq q;
	char *out = NULL;
	size_t len = 0;

	dbq_run(&q, t->path, sql, a1, a2);
	if (sqlite3_column_type(q.st, 0) != SQLITE_NULL) {
		const void *p = sqlite3_column_blob(q.st, 0);

		len = (size_t)sqlite3_column_bytes(q.st, 0);
		out = calloc(1, len + 1);
		assert_non_null(out);
		if (len > 0)
			memcpy(out, p, len);
	}
	dbq_done(&q);
	if (ret_len != NULL)
		*ret_len = len;
	return out;
}

/* An integer column (SQL NULL reads as -1). */
static int64_t
db_int(const struct tstate *t, const char *sql, const char *a1,
    const char *a2)
{
	struct dbq q;
	int64_t v;

	dbq_run(&q, t->path, sql, a1, a2);
	v = sqlite3_column_type(q.st, 0) == SQLITE_NULL ? -1 :
	    (int64_t)sqlite3_column_int64(q.st, 0);
	dbq_done(&q);
	return v;
}

/* Assert that sql(a1, a2) reads exactly the text want (NULL: SQL NULL). */
static void
db_text_eq(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, const char *want)
{
	char *got = db_value(t, sql, a1, a2, NULL);

	if ((want == NULL) != (got == NULL) ||
	    (want != NULL && strcmp(got, want) != 0))
		fail_msg("%s [%s]: want \"%s\", got \"%s\"", sql, a1,
		    want != NULL ? want : "(null)",
		    got != NULL ? got : "(null)");
	free(got);
}

/* Assert that sql(a1, a2) reads exactly the bytes want[0..len). */
static void
db_bytes_eq(const struct tstate *t, const char *sql, const char *a1,
    const char *a2, const void *want, size_t len)
{
	size_t got_len;
	char *got = db_value(t, sql, a1, a2, &got_len);

	assert_non_null(got);
	assert_int_equal(got_len, len);
	assert_memory_equal(got, want, len);
	free(got);
}

/* Everything stored for one message except the duplicate bookkeeping, as
 * one text (blobs quoted as X'..'), to prove a call changed nothing. */
#define SNAPSHOT_SQL \
	"SELECT (SELECT quote(from_party) || quote(to_party)" \
	" || quote(service) || quote(action) || quote(conversation_id)" \
	" || quote(agreement_ref) || quote(pmode_id) || quote(source)" \
	" || quote(content_hash) || quote(receipt) || quote(received_at)" \
	" || quote(processed_at) || quote(partition_key)" \
	" FROM inbox WHERE message_id = ?1)" \
	" || '#' || (SELECT group_concat(quote(part_no) || quote(content_id)" \
	" || quote(mime_type) || quote(properties) || quote(content), ';')" \
	" FROM (SELECT * FROM payload WHERE message_id = ?1" \
	" ORDER BY part_no))" \
	" || '#' || (SELECT group_concat(quote(state) || quote(attempts)" \
	" || quote(claimed_at) || quote(created_at)) FROM delivery" \
	" WHERE message_id = ?1)"

/* Queries for one column of a message's inbox row, payload row (?2 =
 * part_no) and delivery row. */
#define ROW(col) "SELECT " col " FROM inbox WHERE message_id = ?1"
#define PART(col) \
	"SELECT " col " FROM payload WHERE message_id = ?1 AND part_no = ?2"
#define DELIVERY(col) "SELECT " col " FROM delivery WHERE message_id = ?1"
#define DUPS_SQL ROW("duplicates")
#define LAST_DUP_SQL ROW("last_duplicate_at")
#define COUNT_INBOX_SQL ROW("count(*)")

/* ---- helpers for the cases -------------------------------------------- */

/* Accept t (built in arena a) with receipt r; assert it is new. */
static void
accept_new(struct tstate *t, struct arena *a, const struct tmsg *m,
    const unsigned char *r, size_t rlen)
{
	struct ebms_user_message *um = t_build(a, m);
	struct store_result res;
	struct err err;

	err_clear(&err);
	memset(&res, 0, sizeof(res));
	if (inbox_accept(t->s, a, um, &T_LEG, "192.0.2.7", r, rlen, &res,
	    &err) != 0)
		fail_msg("%s: %s", m->message_id, err.msg);
	assert_int_equal(res.outcome, STORE_NEW);
	assert_int_equal(err.kind, ERR_NONE);
}

/* "YYYY-MM" (UTC) of epoch_ms into out[8]. */
static void
month_of(int64_t epoch_ms, char out[8])
{
	time_t secs = (time_t)(epoch_ms / 1000);
	struct tm tm;

	assert_non_null(gmtime_r(&secs, &tm));
	assert_int_equal(strftime(out, 8, "%Y-%m", &tm), 7);
}

/* ---- NEW --------------------------------------------------------------- */

/*
 * From/To columns (issue 10): the matched leg's canonical party names,
 * whatever PartyIds the message names and in whatever order: never the
 * message's first PartyId.
 */
static void
test_inbox_new_parties(void **state)
{
	static const struct {
		const char *from_type, *from_value, *to_type, *to_value;
		const char *leg_from, *leg_to;
	} cases[] = {
		{ PTYPE, "sender", NULL, "receiver", PTYPE ":sender", "receiver" },
		{ NULL, "urn:x:first", "urn:x:type", "receiver",
		    PTYPE ":sender", "urn:x:type:receiver" },
		{ NULL, "urn:x:plain", NULL, "b", "urn:x:canonical", "b" },
		{ "t", "v:w", "t2", "x", "t:v:w", "gw" },
	};
	struct tstate *t = *state;
	char id[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pmode_leg leg = T_LEG;
		struct ebms_user_message *um;
		struct store_result res;
		struct err err;
		struct tmsg m;

		(void)snprintf(id, sizeof(id), "party-%zu", i);
		t_base(&m, id);
		m.from.ids[0] = (struct ebms_party_id){ cases[i].from_type,
		    cases[i].from_value };
		m.to.ids[0] = (struct ebms_party_id){ cases[i].to_type,
		    cases[i].to_value };
		leg.from.name = (char *)(uintptr_t)cases[i].leg_from;
		leg.to.name = (char *)(uintptr_t)cases[i].leg_to;
		um = t_build(t->a, &m);
		err_clear(&err);
		if (inbox_accept(t->s, t->a, um, &leg, "192.0.2.7", RECEIPT_A,
		    sizeof(RECEIPT_A) - 1, &res, &err) != 0)
			fail_msg("%s: %s", m.message_id, err.msg);
		assert_int_equal(res.outcome, STORE_NEW);
		db_text_eq(t, ROW("from_party"), m.message_id, NULL,
		    cases[i].leg_from);
		db_text_eq(t, ROW("to_party"), m.message_id, NULL,
		    cases[i].leg_to);
	}
}

/* The inbox row's columns after NEW (pmode id, peer, agreement may be NULL). */
static void
check_row(struct tstate *t, const struct ebms_user_message *um,
    const char *leg_id, const char *peer, int64_t before, int64_t after)
{
	unsigned char hash[CODEC_SHA256_LEN];
	char m0[8], m1[8], *part;
	const char *id = um->message_id;

	db_text_eq(t, ROW("service"), id, NULL, "urn:as4gw:test:service");
	db_text_eq(t, ROW("action"), id, NULL, "Deliver");
	db_text_eq(t, ROW("conversation_id"), id, NULL, "conv-1");
	db_text_eq(t, ROW("agreement_ref"), id, NULL, um->agreement_ref);
	db_text_eq(t, ROW("pmode_id"), id, NULL, leg_id);
	db_text_eq(t, ROW("source"), id, NULL, peer);
	db_bytes_eq(t, ROW("receipt"), id, NULL, RECEIPT_A,
	    sizeof(RECEIPT_A) - 1);
	{
		unsigned char *fields;
		size_t flen;

		/* version 2 and its field digests (payload.h) */
		assert_int_equal(payload_content_hash2(t->a, um, hash,
		    &fields, &flen), 0);
		db_bytes_eq(t, ROW("content_hash"), id, NULL, hash,
		    sizeof(hash));
		db_bytes_eq(t, ROW("field_hashes"), id, NULL, fields, flen);
	}
	assert_in_range(db_int(t, ROW("received_at"), id, NULL), before,
	    after);
	month_of(before, m0);
	month_of(after, m1);
	part = db_value(t, ROW("partition_key"), id, NULL, NULL);
	assert_non_null(part);
	if (strcmp(part, m0) != 0 && strcmp(part, m1) != 0)
		fail_msg("partition_key %s, want %s", part, m0);
	free(part);
	assert_int_equal(db_int(t, DUPS_SQL, id, NULL), 0);
	assert_int_equal(db_int(t, LAST_DUP_SQL, id, NULL), -1);
	assert_int_equal(db_int(t, ROW("processed_at"), id, NULL), -1);
}

/* The payload rows after NEW: one per PartInfo, in order. */
static void
check_payloads(struct tstate *t, const struct tmsg *m)
{
	static const char *const want_mime[] = { "application/xml",
	    "text/plain", NULL };
	static const char *const want_props[] = {
		"{\"MimeType\":\"application/xml\",\"CharacterSet\":\"utf-8\"}",
		"{\"q\\\"name\\\\\":\"say \\\"hi\\\" \\\\o/\","
		    "\"ctl\":\"a\\nb\\rc\\td\\u0001e\\u001f\\u007f\"}",
		"{}",
	};
	const char *id = m->message_id;
	char no[4];
	size_t i;

	assert_int_equal(db_int(t, "SELECT count(*) FROM payload WHERE "
	    "message_id = ?1", id, NULL), 3);
	for (i = 0; i < 3; i++) {
		(void)snprintf(no, sizeof(no), "%zu", i);
		db_text_eq(t, PART("content_id"), id, no,
		    m->parts[i].content_id);
		db_text_eq(t, PART("mime_type"), id, no, want_mime[i]);
		db_text_eq(t, PART("properties"), id, no, want_props[i]);
		db_bytes_eq(t, PART("content"), id, no, m->parts[i].data,
		    m->parts[i].len);
	}
	assert_int_equal(db_int(t, DELIVERY("count(*)"), id, NULL), 1);
	db_text_eq(t, DELIVERY("state"), id, NULL, "ready");
	assert_int_equal(db_int(t, DELIVERY("attempts"), id, NULL), 0);
}

/* NEW: the row, its payloads and one 'ready' delivery, with and without
 * the optional columns. */
static void
test_inbox_new_row(void **state)
{
	static char leg_id[] = "leg-1";
	static const struct {
		const char *id;
		int with_leg;
		const char *peer;
		int agreement;
	} cases[] = {
		{ "row-full", 1, "192.0.2.7", 1 },
		{ "row-bare", 0, NULL, 0 },     /* T_LEG, no peer, no agreement */
	};
	struct tstate *t = *state;
	struct pmode_leg leg;
	size_t i;

	leg = T_LEG;
	leg.id = leg_id;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ebms_user_message *um;
		struct store_result res;
		struct err err;
		struct tmsg m;
		int64_t before, after;

		err_clear(&err);
		t_base(&m, cases[i].id);
		if (!cases[i].agreement)
			m.agreement = NULL;
		um = t_build(t->a, &m);
		before = clock_epoch_ms();
		assert_int_equal(inbox_accept(t->s, t->a, um,
		    cases[i].with_leg ? &leg : &T_LEG, cases[i].peer, RECEIPT_A,
		    sizeof(RECEIPT_A) - 1, &res, &err), 0);
		after = clock_epoch_ms();
		assert_int_equal(res.outcome, STORE_NEW);
		assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
		assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
		assert_int_equal(res.duplicates, 0);
		assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL),
		    1);
		check_row(t, um, cases[i].with_leg ? leg_id : t_leg_id,
		    cases[i].peer, before, after);
		check_payloads(t, &m);
	}
}

/*
 * PartProperties JSON: exact text for escaping (quotes, backslashes,
 * control characters, DEL; UTF-8 passes through), and SQLite's own JSON
 * parser reads every name and value back unchanged.
 */
static void
test_inbox_props_json(void **state)
{
	static const struct {
		struct ebms_property props[3];
		size_t n;
		const char *want;
	} cases[] = {
		{ { { 0 } }, 0, "{}" },
		{ { { "MimeType", "string", "text/xml" } }, 1,
		    "{\"MimeType\":\"text/xml\"}" },
		{ { { "a\"b", NULL, "c\\d" }, { "\"", NULL, "\\\"" } }, 2,
		    "{\"a\\\"b\":\"c\\\\d\",\"\\\"\":\"\\\\\\\"\"}" },
		{ { { "ctl", NULL, "\n\r\t\x01\x1f\x7f" "end" } }, 1,
		    "{\"ctl\":\"\\n\\r\\t\\u0001\\u001f\\u007fend\"}" },
		{ { { "z", NULL, "1" }, { "a", NULL, "2" }, { "m", NULL, "" } },
		    3, "{\"z\":\"1\",\"a\":\"2\",\"m\":\"\"}" },
		{ { { "name", NULL, "caf\xc3\xa9 \xe2\x82\xac" } }, 1,
		    "{\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"}" },
	};
	struct tstate *t = *state;
	size_t i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tmsg m;
		char id[32];

		(void)snprintf(id, sizeof(id), "props-%zu", i);
		t_base(&m, id);
		m.n_parts = 1;
		memcpy(m.parts[0].props, cases[i].props,
		    sizeof(cases[i].props));
		m.parts[0].n_props = cases[i].n;
		accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
		db_text_eq(t, PART("properties"), m.message_id, "0",
		    cases[i].want);
		assert_int_equal(db_int(t, PART("json_valid(properties)"),
		    m.message_id, "0"), 1);
		for (j = 0; j < cases[i].n; j++)
			db_text_eq(t, "SELECT j.value FROM payload, "
			    "json_each(payload.properties) AS j WHERE "
			    "payload.message_id = ?1 AND j.key = ?2",
			    m.message_id, cases[i].props[j].name,
			    cases[i].props[j].value);
	}
}

/* ---- DUPLICATE ------------------------------------------------------- */

/*
 * The same message again (rebuilt in a fresh arena, with another Timestamp,
 * which the content hash leaves out) is a duplicate: the FIRST receipt comes
 * back although another is offered, the counter moves, nothing else does.
 */
static void
test_inbox_duplicate(void **state)
{
	struct tstate *t = *state;
	struct tmsg m;
	char *snap, *again;
	int64_t n;

	t_base(&m, "dup");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	snap = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
	assert_non_null(snap);
	m.timestamp = "2026-01-02T03:09:00Z";
	for (n = 1; n <= 2; n++) {
		struct arena *a2 = arena_new(0);
		struct store_result res;
		struct err err;

		assert_non_null(a2);
		err_clear(&err);
		assert_int_equal(inbox_accept(t->s, a2, t_build(a2, &m), &T_LEG,
		    "198.51.100.1", RECEIPT_B, sizeof(RECEIPT_B) - 1, &res,
		    &err), 0);
		assert_int_equal(err.kind, ERR_NONE);
		assert_int_equal(res.outcome, STORE_DUPLICATE);
		assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
		assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
		assert_int_equal(res.duplicates, n);
		arena_free(a2);
		assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), n);
		assert_true(db_int(t, LAST_DUP_SQL, m.message_id, NULL) > 0);
		again = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(again);
		assert_string_equal(again, snap);
		free(again);
	}
	free(snap);
}

/* ---- mutations of the base message ------------------------------------ */

enum mut {
	MUT_NONE = 0,
	/* covered by the content hash: drift */
	MUT_PAYLOAD_BYTE, MUT_LAST_BYTE, MUT_PROPERTY, MUT_SERVICE,
	MUT_TO_TYPE, MUT_DROP_PART, MUT_FROM_TYPE,
	/* not covered (version 2): a duplicate */
	MUT_CONTENT_IDS,
	/* refused before any decision */
	MUT_NO_LEG, MUT_EMPTY_ID, MUT_LONG_ID, MUT_NO_CONVERSATION,
};

/* Apply mutation k to the spec m. */
static void
t_mutate(struct tmsg *m, enum mut k)
{
	switch (k) {
	case MUT_NONE: break;
	case MUT_PAYLOAD_BYTE: m->parts[0].data[3] ^= 0x01; break;
	case MUT_LAST_BYTE: m->parts[1].data[m->parts[1].len - 1] ^= 1; break;
	case MUT_PROPERTY: m->parts[0].props[1].value = "utf-16"; break;
	case MUT_SERVICE: m->service = "urn:as4gw:test:other"; break;
	case MUT_FROM_TYPE: m->from.ids[0].type = NULL; break;
	case MUT_TO_TYPE: m->to.ids[0].type = "urn:as4gw:test:type"; break;
	case MUT_CONTENT_IDS:
		m->parts[0].content_id = "fresh0@as4gw.test";
		m->parts[1].content_id = "fresh1@as4gw.test";
		break;
	case MUT_DROP_PART: m->n_parts = 2; break;
	case MUT_NO_LEG: break;     /* run_fail_case passes no leg */
	case MUT_EMPTY_ID: m->message_id[0] = '\0'; break;
	case MUT_LONG_ID:
		memset(m->message_id, 'x', STORE_MESSAGE_ID_MAX + 1);
		m->message_id[STORE_MESSAGE_ID_MAX + 1] = '\0';
		break;
	case MUT_NO_CONVERSATION: m->conversation_id = NULL; break;
	}
}

/* ---- DRIFT ----------------------------------------------------------- */

/*
 * The MessageId reused for other content: -1 with EBMS:0004, outcome
 * STORE_DRIFT and no receipt, and the stored row (counter included) is left
 * exactly as it was.
 */
static void
test_inbox_drift(void **state)
{
	static const struct {
		const char *name;
		enum mut mut;
		const char *field;  /* named in err.detail (the log) */
	} cases[] = {
		{ "payload-byte", MUT_PAYLOAD_BYTE,
		    "PartInfo[0] payload bytes" },
		{ "last-byte", MUT_LAST_BYTE, "PartInfo[1] payload bytes" },
		{ "property", MUT_PROPERTY, "PartInfo[0] PartProperties" },
		{ "service", MUT_SERVICE, "Service" },
		{ "to-type", MUT_TO_TYPE, "To" },
		{ "from-type", MUT_FROM_TYPE, "From" },
		{ "drop-part", MUT_DROP_PART, "PartInfo count" },
	};
	struct tstate *t = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct store_result res;
		struct err err;
		struct tmsg m;
		char *snap, *after;

		t_base(&m, cases[i].name);
		accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
		snap = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(snap);
		t_mutate(&m, cases[i].mut);
		err_clear(&err);
		memset(&res, 0, sizeof(res));
		assert_int_equal(inbox_accept(t->s, t->a, t_build(t->a, &m),
		    &T_LEG, "192.0.2.7", RECEIPT_B, sizeof(RECEIPT_B) - 1, &res,
		    &err), -1);
		assert_int_equal(err.kind, ERR_EBMS);
		assert_non_null(err.ebms_code);
		assert_string_equal(err.ebms_code, "EBMS:0004");
		assert_true(err.msg[0] != '\0');
		/* the field is for the log; the partner's text stays fixed */
		assert_non_null(strstr(err.detail, cases[i].field));
		assert_null(strstr(err.msg, cases[i].field));
		assert_string_equal(err.msg,
		    "message id already used for other content");
		assert_int_equal(res.outcome, STORE_DRIFT);
		assert_null(res.receipt);
		after = db_value(t, SNAPSHOT_SQL, m.message_id, NULL, NULL);
		assert_non_null(after);
		assert_string_equal(after, snap);
		assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 0);
		assert_int_equal(db_int(t, LAST_DUP_SQL, m.message_id, NULL),
		    -1);
		free(snap);
		free(after);
	}
}

/* ---- failures -------------------------------------------------------- */

/* Which store a failure case runs against. */
enum fail_store { FS_MIGRATED, FS_UNMIGRATED, FS_NULL };

struct fail_case {
	const char *name;
	enum mut mut;
	int no_receipt;
	size_t budget;          /* arena budget for the call; 0 = none */
	enum fail_store store;
	enum err_kind kind;
	const char *msg;        /* a part of err.msg */
};

/* Run one failure case: -1 with the expected kind and message, *ret
 * untouched, no row for the message. */
static void
run_fail_case(struct tstate *t, const struct fail_case *c)
{
	struct store_result res, sentinel;
	struct store *s = t->s, *raw = NULL;
	struct arena *a = t->a;
	struct err err;
	struct tmsg m;
	char dsn[300];

	err_clear(&err);
	t_base(&m, c->name);
	t_mutate(&m, c->mut);
	if (c->budget > 0)
		a = arena_new(c->budget);
	assert_non_null(a);
	if (c->store == FS_UNMIGRATED) {
		(void)snprintf(dsn, sizeof(dsn), "sqlite:%s", t->raw);
		assert_int_equal(store_open(dsn, &raw, &err), 0);
		s = raw;
	} else if (c->store == FS_NULL) {
		s = NULL;
	}
	memset(&res, 0xa5, sizeof(res));
	sentinel = res;
	if (inbox_accept(s, a, t_build(t->a, &m),
	    c->mut == MUT_NO_LEG ? NULL : &T_LEG, "192.0.2.7",
	    RECEIPT_A, c->no_receipt ? 0 : sizeof(RECEIPT_A) - 1, &res,
	    &err) != -1)
		fail_msg("%s: accepted", c->name);
	if (err.kind != c->kind || strstr(err.msg, c->msg) == NULL)
		fail_msg("%s: %s \"%s\", want %s \"...%s...\"", c->name,
		    err_kind_name(err.kind), err.msg, err_kind_name(c->kind),
		    c->msg);
	assert_null(err.ebms_code);
	assert_memory_equal(&res, &sentinel, sizeof(res));
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 0);
	store_close(raw);
	if (a != t->a)
		arena_free(a);
}

/*
 * Every way inbox_accept fails without a decision: no leg, a message or
 * receipt the store refuses, the request arena exhausted, no tables (a
 * database failure), no store at all (ERR_STORE, not a crash).  Nothing is
 * written.
 */
static void
test_inbox_failures(void **state)
{
	static const struct fail_case cases[] = {
		{ "no-leg", MUT_NO_LEG, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "no P-Mode leg for the inbox row" },
		{ "empty-id", MUT_EMPTY_ID, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "message id empty or too long" },
		{ "long-id", MUT_LONG_ID, 0, 0, FS_MIGRATED, ERR_INTERNAL,
		    "message id empty or too long" },
		{ "no-conv", MUT_NO_CONVERSATION, 0, 0, FS_MIGRATED,
		    ERR_INTERNAL, "a required field is missing" },
		{ "empty-receipt", MUT_NONE, 1, 0, FS_MIGRATED, ERR_INTERNAL,
		    "empty receipt" },
		{ "arena", MUT_NONE, 0, 32, FS_MIGRATED, ERR_INTERNAL,
		    "could not build the inbox row" },
		{ "unmigrated", MUT_NONE, 0, 0, FS_UNMIGRATED, ERR_STORE,
		    "no such table" },
		{ "null-store", MUT_NONE, 0, 0, FS_NULL, ERR_STORE,
		    "no store connection" },
	};
	struct tstate *t = *state;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_fail_case(t, &cases[i]);
	assert_int_equal(db_int(t, "SELECT count(*) FROM inbox", NULL, NULL),
	    0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM payload", NULL, NULL),
	    0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM delivery", NULL,
	    NULL), 0);
}

/*
 * The two-step API with a probe (receipt NULL): an unknown MessageId is
 * STORE_ABSENT and writes nothing; after the accept, a probe of the same
 * content is a DUPLICATE with the stored Receipt and counts; a probe of other
 * content is drift (EBMS:0004) and changes nothing.
 */
static void
test_inbox_probe(void **state)
{
	struct tstate *t = *state;
	struct store_message sm;
	struct store_result res;
	struct err err;
	struct tmsg m;

	t_base(&m, "probe");
	err_clear(&err);
	assert_int_equal(inbox_prepare(t->a, t_build(t->a, &m), &T_LEG,
	    "192.0.2.7", &sm, &err), 0);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_ABSENT);
	assert_null(res.receipt);
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 0);
	assert_int_equal(db_int(t, "SELECT count(*) FROM delivery", NULL, NULL),
	    0);
	/* the same prepared message, now with its receipt: NEW */
	assert_int_equal(inbox_submit(t->s, t->a, &sm, RECEIPT_A,
	    sizeof(RECEIPT_A) - 1, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_NEW);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err), 0);
	assert_int_equal(res.outcome, STORE_DUPLICATE);
	assert_int_equal(res.receipt_len, sizeof(RECEIPT_A) - 1);
	assert_memory_equal(res.receipt, RECEIPT_A, res.receipt_len);
	assert_int_equal(res.duplicates, 1);
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	t_mutate(&m, MUT_PAYLOAD_BYTE);
	assert_int_equal(inbox_prepare(t->a, t_build(t->a, &m), &T_LEG,
	    "192.0.2.7", &sm, &err), 0);
	assert_int_equal(inbox_submit(t->s, t->a, &sm, NULL, 0, &res, &err),
	    -1);
	assert_int_equal(res.outcome, STORE_DRIFT);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	err_clear(&err);
	assert_int_equal(inbox_submit(NULL, t->a, &sm, NULL, 0, &res, &err),
	    -1);
	assert_int_equal(err.kind, ERR_STORE);
}

/* inbox_accept() of m on leg in a fresh arena: the outcome (0 return) or
 * -1. */
static int
t_again(struct tstate *t, const struct pmode_leg *leg, const struct tmsg *m,
    struct err *err)
{
	struct arena *a = arena_new(0);
	struct store_result res;
	int rc;

	assert_non_null(a);
	err_clear(err);
	memset(&res, 0, sizeof(res));
	rc = inbox_accept(t->s, a, t_build(a, m), leg, "192.0.2.7",
	    RECEIPT_B, sizeof(RECEIPT_B) - 1, &res, err);
	if (rc == 0)
		rc = (int)res.outcome;
	arena_free(a);
	return rc;
}

/*
 * The key is (sending party, MessageId), the party being the matched leg's:
 * the same MessageId from another party is a new row, not a drift, and
 * leaves the first row alone; a retry rebuilt with fresh Content-IDs is a
 * duplicate (hash version 2, payload.h).
 */
static void
test_inbox_party_key(void **state)
{
	static char b_id[] = "leg-b", b_from[] = "partner-b";
	struct tstate *t = *state;
	struct pmode_leg leg_b = T_LEG;
	struct tmsg m, other;
	struct err err;

	t_base(&m, "key");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	leg_b.id = b_id;
	leg_b.from.name = b_from;
	other = m;
	t_mutate(&other, MUT_FROM_TYPE);
	other.parts[0].data[0] ^= 1;    /* and other content */
	assert_int_equal(t_again(t, &leg_b, &other, &err), STORE_NEW);
	assert_int_equal(db_int(t, COUNT_INBOX_SQL, m.message_id, NULL), 2);
	assert_int_equal(db_int(t, "SELECT count(*) FROM payload"
	    " WHERE message_id = ?1", m.message_id, NULL), 6);
	assert_int_equal(t_again(t, &leg_b, &other, &err), STORE_DUPLICATE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	t_mutate(&m, MUT_CONTENT_IDS);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	t_mutate(&m, MUT_SERVICE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	/* the first party's row: its receipt, one duplicate per retry; the
	 * other party's: its own receipt */
	db_bytes_eq(t, ROW("receipt") " AND from_party = ?2", m.message_id,
	    PTYPE ":sender-gw", RECEIPT_A, sizeof(RECEIPT_A) - 1);
	assert_int_equal(db_int(t, DUPS_SQL " AND from_party = ?2",
	    m.message_id, PTYPE ":sender-gw"), 2);
	db_bytes_eq(t, ROW("receipt") " AND from_party = ?2", m.message_id,
	    b_from, RECEIPT_B, sizeof(RECEIPT_B) - 1);
	assert_int_equal(db_int(t, DUPS_SQL " AND from_party = ?2",
	    m.message_id, b_from), 1);
}

/*
 * A row stored before migration 003 (version 1 hash, no field digests)
 * keeps matching its retries (the same Content-IDs): a duplicate with its
 * stored Receipt, not a drift; other content is still a drift, logged as
 * a row without digests.
 */
static void
test_inbox_v1_row(void **state)
{
	struct tstate *t = *state;
	struct tmsg m;
	struct ebms_user_message *um;
	unsigned char v1[32];
	char hex[65], sql[300];
	struct err err;
	sqlite3 *db;
	size_t i;

	t_base(&m, "old");
	accept_new(t, t->a, &m, RECEIPT_A, sizeof(RECEIPT_A) - 1);
	um = t_build(t->a, &m);
	assert_int_equal(payload_content_hash(um, v1), 0);
	for (i = 0; i < sizeof(v1); i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", v1[i]);
	(void)snprintf(sql, sizeof(sql), "UPDATE inbox SET field_hashes ="
	    " NULL, content_hash = X'%s'", hex);
	assert_int_equal(sqlite3_open(t->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), STORE_DUPLICATE);
	assert_int_equal(db_int(t, DUPS_SQL, m.message_id, NULL), 1);
	t_mutate(&m, MUT_SERVICE);
	assert_int_equal(t_again(t, &T_LEG, &m, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	assert_non_null(strstr(err.detail, "before per-field digests"));
}

/*
 * The retry hint: a noted id is seen, others are not (a different id in
 * the same slot evicts it: only a hint); NULL table and NULL id are safe;
 * sizes out of range are refused.
 */
static void
test_inbox_recent(void **state)
{
	struct inbox_recent *r = inbox_recent_new(4);
	char id[32];
	int i, seen = 0;

	(void)state;
	assert_non_null(r);
	assert_null(inbox_recent_new(0));
	assert_null(inbox_recent_new(25));
	assert_int_equal(inbox_recent_seen(r, "A", "a@x"), 0);
	inbox_recent_note(r, "A", "a@x");
	assert_int_equal(inbox_recent_seen(r, "A", "a@x"), 1);
	assert_int_equal(inbox_recent_seen(r, "A", "b@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "A", ""), 0);
	/* the key is (party, id): another party's id is not a retry, and the
	 * NUL between them keeps ("Aa", "@x") apart from ("A", "a@x") */
	assert_int_equal(inbox_recent_seen(r, "B", "a@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "Aa", "@x"), 0);
	/* 16 slots: 100 more ids leave at most 16 of them seen */
	for (i = 0; i < 100; i++) {
		(void)snprintf(id, sizeof(id), "m%d@x", i);
		inbox_recent_note(r, "A", id);
	}
	for (i = 0; i < 100; i++) {
		(void)snprintf(id, sizeof(id), "m%d@x", i);
		seen += inbox_recent_seen(r, "A", id);
	}
	assert_true(seen >= 1 && seen <= 16);
	assert_int_equal(inbox_recent_seen(NULL, "A", "a@x"), 0);
	assert_int_equal(inbox_recent_seen(r, "A", NULL), 0);
	assert_int_equal(inbox_recent_seen(r, NULL, "a@x"), 0);
	inbox_recent_note(NULL, "A", "a@x");
	inbox_recent_note(r, "A", NULL);
	inbox_recent_note(r, NULL, "a@x");
	inbox_recent_free(r);
	inbox_recent_free(NULL);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_inbox_new_parties), T(test_inbox_new_row),
		T(test_inbox_props_json), T(test_inbox_duplicate),
		T(test_inbox_drift), T(test_inbox_failures),
		T(test_inbox_probe), T(test_inbox_recent),
		T(test_inbox_party_key), T(test_inbox_v1_row),
	};
#undef T

	return cmocka_run_group_tests(tests, NULL, NULL);
}
