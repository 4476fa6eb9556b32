/*
 * as4gw deliver: hand received messages to a backend, a directory or a
 * command (deliver.h; README "Backend hand-off").  One line per message on
 * stdout, a summary at the end; SIGTERM/SIGINT stop between messages.
 * stderr has JSON log lines (util/log.h, as serve's): one at start (store,
 * target, mode) or one saying why it could not start ("start-failed"),
 * one when a store outage starts and one when it is over (issue 11 items
 * 1 and 12), and errors.  Only a usage error is plain text.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../conf/conf.h"
#include "../deliver/deliver.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/log.h"

#define CLI_DELIVER_USAGE \
	"usage: as4gw deliver -c FILE (--to-dir DIR | --exec CMD) " \
	"[--db DSN] [--once | --follow] [--max N] [--stale-seconds N] " \
	"[--exec-timeout N]\n"
#define CLI_DELIVER_HELP \
	"  --to-dir DIR       write DIR/<sha256 of MessageId>/: message.json\n" \
	"                     and part-N.bin; DIR is created if missing\n" \
	"  --exec CMD         run CMD on the message directory: a CMD that\n" \
	"                     is one program path (no blanks, no shell\n" \
	"                     characters) runs as CMD DIR, any other as\n" \
	"                     /bin/sh -c CMD sh DIR (DIR is $1); exit\n" \
	"                     status 0 marks it delivered\n" \
	"  --db DSN           store to use instead of the config's\n" \
	"  --once             deliver at most one message (as --max 1)\n" \
	"  --follow           wait for new messages until SIGTERM/SIGINT\n" \
	"exit status: 0 every message handed over, 1 a message failed (it\n" \
	"stays queued for a retry) or the store failed, 2 usage\n" \
	"  --max N            stop after N messages (0: no limit)\n" \
	"  --stale-seconds N  take over claims older than N s (default\n" \
	"                     600; keep it above --exec-timeout)\n" \
	"  --exec-timeout N   kill the command after N s (default 300)\n"

enum {
	CLI_DELIVER_OPT_DIR = 256,
	CLI_DELIVER_OPT_EXEC,
	CLI_DELIVER_OPT_DB,
	CLI_DELIVER_OPT_ONCE,
	CLI_DELIVER_OPT_FOLLOW,
	CLI_DELIVER_OPT_MAX,
	CLI_DELIVER_OPT_STALE,
	CLI_DELIVER_OPT_TIMEOUT,
};

struct cli_deliver_opts {
	const char *config;
	const char *db;
	struct conf *conf;
	int once;
	long max, stale_s, timeout_s;
	struct deliver_opts d;
};

static atomic_int cli_deliver_stop;

/* SIGTERM/SIGINT: finish the message in hand, then stop. */
static void
cli_deliver_signal(int sig)
{
	(void)sig;
	atomic_store(&cli_deliver_stop, 1);
}

/* Write s to stdout with control characters as '?': one line per message
 * whatever a partner put into its MessageId. */
static void
cli_deliver_put(const char *s)
{
	for (; *s != '\0'; s++)
		(void)putchar((unsigned char)*s < 0x20 || *s == 0x7f ?
		    '?' : *s);
}

/* deliver_report_fn: one line per claimed message. */
static void
cli_deliver_report(void *arg, const struct deliver_report *r)
{
	const struct cli_deliver_opts *o = arg;

	(void)fputs(r->ok ? "delivered " : "failed ", stdout);
	cli_deliver_put(r->message_id);
	if (r->ok && o->d.to_dir != NULL)
		printf(" -> %s/%s", o->d.to_dir, r->name);
	printf(" (attempt %d)", r->attempts);
	if (!r->ok) {
		(void)fputs(": ", stdout);
		cli_deliver_put(r->err != NULL ? r->err->msg : "unknown error");
		printf("; retry in %lld s", (long long)(r->retry_in_ms / 1000));
	}
	(void)putchar('\n');
	(void)fflush(stdout);
}

