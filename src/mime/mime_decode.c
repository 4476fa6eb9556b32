/*
 * mime_decode — a part body's Content-Transfer-Encoding (RFC 2045 6):
 * binary / 8bit / 7bit as they are (the part's data points into the
 * body), base64 and quoted-printable decoded.  The decoded bytes go to
 * the request's arena, or, for a part of a size spool_want() says so about
 * (issue 14: a spooled request), to a spool file written in pieces and
 * mapped, so a 1 GiB base64 attachment never sits in memory.  The input is
 * read front to back with spool_done() behind it.  Both ways give the same
 * bytes and the same answers.
 */
#include "mime.h"

#include <string.h>

#include "../spool/spool.h"
#include "../util/codec.h"

/* Decoded output: the whole of it in the arena, or a spool file (which
 * buffers its own writes: spool_write). */
struct mime_out {
	unsigned char *buf;     /* f NULL: cap bytes for it all */
	size_t len, cap;
	struct spool_file *f;   /* not NULL: the output goes here */
};

/* Output for up to max decoded bytes: a spool file when the request's
 * spool wants it (spool.h), else the arena. */
static int
mime_out_open(struct arena *a, size_t max, struct mime_out *o,
    struct err *err)
{
	struct spool *sp = spool_bound();

	memset(o, 0, sizeof(*o));
	if (spool_want(sp, max))
		return spool_file(sp, &o->f, err);
	o->cap = max + 1;
	o->buf = arena_alloc(a, o->cap);
	if (o->buf == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

/* Append n bytes. */
static int
mime_out_put(struct mime_out *o, const unsigned char *p, size_t n,
    struct err *err)
{
	if (o->f != NULL)
		return spool_write(o->f, p, n, err);
	if (n > o->cap - o->len)      /* not reached: cap is the bound */
		return err_set(err, ERR_INTERNAL, NULL,
		    "mime: decoded part overflows");
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/* The decoded bytes become the part's data (a spool file: mapped). */
static int
mime_out_finish(struct mime_out *o, struct mime_part *part, struct err *err)
{
	const unsigned char *m;

	if (o->f == NULL) {
		part->data = o->buf;
		part->len = o->len;
		return 0;
	}
	if (spool_map(o->f, &m, err) == -1)
		return -1;
	if (spool_size(o->f) > SIZE_MAX)
		return err_set(err, ERR_INTERNAL, NULL, "mime: part too large");
	part->data = m;
	part->len = (size_t)spool_size(o->f);
	return 0;
}

/* RFC 4648 4 alphabet. */
static int
mime_is_b64(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

/* The one answer to malformed base64. */
static int
mime_b64_bad(struct err *err)
{
	return err_set(err, ERR_EBMS, "EBMS:0007",
	    "invalid base64 in mime part");
}

/*
 * The checks of Content-Transfer-Encoding: base64 (RFC 2045 6.8) before
 * any decoding: whitespace is ignored; any other character outside the
 * alphabet, "=" anywhere but the end, more than two of them, or a length
 * that is not a multiple of 4 is EBMS:0007.  Reads front to back with
 * spool_done() behind.
 */
static int
mime_b64_check(const unsigned char *p, size_t len, struct err *err)
{
	const unsigned char *rel = p, *end = p + len;
	size_t n = 0, pad = 0;

	for (; p < end; p++) {
		spool_done_behind(&rel, p);
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			continue;
		if (*p == '=')
			pad++;
		else if (pad > 0 || !mime_is_b64(*p))
			return mime_b64_bad(err);
		n++;
	}
	if (pad > 2 || n % 4 != 0)
		return mime_b64_bad(err);
	return 0;
}

/* codec_unbase64_sink()'s sink: decoded octets into the spool output. */
struct mime_b64_sink {
	struct mime_out *o;
	struct err *err;
};

static int
mime_b64_put(void *arg, const unsigned char *p, size_t n)
{
	struct mime_b64_sink *k = arg;

	return mime_out_put(k->o, p, n, k->err);
}

/*
 * Content-Transfer-Encoding: base64, checked (mime_b64_check), then
 * decoded by the one base64 decoder (util/codec): whole into the arena,
 * or, for a part the bound spool wants, in pieces into a spool file
 * (codec_unbase64_sink, spool_done() behind it).
 */
static int
mime_base64(struct arena *a, const unsigned char *p, size_t len,
    struct mime_part *part, struct err *err)
{
	unsigned char *out = NULL;
	size_t outlen = 0;
	struct mime_out o;
	struct mime_b64_sink k = { &o, err };

	if (mime_b64_check(p, len, err) == -1)
		return -1;
	if (spool_want(spool_bound(), len / 4 * 3)) {
		if (mime_out_open(a, len / 4 * 3, &o, err) == -1)
			return -1;
		if (codec_unbase64_sink((const char *)p, len, mime_b64_put,
		    spool_done, &k) == -1)
			return err->kind != ERR_NONE ? -1 : err_set(err,
			    ERR_INTERNAL, NULL, "could not decode base64 part");
		return mime_out_finish(&o, part, err);
	}
	if (codec_unbase64(a, (const char *)p, len, &out, &outlen) == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not decode base64 part");
	part->data = out;
	part->len = outlen;
	return 0;
}

/* Length of a line break at p (CRLF 2, LF 1), 0 if none; p < end. */
static size_t
mime_eol(const unsigned char *p, const unsigned char *end)
{
	size_t n = 0;

	if (*p == '\n')
		n = 1;
	else if (*p == '\r' && end - p >= 2 && p[1] == '\n')
		n = 2;
	return n;
}

/*
 * One "=" escape at p (RFC 2045 6.7 rules 1 and 5): writes the byte, if any,
 * to *o and returns the bytes consumed, or 0 when the escape is invalid.
 */
static size_t
mime_qp_escape(const unsigned char *p, const unsigned char *end,
    unsigned char **o)
{
	const unsigned char *q = p + 1;
	int hi = end - p >= 3 ? codec_hexval(p[1]) : -1;
	int lo = end - p >= 3 ? codec_hexval(p[2]) : -1;
	size_t used = 0, eol;

	if (hi >= 0 && lo >= 0) {
		*(*o)++ = (unsigned char)(hi * 16 + lo);
		used = 3;
		goto out;
	}
	/* soft line break, with the trailing blanks rule 3 allows */
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q == end)
		used = (size_t)(q - p);
	else if ((eol = mime_eol(q, end)) != 0)
		used = (size_t)(q - p) + eol;
out:
	return used;
}

/*
 * One step of quoted-printable at p: an escape, a run of blanks (dropped
 * at the end of a line: rule 3) or a run of other bytes.  The bytes
 * consumed, 0 for a malformed "=" (EBMS:0007), or -1 when the output
 * failed.
 */
static ptrdiff_t
mime_qp_step(const unsigned char *p, const unsigned char *end,
    struct mime_out *o, struct err *err)
{
	const unsigned char *q = p;
	unsigned char ch, *w = &ch;
	size_t used;

	if (*p == '=') {
		if ((used = mime_qp_escape(p, end, &w)) == 0) {
			err_set(err, ERR_EBMS, "EBMS:0007",
			    "invalid quoted-printable in mime part");
			return 0;
		}
		if (w != &ch && mime_out_put(o, &ch, 1, err) == -1)
			return -1;
		return (ptrdiff_t)used;
	}
	if (*p == ' ' || *p == '\t') {
		while (q < end && (*q == ' ' || *q == '\t'))
			q++;
		if (q < end && mime_eol(q, end) == 0 &&
		    mime_out_put(o, p, (size_t)(q - p), err) == -1)
			return -1;
		return q - p;
	}
	while (q < end && *q != '=' && *q != ' ' && *q != '\t')
		q++;
	return mime_out_put(o, p, (size_t)(q - p), err) == -1 ? -1 : q - p;
}

/*
 * Content-Transfer-Encoding: quoted-printable (RFC 2045 6.7).  Trailing
 * blanks on a line are dropped (rule 3); a malformed "=" is EBMS:0007.
 */
static int
mime_qp(struct arena *a, const unsigned char *p, size_t len,
    struct mime_part *part, struct err *err)
{
	const unsigned char *end = p + len, *rel = p;
	struct mime_out o;
	ptrdiff_t used;

	if (mime_out_open(a, len, &o, err) == -1)
		return -1;
	while (p < end) {
		if ((used = mime_qp_step(p, end, &o, err)) <= 0)
			return -1;
		p += used;
		spool_done_behind(&rel, p);
	}
	return mime_out_finish(&o, part, err);
}

/* Decode the body [p, p+len) by the part's transfer encoding (mime.h). */
int
mime_decode(struct arena *a, const unsigned char *p, size_t len,
    struct mime_part *part, struct err *err)
{
	const char *cte = part->transfer_encoding;
	int rc = 0;

	if (strcmp(cte, "binary") == 0 || strcmp(cte, "8bit") == 0 ||
	    strcmp(cte, "7bit") == 0) {
		part->data = p;
		part->len = len;
	} else if (strcmp(cte, "base64") == 0) {
		rc = mime_base64(a, p, len, part, err);
	} else if (strcmp(cte, "quoted-printable") == 0) {
		rc = mime_qp(a, p, len, part, err);
	} else {
		rc = err_set(err, ERR_EBMS, "EBMS:0007",
		    "unsupported content-transfer-encoding in mime part");
		err_detail(err, "content-transfer-encoding %s", cte);
	}
	return rc;
}
