/*
 * testconf — what the test_conf_*.c programs share: they run from the
 * source root so that fixture paths are relative and resolution is visible
 * in the results.
 */
#include "testconf.h"

#include <stdio.h>
#include <unistd.h>

#include "xml/xml.h"

/* Change to the source root, set up libxml2, run tests as one group. */
int
testconf_run(const struct CMUnitTest *tests, size_t n)
{
	if (chdir(AS4GW_SOURCE_DIR) != 0) {
		perror(AS4GW_SOURCE_DIR);
		return 1;
	}
	xml_global_init();
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
