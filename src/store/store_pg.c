/*
 * store_pg — the PostgreSQL backend on libpq.  One PGconn per struct store,
 * named statements prepared once per connection (again after a reconnect),
 * bytea sent and read in binary, READ COMMITTED transactions.  The inbox
 * primary key is the only coordination several gateways need: a concurrent
 * INSERT of the same MessageId waits for the first to commit, then conflicts.
 *
 * A failure never leaves a transaction open (ROLLBACK, or the connection is
 * gone).  A lost connection is ERR_STORE; the next call tries PQreset first.
 * accept is a handful of round trips; each step is its own function so they
 * can later be folded into one statement.  The NOTIFY of a new message rides
 * with the COMMIT (no extra round trip).  The delivery queue is in
 * store_pg_queue.c.
 */
#include "store.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_pg_int.h"
#include "store_sql.h"
#include "../util/buf.h"
#include "../util/fault.h"

/* Advisory lock key held while migrating ("as4g" in ASCII). */
#define STORE_PG_MIGRATE_LOCK "1634940007"

/* A DSN may override these; client_encoding is forced after it. */
#define STORE_PG_APP_NAME "as4gw"
#define STORE_PG_CONNECT_TIMEOUT "10"

enum store_pg_stmt_id {
	STORE_PG_INS_INBOX,
	STORE_PG_INS_PAYLOAD,
	STORE_PG_INS_DELIVERY,
	STORE_PG_SEL_INBOX,
	STORE_PG_UPD_DUP,
	STORE_PG_COUNT
};

static const struct store_pg_stmt store_pg_stmts[STORE_PG_COUNT] = {
	[STORE_PG_INS_INBOX] = { "as4gw_ins_inbox", "insert inbox row", 13,
	    "INSERT INTO inbox (message_id, from_party, to_party, service,"
	    " action, conversation_id, agreement_ref, pmode_id, source,"
	    " content_hash, receipt, received_at, partition_key)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
	    " to_timestamp($12::bigint / 1000.0), $13)"
	    " ON CONFLICT (message_id) DO NOTHING RETURNING 1" },
	[STORE_PG_INS_PAYLOAD] = { "as4gw_ins_payload", "insert payload", 6,
	    "INSERT INTO payload (message_id, part_no, content_id, mime_type,"
	    " properties, content) VALUES ($1, $2, $3, $4, $5, $6)" },
	[STORE_PG_INS_DELIVERY] = { "as4gw_ins_delivery",
	    "insert delivery row", 2,
	    "INSERT INTO delivery (message_id, state, attempts, created_at)"
	    " VALUES ($1, 'ready', 0, to_timestamp($2::bigint / 1000.0))" },
	[STORE_PG_SEL_INBOX] = { "as4gw_sel_inbox", "read inbox row", 1,
	    "SELECT content_hash, receipt FROM inbox WHERE message_id = $1"
	    " FOR UPDATE" },
	[STORE_PG_UPD_DUP] = { "as4gw_upd_dup", "count duplicate", 2,
	    "UPDATE inbox SET duplicates = duplicates + 1,"
	    " last_duplicate_at = to_timestamp($2::bigint / 1000.0)"
	    " WHERE message_id = $1 RETURNING duplicates" },
};

/* libpq prints NOTICEs to stderr by default; library code stays quiet. */
static void
store_pg_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* Record ERR_STORE with the server's (or libpq's) message, newline trimmed. */
int
store_pg_fail(struct store_pg *s, const char *what, const PGresult *res,
    struct err *err)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	size_t n;

	if (*msg == '\0')
		msg = PQerrorMessage(s->conn);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return err_set(err, ERR_STORE, NULL, "could not %s: %.*s", what,
	    (int)n, msg);
}

/* Reconnect if the connection was lost; prepared statements and LISTEN go
 * with it. */
int
store_pg_ensure(struct store_pg *s, struct err *err)
{
	if (PQstatus(s->conn) == CONNECTION_OK)
		return 0;
	s->prepared = 0;
	s->listening = 0;
	PQreset(s->conn);
	if (PQstatus(s->conn) != CONNECTION_OK)
		return store_pg_fail(s, "reconnect to postgresql", NULL, err);
	return 0;
}

