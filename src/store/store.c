/*
 * store — DSN dispatch to a backend, the migration list and the checks every
 * backend relies on before it touches the database.
 */
#include "store.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "store_int.h"
#include "store_sql.h"

#define STORE_SQLITE_PREFIX "sqlite:"

/* A DSN for PostgreSQL: the URI forms libpq accepts. */
static int
store_is_pg_dsn(const char *dsn)
{
	return strncmp(dsn, "postgresql://", 13) == 0 ||
	    strncmp(dsn, "postgres://", 11) == 0;
}

/*
 * Open one connection for dsn.  The DSN is never copied into err: a
 * PostgreSQL DSN may carry a password.
 */
int
store_open(const char *dsn, struct store **ret, struct err *err)
{
	size_t plen = strlen(STORE_SQLITE_PREFIX);

	if (dsn == NULL || *dsn == '\0')
		return err_set(err, ERR_CONF, NULL, "store dsn is empty");
	if (strncmp(dsn, STORE_SQLITE_PREFIX, plen) == 0) {
		if (dsn[plen] == '\0')
			return err_set(err, ERR_CONF, NULL,
			    "store dsn \"sqlite:\" names no file");
		return store_sqlite_open(dsn + plen, ret, err);
	}
	if (store_is_pg_dsn(dsn))
		return store_pg_open(dsn, ret, err);
	return err_set(err, ERR_CONF, NULL,
	    "store dsn must start with sqlite:, postgresql:// or postgres://");
}

/* Apply pending migrations: the backend takes its own lock. */
int
store_migrate(struct store *s, struct err *err)
{
	s->migrated = 0;
	return s->ops->migrate(s, err);
}

/* Liveness check (SELECT 1), reconnecting first where the backend can. */
int
store_ping(struct store *s, struct err *err)
{
	return s->ops->ping(s, err);
}

