/* Unit tests for src/edifact (issue 12 item 4): the UNA service string
 * advice and the UNB interchange header, table-driven: what an
 * interchange's business key is read from, and every malformed header
 * class refused (ISO 9735). */
#include "edifact/edifact.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "testutil.h"

/* One header that parses, and what it yields. */
struct t_good {
	const char *name;
	const char *in;
	const char *syntax;
	int version;
	const char *sender, *sender_qual, *recipient, *recipient_qual, *ref;
	char release;
};

static const struct t_good t_goods[] = {
	{ "defaults, no UNA",
	    "UNB+UNOA:3+5790000000001:14+5790000000002:14+200101:1200+REF1'"
	    "UNH+1+INVOIC:D:96A:UN'",
	    "UNOA", 3, "5790000000001", "14", "5790000000002", "14", "REF1",
	    '?' },
	{ "standard UNA",
	    "UNA:+.? 'UNB+UNOC:3+S:ZZ+R:ZZ+20200101:1200+R2++APP'",
	    "UNOC", 3, "S", "ZZ", "R", "ZZ", "R2", '?' },
	{ "custom separators and release character",
	    "UNA|*.\\ ~UNB*UNOY|4*A\\*B|1*C\\|D*991231|2359*X\\~Y~",
	    "UNOY", 4, "A*B", "1", "C|D", "", "X~Y", '\\' },
	{ "UNA with CRLF before UNB and no qualifiers",
	    "UNA:+.? '\r\nUNB+UNOB:1+SENDER+RECIP+010101:0000+7'",
	    "UNOB", 1, "SENDER", "", "RECIP", "", "7", '?' },
	{ "UNA without release character",
	    "UNA:+.  'UNB+UNOA:2+S?:1+R+010101:0000+Z?'",
	    "UNOA", 2, "S?", "1", "R", "", "Z?", 0 },
	{ "version 4 components and routing addresses",
	    "UNB+UNOD:4:2:001+S:14:ROUTE:SUB+R:14:RR+20240229:0930+"
	    "12345678901234+PW+APP+A+1+AGR+1'",
	    "UNOD", 4, "S", "14", "R", "14", "12345678901234", '?' },
	{ "maximum lengths",
	    "UNB+UNOA:3+12345678901234567890123456789012345:ABCD"
	    "+12345678901234567890123456789012345:WXYZ+010101:0000"
	    "+ABCDEFGHIJKLMN'",
	    "UNOA", 3, "12345678901234567890123456789012345", "ABCD",
	    "12345678901234567890123456789012345", "WXYZ", "ABCDEFGHIJKLMN",
	    '?' },
};

/* Headers that must be refused, each a class of its own. */
static const struct {
	const char *name;
	const char *in;
} t_bads[] = {
	{ "UNA too short", "UNA:+.?" },
	{ "UNA letter as separator", "UNA:A.? 'UNB+UNOA:3+S+R+010101:0000+1'" },
	{ "UNA separators not distinct", "UNA::.? 'UNB:UNOA:3:S:R:010101:0000:1'" },
	{ "UNA bad decimal mark", "UNA:+;? 'UNB+UNOA:3+S+R+010101:0000+1'" },
	{ "UNA space as segment terminator", "UNA:+.?  UNB+UNOA:3+S+R+0101:0+1 " },
	{ "UNA control byte separator", "UNA:\n.? 'UNB\nUNOA:3\nS\nR'" },
	{ "nothing after UNA", "UNA:+.? '" },
	{ "other segment after UNA", "UNA:+.? 'UNH+1+INVOIC'" },
	{ "too many line breaks after UNA",
	    "UNA:+.? '\r\n\r\n\r\nUNB+UNOA:3+S+R+010101:0000+1'" },
	{ "UNB without separator", "UNBUNOA:3+S+R+010101:0000+1'" },
	{ "syntax identifier KECA", "UNB+KECA:3+S+R+010101:0000+1'" },
	{ "syntax identifier UNOZ", "UNB+UNOZ:3+S+R+010101:0000+1'" },
	{ "syntax identifier too long", "UNB+UNOAA:3+S+R+010101:0000+1'" },
	{ "syntax version 5", "UNB+UNOA:5+S+R+010101:0000+1'" },
	{ "syntax version missing", "UNB+UNOA+S+R+010101:0000+1'" },
	{ "S001 component too many", "UNB+UNOA:4:1:8:X+S+R+010101:0000+1'" },
	{ "sender empty", "UNB+UNOA:3+:14+R+010101:0000+1'" },
	{ "recipient empty", "UNB+UNOA:3+S++010101:0000+1'" },
	{ "sender 36 bytes",
	    "UNB+UNOA:3+123456789012345678901234567890123456+R+010101:0000+1'" },
	{ "qualifier 5 bytes", "UNB+UNOA:3+S:12345+R+010101:0000+1'" },
	{ "released bytes count toward the length",
	    "UNB+UNOA:3+S:?+?+?+?+?++R+010101:0000+1'" },
	{ "control reference 15 bytes",
	    "UNB+UNOA:3+S+R+010101:0000+123456789012345'" },
	{ "control reference empty", "UNB+UNOA:3+S+R+010101:0000+'" },
	{ "control reference with components",
	    "UNB+UNOA:3+S+R+010101:0000+1:2'" },
	{ "date not digits", "UNB+UNOA:3+S+R+0101AA:0000+1'" },
	{ "date 7 digits", "UNB+UNOA:3+S+R+0101011:0000+1'" },
	{ "time missing", "UNB+UNOA:3+S+R+010101+1'" },
	{ "segment ends early", "UNB+UNOA:3+S+R'" },
	{ "data ends early", "UNB+UNOA:3+S+R+0101" },
	{ "data ends after the reference", "UNB+UNOA:3+S+R+010101:0000+LAST" },
	{ "data ends in the reference's release", "UNB+UNOA:3+S+R+010101:0000+1?" },
	{ "control byte in a value", "UNB+UNOA:3+S\tX+R+010101:0000+1'" },
	{ "released control byte", "UNB+UNOA:3+S?\nX+R+010101:0000+1'" },
	{ "DEL in a value", "UNB+UNOA:3+S\x7fX+R+010101:0000+1'" },
	{ "S002 component too many", "UNB+UNOA:3+S:1:2:3:4+R+010101:0000+1'" },
};

