/* Unit tests for src/util: arena, buf, clock, codec, err. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "testutil.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/codec.h"
#include "util/err.h"

static int cleanup_log[8];
static int cleanup_n;

static void
record_cleanup(void *p)
{
	cleanup_log[cleanup_n++] = *(int *)p;
}

static void
test_arena_budget_and_cleanup_order(void **state)
{
	static int one = 1, two = 2;
	struct arena *a = arena_new(1000);
	char *p;

	(void)state;
	assert_non_null(a);
	p = arena_alloc(a, 100);
	assert_non_null(p);
	assert_int_equal(p[99], 0);
	assert_null(arena_alloc(a, 2000));          /* over budget: request fails */
	assert_non_null(arena_alloc(a, 500));       /* still usable afterwards */
	assert_null(arena_calloc(a, SIZE_MAX / 2, 4)); /* overflow refused */
	cleanup_n = 0;
	assert_int_equal(arena_cleanup(a, record_cleanup, &one), 0);
	assert_int_equal(arena_cleanup(a, record_cleanup, &two), 0);
	assert_int_equal(arena_cleanup(a, record_cleanup, NULL), 0);
	arena_free(a);
	assert_int_equal(cleanup_n, 2);
	assert_int_equal(cleanup_log[0], 2);        /* last registered first */
	assert_int_equal(cleanup_log[1], 1);
	arena_free(NULL);
}

static void
test_arena_strings(void **state)
{
	struct arena *a = arena_new(0);
	char *s;

	(void)state;
	s = arena_sprintf(a, "%s-%d", "x", 42);
	assert_string_equal(s, "x-42");
	assert_string_equal(arena_strndup(a, "abcdef", 3), "abc");
	assert_null(arena_strdup(a, NULL));
	s = arena_alloc(a, 100000);                 /* big allocation, own chunk */
	assert_non_null(s);
	memset(s, 'x', 100000);
	assert_string_equal(arena_strdup(a, "after"), "after");
	arena_free(a);
}

