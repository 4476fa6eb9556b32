/*
 * Unit tests for src/metrics: every counter and gauge through the rendered
 * Prometheus text (the only thing a scraper sees), the histogram's
 * cumulative buckets, the format's HELP/TYPE lines and sample syntax, label
 * escaping, out-of-memory at every point of the rendering, and concurrent
 * updates from many threads.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "metrics/metrics.h"
#include "util/clock.h"

#define N_THREADS 8
#define N_PER_THREAD 5000

/* Render into a fresh buf (caller frees); fails the test on error. */
static char *
render(void)
{
	struct buf b = {0};

	assert_int_equal(metrics_render(&b), 0);
	assert_non_null(b.data);
	return b.data;
}

/* The value of the sample line that starts with `sample ` exactly, or -1
 * when there is no such line (all values in these tests are >= 0). */
static double
value_of(const char *text, const char *sample)
{
	size_t n = strlen(sample);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, sample, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

/* 1 when text has this exact line. */
static int
has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
		p += n;
	}
	return 0;
}

/* The family of a sample name: histogram suffixes stripped when a TYPE line
 * of that base was seen. */
static void
family_of(const char *name, const char *types, char *out, size_t outlen)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	char want[256];
	size_t i, n = strlen(name);

	(void)snprintf(out, outlen, "%s", name);
	for (i = 0; i < 3; i++) {
		size_t s = strlen(sfx[i]);

		if (n > s && strcmp(name + n - s, sfx[i]) == 0) {
			(void)snprintf(want, sizeof(want), "\n%.*s histogram\n",
			    (int)(n - s), name);
			if (strstr(types, want) != NULL)
				(void)snprintf(out, outlen, "%.*s", (int)(n - s), name);
		}
	}
}

/* Check one sample line: NAME[{k="v",...}] VALUE, its family TYPE'd before. */
static void
check_sample(const char *line, const char *types)
{
	char name[256], fam[256], want[300];
	const char *p = line, *end;
	size_t n = 0;
	char *vend;

	while (isalnum((unsigned char)p[n]) || p[n] == '_' || p[n] == ':')
		n++;
	assert_true(n > 0 && n < sizeof(name));
	memcpy(name, p, n);
	name[n] = '\0';
	p += n;
	if (*p == '{') {
		end = strchr(p, '}');
		assert_non_null(end);
		assert_non_null(strstr(p, "=\""));
		p = end + 1;
	}
	assert_int_equal(*p, ' ');
	(void)strtod(p + 1, &vend);
	assert_true(vend > p + 1 && (*vend == '\n' || *vend == '\0'));
	family_of(name, types, fam, sizeof(fam));
	(void)snprintf(want, sizeof(want), "\n%s ", fam);
	assert_non_null(strstr(types, want));
}

/* Every line is a HELP, a TYPE or a well-formed sample of a TYPE'd family;
 * every TYPE has a HELP just before it; the text ends with a newline. */
static void
check_format(const char *text)
{
	char types[8192] = "\n";
	const char *line = text, *nl;
	char prev_help[256] = "";

	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	for (; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		if (strncmp(line, "# HELP ", 7) == 0) {
			(void)snprintf(prev_help, sizeof(prev_help), "%.*s",
			    (int)strcspn(line + 7, " "), line + 7);
		} else if (strncmp(line, "# TYPE ", 7) == 0) {
			size_t nlen = strcspn(line + 7, " ");

			assert_int_equal(strlen(prev_help), nlen);
			assert_memory_equal(prev_help, line + 7, nlen);
			(void)strncat(types, line + 7, (size_t)(nl - line - 7));
			(void)strncat(types, "\n", 2);
			prev_help[0] = '\0';
		} else {
			assert_true(line[0] != '#');
			check_sample(line, types);
		}
	}
}

static int
setup(void **state)
{
	(void)state;
	metrics_reset();
	return 0;
}

