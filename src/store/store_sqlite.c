/*
 * store_sqlite — the embedded backend.  One connection per struct store
 * (SQLITE_OPEN_NOMUTEX: one thread at a time), WAL journal, 16 KiB pages in
 * a new file (store_sqlite_int.h), synchronous=FULL
 * so a COMMIT that returned is on disk before the Receipt is sent, foreign
 * keys on, and a busy timeout so writers of other processes queue instead
 * of failing.  Writers of this process queue in store_sqlite_writer.c (no
 * busy sleeps), share commits and write on one connection of the writer's
 * own; this file holds one accept's SQL.  Statements are prepared once per
 * connection, at its first accept (after the schema exists).  The delivery
 * queue is in store_sqlite_queue.c; payloads stored in chunks in
 * store_sqlite_chunk.c.
 */
#include "store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "store_sql.h"
#include "store_sqlite_int.h"
#include "../spool/spool.h"
#include "../util/clock.h"
#include "../util/fault.h"

enum store_sqlite_stmt {
	STORE_SQ_BEGIN,
	STORE_SQ_COMMIT,
	STORE_SQ_ROLLBACK,
	STORE_SQ_SAVEPOINT,
	STORE_SQ_RELEASE,
	STORE_SQ_ROLLBACK_TO,
	STORE_SQ_INS_INBOX,
	STORE_SQ_INS_PAYLOAD,
	STORE_SQ_INS_DELIVERY,
	STORE_SQ_SEL_INBOX,
	STORE_SQ_UPD_DUP,
	STORE_SQ_UPD_HASHES,
	STORE_SQ_SEL_HOLDER,
	STORE_SQ_INS_CHUNK,
	STORE_SQ_COUNT
};

static const struct {
	const char *what;  /* for "could not <what>: <sqlite message>" */
	const char *sql;
} store_sqlite_stmts[STORE_SQ_COUNT] = {
	[STORE_SQ_BEGIN] = { "begin transaction", "BEGIN IMMEDIATE" },
	[STORE_SQ_COMMIT] = { "commit", "COMMIT" },
	[STORE_SQ_ROLLBACK] = { "roll back", "ROLLBACK" },
	[STORE_SQ_SAVEPOINT] = { "set savepoint", "SAVEPOINT accept" },
	[STORE_SQ_RELEASE] = { "release savepoint", "RELEASE accept" },
	[STORE_SQ_ROLLBACK_TO] = { "roll back to savepoint",
	    "ROLLBACK TO accept" },
	[STORE_SQ_INS_INBOX] = { "insert inbox row",
	    "INSERT INTO inbox (message_id, from_party, to_party, service,"
	    " action, conversation_id, agreement_ref, pmode_id, source,"
	    " content_hash, receipt, received_at, partition_key,"
	    " field_hashes, business_key, business_duplicate_of)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,"
	    " ?14, ?15, ?16) ON CONFLICT (from_party, message_id) DO NOTHING" },
	[STORE_SQ_INS_PAYLOAD] = { "insert payload",
	    "INSERT INTO payload (message_id, part_no, content_id, mime_type,"
	    " properties, content, from_party, size)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)" },
	[STORE_SQ_INS_DELIVERY] = { "insert delivery row",
	    "INSERT INTO delivery (message_id, state, attempts, created_at,"
	    " from_party) VALUES (?1, 'ready', 0, ?2, ?3)" },
	[STORE_SQ_SEL_INBOX] = { "read inbox row",
	    "SELECT content_hash, receipt, field_hashes FROM inbox"
	    " WHERE from_party = ?2 AND message_id = ?1" },
	[STORE_SQ_UPD_DUP] = { "count duplicate",
	    "UPDATE inbox SET duplicates = duplicates + 1,"
	    " last_duplicate_at = ?2 WHERE from_party = ?3 AND message_id = ?1"
	    " RETURNING duplicates" },
	[STORE_SQ_UPD_HASHES] = { "store content hashes",
	    "UPDATE inbox SET content_hash = ?3, field_hashes = ?4"
	    " WHERE from_party = ?2 AND message_id = ?1" },
	/* inbox_business_key_idx (005_business_key.sql) */
	[STORE_SQ_SEL_HOLDER] = { "look up business key",
	    "SELECT message_id FROM inbox WHERE from_party = ?1"
	    " AND business_key = ?2 AND business_duplicate_of IS NULL"
	    " AND message_id <> ?3" },
	/* 007_payload_chunk.sql; store_sqlite_chunk.c binds it */
	[STORE_SQ_INS_CHUNK] = { "insert payload chunk",
	    "INSERT INTO payload_chunk (from_party, message_id, part_no,"
	    " chunk_no, content) VALUES (?1, ?2, ?3, ?4, ?5)" },
};

