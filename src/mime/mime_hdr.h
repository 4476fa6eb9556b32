/*
 * mime_hdr — the one owner of MIME header grammar (STYLE.md 14): header
 * fields of a raw block (RFC 5322 2.2, 2.2.3 folding), unfolding, RFC 822
 * comments, RFC 2047 encoded-words, RFC 2231 extended parameter values; and
 * cid: URLs (RFC 2392), decoded and encoded in exactly one way.  Used by the
 * multipart parser (mime.c) and by WS-Security's SwA transforms and
 * Attachment-Complete decryption (wss_swa.c, wss_decrypt.c), the signer's
 * cid: references (wss_sign.c) and push's encryption (sender_encrypt.c).
 */
#ifndef AS4GW_MIME_HDR_H
#define AS4GW_MIME_HDR_H

#include <stddef.h>

#include "../util/arena.h"

/* One header field of a raw block: name (no trailing blanks) and raw value
 * (after the colon, continuation lines and their line ends included). */
struct mime_field {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
};

/*
 * The field of the raw header block [h, h + n) that starts at *pos
 * (RFC 5322 2.2: "name: value", blanks before the colon tolerated as
 * RFC 822 did; continuation lines start with SP or HTAB).  1 a field
 * (*pos moves past it), 0 at the end, -1 malformed: a line without a colon,
 * an empty name, a continuation with no field before it, or a NUL byte.
 */
int mime_hdr_next(const char *h, size_t n, size_t *pos,
    struct mime_field *ret);

/*
 * The value of the one field called name (case-insensitive) in the block:
 * 1 found ([*ret_v, *ret_v + *ret_len), raw), 0 absent, -1 when the block
 * is malformed (mime_hdr_next) or the field is present more than once.
 */
int mime_hdr_get(const char *h, size_t n, const char *name,
    const char **ret_v, size_t *ret_len);

/* RFC 5322 2.2.3 unfolding: a NUL-terminated arena copy of a raw value with
 * CR and LF removed and blanks trimmed at both ends; NULL out of memory. */
char *mime_hdr_unfold(struct arena *a, const char *v, size_t len);

/*
 * Remove RFC 822 comments outside quoted strings in place (the comment
 * goes, nothing replaces it; SwA 5.4.1 as WSS4J does), then blanks at both
 * ends.  -1 on an unbalanced comment or quote.
 */
int mime_hdr_uncomment(char *s);

/*
 * RFC 2047 6: decode the encoded-words "=?charset?B|Q?text?=" of an
 * unstructured value in place (charsets UTF-8 and US-ASCII only: the octets
 * as they are); blanks between two adjacent encoded-words disappear.  -1 on
 * an encoded-word that cannot be decoded (other charset, bad encoding, NUL).
 */
int mime_hdr_rfc2047(char *s);

/*
 * RFC 2231 4: an extended parameter value "charset'language'%XX..." decoded
 * in place (charset UTF-8, US-ASCII or empty); *len in and out.  -1 when
 * malformed (no two quotes, other charset, a bad escape or %00).
 */
int mime_hdr_rfc2231(char *v, size_t *len);

/*
 * A cid: URL's %-encoded id (RFC 2392 2; "cid:" already taken off)
 * decoded into the arena.  NULL when malformed (a '%' not followed by two
 * hex digits, or %00) or out of memory.  The one decoder: every module that
 * resolves a cid: reference decodes it here.
 */
char *mime_cid_decode(struct arena *a, const char *enc);

/*
 * Does the %-encoded id [enc, enc + len) decode (as mime_cid_decode) to
 * exactly id?  1 yes, 0 no, -1 enc is malformed.  No allocation.
 */
int mime_cid_match(const char *enc, size_t len, const char *id);

/*
 * The cid: URL of a Content-ID: "cid:" + the id with every octet outside
 * RFC 3986 unreserved and "@!$&*+,;=:" %-encoded (upper-case hex).
 * Arena memory; NULL when id is empty, over 4096 bytes, or out of memory.
 */
char *mime_cid_url(struct arena *a, const char *id);

#endif
