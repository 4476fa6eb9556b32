/*
 * test_conf — configuration loading: every refusal of conf_load() (one
 * fixture per problem under tests/unit/conf/), the defaults, relative path
 * resolution, a fully populated file (with the per-leg WS-Security section
 * and the gateway's replay instant), the shipped conf/as4gw.xml, and
 * conf_parse_listen().
 *
 * The tests run from the source root (main() changes directory) so fixture
 * paths are relative and resolution is visible in the results.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conf/conf.h"
#include "xml/xml.h"
#include "testutil.h"

#define FIX "tests/unit/conf/"
#define ROLE "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"

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

/* Nothing given: the defaults of conf.h, paths against the file's dir. */
static void
test_conf_minimal_defaults(void **state)
{
	struct conf *c = NULL;
	struct err err;
	const struct pmode_leg *l;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "minimal.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_non_null(c);
	assert_string_equal(c->path, FIX "minimal.xml");
	assert_string_equal(c->listen_host, "127.0.0.1");
	assert_int_equal(c->listen_port, 8080);
	assert_string_equal(c->http_path, "/as4");
	assert_string_equal(c->store_dsn, "sqlite:" FIX "var/as4gw.db");
	assert_int_equal(c->threads, 4);
	assert_null(c->tls_cert);
	assert_null(c->tls_key);
	assert_string_equal(c->sign_cert, FIX "dummy-cert.pem");
	assert_string_equal(c->sign_key, FIX "dummy-key.pem");
	assert_int_equal(c->retention_days, 30);
	assert_int_equal(c->retry_window_days, 7);
	assert_int_equal(c->limits.max_body_bytes, (size_t)8 << 30);
	assert_int_equal(c->limits.spool_threshold_bytes, 1u << 20);
	assert_int_equal(c->limits.spool_reserve_bytes, 256u << 20);
	assert_string_equal(c->spool_dir, "/var/tmp");
	assert_int_equal(c->limits.connection_timeout_s, 30);
	assert_int_equal(c->limits.request_deadline_s, 120);
	assert_int_equal(c->limits.per_ip_connections, 32);
	assert_int_equal(c->limits.max_connections, 512);
	assert_int_equal(c->limits.connection_memory_bytes, 32u * 1024u);
	assert_int_equal(c->limits.request_memory_bytes, 256u * 1024u * 1024u);
	assert_int_equal(c->limits.max_parts, 64);
	assert_int_equal(c->limits.max_xml_depth, 64);
	assert_int_equal(c->limits.max_xml_nodes, 100000);
	assert_int_equal(c->limits.max_xml_attributes, 64);
	assert_int_equal(c->limits.max_envelope_bytes, 4u * 1024u * 1024u);
	assert_int_equal(c->verify_at_ms, 0);
	assert_int_equal(c->limits.header_timeout_s, 10);
	/* issue 14: an 8 GiB payload decompresses under the defaults */
	assert_true(c->limits.max_decompressed_bytes == (size_t)8 << 30);
	assert_int_equal(c->limits.max_decompression_ratio, 1000);
	assert_true(c->limits.max_decompressed_total_bytes == (size_t)8 << 30);
	assert_int_equal(c->n_trusted_proxies, 0);
	assert_null(c->trusted_proxies);
	assert_int_equal(c->purge_interval_s, 3600);
	assert_int_equal(c->purge_batch, 500);
	assert_int_equal(c->purge_undelivered, 0);
	assert_int_equal(c->n_legs, 1);
	l = &c->legs[0];
	assert_string_equal(l->id, "a");
	assert_null(l->agreement);
	assert_null(l->agreement_type);
	assert_int_equal(l->from.n_ids, 1);
	assert_string_equal(l->from.ids[0].value, "urn:test:sender");
	assert_null(l->from.ids[0].type);
	assert_string_equal(l->from.name, "urn:test:sender");
	assert_null(l->from.role);
	assert_int_equal(l->to.n_ids, 1);
	assert_string_equal(l->to.ids[0].value, "urn:test:gateway");
	assert_string_equal(l->to.name, "urn:test:gateway");
	assert_null(l->to.role);
	assert_string_equal(l->service, "urn:test:service");
	assert_null(l->service_type);
	assert_string_equal(l->action, "urn:test:Deliver");
	assert_int_equal(l->signing, CONF_REQUIRED);
	assert_int_equal(l->encryption, CONF_OPTIONAL);
	assert_int_equal(l->receipt_nrr, 1);
	assert_int_equal(l->retention_days, 0);
	/* the default signing="required" needs signer and anchors; the rest
	 * of <security> defaults */
	assert_int_equal(l->n_signer_certs, 1);
	assert_string_equal(l->signer_certs[0], FIX "dummy-cert.pem");
	assert_int_equal(l->n_trust_anchors, 1);
	assert_string_equal(l->trust_anchors[0], FIX "dummy-cert.pem");
	assert_int_equal(l->n_trust_crls, 0);      /* no revocation check */
	assert_null(l->trust_crls);
	assert_int_equal(c->n_decrypt, 1);      /* default: the signing pair */
	assert_int_equal(c->decrypt_signing, 1);
	assert_int_equal(l->n_decrypt, 1);
	assert_int_equal(l->decrypt_default, 1);
	assert_int_equal(l->decrypt[0].retiring, 0);
	assert_string_equal(l->decrypt[0].cert, c->sign_cert);
	assert_string_equal(l->decrypt[0].key, c->sign_key);
	assert_ptr_not_equal(l->decrypt[0].cert, c->sign_cert); /* own copies */
	assert_ptr_not_equal(l->decrypt[0].key, c->sign_key);
	assert_null(l->algorithms);
	assert_int_equal(l->timestamp_skew_s, CONF_SKEW_DEFAULT);
	assert_int_equal(l->timestamp, CONF_OPTIONAL);
	assert_int_equal(CONF_SKEW_DEFAULT, 300);
	/* issue 13: one signing pair, "default"; 1.x, receipt key by profile */
	assert_int_equal(c->n_signing, 1);
	assert_string_equal(c->signing[0].id, "default");
	assert_ptr_equal(c->sign_cert, c->signing[0].cert);
	assert_int_equal(l->profile, CONF_PROFILE_1X);
	assert_int_equal(l->receipt_key, -1);
	conf_free(c);
}

