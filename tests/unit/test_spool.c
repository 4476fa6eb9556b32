/* Unit tests for src/spool (issue 14): anonymous files that leave no name
 * behind, written and mapped back byte for byte, the byte budget,
 * spool_done() taking read pages out of the resident set, and spool_drop()
 * punching dead ranges out of the file. */
#include "spool/spool.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testspool.h"
#include "testutil.h"

/* A fresh empty directory under /tmp. */
static char *
t_dir(void)
{
	char tmpl[] = "/tmp/as4gw-test-spool-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

/* Entries of dir other than . and .. */
static int
t_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* VmRSS of this process in KiB. */
static long
t_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void
t_roundtrip(void **state)
{
	struct err err = {0};
	struct spool *sp;
	struct spool_file *f, *g;
	const unsigned char *m, *e;
	unsigned char *want = malloc(700000);
	char *dir = t_dir();
	size_t i;

	(void)state;
	for (i = 0; i < 700000; i++)
		want[i] = (unsigned char)(i * 7 + i / 251);
	assert_int_equal(spool_new(dir, 0, 4096, &sp, &err), 0);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	assert_int_equal(spool_file(sp, &g, &err), 0);
	/* uneven pieces across the write buffer's edge */
	for (i = 0; i < 700000; i += 9973)
		assert_int_equal(spool_write(f, want + i,
		    i + 9973 > 700000 ? 700000 - i : 9973, &err), 0);
	assert_int_equal(spool_size(f), 700000);
	assert_int_equal(spool_map(f, &m, &err), 0);
	assert_memory_equal(m, want, 700000);
	assert_int_equal(spool_map(g, &e, &err), 0);
	assert_non_null(e);
	assert_int_equal(spool_size(g), 0);
	/* large pieces, written at once or after buffered bytes, in order */
	assert_int_equal(spool_file(sp, &g, &err), 0);
	assert_int_equal(spool_write(g, want, 300000, &err), 0);
	assert_int_equal(spool_write(g, want + 300000, 10, &err), 0);
	assert_int_equal(spool_write(g, want + 300010, 300000, &err), 0);
	assert_int_equal(spool_write(g, want + 600010, 99990, &err), 0);
	assert_int_equal(spool_size(g), 700000);
	assert_int_equal(spool_map(g, &e, &err), 0);
	assert_memory_equal(e, want, 700000);
	/* written after the map: refused */
	assert_int_equal(spool_write(f, "x", 1, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	/* no file has a name in the directory, now or after */
	assert_int_equal(t_entries(dir), 0);
	assert_int_equal(spool_want(sp, 4095), 0);
	assert_int_equal(spool_want(sp, 4096), 1);
	assert_int_equal(spool_want(NULL, 1 << 30), 0);
	spool_free(sp);
	assert_int_equal(t_entries(dir), 0);
	rmdir(dir);
	free(dir);
	free(want);
}

static void
t_budget(void **state)
{
	struct err err = {0};
	struct spool *sp;
	struct spool_file *f, *g;
	char block[1000] = {0};
	char *dir = t_dir();

	(void)state;
	assert_int_equal(spool_new(dir, 2500, 0, &sp, &err), 0);
	assert_int_equal(spool_want(sp, 0), 1);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	assert_int_equal(spool_file(sp, &g, &err), 0);
	assert_int_equal(spool_write(f, block, 1000, &err), 0);
	assert_int_equal(spool_write(g, block, 1000, &err), 0);
	/* the budget is over all files of the spool */
	assert_int_equal(spool_write(f, block, 1000, &err), -1);
	assert_int_equal(err.kind, ERR_HTTP);
	assert_int_equal(err.http_status, 413);
	assert_int_equal(spool_size(f), 1000);
	spool_free(sp);
	rmdir(dir);
	free(dir);
}

static void
t_done_releases(void **state)
{
	struct err err = {0};
	struct spool *sp;
	struct spool_file *f;
	const unsigned char *m;
	unsigned char block[65536];
	char *dir = t_dir();
	size_t i, n = (size_t)64 << 20;
	unsigned sum = 0;
	long before, touched, after;

	(void)state;
	memset(block, 'a', sizeof(block));
	assert_int_equal(spool_new(dir, 0, 0, &sp, &err), 0);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	for (i = 0; i < n; i += sizeof(block))
		assert_int_equal(spool_write(f, block, sizeof(block), &err), 0);
	assert_int_equal(spool_map(f, &m, &err), 0);
	/* unbound: spool_done() leaves the mapping alone */
	assert_null(spool_bind(NULL));
	before = t_rss_kib();
	for (i = 0; i < n; i += 4096)
		sum += m[i];
	touched = t_rss_kib();
	spool_done(m, n);
	assert_true(t_rss_kib() >= touched - 1024);
	/* bound: the pages read leave the resident set */
	assert_null(spool_bind(sp));
	assert_ptr_equal(spool_bound(), sp);
	spool_done(m, n);
	after = t_rss_kib();
	assert_true(touched - before > 48 * 1024);
	assert_true(touched - after > 48 * 1024);
	/* and read again they are the same bytes */
	assert_int_equal(m[n - 1], 'a');
	assert_int_equal(sum, (unsigned)'a' * (unsigned)(n / 4096));
	/* memory that is no mapping is left alone */
	spool_done(block, sizeof(block));
	assert_int_equal(block[100], 'a');
	spool_free(sp);
	assert_null(spool_bound());
	rmdir(dir);
	free(dir);
}

/*
 * A bound reader's spool_done() maps the next SPOOL_CHUNK ahead of it
 * (MADV_POPULATE_READ: one call instead of a page fault per 16 pages) while
 * it releases the piece behind, so the mapping's resident part stays about
 * one chunk; at the end of the file nothing is mapped beyond it.
 */
static void
t_done_maps_ahead(void **state)
{
	struct err err = {0};
	struct spool *sp;
	struct spool_file *f;
	const unsigned char *m;
	unsigned char block[65536];
	char *dir = t_dir();
	size_t i, n = 8 * SPOOL_CHUNK;
	long r0, r1, r2;

	(void)state;
	memset(block, 'b', sizeof(block));
	assert_int_equal(spool_new(dir, 0, 0, &sp, &err), 0);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	for (i = 0; i < n; i += sizeof(block))
		assert_int_equal(spool_write(f, block, sizeof(block), &err), 0);
	assert_int_equal(spool_map(f, &m, &err), 0);
	assert_null(spool_bind(sp));
	r0 = testspool_rss_kib(m);
	assert_true(r0 >= 0 && r0 < 512);       /* nothing read yet */
	spool_done(m, SPOOL_CHUNK);             /* chunk 1 mapped ahead */
	r1 = testspool_rss_kib(m);
	assert_true(r1 >= 1000);
	for (i = 1; i < 8; i++)
		spool_done(m + i * SPOOL_CHUNK, SPOOL_CHUNK);
	r2 = testspool_rss_kib(m);
	assert_true(r2 < 512);                  /* all released, none ahead */
	assert_int_equal(m[n - 1], 'b');
	(void)spool_bind(NULL);
	spool_free(sp);
	rmdir(dir);
	free(dir);
}

/* The byte of the pattern t_drop writes at offset i. */
static unsigned char
t_pat(size_t i)
{
	return (unsigned char)(i * 7 + 1);
}

/*
 * spool_drop(): the whole pages inside the range are punched out of the
 * file (read back as zeros), the bytes around them in partial pages are
 * kept, a range that reaches the end of the file takes its last partial
 * page too, and nothing happens unbound or to memory that is no mapping.
 */
static void
t_drop(void **state)
{
	struct err err = {0};
	struct spool *sp;
	struct spool_file *f;
	const unsigned char *m;
	unsigned char block[4096];
	char *dir = t_dir();
	size_t i, j, mib = (size_t)1 << 20, n = 4 * mib + 1000;

	(void)state;
	assert_int_equal(spool_new(dir, 0, 0, &sp, &err), 0);
	assert_int_equal(spool_file(sp, &f, &err), 0);
	for (i = 0; i < n; i += j) {
		j = n - i < sizeof(block) ? n - i : sizeof(block);
		for (size_t k = 0; k < j; k++)
			block[k] = t_pat(i + k);
		assert_int_equal(spool_write(f, block, j, &err), 0);
	}
	assert_int_equal(spool_map(f, &m, &err), 0);
	spool_drop(m + 1000, 3 * mib);          /* unbound: kept */
	assert_int_equal(m[8192], t_pat(8192));
	assert_null(spool_bind(sp));
	spool_drop(m + 1000, 3 * mib + 5);
	assert_int_equal(m[999], t_pat(999));
	assert_int_equal(m[4095], t_pat(4095));  /* partial page: kept */
	assert_int_equal(m[4096], 0);
	assert_int_equal(m[2 * mib], 0);
	assert_int_equal(m[3 * mib - 1], 0);
	assert_int_equal(m[3 * mib], t_pat(3 * mib));
	assert_int_equal(m[3 * mib + 1004], t_pat(3 * mib + 1004));
	spool_drop(m + 3 * mib + 10, n - 3 * mib - 10);  /* to the end */
	assert_int_equal(m[3 * mib + 4095], t_pat(3 * mib + 4095));
	assert_int_equal(m[3 * mib + 4096], 0);
	assert_int_equal(m[n - 1], 0);
	memset(block, 'c', sizeof(block));
	spool_drop(block, sizeof(block));        /* no mapping: left alone */
	assert_int_equal(block[0], 'c');
	(void)spool_bind(NULL);
	spool_free(sp);
	rmdir(dir);
	free(dir);
}

static void
t_room(void **state)
{
	struct err err = {0};

	(void)state;
	assert_int_equal(spool_room("/tmp", 1, 0, &err), 1);
	assert_int_equal(spool_room("/tmp", UINT64_MAX / 2, 0, &err), 0);
	assert_int_equal(spool_room("/nonexistent/as4gw", 1, 0, &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_roundtrip),
		cmocka_unit_test(t_budget),
		cmocka_unit_test(t_done_releases),
		cmocka_unit_test(t_done_maps_ahead),
		cmocka_unit_test(t_drop),
		cmocka_unit_test(t_room),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
