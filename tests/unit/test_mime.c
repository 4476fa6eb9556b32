/* Unit tests for mime/: Content-Type grammar, multipart/related parser
 * (synthetic edge cases and recorded AS4 messages from ../shared/corpus),
 * mime_find and the writer (round trip). */
#include "mime/mime.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "spool/spool.h"
#include "testutil.h"

/* Per-test arena (setup/teardown). */
static int
test_mime_setup(void **state)
{
	*state = arena_new(0);
	return *state == NULL ? -1 : 0;
}

static int
test_mime_teardown(void **state)
{
	arena_free(*state);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Content-Type grammar                                               */

struct ct_case {
	const char *in;
	int rc;
	const char *type;
	size_t n_params;
	const char *pname, *pvalue; /* one parameter to look up */
};

static const struct ct_case ct_cases[] = {
	{ "multipart/related; boundary=\"abc\"; type=\"application/soap+xml\"",
	  0, "multipart/related", 2, "boundary", "abc" },
	{ "  Multipart/Related ; BOUNDARY = abc ;", 0, "multipart/related", 1,
	  "boundary", "abc" },
	{ "text/plain", 0, "text/plain", 0, "charset", NULL },
	{ "Application/SOAP+XML;charset=UTF-8;action=\"urn:a;b\"", 0,
	  "application/soap+xml", 2, "action", "urn:a;b" },
	{ "a/b; q=\"x\\\"y\\\\z\"", 0, "a/b", 1, "q", "x\"y\\z" },
	{ "a/b; q=\"\"", 0, "a/b", 1, "q", "" },
	/* unquoted tspecials in values, as the AS4 profile examples send */
	{ "multipart/related; type=application/soap+xml; start=<x@y>", 0,
	  "multipart/related", 2, "start", "<x@y>" },
	{ "a/b;; c=d;", 0, "a/b", 1, "C", "d" },
	{ "a / b", 0, "a/b", 0, NULL, NULL },
	{ "multipart/related;\r\n boundary=\"x\"", 0, "multipart/related", 1,
	  "boundary", "x" },
	{ "multipart/", -1, NULL, 0, NULL, NULL },
	{ "multipart", -1, NULL, 0, NULL, NULL },
	{ "/related", -1, NULL, 0, NULL, NULL },
	{ "", -1, NULL, 0, NULL, NULL },
	{ "a/b; c", -1, NULL, 0, NULL, NULL },
	{ "a/b; c=", -1, NULL, 0, NULL, NULL },
	{ "a/b; =d", -1, NULL, 0, NULL, NULL },
	{ "a/b; c=\"unterminated", -1, NULL, 0, NULL, NULL },
	{ "a/b; c=\"bad escape\\", -1, NULL, 0, NULL, NULL },
	{ "a/b x", -1, NULL, 0, NULL, NULL },
	{ "a/b; c=d e", -1, NULL, 0, NULL, NULL },
	{ "a/b; c=d; C=e", -1, NULL, 0, NULL, NULL },
	{ "a@b/c", -1, NULL, 0, NULL, NULL },
};

/* Every row of ct_cases parses (or fails) as listed. */
static void
test_ct_table(void **state)
{
	struct arena *a = *state;
	size_t i;

	for (i = 0; i < sizeof(ct_cases) / sizeof(ct_cases[0]); i++) {
		const struct ct_case *c = &ct_cases[i];
		struct mime_ct ct = { "unset", NULL, 99 };
		int rc = mime_ct_parse(a, c->in, &ct);

		if (rc != c->rc)
			fail_msg("case %zu \"%s\": rc %d", i, c->in, rc);
		if (rc == -1) {
			/* ret_ outputs untouched on failure */
			assert_string_equal(ct.type, "unset");
			continue;
		}
		assert_string_equal(ct.type, c->type);
		assert_int_equal(ct.n_params, c->n_params);
		if (c->pname == NULL)
			continue;
		if (c->pvalue == NULL)
			assert_null(mime_ct_param(&ct, c->pname));
		else
			assert_string_equal(mime_ct_param(&ct, c->pname),
			    c->pvalue);
	}
	assert_int_equal(mime_ct_parse(a, NULL, &(struct mime_ct){0}), -1);
	assert_null(mime_ct_param(NULL, "x"));
}

/* At most 32 parameters. */
static void
test_ct_param_bound(void **state)
{
	struct arena *a = *state;
	struct mime_ct ct;
	char in[1024];
	size_t i, n;

	n = (size_t)snprintf(in, sizeof(in), "a/b");
	for (i = 0; i < 32; i++)
		n += (size_t)snprintf(in + n, sizeof(in) - n, "; p%zu=v", i);
	assert_int_equal(mime_ct_parse(a, in, &ct), 0);
	assert_int_equal(ct.n_params, 32);
	assert_string_equal(mime_ct_param(&ct, "P31"), "v");
	(void)snprintf(in + n, sizeof(in) - n, "; p32=v");
	assert_int_equal(mime_ct_parse(a, in, &ct), -1);
}

/* ------------------------------------------------------------------ */
/* Synthetic multipart edge cases                                     */

#define CT_B1 "multipart/related; boundary=\"b1\"; " \
	"type=\"application/soap+xml\""
#define D10 "0123456789"
#define B70 D10 D10 D10 D10 D10 D10 D10
#define B71 B70 "0"
#define ROOT_PART "--b1\r\nContent-Type: application/soap+xml\r\n" \
	"Content-ID: <root>\r\n\r\n<e/>\r\n"
#define ATT_PART "--b1\r\nContent-Type: application/octet-stream\r\n" \
	"Content-ID: <att>\r\n\r\nDATA\r\n"
#define CLOSE "--b1--\r\n"

struct parse_case {
	const char *name;
	const char *ct;
	const char *body;
	size_t max_parts, max_hdrs; /* 0: defaults */
	int rc;
	/* on failure */
	enum err_kind kind;
	int status;
	const char *code;
	/* on success */
	size_t n_parts, root;
	const char *root_data;
	const char *att_id, *att_data, *att_type;
};

#define OK(n, r, rd, id, ad) 0, ERR_NONE, 0, NULL, n, r, rd, id, ad, NULL
#define HTTP(st) -1, ERR_HTTP, st, NULL, 0, 0, NULL, NULL, NULL, NULL
#define EBMS(c) -1, ERR_EBMS, 0, c, 0, 0, NULL, NULL, NULL, NULL

static const struct parse_case parse_cases[] = {
	{ "basic", CT_B1, ROOT_PART ATT_PART CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "raw body starting with crlfs", CT_B1,
	  "\r\n\r\n" ROOT_PART ATT_PART CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "preamble", CT_B1, "This is a preamble\r\n--b1 is not here\r\n"
	  ROOT_PART CLOSE, 0, 0, OK(1, 0, "<e/>", NULL, NULL) },
	{ "epilogue", CT_B1, ROOT_PART ATT_PART CLOSE
	  "epilogue\r\n--b1\r\nContent-Type: text/plain\r\n\r\nx\r\n", 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "close without crlf", CT_B1, ROOT_PART "--b1--", 0, 0,
	  OK(1, 0, "<e/>", NULL, NULL) },
	{ "lf line ends", CT_B1,
	  "--b1\nContent-Type: application/soap+xml\nContent-ID: <root>\n\n"
	  "<e/>\n--b1\nContent-ID: <att>\n\nline1\nline2\n--b1--\n", 0, 0,
	  OK(2, 0, "<e/>", "att", "line1\nline2") },
	{ "transport padding", CT_B1,
	  "--b1 \t\r\nContent-Type: application/soap+xml\r\n\r\n<e/>\r\n"
	  "--b1  \r\nContent-ID: att\r\n\r\nDATA\r\n--b1--  \r\n", 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "folded headers", CT_B1,
	  "--b1\r\nContent-Type:\r\n application/soap+xml;\r\n"
	  "\tcharset=utf-8\r\n"
	  "X-Other: a\r\n  b\r\n\r\n<e/>\r\n" ATT_PART CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "header names case-insensitive", CT_B1,
	  "--b1\r\ncontent-type: application/soap+xml\r\n\r\n<e/>\r\n"
	  "--b1\r\nCONTENT-ID: <att>\r\ncontent-transfer-encoding: BINARY\r\n"
	  "\r\nDATA\r\n" CLOSE, 0, 0, OK(2, 0, "<e/>", "att", "DATA") },
	{ "content-id without brackets", CT_B1,
	  ROOT_PART "--b1\r\nContent-ID: att\r\n\r\nDATA\r\n" CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "base64", CT_B1, ROOT_PART "--b1\r\nContent-ID: <att>\r\n"
	  "Content-Transfer-Encoding: base64\r\n\r\n"
	  "SGVs\r\nbG8g\r\n d29y bGQ=\r\n"
	  CLOSE, 0, 0, OK(2, 0, "<e/>", "att", "Hello world") },
	{ "quoted-printable", CT_B1, ROOT_PART "--b1\r\nContent-ID: <att>\r\n"
	  "Content-Transfer-Encoding: Quoted-Printable\r\n\r\n"
	  "a=3Db=3d  \r\nsoft=\r\nbreak= \r\nx=\r\n" CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "a=b=\r\nsoftbreakx") },
	{ "7bit and 8bit", CT_B1, "--b1\r\nContent-Type: application/soap+xml"
	  "\r\nContent-Transfer-Encoding: 8bit\r\n\r\n<e/>\r\n--b1\r\n"
	  "Content-ID: <att>\r\nContent-Transfer-Encoding: 7bit\r\n\r\nDATA\r\n"
	  CLOSE, 0, 0, OK(2, 0, "<e/>", "att", "DATA") },
	{ "boundary inside a line does not split", CT_B1, ROOT_PART
	  "--b1\r\nContent-ID: <att>\r\n\r\nx--b1\r\n y --b1--\r\n--b1x\r\n"
	  "--b1-\r\n" CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "x--b1\r\n y --b1--\r\n--b1x\r\n--b1-") },
	{ "empty part body", CT_B1, ROOT_PART
	  "--b1\r\nContent-ID: <att>\r\n\r\n\r\n" CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "") },
	{ "headers run into the delimiter", CT_B1, ROOT_PART
	  "--b1\r\nContent-ID: <att>\r\n" CLOSE, 0, 0,
	  OK(2, 0, "<e/>", "att", "") },
	{ "part without headers is text/plain", CT_B1, ROOT_PART
	  "--b1\r\n\r\nplain\r\n" CLOSE, 0, 0, OK(2, 0, "<e/>", NULL, NULL) },
	{ "start with brackets", CT_B1 "; start=\"<root2>\"", ATT_PART
	  "--b1\r\nContent-Type: application/soap+xml\r\nContent-ID: <root2>"
	  "\r\n\r\n<r2/>\r\n" CLOSE, 0, 0, OK(2, 1, "<r2/>", "att", "DATA") },
	{ "start without brackets", CT_B1 "; start=root2", ATT_PART
	  "--b1\r\nContent-Type: application/soap+xml\r\nContent-ID: <root2>"
	  "\r\n\r\n<r2/>\r\n" CLOSE, 0, 0, OK(2, 1, "<r2/>", "att", "DATA") },
	{ "start with brackets, content-id without", CT_B1 "; start=\"<r2>\"",
	  ATT_PART "--b1\r\nContent-Type: application/soap+xml\r\n"
	  "Content-ID: r2\r\n\r\n<r2/>\r\n" CLOSE, 0, 0,
	  OK(2, 1, "<r2/>", "att", "DATA") },
	{ "start names nothing: first part", CT_B1 "; start=\"<nothing>\"",
	  ROOT_PART ATT_PART CLOSE, 0, 0, OK(2, 0, "<e/>", "att", "DATA") },
	{ "start names nothing, first part not soap", CT_B1 "; start=\"<no>\"",
	  ATT_PART ROOT_PART CLOSE, 0, 0, EBMS("EBMS:0007") },
	{ "type= mismatch is tolerated",
	  "multipart/related; boundary=b1; type=text/xml", ROOT_PART CLOSE,
	  0, 0, OK(1, 0, "<e/>", NULL, NULL) },
	{ "text/xml root (soap 1.1)", "Multipart/Related; boundary=b1",
	  "--b1\r\nContent-Type: text/xml; charset=utf-8\r\n\r\n<e/>\r\n" CLOSE,
	  0, 0, OK(1, 0, "<e/>", NULL, NULL) },
	{ "70 character boundary", "multipart/related; boundary=" B70,
	  "--" B70 "\r\nContent-Type: application/soap+xml\r\n\r\n<e/>\r\n"
	  "--" B70 "--\r\n", 0, 0, OK(1, 0, "<e/>", NULL, NULL) },
	{ "max parts reached exactly", CT_B1, ROOT_PART ATT_PART CLOSE, 2, 0,
	  OK(2, 0, "<e/>", "att", "DATA") },
	{ "bare soap", "application/soap+xml; charset=utf-8", "<e/>", 0, 0,
	  OK(1, 0, "<e/>", NULL, NULL) },
	{ "bare soap 1.1", "text/xml", "<e/>", 0, 0,
	  OK(1, 0, "<e/>", NULL, NULL) },

	{ "missing boundary",
	  "multipart/related; type=\"application/soap+xml\"", ROOT_PART CLOSE,
	  0, 0, HTTP(400) },
	{ "empty boundary", "multipart/related; boundary=\"\"", ROOT_PART CLOSE,
	  0, 0, HTTP(400) },
	{ "71 character boundary", "multipart/related; boundary=" B71,
	  "--" B71 "\r\nContent-Type: application/soap+xml\r\n\r\n<e/>\r\n"
	  "--" B71 "--\r\n", 0, 0, HTTP(400) },
	{ "boundary with nul", "multipart/related; boundary=\"b\0001\"",
	  ROOT_PART CLOSE, 0, 0, HTTP(400) },
	{ "boundary with cr", "multipart/related; boundary=\"b\r1\"",
	  ROOT_PART CLOSE, 0, 0, HTTP(400) },
	{ "boundary with lf", "multipart/related; boundary=\"b\\\n1\"",
	  ROOT_PART CLOSE, 0, 0, HTTP(400) },
	{ "malformed multipart parameters", "multipart/related; boundary",
	  ROOT_PART CLOSE, 0, 0, HTTP(400) },
	{ "truncated", CT_B1, ROOT_PART ATT_PART, 0, 0, HTTP(400) },
	{ "truncated inside the close delimiter", CT_B1, ROOT_PART "--b1-", 0,
	  0, HTTP(400) },
	{ "delimiter at end without line break", CT_B1, ROOT_PART "--b1", 0, 0,
	  HTTP(400) },
	{ "empty body", CT_B1, "", 0, 0, HTTP(400) },
	{ "close delimiter only", CT_B1, "\r\n" CLOSE, 0, 0, HTTP(400) },
	{ "no delimiter at all", CT_B1, "<e/>", 0, 0, HTTP(400) },
	{ "too many parts", CT_B1, ROOT_PART ATT_PART
	  "--b1\r\nContent-ID: <a3>\r\n\r\nx\r\n" CLOSE, 2, 0, HTTP(413) },
	{ "oversize part headers", CT_B1, "--b1\r\nContent-Type: "
	  "application/soap+xml\r\nX-Long: 0123456789012345678901234567890123"
	  "4567890123456789\r\n\r\n<e/>\r\n" CLOSE, 0, 64, HTTP(400) },
	{ "oversize folded header", CT_B1, "--b1\r\nContent-Type: "
	  "application/soap+xml\r\nX-Long: 0123456789\r\n 0123456789\r\n "
	  "0123456789\r\n 0123456789\r\n\r\n<e/>\r\n" CLOSE, 0, 64, HTTP(400) },
	{ "header without colon", CT_B1, "--b1\r\nContent-Type application/"
	  "soap+xml\r\n\r\n<e/>\r\n" CLOSE, 0, 0, HTTP(400) },
	{ "header with empty name", CT_B1, "--b1\r\n: x\r\n\r\n<e/>\r\n" CLOSE,
	  0, 0, HTTP(400) },
	{ "continuation before any header", CT_B1, "--b1\r\n folded\r\n"
	  "Content-Type: application/soap+xml\r\n\r\n<e/>\r\n" CLOSE, 0, 0,
	  HTTP(400) },
	{ "wrong media type", "text/plain", "<e/>", 0, 0, HTTP(415) },
	{ "multipart/mixed", "multipart/mixed; boundary=b1", ROOT_PART CLOSE,
	  0, 0, HTTP(415) },
	{ "empty content-type", "", "<e/>", 0, 0, HTTP(415) },
	{ "garbage content-type", "soap", "<e/>", 0, 0, HTTP(415) },
	{ "root not soap", CT_B1, ATT_PART CLOSE, 0, 0, EBMS("EBMS:0007") },
	{ "start names a part that is not soap", CT_B1 "; start=\"<att>\"",
	  ROOT_PART ATT_PART CLOSE, 0, 0, EBMS("EBMS:0007") },
	{ "bad base64 character", CT_B1, ROOT_PART "--b1\r\nContent-ID: <att>"
	  "\r\nContent-Transfer-Encoding: base64\r\n\r\nSGV*bG8=\r\n" CLOSE, 0,
	  0, EBMS("EBMS:0007") },
	{ "base64 padding in the middle", CT_B1, ROOT_PART "--b1\r\n"
	  "Content-Transfer-Encoding: base64\r\n\r\nSG==SGVs\r\n" CLOSE, 0, 0,
	  EBMS("EBMS:0007") },
	{ "base64 bad length", CT_B1, ROOT_PART "--b1\r\n"
	  "Content-Transfer-Encoding: base64\r\n\r\nSGVsb\r\n" CLOSE, 0, 0,
	  EBMS("EBMS:0007") },
	{ "base64 too much padding", CT_B1, ROOT_PART "--b1\r\n"
	  "Content-Transfer-Encoding: base64\r\n\r\nS===\r\n" CLOSE, 0, 0,
	  EBMS("EBMS:0007") },
	{ "bad quoted-printable", CT_B1, ROOT_PART "--b1\r\n"
	  "Content-Transfer-Encoding: quoted-printable\r\n\r\na=zz\r\n" CLOSE,
	  0, 0, EBMS("EBMS:0007") },
	{ "unknown transfer encoding", CT_B1, ROOT_PART "--b1\r\n"
	  "Content-Transfer-Encoding: x-uuencode\r\n\r\nDATA\r\n" CLOSE, 0, 0,
	  EBMS("EBMS:0007") },
	{ "duplicate content-id", CT_B1, ROOT_PART ATT_PART
	  "--b1\r\nContent-ID: att\r\n\r\nother\r\n" CLOSE, 0, 0,
	  EBMS("EBMS:0007") },
	{ "duplicate content-type header", CT_B1, "--b1\r\nContent-Type: "
	  "application/soap+xml\r\nContent-type: text/xml\r\n\r\n<e/>\r\n"
	  CLOSE, 0, 0, EBMS("EBMS:0007") },
	{ "empty content-id", CT_B1, ROOT_PART "--b1\r\nContent-ID: <>\r\n\r\n"
	  "x\r\n" CLOSE, 0, 0, EBMS("EBMS:0007") },
	{ "malformed part content-type", CT_B1, "--b1\r\nContent-Type: soap"
	  "\r\n\r\n<e/>\r\n" CLOSE, 0, 0, EBMS("EBMS:0007") },
};