static void
test_empty_render_is_valid_and_zero(void **state)
{
	char *t;

	(void)state;
	t = render();
	check_format(t);
	assert_true(has_line(t, "# TYPE as4gw_messages_total counter"));
	assert_true(has_line(t, "# TYPE as4gw_errors_total counter"));
	assert_true(has_line(t, "# TYPE as4gw_request_duration_seconds histogram"));
	assert_true(has_line(t, "# TYPE as4gw_requests_in_flight gauge"));
	assert_true(has_line(t, "# TYPE as4gw_store_errors_total counter"));
	assert_true(has_line(t, "# TYPE as4gw_config_reloads_total counter"));
	assert_true(has_line(t, "# TYPE as4gw_purged_total counter"));
	assert_true(has_line(t, "# TYPE as4gw_purge_kept_undelivered gauge"));
	assert_true(has_line(t, "# TYPE as4gw_start_time_seconds gauge"));
	/* the purge log not read: its families are not printed */
	assert_null(strstr(t, "as4gw_purge_runs_total"));
	assert_null(strstr(t, "as4gw_purged_messages_total"));
	assert_true(has_line(t, "as4gw_messages_total{outcome=\"new\"} 0"));
	assert_true(has_line(t, "as4gw_errors_total{code=\"EBMS:0303\"} 0"));
	assert_true(has_line(t, "as4gw_request_duration_seconds_count 0"));
	assert_true(has_line(t, "as4gw_request_duration_seconds_sum 0.000"));
	/* store gauges unknown: not printed at all */
	assert_null(strstr(t, "as4gw_inbox_messages"));
	assert_null(strstr(t, "as4gw_delivery_ready"));
	assert_null(strstr(t, "as4gw_delivery_claimed"));
	free(t);
}

/* Every ebMS code of the fixed table has its own errors_total series. */
static void
test_every_code_has_a_series(void **state)
{
	static const char *const codes[] = {
		"EBMS:0001", "EBMS:0002", "EBMS:0003", "EBMS:0004", "EBMS:0005",
		"EBMS:0006", "EBMS:0007", "EBMS:0008", "EBMS:0009", "EBMS:0010",
		"EBMS:0011", "EBMS:0101", "EBMS:0102", "EBMS:0103", "EBMS:0201",
		"EBMS:0202", "EBMS:0301", "EBMS:0302", "EBMS:0303",
	};
	char sample[64];
	size_t i;
	char *t;

	(void)state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		metrics_message("error", codes[i], 200);
	t = render();
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		(void)snprintf(sample, sizeof(sample),
		    "as4gw_errors_total{code=\"%s\"}", codes[i]);
		assert_true(value_of(t, sample) == 1);
	}
	assert_true(value_of(t, "as4gw_messages_total{outcome=\"error\"}") == 19);
	assert_true(value_of(t, "as4gw_errors_total{code=\"other\"}") == 0);
	free(t);
}

struct msg_case {
	const char *outcome, *code;
	int status;
};

