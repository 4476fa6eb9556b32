/*
 * metrics — process-wide counters in C11 atomics, rendered in the Prometheus
 * text exposition format 0.0.4 (prometheus.io "Exposition formats": one
 * "# HELP" and one "# TYPE" line per family, histogram buckets cumulative
 * with le="+Inf" equal to _count).
 */
#include "metrics.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../util/clock.h"

/* Outcomes of one answered POST, in render order. */
static const char *const metrics_outcomes[] = {
	"new", "duplicate", "drift", "error",
};
#define METRICS_N_OUTCOMES (sizeof(metrics_outcomes) / sizeof(metrics_outcomes[0]))
#define METRICS_OUTCOME_DRIFT 2
#define METRICS_OUTCOME_ERROR 3

/*
 * errors_total labels: the ebMS codes the gateway emits (src/ebms/ebms_errors.c;
 * ebMS3 Core 6.7.1 and AS4 profile 5.3), then the HTTP-level refusals.
 */
static const char *const metrics_codes[] = {
	"EBMS:0001", "EBMS:0002", "EBMS:0003", "EBMS:0004", "EBMS:0005",
	"EBMS:0006", "EBMS:0007", "EBMS:0008", "EBMS:0009", "EBMS:0010",
	"EBMS:0011", "EBMS:0101", "EBMS:0102", "EBMS:0103", "EBMS:0201",
	"EBMS:0202", "EBMS:0301", "EBMS:0302", "EBMS:0303",
	"http-4xx", "http-5xx", "other",
};
#define METRICS_N_CODES (sizeof(metrics_codes) / sizeof(metrics_codes[0]))
#define METRICS_CODE_4XX (METRICS_N_CODES - 3)
#define METRICS_CODE_5XX (METRICS_N_CODES - 2)
#define METRICS_CODE_OTHER (METRICS_N_CODES - 1)

/* Histogram upper bounds in microseconds (le labels in seconds); +Inf last. */
static const int64_t metrics_bounds_us[] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000,
};
static const char *const metrics_bounds_le[] = {
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
	"0.5", "1", "2.5", "5", "10", "+Inf",
};
#define METRICS_N_BOUNDS (sizeof(metrics_bounds_us) / sizeof(metrics_bounds_us[0]))

static atomic_llong metrics_msgs[METRICS_N_OUTCOMES];
static atomic_llong metrics_errs[METRICS_N_CODES];
static atomic_llong metrics_buckets[METRICS_N_BOUNDS + 1]; /* not cumulative */
static atomic_llong metrics_dur_sum_ms;
static atomic_llong metrics_inflight_n;
static atomic_llong metrics_store_errs;
static atomic_llong metrics_purged_n, metrics_purge_kept;
static atomic_llong metrics_purge_interval_s, metrics_purge_since_ms;
static atomic_llong metrics_purge_ok_ms;
static atomic_llong metrics_inbox = -1, metrics_ready = -1, metrics_claimed = -1;
static atomic_llong metrics_reload_ok, metrics_reload_failed;
static atomic_llong metrics_retiring;
static atomic_llong metrics_spool_requests, metrics_spool_bytes;
/* the store's purge log; metrics_plog_known 0 = not read (not rendered) */
static atomic_llong metrics_plog_runs[METRICS_PURGE_SOURCES]
    [METRICS_PURGE_OUTCOMES];
static atomic_llong metrics_plog_purged[METRICS_PURGE_SOURCES];
static atomic_llong metrics_plog_ok_ms[METRICS_PURGE_SOURCES];
static atomic_int metrics_plog_known;
static const char *const metrics_purge_sources[] = { "cli", "background" };
/* the configured certificates (metrics_set_certs): owned copies */
struct metrics_cert_own {
	char *role, *leg, *subject, *sha256;
	int64_t not_after_ms;
};
static pthread_mutex_t metrics_certs_mu = PTHREAD_MUTEX_INITIALIZER;
static struct metrics_cert_own *metrics_certs;
static size_t metrics_n_certs;
static const char *const metrics_purge_outcomes[] = {
	"ok", "stopped", "failed",
};
static atomic_llong metrics_start_ms;
/* revocation: set at scrape from the engine; shown once set */
static atomic_int metrics_rv_set;
static atomic_llong metrics_rv_checks[3][5];
static atomic_llong metrics_rv_failures, metrics_rv_fail_open;
static atomic_llong metrics_rv_entries, metrics_rv_age_ms;

