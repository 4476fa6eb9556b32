/*
 * as4gw inbox: the operator's view of the inbox (issue 11 item 10; README
 * "Finding a message").  `inbox show ID` answers "where is MessageId X":
 * the inbox row of every sending party that used X (or of --from PARTY),
 * its duplicates, payloads, delivery state and history, and the directory
 * `as4gw deliver --to-dir` hands it over in.  Read-only: it neither
 * migrates nor writes (store_find).  `inbox export ID` writes one payload
 * to stdout (issue 14 item 3), streamed from the store one chunk at a time
 * (store_payload_read), so a payload of any size leaves in bounded memory.
 * The first commands of the inbox CLI that the operator console completes
 * (list).
 */
#include "cli.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../conf/conf.h"
#include "../deliver/deliver.h"
#include "../store/store.h"
#include "../util/clock.h"
#include "../util/codec.h"

#define CLI_INBOX_USAGE \
	"usage: as4gw inbox show -c FILE [--db DSN] [--from PARTY] [--json]" \
	" [--to-dir DIR] ID\n" \
	"       as4gw inbox export -c FILE [--db DSN] [--from PARTY]" \
	" [--part N] ID > FILE\n"
#define CLI_INBOX_HELP \
	"  --db DSN      store to use instead of the config's\n" \
	"  --from PARTY  only the row of this sending party (the inbox key\n" \
	"                is party + MessageId); default: every party's\n" \
	"  --json        one JSON object per row, one per line\n" \
	"  --to-dir DIR  the directory `as4gw deliver --to-dir` writes to:\n" \
	"                print the message's hand-off path in it\n" \
	"  --part N      export: the payload to write to stdout, by part_no\n" \
	"                (default 0), streamed whatever its size\n" \
	"exit status: 0 found, 1 not found or the store failed, 2 usage\n"

enum {
	CLI_INBOX_OPT_DB = 256,
	CLI_INBOX_OPT_FROM,
	CLI_INBOX_OPT_JSON,
	CLI_INBOX_OPT_DIR,
	CLI_INBOX_OPT_PART,
};

struct cli_inbox_opts {
	const char *config, *db, *from, *to_dir, *id;
	int json;
	int part;                     /* export: part_no; -1 not given */
};

/* The hand-off of one row: deliver's directory name, the path under
 * --to-dir (or NULL) and whether it exists there. */
struct cli_inbox_handoff {
	char name[2 * CODEC_SHA256_LEN + 1];
	const char *path;
	int present;
};

/* Write s to stdout with control characters as '?' (a partner chose it). */
static void
cli_inbox_put(const char *s)
{
	for (; *s != '\0'; s++)
		(void)putchar((unsigned char)*s < 0x20 || *s == 0x7f ?
		    '?' : *s);
}

/* "key:   value\n"; NULL is "-". */
static void
cli_inbox_line(const char *key, const char *value)
{
	printf("%-18s ", key);
	cli_inbox_put(value != NULL ? value : "-");
	(void)putchar('\n');
}

/* A time as xsd:dateTime UTC into out, or NULL for -1 (not set). */
static const char *
cli_inbox_time(int64_t ms, char out[CLOCK_ISO_LEN])
{
	if (ms < 0)
		return NULL;
	clock_iso8601(ms, out);
	return out;
}

