/*
 * store_copy_dst — the PostgreSQL side of `as4gw copy` (store_copy.h):
 * the target migrated like `serve` does, then written row by row with
 * prepared statements inside one transaction that holds an EXCLUSIVE lock
 * on its inbox (a gateway already running on it waits instead of storing
 * a second Receipt for a MessageId being copied).
 */
#include "store_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_copy_int.h"
#include "store_pg_int.h"

#define STORE_COPY_DST_PREFIX "as4gw_copy_"

/*
 * Pipelined rows (libpq "Pipeline Mode", PostgreSQL 14+): a copy into an
 * empty target sends its rows without waiting for each answer, and reads
 * the answers after at most this many statements or parameter bytes.  The
 * statements' answers (some 20 bytes each) then always fit the sockets'
 * buffers, so neither side blocks on the other (libpq's documented
 * pipeline deadlock); libpq holds at most about the bytes.
 */
#define STORE_COPY_PIPE_STMTS 256
#define STORE_COPY_PIPE_BYTES ((size_t)16 << 20)

/* The target's counts, in enum store_copy_measure's order. */
#define STORE_COPY_DST_COUNTS \
	"SELECT (SELECT count(*) FROM inbox)," \
	" (SELECT coalesce(sum(octet_length(receipt)), 0) FROM inbox)," \
	" (SELECT count(*) FROM inbox WHERE field_hashes IS NOT NULL)," \
	" (SELECT count(*) FROM inbox" \
	"  WHERE business_duplicate_of IS NOT NULL)," \
	" (SELECT coalesce(sum(duplicates), 0) FROM inbox)," \
	" (SELECT count(*) FROM payload)," \
	" (SELECT coalesce(sum(coalesce(size, octet_length(content))), 0)" \
	"  FROM payload)," \
	" (SELECT count(*) FROM payload_chunk)," \
	" (SELECT coalesce(sum(octet_length(content)), 0) FROM payload_chunk)," \
	" (SELECT count(*) FROM delivery WHERE state = 'ready')," \
	" (SELECT count(*) FROM delivery WHERE state = 'claimed')," \
	" (SELECT count(*) FROM delivery WHERE state = 'done')," \
	" (SELECT count(*) FROM purge_log)," \
	" (SELECT coalesce(sum(runs_ok + runs_stopped + runs_failed), 0)" \
	"  FROM purge_totals)," \
	" (SELECT coalesce(sum(purged), 0) FROM purge_totals)"

static int
store_copy_dst_fail(struct store_copy_dst *d, const char *what,
    const PGresult *res, struct err *err)
{
	return store_pg_fail((struct store_pg *)d->store, what, res, err);
}

/* Run sql without parameters; 0 when its status is want, else -1. */
static int
store_copy_dst_exec(struct store_copy_dst *d, const char *sql,
    ExecStatusType want, const char *what, struct err *err)
{
	PGresult *res = PQexec(d->conn, sql);
	int rc = 0;

	if (PQresultStatus(res) != want)
		rc = store_copy_dst_fail(d, what, res, err);
	PQclear(res);
	return rc;
}

/* 1 when the as4gw inbox table exists (an un-migrated target: 0). */
static int
store_copy_dst_schema(struct store_copy_dst *d, struct err *err)
{
	PGresult *res = PQexec(d->conn,
	    "SELECT to_regclass('inbox') IS NOT NULL");
	int rc;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		rc = store_copy_dst_fail(d, "read the target schema", res, err);
	else
		rc = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return rc;
}

/* Connect and migrate the target; see store_copy_int.h. */
int
store_copy_dst_open(const char *dsn, int dry_run, struct store_copy_dst *d,
    int *ret_schema, struct err *err)
{
	int schema;

	memset(d, 0, sizeof(*d));
	if (store_open(dsn, &d->store, err) == -1)
		return -1;
	d->conn = ((struct store_pg *)d->store)->conn;
	if (!dry_run && store_migrate(d->store, err) == -1)
		return -1;
	if ((schema = store_copy_dst_schema(d, err)) == -1)
		return -1;
	*ret_schema = schema;
	return 0;
}

/* Roll back what is open and close (in the middle of a pipeline: the
 * server rolls back when the connection closes); accepts a zeroed d. */
void
store_copy_dst_close(struct store_copy_dst *d)
{
	if (d->in_txn && !d->pipeline)
		(void)store_copy_dst_end(d, 0, NULL);
	store_close(d->store);
	memset(d, 0, sizeof(*d));
}

