/*
 * Unit tests for the spooled paths of src/payload (issue 14): a part
 * spool_want() calls large is gunzipped in one pass into a spool file
 * (byte-identical to the memory path at sizes around SPOOL_CHUNK, the same
 * refusals for truncated data, trailing bytes, a bad CRC-32 or ISIZE, a
 * bomb stopped at its cap having written no more than the cap), and the
 * content hashes of a spooled part are those of the same bytes in memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "testgz.h"
#include "testspool.h"
#include "testutil.h"
#include "payload/payload.h"
#include "payload/payload_int.h"
#include "spool/spool.h"
#include "util/arena.h"
#include "util/err.h"

#define CH SPOOL_CHUNK
#define MIB ((size_t)1 << 20)

/* gzip of data[0..len) at a level (1: fast, 9: a bomb's best ratio). */
static unsigned char *
t_gzl(const void *data, size_t len, int level, size_t *ret_len)
{
	return testgz_deflate(data, len, level, 16 + MAX_WBITS, NULL, ret_len);
}

static unsigned char *
t_gz(const void *data, size_t len, size_t *ret_len)
{
	return t_gzl(data, len, 1, ret_len);
}

/* One compressed part. */
struct t_msg {
	struct ebms_user_message um;
	struct ebms_part part;
	struct ebms_property props[2];
};

static void
t_msg_init(struct t_msg *m, const unsigned char *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->props[0] = (struct ebms_property){ "MimeType", NULL, "text/plain" };
	m->props[1] = (struct ebms_property){ "CompressionType", NULL,
	    "application/gzip" };
	m->part.href = "cid:p1@as4gw.test";
	m->part.content_id = "p1@as4gw.test";
	m->part.props = m->props;
	m->part.n_props = 2;
	m->part.mime_type = "text/plain";
	m->part.compression_type = "application/gzip";
	m->part.data = data;
	m->part.len = len;
	m->part.media_type = "application/gzip";
	m->um.message_id = "gz@as4gw.test";
	m->um.parts = &m->part;
	m->um.n_parts = 1;
}

/*
 * Decompress z in memory (no spool bound) and spooled (a spool of budget
 * max_bytes, threshold 0, bound; the input itself in a spool file): the
 * same return, code and message, and the same octets.  Returns the
 * spooled run's return.
 */
static int
t_both(const unsigned char *z, size_t zlen, const struct payload_limits *lim,
    uint64_t max_bytes, struct err *ret_err)
{
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	struct t_msg m1, m2;
	struct err e1, e2;
	int r1, r2;

	err_clear(&e1);
	err_clear(&e2);
	(void)spool_bind(NULL);
	t_msg_init(&m1, z, zlen);
	r1 = payload_decompress(a, &m1.um, lim, &e1);
	assert_int_equal(spool_new(testspool_dir, max_bytes, 0, &sp, &e2), 0);
	(void)spool_bind(sp);
	t_msg_init(&m2, testspool_mapped(sp, z, zlen), zlen);
	r2 = payload_decompress(a, &m2.um, lim, &e2);
	if (max_bytes == 0) {
		assert_int_equal(r2, r1);
		assert_int_equal(e2.kind, e1.kind);
		assert_string_equal(e2.msg, e1.msg);
	}
	if (r2 == 0 && max_bytes == 0) {
		assert_int_equal(m2.part.len, m1.part.len);
		assert_memory_equal(m2.part.data, m1.part.data, m1.part.len);
		assert_string_equal(m2.part.media_type, "text/plain");
	}
	if (r2 != 0)                 /* nothing changed on a refusal */
		assert_int_equal(m2.part.len, zlen);
	*ret_err = e2;
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	return r2;
}

/* Sizes around the chunk, random (incompressible) and repetitive data. */
static void
test_sizes(void **state)
{
	static const size_t sizes[] = { 0, 1, CH - 1, CH, CH + 1, 3 * CH + 5 };
	unsigned char *plain = malloc(3 * CH + 5), *z;
	struct err err;
	size_t i, zlen;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < 3 * CH + 5; i++)
		plain[i] = (unsigned char)((i * 2654435761u) >> 13);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		z = t_gz(plain, sizes[i], &zlen);
		assert_int_equal(t_both(z, zlen, NULL, 0, &err), 0);
		free(z);
	}
	memset(plain, 'x', 3 * CH + 5);
	z = t_gz(plain, 3 * CH + 5, &zlen);
	assert_int_equal(t_both(z, zlen, NULL, 0, &err), 0);
	free(z);
	free(plain);
}