/* The human-readable form of the payloads and the delivery of f. */
static void
cli_inbox_print_delivery(const struct store_found *f,
    const struct cli_inbox_handoff *h)
{
	char t[CLOCK_ISO_LEN];
	size_t i;

	for (i = 0; i < f->n_parts; i++) {
		const struct store_found_part *p = &f->parts[i];

		printf("%-18s %d: ", "payload", p->part_no);
		cli_inbox_put(p->content_id != NULL ? p->content_id :
		    "(SOAP Body)");
		(void)fputs(", ", stdout);
		cli_inbox_put(p->mime_type != NULL ? p->mime_type : "-");
		printf(", %" PRId64 " bytes\n", p->size);
	}
	cli_inbox_line("delivery", f->state != NULL ? f->state :
	    "(no delivery row)");
	printf("%-18s %d\n", "attempts", f->attempts < 0 ? 0 : f->attempts);
	cli_inbox_line("claimed_at", cli_inbox_time(f->claimed_at_ms, t));
	cli_inbox_line("not_before", cli_inbox_time(f->not_before_ms, t));
	cli_inbox_line("last_error", f->last_error);
	cli_inbox_line("last_error_at", cli_inbox_time(f->last_error_at_ms, t));
	cli_inbox_line("done_at", cli_inbox_time(f->done_at_ms, t));
	if (h->path == NULL)
		printf("%-18s %s (under the --to-dir directory)\n", "hand-off",
		    h->name);
	else {
		printf("%-18s ", "hand-off");
		cli_inbox_put(h->path);
		printf(" (%s)\n", h->present ? "present" : "absent");
	}
}

/* One row, human-readable. */
static void
cli_inbox_print(const struct store_found *f, const struct cli_inbox_handoff *h)
{
	char t[CLOCK_ISO_LEN], hex[2 * STORE_HASH_LEN + 1];

	codec_hex(f->content_hash, sizeof(f->content_hash), hex);
	cli_inbox_line("message_id", f->message_id);
	cli_inbox_line("from", f->from_party);
	cli_inbox_line("to", f->to_party);
	cli_inbox_line("service", f->service);
	cli_inbox_line("action", f->action);
	cli_inbox_line("conversation_id", f->conversation_id);
	cli_inbox_line("agreement_ref", f->agreement_ref);
	cli_inbox_line("pmode", f->pmode_id);
	cli_inbox_line("source", f->source);
	cli_inbox_line("received_at", cli_inbox_time(f->received_at_ms, t));
	cli_inbox_line("processed_at", cli_inbox_time(f->processed_at_ms, t));
	cli_inbox_line("content_hash", hex);
	cli_inbox_line("outcome", "accepted (Receipt stored)");
	printf("%-18s %" PRId64 "\n", "duplicates", f->duplicates);
	cli_inbox_line("last_duplicate_at",
	    cli_inbox_time(f->last_duplicate_at_ms, t));
	cli_inbox_line("business_key", f->business_key);
	cli_inbox_line("duplicate_of", f->business_duplicate_of);
	cli_inbox_print_delivery(f, h);
}

/* sep "key":"value" (or null) into b; 0, or -1 out of memory. */
static int
cli_inbox_jstr(struct buf *b, const char *key, const char *value)
{
	if (buf_printf(b, ",\"%s\":", key) == -1)
		return -1;
	if (value == NULL)
		return buf_puts(b, "null");
	return buf_puts(b, "\"") | buf_json_escape(b, value) |
	    buf_puts(b, "\"");
}

/* ,"key":"<xsd:dateTime>" or null. */
static int
cli_inbox_jtime(struct buf *b, const char *key, int64_t ms)
{
	char t[CLOCK_ISO_LEN];

	return cli_inbox_jstr(b, key, cli_inbox_time(ms, t));
}

/* ,"payloads":[{...}] */
static int
cli_inbox_jparts(struct buf *b, const struct store_found *f)
{
	int bad = buf_puts(b, ",\"payloads\":[");
	size_t i;

	for (i = 0; i < f->n_parts; i++) {
		const struct store_found_part *p = &f->parts[i];

		bad |= buf_printf(b, "%s{\"part_no\":%d", i > 0 ? "," : "",
		    p->part_no);
		bad |= cli_inbox_jstr(b, "content_id", p->content_id);
		bad |= cli_inbox_jstr(b, "mime_type", p->mime_type);
		bad |= buf_printf(b, ",\"size\":%" PRId64 "}", p->size);
	}
	return bad | buf_puts(b, "]");
}