/* Outcomes and the errors_total slot each message lands in. */
static void
test_messages_by_outcome_and_code(void **state)
{
	static const struct msg_case cases[] = {
		{ "new", NULL, 200 }, { "new", NULL, 200 },
		{ "duplicate", NULL, 200 },
		{ "drift", "EBMS:0004", 200 },      /* not an error; its code counts */
		{ "error", "EBMS:0004", 200 },
		{ "error", "EBMS:0101", 200 },
		{ "error", NULL, 413 }, { "error", NULL, 400 },
		{ "error", NULL, 503 }, { "error", NULL, 500 },
		{ "error", "EBMS:9999", 200 },      /* not in the table */
		{ "error", NULL, 200 },             /* no code, no error status */
		{ "weird", NULL, 404 },             /* unknown outcome: error */
		{ NULL, NULL, 502 },
	};
	static const struct { const char *sample; double v; } want[] = {
		{ "as4gw_messages_total{outcome=\"new\"}", 2 },
		{ "as4gw_messages_total{outcome=\"duplicate\"}", 1 },
		{ "as4gw_messages_total{outcome=\"drift\"}", 1 },
		{ "as4gw_messages_total{outcome=\"error\"}", 10 },
		/* the drift counts under its code too (issue 11 item 6) */
		{ "as4gw_errors_total{code=\"EBMS:0004\"}", 2 },
		{ "as4gw_errors_total{code=\"EBMS:0101\"}", 1 },
		{ "as4gw_errors_total{code=\"EBMS:0001\"}", 0 },
		{ "as4gw_errors_total{code=\"http-4xx\"}", 3 },
		{ "as4gw_errors_total{code=\"http-5xx\"}", 3 },
		{ "as4gw_errors_total{code=\"other\"}", 2 },
	};
	size_t i;
	char *t;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		metrics_message(cases[i].outcome, cases[i].code, cases[i].status);
	t = render();
	check_format(t);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (value_of(t, want[i].sample) != want[i].v)
			fail_msg("%s: want %g, got %g", want[i].sample, want[i].v,
			    value_of(t, want[i].sample));
	}
	free(t);
}

/* Durations land in the right bucket; buckets are cumulative; +Inf ==
 * _count; _sum is in seconds. */
static void
test_histogram_cumulative(void **state)
{
	static const int64_t ms[] = { -5, 0, 1, 2, 3, 10, 11, 250, 999, 1000,
	    1001, 9999, 10000, 10001, 60000 };
	static const struct { const char *le; double v; } want[] = {
		{ "0.001", 3 },   /* -5 (clamped to 0), 0, 1 */
		{ "0.0025", 4 },  /* + 2 */
		{ "0.005", 5 },   /* + 3 */
		{ "0.01", 6 },    /* + 10 */
		{ "0.025", 7 },   /* + 11 */
		{ "0.05", 7 }, { "0.1", 7 },
		{ "0.25", 8 },    /* + 250 */
		{ "0.5", 8 },
		{ "1", 10 },      /* + 999, 1000 */
		{ "2.5", 11 },    /* + 1001 */
		{ "5", 11 },
		{ "10", 13 },     /* + 9999, 10000 */
		{ "+Inf", 15 },   /* + 10001, 60000 */
	};
	char sample[96];
	double prev = 0, v;
	size_t i;
	char *t;

	(void)state;
	for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
		metrics_request_ms(ms[i]);
	t = render();
	check_format(t);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		(void)snprintf(sample, sizeof(sample),
		    "as4gw_request_duration_seconds_bucket{le=\"%s\"}", want[i].le);
		v = value_of(t, sample);
		if (v != want[i].v)
			fail_msg("le=%s: want %g, got %g", want[i].le, want[i].v, v);
		assert_true(v >= prev);
		prev = v;
	}
	assert_true(value_of(t, "as4gw_request_duration_seconds_count") == 15);
	/* 0+0+1+2+3+10+11+250+999+1000+1001+9999+10000+10001+60000 ms */
	assert_true(has_line(t, "as4gw_request_duration_seconds_sum 93.277"));
	free(t);
}

