/*
 * store_pg — the PostgreSQL backend on libpq.  One PGconn per struct store,
 * named statements prepared once per connection (again after a reconnect),
 * bytea sent and read in binary, READ COMMITTED transactions.  The inbox
 * primary key is the only coordination several gateways need: a concurrent
 * INSERT of the same MessageId waits for the first to commit, then conflicts.
 *
 * The accept is in store_pg_accept.c.  The NOTIFY of a new message
 * follows in a transaction of its own whose answer is read at the
 * connection's next use.
 *
 * A failure never leaves a transaction open (ROLLBACK, or the connection is
 * gone).  A lost connection is ERR_STORE; the next call tries PQreset first.
 * The delivery queue is in store_pg_queue.c.
 */
#include "store.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_pg_int.h"
#include "store_sql.h"

/* Advisory lock key held while migrating ("as4g" in ASCII). */
#define STORE_PG_MIGRATE_LOCK "1634940007"

/* A DSN may override these; client_encoding is forced after it. */
#define STORE_PG_APP_NAME "as4gw"
/* connect_timeout (s): the store's timeout, at most this */
#define STORE_PG_CONNECT_TIMEOUT_MAX 10
/* TCP keepalives (libpq "keepalives_*"): a primary cut off the network is
 * noticed after idle + interval * count seconds, not the kernel's 2 hours
 * (the request gets 503, the next call reconnects to the new primary). */
#define STORE_PG_KEEPALIVES_IDLE "10"
#define STORE_PG_KEEPALIVES_INTERVAL "5"
#define STORE_PG_KEEPALIVES_COUNT "3"
/* How long store_close waits for the answer of a NOTIFY sent. */
#define STORE_PG_CLOSE_WAIT_MS 1000

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
	const char *state = res != NULL ?
	    PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	size_t n;

	(void)snprintf(s->state, sizeof(s->state), "%s",
	    state != NULL ? state : "");
	(void)store_pg_gone(s, res);
	if (s->timed_out)
		return err_set(err, ERR_STORE, NULL, "could not %s: no answer "
		    "from postgresql within %d ms (storeTimeoutSeconds)", what,
		    s->timeout_ms);
	if (*msg == '\0')
		msg = PQerrorMessage(s->conn);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		n--;
	return err_set(err, ERR_STORE, NULL, "could not %s: %.*s", what,
	    (int)n, msg);
}

/* SQLSTATEs after which this connection cannot write again (PostgreSQL
 * "Appendix A. Error Codes"): 25006 read_only_sql_transaction (a standby or
 * a read-only server), class 57P operator intervention, class 08. */
static int
store_pg_stale_state(const char *state)
{
	return state != NULL && (strcmp(state, "25006") == 0 ||
	    strncmp(state, "57P", 3) == 0 || strncmp(state, "08", 2) == 0);
}

/* The connection is lost or stale (store_pg_int.h). */
int
store_pg_gone(struct store_pg *s, const PGresult *res)
{
	if (res != NULL && store_pg_stale_state(PQresultErrorField(res,
	    PG_DIAG_SQLSTATE)))
		s->stale = 1;
	return s->stale || PQstatus(s->conn) != CONNECTION_OK;
}

/* Settle; reconnect if the connection was lost or is stale (prepared
 * statements and LISTEN go with it). */
int
store_pg_ensure(struct store_pg *s, struct err *err)
{
	store_pg_settle(s, -1);
	if (!store_pg_gone(s, NULL))
		return 0;
	s->stale = 0;
	s->timed_out = 0;
	s->prepared = 0;
	s->listening = 0;
	PQreset(s->conn);
	if (PQstatus(s->conn) != CONNECTION_OK)
		return store_pg_fail(s, "reconnect to postgresql", NULL, err);
	return 0;
}

