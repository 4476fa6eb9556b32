#include "codec.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

struct codec_sha256 {
	EVP_MD_CTX *md;
};

struct codec_sha256 *
codec_sha256_new(void)
{
	struct codec_sha256 *h = OPENSSL_zalloc(sizeof(*h));

	if (h == NULL)
		return NULL;
	h->md = EVP_MD_CTX_new();
	if (h->md == NULL || EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(h->md);
		OPENSSL_free(h);
		return NULL;
	}
	return h;
}

int
codec_sha256_update(struct codec_sha256 *h, const void *p, size_t len)
{
	if (h == NULL)
		return -1;
	return EVP_DigestUpdate(h->md, p, len) == 1 ? 0 : -1;
}

int
codec_sha256_final(struct codec_sha256 *h, unsigned char out[CODEC_SHA256_LEN])
{
	unsigned int n = 0;
	int rc;

	if (h == NULL)
		return -1;
	rc = EVP_DigestFinal_ex(h->md, out, &n) == 1 && n == CODEC_SHA256_LEN ? 0 : -1;
	EVP_MD_CTX_free(h->md);
	OPENSSL_free(h);
	return rc;
}

int
codec_sha256(const void *p, size_t len, unsigned char out[CODEC_SHA256_LEN])
{
	unsigned int n = 0;

	return EVP_Digest(p, len, out, &n, EVP_sha256(), NULL) == 1 ? 0 : -1;
}

int
codec_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void
codec_hex(const unsigned char *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

char *
codec_base64(struct arena *a, const void *p, size_t len)
{
	size_t outlen;
	char *out;

	if (len > (size_t)0x7fffffff / 4 * 3 - 3)
		return NULL;
	outlen = 4 * ((len + 2) / 3);
	out = arena_alloc(a, outlen + 1);
	if (out == NULL)
		return NULL;
	if (EVP_EncodeBlock((unsigned char *)out, p, (int)len) != (int)outlen)
		return NULL;
	return out;
}

int
codec_unbase64(struct arena *a, const char *s, size_t slen,
    unsigned char **ret, size_t *ret_len)
{
	char *clean;
	unsigned char *out;
	size_t n = 0, i, pad = 0;
	int got;

	clean = arena_alloc(a, slen + 1);
	if (clean == NULL)
		return -1;
	for (i = 0; i < slen; i++)
		if (!isspace((unsigned char)s[i]))
			clean[n++] = s[i];
	if (n % 4 != 0 || n > 0x7fffffff)
		return -1;
	out = arena_alloc(a, n / 4 * 3 + 1);
	if (out == NULL)
		return -1;
	if (n == 0) {
		*ret = out;
		*ret_len = 0;
		return 0;
	}
	got = EVP_DecodeBlock(out, (unsigned char *)clean, (int)n);
	if (got < 0)
		return -1;
	if (clean[n - 1] == '=')
		pad++;
	if (clean[n - 2] == '=')
		pad++;
	*ret = out;
	*ret_len = (size_t)got - pad;
	return 0;
}

int
codec_uuid(char out[37])
{
	unsigned char r[16];

	if (RAND_bytes(r, sizeof(r)) != 1)
		return -1;
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40);
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80);
	(void)snprintf(out, 37,
	    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	    r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
	    r[11], r[12], r[13], r[14], r[15]);
	return 0;
}

/* codec_unbase64_sink()'s state: clean characters not yet decoded. */
struct codec_b64 {
	char *buf;                   /* CODEC_B64_PIECE clean characters */
	unsigned char *out;          /* their decoding */
	size_t n;
	size_t total, dashes;        /* clean characters; '-' held back */
	char last[2];                /* the last two clean characters */
};

/* Decode and hand over the whole groups in b->buf (a multiple of 4 that
 * EVP_DecodeBlock must decode whole: no trimming inside the input). */
static int
codec_b64_flush(struct codec_b64 *b,
    int (*sink)(void *, const unsigned char *, size_t), void *arg, int fin)
{
	int got;

	if (b->n == 0)
		return 0;
	got = EVP_DecodeBlock(b->out, (unsigned char *)b->buf, (int)b->n);
	if (got < 0 || (!fin && (size_t)got != b->n / 4 * 3))
		return -1;
	if (fin) {
		got -= (b->last[1] == '=') + (b->last[0] == '=');
		if (got < 0)
			return -1;
	}
	b->n = 0;
	return sink(arg, b->out, (size_t)got);
}

/* One clean character: a '-' is held back (EVP_DecodeBlock trims them at
 * the end of its input; anywhere else they make it fail). */
static int
codec_b64_put(struct codec_b64 *b, char c,
    int (*sink)(void *, const unsigned char *, size_t), void *arg)
{
	b->total++;
	b->last[0] = b->last[1];
	b->last[1] = c;
	if (c == '-') {
		b->dashes++;
		return 0;
	}
	if (b->dashes != 0)
		return -1;
	if (b->n == CODEC_B64_PIECE && codec_b64_flush(b, sink, arg, 0) < 0)
		return -1;
	b->buf[b->n++] = c;
	return 0;
}

/* See codec.h; codec_unbase64() is the reference it must match. */
int
codec_unbase64_sink(const char *s, size_t slen,
    int (*sink)(void *arg, const unsigned char *p, size_t n),
    void (*done)(const void *p, size_t n), void *arg)
{
	struct codec_b64 b;
	size_t i, from = 0;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	b.buf = OPENSSL_malloc(CODEC_B64_PIECE);
	b.out = OPENSSL_malloc(CODEC_B64_PIECE / 4 * 3 + 3);
	if (b.buf == NULL || b.out == NULL)
		goto out;
	for (i = 0; i < slen; i++) {
		if (!isspace((unsigned char)s[i]) &&
		    codec_b64_put(&b, s[i], sink, arg) < 0)
			goto out;
		if (done != NULL && i + 1 - from >= CODEC_B64_PIECE) {
			done(s + from, i + 1 - from);
			from = i + 1;
		}
	}
	/* codec_unbase64: the clean length, then what EVP_DecodeBlock leaves
	 * after trimming the '-' (it stops at 3 characters) */
	if (b.total % 4 != 0 ||
	    (b.dashes != 0 && b.total - b.dashes < 4) ||
	    codec_b64_flush(&b, sink, arg, 1) < 0)
		goto out;
	rc = 0;
out:
	if (done != NULL && slen > from)
		done(s + from, slen - from);
	OPENSSL_free(b.buf);
	OPENSSL_free(b.out);
	return rc;
}
