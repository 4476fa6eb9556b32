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

int
buf_json_escape(struct buf *b, const char *s)
{
	const unsigned char *p;
	char esc[8];

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		const char *out = NULL;

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
			}
		}
		if (out != NULL ? buf_puts(b, out) : buf_append(b, p, 1))
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