/* business_duplicates_total labels (issue 12 item 4), in render order. */
static const char *const metrics_business_modes[] = { "flag", "refuse" };
#define METRICS_N_BUSINESS 2
static atomic_llong metrics_business[METRICS_N_BUSINESS];

/* Record the process start time. */
void
metrics_init(void)
{
	atomic_store(&metrics_start_ms, clock_epoch_ms());
}

/* Zero everything (unit tests; not thread-safe against concurrent updates). */
void
metrics_reset(void)
{
	size_t i;

	for (i = 0; i < METRICS_N_OUTCOMES; i++)
		atomic_store(&metrics_msgs[i], 0);
	for (i = 0; i < METRICS_N_CODES; i++)
		atomic_store(&metrics_errs[i], 0);
	for (i = 0; i <= METRICS_N_BOUNDS; i++)
		atomic_store(&metrics_buckets[i], 0);
	atomic_store(&metrics_dur_sum_ms, 0);
	atomic_store(&metrics_inflight_n, 0);
	atomic_store(&metrics_store_errs, 0);
	atomic_store(&metrics_purged_n, 0);
	atomic_store(&metrics_purge_kept, 0);
	atomic_store(&metrics_purge_interval_s, 0);
	atomic_store(&metrics_purge_since_ms, 0);
	atomic_store(&metrics_purge_ok_ms, 0);
	atomic_store(&metrics_reload_ok, 0);
	atomic_store(&metrics_reload_failed, 0);
	atomic_store(&metrics_retiring, 0);
	atomic_store(&metrics_spool_requests, 0);
	atomic_store(&metrics_spool_bytes, 0);
	atomic_store(&metrics_start_ms, 0);
	atomic_store(&metrics_rv_set, 0);
	atomic_store(&metrics_rv_fail_open, 0);
	for (i = 0; i < METRICS_N_BUSINESS; i++)
		atomic_store(&metrics_business[i], 0);
	metrics_set_store(-1, -1, -1);
	metrics_set_purge_log(NULL);
	(void)metrics_set_certs(NULL, 0);
}

/* errors_total slot of one failed answer. */
static size_t
metrics_code_slot(const char *ebms_code, int status)
{
	size_t i;

	if (ebms_code != NULL) {
		for (i = 0; i < METRICS_CODE_4XX; i++)
			if (strcmp(metrics_codes[i], ebms_code) == 0)
				return i;
		return METRICS_CODE_OTHER;
	}
	if (status >= 400 && status < 500)
		return METRICS_CODE_4XX;
	if (status >= 500 && status < 600)
		return METRICS_CODE_5XX;
	return METRICS_CODE_OTHER;
}

/* One answered POST; errors (and drifts) also count by code. */
void
metrics_message(const char *outcome, const char *ebms_code, int status)
{
	size_t i, slot = METRICS_OUTCOME_ERROR;

	for (i = 0; outcome != NULL && i < METRICS_N_OUTCOMES; i++)
		if (strcmp(metrics_outcomes[i], outcome) == 0)
			slot = i;
	atomic_fetch_add(&metrics_msgs[slot], 1);
	/* a drift is answered with EBMS:0004: counted under its code too */
	if (slot == METRICS_OUTCOME_ERROR || slot == METRICS_OUTCOME_DRIFT)
		atomic_fetch_add(&metrics_errs[metrics_code_slot(ebms_code,
		    status)], 1);
}

/* A business-level duplicate flagged or refused (metrics.h). */
void
metrics_business_duplicate(const char *mode)
{
	size_t i;

	for (i = 0; mode != NULL && i < METRICS_N_BUSINESS; i++)
		if (strcmp(metrics_business_modes[i], mode) == 0)
			atomic_fetch_add(&metrics_business[i], 1);
}

