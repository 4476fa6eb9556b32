/*
 * Unit tests for src/xml (hardened parsing, limits, helpers, schemas, the
 * refusing entity loader) and src/soap (envelope checks, SOAP 1.2 faults).
 * Hostile XML: NEGATIVE-CASES.md 17-22.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

#include "soap/soap.h"
#include "testutil.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "xml/xml.h"

#define S12 "http://www.w3.org/2003/05/soap-envelope"
#define S11 "http://schemas.xmlsoap.org/soap/envelope/"

/* ---- hostile and malformed documents (NEGATIVE-CASES 17-22) ---- */

/* Builders for the large hostile inputs; return malloc'd text. */
static char *
gen_depth(size_t *len)
{
	size_t n = 10000, o = 0, i;
	char *s = malloc(n * 7 + 1);

	for (i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "<a>");
	for (i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, "</a>");
	*len = o;
	return s;
}

static char *
gen_attrs(size_t *len)
{
	size_t n = 100000, o = 0, i;
	char *s = malloc(n * 16 + 16);

	o += (size_t)sprintf(s, "<a");
	for (i = 0; i < n; i++)
		o += (size_t)sprintf(s + o, " a%zu='x'", i);
	o += (size_t)sprintf(s + o, "/>");
	*len = o;
	return s;
}

static char *
gen_name(size_t n, size_t *len)
{
	char *s = malloc(n + 8);

	s[0] = '<';
	memset(s + 1, 'n', n);
	memcpy(s + 1 + n, "/>", 3);
	*len = n + 3;
	return s;
}

static char *
gen_name_50k(size_t *len)
{
	return gen_name(50000, len);
}

static char *
gen_name_60k(size_t *len)
{
	return gen_name(60000, len);
}

static char *
gen_big_attr(size_t *len)
{
	size_t n = 20u * 1024u * 1024u;
	char *s = malloc(n + 16);

	memcpy(s, "<a b='", 6);
	memset(s + 6, 'x', n);
	memcpy(s + 6 + n, "'/>", 4);
	*len = n + 9;
	return s;
}

static char *
gen_billion_laughs(size_t *len)
{
	static const char head[] =
	    "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n"
	    " <!ENTITY lol \"lol\">\n";
	char *s = malloc(8192);
	size_t o = 0;
	int i, j;

	o += (size_t)sprintf(s, "%s", head);
	for (i = 1; i <= 9; i++) {
		o += (size_t)sprintf(s + o, " <!ENTITY lol%d \"", i);
		for (j = 0; j < 10; j++)
			o += (size_t)(i == 1 ? sprintf(s + o, "&lol;") :
			    sprintf(s + o, "&lol%d;", i - 1));
		o += (size_t)sprintf(s + o, "\">\n");
	}
	o += (size_t)sprintf(s + o, "]>\n<lolz>&lol9;</lolz>");
	*len = o;
	return s;
}

struct hostile_case {
	const char *name;
	const char *text;                 /* literal input, or NULL: gen */
	char *(*gen)(size_t *len);
	const char *msg;                  /* expected err.msg */
};

