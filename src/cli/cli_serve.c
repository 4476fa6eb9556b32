/*
 * as4gw serve: load the config, migrate the store, serve until SIGTERM;
 * SIGHUP reloads the configuration (swapped in only when valid).
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../certwatch/certwatch.h"
#include "../conf/conf.h"
#include "../gateway/gateway.h"
#include "../http/http.h"
#include "../metrics/metrics.h"
#include "../trust/trust_revoc.h"
#include "../retention/retention.h"
#include "../store/store.h"
#include "../util/buf.h"
#include "../util/clock.h"
#include "../util/log.h"

struct cli_opts {
	const char *config;
	const char *listen;
	const char *db;
	const char *verify_at;
};

/* Copy msg into out as ONE line: messages from libpq and friends carry
 * newlines and tabs ("...refused\n\tIs the server running"); runs of white
 * space become one space. */
static void
cli_oneline(const char *msg, char *out, size_t outlen)
{
	size_t n = 0;
	int gap = 0;

	for (; *msg != '\0' && n + 2 < outlen; msg++) {
		if (isspace((unsigned char)*msg)) {
			gap = 1;
			continue;
		}
		if (gap && n > 0)
			out[n++] = ' ';
		out[n++] = *msg;
		gap = 0;
	}
	out[n] = '\0';
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
		(void)fprintf(stderr, "usage: as4gw %s -c FILE [--listen HOST:PORT] [--db DSN] [--verify-at INSTANT]\n", cmd);
		return 2;
	}
	return 0;
}

/* Apply the command-line overrides to a loaded conf; 0 ok, -1 err. */
static int
cli_overrides(const struct cli_opts *o, struct conf *c, struct err *err)
{
	char *host = NULL, *dsn;
	int port;

	if (o->listen != NULL) {
		if (conf_parse_listen(o->listen, &host, &port) == -1)
			return err_set(err, ERR_CONF, NULL, "invalid --listen \"%s\"",
			    o->listen);
		free(c->listen_host);
		c->listen_host = host;
		c->listen_port = port;
	}
	if (o->db != NULL) {
		if ((dsn = strdup(o->db)) == NULL)
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
		free(c->store_dsn);
		c->store_dsn = dsn;
	}
	if (o->verify_at != NULL &&
	    (clock_parse_iso8601(o->verify_at, &c->verify_at_ms) == -1 ||
	    c->verify_at_ms <= 0))
		return err_set(err, ERR_CONF, NULL, "invalid --verify-at \"%s\" "
		    "(an xsd:dateTime after 1970)", o->verify_at);
	return 0;
}

/* Load the config and apply command-line overrides (at start and on
 * every reload); NULL with err set. */
static struct conf *
cli_load_conf(const struct cli_opts *o, struct err *err)
{
	struct conf *c = NULL;

	if (conf_load(o->config, &c, err) == -1)
		return NULL;
	if (cli_overrides(o, c, err) == -1) {
		conf_free(c);
		return NULL;
	}
	return c;
}

/* Open the store once and apply migrations (under the store's lock); a
 * failure said as serve's start-up error (daemon) or migrate's line. */
static int
cli_migrate_store(const struct conf *c, int daemon, size_t *ret_applied)
{
	struct store *s = NULL;
	struct err err = {0};
	int rc = -1;

	if (store_open_timeout(c->store_dsn, c->store_timeout_ms, &s,
	    &err) == 0 && store_migrate(s, &err) == 0) {
		rc = 0;
		*ret_applied = s->migrated;
	} else if (daemon)
		cli_start_failed("store: ", err.msg);
	else
		cli_fail("store: ", err.msg);
	store_close(s);
	return rc;
}

/* Block until SIGTERM, SIGINT or SIGHUP, or for at most ms (0 returned);
 * -1 if waiting fails. */