/* Issue 13: security/@profile per leg, several signing pairs in document
 * order (paths resolved), receipt/@signingKey as an index, an explicit
 * <algorithms> list kept beside the profile (the gateway lets it win). */
static void
test_conf_profiles(void **state)
{
	static const struct {
		const char *id;
		enum conf_profile profile;
		int key;
	} want[] = {
		{ "one", CONF_PROFILE_1X, -1 },
		{ "two", CONF_PROFILE_2_0, 1 },
		{ "ec", CONF_PROFILE_2_0_EC, -1 },
		{ "bdew", CONF_PROFILE_2_0_EC, 2 },
	};
	struct conf *c = NULL;
	struct err err;
	size_t i;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "profile.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_signing, 3);
	assert_string_equal(c->signing[0].id, "default");
	assert_string_equal(c->signing[1].id, "ed");
	assert_string_equal(c->signing[2].id, "bp");
	assert_string_equal(c->signing[2].cert, FIX "../conf/dummy-cert.pem");
	assert_string_equal(c->signing[2].key, FIX "dummy-key.pem");
	assert_string_equal(c->sign_cert, FIX "dummy-cert.pem");
	assert_int_equal(c->n_legs, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(c->legs[i].id, want[i].id);
		assert_int_equal(c->legs[i].profile, want[i].profile);
		assert_int_equal(c->legs[i].receipt_key, want[i].key);
	}
	assert_null(c->legs[1].algorithms);
	assert_string_equal(c->legs[3].algorithms, "ecdsa-sha256 sha256 "
	    "ecdh-es concatkdf kw-aes128 aes128-gcm");
	assert_int_equal(c->legs[3].receipt_nrr, 0);
	assert_string_equal(conf_profile_name(CONF_PROFILE_1X), "edelivery-1.x");
	assert_string_equal(conf_profile_name(CONF_PROFILE_2_0),
	    "edelivery-2.0");
	assert_string_equal(conf_profile_name(CONF_PROFILE_2_0_EC),
	    "edelivery-2.0-ec");
	conf_free(c);
}