static const struct hostile_case hostile_cases[] = {
	{"17 doctype", "<!DOCTYPE a><a/>", NULL, "DTD not allowed"},
	{"17 doctype after decl", "<?xml version='1.0'?>\n<!DOCTYPE a []><a/>",
	    NULL, "DTD not allowed"},
	{"18 xxe file", "<?xml version='1.0'?><!DOCTYPE a [<!ENTITY x SYSTEM "
	    "'file:///etc/passwd'>]><a>&x;</a>", NULL, "DTD not allowed"},
	{"18 external dtd", "<!DOCTYPE a SYSTEM 'file:///etc/passwd'><a/>",
	    NULL, "DTD not allowed"},
	{"19 parameter entity to network", "<!DOCTYPE a [<!ENTITY % p SYSTEM "
	    "'http://127.0.0.1:9/evil.dtd'> %p;]><a/>", NULL,
	    "DTD not allowed"},
	{"19 public external dtd", "<!DOCTYPE a PUBLIC '-//x//y' "
	    "'http://127.0.0.1:9/x.dtd'><a/>", NULL, "DTD not allowed"},
	{"20 billion laughs", NULL, gen_billion_laughs, "DTD not allowed"},
	{"21 depth 10000", NULL, gen_depth, "XML too complex"},
	{"22 100k attributes", NULL, gen_attrs, "XML too complex"},
	{"22 50k name", NULL, gen_name_50k, "XML too complex"},
	{"22 60k name", NULL, gen_name_60k, NULL},
	{"22 20 MB attribute", NULL, gen_big_attr, NULL},
	{"malformed mismatch", "<a><b></a>", NULL, "XML not well-formed"},
	{"malformed truncated", "<a><b>", NULL, "XML not well-formed"},
	{"malformed two roots", "<a/><b/>", NULL, "XML not well-formed"},
	{"malformed garbage", "\x01\x02 hello", NULL, "XML not well-formed"},
	{"malformed undefined prefix", "<x:a/>", NULL, "XML not well-formed"},
	{"malformed entity", "<a>&nope;</a>", NULL, "XML not well-formed"},
	{"malformed text only", "just text", NULL, "XML not well-formed"},
	{"empty", "", NULL, NULL},
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each hostile input: ERR_SOAP Sender 400, the right msg, fast, no doc. */
static void
test_xml_hostile(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(hostile_cases) / sizeof(hostile_cases[0]); i++) {
		const struct hostile_case *c = &hostile_cases[i];
		struct arena *a = arena_new(0);
		xmlDocPtr doc = NULL;
		struct err err;
		size_t len;
		char *gen = NULL;
		const char *text = c->text;
		double t0;

		err_clear(&err);
		if (text == NULL) {
			gen = c->gen(&len);
			text = gen;
		} else
			len = strlen(text);
		t0 = now_s();
		if (xml_parse(a, text, len, NULL, &doc, &err) != -1)
			fail_msg("case %s: parsed", c->name);
		/* hostile structure is refused at once; only the 20 MB input
		 * costs a linear scan, which valgrind slows down a lot */
		if (now_s() - t0 > (c->gen == gen_big_attr ? 10.0 : 1.0))
			fail_msg("case %s: took %.2fs", c->name, now_s() - t0);
		assert_null(doc);
		assert_int_equal(err.kind, ERR_SOAP);
		assert_int_equal(err.soap_code, ERR_SOAP_SENDER);
		/* 20 MB is over the default maxEnvelopeBytes: 413 */
		assert_int_equal(err.http_status,
		    c->gen == gen_big_attr ? 413 : 400);
		if (c->msg != NULL && strcmp(err.msg, c->msg) != 0)
			fail_msg("case %s: msg \"%s\"", c->name, err.msg);
		assert_true(err.msg[0] != '\0');
		free(gen);
		arena_free(a);
	}
}

/* The XXE case: whatever happens, /etc/passwd content never appears. */
static void
test_xml_loader_refuses_files(void **state)
{
	const char *x = "<!DOCTYPE a [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
	    "<a>&x;</a>";
	xmlDocPtr doc;
	xmlChar *content;

	(void)state;
	xml_global_init();
	/* even a careless caller asking libxml2 itself to load and substitute */
	doc = xmlReadMemory(x, (int)strlen(x), "t.xml", NULL,
	    XML_PARSE_NOENT | XML_PARSE_DTDLOAD | XML_PARSE_NOERROR |
	    XML_PARSE_NOWARNING);
	if (doc != NULL) {
		content = xmlNodeGetContent(xmlDocGetRootElement(doc));
		assert_true(content == NULL ||
		    strstr((const char *)content, "root:") == NULL);
		xmlFree(content);
		xmlFreeDoc(doc);
	}
}

