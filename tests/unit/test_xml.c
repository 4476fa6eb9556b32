/*
 * Unit tests for src/xml's encodings (xml_enc.c: UTF-8 and UTF-16 only, the
 * declaration and the MIME charset checked against the bytes), its node
 * counting (every node kind), the envelope byte cap and the counted parser
 * memory (xml_mem.c, arena_charge).  Issue 10 items 2 and 3;
 * tests/NEGATIVE-CASES-EXTRA.md "non-UTF-8 encodings", "comment/PI floods".
 * The older parser tests live in test_soap.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uchar.h>

#include <libxml/parser.h>

#include "util/arena.h"
#include "util/err.h"
#include "xml/xml.h"

/* CPU seconds of this process (the floods must be refused at once). */
static double
cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* UTF-16 bytes of s (host order, x86: LE) in malloc'd memory, optionally
 * byte-swapped to BE and with a BOM. */
static char *
utf16(const char16_t *s, int be, int bom, size_t *len)
{
	size_t n = 0, i, o = 0;
	char *out;

	while (s[n] != 0)
		n++;
	out = malloc(2 * n + 2);
	if (bom) {
		out[o++] = be ? (char)0xFE : (char)0xFF;
		out[o++] = be ? (char)0xFF : (char)0xFE;
	}
	for (i = 0; i < n; i++) {
		out[o++] = (char)(be ? s[i] >> 8 : s[i] & 0xFF);
		out[o++] = (char)(be ? s[i] & 0xFF : s[i] >> 8);
	}
	*len = o;
	return out;
}

/* Parse with lim (NULL: defaults); 0 or -1, err filled. */
static int
parse(const char *text, size_t len, const struct xml_limits *lim,
    xmlDocPtr *doc, struct arena *a, struct err *err)
{
	err_clear(err);
	*doc = NULL;
	return xml_parse(a, text, len, lim, doc, err);
}

/* The root's text content and its attribute a, for round-trip checks. */
static void
assert_root(struct arena *a, xmlDocPtr doc, const char *text, const char *attr)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);

	assert_non_null(root);
	assert_string_equal(xml_text(a, root), text);
	if (attr != NULL)
		assert_string_equal(xml_attr(a, root, NULL, "a"), attr);
}

/* UTF-16 in both byte orders, with and without BOM, is read exactly. */
static void
test_xml_utf16_accepted(void **state)
{
	static const char16_t *docs[] = {
		u"<?xml version='1.0' encoding='UTF-16'?><r a='\u00e9'>x\U0001F600</r>",
		u"<?xml version=\"1.0\" encoding=\"utf-16\"?><r a='\u00e9'>x\U0001F600</r>",
		u"<r a='\u00e9'>x\U0001F600</r>",
	};
	size_t i, len;
	int order;

	(void)state;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		for (order = 0; order < 4; order++) {
			/* no BOM needs the "<?" of a declaration to be seen */
			int be = order & 1, bom = (order & 2) || i == 2;
			char *s = utf16(docs[i], be, bom, &len);
			struct arena *a = arena_new(0);
			xmlDocPtr doc;
			struct err err;

			if (parse(s, len, NULL, &doc, a, &err) != 0)
				fail_msg("doc %zu order %d: %s (%s)", i, order,
				    err.msg, err.detail);
			assert_root(a, doc, "x\xF0\x9F\x98\x80", "\xC3\xA9");
			arena_free(a);
			free(s);
		}
}

struct enc_case {
	const char *name;
	const char *text;      /* NULL: UTF-16 in u16 */
	size_t len;            /* 0: strlen(text) */
	const char16_t *u16;
	int legacy;
	const char *msg;       /* NULL: accepted */
};

