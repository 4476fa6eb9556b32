/*
 * Unit tests for src/wss/wss_swa.c: SwA 1.1 signatures over attachments
 * verify — recorded Holodeck and AS4.NET messages from ../shared, round
 * trips through the Attachment-Content and Attachment-Complete signature
 * transforms, and a large binary attachment streamed through them
 * (testswa.h: the key and the signing helpers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testswa.h"
#include "testutil.h"

#define HOLODECK "corpus/messages/thomsonreuters_eessi-as4.net/source/" \
	"Eu.EDelivery.AS4.ComponentTests/Resources/signed_holodeck_message.as4"
#define HOLODECK_CERT "corpus/keys/3da5db472d77.pem" /* AccessPointB */
#define ISSUERSERIAL "corpus/messages/thomsonreuters_eessi-as4.net/source/" \
	"Eu.EDelivery.AS4.UnitTests/Resources/" \
	"as4-encrypted-signed-issuerserial.as4"
#define ISSUERSERIAL_X "corpus/extracted/thomsonreuters_eessi-as4.net/" \
	"source/Eu.EDelivery.AS4.UnitTests/Resources/" \
	"as4-encrypted-signed-issuerserial.as4"
#define ISSUERSERIAL_P1 \
	"b545c3a0-e57f-46aa-862f-381eb4b7009-291596031@CLT-SMOREELS.m.bin"
#define ISSUERSERIAL_P2 \
	"b545c3a0-e57f-46aa-862f-381eb4b7009-1650194442@CLT-SMOREELS..bin"
#define ISSUERSERIAL_CERT "corpus/keys/5e320e3a1dda.pem" /* AccessPointA */
#define MAX_PARTS 8

/* Exactly reference k failed first (xmlsec may stop after it). */
static void
assert_first_bad(unsigned bad, unsigned k)
{
	assert_int_equal(bad & ((2u << k) - 1), 1u << k);
}

/* ---- recorded messages ---- */

/* Value of header name in the raw block [h, end), or NULL (arena copy). */
static char *
header_value(struct arena *a, const char *h, const char *end,
    const char *name)
{
	size_t n = strlen(name);
	const char *p, *e;

	for (p = h; p < end; p = e + 1) {
		e = memchr(p, '\n', (size_t)(end - p));
		if (e == NULL)
			e = end;
		if ((size_t)(e - p) > n + 1 && strncasecmp(p, name, n) == 0 &&
		    p[n] == ':') {
			for (p += n + 1; *p == ' '; p++)
				;
			return arena_strndup(a, p, (size_t)(e - p) -
			    (e[-1] == '\r'));
		}
	}
	return NULL;
}

/*
 * A test-only multipart splitter (this test links no mime module): the
 * boundary from the first line, then per part its header block, Content-ID
 * (without "<>"), Content-Type and body.  Part 0 is the envelope.
 */
static size_t
split_mime(struct arena *a, char *body, size_t len, struct wss_part *parts)
{
	char delim[128], *p, *end = body + len, *hend, *next;
	size_t n = 0, dlen;

	p = memchr(body, '\r', len);
	assert_non_null(p);
	dlen = (size_t)(p - body);
	assert_true(dlen + 3 < sizeof(delim));
	delim[0] = '\r';
	delim[1] = '\n';
	memcpy(delim + 2, body, dlen);
	dlen += 2;
	for (p += 2; n < MAX_PARTS; p = next + dlen + 2, n++) {
		hend = memmem(p, (size_t)(end - p), "\r\n\r\n", 4);
		next = memmem(p, (size_t)(end - p), delim, dlen);
		assert_non_null(hend);
		assert_non_null(next);
		parts[n].headers = p;
		parts[n].headers_len = (size_t)(hend + 2 - p);
		parts[n].content_id = header_value(a, p, hend, "Content-ID");
		parts[n].content_type = header_value(a, p, hend,
		    "Content-Type");
		assert_non_null(parts[n].content_id);
		parts[n].content_id = arena_strndup(a, parts[n].content_id + 1,
		    strlen(parts[n].content_id) - 2); /* strip "<>" */
		parts[n].data = (unsigned char *)hend + 4;
		parts[n].len = (size_t)(next - hend - 4);
		if (strncmp(next + dlen, "--", 2) == 0)
			return n + 1;
	}
	fail_msg("too many parts");
	return 0;
}

/* A recorded message from ../shared, split and parsed, and its signer. */
struct corpus {
	struct arena *a;
	char *body;
	size_t len, n;               /* n parts, parts[0] the envelope */
	struct wss_part parts[MAX_PARTS];
	xmlDocPtr doc;
	struct wss_cert *cert;
	xmlSecKeyPtr key;
};