/* Check one successful parse against its row. */
static void
test_parse_check_ok(const struct parse_case *c, const struct mime_message *m,
    const unsigned char *body)
{
	const struct mime_part *root = &m->parts[m->root], *att;
	int bare = strncmp(c->ct, "multipart/", 10) != 0 &&
	    strncmp(c->ct, "Multipart/", 10) != 0;

	assert_int_equal(m->multipart, !bare);
	assert_int_equal(m->n_parts, c->n_parts);
	assert_int_equal(m->root, c->root);
	assert_int_equal(root->len, strlen(c->root_data));
	assert_memory_equal(root->data, c->root_data, root->len);
	if (bare) {
		assert_null(root->content_id);
		assert_ptr_equal(root->data, body);
		assert_string_equal(root->content_type, c->ct);
	}
	if (c->att_id == NULL)
		return;
	att = mime_find(m, c->att_id);
	assert_non_null(att);
	if (att == NULL)
		return;
	assert_int_equal(att->len, strlen(c->att_data));
	if (att->len > 0)
		assert_memory_equal(att->data, c->att_data, att->len);
}

/* Every row of parse_cases (with a spool bound: the same answers). */
static void
test_parse_table_run(struct arena *a)
{
	size_t i;

	for (i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *c = &parse_cases[i];
		struct mime_limits lim;
		struct mime_message m = { 0 };
		struct err err = { 0 };
		const unsigned char *body = (const unsigned char *)c->body;
		int rc;

		mime_limits_default(&lim);
		if (c->max_parts != 0)
			lim.max_parts = c->max_parts;
		if (c->max_hdrs != 0)
			lim.max_part_headers = c->max_hdrs;
		rc = mime_parse(a, c->ct, body, strlen(c->body), &lim, &m,
		    &err);
		if (rc != c->rc || err.kind != c->kind)
			fail_msg("case \"%s\": rc %d kind %d (%s)", c->name, rc,
			    (int)err.kind, err.msg);
		if (rc == 0) {
			test_parse_check_ok(c, &m, body);
			continue;
		}
		assert_true(err.msg[0] != '\0');
		if (c->status != 0 && err.http_status != c->status)
			fail_msg("case \"%s\": status %d", c->name,
			    err.http_status);
		if (c->code != NULL)
			assert_string_equal(err.ebms_code, c->code);
	}
}

