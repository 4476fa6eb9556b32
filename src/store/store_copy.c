/*
 * store_copy — `as4gw copy`: an inbox from SQLite into PostgreSQL
 * (store_copy.h).  This file holds the pairs of queries (what is read and
 * where it goes), the order of the copy and its final check; the SQLite
 * side is store_copy_src.c, the PostgreSQL side store_copy_dst.c.
 */
#include "store_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_copy_int.h"
#include "store_pg_int.h"

/* A time column: SQLite keeps ms since the epoch, PostgreSQL timestamptz
 * (exact: integer microseconds, as every store_pg query reads them). */
#define TS(n) "(timestamptz 'epoch' + $" #n "::bigint * interval '1 ms')"
#define KEY " WHERE from_party = ?1 AND message_id = ?2"
#define STR(x) #x
#define XSTR(x) STR(x)
#define LEGACY "(size IS NULL AND length(content) > " \
	XSTR(STORE_COPY_LEGACY_MIN) ")"

/* Source query and target statement of each table, column for column
 * (the schemas of sql/sqlite/ and sql/postgresql/). */
const struct store_copy_table_sql store_copy_tables[STORE_COPY_T_N] = {
	[STORE_COPY_T_INBOX] = { "inbox",
	    "SELECT from_party, message_id, to_party, service, action,"
	    " conversation_id, agreement_ref, pmode_id, source, content_hash,"
	    " field_hashes, receipt, received_at, processed_at, partition_key,"
	    " duplicates, last_duplicate_at, business_key,"
	    " business_duplicate_of FROM inbox ORDER BY from_party, message_id",
	    "INSERT INTO inbox (from_party, message_id, to_party, service,"
	    " action, conversation_id, agreement_ref, pmode_id, source,"
	    " content_hash, field_hashes, receipt, received_at, processed_at,"
	    " partition_key, duplicates, last_duplicate_at, business_key,"
	    " business_duplicate_of) VALUES ($1, $2, $3, $4, $5, $6, $7, $8,"
	    " $9, $10, $11, $12, " TS(13) ", " TS(14) ", $15, $16, " TS(17)
	    ", $18, $19) ON CONFLICT (from_party, message_id) DO NOTHING", 19 },
	/* a payload stored in chunks: content NULL in PostgreSQL (008's
	 * CHECK), a zero-length blob in SQLite (007); one stored whole
	 * before 007 and longer than STORE_CHUNK_THRESHOLD is stored in
	 * chunks too (LEGACY: its size, and its rowid for reading it in
	 * pieces, store_copy_legacy) */
	[STORE_COPY_T_PAYLOAD] = { "payload",
	    "SELECT from_party, message_id, part_no, content_id, mime_type,"
	    " properties, CASE WHEN size IS NULL AND NOT " LEGACY " THEN"
	    " content END, CASE WHEN " LEGACY " THEN length(content) ELSE size"
	    " END, rowid, " LEGACY " FROM payload" KEY " ORDER BY part_no",
	    "INSERT INTO payload (from_party, message_id, part_no, content_id,"
	    " mime_type, properties, content, size)"
	    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", 8, 10 },
	[STORE_COPY_T_CHUNK] = { "payload_chunk",
	    "SELECT from_party, message_id, part_no, chunk_no, content"
	    " FROM payload_chunk" KEY " ORDER BY part_no, chunk_no",
	    "INSERT INTO payload_chunk (from_party, message_id, part_no,"
	    " chunk_no, content) VALUES ($1, $2, $3, $4, $5)", 5 },
	[STORE_COPY_T_DELIVERY] = { "delivery",
	    "SELECT from_party, message_id, state, attempts, claimed_at,"
	    " created_at, not_before, last_error, last_error_at, done_at"
	    " FROM delivery" KEY,
	    "INSERT INTO delivery (from_party, message_id, state, attempts,"
	    " claimed_at, created_at, not_before, last_error, last_error_at,"
	    " done_at) VALUES ($1, $2, $3, $4, " TS(5) ", " TS(6) ", " TS(7)
	    ", $8, " TS(9) ", " TS(10) ")", 10 },
	/* the log's trigger adds each run to the target's totals and trims
	 * the log to its last 1000 runs (007_purge_log.sql) */
	[STORE_COPY_T_PURGE_LOG] = { "purge_log",
	    "SELECT started_at, finished_at, source, outcome, purged, kept,"
	    " batches, error FROM purge_log ORDER BY id",
	    "INSERT INTO purge_log (started_at, finished_at, source, outcome,"
	    " purged, kept, batches, error) VALUES (" TS(1) ", " TS(2) ", $3,"
	    " $4, $5, $6, $7, $8)", 8 },
	/* ... so the totals get the rest: the runs trimmed from the source's
	 * log long ago, which only its totals remember */
	[STORE_COPY_T_PURGE_TOTALS] = { "purge_totals",
	    "SELECT t.source,"
	    " t.runs_ok - (SELECT count(*) FROM purge_log l"
	    "  WHERE l.source = t.source AND l.outcome = 'ok'),"
	    " t.runs_stopped - (SELECT count(*) FROM purge_log l"
	    "  WHERE l.source = t.source AND l.outcome = 'stopped'),"
	    " t.runs_failed - (SELECT count(*) FROM purge_log l"
	    "  WHERE l.source = t.source AND l.outcome = 'failed'),"
	    " t.purged - (SELECT coalesce(sum(l.purged), 0) FROM purge_log l"
	    "  WHERE l.source = t.source), t.last_ok_at"
	    " FROM purge_totals t ORDER BY t.source",
	    "UPDATE purge_totals SET runs_ok = runs_ok + $2::bigint,"
	    " runs_stopped = runs_stopped + $3::bigint,"
	    " runs_failed = runs_failed + $4::bigint,"
	    " purged = purged + $5::bigint,"
	    " last_ok_at = greatest(last_ok_at, " TS(6) ") WHERE source = $1",
	    6 },
};

static const char *const store_copy_names[STORE_COPY_N] = {
	[STORE_COPY_INBOX] = "inbox rows",
	[STORE_COPY_RECEIPT_BYTES] = "receipt bytes",
	[STORE_COPY_FIELD_DIGESTS] = "rows with field digests",
	[STORE_COPY_BUSINESS_DUPS] = "business duplicates",
	[STORE_COPY_DUPLICATES] = "retries counted",
	[STORE_COPY_PAYLOADS] = "payloads",
	[STORE_COPY_PAYLOAD_BYTES] = "payload bytes",
	[STORE_COPY_CHUNKS] = "payload chunk rows",
	[STORE_COPY_CHUNK_BYTES] = "chunk bytes",
	[STORE_COPY_READY] = "deliveries ready",
	[STORE_COPY_CLAIMED] = "deliveries claimed",
	[STORE_COPY_DONE] = "deliveries done",
	[STORE_COPY_PURGE_LOG] = "purge log rows",
	[STORE_COPY_PURGE_RUNS] = "purge runs (totals)",
	[STORE_COPY_PURGED] = "rows purged (totals)",
};

/* See store_copy.h. */
const char *
store_copy_measure_name(enum store_copy_measure m)
{
	return (unsigned)m < STORE_COPY_N ? store_copy_names[m] : "?";
}

/* The cutter's put: one chunk row into the target. */
static int
store_copy_put_chunk(void *ctx, const struct store_copy_row *r,
    struct err *err)
{
	int n;

	return store_copy_dst_put(ctx, STORE_COPY_T_CHUNK, r, &n, err);
}

/*
 * The content of payload row p (stored whole before the chunked storage,
 * longer than STORE_CHUNK_THRESHOLD: its target row has its size and no
 * content) read in pieces of STORE_CHUNK_BYTES, one in memory, into the
 * cutter's rows.  Its rows and bytes are counted in *chunked.
 */
static int
store_copy_legacy(struct store_copy_src *s, struct store_copy_cut *cut,
    const struct store_copy_row *p, struct store_copy_counts *chunked,
    struct err *err)
{
	sqlite3_blob *blob = NULL;
	unsigned char *buf;
	int64_t rows = cut->rows;
	int len, off, n, rc = -1;

	if ((buf = malloc(STORE_CHUNK_BYTES)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (store_copy_src_blob(s, strtoll(p->v[STORE_COPY_P_ROWID], NULL, 10),
	    &blob, &len, err) == -1)
		goto out;
	for (off = 0; off < len; off += n) {
		n = len - off < (int)STORE_CHUNK_BYTES ? len - off :
		    (int)STORE_CHUNK_BYTES;
		if (sqlite3_blob_read(blob, buf, n, off) != SQLITE_OK) {
			(void)err_set(err, ERR_STORE, NULL, "could not read a "
			    "payload of \"%s\"", p->v[1]);
			goto out;
		}
		if (store_copy_cut_feed(cut, strtoll(p->v[2], NULL, 10), buf,
		    (size_t)n, err) == -1)
			goto out;
	}
	if (store_copy_cut_end(cut, err) == -1)
		goto out;
	chunked->v[STORE_COPY_CHUNKS] += cut->rows - rows;
	chunked->v[STORE_COPY_CHUNK_BYTES] += len;
	rc = 0;
out:
	(void)sqlite3_blob_close(blob);
	free(buf);
	return rc;
}

/*
 * Every row of one key's table t, from the source to the target: a chunk
 * row re-cut into the target's (store_copy_cut.c), one source row held.
 */
static int
store_copy_children(struct store_copy_src *s, struct store_copy_dst *d,
    enum store_copy_table t, struct store_copy_cut *cut,
    struct store_copy_counts *chunked, struct err *err)
{
	struct store_copy_row r;
	int got, n;

	if (store_copy_src_key(s, t, cut->row.v[0], cut->row.v[1], err) == -1)
		return -1;
	while ((got = store_copy_src_next(s, t, &r, err)) == 1) {
		if (t == STORE_COPY_T_CHUNK) {
			if (store_copy_cut_feed(cut, strtoll(r.v[2], NULL, 10),
			    r.v[4], (size_t)r.len[4], err) == -1)
				return -1;
			continue;
		}
		if (store_copy_dst_put(d, t, &r, &n, err) == -1)
			return -1;
		if (t == STORE_COPY_T_PAYLOAD &&
		    strcmp(r.v[STORE_COPY_P_LEGACY], "1") == 0 &&
		    store_copy_legacy(s, cut, &r, chunked, err) == -1)
			return -1;
	}
	if (got == 0 && t == STORE_COPY_T_CHUNK)
		return store_copy_cut_end(cut, err);
	return got;
}

/*
 * An inbox row whose key the target has already (--merge only): the same
 * content hash is skipped with its payloads and delivery row (counted in
 * *skipped), another is a conflict that fails the copy.
 */
static int
store_copy_present(struct store_copy_src *s, struct store_copy_dst *d,
    const struct store_copy_row *r, int merge,
    struct store_copy_counts *skipped, struct err *err)
{
	const char *from = r->v[0], *id = r->v[1];
	int same;

	if (!merge)
		return err_set(err, ERR_STORE, NULL, "inbox row of party \"%s\""
		    " MessageId \"%s\" is already in the target", from, id);
	same = store_copy_dst_same(d, from, id, r->v[9], r->len[9], err);
	if (same == -1)
		return -1;
	if (same == 0)
		return err_set(err, ERR_STORE, NULL, "conflict: the target has "
		    "party \"%s\" MessageId \"%s\" with other content (another "
		    "content hash)", from, id);
	return store_copy_src_counts(s, from, id, skipped, err);
}

/* What copying the inbox rows works with. */
struct store_copy_run {
	struct store_copy_src *s;
	struct store_copy_dst *d;
	struct store_copy_cut *cut;
	int merge;
};

/* One inbox row with its payloads, chunks and delivery row (or, already
 * in the target, skipped). */
static int
store_copy_one(const struct store_copy_run *run,
    const struct store_copy_row *r, struct store_copy_report *ret,
    struct err *err)
{
	static const enum store_copy_table kids[] = { STORE_COPY_T_PAYLOAD,
	    STORE_COPY_T_CHUNK, STORE_COPY_T_DELIVERY };
	size_t i;
	int n;

	if (store_copy_dst_put(run->d, STORE_COPY_T_INBOX, r, &n, err) == -1)
		return -1;
	if (n == 0)
		return store_copy_present(run->s, run->d, r, run->merge,
		    &ret->skipped, err);
	store_copy_cut_key(run->cut, r->v[0], r->v[1]);
	for (i = 0; i < sizeof(kids) / sizeof(kids[0]); i++)
		if (store_copy_children(run->s, run->d, kids[i], run->cut,
		    &ret->chunked, err) == -1)
			return -1;
	return 0;
}

/*
 * Every inbox row, in key order, with its progress reported; the chunk
 * rows written (and the rows their bytes must make) counted in *ret.
 */
static int
store_copy_inbox(const struct store_copy_opts *o, struct store_copy_src *s,
    struct store_copy_dst *d, struct store_copy_report *ret,
    struct err *err)
{
	struct store_copy_cut cut;
	struct store_copy_run run = { s, d, &cut, o->merge };
	struct store_copy_row r;
	int64_t done = 0;
	int got = -1;

	if (store_copy_cut_init(&cut, store_copy_put_chunk, d, err) == -1)
		goto out;
	while ((got = store_copy_src_next(s, STORE_COPY_T_INBOX, &r,
	    err)) == 1) {
		if (store_copy_one(&run, &r, ret, err) == -1) {
			got = -1;
			break;
		}
		if (++done % STORE_COPY_PROGRESS_ROWS == 0 &&
		    o->progress != NULL)
			o->progress(o->progress_ctx, done,
			    ret->source.v[STORE_COPY_INBOX]);
	}
	ret->chunk_rows_written = cut.rows;
	ret->chunk_rows_want = cut.want_rows;
	ret->chunk_bytes_cut = cut.bytes;
out:
	store_copy_cut_free(&cut);
	return got;
}

/*
 * The purge log's rows, then the totals' rest (see the table above): with
 * a copy into an empty target only.  A --merge copies messages only: the
 * purge history counts runs, not messages, and a second merge of one
 * source would count its runs twice (store_copy_skip_purge).
 */
static int
store_copy_purge(struct store_copy_src *s, struct store_copy_dst *d,
    struct err *err)
{
	static const enum store_copy_table ts[] = { STORE_COPY_T_PURGE_LOG,
	    STORE_COPY_T_PURGE_TOTALS };
	struct store_copy_row r;
	size_t i;
	int got = 0, n;

	for (i = 0; got == 0 && i < sizeof(ts) / sizeof(ts[0]); i++)
		while ((got = store_copy_src_next(s, ts[i], &r, err)) == 1)
			if (store_copy_dst_put(d, ts[i], &r, &n, err) == -1)
				return -1;
	return got;
}

/* Under --merge the source's purge history is reported as skipped. */
static void
store_copy_skip_purge(struct store_copy_report *r)
{
	static const enum store_copy_measure ms[] = { STORE_COPY_PURGE_LOG,
	    STORE_COPY_PURGE_RUNS, STORE_COPY_PURGED };
	size_t i;

	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		r->skipped.v[ms[i]] = r->source.v[ms[i]];
}

/*
 * The check before COMMIT: the target grew by the source's rows less
 * the skipped, its purge totals by the source's; its purge log by the
 * source's rows when it had none (else the trim to 1000 runs decides).
 * Chunks compare by bytes: the target's chunk rows are the source's bytes
 * re-cut (store_copy_cut.c), so its row count grew by the rows those
 * bytes make per part, counted from their lengths, not from the 1 MiB
 * rows of the source.
 */
static int
store_copy_verify(const struct store_copy_report *r, struct err *err)
{
	int64_t want;
	int m;

	for (m = 0; m < STORE_COPY_N; m++) {
		want = r->before.v[m] + r->source.v[m] - r->skipped.v[m] +
		    r->chunked.v[m];
		if (m == STORE_COPY_CHUNKS)
			want = r->before.v[m] + r->chunk_rows_want;
		if (m == STORE_COPY_PURGE_LOG && r->before.v[m] != 0)
			continue;
		if (r->after.v[m] != want)
			return err_set(err, ERR_STORE, NULL, "counts differ "
			    "after the copy: %s: target %lld, expected %lld "
			    "(nothing committed)", store_copy_names[m],
			    (long long)r->after.v[m], (long long)want);
	}
	if (r->chunk_rows_written != r->chunk_rows_want ||
	    r->chunk_bytes_cut != r->after.v[STORE_COPY_CHUNK_BYTES] -
	    r->before.v[STORE_COPY_CHUNK_BYTES])
		return err_set(err, ERR_STORE, NULL, "chunks differ after the "
		    "copy: %lld rows written of %lld bytes, expected %lld rows "
		    "(nothing committed)", (long long)r->chunk_rows_written,
		    (long long)r->chunk_bytes_cut,
		    (long long)r->chunk_rows_want);
	return 0;
}

/*
 * A copy goes into an empty target: no inbox rows and no purge runs (its
 * purge history is added to the target's, so copying one source twice
 * would count its runs twice); else only with --merge (messages only).
 */
static int
store_copy_refuse(const struct store_copy_opts *o,
    const struct store_copy_report *r, const char *what, struct err *err)
{
	if (o->merge || (r->before.v[STORE_COPY_INBOX] == 0 &&
	    r->before.v[STORE_COPY_PURGE_RUNS] == 0))
		return 0;
	return err_set(err, ERR_CONF, NULL, "the target is not empty (%lld "
	    "inbox rows, %lld purge runs): %s; --merge copies the messages "
	    "into it", (long long)r->before.v[STORE_COPY_INBOX],
	    (long long)r->before.v[STORE_COPY_PURGE_RUNS], what);
}

/* Inside the target's transaction: refuse, copy, count, check. */
static int
store_copy_run(const struct store_copy_opts *o, struct store_copy_src *s,
    struct store_copy_dst *d, struct store_copy_report *ret,
    struct err *err)
{
	if (store_copy_dst_begin(d, err) == -1 ||
	    store_copy_dst_counts(d, &ret->before, err) == -1)
		return -1;
	ret->after = ret->before;
	if (store_copy_refuse(o, ret, "nothing copied", err) == -1)
		return -1;
	if (o->merge)   /* see store_copy_purge */
		store_copy_skip_purge(ret);
	/* into an empty target nothing needs an answer before the next row */
	if ((!o->merge && store_copy_dst_pipeline(d, 1, err) == -1) ||
	    store_copy_inbox(o, s, d, ret, err) == -1 ||
	    (!o->merge && store_copy_purge(s, d, err) == -1) ||
	    (!o->merge && store_copy_dst_pipeline(d, 0, err) == -1) ||
	    store_copy_dst_counts(d, &ret->after, err) == -1 ||
	    store_copy_verify(ret, err) == -1)
		return -1;
	ret->verified = 1;
	return store_copy_dst_end(d, 1, err);
}

/* A dry run: the counts of both sides, and the refusal a copy would meet. */
static int
store_copy_dry(const struct store_copy_opts *o, struct store_copy_dst *d,
    struct store_copy_report *ret, struct err *err)
{
	if (ret->target_schema &&
	    store_copy_dst_counts(d, &ret->before, err) == -1)
		return -1;
	ret->after = ret->before;
	return store_copy_refuse(o, ret, "a copy would be refused", err);
}

/* See store_copy.h. */
int
store_copy(const struct store_copy_opts *o, struct store_copy_report *ret,
    struct err *err)
{
	struct store_copy_src s;
	struct store_copy_dst d;
	int rc = -1;

	memset(ret, 0, sizeof(*ret));
	ret->chunk_row_bytes = (int64_t)STORE_PG_CHUNK_BYTES;
	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	if (o->from == NULL || strncmp(o->from, "sqlite:", 7) != 0 ||
	    o->from[7] == '\0') {
		(void)err_set(err, ERR_CONF, NULL,
		    "the copy's source must be sqlite:FILE");
		goto out;
	}
	if (o->to == NULL || (strncmp(o->to, "postgresql://", 13) != 0 &&
	    strncmp(o->to, "postgres://", 11) != 0)) {
		(void)err_set(err, ERR_CONF, NULL,
		    "the copy's target must be postgresql:// or postgres://");
		goto out;
	}
	/* the source first: a source that cannot be read writes nothing */
	if (store_copy_src_open(o->from + 7, &s, err) == -1 ||
	    store_copy_src_counts(&s, NULL, NULL, &ret->source, err) == -1 ||
	    store_copy_dst_open(o->to, o->dry_run, &d, &ret->target_schema,
	    err) == -1)
		goto out;
	rc = o->dry_run ? store_copy_dry(o, &d, ret, err) :
	    store_copy_run(o, &s, &d, ret, err);
out:
	store_copy_dst_close(&d);
	store_copy_src_close(&s);
	return rc;
}