static const struct enc_case enc_cases[] = {
	{"utf-8 declared", "<?xml version='1.0' encoding='UTF-8'?><r/>", 0,
	    NULL, 0, NULL},
	{"utf-8 lower case", "<?xml version='1.0' encoding='utf-8'?><r/>", 0,
	    NULL, 0, NULL},
	{"utf-8 bom", "\xEF\xBB\xBF<r>\xC3\xA9</r>", 0, NULL, 0, NULL},
	{"utf-7 declared", "<?xml version='1.0' encoding='UTF-7'?>"
	    "<r a+AD0AIg-1+ACI- b+AD0AIg-2+ACI-/>", 0, NULL, 0,
	    "XML encoding must be UTF-8 or UTF-16"},
	{"utf-7 even for attachments", "<?xml version='1.0' encoding='UTF-7'?>"
	    "<r/>", 0, NULL, 1, "XML encoding must be UTF-8 or UTF-16"},
	{"latin-1 declared", "<?xml version='1.0' encoding='ISO-8859-1'?>"
	    "<r>\xE9</r>", 0, NULL, 0, "XML encoding must be UTF-8 or UTF-16"},
	{"latin-1 attachment", "<?xml version='1.0' encoding='ISO-8859-1'?>"
	    "<r>\xE9</r>", 0, NULL, 1, NULL},
	{"windows-1252 attachment", "<?xml version=\"1.0\" encoding="
	    "\"windows-1252\"?><r/>", 0, NULL, 1, NULL},
	{"shift_jis attachment", "<?xml version='1.0' encoding='Shift_JIS'?>"
	    "<r>\x82\xa0</r>", 0, NULL, 1, NULL},
	{"iso-2022-jp attachment", "<?xml version='1.0' encoding="
	    "'ISO-2022-JP'?><r/>", 0, NULL, 1,
	    "XML encoding must be UTF-8 or UTF-16"},
	{"ebcdic declared", "<?xml version='1.0' encoding='IBM037'?><r/>", 0,
	    NULL, 0, "XML encoding must be UTF-8 or UTF-16"},
	{"utf-16 declared on utf-8", "<?xml version='1.0' encoding='UTF-16'?>"
	    "<r/>", 0, NULL, 0, "XML encoding inconsistent"},
	{"utf-8 declared on utf-16", NULL, 0,
	    u"\uFEFF<?xml version='1.0' encoding='UTF-8'?><r/>", 0,
	    "XML encoding inconsistent"},
	{"utf-16be declared on utf-16le", NULL, 0,
	    u"\uFEFF<?xml version='1.0' encoding='UTF-16BE'?><r/>", 0,
	    "XML encoding inconsistent"},
	{"ucs-4", "\0\0\0<\0\0\0r\0\0\0/\0\0\0>", 16, NULL, 0,
	    "XML encoding must be UTF-8 or UTF-16"},
	{"ucs-4 bom", "\xFF\xFE\0\0<\0\0\0r\0\0\0/\0\0\0>\0\0\0", 20, NULL, 0,
	    "XML encoding must be UTF-8 or UTF-16"},
	{"invalid utf-8", "<r a='\xFF'/>", 0, NULL, 0, "XML not well-formed"},
	{"overlong utf-8", "<r>\xC0\xBC</r>", 0, NULL, 0, "XML not well-formed"},
	{"utf-8 surrogate", "<r>\xED\xA0\x80</r>", 0, NULL, 0,
	    "XML not well-formed"},
	{"nul byte", "<r>\0</r>", 8, NULL, 0, "XML not well-formed"},
	{"utf-16 lone surrogate", NULL, 0, u"\uFEFF<r>\xD800</r>", 0,
	    "XML not well-formed"},
	{"utf-16 odd length", "\xFF\xFE<\0r\0/\0>\0\0", 11, NULL, 0,
	    "XML not well-formed"},
};

