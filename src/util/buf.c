#include "buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
buf_reserve(struct buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return -1;
	need = b->len + extra + 1;
	if (b->limit != 0 && need - 1 > b->limit)
		return -1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (p == NULL)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int
buf_append(struct buf *b, const void *p, size_t len)
{
	if (buf_reserve(b, len) == -1)
		return -1;
	if (len > 0)
		memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(b, (size_t)n) == -1)
		return -1;
	va_start(ap, fmt);
	(void)vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

/*
 * Length of the well-formed UTF-8 sequence at p (RFC 3629 4: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 when p does not
 * start one (a stray continuation byte, a lead byte without its
 * continuations -- a NUL ends the string first -- 0xc0, 0xc1, 0xf5-0xff).
 */
static size_t
buf_utf8_len(const unsigned char *p)
{
	unsigned c = p[0];
	size_t n, i;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return 0;
	n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (c == 0xe0)
		lo = 0xa0;      /* overlong */
	else if (c == 0xed)
		hi = 0x9f;      /* surrogates */
	else if (c == 0xf0)
		lo = 0x90;      /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;      /* above U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* The longest prefix of s of at most max bytes that ends on a character
 * boundary (see buf.h). */
size_t
buf_utf8_prefix(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t at = 0, n;

	while (at < max && p[at] != '\0') {
		n = buf_utf8_len(p + at);
		if (n == 0)
			n = 1;          /* an invalid byte is a character of its own */
		if (at + n > max)
			break;
		at += n;
	}
	return at;
}

/* JSON text is UTF-8 (RFC 8259 8.1): well-formed sequences are copied,
 * every byte that is not part of one becomes U+FFFD (Unicode 15, 3.9
 * "U+FFFD Substitution of Maximal Subparts" in its simplest form: one per
 * byte); control characters and DEL are escaped. */
int
buf_json_escape(struct buf *b, const char *s)
{
	const unsigned char *p;
	char esc[8];
	size_t n;

	for (p = (const unsigned char *)s; *p != '\0'; p += n) {
		const char *out = NULL;

		n = 1;
		switch (*p) {
		case '"': out = "\\\""; break;
		case '\\': out = "\\\\"; break;
		case '\n': out = "\\n"; break;
		case '\r': out = "\\r"; break;
		case '\t': out = "\\t"; break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				(void)snprintf(esc, sizeof(esc), "\\u%04x", *p);
				out = esc;
			} else if (*p >= 0x80 && (n = buf_utf8_len(p)) == 0) {
				n = 1;
				out = "\\ufffd";
			}
		}
		if (out != NULL ? buf_puts(b, out) : buf_append(b, p, n))
			return -1;
	}
	return 0;
}

int
buf_xml_escape(struct buf *b, const char *s)
{
	const char *p;

	for (p = s; *p != '\0'; p++) {
		const char *out = NULL;

		switch (*p) {
		case '&': out = "&amp;"; break;
		case '<': out = "&lt;"; break;
		case '>': out = "&gt;"; break;
		case '"': out = "&quot;"; break;
		case '\'': out = "&apos;"; break;
		default: break;
		}
		if (out != NULL ? buf_puts(b, out) : buf_append(b, p, 1))
			return -1;
	}
	return 0;
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
}

void
buf_free(struct buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}
