/*
 * conf_ops — the operations settings of <gateway>: which reverse proxies'
 * X-Forwarded-For is believed (<trustedProxies>) and the background
 * retention purge (<purge>).  Address blocks are parsed here, once, so the
 * HTTP layer only compares bytes.
 */
#include "conf.h"
#include "conf_int.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../xml/xml.h"

#define CONF_PROXIES_MAX 256

/* "ADDR[/PREFIX]" -> *ret; host bits below the prefix must be zero. */
int
conf_cidr_parse(const char *s, struct conf_cidr *ret)
{
	struct conf_cidr c;
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hlen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	unsigned long prefix;
	unsigned bits, i;
	char *end;

	memset(&c, 0, sizeof(c));
	if (hlen == 0 || hlen >= sizeof(host))
		return -1;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, c.addr) == 1)
		c.family = AF_INET;
	else if (inet_pton(AF_INET6, host, c.addr) == 1)
		c.family = AF_INET6;
	else
		return -1;
	bits = c.family == AF_INET ? 32 : 128;
	prefix = bits;
	if (slash != NULL) {
		if (slash[1] < '0' || slash[1] > '9' || strlen(slash + 1) > 3)
			return -1;
		prefix = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || prefix > bits)
			return -1;
	}
	c.prefix = (unsigned)prefix;
	for (i = c.prefix; i < bits; i++)
		if (c.addr[i / 8] & (0x80u >> (i % 8)))
			return -1;
	*ret = c;
	return 0;
}

/* 1 when addr lies in c; IPv4-mapped IPv6 addresses match IPv4 blocks. */
int
conf_cidr_match(const struct conf_cidr *c, int family, const void *addr)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0xff, 0xff };
	const unsigned char *a = addr;
	unsigned i;

	if (family == AF_INET6 && c->family == AF_INET &&
	    memcmp(a, mapped, sizeof(mapped)) == 0) {
		a += sizeof(mapped);
		family = AF_INET;
	}
	if (family != c->family)
		return 0;
	for (i = 0; i < c->prefix; i++)
		if ((a[i / 8] ^ c->addr[i / 8]) & (0x80u >> (i % 8)))
			return 0;
	return 1;
}

/* <trustedProxies><proxy>ADDR[/PREFIX]</proxy>...</trustedProxies>. */
int
conf_proxies(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr list = xml_child(gw, CONF_NS, "trustedProxies");
	xmlNodePtr n;
	size_t count = 0;
	char *s;

	for (n = xml_child(list, CONF_NS, "proxy"); n != NULL;
	    n = xml_next(n, CONF_NS, "proxy"))
		count++;
	if (count == 0)
		return 0;
	if (count > CONF_PROXIES_MAX)
		return conf_fail(x, list, "trustedProxies: more than %d proxies",
		    CONF_PROXIES_MAX);
	x->c->trusted_proxies = calloc(count, sizeof(*x->c->trusted_proxies));
	if (x->c->trusted_proxies == NULL)
		return conf_oom(x);
	for (n = xml_child(list, CONF_NS, "proxy"); n != NULL;
	    n = xml_next(n, CONF_NS, "proxy")) {
		s = xml_text(x->a, n);
		if (s == NULL)
			return conf_oom(x);
		s += strspn(s, " \t\r\n");
		s[strcspn(s, " \t\r\n")] = '\0';
		if (conf_cidr_parse(s, &x->c->trusted_proxies[
		    x->c->n_trusted_proxies]) == -1)
			return conf_fail(x, n, "trustedProxies: \"%s\" is not an "
			    "IP address or ADDRESS/PREFIX block", s);
		x->c->n_trusted_proxies++;
	}
	return 0;
}

/* <purge><intervalSeconds/><batch/><undelivered>keep|purge</undelivered></purge>. */
int
conf_purge(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "purge");
	unsigned long long v;
	char *mode = NULL;
	int r;

	if (n == NULL)
		return 0;
	r = conf_uint(x, n, "intervalSeconds", 0, 7ULL * 86400, &v);
	if (r == -1)
		return -1;
	if (r == 1)
		x->c->purge_interval_s = (unsigned)v;
	r = conf_uint(x, n, "batch", 1, 100000, &v);
	if (r == -1)
		return -1;
	if (r == 1)
		x->c->purge_batch = (unsigned)v;
	r = conf_text(x, n, "undelivered", &mode);
	if (r == -1)
		return -1;
	if (r == 1)
		x->c->purge_undelivered = strcmp(mode, "purge") == 0;
	free(mode);
	return 0;
}

void
conf_revocation_default(struct conf_revocation *rv)
{
	rv->connect_timeout_ms = 2000;
	rv->timeout_s = 5;
	rv->max_ocsp_bytes = 64u * 1024u;
	rv->max_crl_bytes = 8u * 1024u * 1024u;
	rv->skew_s = 120;
	rv->refresh_ahead_s = 300;
	rv->no_next_update_s = 300;
	rv->failure_backoff_s = 10;
	rv->idle_s = 86400;
	rv->max_entries = 10000;
	rv->retry_after_s = 30;
}

/* A <revocation> key: its field in struct conf_revocation and range. */
struct conf_revocation_def {
	const char *name;
	size_t offset;
	int is_size;
	unsigned long long min, max;
};

#define CONF_RV(f) offsetof(struct conf_revocation, f)
static const struct conf_revocation_def conf_revocation_defs[] = {
	{ "connectTimeoutMs", CONF_RV(connect_timeout_ms), 0, 10, 60000 },
	{ "timeoutSeconds", CONF_RV(timeout_s), 0, 1, 120 },
	{ "maxOcspBytes", CONF_RV(max_ocsp_bytes), 1, 1024, 16ULL << 20 },
	{ "maxCrlBytes", CONF_RV(max_crl_bytes), 1, 1024, 1ULL << 30 },
	{ "clockSkewSeconds", CONF_RV(skew_s), 0, 0, 3600 },
	{ "refreshAheadSeconds", CONF_RV(refresh_ahead_s), 0, 0, 86400 },
	{ "noNextUpdateSeconds", CONF_RV(no_next_update_s), 0, 0, 86400 },
	{ "failureBackoffSeconds", CONF_RV(failure_backoff_s), 0, 0, 3600 },
	{ "idleSeconds", CONF_RV(idle_s), 0, 60, 30ULL * 86400 },
	{ "maxEntries", CONF_RV(max_entries), 1, 1, 10000000 },
	{ "retryAfterSeconds", CONF_RV(retry_after_s), 0, 1, 3600 },
};

/* <revocation>: each key optional, range-checked, over the default. */
int
conf_revocation(const struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "revocation");
	unsigned long long v;
	size_t i;
	int r;

	for (i = 0; n != NULL && i < sizeof(conf_revocation_defs) /
	    sizeof(conf_revocation_defs[0]); i++) {
		const struct conf_revocation_def *d = &conf_revocation_defs[i];
		char *field = (char *)&x->c->revocation + d->offset;

		r = conf_uint(x, n, d->name, d->min, d->max, &v);
		if (r == -1)
			return -1;
		if (r == 1 && d->is_size)
			*(size_t *)(void *)field = (size_t)v;
		else if (r == 1)
			*(unsigned *)(void *)field = (unsigned)v;
	}
	return 0;
}