/* Run SQL text expecting success (any result rows are discarded). */
static int
store_pg_cmd(struct store_pg *s, const char *sql, const char *what,
    struct err *err)
{
	PGresult *res = PQexec(s->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = store_pg_fail(s, what, res, err);
	PQclear(res);
	return rc;
}

/*
 * Open a unit of work: reconnect if needed, prepare, run its first command.
 * A connection that did not see the server restart still looks CONNECTION_OK
 * until it is used; when the first command fails and the connection turns
 * out to be dead, nothing was sent inside a transaction, so reconnect and try
 * once more instead of failing the request for a stale socket.
 */
int
store_pg_begin(struct store_pg *s, const char *sql, const char *what,
    struct err *err)
{
	struct err first = {0};

	if (store_pg_ensure(s, &first) == 0 && store_pg_prepare(s, &first) == 0 &&
	    store_pg_cmd(s, sql, what, &first) == 0)
		return 0;
	if (PQstatus(s->conn) == CONNECTION_OK) {
		*err = first;
		return -1;
	}
	if (store_pg_ensure(s, err) == -1 || store_pg_prepare(s, err) == -1)
		return -1;
	return store_pg_cmd(s, sql, what, err);
}

/*
 * COMMIT, and make sure it was one: COMMIT of a failed transaction answers
 * "ROLLBACK" without an error.
 */
static int
store_pg_commit(struct store_pg *s, struct err *err)
{
	PGresult *res = PQexec(s->conn, "COMMIT");
	int rc = -1;

	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		(void)store_pg_fail(s, "commit", res, err);
	else if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		(void)err_set(err, ERR_STORE, NULL,
		    "could not commit: transaction was rolled back");
	else
		rc = 0;
	PQclear(res);
	return rc;
}

/*
 * COMMIT a NEW message and, in the same round trip, NOTIFY the deliverers
 * (store_wait) in a transaction of its own right after it.  A NOTIFY inside
 * the accept transaction would hold PostgreSQL's database-wide notify lock
 * across the COMMIT's WAL flush and so serialize every accept (measured: 4-5
 * times fewer accepts per second with 8 connections).  Only the COMMIT's
 * result decides: a lost NOTIFY (crash, odd bytes in the id) costs a
 * deliverer one poll interval, never a message.
 */
static int
store_pg_commit_notify(struct store_pg *s, const char *message_id,
    struct err *err)
{
	char *lit = PQescapeLiteral(s->conn, message_id, strlen(message_id));
	struct buf sql = { 0 };
	PGresult *res;
	int rc = -1, first = 1;

	if (lit == NULL || buf_printf(&sql, "COMMIT; SELECT pg_notify("
	    "'as4gw_inbox', %s)", lit) == -1) {
		rc = store_pg_commit(s, err);
		goto out;
	}
	if (PQsendQuery(s->conn, sql.data) == 0) {
		(void)store_pg_fail(s, "commit", NULL, err);
		goto out;
	}
	while ((res = PQgetResult(s->conn)) != NULL) {
		if (first && PQresultStatus(res) != PGRES_COMMAND_OK)
			(void)store_pg_fail(s, "commit", res, err);
		else if (first && strcmp(PQcmdStatus(res), "COMMIT") != 0)
			(void)err_set(err, ERR_STORE, NULL,
			    "could not commit: transaction was rolled back");
		else if (first)
			rc = 0;
		first = 0;
		PQclear(res);
	}
out:
	PQfreemem(lit);
	buf_free(&sql);
	return rc;
}

/* End whatever transaction is open, if the connection is still there. */
static void
store_pg_abort(struct store_pg *s)
{
	PGTransactionStatusType ts = PQtransactionStatus(s->conn);

	if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)
		PQclear(PQexec(s->conn, "ROLLBACK"));
}

/* Prepare n statements of one table; -1 at the first failure. */
static int
store_pg_prepare_table(struct store_pg *s, const struct store_pg_stmt *t,
    size_t n, struct err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		PGresult *res = PQprepare(s->conn, t[i].name, t[i].sql,
		    t[i].n_params, NULL);
		int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

		if (!ok)
			(void)store_pg_fail(s, "prepare statement", res, err);
		PQclear(res);
		if (!ok)
			return -1;
	}
	return 0;
}

/*
 * Prepare the named statements (accept's and the queue's) once per
 * connection; fails if not migrated.
 */
int
store_pg_prepare(struct store_pg *s, struct err *err)
{
	if (s->prepared)
		return 0;
	if (store_pg_prepare_table(s, store_pg_stmts, STORE_PG_COUNT,
	    err) == -1 || store_pg_prepare_table(s, store_pg_queue_stmts,
	    store_pg_queue_count, err) == -1) {
		/* so the next attempt can prepare them all again */
		PQclear(PQexec(s->conn, "DEALLOCATE ALL"));
		return -1;
	}
	s->prepared = 1;
	return 0;
}

