/*
 * cli_certwatch.c — certificate hygiene in `serve` (issue 12 item 5): at
 * start, after every reload and once a day, every certificate the
 * configuration names (certwatch.h) gets its days until expiry in /metrics
 * (as4gw_certificate_expiry_days), and one log line each when it expires
 * within CERTWATCH_SOON_DAYS (warn, event "certificate-expiring"), has
 * expired or is not valid yet (error, "certificate-expired" /
 * "certificate-not-yet-valid").
 */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "../certwatch/certwatch.h"
#include "../metrics/metrics.h"
#include "../util/clock.h"
#include "../util/log.h"

/* The log line of one certificate that needs attention (none when ok). */
static void
cli_certwatch_log(const struct certwatch_cert *x, int64_t now_ms)
{
	static const char *const event[] = {
		[CERTWATCH_SOON] = "certificate-expiring",
		[CERTWATCH_EXPIRED] = "certificate-expired",
		[CERTWATCH_NOT_YET] = "certificate-not-yet-valid",
	};
	enum certwatch_state st = certwatch_state(x, now_ms);
	char from[CLOCK_ISO_LEN], until[CLOCK_ISO_LEN], days[32];
	const char *f[] = { "role", x->role, "pmode", x->leg, "file", x->path,
	    "subject", x->info.subject, "sha256", x->info.sha256,
	    "not_before", from, "not_after", until, "days_left", days };

	if (st == CERTWATCH_OK)
		return;
	clock_iso8601(x->info.not_before_ms, from);
	clock_iso8601(x->info.not_after_ms, until);
	(void)snprintf(days, sizeof(days), "%lld",
	    (long long)((x->info.not_after_ms - now_ms) / 86400000));
	log_event(st == CERTWATCH_SOON ? LOG_WARN : LOG_ERROR, event[st],
	    st == CERTWATCH_SOON ? "a configured certificate expires within "
	    "30 days" : st == CERTWATCH_EXPIRED ? "a configured certificate "
	    "has expired" : "a configured certificate is not valid yet", f, 8);
}

/* Look at every certificate of c: metrics and log lines (see the top). */
void
cli_certwatch(const struct conf *c)
{
	struct arena *a = arena_new(0);
	struct certwatch_cert *v = NULL;
	struct metrics_cert *m = NULL;
	struct err err = {0};
	int64_t now = certwatch_now(c);
	size_t i, n = 0;

	if (a == NULL)
		return;
	if (certwatch_list(a, c, &v, &n, &err) == -1)
		log_msg(LOG_WARN, "certificates: %s", err.msg);
	if (n > 0 && (m = calloc(n, sizeof(*m))) == NULL)
		n = 0;
	for (i = 0; i < n; i++) {
		cli_certwatch_log(&v[i], now);
		m[i].role = v[i].role;
		m[i].leg = v[i].leg;
		m[i].subject = v[i].info.subject;
		m[i].sha256 = v[i].info.sha256;
		m[i].not_after_ms = v[i].info.not_after_ms;
	}
	if (metrics_set_certs(m, n) == -1)
		log_msg(LOG_WARN, "certificates: out of memory for /metrics");
	free(m);
	arena_free(a);
}
