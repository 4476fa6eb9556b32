/*
 * Unit tests for wss_inbound.c, signed UserMessages built here with xmlsec
 * templates (testinbound.h: development PKI from certs/gen-dev-pki.sh in a
 * temporary directory, two SwA attachments): the eDelivery shape and the
 * variants that must still verify, and the NEGATIVE-CASES items 29, 30,
 * 36-38, 41-46 and 51 built by signing differently, each checked for its
 * exact ebMS code.
 * Messages edited after signing: test_wss_inbound_tamper.c; recorded
 * traffic: test_wss_inbound_corpus.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "testinbound.h"
#include "xml/xml.h"

/* The eDelivery shape verifies; the result lists the references in
 * SignedInfo order and names the signer. */
static void
test_valid(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default();
	struct run r;
	xmlChar *uri;

	(void)state;
	run_init(&r, P_DEFAULT);
	if (process(a, xml, &r) != 0)
		fail_msg("refused: %s (%s)", r.err.msg, r.err.detail);
	assert_int_equal(r.res.verified, 1);
	assert_int_equal(r.res.decrypted, 0);
	assert_int_equal(r.res.n_references, 4);
	assert_true(xml_is(r.res.references[0], NS_DS, "Reference"));
	uri = xmlGetNoNsProp(r.res.references[3], (const xmlChar *)"URI");
	assert_string_equal((const char *)uri, "cid:p2@test");
	xmlFree(uri);
	assert_non_null(strstr(r.res.signer, "CN=as4gw-dev-sender"));
	arena_free(a);
	free(xml);
}

/* Variants that must still be accepted. */
static void
test_valid_variants(void **state)
{
	struct spec ts = { .refs = R_ALL | R_TS, .ts = TS_GOOD };
	struct spec sha512 = { .sig = A_RSA_SHA512 };
	struct spec ec256 = { .sig = A_ECDSA_SHA256, .key = K_EC, .bst = K_EC };
	struct spec ec384 = { .sig = A_ECDSA_SHA384, .dig = A_SHA384,
		.key = K_EC, .bst = K_EC };
	char *xml;

	(void)state;
	xml = sign_message(&ts);
	expect("signed timestamp", xml, P_DEFAULT, NULL);
	expect("signed timestamp, required", xml, P_TS_REQUIRED, NULL);
	free(xml);
	xml = sign_message(&sha512);
	expect("rsa-sha512", xml, P_DEFAULT, NULL);
	free(xml);
	xml = sign_message(&ec256);
	expect("ecdsa-sha256", xml, P_EC, NULL);
	free(xml);
	xml = sign_message(&ec384);
	expect("ecdsa-sha384, sha384", xml, P_EC, NULL);
	free(xml);
	xml = sign_default();
	/* a leg requiring a signed wsu:Timestamp refuses one without */
	expect("timestamp required, none", xml, P_TS_REQUIRED, "EBMS:0103");
	/* a signature is verified even where the leg does not require one */
	expect("signing never", xml, P_SIGN_NEVER, NULL);
	expect("signing optional", xml, P_SIGN_OPTIONAL, NULL);
	/* header blocks for other roles are not ours */
	xml = tamper(xml, "</env:Header>", "<wsse:Security env:role=\"urn:x\">"
	    "<x:Y xmlns:x=\"urn:x\"/></wsse:Security></env:Header>");
	expect("other role security", xml, P_DEFAULT, NULL);
	free(xml);
}

/* No Security header where the leg does not ask for one. */
static void
test_unsigned_optional(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");
	struct run r;

	(void)state;
	xml = tamper(xml, sec, "");
	run_init(&r, P_SIGN_OPTIONAL);
	assert_int_equal(process(a, xml, &r), 0);
	assert_int_equal(r.res.verified, 0);
	assert_int_equal(r.res.n_references, 0);
	arena_free(a);
	free(sec);
	free(xml);
}

/* ---- NEGATIVE-CASES built by signing differently ------------------------ */

struct scase {
	const char *name;
	struct spec sp;
	enum pol pol;
	const char *code;
};

