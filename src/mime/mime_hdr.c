/*
 * mime_hdr.c — MIME header fields, their values and cid: URLs, parsed and
 * printed in one place (see mime_hdr.h): RFC 5322 2.2 fields and 2.2.3
 * folding, RFC 822 3.4.3 comments, RFC 2047 encoded-words, RFC 2231
 * extended values, RFC 2392 cid: URLs.
 */
#include "mime_hdr.h"

#include <string.h>
#include <strings.h>

#include "../util/codec.h"

/* RFC 2047 2: an encoded-word is at most 75 characters. */
#define MIME_HDR_MAX_EW 75
/* Longest Content-ID mime_cid_url encodes. */
#define MIME_CID_MAX 4096

/* SP or HTAB (RFC 5322 WSP). */
static int
mime_hdr_wsp(char c)
{
	return c == ' ' || c == '\t';
}

/* ASCII lower case, locale-free. */
static char
mime_hdr_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* End of the line starting at i: just after its LF, or n. */
static size_t
mime_hdr_eol(const char *h, size_t n, size_t i)
{
	const char *lf = memchr(h + i, '\n', n - i);

	return lf != NULL ? (size_t)(lf - h) + 1 : n;
}

/* The next field of a raw header block; see mime_hdr.h. */
int
mime_hdr_next(const char *h, size_t n, size_t *pos, struct mime_field *ret)
{
	size_t i = *pos, end, ne;
	const char *colon;

	if (i >= n)
		return 0;
	if (mime_hdr_wsp(h[i]))
		return -1; /* a continuation with no field before it */
	end = mime_hdr_eol(h, n, i);
	while (end < n && mime_hdr_wsp(h[end])) /* folded */
		end = mime_hdr_eol(h, n, end);
	if (memchr(h + i, '\0', end - i) != NULL)
		return -1;
	colon = memchr(h + i, ':', mime_hdr_eol(h, n, i) - i);
	if (colon == NULL)
		return -1;
	ne = (size_t)(colon - h);
	while (ne > i && mime_hdr_wsp(h[ne - 1]))
		ne--;
	if (ne == i)
		return -1;
	ret->name = h + i;
	ret->name_len = ne - i;
	ret->value = colon + 1;
	ret->value_len = (size_t)(h + end - colon - 1);
	*pos = end;
	return 1;
}

/* The one field called name; see mime_hdr.h. */
int
mime_hdr_get(const char *h, size_t n, const char *name,
    const char **ret_v, size_t *ret_len)
{
	size_t pos = 0, len = strlen(name);
	struct mime_field f;
	int r, found = 0;

	while ((r = mime_hdr_next(h, n, &pos, &f)) == 1) {
		if (f.name_len != len || strncasecmp(f.name, name, len) != 0)
			continue;
		if (found++)
			return -1;
		*ret_v = f.value;
		*ret_len = f.value_len;
	}
	return r == -1 ? -1 : found;
}

