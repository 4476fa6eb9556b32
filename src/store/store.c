/*
 * store — DSN dispatch to a backend, the migration list and the checks every
 * backend relies on before it touches the database.
 */
#include "store.h"

#include <string.h>

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
	else if (store_check_fields(m) == -1)
		why = "a required field is missing";
	else if (m->receipt == NULL || m->receipt_len == 0)
		why = "no receipt";
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
