/*
 * store_sqlite_purgelog — the purge log of the SQLite backend (store.h
 * "store_purge_log"; migration sqlite/006_purge_log.sql).  A run is one
 * autocommit INSERT on the writer's connection under the writer (as every
 * write of the queue, store_sqlite_queue.c); the migration's trigger counts
 * it in purge_totals and trims the log.  The totals are read on the
 * handle's own connection.  Statements are prepared per call: a purge run
 * or a scrape is rare next to an accept.
 */
#include "store.h"

#include <string.h>

#include <sqlite3.h>

#include "store_int.h"
#include "store_sqlite_int.h"

#define STORE_SQPL_INSERT \
	"INSERT INTO purge_log (started_at, finished_at, source, outcome," \
	" purged, kept, batches, error)" \
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, substr(?8, 1, ?9))"

#define STORE_SQPL_TOTALS \
	"SELECT source, runs_ok, runs_stopped, runs_failed, purged," \
	" last_ok_at FROM purge_totals"

/* Record one purge run (store.h). */
int
store_sqlite_purge_log(struct store *base, const struct store_purge_run *r,
    struct err *err)
{
	struct store_sqlite *h = (struct store_sqlite *)base;
	struct store_sqlite *s;
	sqlite3_stmt *st = NULL;
	int rc = -1, b;

	store_sqlite_writer_lock(h->w);
	s = store_sqlite_writer_conn(h);
	if (sqlite3_prepare_v2(s->db, STORE_SQPL_INSERT, -1, &st, NULL) !=
	    SQLITE_OK) {
		(void)store_sqlite_fail(s, "record the purge run", err);
		goto out;
	}
	b = sqlite3_bind_int64(st, 1, store_clamp_ms(r->started_ms));
	b |= sqlite3_bind_int64(st, 2, store_clamp_ms(r->finished_ms));
	b |= store_sqlite_bind_text(st, 3, store_purge_source_name(r->source));
	b |= store_sqlite_bind_text(st, 4,
	    store_purge_outcome_name(r->outcome));
	b |= sqlite3_bind_int64(st, 5, (sqlite3_int64)r->purged);
	b |= sqlite3_bind_int64(st, 6, (sqlite3_int64)r->kept);
	b |= sqlite3_bind_int64(st, 7, (sqlite3_int64)r->batches);
	b |= store_sqlite_bind_text(st, 8, r->error);
	b |= sqlite3_bind_int(st, 9, STORE_ERROR_MAX);
	rc = store_sqlite_step(s, st, b, "record the purge run", err);
out:
	(void)sqlite3_finalize(st);
	store_sqlite_writer_unlock(h->w);
	return rc;
}

/* One row of purge_totals into *t; a source not known is ignored. */
static void
store_sqlite_purge_row(sqlite3_stmt *st, struct store_purge_totals *t)
{
	const char *src = (const char *)sqlite3_column_text(st, 0);
	int i;

	if (src == NULL)
		return;
	if (strcmp(src, "cli") == 0)
		i = STORE_PURGE_CLI;
	else if (strcmp(src, "background") == 0)
		i = STORE_PURGE_BACKGROUND;
	else
		return;
	t->runs[i][STORE_PURGE_OK] = sqlite3_column_int64(st, 1);
	t->runs[i][STORE_PURGE_STOPPED] = sqlite3_column_int64(st, 2);
	t->runs[i][STORE_PURGE_FAILED] = sqlite3_column_int64(st, 3);
	t->purged[i] = sqlite3_column_int64(st, 4);
	t->last_ok_ms[i] = sqlite3_column_int64(st, 5); /* NULL reads 0 */
}

/* The purge totals (store.h), on the handle's own connection. */
int
store_sqlite_purge_totals(struct store *base, struct store_purge_totals *ret,
    struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	sqlite3_stmt *st = NULL;
	int rc = -1, step;

	if (sqlite3_prepare_v2(s->db, STORE_SQPL_TOTALS, -1, &st, NULL) !=
	    SQLITE_OK)
		goto out;
	while ((step = sqlite3_step(st)) == SQLITE_ROW)
		store_sqlite_purge_row(st, ret);
	if (step == SQLITE_DONE)
		rc = 0;
out:
	if (rc == -1)
		(void)store_sqlite_fail(s, "read the purge totals", err);
	(void)sqlite3_finalize(st);
	return rc;
}
