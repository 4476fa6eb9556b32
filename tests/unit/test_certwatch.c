/*
 * Unit tests for src/certwatch: the state of a certificate at an instant
 * (the 30-day rule shared by pmode-check and serve; RFC 5280 4.1.2.5
 * validity inclusive), table-driven, and the instant of a configuration.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "testutil.h"
#include "certwatch/certwatch.h"
#include "util/clock.h"

#define DAY INT64_C(86400000)
#define T0 INT64_C(1800000000000)      /* some instant */

static const struct {
	int64_t not_before, not_after, at;
	enum certwatch_state want;
} certwatch_cases[] = {
	{ T0 - DAY, T0 + 400 * DAY, T0, CERTWATCH_OK },
	{ T0 - DAY, T0 + 30 * DAY, T0, CERTWATCH_OK },          /* exactly 30 */
	{ T0 - DAY, T0 + 30 * DAY - 1, T0, CERTWATCH_SOON },
	{ T0 - DAY, T0 + 10 * DAY, T0, CERTWATCH_SOON },
	{ T0 - DAY, T0, T0, CERTWATCH_SOON },                   /* last instant */
	{ T0 - DAY, T0 - 1, T0, CERTWATCH_EXPIRED },
	{ T0 - 400 * DAY, T0 - 35 * DAY, T0, CERTWATCH_EXPIRED },
	{ T0, T0 + 400 * DAY, T0, CERTWATCH_OK },               /* first instant */
	{ T0 + 1, T0 + 400 * DAY, T0, CERTWATCH_NOT_YET },
};

static void
test_state_table(void **state)
{
	struct certwatch_cert x;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(certwatch_cases) / sizeof(certwatch_cases[0]);
	    i++) {
		memset(&x, 0, sizeof(x));
		x.info.not_before_ms = certwatch_cases[i].not_before;
		x.info.not_after_ms = certwatch_cases[i].not_after;
		if (certwatch_state(&x, certwatch_cases[i].at) !=
		    certwatch_cases[i].want)
			fail_msg("case %zu: state %d, want %d", i,
			    (int)certwatch_state(&x, certwatch_cases[i].at),
			    (int)certwatch_cases[i].want);
	}
}

/* <replay><verifyAt> is the instant when set, else now. */
static void
test_now(void **state)
{
	struct conf c;
	int64_t before = clock_epoch_ms();

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_true(certwatch_now(&c) >= before);
	c.verify_at_ms = T0;
	assert_true(certwatch_now(&c) == T0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_table),
		cmocka_unit_test(test_now),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
