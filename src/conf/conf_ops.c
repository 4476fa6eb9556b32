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