static const struct scase signed_cases[] = {
	{ "29 messaging not signed", { .refs = R_BODY | R_P1 | R_P2 },
	    P_DEFAULT, "EBMS:0103" },
	{ "29 body not signed", { .refs = R_MSG | R_P1 | R_P2 },
	    P_DEFAULT, "EBMS:0103" },
	{ "30 payload not signed", { .refs = R_MSG | R_BODY | R_P1 },
	    P_DEFAULT, "EBMS:0103" },
	{ "36 too many references", { 0 }, P_MAX_REFS_3, "EBMS:0103" },
	{ "37 rsa-sha1", { .sig = A_RSA_SHA1 }, P_DEFAULT,
	    "EBMS:0103" },
	{ "37 sha1 digest", { .dig = A_SHA1 }, P_DEFAULT, "EBMS:0103" },
	{ "37 rsa-sha256 not allowed", { 0 }, P_NO_RSA_SHA256,
	    "EBMS:0103" },
	{ "38 inclusive c14n", { .c14n = A_INCL_C14N }, P_DEFAULT,
	    "EBMS:0103" },
	{ "38 exclusive c14n with comments",
	    { .c14n = A_EXC_COMMENTS }, P_DEFAULT, "EBMS:0103" },
	{ "41 attacker key in KeyValue",
	    { .key = K_ATTACKER, .keyvalue = 1 }, P_DEFAULT,
	    "EBMS:0101" },
	{ "41 attacker signs, BST names the sender",
	    { .key = K_ATTACKER }, P_DEFAULT, "EBMS:0101" },
	{ "42 self-signed signer",
	    { .key = K_ATTACKER, .bst = K_ATTACKER }, P_DEFAULT,
	    "EBMS:0101" },
	{ "43 expired certificate", { 0 }, P_FUTURE, "EBMS:0101" },
	{ "43 certificate not yet valid", { 0 }, P_PAST, "EBMS:0101" },
	{ "42 bound but not chaining to an anchor",
	    { .key = K_ATTACKER, .bst = K_ATTACKER }, P_ATTACKER_BOUND,
	    "EBMS:0101" },
	{ "ecdsa signer not bound to the leg", { .sig =
	    A_ECDSA_SHA256, .key = K_EC, .bst = K_EC }, P_DEFAULT,
	    "EBMS:0101" },
	{ "ecdsa not allowed by the leg", { .sig = A_ECDSA_SHA256,
	    .key = K_EC, .bst = K_EC }, P_EC_NO_ECDSA, "EBMS:0103" },
	{ "44 trusted but not bound to the party",
	    { .key = K_GATEWAY, .bst = K_GATEWAY }, P_DEFAULT,
	    "EBMS:0101" },
	{ "no trust for the leg", { 0 }, P_NO_TRUST, "EBMS:0101" },
	{ "45 expired timestamp",
	    { .refs = R_ALL | R_TS, .ts = TS_EXPIRED }, P_DEFAULT,
	    "EBMS:0101" },
	{ "45 timestamp created in the future",
	    { .refs = R_ALL | R_TS, .ts = TS_FUTURE }, P_DEFAULT,
	    "EBMS:0101" },
	{ "45 timestamp expires before created",
	    { .refs = R_ALL | R_TS, .ts = TS_BACKWARDS }, P_DEFAULT,
	    "EBMS:0101" },
	{ "46 two timestamps", { .refs = R_ALL | R_TS, .ts = TS_TWO },
	    P_DEFAULT, "EBMS:0103" },
	{ "46 unsigned timestamp", { .ts = TS_GOOD }, P_DEFAULT,
	    "EBMS:0103" },
	{ "51 payloads not encrypted", { 0 }, P_ENC_REQUIRED,
	    "EBMS:0103" },
};

/* Each variant a differently signed message shows, with its code. */
static void
test_signed_negatives(void **state)
{
	size_t i;
	char *xml;

	(void)state;
	for (i = 0; i < sizeof(signed_cases) / sizeof(signed_cases[0]); i++) {
		xml = sign_message(&signed_cases[i].sp);
		expect(signed_cases[i].name, xml, signed_cases[i].pol,
		    signed_cases[i].code);
		free(xml);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_valid_variants),
		cmocka_unit_test(test_unsigned_optional),
		cmocka_unit_test(test_signed_negatives),
	};

	return cmocka_run_group_tests_name("wss inbound", tests,
	    tinbound_setup, tinbound_teardown);
}
