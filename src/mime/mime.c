#include "mime.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../spool/spool.h"
#include "mime_hdr.h"

/*
 * multipart/related parser (RFC 2046 5.1, RFC 2387, SOAP with Attachments,
 * AS4 profile 5.1.2).  One forward pass: the delimiter scan looks only at line
 * starts and each part's header block is read once more, bounded by
 * max_part_headers, so the work is linear in the body length.  Nothing outside
 * [body, body + len) is ever read.
 */

#define MIME_DEFAULT_MAX_PARTS 64
#define MIME_DEFAULT_MAX_PART_HEADERS 16384
/* RFC 2046 5.1.1: a boundary is 1 to 70 characters */
#define MIME_MAX_BOUNDARY 70

/* The three part headers the parser reads (unfolded, trimmed, arena). */
struct mime_hdrs {
	const char *content_type;
	const char *content_id;
	const char *cte;
	const unsigned char *body; /* first byte after the blank line */
	const unsigned char *hend; /* end of the header lines (the blank line) */
};

/*
 * An RFC 2046 5.1.1 boundary delimiter line: "--boundary" at the start of a
 * line, then either "--" (the close delimiter) or optional transport padding
 * (spaces, tabs) and CRLF or a bare LF.
 */
struct mime_delim {
	const unsigned char *at;   /* first '-' of the delimiter */
	const unsigned char *next; /* first byte after the delimiter line */
	int close;                 /* 1 for "--boundary--" */
};

/*
 * One multipart parse: the arena, the limits, and the parts found so far
 * (the array grows by doubling in the arena).
 */
struct mime_pctx {
	struct arena *a;
	const struct mime_limits *lim;
	struct mime_part *parts;
	size_t n, cap;
};

/* The documented defaults (mime.h); config keys override them. */
void
mime_limits_default(struct mime_limits *lim)
{
	lim->max_parts = MIME_DEFAULT_MAX_PARTS;
	lim->max_part_headers = MIME_DEFAULT_MAX_PART_HEADERS;
}

/* Root media types: SOAP 1.2 (RFC 3902) and SOAP 1.1 (text/xml). */
static int
mime_is_soap(const char *media_type)
{
	return strcmp(media_type, "application/soap+xml") == 0 ||
	    strcmp(media_type, "text/xml") == 0;
}

/*
 * What follows "--boundary" at q: "--" makes it the close delimiter (returns
 * end: the rest is epilogue); otherwise transport padding and a line break
 * must follow (returns the next line).  NULL: not a delimiter after all.
 */
static const unsigned char *
mime_delim_rest(const unsigned char *q, const unsigned char *end,
    int *ret_close)
{
	const unsigned char *next = NULL;

	*ret_close = end - q >= 2 && q[0] == '-' && q[1] == '-';
	if (*ret_close) {
		next = end;
		goto out;
	}
	/* RFC 2046 5.1.1: transport padding before CRLF */
	while (q < end && (*q == ' ' || *q == '\t'))
		q++;
	if (q < end && *q == '\r' && end - q >= 2 && q[1] == '\n')
		q++;
	if (q < end && *q == '\n')
		next = q + 1;
out:
	return next;
}

/*
 * The start of the line after the one p is on, or end.  Searched in
 * SPOOL_CHUNK windows with spool_done() behind each (issue 14: a line of
 * a binary part may be the whole part, gigabytes long).
 */
static const unsigned char *
mime_next_line(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *nl;
	size_t n;

	for (;;) {
		n = (size_t)(end - p) < SPOOL_CHUNK ? (size_t)(end - p) :
		    SPOOL_CHUNK;
		nl = memchr(p, '\n', n);
		if (nl != NULL)
			return nl + 1;
		if (n == (size_t)(end - p))
			return end;
		spool_done(p, n);
		p += n;
	}
}

/*
 * Find the first delimiter line (delim = "--" boundary, dlen bytes) at or
 * after p, which must be at a line start, and before end.  Only line starts
 * are compared, each costing at most dlen (<= 72) bytes, plus one memchr
 * per line: linear in the bytes scanned, and reads only [p, end).  What
 * the scan has passed is released every SPOOL_CHUNK bytes (spool_done():
 * a no-op unless the body is a spooled request's mapping).
 * 1 found (ret filled), 0 not found.
 */
static int
mime_delim_find(const unsigned char *p, const unsigned char *end,
    const char *delim, size_t dlen, struct mime_delim *ret)
{
	const unsigned char *next, *rel = p;
	int found = 0, close;

	while (!found && p < end) {
		if ((size_t)(end - p) >= dlen && memcmp(p, delim, dlen) == 0 &&
		    (next = mime_delim_rest(p + dlen, end, &close)) != NULL) {
			ret->at = p;
			ret->next = next;
			ret->close = close;
			found = 1;
		} else {
			p = mime_next_line(p, end);
		}
		spool_done_behind(&rel, p);
	}
	return found;
}