static void
test_parse_table(void **state)
{
	test_parse_table_run(*state);
}

/* A spool for the calling thread that wants every output (threshold 0). */
static struct spool *
test_spool_bind(void)
{
	struct spool *sp = NULL;
	struct err err = { 0 };
	const char *dir = getenv("TMPDIR");

	assert_int_equal(spool_new(dir != NULL ? dir : "/tmp", 0, 0, &sp,
	    &err), 0);
	(void)spool_bind(sp);
	return sp;
}

/* issue 14: with a spool bound that wants everything, base64 and
 * quoted-printable parts decode into spool files: every row of the table
 * gives the same answer and the same bytes. */
static void
test_parse_table_spooled(void **state)
{
	struct spool *sp = test_spool_bind();

	test_parse_table_run(*state);
	spool_free(sp);
	assert_null(spool_bound());
}

/* One base64 part of n encoded characters (line breaks every 76),
 * decoded in memory and through a spool: the same bytes. */
static void
test_b64_both_ways(struct arena *a, size_t nraw)
{
	static const char hdr[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n--b1\r\nContent-ID: <att>\r\n"
	    "Content-Transfer-Encoding: base64\r\n\r\n";
	unsigned char *raw = malloc(nraw + 1), *enc = NULL;
	struct buf body = { 0 };
	struct mime_message m1, m2;
	const struct mime_part *p1, *p2;
	struct err err = { 0 };
	struct spool *sp;
	size_t i, n;

	assert_non_null(raw);
	for (i = 0; i < nraw; i++)
		raw[i] = (unsigned char)(i * 7 + (i >> 8));
	enc = malloc(nraw / 3 * 4 + 8);
	assert_non_null(enc);
	n = (size_t)EVP_EncodeBlock(enc, raw, (int)nraw);
	assert_int_equal(buf_append(&body, hdr, sizeof(hdr) - 1), 0);
	for (i = 0; i < n; i += 76)
		assert_int_equal(buf_printf(&body, "%.*s\r\n",
		    (int)(n - i < 76 ? n - i : 76), enc + i), 0);
	assert_int_equal(buf_puts(&body, "--b1--\r\n"), 0);
	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)body.data,
	    body.len, NULL, &m1, &err), 0);
	sp = test_spool_bind();
	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)body.data,
	    body.len, NULL, &m2, &err), 0);
	p1 = mime_find(&m1, "att");
	p2 = mime_find(&m2, "att");
	assert_non_null(p1);
	assert_non_null(p2);
	assert_int_equal(p1->len, nraw);
	assert_int_equal(p2->len, nraw);
	assert_memory_equal(p1->data, raw, nraw);
	assert_memory_equal(p2->data, raw, nraw);
	assert_true(p2->data != p1->data);
	spool_free(sp);
	buf_free(&body);
	free(raw);
	free(enc);
}