_Static_assert(STORE_SQ_COUNT == STORE_SQLITE_ACCEPT_STMTS,
    "STORE_SQLITE_ACCEPT_STMTS must count accept's statements");

/* Record the connection's last failure as ERR_STORE ("could not <what>"). */
int
store_sqlite_fail(struct store_sqlite *s, const char *what, struct err *err)
{
	return err_set(err, ERR_STORE, NULL, "could not %s: %s", what,
	    sqlite3_errmsg(s->db));
}

/* Finalize the cached statements (the next accept prepares them again). */
static void
store_sqlite_finalize(struct store_sqlite *s)
{
	size_t i;

	for (i = 0; i < STORE_SQ_COUNT; i++) {
		(void)sqlite3_finalize(s->st[i]);
		s->st[i] = NULL;
	}
}

/* Prepare every statement once per connection; fails if not migrated. */
int
store_sqlite_prepare(struct store_sqlite *s, struct err *err)
{
	size_t i;

	if (s->st[0] != NULL)
		return 0;
	for (i = 0; i < STORE_SQ_COUNT; i++) {
		if (sqlite3_prepare_v3(s->db, store_sqlite_stmts[i].sql, -1,
		    SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) != SQLITE_OK) {
			(void)store_sqlite_fail(s, "prepare statement", err);
			store_sqlite_finalize(s);
			return -1;
		}
	}
	return 0;
}

/* Bind bytes; an empty value is a zero-length blob, never NULL. */
static int
store_sqlite_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len)
{
	if (len == 0)
		return sqlite3_bind_zeroblob(st, i, 0);
	return sqlite3_bind_blob64(st, i, p, (sqlite3_uint64)len,
	    SQLITE_STATIC);
}

/* Bind text; NULL binds SQL NULL. */
int
store_sqlite_bind_text(sqlite3_stmt *st, int i, const char *t)
{
	return sqlite3_bind_text(st, i, t, -1, SQLITE_STATIC);
}

/* Forget a statement's bindings and results so it can run again. */
void
store_sqlite_done(sqlite3_stmt *st)
{
	(void)sqlite3_reset(st);
	(void)sqlite3_clear_bindings(st);
}

/*
 * Step a bound statement that returns no row.  bind_rc is the OR of the
 * bind results (SQLITE_OK is 0), so a failed bind fails here.
 */
int
store_sqlite_step(struct store_sqlite *s, sqlite3_stmt *st, int bind_rc,
    const char *what, struct err *err)
{
	int rc = -1;

	if (bind_rc == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE)
		rc = 0;
	else
		(void)store_sqlite_fail(s, what, err);
	store_sqlite_done(st);
	return rc;
}

/* store_sqlite_step() of one of accept's statements. */
static int
store_sqlite_run(struct store_sqlite *s, enum store_sqlite_stmt id,
    int bind_rc, struct err *err)
{
	return store_sqlite_step(s, s->st[id], bind_rc,
	    store_sqlite_stmts[id].what, err);
}

/* The content hash a row holds until its hashes are in (one transaction). */
static const unsigned char store_sqlite_nohash[STORE_HASH_LEN];

/*
 * INSERT ... ON CONFLICT DO NOTHING, holder the business key's holder (a
 * flagged row) or NULL: 1 inserted, 0 id exists, -1 error.
 */
