/*
 * testmime — the per-test arena of the test_mime_*.c programs.
 */
#include "testmime.h"

/* Per-test arena (setup/teardown). */
int
test_mime_setup(void **state)
{
	*state = arena_new(0);
	return *state == NULL ? -1 : 0;
}

int
test_mime_teardown(void **state)
{
	arena_free(*state);
	return 0;
}