/* One request's duration into its (non-cumulative) bucket and the sum. */
void
metrics_request_ms(int64_t ms)
{
	size_t i;

	if (ms < 0)
		ms = 0;
	for (i = 0; i < METRICS_N_BOUNDS; i++)
		if (ms * 1000 <= metrics_bounds_us[i])
			break;
	atomic_fetch_add(&metrics_buckets[i], 1);
	atomic_fetch_add(&metrics_dur_sum_ms, (long long)ms);
}

/* requests_in_flight up or down. */
void
metrics_inflight(int delta)
{
	atomic_fetch_add(&metrics_inflight_n, delta);
}

/* store_errors_total + 1. */
void
metrics_store_error(void)
{
	atomic_fetch_add(&metrics_store_errs, 1);
}

/* purged_total grows; purge_kept_undelivered is the last run's figure. */
void
metrics_purged(size_t purged, size_t kept_undelivered)
{
	atomic_fetch_add(&metrics_purged_n, (long long)purged);
	atomic_store(&metrics_purge_kept, (long long)kept_undelivered);
}

/* The store's purge log as read at a scrape; NULL: unknown. */
void
metrics_set_purge_log(const struct metrics_purge_log *p)
{
	size_t i, j;

	atomic_store(&metrics_plog_known, 0);
	if (p == NULL)
		return;
	for (i = 0; i < METRICS_PURGE_SOURCES; i++) {
		for (j = 0; j < METRICS_PURGE_OUTCOMES; j++)
			atomic_store(&metrics_plog_runs[i][j],
			    (long long)p->runs[i][j]);
		atomic_store(&metrics_plog_purged[i], (long long)p->purged[i]);
		atomic_store(&metrics_plog_ok_ms[i],
		    (long long)p->last_ok_ms[i]);
	}
	atomic_store(&metrics_plog_known, 1);
}

/* The last successful purge: this process's background purge, or any run
 * in the store's purge log when it was read; 0 = none. */
static long long
metrics_purge_last_ok(void)
{
	long long ok = atomic_load(&metrics_purge_ok_ms), v;
	size_t i;

	for (i = 0; atomic_load(&metrics_plog_known) &&
	    i < METRICS_PURGE_SOURCES; i++)
		if ((v = atomic_load(&metrics_plog_ok_ms[i])) > ok)
			ok = v;
	return ok;
}

/* The background purge's interval and the start of its schedule. */
void
metrics_purge_schedule(unsigned interval_s, int64_t since_ms)
{
	atomic_store(&metrics_purge_interval_s, (long long)interval_s);
	atomic_store(&metrics_purge_since_ms, (long long)since_ms);
}

/* purge_last_success_timestamp_seconds = at_ms. */
void
metrics_purge_ok(int64_t at_ms)
{
	atomic_store(&metrics_purge_ok_ms, (long long)at_ms);
}

/* 1 when the background purge runs in this process and no purge (its
 * own or, from the purge log, any other) has succeeded for two intervals
 * since its schedule began (issue 10 item 9b: a purge that silently never
 * runs). */
static long long
metrics_purge_overdue(void)
{
	long long interval = atomic_load(&metrics_purge_interval_s);
	long long ok = metrics_purge_last_ok();
	long long since = atomic_load(&metrics_purge_since_ms);
	long long ref = ok > since ? ok : since;

	if (interval <= 0 || ref <= 0)
		return 0;
	return clock_epoch_ms() - ref > 2 * interval * 1000 ? 1 : 0;
}

/* decryption_retiring_total + 1. */
void
metrics_decrypt_retiring(void)
{
	atomic_fetch_add(&metrics_retiring, 1);
}

/* spooled_requests_total + requests, spooled_bytes_total + bytes. */
void
metrics_spooled(unsigned requests, uint64_t bytes)
{
	atomic_fetch_add(&metrics_spool_requests, (long long)requests);
	atomic_fetch_add(&metrics_spool_bytes, (long long)bytes);
}

/* Free a certificate set and its strings. */
static void
metrics_certs_free(struct metrics_cert_own *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].role);
		free(v[i].leg);
		free(v[i].subject);
		free(v[i].sha256);
	}
	free(v);
}

/* A copy of s of at most max bytes, not cutting a UTF-8 character. */
static char *
metrics_strcut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return strndup(s, n);
}