/*
 * Keep a field if it is one the parser reads (unfolded, trimmed).  A
 * second Content-Type, Content-ID or Content-Transfer-Encoding in one part
 * is ambiguous: EBMS:0007.
 */
static int
mime_hdr_keep(struct arena *a, const struct mime_field *f,
    struct mime_hdrs *h, struct err *err)
{
	static const char *const names[] = { "content-type", "content-id",
		"content-transfer-encoding" };
	const char **slots[] = { &h->content_type, &h->content_id, &h->cte };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (f->name_len == strlen(names[i]) &&
		    strncasecmp(f->name, names[i], f->name_len) == 0)
			break;
	if (i == sizeof(names) / sizeof(names[0]))
		return 0;
	if (*slots[i] != NULL) {
		err_set(err, ERR_EBMS, "EBMS:0007",
		    "mime part repeats a header");
		err_detail(err, "header %s", names[i]);
		return -1;
	}
	*slots[i] = mime_hdr_unfold(a, f->value, f->value_len);
	if (*slots[i] == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

/*
 * Where the header block of a part in [start, end) ends: at a blank line
 * (h->hend, h->body after it), or at end for a part that reaches the
 * delimiter without one (headers only, empty body).  400 when the block is
 * longer than max.
 */
static int
mime_headers_end(const unsigned char *start, const unsigned char *end,
    size_t max, struct mime_hdrs *h, struct err *err)
{
	const unsigned char *p = start, *nl, *le;

	h->body = end;
	h->hend = end;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end - 1; /* not reached: end follows a line break */
		if ((size_t)(nl + 1 - start) > max)
			return err_http(err, 400, "mime part headers too large");
		le = nl > p && nl[-1] == '\r' ? nl - 1 : nl;
		if (le == p) {
			h->body = nl + 1;
			h->hend = p;
			break;
		}
		p = nl + 1;
	}
	return 0;
}

/*
 * Read the header block of a part that occupies [start, end) (end is the
 * next delimiter) with the one header grammar (mime_hdr.h).
 */
static int
mime_headers(struct arena *a, const unsigned char *start,
    const unsigned char *end, size_t max, struct mime_hdrs *h,
    struct err *err)
{
	const char *blk = (const char *)start;
	struct mime_field f;
	size_t pos = 0, n;
	int r;

	if (mime_headers_end(start, end, max, h, err) == -1)
		return -1;
	n = (size_t)(h->hend - start);
	while ((r = mime_hdr_next(blk, n, &pos, &f)) == 1)
		if (mime_hdr_keep(a, &f, h, err) == -1)
			return -1;
	if (r == -1)
		return err_http(err, 400, "malformed mime part header");
	return 0;
}

/* Lower-cased arena copy of s. */
static char *
mime_lower(struct arena *a, const char *s)
{
	char *d = arena_strdup(a, s);
	size_t i;

	for (i = 0; d != NULL && d[i] != '\0'; i++)
		d[i] = (char)tolower((unsigned char)d[i]);
	return d;
}

/* Content-ID of a part, without "<>"/"cid:"; an empty id is EBMS:0007. */
static int
mime_part_id(struct arena *a, const char *raw, struct mime_part *part,
    struct err *err)
{
	const char *p = raw;
	size_t n = strlen(raw);
	int rc = -1;

