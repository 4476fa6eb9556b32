/*
 * Unit tests for src/payload: gzip decompression under caps (AS4 profile
 * 3.1; NEGATIVE-CASES 52-54) on generated data, a generated bomb and
 * recorded corpus parts (testgz.h: the deflate of the inputs).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zlib.h>

#include "testgz.h"
#include "testutil.h"
#include "payload/payload.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"

#define MIB ((size_t)1 << 20)
#define GZ_TYPE "application/gzip"

/* gzip (windowBits 16 + 15), zlib (15) or raw deflate (-15) of data. */
static unsigned char *
deflate_with(const void *data, size_t len, int wbits, gz_header *hdr,
    size_t *ret_len)
{
	return testgz_deflate(data, len, 9, wbits, hdr, ret_len);
}

static unsigned char *
gz(const void *data, size_t len, size_t *ret_len)
{
	return deflate_with(data, len, 16 + MAX_WBITS, NULL, ret_len);
}

/* One compressed attachment with MimeType and CompressionType. */
struct gz_msg {
	struct ebms_property props[2];
	struct ebms_part parts[2];
	struct ebms_user_message um;
};

static void
gz_msg_init(struct gz_msg *m, const unsigned char *data, size_t len)
{
	memset(m, 0, sizeof(*m));
	m->props[0] = (struct ebms_property){ "MimeType", NULL, "text/plain" };
	m->props[1] = (struct ebms_property){ "CompressionType", NULL, GZ_TYPE };
	m->parts[0].href = "cid:p1@as4gw.test";
	m->parts[0].content_id = "p1@as4gw.test";
	m->parts[0].props = m->props;
	m->parts[0].n_props = 2;
	m->parts[0].mime_type = "text/plain";
	m->parts[0].compression_type = GZ_TYPE;
	m->parts[0].data = data;
	m->parts[0].len = len;
	m->parts[0].media_type = "application/gzip";
	m->um.message_id = "gz@as4gw.test";
	m->um.parts = m->parts;
	m->um.n_parts = 1;
}

/* Decompress with lim; on success compare the part with want/want_len. */
static void
gz_expect(const unsigned char *data, size_t len,
    const struct payload_limits *lim, const void *want, size_t want_len)
{
	struct arena *a = arena_new(0);
	struct gz_msg m;
	struct err err;

	gz_msg_init(&m, data, len);
	err_clear(&err);
	if (payload_decompress(a, &m.um, lim, &err) != 0)
		fail_msg("decompress failed: %s (%s)", err.msg, err.detail);
	assert_int_equal(m.parts[0].len, want_len);
	if (want_len > 0)
		assert_memory_equal(m.parts[0].data, want, want_len);
	assert_string_equal(m.parts[0].media_type, "text/plain");
	arena_free(a);
}

/* Decompression must fail with code; msg_part (may be NULL) in err.msg. */
static void
gz_refuse(struct gz_msg *m, const struct payload_limits *lim,
    const char *code, const char *msg_part)
{
	struct arena *a = arena_new(0);
	const unsigned char *before = m->parts[0].data;
	struct err err;

	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m->um, lim, &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, code);
	if (msg_part != NULL && strstr(err.msg, msg_part) == NULL)
		fail_msg("\"%s\" not in \"%s\"", msg_part, err.msg);
	assert_ptr_equal(m->parts[0].data, before);
	arena_free(a);
}

static void
gz_refuse_data(const unsigned char *data, size_t len,
    const struct payload_limits *lim, const char *msg_part)
{
	struct gz_msg m;

	gz_msg_init(&m, data, len);
	gz_refuse(&m, lim, "EBMS:0303", msg_part);
}

/* Text, binary, empty and larger payloads come back byte for byte. */
static void
test_gzip_round_trip(void **state)
{
	static const char text[] = "<doc>hello, compressed world</doc>\n";
	size_t sizes[] = { 0, 1, sizeof(text) - 1, 70000, 3 * MIB + 17 };
	unsigned char *src, *z;
	size_t i, j, zlen;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		src = malloc(sizes[i] + 1);
		assert_non_null(src);
		for (j = 0; j < sizes[i]; j++)   /* text, then noise */
			src[j] = j < sizeof(text) - 1 ? (unsigned char)text[j] :
			    (unsigned char)((j * 2654435761u) >> 13);
		z = gz(src, sizes[i], &zlen);
		gz_expect(z, zlen, NULL, src, sizes[i]);
		free(z);
		free(src);
	}
}