/* Every key set; values trimmed; "../x" kept as written (joined only). */
static void
test_conf_full(void **state)
{
	struct conf *c = NULL;
	struct err err;
	const struct pmode_leg *l;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "full.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c->listen_host, "::1");
	assert_int_equal(c->listen_port, 0);
	assert_string_equal(c->http_path, "/as4/inbound");
	assert_string_equal(c->store_dsn,
	    "postgresql://as4gw@db.example/as4gw?sslmode=require");
	assert_int_equal(c->threads, 8);
	assert_string_equal(c->tls_cert, FIX "../conf/dummy-cert.pem");
	assert_string_equal(c->tls_key, FIX "dummy-key.pem");
	assert_string_equal(c->sign_key, FIX "dummy-key.pem");
	assert_int_equal(c->limits.max_body_bytes, 1048576);
	assert_int_equal(c->limits.connection_timeout_s, 10);
	assert_int_equal(c->limits.request_deadline_s, 60);
	assert_int_equal(c->limits.per_ip_connections, 4);
	assert_int_equal(c->limits.max_connections, 100);
	assert_int_equal(c->limits.connection_memory_bytes, 32768);
	assert_int_equal(c->limits.request_memory_bytes, 67108864);
	assert_int_equal(c->limits.max_parts, 16);
	assert_int_equal(c->limits.max_xml_depth, 48);
	assert_int_equal(c->limits.max_xml_nodes, 50000);
	assert_int_equal(c->limits.max_xml_attributes, 32);
	assert_int_equal(c->limits.max_envelope_bytes, 1048576);
	assert_int_equal(c->limits.max_decompressed_bytes, 1073741824);
	assert_int_equal(c->limits.max_decompression_ratio, 200);
	assert_int_equal(c->limits.max_decompressed_total_bytes, 2147483648);
	/* issue 14: a relative spoolDir is the config directory's; 0 allowed */
	assert_string_equal(c->spool_dir, FIX "spool");
	assert_int_equal(c->limits.spool_threshold_bytes, 0);
	assert_int_equal(c->limits.spool_reserve_bytes, 0);
	assert_int_equal(c->retention_days, 60);
	assert_int_equal(c->retry_window_days, 14);
	/* 2021-03-04T05:06:07.890+01:00 */
	assert_int_equal(c->verify_at_ms, INT64_C(1614830767890));
	assert_int_equal(c->n_legs, 2);
	l = &c->legs[0];
	assert_string_equal(l->id, "orders");
	assert_string_equal(l->agreement, "urn:test:agreement");
	assert_string_equal(l->agreement_type, "urn:test:agreement-type");
	assert_int_equal(l->from.n_ids, 1);
	assert_string_equal(l->from.ids[0].value, "4035811991021");
	assert_string_equal(l->from.ids[0].type,
	    "urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088");
	assert_string_equal(l->from.name,
	    "urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088:4035811991021");
	assert_string_equal(l->from.role, ROLE "initiator");
	assert_string_equal(l->to.role, ROLE "responder");
	assert_string_equal(l->service, "orders");
	assert_string_equal(l->service_type, "urn:test:service-type");
	assert_string_equal(l->action, "SubmitOrder");
	assert_int_equal(l->signing, CONF_NEVER);
	assert_int_equal(l->encryption, CONF_REQUIRED);
	assert_int_equal(l->receipt_nrr, 0);
	assert_int_equal(l->retention_days, 20);
	assert_int_equal(l->max_body_bytes, 65536);
	assert_int_equal(c->legs[1].max_body_bytes, 0);
	/* signing="never": no signer needed; own decryption pair; the
	 * algorithm list with its white space collapsed, weak names kept */
	assert_int_equal(l->n_signer_certs, 0);
	assert_null(l->signer_certs);
	assert_int_equal(l->n_trust_anchors, 0);
	assert_null(l->trust_anchors);
	assert_int_equal(l->n_trust_crls, 0);
	assert_null(l->trust_crls);
	assert_int_equal(l->n_decrypt, 1);
	assert_int_equal(l->decrypt_default, 0);
	assert_string_equal(l->decrypt[0].cert, FIX "../conf/dummy-cert.pem");
	assert_string_equal(l->decrypt[0].key, FIX "dummy-key.pem");
	assert_string_equal(l->algorithms,
	    "rsa-sha256 sha256 rsa-oaep aes128-gcm rsa-1_5 aes-cbc");
	assert_int_equal(l->timestamp_skew_s, 0);
	l = &c->legs[1];
	assert_string_equal(l->id, "invoices");
	assert_int_equal(l->signing, CONF_REQUIRED);
	assert_int_equal(l->encryption, CONF_OPTIONAL);
	assert_int_equal(l->receipt_nrr, 1);
	/* two signer files (trimmed, resolved), one anchor, two CRLs
	 * (trimmed, resolved; conf does not parse them), defaults for the
	 * decryption pair and the algorithms, skew at its maximum */
	assert_int_equal(l->n_signer_certs, 2);
	assert_string_equal(l->signer_certs[0], FIX "dummy-cert.pem");
	assert_string_equal(l->signer_certs[1], FIX "../conf/dummy-key.pem");
	assert_int_equal(l->n_trust_anchors, 1);
	assert_string_equal(l->trust_anchors[0], FIX "dummy-cert.pem");
	assert_int_equal(l->n_trust_crls, 2);
	assert_string_equal(l->trust_crls[0], FIX "dummy-cert.pem");
	assert_string_equal(l->trust_crls[1], FIX "../conf/dummy-key.pem");
	assert_int_equal(l->n_decrypt, 1);
	assert_string_equal(l->decrypt[0].cert, FIX "dummy-cert.pem");
	assert_string_equal(l->decrypt[0].key, FIX "dummy-key.pem");
	assert_null(l->algorithms);
	assert_int_equal(l->timestamp_skew_s, 3600);
	assert_int_equal(l->timestamp, CONF_REQUIRED);
	conf_free(c);
}

