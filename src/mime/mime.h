/*
 * mime — multipart/related (SOAP with Attachments, AS4 profile 5.1.2) parser
 * and writer, and the Content-Type grammar (RFC 2045 / RFC 2387).
 *
 * The parser never copies part bodies that are not transfer-encoded: part data
 * points into the caller's body buffer, which must outlive the message.
 * Everything else (headers, decoded base64 bodies) is allocated in the arena;
 * a large decoded body of a spooled request goes to a spool file of the
 * spool bound to the thread instead (spool.h; valid until spool_free()).
 */
#ifndef AS4GW_MIME_H
#define AS4GW_MIME_H

#include <stddef.h>

#include "../util/arena.h"
#include "../util/buf.h"
#include "../util/err.h"

struct mime_param {
	const char *name;   /* lower case */
	const char *value;  /* unquoted */
};

struct mime_ct {
	const char *type;   /* "multipart/related", lower case, no parameters */
	struct mime_param *params;
	size_t n_params;
};

/* Parse a Content-Type header value; -1 when it is not type/subtype[; params]. */
int mime_ct_parse(struct arena *a, const char *value, struct mime_ct *ret);

/*
 * mime_ct_parse that says why it failed: ERR_INTERNAL when the arena ran out,
 * else ERR_HTTP 400 "malformed content-type" (callers that want another
 * answer for a malformed value pass a scratch err and check its kind).
 */
int mime_ct_parse_err(struct arena *a, const char *value, struct mime_ct *ret,
    struct err *err);

/*
 * A structured header value (RFC 2045 5.1 shape, e.g. Content-Disposition):
 * the leading value up to ';' or a blank (lower case), then the parameters
 * as mime_ct_parse reads them (names lower case, values unquoted, RFC 2231
 * "name*" extended values decoded, a repeated name refused, at most 32).
 * All arena memory.  -1 malformed or out of memory.
 */
int mime_ct_value_parse(struct arena *a, const char *value, const char **ret_value,
    const struct mime_param **ret_params, size_t *ret_n);

/* Parameter value by (case-insensitive) name, or NULL. */
const char *mime_ct_param(const struct mime_ct *ct, const char *name);

struct mime_part {
	const char *content_id;        /* without "<>" and "cid:"; NULL if absent */
	const char *content_type;      /* raw header value; "text/plain" if absent (RFC 2045 5.2) */
	const char *media_type;        /* lower-case type/subtype of content_type */
	const char *transfer_encoding; /* lower case; "binary" if absent */
	const unsigned char *data;     /* decoded body */
	size_t len;
	/* the part's raw header block as received (points into the body, not
	 * NUL-terminated; lines as sent, without the blank line that ends it),
	 * for the SwA Attachment-Complete transform; NULL/0 for a bare SOAP body */
	const char *headers;
	size_t headers_len;
};

struct mime_message {
	int multipart;             /* 0: the body was a bare application/soap+xml document */
	struct mime_part *parts;   /* parts[root] is the SOAP envelope */
	size_t n_parts;
	size_t root;
};

struct mime_limits {
	size_t max_parts;          /* default 64 */
	size_t max_part_headers;   /* bytes of headers per part; default 16384 */
};

/* Fill lim with the defaults above.  mime_parse() also takes lim == NULL,
 * and a field left 0, as "use the default". */
void mime_limits_default(struct mime_limits *lim);

/*
 * Split a request body by its Content-Type.
 *  - application/soap+xml: one part, the whole body.
 *  - multipart/related: boundary required (1..70 chars, no NUL/CR/LF) else
 *    400; missing closing delimiter 400; more than max_parts 413 (ERR_HTTP);
 *    the root is the part named by start= (with or without "<>"), else the
 *    first part (AS4 profile; RSSBus sends a start= that matches nothing).
 *    The root must be application/soap+xml (or text/xml for SOAP 1.1) else
 *    ERR_EBMS EBMS:0007; two parts with one Content-ID -> EBMS:0007;
 *    unknown Content-Transfer-Encoding or bad base64 -> EBMS:0007.
 *  - anything else: ERR_HTTP 415.
 * Also: a part header block over max_part_headers, a NUL byte or a malformed
 * line in part headers -> 400; a repeated Content-Type / Content-ID /
 * Content-Transfer-Encoding in one part, an empty Content-ID or a malformed
 * part Content-Type -> EBMS:0007; the arena running out -> ERR_INTERNAL.
 * Part bodies may end with bare LF line ends before the delimiter; preamble
 * and epilogue are ignored (RFC 2046 5.1.1).
 */
int mime_parse(struct arena *a, const char *content_type,
    const unsigned char *body, size_t len, const struct mime_limits *lim,
    struct mime_message *ret, struct err *err);

/*
 * The part with this Content-ID (compared without "<>"/"cid:"), or NULL.
 * content_id may be a PartInfo href, with or without its "cid:": a cid: URL
 * is %-encoded (RFC 2392 2), so it is compared %-decoded first and then as
 * is; without "cid:", as is first and then %-decoded.
 */
const struct mime_part *mime_find(const struct mime_message *m,
    const char *content_id);

/* One part to write; parts[0] is the root (the SOAP envelope). */
struct mime_out_part {
	const char *content_id;     /* without "<>"; NULL = no Content-ID header */
	const char *content_type;
	const void *data;
	size_t len;
};

/*
 * Write a multipart/related body (binary transfer encoding, CRLF line ends)
 * into out and the matching Content-Type header value into ret_content_type
 * (arena).  A random boundary is chosen when boundary is NULL.
 * The body is appended to out; on failure out is cut back to its old length.
 * Refused (ERR_INTERNAL): no parts, a boundary that is not 1..70 characters
 * or holds CR, LF, a quote or a backslash, CR/LF in a header value, a
 * Content-ID that is empty or holds CR, LF, "<", ">", a quote or a
 * backslash, or part data with a line starting "--boundary".
 * A NULL content_type is written as application/octet-stream.
 */
int mime_write(struct arena *a, const struct mime_out_part *parts, size_t n,
    const char *boundary, struct buf *out, const char **ret_content_type,
    struct err *err);

/*
 * Internal to mime/ (mime_ct.c, used by mime.c): Content-ID grammar.
 * Strip blanks, "<>" and a "cid:" prefix (case-insensitive, RFC 2392) from
 * the id in [*pp, *pp + *plen), narrowing the range in place, until none
 * is left (so a stripped id strips to itself).  Returns 1 when a "cid:"
 * prefix was removed: the rest is then a %-encoded URL (RFC 2392 2).
 */
int mime_ct_id_strip(const char **pp, size_t *plen);

/*
 * Internal to mime/ (mime_decode.c, used by mime.c): decode a part body
 * [p, p + len) by part->transfer_encoding into part->data/len: binary,
 * 8bit, 7bit as is; base64 and quoted-printable into the arena, or into a
 * spool file of the spool bound to the thread when spool_want() says so
 * (issue 14).  EBMS:0007 for malformed input or another encoding.
 */
int mime_decode(struct arena *a, const unsigned char *p, size_t len,
    struct mime_part *part, struct err *err);

#endif
