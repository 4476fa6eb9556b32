/* codec — SHA-256, base64, hex and random identifiers on OpenSSL. */
#ifndef AS4GW_CODEC_H
#define AS4GW_CODEC_H

#include <stddef.h>

#include "arena.h"

#define CODEC_SHA256_LEN 32

/* Incremental SHA-256; the context is opaque and freed by codec_sha256_final. */
struct codec_sha256;
struct codec_sha256 *codec_sha256_new(void);
int codec_sha256_update(struct codec_sha256 *h, const void *p, size_t len);
/* Writes the digest and frees h (also on failure). Accepts NULL (returns -1). */
int codec_sha256_final(struct codec_sha256 *h, unsigned char out[CODEC_SHA256_LEN]);
/* One-shot digest; 0 ok, -1 error. */
int codec_sha256(const void *p, size_t len, unsigned char out[CODEC_SHA256_LEN]);

/* Value of the hex digit c (0-9, a-f, A-F), or -1 for anything else
 * (%-escapes RFC 3986 2.1, quoted-printable, DN #hex). */
int codec_hexval(int c);

/* Lower-case hex of len bytes into out (2*len+1 bytes). */
void codec_hex(const unsigned char *p, size_t len, char *out);

/* Base64 (RFC 4648, no line breaks) into the arena; NULL on failure. */
char *codec_base64(struct arena *a, const void *p, size_t len);
/* Decode base64, ignoring whitespace; -1 on invalid input. */
int codec_unbase64(struct arena *a, const char *s, size_t slen,
    unsigned char **ret, size_t *ret_len);

/*
 * codec_unbase64() in pieces for an input of any size (issue 14): the
 * decoded octets go to sink(arg, p, n) in pieces of at most 3/4 of
 * CODEC_B64_PIECE, never the whole.  Accepts and refuses exactly what
 * codec_unbase64() does and hands over the same octets (the same
 * EVP_DecodeBlock over 4-character groups, its trailing '-' trimming and
 * the padding rule included; only codec_unbase64's 2 GiB bound is not
 * there); after done(arg, p, n) the caller may
 * release [p, p + n) of its input (may be NULL).  -1 on invalid input
 * (sink may have had a prefix) or when sink returns -1.
 */
#define CODEC_B64_PIECE ((size_t)1 << 20)
int codec_unbase64_sink(const char *s, size_t slen,
    int (*sink)(void *arg, const unsigned char *p, size_t n),
    void (*done)(const void *p, size_t n), void *arg);

/* A random RFC 4122 version-4 UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx",
 * into out[37]; -1 if the random generator fails. */
int codec_uuid(char out[37]);

#endif