static int
store_sqlite_insert_inbox(struct store_sqlite *s, const struct store_message *m,
    const char *holder, struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_INS_INBOX];
	int b;

	b = store_sqlite_bind_text(st, 1, m->message_id);
	b |= store_sqlite_bind_text(st, 2, m->from_party);
	b |= store_sqlite_bind_text(st, 3, m->to_party);
	b |= store_sqlite_bind_text(st, 4, m->service);
	b |= store_sqlite_bind_text(st, 5, m->action);
	b |= store_sqlite_bind_text(st, 6, m->conversation_id);
	b |= store_sqlite_bind_text(st, 7, m->agreement_ref);
	b |= store_sqlite_bind_text(st, 8, m->pmode_id);
	b |= store_sqlite_bind_text(st, 9, m->source);
	/* hashes still being computed: a placeholder until
	 * store_sqlite_hashes, in this transaction */
	b |= store_sqlite_bind_blob(st, 10, m->pending != NULL ?
	    store_sqlite_nohash : m->content_hash, STORE_HASH_LEN);
	b |= store_sqlite_bind_blob(st, 11, m->receipt, m->receipt_len);
	b |= sqlite3_bind_int64(st, 12, m->received_at_ms);
	b |= store_sqlite_bind_text(st, 13, m->partition_key);
	b |= m->field_hashes != NULL && m->pending == NULL ?
	    store_sqlite_bind_blob(st, 14,
	    m->field_hashes, m->field_hashes_len) : sqlite3_bind_null(st, 14);
	b |= store_sqlite_bind_text(st, 15, m->business_key);
	b |= store_sqlite_bind_text(st, 16, holder);
	if (store_sqlite_run(s, STORE_SQ_INS_INBOX, b, err) == -1)
		return -1;
	return sqlite3_changes(s->db) == 1 ? 1 : 0;
}

/*
 * The rest of a new message: its payload rows (a part longer than
 * STORE_CHUNK_THRESHOLD with its size and no content, then its chunk rows:
 * store_sqlite_chunk.c) and its delivery row.
 */
static int
store_sqlite_insert_rest(struct store_sqlite *s, const struct store_message *m,
    struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_INS_PAYLOAD];
	size_t i;
	int b, big;

	for (i = 0; i < m->n_parts; i++) {
		const struct store_part *p = &m->parts[i];

		big = p->len > STORE_CHUNK_THRESHOLD;
		b = store_sqlite_bind_text(st, 1, m->message_id);
		b |= sqlite3_bind_int(st, 2, p->part_no);
		b |= store_sqlite_bind_text(st, 3, p->content_id);
		b |= store_sqlite_bind_text(st, 4, p->mime_type);
		b |= store_sqlite_bind_text(st, 5,
		    p->properties != NULL ? p->properties : "{}");
		b |= store_sqlite_bind_blob(st, 6, p->data, big ? 0 : p->len);
		b |= store_sqlite_bind_text(st, 7, m->from_party);
		b |= big ? sqlite3_bind_int64(st, 8, (sqlite3_int64)p->len) :
		    sqlite3_bind_null(st, 8);
		if (store_sqlite_run(s, STORE_SQ_INS_PAYLOAD, b, err) == -1 ||
		    (big && store_sqlite_chunk_insert(s,
		    s->st[STORE_SQ_INS_CHUNK], m, p, err) == -1))
			return -1;
		if (!big && p->len > 0)  /* read whole: release it behind */
			spool_done(p->data, p->len);
	}
	st = s->st[STORE_SQ_INS_DELIVERY];
	b = store_sqlite_bind_text(st, 1, m->message_id);
	b |= sqlite3_bind_int64(st, 2, m->received_at_ms);
	b |= store_sqlite_bind_text(st, 3, m->from_party);
	return store_sqlite_run(s, STORE_SQ_INS_DELIVERY, b, err);
}

/*
 * Whether the stored row (the statement is on it) holds m's content: its
 * hash is m's version 2 hash, or it has no field digests (stored before
 * migration 003) and its hash is m's version 1 hash (store.h).
 */
static int
store_sqlite_same(sqlite3_stmt *st, const struct store_message *m)
{
	const void *h = sqlite3_column_blob(st, 0);

	if (sqlite3_column_bytes(st, 0) != STORE_HASH_LEN || h == NULL)
		return 0;
	if (memcmp(h, m->content_hash, STORE_HASH_LEN) == 0)
		return 1;
	return sqlite3_column_type(st, 2) == SQLITE_NULL &&
	    memcmp(h, m->content_hash_v1, STORE_HASH_LEN) == 0;
}

/*
 * Copy column col of the row into a as ret and ret_len (NULL stays NULL);
 * 0, or -1 (ERR_INTERNAL) when a is exhausted.
 */