/* Gauges and the remaining counters. */
static void
test_gauges_and_counters(void **state)
{
	char *t;

	(void)state;
	metrics_inflight(1);
	metrics_inflight(1);
	metrics_inflight(1);
	metrics_inflight(-1);
	metrics_store_error();
	metrics_store_error();
	metrics_purged(40, 3);
	metrics_purged(2, 1);
	metrics_reload(1);
	metrics_reload(0);
	metrics_reload(0);
	metrics_set_store(12345, 7, 0);
	metrics_business_duplicate("flag");
	metrics_business_duplicate("refuse");
	metrics_business_duplicate("refuse");
	metrics_business_duplicate("other");   /* not counted */
	metrics_business_duplicate(NULL);
	t = render();
	check_format(t);
	assert_true(has_line(t, "as4gw_requests_in_flight 2"));
	assert_true(has_line(t, "as4gw_store_errors_total 2"));
	assert_true(has_line(t, "as4gw_purged_total 42"));
	assert_true(has_line(t, "as4gw_purge_kept_undelivered 1"));
	assert_true(has_line(t, "as4gw_config_reloads_total{result=\"ok\"} 1"));
	assert_true(has_line(t, "as4gw_config_reloads_total{result=\"failed\"} 2"));
	assert_true(has_line(t, "# TYPE as4gw_business_duplicates_total counter"));
	assert_true(has_line(t, "as4gw_business_duplicates_total{mode=\"flag\"} 1"));
	assert_true(has_line(t, "as4gw_business_duplicates_total{mode=\"refuse\"} 2"));
	assert_true(has_line(t, "# TYPE as4gw_inbox_messages gauge"));
	assert_true(has_line(t, "as4gw_inbox_messages 12345"));
	assert_true(has_line(t, "as4gw_delivery_ready 7"));
	assert_true(has_line(t, "as4gw_delivery_claimed 0"));
	free(t);
	/* back to unknown: one gauge at a time */
	metrics_set_store(-1, 5, -7);
	t = render();
	check_format(t);
	assert_null(strstr(t, "as4gw_inbox_messages"));
	assert_true(has_line(t, "as4gw_delivery_ready 5"));
	assert_null(strstr(t, "as4gw_delivery_claimed"));
	free(t);
}

/* Issue 10 item 9b: the last successful purge and the overdue flag (no
 * success for two intervals since the last one, or since the start). */
/* Issue 11 item 6: the store's purge log (every process's runs, `as4gw
 * purge` included) by source and outcome; its last success counts for the
 * unlabelled last success and for the overdue flag. */
static void
test_purge_log(void **state)
{
	struct metrics_purge_log p;
	int64_t now = clock_epoch_ms();
	char *t;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.runs[0][0] = 3;               /* cli ok */
	p.runs[0][2] = 1;               /* cli failed */
	p.runs[1][1] = 2;               /* background stopped */
	p.purged[0] = 40;
	p.purged[1] = 7;
	p.last_ok_ms[0] = now - 1000;
	metrics_purge_schedule(10, now - 60000);        /* overdue by itself */
	metrics_set_purge_log(&p);
	t = render();
	check_format(t);
	assert_true(has_line(t, "# TYPE as4gw_purge_runs_total counter"));
	assert_true(has_line(t,
	    "as4gw_purge_runs_total{source=\"cli\",outcome=\"ok\"} 3"));
	assert_true(has_line(t,
	    "as4gw_purge_runs_total{source=\"cli\",outcome=\"failed\"} 1"));
	assert_true(has_line(t, "as4gw_purge_runs_total{source=\"background\","
	    "outcome=\"stopped\"} 2"));
	assert_true(has_line(t, "as4gw_purge_runs_total{source=\"background\","
	    "outcome=\"ok\"} 0"));
	assert_true(has_line(t, "# TYPE as4gw_purged_messages_total counter"));
	assert_true(has_line(t,
	    "as4gw_purged_messages_total{source=\"cli\"} 40"));
	assert_true(has_line(t,
	    "as4gw_purged_messages_total{source=\"background\"} 7"));
	assert_non_null(strstr(t, "as4gw_purge_source_last_success_timestamp_"
	    "seconds{source=\"background\"} 0.000\n"));
	/* a cli run a second ago: the last success, and not overdue */
	assert_null(strstr(t, "as4gw_purge_last_success_timestamp_seconds 0.000"));
	assert_true(has_line(t, "as4gw_purge_overdue 0"));
	free(t);
	metrics_set_purge_log(NULL);    /* unknown again: families gone */
	t = render();
	check_format(t);
	assert_null(strstr(t, "as4gw_purge_runs_total"));
	assert_true(has_line(t, "as4gw_purge_last_success_timestamp_seconds 0.000"));
	assert_true(has_line(t, "as4gw_purge_overdue 1"));
	free(t);
}