/*
 * Issue 10: a party with several PartyIds, each with its own type, in
 * document order (values trimmed); the canonical name is "type:value" of the
 * first, or its value when untyped.  Legs that share the To party but not a
 * From PartyId do not overlap.
 */
static void
test_conf_party_several(void **state)
{
	struct conf *c = NULL;
	struct err err;
	const struct conf_party *p;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "party-several.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_legs, 2);
	p = &c->legs[0].from;
	assert_int_equal(p->n_ids, 3);
	assert_string_equal(p->ids[0].value, "4035811991021");
	assert_string_equal(p->ids[0].type,
	    "urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088");
	assert_string_equal(p->ids[1].value, "urn:test:sender");
	assert_null(p->ids[1].type);
	assert_string_equal(p->ids[2].value, "sender");
	assert_string_equal(p->ids[2].type,
	    "urn:oasis:names:tc:ebcore:partyid-type:unregistered");
	assert_string_equal(p->name,
	    "urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088:4035811991021");
	assert_string_equal(p->role, "urn:test:role");
	p = &c->legs[0].to;
	assert_int_equal(p->n_ids, 2);
	assert_string_equal(p->name, "urn:test:gateway");
	assert_string_equal(c->legs[1].to.name, "urn:test:gateway");
	conf_free(c);
}

/* Issue 10 item 9: legs that differ only by id (AgreementRef/@pmode tells
 * them apart, as AS4.NET and Holodeck configure them) load. */
static void
test_conf_route_pmode(void **state)
{
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "route-pmode.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_legs, 2);
	assert_string_equal(c->legs[0].id, "a");
	assert_string_equal(c->legs[1].id, "b");
	conf_free(c);
}

/* Issue 12 item 3: <peppol> with its lists (default schemes), an empty
 * <peppol/>, a leg without; maxSbdhValueBytes. */