/* RFC 1952 optional header fields (FEXTRA, FNAME, FCOMMENT, FHCRC). */
static void
test_gzip_header_fields(void **state)
{
	static const char text[] = "payload with a full gzip header";
	unsigned char extra[] = { 'A', 'B', 2, 0, 'x', 'y' };
	gz_header h;
	unsigned char *z;
	size_t zlen;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.extra = extra;
	h.extra_len = sizeof(extra);
	h.name = (Bytef *)(uintptr_t)"payload.xml";
	h.comment = (Bytef *)(uintptr_t)"a comment";
	h.hcrc = 1;
	h.os = 3;
	z = deflate_with(text, sizeof(text) - 1, 16 + MAX_WBITS, &h, &zlen);
	gz_expect(z, zlen, NULL, text, sizeof(text) - 1);
	z[12] ^= 0x01;    /* inside FEXTRA: the header CRC no longer matches */
	gz_refuse_data(z, zlen, NULL, "invalid gzip data");
	free(z);
}

/* RFC 1952 2.2: concatenated members decompress to the concatenation. */
static void
test_gzip_multi_member(void **state)
{
	unsigned char *z1, *z2, *z3, *cat;
	size_t n1, n2, n3, n;

	(void)state;
	z1 = gz("hello ", 6, &n1);
	z2 = gz("", 0, &n2);
	z3 = gz("world", 5, &n3);
	cat = malloc(n1 + n2 + n3 + 2);
	assert_non_null(cat);
	memcpy(cat, z1, n1);
	memcpy(cat + n1, z2, n2);
	memcpy(cat + n1 + n2, z3, n3);
	n = n1 + n2 + n3;
	gz_expect(cat, n, NULL, "hello world", 11);
	/* a member start with nothing after it is a truncated member */
	memcpy(cat + n, "\x1f\x8b", 2);
	gz_refuse_data(cat, n + 2, NULL, "truncated");
	/* one byte of a member start, or anything else, is garbage */
	gz_refuse_data(cat, n + 1, NULL, "trailing bytes");
	cat[n] = 0;
	cat[n + 1] = 0;
	gz_refuse_data(cat, n + 2, NULL, "trailing bytes");
	free(cat);
	free(z1);
	free(z2);
	free(z3);
}

/* Damage done to a valid gzip of some text. */
struct broken_case {
	const char *name;
	void (*damage)(unsigned char *z, size_t *len);
	const char *msg_part;
};

static void d_empty(unsigned char *z, size_t *len) { (void)z; *len = 0; }
static void d_cut_last(unsigned char *z, size_t *len) { (void)z; (*len)--; }
static void d_cut_trailer(unsigned char *z, size_t *len) { (void)z; *len -= 8; }
static void d_cut_half(unsigned char *z, size_t *len) { (void)z; *len /= 2; }
static void d_cut_header(unsigned char *z, size_t *len) { (void)z; *len = 5; }
static void d_crc(unsigned char *z, size_t *len) { z[*len - 8] ^= 0x01; }
static void d_isize(unsigned char *z, size_t *len) { z[*len - 1] ^= 0x01; }
static void d_magic(unsigned char *z, size_t *len) { (void)len; z[1] = 0x8c; }
static void d_method(unsigned char *z, size_t *len) { (void)len; z[2] = 7; }
static void d_body(unsigned char *z, size_t *len) { z[*len / 2] ^= 0xff; }
static void d_flags(unsigned char *z, size_t *len) { (void)len; z[3] = 0xe0; }

static const struct broken_case broken_cases[] = {
	{ "empty", d_empty, "empty" },
	{ "last byte cut", d_cut_last, "truncated" },
	{ "trailer cut", d_cut_trailer, "truncated" },
	{ "half cut", d_cut_half, "truncated" },
	{ "inside the header", d_cut_header, "truncated" },
	{ "bad CRC-32", d_crc, "invalid gzip data" },
	{ "bad ISIZE", d_isize, "invalid gzip data" },
	{ "bad magic", d_magic, "invalid gzip data" },
	{ "unknown method", d_method, "invalid gzip data" },
	{ "corrupt deflate data", d_body, "invalid gzip data" },
	{ "reserved flags", d_flags, "invalid gzip data" },
};