static void
test_buf_limit_and_escapes(void **state)
{
	struct buf b = {0};

	(void)state;
	b.limit = 8;
	assert_int_equal(buf_puts(&b, "12345678"), 0);
	assert_int_equal(buf_puts(&b, "9"), -1);    /* over limit: unchanged */
	assert_int_equal(b.len, 8);
	buf_reset(&b);
	b.limit = 0;
	assert_int_equal(buf_json_escape(&b, "a\"b\\c\n\x01"), 0);
	assert_string_equal(b.data, "a\\\"b\\\\c\\n\\u0001");
	buf_reset(&b);
	assert_int_equal(buf_xml_escape(&b, "<a href=\"x\">&'"), 0);
	assert_string_equal(b.data, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
	buf_free(&b);
	buf_free(&b);
	buf_free(NULL);
}

/* Issue 10 item 7: JSON (and so the log) is always valid UTF-8. */
static const struct {
	const char *in, *out;
} json_utf8_cases[] = {
	{"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", /* 2, 3, 4 bytes kept */
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
	{"/as4\xff", "/as4\\ufffd"},                    /* %ff decoded */
	{"\x80x", "\\ufffdx"},                           /* stray continuation */
	{"\xc3", "\\ufffd"},                             /* lead byte at the end */
	{"\xc3x", "\\ufffdx"},                           /* lead byte, no continuation */
	{"\xe2\x82", "\\ufffd\\ufffd"},                 /* cut 3-byte sequence */
	{"\xc0\xaf", "\\ufffd\\ufffd"},                 /* overlong "/" */
	{"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},       /* overlong, 3 bytes */
	{"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},       /* surrogate U+D800 */
	{"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* above U+10FFFF */
	{"\xf5\xfe\xff", "\\ufffd\\ufffd\\ufffd"},       /* never in UTF-8 */
	{"\xef\xbf\xbd\x7f\x1f", "\xef\xbf\xbd\\u007f\\u001f"},
};

static void
test_json_escape_utf8(void **state)
{
	struct buf b = {0};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(json_utf8_cases) / sizeof(json_utf8_cases[0]); i++) {
		buf_reset(&b);
		assert_int_equal(buf_json_escape(&b, json_utf8_cases[i].in), 0);
		if (strcmp(b.data, json_utf8_cases[i].out) != 0)
			fail_msg("case %zu: got \"%s\"", i, b.data);
	}
	buf_free(&b);
}

/* Where a string may be cut: never inside a character. */
static const struct {
	const char *s;
	size_t max, want;
} utf8_prefix_cases[] = {
	{"abc", 2, 2},
	{"abc", 10, 3},
	{"a\xc3\xa9", 2, 1},                 /* would split the e-acute */
	{"a\xc3\xa9", 3, 3},
	{"\xe2\x82\xac\xe2\x82\xac", 5, 3},
	{"\xf0\x9f\x98\x80", 3, 0},
	{"\xff\xfe", 1, 1},                  /* invalid bytes: one each */
	{"", 5, 0},
};

static void
test_utf8_prefix(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(utf8_prefix_cases) / sizeof(utf8_prefix_cases[0]); i++)
		if (buf_utf8_prefix(utf8_prefix_cases[i].s,
		    utf8_prefix_cases[i].max) != utf8_prefix_cases[i].want)
			fail_msg("case %zu", i);
}

static const struct {
	const char *text;
	int ok;
	int64_t ms;
} clock_cases[] = {
	{"1970-01-01T00:00:00Z", 1, 0},
	{"1970-01-01T00:00:01.5Z", 1, 1500},
	{"2017-05-08T05:47:41.2208238Z", 1, 1494222461220},
	{"2016-09-21T15:03:40.314+02:00", 1, 1474463020314},
	{"2024-02-29T00:00:00", 1, 1709164800000},
	{"2023-02-29T00:00:00Z", 0, 0},
	{"2023-13-01T00:00:00Z", 0, 0},
	{"2023-01-01 00:00:00Z", 0, 0},
	{"2023-01-01T00:00:00+2:00", 0, 0},
	{"2023-01-01T00:00:00.Z", 0, 0},
	{"imaginary", 0, 0},
	{"", 0, 0},
};

static void
test_clock_parse(void **state)
{
	char out[CLOCK_ISO_LEN];
	int64_t ms;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(clock_cases) / sizeof(clock_cases[0]); i++) {
		int rc = clock_parse_iso8601(clock_cases[i].text, &ms);

		if (clock_cases[i].ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(ms, clock_cases[i].ms);
		} else {
			assert_int_equal(rc, -1);
		}
	}
	clock_iso8601(1494222461220, out);
	assert_string_equal(out, "2017-05-08T05:47:41.220Z");
	assert_int_equal(clock_parse_iso8601(out, &ms), 0);
	assert_int_equal(ms, 1494222461220);
}

static void
test_codec(void **state)
{
	struct arena *a = arena_new(0);
	unsigned char d[CODEC_SHA256_LEN], *raw;
	struct codec_sha256 *h;
	char hex[2 * CODEC_SHA256_LEN + 1], uuid[37];
	size_t n;

	(void)state;
	assert_int_equal(codec_sha256("abc", 3, d), 0);
	codec_hex(d, sizeof(d), hex);
	assert_string_equal(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	h = codec_sha256_new();
	assert_int_equal(codec_sha256_update(h, "a", 1), 0);
	assert_int_equal(codec_sha256_update(h, "bc", 2), 0);
	assert_int_equal(codec_sha256_final(h, d), 0);
	codec_hex(d, sizeof(d), hex);
	assert_string_equal(hex,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_string_equal(codec_base64(a, "hello", 5), "aGVsbG8=");
	assert_int_equal(codec_unbase64(a, "aGVs\r\nbG8=", 10, &raw, &n), 0);
	assert_int_equal(n, 5);
	assert_memory_equal(raw, "hello", 5);
	assert_int_equal(codec_unbase64(a, "aGV", 3, &raw, &n), -1);
	assert_int_equal(codec_unbase64(a, "a!Vs", 4, &raw, &n), -1);
	assert_int_equal(codec_hexval('0'), 0);
	assert_int_equal(codec_hexval('9'), 9);
	assert_int_equal(codec_hexval('a'), 10);
	assert_int_equal(codec_hexval('F'), 15);
	assert_int_equal(codec_hexval('g'), -1);
	assert_int_equal(codec_hexval('\0'), -1);
	assert_int_equal(codec_hexval(-3), -1);
	assert_int_equal(codec_uuid(uuid), 0);
	assert_int_equal(strlen(uuid), 36);
	assert_int_equal(uuid[14], '4');
	arena_free(a);
}

/* A message or detail too long for struct err is cut between characters. */
static void
test_err_cut_at_character(void **state)
{
	struct err err = {0};
	char big[4096];
	size_t i, n;

	(void)state;
	big[0] = 'x';
	for (i = 1; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[i] = '\0';
	(void)err_set(&err, ERR_EBMS, NULL, "%s", big);
	n = strlen(err.msg);
	assert_true(n > 0 && n < sizeof(err.msg));
	assert_int_equal(buf_utf8_prefix(err.msg, n), n);
	assert_true(n % 2 == 1);        /* "x" and whole 2-byte characters */
	err_detail(&err, "%s", big);
	n = strlen(err.detail);
	assert_true(n > 0 && n < sizeof(err.detail));
	assert_int_equal(buf_utf8_prefix(err.detail, n), n);
}

static void
test_err_first_wins(void **state)
{
	struct err err = {0};

	(void)state;
	assert_int_equal(err_set(&err, ERR_EBMS, "EBMS:0009", "first %d", 1), -1);
	assert_int_equal(err_http(&err, 413, "second"), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0009");
	assert_string_equal(err.msg, "first 1");
	err_detail(&err, "a=%s", "x");
	err_detail(&err, "b");
	assert_string_equal(err.detail, "a=x; b");
	err_clear(&err);
	assert_int_equal(err.kind, ERR_NONE);
	assert_int_equal(err_soap(&err, ERR_SOAP_VERSION_MISMATCH, 500, "v"), -1);
	assert_int_equal(err.http_status, 500);
	assert_string_equal(err_kind_name(ERR_STORE), "store");
	assert_int_equal(err_set(NULL, ERR_IO, NULL, "x"), -1);
}

/* err_ebms carries a partner-visible eb:ErrorDetail with its eb:Error; it
 * never attaches to an earlier failure, and err_set leaves none. */
static void
test_err_ebms_detail(void **state)
{
	struct err err = {0};

	(void)state;
	assert_int_equal(err_ebms(&err, "EBMS:0004", "PEPPOL:NOT_SERVICED",
	    "%s", "not served"), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0004");
	assert_string_equal(err.ebms_detail, "PEPPOL:NOT_SERVICED");
	assert_string_equal(err.msg, "not served");
	err_clear(&err);
	assert_null(err.ebms_detail);
	assert_int_equal(err_set(&err, ERR_EBMS, "EBMS:0010", "first"), -1);
	assert_int_equal(err_ebms(&err, "EBMS:0004", "PEPPOL:NOT_SERVICED",
	    "second"), -1);
	assert_string_equal(err.ebms_code, "EBMS:0010");
	assert_null(err.ebms_detail);
	assert_string_equal(err.msg, "first");
	assert_int_equal(err_ebms(NULL, "EBMS:0004", NULL, "x"), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arena_budget_and_cleanup_order),
		cmocka_unit_test(test_arena_strings),
		cmocka_unit_test(test_buf_limit_and_escapes),
		cmocka_unit_test(test_json_escape_utf8),
		cmocka_unit_test(test_utf8_prefix),
		cmocka_unit_test(test_clock_parse),
		cmocka_unit_test(test_codec),
		cmocka_unit_test(test_err_first_wins),
		cmocka_unit_test(test_err_ebms_detail),
		cmocka_unit_test(test_err_cut_at_character),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
