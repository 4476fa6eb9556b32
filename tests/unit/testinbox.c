/*
 * testinbox — the fixture shared by the test_inbox_*.c programs (see
 * testinbox.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testinbox.h"

const unsigned char RECEIPT_A[] = "<eb:Receipt>first</eb:Receipt>";

/* ---- the matched leg -------------------------------------------------- */

/*
 * The leg every accept runs under (the gateway passes the one pmode_match
 * chose): its parties' canonical names are what the row records, whatever
 * PartyIds the message names (issue 10).
 */
char t_leg_id[] = "leg-0";
static char t_leg_from[] = PTYPE ":sender-gw";
static char t_leg_to[] = "receiver-gw";

const struct pmode_leg T_LEG = {
	.id = t_leg_id,
	.from = { .name = t_leg_from },
	.to = { .name = t_leg_to },
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
struct ebms_user_message *
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
void
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
int
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
int
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

/* A statement on its own read-only connection to the database file. */
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
char *
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
int64_t
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

/* Assert that sql(a1, a2) reads exactly the bytes want[0..len). */
void
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

/* ---- helpers for the cases -------------------------------------------- */

/* Accept t (built in arena a) with receipt r; assert it is new. */
void
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

/* Apply mutation k to the spec m. */
void
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
