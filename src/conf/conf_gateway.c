/*
 * conf_gateway — the <gateway> section of the configuration: listen
 * address, HTTP path, store DSN, threads, the TLS and signing pairs, the
 * wire limits (one table of names, defaults and ranges), replay instant and
 * retention.  The operations settings are read by conf_ops.c, the key
 * rollover pairs by conf_keys.c; conf.c calls conf_gateway() once per load.
 */
#include "conf.h"
#include "conf_int.h"

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "../util/arena.h"
#include "../util/clock.h"
#include "../xml/xml.h"

#define CONF_THREADS_MAX 1024ULL
/* <storeTimeoutSeconds>: an hour at most (per wait for the database) */
#define CONF_STORE_TIMEOUT_MAX 3600ULL

/* A limit key: where it lives in struct conf_limits and its sane range. */
struct conf_limit_def {
	const char *name;
	size_t offset;
	int is_size;                 /* size_t field; else unsigned */
	unsigned long long min, max;
};

static const struct conf_limit_def conf_limit_defs[] = {
	{ "maxBodyBytes", offsetof(struct conf_limits, max_body_bytes), 1,
	    1024, 1ULL << 36 },
	{ "connectionTimeoutSeconds",
	    offsetof(struct conf_limits, connection_timeout_s), 0, 1, 3600 },
	{ "requestDeadlineSeconds",
	    offsetof(struct conf_limits, request_deadline_s), 0, 1, 86400 },
	{ "perIpConnections", offsetof(struct conf_limits, per_ip_connections),
	    0, 1, 100000 },
	{ "maxConnections", offsetof(struct conf_limits, max_connections), 0,
	    1, 100000 },
	{ "connectionMemoryBytes",
	    offsetof(struct conf_limits, connection_memory_bytes), 1, 4096,
	    1ULL << 26 },
	{ "requestMemoryBytes",
	    offsetof(struct conf_limits, request_memory_bytes), 1, 1ULL << 20,
	    1ULL << 36 },
	{ "maxParts", offsetof(struct conf_limits, max_parts), 1, 1, 10000 },
	{ "maxXmlDepth", offsetof(struct conf_limits, max_xml_depth), 1, 16,
	    4096 },
	{ "maxXmlNodes", offsetof(struct conf_limits, max_xml_nodes), 1, 100,
	    100000000 },
	{ "maxAttachmentXmlNodes",
	    offsetof(struct conf_limits, max_attachment_xml_nodes), 1, 100,
	    100000000 },
	{ "maxXmlAttributes", offsetof(struct conf_limits, max_xml_attributes),
	    1, 8, 1024 },
	{ "maxEnvelopeBytes", offsetof(struct conf_limits, max_envelope_bytes),
	    1, 4096, 1ULL << 30 },
	{ "maxSbdhValueBytes",
	    offsetof(struct conf_limits, max_sbdh_value_bytes), 1, 64, 65536 },
	{ "headerTimeoutSeconds", offsetof(struct conf_limits, header_timeout_s),
	    0, 1, 3600 },
	/* gzip decompression caps (AS4 3.1; issue 14: payload.h) */
	{ "maxDecompressedBytes",
	    offsetof(struct conf_limits, max_decompressed_bytes), 1, 1024,
	    1ULL << 40 },
	{ "maxDecompressionRatio",
	    offsetof(struct conf_limits, max_decompression_ratio), 0, 10,
	    1000000 },
	{ "maxDecompressedTotalBytes",
	    offsetof(struct conf_limits, max_decompressed_total_bytes), 1,
	    1024, 1ULL << 40 },
	{ "spoolThresholdBytes",
	    offsetof(struct conf_limits, spool_threshold_bytes), 1, 0,
	    1ULL << 36 },
	{ "spoolReserveBytes",
	    offsetof(struct conf_limits, spool_reserve_bytes), 1, 0,
	    1ULL << 50 },
};

