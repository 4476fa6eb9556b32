/*
 * buf — a growable byte buffer on malloc, for data whose size is not known in
 * advance (request bodies, serialised XML, SQL).  Owned by whoever declared
 * the struct; release with buf_free().  `data` is always NUL-terminated after
 * a successful append so text can be used as a C string.
 */
#ifndef AS4GW_BUF_H
#define AS4GW_BUF_H

#include <stddef.h>

struct buf {
	char *data;
	size_t len, cap;
	size_t limit; /* 0 = unlimited; appends beyond it fail */
};

/* Append len bytes; 0 ok, -1 out of memory or over limit (buf unchanged). */
int buf_append(struct buf *b, const void *p, size_t len);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Append s with JSON string escaping (no surrounding quotes); the result
 * is always valid UTF-8: a byte of s that is not part of a well-formed
 * UTF-8 sequence is written as \ufffd (the replacement character). */
int buf_json_escape(struct buf *b, const char *s);
/* The length of the longest prefix of s (NUL-terminated) of at most max
 * bytes that does not end inside a UTF-8 character: where to cut s. */
size_t buf_utf8_prefix(const char *s, size_t max);
/* Append s with XML text/attribute escaping (& < > " '). */
int buf_xml_escape(struct buf *b, const char *s);
void buf_reset(struct buf *b);
/* Free memory; accepts NULL; leaves b empty and reusable. */
void buf_free(struct buf *b);

#endif
