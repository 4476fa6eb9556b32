/*
 * Unit tests for src/wss/wss_swa.c: the canonical forms of SwA 1.1 5.4.1
 * / 5.4.2 byte for byte (wss_swa_canon() over a table, synthesised
 * headers, empty parts, the c14n growth cap and the XML limits), and the
 * streaming transforms giving exactly what wss_swa_canon() gives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testswa.h"
#include "testutil.h"

/* ---- canonical forms, byte for byte ---- */

struct canon_case {
	int complete;
	const char *type;    /* Content-Type value of the part */
	const char *headers; /* raw header block, NULL = none */
	const char *in;
	const char *want;    /* NULL: canonicalization fails */
};

static const struct canon_case canon_cases[] = {
	/* SwA 5.4.2 content */
	{ 0, "text/plain", NULL, "a\nb\r\nc\rd\r", "a\r\nb\r\nc\r\nd\r\n" },
	{ 0, "text/html; charset=utf-8", NULL, "x\n", "x\r\n" },
	{ 0, NULL, NULL, "x\n", "x\r\n" },
	{ 0, "application/octet-stream", NULL, "a\nb\r", "a\nb\r" },
	{ 0, "application/gzip", NULL, "", "" },
	{ 0, "application/xml", NULL, xml_att, xml_att_same },
	{ 0, "Text/XML; charset=UTF-8", NULL, "<r/>", "<r></r>" },
	{ 0, "image/svg+xml", NULL, "<svg xmlns='urn:s'/>",
	  "<svg xmlns=\"urn:s\"></svg>" },
	{ 0, "text/xml", NULL, "<?pi x?><r a='&amp;'>\r\n</r>",
	  "<?pi x?>\n<r a=\"&amp;\">\n</r>" },
	{ 0, "application/xml", NULL, "<r xmlns=\"urn:d\" xmlns:p=\"urn:p\" "
	  "xml:lang=\"en\"><p:c p:at=\"1\"><d xmlns=\"\"/></p:c><e attr="
	  "\"a&#10;b\"/></r>", "<r xmlns=\"urn:d\" xml:lang=\"en\"><p:c "
	  "xmlns:p=\"urn:p\" p:at=\"1\"><d xmlns=\"\"></d></p:c><e attr="
	  "\"a&#xA;b\"></e></r>" },
	{ 0, "application/xml", NULL, "<?xml version=\"1.0\" encoding="
	  "\"ISO-8859-1\"?><r>\xe9</r>", "<r>\xc3\xa9</r>" },
	{ 0, "application/xml", NULL, "not xml", NULL },
	{ 0, "application/xml", NULL, "", NULL },
	{ 0, "application/xml", NULL,
	  "<!DOCTYPE r [<!ENTITY e \"boom\">]><r>&e;</r>", NULL },
	{ 0, "application/xml", NULL, "<!DOCTYPE r SYSTEM \"file:///etc/"
	  "passwd\"><r/>", NULL },
	/* SwA 5.4.1 headers + content */
	{ 1, "text/xml", "Content-Type: Text/XML; Charset=UTF-8 (comment)\r\n"
	  "Content-ID: <p1@x>\r\nContent-Transfer-Encoding: binary\r\n"
	  "Content-Disposition: attachment;\r\n filename=\"Report.XML\"; "
	  "size=12\r\nX-Other: y\r\n", "<r/>",
	  "Content-Disposition:attachment;filename=\"report.xml\";"
	  "size=\"12\"\r\nContent-ID:<p1@x>\r\nContent-Type:text/xml;"
	  "charset=\"utf-8\"\r\n<r></r>" },
	{ 1, NULL, "Content-ID: <a>\r\n", "x\n",
	  "Content-ID:<a>\r\nContent-Type:text/plain;charset=\"us-ascii\""
	  "\r\nx\r\n" },
	{ 1, "application/octet-stream", "Content-Description: =?utf-8?q?"
	  "caf=C3=A9_au_lait?= (milk)\r\nContent-Type: application/"
	  "octet-stream\r\n", "\n",
	  "Content-Description:caf\xc3\xa9 au lait\r\nContent-Type:"
	  "application/octet-stream\r\n\n" },
	{ 1, "x/y", "Content-Description: =?UTF-8*en?B?w6k=?= \r\n "
	  "=?utf-8?Q?x?= y\r\n", "",
	  "Content-Description:\xc3\xa9x y\r\nContent-Type:text/plain;"
	  "charset=\"us-ascii\"\r\n" },
	{ 1, "x/y", "Content-Description: =?koi8-r?b?wQ==?=\r\n", "", NULL },
	{ 1, "x/y", "Content-Description: =?iso-8859-1?b?6Q==?=\r\n", "",
	  NULL },
	{ 1, "x/y", "Content-Description: =?utf-8?q?a=00b?=\r\n", "", NULL },
	{ 1, "x/y", "Content-Description: =?utf-8?b?!!!?=\r\n", "", NULL },
	{ 1, "x/y", "Content-Description: a =?x b ?= c\r\n", "",
	  "Content-Description:a =?x b ?= c\r\nContent-Type:text/plain;"
	  "charset=\"us-ascii\"\r\n" },
	{ 1, "x/y", "Content-Description: =?utf-8?x?abc?=\r\n", "", NULL },
	{ 1, "x/y", "Content-Type: x/y\r\nContent-Type: x/y\r\n", "", NULL },
	{ 1, "application/pdf", "Content-Disposition: attachment; filename*="
	  "UTF-8''na%C3%AFve.TXT\r\nContent-Type: application/pdf; name=\"a"
	  "\\\"b\\\\c\\d\";;\r\n", "%",
	  "Content-Disposition:attachment;filename=\"na\xc3\xafve.txt\"\r\n"
	  "Content-Type:application/pdf;name=\"a\\\"b\\\\cd\"\r\n%" },
	{ 1, "text/plain", "Content-Type: text/plain; name*0=a; name*1=b\r\n",
	  "", NULL },
	{ 1, "text/plain", "Content-Type: text/plain; a=1; A=2\r\n", "",
	  NULL },
	{ 1, "text/plain", "Content-Type: text/plain; =x\r\n", "", NULL },
	{ 1, "text/plain", "Content-Type: text/plain; a=\"x\r\n", "", NULL },
	{ 1, "text/plain", "Content-Type: text/plain; a*=x\r\n", "", NULL },
	{ 1, "text/plain", "Content-Type: text/plain; a*=''x%0\r\n", "",
	  NULL },
	{ 1, "x/y", "Content-ID: <a> (x\r\n", "", NULL },
	{ 1, "x/y", "Content-Location: http://e.org/\r\n\ta b \r\n"
	  "Content-Type: X/Y\r\n", "",
	  "Content-Location:http://e.org/\ta b\r\nContent-Type:x/y\r\n" },
};

