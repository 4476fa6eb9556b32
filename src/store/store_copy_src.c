/*
 * store_copy_src — the SQLite side of `as4gw copy` (store_copy.h): the
 * source opened read-only, its schema checked against this version's
 * migrations, read in one read transaction (one snapshot) one row at a
 * time, and counted.
 */
#include "store_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_copy_int.h"
#include "store_sql.h"

/*
 * SQLite's WAL index (the -shm file) "dead-man switch": every connection
 * of every process holds a shared lock on this byte while it has the
 * database open (SQLite, os_unix.c UNIX_SHM_DMS: 120 + 8 lock bytes;
 * "WAL-mode File Format", the shm locks).
 */
#define STORE_COPY_SHM_DMS 128

#define STORE_COPY_KEY " WHERE from_party = ?1 AND message_id = ?2"
#define STORE_COPY_AND_KEY " AND from_party = ?1 AND message_id = ?2"

/* The source's counts, in enum store_copy_measure's order: of the whole
 * database (K "", A "", P the purge columns) or of one key. */
#define STORE_COPY_SRC_COUNTS(K, A, P) \
	"SELECT (SELECT count(*) FROM inbox" K ")," \
	" (SELECT coalesce(sum(length(receipt)), 0) FROM inbox" K ")," \
	" (SELECT count(*) FROM inbox WHERE field_hashes IS NOT NULL" A ")," \
	" (SELECT count(*) FROM inbox" \
	"  WHERE business_duplicate_of IS NOT NULL" A ")," \
	" (SELECT coalesce(sum(duplicates), 0) FROM inbox" K ")," \
	" (SELECT count(*) FROM payload" K ")," \
	" (SELECT coalesce(sum(coalesce(size, length(content))), 0)" \
	"  FROM payload" K ")," \
	" (SELECT count(*) FROM payload_chunk" K ")," \
	" (SELECT coalesce(sum(length(content)), 0) FROM payload_chunk" K ")," \
	" (SELECT count(*) FROM delivery WHERE state = 'ready'" A ")," \
	" (SELECT count(*) FROM delivery WHERE state = 'claimed'" A ")," \
	" (SELECT count(*) FROM delivery WHERE state = 'done'" A ")," P

#define STORE_COPY_SRC_PURGE \
	" (SELECT count(*) FROM purge_log)," \
	" (SELECT coalesce(sum(runs_ok + runs_stopped + runs_failed), 0)" \
	"  FROM purge_totals)," \
	" (SELECT coalesce(sum(purged), 0) FROM purge_totals)"

static int
store_copy_src_fail(struct store_copy_src *s, const char *what,
    struct err *err)
{
	return err_set(err, ERR_STORE, NULL, "could not %s in \"%s\": %s",
	    what, s->path, sqlite3_errmsg(s->db));
}

/*
 * Refuse a database another process has open: a gateway (or deliverer)
 * still running on it would go on accepting messages the copy misses.
 * Cheap and without touching the file: a process with the database open
 * in WAL mode holds the -shm file's dead-man-switch lock (no -shm file:
 * nobody has it open).  F_GETLK does not see this process's own locks.
 */