/* Fill lim with the defaults documented in conf.h. */
void
conf_limits_default(struct conf_limits *lim)
{
	lim->max_body_bytes = (size_t)8 << 30;
	lim->connection_timeout_s = 30;
	lim->request_deadline_s = 120;
	lim->per_ip_connections = 32;
	lim->max_connections = 512;
	lim->connection_memory_bytes = 32u * 1024u;
	lim->request_memory_bytes = 256u * 1024u * 1024u;
	lim->max_parts = 64;
	lim->max_xml_depth = 64;
	lim->max_xml_nodes = 100000;
	lim->max_attachment_xml_nodes = 2000000;
	lim->max_xml_attributes = 64;
	lim->max_envelope_bytes = 4u * 1024u * 1024u;
	lim->header_timeout_s = 10;
	lim->max_sbdh_value_bytes = 1024;
	lim->max_decompressed_bytes = CONF_MAX_DECOMPRESSED_DEFAULT;
	lim->max_decompression_ratio = CONF_MAX_DECOMPRESSION_RATIO_DEFAULT;
	lim->max_decompressed_total_bytes = CONF_MAX_DECOMPRESSED_TOTAL_DEFAULT;
	lim->spool_threshold_bytes = (size_t)1 << 20;
	lim->spool_reserve_bytes = (size_t)256 << 20;
}

/* Host part of a listen address: a name or IPv4 (v6 == 0), or the inside of
 * an IPv6 literal's brackets (v6 == 1, optional %zone). */
static int
conf_host_ok(const char *s, size_t len, int v6)
{
	int colons = 0, zone = 0;
	size_t i;

	if (len == 0 || len > 253)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (zone && (isalnum(ch) || strchr("_-.", ch) != NULL))
			continue;
		if (v6 && ch == '%' && !zone && i > 0 && i + 1 < len)
			zone = 1;
		else if (v6 && (isxdigit(ch) || ch == '.' || ch == ':'))
			colons += ch == ':';
		else if (!v6 && (isalnum(ch) || ch == '.' || ch == '-' ||
		    ch == '_'))
			continue;
		else
			return 0;
	}
	return !v6 || colons >= 2;
}

