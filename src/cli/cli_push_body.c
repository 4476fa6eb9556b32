/*
 * cli_push_body — the HTTP body of a large `as4gw push` message as a list
 * of byte ranges (issue 14 item 5): the MIME framing and the envelope are
 * in memory, each large attachment is the mapping of a spool file (the
 * staged payload, or its ciphertext).  mime_write() stays the one writer
 * of the multipart grammar: it frames the message with a marker instead
 * of each large part's data, and the framed body is cut at the markers.
 *
 * The ranges are read in order — by libcurl's read callback for the
 * upload, by fwrite for --write-requests and --save-request — and each
 * mapped range is released behind the reader in SPOOL_CHUNK pieces
 * (spool_done), so the body is never resident whole.
 */
#include "cli_push_int.h"

#include <stdio.h>
#include <string.h>

#include "../spool/spool.h"

/* One range of the body. */
struct cli_push_seg {
	const unsigned char *p;
	size_t len;
};

struct cli_push_body {
	struct cli_push_seg *segs;
	size_t n;
	uint64_t len;
	size_t i, off, done; /* cursor: range, offset, released up to */
};

/*
 * RFC 2046 5.1.1: the data of a part must not hold a line that starts
 * with the delimiter.  The same rule as mime_write's check, which sees
 * only the markers: the line starts of [p, p + len), scanned a
 * SPOOL_CHUNK at a time (a part without line ends is not read whole at
 * once) and released behind.  1 clash, 0 none.
 */
static int
cli_push_body_clash(const unsigned char *p, size_t len, const char *delim,
    size_t dlen)
{
	const unsigned char *end = p + len, *c, *cend, *q, *nl;
	int start = 1; /* the byte at q begins a line */

	for (c = p; c < end; c = cend) {
		cend = c + ((size_t)(end - c) < SPOOL_CHUNK ? (size_t)(end - c) :
		    SPOOL_CHUNK);
		for (q = c; q < cend; q = nl + 1, start = 1) {
			if (start && (size_t)(end - q) >= dlen &&
			    memcmp(q, delim, dlen) == 0)
				return 1;
			nl = memchr(q, '\n', (size_t)(cend - q));
			if (nl == NULL) {
				start = 0;
				break;
			}
		}
		spool_done(c, (size_t)(cend - c));
	}
	return 0;
}

/* Append the range [p, p + len) (nothing when empty). */
static void
cli_push_body_add(struct cli_push_body *b, const unsigned char *p, size_t len)
{
	if (len == 0)
		return;
	b->segs[b->n].p = p;
	b->segs[b->n].len = len;
	b->n++;
	b->len += len;
}

/* The delimiter line mime_write() began the body with ("--boundary"). */
static size_t
cli_push_body_delim(const struct buf *framed)
{
	const char *crlf = memmem(framed->data, framed->len, "\r\n", 2);

	return crlf != NULL ? (size_t)(crlf - framed->data) : 0;
}

/* Cut framed at the markers; see cli_push_int.h. */
int
cli_push_body_split(struct arena *a, const struct buf *framed,
    const struct cli_push_big *big, size_t n, struct cli_push_body **ret,
    struct err *err)
{
	struct cli_push_body *b = arena_calloc(a, 1, sizeof(*b));
	const unsigned char *pos = (const unsigned char *)framed->data;
	const unsigned char *end = pos + framed->len, *at;
	size_t i, dlen = cli_push_body_delim(framed);

