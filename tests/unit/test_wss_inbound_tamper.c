/*
 * Unit tests for wss_inbound.c, messages edited after signing as an
 * attacker would (testinbound.h): the NEGATIVE-CASES items 28, 31-37, 39,
 * 40, 45, 46 and 50 that an edit of the serialised message shows (a
 * table, then the edits that need more than one replacement: no Security
 * header, wrapping, a second signature, too many references, a flipped
 * attachment byte), and the issue 10 refusals (an Id reference that is not
 * an NCName, unsigned AES-CBC, a forged SignatureValue checked before any
 * reference, XML attachments parsed under the request's limits); each
 * checked for its exact ebMS code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testinbound.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

struct tcase {
	const char *name;
	const char *from, *to;
	enum pol pol;
	const char *code;
};

static const struct tcase tampered[] = {
	{ "28 security header for another role",
	    "<wsse:Security env:mustUnderstand=\"true\">",
	    "<wsse:Security env:role=\"urn:x\">", P_DEFAULT, "EBMS:0103" },
	{ "32 duplicate id, forged copy first", "<env:Header>",
	    "<env:Header>" WRAP_OPEN "<eb:Messaging wsu:Id=\"msg-1\"/></x:W>",
	    P_DEFAULT, "EBMS:0101" },
	{ "34 http reference", "URI=\"#body-1\"",
	    "URI=\"http://127.0.0.1:9/x\"", P_DEFAULT, "EBMS:0103" },
	{ "34 file reference", "URI=\"#body-1\"", "URI=\"file:///etc/passwd\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "34 xpointer reference", "URI=\"#body-1\"",
	    "URI=\"#xpointer(id('body-1'))\"", P_DEFAULT, "EBMS:0103" },
	{ "34 whole document", "URI=\"#body-1\"", "URI=\"\"", P_DEFAULT,
	    "EBMS:0103" },
	{ "34 bare #", "URI=\"#body-1\"", "URI=\"#\"", P_DEFAULT, "EBMS:0103" },
	{ "34 empty cid", "URI=\"cid:p2@test\"", "URI=\"cid:\"", P_DEFAULT,
	    "EBMS:0103" },
	{ "35 xpath", EXC_T, "<ds:Transform Algorithm=\"http://www.w3.org/TR/"
	    "1999/REC-xpath-19991116\"><ds:XPath>1</ds:XPath></ds:Transform>",
	    P_DEFAULT, "EBMS:0103" },
	{ "35 xpath-filter2", EXC_T, "<ds:Transform Algorithm=\"http://www.w3."
	    "org/2002/06/xmldsig-filter2\"><f:XPath xmlns:f=\"http://www.w3."
	    "org/2002/06/xmldsig-filter2\" Filter=\"union\">/</f:XPath>"
	    "</ds:Transform>", P_DEFAULT, "EBMS:0103" },
	{ "35 xslt", EXC_T, "<ds:Transform Algorithm=\"http://www.w3.org/TR/"
	    "1999/REC-xslt-19991116\"><xsl:stylesheet xmlns:xsl=\"http://www."
	    "w3.org/1999/XSL/Transform\" version=\"1.0\"/></ds:Transform>",
	    P_DEFAULT, "EBMS:0103" },
	{ "35 enveloped-signature", EXC_T, "<ds:Transform Algorithm=\"http://"
	    "www.w3.org/2000/09/xmldsig#enveloped-signature\"/>", P_DEFAULT,
	    "EBMS:0103" },
	{ "35 swa transform on an id reference", EXC_T, "<ds:Transform "
	    "Algorithm=\"" WSS_SWA_NS "Attachment-Content-Signature-"
	    "Transform\"/>", P_DEFAULT, "EBMS:0103" },
	{ "35 c14n with an xpath child", EXC_T, "<ds:Transform Algorithm=\""
	    EXC_C14N "\"><ds:XPath>1</ds:XPath></ds:Transform>", P_DEFAULT,
	    "EBMS:0103" },
	{ "36 six transforms", EXC_T, EXC_T EXC_T EXC_T EXC_T EXC_T EXC_T,
	    P_DEFAULT, "EBMS:0103" },
	{ "36 two transforms", EXC_T, EXC_T EXC_T, P_DEFAULT, "EBMS:0103" },
	{ "37 md5 digest", SHA256_DM, "<ds:DigestMethod Algorithm=\"http://"
	    "www.w3.org/2001/04/xmldsig-more#md5\"/>", P_DEFAULT,
	    "EBMS:0103" },
	{ "40 attribute added to the body", "<env:Body wsu:Id",
	    "<env:Body x=\"1\" wsu:Id", P_DEFAULT, "EBMS:0101" },
	{ "reference to an unknown id", "URI=\"#body-1\"", "URI=\"#nope\"",
	    P_DEFAULT, "EBMS:0101" },
	{ "reference to the token", "URI=\"#body-1\"", "URI=\"#X509-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "element referenced twice", "URI=\"#body-1\"", "URI=\"#msg-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "reference to a missing part", "URI=\"cid:p2@test\"",
	    "URI=\"cid:p3@test\"", P_DEFAULT, "EBMS:0101" },
	{ "two security headers", "<env:Header>",
	    "<env:Header><wsse:Security/>", P_DEFAULT, "EBMS:0103" },
	{ "unknown element in security", "</wsse:Security>",
	    "<x:Y xmlns:x=\"urn:x\"/></wsse:Security>", P_DEFAULT,
	    "EBMS:0103" },
	{ "object in signature", "</ds:Signature>",
	    "<ds:Object/></ds:Signature>", P_DEFAULT, "EBMS:0103" },
	{ "46 unsigned timestamp added", "</wsse:Security>",
	    "<wsu:Timestamp><wsu:Created>2020-01-01T00:00:00Z</wsu:Created>"
	    "</wsu:Timestamp></wsse:Security>", P_DEFAULT, "EBMS:0103" },
	{ "45 timestamp without created", "</wsse:Security>",
	    "<wsu:Timestamp/></wsse:Security>", P_DEFAULT, "EBMS:0101" },
	{ "50 encrypted data in a header wrapper", "</env:Header>",
	    WRAP_OPEN "<xenc:EncryptedData xmlns:xenc=\"" NS_XENC "\" "
	    "Id=\"ED-1\"/></x:W></env:Header>", P_DEFAULT, "EBMS:0101" },
	{ "50 encrypted data in the body", "<env:Body wsu:Id=\"body-1\"/>",
	    "<env:Body wsu:Id=\"body-1\"><xenc:EncryptedData xmlns:xenc=\""
	    NS_XENC "\"/></env:Body>", P_DEFAULT, "EBMS:0101" },
	{ "encrypted message on a leg without encryption", "</wsse:Security>",
	    "<xenc:EncryptedKey xmlns:xenc=\"" NS_XENC "\"/></wsse:Security>",
	    P_ENC_NEVER, "EBMS:0103" },
	/* issue 10 item 8: "#" + NCName only ('^' is XPointer's escape) */
	{ "8 caret in a reference", "URI=\"#body-1\"", "URI=\"#body^-1\"",
	    P_DEFAULT, "EBMS:0103" },
	{ "8 reference not starting with a letter", "URI=\"#body-1\"",
	    "URI=\"#1body\"", P_DEFAULT, "EBMS:0103" },
	{ "8 colon in a reference", "URI=\"#body-1\"", "URI=\"#b:ody\"",
	    P_DEFAULT, "EBMS:0103" },
};

