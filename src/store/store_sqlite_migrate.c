/*
 * store_sqlite_migrate — the SQLite migration runner (store.h
 * "store_migrate"): the embedded sql/sqlite/ files in name order, each in
 * its own BEGIN IMMEDIATE transaction, recorded in schema_migrations.
 */
#include "store.h"

#include <sqlite3.h>

#include "store_sql.h"
#include "store_sqlite_int.h"
#include "../util/clock.h"

#define STORE_SQLITE_MIGRATIONS_DDL \
	"CREATE TABLE IF NOT EXISTS schema_migrations (" \
	" name text NOT NULL PRIMARY KEY," \
	" applied_at integer NOT NULL)"

/* Whether migration name is recorded: 1 yes, 0 no, -1 error. */
static int
store_sqlite_applied(struct store_sqlite *s, const char *name, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(s->db,
	    "SELECT 1 FROM schema_migrations WHERE name = ?1", -1, &st,
	    NULL) != SQLITE_OK ||
	    store_sqlite_bind_text(st, 1, name) != SQLITE_OK)
		goto out;
	switch (sqlite3_step(st)) {
	case SQLITE_ROW: rc = 1; break;
	case SQLITE_DONE: rc = 0; break;
	default: break;
	}
out:
	if (rc == -1)
		(void)store_sqlite_fail(s, "read schema_migrations", err);
	(void)sqlite3_finalize(st);
	return rc;
}

/* Note migration name as applied now. */
static int
store_sqlite_record(struct store_sqlite *s, const char *name, struct err *err)
{
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(s->db, "INSERT INTO schema_migrations (name,"
	    " applied_at) VALUES (?1, ?2)", -1, &st, NULL) == SQLITE_OK &&
	    store_sqlite_bind_text(st, 1, name) == SQLITE_OK &&
	    sqlite3_bind_int64(st, 2, clock_epoch_ms()) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_DONE)
		rc = 0;
	else
		(void)store_sqlite_fail(s, "record migration", err);
	(void)sqlite3_finalize(st);
	return rc;
}

/*
 * Apply one migration if it is not recorded yet, in its own transaction.
 * BEGIN IMMEDIATE takes the write lock first, so a second process migrating
 * at the same time waits and then finds the migration recorded.  1 applied
 * now, 0 already recorded, -1 failed.
 */
static int
store_sqlite_migrate_one(struct store_sqlite *s, const struct store_sql *f,
    struct err *err)
{
	int rc = -1, applied;

	if (store_sqlite_exec(s, "BEGIN IMMEDIATE", "begin migration",
	    err) == -1)
		goto out;
	if (store_sqlite_exec(s, STORE_SQLITE_MIGRATIONS_DDL,
	    "create schema_migrations", err) == -1)
		goto out;
	applied = store_sqlite_applied(s, f->name, err);
	if (applied == -1)
		goto out;
	if (applied == 0 &&
	    (store_sqlite_exec(s, f->text, "apply migration", err) == -1 ||
	    store_sqlite_record(s, f->name, err) == -1))
		goto out;
	rc = store_sqlite_exec(s, "COMMIT", "commit migration", err);
	if (rc == 0)
		rc = applied == 0;   /* 1: applied now */
out:
	if (rc == -1)
		err_detail(err, "migration %s", f->name);
	if (sqlite3_get_autocommit(s->db) == 0)
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Apply the pending sqlite/ migrations in name order, holding this
 * process's writer and on its connection (other processes: BEGIN IMMEDIATE
 * and the busy timeout).
 */
int
store_sqlite_migrate(struct store *base, struct err *err)
{
	struct store_sqlite *s = (struct store_sqlite *)base;
	struct store_sqlite *c = store_sqlite_writer_conn(s);
	const struct store_sql *f;
	size_t pos = 0;
	int rc = 0;

	store_sqlite_writer_lock(s->w);
	while (rc >= 0 && (f = store_migration_next("sqlite", &pos)) != NULL)
		if ((rc = store_sqlite_migrate_one(c, f, err)) == 1)
			base->migrated++;
	store_sqlite_writer_unlock(s->w);
	return rc < 0 ? -1 : 0;
}
