/*
 * metrics — process-wide counters, gauges and a histogram in the Prometheus
 * text exposition format (version 0.0.4), served at GET /metrics.
 * Lock-free (C11 atomics) but for the certificate set (a mutex): every
 * function may be called from any thread.
 * Depends on util only.
 *
 * Metric names (all prefixed as4gw_):
 *   messages_total{outcome="new|duplicate|drift|error"}          counter
 *   errors_total{code="EBMS:0101|...|http-4xx|http-5xx|other"}    counter
 *   request_duration_seconds{le=...} _sum _count                 histogram
 *   requests_in_flight                                           gauge
 *   store_errors_total                                           counter
 *   purged_total / purge_kept_undelivered                        counter/gauge (this process)
 *   purge_runs_total{source="cli|background",outcome="ok|stopped|failed"}
 *   purged_messages_total{source}                                counters (the store's purge log)
 *   purge_source_last_success_timestamp_seconds{source}          gauge (the store's purge log)
 *   purge_last_success_timestamp_seconds / purge_overdue         gauges
 *   certificate_expiry_days{role,leg,subject,sha256}             gauge (set at start and reload)
 *   inbox_messages / delivery_ready / delivery_claimed           gauges (set at scrape)
 *   config_reloads_total{result="ok|failed"}                     counter
 *   revocation_checks_total{result="good|revoked|unknown",
 *       source="none|ocsp|crldp|crlfile|cache"}                  counter
 *   revocation_responder_failures_total                          counter
 *   revocation_fail_open_total                                   counter
 *   revocation_cache_entries / revocation_cache_oldest_age_seconds gauges
 *   (the revocation families only in a process with an engine: serve)
 *   business_duplicates_total{mode="flag|refuse"}                counter
 *   start_time_seconds                                           gauge
 */
#ifndef AS4GW_METRICS_H
#define AS4GW_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "../util/buf.h"

/* Record the process start time (call once at start-up). */
void metrics_init(void);

/*
 * One answered POST: outcome "new" | "duplicate" | "drift" | "error" (other
 * strings count as "error"); ebms_code "EBMS:0004" etc. or NULL; status the
 * HTTP status (an error without ebMS code counts as http-4xx / http-5xx).
 */
void metrics_message(const char *outcome, const char *ebms_code, int status);

/* A business-level duplicate (issue 12 item 4): mode "flag" (stored,
 * marked) or "refuse" (EBMS:0004); other strings are not counted. */
void metrics_business_duplicate(const char *mode);

/* Duration of one request (any route) in milliseconds. */
void metrics_request_ms(int64_t ms);

/* +1 when a request starts, -1 when it completes. */
void metrics_inflight(int delta);

/* A store operation failed (connection lost, busy, constraint...). */
void metrics_store_error(void);

/* A purge run finished: rows deleted, rows kept because undelivered. */
void metrics_purged(size_t purged, size_t kept_undelivered);

/*
 * The background purge of `serve` runs every interval_s seconds (0: not in
 * this process) on a schedule that began at since_ms (epoch).  With
 * metrics_purge_ok(), what purge_overdue is judged on: no successful run
 * for more than two intervals since the last one, or since since_ms.
 */
void metrics_purge_schedule(unsigned interval_s, int64_t since_ms);

/* A background purge run succeeded at at_ms (epoch). */
void metrics_purge_ok(int64_t at_ms);

/*
 * The store's purge log (issue 11 item 6): every purge run of every
 * process, `as4gw purge` included, read at scrape time.  Index order:
 * sources cli, background; outcomes ok, stopped, failed (store.h enum
 * store_purge_source / store_purge_outcome).  NULL: unknown (the families
 * are not rendered; the last success falls back to this process's own).
 */
#define METRICS_PURGE_SOURCES 2
#define METRICS_PURGE_OUTCOMES 3
struct metrics_purge_log {
	int64_t runs[METRICS_PURGE_SOURCES][METRICS_PURGE_OUTCOMES];
	int64_t purged[METRICS_PURGE_SOURCES];
	int64_t last_ok_ms[METRICS_PURGE_SOURCES];   /* 0 = none */
};
void metrics_set_purge_log(const struct metrics_purge_log *p);

/*
 * The configured certificates for certificate_expiry_days (issue 12 item
 * 5): days until notAfter, computed at each scrape (negative once
 * expired), one series per certificate labelled role, leg ("" for the
 * gateway's own), subject (cut at METRICS_CERT_SUBJECT_MAX bytes) and
 * sha256.  metrics_set_certs() replaces the set with copies of at most
 * METRICS_CERTS_MAX of v (n 0 clears it); 0 ok, -1 out of memory (the
 * previous set stays).  Guarded by a mutex (set at start, reload and once
 * a day; read per scrape).
 */
#define METRICS_CERTS_MAX 256
#define METRICS_CERT_SUBJECT_MAX 128
struct metrics_cert {
	const char *role, *leg, *subject, *sha256;   /* leg may be NULL */
	int64_t not_after_ms;
};
int metrics_set_certs(const struct metrics_cert *v, size_t n);

/* A SIGHUP reload: ok 1 swapped in, 0 refused. */
void metrics_reload(int ok);

/* decryption_retiring_total + 1: a message was decrypted with a pair
 * marked retiring (a partner still encrypts for it). */
void metrics_decrypt_retiring(void);

/* A request body spooled (issue 14): spooled_requests_total + requests,
 * spooled_bytes_total + bytes. */
void metrics_spooled(unsigned requests, uint64_t bytes);

/* Gauges read from the store at scrape time; -1 = unknown (not printed). */
void metrics_set_store(int64_t inbox_rows, int64_t delivery_ready,
    int64_t delivery_claimed);

/*
 * The revocation engine's counters, copied at scrape time (issue 12 item
 * 2): checks[result][source], results good/revoked/unknown and sources
 * none/ocsp/crldp/crlfile/cache in trust/trust_revoc.h's order; responder
 * failures; cached answers; age of the oldest (ms; -1 none).
 */
void metrics_set_revocation(const uint64_t checks[3][5], uint64_t failures,
    int64_t entries, int64_t oldest_age_ms);

/* A push accepted under revocation="prefer" without a fresh status. */
void metrics_revocation_fail_open(void);

/* Append the whole exposition text to out; 0 ok, -1 out of memory. */
int metrics_render(struct buf *out);

/* Append v as a label value with the format's escapes (\\ \" \n); 0 / -1. */
int metrics_escape_label(struct buf *out, const char *v);

/* Zero every counter and gauge (unit tests only: not atomic as a whole). */
void metrics_reset(void);

/* Content-Type of metrics_render()'s text. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