/* Each edit of a valid message, with its code. */
static void
test_tampered(void **state)
{
	size_t i;
	char *xml;

	(void)state;
	for (i = 0; i < sizeof(tampered) / sizeof(tampered[0]); i++) {
		xml = tamper(sign_default(), tampered[i].from, tampered[i].to);
		expect(tampered[i].name, xml, tampered[i].pol,
		    tampered[i].code);
		free(xml);
	}
}

/* 28: no Security header at all where signing (or encryption) is required. */
static void
test_unsigned(void **state)
{
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");

	(void)state;
	xml = tamper(xml, sec, "");
	expect("28 unsigned", xml, P_DEFAULT, "EBMS:0103");
	expect("51 unsigned, encryption required", xml, P_ONLY_ENC,
	    "EBMS:0103");
	free(sec);
	free(xml);
}

/* 31: the signed Body moved into a header wrapper keeping its Id, another
 * Body in place; 33: the same with eb:Messaging. */
static void
test_wrapping(void **state)
{
	char *xml = sign_default(), *msg, *wrapped;

	(void)state;
	xml = tamper(xml, "<env:Body wsu:Id=\"body-1\"/>",
	    "<env:Body><x:Evil xmlns:x=\"urn:x\"/></env:Body>");
	xml = tamper(xml, "</env:Header>", WRAP_OPEN
	    "<env:Body wsu:Id=\"body-1\"/></x:W></env:Header>");
	expect("31 body wrapped", xml, P_DEFAULT, "EBMS:0101");
	free(xml);

	xml = sign_default();
	msg = slice(xml, "<eb:Messaging", "</eb:Messaging>");
	wrapped = malloc(strlen(msg) + 64);
	assert_non_null(wrapped);
	(void)sprintf(wrapped, "%s%s</x:W>", WRAP_OPEN, msg);
	xml = tamper(xml, msg, "<eb:Messaging env:mustUnderstand=\"true\" "
	    "wsu:Id=\"forged\"><eb:UserMessage/></eb:Messaging>");
	xml = tamper(xml, "</env:Header>", wrapped);
	xml = tamper(xml, "</x:W>", "</x:W></env:Header>");
	expect("33 messaging wrapped", xml, P_DEFAULT, "EBMS:0101");
	free(wrapped);
	free(msg);
	free(xml);
}

