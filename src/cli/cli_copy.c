/*
 * as4gw copy: move an inbox from the embedded SQLite store into PostgreSQL
 * (store_copy.h; README "Moving from SQLite to PostgreSQL"), then print
 * the counts of both sides, which the copy has compared before COMMIT.
 */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../store/store_copy.h"

#define CLI_COPY_USAGE \
	"usage: as4gw copy --from sqlite:FILE --to postgresql://... " \
	"[--merge] [--dry-run]\n"
#define CLI_COPY_HELP \
	"  --from DSN   the SQLite store to copy (read-only; stop its " \
	"gateway and deliverer first)\n" \
	"  --to DSN     the PostgreSQL store to copy into (migrated first; " \
	"it must be empty:\n" \
	"               no messages, no purge runs)\n" \
	"  --merge      copy the messages into a target that is not empty: " \
	"one already\n" \
	"               there with the same content is skipped, with other " \
	"content it is\n" \
	"               a conflict and nothing is committed (no purge " \
	"history is copied)\n" \
	"  --dry-run    count both sides, write nothing\n" \
	"The copy is one PostgreSQL transaction: all or nothing; run it " \
	"again after a failure.\n"

/* Parse the options into o: 0 ok, 1 help printed, 2 usage. */
static int
cli_copy_parse(int argc, char **argv, struct store_copy_opts *o)
{
	static const struct option longopts[] = {
		{"from", required_argument, NULL, 'f'},
		{"to", required_argument, NULL, 't'},
		{"merge", no_argument, NULL, 'm'},
		{"dry-run", no_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f': o->from = optarg; break;
		case 't': o->to = optarg; break;
		case 'm': o->merge = 1; break;
		case 'n': o->dry_run = 1; break;
		case 'h':
			printf(CLI_COPY_USAGE CLI_COPY_HELP);
			return 1;
		default: goto usage;
		}
	}
	if (o->from != NULL && o->to != NULL && optind == argc)
		return 0;
usage:
	fprintf(stderr, CLI_COPY_USAGE);
	return 2;
}

/* The counts: one line per measure, one column per side. */
static void
cli_copy_print(const struct store_copy_report *r, int dry_run)
{
	int m;

	if (dry_run)
		printf("%-24s %14s %14s\n", "", "source", "target");
	else
		printf("%-24s %14s %14s %14s %14s\n", "", "source", "skipped",
		    "target before", "target after");
	for (m = 0; m < STORE_COPY_N; m++) {
		printf("%-24s %14lld %14lld", store_copy_measure_name(m),
		    (long long)r->source.v[m], dry_run ?
		    (long long)r->before.v[m] : (long long)r->skipped.v[m]);
		if (!dry_run)
			printf(" %14lld %14lld", (long long)r->before.v[m],
			    (long long)r->after.v[m]);
		printf("\n");
	}
}

/*
 * The chunk rows are not copied one to one: PostgreSQL's are re-cut to
 * one heap page each (store_copy.h), so the source's and the target's
 * row counts differ; say so, and how many were made of what.
 */
static void
cli_copy_chunks(const struct store_copy_report *r, int dry_run)
{
	if (dry_run) {
		if (r->source.v[STORE_COPY_CHUNKS] > 0)
			printf("payload chunk rows: a copy re-cuts them into "
			    "PostgreSQL rows of at most %lld bytes (more rows, "
			    "the same bytes)\n", (long long)r->chunk_row_bytes);
		return;
	}
	if (r->chunk_rows_written == 0)
		return;
	printf("payload chunk rows: %lld source rows (%lld bytes) were re-cut "
	    "into %lld PostgreSQL rows of at most %lld bytes (target after = "
	    "before + %lld; chunk bytes equal)\n",
	    (long long)(r->source.v[STORE_COPY_CHUNKS] -
	    r->skipped.v[STORE_COPY_CHUNKS]),
	    (long long)(r->source.v[STORE_COPY_CHUNK_BYTES] -
	    r->skipped.v[STORE_COPY_CHUNK_BYTES]),
	    (long long)r->chunk_rows_written, (long long)r->chunk_row_bytes,
	    (long long)r->chunk_rows_written);
	if (r->chunked.v[STORE_COPY_CHUNKS] > 0)
		printf("payloads stored whole before the chunked storage were "
		    "stored in %lld chunk rows of %lld bytes (counted above)\n",
		    (long long)r->chunked.v[STORE_COPY_CHUNKS],
		    (long long)r->chunked.v[STORE_COPY_CHUNK_BYTES]);
}

/* Every STORE_COPY_PROGRESS_ROWS inbox rows: where the copy is. */
static void
cli_copy_progress(void *ctx, int64_t done, int64_t total)
{
	(void)ctx;
	(void)fprintf(stderr, "as4gw: copy: %lld of %lld inbox rows\n",
	    (long long)done, (long long)total);
}

/* as4gw copy: 0 copied (or counted), 1 refused or failed, 2 usage. */
int
cli_copy(int argc, char **argv)
{
	struct store_copy_report r;
	struct store_copy_opts o;
	struct err err = {0};
	int rc;

	if ((rc = cli_copy_parse(argc, argv, &o)) != 0)
		return rc == 1 ? 0 : rc;
	o.progress = cli_copy_progress;
	if (store_copy(&o, &r, &err) == -1) {
		if (o.dry_run && err.kind == ERR_CONF && r.target_schema)
			cli_copy_print(&r, 1);
		cli_fail("copy: ", err.msg);
		return 1;
	}
	cli_copy_print(&r, o.dry_run);
	cli_copy_chunks(&r, o.dry_run);
	if (o.dry_run)
		printf("dry run: nothing written%s\n", r.target_schema ? "" :
		    " (the target has no as4gw schema yet: a copy creates it)");
	else
		printf("copied %lld inbox rows (%lld skipped: already in the "
		    "target) with %lld payloads of %lld bytes; counts "
		    "verified, committed\n",
		    (long long)(r.source.v[STORE_COPY_INBOX] -
		    r.skipped.v[STORE_COPY_INBOX]),
		    (long long)r.skipped.v[STORE_COPY_INBOX],
		    (long long)(r.source.v[STORE_COPY_PAYLOADS] -
		    r.skipped.v[STORE_COPY_PAYLOADS]),
		    (long long)(r.source.v[STORE_COPY_PAYLOAD_BYTES] -
		    r.skipped.v[STORE_COPY_PAYLOAD_BYTES]));
	return 0;
}
