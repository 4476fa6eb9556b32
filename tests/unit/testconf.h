/*
 * testconf — shared by the test_conf_*.c programs (src/conf): the fixture
 * directory tests/unit/conf/ (relative: testconf_run changes to the source
 * root first).
 */
#ifndef AS4GW_TESTCONF_H
#define AS4GW_TESTCONF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define FIX "tests/unit/conf/"

/* main() of a conf test program: chdir to AS4GW_SOURCE_DIR,
 * xml_global_init(), then the n tests as one group. */
int testconf_run(const struct CMUnitTest *tests, size_t n);

#endif