/* deliver_outage_fn: one line when the store fails, one when it is back. */
static void
cli_deliver_outage(void *arg, const struct deliver_outage *e)
{
	const char *f[6] = { "what", e->what, NULL, NULL, NULL, NULL };
	char down[32], tries[32];

	(void)arg;
	if (!e->recovered) {
		f[2] = "error";
		f[3] = e->err != NULL ? e->err->msg : "unknown error";
		log_event(LOG_WARN, "store-outage", "store failed; retrying "
		    "with back-off until it works again", f, 2);
		return;
	}
	(void)snprintf(down, sizeof(down), "%lld", (long long)e->down_ms);
	(void)snprintf(tries, sizeof(tries), "%d", e->retries);
	f[2] = "down_ms";
	f[3] = down;
	f[4] = "retries";
	f[5] = tries;
	log_event(LOG_INFO, "store-recovered", "store works again", f, 3);
}

/* One option with an argument into o; -1 when its value is invalid. */
static int
cli_deliver_option(int ch, const char *arg, struct cli_deliver_opts *o)
{
	switch (ch) {
	case 'c': o->config = arg; return 0;
	case CLI_DELIVER_OPT_DIR: o->d.to_dir = arg; return 0;
	case CLI_DELIVER_OPT_EXEC: o->d.exec_cmd = arg; return 0;
	case CLI_DELIVER_OPT_DB: o->db = arg; return 0;
	case CLI_DELIVER_OPT_ONCE: o->once = 1; return 0;
	case CLI_DELIVER_OPT_FOLLOW: o->d.follow = 1; return 0;
	case CLI_DELIVER_OPT_MAX:
		return cli_number(arg, 0, INT_MAX, &o->max);
	case CLI_DELIVER_OPT_STALE:
		return cli_number(arg, 0, 30L * 86400, &o->stale_s);
	case CLI_DELIVER_OPT_TIMEOUT:
		return cli_number(arg, 1, 86400, &o->timeout_s);
	default: return -1;
	}
}

/* Parse the command line: 0 ok, 1 help printed, 2 usage error. */
static int
cli_deliver_parse(int argc, char **argv, struct cli_deliver_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"to-dir", required_argument, NULL, CLI_DELIVER_OPT_DIR},
		{"exec", required_argument, NULL, CLI_DELIVER_OPT_EXEC},
		{"db", required_argument, NULL, CLI_DELIVER_OPT_DB},
		{"once", no_argument, NULL, CLI_DELIVER_OPT_ONCE},
		{"follow", no_argument, NULL, CLI_DELIVER_OPT_FOLLOW},
		{"max", required_argument, NULL, CLI_DELIVER_OPT_MAX},
		{"stale-seconds", required_argument, NULL, CLI_DELIVER_OPT_STALE},
		{"exec-timeout", required_argument, NULL, CLI_DELIVER_OPT_TIMEOUT},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch, idx = 0;

	memset(o, 0, sizeof(*o));
	o->stale_s = DELIVER_STALE_MS_DEFAULT / 1000;
	o->timeout_s = DELIVER_EXEC_TIMEOUT_DEFAULT;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, &idx)) != -1) {
		if (ch == 'h') {
			printf(CLI_DELIVER_USAGE CLI_DELIVER_HELP);
			return 1;
		}
		if (cli_deliver_option(ch, optarg, o) == -1) {
			if (ch != '?')
				(void)fprintf(stderr,
				    "as4gw: invalid value \"%s\" for --%s\n",
				    optarg, longopts[idx].name);
			goto usage;
		}
	}
	if (o->config == NULL || optind != argc ||
	    (o->d.to_dir == NULL) == (o->d.exec_cmd == NULL) ||
	    (o->once && (o->d.follow || o->max != 0)))
		goto usage;
	o->d.max_messages = o->once ? 1 : (size_t)o->max;
	o->d.stale_ms = (int64_t)o->stale_s * 1000;
	o->d.exec_timeout_s = (unsigned)o->timeout_s;
	o->d.report = cli_deliver_report;
	o->d.outage = cli_deliver_outage;
	o->d.report_arg = o;
	return 0;
usage:
	fprintf(stderr, CLI_DELIVER_USAGE);
	return 2;
}

/*
 * Load the config (for the store and the legs, kept in o->conf for
 * message.json) and open and migrate the store.
 */