static int
store_sqlite_copy(sqlite3_stmt *st, int col, struct arena *a,
    const unsigned char **ret, size_t *ret_len, struct err *err)
{
	const void *p = sqlite3_column_blob(st, col);
	int n = sqlite3_column_bytes(st, col);

	*ret = NULL;
	*ret_len = 0;
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return 0;
	*ret = arena_memdup(a, p, (size_t)n);
	*ret_len = (size_t)n;
	if (*ret == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "request memory exhausted copying a stored row");
	return 0;
}

/*
 * Look up the stored row of m's key: 1 found (*same: it holds m's content;
 * then, when a is not NULL, the stored receipt is copied into a and ret;
 * when not the same, the stored field digests), 0 no row, -1 error.
 */
static int
store_sqlite_lookup(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, int *same, struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_SEL_INBOX];
	int rc = -1;

	if (store_sqlite_bind_text(st, 1, m->message_id) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, m->from_party) != SQLITE_OK)
		goto fail;
	switch (sqlite3_step(st)) {
	case SQLITE_DONE: rc = 0; goto out;
	case SQLITE_ROW: break;
	default: goto fail;
	}
	/* a row without field digests is compared with version 1 */
	if ((sqlite3_column_type(st, 2) == SQLITE_NULL ? store_hash_v1(m,
	    err) : store_hashes(m, err)) == -1)
		goto out;
	*same = store_sqlite_same(st, m);
	rc = 1;
	if (a == NULL)
		goto out;
	if (*same)
		rc = store_sqlite_copy(st, 1, a, &ret->receipt,
		    &ret->receipt_len, err) == 0 ? 1 : -1;
	else
		rc = store_sqlite_copy(st, 2, a, &ret->stored_fields,
		    &ret->stored_fields_len, err) == 0 ? 1 : -1;
	goto out;
fail:
	(void)store_sqlite_fail(s, "read inbox row", err);
out:
	store_sqlite_done(st);
	return rc;
}

/* Count one more duplicate; the counter after the update into ret. */
static int
store_sqlite_count_dup(struct store_sqlite *s, const struct store_message *m,
    struct store_result *ret, struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_UPD_DUP];
	int rc = -1;

	if (store_sqlite_bind_text(st, 1, m->message_id) != SQLITE_OK ||
	    sqlite3_bind_int64(st, 2, m->received_at_ms) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 3, m->from_party) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		(void)store_sqlite_fail(s, "count duplicate", err);
		goto out;
	}
	ret->duplicates = sqlite3_column_int64(st, 0);
	rc = 0;
out:
	store_sqlite_done(st);
	return rc;
}

/*
 * The holder of m's business key (another MessageId of the same party):
 * 1 found (*ret_holder, a copy in a), 0 none, -1 error.
 */
static int
store_sqlite_holder(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, const char **ret_holder, struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_SEL_HOLDER];
	int rc = -1;

	if (store_sqlite_bind_text(st, 1, m->from_party) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 2, m->business_key) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 3, m->message_id) != SQLITE_OK)
		goto fail;
	switch (sqlite3_step(st)) {
	case SQLITE_DONE: rc = 0; goto out;
	case SQLITE_ROW: break;
	default: goto fail;
	}
	*ret_holder = arena_strdup(a,
	    (const char *)sqlite3_column_text(st, 0));
	rc = *ret_holder != NULL ? 1 : err_set(err, ERR_INTERNAL, NULL,
	    "request memory exhausted copying a message id");
	goto out;
fail:
	(void)store_sqlite_fail(s, "look up business key", err);
out:
	store_sqlite_done(st);
	return rc;
}

/*
 * Before the insert, inside the write transaction (store.h): the holder of
 * m's business key into *ret_holder (NULL: none).  Under
 * STORE_BUSINESS_REFUSE a held key refuses a MessageId not stored yet:
 * 1, decided (STORE_BUSINESS_DUP in ret, nothing written).  0 go on (a
 * stored MessageId is a retry, decided as usual), -1 error.
 */
static int
store_sqlite_business(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, const char **ret_holder,
    struct err *err)
{
	int r, same = 0;

