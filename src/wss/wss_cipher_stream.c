/*
 * wss_cipher_stream.c — block decryption of a large attachment (issue 14):
 * the same XML Encryption 1.1 (5.2) AES-GCM and AES-CBC as wss_cipher.c,
 * but the ciphertext is read in order in SPOOL_CHUNK pieces, released
 * behind the reader (spool_done), and the plaintext goes to a spool file
 * that is mapped only after the whole ciphertext decrypted and, for
 * AES-GCM, EVP_DecryptFinal verified the tag: nothing unverified is ever
 * handed out (the file of a failure is never mapped; it goes with the
 * request's spool).  Below the spool threshold wss_cipher_block() runs
 * as before.
 */
#include "wss_int.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "../spool/spool.h"
#include "../util/codec.h"

#define WSS_CS_GCM_IV 12          /* XML Encryption 1.1, 5.2.4 */
#define WSS_CS_GCM_TAG 16
#define WSS_CS_CBC_IV 16          /* XML Encryption 1.1, 5.2.2 */

/* One streamed decryption. */
struct wss_cs {
	EVP_CIPHER_CTX *c;
	struct spool_file *f;
	unsigned char *buf;         /* SPOOL_CHUNK + one block */
	unsigned char last;         /* the last plaintext octet (CBC padding) */
	struct wss_cipher_out *out;
};

/* Decrypt [in, in + n) piece by piece into the spool file, each piece of
 * ciphertext released behind. */
static int
wss_cs_update(struct wss_cs *s, const unsigned char *in, size_t n)
{
	size_t off = 0, step;
	int got;

	while (off < n) {
		step = n - off > SPOOL_CHUNK ? SPOOL_CHUNK : n - off;
		if (EVP_DecryptUpdate(s->c, s->buf, &got, in + off,
		    (int)step) != 1 || got < 0)
			return -1;
		if (spool_write(s->f, s->buf, (size_t)got, &s->out->err) < 0)
			return -1;
		if (got > 0)
			s->last = s->buf[got - 1];
		spool_done(in + off, step);
		off += step;
	}
	return 0;
}

