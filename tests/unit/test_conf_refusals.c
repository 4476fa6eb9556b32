/*
 * test_conf_refusals — every refusal of conf_load(): one fixture per
 * problem under tests/unit/conf/, refused with ERR_CONF and a message
 * naming the problem and the file (and line where known).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "conf/conf.h"
#include "testconf.h"
#include "testutil.h"

/* A fixture that conf_load must refuse, and what the message must say. */
struct conf_bad_case {
	const char *file;
	const char *expect;   /* substring of err.msg */
	long line;            /* msg starts "FILE:LINE: "; 0: "FILE: "; -1: names FILE */
};

static const struct conf_bad_case conf_bad_cases[] = {
	{ FIX "missing.xml", "could not open file", -1 },
	{ FIX "empty.xml", "empty", 0 },
	{ FIX "not-well-formed.xml", "XML not well-formed", 5 },
	{ FIX "doctype.xml", "DTD not allowed", 0 },
	{ FIX "wrong-root.xml", "root element is not as4gw", 3 },
	{ FIX "xsd-unknown.xml", "not valid against the schema: Element 'colour'", 5 },
	{ FIX "xsd-policy.xml", "not valid against the schema: Element 'security', attribute 'signing'", 15 },
	{ FIX "xsd-no-pmode.xml", "not valid against the schema: Element 'as4gw': Missing child", 3 },
	{ FIX "xsd-no-signing.xml", "not valid against the schema", 4 },
	{ FIX "xsd-empty-action.xml", "not valid against the schema: Element 'action'", 14 },
	{ FIX "listen-bad.xml", "listen: \"localhost\" is not host:port", 5 },
	{ FIX "listen-port.xml", "listen: \"127.0.0.1:65536\"", 5 },
	{ FIX "path-bad.xml", "path \"as4\" does not start with '/'", 5 },
	{ FIX "path-query.xml", "path \"/as4?x=1\" contains", 5 },
	{ FIX "store-scheme.xml", "scheme must be sqlite:, postgresql://", 5 },
	{ FIX "store-empty.xml", "store \"sqlite:\": no database file", 5 },
	{ FIX "threads-big.xml", "threads must be between 1 and 1024, not 5000", 5 },
	{ FIX "store-timeout-big.xml", "not valid against the schema", 5 },
	{ FIX "limit-body.xml", "maxBodyBytes must be between 1024 and", 5 },
	{ FIX "limit-depth.xml", "maxXmlDepth must be between 16 and 4096", 5 },
	{ FIX "limit-huge.xml", "maxXmlNodes must be between 100 and 100000000", 5 },
	{ FIX "limit-envelope.xml", "maxEnvelopeBytes must be between 4096 and", 5 },
	{ FIX "limit-attributes.xml", "maxXmlAttributes must be between 8 and 1024", 5 },
	{ FIX "limit-perip.xml", "perIpConnections (100) exceeds maxConnections (10)", 5 },
	{ FIX "tls-cert-only.xml", "tls: certificate without key", 5 },
	{ FIX "tls-key-only.xml", "tls: key without certificate", 5 },
	{ FIX "tls-empty.xml", "tls: certificate and key missing", 5 },
	{ FIX "tls-missing.xml", "tls certificate: could not open file \"" FIX
	    "missing-cert.pem\"", 5 },
	{ FIX "sign-cert-missing.xml", "signing certificate: could not open file "
	    "\"" FIX "missing-cert.pem\"", 6 },
	{ FIX "sign-key-missing.xml", "signing key: could not open file", 7 },
	{ FIX "sign-cert-dir.xml", "is not a regular file", 6 },
	{ FIX "retention.xml", "retentionDays (5) is shorter than "
	    "partnerRetryWindowDays (7)", 5 },
	{ FIX "retention-window.xml", "retentionDays (30) is shorter than "
	    "partnerRetryWindowDays (45)", 4 },
	{ FIX "leg-retention.xml", "pmode \"a\": retentionDays (3) is shorter", 16 },
	{ FIX "leg-body.xml", "maxBodyBytes must be between 1024 and 68719476736", 16 },
	{ FIX "limit-body-big.xml", "maxBodyBytes must be between 1024 and 68719476736", 5 },
	{ FIX "dup-id.xml", "duplicate pmode id \"a\" (first at line 10)", 17 },
	{ FIX "decryption-twice.xml", "pmode \"a\": decryption certificate "
	    "\"" FIX "dummy-cert.pem\" listed twice", 14 },
	{ FIX "decryption-retiring.xml", "gateway decryptionKeys: every "
	    "<decryption> pair is retiring", 6 },
	{ FIX "ambiguous.xml", "pmode \"b\" is ambiguous: a message could "
	    "match it and pmode \"a\" (line 9), which lists other PartyIds "
	    "or roles", 16 },
	/* issue 10: several PartyIds per party; legs on one route */
	{ FIX "route-signing.xml", "pmode \"weak\" and pmode \"signed\" (line "
	    "9) share a route but sign differently (never, required)", 19 },
	/* issue 12 item 3: a plain leg beside a Peppol leg on one route */
	{ FIX "route-peppol.xml", "pmode \"plain\" and pmode \"checked\" "
	    "(line 9) share a route but only one has <peppol>", 17 },
	{ FIX "party-twice.xml", "pmode \"a\": from: partyId \"sender\" "
	    "listed twice", 11 },
	{ FIX "party-canonical.xml", "pmode \"b\": from shares a partyId with "
	    "pmode \"a\" (line 8) but starts with another: the first partyId "
	    "is the party's canonical name", 15 },
	{ FIX "party-collide.xml", "pmode \"b\": from \"urn:t:x:y\" is also "
	    "the canonical name of another party in pmode \"a\" (line 8)", 15 },
	{ FIX "party-many.xml", "not valid against the schema: Element "
	    "'partyId': This element is not expected", 8 },
	{ FIX "ambiguous-role.xml", "pmode \"b\" is ambiguous: a message could "
	    "match it and pmode \"a\" (line 10)", 17 },
	{ FIX "service-not-uri.xml", "service \"orders\" has no type and is not "
	    "a URI", 13 },
	/* issue 3: per-leg WS-Security */
	{ FIX "sec-no-security.xml", "pmode \"a\": signing is required but no "
	    "<signer> names the partner certificate(s)", 10 },
	{ FIX "sec-signer-missing.xml", "pmode \"a\": signing is required but "
	    "no <signer>", 15 },
	{ FIX "sec-signer-optional.xml", "pmode \"a\": signing is optional but "
	    "no <signer>", 15 },
	{ FIX "sec-no-trust.xml", "pmode \"a\": <signer> without <trust>: "
	    "list the CA(s) its chain must reach (a self-signed certificate as "
	    "its own <anchor>)", 16 },
	{ FIX "sec-signer-unreadable.xml", "pmode \"a\": signer certificate: "
	    "could not open file \"" FIX "missing-cert.pem\"", 18 },
	{ FIX "sec-anchor-unreadable.xml", "pmode \"a\": trust anchor: could "
	    "not open file \"" FIX "missing-ca.pem\"", 18 },
	{ FIX "sec-crl-unreadable.xml", "pmode \"a\": trust crl: could not "
	    "open file \"" FIX "missing-crl.pem\"", 19 },
	{ FIX "sec-crl-order.xml", "not valid against the schema: Element "
	    "'crl': This element is not expected. Expected is ( anchor )", 18 },
	{ FIX "sec-decrypt-cert-unreadable.xml", "pmode \"a\": decryption "
	    "certificate: could not open file \"" FIX "missing-cert.pem\"", 17 },
	{ FIX "sec-decrypt-key-unreadable.xml", "pmode \"a\": decryption key: "
	    "could not open file \"" FIX "missing-key.pem\"", 17 },
	{ FIX "sec-files-last.xml", "duplicate pmode id \"a\" (first at line "
	    "11)", 21 },
	{ FIX "sec-decrypt-no-key.xml", "not valid against the schema: Element "
	    "'decryption': Missing child", 16 },
	{ FIX "sec-alg-unknown.xml", "not valid against the schema: Element "
	    "'algorithms': [facet 'enumeration'] The value 'rsa-sha1'", 18 },
	{ FIX "sec-alg-empty.xml", "not valid against the schema: Element "
	    "'algorithms': [facet 'minLength']", 18 },
	{ FIX "sec-order.xml", "not valid against the schema: Element 'signer': "
	    "This element is not expected", 17 },
	{ FIX "sec-skew-big.xml", "Element 'timestampSkewSeconds': [facet "
	    "'maxInclusive'] The value '3601'", 18 },
	{ FIX "sec-skew-negative.xml", "Element 'timestampSkewSeconds': '-5' is "
	    "not a valid value", 18 },
	{ FIX "sec-timestamp-signing.xml", "pmode \"a\": security/@timestamp "
	    "\"required\" needs signing=\"required\"", 15 },
	{ FIX "sec-timestamp-never.xml", "attribute 'timestamp': [facet "
	    "'enumeration'] The value 'never'", 15 },
	{ FIX "replay-bad.xml", "not valid against the schema: Element "
	    "'verifyAt': 'yesterday' is not a valid value of the atomic type "
	    "'xs:dateTime'", 9 },
	{ FIX "replay-empty.xml", "Element 'replay': Missing child", 9 },
	{ FIX "replay-epoch.xml", "replay/verifyAt: \"1969-12-31T23:59:59Z\" is "
	    "not after 1970-01-01T00:00:00Z", 10 },
	{ FIX "proxy-name.xml", "trustedProxies: \"proxy.example\" is not an IP "
	    "address or ADDRESS/PREFIX block", 10 },
	{ FIX "proxy-hostbits.xml", "trustedProxies: \"10.1.0.0/8\" is not", 10 },
	{ FIX "proxy-prefix.xml", "trustedProxies: \"10.0.0.0/33\" is not", 10 },
	{ FIX "purge-batch.xml", "Element 'batch': '0' is not a valid value", 9 },
	{ FIX "purge-mode.xml", "Element 'undelivered': [facet 'enumeration'] "
	    "The value 'delete'", 9 },
	{ FIX "business-bad.xml", "Element 'businessDuplicates': [facet "
	    "'enumeration'] The value 'delete'", 17 },
	/* issue 13: profiles and several signing pairs */
	{ FIX "profile-bad.xml", "Element 'security', attribute 'profile': "
	    "[facet 'enumeration'] The value 'edelivery-3.0'", 13 },
	{ FIX "receipt-key-unknown.xml", "pmode \"a\": receipt/@signingKey "
	    "\"nope\" is not the id of a gateway <signing> pair", 14 },
	{ FIX "signing-id-twice.xml", "gateway signingKeys: signing id \"ed\" "
	    "used twice", 6 },
	{ FIX "signing-no-id.xml", "gateway signingKeys: signing without id",
	    6 },
	{ FIX "signing-default-twice.xml", "gateway signingKeys: signing id "
	    "\"default\" used twice", 6 },
};