/* Encodings: UTF-8 and UTF-16 only; declaration and bytes must agree. */
static void
test_xml_encodings(void **state)
{
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(enc_cases) / sizeof(enc_cases[0]); i++) {
		const struct enc_case *c = &enc_cases[i];
		struct xml_limits lim;
		struct arena *a = arena_new(0);
		char *s = NULL;
		xmlDocPtr doc;
		struct err err;
		int rc;

		xml_limits_default(&lim);
		lim.legacy_encodings = c->legacy;
		if (c->text == NULL)
			s = utf16(c->u16, 0, 0, &len);
		else
			len = c->len != 0 ? c->len : strlen(c->text);
		rc = parse(s != NULL ? s : c->text, len, &lim, &doc, a, &err);
		if (c->msg == NULL && rc != 0)
			fail_msg("%s: refused: %s (%s)", c->name, err.msg,
			    err.detail);
		if (c->msg != NULL && (rc != -1 || strcmp(err.msg, c->msg) != 0 ||
		    err.kind != ERR_SOAP || err.soap_code != ERR_SOAP_SENDER ||
		    err.http_status != 400))
			fail_msg("%s: rc %d msg \"%s\"", c->name, rc, err.msg);
		free(s);
		arena_free(a);
	}
}

/* The MIME charset parameter must name UTF-8/UTF-16 and fit the bytes. */
static void
test_xml_charset(void **state)
{
	static const struct {
		const char *charset, *bytes;
		size_t len;
		const char *msg;
	} cases[] = {
		{NULL, "<r/>", 4, NULL},
		{"utf-8", "<r/>", 4, NULL},
		{"UTF-8", "\xEF\xBB\xBF<r/>", 7, NULL},
		{"utf-16", "\xFF\xFE<\0r\0/\0>\0", 10, NULL},
		{"UTF-16LE", "\xFF\xFE<\0r\0/\0>\0", 10, NULL},
		{"UTF-16BE", "\xFE\xFF\0<\0r\0/\0>", 10, NULL},
		{"UTF-16BE", "\xFF\xFE<\0r\0/\0>\0", 10, "XML encoding inconsistent"},
		{"utf-16", "<r/>", 4, "XML encoding inconsistent"},
		{"utf-8", "\xFF\xFE<\0r\0/\0>\0", 10, "XML encoding inconsistent"},
		{"utf-7", "<r/>", 4, "XML encoding must be UTF-8 or UTF-16"},
		{"iso-8859-1", "<r/>", 4, "XML encoding must be UTF-8 or UTF-16"},
		{"", "<r/>", 4, "XML encoding must be UTF-8 or UTF-16"},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err err;
		int rc;

		err_clear(&err);
		rc = xml_charset_check(cases[i].charset, cases[i].bytes,
		    cases[i].len, &err);
		if (cases[i].msg == NULL ? rc != 0 : (rc != -1 ||
		    strcmp(err.msg, cases[i].msg) != 0 ||
		    err.http_status != 400))
			fail_msg("case %zu (%s): rc %d msg \"%s\"", i,
			    cases[i].charset, rc, err.msg);
	}
}

/* Every node kind counts toward max_nodes; merged text is one node. */
static void
test_xml_node_kinds(void **state)
{
	static const struct {
		const char *text;
		size_t nodes;   /* exactly this many */
	} cases[] = {
		{"<a/>", 1},
		{"<a b='1'/>", 2},
		{"<a xmlns:p='urn:p'/>", 2},
		{"<a>t</a>", 2},
		{"<a>x&amp;y&#65;z</a>", 2},
		{"<a>t<b/>t</a>", 4},
		{"<a><!--c--></a>", 2},
		{"<a><!----><!----></a>", 3},
		{"<a><?p?><?p d?></a>", 3},
		{"<a><![CDATA[x]]></a>", 2},
		{"<?p?><!--c--><a/><!--d-->", 4},
		{"<a>\n <b/>\n</a>", 4},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xml_limits lim;
		struct arena *a = arena_new(0);
		size_t len = strlen(cases[i].text);
		xmlDocPtr doc;
		struct err err;

		xml_limits_default(&lim);
		lim.max_nodes = cases[i].nodes;
		if (parse(cases[i].text, len, &lim, &doc, a, &err) != 0)
			fail_msg("case %zu: refused at %zu nodes: %s", i,
			    cases[i].nodes, err.detail);
		lim.max_nodes = cases[i].nodes - 1;
		if (parse(cases[i].text, len, &lim, &doc, a, &err) != -1 ||
		    strcmp(err.msg, "XML too complex") != 0)
			fail_msg("case %zu: accepted at %zu nodes", i,
			    cases[i].nodes - 1);
		arena_free(a);
	}
}