/* The delivery and hand-off members of one JSON row. */
static int
cli_inbox_jdelivery(struct buf *b, const struct store_found *f,
    const struct cli_inbox_handoff *h)
{
	int bad;

	bad = cli_inbox_jstr(b, "state", f->state);
	bad |= buf_printf(b, ",\"attempts\":%d", f->attempts < 0 ? 0 :
	    f->attempts);
	bad |= cli_inbox_jtime(b, "claimed_at", f->claimed_at_ms);
	bad |= cli_inbox_jtime(b, "not_before", f->not_before_ms);
	bad |= cli_inbox_jstr(b, "last_error", f->last_error);
	bad |= cli_inbox_jtime(b, "last_error_at", f->last_error_at_ms);
	bad |= cli_inbox_jtime(b, "done_at", f->done_at_ms);
	bad |= cli_inbox_jstr(b, "handoff_name", h->name);
	bad |= cli_inbox_jstr(b, "handoff_path", h->path);
	if (h->path != NULL)
		bad |= buf_printf(b, ",\"handoff_present\":%s",
		    h->present ? "true" : "false");
	return bad;
}

/* One row as one JSON object on one line (field names as printed). */
static int
cli_inbox_json(const struct store_found *f, const struct cli_inbox_handoff *h)
{
	char hex[2 * STORE_HASH_LEN + 1];
	struct buf b = {0};
	int bad;

	codec_hex(f->content_hash, sizeof(f->content_hash), hex);
	bad = buf_puts(&b, "{\"message_id\":\"") |
	    buf_json_escape(&b, f->message_id) | buf_puts(&b, "\"");
	bad |= cli_inbox_jstr(&b, "from", f->from_party);
	bad |= cli_inbox_jstr(&b, "to", f->to_party);
	bad |= cli_inbox_jstr(&b, "service", f->service);
	bad |= cli_inbox_jstr(&b, "action", f->action);
	bad |= cli_inbox_jstr(&b, "conversation_id", f->conversation_id);
	bad |= cli_inbox_jstr(&b, "agreement_ref", f->agreement_ref);
	bad |= cli_inbox_jstr(&b, "pmode", f->pmode_id);
	bad |= cli_inbox_jstr(&b, "source", f->source);
	bad |= cli_inbox_jtime(&b, "received_at", f->received_at_ms);
	bad |= cli_inbox_jtime(&b, "processed_at", f->processed_at_ms);
	bad |= cli_inbox_jstr(&b, "content_hash", hex);
	bad |= cli_inbox_jstr(&b, "outcome", "accepted");
	bad |= buf_printf(&b, ",\"duplicates\":%" PRId64, f->duplicates);
	bad |= cli_inbox_jtime(&b, "last_duplicate_at",
	    f->last_duplicate_at_ms);
	bad |= cli_inbox_jstr(&b, "business_key", f->business_key);
	bad |= cli_inbox_jstr(&b, "duplicate_of", f->business_duplicate_of);
	bad |= cli_inbox_jparts(&b, f) | cli_inbox_jdelivery(&b, f, h);
	bad |= buf_puts(&b, "}\n");
	if (bad == 0)
		(void)fputs(b.data, stdout);
	buf_free(&b);
	return bad != 0 ? -1 : 0;
}

/* The hand-off of f: deliver_name() (the one rule), path and presence. */
static int
cli_inbox_handoff(const struct cli_inbox_opts *o, const struct store_found *f,
    struct arena *a, struct cli_inbox_handoff *h)
{
	struct stat st;
	struct err err = {0};

	memset(h, 0, sizeof(*h));
	if (deliver_name(f->from_party, f->message_id, h->name, &err) == -1) {
		cli_fail("", err.msg);
		return -1;
	}
	if (o->to_dir == NULL)
		return 0;
	h->path = arena_sprintf(a, "%s/%s", o->to_dir, h->name);
	if (h->path == NULL) {
		cli_fail("", "out of memory");
		return -1;
	}
	h->present = stat(h->path, &st) == 0 && S_ISDIR(st.st_mode);
	return 0;
}

/* Parse `show` / `export` and their options (argv[0] is the subcommand):
 * 0, 1 help, 2 usage. */