/* Unfold and trim a raw value into the arena; see mime_hdr.h. */
char *
mime_hdr_unfold(struct arena *a, const char *v, size_t len)
{
	char *s = arena_alloc(a, len + 1);
	size_t i, o = 0;

	if (s == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		if (v[i] != '\r' && v[i] != '\n' &&
		    (o > 0 || !mime_hdr_wsp(v[i])))
			s[o++] = v[i];
	while (o > 0 && mime_hdr_wsp(s[o - 1]))
		o--;
	s[o] = '\0';
	return s;
}

/* Remove comments outside quoted strings; see mime_hdr.h. */
int
mime_hdr_uncomment(char *s)
{
	char *r = s, *w = s;
	int depth = 0, quoted = 0;

	for (; *r != '\0'; r++) {
		if (*r == '\\' && (quoted || depth > 0) && r[1] != '\0') {
			if (depth == 0)
				*w++ = *r;
			r++;
		} else if (depth == 0 && *r == '"') {
			quoted = !quoted;
		} else if (!quoted && (*r == '(' || (*r == ')' && depth > 0))) {
			depth += *r == '(' ? 1 : -1;
			continue;
		}
		if (depth == 0)
			*w++ = *r;
	}
	while (w > s && mime_hdr_wsp(w[-1]))
		w--;
	*w = '\0';
	for (r = s; mime_hdr_wsp(*r); r++)
		;
	memmove(s, r, strlen(r) + 1);
	return depth == 0 && !quoted ? 0 : -1;
}

/* Two hex digits at p as an octet other than 0; -1 otherwise. */
static int
mime_hdr_hex2(const char *p)
{
	int hi = codec_hexval((unsigned char)p[0]);
	int lo = hi < 0 ? -1 : codec_hexval((unsigned char)p[1]);

	return lo < 0 || hi + lo == 0 ? -1 : hi * 16 + lo;
}

/* Standard base64 (RFC 2045 6.8) of txt decoded in place; octets or -1. */
static int
mime_hdr_b64(char *txt)
{
	size_t n = strlen(txt);
	unsigned char *out;
	struct arena *a = arena_new(0);
	int rc = -1;

	if (a != NULL && codec_unbase64(a, txt, n, &out, &n) == 0 &&
	    memchr(out, '\0', n) == NULL) {
		memcpy(txt, out, n);
		rc = (int)n;
	}
	arena_free(a);
	return rc;
}

/* RFC 2047 4.2 "Q" text decoded to *w; -1 on a bad escape or NUL. */
static int
mime_hdr_q(const char *txt, char **w)
{
	const char *q;
	int c;

	for (q = txt; *q != '\0'; q++) {
		c = *q == '_' ? ' ' : (unsigned char)*q;
		if (*q == '=') {
			if ((c = mime_hdr_hex2(q + 1)) < 0)
				return -1;
			q += 2;
		}
		*(*w)++ = (char)c;
	}
	return 0;
}

/*
 * One encoded-word at p decoded to *w (never longer than the word):
 * characters consumed, 0 when p is no encoded-word, -1 when it is one we
 * cannot decode.
 */
static int
mime_hdr_ew(const char *p, char **w)
{
	char buf[MIME_HDR_MAX_EW + 1], *cs, *enc, *txt, *end, *q;
	size_t len = strcspn(p, " \t");
	int n;

	if (strncmp(p, "=?", 2) != 0)
		return 0;
	len = len < MIME_HDR_MAX_EW ? len : MIME_HDR_MAX_EW;
	memcpy(buf, p, len);
	buf[len] = '\0';
	cs = buf + 2;
	if ((enc = strchr(cs, '?')) == NULL || enc[1] == '\0' || enc[2] != '?' ||
	    (end = strstr(enc + 3, "?=")) == NULL)
		return 0;
	*enc = '\0';
	*end = '\0';
	txt = enc + 3;
	if ((q = strchr(cs, '*')) != NULL) /* RFC 2231 5: a language */
		*q = '\0';
	if (strcasecmp(cs, "utf-8") != 0 && strcasecmp(cs, "us-ascii") != 0)
		return -1;
	if (mime_hdr_lower(enc[1]) == 'b') {
		if ((n = mime_hdr_b64(txt)) < 0)
			return -1;
		memcpy(*w, txt, (size_t)n);
		*w += n;
	} else if (mime_hdr_lower(enc[1]) != 'q' || mime_hdr_q(txt, w) < 0) {
		return -1;
	}
	return (int)(end + 2 - buf);
}

/* Decode the encoded-words of an unstructured value; see mime_hdr.h. */
int
mime_hdr_rfc2047(char *s)
{
	char *r = s, *w = s, *blank;
	int n, after_ew = 0;

	while (*r != '\0') {
		blank = r;
		while (after_ew && mime_hdr_wsp(*r))
			r++;
		n = mime_hdr_ew(r, &w);
		if (n < 0)
			return -1;
		if (n == 0) {
			r = blank; /* no blanks between encoded-words */
			*w++ = *r++;
		} else {
			r += n;
		}
		after_ew = n > 0;
	}
	*w = '\0';
	return 0;
}

/* Decode an RFC 2231 extended value in place; see mime_hdr.h. */
int
mime_hdr_rfc2231(char *v, size_t *len)
{
	char *q1 = memchr(v, '\'', *len), *q2 = NULL, *r, *w = v;
	int c;

	if (q1 != NULL)
		q2 = memchr(q1 + 1, '\'', *len - (size_t)(q1 + 1 - v));
	if (q2 == NULL || (q1 != v && strncasecmp(v, "utf-8'", 6) != 0 &&
	    strncasecmp(v, "us-ascii'", 9) != 0))
		return -1;
	for (r = q2 + 1; r < v + *len; r++) {
		if (*r != '%') {
			*w++ = *r;
			continue;
		}
		if (r + 2 >= v + *len || (c = mime_hdr_hex2(r + 1)) < 0)
			return -1;
		*w++ = (char)c;
		r += 2;
	}
	*len = (size_t)(w - v);
	return 0;
}

/* Decode a cid: URL's id; see mime_hdr.h. */
char *
mime_cid_decode(struct arena *a, const char *enc)
{
	size_t n = strlen(enc), i, j = 0;
	char *out = arena_alloc(a, n + 1);
	int c;

	for (i = 0; out != NULL && i < n; i++) {
		c = (unsigned char)enc[i];
		if (c == '%') {
			if (n - i < 3 || (c = mime_hdr_hex2(enc + i + 1)) < 0)
				return NULL;
			i += 2;
		}
		out[j++] = (char)c;
	}
	if (out != NULL)
		out[j] = '\0';
	return out;
}

/* Does enc decode to id?  See mime_hdr.h. */
int
mime_cid_match(const char *enc, size_t len, const char *id)
{
	const char *end = enc + len;
	int c, eq = 1;

	while (enc < end) {
		c = (unsigned char)*enc++;
		if (c == '%') {
			if (end - enc < 2 || (c = mime_hdr_hex2(enc)) < 0)
				return -1;
			enc += 2;
		}
		if (eq && (unsigned char)*id == c && c != 0)
			id++;
		else
			eq = 0;
	}
	return eq && *id == '\0';
}

/* The cid: URL of a Content-ID; see mime_hdr.h. */
char *
mime_cid_url(struct arena *a, const char *id)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i, j = 4, n = id != NULL ? strlen(id) : 0;
	char *out = n > 0 && n <= MIME_CID_MAX ? arena_alloc(a, 4 + 3 * n + 1) :
	    NULL;
	unsigned char c;

	if (out == NULL)
		return NULL;
	memcpy(out, "cid:", 4);
	for (i = 0; i < n; i++) {
		c = (unsigned char)id[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~@!$&*+,;=:", c)) {
			out[j++] = (char)c;
			continue;
		}
		out[j++] = '%';
		out[j++] = hex[c >> 4];
		out[j++] = hex[c & 15];
	}
	out[j] = '\0';
	return out;
}