/* Replace the certificate set (metrics.h). */
int
metrics_set_certs(const struct metrics_cert *v, size_t n)
{
	struct metrics_cert_own *copy = NULL, *old;
	size_t i, old_n;
	int bad = 0;

	if (n > METRICS_CERTS_MAX)
		n = METRICS_CERTS_MAX;
	if (n > 0 && (copy = calloc(n, sizeof(*copy))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		copy[i].role = strdup(v[i].role);
		copy[i].leg = strdup(v[i].leg != NULL ? v[i].leg : "");
		copy[i].subject = metrics_strcut(v[i].subject,
		    METRICS_CERT_SUBJECT_MAX);
		copy[i].sha256 = strdup(v[i].sha256);
		copy[i].not_after_ms = v[i].not_after_ms;
		bad |= copy[i].role == NULL || copy[i].leg == NULL ||
		    copy[i].subject == NULL || copy[i].sha256 == NULL;
	}
	if (bad) {
		metrics_certs_free(copy, n);
		return -1;
	}
	(void)pthread_mutex_lock(&metrics_certs_mu);
	old = metrics_certs;
	old_n = metrics_n_certs;
	metrics_certs = copy;
	metrics_n_certs = n;
	(void)pthread_mutex_unlock(&metrics_certs_mu);
	metrics_certs_free(old, old_n);
	return 0;
}

/* config_reloads_total{result="ok"} or {result="failed"} + 1. */
void
metrics_reload(int ok)
{
	atomic_fetch_add(ok ? &metrics_reload_ok : &metrics_reload_failed, 1);
}

/* The store gauges; a negative value means unknown (not rendered). */
void
metrics_set_store(int64_t inbox_rows, int64_t delivery_ready,
    int64_t delivery_claimed)
{
	atomic_store(&metrics_inbox, inbox_rows < 0 ? -1 : (long long)inbox_rows);
	atomic_store(&metrics_ready,
	    delivery_ready < 0 ? -1 : (long long)delivery_ready);
	atomic_store(&metrics_claimed,
	    delivery_claimed < 0 ? -1 : (long long)delivery_claimed);
}

void
metrics_set_revocation(const uint64_t checks[3][5], uint64_t failures,
    int64_t entries, int64_t oldest_age_ms)
{
	size_t i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 5; j++)
			atomic_store(&metrics_rv_checks[i][j],
			    (long long)checks[i][j]);
	atomic_store(&metrics_rv_failures, (long long)failures);
	atomic_store(&metrics_rv_entries, (long long)entries);
	atomic_store(&metrics_rv_age_ms, (long long)oldest_age_ms);
	atomic_store(&metrics_rv_set, 1);
}

void
metrics_revocation_fail_open(void)
{
	atomic_fetch_add(&metrics_rv_fail_open, 1);
}

/* A label value with the format's escapes: \\, \" and \n. */
int
metrics_escape_label(struct buf *out, const char *v)
{
	int rc = 0;

	for (; *v != '\0' && rc == 0; v++) {
		if (*v == '\\')
			rc = buf_puts(out, "\\\\");
		else if (*v == '"')
			rc = buf_puts(out, "\\\"");
		else if (*v == '\n')
			rc = buf_puts(out, "\\n");
		else
			rc = buf_append(out, v, 1);
	}
	return rc;
}

/* "# HELP as4gw_NAME HELP\n# TYPE as4gw_NAME TYPE\n" (help is fixed text
 * without backslashes or newlines, so needs no escaping). */
static int
metrics_head(struct buf *out, const char *name, const char *type,
    const char *help)
{
	return buf_printf(out, "# HELP as4gw_%s %s\n# TYPE as4gw_%s %s\n",
	    name, help, name, type);
}

/* A family with one unlabelled sample. */
static int
metrics_one(struct buf *out, const char *name, const char *type,
    const char *help, long long v)
{
	if (metrics_head(out, name, type, help) == -1)
		return -1;
	return buf_printf(out, "as4gw_%s %lld\n", name, v);
}

