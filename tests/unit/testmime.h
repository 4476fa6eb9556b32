/*
 * testmime — what the test_mime_*.c programs (src/mime) share: a fresh
 * arena per test in *state (T(f) registers a test with it) and the
 * multipart/related Content-Type and boundary strings of the synthetic
 * cases.
 */
#ifndef AS4GW_TESTMIME_H
#define AS4GW_TESTMIME_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "mime/mime.h"

/* Per-test arena (setup/teardown). */
int test_mime_setup(void **state);
int test_mime_teardown(void **state);

#define T(f) cmocka_unit_test_setup_teardown(f, test_mime_setup, \
	test_mime_teardown)

#define CT_B1 "multipart/related; boundary=\"b1\"; " \
	"type=\"application/soap+xml\""
#define D10 "0123456789"
#define B70 D10 D10 D10 D10 D10 D10 D10
#define B71 B70 "0"

#endif
