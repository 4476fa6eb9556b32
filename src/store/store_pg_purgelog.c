/*
 * store_pg_purgelog — the purge log of the PostgreSQL backend (store.h
 * "store_purge_log"; migration postgresql/007_purge_log.sql).  A run is one
 * autocommit INSERT; the migration's trigger counts it in purge_totals
 * (whose row lock orders concurrent runs of several processes) and trims
 * the log.  Unnamed statements with text parameters and results: a purge
 * run or a scrape is rare, and the gateway's connections need not prepare
 * them.  A connection found dead is replaced and the statement run once
 * more (as store_pg_call does).
 */
#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "store_int.h"
#include "store_pg_int.h"

#define STORE_PGPL_TS(n) "to_timestamp($" #n "::bigint / 1000.0)"

#define STORE_PGPL_INSERT \
	"INSERT INTO purge_log (started_at, finished_at, source, outcome," \
	" purged, kept, batches, error) VALUES (" STORE_PGPL_TS(1) "," \
	" " STORE_PGPL_TS(2) ", $3::text, $4::text, $5::bigint, $6::bigint," \
	" $7::bigint, left($8::text, $9::int))"

#define STORE_PGPL_TOTALS \
	"SELECT source, runs_ok, runs_stopped, runs_failed, purged," \
	" coalesce(round(extract(epoch FROM last_ok_at) * 1000)::bigint, 0)" \
	" FROM purge_totals"

/* Run sql with n text parameters (a command, or a query with its rows);
 * once more on a fresh connection if this one was dead.  The result, or
 * NULL with err set. */
static PGresult *
store_pg_purgelog_exec(struct store_pg *s, const char *sql, int n,
    const char *const *values, const char *what, struct err *err)
{
	PGresult *res = NULL;
	ExecStatusType st;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		PQclear(res);
		res = NULL;
		if (store_pg_ensure(s, err) == -1)
			return NULL;
		res = store_pg_finish(s, PQsendQueryParams(s->conn, sql, n,
		    NULL, values, NULL, NULL, 0));
		st = PQresultStatus(res);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
			return res;
		if (!store_pg_gone(s, res) || s->timed_out)
			break;
	}
	(void)store_pg_fail(s, what, res, err);
	PQclear(res);
	return NULL;
}

/* Record one purge run (store.h). */
int
store_pg_purge_log(struct store *base, const struct store_purge_run *r,
    struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	char num[6][24];
	const char *values[9];
	PGresult *res;

	(void)snprintf(num[0], sizeof(num[0]), "%" PRId64,
	    store_clamp_ms(r->started_ms));
	(void)snprintf(num[1], sizeof(num[1]), "%" PRId64,
	    store_clamp_ms(r->finished_ms));
	(void)snprintf(num[2], sizeof(num[2]), "%zu", r->purged);
	(void)snprintf(num[3], sizeof(num[3]), "%zu", r->kept);
	(void)snprintf(num[4], sizeof(num[4]), "%zu", r->batches);
	(void)snprintf(num[5], sizeof(num[5]), "%d", STORE_ERROR_MAX);
	values[0] = num[0];
	values[1] = num[1];
	values[2] = store_purge_source_name(r->source);
	values[3] = store_purge_outcome_name(r->outcome);
	values[4] = num[2];
	values[5] = num[3];
	values[6] = num[4];
	values[7] = r->error;
	values[8] = num[5];
	res = store_pg_purgelog_exec(s, STORE_PGPL_INSERT, 9, values,
	    "record the purge run", err);
	PQclear(res);
	return res != NULL ? 0 : -1;
}

/* A bigint column as int64 (NULL or junk: 0). */
static int64_t
store_pg_purgelog_int(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return 0;
	return (int64_t)strtoll(PQgetvalue(res, row, col), NULL, 10);
}

/* The purge totals (store.h). */
int
store_pg_purge_totals(struct store *base, struct store_purge_totals *ret,
    struct err *err)
{
	struct store_pg *s = (struct store_pg *)base;
	PGresult *res;
	const char *src;
	int row, i;

	res = store_pg_purgelog_exec(s, STORE_PGPL_TOTALS, 0, NULL,
	    "read the purge totals", err);
	if (res == NULL)
		return -1;
	for (row = 0; row < PQntuples(res) && PQnfields(res) == 6; row++) {
		src = PQgetvalue(res, row, 0);
		if (strcmp(src, "cli") == 0)
			i = STORE_PURGE_CLI;
		else if (strcmp(src, "background") == 0)
			i = STORE_PURGE_BACKGROUND;
		else
			continue;
		ret->runs[i][STORE_PURGE_OK] = store_pg_purgelog_int(res, row, 1);
		ret->runs[i][STORE_PURGE_STOPPED] =
		    store_pg_purgelog_int(res, row, 2);
		ret->runs[i][STORE_PURGE_FAILED] =
		    store_pg_purgelog_int(res, row, 3);
		ret->purged[i] = store_pg_purgelog_int(res, row, 4);
		ret->last_ok_ms[i] = store_pg_purgelog_int(res, row, 5);
	}
	PQclear(res);
	return 0;
}
