/*
 * as4gw purge: delete the messages past their retention once, for cron
 * (retention.h; README "Retention").  SIGTERM/SIGINT stop it between
 * batches; what was purged until then stays purged.
 */
#include "cli.h"

#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../conf/conf.h"
#include "../retention/retention.h"
#include "../store/store.h"
#include "../util/clock.h"

#define CLI_PURGE_USAGE \
	"usage: as4gw purge -c FILE [--db DSN] [--now INSTANT]\n"
#define CLI_PURGE_HELP \
	"  --db DSN        store to use instead of the config's\n" \
	"  --now INSTANT   purge as if it were this xsd:dateTime (for tests)\n"

struct cli_purge_opts {
	const char *config;
	const char *db;
	const char *now;
};

static atomic_int cli_purge_stop;

/* SIGTERM/SIGINT: end after the batch in hand. */
static void
cli_purge_signal(int sig)
{
	(void)sig;
	atomic_store(&cli_purge_stop, 1);
}

/* Parse -c FILE [--db DSN] [--now INSTANT]: 0 ok, 1 help printed, 2 usage. */
static int
cli_purge_parse(int argc, char **argv, struct cli_purge_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"db", required_argument, NULL, 'd'},
		{"now", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; break;
		case 'd': o->db = optarg; break;
		case 'n': o->now = optarg; break;
		case 'h':
			printf(CLI_PURGE_USAGE CLI_PURGE_HELP);
			return 1;
		default: goto usage;
		}
	}
	if (o->config != NULL && optind == argc)
		return 0;
usage:
	fprintf(stderr, CLI_PURGE_USAGE);
	return 2;
}

/* Open and migrate the store named by --db or the config. */
static struct store *
cli_purge_open(const struct cli_purge_opts *o, const struct conf *c)
{
	struct store *s = NULL;
	struct err err = {0};

	if (store_open_timeout(o->db != NULL ? o->db : c->store_dsn,
	    c->store_timeout_ms, &s, &err) == -1 ||
	    store_migrate(s, &err) == -1) {
		cli_fail("store: ", err.msg);
		store_close(s);
		return NULL;
	}
	return s;
}

/* as4gw purge: 0 ok, 1 config or store failure, 2 usage. */
int
cli_purge(int argc, char **argv)
{
	struct retention_counts n = {0};
	struct cli_purge_opts o;
	struct sigaction sa;
	struct store *s = NULL;
	struct conf *c = NULL;
	struct err err = {0}, rerr = {0};
	int64_t now = clock_epoch_ms(), started;
	int rc;

	if ((rc = cli_purge_parse(argc, argv, &o)) != 0)
		return rc == 1 ? 0 : rc;
	if (o.now != NULL && clock_parse_iso8601(o.now, &now) == -1) {
		(void)fprintf(stderr,
		    "as4gw: invalid --now \"%s\" (an xsd:dateTime)\n", o.now);
		return 2;
	}
	rc = 1;
	if (conf_load(o.config, &c, &err) == -1) {
		cli_fail("", err.msg);
		goto out;
	}
	if ((s = cli_purge_open(&o, c)) == NULL)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = cli_purge_signal;
	(void)sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	started = clock_epoch_ms();
	if (retention_purge(s, c, now, RETENTION_PAUSE_MS, &cli_purge_stop, &n,
	    &err) == -1)
		cli_fail("purge: ", err.msg);
	else
		rc = 0;
	/* the purge log: what every serve's /metrics counts (issue 11 item 6) */
	if (retention_record(s, STORE_PURGE_CLI, started, &n,
	    rc == 0 ? NULL : err.msg, &rerr) == -1)
		cli_fail("purge: the run is not in the purge log: ", rerr.msg);
	printf("purged %zu, kept %zu undelivered in %zu batches%s\n", n.purged,
	    n.kept, n.batches,
	    atomic_load(&cli_purge_stop) ? " (stopped by signal)" : "");
out:
	store_close(s);
	conf_free(c);
	return rc;
}