static int
store_copy_src_busy(const char *path, struct err *err)
{
	struct flock fl;
	char shm[PATH_MAX];
	int fd, n;

	n = snprintf(shm, sizeof(shm), "%s-shm", path);
	if (n < 0 || (size_t)n >= sizeof(shm))
		return err_set(err, ERR_CONF, NULL, "path too long");
	fd = open(shm, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = STORE_COPY_SHM_DMS;
	fl.l_len = 1;
	n = fcntl(fd, F_GETLK, &fl);
	(void)close(fd);
	if (n == 0 && fl.l_type != F_UNLCK)
		return err_set(err, ERR_STORE, NULL, "sqlite database \"%s\" "
		    "is open in process %ld (a running gateway or deliverer?):"
		    " stop it before the copy", path, (long)fl.l_pid);
	return 0;
}

/*
 * The source's schema_migrations must list exactly this version's sqlite
 * migrations: an older store is migrated first (read-only here), a newer
 * one has columns this copy would not carry.
 */
static int
store_copy_src_schema(struct store_copy_src *s, struct err *err)
{
	const struct store_sql *f;
	sqlite3_stmt *st = NULL;
	const char *name;
	size_t pos = 0;
	int rc = -1, step;

	if (sqlite3_prepare_v2(s->db, "SELECT name FROM schema_migrations"
	    " ORDER BY name", -1, &st, NULL) != SQLITE_OK) {
		(void)err_set(err, ERR_STORE, NULL, "\"%s\" is not an as4gw "
		    "sqlite store: %s", s->path, sqlite3_errmsg(s->db));
		goto out;
	}
	for (;;) {
		f = store_migration_next("sqlite", &pos);
		step = sqlite3_step(st);
		if (step != SQLITE_ROW && step != SQLITE_DONE) {
			(void)store_copy_src_fail(s, "read schema_migrations",
			    err);
			goto out;
		}
		name = step == SQLITE_ROW ?
		    (const char *)sqlite3_column_text(st, 0) : NULL;
		if (f == NULL && name == NULL)
			break;
		if (f == NULL || name == NULL || strcmp(f->name, name) != 0) {
			(void)err_set(err, ERR_STORE, NULL, "sqlite store \"%s\""
			    " is not at this version's schema (%s %s): %s",
			    s->path, name != NULL ? "it has" : "it lacks",
			    name != NULL ? name : f->name, name != NULL ?
			    "written by a newer as4gw?" :
			    "run `as4gw migrate` on it first");
			goto out;
		}
	}
	rc = 0;
out:
	(void)sqlite3_finalize(st);
	return rc;
}

/* Prepare the tables' queries and the keyed counts. */
static int
store_copy_src_prepare(struct store_copy_src *s, struct err *err)
{
	static const char keyed[] = STORE_COPY_SRC_COUNTS(STORE_COPY_KEY,
	    STORE_COPY_AND_KEY, " 0, 0, 0");
	size_t i;

	for (i = 0; i < STORE_COPY_T_N; i++)
		if (sqlite3_prepare_v2(s->db, store_copy_tables[i].src, -1,
		    &s->st[i], NULL) != SQLITE_OK)
			return store_copy_src_fail(s, "prepare the copy", err);
	if (sqlite3_prepare_v2(s->db, keyed, -1, &s->counts_key, NULL) !=
	    SQLITE_OK)
		return store_copy_src_fail(s, "prepare the copy", err);
	return 0;
}

/* Open, check and start the read transaction; see store_copy_int.h. */
int
store_copy_src_open(const char *path, struct store_copy_src *s,
    struct err *err)
{
	struct stat sb;

	memset(s, 0, sizeof(*s));
	s->path = path;
	if (stat(path, &sb) == -1)
		return err_set(err, ERR_STORE, NULL, "could not open sqlite "
		    "database \"%s\": %s", path, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return err_set(err, ERR_STORE, NULL, "could not open sqlite "
		    "database \"%s\": not a regular file", path);
	if (store_copy_src_busy(path, err) == -1)
		return -1;
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		return err_set(err, ERR_STORE, NULL, "could not open sqlite "
		    "database \"%s\": %s", path, s->db != NULL ?
		    sqlite3_errmsg(s->db) : "out of memory");
	if (sqlite3_busy_timeout(s->db, STORE_SQLITE_BUSY_MS) != SQLITE_OK ||
	    sqlite3_exec(s->db, "PRAGMA query_only = 1", NULL, NULL, NULL) !=
	    SQLITE_OK ||
	    sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return store_copy_src_fail(s, "start reading", err);
	if (store_copy_src_schema(s, err) == -1)
		return -1;
	return store_copy_src_prepare(s, err);
}

/* End the read transaction, finalize, close; accepts a zeroed s. */
void
store_copy_src_close(struct store_copy_src *s)
{
	size_t i;

	for (i = 0; i < STORE_COPY_T_N; i++)
		(void)sqlite3_finalize(s->st[i]);
	(void)sqlite3_finalize(s->counts_key);
	if (s->db != NULL && sqlite3_get_autocommit(s->db) == 0)
		(void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	(void)sqlite3_close(s->db);
	memset(s, 0, sizeof(*s));
}

/* Add the counts of the whole source (from NULL) or of one key. */
int
store_copy_src_counts(struct store_copy_src *s, const char *from,
    const char *id, struct store_copy_counts *ret, struct err *err)
{
	static const char whole[] = STORE_COPY_SRC_COUNTS("", "",
	    STORE_COPY_SRC_PURGE);
	sqlite3_stmt *st = s->counts_key, *own = NULL;
	int rc = -1, i;

	if (from == NULL) {
		if (sqlite3_prepare_v2(s->db, whole, -1, &own, NULL) !=
		    SQLITE_OK)
			return store_copy_src_fail(s, "count rows", err);
		st = own;
	} else if (sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC) !=
	    SQLITE_OK || sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC) !=
	    SQLITE_OK)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW ||
	    sqlite3_column_count(st) != STORE_COPY_N)
		goto out;
	for (i = 0; i < STORE_COPY_N; i++)
		ret->v[i] += sqlite3_column_int64(st, i);
	rc = 0;
out:
	if (rc == -1)
		(void)store_copy_src_fail(s, "count rows", err);
	(void)sqlite3_reset(st);
	(void)sqlite3_finalize(own);
	return rc;
}

/* Bind the key of a keyed table's query. */
int
store_copy_src_key(struct store_copy_src *s, enum store_copy_table t,
    const char *from, const char *id, struct err *err)
{
	sqlite3_stmt *st = s->st[t];

	(void)sqlite3_reset(st);
	if (sqlite3_bind_text(st, 1, from, -1, SQLITE_STATIC) != SQLITE_OK ||
	    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC) != SQLITE_OK)
		return store_copy_src_fail(s, "read rows", err);
	return 0;
}