/* Issue 12 item 5: days until expiry per configured certificate, computed
 * at the scrape; a long subject is cut between UTF-8 characters; an empty
 * set renders nothing. */
static void
test_certificates(void **state)
{
	int64_t now = clock_epoch_ms(), day = INT64_C(86400000);
	char subject[300];
	struct metrics_cert c[3] = {
		{ "signing", NULL, "CN=gw", "ab01", now + 10 * day + day / 2 + 5000 },
		{ "anchor", "leg \"x\"", "CN=old", "cd02", now - 35 * day },
		{ "signer", "leg", subject, "ef03", now + 400 * day - 5000 },
	};
	char *t;

	(void)state;
	memset(subject, 'a', sizeof(subject));
	memcpy(subject, "CN=\xc3\xa9", 5);              /* é at bytes 3-4 */
	memcpy(subject + METRICS_CERT_SUBJECT_MAX - 1, "\xc3\xa9", 2);
	subject[sizeof(subject) - 1] = '\0';
	assert_int_equal(metrics_set_certs(c, 3), 0);
	t = render();
	check_format(t);
	assert_true(has_line(t, "# TYPE as4gw_certificate_expiry_days gauge"));
	assert_non_null(strstr(t, "as4gw_certificate_expiry_days{role=\"signing\","
	    "leg=\"\",subject=\"CN=gw\",sha256=\"ab01\"} 10.500\n"));
	assert_non_null(strstr(t, "as4gw_certificate_expiry_days{role=\"anchor\","
	    "leg=\"leg \\\"x\\\"\",subject=\"CN=old\",sha256=\"cd02\"} "
	    "-35.000\n"));
	/* cut before the é that would straddle the limit */
	assert_non_null(strstr(t, "aaa\",sha256=\"ef03\"} 399.99"));
	free(t);
	assert_int_equal(metrics_set_certs(NULL, 0), 0);
	t = render();
	assert_null(strstr(t, "certificate_expiry_days"));
	free(t);
}

static void
test_purge_schedule(void **state)
{
	int64_t now = clock_epoch_ms();
	char *t;

	(void)state;
	t = render();
	check_format(t);
	assert_true(has_line(t, "as4gw_purge_last_success_timestamp_seconds 0.000"));
	assert_true(has_line(t, "as4gw_purge_overdue 0"));
	free(t);
	metrics_purge_schedule(10, now - 15000);        /* 1.5 intervals */
	t = render();
	assert_true(has_line(t, "as4gw_purge_overdue 0"));
	free(t);
	metrics_purge_schedule(10, now - 21000);        /* 2.1 intervals */
	t = render();
	assert_true(has_line(t, "as4gw_purge_overdue 1"));
	free(t);
	metrics_purge_ok(INT64_C(1780000000123));       /* long ago: still overdue */
	t = render();
	check_format(t);
	assert_true(has_line(t,
	    "as4gw_purge_last_success_timestamp_seconds 1780000000.123"));
	assert_true(has_line(t, "as4gw_purge_overdue 1"));
	free(t);
	metrics_purge_ok(now - 5000);
	t = render();
	assert_true(has_line(t, "as4gw_purge_overdue 0"));
	free(t);
	metrics_purge_ok(now - 25000);
	metrics_purge_schedule(0, 0);                   /* no background purge */
	t = render();
	assert_true(has_line(t, "as4gw_purge_overdue 0"));
	free(t);
}

static void
test_start_time(void **state)
{
	double now = (double)time(NULL), v;
	char *t;

	(void)state;
	metrics_init();
	t = render();
	v = value_of(t, "as4gw_start_time_seconds");
	assert_true(v >= now - 2 && v <= now + 2);
	free(t);
}