/* Required text fields: present, whatever their content. */
static int
store_check_fields(const struct store_message *m)
{
	const char *req[] = { m->from_party, m->to_party, m->service,
	    m->action, m->conversation_id, m->partition_key };
	size_t i;

	for (i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (req[i] == NULL)
			return -1;
	return 0;
}

/* Refuse a message the caller built wrongly, before any database work. */
static int
store_check_message(const struct store_message *m, struct err *err)
{
	const char *why = NULL;
	size_t i;

	if (m->message_id == NULL || *m->message_id == '\0' ||
	    strlen(m->message_id) > STORE_MESSAGE_ID_MAX)
		why = "message id empty or too long";
	else if (m->from_party == NULL)
		why = "no sending party (the key)";
	else if (m->field_hashes_len % STORE_HASH_LEN != 0 ||
	    (m->field_hashes_len > 0 && m->field_hashes == NULL))
		why = "field digests malformed";
	else if (m->receipt == NULL)
		return 0;       /* a probe reads the key and the hashes only */
	else if (store_check_fields(m) == -1)
		why = "a required field is missing";
	else if (m->receipt != NULL && m->receipt_len == 0)
		why = "empty receipt";
	else if (m->n_parts > 0 && m->parts == NULL)
		why = "parts missing";
	for (i = 0; why == NULL && i < m->n_parts; i++) {
		if (m->parts[i].len > 0 && m->parts[i].data == NULL)
			why = "part without data";
		else if (m->parts[i].part_no < 0)
			why = "negative part number";
	}
	if (why != NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "invalid message for the store: %s", why);
	return 0;
}

/* The accept transaction (see store.h); *ret only written on success. */
int
store_accept(struct store *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_result res;

	memset(&res, 0, sizeof(res));
	if (store_check_message(m, err) == -1 ||
	    s->ops->accept(s, m, a, &res, err) == -1)
		return -1;
	*ret = res;
	return 0;
}

/* Claim the oldest claimable delivery (see store.h); *ret only on 1. */
int
store_claim(struct store *s, int64_t now_ms, int64_t stale_ms,
    struct arena *a, struct store_delivery *ret, struct err *err)
{
	struct store_delivery d;
	int rc;

	if (stale_ms < 0)
		return err_set(err, ERR_INTERNAL, NULL,
		    "invalid claim: negative stale time");
	memset(&d, 0, sizeof(d));
	rc = s->ops->claim(s, now_ms, stale_ms, a, &d, err);
	if (rc == 1)
		*ret = d;
	return rc;
}

/* Mark a claimed delivery done, or put it back for a retry (store.h). */
int
store_finish(struct store *s, const char *from_party, const char *message_id,
    int ok, int64_t now_ms, int64_t retry_at_ms, struct err *err)
{
	if (message_id == NULL || *message_id == '\0' ||
	    strlen(message_id) > STORE_MESSAGE_ID_MAX || from_party == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "invalid finish:"
		    " message id empty or too long, or no party");
	return s->ops->finish(s, from_party, message_id, ok != 0, now_ms,
	    retry_at_ms, err);
}

/* A purge the caller built wrongly: no batch bound, or legs missing. */
static int
store_check_purge(const struct store_purge *p, struct err *err)
{
	size_t i;

	if (p->batch == 0 || p->batch > INT32_MAX)
		return err_set(err, ERR_INTERNAL, NULL,
		    "invalid purge: batch %zu not in 1..%d", p->batch,
		    INT32_MAX);
	if (p->n_legs > 0 && (p->pmode_ids == NULL || p->cutoffs_ms == NULL))
		return err_set(err, ERR_INTERNAL, NULL,
		    "invalid purge: legs missing");
	for (i = 0; i < p->n_legs; i++)
		if (p->pmode_ids[i] == NULL)
			return err_set(err, ERR_INTERNAL, NULL,
			    "invalid purge: leg %zu has no pmode id", i);
	return 0;
}

/* One purge batch (store.h); *purged and *kept only written on success. */
int
store_purge(struct store *s, const struct store_purge *p, size_t *purged,
    size_t *kept, struct err *err)
{
	size_t np = 0, nk = 0;

	if (store_check_purge(p, err) == -1 ||
	    s->ops->purge(s, p, &np, &nk, err) == -1)
		return -1;
	*purged = np;
	*kept = nk;
	return 0;
}

/* Queue and inbox sizes; *ret only written on success. */
int
store_stats(struct store *s, struct store_stats *ret, struct err *err)
{
	struct store_stats st;

	memset(&st, 0, sizeof(st));
	if (s->ops->stats(s, &st, err) == -1)
		return -1;
	*ret = st;
	return 0;
}

/* Block until a NOTIFY or timeout_ms (negative: do not block). */
int
store_wait(struct store *s, int timeout_ms, struct err *err)
{
	return s->ops->wait(s, timeout_ms < 0 ? 0 : timeout_ms, err);
}

/* Clamp into the range every backend can store as a time. */
int64_t
store_clamp_ms(int64_t ms)
{
	if (ms < 0)
		return 0;
	return ms > STORE_MS_MAX ? STORE_MS_MAX : ms;
}

/* [["id",cutoff],...] and the latest cutoff (see store_int.h). */
int
store_purge_legs(const struct store_purge *p, struct buf *json,
    int64_t *ret_max, struct err *err)
{
	int64_t max = store_clamp_ms(p->default_cutoff_ms);
	int bad;
	size_t i;

	bad = buf_puts(json, "[");
	for (i = 0; bad == 0 && i < p->n_legs; i++) {
		int64_t c = store_clamp_ms(p->cutoffs_ms[i]);

		if (c > max)
			max = c;
		bad = buf_puts(json, i > 0 ? ",[\"" : "[\"") ||
		    buf_json_escape(json, p->pmode_ids[i]) ||
		    buf_printf(json, "\",%" PRId64 "]", c);
	}
	if (bad != 0 || buf_puts(json, "]") != 0)
		return err_set(err, ERR_INTERNAL, NULL,
		    "out of memory building the purge legs");
	*ret_max = max;
	return 0;
}

/* Close the connection and free the handle; accepts NULL. */
void
store_close(struct store *s)
{
	if (s != NULL)
		s->ops->close(s);
}

/* Next embedded migration whose name is "<backend>/..." (names are sorted). */
const struct store_sql *
store_migration_next(const char *backend, size_t *pos)
{
	size_t blen = strlen(backend);

	while (*pos < store_sql_count) {
		const struct store_sql *f = &store_sql_files[(*pos)++];

		if (strncmp(f->name, backend, blen) == 0 &&
		    f->name[blen] == '/')
			return f;
	}
	return NULL;
}
