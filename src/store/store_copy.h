/*
 * store_copy — move an inbox from the embedded SQLite store into
 * PostgreSQL (issue 15 item 4; `as4gw copy`, README "Moving from SQLite
 * to PostgreSQL"): every inbox row with its Receipt, content hash and field
 * digests, business key and business-duplicate link, duplicate counter;
 * its payloads (whole, or the payload_chunk rows of a large one); its
 * delivery row as it is (ready, claimed or done, attempts, back-off, last
 * error); the purge log and the purge totals.  A retry sent to the new
 * store then gets the byte-identical stored Receipt, as before.
 *
 * The source is opened read-only and read in one read transaction (one
 * snapshot).  The target is migrated first (the embedded migrations of
 * `serve`), then written in ONE PostgreSQL transaction holding an
 * EXCLUSIVE lock on its inbox: all or nothing.  Memory stays bounded: one
 * row at a time (a payload stored whole is at most STORE_CHUNK_THRESHOLD
 * bytes for rows stored since the chunked storage, a chunk
 * STORE_CHUNK_BYTES; a chunk goes into PostgreSQL re-cut into rows of
 * store_pg_chunk_len bytes, store_copy_cut.c), whatever the inbox's
 * size: a payload stored whole before the chunked storage (SQLite
 * migration 007) and longer than STORE_CHUNK_THRESHOLD is read in pieces
 * and stored in chunks, as the gateway stores such a payload now.
 */
#ifndef AS4GW_STORE_COPY_H
#define AS4GW_STORE_COPY_H

#include <stdint.h>

#include "../util/err.h"

/* What is counted on each side and compared (store_copy_measure_name). */
enum store_copy_measure {
	STORE_COPY_INBOX,             /* inbox rows */
	STORE_COPY_RECEIPT_BYTES,     /* bytes of their stored Receipts */
	STORE_COPY_FIELD_DIGESTS,     /* rows with field digests */
	STORE_COPY_BUSINESS_DUPS,     /* rows flagged as business duplicates */
	STORE_COPY_DUPLICATES,        /* retries counted (sum of duplicates) */
	STORE_COPY_PAYLOADS,          /* payload rows */
	STORE_COPY_PAYLOAD_BYTES,     /* bytes of the payloads */
	STORE_COPY_CHUNKS,            /* payload_chunk rows */
	STORE_COPY_CHUNK_BYTES,       /* bytes in them */
	STORE_COPY_READY,             /* delivery rows by state */
	STORE_COPY_CLAIMED,
	STORE_COPY_DONE,
	STORE_COPY_PURGE_LOG,         /* purge_log rows */
	STORE_COPY_PURGE_RUNS,        /* runs in the purge totals */
	STORE_COPY_PURGED,            /* rows purged in the purge totals */
	STORE_COPY_N
};

struct store_copy_counts {
	int64_t v[STORE_COPY_N];
};

struct store_copy_opts {
	const char *from;             /* "sqlite:PATH" */
	const char *to;               /* "postgresql://..." (never printed:
	                               * it may carry a password) */
	int merge;                    /* a target inbox with rows is merged
	                               * into, else refused */
	int dry_run;                  /* count both sides, write nothing */
	/* called after every STORE_COPY_PROGRESS_ROWS inbox rows read
	 * (copied or skipped) with the count so far and the source's; NULL:
	 * not called */
	void (*progress)(void *ctx, int64_t done, int64_t total);
	void *progress_ctx;
};

#define STORE_COPY_PROGRESS_ROWS 10000

struct store_copy_report {
	struct store_copy_counts source;
	struct store_copy_counts skipped;  /* --merge: rows already there */
	struct store_copy_counts before;   /* the target before the copy */
	struct store_copy_counts after;    /* the target after it (dry run:
	                                    * as before) */
	struct store_copy_counts chunked;  /* target chunk rows (and their
	                                    * bytes) made of payloads stored
	                                    * whole before the chunked storage
	                                    * and longer than
	                                    * STORE_CHUNK_THRESHOLD */
	/* The target's payload_chunk rows: every copied part's bytes (source
	 * chunks of up to 1 MiB, or a payload stored whole) re-cut into rows
	 * of at most chunk_row_bytes, as the PostgreSQL store writes them
	 * (one heap page each; a 1 MiB row does not fit PostgreSQL's).  The
	 * rows written, the rows the parts' lengths must make (what the
	 * target's count is checked against), the bytes re-cut. */
	int64_t chunk_rows_written;
	int64_t chunk_rows_want;
	int64_t chunk_bytes_cut;
	int64_t chunk_row_bytes;      /* STORE_PG_CHUNK_BYTES */
	int target_schema;            /* 0: the target had no as4gw schema
	                               * yet (dry run: counted as empty) */
	int verified;                 /* the counts were compared and match */
};

/*
 * Copy o->from into o->to (see above).  Refused, with nothing written to
 * the target (not even its schema, for a source that cannot be read):
 * a source that is missing, not an as4gw SQLite database, of another
 * schema version or open in another process (a running gateway); a target
 * that is not PostgreSQL; a target with inbox rows or purge runs unless
 * o->merge.
 * Under o->merge a key (sending party, MessageId) already in the target
 * with the same content hash is skipped with its payloads and delivery
 * row and counted in ret->skipped; with another content hash it is a
 * conflict: ERR_STORE naming it, nothing committed.  A merge copies no
 * purge history (reported as skipped): it counts runs, and a second merge
 * of one source would count them twice.  At the end the
 * target's counts must have grown by the source's less the skipped (the
 * purge totals by the source's; the chunk rows by the re-cut rows the
 * copied bytes make, the chunk bytes exactly), else nothing is committed.
 * 0 ok (*ret filled; also for a dry run), -1 with err (ERR_CONF for a
 * refusal of the options, ERR_STORE otherwise); *ret is filled as far as
 * it was counted either way.
 */
int store_copy(const struct store_copy_opts *o, struct store_copy_report *ret,
    struct err *err);

/* "inbox rows", "payload bytes", ...: the report's row labels. */
const char *store_copy_measure_name(enum store_copy_measure m);

#endif
