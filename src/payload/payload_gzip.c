/*
 * payload_gzip.c — decompression of AS4 compressed payloads (AS4 profile 3.1;
 * eDelivery AS4 1.15, 1.4.3.1): gzip (RFC 1952) only, inflated by zlib in a
 * bounded window so that a bomb stops at the size or ratio cap having
 * allocated nothing but zlib's own state (NEGATIVE-CASES 52-54).
 *
 * Each part is inflated twice: the first pass only counts the output (into a
 * stack window) and enforces the caps; the second inflates into an arena
 * allocation of exactly that size.  Inflation costs twice the CPU, but the
 * arena — whose budget is the request's memory limit — holds only the final
 * bytes, never the discarded halves of a growing buffer.
 *
 * A large part (spool_want(spool_bound(), its length); issue 14) is
 * inflated once, straight into a spool file, the caps checked as it goes
 * (a bomb stops having written no more than the cap), the input read in
 * order and released behind (spool_done); the part's data then points at
 * the file's mapping.  A small part whose output grows large for the
 * bound spool during the counting pass goes the same way (its output is
 * then never held in memory).
 */
#include "payload.h"

#include <limits.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define ZLIB_CONST   /* next_in is const: the part's bytes are not ours */
#include <zlib.h>

#include "../conf/conf.h"
#include "../spool/spool.h"

#define PAYLOAD_GZIP_TYPE "application/gzip"
#define PAYLOAD_MIB ((size_t)1 << 20)
/* Output below this size is never refused for its ratio: small, repetitive
 * but legitimate payloads compress far beyond any sane ratio cap. */
#define PAYLOAD_RATIO_FLOOR PAYLOAD_MIB
/* The counting pass inflates into this stack window. */
#define PAYLOAD_WINDOW 16384

/* Caps for one part: the effective output limit and the ratio. */
struct payload_caps {
	size_t max_out;   /* 0 = none */
	unsigned ratio;   /* 0 = none */
	size_t budget;    /* memory path: what the arena can still give
	                   * (SIZE_MAX: no budget), so the counting pass
	                   * stops there rather than counting a bomb out */
	int spill;        /* memory path's counting pass: stop (1) once the
	                   * output is large for the bound spool */
};

/* A part's decompressed bytes, kept aside until every part succeeded. */
struct payload_result {
	unsigned char *data;   /* arena; NULL: part not compressed */
	size_t len;
	const unsigned char *gz;   /* what was inflated, once um has data */
	size_t gz_len;
};

/* One inflation run over a whole part. */
struct payload_run {
	const unsigned char *in;
	size_t len;
	unsigned char *out;   /* NULL: count only (first pass) */
	size_t out_cap;       /* bytes writable at out */
	size_t produced;      /* output so far, all members */
	size_t fed;           /* input handed to zlib so far */
	struct spool_file *f; /* not NULL: the output goes here (spooled) */
	size_t done;          /* input released with spool_done() so far */
};

/* Fill lim with the defaults documented in payload.h (conf.h's). */
void
payload_limits_default(struct payload_limits *lim)
{
	lim->max_decompressed_bytes = CONF_MAX_DECOMPRESSED_DEFAULT;
	lim->max_ratio = CONF_MAX_DECOMPRESSION_RATIO_DEFAULT;
	lim->max_total_bytes = CONF_MAX_DECOMPRESSED_TOTAL_DEFAULT;
}

/* Is run over a cap, given the input zlib has consumed so far?  -1 a cap
 * (EBMS:0303), 1 the counting pass of a small part found a large output
 * (caps->spill: it goes to a spool file instead), 0 on we go. */
static int
payload_gzip_over(const struct payload_run *r, size_t consumed,
    const struct payload_caps *caps, size_t i, struct err *err)
{
	if (caps->max_out != 0 && r->produced > caps->max_out)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "decompressed size exceeds the limit of %zu bytes", i + 1,
		    caps->max_out);
	if (caps->ratio != 0 && r->produced > PAYLOAD_RATIO_FLOOR &&
	    consumed <= SIZE_MAX / caps->ratio &&
	    r->produced > consumed * caps->ratio)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "compression ratio exceeds %u", i + 1, caps->ratio);
	if (caps->spill && spool_want(spool_bound(), r->produced))
		return 1;
	if (r->produced > caps->budget)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "decompressed size exceeds the request memory budget",
		    i + 1);
	return 0;
}