/*
 * Execute a prepared statement; the result (caller clears it) or NULL with
 * err set.  binary_result asks for bytea columns as raw bytes.
 */
PGresult *
store_pg_exec(struct store_pg *s, const struct store_pg_stmt *stmt,
    const struct store_pg_params *p, int binary_result, struct err *err)
{
	PGresult *res;
	ExecStatusType st;

	res = PQexecPrepared(s->conn, stmt->name, stmt->n_params, p->values,
	    p->lengths, p->formats, binary_result);
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		(void)store_pg_fail(s, stmt->what, res, err);
		PQclear(res);
		res = NULL;
	}
	return res;
}

/* store_pg_exec() of one of accept's statements. */
static PGresult *
store_pg_run(struct store_pg *s, enum store_pg_stmt_id id,
    const struct store_pg_params *p, int binary_result, struct err *err)
{
	return store_pg_exec(s, &store_pg_stmts[id], p, binary_result, err);
}

/*
 * Set parameter i to bytes (binary); empty is "" so it is not NULL.  -1 when
 * longer than libpq can send (bytea stops at 1 GiB anyway).
 */
static int
store_pg_bytes(struct store_pg_params *p, int i, const void *data, size_t len,
    struct err *err)
{
	if (len > INT_MAX)
		return err_set(err, ERR_STORE, NULL,
		    "could not store %zu bytes: too large for postgresql", len);
	p->values[i] = len > 0 ? (const char *)data : "";
	p->lengths[i] = (int)len;
	p->formats[i] = 1;
	return 0;
}

/* INSERT ... ON CONFLICT DO NOTHING RETURNING 1: 1 new, 0 exists, -1. */
static int
store_pg_insert_inbox(struct store_pg *s, const struct store_message *m,
    struct err *err)
{
	struct store_pg_params p;
	char ms[24];
	PGresult *res;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	(void)snprintf(ms, sizeof(ms), "%" PRId64, m->received_at_ms);
	p.values[0] = m->message_id;
	p.values[1] = m->from_party;
	p.values[2] = m->to_party;
	p.values[3] = m->service;
	p.values[4] = m->action;
	p.values[5] = m->conversation_id;
	p.values[6] = m->agreement_ref;
	p.values[7] = m->pmode_id;
	p.values[8] = m->source;
	p.values[11] = ms;
	p.values[12] = m->partition_key;
	if (store_pg_bytes(&p, 9, m->content_hash, STORE_HASH_LEN, err) == -1 ||
	    store_pg_bytes(&p, 10, m->receipt, m->receipt_len, err) == -1)
		return -1;
	res = store_pg_run(s, STORE_PG_INS_INBOX, &p, 0, err);
	if (res != NULL)
		rc = PQntuples(res) == 1 ? 1 : 0;
	PQclear(res);
	return rc;
}

/* One payload row. */
static int
store_pg_insert_part(struct store_pg *s, const struct store_message *m,
    const struct store_part *part, struct err *err)
{
	struct store_pg_params p;
	char no[16];
	PGresult *res;

	memset(&p, 0, sizeof(p));
	(void)snprintf(no, sizeof(no), "%d", part->part_no);
	p.values[0] = m->message_id;
	p.values[1] = no;
	p.values[2] = part->content_id;
	p.values[3] = part->mime_type;
	p.values[4] = part->properties != NULL ? part->properties : "{}";
	if (store_pg_bytes(&p, 5, part->data, part->len, err) == -1)
		return -1;
	res = store_pg_run(s, STORE_PG_INS_PAYLOAD, &p, 0, err);
	PQclear(res);
	return res != NULL ? 0 : -1;
}

/* The rest of a new message: its payload rows and its delivery row. */
static int
store_pg_insert_rest(struct store_pg *s, const struct store_message *m,
    struct err *err)
{
	struct store_pg_params p;
	char ms[24];
	PGresult *res;
	size_t i;

	for (i = 0; i < m->n_parts; i++)
		if (store_pg_insert_part(s, m, &m->parts[i], err) == -1)
			return -1;
	memset(&p, 0, sizeof(p));
	(void)snprintf(ms, sizeof(ms), "%" PRId64, m->received_at_ms);
	p.values[0] = m->message_id;
	p.values[1] = ms;
	res = store_pg_run(s, STORE_PG_INS_DELIVERY, &p, 0, err);
	PQclear(res);
	return res != NULL ? 0 : -1;
}