/* A family with one label over a table of values. */
static int
metrics_labelled(struct buf *out, const char *name, const char *label,
    const char *const *values, const atomic_llong *counts, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (buf_printf(out, "as4gw_%s{%s=\"", name, label) == -1 ||
		    metrics_escape_label(out, values[i]) == -1 ||
		    buf_printf(out, "\"} %lld\n",
		    (long long)atomic_load(&counts[i])) == -1)
			return -1;
	return 0;
}

/* The request duration histogram: cumulative buckets, _sum, _count. */
static int
metrics_histogram(struct buf *out)
{
	const char *name = "request_duration_seconds";
	long long cum = 0;
	long long sum = atomic_load(&metrics_dur_sum_ms);
	size_t i;

	if (metrics_head(out, name, "histogram",
	    "Time from the request head to the answer, all routes.") == -1)
		return -1;
	for (i = 0; i <= METRICS_N_BOUNDS; i++) {
		cum += atomic_load(&metrics_buckets[i]);
		if (buf_printf(out, "as4gw_%s_bucket{le=\"%s\"} %lld\n", name,
		    metrics_bounds_le[i], cum) == -1)
			return -1;
	}
	/* _count is the +Inf bucket, so the two always agree */
	return buf_printf(out, "as4gw_%s_sum %lld.%03lld\nas4gw_%s_count %lld\n",
	    name, sum / 1000, sum % 1000, name, cum);
}

/* Messages, errors, histogram, in-flight and store errors. */
static int
metrics_render_requests(struct buf *out)
{
	static const char *const result[] = { "ok", "failed" };
	atomic_llong reloads[2];

	atomic_init(&reloads[0], atomic_load(&metrics_reload_ok));
	atomic_init(&reloads[1], atomic_load(&metrics_reload_failed));
	if (metrics_head(out, "messages_total", "counter",
	    "Answered pushes by outcome.") == -1 ||
	    metrics_labelled(out, "messages_total", "outcome", metrics_outcomes,
	    metrics_msgs, METRICS_N_OUTCOMES) == -1 ||
	    metrics_head(out, "errors_total", "counter",
	    "Refused pushes by ebMS error code or HTTP status class.") == -1 ||
	    metrics_labelled(out, "errors_total", "code", metrics_codes,
	    metrics_errs, METRICS_N_CODES) == -1 ||
	    metrics_histogram(out) == -1 ||
	    metrics_one(out, "requests_in_flight", "gauge",
	    "Requests being received or answered.",
	    atomic_load(&metrics_inflight_n)) == -1 ||
	    metrics_one(out, "store_errors_total", "counter",
	    "Failed store operations (503 answers, failed probes).",
	    atomic_load(&metrics_store_errs)) == -1 ||
	    metrics_head(out, "config_reloads_total", "counter",
	    "SIGHUP reloads: swapped in (ok) or refused (failed).") == -1 ||
	    metrics_labelled(out, "config_reloads_total", "result", result,
	    reloads, 2) == -1 ||
	    metrics_one(out, "decryption_retiring_total", "counter",
	    "Messages decrypted with a decryption pair marked retiring.",
	    atomic_load(&metrics_retiring)) == -1 ||
	    metrics_one(out, "spooled_requests_total", "counter",
	    "Request bodies written to the spool directory (issue 14).",
	    atomic_load(&metrics_spool_requests)) == -1 ||
	    metrics_one(out, "spooled_bytes_total", "counter",
	    "Request body bytes written to the spool directory.",
	    atomic_load(&metrics_spool_bytes)) == -1)
		return -1;
	return 0;
}

/* The store's purge log: runs by source and outcome, rows purged and the
 * last success by source (omitted while unknown). */