/* Load msg and the signer certificate cert (paths under ../shared);
 * -1 when ../shared does not have the message. */
static int
corpus_open(struct corpus *c, const char *msg, const char *cert)
{
	char path[4096];
	struct err err;

	memset(c, 0, sizeof(*c));
	err_clear(&err);
	c->body = testutil_read_shared(msg, &c->len);
	if (c->body == NULL)
		return -1;
	c->a = arena_new(0);
	(void)snprintf(path, sizeof(path), "%s/%s", testutil_shared_dir(),
	    cert);
	assert_int_equal(wss_cert_load(path, &c->cert, &err), 0);
	c->key = wss_cert_xmlsec(c->cert);
	assert_non_null(c->key);
	c->n = split_mime(c->a, c->body, c->len, c->parts);
	assert_int_equal(xml_parse(c->a, (const char *)c->parts[0].data,
	    c->parts[0].len, NULL, &c->doc, &err), 0);
	assert_int_equal(wss_ids_index(c->doc, &err), 0);
	return 0;
}

/* Free what corpus_open() made. */
static void
corpus_close(struct corpus *c)
{
	xmlSecKeyDestroy(c->key);
	wss_cert_free(c->cert);
	arena_free(c->a);
	free(c->body);
}

/* signed_holodeck_message.as4 verifies with all 4 references (2 of them
 * cid:, gzip parts); one changed attachment byte fails that reference. */
static void
test_holodeck_corpus(void **state)
{
	struct corpus c;
	unsigned char *att;
	unsigned bad;

	(void)state;
	if (corpus_open(&c, HOLODECK, HOLODECK_CERT) < 0)
		testutil_skip("../shared corpus (signed_holodeck_message.as4) "
		    "not found");
	assert_int_equal(c.n, 3);
	assert_string_equal(c.parts[1].content_type, "application/gzip");
	assert_string_equal(c.parts[2].content_type, "application/gzip");
	assert_int_equal(c.parts[1].len, 296385);
	assert_int_equal(c.parts[2].len, 164);
	wss_swa_bind(c.parts + 1, c.n - 1, NULL);
	assert_int_equal(verify(c.doc, c.key, &bad), 0);
	assert_int_equal(bad, 0);
	/* flip one byte of the second attachment: its reference (#4) fails */
	att = (unsigned char *)c.body +
	    (c.parts[2].data - (const unsigned char *)c.body);
	att[100] ^= 1;
	assert_int_equal(verify(c.doc, c.key, &bad), 1);
	assert_int_equal(bad, 1u << 3);
	att[100] ^= 1;
	assert_int_equal(verify(c.doc, c.key, &bad), 0);
	/* unbound, the cid: references cannot be resolved at all */
	wss_swa_unbind();
	assert_int_equal(verify(c.doc, c.key, NULL), -1);
	corpus_close(&c);
}

/* as4-encrypted-signed-issuerserial.as4 (sign, then encrypt): the
 * signature covers the plaintext, so it verifies over the decrypted parts
 * (extracted/ ground truth) and not over the ciphertext. */
static void
test_issuerserial_corpus(void **state)
{
	struct corpus c;
	char path[512], *plain[2];
	size_t i, len[2];
	unsigned bad;

	(void)state;
	if (corpus_open(&c, ISSUERSERIAL, ISSUERSERIAL_CERT) < 0)
		testutil_skip("../shared corpus (as4-encrypted-signed-"
		    "issuerserial.as4) not found");
	assert_int_equal(c.n, 3);
	wss_swa_bind(c.parts + 1, c.n - 1, NULL);
	assert_int_equal(verify(c.doc, c.key, &bad), 1);
	assert_first_bad(bad, 2);
	for (i = 0; i < 2; i++) {
		(void)snprintf(path, sizeof(path), "%s/decrypted-%s",
		    ISSUERSERIAL_X, i == 0 ? ISSUERSERIAL_P1 : ISSUERSERIAL_P2);
		plain[i] = testutil_read_shared(path, &len[i]);
		assert_non_null(plain[i]);
		c.parts[i + 1].data = (const unsigned char *)plain[i];
		c.parts[i + 1].len = len[i];
	}
	assert_int_equal(verify(c.doc, c.key, &bad), 0);
	free(plain[0]);
	free(plain[1]);
	corpus_close(&c);
}

/* Attachment-Content-Signature-Transform: canonical equivalents verify,
 * real changes fail their reference. */