/* Read the stored row: 1 same hash (receipt copied into a), 0 drift, -1. */
static int
store_pg_read_existing(struct store_pg *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_pg_params p;
	PGresult *res;
	int rc = -1, n;

	memset(&p, 0, sizeof(p));
	p.values[0] = m->message_id;
	res = store_pg_run(s, STORE_PG_SEL_INBOX, &p, 1, err);
	if (res == NULL)
		goto out;
	if (PQntuples(res) != 1) {
		/* purged between our INSERT and this SELECT: partner retries */
		(void)err_set(err, ERR_STORE, NULL,
		    "could not read inbox row: it disappeared");
		goto out;
	}
	if (PQgetlength(res, 0, 0) != STORE_HASH_LEN ||
	    memcmp(PQgetvalue(res, 0, 0), m->content_hash,
	    STORE_HASH_LEN) != 0) {
		rc = 0;
		goto out;
	}
	n = PQgetlength(res, 0, 1);
	ret->receipt = arena_memdup(a, PQgetvalue(res, 0, 1), (size_t)n);
	ret->receipt_len = (size_t)n;
	if (ret->receipt == NULL) {
		(void)err_set(err, ERR_INTERNAL, NULL,
		    "request memory exhausted copying the stored receipt");
		goto out;
	}
	rc = 1;
out:
	PQclear(res);
	return rc;
}

/* Count one more duplicate; the counter after the update into ret. */
static int
store_pg_count_dup(struct store_pg *s, const struct store_message *m,
    struct store_result *ret, struct err *err)
{
	struct store_pg_params p;
	char ms[24];
	PGresult *res;
	int rc = -1;

	memset(&p, 0, sizeof(p));
	(void)snprintf(ms, sizeof(ms), "%" PRId64, m->received_at_ms);
	p.values[0] = m->message_id;
	p.values[1] = ms;
	res = store_pg_run(s, STORE_PG_UPD_DUP, &p, 0, err);
	if (res == NULL)
		goto out;
	if (PQntuples(res) != 1) {
		(void)err_set(err, ERR_STORE, NULL,
		    "could not count duplicate: row disappeared");
		goto out;
	}
	ret->duplicates = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	rc = 0;
out:
	PQclear(res);
	return rc;
}

/* Inside the open transaction: decide and record new / duplicate / drift. */
static int
store_pg_decide(struct store_pg *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	int r = store_pg_insert_inbox(s, m, err);

	if (r == 1) {
		if (store_pg_insert_rest(s, m, err) == -1)
			return -1;
		fault_point("store.after-insert");
		ret->outcome = STORE_NEW;
		ret->receipt = m->receipt;
		ret->receipt_len = m->receipt_len;
		ret->duplicates = 0;
		return 0;
	}
	if (r == 0)
		r = store_pg_read_existing(s, m, a, ret, err);
	if (r == 0) {
		ret->outcome = STORE_DRIFT;
		ret->receipt = NULL;
		ret->receipt_len = 0;
		return 0;
	}
	if (r == -1 || store_pg_count_dup(s, m, ret, err) == -1)
		return -1;
	ret->outcome = STORE_DUPLICATE;
	return 0;
}

/* The accept transaction (store.h); never leaves a transaction open. */
static int
store_pg_accept(struct store *base, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	int rc = -1;

	if (store_pg_begin(s, "BEGIN ISOLATION LEVEL READ COMMITTED",
	    "begin transaction", err) == -1)
		goto out;
	if (store_pg_decide(s, m, a, ret, err) == -1)
		goto out;
	/* Drift changes nothing: end the transaction without writing. */
	if (ret->outcome == STORE_DRIFT)
		rc = store_pg_cmd(s, "ROLLBACK", "roll back", err);
	else {
		fault_point("store.before-commit");
		rc = ret->outcome == STORE_NEW ?
		    store_pg_commit_notify(s, m->message_id, err) :
		    store_pg_commit(s, err);
	}
out:
	store_pg_abort(s);
	return rc;
}