/* wss_swa_canon() over the table. */
static void
test_canon(void **state)
{
	const struct canon_case *c;
	struct wss_part part;
	xmlSecBufferPtr out;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		c = &canon_cases[i];
		memset(&part, 0, sizeof(part));
		part.content_id = "id@x";
		part.content_type = c->type;
		part.headers = c->headers;
		part.headers_len = c->headers != NULL ? strlen(c->headers) : 0;
		out = xmlSecBufferCreate(0);
		assert_non_null(out);
		rc = wss_swa_canon(&part, (const unsigned char *)c->in,
		    strlen(c->in), c->complete, NULL, out);
		if (c->want == NULL) {
			if (rc != -1)
				fail_msg("case %zu: canonicalized", i);
		} else {
			if (rc != 0)
				fail_msg("case %zu: failed", i);
			if (xmlSecBufferGetSize(out) != strlen(c->want) ||
			    (c->want[0] != '\0' && memcmp(xmlSecBufferGetData(
			    out), c->want, strlen(c->want)) != 0))
				fail_msg("case %zu: got \"%.*s\"", i,
				    (int)xmlSecBufferGetSize(out),
				    (const char *)xmlSecBufferGetData(out));
		}
		xmlSecBufferDestroy(out);
	}
}

/* Without headers, Complete uses the part's Content-ID and Content-Type. */
static void
test_canon_synthesised(void **state)
{
	static const char want[] = "Content-ID:<p@x>\r\nContent-Type:"
	    "application/octet-stream\r\nab";
	struct wss_part part;
	xmlSecBufferPtr out = xmlSecBufferCreate(0);

	(void)state;
	memset(&part, 0, sizeof(part));
	part.content_id = "p@x";
	part.content_type = "Application/Octet-Stream";
	assert_int_equal(wss_swa_canon(&part, (const unsigned char *)"ab", 2,
	    1, NULL, out), 0);
	assert_int_equal(xmlSecBufferGetSize(out), sizeof(want) - 1);
	assert_memory_equal(xmlSecBufferGetData(out), want, sizeof(want) - 1);
	xmlSecBufferDestroy(out);
}