/* Lengths around the spooled decoder's piece (CODEC_B64_PIECE clean
 * characters: the padding at the end of a full piece, or just after it)
 * and one over several pieces. */
static void
test_b64_spooled_lengths(void **state)
{
	static const size_t lens[] = { 0, 1, 2, 3, 786430, 786431, 786432,
		786433, 786435, 2500001 };
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		test_b64_both_ways(*state, lens[i]);
}

/* Header values and defaults of the parts themselves. */
static void
test_parse_part_fields(void **state)
{
	static const char body[] = "--b1\r\nContent-Type:\r\n"
	    " application/SOAP+xml;"
	    "\r\n\tcharset=utf-8\r\nContent-ID: <cid:Root@X>\r\n\r\n<e/>\r\n"
	    "--b1\r\n\r\nplain\r\n--b1--\r\n";
	struct arena *a = *state;
	struct mime_message m;
	struct err err = { 0 };

	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)body,
	    sizeof(body) - 1, NULL, &m, &err), 0);
	assert_int_equal(m.n_parts, 2);
	assert_string_equal(m.parts[0].content_type,
	    "application/SOAP+xml;\tcharset=utf-8");
	assert_string_equal(m.parts[0].media_type, "application/soap+xml");
	assert_string_equal(m.parts[0].content_id, "Root@X");
	assert_string_equal(m.parts[0].transfer_encoding, "binary");
	/* RFC 2045 5.2 defaults */
	assert_null(m.parts[1].content_id);
	assert_string_equal(m.parts[1].content_type, "text/plain");
	assert_string_equal(m.parts[1].media_type, "text/plain");
	assert_int_equal(m.parts[1].len, 5);
	assert_memory_equal(m.parts[1].data, "plain", 5);
}

