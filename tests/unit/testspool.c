/* testspool — the spool fixture of the unit tests (testspool.h). */
#include "testspool.h"

#include <stdarg.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/err.h"

char testspool_dir[64];

int
testspool_setup(void **state)
{
	(void)state;
	(void)snprintf(testspool_dir, sizeof(testspool_dir),
	    "/tmp/as4gw-test-spool-XXXXXX");
	return mkdtemp(testspool_dir) == NULL ? -1 : 0;
}

int
testspool_teardown(void **state)
{
	(void)state;
	(void)spool_bind(NULL);
	return rmdir(testspool_dir);
}

const unsigned char *
testspool_mapped(struct spool *sp, const void *p, size_t n)
{
	struct spool_file *f = NULL;
	const unsigned char *m = NULL;
	struct err err;

	err_clear(&err);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	assert_int_equal(spool_write(f, p, n, &err), 0);
	assert_int_equal(spool_map(f, &m, &err), 0);
	return m;
}

/* See testspool.h. */
long
testspool_rss_kib(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;
	char perms[8];
	long kib = -1;
	int in = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		/* a mapping's header: "lo-hi perms offset dev inode path" */
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3)
			in = lo == (unsigned long)(uintptr_t)addr;
		else if (in && sscanf(line, "Rss: %ld kB", &kib) == 1)
			break;
	}
	fclose(f);
	return kib;
}