static int
metrics_purge_log_render(struct buf *out)
{
	long long v;
	size_t i, j;
	int rc;

	if (!atomic_load(&metrics_plog_known))
		return 0;
	rc = metrics_head(out, "purge_runs_total", "counter",
	    "Retention purge runs in the store's purge log, of every process "
	    "(as4gw purge: cli; serve's background purge).");
	for (i = 0; rc == 0 && i < METRICS_PURGE_SOURCES; i++)
		for (j = 0; rc == 0 && j < METRICS_PURGE_OUTCOMES; j++)
			rc = buf_printf(out, "as4gw_purge_runs_total{source=\"%s\","
			    "outcome=\"%s\"} %lld\n", metrics_purge_sources[i],
			    metrics_purge_outcomes[j],
			    (long long)atomic_load(&metrics_plog_runs[i][j]));
	rc = rc == 0 ? metrics_head(out, "purged_messages_total", "counter",
	    "Inbox rows deleted by the purge runs of the purge log.") : rc;
	for (i = 0; rc == 0 && i < METRICS_PURGE_SOURCES; i++)
		rc = buf_printf(out, "as4gw_purged_messages_total{source=\"%s\"} "
		    "%lld\n", metrics_purge_sources[i],
		    (long long)atomic_load(&metrics_plog_purged[i]));
	rc = rc == 0 ? metrics_head(out,
	    "purge_source_last_success_timestamp_seconds", "gauge",
	    "End of the last successful purge run by source, seconds since "
	    "the epoch (0: none).") : rc;
	for (i = 0; rc == 0 && i < METRICS_PURGE_SOURCES; i++) {
		v = atomic_load(&metrics_plog_ok_ms[i]);
		rc = buf_printf(out, "as4gw_purge_source_last_success_timestamp_"
		    "seconds{source=\"%s\"} %lld.%03lld\n",
		    metrics_purge_sources[i], v / 1000, v % 1000);
	}
	return rc;
}

/* When a purge last succeeded, and whether the background one is overdue. */
static int
metrics_purge_render(struct buf *out)
{
	long long ok = metrics_purge_last_ok();

	if (metrics_purge_log_render(out) == -1 ||
	    metrics_head(out, "purge_last_success_timestamp_seconds", "gauge",
	    "End of the last successful purge run (this process's background "
	    "purge, or any in the store's purge log), seconds since the epoch "
	    "(0: none yet).") == -1 ||
	    buf_printf(out, "as4gw_purge_last_success_timestamp_seconds "
	    "%lld.%03lld\n", ok / 1000, ok % 1000) == -1)
		return -1;
	return metrics_one(out, "purge_overdue", "gauge",
	    "1 when the background purge has not succeeded for two "
	    "intervalSeconds.", metrics_purge_overdue());
}

/* Purge counters and the store gauges (omitted while unknown). */
static int
metrics_render_store(struct buf *out)
{
	long long inbox = atomic_load(&metrics_inbox);
	long long ready = atomic_load(&metrics_ready);
	long long claimed = atomic_load(&metrics_claimed);

	if (metrics_one(out, "purged_total", "counter",
	    "Inbox rows deleted by this process's retention purge.",
	    atomic_load(&metrics_purged_n)) == -1 ||
	    metrics_one(out, "purge_kept_undelivered", "gauge",
	    "Rows past retention kept undelivered in the last purge run.",
	    atomic_load(&metrics_purge_kept)) == -1 ||
	    metrics_purge_render(out) == -1)
		return -1;
	if (inbox >= 0 && metrics_one(out, "inbox_messages", "gauge",
	    "Inbox rows (an estimate on PostgreSQL).", inbox) == -1)
		return -1;
	if (ready >= 0 && metrics_one(out, "delivery_ready", "gauge",
	    "Deliveries waiting to be claimed.", ready) == -1)
		return -1;
	if (claimed >= 0 && metrics_one(out, "delivery_claimed", "gauge",
	    "Deliveries claimed and not finished.", claimed) == -1)
		return -1;
	return 0;
}

/* revocation_checks_total over results x sources. */
static int
metrics_revocation_checks(struct buf *out)
{
	static const char *const res[] = { "good", "revoked", "unknown" };
	static const char *const src[] = { "none", "ocsp", "crldp", "crlfile",
		"cache" };
	size_t i, j;

	if (metrics_head(out, "revocation_checks_total", "counter",
	    "Revocation checks by result and source.") == -1)
		return -1;
	for (i = 0; i < 3; i++)
		for (j = 0; j < 5; j++)
			if (buf_printf(out, "as4gw_revocation_checks_total"
			    "{result=\"%s\",source=\"%s\"} %lld\n", res[i],
			    src[j], atomic_load(&metrics_rv_checks[i][j])) == -1)
				return -1;
	return 0;
}