/* Namespace declarations in scope are bounded by max_attributes (each
 * prefix lookup of libxml2 scans all of them). */
static void
test_xml_namespace_scope(void **state)
{
	struct xml_limits lim;
	struct arena *a = arena_new(0);
	char text[4096];
	size_t o = 0, i, lvl;
	xmlDocPtr doc;
	struct err err;

	(void)state;
	xml_limits_default(&lim);
	lim.max_attributes = 8;
	for (lvl = 0; lvl < 2; lvl++) {
		o += (size_t)sprintf(text + o, "<e%zu", lvl);
		for (i = 0; i < 5; i++)
			o += (size_t)sprintf(text + o, " xmlns:n%zu_%zu='u:x'",
			    lvl, i);
		o += (size_t)sprintf(text + o, ">");
	}
	o += (size_t)sprintf(text + o, "</e1></e0>");
	assert_int_equal(parse(text, o, &lim, &doc, a, &err), -1);
	assert_string_equal(err.msg, "XML too complex");
	lim.max_attributes = 10;
	assert_int_equal(parse(text, o, &lim, &doc, a, &err), 0);
	arena_free(a);
}

/* The byte cap answers 413; at the cap the document parses. */
static void
test_xml_byte_cap(void **state)
{
	const char *text = "<a>0123456789</a>";
	size_t len = strlen(text);
	struct xml_limits lim;
	struct arena *a = arena_new(0);
	xmlDocPtr doc;
	struct err err;

	(void)state;
	xml_limits_default(&lim);
	assert_int_equal(lim.max_bytes, 4u * 1024u * 1024u);
	lim.max_bytes = len;
	assert_int_equal(parse(text, len, &lim, &doc, a, &err), 0);
	lim.max_bytes = len - 1;
	assert_int_equal(parse(text, len, &lim, &doc, a, &err), -1);
	assert_string_equal(err.msg, "XML document too large");
	assert_int_equal(err.http_status, 413);
	assert_int_equal(err.soap_code, ERR_SOAP_SENDER);
	arena_free(a);
}

/* A malloc'd document of n copies of unit inside <r>...</r>. */
static char *
flood(const char *head, const char *unit, size_t n, const char *tail,
    size_t *len)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), i;
	char *s = malloc(hl + ul * n + tl + 1), *p = s;

	memcpy(p, head, hl);
	p += hl;
	for (i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	*len = hl + ul * n + tl;
	return s;
}

/* A UTF-16LE copy of ASCII text (malloc'd, with a BOM). */
static char *
ascii_to_utf16(const char *s, size_t n, size_t *len)
{
	char *out = malloc(2 * n + 2);
	size_t i;

	out[0] = (char)0xFF;
	out[1] = (char)0xFE;
	for (i = 0; i < n; i++) {
		out[2 + 2 * i] = s[i];
		out[3 + 2 * i] = 0;
	}
	*len = 2 * n + 2;
	return out;
}