/*
 * Found by fuzz_wss (UBSan: pointer arithmetic on NULL): an empty text
 * attachment reaches the transform as xmlsec's empty buffer, data NULL.
 * Canonical forms of nothing are empty (Complete: the headers alone), and
 * a signature over an empty text part verifies.
 */
static void
test_canon_empty(void **state)
{
	static const char *const types[] = { "text/plain", "text/csv",
		"application/octet-stream" };
	static const char want[] = "Content-ID:<p@x>\r\nContent-Type:"
	    "text/plain\r\n";
	struct wss_part part, parts[3];
	xmlSecBufferPtr out = xmlSecBufferCreate(0);
	unsigned bad = 0;
	char *signed_xml;
	size_t i;

	(void)state;
	assert_non_null(out);
	memset(&part, 0, sizeof(part));
	part.content_id = "p@x";
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		part.content_type = types[i];
		assert_int_equal(wss_swa_canon(&part, NULL, 0, 0, NULL, out), 0);
		assert_int_equal(xmlSecBufferGetSize(out), 0);
	}
	part.content_type = "text/plain";
	assert_int_equal(wss_swa_canon(&part, NULL, 0, 1, NULL, out), 0);
	assert_int_equal(xmlSecBufferGetSize(out), sizeof(want) - 1);
	assert_memory_equal(xmlSecBufferGetData(out), want, sizeof(want) - 1);
	xmlSecBufferDestroy(out);
	make_parts(parts);
	parts[1].len = 0;
	signed_xml = sign_uris(parts, 3, round_uris, 3,
	    wss_swa_content_sig_id());
	assert_non_null(signed_xml);
	assert_int_equal(verify_xml(signed_xml, parts, 3, &bad), 0);
	free(signed_xml);
}

/* Exclusive c14n repeats an unused root declaration on every child: the
 * canonical form is capped (8 times the input plus 1 MiB). */
static void
test_canon_growth_cap(void **state)
{
	struct wss_part part;
	xmlSecBufferPtr out = xmlSecBufferCreate(0);
	char *doc = malloc(64 * 1024), *p;
	size_t i;

	(void)state;
	assert_non_null(doc);
	p = doc + sprintf(doc, "<r xmlns:a=\"urn:");
	memset(p, 'n', 1000);
	p += 1000;
	p += sprintf(p, "\">");
	for (i = 0; i < 2000; i++)
		p += sprintf(p, "<a:x/>");
	p += sprintf(p, "</r>");
	memset(&part, 0, sizeof(part));
	part.content_type = "application/xml";
	assert_int_equal(wss_swa_canon(&part, (const unsigned char *)doc,
	    (size_t)(p - doc), 0, NULL, out), -1);
	/* 500 children fit: about 0.5 MiB */
	xmlSecBufferEmpty(out);
	p = doc + 1018 + 500 * 6;
	p += sprintf(p, "</r>");
	assert_int_equal(wss_swa_canon(&part, (const unsigned char *)doc,
	    (size_t)(p - doc), 0, NULL, out), 0);
	assert_true(xmlSecBufferGetSize(out) > 500 * 1000);
	xmlSecBufferDestroy(out);
	free(doc);
}

/* Issue 10 item 3: an XML part is canonicalized under the limits given
 * (inbound: the request's), not under fixed ones: depth, nodes, and the
 * memory budget, which must hold the part's copy and libxml2's allocations
 * for its parse (2003 elements: far more than 64 KiB). */