/* The revocation families, once an engine reported (serve). */
static int
metrics_render_revocation(struct buf *out)
{
	long long age = atomic_load(&metrics_rv_age_ms);

	if (!atomic_load(&metrics_rv_set))
		return 0;
	if (metrics_revocation_checks(out) == -1 ||
	    metrics_one(out, "revocation_responder_failures_total", "counter",
	    "OCSP and CRL fetches that failed or were refused.",
	    atomic_load(&metrics_rv_failures)) == -1 ||
	    metrics_one(out, "revocation_fail_open_total", "counter",
	    "Pushes accepted under revocation=prefer without a fresh status.",
	    atomic_load(&metrics_rv_fail_open)) == -1 ||
	    metrics_one(out, "revocation_cache_entries", "gauge",
	    "Cached revocation answers.",
	    atomic_load(&metrics_rv_entries)) == -1)
		return -1;
	if (age < 0)
		return 0;
	if (metrics_head(out, "revocation_cache_oldest_age_seconds", "gauge",
	    "Age (since thisUpdate) of the oldest cached revocation answer.") == -1)
		return -1;
	return buf_printf(out, "as4gw_revocation_cache_oldest_age_seconds "
	    "%lld.%03lld\n", age / 1000, age % 1000);
}

/* One certificate's series: days until notAfter at now_ms, 3 decimals. */
static int
metrics_cert_line(struct buf *out, const struct metrics_cert_own *c,
    int64_t now_ms)
{
	long long ms = (long long)(c->not_after_ms - now_ms);
	long long a = ms < 0 ? -ms : ms;
	long long milli = (a % 86400000LL) * 1000 / 86400000LL;

	if (buf_puts(out, "as4gw_certificate_expiry_days{role=\"") == -1 ||
	    metrics_escape_label(out, c->role) == -1 ||
	    buf_puts(out, "\",leg=\"") == -1 ||
	    metrics_escape_label(out, c->leg) == -1 ||
	    buf_puts(out, "\",subject=\"") == -1 ||
	    metrics_escape_label(out, c->subject) == -1 ||
	    buf_puts(out, "\",sha256=\"") == -1 ||
	    metrics_escape_label(out, c->sha256) == -1)
		return -1;
	return buf_printf(out, "\"} %s%lld.%03lld\n", ms < 0 ? "-" : "",
	    a / 86400000LL, milli);
}

/* The configured certificates' days until expiry (omitted when none). */
static int
metrics_certs_render(struct buf *out)
{
	int64_t now = clock_epoch_ms();
	size_t i;
	int rc = 0;

	(void)pthread_mutex_lock(&metrics_certs_mu);
	if (metrics_n_certs > 0)
		rc = metrics_head(out, "certificate_expiry_days", "gauge",
		    "Days until a configured certificate expires (negative: "
		    "expired): the gateway's signing, TLS and decryption "
		    "certificates, partner signers and trust anchors.");
	for (i = 0; rc == 0 && i < metrics_n_certs; i++)
		rc = metrics_cert_line(out, &metrics_certs[i], now);
	(void)pthread_mutex_unlock(&metrics_certs_mu);
	return rc;
}

/* Every family in a fixed order; -1 as soon as an append fails. */
int
metrics_render(struct buf *out)
{
	long long start = atomic_load(&metrics_start_ms);

	if (metrics_render_requests(out) == -1 ||
	    metrics_head(out, "business_duplicates_total", "counter",
	    "New MessageIds carrying a business document already stored for "
	    "the party, by the leg's mode.") == -1 ||
	    metrics_labelled(out, "business_duplicates_total", "mode",
	    metrics_business_modes, metrics_business,
	    METRICS_N_BUSINESS) == -1 ||
	    metrics_render_store(out) == -1 ||
	    metrics_render_revocation(out) == -1 ||
	    metrics_certs_render(out) == -1 ||
	    metrics_head(out, "start_time_seconds", "gauge",
	    "Start of the process, seconds since the epoch.") == -1 ||
	    buf_printf(out, "as4gw_start_time_seconds %lld.%03lld\n",
	    start / 1000, start % 1000) == -1)
		return -1;
	return 0;
}