/* Caller limits: depth, attributes, nodes. */
static void
test_xml_limits(void **state)
{
	static const struct {
		const char *text;
		size_t depth, attrs, nodes;
		int ok;
	} cases[] = {
		{"<a><b><c/></b></a>", 3, 8, 100, 1},
		{"<a><b><c><d/></c></b></a>", 3, 8, 100, 0},
		{"<a x='1' y='2'/>", 8, 2, 100, 1},
		{"<a x='1' y='2' z='3'/>", 8, 2, 100, 0},
		{"<a xmlns='u:x' xmlns:p='u:y' y='2'/>", 8, 2, 100, 0},
		{"<a><b/><b/><b/></a>", 8, 8, 4, 1},
		{"<a><b/><b/><b/><b/></a>", 8, 8, 4, 0},
		{"<a><b x='1'/><b/><b/></a>", 8, 8, 4, 0},
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xml_limits lim = {cases[i].depth, cases[i].attrs,
		    cases[i].nodes, 0, 0, 0};
		struct arena *a = arena_new(0);
		xmlDocPtr doc = NULL;
		struct err err;
		int rc;

		err_clear(&err);
		rc = xml_parse(a, cases[i].text, strlen(cases[i].text), &lim,
		    &doc, &err);
		if (cases[i].ok != (rc == 0))
			fail_msg("case %zu: rc %d msg %s", i, rc, err.msg);
		if (!cases[i].ok) {
			assert_string_equal(err.msg, "XML too complex");
			assert_int_equal(err.http_status, 400);
		}
		arena_free(a);
	}
}

/* Defaults as documented. */
static void
test_xml_limits_default(void **state)
{
	struct xml_limits lim;

	(void)state;
	xml_limits_default(&lim);
	assert_int_equal(lim.max_depth, 64);
	assert_int_equal(lim.max_attributes, 64);
	assert_int_equal(lim.max_nodes, 100000);
}

/* Well-formed input with a BOM, CDATA, comments parses; detail on errors. */
static void
test_xml_parse_ok(void **state)
{
	const char *x = "\xEF\xBB\xBF<?xml version='1.0' encoding='UTF-8'?>\n"
	    "<!-- hello --><r xmlns='urn:r'><c><![CDATA[<raw>]]></c></r>";
	struct arena *a = arena_new(0);
	xmlDocPtr doc = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(xml_parse(a, x, strlen(x), NULL, &doc, &err), 0);
	assert_non_null(doc);
	assert_true(xml_is(xmlDocGetRootElement(doc), "urn:r", "r"));
	assert_string_equal(xml_text(a, xml_child(xmlDocGetRootElement(doc),
	    "urn:r", "c")), "<raw>");
	arena_free(a);  /* frees the document: valgrind checks */

	/* a namespace name with a line break (recorded phase4 messages) */
	a = arena_new(0);
	err_clear(&err);
	assert_int_equal(xml_parse(a, "<a xmlns:p='urn:x\n1.0'/>", 24, NULL,
	    &doc, &err), 0);
	arena_free(a);

	a = arena_new(0);
	err_clear(&err);
	assert_int_equal(xml_parse(a, "<a>", 3, NULL, &doc, &err), -1);
	assert_true(strstr(err.detail, "line 1") != NULL);
	arena_free(a);
}

