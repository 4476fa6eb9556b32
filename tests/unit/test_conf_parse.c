/*
 * test_conf_parse — the small parsers and helpers of conf/:
 * conf_parse_listen(), trusted proxies and conf_cidr_match() (ops),
 * conf_cidr_parse(), conf_free(NULL), policy names, default limits.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "conf/conf.h"
#include "testconf.h"
#include "testutil.h"

struct conf_listen_case {
	const char *in;
	const char *host;     /* NULL: refused */
	int port;
};

static const struct conf_listen_case conf_listen_cases[] = {
	{ "127.0.0.1:8080", "127.0.0.1", 8080 },
	{ "0.0.0.0:65535", "0.0.0.0", 65535 },
	{ "localhost:0", "localhost", 0 },
	{ "gw-1.example.com:443", "gw-1.example.com", 443 },
	{ "[::1]:443", "::1", 443 },
	{ "[::]:80", "::", 80 },
	{ "[fe80::1%eth0]:80", "fe80::1%eth0", 80 },
	{ "[::ffff:192.0.2.1]:8080", "::ffff:192.0.2.1", 8080 },
	{ "", NULL, 0 },
	{ "8080", NULL, 0 },
	{ ":8080", NULL, 0 },
	{ "host:", NULL, 0 },
	{ "host:65536", NULL, 0 },
	{ "host:123456", NULL, 0 },
	{ "host:-1", NULL, 0 },
	{ "host:+1", NULL, 0 },
	{ "host:80 ", NULL, 0 },
	{ "a b:80", NULL, 0 },
	{ "::1:8080", NULL, 0 },
	{ "[::1]8080", NULL, 0 },
	{ "[::1]:", NULL, 0 },
	{ "[]:80", NULL, 0 },
	{ "[zz::1]:80", NULL, 0 },
	{ "[1.2.3.4]:80", NULL, 0 },
	{ "[::1%]:80", NULL, 0 },
	{ "[::1:80", NULL, 0 },
};

/* conf_parse_listen: hosts without brackets; outputs untouched on failure. */
static void
test_conf_parse_listen(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(conf_listen_cases) / sizeof(conf_listen_cases[0]);
	    i++) {
		const struct conf_listen_case *t = &conf_listen_cases[i];
		char *host = NULL;
		int port = -7, rc;

		rc = conf_parse_listen(t->in, &host, &port);
		if (t->host == NULL) {
			if (rc != -1 || host != NULL || port != -7)
				fail_msg("\"%s\" accepted", t->in);
			continue;
		}
		if (rc != 0)
			fail_msg("\"%s\" refused", t->in);
		assert_string_equal(host, t->host);
		assert_int_equal(port, t->port);
		free(host);
	}
	assert_int_equal(conf_parse_listen(NULL, NULL, NULL), -1);
}

/* <trustedProxies>, <purge> and headerTimeoutSeconds read and parsed. */
static void
test_conf_ops(void **state)
{
	static const unsigned char v4[4] = { 10, 200, 3, 4 };
	static const unsigned char lo[4] = { 127, 0, 0, 1 };
	static const unsigned char lo2[4] = { 127, 0, 0, 2 };
	unsigned char v6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff };
	unsigned char mapped[16] = { 0 };
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "ops-full.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->limits.header_timeout_s, 7);
	assert_int_equal(c->purge_interval_s, 0);
	assert_int_equal(c->purge_batch, 50);
	assert_int_equal(c->purge_undelivered, 1);
	assert_int_equal(c->n_trusted_proxies, 3);
	assert_int_equal(c->trusted_proxies[0].family, AF_INET);
	assert_int_equal(c->trusted_proxies[0].prefix, 32);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[0], AF_INET, lo), 1);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[0], AF_INET, lo2), 0);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[1], AF_INET, v4), 1);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[1], AF_INET, lo), 0);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[2], AF_INET6, v6), 1);
	v6[3] = 0xb9;
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[2], AF_INET6, v6), 0);
	/* ::ffff:10.200.3.4 is the IPv4 client of a dual-stack socket */
	mapped[10] = mapped[11] = 0xff;
	memcpy(mapped + 12, v4, 4);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[1], AF_INET6, mapped), 1);
	assert_int_equal(conf_cidr_match(&c->trusted_proxies[2], AF_INET, v4), 0);
	conf_free(c);
}

/* conf_cidr_parse: what is an address block and what is not. */
static void
test_conf_cidr_parse(void **state)
{
	static const char *const good[] = { "0.0.0.0/0", "192.0.2.7",
	    "192.0.2.0/24", "::1", "::/0", "fe80::/10", "::ffff:1.2.3.4" };
	static const char *const bad[] = { "", "/8", "10.0.0.0/", "10.0.0.0/-1",
	    "10.0.0.0/33", "10.0.0.1/8", "::1/129", "localhost", "10.0.0.0/8x",
	    "10.0.0.0/0008", "1.2.3", "1.2.3.4 ", "10.0.0.0/ 8" };
	struct conf_cidr c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (conf_cidr_parse(good[i], &c) != 0)
			fail_msg("\"%s\" refused", good[i]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (conf_cidr_parse(bad[i], &c) != -1)
			fail_msg("\"%s\" accepted", bad[i]);
	assert_int_equal(conf_cidr_parse("fe80::/10", &c), 0);
	assert_int_equal(c.family, AF_INET6);
	assert_int_equal(c.prefix, 10);
	assert_int_equal(c.addr[0], 0xfe);
	assert_int_equal(c.addr[1], 0x80);
}

/* <businessDuplicates> (issue 12 item 4): flag by default, each word. */

/* Small helpers: NULL accepted, policy names, defaults. */
static void
test_conf_misc(void **state)
{
	struct conf_limits lim;
	struct conf *c = (struct conf *)(uintptr_t)1;
	struct err err;

	(void)state;
	conf_free(NULL);
	assert_string_equal(conf_policy_name(CONF_NEVER), "never");
	assert_string_equal(conf_policy_name(CONF_OPTIONAL), "optional");
	assert_string_equal(conf_policy_name(CONF_REQUIRED), "required");
	conf_limits_default(&lim);
	assert_int_equal(lim.max_body_bytes, (size_t)8 << 30);
	assert_int_equal(lim.max_xml_nodes, 100000);
	err_clear(&err);
	assert_int_equal(conf_load(NULL, &c, &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
	assert_true(c == (struct conf *)(uintptr_t)1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_parse_listen),
		cmocka_unit_test(test_conf_misc),
		cmocka_unit_test(test_conf_ops),
		cmocka_unit_test(test_conf_cidr_parse),
	};

	return testconf_run(tests, sizeof(tests) / sizeof(tests[0]));
}