/* Hand zlib more input when it has none (avail_in is 32 bits wide). */
static void
payload_gzip_feed(z_stream *zs, struct payload_run *r)
{
	size_t n;

	if (zs->avail_in != 0 || r->fed == r->len)
		return;
	n = r->len - r->fed;
	if (n > UINT_MAX)
		n = UINT_MAX;
	if (r->f != NULL) { /* spooled: in pieces, each released behind */
		spool_done(r->in + r->done, r->fed - r->done);
		r->done = r->fed;
		if (n > SPOOL_CHUNK)
			n = SPOOL_CHUNK;
	}
	zs->next_in = (const Bytef *)(r->in + r->fed);
	zs->avail_in = (uInt)n;
	r->fed += n;
}

/* Point zlib's output at the window of wsize bytes (counting, spooling)
 * or at the rest of r->out. */
static uInt
payload_gzip_aim(z_stream *zs, struct payload_run *r, unsigned char *window,
    size_t wsize)
{
	size_t n;

	if (r->out == NULL) {
		zs->next_out = window;
		return zs->avail_out = (uInt)wsize;
	}
	n = r->out_cap - r->produced;
	zs->next_out = r->out + r->produced;
	return zs->avail_out = (uInt)(n > UINT_MAX ? UINT_MAX : n);
}

/*
 * After the end of a member: 1 if the input is used up, 0 if another gzip
 * member follows (RFC 1952 2.2: a file is a series of members; the stream is
 * reset for it), -1 (EBMS:0303) for trailing bytes that start no member.
 */
static int
payload_gzip_member_end(z_stream *zs, struct payload_run *r, size_t i,
    struct err *err)
{
	size_t consumed = r->fed - zs->avail_in;

	if (consumed == r->len)
		return 1;
	if (r->len - consumed < 2 || r->in[consumed] != 0x1f ||
	    r->in[consumed + 1] != 0x8b)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "trailing bytes after the gzip data", i + 1);
	if (inflateReset(zs) != Z_OK)
		return err_set(err, ERR_INTERNAL, NULL, "could not reset inflate");
	return 0;
}

/* The error for a zlib return code other than Z_OK / Z_STREAM_END. */
static int
payload_gzip_fail(const z_stream *zs, int zrc, const struct payload_run *r,
    size_t i, struct err *err)
{
	if (zrc == Z_MEM_ERROR)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (zrc == Z_BUF_ERROR && r->fed == r->len && zs->avail_in == 0)
		err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: truncated "
		    "gzip data", i + 1);
	else
		err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: invalid gzip "
		    "data", i + 1);
	err_detail(err, "zlib: %d %s", zrc, zs->msg != NULL ? zs->msg : "");
	return -1;
}

/* Spooled: the window's output to the file (after the caps were checked,
 * so a bomb writes no more than the cap).  Over the spool's byte budget
 * is a decompression failure too (EBMS:0303); no space stays a 503. */
static int
payload_gzip_spool(struct payload_run *r, const unsigned char *window,
    size_t n, size_t i, struct err *err)
{
	if (r->f == NULL || n == 0 || spool_write(r->f, window, n, err) == 0)
		return 0;
	if (err->kind == ERR_HTTP) {
		err_clear(err);
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "decompressed size exceeds the spool budget", i + 1);
	}
	return -1;
}

/*
 * Inflate r->in completely (every member), counting the output into
 * r->produced and writing it to r->out unless counting only.  Stops with
 * EBMS:0303 at the first cap exceeded or defect found (-1), or with 1 when
 * caps->spill and the output grew large for the bound spool.
 */