/* Prepare table t's statement, and the content hash check. */
static int
store_copy_dst_prepare(struct store_copy_dst *d, const char *name,
    const char *sql, int n, struct err *err)
{
	char full[64];
	PGresult *res;
	int rc = 0;

	(void)snprintf(full, sizeof(full), STORE_COPY_DST_PREFIX "%s", name);
	res = PQprepare(d->conn, full, sql, n, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		rc = store_copy_dst_fail(d, "prepare the copy", res, err);
	PQclear(res);
	return rc;
}

/* BEGIN, lock the inbox against writers, prepare; see store_copy_int.h. */
int
store_copy_dst_begin(struct store_copy_dst *d, struct err *err)
{
	size_t i;

	if (store_copy_dst_exec(d, "BEGIN", PGRES_COMMAND_OK,
	    "begin the copy", err) == -1)
		return -1;
	d->in_txn = 1;
	if (store_copy_dst_exec(d, "LOCK TABLE inbox IN EXCLUSIVE MODE",
	    PGRES_COMMAND_OK, "lock the target inbox", err) == -1)
		return -1;
	for (i = 0; i < STORE_COPY_T_N; i++)
		if (store_copy_dst_prepare(d, store_copy_tables[i].name,
		    store_copy_tables[i].dst, store_copy_tables[i].n_cols,
		    err) == -1)
			return -1;
	return store_copy_dst_prepare(d, "same", "SELECT content_hash = $3"
	    " FROM inbox WHERE from_party = $1 AND message_id = $2", 3, err);
}

/* COMMIT or ROLLBACK the copy's transaction. */
int
store_copy_dst_end(struct store_copy_dst *d, int commit, struct err *err)
{
	d->in_txn = 0;
	return store_copy_dst_exec(d, commit ? "COMMIT" : "ROLLBACK",
	    PGRES_COMMAND_OK, commit ? "commit the copy" : "roll back the copy",
	    err);
}

/* The target's counts; see store_copy_int.h. */
int
store_copy_dst_counts(struct store_copy_dst *d,
    struct store_copy_counts *ret, struct err *err)
{
	PGresult *res = PQexec(d->conn, STORE_COPY_DST_COUNTS);
	int rc = -1, i;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
	    PQnfields(res) == STORE_COPY_N) {
		for (i = 0; i < STORE_COPY_N; i++)
			ret->v[i] = strtoll(PQgetvalue(res, 0, i), NULL, 10);
		rc = 0;
	} else
		(void)store_copy_dst_fail(d, "count the target's rows", res,
		    err);
	PQclear(res);
	return rc;
}

/*
 * Sync the pipeline and read every answer it holds: one per statement
 * (each followed by NULL), then the sync's.  The first failure is kept (a
 * failed statement aborts the rest: PGRES_PIPELINE_ABORTED).
 */
static int
store_copy_dst_sync(struct store_copy_dst *d, struct err *err)
{
	ExecStatusType want;
	PGresult *res;
	int rc = 0, i;

	if (PQpipelineSync(d->conn) != 1)
		return store_copy_dst_fail(d, "send the copy", NULL, err);
	for (i = 0; i <= d->pending; i++) {
		want = i < d->pending ? PGRES_COMMAND_OK : PGRES_PIPELINE_SYNC;
		if ((res = PQgetResult(d->conn)) == NULL)
			return store_copy_dst_fail(d, "copy rows", NULL, err);
		if (PQresultStatus(res) != want)
			rc = store_copy_dst_fail(d, "copy rows", res, err);
		PQclear(res);
		if (i < d->pending && (res = PQgetResult(d->conn)) != NULL) {
			PQclear(res);
			return err_set(err, ERR_STORE, NULL, "could not copy "
			    "rows: unexpected answer in the pipeline");
		}
	}
	d->pending = 0;
	d->bytes = 0;
	return rc;
}

/* Pipelined writes on (before the rows) or off (after: the answers read);
 * see store_copy_int.h. */
int
store_copy_dst_pipeline(struct store_copy_dst *d, int on, struct err *err)
{
	if (on) {
		if (PQenterPipelineMode(d->conn) != 1)
			return store_copy_dst_fail(d, "enter pipeline mode",
			    NULL, err);
		d->pipeline = 1;
		return 0;
	}
	if (store_copy_dst_sync(d, err) == -1)
		return -1;
	if (PQexitPipelineMode(d->conn) != 1)
		return store_copy_dst_fail(d, "leave pipeline mode", NULL, err);
	d->pipeline = 0;
	return 0;
}

/* One row into the pipeline: sent, its answer read at the next sync. */
static int
store_copy_dst_send(struct store_copy_dst *d, const char *name,
    const struct store_copy_row *r, struct err *err)
{
	int i;

	if (PQsendQueryPrepared(d->conn, name, r->n, r->v, r->len, r->fmt,
	    0) != 1)
		return store_copy_dst_fail(d, "copy rows", NULL, err);
	d->pending++;
	for (i = 0; i < r->n; i++)
		d->bytes += r->fmt[i] ? (size_t)r->len[i] : 0;
	if (d->pending < STORE_COPY_PIPE_STMTS &&
	    d->bytes < STORE_COPY_PIPE_BYTES)
		return 0;
	return store_copy_dst_sync(d, err);
}

/* Write one row of table t; see store_copy_int.h. */
int
store_copy_dst_put(struct store_copy_dst *d, enum store_copy_table t,
    const struct store_copy_row *r, int *ret_rows, struct err *err)
{
	char name[64], what[64];
	PGresult *res;
	int rc = 0;

	(void)snprintf(name, sizeof(name), STORE_COPY_DST_PREFIX "%s",
	    store_copy_tables[t].name);
	if (d->pipeline) {
		*ret_rows = 1;  /* not known yet: the final counts check it */
		return store_copy_dst_send(d, name, r, err);
	}
	res = PQexecPrepared(d->conn, name, r->n, r->v, r->len, r->fmt, 0);
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
		*ret_rows = (int)strtol(PQcmdTuples(res), NULL, 10);
	else {
		(void)snprintf(what, sizeof(what), "copy a %s row",
		    store_copy_tables[t].name);
		rc = store_copy_dst_fail(d, what, res, err);
	}
	PQclear(res);
	return rc;
}

/* The target's row of the key has this content hash; see store_copy_int.h. */
int
store_copy_dst_same(struct store_copy_dst *d, const char *from,
    const char *id, const void *hash, int hash_len, struct err *err)
{
	const char *v[3] = { from, id, hash };
	const int len[3] = { 0, 0, hash_len }, fmt[3] = { 0, 0, 1 };
	PGresult *res;
	int rc;

	res = PQexecPrepared(d->conn, STORE_COPY_DST_PREFIX "same", 3, v, len,
	    fmt, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = store_copy_dst_fail(d, "compare an inbox row", res, err);
	else
		rc = PQntuples(res) == 1 &&
		    strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return rc;
}