static void
test_conf_peppol(void **state)
{
	const struct conf_peppol *p;
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "peppol.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->limits.max_sbdh_value_bytes, 2048);
	p = c->legs[0].peppol;
	assert_non_null(p);
	assert_int_equal(p->n_doc_types, 2);
	assert_string_equal(p->doc_types[0].scheme, CONF_PEPPOL_DOCTYPE_SCHEME);
	assert_string_equal(p->doc_types[0].value, "urn:test:doc");
	assert_string_equal(p->doc_types[1].scheme, "other-docid");
	assert_string_equal(p->doc_types[1].value, "urn:test:doc2");
	assert_int_equal(p->n_processes, 1);
	assert_string_equal(p->processes[0].scheme, CONF_PEPPOL_PROCESS_SCHEME);
	assert_string_equal(p->processes[0].value, "urn:test:process");
	assert_non_null(c->legs[1].peppol);
	assert_int_equal(c->legs[1].peppol->n_doc_types, 0);
	assert_int_equal(c->legs[1].peppol->n_processes, 0);
	assert_null(c->legs[2].peppol);
	conf_free(c);
}

/* Decryption pairs (issue 11 item 9): <decryptionKeys> is the default of
 * legs without their own, copied; a leg's own pairs in document order with
 * @retiring (xs:boolean, blanks trimmed). */
static void
test_conf_decryption_pairs(void **state)
{
	const struct pmode_leg *l;
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "decryption-pairs.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_decrypt, 2);
	assert_int_equal(c->decrypt_signing, 0);
	assert_string_equal(c->decrypt[1].cert, FIX "../conf/dummy-cert.pem");
	assert_int_equal(c->decrypt[0].retiring, 0);
	assert_int_equal(c->decrypt[1].retiring, 1);
	l = &c->legs[0];
	assert_int_equal(l->decrypt_default, 1);
	assert_int_equal(l->n_decrypt, 2);
	assert_string_equal(l->decrypt[1].cert, c->decrypt[1].cert);
	assert_ptr_not_equal(l->decrypt[1].cert, c->decrypt[1].cert);
	assert_int_equal(l->decrypt[1].retiring, 1);
	l = &c->legs[1];
	assert_int_equal(l->decrypt_default, 0);
	assert_int_equal(l->n_decrypt, 2);
	assert_string_equal(l->decrypt[0].cert, FIX "../conf/dummy-cert.pem");
	assert_int_equal(l->decrypt[0].retiring, 0);
	assert_string_equal(l->decrypt[1].cert, FIX "dummy-cert.pem");
	assert_string_equal(l->decrypt[1].key, FIX "../conf/dummy-key.pem");
	assert_int_equal(l->decrypt[1].retiring, 1);
	conf_free(c);
}