/* A second ds:Signature, and a signature without KeyInfo. */
static void
test_signature_shape(void **state)
{
	char *xml = sign_default(), *sig = slice(xml, "<ds:Signature",
	    "</ds:Signature>"), *ki = slice(xml, "<ds:KeyInfo",
	    "</ds:KeyInfo>");
	char *two = malloc(2 * strlen(sig) + 1);

	(void)state;
	assert_non_null(two);
	(void)sprintf(two, "%s%s", sig, sig);
	xml = tamper(xml, sig, two);
	expect("two signatures", xml, P_DEFAULT, "EBMS:0103");
	free(xml);
	xml = tamper(sign_default(), ki, "");
	expect("no key info", xml, P_DEFAULT, "EBMS:0101");
	free(xml);
	free(two);
	free(sig);
	free(ki);
}

/* 36: more than 30 references (copies of the first one). */
static void
test_too_many_references(void **state)
{
	char *xml = sign_default(), *ref = slice(xml, "<ds:Reference",
	    "</ds:Reference>"), *many;
	size_t i, n = strlen(ref);

	(void)state;
	many = malloc(31 * n + 1);
	assert_non_null(many);
	for (i = 0; i < 31; i++)
		memcpy(many + i * n, ref, n);
	many[31 * n] = '\0';
	xml = tamper(xml, ref, many);
	expect("36 34 references", xml, P_DEFAULT, "EBMS:0103");
	free(many);
	free(ref);
	free(xml);
}

/* 39: one attachment byte flipped after signing. */
static void
test_attachment_flipped(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default();
	unsigned char copy[sizeof(part2)];
	struct run r;

	(void)state;
	run_init(&r, P_DEFAULT);
	memcpy(copy, part2, sizeof(copy));
	copy[5] ^= 0x01;
	r.parts[1].data = copy;
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	/* a signed cid: reference to a part the message does not have */
	run_init(&r, P_DEFAULT);
	r.n_parts = 1;
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	arena_free(a);
	free(xml);
}

/* Issue 10 item 8: an Id with '^' named by "#" + that Id (the ID index
 * finds it; xmlsec's XPointer would unescape "^^" to "^") is refused. */
static void
test_id_reference_ncname(void **state)
{
	char *xml = sign_default();

	(void)state;
	xml = tamper(xml, "wsu:Id=\"body-1\"", "wsu:Id=\"body^^-1\"");
	xml = tamper(xml, "URI=\"#body-1\"", "URI=\"#body^^-1\"");
	expect("8 id with carets", xml, P_DEFAULT, "EBMS:0103");
	free(xml);
}