static int
cli_inbox_parse(int argc, char **argv, struct cli_inbox_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, CLI_INBOX_OPT_DB},
		{"from", required_argument, NULL, CLI_INBOX_OPT_FROM},
		{"json", no_argument, NULL, CLI_INBOX_OPT_JSON},
		{"to-dir", required_argument, NULL, CLI_INBOX_OPT_DIR},
		{"part", required_argument, NULL, CLI_INBOX_OPT_PART},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	long v;
	int ch;

	memset(o, 0, sizeof(*o));
	o->part = -1;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; break;
		case CLI_INBOX_OPT_DB: o->db = optarg; break;
		case CLI_INBOX_OPT_FROM: o->from = optarg; break;
		case CLI_INBOX_OPT_JSON: o->json = 1; break;
		case CLI_INBOX_OPT_DIR: o->to_dir = optarg; break;
		case CLI_INBOX_OPT_PART:
			v = strtol(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v < 0 ||
			    v > INT_MAX)
				goto usage;
			o->part = (int)v;
			break;
		case 'h':
			printf(CLI_INBOX_USAGE CLI_INBOX_HELP);
			return 1;
		default: goto usage;
		}
	}
	if (o->config != NULL && optind == argc - 1 && *argv[optind] != '\0') {
		o->id = argv[optind];
		return 0;
	}
usage:
	fprintf(stderr, CLI_INBOX_USAGE);
	return 2;
}

/* Load the config (for its store) and open the store, without migrating. */
static struct store *
cli_inbox_open(const struct cli_inbox_opts *o)
{
	struct store *s = NULL;
	struct conf *c = NULL;
	struct err err = {0};

	if (conf_load(o->config, &c, &err) == -1) {
		cli_fail("", err.msg);
		goto out;
	}
	if (store_open_timeout(o->db != NULL ? o->db : c->store_dsn,
	    c->store_timeout_ms, &s, &err) == -1) {
		cli_fail("store: ", err.msg);
		s = NULL;
	}
out:
	conf_free(c);
	return s;
}

/* What show and export hold while they run: the store, an arena, the
 * rows found. */
struct cli_inbox_run {
	struct store *s;
	struct arena *a;
	struct store_found *f;
};

/*
 * The preamble of show and export: open the store, find o->id (from
 * o->from, if given) into r (cli_inbox_end frees it).  1 found, 0 not
 * found, -1 failure (reported; a store error with hint, if not NULL, on
 * the next line).
 */
static int
cli_inbox_find(const struct cli_inbox_opts *o, const char *hint,
    struct cli_inbox_run *r)
{
	struct err err = {0};
	int rc;

	r->a = NULL;
	r->f = NULL;
	if ((r->s = cli_inbox_open(o)) == NULL)
		return -1;
	if ((r->a = arena_new(0)) == NULL) {
		cli_fail("", "out of memory");
		return -1;
	}
	rc = store_find(r->s, o->id, o->from, r->a, &r->f, &err);
	if (rc == -1) {
		cli_fail("store: ", err.msg);
		if (hint != NULL)
			(void)fprintf(stderr, "as4gw: %s\n", hint);
	}
	return rc;
}

/* Free what cli_inbox_find left in r. */
static void
cli_inbox_end(struct cli_inbox_run *r)
{
	arena_free(r->a);
	store_close(r->s);
}

/* Print every row found; 0, or -1 when one could not be printed. */
static int
cli_inbox_show_rows(const struct cli_inbox_opts *o,
    const struct store_found *f, struct arena *a)
{
	struct cli_inbox_handoff h;

	for (; f != NULL; f = f->next) {
		if (cli_inbox_handoff(o, f, a, &h) == -1)
			return -1;
		if (o->json && cli_inbox_json(f, &h) == -1) {
			cli_fail("", "out of memory");
			return -1;
		}
		if (!o->json)
			cli_inbox_print(f, &h);
		if (!o->json && f->next != NULL)
			(void)putchar('\n');
	}
	return 0;
}