/* The hostile classes of issue 10 items 2 and 3, each refused at once. */
static void
test_xml_floods(void **state)
{
	static const struct {
		const char *name, *head, *unit, *tail;
		size_t n;
		int to_utf16;
		const char *msg;
	} cases[] = {
		{"utf-7 attributes", "<?xml version='1.0' encoding='UTF-7'?><r",
		    " a+AD0AIg-1+ACI-", "/>", 100000, 0,
		    "XML encoding must be UTF-8 or UTF-16"},
		{"utf-16 attributes", "<r", " a='1'", "/>", 100000, 1,
		    "XML too complex"},
		{"comments", "<r>", "<!---->", "</r>", 300000, 0,
		    "XML too complex"},
		{"processing instructions", "<r>", "<?a?>", "</r>", 300000, 0,
		    "XML too complex"},
		{"text nodes", "<r>", "<b/>x", "</r>", 100000, 0,
		    "XML too complex"},
		{"attributes after a bad quote", "<r><x a='1 b=\"<\"/><y",
		    " a='1'", "/></r>", 100000, 0, "XML not well-formed"},
		{"attributes in a bad PI", "<r><? <y", " a='1'", "/>?></r>",
		    100000, 0, "XML not well-formed"},
		{"attributes after a bad comment", "<r><!-- a -- b --><y",
		    " a='1'", "/></r>", 100000, 0, "XML too complex"},
		/* read in chunks, the input is still read to its end */
		{"garbage after blanks", "<r/>", " ", "<x/>", 100000, 0,
		    "XML not well-formed"},
		{"garbage after comments", "<r/>", "<!-- -->", "x", 10000, 0,
		    "XML not well-formed"},
	};
	size_t i, len, len16;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = flood(cases[i].head, cases[i].unit, cases[i].n,
		    cases[i].tail, &len), *s16 = NULL;
		struct arena *a = arena_new(0);
		xmlDocPtr doc;
		struct err err;
		double t0;

		if (cases[i].to_utf16)
			s16 = ascii_to_utf16(s, len, &len16);
		t0 = cpu_s();
		if (parse(s16 != NULL ? s16 : s, s16 != NULL ? len16 : len,
		    NULL, &doc, a, &err) != -1 ||
		    strcmp(err.msg, cases[i].msg) != 0)
			fail_msg("%s: \"%s\" (%s)", cases[i].name, err.msg,
			    err.detail);
		/* linear work on at most a few MB; valgrind is slow */
		if (cpu_s() - t0 > 2.0)
			fail_msg("%s: %.2f s of CPU", cases[i].name,
			    cpu_s() - t0);
		free(s);
		free(s16);
		arena_free(a);
	}
}

/* Counted parser memory: refused past the limit; what the document keeps
 * is charged to the arena. */
static void
test_xml_memory(void **state)
{
	struct xml_limits lim;
	struct arena *a = arena_new(1u << 20), *b = arena_new(1u << 20);
	size_t len, before;
	char *s = flood("<r>", "<b/>", 5000, "</r>", &len);
	xmlDocPtr doc;
	struct err err;

	(void)state;
	xml_limits_default(&lim);
	lim.max_memory = 64u << 10;     /* 5000 nodes need ~600 KB */
	assert_int_equal(parse(s, len, &lim, &doc, a, &err), -1);
	assert_string_equal(err.msg, "XML too complex");
	before = arena_used(b);
	lim.max_memory = arena_remaining(b);
	assert_int_equal(parse(s, len, &lim, &doc, b, &err), 0);
	/* charged: more than the text itself, less than the budget */
	assert_true(arena_used(b) - before > len);
	assert_true(arena_used(b) <= 1u << 20);
	/* an arena too small for the kept tree refuses it */
	assert_int_equal(arena_charge(b, arena_remaining(b)), 0);
	assert_int_equal(arena_remaining(b), 0);
	assert_int_equal(arena_charge(b, 1), -1);
	lim.max_memory = 1u << 20;
	assert_int_equal(parse(s, len, &lim, &doc, b, &err), -1);
	assert_string_equal(err.msg, "XML too complex");
	free(s);
	arena_free(a);
	arena_free(b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_utf16_accepted),
		cmocka_unit_test(test_xml_encodings),
		cmocka_unit_test(test_xml_charset),
		cmocka_unit_test(test_xml_node_kinds),
		cmocka_unit_test(test_xml_namespace_scope),
		cmocka_unit_test(test_xml_byte_cap),
		cmocka_unit_test(test_xml_floods),
		cmocka_unit_test(test_xml_memory),
	};

	xml_global_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
