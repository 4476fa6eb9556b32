/* Unit tests for mime/mime_hdr.c (issue 10 item 14): the one owner of MIME
 * header fields, unfolding, comments, RFC 2047/2231 and cid: URLs, and the
 * callers that used to carry their own copies and disagreed (mime_find read
 * "%zz" literally where the SwA resolver refused it). */
#include "mime/mime_hdr.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "mime/mime.h"
#include "testutil.h"

static int
setup(void **state)
{
	*state = arena_new(0);
	return *state == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	arena_free(*state);
	return 0;
}

/* Fields of a block: folding, blanks before the colon, malformed blocks. */
static void
test_fields(void **state)
{
	static const char blk[] = "Content-Type : text/xml;\r\n charset=utf-8\r\n"
	    "Content-ID: <a@b>\r\n";
	struct mime_field f;
	size_t pos = 0;

	(void)state;
	assert_int_equal(mime_hdr_next(blk, sizeof(blk) - 1, &pos, &f), 1);
	assert_int_equal(f.name_len, 12);
	assert_memory_equal(f.name, "Content-Type", 12);
	assert_int_equal(f.value_len, strlen(" text/xml;\r\n charset=utf-8\r\n"));
	assert_int_equal(mime_hdr_next(blk, sizeof(blk) - 1, &pos, &f), 1);
	assert_memory_equal(f.name, "Content-ID", 10);
	assert_int_equal(mime_hdr_next(blk, sizeof(blk) - 1, &pos, &f), 0);

	pos = 0;   /* a continuation with no field before it */
	assert_int_equal(mime_hdr_next(" x: y\r\n", 7, &pos, &f), -1);
	pos = 0;   /* no colon */
	assert_int_equal(mime_hdr_next("Content-Type\r\n", 14, &pos, &f), -1);
	pos = 0;   /* empty name */
	assert_int_equal(mime_hdr_next(": y\r\n", 5, &pos, &f), -1);
	pos = 0;   /* NUL in a continuation line */
	assert_int_equal(mime_hdr_next("a: b\r\n c\0d\r\n", 12, &pos, &f), -1);
}

/* mime_hdr_get: found, absent, repeated, malformed; case-insensitive. */
static void
test_get(void **state)
{
	static const char two[] = "content-id: <x>\r\nContent-ID: <y>\r\n";
	static const char one[] = "X: 1\r\nCONTENT-TYPE:\ttext/plain\r\n";
	const char *v = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(mime_hdr_get(one, sizeof(one) - 1, "Content-Type",
	    &v, &len), 1);
	assert_int_equal(len, strlen("\ttext/plain\r\n"));
	assert_int_equal(mime_hdr_get(one, sizeof(one) - 1, "Content-ID",
	    &v, &len), 0);
	assert_int_equal(mime_hdr_get(two, sizeof(two) - 1, "Content-ID",
	    &v, &len), -1);
	assert_int_equal(mime_hdr_get("bad\r\n", 5, "Content-ID", &v, &len),
	    -1);
}

/* Unfolding, comments, RFC 2047. */
static void
test_values(void **state)
{
	struct arena *a = *state;
	char *s;

	s = mime_hdr_unfold(a, " a\r\n\tb \r\n", 9);
	assert_string_equal(s, "a\tb");
	s = mime_hdr_unfold(a, "x (c) \"q (not)\" y", 17);
	assert_int_equal(mime_hdr_uncomment(s), 0);
	assert_string_equal(s, "x  \"q (not)\" y");
	s = mime_hdr_unfold(a, "(unbalanced", 11);
	assert_int_equal(mime_hdr_uncomment(s), -1);
	s = mime_hdr_unfold(a, "=?utf-8?Q?a_b?= =?UTF-8?B?Yw==?= d", 34);
	assert_int_equal(mime_hdr_rfc2047(s), 0);
	assert_string_equal(s, "a bc d");
	s = mime_hdr_unfold(a, "=?iso-8859-1?Q?x?=", 18);
	assert_int_equal(mime_hdr_rfc2047(s), -1);
	s = mime_hdr_unfold(a, "=?utf-8?Q?=00?=", 15);
	assert_int_equal(mime_hdr_rfc2047(s), -1);
}