/* One column of the current row into r (see struct store_copy_row). */
static void
store_copy_src_col(sqlite3_stmt *st, int i, struct store_copy_row *r)
{
	r->fmt[i] = 0;
	r->len[i] = 0;
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		r->v[i] = NULL;
		break;
	case SQLITE_INTEGER:
		(void)snprintf(r->num[i], sizeof(r->num[i]), "%" PRId64,
		    (int64_t)sqlite3_column_int64(st, i));
		r->v[i] = r->num[i];
		break;
	case SQLITE_BLOB:
		r->v[i] = sqlite3_column_blob(st, i);
		r->len[i] = sqlite3_column_bytes(st, i);
		if (r->v[i] == NULL)
			r->v[i] = "";
		r->fmt[i] = 1;
		break;
	default:
		r->v[i] = (const char *)sqlite3_column_text(st, i);
		break;
	}
}

/* The next row of table t's query; see store_copy_int.h. */
int
store_copy_src_next(struct store_copy_src *s, enum store_copy_table t,
    struct store_copy_row *r, struct err *err)
{
	sqlite3_stmt *st = s->st[t];
	int i, n;

	switch (sqlite3_step(st)) {
	case SQLITE_ROW:
		break;
	case SQLITE_DONE:
		(void)sqlite3_reset(st);
		return 0;
	default:
		(void)store_copy_src_fail(s, "read rows", err);
		(void)sqlite3_reset(st);
		return -1;
	}
	n = store_copy_tables[t].n_src != 0 ? store_copy_tables[t].n_src :
	    store_copy_tables[t].n_cols;
	if (sqlite3_column_count(st) != n || n > STORE_COPY_MAX_COLS)
		return err_set(err, ERR_INTERNAL, NULL, "copy of %s: %d columns",
		    store_copy_tables[t].name, sqlite3_column_count(st));
	for (i = 0; i < n; i++)
		store_copy_src_col(st, i, r);
	r->n = store_copy_tables[t].n_cols;
	return 1;
}

/* Open a payload's content for reading in pieces; see store_copy_int.h. */
int
store_copy_src_blob(struct store_copy_src *s, int64_t rowid,
    sqlite3_blob **ret, int *ret_len, struct err *err)
{
	if (sqlite3_blob_open(s->db, "main", "payload", "content", rowid, 0,
	    ret) != SQLITE_OK) {
		(void)sqlite3_blob_close(*ret);
		*ret = NULL;
		return store_copy_src_fail(s, "read a payload", err);
	}
	*ret_len = sqlite3_blob_bytes(*ret);
	return 0;
}