static void
test_canon_limits(void **state)
{
	static const struct {
		struct wss_swa_limits lim;
		int ok;
	} cases[] = {
		{ { 64, 64, 100000, 0 }, 1 },
		{ { 2, 64, 100000, 0 }, 0 },             /* depth 3 */
		{ { 3, 64, 100000, 0 }, 1 },
		{ { 64, 64, 2000, 0 }, 0 },              /* 2001+ elements */
		{ { 64, 64, 100000, 64 << 20 }, 1 },
		{ { 64, 64, 100000, 64 << 10 }, 0 },     /* the parse's memory */
		{ { 64, 64, 100000, 8000 }, 0 },         /* not even the copy */
	};
	struct wss_part part;
	xmlSecBufferPtr out = xmlSecBufferCreate(0);
	char doc[16384], *p = doc;
	size_t i, len;
	int rc;

	(void)state;
	p += sprintf(p, "<r><s><t/></s>");
	for (i = 0; i < 2000; i++)
		p += sprintf(p, "<a/>");
	p += sprintf(p, "</r>");
	len = (size_t)(p - doc);
	memset(&part, 0, sizeof(part));
	part.content_type = "application/xml";
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		xmlSecBufferEmpty(out);
		rc = wss_swa_canon(&part, (const unsigned char *)doc, len, 0,
		    &cases[i].lim, out);
		if (rc != (cases[i].ok ? 0 : -1))
			fail_msg("case %zu: rc %d", i, rc);
	}
	xmlSecBufferDestroy(out);
}

/* ---- streaming: the transforms against wss_swa_canon() ---- */

/* What transform t makes of the bound cid: uri through the resolver
 * (octets pumped in 1 KiB pieces) into out; xmlSecTransformCtxUriExecute's
 * result. */
static int
fetch_all(const char *uri, xmlSecTransformId t, xmlSecBufferPtr out)
{
	xmlSecTransformCtxPtr ctx = xmlSecTransformCtxCreate();
	int rc;

	assert_non_null(ctx);
	ctx->enabledUris = xmlSecTransformUriTypeAny;
	ctx->uri = xmlStrdup((const xmlChar *)uri);
	assert_non_null(xmlSecTransformCtxCreateAndAppend(ctx, t));
	rc = xmlSecTransformCtxUriExecute(ctx, (const xmlChar *)uri);
	if (rc == 0)
		assert_int_equal(xmlSecBufferSetData(out, xmlSecBufferGetData(
		    ctx->result), xmlSecBufferGetSize(ctx->result)), 0);
	xmlSecTransformCtxDestroy(ctx);
	return rc;
}

/* The same, with the octets pushed in one piece, as
 * xmlSecTransformCtxBinaryExecute does (which would refuse the URI the
 * transform needs; the part must be the one the resolver served last, as
 * fetch_all leaves it): the transform then works through them in slices. */
static int
push_all(const char *uri, xmlSecTransformId t, const struct wss_part *part,
    xmlSecBufferPtr out)
{
	xmlSecTransformCtxPtr ctx = xmlSecTransformCtxCreate();
	int rc;

	assert_non_null(ctx);
	assert_non_null(xmlSecTransformCtxCreateAndAppend(ctx, t));
	assert_int_equal(xmlSecTransformCtxPrepare(ctx,
	    xmlSecTransformDataTypeBin), 0);
	ctx->uri = xmlStrdup((const xmlChar *)uri);
	rc = xmlSecTransformPushBin(ctx->first, part->data,
	    (xmlSecSize)part->len, 1, ctx);
	if (rc == 0)
		assert_int_equal(xmlSecBufferSetData(out, xmlSecBufferGetData(
		    ctx->result), xmlSecBufferGetSize(ctx->result)), 0);
	xmlSecTransformCtxDestroy(ctx);
	return rc;
}

/* Both signature transforms, pumped and pushed whole, give exactly what
 * wss_swa_canon() gives for part p of parts (bound here). */