/* Two members; truncated; trailing bytes; a bad CRC-32 and ISIZE; not
 * gzip at all: the same answers on both paths. */
static void
test_broken(void **state)
{
	unsigned char *plain = malloc(CH + 100), *z, *two;
	struct err err;
	size_t zlen, i;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < CH + 100; i++)
		plain[i] = (unsigned char)(i % 251);
	z = t_gz(plain, CH + 100, &zlen);
	two = malloc(2 * zlen + 8);
	assert_non_null(two);
	memcpy(two, z, zlen);
	memcpy(two + zlen, z, zlen);
	assert_int_equal(t_both(two, 2 * zlen, NULL, 0, &err), 0);
	assert_int_equal(t_both(z, zlen - 1, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_int_equal(t_both(z, zlen / 2, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "truncated"));
	memcpy(two + zlen, "junk", 4);
	assert_int_equal(t_both(two, zlen + 4, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "trailing bytes"));
	assert_string_equal(err.ebms_code, "EBMS:0303");
	memcpy(two, z, zlen);
	two[zlen - 8] ^= 1;                          /* CRC-32 */
	assert_int_equal(t_both(two, zlen, NULL, 0, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	two[zlen - 8] ^= 1;
	two[zlen - 1] ^= 1;                          /* ISIZE */
	assert_int_equal(t_both(two, zlen, NULL, 0, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	assert_int_equal(t_both(plain, CH + 100, NULL, 0, &err), -1);
	assert_non_null(strstr(err.msg, "invalid gzip data"));
	free(two);
	free(z);
	free(plain);
}

/*
 * A bomb in a spooled part stops at its cap (EBMS:0303) having written no
 * more than the cap: the spool's byte budget is the cap itself (the spool
 * holds the compressed input too), so one byte more would have been the
 * "spool budget" refusal instead.  Ratio: 64 MiB of zeroes stop at the
 * default ratio cap after 1 MiB; size: with no ratio cap, at 8 MiB.
 */
static void
test_bomb(void **state)
{
	unsigned char *zeros = calloc(1, 64 * MIB), *z;
	struct payload_limits lim;
	struct err err;
	size_t zlen;

	(void)state;
	assert_non_null(zeros);
	z = t_gzl(zeros, 64 * MIB, 9, &zlen);
	payload_limits_default(&lim);
	assert_int_equal(t_both(z, zlen, &lim, zlen + 2 * MIB, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	assert_non_null(strstr(err.msg, "ratio exceeds 1000"));
	lim.max_ratio = 0;
	lim.max_decompressed_bytes = 8 * MIB;
	assert_int_equal(t_both(z, zlen, &lim, zlen + 8 * MIB, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	assert_non_null(strstr(err.msg, "exceeds the limit of 8388608 bytes"));
	/* the same without a size cap: the spool's budget stops it */
	lim.max_decompressed_bytes = 0;
	assert_int_equal(t_both(z, zlen, &lim, zlen + 8 * MIB, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	assert_non_null(strstr(err.msg, "spool budget"));
	/* no cap at all: both paths give the 64 MiB */
	assert_int_equal(t_both(z, zlen, &lim, 0, &err), 0);
	free(z);
	free(zeros);
}

/* A small compressed part whose output grows large for the bound spool
 * (threshold 1 MiB) leaves the memory path for a spool file: 8 MiB come
 * out although the arena may hold only 2 MiB; without a spool the arena
 * budget refuses it. */
static void
test_spill(void **state)
{
	unsigned char *zeros = calloc(1, 8 * MIB), *z;
	struct payload_limits lim = { 0, 0, 0 };
	struct arena *a = arena_new(2 * MIB);
	struct spool *sp = NULL;
	struct t_msg m;
	struct err err;
	size_t zlen;

	(void)state;
	assert_non_null(zeros);
	z = t_gzl(zeros, 8 * MIB, 9, &zlen);
	assert_true(zlen < MIB);
	t_msg_init(&m, z, zlen);
	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m.um, &lim, &err), -1);
	assert_non_null(strstr(err.msg, "memory budget"));
	assert_int_equal(spool_new(testspool_dir, 0, MIB, &sp, &err), 0);
	(void)spool_bind(sp);
	t_msg_init(&m, z, zlen);
	err_clear(&err);
	if (payload_decompress(a, &m.um, &lim, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(m.part.len, 8 * MIB);
	assert_memory_equal(m.part.data, zeros, 8 * MIB);
	assert_true(arena_used(a) < MIB);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(z);
	free(zeros);
}

/* n bytes that gzip does not shrink (an LCG's high bytes). */
static unsigned char *
t_noise(size_t n)
{
	unsigned char *p = malloc(n);
	uint32_t x = 12345;
	size_t i;

	assert_non_null(p);
	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (unsigned char)(x >> 24);
	}
	return p;
}

/*
 * The gzip bytes of a part inflated from a spool mapping are dropped from
 * the spool (spool_drop: they read as zeros) once every part is inflated;
 * not on a refusal, and not while another part still points into them.
 */
static void
test_drops_gzip(void **state)
{
	size_t n = 3 * MIB, zlen, mid;
	unsigned char *plain = t_noise(n), *z = t_gz(plain, n, &zlen);
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	const unsigned char *zin;
	struct ebms_part two[2];
	struct t_msg m;
	struct err err;

	(void)state;
	mid = zlen / 2;
	assert_true(z[mid] != 0 && zlen > 2 * MIB);
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	zin = testspool_mapped(sp, z, zlen - 1);      /* truncated: refused */
	t_msg_init(&m, zin, zlen - 1);
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), -1);
	assert_int_equal(zin[mid], z[mid]);
	zin = testspool_mapped(sp, z, zlen);          /* shared: kept */
	t_msg_init(&m, zin, zlen);
	two[0] = m.part;
	two[1] = m.part;
	two[1].compression_type = NULL;
	m.um.parts = two;
	m.um.n_parts = 2;
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), 0);
	assert_int_equal(zin[mid], z[mid]);
	assert_ptr_equal(two[1].data, zin);
	zin = testspool_mapped(sp, z, zlen);          /* alone: dropped */
	t_msg_init(&m, zin, zlen);
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), 0);
	assert_int_equal(m.part.len, n);
	assert_memory_equal(m.part.data, plain, n);
	assert_int_equal(zin[mid], 0);
	assert_int_equal(zin[MIB], 0);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(z);
	free(plain);
}

/* The content hashes of a part in a spool mapping are those of the same
 * bytes in memory (read in pieces, released behind). */
static void
test_hash(void **state)
{
	unsigned char *plain = malloc(2 * CH + 3), h1[32], h2[32];
	struct spool *sp = NULL;
	struct arena *a = arena_new(0);
	unsigned char *f1 = NULL, *f2 = NULL;
	size_t n1 = 0, n2 = 0, i;
	struct t_msg m;
	struct err err;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < 2 * CH + 3; i++)
		plain[i] = (unsigned char)(i * 7);
	t_msg_init(&m, plain, 2 * CH + 3);
	assert_int_equal(payload_content_hash(&m.um, h1), 0);
	assert_int_equal(payload_content_hash2(a, &m.um, h2, &f1, &n1), 0);
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	m.part.data = testspool_mapped(sp, plain, 2 * CH + 3);
	assert_int_equal(payload_content_hash(&m.um, h2), 0);
	assert_memory_equal(h1, h2, 32);
	assert_int_equal(payload_content_hash2(a, &m.um, h1, &f2, &n2), 0);
	assert_int_equal(n1, n2);
	assert_memory_equal(f1, f2, n1);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(plain);
}

/* The hashes of um one by one equal payload_content_hashes' (v1, v2 and
 * every field digest). */
static void
t_hashes_agree(struct arena *a, const struct ebms_user_message *um)
{
	unsigned char v1[32], v2[32], w1[32], w2[32];
	unsigned char *f1 = NULL, *f2 = NULL;
	size_t n1 = 0, n2 = 0;

	assert_int_equal(payload_content_hash(um, v1), 0);
	assert_int_equal(payload_content_hash2(a, um, v2, &f1, &n1), 0);
	assert_int_equal(payload_content_hashes(a, um, w2, &f2, &n2, w1), 0);
	assert_memory_equal(w1, v1, 32);
	assert_memory_equal(w2, v2, 32);
	assert_int_equal(n2, n1);
	assert_memory_equal(f2, f1, n1);
}

/* payload_content_hashes (both versions in one pass over the bytes) gives
 * what the two hashes give apart: three parts (empty, of several spool
 * pieces and spooled, small), none, and one spooled part. */
static void
test_hashes_one_pass(void **state)
{
	size_t big = 2 * CH + 5, i;
	unsigned char *plain = malloc(big);
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	struct ebms_part parts[3];
	struct t_msg m;
	struct err err;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < big; i++)
		plain[i] = (unsigned char)(i * 13 + 1);
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	t_msg_init(&m, testspool_mapped(sp, plain, big), big);
	t_hashes_agree(a, &m.um);
	parts[0] = m.part;
	parts[0].data = NULL;
	parts[0].len = 0;
	parts[1] = m.part;
	parts[1].href = NULL;
	parts[2] = m.part;
	parts[2].href = "urn:other";
	parts[2].data = (const unsigned char *)"small";
	parts[2].len = 5;
	m.um.parts = parts;
	m.um.n_parts = 3;
	t_hashes_agree(a, &m.um);
	m.um.n_parts = 0;
	t_hashes_agree(a, &m.um);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(plain);
}

/* A spooled part of PAYLOAD_PAR_MIN or more: its two digests are made on
 * two threads (payload_par.c), equal to the one-thread ones, and every
 * window is released behind, so the mapping ends not resident. */
static void
test_hashes_two_threads(void **state)
{
	size_t big = PAYLOAD_PAR_MIN + CH + 7, i, runs;
	unsigned char *plain = malloc(big);
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	struct t_msg m;
	struct err err;
	long rss;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < big; i++)
		plain[i] = (unsigned char)(i * 31 + 7);
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	t_msg_init(&m, testspool_mapped(sp, plain, big), big);
	runs = payload_par_runs();
	t_hashes_agree(a, &m.um);
	assert_int_equal(payload_par_runs(), runs + 1);
	rss = testspool_rss_kib(m.part.data);
	assert_true(rss >= 0 && rss < 1024);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(plain);
}

/* payload_hashes_start: a large part's hashes on a thread equal the ones
 * computed here (version 2; version 1 on demand), the windows it read are
 * released (it binds our spool), and waiting again answers the same; a
 * small message starts nothing. */
static void
test_hashes_on_a_thread(void **state)
{
	size_t big = PAYLOAD_JOB_MIN + CH + 3, i, n = 0, n2 = 0;
	unsigned char *plain = malloc(big), v1[32], v2[32], w1[32], w2[32];
	unsigned char *fields = NULL, *f2 = NULL;
	struct arena *a = arena_new(0);
	struct payload_job *job = NULL;
	struct spool *sp = NULL;
	struct t_msg m;
	struct err err;
	long rss;

	(void)state;
	assert_non_null(plain);
	for (i = 0; i < big; i++)
		plain[i] = (unsigned char)(i * 13 + (i >> 11));
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	t_msg_init(&m, testspool_mapped(sp, plain, big), big);
	assert_int_equal(payload_hashes_start(a, &m.um, &fields, &n, &job), 0);
	assert_non_null(job);
	assert_non_null(fields);
	assert_int_equal(n, (PAYLOAD_FIELDS_FIXED + 2) * 32);
	assert_int_equal(payload_hashes_wait(job, v2), 0);
	rss = testspool_rss_kib(m.part.data);
	assert_true(rss >= 0 && rss < 1024);
	assert_int_equal(payload_content_hashes(a, &m.um, w2, &f2, &n2, w1), 0);
	assert_memory_equal(v2, w2, 32);
	assert_int_equal(n, n2);
	assert_memory_equal(fields, f2, n);
	memset(v2, 0, 32);
	assert_int_equal(payload_hashes_wait(job, v2), 0);
	assert_memory_equal(v2, w2, 32);
	/* version 1 on demand: the same hash, the windows released again */
	assert_int_equal(payload_hashes_v1(job, v1), 0);
	assert_memory_equal(v1, w1, 32);
	rss = testspool_rss_kib(m.part.data);
	assert_true(rss >= 0 && rss < 1024);
	memset(v1, 0, 32);
	assert_int_equal(payload_hashes_v1(job, v1), 0);
	assert_memory_equal(v1, w1, 32);
	t_msg_init(&m, plain, PAYLOAD_JOB_MIN - 1);
	assert_int_equal(payload_hashes_start(a, &m.um, &fields, &n, &job), 1);
	assert_null(job);
	(void)spool_bind(NULL);
	spool_free(sp);
	arena_free(a);
	free(plain);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_broken),
		cmocka_unit_test(test_bomb),
		cmocka_unit_test(test_spill),
		cmocka_unit_test(test_drops_gzip),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_hashes_one_pass),
		cmocka_unit_test(test_hashes_two_threads),
		cmocka_unit_test(test_hashes_on_a_thread),
	};

	return cmocka_run_group_tests(tests, testspool_setup,
	    testspool_teardown);
}