/* A NUL byte in a part header is refused; in a body it is data. */
static void
test_parse_nul(void **state)
{
	static const char hdr[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\nX-A: a\0b\r\n\r\n<e/>\r\n--b1--\r\n";
	static const char data[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n--b1\r\nContent-ID: <z>\r\n\r\na\0b\r\n--b1--\r\n";
	struct arena *a = *state;
	struct mime_message m;
	struct err err = { 0 };
	const struct mime_part *z;

	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)hdr,
	    sizeof(hdr) - 1, NULL, &m, &err), -1);
	assert_int_equal(err.kind, ERR_HTTP);
	assert_int_equal(err.http_status, 400);
	err_clear(&err);
	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)data,
	    sizeof(data) - 1, NULL, &m, &err), 0);
	z = mime_find(&m, "z");
	assert_non_null(z);
	if (z != NULL) {
		assert_int_equal(z->len, 3);
		assert_memory_equal(z->data, "a\0b", 3);
	}
}

/* NULL and missing Content-Type, NULL body, NULL limits. */
static void
test_parse_args(void **state)
{
	struct arena *a = *state;
	struct mime_message m;
	struct err err = { 0 };

	assert_int_equal(mime_parse(a, NULL, (const unsigned char *)"x", 1,
	    NULL, &m, &err), -1);
	assert_int_equal(err.http_status, 415);
	err_clear(&err);
	assert_int_equal(mime_parse(a, CT_B1, NULL, 0, NULL, &m, &err), -1);
	assert_int_equal(err.http_status, 400);
	err_clear(&err);
	assert_int_equal(mime_parse(a, "application/soap+xml", NULL, 0, NULL,
	    &m, &err), 0);
	assert_int_equal(m.parts[0].len, 0);
	assert_int_equal(mime_parse(a, "application/soap+xml", NULL, 5, NULL,
	    &m, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

/*
 * The body is read only inside [body, body+len): a body that ends right
 * after "--b1" or "--b1-" in a malloc'd buffer of exactly that size (valgrind
 * and ASan would see an overread).
 */
static void
test_parse_bounds(void **state)
{
	static const char *tails[] = { "--b1", "--b1-", "--b1 ", "--b1\r",
		"--b", "\r\n--b1--" };
	static const char head[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n";
	struct arena *a = *state;
	size_t i;

	for (i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t len = strlen(head) + strlen(tails[i]);
		unsigned char *b = malloc(len);
		struct mime_message m;
		struct err err = { 0 };
		int rc;

		assert_non_null(b);
		memcpy(b, head, strlen(head));
		memcpy(b + strlen(head), tails[i], strlen(tails[i]));
		rc = mime_parse(a, CT_B1, b, len, NULL, &m, &err);
		/* only the last one has a close delimiter */
		assert_int_equal(rc, i + 1 == sizeof(tails) / sizeof(tails[0]) ?
		    0 : -1);
		free(b);
	}
}

/* Many lines that almost match the delimiter: still linear, still 400. */
static void
test_parse_pathological(void **state)
{
	struct arena *a = *state;
	char b70[71];
	size_t line = 2 + 69 + 1, n = 8192, i;
	unsigned char *b = malloc(line * n);
	char ct[128];
	struct mime_message m;
	struct err err = { 0 };

	assert_non_null(b);
	memset(b70, 'a', 70);
	b70[70] = '\0';
	for (i = 0; i < n; i++) {
		memcpy(b + i * line, "--", 2);
		memset(b + i * line + 2, 'a', 69);
		b[i * line + line - 1] = '\n';
	}
	(void)snprintf(ct, sizeof(ct), "multipart/related; boundary=%s", b70);
	assert_int_equal(mime_parse(a, ct, b, line * n, NULL, &m, &err), -1);
	assert_int_equal(err.http_status, 400);
	free(b);
}

/* The arena budget running out is an internal error, not a crash. */
static void
test_parse_out_of_memory(void **state)
{
	static const char body[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n--b1\r\nContent-Transfer-Encoding: base64\r\n\r\n"
	    "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
	    "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB"
	    "\r\n--b1--\r\n";
	size_t budget;
	int ok = 0, failed = 0;

	(void)state;
	for (budget = 64; budget < 8192; budget += 64) {
		struct arena *a = arena_new(budget);
		struct mime_message m;
		struct err err = { 0 };

		assert_non_null(a);
		if (mime_parse(a, CT_B1, (const unsigned char *)body,
		    sizeof(body) - 1, NULL, &m, &err) == 0) {
			ok++;
		} else {
			assert_int_equal(err.kind, ERR_INTERNAL);
			failed++;
		}
		arena_free(a);
	}
	assert_true(ok > 0);
	assert_true(failed > 0);
}

/* ------------------------------------------------------------------ */
/* mime_find                                                          */

static void
test_find(void **state)
{
	static const char body[] = "--b1\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n--b1\r\nContent-ID: <earth>\r\n\r\n1\r\n"
	    "--b1\r\nContent-ID: <a b/c@x>\r\n\r\n2\r\n"
	    "--b1\r\nContent-ID: <100%>\r\n\r\n3\r\n"
	    "--b1\r\nContent-ID: <Case>\r\n\r\n4\r\n--b1--\r\n";
	static const struct {
		const char *q;
		const char *data; /* NULL: not found */
	} rows[] = {
		{ "earth", "1" }, { "<earth>", "1" }, { "cid:earth", "1" },
		{ "CID:earth", "1" }, { "cid:<earth>", "1" },
		{ " earth ", "1" },
		{ "cid:a%20b%2Fc@x", "2" }, { "cid:a%20b%2fc@x", "2" },
		{ "a b/c@x", "2" }, { "a%20b/c@x", NULL }, { "a%2", NULL },
		/* one cid: decoder (mime_hdr.h): a bad escape names nothing */
		{ "cid:100%", NULL }, { "cid:100%25", "3" }, { "100%", "3" },
		{ "Case", "4" }, { "case", NULL }, { "cid:", NULL },
		{ "", NULL },
		{ "eart", NULL }, { "earth2", NULL },
	};
	struct arena *a = *state;
	struct mime_message m;
	struct err err = { 0 };
	size_t i;

	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)body,
	    sizeof(body) - 1, NULL, &m, &err), 0);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct mime_part *p = mime_find(&m, rows[i].q);

		if ((p == NULL) != (rows[i].data == NULL))
			fail_msg("find \"%s\": %s", rows[i].q,
			    p == NULL ? "not found" : "found");
		if (p != NULL) {
			assert_int_equal(p->len, 1);
			assert_memory_equal(p->data, rows[i].data, 1);
		}
	}
	assert_null(mime_find(&m, NULL));
	assert_null(mime_find(NULL, "earth"));
}

/*
 * Found by fuzz_mime: a Content-ID with blanks inside "<>" or a repeated
 * "cid:" was stored half-stripped (" p2@fuzz", "cid:x"), so mime_find()
 * with the part's own content_id missed it and a written "<id>" parsed
 * back differently.  Stripping now runs to a fixpoint.
 */
static void
test_find_own_id(void **state)
{
	static const struct {
		const char *header;  /* Content-ID header value */
		const char *id;      /* stored content_id */
		const char *href;    /* a PartInfo href that must find it */
	} rows[] = {
		{ "< p2@fuzz>", "p2@fuzz", "cid:p2@fuzz" },
		{ "<p2@fuzz\t >", "p2@fuzz", "p2@fuzz" },
		{ " < cid: x@y > ", "x@y", "cid:x@y" },
		{ "<cid:cid:x@y>", "x@y", "cid:x@y" },
		{ "<<x@y>>", "x@y", "<x@y>" },
		{ "CID:<x@y>", "x@y", "cid:x@y" },
	};
	struct arena *a = *state;
	struct mime_message m;
	struct err err = { 0 };
	char body[256];
	size_t i;
	int n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		n = snprintf(body, sizeof(body), "--b1\r\nContent-Type: "
		    "application/soap+xml\r\n\r\n<e/>\r\n--b1\r\n"
		    "Content-ID: %s\r\n\r\n1\r\n--b1--\r\n", rows[i].header);
		assert_true(n > 0 && (size_t)n < sizeof(body));
		if (mime_parse(a, CT_B1, (const unsigned char *)body, (size_t)n,
		    NULL, &m, &err) != 0)
			fail_msg("\"%s\": %s", rows[i].header, err.msg);
		assert_string_equal(m.parts[1].content_id, rows[i].id);
		assert_ptr_equal(mime_find(&m, m.parts[1].content_id),
		    &m.parts[1]);
		assert_ptr_equal(mime_find(&m, rows[i].href), &m.parts[1]);
	}
	/* nothing but brackets and blanks is still an empty Content-ID */
	n = snprintf(body, sizeof(body), "--b1\r\nContent-Type: "
	    "application/soap+xml\r\n\r\n<e/>\r\n--b1\r\n"
	    "Content-ID: < <cid:> >\r\n\r\n1\r\n--b1--\r\n");
	assert_int_equal(mime_parse(a, CT_B1, (const unsigned char *)body,
	    (size_t)n, NULL, &m, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0007");
}

/* ------------------------------------------------------------------ */
/* Recorded messages                                                  */

#define TR "corpus/messages/thomsonreuters_eessi-as4.net/source/"
#define TRX "corpus/extracted/thomsonreuters_eessi-as4.net/source/"
#define RSS_ATT "att-0-_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware.bin"

struct corpus_case {
	const char *rel;      /* under TR and TRX */
	const char *ct;       /* reconstructed Content-Type */
	size_t n_parts;
	const char *ids[3];   /* Content-IDs in order; NULL = none */
	const char *att[3];   /* extracted attachment file per part, or NULL */
};

static const struct corpus_case corpus_cases[] = {
	{ "Eu.EDelivery.AS4.UnitTests/Resources/as4_single_payload.as4",
	  "multipart/related; boundary=\"=-PHQq1fuE9QxpIWax7CKj5w==\"; "
	  "type=\"application/soap+xml\"", 2, { NULL, "earth2" },
	  { NULL, "att-0-earth2.bin" } },
	{ "Eu.EDelivery.AS4.UnitTests/Resources/as4message.txt",
	  "multipart/related; boundary=\"=-M9awlqbs/xWAPxlvpSWrAg==\"; "
	  "type=\"application/soap+xml\"", 3, { NULL, "earth", "earth2" },
	  { NULL, "att-0-earth.bin", "att-1-earth2.bin" } },
	{ "Eu.EDelivery.AS4.ComponentTests/Resources/receiveagent_message.as4",
	  "multipart/related; boundary=\"=-C3oBZDXCy4W2LpjPUhC4rw==\"; "
	  "type=\"application/soap+xml\"", 2, { NULL, "earth" },
	  { NULL, "att-0-earth.bin" } },
	/* RSSBus: start= naming no part -> first part (NEGATIVE-CASES 12) */
	{ "Eu.EDelivery.AS4.UnitTests/Resources/rssbus_message.as4",
	  "multipart/related; boundary=\"NSMIMEBoundary__e5cfd617-6cec-4276-"
	  "b190-23f0b25d9d4d\"; type=\"application/soap+xml\"; "
	  "start=\"<not-the-root@nsoftware>\"", 2,
	  { "_f4691b6d-96fc-4ac8-a43e-2f495654f854",
	    "_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware" },
	  { NULL, RSS_ATT } },
	/* the same with start= naming the root */
	{ "Eu.EDelivery.AS4.UnitTests/Resources/rssbus_message.as4",
	  "multipart/related; boundary=\"NSMIMEBoundary__e5cfd617-6cec-4276-"
	  "b190-23f0b25d9d4d\"; type=\"application/soap+xml\"; "
	  "start=\"<_f4691b6d-96fc-4ac8-a43e-2f495654f854>\"", 2,
	  { "_f4691b6d-96fc-4ac8-a43e-2f495654f854",
	    "_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware" },
	  { NULL, RSS_ATT } },
};

/* The part equals a file under ../shared (root: envelope.xml). */
static void
test_corpus_compare(const char *dir, const char *file,
    const struct mime_part *p)
{
	char path[1024];
	size_t len;
	char *want;

	(void)snprintf(path, sizeof(path), TRX "%s/%s", dir, file);
	want = testutil_read_shared(path, &len);
	if (want == NULL)
		fail_msg("extracted file missing: %s", path);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, want, len);
	free(want);
}

/* One recorded message parses into the listed parts. */
static void
test_corpus_one(struct arena *a, const struct corpus_case *c)
{
	char path[1024];
	struct mime_message m;
	struct err err = { 0 };
	size_t len, i;
	char *body;

	(void)snprintf(path, sizeof(path), TR "%s", c->rel);
	body = testutil_read_shared(path, &len);
	if (body == NULL)
		testutil_skip(path);
	if (mime_parse(a, c->ct, (const unsigned char *)body, len, NULL, &m,
	    &err) != 0)
		fail_msg("%s: %s", c->rel, err.msg);
	assert_int_equal(m.multipart, 1);
	assert_int_equal(m.n_parts, c->n_parts);
	assert_int_equal(m.root, 0);
	assert_string_equal(m.parts[0].media_type, "application/soap+xml");
	test_corpus_compare(c->rel, "envelope.xml", &m.parts[0]);
	for (i = 0; i < c->n_parts; i++) {
		if (c->ids[i] == NULL) {
			assert_null(m.parts[i].content_id);
			continue;
		}
		assert_string_equal(m.parts[i].content_id, c->ids[i]);
		assert_ptr_equal(mime_find(&m, c->ids[i]), &m.parts[i]);
		if (c->att[i] != NULL)
			test_corpus_compare(c->rel, c->att[i], &m.parts[i]);
	}
	free(body);
}

static void
test_corpus(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(corpus_cases) / sizeof(corpus_cases[0]); i++)
		test_corpus_one(*state, &corpus_cases[i]);
}