static void
assert_streams_like_canon(struct wss_part *parts, size_t n, size_t p)
{
	xmlSecBufferPtr want = xmlSecBufferCreate(0);
	xmlSecBufferPtr got = xmlSecBufferCreate(0);
	char uri[128];
	int complete;

	assert_non_null(want);
	assert_non_null(got);
	(void)snprintf(uri, sizeof(uri), "cid:%s", parts[p].content_id);
	wss_swa_bind(parts, n, NULL);
	for (complete = 0; complete <= 1; complete++) {
		xmlSecTransformId t = complete ? wss_swa_complete_sig_id() :
		    wss_swa_content_sig_id();

		xmlSecBufferEmpty(want);
		assert_int_equal(wss_swa_canon(&parts[p], parts[p].data,
		    parts[p].len, complete, NULL, want), 0);
		assert_int_equal(fetch_all(uri, t, got), 0);
		assert_int_equal(xmlSecBufferGetSize(got),
		    xmlSecBufferGetSize(want));
		assert_memory_equal(xmlSecBufferGetData(got),
		    xmlSecBufferGetData(want), xmlSecBufferGetSize(want));
		assert_int_equal(push_all(uri, t, &parts[p], got), 0);
		assert_int_equal(xmlSecBufferGetSize(got),
		    xmlSecBufferGetSize(want));
		assert_memory_equal(xmlSecBufferGetData(got),
		    xmlSecBufferGetData(want), xmlSecBufferGetSize(want));
	}
	wss_swa_unbind();
	xmlSecBufferDestroy(want);
	xmlSecBufferDestroy(got);
}

/*
 * Text streams through the Content transform piece by piece: CR, LF and
 * CRLF at every place around the edges of the 1 KiB pieces the resolver
 * serves and of the 64 KiB slices of a bulk push (a CRLF split between two
 * pieces is one line end, a CR ending a piece and an LF starting the next
 * too, a lone CR or LF at a piece's edge its own).  Binary and XML parts,
 * large ones too, come out as wss_swa_canon() makes them.
 */
static void
test_stream_canon(void **state)
{
	static const char *const ends[] = { "\r\n", "\r", "\n", "\n\r",
		"\r\r\n\n" };
	size_t big = (size_t)3 << 20, i, j, k, len;
	unsigned char *text = malloc(big), *bin = malloc(big);
	char *xml = malloc(big);
	struct wss_part parts[3];

	(void)state;
	assert_non_null(text);
	assert_non_null(bin);
	assert_non_null(xml);
	memset(parts, 0, sizeof(parts));
	parts[0].content_id = "text@t";
	parts[0].content_type = "text/plain; charset=utf-8";
	parts[1].content_id = "bin@t";
	parts[1].content_type = "application/octet-stream";
	parts[2].content_id = "xml@t";
	parts[2].content_type = "application/xml";
	for (i = 0; i < big; i++) {
		text[i] = (unsigned char)('a' + i % 26);
		bin[i] = (unsigned char)(i * 2654435761u >> 13);
	}
	/* each line end starts 0..3 octets before its own 64 KiB edge (which
	 * is a 1 KiB edge too) */
	for (i = 0, j = 0; j < sizeof(ends) / sizeof(ends[0]); j++)
		for (k = 0; k < 4; k++, i++)
			memcpy(text + ((size_t)64 << 10) * (i + 1) - k, ends[j],
			    strlen(ends[j]));
	parts[0].data = text;
	parts[0].len = big;
	parts[1].data = bin;
	parts[1].len = big;
	len = (size_t)sprintf(xml, "<r xmlns=\"urn:r\">");
	while (len < big - 64)
		len += (size_t)sprintf(xml + len, "<e  b='1' a=\"2\">x</e>\n");
	len += (size_t)sprintf(xml + len, "</r>");
	parts[2].data = (const unsigned char *)xml;
	parts[2].len = len;
	for (i = 0; i < 3; i++)
		assert_streams_like_canon(parts, 3, i);
	/* short and empty parts too */
	parts[0].len = 1025;
	parts[1].len = 0;
	parts[2].data = (const unsigned char *)xml_att;
	parts[2].len = strlen(xml_att);
	for (i = 0; i < 3; i++)
		assert_streams_like_canon(parts, 3, i);
	free(text);
	free(bin);
	free(xml);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_canon),
		cmocka_unit_test(test_canon_synthesised),
		cmocka_unit_test_teardown(test_canon_empty, unbind),
		cmocka_unit_test(test_canon_growth_cap),
		cmocka_unit_test(test_canon_limits),
		cmocka_unit_test_teardown(test_stream_canon, unbind),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