static int
cli_wait_signal(const sigset_t *set, int64_t ms)
{
	struct timespec ts;
	int sig;

	if (ms < 0)
		ms = 0;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	sig = sigtimedwait(set, NULL, &ts);
	if (sig == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	return sig;
}

/* The loud warning of --verify-at / <replay><verifyAt>. */
static void
cli_replay_warning(const struct conf *c)
{
	char at[CLOCK_ISO_LEN];

	if (c->verify_at_ms == 0)
		return;
	clock_iso8601(c->verify_at_ms, at);
	log_msg(LOG_WARN, "REPLAY MODE: certificate validity, wsu:Timestamp "
	    "freshness and eb:Timestamp age are evaluated at %s, not now; "
	    "never run a production gateway like this", at);
}

/* Add name to the comma-separated list *names; 0 ok, -1 out of memory. */
static int
cli_name(struct buf *names, const char *name)
{
	return buf_printf(names, "%s%s", names->len > 0 ? ", " : "", name);
}

/* Keep old's value of one string setting in *cur; add name to *names when
 * it differed.  0 ok, -1 out of memory. */
static int
cli_keep_str(char **cur, const char *old, const char *name, struct buf *names)
{
	char *copy = NULL;

	if ((*cur == NULL && old == NULL) ||
	    (*cur != NULL && old != NULL && strcmp(*cur, old) == 0))
		return 0;
	if (old != NULL && (copy = strdup(old)) == NULL)
		return -1;
	free(*cur);
	*cur = copy;
	return cli_name(names, name);
}

/*
 * What only a restart changes (listen address, TLS files, threads, limits,
 * store DSN and timeout): put the running values back into the reloaded c, so that the
 * gateway, the server and the purge all see one consistent set, and name
 * what differed in *names.  0 ok, -1 out of memory.
 */
static int
cli_keep_fixed(const struct conf *old, struct conf *c, struct buf *names)
{
	if (c->listen_port != old->listen_port &&
	    strcmp(c->listen_host, old->listen_host) == 0 &&
	    cli_name(names, "listen") == -1)
		return -1;
	c->listen_port = old->listen_port;
	if (cli_keep_str(&c->listen_host, old->listen_host, "listen", names) == -1 ||
	    cli_keep_str(&c->tls_cert, old->tls_cert, "tls certificate", names) == -1 ||
	    cli_keep_str(&c->tls_key, old->tls_key, "tls key", names) == -1 ||
	    cli_keep_str(&c->store_dsn, old->store_dsn, "store", names) == -1 ||
	    cli_keep_str(&c->spool_dir, old->spool_dir, "spoolDir", names) == -1)
		return -1;
	if (c->threads != old->threads && cli_name(names, "threads") == -1)
		return -1;
	c->threads = old->threads;
	if (c->store_timeout_ms != old->store_timeout_ms &&
	    cli_name(names, "storeTimeoutSeconds") == -1)
		return -1;
	c->store_timeout_ms = old->store_timeout_ms;
	if (!conf_limits_equal(&c->limits, &old->limits) &&
	    cli_name(names, "limits") == -1)
		return -1;
	c->limits = old->limits;
	return 0;
}

/* Start the background purge for c on the schedule *sched (kept across
 * reloads); a failure is logged, not fatal. */
static struct retention_thread *
cli_purge_start(const struct conf *c, struct retention_schedule *sched)
{
	struct retention_thread *rt = NULL;
	struct err err = {0};
	char line[512];

	if (retention_start(c, sched, &rt, &err) == -1) {
		cli_oneline(err.msg, line, sizeof(line));
		log_msg(LOG_ERROR, "background purge not started: %s", line);
		return NULL;
	}
	return rt;
}

/* <revocation> of c as the engine's limits. */
static void
cli_revoc_limits(const struct conf *c, struct trust_revoc_limits *lim)
{
	const struct conf_revocation *rv = &c->revocation;

	trust_revoc_limits_default(lim);
	lim->connect_timeout_ms = rv->connect_timeout_ms;
	lim->timeout_s = rv->timeout_s;
	lim->max_ocsp_bytes = rv->max_ocsp_bytes;
	lim->max_crl_bytes = rv->max_crl_bytes;
	lim->skew_s = rv->skew_s;
	lim->refresh_ahead_s = rv->refresh_ahead_s;
	lim->no_next_update_s = rv->no_next_update_s;
	lim->failure_backoff_s = rv->failure_backoff_s;
	lim->idle_evict_s = rv->idle_s;
	lim->max_entries = rv->max_entries;
}

/* The server's revocation engine (issue 12 item 2), refresher running;
 * it outlives every configuration generation.  NULL logged. */
static struct trust_revoc *
cli_revoc_start(const struct conf *c)
{
	struct trust_revoc_limits lim;
	struct trust_revoc *rv;
	struct err err = {0};

	cli_revoc_limits(c, &lim);
	if ((rv = trust_revoc_new(&lim)) == NULL ||
	    trust_revoc_start(rv, &err) == -1) {
		cli_start_failed("", rv == NULL ? "out of memory" : err.msg);
		trust_revoc_free(rv);
		return NULL;
	}
	return rv;
}

/* Load c and build its gateway for a reload; 0 ok, -1 refused (logged).
 * The revocation engine is kept, with c's limits once swapped in. */
static int
cli_reload_build(const struct cli_opts *o, const struct conf *cur,
    struct trust_revoc *rv, struct conf **ret_c, struct gateway **ret_gw)
{
	struct conf *c = NULL;
	struct gateway *gw = NULL;
	struct buf fixed = {0};
	struct err err = {0};
	char line[1024];

	if ((c = cli_load_conf(o, &err)) == NULL ||
	    (cli_keep_fixed(cur, c, &fixed) == -1 &&
	    err_set(&err, ERR_INTERNAL, NULL, "out of memory") == -1) ||
	    gateway_new_revoc(c, rv, &gw, &err) == -1) {
		cli_oneline(err.msg, line, sizeof(line));
		log_msg(LOG_ERROR, "SIGHUP: configuration not reloaded, still "
		    "serving the previous one: %s", line);
		metrics_reload(0);
		conf_free(c);
		buf_free(&fixed);
		return -1;
	}
	if (fixed.len > 0)
		log_msg(LOG_WARN, "SIGHUP: %s changed in %s but need a restart; "
		    "still using the running values", fixed.data, o->config);
	buf_free(&fixed);
	*ret_c = c;
	*ret_gw = gw;
	return 0;
}

/*
 * SIGHUP: load and check the configuration again; swap it in only when
 * valid (requests being processed finish on the old one).  The purge
 * thread reads the conf, so it stops before the swap and starts again
 * after, on the same schedule: a reload does not put the next run off.
 */
static void
cli_reload(const struct cli_opts *o, struct http_server *srv,
    const struct conf **cur, struct retention_thread **rt,
    struct retention_schedule *sched, struct trust_revoc *rv)
{
	struct trust_revoc_limits lim;
	struct conf *c;
	struct gateway *gw;

	if (cli_reload_build(o, *cur, rv, &c, &gw) == -1)
		return;
	retention_stop(*rt);
	*rt = NULL;
	if (http_swap(srv, c, gw) == -1) {
		log_msg(LOG_ERROR, "SIGHUP: configuration not reloaded, still "
		    "serving the previous one: out of memory");
		metrics_reload(0);
		gateway_free(gw);
		conf_free(c);
	} else {
		*cur = c;
		cli_revoc_limits(c, &lim);
		trust_revoc_set_limits(rv, &lim);
		metrics_reload(1);
		log_msg(LOG_INFO, "SIGHUP: configuration reloaded from %s "
		    "(%zu P-Mode legs)", o->config, c->n_legs);
		cli_replay_warning(c);
		cli_certwatch(c);
	}
	*rt = cli_purge_start(*cur, sched);
}

/* Bytes from which glibc malloc maps a block of its own (returned at free),
 * and free bytes at the top of a heap beyond which it gives them back. */
#define CLI_MALLOC_THRESHOLD ((int)256 << 10)

/*
 * glibc's malloc raises both thresholds by itself after freeing a large
 * mapped block (up to 32 MiB and 64 MiB), so after one 100 MiB message every
 * later body, payload or decompression buffer below 32 MiB comes from (and
 * stays in) a per-thread heap: measured, an idle gateway kept 62 to 103
 * MiB resident after one 100 MiB and six 20 MiB messages, 22 MiB with fixed
 * thresholds (issue 5).
 * 256 KiB: above the allocations of small messages (a 4 KiB push now makes
 * 13 madvise calls per 400 messages instead of 297), and no more resident
 * at start than the defaults (1 MiB kept 0.3 MiB of start-up heap).  Called
 * before any thread starts.
 */
static void
cli_malloc_tune(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	(void)mallopt(M_MMAP_THRESHOLD, CLI_MALLOC_THRESHOLD);
	(void)mallopt(M_TRIM_THRESHOLD, CLI_MALLOC_THRESHOLD);
#endif
}

/* Serve until SIGTERM/SIGINT, reloading on SIGHUP and looking at the
 * certificates once a day (and at start); then drain and stop. */
static void
cli_serve_loop(const struct cli_opts *o, struct http_server *srv,
    const struct conf *cur, const sigset_t *set, struct trust_revoc *rv)
{
	const int64_t day = (int64_t)CERTWATCH_INTERVAL_S * 1000;
	struct retention_schedule sched = {0};
	struct retention_thread *rt = cli_purge_start(cur, &sched);
	int64_t next = clock_mono_ms() + day;
	int sig;

	cli_certwatch(cur);
	for (;;) {
		sig = cli_wait_signal(set, next - clock_mono_ms());
		if (sig == SIGHUP)
			cli_reload(o, srv, &cur, &rt, &sched, rv);
		else if (sig != 0)
			break;
		if (clock_mono_ms() >= next) {
			cli_certwatch(cur);
			next = clock_mono_ms() + day;
		}
	}
	log_msg(LOG_INFO, "signal %d: draining requests in flight", sig);
	retention_stop(rt);
	http_stop(srv, cur->limits.request_deadline_s * 1000);
	log_msg(LOG_INFO, "as4gw stopped");
}

int
cli_serve(int argc, char **argv)
{
	struct http_server *srv = NULL;
	struct trust_revoc *rv = NULL;
	struct gateway *gw = NULL;
	struct conf *c = NULL;
	struct err err = {0};
	struct cli_opts o;
	size_t applied = 0;
	sigset_t set;
	int rc;

	if ((rc = cli_opts_parse(argc, argv, "serve", &o)) != 0)
		return rc == 1 ? 0 : rc;
	rc = 1;
	cli_malloc_tune();
	/* block before any thread starts so all threads inherit the mask */
	(void)sigemptyset(&set);
	(void)sigaddset(&set, SIGTERM);
	(void)sigaddset(&set, SIGINT);
	(void)sigaddset(&set, SIGHUP);
	(void)pthread_sigmask(SIG_BLOCK, &set, NULL);
	metrics_init();
	/* start-up errors in the log's format: one JSON line (issue 11 item 12) */
	if ((c = cli_load_conf(&o, &err)) == NULL) {
		cli_start_failed("", err.msg);
		goto out;
	}
	if (cli_migrate_store(c, 1, &applied) == -1)
		goto out;
	if ((rv = cli_revoc_start(c)) == NULL)
		goto out;
	if (gateway_new_revoc(c, rv, &gw, &err) == -1 ||
	    http_start(c, gw, &srv, &err) == -1) {
		cli_start_failed("", err.msg);
		goto out;
	}
	/* the server owns c and gw from here on */
	cli_replay_warning(c);
	log_msg(LOG_INFO, "as4gw listening on %s://%s:%d%s (store %s, %zu P-Mode legs)",
	    c->tls_cert != NULL ? "https" : "http", c->listen_host,
	    http_port(srv), c->http_path,
	    strncmp(c->store_dsn, "sqlite:", 7) == 0 ? c->store_dsn : "postgresql",
	    c->n_legs);
	cli_serve_loop(&o, srv, c, &set, rv);
	/* every generation (and its gateway) is gone after http_stop */
	trust_revoc_free(rv);
	return 0;
out:
	gateway_free(gw);
	conf_free(c);
	trust_revoc_free(rv);
	return rc;
}

int
cli_migrate(int argc, char **argv)
{
	struct conf *c;
	struct err err = {0};
	struct cli_opts o;
	size_t applied = 0;
	int rc;

	if ((rc = cli_opts_parse(argc, argv, "migrate", &o)) != 0)
		return rc == 1 ? 0 : rc;
	if ((c = cli_load_conf(&o, &err)) == NULL) {
		cli_fail("", err.msg);
		return 1;
	}
	rc = cli_migrate_store(c, 0, &applied) == 0 ? 0 : 1;
	if (rc == 0 && applied == 0)
		printf("no migration to apply: the schema is current\n");
	else if (rc == 0)
		printf("migrations applied: %zu\n", applied);
	conf_free(c);
	return rc;
}