/* DOM helpers. */
static void
test_xml_helpers(void **state)
{
	const char *x = "<r xmlns='urn:r' xmlns:p='urn:p' a='1' p:b=' 2 '>"
	    "text<c>  one  </c><!-- c --><p:c/><c/><d></d></r>";
	struct arena *a = arena_new(0);
	xmlDocPtr doc = NULL;
	xmlNodePtr r, c;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(xml_parse(a, x, strlen(x), NULL, &doc, &err), 0);
	r = xmlDocGetRootElement(doc);
	assert_true(xml_is(r, "urn:r", "r"));
	assert_false(xml_is(r, "urn:p", "r"));
	assert_false(xml_is(r, NULL, "r"));
	assert_false(xml_is(NULL, "urn:r", "r"));
	c = xml_child(r, "urn:r", "c");
	assert_non_null(c);
	assert_string_equal(xml_text(a, c), "one");
	assert_true(xml_is(xml_next(c, "urn:p", NULL), "urn:p", "c"));
	assert_true(xml_next(xml_next(c, "urn:r", "c"), "urn:r", "c") == NULL);
	assert_int_equal(xml_count(r, "urn:r", "c"), 2);
	assert_int_equal(xml_count(r, NULL, NULL), 4);
	assert_int_equal(xml_count(r, "urn:x", NULL), 0);
	assert_string_equal(xml_text(a, xml_child(r, "urn:r", "d")), "");
	assert_null(xml_text(a, NULL));
	assert_string_equal(xml_attr(a, r, NULL, "a"), "1");
	assert_string_equal(xml_attr(a, r, "urn:p", "b"), " 2 ");
	assert_null(xml_attr(a, r, NULL, "b"));
	assert_null(xml_attr(a, r, NULL, "zz"));
	assert_null(xml_child(NULL, NULL, NULL));
	arena_free(a);
}

/* Configuration files: parsed through the same hardening; missing -> ERR_IO. */
static void
test_xml_parse_file(void **state)
{
	char path[] = "/tmp/as4gw-test-xml-XXXXXX";
	int fd = mkstemp(path);
	xmlDocPtr doc = NULL;
	struct err err;
	size_t i;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "<c><k>v</k></c>", 15), 15);
	close(fd);
	err_clear(&err);
	assert_int_equal(xml_parse_file(path, NULL, &doc, &err), 0);
	assert_true(xml_is(xmlDocGetRootElement(doc), NULL, "c"));
	xmlFreeDoc(doc);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "<!DOCTYPE c><c/>", 16), 16);
	close(fd);
	err_clear(&err);
	assert_int_equal(xml_parse_file(path, NULL, &doc, &err), -1);
	assert_string_equal(err.msg, "DTD not allowed");

	/* the file is read as it grows (it was a fixed 16 MiB buffer per
	 * read): several chunks parse, an empty file is a parse error, one
	 * byte over 16 MiB is refused as too large */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "<c>", 3), 3);
	for (i = 0; i < 10000; i++)
		assert_int_equal(write(fd, "<k>0123456789</k>", 17), 17);
	assert_int_equal(write(fd, "</c>", 4), 4);
	close(fd);
	err_clear(&err);
	assert_int_equal(xml_parse_file(path, NULL, &doc, &err), 0);
	assert_int_equal(xmlChildElementCount(xmlDocGetRootElement(doc)),
	    10000);
	xmlFreeDoc(doc);
	assert_int_equal(truncate(path, 0), 0);
	err_clear(&err);
	assert_int_equal(xml_parse_file(path, NULL, &doc, &err), -1);
	assert_int_equal(err.kind, ERR_SOAP);
	assert_int_equal(truncate(path, 16 * 1024 * 1024 + 1), 0);
	err_clear(&err);
	assert_int_equal(xml_parse_file(path, NULL, &doc, &err), -1);
	assert_int_equal(err.kind, ERR_IO);
	assert_non_null(strstr(err.msg, "too large"));
	unlink(path);

	err_clear(&err);
	assert_int_equal(xml_parse_file("/nonexistent/as4gw.xml", NULL, &doc,
	    &err), -1);
	assert_int_equal(err.kind, ERR_IO);
}