/* Decimal port 0..65535 (1 to 5 digits, nothing else). */
static int
conf_port(const char *s, int *ret)
{
	long v = 0;
	size_t i;

	for (i = 0; s[i] != '\0'; i++) {
		if (i >= 5 || s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (i == 0 || v > 65535)
		return -1;
	*ret = (int)v;
	return 0;
}

/* "host:port", "[v6]:port"; see conf.h. */
int
conf_parse_listen(const char *s, char **ret_host, int *ret_port)
{
	const char *hs, *he, *colon;
	char *host = NULL;
	int port = 0, v6 = 0, rc = -1;

	if (s == NULL)
		goto out;
	if (s[0] == '[') {
		hs = s + 1;
		he = strchr(hs, ']');
		if (he == NULL || he[1] != ':')
			goto out;
		colon = he + 1;
		v6 = 1;
	} else {
		hs = s;
		colon = strrchr(s, ':');
		if (colon == NULL)
			goto out;
		he = colon;
	}
	if (!conf_host_ok(hs, (size_t)(he - hs), v6) ||
	    conf_port(colon + 1, &port) == -1)
		goto out;
	host = strndup(hs, (size_t)(he - hs));
	if (host == NULL)
		goto out;
	*ret_host = host;
	*ret_port = port;
	rc = 0;
out:
	return rc;
}

/* <listen>: replace the default host and port. */
static int
conf_listen(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "listen");
	char *host = NULL;
	const char *s;
	int port;

	if (n == NULL)
		return 0;
	s = xml_text(x->a, n);
	if (s == NULL)
		return conf_oom(x);
	if (conf_parse_listen(s, &host, &port) == -1)
		return conf_fail(x, n, "listen: \"%s\" is not host:port or "
		    "[ipv6]:port with a port from 0 to 65535", s);
	free(x->c->listen_host);
	x->c->listen_host = host;
	x->c->listen_port = port;
	return 0;
}

/* <path>: an absolute HTTP path without query, fragment or blanks. */
static int
conf_http_path(const struct conf_ctx *x, const xmlNode *gw)
{
	const char *p;

	if (conf_text(x, gw, "path", &x->c->http_path) == -1)
		return -1;
	p = x->c->http_path;
	if (p[0] != '/')
		return conf_fail(x, xml_child(gw, CONF_NS, "path"),
		    "path \"%s\" does not start with '/'", p);
	for (; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == '?' || *p == '#' ||
		    *p == 0x7f)
			return conf_fail(x, xml_child(gw, CONF_NS, "path"),
			    "path \"%s\" contains a blank, control character, "
			    "'?' or '#'", x->c->http_path);
	return 0;
}

/*
 * <store>: sqlite:FILE (FILE resolved against the config directory unless
 * absolute, ":memory:" or a "file:" URI) or a PostgreSQL URI (passed
 * through to libpq).
 */
static int
conf_store(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "store");
	const char *dsn, *file;
	char *r = NULL, *out = NULL;

	if (conf_text(x, gw, "store", &x->c->store_dsn) == -1)
		return -1;
	dsn = x->c->store_dsn;
	if (strncmp(dsn, "postgresql://", 13) == 0 ||
	    strncmp(dsn, "postgres://", 11) == 0)
		return 0;
	if (strncmp(dsn, "sqlite:", 7) != 0)
		return conf_fail(x, n, "store \"%s\": scheme must be sqlite:, "
		    "postgresql:// or postgres://", dsn);
	file = dsn + 7;
	if (*file == '\0')
		return conf_fail(x, n, "store \"%s\": no database file", dsn);
	if (strcmp(file, ":memory:") == 0 || strncmp(file, "file:", 5) == 0 ||
	    file[0] == '/' || x->dir == NULL)
		return 0;
	r = conf_resolve(x, file);
	if (r == NULL || asprintf(&out, "sqlite:%s", r) < 0) {
		free(r);
		return conf_oom(x);
	}
	free(r);
	free(x->c->store_dsn);
	x->c->store_dsn = out;
	return 0;
}

/*
 * <limits><spoolDir> (issue 14): where request bodies and large decoded
 * parts are spooled; a relative name is the config directory's, like the
 * store file.  That it is a writable directory is serve's start-up check
 * (http_start), not the load's: pmode-check may run elsewhere.
 */
static int
conf_spool_dir(const struct conf_ctx *x, const xmlNode *limits)
{
	char *dir = NULL;
	int r = conf_text(x, limits, "spoolDir", &dir);

	if (r != 1)
		return r;
	if (dir[0] == '\0') {
		free(dir);
		return conf_fail(x, xml_child(limits, CONF_NS, "spoolDir"),
		    "spoolDir is empty");
	}
	if (conf_resolve_in_place(x, &dir) == -1) {
		free(dir);
		return -1;
	}
	free(x->c->spool_dir);
	x->c->spool_dir = dir;
	return 0;
}

/* <limits>: each key optional, range-checked, written over the default. */
static int
conf_limits(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "limits");
	struct conf_limits *lim = &x->c->limits;
	unsigned long long v, max;
	size_t i;
	int r;

	for (i = 0; n != NULL && i < sizeof(conf_limit_defs) /
	    sizeof(conf_limit_defs[0]); i++) {
		const struct conf_limit_def *d = &conf_limit_defs[i];
		char *field = (char *)lim + d->offset;

		max = d->is_size ? (d->max < SIZE_MAX ? d->max : SIZE_MAX) :
		    (d->max < UINT_MAX ? d->max : UINT_MAX);
		r = conf_uint(x, n, d->name, d->min, max, &v);
		if (r == -1)
			return -1;
		if (r == 1 && d->is_size)
			*(size_t *)(void *)field = (size_t)v;
		else if (r == 1)
			*(unsigned *)(void *)field = (unsigned)v;
	}
	if (lim->per_ip_connections > lim->max_connections)
		return conf_fail(x, n, "perIpConnections (%u) exceeds "
		    "maxConnections (%u)", lim->per_ip_connections,
		    lim->max_connections);
	return conf_spool_dir(x, n);
}