static int
cli_deliver_open(struct cli_deliver_opts *o, struct store **ret)
{
	struct err err = {0};

	*ret = NULL;
	if (conf_load(o->config, &o->conf, &err) == -1) {
		cli_start_failed("", err.msg);
		return -1;
	}
	o->d.conf = o->conf;
	if (store_open_timeout(o->db != NULL ? o->db : o->conf->store_dsn,
	    o->conf->store_timeout_ms, ret, &err) == -1 ||
	    store_migrate(*ret, &err) == -1) {
		cli_start_failed("store: ", err.msg);
		store_close(*ret);
		*ret = NULL;
		return -1;
	}
	return 0;
}

/*
 * The store for the log: a sqlite: DSN as is; a PostgreSQL URI without its
 * password and parameters (either may carry a secret), "postgresql" for
 * any other form.
 */
static void
cli_deliver_store_name(const char *dsn, struct buf *b)
{
	const char *rest = strstr(dsn, "://"), *at, *colon, *end;

	if (strncmp(dsn, "sqlite:", 7) == 0 || rest == NULL) {
		(void)buf_puts(b, strncmp(dsn, "sqlite:", 7) == 0 ? dsn :
		    "postgresql");
		return;
	}
	rest += 3;
	end = rest + strcspn(rest, "?#");
	at = memchr(rest, '@', (size_t)(end - rest));
	colon = at != NULL ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
	(void)buf_puts(b, "postgresql://");
	if (colon != NULL) {
		(void)buf_append(b, rest, (size_t)(colon - rest));
		rest = at;
	}
	(void)buf_append(b, rest, (size_t)(end - rest));
}

/* The start line: what is served, from where, how (issue 11 item 12). */
static void
cli_deliver_started(const struct cli_deliver_opts *o, size_t swept)
{
	struct buf store = {0};
	char n[32];
	const char *f[] = { "store", NULL, "target",
	    o->d.to_dir != NULL ? "directory" : "command",
	    o->d.to_dir != NULL ? "to_dir" : "exec",
	    o->d.to_dir != NULL ? o->d.to_dir : o->d.exec_cmd,
	    "mode", o->d.follow ? "follow" : o->once ? "once" : "drain",
	    "swept", n };

	cli_deliver_store_name(o->db != NULL ? o->db : o->conf->store_dsn,
	    &store);
	f[1] = store.data != NULL ? store.data : "?";
	(void)snprintf(n, sizeof(n), "%zu", swept);
	log_event(LOG_INFO, "deliver-start", "as4gw deliver started", f,
	    swept > 0 ? 5 : 4);
	buf_free(&store);
}

/* Stop cleanly between messages on SIGTERM and SIGINT (no SA_RESTART: a
 * wait for new messages is interrupted). */
static void
cli_deliver_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cli_deliver_signal;
	(void)sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
}

/* as4gw deliver: 0 ok, 1 store or directory failure, 2 usage. */
int
cli_deliver(int argc, char **argv)
{
	struct deliver_counts n = {0};
	struct cli_deliver_opts o;
	struct store *s = NULL;
	struct err err = {0};
	char why[PATH_MAX + 128];
	int rc;

	if ((rc = cli_deliver_parse(argc, argv, &o)) != 0)
		return rc == 1 ? 0 : rc;
	rc = 1;
	if (o.d.to_dir != NULL && mkdir(o.d.to_dir, 0750) == -1 &&
	    errno != EEXIST) {
		(void)snprintf(why, sizeof(why), "could not create directory "
		    "\"%s\": %s", o.d.to_dir, strerror(errno));
		cli_start_failed("", why);
		goto out;
	}
	if (cli_deliver_open(&o, &s) == -1)
		goto out;
	atomic_store(&cli_deliver_stop, 0);
	cli_deliver_signals();
	cli_deliver_started(&o, deliver_sweep(&o.d));
	if (deliver_run(s, &o.d, &cli_deliver_stop, &n, &err) == -1)
		log_msg(LOG_ERROR, "store: %s", err.msg);
	else   /* a run for cron or a timer: any failed message is a failure */
		rc = n.failed > 0 && !o.d.follow ? 1 : 0;
	printf("delivered %zu, failed %zu%s\n", n.delivered, n.failed,
	    atomic_load(&cli_deliver_stop) ? " (stopped by signal)" : "");
out:
	store_close(s);
	conf_free(o.conf);
	return rc;
}