/* NEGATIVE-CASES 52: not gzip, truncated, bad CRC -> EBMS:0303. */
static void
test_gzip_broken(void **state)
{
	static const char text[] =
	    "<doc><a>some text that deflate cannot shrink to nothing</a>"
	    "<b>0123456789abcdefghijklmnopqrstuvwxyz</b></doc>";
	unsigned char *z, *other;
	size_t zlen, i;

	(void)state;
	for (i = 0; i < sizeof(broken_cases) / sizeof(broken_cases[0]); i++) {
		print_message("broken gzip: %s\n", broken_cases[i].name);
		z = gz(text, sizeof(text) - 1, &zlen);
		broken_cases[i].damage(z, &zlen);
		gz_refuse_data(z, zlen, NULL, broken_cases[i].msg_part);
		free(z);
	}
	/* zlib (RFC 1950) and raw deflate (RFC 1951) are not gzip */
	other = deflate_with(text, sizeof(text) - 1, MAX_WBITS, NULL, &zlen);
	gz_refuse_data(other, zlen, NULL, "invalid gzip data");
	free(other);
	other = deflate_with(text, sizeof(text) - 1, -MAX_WBITS, NULL, &zlen);
	gz_refuse_data(other, zlen, NULL, "invalid gzip data");
	free(other);
	gz_refuse_data((const unsigned char *)text, sizeof(text) - 1, NULL,
	    "invalid gzip data");
}

/* NEGATIVE-CASES 54 and AS4 3.1 packaging: type, attachment, MimeType. */
static void
test_gzip_packaging(void **state)
{
	static const char *const bad_types[] = {
		"application/rar", "application/x-gzip", "gzip",
		"application/gzip ", "APPLICATION/GZIP", "application/zip",
	};
	unsigned char *z;
	struct gz_msg m;
	size_t zlen, i;

	(void)state;
	z = gz("abc", 3, &zlen);
	for (i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		gz_msg_init(&m, z, zlen);
		m.parts[0].compression_type = bad_types[i];
		gz_refuse(&m, NULL, "EBMS:0303", "unsupported CompressionType");
	}
	gz_msg_init(&m, z, zlen);
	m.parts[0].mime_type = NULL;   /* issue 10 item 10: 0303 */
	gz_refuse(&m, NULL, "EBMS:0303", "without MimeType");
	gz_msg_init(&m, z, zlen);
	m.parts[0].mime_type = "";
	gz_refuse(&m, NULL, "EBMS:0303", "without MimeType");
	gz_msg_init(&m, z, zlen);
	m.parts[0].href = NULL;       /* a SOAP Body payload */
	m.parts[0].content_id = NULL;
	gz_refuse(&m, NULL, "EBMS:0003", "SOAP Body");
	free(z);
}

/* A failure in a later part leaves earlier (and uncompressed) parts as
 * they were; uncompressed and empty-CompressionType parts are skipped. */
static void
test_gzip_untouched_on_failure(void **state)
{
	static const unsigned char plain[4] = { 'r', 'a', 'w', '!' };
	struct arena *a = arena_new(0);
	unsigned char *z;
	struct gz_msg m;
	struct err err;
	size_t zlen;

	(void)state;
	z = gz("first", 5, &zlen);
	gz_msg_init(&m, z, zlen);
	m.parts[1] = m.parts[0];
	m.parts[1].compression_type = "application/rar";
	m.um.n_parts = 2;
	gz_refuse(&m, NULL, "EBMS:0303", "payload 2: unsupported");
	assert_ptr_equal(m.parts[0].data, z);
	assert_int_equal(m.parts[0].len, zlen);
	assert_string_equal(m.parts[0].media_type, "application/gzip");
	/* now part 2 is not compressed: "" means none (AS4 3.1) */
	m.parts[1].compression_type = "";
	m.parts[1].data = plain;
	m.parts[1].len = sizeof(plain);
	m.parts[1].media_type = "application/octet-stream";
	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), 0);
	assert_int_equal(m.parts[0].len, 5);
	assert_memory_equal(m.parts[0].data, "first", 5);
	assert_ptr_equal(m.parts[1].data, plain);
	assert_string_equal(m.parts[1].media_type, "application/octet-stream");
	/* no parts at all */
	m.um.n_parts = 0;
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), 0);
	free(z);
	arena_free(a);
}

