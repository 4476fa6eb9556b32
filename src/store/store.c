/*
 * store — DSN dispatch to a backend, the migration list and the checks every
 * backend relies on before it touches the database.
 */
#include "store.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_sql.h"
#include "../util/codec.h"

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
	return store_open_timeout(dsn, STORE_TIMEOUT_MS, ret, err);
}

/* store_open with the store's timeout (store.h). */
int
store_open_timeout(const char *dsn, int timeout_ms, struct store **ret,
    struct err *err)
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
		return store_pg_open(dsn, timeout_ms, ret, err);
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

/* See store.h. */
int
store_lost(struct store *s)
{
	return s->ops->lost != NULL && s->ops->lost(s);
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
	else if (m->business_key != NULL && (*m->business_key == '\0' ||
	    strlen(m->business_key) > STORE_BUSINESS_KEY_MAX))
		why = "business key empty or too long";
	else if (m->business_key != NULL &&
	    m->business_mode != STORE_BUSINESS_FLAG &&
	    m->business_mode != STORE_BUSINESS_REFUSE)
		why = "business key without a mode";
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

/* See store.h. */
int
store_hashes(const struct store_message *m, struct err *err)
{
	if (m->pending == NULL || m->pending->wait(m->pending->ctx) == 0)
		return 0;
	return err_set(err, ERR_INTERNAL, NULL,
	    "could not hash the message content");
}

/* See store.h. */
int
store_v1_lazy(const struct store_message *m)
{
	return m->pending != NULL && m->pending->v1 != NULL;
}

/* See store.h. */
int
store_hash_v1(const struct store_message *m, struct err *err)
{
	if (store_hashes(m, err) == -1)
		return -1;
	if (!store_v1_lazy(m) || m->pending->v1(m->pending->ctx) == 0)
		return 0;
	return err_set(err, ERR_INTERNAL, NULL,
	    "could not hash the message content (version 1)");
}

/* The accept transaction (see store.h); *ret only written on success. */
int
store_accept(struct store *s, const struct store_message *m,
    struct arena *a, struct store_result *ret, struct err *err)
{
	struct store_result res;
	int rc;

	memset(&res, 0, sizeof(res));
	/* the backends wait for pending hashes where they read them; every
	 * accept returns with them in (the thread computing them has ended) */
	rc = store_check_message(m, err) == -1 ||
	    s->ops->accept(s, m, a, &res, err) == -1 ? -1 : 0;
	if (store_hashes(m, rc == 0 ? err : NULL) == -1)
		rc = -1;
	if (rc == 0)
		*ret = res;
	return rc;
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

/*
 * The error text as stored: at most STORE_ERROR_MAX bytes, and bytes outside
 * printable ASCII as '?' (PostgreSQL refuses text that is not valid UTF-8,
 * and a failed release must never hinge on what a command printed).
 */
static void
store_error_text(const char *error, char out[STORE_ERROR_MAX + 1])
{
	size_t i;

	if (error == NULL || *error == '\0')
		error = "hand-off failed";
	for (i = 0; i < STORE_ERROR_MAX && error[i] != '\0'; i++)
		out[i] = error[i] >= 0x20 && error[i] < 0x7f ? error[i] : '?';
	out[i] = '\0';
}

/* Mark a claimed delivery done, or put it back for a retry (store.h). */
int
store_finish(struct store *s, const char *from_party, const char *message_id,
    int ok, int64_t now_ms, int64_t retry_at_ms, struct err *err)
{
	return store_finish_error(s, from_party, message_id, ok, now_ms,
	    retry_at_ms, NULL, err);
}

/* store_finish() recording the error of a failed hand-off (store.h). */
int
store_finish_error(struct store *s, const char *from_party,
    const char *message_id, int ok, int64_t now_ms, int64_t retry_at_ms,
    const char *error, struct err *err)
{
	char text[STORE_ERROR_MAX + 1];

	if (message_id == NULL || *message_id == '\0' ||
	    strlen(message_id) > STORE_MESSAGE_ID_MAX || from_party == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "invalid finish:"
		    " message id empty or too long, or no party");
	store_error_text(error, text);
	return s->ops->finish(s, from_party, message_id, ok != 0, now_ms,
	    retry_at_ms, ok ? NULL : text, err);
}

/* Stream one stored payload (store.h). */
int
store_payload_read(struct store *s, const struct store_payload_key *k,
    store_read_fn fn, void *ctx, struct err *err)
{
	if (k->from_party == NULL || k->message_id == NULL ||
	    *k->message_id == '\0' ||
	    strlen(k->message_id) > STORE_MESSAGE_ID_MAX || k->part_no < 0)
		return 0;  /* no row can have it */
	return s->ops->payload_read(s, k, fn, ctx, err);
}

/* The inbox rows of a MessageId, read-only (store.h); *ret only on 1. */
int
store_find(struct store *s, const char *message_id, const char *from_party,
    struct arena *a, struct store_found **ret, struct err *err)
{
	struct store_found *f = NULL;
	int rc;

	if (message_id == NULL || *message_id == '\0' ||
	    strlen(message_id) > STORE_MESSAGE_ID_MAX)
		return 0;  /* no row can have it */
	rc = s->ops->find(s, message_id, from_party, a, &f, err);
	if (rc == 1)
		*ret = f;
	return rc;
}

/* A text column as a time or count: NULL is -1. */
static int64_t
store_found_int(const char *v)
{
	return v != NULL ? strtoll(v, NULL, 10) : -1;
}

/* A text column copied into a; NULL stays NULL; *bad set when out of memory. */
static const char *
store_found_str(struct arena *a, const char *v, int *bad)
{
	char *c;

	if (v == NULL)
		return NULL;
	if ((c = arena_strdup(a, v)) == NULL)
		*bad = 1;
	return c;
}

/* The inbox and delivery columns of a result row into a new f. */
static struct store_found *
store_found_new(struct arena *a, const char *const *c)
{
	struct store_found *f = arena_calloc(a, 1, sizeof(*f));
	const char *hex = c[STORE_FOUND_C_HASH];
	int bad = f == NULL, i, hi, lo;

	if (bad)
		return NULL;
	f->message_id = store_found_str(a, c[STORE_FOUND_C_ID], &bad);
	f->from_party = store_found_str(a, c[STORE_FOUND_C_FROM], &bad);
	f->to_party = store_found_str(a, c[STORE_FOUND_C_TO], &bad);
	f->service = store_found_str(a, c[STORE_FOUND_C_SERVICE], &bad);
	f->action = store_found_str(a, c[STORE_FOUND_C_ACTION], &bad);
	f->conversation_id = store_found_str(a, c[STORE_FOUND_C_CONV], &bad);
	f->agreement_ref = store_found_str(a, c[STORE_FOUND_C_AGREEMENT], &bad);
	f->pmode_id = store_found_str(a, c[STORE_FOUND_C_PMODE], &bad);
	f->source = store_found_str(a, c[STORE_FOUND_C_SOURCE], &bad);
	f->state = store_found_str(a, c[STORE_FOUND_C_STATE], &bad);
	f->last_error = store_found_str(a, c[STORE_FOUND_C_ERROR], &bad);
	for (i = 0; hex != NULL && i < STORE_HASH_LEN; i++) {
		hi = codec_hexval((unsigned char)hex[2 * i]);
		lo = hi < 0 ? -1 : codec_hexval((unsigned char)hex[2 * i + 1]);
		if (lo < 0)
			break;
		f->content_hash[i] = (unsigned char)(hi << 4 | lo);
	}
	f->received_at_ms = store_found_int(c[STORE_FOUND_C_RECEIVED]);
	f->processed_at_ms = store_found_int(c[STORE_FOUND_C_PROCESSED]);
	f->duplicates = store_found_int(c[STORE_FOUND_C_DUPLICATES]);
	f->last_duplicate_at_ms = store_found_int(c[STORE_FOUND_C_LAST_DUP]);
	f->attempts = (int)store_found_int(c[STORE_FOUND_C_ATTEMPTS]);
	f->claimed_at_ms = store_found_int(c[STORE_FOUND_C_CLAIMED]);
	f->not_before_ms = store_found_int(c[STORE_FOUND_C_NOT_BEFORE]);
	f->last_error_at_ms = store_found_int(c[STORE_FOUND_C_ERROR_AT]);
	f->done_at_ms = store_found_int(c[STORE_FOUND_C_DONE]);
	f->business_key = store_found_str(a, c[STORE_FOUND_C_BUSINESS_KEY],
	    &bad);
	f->business_duplicate_of = store_found_str(a,
	    c[STORE_FOUND_C_BUSINESS_DUP_OF], &bad);
	return bad ? NULL : f;
}

/* Append the payload columns of a result row to f (arena, doubling). */
static int
store_found_part(struct arena *a, struct store_found *f, const char *const *c)
{
	struct store_found_part *p;
	int bad = 0;

	if (f->n_parts == 0 || (f->n_parts & (f->n_parts - 1)) == 0) {
		p = arena_calloc(a, f->n_parts == 0 ? 1 : 2 * f->n_parts,
		    sizeof(*p));
		if (p == NULL)
			return -1;
		if (f->n_parts > 0)
			memcpy(p, f->parts, f->n_parts * sizeof(*p));
		f->parts = p;
	}
	p = &f->parts[f->n_parts];
	p->part_no = (int)store_found_int(c[STORE_FOUND_C_PART_NO]);
	p->content_id = store_found_str(a, c[STORE_FOUND_C_CID], &bad);
	p->mime_type = store_found_str(a, c[STORE_FOUND_C_MIME], &bad);
	p->size = store_found_int(c[STORE_FOUND_C_SIZE]);
	if (bad)
		return -1;
	f->n_parts++;
	return 0;
}

/* One result row of a find query (store_int.h). */
int
store_found_row(struct arena *a, const char *const *c,
    struct store_found **head, struct store_found **tail, struct err *err)
{
	struct store_found *f = *tail;

	if (c[STORE_FOUND_C_FROM] == NULL)
		return err_set(err, ERR_STORE, NULL,
		    "could not read inbox row: no sending party");
	if (f == NULL || strcmp(f->from_party, c[STORE_FOUND_C_FROM]) != 0) {
		if ((f = store_found_new(a, c)) == NULL)
			goto oom;
		if (*tail != NULL)
			(*tail)->next = f;
		else
			*head = f;
		*tail = f;
	}
	if (c[STORE_FOUND_C_PART_NO] != NULL && store_found_part(a, f, c) == -1)
		goto oom;
	return 0;
oom:
	return err_set(err, ERR_INTERNAL, NULL,
	    "memory exhausted reading an inbox row");
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

/* The log's words for a source / an outcome (store.h). */
const char *
store_purge_source_name(enum store_purge_source v)
{
	return v == STORE_PURGE_BACKGROUND ? "background" : "cli";
}

const char *
store_purge_outcome_name(enum store_purge_outcome v)
{
	switch (v) {
	case STORE_PURGE_OK: return "ok";
	case STORE_PURGE_STOPPED: return "stopped";
	default: return "failed";
	}
}

/* Record one purge run (store.h); a run the caller built wrongly is
 * refused before any database work. */
int
store_purge_log(struct store *s, const struct store_purge_run *r,
    struct err *err)
{
	if ((unsigned)r->source >= STORE_PURGE_N_SOURCES ||
	    (unsigned)r->outcome >= STORE_PURGE_N_OUTCOMES)
		return err_set(err, ERR_INTERNAL, NULL,
		    "invalid purge run for the log");
	return s->ops->purge_log(s, r, err);
}

/* The purge totals (store.h); *ret only written on success. */
int
store_purge_totals(struct store *s, struct store_purge_totals *ret,
    struct err *err)
{
	struct store_purge_totals t;

	memset(&t, 0, sizeof(t));
	if (s->ops->purge_totals(s, &t, err) == -1)
		return -1;
	*ret = t;
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

/* store_chunk_give (store_int.h). */
int
store_chunk_give(store_read_fn fn, void *ctx, const void *p, size_t n,
    struct err *err)
{
	if (fn(ctx, n > 0 ? p : (const void *)"", n) == 0)
		return 0;
	return err_set(err, ERR_IO, NULL, "payload reader stopped");
}

/* store_chunk_take (store_int.h): the checks of store_payload_read. */
int
store_chunk_take(struct store_chunk_rd *rd, int64_t no, const void *p,
    int64_t n, struct err *err)
{
	if (no != rd->no || n <= 0 || n > rd->size - rd->total)
		return err_set(err, ERR_STORE, NULL, "could not read payload:"
		    " chunk %" PRId64 " missing or out of order", rd->no);
	rd->no++;
	rd->total += n;
	return store_chunk_give(rd->fn, rd->ctx, p, (size_t)n, err);
}

/* store_chunk_end (store_int.h). */
int
store_chunk_end(const struct store_chunk_rd *rd, struct err *err)
{
	if (rd->total != rd->size)
		return err_set(err, ERR_STORE, NULL, "could not read payload:"
		    " its chunks hold %" PRId64 " of %" PRId64 " bytes",
		    rd->total, rd->size);
	return 0;
}
