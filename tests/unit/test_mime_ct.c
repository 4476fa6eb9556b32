/* Unit tests for mime/: the Content-Type grammar (mime_ct_parse) and the
 * default limits. */
#include "mime/mime.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "testmime.h"
#include "testutil.h"

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


static void
test_limits_default(void **state)
{
	struct mime_limits lim;

	(void)state;
	mime_limits_default(&lim);
	assert_int_equal(lim.max_parts, 64);
	assert_int_equal(lim.max_part_headers, 16384);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ct_table),
		T(test_ct_param_bound),
		T(test_limits_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