/* The ratio cap applies only once the output passes 1 MiB. */
static void
test_gzip_ratio_cap(void **state)
{
	struct payload_limits lim;
	unsigned char *zeros = calloc(1, 4 * MIB), *z;
	size_t zlen;

	(void)state;
	assert_non_null(zeros);
	payload_limits_default(&lim);
	lim.max_ratio = 10;
	/* exactly 1 MiB of zeros (ratio ~1000): below the floor, accepted */
	z = gz(zeros, MIB, &zlen);
	assert_true(MIB / zlen > 100);
	gz_expect(z, zlen, &lim, zeros, MIB);
	free(z);
	/* 4 MiB of zeros: refused at ratio 10, accepted with no ratio cap */
	z = gz(zeros, 4 * MIB, &zlen);
	gz_refuse_data(z, zlen, &lim, "ratio exceeds 10");
	lim.max_ratio = 0;
	gz_expect(z, zlen, &lim, zeros, 4 * MIB);
	free(z);
	free(zeros);
}

/* Per-part and per-message output caps, exact at the boundary. */
static void
test_gzip_size_caps(void **state)
{
	struct arena *a = arena_new(0);
	struct payload_limits lim = { 1000, 0, 0 };
	unsigned char src[1001], *z1, *z2;
	struct gz_msg m;
	struct err err;
	size_t n1, n2, i;

	(void)state;
	for (i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7);
	z1 = gz(src, 1000, &n1);
	z2 = gz(src, 1001, &n2);
	gz_expect(z1, n1, &lim, src, 1000);
	gz_refuse_data(z2, n2, &lim, "exceeds the limit of 1000 bytes");
	/* two parts of 1000 bytes against a message total of 1999 */
	lim = (struct payload_limits){ 0, 0, 1999 };
	gz_msg_init(&m, z1, n1);
	m.parts[1] = m.parts[0];
	m.um.n_parts = 2;
	gz_refuse(&m, &lim, "EBMS:0303", "payload 2: decompressed size "
	    "exceeds the limit of 999 bytes");
	lim.max_total_bytes = 2000;
	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m.um, &lim, &err), 0);
	assert_int_equal(m.parts[0].len + m.parts[1].len, 2000);
	/* nothing left for a third part after the total is used up */
	lim.max_total_bytes = 1000;
	gz_msg_init(&m, z1, n1);
	m.parts[1] = m.parts[0];
	m.parts[1].data = z2;        /* even a 1-byte part would not fit */
	m.parts[1].len = n2;
	m.um.n_parts = 2;
	gz_refuse(&m, &lim, "EBMS:0303", "payload 2");
	free(z1);
	free(z2);
	arena_free(a);
}

/* The request arena's budget bounds the final bytes: over it, EBMS:0303. */
static void
test_gzip_arena_budget(void **state)
{
	struct arena *a = arena_new(MIB);
	struct payload_limits none = { 0, 0, 0 };
	unsigned char *zeros = calloc(1, 2 * MIB), *z;
	struct gz_msg m;
	struct err err;
	size_t zlen;

	(void)state;
	assert_non_null(zeros);
	z = gz(zeros, 2 * MIB, &zlen);
	gz_msg_init(&m, z, zlen);
	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m.um, &none, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0303");
	assert_non_null(strstr(err.msg, "memory budget"));
	assert_true(arena_used(a) < 4096);
	free(z);
	free(zeros);
	arena_free(a);
}

/*
 * A gzip of n MiB of zeros without compressing n MiB: one 1 MiB block
 * deflated after a full flush (no history) is identical every time, so it is
 * repeated; CRC-32 and ISIZE come from crc32_combine.  10240 MiB (10 GiB)
 * fit in about 10 MB (NEGATIVE-CASES 53).
 */
