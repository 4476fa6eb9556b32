/* testutil — helpers shared by the unit tests: reading fixture files from the
 * source tree and from ../shared (the corpus), which may be absent. */
#ifndef AS4GW_TESTUTIL_H
#define AS4GW_TESTUTIL_H

#include <stddef.h>

/* Directory of ../shared (env AS4GW_SHARED overrides), or NULL if absent. */
const char *testutil_shared_dir(void);

/*
 * Read a whole file into malloc'd memory (NUL-terminated; *ret_len excludes
 * the NUL).  path relative to the source root unless absolute.  NULL if the
 * file cannot be read.
 */
char *testutil_read(const char *path, size_t *ret_len);

/* Read a file under ../shared; NULL if shared/ or the file is missing — the
 * caller then skips LOUDLY with testutil_skip(). */
char *testutil_read_shared(const char *rel, size_t *ret_len);

/* Print "SKIPPED: <why>" to stderr and call cmocka's skip(). */
#define testutil_skip(why) do { testutil_skip_note(why); skip(); } while (0)
void testutil_skip_note(const char *why);

#endif