static int
payload_gzip_run(struct payload_run *r, const struct payload_caps *caps,
    size_t i, struct err *err)
{
	unsigned char small[PAYLOAD_WINDOW], *window;
	size_t wsize = sizeof(small);
	z_stream zs;
	uInt room;
	int zrc, rc = -1, end = 0, over;

	/* spooled: inflate 1 MiB at a time, written from here without a copy
	 * (spool_write); the caps are still checked before each write */
	if (r->f != NULL && (window = malloc(SPOOL_CHUNK)) != NULL)
		wsize = SPOOL_CHUNK;
	else
		window = small;
	memset(&zs, 0, sizeof(zs));
	/* 16 + MAX_WBITS: the gzip wrapper only, no zlib or raw deflate */
	if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) {
		if (window != small)
			free(window);
		return err_set(err, ERR_INTERNAL, NULL, "could not start inflate");
	}
	for (;;) {
		payload_gzip_feed(&zs, r);
		room = payload_gzip_aim(&zs, r, window, wsize);
		zrc = inflate(&zs, Z_NO_FLUSH);
		r->produced += room - zs.avail_out;
		over = payload_gzip_over(r, r->fed - zs.avail_in, caps, i, err);
		if (over != 0) {
			rc = over;
			goto out;
		}
		if (payload_gzip_spool(r, window, room - zs.avail_out, i,
		    err) == -1)
			goto out;
		if (zrc == Z_STREAM_END) {
			if ((end = payload_gzip_member_end(&zs, r, i, err)) != 0)
				break;
		} else if (zrc != Z_OK) {
			(void)payload_gzip_fail(&zs, zrc, r, i, err);
			goto out;
		}
	}
	rc = end == 1 ? 0 : -1;
out:
	(void)inflateEnd(&zs);
	if (window != small)
		free(window);
	return rc;
}

/*
 * Decompress a large part in one pass into a spool file of the bound spool
 * (issue 14) and map it into *ret: the CRC-32 and ISIZE of every member
 * are zlib's (inflate with the gzip wrapper), trailing data and the caps
 * are checked as for the memory path.  A failure leaves the file unmapped
 * (it goes with the request's spool).
 */
static int
payload_gzip_spooled(const struct ebms_part *part, size_t i,
    const struct payload_caps *caps, struct payload_result *ret,
    struct err *err)
{
	struct payload_run r = { part->data, part->len, NULL, 0, 0, 0, NULL,
	    0 };
	const unsigned char *map = NULL;

	if (spool_file(spool_bound(), &r.f, err) == -1 ||
	    payload_gzip_run(&r, caps, i, err) == -1)
		return -1;
	spool_done(r.in + r.done, r.len - r.done);
	if (spool_map(r.f, &map, err) == -1)
		return -1;
	ret->data = (unsigned char *)(uintptr_t)map;
	ret->len = r.produced;
	return 0;
}

/*
 * Decompress one part into *ret (arena bytes): count under the
 * caps, then inflate into an exact allocation (one spare byte, so that a
 * second pass producing more than the first is caught, never overflows).
 */
static int
payload_gzip_part(struct arena *a, const struct ebms_part *part, size_t i,
    const struct payload_caps *caps, struct payload_result *ret,
    struct err *err)
{
	struct payload_run r = { part->data, part->len, NULL, 0, 0, 0, NULL,
	    0 };
	struct payload_caps exact, mem;
	size_t n;

	if (part->data == NULL || part->len == 0)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: empty "
		    "compressed data", i + 1);
	if (spool_want(spool_bound(), part->len))
		return payload_gzip_spooled(part, i, caps, ret, err);
	mem = *caps;
	mem.budget = arena_remaining(a);
	mem.spill = spool_bound() != NULL;
	switch (payload_gzip_run(&r, &mem, i, err)) {
	case 1:   /* a small part with a large output: to a spool file */
		return payload_gzip_spooled(part, i, caps, ret, err);
	case 0:
		break;
	default:
		return -1;
	}
	n = r.produced;
	r = (struct payload_run){ part->data, part->len, NULL, n + 1, 0, 0,
	    NULL, 0 };
	if (n == SIZE_MAX || (r.out = arena_alloc(a, n + 1)) == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "decompressed size exceeds the request memory budget",
		    i + 1);
	/* the second pass may not produce more than the first counted */
	exact = (struct payload_caps){ n, 0, SIZE_MAX, 0 };
	if (payload_gzip_run(&r, n > 0 ? &exact : caps, i, err) == -1)
		return -1;
	if (r.produced != n)
		return err_set(err, ERR_INTERNAL, NULL, "payload %zu: inflate "
		    "not repeatable", i + 1);
	ret->data = r.out;
	ret->len = n;
	return 0;
}