static unsigned char *
bomb_build(size_t n_mib, size_t *ret_len)
{
	static const unsigned char hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0,
	    2, 3 };
	unsigned char *zeros = calloc(1, MIB), blk[2][8192], fin[64], *out, *p;
	size_t nb[2], nfin, i, total;
	uLong crc1, crc;
	z_stream zs;

	assert_non_null(zeros);
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8,
	    Z_DEFAULT_STRATEGY), Z_OK);
	for (i = 0; i < 2; i++) {   /* the first block, then the repeated one */
		zs.next_in = zeros;
		zs.avail_in = (uInt)MIB;
		zs.next_out = blk[i];
		zs.avail_out = sizeof(blk[i]);
		assert_int_equal(deflate(&zs, Z_FULL_FLUSH), Z_OK);
		assert_int_equal(zs.avail_in, 0);
		nb[i] = sizeof(blk[i]) - zs.avail_out;
	}
	zs.next_out = fin;
	zs.avail_out = sizeof(fin);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	nfin = sizeof(fin) - zs.avail_out;
	(void)deflateEnd(&zs);
	crc1 = crc32(crc32(0L, Z_NULL, 0), zeros, (uInt)MIB);
	for (crc = crc1, i = 1; i < n_mib; i++)
		crc = crc32_combine(crc, crc1, (z_off_t)MIB);
	total = sizeof(hdr) + nb[0] + (n_mib - 1) * nb[1] + nfin + 8;
	p = out = malloc(total);
	assert_non_null(out);
	memcpy(p, hdr, sizeof(hdr));
	p += sizeof(hdr);
	memcpy(p, blk[0], nb[0]);
	for (p += nb[0], i = 1; i < n_mib; i++, p += nb[1])
		memcpy(p, blk[1], nb[1]);
	memcpy(p, fin, nfin);
	p += nfin;
	for (i = 0; i < 4; i++)   /* RFC 1952 2.3.1: CRC32, ISIZE, LSB first */
		*p++ = (unsigned char)(crc >> (8 * i));
	for (i = 0; i < 4; i++)
		*p++ = (unsigned char)(((uint64_t)n_mib * MIB) >> (8 * i));
	free(zeros);
	*ret_len = total;
	return out;
}

/* The construction is a valid gzip: 8 MiB of zeros, CRC and ISIZE ok. */
static void
test_gzip_bomb_construction(void **state)
{
	struct payload_limits none = { 0, 0, 0 };
	unsigned char *bomb, *zeros = calloc(1, 8 * MIB);
	size_t len;

	(void)state;
	assert_non_null(zeros);
	bomb = bomb_build(8, &len);
	gz_expect(bomb, len, &none, zeros, 8 * MIB);
	free(bomb);
	free(zeros);
}