	*ret_holder = NULL;
	r = store_sqlite_holder(s, m, a, ret_holder, err);
	if (r != 1 || m->business_mode != STORE_BUSINESS_REFUSE)
		return r == -1 ? -1 : 0;
	r = store_sqlite_lookup(s, m, NULL, NULL, &same, err);
	if (r != 0)
		return r == 1 ? 0 : -1;
	ret->outcome = STORE_BUSINESS_DUP;
	ret->receipt = NULL;
	ret->receipt_len = 0;
	ret->business_duplicate_of = *ret_holder;
	return 1;
}

/* Run one transaction control statement of store_sqlite_int.h. */
int
store_sqlite_txn(struct store_sqlite *s, enum store_sqlite_txn op,
    struct err *err)
{
	static const enum store_sqlite_stmt id[] = {
		[STORE_SQLITE_BEGIN] = STORE_SQ_BEGIN,
		[STORE_SQLITE_COMMIT] = STORE_SQ_COMMIT,
		[STORE_SQLITE_ROLLBACK] = STORE_SQ_ROLLBACK,
		[STORE_SQLITE_SAVEPOINT] = STORE_SQ_SAVEPOINT,
		[STORE_SQLITE_RELEASE] = STORE_SQ_RELEASE,
		[STORE_SQLITE_ROLLBACK_TO] = STORE_SQ_ROLLBACK_TO,
	};

	return store_sqlite_run(s, id[op], SQLITE_OK, err);
}

/*
 * A NEW whose hashes were still being computed when its row went in with a
 * placeholder: wait for them (its payload rows are written by now), then
 * store them in the row.
 */
static int
store_sqlite_hashes(struct store_sqlite *s, const struct store_message *m,
    struct err *err)
{
	sqlite3_stmt *st = s->st[STORE_SQ_UPD_HASHES];
	int b;

	if (m->pending == NULL)
		return 0;
	if (store_hashes(m, err) == -1)
		return -1;
	b = store_sqlite_bind_text(st, 1, m->message_id);
	b |= store_sqlite_bind_text(st, 2, m->from_party);
	b |= store_sqlite_bind_blob(st, 3, m->content_hash, STORE_HASH_LEN);
	b |= m->field_hashes != NULL ? store_sqlite_bind_blob(st, 4,
	    m->field_hashes, m->field_hashes_len) : sqlite3_bind_null(st, 4);
	if (store_sqlite_run(s, STORE_SQ_UPD_HASHES, b, err) == -1)
		return -1;
	if (sqlite3_changes(s->db) != 1)
		return err_set(err, ERR_STORE, NULL,
		    "could not store content hashes: row missing");
	return 0;
}

/* A NEW: the rest of its rows, then the fault point, then the result. */
static int
store_sqlite_new(struct store_sqlite *s, const struct store_message *m,
    struct store_result *ret, struct err *err)
{
	if (store_sqlite_insert_rest(s, m, err) == -1 ||
	    store_sqlite_hashes(s, m, err) == -1)
		return -1;
	fault_point("store.after-insert");
	ret->outcome = STORE_NEW;
	ret->receipt = m->receipt;
	ret->receipt_len = m->receipt_len;
	ret->duplicates = 0;
	return 0;
}

/*
 * Inside the open transaction: decide and record new / duplicate / drift.
 * A probe inserts nothing: no row is STORE_ABSENT.
 */
int
store_sqlite_decide(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	const char *holder = NULL;
	int r = 0, same = 0;

	ret->business_duplicate_of = NULL;
	if (m->receipt != NULL && m->business_key != NULL) {
		r = store_sqlite_business(s, m, a, ret, &holder, err);
		if (r != 0)
			return r == 1 ? 0 : -1;
	}
	if (m->receipt != NULL)
		r = store_sqlite_insert_inbox(s, m, holder, err);
	if (r == 1) {
		ret->business_duplicate_of = holder;
		return store_sqlite_new(s, m, ret, err);
	}
	if (r == 0)
		r = store_sqlite_lookup(s, m, a, ret, &same, err);
	if (r == 0 && m->receipt != NULL)  /* the conflicting row is gone? */
		return err_set(err, ERR_STORE, NULL,
		    "could not read inbox row: row missing after a conflict");
	if (r == -1)
		return -1;
	if (r == 0 || !same) {
		ret->outcome = r == 0 ? STORE_ABSENT : STORE_DRIFT;
		ret->receipt = NULL;
		ret->receipt_len = 0;
		return 0;       /* a drift's stored_fields: set by the lookup */
	}
	if (store_sqlite_count_dup(s, m, ret, err) == -1)
		return -1;
	ret->outcome = STORE_DUPLICATE;
	return 0;
}