/* as4gw inbox show: 0 found, 1 not found or failure, 2 usage. */
static int
cli_inbox_show(int argc, char **argv)
{
	struct cli_inbox_opts o;
	struct cli_inbox_run r = {0};
	int rc;

	if ((rc = cli_inbox_parse(argc, argv, &o)) != 0)
		return rc == 1 ? 0 : rc;
	if (o.part != -1) {
		(void)fputs(CLI_INBOX_USAGE, stderr);
		return 2;
	}
	rc = 1;
	switch (cli_inbox_find(&o, "(has `as4gw migrate` run on this store?)",
	    &r)) {
	case -1:
		break;
	case 0:
		(void)fputs("as4gw: no message \"", stderr);
		for (const char *p = o.id; *p != '\0'; p++)
			(void)fputc((unsigned char)*p < 0x20 || *p == 0x7f ?
			    '?' : *p, stderr);
		(void)fputs(o.from != NULL ? "\" from that party in the inbox\n" :
		    "\" in the inbox\n", stderr);
		break;
	default:
		rc = cli_inbox_show_rows(&o, r.f, r.a) == 0 ? 0 : 1;
		break;
	}
	(void)fflush(stdout);
	cli_inbox_end(&r);
	return rc;
}

/* store_read_fn of export: one piece to stdout. */
static int
cli_inbox_put_bytes(void *ctx, const unsigned char *p, size_t n)
{
	(void)ctx;
	return n == 0 || fwrite(p, 1, n, stdout) == n ? 0 : -1;
}

/*
 * The payload o->part of the one row found (f: several parties hold the
 * MessageId -> --from is needed) to stdout, streamed (store_payload_read):
 * memory does not grow with the payload.  0, or -1 (reported).
 */
static int
cli_inbox_export_part(struct store *s, const struct cli_inbox_opts *o,
    const struct store_found *f)
{
	struct store_payload_key k;
	struct err err = {0};
	size_t i;

	if (f->next != NULL) {
		cli_fail("", "several sending parties used this MessageId:"
		    " choose one with --from");
		return -1;
	}
	for (i = 0; i < f->n_parts && f->parts[i].part_no != o->part; i++)
		;
	if (i == f->n_parts) {
		(void)fprintf(stderr, "as4gw: the message has no part %d\n",
		    o->part);
		return -1;
	}
	k.from_party = f->from_party;
	k.message_id = f->message_id;
	k.part_no = o->part;
	if (store_payload_read(s, &k, cli_inbox_put_bytes, NULL, &err) != 1 ||
	    fflush(stdout) != 0 || ferror(stdout)) {
		cli_fail("", err.kind != ERR_NONE ? err.msg :
		    "could not write to stdout");
		return -1;
	}
	return 0;
}

/* as4gw inbox export: 0 written, 1 not found or failure, 2 usage. */
static int
cli_inbox_export(int argc, char **argv)
{
	struct cli_inbox_opts o;
	struct cli_inbox_run r = {0};
	int rc;

	if ((rc = cli_inbox_parse(argc, argv, &o)) != 0)
		return rc == 1 ? 0 : rc;
	if (o.json || o.to_dir != NULL) {
		(void)fputs(CLI_INBOX_USAGE, stderr);
		return 2;
	}
	if (o.part == -1)
		o.part = 0;
	rc = 1;
	switch (cli_inbox_find(&o, NULL, &r)) {
	case -1:
		break;
	case 0:
		(void)fputs("as4gw: no such message in the inbox\n", stderr);
		break;
	default:
		rc = cli_inbox_export_part(r.s, &o, r.f) == 0 ? 0 : 1;
		break;
	}
	cli_inbox_end(&r);
	return rc;
}

/* as4gw inbox SUBCOMMAND (argv[0] is "inbox"). */
int
cli_inbox(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "show") == 0)
		return cli_inbox_show(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "export") == 0)
		return cli_inbox_export(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		printf(CLI_INBOX_USAGE CLI_INBOX_HELP);
		return 0;
	}
	(void)fprintf(stderr, CLI_INBOX_USAGE);
	return 2;
}