/* Issue 10 item 6: AES-CBC authenticates nothing, so CBC-encrypted
 * payloads without a signature are refused before any cryptography, even
 * where signing is optional. */
static void
test_cbc_unsigned(void **state)
{
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sec = slice(xml, "<wsse:Security",
	    "</wsse:Security>");
	struct run r;

	(void)state;
	xml = tamper(xml, sec, "<wsse:Security><xenc:EncryptedData xmlns:xenc="
	    "\"" NS_XENC "\"><xenc:EncryptionMethod Algorithm=\"" NS_XENC
	    "aes128-cbc\"/></xenc:EncryptedData></wsse:Security>");
	run_init(&r, P_SIGN_OPTIONAL);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0103");
	assert_non_null(strstr(r.err.msg, "AES-CBC"));
	arena_free(a);
	free(sec);
	free(xml);
}

/* Issue 10 item 3: a forged SignatureValue is refused before a single
 * reference is dereferenced: an XML attachment that would not even parse
 * is never looked at (the reason names the SignatureValue, not the part). */
static void
test_signature_value_first(void **state)
{
	static const char broken[] = "<x:Doc xmlns:x=\"urn:x\">one</x:Do";
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *sv, *p, orig;
	struct run r;

	(void)state;
	sv = strstr(xml, "<ds:SignatureValue>");
	assert_non_null(sv);
	p = sv + strlen("<ds:SignatureValue>") + 10;
	orig = *p;
	*p = orig == 'A' ? 'B' : 'A';
	run_init(&r, P_DEFAULT);
	r.parts[0].data = (const unsigned char *)broken;
	r.parts[0].len = strlen(broken);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	assert_non_null(strstr(r.err.detail, "SignatureValue does not verify"));
	assert_null(strstr(r.err.detail, "XML attachment"));
	/* the same part under the genuine signature: xmlsec gets to it */
	*p = orig;
	run_init(&r, P_DEFAULT);
	r.parts[0].data = (const unsigned char *)broken;
	r.parts[0].len = strlen(broken);
	assert_int_equal(process(a, xml, &r), -1);
	assert_string_equal(r.err.ebms_code, "EBMS:0101");
	if (strstr(r.err.detail, "XML attachment refused") == NULL)
		fail_msg("%s", r.err.detail);
	arena_free(a);
	free(xml);
}

/* Issue 10 item 3: an XML attachment is parsed under the policy's (the
 * request's) limits: nodes, depth and memory; the valid message passes
 * under the defaults. */
static void
test_xml_attachment_limits(void **state)
{
	static const enum pol pols[] = { P_XML_NODES_1, P_XML_DEPTH_1,
		P_XML_MEMORY_1 };
	static const char *const why[] = { "XML too complex",
		"XML too complex", "memory budget" };
	struct arena *a = arena_new(0);
	char *xml = sign_default(), *two;
	struct run r;
	size_t i;

	(void)state;
	expect("defaults", xml, P_DEFAULT, NULL);
	two = tamper(strdup(part1), "one", "<x:In>one</x:In>");
	for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		run_init(&r, pols[i]);
		if (pols[i] == P_XML_DEPTH_1)   /* the root alone is depth 1 */
			r.parts[0].data = (const unsigned char *)two;
		if (pols[i] == P_XML_DEPTH_1)
			r.parts[0].len = strlen(two);
		assert_int_equal(process(a, xml, &r), -1);
		assert_string_equal(r.err.ebms_code, "EBMS:0101");
		if (strstr(r.err.detail, why[i]) == NULL)
			fail_msg("%zu: %s", i, r.err.detail);
	}
	free(two);
	arena_free(a);
	free(xml);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_unsigned),
		cmocka_unit_test(test_wrapping),
		cmocka_unit_test(test_signature_shape),
		cmocka_unit_test(test_too_many_references),
		cmocka_unit_test(test_attachment_flipped),
		cmocka_unit_test(test_signature_value_first),
		cmocka_unit_test(test_cbc_unsigned),
		cmocka_unit_test(test_id_reference_ncname),
		cmocka_unit_test(test_xml_attachment_limits),
	};

	return cmocka_run_group_tests_name("wss inbound tamper", tests,
	    tinbound_setup, tinbound_teardown);
}