/* Every good header parses to its table row. */
static void
test_good(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t_goods) / sizeof(t_goods[0]); i++) {
		const struct t_good *g = &t_goods[i];
		struct edifact_unb u;
		struct err err;

		err_clear(&err);
		print_message("good: %s\n", g->name);
		assert_int_equal(edifact_unb_parse((const unsigned char *)g->in,
		    strlen(g->in), &u, &err), 1);
		assert_string_equal(u.syntax, g->syntax);
		assert_int_equal(u.version, g->version);
		assert_string_equal(u.sender, g->sender);
		assert_string_equal(u.sender_qual, g->sender_qual);
		assert_string_equal(u.recipient, g->recipient);
		assert_string_equal(u.recipient_qual, g->recipient_qual);
		assert_string_equal(u.reference, g->ref);
		assert_int_equal(u.delims.release, g->release);
		assert_int_equal(u.una, strncmp(g->in, "UNA", 3) == 0);
	}
}

/* Every bad header is refused as EBMS:0004, and *ret is not written. */
static void
test_bad(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t_bads) / sizeof(t_bads[0]); i++) {
		struct edifact_unb u;
		struct err err;

		memset(&u, 0x5a, sizeof(u));
		err_clear(&err);
		print_message("bad: %s\n", t_bads[i].name);
		assert_int_equal(edifact_unb_parse(
		    (const unsigned char *)t_bads[i].in, strlen(t_bads[i].in),
		    &u, &err), -1);
		assert_int_equal(err.kind, ERR_EBMS);
		assert_string_equal(err.ebms_code, "EBMS:0004");
		assert_int_equal(u.sender[0], 0x5a);
	}
}

/* Not an interchange: 0, nothing read (no BOM or white space skipped). */
static void
test_not_interchange(void **state)
{
	static const char *const ins[] = {
		"", "UN", "<?xml version=\"1.0\"?>", " UNB+UNOA:3+S+R+1+1'",
		"\xef\xbb\xbfUNB+UNOA:3+S+R+010101:0000+1'", "unb+UNOA:3",
		"ISA*00*", "UNH+1+INVOIC:D:96A:UN'",
	};
	struct edifact_unb u;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
		err_clear(&err);
		assert_int_equal(edifact_is_interchange(
		    (const unsigned char *)ins[i], strlen(ins[i])), 0);
		assert_int_equal(edifact_unb_parse(
		    (const unsigned char *)ins[i], strlen(ins[i]), &u, &err),
		    0);
		assert_int_equal(err.kind, ERR_NONE);
	}
	assert_int_equal(edifact_unb_parse(NULL, 0, &u, &err), 0);
}

/* Every prefix of a good header is refused (strict bounds: no read past
 * len), never parsed as a shorter header. */
static void
test_prefixes(void **state)
{
	static const char in[] = "UNA:+.? 'UNB+UNOC:3+S?+1:ZZ+R:ZZ+20200101:"
	    "1200+REF9'";
	size_t n;

	(void)state;
	for (n = 3; n < sizeof(in) - 2; n++) {
		unsigned char *copy = test_malloc(n);
		struct edifact_unb u;
		struct err err;

		memcpy(copy, in, n);
		err_clear(&err);
		assert_int_equal(edifact_unb_parse(copy, n, &u, &err), -1);
		test_free(copy);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_not_interchange),
		cmocka_unit_test(test_prefixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
