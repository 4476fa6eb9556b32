/*
 * test_conf_load — configurations conf_load() accepts: the defaults,
 * security profiles, a fully populated file (with the per-leg WS-Security
 * section and the gateway's replay instant), several PartyIds, legs told
 * apart by AgreementRef/@pmode, <peppol>, decryption pairs, relative path
 * resolution, the shipped conf/as4gw.xml, business duplicates and a 64 GiB
 * maxBodyBytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "testconf.h"
#include "testutil.h"

#define ROLE "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"

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
	assert_int_equal(c->store_timeout_ms, 30000);
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
	assert_int_equal(c->store_timeout_ms, 7000);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_minimal_defaults),
		cmocka_unit_test(test_conf_profiles),
		cmocka_unit_test(test_conf_full),
		cmocka_unit_test(test_conf_party_several),
		cmocka_unit_test(test_conf_route_pmode),
		cmocka_unit_test(test_conf_resolution),
		cmocka_unit_test(test_conf_shipped),
		cmocka_unit_test(test_conf_peppol),
		cmocka_unit_test(test_conf_decryption_pairs),
		cmocka_unit_test(test_conf_body_64g),
		cmocka_unit_test(test_conf_business),
	};

	return testconf_run(tests, sizeof(tests) / sizeof(tests[0]));
}