	(void)mime_ct_id_strip(&p, &n);
	if (n == 0) {
		err_set(err, ERR_EBMS, "EBMS:0007",
		    "empty content-id in mime part");
		goto out;
	}
	part->content_id = arena_strndup(a, p, n);
	if (part->content_id == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

/* Fill part from its headers and raw body [p, p+len). */
static int
mime_part_fill(struct arena *a, const struct mime_hdrs *h,
    const unsigned char *p, size_t len, struct mime_part *part,
    struct err *err)
{
	struct mime_ct ct;
	struct err cerr = { 0 };
	int rc = -1;

	/* RFC 2045 5.2: no Content-Type means text/plain */
	part->content_type = h->content_type != NULL ? h->content_type :
	    "text/plain";
	if (mime_ct_parse_err(a, part->content_type, &ct, &cerr) == -1) {
		if (cerr.kind == ERR_INTERNAL)
			err_set(err, ERR_INTERNAL, NULL, "out of memory");
		else
			err_set(err, ERR_EBMS, "EBMS:0007",
			    "malformed content-type in mime part");
		err_detail(err, "content-type %s", part->content_type);
		goto out;
	}
	part->media_type = ct.type;
	part->transfer_encoding = mime_lower(a,
	    h->cte != NULL ? h->cte : "binary");
	if (part->transfer_encoding == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (h->content_id != NULL &&
	    mime_part_id(a, h->content_id, part, err) == -1)
		goto out;
	rc = mime_decode(a, p, len, part, err);
out:
	return rc;
}

/* Room for one more part; doubles the array in the arena. */
static int
mime_pctx_grow(struct mime_pctx *pl, struct err *err)
{
	struct mime_part *np;
	size_t ncap;
	int rc = 0;

	if (pl->n < pl->cap)
		goto out;
	ncap = pl->cap == 0 ? 8 : pl->cap * 2;
	np = arena_calloc(pl->a, ncap, sizeof(*np));
	if (np == NULL) {
		rc = err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (pl->n > 0 && pl->parts != NULL)
		memcpy(np, pl->parts, pl->n * sizeof(*np));
	pl->parts = np;
	pl->cap = ncap;
out:
	return rc;
}

/*
 * One body part occupying [start, d->at): headers, then the body up to the
 * line break that belongs to the next delimiter (RFC 2046 5.1.1).
 */
static int
mime_one_part(struct mime_pctx *pl, const unsigned char *start,
    const struct mime_delim *d, struct err *err)
{
	struct arena *a = pl->a;
	const struct mime_limits *lim = pl->lim;
	struct mime_hdrs h = {0};
	const unsigned char *bend = d->at;
	int rc = -1;

	if (pl->n >= lim->max_parts) {
		err_http(err, 413, "too many mime parts");
		err_detail(err, "limit %zu", lim->max_parts);
		goto out;
	}
	if (mime_pctx_grow(pl, err) == -1 || pl->parts == NULL ||
	    mime_headers(a, start, d->at, lim->max_part_headers, &h, err) == -1)
		goto out;
	if (bend > start && bend[-1] == '\n') {
		bend--;
		if (bend > start && bend[-1] == '\r')
			bend--;
	}
	if (bend < h.body)
		bend = h.body;
	if (mime_part_fill(a, &h, h.body, (size_t)(bend - h.body),
	    &pl->parts[pl->n], err) == -1)
		goto out;
	pl->parts[pl->n].headers = (const char *)start;
	pl->parts[pl->n].headers_len = (size_t)(h.hend - start);
	pl->n++;
	rc = 0;
out:
	return rc;
}

/* RFC 2046 5.1.1 boundary: 1..70 characters, no NUL, CR or LF. */
static int
mime_boundary_ok(const char *b)
{
	size_t n = b == NULL ? 0 : strlen(b);

	return n >= 1 && n <= MIME_MAX_BOUNDARY && strpbrk(b, "\r\n") == NULL;
}

/* qsort comparator over content-id pointers. */
static int
mime_cmp_id(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Two parts with one Content-ID are EBMS:0007 (sorted: n log n). */
static int
mime_check_dups(struct arena *a, const struct mime_message *m,
    struct err *err)
{
	const char **ids = arena_calloc(a, m->n_parts, sizeof(*ids));
	size_t i, n = 0;
	int rc = -1;

	if (ids == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < m->n_parts; i++)
		if (m->parts[i].content_id != NULL)
			ids[n++] = m->parts[i].content_id;
	qsort(ids, n, sizeof(*ids), mime_cmp_id);
	for (i = 1; i < n; i++) {
		if (strcmp(ids[i - 1], ids[i]) == 0) {
			err_set(err, ERR_EBMS, "EBMS:0007",
			    "two mime parts share a content-id");
			err_detail(err, "content-id %s", ids[i]);
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}

/*
 * The root part: the one start= names (with or without "<>"), else the first
 * (AS4 profile 5.1.2; RSSBus sends a start= that matches nothing).  It must
 * carry the SOAP envelope: EBMS:0007 otherwise.
 */
static int
mime_pick_root(const struct mime_ct *ct, struct mime_message *m,
    struct err *err)
{
	const char *start = mime_ct_param(ct, "start");
	size_t i, n;
	int rc = 0;

	m->root = 0;
	if (start != NULL) {
		n = strlen(start);
		(void)mime_ct_id_strip(&start, &n);
		for (i = 0; i < m->n_parts; i++) {
			const char *id = m->parts[i].content_id;

			if (id != NULL && strlen(id) == n &&
			    memcmp(id, start, n) == 0) {
				m->root = i;
				break;
			}
		}
	}
	if (!mime_is_soap(m->parts[m->root].media_type)) {
		rc = err_set(err, ERR_EBMS, "EBMS:0007",
		    "mime root part is not a soap envelope");
		err_detail(err, "root media type %s",
		    m->parts[m->root].media_type);
	}
	return rc;
}

/* Walk the delimiters of a multipart body and collect its parts. */
static int
mime_split(struct mime_pctx *pl, const char *boundary,
    const unsigned char *body, size_t len, struct err *err)
{
	const unsigned char *end = body + len;
	struct mime_delim d, nd;
	char *delim = arena_sprintf(pl->a, "--%s", boundary);
	size_t dlen;
	int rc = -1;

	if (delim == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	dlen = strlen(delim);
	/* RFC 2046 5.1.1: everything before the first delimiter is preamble */
	if (!mime_delim_find(body, end, delim, dlen, &d) || d.close) {
		err_http(err, 400, "multipart body has no parts");
		goto out;
	}
	for (;;) {
		if (!mime_delim_find(d.next, end, delim, dlen, &nd)) {
			err_http(err, 400,
			    "multipart closing delimiter missing");
			goto out;
		}
		if (mime_one_part(pl, d.next, &nd, err) == -1)
			goto out;
		if (nd.close)
			break; /* the rest is epilogue */
		d = nd;
	}
	rc = 0;
out:
	return rc;
}

/* multipart/related: split, then choose and check the root. */
static int
mime_multipart(struct mime_pctx *pl, const struct mime_ct *ct,
    const unsigned char *body, size_t len, struct mime_message *ret,
    struct err *err)
{
	const char *boundary = mime_ct_param(ct, "boundary");
	struct mime_message m = {0};
	int rc = -1;

	if (!mime_boundary_ok(boundary)) {
		err_http(err, 400, "multipart boundary missing or invalid");
		goto out;
	}
	if (mime_split(pl, boundary, body, len, err) == -1)
		goto out;
	if (pl->n == 0 || pl->parts == NULL) {
		/* not reached: mime_split finds a part or fails */
		err_http(err, 400, "multipart body has no parts");
		goto out;
	}
	m.multipart = 1;
	m.parts = pl->parts;
	m.n_parts = pl->n;
	if (mime_check_dups(pl->a, &m, err) == -1 ||
	    mime_pick_root(ct, &m, err) == -1)
		goto out;
	*ret = m;
	rc = 0;
out:
	return rc;
}

/*
 * A bare SOAP document: one root part, the whole body, no Content-ID.  The
 * caller sets the part's media_type.
 */
static int
mime_single(struct arena *a, const char *content_type,
    const unsigned char *body, size_t len, struct mime_message *ret,
    struct err *err)
{
	struct mime_part *part = arena_calloc(a, 1, sizeof(*part));
	int rc = -1;

	if (part == NULL ||
	    (part->content_type = arena_strdup(a, content_type)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	part->transfer_encoding = "binary";
	part->data = body;
	part->len = len;
	ret->multipart = 0;
	ret->parts = part;
	ret->n_parts = 1;
	ret->root = 0;
	rc = 0;
out:
	return rc;
}

/*
 * An unparseable request Content-Type: a multipart one with broken
 * parameters (say an unterminated quoted boundary) is a malformed request,
 * 400; anything else is an unsupported media type, 415.
 */
static int
mime_ct_fail(const char *content_type, struct err *err)
{
	const char *p = content_type;

	while (p != NULL && (*p == ' ' || *p == '\t'))
		p++;
	if (p != NULL && strncasecmp(p, "multipart/", 10) == 0)
		err_http(err, 400, "malformed multipart content-type");
	else
		err_http(err, 415, "unsupported or missing content-type");
	return -1;
}

/* Split a request body by its Content-Type; see mime.h for the answers. */
int
mime_parse(struct arena *a, const char *content_type,
    const unsigned char *body, size_t len, const struct mime_limits *lim,
    struct mime_message *ret, struct err *err)
{
	static const unsigned char empty[1];
	struct mime_limits l;
	struct mime_pctx pc = { a, &l, NULL, 0, 0 };
	struct mime_ct ct;
	struct err cerr = { 0 };
	int rc = -1;

	mime_limits_default(&l);
	if (lim != NULL && lim->max_parts != 0)
		l.max_parts = lim->max_parts;
	if (lim != NULL && lim->max_part_headers != 0)
		l.max_part_headers = lim->max_part_headers;
	if (body == NULL && len > 0) {
		err_set(err, ERR_INTERNAL, NULL, "no body");
		goto out;
	}
	if (body == NULL)
		body = empty;
	if (mime_ct_parse_err(a, content_type, &ct, &cerr) == -1) {
		if (cerr.kind == ERR_INTERNAL)
			err_set(err, ERR_INTERNAL, NULL, "out of memory");
		else
			mime_ct_fail(content_type, err);
		goto out;
	}
	if (mime_is_soap(ct.type)) {
		rc = mime_single(a, content_type, body, len, ret, err);
		if (rc == 0)
			ret->parts[0].media_type = ct.type;
	} else if (strcmp(ct.type, "multipart/related") == 0) {
		rc = mime_multipart(&pc, &ct, body, len, ret, err);
	} else {
		err_http(err, 415, "unsupported content-type %s", ct.type);
	}
out:
	return rc;
}
