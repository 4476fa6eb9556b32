/* as4gw serve: load the config, migrate the store, serve until SIGTERM. */
#include "cli.h"

#include <ctype.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../conf/conf.h"
#include "../gateway/gateway.h"
#include "../http/http.h"
#include "../store/store.h"
#include "../util/clock.h"
#include "../util/log.h"

struct cli_opts {
	const char *config;
	const char *listen;
	const char *db;
	const char *verify_at;
};

/* Print "as4gw: " PREFIX MSG on stderr as ONE line: messages from libpq and
 * friends carry newlines and tabs ("...refused\n\tIs the server running"),
 * and a refusal to start is one line naming the problem. */
static void
cli_serve_fail(const char *prefix, const char *msg)
{
	const char *p;
	int gap = 0, any = 0;

	(void)fprintf(stderr, "as4gw: %s", prefix);
	for (p = msg; *p != '\0'; p++) {
		if (isspace((unsigned char)*p)) {
			gap = 1;
			continue;
		}
		if (gap && any)
			(void)fputc(' ', stderr);
		(void)fputc(*p, stderr);
		gap = 0;
		any = 1;
	}
	(void)fputc('\n', stderr);
}

/* Parse -c FILE [--listen HOST:PORT] [--db DSN]; 0 ok, 2 usage. */
static int
cli_opts_parse(int argc, char **argv, const char *cmd, struct cli_opts *o)
{
	static const struct option longopts[] = {
		{"config", required_argument, NULL, 'c'},
		{"listen", required_argument, NULL, 'l'},
		{"db", required_argument, NULL, 'd'},
		{"verify-at", required_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->config = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'd': o->db = optarg; break;
		case 'v': o->verify_at = optarg; break;
		case 'h':
			printf("usage: as4gw %s -c FILE [--listen HOST:PORT] [--db DSN] [--verify-at INSTANT]\n", cmd);
			return 1;
		default: return 2;
		}
	}
	if (o->config == NULL || optind != argc) {
		fprintf(stderr, "usage: as4gw %s -c FILE [--listen HOST:PORT] [--db DSN] [--verify-at INSTANT]\n", cmd);
		return 2;
	}
	return 0;
}

/* Load the config and apply command-line overrides. */
static struct conf *
cli_load_conf(const struct cli_opts *o)
{
	struct conf *c = NULL;
	struct err err = {0};
	char *host = NULL, *dsn;
	int port;

	if (conf_load(o->config, &c, &err) == -1) {
		cli_serve_fail("", err.msg);
		return NULL;
	}
	if (o->listen != NULL) {
		if (conf_parse_listen(o->listen, &host, &port) == -1) {
			fprintf(stderr, "as4gw: invalid --listen \"%s\"\n", o->listen);
			conf_free(c);
			return NULL;
		}
		free(c->listen_host);
		c->listen_host = host;
		c->listen_port = port;
	}
	if (o->db != NULL) {
		if ((dsn = strdup(o->db)) == NULL) {
			conf_free(c);
			return NULL;
		}
		free(c->store_dsn);
		c->store_dsn = dsn;
	}
	if (o->verify_at != NULL &&
	    (clock_parse_iso8601(o->verify_at, &c->verify_at_ms) == -1 ||
	    c->verify_at_ms <= 0)) {
		fprintf(stderr, "as4gw: invalid --verify-at \"%s\" (an xsd:dateTime "
		    "after 1970)\n", o->verify_at);
		conf_free(c);
		return NULL;
	}
	return c;
}

/* Open the store once and apply migrations (under the store's lock). */
static int
cli_migrate_store(const struct conf *c)
{
	struct store *s = NULL;
	struct err err = {0};
	int rc = -1;

	if (store_open(c->store_dsn, &s, &err) == 0 && store_migrate(s, &err) == 0)
		rc = 0;
	else
		cli_serve_fail("store: ", err.msg);
	store_close(s);
	return rc;
}

/* Block until SIGTERM or SIGINT; SIGHUP is logged (reload comes later). */
static int
cli_wait_signal(const sigset_t *set)
{
	int sig = 0;

	for (;;) {
		if (sigwait(set, &sig) != 0)
			return -1;
		if (sig == SIGHUP) {
			log_msg(LOG_WARN, "SIGHUP ignored: configuration reload is not implemented yet");
			continue;
		}
		return sig;
	}
}

int
cli_serve(int argc, char **argv)
{
	struct http_server *srv = NULL;
	struct gateway *gw = NULL;
	struct conf *c = NULL;
	struct err err = {0};
	struct cli_opts o;
	sigset_t set;
	int rc = 1, sig;

	if ((rc = cli_opts_parse(argc, argv, "serve", &o)) != 0)
		return rc == 1 ? 0 : rc;
	rc = 1;
	/* block before any thread starts so all threads inherit the mask */
	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	(void)pthread_sigmask(SIG_BLOCK, &set, NULL);
	if ((c = cli_load_conf(&o)) == NULL || cli_migrate_store(c) == -1)
		goto out;
	if (gateway_new(c, &gw, &err) == -1 || http_start(c, gw, &srv, &err) == -1) {
		cli_serve_fail("", err.msg);
		goto out;
	}
	if (c->verify_at_ms != 0) {
		char at[CLOCK_ISO_LEN];

		clock_iso8601(c->verify_at_ms, at);
		log_msg(LOG_WARN, "REPLAY MODE: certificate validity and "
		    "wsu:Timestamp freshness are evaluated at %s, not now; "
		    "never run a production gateway like this", at);
	}
	log_msg(LOG_INFO, "as4gw listening on %s://%s:%d%s (store %s, %zu P-Mode legs)",
	    c->tls_cert != NULL ? "https" : "http", c->listen_host,
	    http_port(srv), c->http_path,
	    strncmp(c->store_dsn, "sqlite:", 7) == 0 ? c->store_dsn : "postgresql",
	    c->n_legs);
	sig = cli_wait_signal(&set);
	log_msg(LOG_INFO, "signal %d: draining requests in flight", sig);
	http_stop(srv, c->limits.request_deadline_s * 1000);
	srv = NULL;
	log_msg(LOG_INFO, "as4gw stopped");
	rc = 0;
out:
	http_stop(srv, 0);
	gateway_free(gw);
	conf_free(c);
	return rc;
}

int
cli_migrate(int argc, char **argv)
{
	struct conf *c;
	struct cli_opts o;
	int rc;

	if ((rc = cli_opts_parse(argc, argv, "migrate", &o)) != 0)
		return rc == 1 ? 0 : rc;
	if ((c = cli_load_conf(&o)) == NULL)
		return 1;
	rc = cli_migrate_store(c) == 0 ? 0 : 1;
	if (rc == 0)
		printf("migrations applied\n");
	conf_free(c);
	return rc;
}