/* RSSBus with start= naming the gzip attachment: root not SOAP, 0007. */
static void
test_corpus_rssbus_bad_start(void **state)
{
	struct mime_message m;
	struct err err = { 0 };
	size_t len;
	char *body = testutil_read_shared(TR "Eu.EDelivery.AS4.UnitTests/"
	    "Resources/rssbus_message.as4", &len);

	if (body == NULL)
		testutil_skip("rssbus_message.as4 missing");
	assert_int_equal(mime_parse(*state, "multipart/related; boundary="
	    "\"NSMIMEBoundary__e5cfd617-6cec-4276-b190-23f0b25d9d4d\"; start="
	    "\"<_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware>\"",
	    (const unsigned char *)body, len, NULL, &m, &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0007");
	free(body);
}

/* ------------------------------------------------------------------ */
/* Writer                                                             */

/* mime_write -> mime_ct_parse -> mime_parse gives the same parts back. */
static void
test_write_round_trip(void **state)
{
	static const unsigned char bin[] = { 0, '\r', '\n', '-', '-', 'M', 'I',
		'\r', '\n', 0xff, '\r' };
	const struct mime_out_part parts[] = {
		{ "root@as4gw", "application/soap+xml; charset=utf-8", "<e/>",
		  4 },
		{ "att 1", "application/octet-stream", bin, sizeof(bin) },
		{ "empty", "text/plain", NULL, 0 },
		{ NULL, NULL, "x", 1 },
	};
	struct arena *a = *state;
	struct buf out = { 0 };
	struct mime_message m;
	struct mime_ct ct;
	struct err err = { 0 };
	const char *cts = NULL, *b;
	size_t i;

	assert_int_equal(mime_write(a, parts, 4, NULL, &out, &cts, &err), 0);
	assert_non_null(cts);
	assert_int_equal(mime_ct_parse(a, cts, &ct), 0);
	assert_string_equal(ct.type, "multipart/related");
	b = mime_ct_param(&ct, "boundary");
	assert_non_null(b);
	assert_int_equal(strncmp(b, "MIMEBoundary_", 13), 0);
	assert_int_equal(strlen(b), 13 + 36);
	assert_string_equal(mime_ct_param(&ct, "type"), "application/soap+xml");
	assert_string_equal(mime_ct_param(&ct, "start"), "<root@as4gw>");
	assert_true(strstr(out.data, "Content-Transfer-Encoding: binary\r\n")
	    != NULL);
	assert_true(strstr(out.data, "Content-ID: <att 1>\r\n") != NULL);
	assert_int_equal(mime_parse(a, cts, (const unsigned char *)out.data,
	    out.len, NULL, &m, &err), 0);
	assert_int_equal(m.n_parts, 4);
	assert_int_equal(m.root, 0);
	for (i = 0; i < 4; i++) {
		assert_int_equal(m.parts[i].len, parts[i].len);
		if (parts[i].len > 0)
			assert_memory_equal(m.parts[i].data, parts[i].data,
			    parts[i].len);
		if (parts[i].content_id == NULL)
			assert_null(m.parts[i].content_id);
		else
			assert_string_equal(m.parts[i].content_id,
			    parts[i].content_id);
	}
	assert_string_equal(m.parts[3].media_type, "application/octet-stream");
	buf_free(&out);
}

/* A caller's boundary; a root without Content-ID has no start=. */
static void
test_write_fixed_boundary(void **state)
{
	const struct mime_out_part root = { NULL, "application/soap+xml",
		"<e/>", 4 };
	static const char want[] = "--B\r\nContent-Type: application/soap+xml"
	    "\r\nContent-Transfer-Encoding: binary\r\n\r\n<e/>\r\n--B--\r\n";
	struct arena *a = *state;
	struct buf out = { 0 };
	struct err err = { 0 };
	const char *cts = NULL;

	assert_int_equal(buf_puts(&out, "keep"), 0);
	assert_int_equal(mime_write(a, &root, 1, "B", &out, &cts, &err), 0);
	assert_string_equal(cts, "multipart/related; boundary=\"B\"; "
	    "type=\"application/soap+xml\"");
	assert_string_equal(out.data + 4, want);
	buf_free(&out);
}

struct write_fail {
	const char *name;
	const char *boundary;
	struct mime_out_part part;
	size_t n;
};

/* Refusals: out is left as it was and ret_content_type is not written. */
static void
test_write_failures(void **state)
{
	static const struct write_fail rows[] = {
		{ "no parts", "B", { "r", "application/soap+xml", "x", 1 }, 0 },
		{ "71 char boundary", B71, { "r", "a/b", "x", 1 }, 1 },
		{ "empty boundary", "", { "r", "a/b", "x", 1 }, 1 },
		{ "quote in boundary", "a\"b", { "r", "a/b", "x", 1 }, 1 },
		{ "crlf in content-type", "B", { "r", "a/b\r\nX: y", "x", 1 },
		  1 },
		{ "crlf in content-id", "B", { "r\r\n", "a/b", "x", 1 }, 1 },
		{ "bracket in content-id", "B", { "r>", "a/b", "x", 1 }, 1 },
		{ "empty content-id", "B", { "", "a/b", "x", 1 }, 1 },
		{ "delimiter in data", "B", { "r", "a/b", "x\r\n--B\r\ny", 9 },
		  1 },
		{ "delimiter at data start", "B", { "r", "a/b", "--B--", 5 },
		  1 },
		{ "delimiter at data end", "B", { "r", "a/b", "x\n--B", 5 },
		  1 },
	};
	struct arena *a = *state;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf out = { 0 };
		struct err err = { 0 };
		const char *cts = "unset";

		assert_int_equal(buf_puts(&out, "keep"), 0);
		if (mime_write(a, &rows[i].part, rows[i].n, rows[i].boundary,
		    &out, &cts, &err) != -1)
			fail_msg("write \"%s\" succeeded", rows[i].name);
		assert_int_equal(err.kind, ERR_INTERNAL);
		assert_string_equal(cts, "unset");
		assert_string_equal(out.data, "keep");
		buf_free(&out);
	}
}

/* A buffer limit that trips part-way restores the buffer. */
static void
test_write_buf_limit(void **state)
{
	const struct mime_out_part root = { "r", "application/soap+xml",
		"0123456789012345678901234567890123456789", 40 };
	struct buf out = { 0 };
	struct err err = { 0 };
	const char *cts = "unset";

	out.limit = 80;
	assert_int_equal(mime_write(*state, &root, 1, "B", &out, &cts, &err),
	    -1);
	assert_int_equal(out.len, 0);
	assert_string_equal(cts, "unset");
	buf_free(&out);
}

static void
test_limits_default(void **state)
{
	struct mime_limits lim;

	(void)state;
	mime_limits_default(&lim);
	assert_int_equal(lim.max_parts, 64);
	assert_int_equal(lim.max_part_headers, 16384);
}

#define T(f) cmocka_unit_test_setup_teardown(f, test_mime_setup, \
	test_mime_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ct_table),
		T(test_ct_param_bound),
		T(test_parse_table),
		T(test_parse_table_spooled),
		T(test_b64_spooled_lengths),
		T(test_parse_part_fields),
		T(test_parse_nul),
		T(test_parse_args),
		T(test_parse_bounds),
		T(test_parse_pathological),
		T(test_parse_out_of_memory),
		T(test_find),
		T(test_find_own_id),
		T(test_corpus),
		T(test_corpus_rssbus_bad_start),
		T(test_write_round_trip),
		T(test_write_fixed_boundary),
		T(test_write_failures),
		T(test_write_buf_limit),
		T(test_limits_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