/* What a message adds to a group-commit batch (bounded per batch). */
static size_t
store_sqlite_bytes(const struct store_message *m)
{
	size_t n = m->receipt_len, i;

	for (i = 0; i < m->n_parts; i++)
		n += m->parts[i].len;
	return n;
}

/*
 * Before a batch's write transaction, on the writer's connection (a read:
 * no lock in WAL mode, and that connection's page cache is warm): 1 when m
 * needs no write, answered into ret (a drifted row, or a probe of an absent
 * one); 0 when it goes into the write transaction, with *may_insert set
 * when it is not a probe and its row was not seen (or the read failed:
 * the write transaction meets the failure again and reports it).
 */
int
store_sqlite_look(struct store_sqlite *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, int *may_insert)
{
	int found, same = 0;

	found = store_sqlite_lookup(s, m, NULL, NULL, &same, NULL);
	*may_insert = found != 1 && m->receipt != NULL;
	if ((found == 1 && !same) || (found == 0 && m->receipt == NULL)) {
		ret->outcome = found == 1 ? STORE_DRIFT : STORE_ABSENT;
		ret->receipt = NULL;
		ret->receipt_len = 0;
		/* a drift (rare): read again for its field digests, which
		 * only the log uses (a failure leaves them NULL) */
		if (found == 1 && a != NULL)
			(void)store_sqlite_lookup(s, m, a, ret, &same, NULL);
		return 1;
	}
	return 0;
}

/*
 * The accept transaction (store.h): queue in the process's writer
 * (store_sqlite_writer.c), which reads first (store_sqlite_look) and
 * decides again inside the write transaction (the row may have come or
 * gone meanwhile).  Nothing is read on this handle's own connection: every
 * commit of the writer's connection empties its page cache, so a read here
 * would cost a pread per page.
 */
static int
store_sqlite_accept(struct store *base, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	struct store_sqlite_req r;

	memset(&r, 0, sizeof(r));
	r.m = m;
	r.a = a;
	r.ret = ret;
	r.err = err;
	r.bytes = store_sqlite_bytes(m);
	r.spool = spool_bound();
	return store_sqlite_writer_accept(s, &r);
}

/* Run SQL text without results (pragmas, DDL, transaction control). */
int
store_sqlite_exec(struct store_sqlite *s, const char *sql, const char *what,
    struct err *err)
{
	if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return store_sqlite_fail(s, what, err);
	return 0;
}

/* synchronous=NORMAL or FULL (store_sqlite_int.h); outside a transaction. */
int
store_sqlite_sync(struct store_sqlite *s, int normal, struct err *err)
{
	if (s->sync_normal == (normal != 0))
		return 0;
	if (store_sqlite_exec(s, normal ? "PRAGMA synchronous = NORMAL" :
	    "PRAGMA synchronous = FULL", "set synchronous", err) == -1)
		return -1;
	s->sync_normal = normal != 0;
	return 0;
}

/*
 * Liveness: read the schema page, which touches the database file (a bare
 * SELECT 1 would succeed even with the file gone unreadable).
 */
static int
store_sqlite_ping(struct store *base, struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;

	return store_sqlite_exec(s, "SELECT count(*) FROM sqlite_schema",
	    "reach the database", err);
}

/* Finalize statements, close the connection, free it (no writer). */
void
store_sqlite_disconnect(struct store_sqlite *s)
{
	if (s == NULL)
		return;
	store_sqlite_finalize(s);
	store_sqlite_queue_finalize(s);
	(void)sqlite3_close(s->db);
	free(s);
}

/* Close the handle's connection, then drop its writer reference (the last
 * one closes the writer's connection). */
static void
store_sqlite_close(struct store *base)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	struct store_sqlite_writer *w = s->w;

	store_sqlite_disconnect(s);
	store_sqlite_writer_put(w);
}

