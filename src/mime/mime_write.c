#include "mime.h"

#include <string.h>

#include "../util/codec.h"

/*
 * multipart/related writer (RFC 2046 5.1.1, RFC 2387, SOAP with Attachments;
 * AS4 profile 5.1.2): binary parts, CRLF line ends, the root first.
 */

/* RFC 2046 5.1.1: at most 70 characters */
#define MIME_WRITE_MAX_BOUNDARY 70

/*
 * A caller's boundary must be 1..70 characters and safe inside a quoted
 * parameter value: no CR, LF, '"' or '\\'.
 */
static int
mime_write_boundary_ok(const char *b)
{
	size_t n = strlen(b);

	return n >= 1 && n <= MIME_WRITE_MAX_BOUNDARY &&
	    strpbrk(b, "\r\n\"\\") == NULL;
}

/* A header value we write must not break the header (no CR/LF injection). */
static int
mime_write_value_ok(const char *v)
{
	return v == NULL || strpbrk(v, "\r\n") == NULL;
}

/* Content-ID must also fit between "<>" and inside start="<...>". */
static int
mime_write_id_ok(const char *id)
{
	return id == NULL || (*id != '\0' && strpbrk(id, "\r\n\"\\<>") == NULL);
}

/*
 * 1 when a line of [p, end) starts with delim.  Stricter than the parser's
 * delimiter rule on purpose: "--boundary" at the very end of the data would
 * become a delimiter once the CRLF after the part is written.
 */
static int
mime_write_clash(const unsigned char *p, const unsigned char *end,
    const char *delim, size_t dlen)
{
	const unsigned char *nl;
	int clash = 0;

	while (!clash && p < end) {
		clash = (size_t)(end - p) >= dlen &&
		    memcmp(p, delim, dlen) == 0;
		nl = memchr(p, '\n', (size_t)(end - p));
		p = nl == NULL ? end : nl + 1;
	}
	return clash;
}

/*
 * Check every part before writing: safe header values, and no delimiter line
 * inside the data (it would end the part early when read back).
 */
static int
mime_write_check(const struct mime_out_part *parts, size_t n,
    const char *delim, struct err *err)
{
	size_t i;
	int rc = -1;

	for (i = 0; i < n; i++) {
		const unsigned char *p = parts[i].data;

		if (!mime_write_value_ok(parts[i].content_type) ||
		    !mime_write_id_ok(parts[i].content_id)) {
			err_set(err, ERR_INTERNAL, NULL,
			    "invalid mime part header value");
			goto out;
		}
		if (p != NULL && mime_write_clash(p, p + parts[i].len, delim,
		    strlen(delim))) {
			err_set(err, ERR_INTERNAL, NULL,
			    "mime boundary occurs in part data");
			goto out;
		}
	}
	rc = 0;
out:
	return rc;
}

/* One part: delimiter line, headers, blank line, data, CRLF. */
static int
mime_write_part(struct buf *out, const char *delim,
    const struct mime_out_part *part)
{
	const char *ct = part->content_type != NULL ? part->content_type :
	    "application/octet-stream";
	int rc = -1;

	if (buf_printf(out, "%s\r\nContent-Type: %s\r\n"
	    "Content-Transfer-Encoding: binary\r\n", delim, ct) == -1)
		goto out;
	if (part->content_id != NULL &&
	    buf_printf(out, "Content-ID: <%s>\r\n", part->content_id) == -1)
		goto out;
	if (buf_puts(out, "\r\n") == -1 ||
	    (part->len > 0 && buf_append(out, part->data, part->len) == -1) ||
	    buf_puts(out, "\r\n") == -1)
		goto out;
	rc = 0;
out:
	return rc;
}

/* The boundary to use: the caller's (checked) or a fresh random one. */
static const char *
mime_write_pick_boundary(struct arena *a, const char *boundary,
    struct err *err)
{
	char uuid[37];
	const char *b = NULL;

	if (boundary != NULL) {
		if (mime_write_boundary_ok(boundary))
			b = boundary;
		else
			err_set(err, ERR_INTERNAL, NULL,
			    "invalid mime boundary");
		goto out;
	}
	if (codec_uuid(uuid) == -1) {
		err_set(err, ERR_INTERNAL, NULL,
		    "could not make a mime boundary");
		goto out;
	}
	b = arena_sprintf(a, "MIMEBoundary_%s", uuid);
	if (b == NULL)
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
out:
	return b;
}

/* The Content-Type header value for the package (RFC 2387 3). */
static const char *
mime_write_ct(struct arena *a, const char *boundary,
    const struct mime_out_part *root)
{
	const char *ct;

	if (root->content_id != NULL)
		ct = arena_sprintf(a, "multipart/related; boundary=\"%s\"; "
		    "type=\"application/soap+xml\"; start=\"<%s>\"", boundary,
		    root->content_id);
	else
		ct = arena_sprintf(a, "multipart/related; boundary=\"%s\"; "
		    "type=\"application/soap+xml\"", boundary);
	return ct;
}

/* Write a multipart/related package; see mime.h. */
int
mime_write(struct arena *a, const struct mime_out_part *parts, size_t n,
    const char *boundary, struct buf *out, const char **ret_content_type,
    struct err *err)
{
	size_t old_len = out->len, i;
	const char *b, *ct = NULL;
	char *delim = NULL;
	int rc = -1;

	if (parts == NULL || n == 0) {
		err_set(err, ERR_INTERNAL, NULL, "no mime parts to write");
		goto out;
	}
	if ((b = mime_write_pick_boundary(a, boundary, err)) == NULL)
		goto out;
	delim = arena_sprintf(a, "--%s", b);
	ct = mime_write_ct(a, b, &parts[0]);
	if (delim == NULL || ct == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (mime_write_check(parts, n, delim, err) == -1)
		goto out;
	for (i = 0; i < n; i++)
		if (mime_write_part(out, delim, &parts[i]) == -1)
			break;
	if (i < n || buf_printf(out, "%s--\r\n", delim) == -1) {
		err_set(err, ERR_INTERNAL, NULL,
		    "could not write mime body: out of memory or over limit");
		goto out;
	}
	*ret_content_type = ct;
	rc = 0;
out:
	if (rc == -1 && out->len > old_len) {
		out->len = old_len;
		if (out->data != NULL)
			out->data[old_len] = '\0';
	}
	return rc;
}