int
conf_limits_equal(const struct conf_limits *a, const struct conf_limits *b)
{
	size_t i;

	for (i = 0; i < sizeof(conf_limit_defs) / sizeof(conf_limit_defs[0]);
	    i++) {
		const struct conf_limit_def *d = &conf_limit_defs[i];
		const char *fa = (const char *)a + d->offset;
		const char *fb = (const char *)b + d->offset;

		if (d->is_size ? *(const size_t *)(const void *)fa !=
		    *(const size_t *)(const void *)fb :
		    *(const unsigned *)(const void *)fa !=
		    *(const unsigned *)(const void *)fb)
			return 0;
	}
	return 1;
}

/* <retentionDays> and <partnerRetryWindowDays> of the gateway. */
static int
conf_retention(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "retentionDays");

	if (conf_days(x, gw, "retentionDays", &x->c->retention_days) == -1 ||
	    conf_days(x, gw, "partnerRetryWindowDays",
	    &x->c->retry_window_days) == -1)
		return -1;
	/* DESIGN.md: never purge before a partner may stop retrying, or a late
	 * retry would be accepted as new and processed twice. */
	if (x->c->retention_days < x->c->retry_window_days)
		return conf_fail(x, n != NULL ? n : gw, "retentionDays (%d) is "
		    "shorter than partnerRetryWindowDays (%d)",
		    x->c->retention_days, x->c->retry_window_days);
	return 0;
}

/*
 * <replay><verifyAt>: the instant certificate validity and wsu:Timestamp
 * freshness are evaluated at, for replaying recorded traffic (issue 3).
 * The schema checked the xsd:dateTime form; 0 means "now" in struct conf,
 * so the instant must lie after the epoch.
 */
static int
conf_replay(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(xml_child(gw, CONF_NS, "replay"), CONF_NS,
	    "verifyAt");
	const char *s;
	int64_t ms = 0;

	if (n == NULL)
		return 0;
	s = xml_text(x->a, n);
	if (s == NULL)
		return conf_oom(x);
	if (clock_parse_iso8601(s, &ms) == -1)
		return conf_fail(x, n, "replay/verifyAt: \"%s\" is not an "
		    "xsd:dateTime", s);
	if (ms <= 0)
		return conf_fail(x, n, "replay/verifyAt: \"%s\" is not after "
		    "1970-01-01T00:00:00Z", s);
	x->c->verify_at_ms = ms;
	return 0;
}

/* <gateway>: every setting, in document-independent order. */
int
conf_gateway(struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n;
	unsigned long long v;
	int r;

	if (gw == NULL)
		return conf_fail_line(x, -1, "gateway missing");
	if (conf_listen(x, gw) == -1 || conf_http_path(x, gw) == -1 ||
	    conf_store(x, gw) == -1)
		return -1;
	r = conf_uint(x, gw, "storeTimeoutSeconds", 1, CONF_STORE_TIMEOUT_MAX,
	    &v);
	if (r == -1)
		return -1;
	if (r == 1)
		x->c->store_timeout_ms = (int)v * 1000;
	r = conf_uint(x, gw, "threads", 1, CONF_THREADS_MAX, &v);
	if (r == -1)
		return -1;
	if (r == 1)
		x->c->threads = (unsigned)v;
	n = xml_child(gw, CONF_NS, "tls");
	if (n != NULL && conf_pair(x, n, "", &x->c->tls_cert,
	    &x->c->tls_key) == -1)
		return -1;
	if (conf_keys_signing(x, gw) == -1 ||
	    conf_keys_gateway(x, gw) == -1 || conf_limits(x, gw) == -1 ||
	    conf_replay(x, gw) == -1 ||
	    conf_proxies(x, gw) == -1 || conf_purge(x, gw) == -1 ||
	    conf_revocation(x, gw) == -1)
		return -1;
	return conf_retention(x, gw);
}