static const struct store_ops store_sqlite_ops = {
	.name = "sqlite",
	.migrate = store_sqlite_migrate,
	.ping = store_sqlite_ping,
	.accept = store_sqlite_accept,
	.close = store_sqlite_close,
	.claim = store_sqlite_queue_claim,
	.finish = store_sqlite_queue_finish,
	.find = store_sqlite_find,
	.purge_log = store_sqlite_purge_log,
	.purge_totals = store_sqlite_purge_totals,
	.payload_read = store_sqlite_payload_read,
	.purge = store_sqlite_queue_purge,
	.stats = store_sqlite_queue_stats,
	.wait = store_sqlite_queue_wait,
};

/*
 * One attempt to switch to WAL ("memory" is what an in-memory database
 * reports instead): SQLITE_OK, SQLITE_BUSY (err untouched), or another code
 * with err set.
 */
static int
store_sqlite_wal_once(struct store_sqlite *s, struct err *err)
{
	sqlite3_stmt *st = NULL;
	const char *mode;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st,
	    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		mode = (const char *)sqlite3_column_text(st, 0);
		rc = SQLITE_OK;
		if (mode == NULL ||
		    (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0))
			rc = err_set(err, ERR_STORE, NULL,
			    "could not set journal_mode wal (got %s)",
			    mode != NULL ? mode : "nothing");
	} else if ((rc & 0xff) == SQLITE_BUSY)
		rc = SQLITE_BUSY;
	else
		(void)store_sqlite_fail(s, "set journal_mode", err);
	(void)sqlite3_finalize(st);
	return rc;
}

/*
 * Switch to WAL.  While another connection creates the same new database,
 * the pragma can answer SQLITE_BUSY without consulting the busy handler, so
 * several gateways starting at once retry here for up to the busy timeout.
 */
static int
store_sqlite_wal(struct store_sqlite *s, struct err *err)
{
	const struct timespec pause = { 0, 10 * 1000 * 1000 };
	int64_t deadline = clock_mono_ms() + STORE_SQLITE_BUSY_MS;
	int rc;

	while ((rc = store_sqlite_wal_once(s, err)) == SQLITE_BUSY &&
	    clock_mono_ms() < deadline)
		(void)nanosleep(&pause, NULL);
	if (rc == SQLITE_BUSY)
		return err_set(err, ERR_STORE, NULL,
		    "could not set journal_mode wal: database is locked");
	return rc == SQLITE_OK ? 0 : -1;
}

/* Open path (creating the file) and configure one connection (no writer). */
int
store_sqlite_connect(const char *path, struct store_sqlite **ret,
    struct err *err)
{
	struct store_sqlite *s;
	int rc = -1;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	s->base.ops = &store_sqlite_ops;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		(void)err_set(err, ERR_STORE, NULL,
		    "could not open sqlite database \"%s\": %s", path,
		    s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
		goto out;
	}
	(void)sqlite3_extended_result_codes(s->db, 1);
	if (sqlite3_busy_timeout(s->db, STORE_SQLITE_BUSY_MS) != SQLITE_OK ||
	    store_sqlite_exec(s, "PRAGMA foreign_keys = ON",
	    "enable foreign keys", err) == -1 ||
	    store_sqlite_exec(s, "PRAGMA synchronous = FULL",
	    "set synchronous", err) == -1 ||
	    store_sqlite_exec(s, "PRAGMA page_size = "
	    STORE_SQLITE_PAGE_SIZE_SQL, "set page_size", err) == -1 ||
	    store_sqlite_wal(s, err) == -1 ||
	    store_sqlite_exec(s, "PRAGMA journal_size_limit = "
	    STORE_SQLITE_WAL_LIMIT_SQL, "set journal_size_limit", err) == -1)
		goto out;
	*ret = s;
	rc = 0;
out:
	if (rc == -1)
		store_sqlite_disconnect(s);
	return rc;
}

/* Open path (creating the file): the handle's connection and the process's
 * writer of the file (store_sqlite_writer.c). */
int
store_sqlite_open(const char *path, struct store **ret, struct err *err)
{
	struct store_sqlite *s;

	if (store_sqlite_connect(path, &s, err) == -1)
		return -1;
	if (store_sqlite_writer_get(sqlite3_db_filename(s->db, "main"), &s->w,
	    err) == -1) {
		store_sqlite_disconnect(s);
		return -1;
	}
	*ret = &s->base;
	return 0;
}