/* Whether migration name is recorded: 1 yes, 0 no, -1 error. */
static int
store_pg_applied(struct store_pg *s, const char *name, struct err *err)
{
	const char *values[1] = { name };
	PGresult *res;
	int rc = -1;

	res = PQexecParams(s->conn,
	    "SELECT 1 FROM schema_migrations WHERE name = $1", 1, NULL, values,
	    NULL, NULL, 0);
	if (PQresultStatus(res) == PGRES_TUPLES_OK)
		rc = PQntuples(res) > 0 ? 1 : 0;
	else
		(void)store_pg_fail(s, "read schema_migrations", res, err);
	PQclear(res);
	return rc;
}

/* Note migration name as applied now. */
static int
store_pg_record(struct store_pg *s, const char *name, struct err *err)
{
	const char *values[1] = { name };
	PGresult *res;
	int rc = 0;

	res = PQexecParams(s->conn,
	    "INSERT INTO schema_migrations (name) VALUES ($1)", 1, NULL, values,
	    NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = store_pg_fail(s, "record migration", res, err);
	PQclear(res);
	return rc;
}

/*
 * Apply one migration if it is not recorded yet, in its own transaction
 * holding a transaction-scoped advisory lock: a second gateway migrating at
 * the same time waits, then finds the migration recorded.
 */
static int
store_pg_migrate_one(struct store_pg *s, const struct store_sql *f,
    struct err *err)
{
	int rc = -1, applied;

	if (store_pg_cmd(s, "BEGIN", "begin migration", err) == -1 ||
	    store_pg_cmd(s, "SELECT pg_advisory_xact_lock("
	    STORE_PG_MIGRATE_LOCK ")", "take the migration lock", err) == -1 ||
	    store_pg_cmd(s, "CREATE TABLE IF NOT EXISTS schema_migrations ("
	    " name text NOT NULL PRIMARY KEY,"
	    " applied_at timestamptz NOT NULL DEFAULT now())",
	    "create schema_migrations", err) == -1)
		goto out;
	applied = store_pg_applied(s, f->name, err);
	if (applied == -1)
		goto out;
	if (applied == 0 &&
	    (store_pg_cmd(s, f->text, "apply migration", err) == -1 ||
	    store_pg_record(s, f->name, err) == -1))
		goto out;
	rc = store_pg_commit(s, err);
out:
	if (rc == -1)
		err_detail(err, "migration %s", f->name);
	store_pg_abort(s);
	return rc;
}

/* Apply the pending postgresql/ migrations in name order. */
static int
store_pg_migrate(struct store *base, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	const struct store_sql *f;
	size_t pos = 0;

	if (store_pg_ensure(s, err) == -1)
		return -1;
	while ((f = store_migration_next("postgresql", &pos)) != NULL)
		if (store_pg_migrate_one(s, f, err) == -1)
			return -1;
	return 0;
}

/* Liveness: reconnect if the connection was lost, then SELECT 1. */
static int
store_pg_ping(struct store *base, struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;

	return store_pg_begin(s, "SELECT 1", "reach postgresql", err);
}

/* Close the connection and free the handle. */
static void
store_pg_close(struct store *base)
{
	struct store_pg *s = (struct store_pg *)base;

	PQfinish(s->conn);
	free(s);
}

static const struct store_ops store_pg_ops = {
	.name = "postgresql",
	.migrate = store_pg_migrate,
	.ping = store_pg_ping,
	.accept = store_pg_accept,
	.close = store_pg_close,
	.claim = store_pg_queue_claim,
	.finish = store_pg_queue_finish,
	.purge = store_pg_queue_purge,
	.stats = store_pg_queue_stats,
	.wait = store_pg_queue_wait,
};

/*
 * Connect with the whole DSN.  Keywords before "dbname" are defaults the DSN
 * may override; client_encoding after it is forced (texts are UTF-8).
 */
int
store_pg_open(const char *dsn, struct store **ret, struct err *err)
{
	const char *const keys[] = { "application_name", "connect_timeout",
	    "dbname", "client_encoding", NULL };
	const char *const vals[] = { STORE_PG_APP_NAME,
	    STORE_PG_CONNECT_TIMEOUT, dsn, "UTF8", NULL };
	struct store_pg *s;
	int rc = -1;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	s->base.ops = &store_pg_ops;
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn == NULL) {
		(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	(void)PQsetNoticeProcessor(s->conn, store_pg_notice, NULL);
	if (PQstatus(s->conn) != CONNECTION_OK) {
		(void)store_pg_fail(s, "connect to postgresql", NULL, err);
		goto out;
	}
	*ret = &s->base;
	rc = 0;
out:
	if (rc == -1)
		store_pg_close(&s->base);
	return rc;
}