/* Each fixture is refused with ERR_CONF, a message naming the problem and
 * the file (and line where known), and nothing returned. */
static void
test_conf_refusals(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(conf_bad_cases) / sizeof(conf_bad_cases[0]); i++) {
		const struct conf_bad_case *t = &conf_bad_cases[i];
		struct conf *c = NULL;
		struct err err;
		char prefix[256];

		err_clear(&err);
		if (conf_load(t->file, &c, &err) != -1 || c != NULL)
			fail_msg("%s: accepted", t->file);
		if (err.kind != ERR_CONF)
			fail_msg("%s: kind %s: %s", t->file,
			    err_kind_name(err.kind), err.msg);
		if (strstr(err.msg, t->expect) == NULL)
			fail_msg("%s: \"%s\" does not mention \"%s\"", t->file,
			    err.msg, t->expect);
		if (t->line > 0)
			(void)snprintf(prefix, sizeof(prefix), "%s:%ld: ",
			    t->file, t->line);
		else
			(void)snprintf(prefix, sizeof(prefix), "%s: ", t->file);
		if (t->line == -1 && strstr(err.msg, t->file) == NULL)
			fail_msg("%s: \"%s\" does not name the file", t->file,
			    err.msg);
		if (t->line != -1 && strncmp(err.msg, prefix, strlen(prefix)) != 0)
			fail_msg("%s: \"%s\" does not start with \"%s\"", t->file,
			    err.msg, prefix);
		assert_null(strchr(err.msg, '\n'));
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_refusals),
	};

	return testconf_run(tests, sizeof(tests) / sizeof(tests[0]));
}