static void
test_roundtrip_content(void **state)
{
	static const char doctype[] = "<!DOCTYPE a:doc [<!ENTITY e \"x\">]>"
	    "<a:doc xmlns:a=\"urn:a\">&e;</a:doc>";
	struct wss_part parts[3];
	unsigned bad = 0;
	char *signed_xml;

	(void)state;
	make_parts(parts);
	signed_xml = sign_uris(parts, 3, round_uris, 3,
	    wss_swa_content_sig_id());
	assert_non_null(signed_xml);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 0);
	/* the same XML and text in other octets: still valid */
	parts[0].data = (const unsigned char *)xml_att_same;
	parts[0].len = strlen(xml_att_same);
	parts[1].data = (const unsigned char *)text_att_crlf;
	parts[1].len = strlen(text_att_crlf);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 0);
	/* other XML, other text, other octets */
	parts[0].data = (const unsigned char *)"<a:doc xmlns:a=\"urn:a\"/>";
	parts[0].len = strlen((const char *)parts[0].data);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 1);
	assert_first_bad(bad, 1);
	make_parts(parts);
	parts[1].len--;
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 1);
	assert_first_bad(bad, 2);
	make_parts(parts);
	parts[2].len--;
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 1);
	assert_first_bad(bad, 3);
	/* a DOCTYPE (entity) in the XML attachment: the reference fails */
	make_parts(parts);
	parts[0].data = (const unsigned char *)doctype;
	parts[0].len = strlen(doctype);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), -1);
	assert_null(sign_uris(parts, 3, round_uris, 1,
	    wss_swa_content_sig_id()));
	free(signed_xml);
}

/* Attachment-Complete-Signature-Transform: the listed MIME headers are
 * signed (canonically), other headers are not. */
static void
test_roundtrip_complete(void **state)
{
	struct wss_part parts[3];
	unsigned bad = 0;
	char *signed_xml;

	(void)state;
	make_parts(parts);
	signed_xml = sign_uris(parts, 3, round_uris, 3,
	    wss_swa_complete_sig_id());
	assert_non_null(signed_xml);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 0);
	parts[0].headers = "content-type:Application/XML;Charset=\"utf-8\" "
	    "(c)\r\nX-New: 1\r\nContent-Id:  <p1@t>\r\nContent-Description:"
	    "   report\r\nContent-Transfer-Encoding: binary\r\n";
	parts[0].headers_len = strlen(parts[0].headers);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 0);
	parts[0].headers = "Content-Type: application/xml; charset=UTF-8\r\n"
	    "Content-ID: <p1@t>\r\nContent-Description: other\r\n";
	parts[0].headers_len = strlen(parts[0].headers);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 1);
	assert_first_bad(bad, 1);
	make_parts(parts);
	parts[2].content_type = "application/pdf"; /* synthesised headers */
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 1);
	assert_first_bad(bad, 3);
	make_parts(parts);
	parts[0].headers = "Content-Type: application/xml; charset=UTF-8\r\n"
	    "Content-ID: <p1@t>\r\nContent-Type: text/xml\r\n";
	parts[0].headers_len = strlen(parts[0].headers);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), -1);
	free(signed_xml);
}

/* A large binary attachment signs and verifies, and one changed octet
 * anywhere fails its reference (the digest sees every octet once). */
static void
test_stream_roundtrip_large(void **state)
{
	static const char *const uris[] = { "cid:big@t" };
	size_t big = (size_t)8 << 20, i;
	unsigned char *data = malloc(big);
	struct wss_part parts[1];
	unsigned bad = 0;
	char *signed_xml;

	(void)state;
	assert_non_null(data);
	for (i = 0; i < big; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 11);
	memset(parts, 0, sizeof(parts));
	parts[0].content_id = "big@t";
	parts[0].content_type = "application/octet-stream";
	parts[0].data = data;
	parts[0].len = big;
	signed_xml = sign_uris(parts, 1, uris, 1, wss_swa_content_sig_id());
	assert_non_null(signed_xml);
	assert_int_equal(verify_xml(signed_xml, parts, 1, &bad), 0);
	data[big - 1] ^= 1;
	assert_int_equal(verify_xml(signed_xml, parts, 1, &bad), 1);
	assert_first_bad(bad, 1);
	data[big - 1] ^= 1;
	data[70000] ^= 0x80;
	assert_int_equal(verify_xml(signed_xml, parts, 1, &bad), 1);
	assert_first_bad(bad, 1);
	free(signed_xml);
	free(data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_holodeck_corpus, unbind),
		cmocka_unit_test_teardown(test_issuerserial_corpus, unbind),
		cmocka_unit_test_teardown(test_roundtrip_content, unbind),
		cmocka_unit_test_teardown(test_roundtrip_complete, unbind),
		cmocka_unit_test_teardown(test_stream_roundtrip_large, unbind),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