static double
now_s(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * NEGATIVE-CASES 53: 10 MB expanding to 10 GiB stops at the ratio cap (the
 * default limits) or at the size cap (no ratio cap) quickly, with nothing
 * allocated in the arena beyond bookkeeping.
 */
static void
test_gzip_bomb(void **state)
{
	struct payload_limits lim;
	struct arena *a;
	unsigned char *bomb;
	struct gz_msg m;
	struct err err;
	double t0;
	size_t len, round;

	(void)state;
	bomb = bomb_build(10240, &len);
	assert_true(len < 12 * MIB);
	payload_limits_default(&lim);
	for (round = 0; round < 2; round++) {
		if (round == 1) {
			lim.max_ratio = 0;
			lim.max_decompressed_bytes = 64 * MIB;
		}
		a = arena_new(0);
		gz_msg_init(&m, bomb, len);
		err_clear(&err);
		t0 = now_s();
		assert_int_equal(payload_decompress(a, &m.um, &lim, &err), -1);
		print_message("bomb round %zu: %.3f s, arena %zu bytes: %s\n",
		    round, now_s() - t0, arena_used(a), err.msg);
		assert_true(now_s() - t0 < 30.0);    /* generous for valgrind */
		assert_string_equal(err.ebms_code, "EBMS:0303");
		assert_non_null(strstr(err.msg, round == 0 ? "ratio exceeds 1000" :
		    "exceeds the limit of 67108864 bytes"));
		assert_true(arena_used(a) < 4096);
		assert_ptr_equal(m.parts[0].data, bomb);
		arena_free(a);
	}
	free(bomb);
}

#define AS4NET "corpus/extracted/thomsonreuters_eessi-as4.net/source/"
#define UT AS4NET "Eu.EDelivery.AS4.UnitTests/Resources/"
#define CT AS4NET "Eu.EDelivery.AS4.ComponentTests/Resources/"
#define ISS UT "as4-encrypted-signed-issuerserial.as4/"
#define ISS_ID0 "b545c3a0-e57f-46aa-862f-381eb4b7009-291596031@CLT-SMOREELS.m"
#define ISS_ID1 "b545c3a0-e57f-46aa-862f-381eb4b7009-1650194442@CLT-SMOREELS."
#define ECM UT "as4-encrypted-compressed-message.as4/"
#define SHM CT "signed_holodeck_message.as4/"

/* Recorded compressed parts (decrypted where they were encrypted) and the
 * gunzip ground truth next to them. */
static const char *const corpus_pairs[][2] = {
	{ ISS "decrypted-" ISS_ID0 ".bin", ISS "decrypted-gunzipped-" ISS_ID0 ".bin" },
	{ ISS "decrypted-" ISS_ID1 ".bin", ISS "decrypted-gunzipped-" ISS_ID1 ".bin" },
	{ ECM "decrypted-flower.bin", ECM "decrypted-gunzipped-flower.bin" },
	{ ECM "decrypted-xmldoc.bin", ECM "decrypted-gunzipped-xmldoc.bin" },
	{ SHM "att-0-cdcc838c-96ed-414a-b127-0937f5cd654-341439240@CLT-FGHEYSELS..bin",
	  ISS "decrypted-gunzipped-" ISS_ID0 ".bin" },
	{ SHM "att-1-cdcc838c-96ed-414a-b127-0937f5cd654-445037483@CLT-FGHEYSELS..bin",
	  ISS "decrypted-gunzipped-" ISS_ID1 ".bin" },
};

/* Corpus compressed payloads gunzip to their ground truth. */
static void
test_gzip_corpus_pairs(void **state)
{
	char *z, *want;
	size_t zlen, wlen, i;

	(void)state;
	for (i = 0; i < sizeof(corpus_pairs) / sizeof(corpus_pairs[0]); i++) {
		z = testutil_read_shared(corpus_pairs[i][0], &zlen);
		want = testutil_read_shared(corpus_pairs[i][1], &wlen);
		if (z == NULL || want == NULL) {
			free(z);
			free(want);
			testutil_skip("corpus gzip pairs not found under ../shared");
		}
		print_message("corpus pair %zu: %zu -> %zu bytes\n", i, zlen, wlen);
		gz_expect((const unsigned char *)z, zlen, NULL, want, wlen);
		free(z);
		free(want);
	}
}

#define WRONG "corpus/extracted/phax_phase4/phase4-test/src/test/resources/" \
	"testfiles/WrongCompression.mime/"
#define IT AS4NET "Eu.EDelivery.AS4.IntegrationTests/Resources/"

/* Corpus negatives: phase4 WrongCompression.mime declares application/rar
 * over valid gzip; two AS4.NET parts declared gzip are not gzip. */
static void
test_gzip_corpus_negatives(void **state)
{
	static const char *const not_gzip[] = {
		CT "deliveragent-message.as4/att-0-022bdcf6-60a2-4b38-bf4a-"
		    "4d648b5e859-273734678@CLT-SMOREELS.a.bin",
		IT "as4message_incorect_compressed.txt/att-0-1800cc77-b5c0-"
		    "497f-ab81-cd6a0717327-95589488@CLT-SMOREELS.ad.bin",
	};
	struct arena *a = arena_new(0);
	struct gz_msg m;
	struct err err;
	char *z;
	size_t zlen, i;

	(void)state;
	z = testutil_read_shared(WRONG "att-0-ph-as4-0026b807-e599-40e2-af67-"
	    "22f2e6fe4ddd.bin", &zlen);
	if (z == NULL)
		testutil_skip("WrongCompression.mime not found under ../shared");
	gz_msg_init(&m, (const unsigned char *)z, zlen);
	m.parts[0].compression_type = "application/rar";
	gz_refuse(&m, NULL, "EBMS:0303", "unsupported CompressionType");
	m.parts[0].compression_type = GZ_TYPE;   /* the bytes are gzip */
	err_clear(&err);
	assert_int_equal(payload_decompress(a, &m.um, NULL, &err), 0);
	assert_int_equal(m.parts[0].len, 1300);
	free(z);
	for (i = 0; i < sizeof(not_gzip) / sizeof(not_gzip[0]); i++) {
		z = testutil_read_shared(not_gzip[i], &zlen);
		assert_non_null(z);
		gz_refuse_data((const unsigned char *)z, zlen, NULL,
		    "invalid gzip data");
		free(z);
	}
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gzip_round_trip),
		cmocka_unit_test(test_gzip_header_fields),
		cmocka_unit_test(test_gzip_multi_member),
		cmocka_unit_test(test_gzip_broken),
		cmocka_unit_test(test_gzip_packaging),
		cmocka_unit_test(test_gzip_untouched_on_failure),
		cmocka_unit_test(test_gzip_ratio_cap),
		cmocka_unit_test(test_gzip_size_caps),
		cmocka_unit_test(test_gzip_arena_budget),
		cmocka_unit_test(test_gzip_bomb_construction),
		cmocka_unit_test(test_gzip_bomb),
		cmocka_unit_test(test_gzip_corpus_pairs),
		cmocka_unit_test(test_gzip_corpus_negatives),
	};

	return cmocka_run_group_tests_name("payload_gzip", tests, NULL, NULL);
}