/* RFC 2231 values, alone and through the parameter grammar. */
static void
test_rfc2231(void **state)
{
	struct arena *a = *state;
	const struct mime_param *p;
	const char *lead;
	char v[] = "utf-8'en'a%20b";
	size_t len = strlen(v), n;
	struct mime_ct ct;

	assert_int_equal(mime_hdr_rfc2231(v, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "a b", 3);
	len = 9;
	assert_int_equal(mime_hdr_rfc2231(strcpy(v, "''a%00b"), &len), -1);

	assert_int_equal(mime_ct_value_parse(a, "Attachment; filename*="
	    "UTF-8''x%2Ey; size=3", &lead, &p, &n), 0);
	assert_string_equal(lead, "attachment");
	assert_int_equal(n, 2);
	assert_string_equal(p[0].name, "filename");
	assert_string_equal(p[0].value, "x.y");
	/* continuations, quoted extended values, a bad escape: refused */
	assert_int_equal(mime_ct_value_parse(a, "a; f*0=x", &lead, &p, &n), -1);
	assert_int_equal(mime_ct_value_parse(a, "a; f*=\"''x\"", &lead, &p,
	    &n), -1);
	assert_int_equal(mime_ct_parse(a, "text/xml; charset*=''%zz", &ct),
	    -1);
	assert_int_equal(mime_ct_parse(a, "text/xml; charset*=''utf%2D8",
	    &ct), 0);
	assert_string_equal(mime_ct_param(&ct, "charset"), "utf-8");
	/* one name twice, once extended: refused */
	assert_int_equal(mime_ct_value_parse(a, "a; f=1; f*=''2", &lead, &p,
	    &n), -1);
}

/* cid: URLs: one decoder (strict), one encoder, round trip. */
static void
test_cid(void **state)
{
	struct arena *a = *state;
	const char *ids[] = { "a@b", "x y/<z>", "p%q", "\xc3\xa9\x01", "'()" };
	size_t i;
	char *url;

	assert_string_equal(mime_cid_decode(a, "a%40b"), "a@b");
	assert_null(mime_cid_decode(a, "a%zzb"));
	assert_null(mime_cid_decode(a, "a%4"));
	assert_null(mime_cid_decode(a, "a%00b"));
	assert_int_equal(mime_cid_match("a%zzb", 5, "a%zzb"), -1);
	assert_int_equal(mime_cid_match("a%40b", 5, "a@b"), 1);
	assert_int_equal(mime_cid_match("a%40b", 5, "a@c"), 0);
	assert_int_equal(mime_cid_match("a%4", 3, "a@"), -1);
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		url = mime_cid_url(a, ids[i]);
		assert_non_null(url);
		assert_memory_equal(url, "cid:", 4);
		assert_null(strpbrk(url + 4, " /<>'()\x01"));
		assert_string_equal(mime_cid_decode(a, url + 4), ids[i]);
		assert_int_equal(mime_cid_match(url + 4, strlen(url + 4),
		    ids[i]), 1);
	}
	assert_null(mime_cid_url(a, ""));
}

/* mime_find agrees with the resolver: a malformed escape names nothing,
 * though a Content-ID spelled with it literally exists. */
static void
test_find_agrees(void **state)
{
	struct arena *a = *state;
	static const char body[] = "--b\r\nContent-Type: application/soap+xml"
	    "\r\n\r\n<e/>\r\n--b\r\nContent-ID: <a%zzb>\r\n\r\nx\r\n--b\r\n"
	    "Content-ID: <c d>\r\n\r\ny\r\n--b--\r\n";
	struct mime_message m;
	struct err err = {0};

	assert_int_equal(mime_parse(a, "multipart/related; boundary=b",
	    (const unsigned char *)body, sizeof(body) - 1, NULL, &m, &err), 0);
	assert_int_equal(m.n_parts, 3);
	assert_null(mime_find(&m, "cid:a%zzb"));
	assert_ptr_equal(mime_find(&m, "cid:c%20d"), &m.parts[2]);
	assert_ptr_equal(mime_find(&m, "c d"), &m.parts[2]);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_fields),
		T(test_get),
		T(test_values),
		T(test_rfc2231),
		T(test_cid),
		T(test_find_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