/* Absolute config path: paths become absolute; no directory part: kept. */
static void
test_conf_resolution(void **state)
{
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(AS4GW_SOURCE_DIR "/" FIX "minimal.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c->sign_cert, AS4GW_SOURCE_DIR "/" FIX
	    "dummy-cert.pem");
	assert_string_equal(c->store_dsn, "sqlite:" AS4GW_SOURCE_DIR "/" FIX
	    "var/as4gw.db");
	assert_string_equal(c->legs[0].signer_certs[0], AS4GW_SOURCE_DIR "/"
	    FIX "dummy-cert.pem");
	assert_string_equal(c->legs[0].trust_anchors[0], AS4GW_SOURCE_DIR "/"
	    FIX "dummy-cert.pem");
	assert_string_equal(c->legs[0].decrypt[0].key, AS4GW_SOURCE_DIR "/"
	    FIX "dummy-key.pem");
	conf_free(c);
	c = NULL;
	assert_int_equal(chdir(FIX), 0);
	err_clear(&err);
	if (conf_load("minimal.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_string_equal(c->sign_cert, "dummy-cert.pem");
	assert_string_equal(c->store_dsn, "sqlite:var/as4gw.db");
	assert_string_equal(c->legs[0].signer_certs[0], "dummy-cert.pem");
	assert_string_equal(c->legs[0].trust_anchors[0], "dummy-cert.pem");
	conf_free(c);
	assert_int_equal(chdir(AS4GW_SOURCE_DIR), 0);
}

/* The shipped development config is valid; its dev certificates are made by
 * a script, so when they are absent the only complaint must be about them. */
static void
test_conf_shipped(void **state)
{
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load("conf/as4gw.xml", &c, &err) == -1) {
		if (strstr(err.msg, "signing certificate: could not open file "
		    "\"conf/../certs/dev/gateway.crt\"") == NULL &&
		    strstr(err.msg, "signing key: could not open file "
		    "\"conf/../certs/dev/gateway.key\"") == NULL)
			fail_msg("%s", err.msg);
		testutil_skip_note("certs/dev not generated: conf/as4gw.xml "
		    "checked up to its certificate files");
		return;
	}
	assert_string_equal(c->listen_host, "127.0.0.1");
	assert_int_equal(c->listen_port, 8080);
	assert_string_equal(c->store_dsn, "sqlite:conf/../var/as4gw.db");
	/* the 1.x leg and, beside it, eDelivery AS4 2.0 and its EC profile
	 * (issue 13), with their signing pairs */
	assert_int_equal(c->n_legs, 3);
	assert_string_equal(c->legs[1].id, "dev-2.0");
	assert_int_equal(c->legs[1].profile, CONF_PROFILE_2_0);
	assert_string_equal(c->legs[2].id, "dev-2.0-ec");
	assert_int_equal(c->legs[2].profile, CONF_PROFILE_2_0_EC);
	assert_int_equal(c->n_signing, 4);
	assert_string_equal(c->signing[1].id, "ed25519");
	assert_string_equal(c->legs[0].id, "dev-sample");
	assert_int_equal(c->legs[0].profile, CONF_PROFILE_1X);
	assert_null(c->legs[0].agreement);
	assert_int_equal(c->legs[0].signing, CONF_NEVER);
	assert_int_equal(c->legs[0].n_signer_certs, 0);
	assert_null(c->legs[0].algorithms);
	assert_int_equal(c->legs[0].timestamp_skew_s, CONF_SKEW_DEFAULT);
	/* replay is for recorded traffic only: never on in the shipped file */
	assert_int_equal(c->verify_at_ms, 0);
	conf_free(c);
}

/* A listen string, and what conf_parse_listen must make of it. */
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
static void
test_conf_business(void **state)
{
	static const enum conf_business want[] = { CONF_BUSINESS_FLAG,
	    CONF_BUSINESS_FLAG, CONF_BUSINESS_REFUSE, CONF_BUSINESS_OFF };
	struct conf *c = NULL;
	struct err err;
	size_t i;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "business.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(c->n_legs, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(c->legs[i].business_duplicates, want[i]);
	conf_free(c);
}

/* Small helpers: NULL accepted, policy names, defaults. */
/* issue 14: maxBodyBytes up to 64 GiB parses into size_t without
 * truncation (the 8 GiB default is above 32 bits too) */
static void
test_conf_body_64g(void **state)
{
	struct conf *c = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(FIX "limit-body-64g.xml", &c, &err) != 0)
		fail_msg("%s", err.msg);
	assert_true(c->limits.max_body_bytes == (size_t)1 << 36);
	conf_free(c);
}

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
		cmocka_unit_test(test_conf_refusals),
		cmocka_unit_test(test_conf_minimal_defaults),
		cmocka_unit_test(test_conf_profiles),
		cmocka_unit_test(test_conf_full),
		cmocka_unit_test(test_conf_party_several),
		cmocka_unit_test(test_conf_route_pmode),
		cmocka_unit_test(test_conf_resolution),
		cmocka_unit_test(test_conf_shipped),
		cmocka_unit_test(test_conf_peppol),
		cmocka_unit_test(test_conf_decryption_pairs),
		cmocka_unit_test(test_conf_parse_listen),
		cmocka_unit_test(test_conf_misc),
		cmocka_unit_test(test_conf_body_64g),
		cmocka_unit_test(test_conf_ops),
		cmocka_unit_test(test_conf_cidr_parse),
		cmocka_unit_test(test_conf_business),
	};

	if (chdir(AS4GW_SOURCE_DIR) != 0) {
		perror(AS4GW_SOURCE_DIR);
		return 1;
	}
	xml_global_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