/* Run SQL text expecting success (store_pg_int.h). */
int
store_pg_cmd(struct store_pg *s, const char *sql, const char *what,
    struct err *err)
{
	PGresult *res = store_pg_query(s, sql);
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
	if (!store_pg_gone(s, NULL) || s->timed_out) {
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
int
store_pg_commit(struct store_pg *s, struct err *err)
{
	PGresult *res = store_pg_query(s, "COMMIT");
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

/* End whatever transaction is open (store_pg_int.h). */
void
store_pg_abort(struct store_pg *s)
{
	PGTransactionStatusType ts = PQtransactionStatus(s->conn);

	if (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)
		PQclear(store_pg_query(s, "ROLLBACK"));
}

/* Prepare n statements of one table; -1 at the first failure. */
static int
store_pg_prepare_table(struct store_pg *s, const struct store_pg_stmt *t,
    size_t n, struct err *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		PGresult *res = store_pg_finish(s, PQsendPrepare(s->conn,
		    t[i].name, t[i].sql, t[i].n_params, t[i].types));
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
	if (store_pg_prepare_table(s, store_pg_accept_stmts,
	    store_pg_accept_count, err) == -1 ||
	    store_pg_prepare_table(s, store_pg_queue_stmts,
	    store_pg_queue_count, err) == -1) {
		/* so the next attempt can prepare them all again */
		PQclear(store_pg_query(s, "DEALLOCATE ALL"));
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

	res = store_pg_finish(s, PQsendQueryPrepared(s->conn, stmt->name,
	    stmt->n_params, p->values, p->lengths, p->formats, binary_result));
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		(void)store_pg_fail(s, stmt->what, res, err);
		PQclear(res);
		res = NULL;
	}
	return res;
}

/*
 * A statement that is its own transaction (store_pg_int.h): as
 * store_pg_begin(), a connection found dead when the statement fails is
 * replaced and the statement run once more.
 */
PGresult *
store_pg_call(struct store_pg *s, const struct store_pg_stmt *st,
    const struct store_pg_params *p, int binary_result, struct err *err)
{
	struct err first = { 0 };
	PGresult *res = NULL;

	if (store_pg_ensure(s, &first) == 0 &&
	    store_pg_prepare(s, &first) == 0 &&
	    (res = store_pg_exec(s, st, p, binary_result, &first)) != NULL)
		return res;
	if (!store_pg_gone(s, NULL) || s->timed_out) {
		if (err != NULL)
			*err = first;
		return NULL;
	}
	if (store_pg_ensure(s, err) == -1 || store_pg_prepare(s, err) == -1)
		return NULL;
	return store_pg_exec(s, st, p, binary_result, err);
}

/* Whether migration name is recorded: 1 yes, 0 no, -1 error. */
static int
store_pg_applied(struct store_pg *s, const char *name, struct err *err)
{
	const char *values[1] = { name };
	PGresult *res;
	int rc = -1;

	res = store_pg_finish(s, PQsendQueryParams(s->conn,
	    "SELECT 1 FROM schema_migrations WHERE name = $1", 1, NULL, values,
	    NULL, NULL, 0));
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

	res = store_pg_finish(s, PQsendQueryParams(s->conn,
	    "INSERT INTO schema_migrations (name) VALUES ($1)", 1, NULL, values,
	    NULL, NULL, 0));
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
	if (rc == 0 && applied == 0)
		s->base.migrated++;
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

/* The connection is gone; store_pg_ensure() replaces it on the next call. */
static int
store_pg_lost(struct store *base)
{
	struct store_pg *s = (struct store_pg *)base;

	return store_pg_gone(s, NULL);
}

/*
 * Close the connection once a NOTIFY sent has been answered, but wait for
 * that at most STORE_PG_CLOSE_WAIT_MS (a shutdown must not hang on a lost
 * network; the server runs what it received before the close anyway).
 */
static void
store_pg_close(struct store *base)
{
	struct store_pg *s = (struct store_pg *)base;

	if (s->conn != NULL)
		store_pg_settle(s, STORE_PG_CLOSE_WAIT_MS);
	PQfinish(s->conn);
	free(s);
}

static const struct store_ops store_pg_ops = {
	.name = "postgresql",
	.migrate = store_pg_migrate,
	.ping = store_pg_ping,
	.lost = store_pg_lost,
	.accept = store_pg_accept,
	.close = store_pg_close,
	.claim = store_pg_queue_claim,
	.finish = store_pg_queue_finish,
	.find = store_pg_find,
	.purge_log = store_pg_purge_log,
	.purge_totals = store_pg_purge_totals,
	.payload_read = store_pg_payload_read,
	.purge = store_pg_queue_purge,
	.stats = store_pg_queue_stats,
	.wait = store_pg_queue_wait,
};

/*
 * Connect with the whole DSN.  Keywords before "dbname" are defaults the DSN
 * may override; client_encoding after it is forced (texts are UTF-8).  A
 * multi-host DSN (postgresql://h1:p1,h2:p2/db?target_session_attrs=read-write)
 * follows the primary: every reconnect (PQreset) tries the hosts in turn
 * and keeps the first that takes writes.
 */
int
store_pg_open(const char *dsn, int timeout_ms, struct store **ret,
    struct err *err)
{
	char ct[16], ut[16];
	const char *const keys[] = { "application_name", "connect_timeout",
	    "tcp_user_timeout", "keepalives_idle", "keepalives_interval",
	    "keepalives_count", "dbname", "client_encoding", NULL };
	const char *const vals[] = { STORE_PG_APP_NAME, ct, ut,
	    STORE_PG_KEEPALIVES_IDLE, STORE_PG_KEEPALIVES_INTERVAL,
	    STORE_PG_KEEPALIVES_COUNT, dsn, "UTF8", NULL };
	struct store_pg *s;
	int rc = -1;

	if (timeout_ms <= 0)
		timeout_ms = STORE_TIMEOUT_MS;
	/* a connection attempt waits the store's timeout too (libpq: whole
	 * seconds, at least 2), per host of a multi-host DSN */
	(void)snprintf(ct, sizeof(ct), "%d", timeout_ms / 1000 <
	    STORE_PG_CONNECT_TIMEOUT_MAX ? (timeout_ms + 999) / 1000 :
	    STORE_PG_CONNECT_TIMEOUT_MAX);
	(void)snprintf(ut, sizeof(ut), "%d", timeout_ms);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	s->base.ops = &store_pg_ops;
	s->timeout_ms = timeout_ms;
	s->conn = PQconnectdbParams(keys, vals, 1);
	if (s->conn == NULL) {
		(void)err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	(void)PQsetNoticeProcessor(s->conn, store_pg_notice, NULL);
	/* one line per error: no "PL/pgSQL function ..." context lines */
	(void)PQsetErrorContextVisibility(s->conn, PQSHOW_CONTEXT_NEVER);
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