/* Embedded schemas compile (imports served by the loader); unknown refused. */
static void
test_xml_schemas(void **state)
{
	static const char *names[] = {"ebms-header-3_0-200704.xsd",
	    "soap11.xsd", "soap12.xsd", "ebbp-signals-2.0.4.xsd"};
	void *schema = NULL;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		err_clear(&err);
		assert_non_null(xml_embedded_find(names[i]));
		if (xml_schema_load(names[i], &schema, &err) != 0)
			fail_msg("%s: %s (%s)", names[i], err.msg, err.detail);
		xmlSchemaFree(schema);
	}
	assert_null(xml_embedded_find("passwd"));
	assert_null(xml_embedded_find(NULL));
	err_clear(&err);
	assert_int_equal(xml_schema_load("/etc/passwd", &schema, &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
}

/* xml_validate: valid, invalid with an ebMS code, invalid without. */
static void
test_xml_validate(void **state)
{
	const char *good = "<e:Envelope xmlns:e='" S12 "'><e:Body/></e:Envelope>";
	const char *bad = "<e:Envelope xmlns:e='" S12 "'><e:Nope/></e:Envelope>";
	struct arena *a = arena_new(0);
	void *schema = NULL;
	xmlDocPtr doc;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(xml_schema_load("soap12.xsd", &schema, &err), 0);
	assert_int_equal(xml_parse(a, good, strlen(good), NULL, &doc, &err), 0);
	assert_int_equal(xml_validate(schema, xmlDocGetRootElement(doc),
	    "EBMS:0009", &err), 0);
	assert_int_equal(xml_parse(a, bad, strlen(bad), NULL, &doc, &err), 0);
	assert_int_equal(xml_validate(schema, xmlDocGetRootElement(doc),
	    "EBMS:0009", &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0009");
	assert_true(strstr(err.detail, "Nope") != NULL);
	err_clear(&err);
	assert_int_equal(xml_validate(schema, xmlDocGetRootElement(doc), NULL,
	    &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
	err_clear(&err);
	assert_int_equal(xml_validate(NULL, NULL, NULL, &err), -1);
	xmlSchemaFree(schema);
	arena_free(a);
}

/* A worker thread that never touched libxml2 globals parses bad XML. */
static void *
bad_parse_thread(void *arg)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc;
	struct err err;

	(void)arg;
	err_clear(&err);
	(void)xml_parse(a, "<a><b></a>", 10, NULL, &doc, &err);
	const char *dtd = "<!DOCTYPE a [<!ENTITY x 'y'>]><a>&x;</a>";

	(void)xml_parse(a, dtd, strlen(dtd), NULL, &doc, &err);
	arena_free(a);
	return NULL;
}

/* Nothing libxml2 says ever reaches stderr, whichever thread parses. */
static void
test_xml_silent_stderr(void **state)
{
	char path[] = "/tmp/as4gw-test-stderr-XXXXXX";
	int fd = mkstemp(path), saved;
	pthread_t t;
	off_t size;

	(void)state;
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	assert_true(dup2(fd, 2) >= 0);
	bad_parse_thread(NULL);
	assert_int_equal(pthread_create(&t, NULL, bad_parse_thread, NULL), 0);
	pthread_join(t, NULL);
	fflush(stderr);
	size = lseek(fd, 0, SEEK_END);
	dup2(saved, 2);
	close(saved);
	close(fd);
	unlink(path);
	assert_int_equal(size, 0);
}

/* ---- soap_open ---- */

struct env_case {
	const char *name;
	const char *text;
	int ok;
	enum soap_version version;
	int has_header;
	enum err_soap_code code;
};

static const struct env_case env_cases[] = {
	{"1.2 header and body", "<e:Envelope xmlns:e='" S12 "'>\n<e:Header/>\n"
	    "<e:Body><x/></e:Body>\n</e:Envelope>", 1, SOAP_12, 1, 0},
	{"1.2 no header", "<e:Envelope xmlns:e='" S12 "'><e:Body/></e:Envelope>",
	    1, SOAP_12, 0, 0},
	{"1.2 comment", "<e:Envelope xmlns:e='" S12 "'><!-- c --><e:Body/>"
	    "</e:Envelope>", 1, SOAP_12, 0, 0},
	{"1.1 accepted as 1.1", "<s:Envelope xmlns:s='" S11 "'><s:Header/>"
	    "<s:Body/></s:Envelope>", 1, SOAP_11, 1, 0},
	{"no body", "<e:Envelope xmlns:e='" S12 "'><e:Header/></e:Envelope>",
	    0, 0, 0, ERR_SOAP_SENDER},
	{"empty envelope", "<e:Envelope xmlns:e='" S12 "'/>", 0, 0, 0,
	    ERR_SOAP_SENDER},
	{"element after body", "<e:Envelope xmlns:e='" S12 "'><e:Body/><x/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"header after body", "<e:Envelope xmlns:e='" S12 "'><e:Body/>"
	    "<e:Header/></e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"two bodies", "<e:Envelope xmlns:e='" S12 "'><e:Body/><e:Body/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"two headers", "<e:Envelope xmlns:e='" S12 "'><e:Header/><e:Header/>"
	    "<e:Body/></e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"foreign element first", "<e:Envelope xmlns:e='" S12 "'><x/><e:Body/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"1.1 body in 1.2 envelope", "<e:Envelope xmlns:e='" S12 "' xmlns:s='"
	    S11 "'><s:Body/></e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"text in envelope", "<e:Envelope xmlns:e='" S12 "'>hi<e:Body/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"pi in envelope", "<e:Envelope xmlns:e='" S12 "'><?p x?><e:Body/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_SENDER},
	{"wrong root", "<Order xmlns='urn:x'/>", 0, 0, 0, ERR_SOAP_SENDER},
	{"unknown soap version", "<e:Envelope xmlns:e='urn:soap-9'><e:Body/>"
	    "</e:Envelope>", 0, 0, 0, ERR_SOAP_VERSION_MISMATCH},
	{"body outside envelope", "<e:Body xmlns:e='" S12 "'/>", 0, 0, 0,
	    ERR_SOAP_SENDER},
};

/* Table: envelope variants. */
static void
test_soap_open(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct env_case *c = &env_cases[i];
		struct arena *a = arena_new(0);
		struct soap_env env;
		xmlDocPtr doc;
		struct err err;
		int rc;

		err_clear(&err);
		memset(&env, 0, sizeof(env));
		assert_int_equal(xml_parse(a, c->text, strlen(c->text), NULL,
		    &doc, &err), 0);
		rc = soap_open(doc, &env, &err);
		if ((rc == 0) != c->ok)
			fail_msg("case %s: rc %d (%s)", c->name, rc, err.msg);
		if (c->ok) {
			assert_int_equal(env.version, c->version);
			assert_true((env.header != NULL) == c->has_header);
			assert_non_null(env.body);
			assert_ptr_equal(env.doc, doc);
			assert_ptr_equal(env.envelope, xmlDocGetRootElement(doc));
		} else {
			assert_int_equal(err.kind, ERR_SOAP);
			assert_int_equal(err.http_status, 400);
			if (err.soap_code != c->code)
				fail_msg("case %s: code %d", c->name,
				    (int)err.soap_code);
			assert_null(env.body);
		}
		arena_free(a);
	}
}

/* A recorded SOAP 1.2 message opens with Header and Body. */
static void
test_soap_open_corpus(void **state)
{
	const char *rel = "corpus/messages/phax_phase4/phase4-lib/src/test/"
	    "resources/external/soap12test/UserMessage12.xml";
	struct arena *a = arena_new(0);
	struct soap_env env;
	xmlDocPtr doc;
	struct err err;
	size_t len;
	char *text = testutil_read_shared(rel, &len);

	(void)state;
	if (text == NULL) {
		arena_free(a);
		testutil_skip("corpus UserMessage12.xml not available");
	}
	err_clear(&err);
	assert_int_equal(xml_parse(a, text, len, NULL, &doc, &err), 0);
	assert_int_equal(soap_open(doc, &env, &err), 0);
	assert_int_equal(env.version, SOAP_12);
	assert_non_null(env.header);
	assert_non_null(xml_child(env.header, NS_EB, "Messaging"));
	free(text);
	arena_free(a);
}

/* ---- soap_fault_write ---- */

static const struct {
	enum err_kind kind;
	enum err_soap_code code;
	const char *value;
	const char *reason;
} fault_cases[] = {
	{ERR_SOAP, ERR_SOAP_SENDER, "env:Sender", "bad <thing> & \"more\""},
	{ERR_SOAP, ERR_SOAP_RECEIVER, "env:Receiver", "receiver"},
	{ERR_SOAP, ERR_SOAP_VERSION_MISMATCH, "env:VersionMismatch", "version"},
	{ERR_SOAP, ERR_SOAP_MUST_UNDERSTAND, "env:MustUnderstand", "mu"},
	{ERR_HTTP, ERR_SOAP_SENDER, "env:Sender", "http"},
	{ERR_INTERNAL, ERR_SOAP_SENDER, "env:Receiver", "internal error"},
	{ERR_STORE, ERR_SOAP_SENDER, "env:Receiver",
	    "storage temporarily unavailable"},
};

/* Each fault parses, is a SOAP 1.2 Fault with that code, never the detail. */
static void
test_soap_fault_write(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(fault_cases) / sizeof(fault_cases[0]); i++) {
		struct arena *a = arena_new(0);
		struct buf out = {0};
		struct soap_env env;
		struct err err, perr;
		xmlDocPtr doc;
		xmlNodePtr fault, text;

		err_clear(&err);
		err_clear(&perr);
		err.kind = fault_cases[i].kind;
		err.soap_code = fault_cases[i].code;
		(void)snprintf(err.msg, sizeof(err.msg), "%s",
		    fault_cases[i].kind == ERR_SOAP ||
		    fault_cases[i].kind == ERR_HTTP ? fault_cases[i].reason :
		    "secret /etc/path");
		(void)snprintf(err.detail, sizeof(err.detail), "SECRET-DETAIL");
		assert_int_equal(soap_fault_write(&err, &out), 0);
		assert_null(strstr(out.data, "SECRET"));
		assert_int_equal(xml_parse(a, out.data, out.len, NULL, &doc,
		    &perr), 0);
		assert_int_equal(soap_open(doc, &env, &perr), 0);
		assert_int_equal(env.version, SOAP_12);
		fault = xml_child(env.body, S12, "Fault");
		assert_non_null(fault);
		assert_string_equal(xml_text(a, xml_child(xml_child(fault, S12,
		    "Code"), S12, "Value")), fault_cases[i].value);
		text = xml_child(xml_child(fault, S12, "Reason"), S12, "Text");
		assert_string_equal(xml_text(a, text), fault_cases[i].reason);
		assert_string_equal(xml_attr(a, text,
		    "http://www.w3.org/XML/1998/namespace", "lang"), "en");
		buf_free(&out);
		arena_free(a);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xml_hostile),
		cmocka_unit_test(test_xml_loader_refuses_files),
		cmocka_unit_test(test_xml_limits),
		cmocka_unit_test(test_xml_limits_default),
		cmocka_unit_test(test_xml_parse_ok),
		cmocka_unit_test(test_xml_helpers),
		cmocka_unit_test(test_xml_parse_file),
		cmocka_unit_test(test_xml_schemas),
		cmocka_unit_test(test_xml_validate),
		cmocka_unit_test(test_xml_silent_stderr),
		cmocka_unit_test(test_soap_open),
		cmocka_unit_test(test_soap_open_corpus),
		cmocka_unit_test(test_soap_fault_write),
	};

	xml_global_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