static void
test_escape_label(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "" },
		{ "plain EBMS:0001", "plain EBMS:0001" },
		{ "a\"b", "a\\\"b" },
		{ "back\\slash", "back\\\\slash" },
		{ "two\nlines", "two\\nlines" },
		{ "\\\"\n", "\\\\\\\"\\n" },
	};
	struct buf b = {0};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_reset(&b);
		assert_int_equal(buf_append(&b, "", 0), 0);
		assert_int_equal(metrics_escape_label(&b, cases[i].in), 0);
		assert_string_equal(b.data, cases[i].out);
	}
	buf_free(&b);
	/* out of room */
	b.limit = 3;
	assert_int_equal(metrics_escape_label(&b, "ab\"c"), -1);
	buf_free(&b);
}

/* Out of memory at every byte of the text: render fails cleanly, never
 * crashes; with room for the whole text it succeeds. */
static void
test_render_out_of_memory_everywhere(void **state)
{
	struct metrics_purge_log p = {0};
	struct buf b = {0};
	size_t full, lim;
	char *t;

	(void)state;
	struct metrics_cert c = { "signing", NULL, "CN=x", "00", 0 };

	metrics_set_store(1, 2, 3);
	metrics_set_purge_log(&p);
	assert_int_equal(metrics_set_certs(&c, 1), 0);
	metrics_message("error", "EBMS:0004", 200);
	metrics_request_ms(5);
	t = render();
	full = strlen(t);
	free(t);
	for (lim = 1; lim < full; lim++) {
		b.limit = lim;
		if (metrics_render(&b) != -1)
			fail_msg("render fit in %zu of %zu bytes", lim, full);
		buf_free(&b);
	}
	b.limit = full + 1;
	assert_int_equal(metrics_render(&b), 0);
	assert_int_equal(b.len, full);
	buf_free(&b);
}

static void *
hammer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < N_PER_THREAD; i++) {
		metrics_inflight(1);
		metrics_message(i % 2 ? "new" : "error", "EBMS:0009", 200);
		metrics_request_ms(i % 20);
		metrics_inflight(-1);
	}
	return NULL;
}

/* Concurrent updates lose nothing. */
static void
test_concurrent_updates(void **state)
{
	pthread_t th[N_THREADS];
	char *t;
	int i;

	(void)state;
	for (i = 0; i < N_THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, NULL), 0);
	for (i = 0; i < N_THREADS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	t = render();
	assert_true(value_of(t, "as4gw_messages_total{outcome=\"new\"}") ==
	    N_THREADS * N_PER_THREAD / 2);
	assert_true(value_of(t, "as4gw_errors_total{code=\"EBMS:0009\"}") ==
	    N_THREADS * N_PER_THREAD / 2);
	assert_true(value_of(t, "as4gw_request_duration_seconds_count") ==
	    N_THREADS * N_PER_THREAD);
	assert_true(has_line(t, "as4gw_requests_in_flight 0"));
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_empty_render_is_valid_and_zero, setup),
		cmocka_unit_test_setup(test_every_code_has_a_series, setup),
		cmocka_unit_test_setup(test_messages_by_outcome_and_code, setup),
		cmocka_unit_test_setup(test_histogram_cumulative, setup),
		cmocka_unit_test_setup(test_gauges_and_counters, setup),
		cmocka_unit_test_setup(test_purge_schedule, setup),
		cmocka_unit_test_setup(test_purge_log, setup),
		cmocka_unit_test_setup(test_certificates, setup),
		cmocka_unit_test_setup(test_start_time, setup),
		cmocka_unit_test_setup(test_escape_label, setup),
		cmocka_unit_test_setup(test_render_out_of_memory_everywhere, setup),
		cmocka_unit_test_setup(test_concurrent_updates, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