/* AES-GCM: in = IV || ciphertext || tag; 0 when the tag verified. */
static int
wss_cs_gcm(struct wss_cs *s, const EVP_CIPHER *evp,
    const unsigned char *key, const struct wss_bytes *in)
{
	unsigned char tag[WSS_CS_GCM_TAG];
	size_t n = in->len - WSS_CS_GCM_IV - WSS_CS_GCM_TAG;
	int fin = 0;

	memcpy(tag, in->p + in->len - WSS_CS_GCM_TAG, sizeof(tag));
	if (EVP_DecryptInit_ex(s->c, evp, NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(s->c, EVP_CTRL_GCM_SET_IVLEN, WSS_CS_GCM_IV,
	    NULL) != 1 ||
	    EVP_DecryptInit_ex(s->c, NULL, NULL, key, in->p) != 1 ||
	    wss_cs_update(s, in->p + WSS_CS_GCM_IV, n) < 0 ||
	    EVP_CIPHER_CTX_ctrl(s->c, EVP_CTRL_GCM_SET_TAG, WSS_CS_GCM_TAG,
	    tag) != 1 ||
	    EVP_DecryptFinal_ex(s->c, s->buf, &fin) != 1 || fin != 0)
		return -1;
	s->out->len = n;
	return 0;
}

/* AES-CBC: in = IV || ciphertext, the last plaintext octet the padding
 * length (wss_cipher.c: a bad one is 1, with n - 16 octets). */
static int
wss_cs_cbc(struct wss_cs *s, const EVP_CIPHER *evp,
    const unsigned char *key, const struct wss_bytes *in)
{
	size_t n = in->len - WSS_CS_CBC_IV;
	int fin = 0, bad;

	if (n == 0 || n % WSS_CS_CBC_IV != 0 ||
	    EVP_DecryptInit_ex(s->c, evp, NULL, key, in->p) != 1 ||
	    EVP_CIPHER_CTX_set_padding(s->c, 0) != 1 ||
	    wss_cs_update(s, in->p + WSS_CS_CBC_IV, n) < 0 ||
	    EVP_DecryptFinal_ex(s->c, s->buf, &fin) != 1 || fin != 0 ||
	    spool_size(s->f) != n)
		return -1;
	bad = s->last == 0 || s->last > WSS_CS_CBC_IV;
	s->out->len = n - (bad ? WSS_CS_CBC_IV : s->last);
	return bad;
}

/* The streamed decryption of wss_cipher_run(): key and lengths checked. */
static int
wss_cs_run(struct wss_cs *s, const EVP_CIPHER *evp, int gcm,
    const struct wss_bytes *key, const struct wss_bytes *in)
{
	const unsigned char *map = NULL;
	int rc;

	s->out->why = "could not spool the plaintext";
	if ((s->buf = malloc(SPOOL_CHUNK + 2 * WSS_CS_CBC_IV)) == NULL ||
	    (s->c = EVP_CIPHER_CTX_new()) == NULL) {
		(void)err_set(&s->out->err, ERR_INTERNAL, NULL, "out of memory");
		return -1;
	}
	if (spool_file(spool_bound(), &s->f, &s->out->err) < 0)
		return -1;
	s->out->why = gcm ? "AES-GCM tag mismatch" : "AES-CBC ciphertext not "
	    "in whole blocks";
	rc = gcm ? wss_cs_gcm(s, evp, key->p, in) : wss_cs_cbc(s, evp, key->p,
	    in);
	if (rc < 0 && s->out->err.kind != ERR_NONE)
		s->out->why = "could not spool the plaintext";
	if (rc == 1)
		s->out->why = "AES-CBC padding invalid";
	/* verified (or AES-CBC, which verifies nothing): now it may be seen */
	if (rc >= 0 && spool_map(s->f, &map, &s->out->err) < 0) {
		s->out->why = "could not spool the plaintext";
		rc = -1;
	}
	if (rc >= 0) {
		s->out->p = (unsigned char *)(uintptr_t)map;
		s->out->spooled = 1;
	}
	return rc;
}

/* See wss_int.h. */
int
wss_cipher_run(struct arena *a, const char *alg_uri,
    const struct wss_bytes *key, const struct wss_bytes *in,
    struct wss_cipher_out *out)
{
	struct wss_cs s;
	const EVP_CIPHER *evp;
	int gcm = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	if (!spool_want(spool_bound(), in->len))
		return wss_cipher_block(a, alg_uri, key->p, key->len, in->p,
		    in->len, &out->p, &out->len, &out->why);
	memset(&s, 0, sizeof(s));
	s.out = out;
	evp = wss_cipher_evp(alg_uri, &gcm);
	out->why = "unknown block cipher or key length";
	if (evp == NULL || key->len != wss_cipher_key_len(alg_uri) ||
	    in->p == NULL)
		goto out;
	out->why = "ciphertext too short";
	if (in->len < (gcm ? WSS_CS_GCM_IV + WSS_CS_GCM_TAG : WSS_CS_CBC_IV))
		goto out;
	rc = wss_cs_run(&s, evp, gcm, key, in);
out:
	if (s.buf != NULL)
		OPENSSL_cleanse(s.buf, SPOOL_CHUNK + 2 * WSS_CS_CBC_IV);
	free(s.buf);
	EVP_CIPHER_CTX_free(s.c);
	return rc;
}

/* codec_unbase64_sink() into a spool file. */
static int
wss_cs_sink(void *arg, const unsigned char *p, size_t n)
{
	struct wss_cs *s = arg;

	return spool_write(s->f, p, n, &s->out->err);
}

/* See wss_int.h. */
int
wss_cipher_unbase64(struct arena *a, const struct wss_bytes *in,
    struct wss_cipher_out *out)
{
	struct wss_cs s;
	const unsigned char *map = NULL;

	memset(out, 0, sizeof(*out));
	if (!spool_want(spool_bound(), in->len))
		return codec_unbase64(a, (const char *)in->p, in->len, &out->p,
		    &out->len);
	memset(&s, 0, sizeof(s));
	s.out = out;
	if (spool_file(spool_bound(), &s.f, &out->err) < 0 ||
	    codec_unbase64_sink((const char *)in->p, in->len, wss_cs_sink,
	    spool_done, &s) < 0 ||
	    spool_map(s.f, &map, &out->err) < 0)
		return -1;
	out->p = (unsigned char *)(uintptr_t)map;
	out->len = (size_t)spool_size(s.f);
	out->spooled = 1;
	return 0;
}