/* AS4 profile 3.1 packaging: gzip, an attachment, and a MimeType. */
static int
payload_gzip_check(const struct ebms_part *part, size_t i, struct err *err)
{
	if (strcmp(part->compression_type, PAYLOAD_GZIP_TYPE) != 0)
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "unsupported CompressionType", i + 1);
	/* AS4 3.1: only payloads in separate MIME parts are compressed */
	if (part->content_id == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0003", "payload %zu: a SOAP "
		    "Body payload cannot be compressed", i + 1);
	/* AS4 3.1 packaging requirements: MimeType is REQUIRED; without it
	 * nothing known comes out: DecompressionFailure (issue 10 item 10) */
	if (part->mime_type == NULL || part->mime_type[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0303", "payload %zu: "
		    "compressed payload without MimeType property", i + 1);
	return 0;
}

/* The caps for part i, given what earlier parts already produced. */
static void
payload_gzip_caps(const struct payload_limits *lim, size_t total,
    struct payload_caps *caps)
{
	size_t left;

	caps->max_out = lim->max_decompressed_bytes;
	caps->ratio = lim->max_ratio;
	caps->budget = SIZE_MAX;
	caps->spill = 0;
	if (lim->max_total_bytes == 0)
		return;
	left = total < lim->max_total_bytes ? lim->max_total_bytes - total : 0;
	if (caps->max_out == 0 || left < caps->max_out)
		caps->max_out = left;
	if (caps->max_out == 0)   /* nothing left: 0 would mean "no limit" */
		caps->max_out = 1;
}

/*
 * The gzip bytes of the parts just inflated (res[i].gz) are read no more:
 * a spooled range leaves the spool (spool_drop), unless some part still
 * points into it.
 */
static void
payload_gzip_spent(const struct ebms_user_message *um,
    const struct payload_result *res)
{
	size_t i, j;

	for (i = 0; i < um->n_parts; i++) {
		const unsigned char *lo = res[i].gz;

		if (lo == NULL)
			continue;
		for (j = 0; j < um->n_parts; j++)
			if (um->parts[j].data != NULL &&
			    um->parts[j].data < lo + res[i].gz_len &&
			    um->parts[j].data + um->parts[j].len > lo)
				break;
		if (j == um->n_parts)
			spool_drop(lo, res[i].gz_len);
	}
}

/* Decompress every compressed part of um; see payload.h. */
int
payload_decompress(struct arena *a, struct ebms_user_message *um,
    const struct payload_limits *lim, struct err *err)
{
	struct payload_limits def;
	struct payload_caps caps;
	struct payload_result *res = NULL;
	size_t total = 0, i;
	int rc = -1;

	if (lim == NULL) {
		payload_limits_default(&def);
		lim = &def;
	}
	if (um->n_parts > 0 &&
	    (res = arena_calloc(a, um->n_parts, sizeof(*res))) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < um->n_parts; i++) {
		const struct ebms_part *p = &um->parts[i];

		if (p->compression_type == NULL || p->compression_type[0] == '\0')
			continue;
		payload_gzip_caps(lim, total, &caps);
		if (payload_gzip_check(p, i, err) == -1 ||
		    payload_gzip_part(a, p, i, &caps, &res[i], err) == -1)
			goto out;
		total += res[i].len;
	}
	/* all parts inflated: only now change um */
	for (i = 0; i < um->n_parts; i++) {
		if (res[i].data == NULL)
			continue;
		res[i].gz = um->parts[i].data;
		res[i].gz_len = um->parts[i].len;
		um->parts[i].data = res[i].data;
		um->parts[i].len = res[i].len;
		um->parts[i].media_type = um->parts[i].mime_type;
	}
	payload_gzip_spent(um, res);
	rc = 0;
out:
	return rc;
}
