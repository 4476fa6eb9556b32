/* Unit tests for mime/: the writer (mime_write -> mime_ct_parse ->
 * mime_parse round trip, fixed boundary, failures, the buffer limit). */
#include "mime/mime.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testmime.h"
#include "testutil.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_write_round_trip),
		T(test_write_fixed_boundary),
		T(test_write_failures),
		T(test_write_buf_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