	*ret = NULL;
	if (b == NULL || (b->segs = arena_calloc(a, 2 * n + 1,
	    sizeof(*b->segs))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		if (big[i].mark == NULL)
			continue;
		at = memmem(pos, (size_t)(end - pos), big[i].mark,
		    strlen(big[i].mark));
		if (at == NULL || dlen == 0)
			return err_set(err, ERR_INTERNAL, NULL,
			    "could not build the message body");
		if (cli_push_body_clash(big[i].data, big[i].len,
		    framed->data, dlen))
			return err_set(err, ERR_INTERNAL, NULL,
			    "mime boundary occurs in part data");
		cli_push_body_add(b, pos, (size_t)(at - pos));
		cli_push_body_add(b, big[i].data, big[i].len);
		pos = at + strlen(big[i].mark);
	}
	cli_push_body_add(b, pos, (size_t)(end - pos));
	*ret = b;
	return 0;
}

/* The body's length in bytes. */
uint64_t
cli_push_body_len(const struct cli_push_body *b)
{
	return b->len;
}

/* Back to the first byte (a --repeat sends the body again). */
void
cli_push_body_rewind(struct cli_push_body *b)
{
	b->i = 0;
	b->off = 0;
	b->done = 0;
}

/* The reader is done with what the cursor has passed in the current
 * range: release it in whole SPOOL_CHUNKs (all of it when the range is
 * finished). */
static void
cli_push_body_release(struct cli_push_body *b, int all)
{
	size_t k = b->off - b->done;

	if (!all)
		k &= ~(SPOOL_CHUNK - 1);
	if (k > 0) {
		spool_done(b->segs[b->i].p + b->done, k);
		b->done += k;
	}
}

/*
 * The next piece of at most max bytes at the cursor (NULL at the end),
 * and the cursor moved past it.  What earlier calls handed out has been
 * read by now: it is released here, never the piece handed out (the
 * caller has yet to read it).
 */
static const unsigned char *
cli_push_body_next(struct cli_push_body *b, size_t max, size_t *ret_n)
{
	const struct cli_push_seg *s;
	const unsigned char *p;

	if (b->i < b->n && b->off == b->segs[b->i].len) {
		cli_push_body_release(b, 1);
		b->i++;
		b->off = 0;
		b->done = 0;
	}
	if (b->i == b->n)
		return NULL;
	cli_push_body_release(b, 0);
	s = &b->segs[b->i];
	p = s->p + b->off;
	*ret_n = s->len - b->off < max ? s->len - b->off : max;
	b->off += *ret_n;
	return p;
}

/* libcurl CURLOPT_READFUNCTION: copy the next bytes of the body. */
size_t
cli_push_body_read(char *buf, size_t size, size_t nitems, void *ctx)
{
	struct cli_push_body *b = ctx;
	size_t room = size * nitems, got = 0, n = 0;
	const unsigned char *p;

	while (got < room &&
	    (p = cli_push_body_next(b, room - got, &n)) != NULL) {
		memcpy(buf + got, p, n);
		got += n;
	}
	return got;
}

/*
 * libcurl CURLOPT_SEEKFUNCTION: the cursor to offset bytes from the start.
 * libcurl asks when it sends the body again: a request on a reused
 * connection that the server closed before answering is retried on a new
 * one (without this callback it fails "necessary data rewind wasn't
 * possible").  Pages released behind the first pass fault back in.
 */
int
cli_push_body_seek(void *ctx, curl_off_t offset, int origin)
{
	struct cli_push_body *b = ctx;
	uint64_t left;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > b->len)
		return CURL_SEEKFUNC_CANTSEEK;
	cli_push_body_rewind(b);
	for (left = (uint64_t)offset; b->i < b->n &&
	    left >= b->segs[b->i].len; b->i++)
		left -= b->segs[b->i].len;
	b->off = (size_t)left;
	return CURL_SEEKFUNC_OK;
}

/* Write the whole body to f from the start; 0, or -1 (errno set). */
int
cli_push_body_write(struct cli_push_body *b, FILE *f)
{
	const unsigned char *p;
	size_t n = 0;

	cli_push_body_rewind(b);
	while ((p = cli_push_body_next(b, SPOOL_CHUNK, &n)) != NULL)
		if (fwrite(p, 1, n, f) != n)
			return -1;
	return 0;
}
