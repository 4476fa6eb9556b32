/*
 * Unit tests for src/wss/wss_cipher_stream.c (issue 14): a large
 * attachment decrypted in SPOOL_CHUNK pieces into a spool file gives the
 * octets wss_cipher_block() gives in memory, for AES-GCM and AES-CBC and
 * sizes around the chunk; a GCM tag failure in the last chunk hands out
 * nothing; the chunked base64 decoder of Attachment-Complete accepts and
 * refuses exactly what codec_unbase64() does.
 */
#include "wss/wss_int.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "spool/spool.h"
#include "util/codec.h"
#include "testspool.h"
#include "testutil.h"

#define GCM128 "http://www.w3.org/2009/xmlenc11#aes128-gcm"
#define GCM256 "http://www.w3.org/2009/xmlenc11#aes256-gcm"
#define CBC128 "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
#define CBC256 "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
#define CH SPOOL_CHUNK


/* A spool in a fresh directory, threshold 0 (everything spools), bound. */
static struct spool *
t_spool(void)
{
	struct spool *sp = NULL;
	struct err err;

	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	return sp;
}

/* XML Encryption 1.1 5.2 ciphertext of plain[0..n): GCM IV || c || tag,
 * CBC IV || c with the XML Encryption padding (last octet its length). */
static unsigned char *
t_encrypt(const char *alg, const unsigned char *key, const unsigned char *plain,
    size_t n, size_t *ret_len)
{
	int gcm = 0, got = 0, fin = 0;
	const EVP_CIPHER *evp = wss_cipher_evp(alg, &gcm);
	size_t iv = gcm ? 12 : 16, pad = gcm ? 0 : 16 - n % 16, cap;
	unsigned char *out, *in;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	cap = iv + n + pad + 16;
	out = malloc(cap);
	in = malloc(n + pad + 1);
	assert_non_null(out);
	assert_non_null(in);
	if (n > 0)
		memcpy(in, plain, n);
	memset(in + n, (int)pad, pad);
	assert_int_equal(RAND_bytes(out, (int)iv), 1);
	assert_int_equal(EVP_EncryptInit_ex(c, evp, NULL, key, out), 1);
	assert_int_equal(EVP_CIPHER_CTX_set_padding(c, 0), 1);
	assert_int_equal(EVP_EncryptUpdate(c, out + iv, &got, in,
	    (int)(n + pad)), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, out + iv + got, &fin), 1);
	*ret_len = iv + (size_t)got + (size_t)fin;
	if (gcm) {
		assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16,
		    out + *ret_len), 1);
		*ret_len += 16;
	}
	EVP_CIPHER_CTX_free(c);
	free(in);
	return out;
}

/* Streamed and in-memory decryption of ct agree: return, why, octets. */
static void
t_same(struct arena *a, struct spool *sp, const char *alg,
    const unsigned char *key, const unsigned char *ct, size_t ct_len,
    int want_rc)
{
	struct wss_bytes k = { key, wss_cipher_key_len(alg) }, in;
	struct wss_cipher_out o;
	unsigned char *mem = NULL;
	size_t mem_len = 0;
	const char *why = NULL;
	int rc;

	rc = wss_cipher_block(a, alg, key, k.len, ct, ct_len, &mem, &mem_len,
	    &why);
	assert_int_equal(rc, want_rc);
	in.p = testspool_mapped(sp, ct, ct_len);
	in.len = ct_len;
	assert_int_equal(wss_cipher_run(a, alg, &k, &in, &o), want_rc);
	assert_string_equal(o.why, why);
	assert_int_equal(o.err.kind, ERR_NONE);
	if (want_rc < 0) {
		assert_null(o.p);            /* nothing unverified handed out */
		return;
	}
	assert_int_equal(o.spooled, 1);
	assert_int_equal(o.len, mem_len);
	assert_memory_equal(o.p, mem, mem_len);
}

/* GCM and CBC at sizes around the chunk: byte-identical output. */
static void
test_sizes(void **state)
{
	static const char *const algs[] = { GCM128, GCM256, CBC128, CBC256 };
	static const size_t sizes[] = { 0, 1, CH - 1, CH, CH + 1, 3 * CH + 5 };
	struct arena *a = arena_new(0);
	struct spool *sp = t_spool();
	unsigned char key[32], *plain = malloc(3 * CH + 5), *ct;
	size_t i, j, ct_len;

	(void)state;
	assert_non_null(plain);
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	assert_int_equal(RAND_bytes(plain, (int)(3 * CH + 5)), 1);
	for (i = 0; i < sizeof(algs) / sizeof(algs[0]); i++) {
		for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			ct = t_encrypt(algs[i], key, plain, sizes[j], &ct_len);
			t_same(a, sp, algs[i], key, ct, ct_len, 0);
			free(ct);
		}
	}
	free(plain);
	spool_free(sp);
	arena_free(a);
}

/* A GCM tag failure at the end (the tag, or the last chunk's
 * ciphertext): -1 "AES-GCM tag mismatch", nothing handed out; a short
 * ciphertext and a wrong key length as wss_cipher_block(). */
static void
test_gcm_tag_last_chunk(void **state)
{
	struct arena *a = arena_new(0);
	struct spool *sp = t_spool();
	unsigned char key[16], *plain = calloc(1, 2 * CH + 7), *ct;
	struct wss_bytes k = { key, 15 }, in;
	struct wss_cipher_out o;
	size_t ct_len;

	(void)state;
	assert_non_null(plain);
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	ct = t_encrypt(GCM128, key, plain, 2 * CH + 7, &ct_len);
	ct[ct_len - 1] ^= 1;                     /* the last tag byte */
	t_same(a, sp, GCM128, key, ct, ct_len, -1);
	ct[ct_len - 1] ^= 1;
	ct[ct_len - 17] ^= 0x80;                 /* the last ciphertext byte */
	t_same(a, sp, GCM128, key, ct, ct_len, -1);
	t_same(a, sp, GCM128, key, ct, 27, -1);  /* IV + tag - 1 */
	in.p = ct;
	in.len = ct_len;
	assert_int_equal(wss_cipher_run(a, GCM128, &k, &in, &o), -1);
	assert_string_equal(o.why, "unknown block cipher or key length");
	assert_null(o.p);
	free(ct);
	free(plain);
	spool_free(sp);
	arena_free(a);
}

/* CBC: a bad padding (1) and not whole blocks (-1) as in memory. */
static void
test_cbc_padding(void **state)
{
	struct arena *a = arena_new(0);
	struct spool *sp = t_spool();
	unsigned char key[16], *plain = malloc(CH + 32), *ct, *bad;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	size_t ct_len = 16 + CH + 16;
	int got = 0;

	(void)state;
	assert_non_null(plain);
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	assert_int_equal(RAND_bytes(plain, (int)(CH + 16)), 1);
	plain[CH + 15] = 0;                      /* padding length 0: invalid */
	bad = malloc(ct_len);
	assert_non_null(bad);
	assert_int_equal(RAND_bytes(bad, 16), 1);
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_cbc(), NULL, key,
	    bad), 1);
	assert_int_equal(EVP_CIPHER_CTX_set_padding(c, 0), 1);
	assert_int_equal(EVP_EncryptUpdate(c, bad + 16, &got, plain,
	    (int)(CH + 16)), 1);
	EVP_CIPHER_CTX_free(c);
	t_same(a, sp, CBC128, key, bad, ct_len, 1);
	t_same(a, sp, CBC128, key, bad, ct_len - 3, -1);
	ct = t_encrypt(CBC128, key, plain, 0, &ct_len);
	t_same(a, sp, CBC128, key, ct, 16, -1);  /* IV only */
	free(ct);
	free(bad);
	free(plain);
	spool_free(sp);
	arena_free(a);
}

/* The chunked base64 decoder against codec_unbase64() on one input. */
static void
t_b64(struct arena *a, const char *s, size_t n)
{
	struct wss_bytes in = { (const unsigned char *)s, n };
	struct wss_cipher_out o;
	unsigned char *ref = NULL;
	size_t ref_len = 0;
	int rc = codec_unbase64(a, s, n, &ref, &ref_len);

	assert_int_equal(wss_cipher_unbase64(a, &in, &o), rc);
	if (rc == 0) {
		assert_int_equal(o.spooled, 1);
		assert_int_equal(o.len, ref_len);
		assert_memory_equal(o.p, ref, ref_len);
	}
}

/* Whitespace, padding, '=' inside, trailing and inner '-', bad characters,
 * lengths not a multiple of 4; and a large input over piece boundaries
 * (line breaks every 76 characters) with a defect placed near the end. */
static void
test_unbase64(void **state)
{
	static const char *const cases[] = {
		"", " \r\n", "QQ==", "QUE=", "QUFB", " Q U F B \n", "QUF",
		"QQ=", "QQ==QUFB", "QUFB----", "QUE=----", "QUE=-", "----",
		"QU--", "QUFB--QUFB", "QUFB-", "QU==----", "Q===", "QUFB====",
		"QUFB*AAA", "QUFB\tQUFB\n", "QUFBQQ==\n\n", "=QUF",
	};
	struct arena *a = arena_new(0);
	struct spool *sp = t_spool();
	size_t n = 3 * CODEC_B64_PIECE + 1000, raw = n / 77 * 57, i, len = 0;
	unsigned char *bin = malloc(raw);
	char *big = malloc(n + 64), *enc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		t_b64(a, cases[i], strlen(cases[i]));
	assert_non_null(bin);
	assert_non_null(big);
	assert_int_equal(RAND_bytes(bin, (int)raw), 1);
	for (i = 0; i + 57 <= raw; i += 57) {
		enc = codec_base64(a, bin + i, 57);
		memcpy(big + len, enc, 76);
		big[len + 76] = '\n';
		len += 77;
	}
	t_b64(a, big, len);
	memcpy(big + len, "QUE=", 4);
	t_b64(a, big, len + 4);
	memcpy(big + len + 4, "----", 4);
	t_b64(a, big, len + 8);              /* trailing '-' trimmed */
	big[len - 2] = '-';
	t_b64(a, big, len);                  /* '-' inside: refused */
	big[len - 2] = '=';
	t_b64(a, big, len);                  /* '=' inside a group */
	big[CODEC_B64_PIECE + 3] = '*';
	t_b64(a, big, len);
	free(big);
	free(bin);
	spool_free(sp);
	arena_free(a);
}

/* Below the threshold (or no spool bound) nothing spools. */
static void
test_threshold(void **state)
{
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	unsigned char key[16], plain[100], *ct;
	struct wss_bytes k = { key, 16 }, in;
	struct wss_cipher_out o;
	struct err err;
	size_t ct_len;

	(void)state;
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	assert_int_equal(RAND_bytes(plain, sizeof(plain)), 1);
	ct = t_encrypt(GCM128, key, plain, sizeof(plain), &ct_len);
	in.p = ct;
	in.len = ct_len;
	(void)spool_bind(NULL);
	assert_int_equal(wss_cipher_run(a, GCM128, &k, &in, &o), 0);
	assert_int_equal(o.spooled, 0);
	assert_memory_equal(o.p, plain, sizeof(plain));
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, 0, ct_len + 1, &sp, &err), 0);
	(void)spool_bind(sp);
	assert_int_equal(wss_cipher_run(a, GCM128, &k, &in, &o), 0);
	assert_int_equal(o.spooled, 0);
	in.len = 0;
	assert_int_equal(wss_cipher_unbase64(a, &in, &o), 0);
	assert_int_equal(o.spooled, 0);
	free(ct);
	spool_free(sp);
	arena_free(a);
}

/* A spool budget too small for the plaintext: the spool's error (413
 * here, ENOSPC would be ERR_STORE), nothing handed out. */
static void
test_spool_full(void **state)
{
	struct arena *a = arena_new(0);
	struct spool *sp = NULL;
	unsigned char key[16], *plain = calloc(1, CH), *ct;
	struct wss_bytes k = { key, 16 }, in;
	struct wss_cipher_out o;
	struct err err;
	size_t ct_len;

	(void)state;
	assert_non_null(plain);
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	ct = t_encrypt(GCM128, key, plain, CH, &ct_len);
	err_clear(&err);
	assert_int_equal(spool_new(testspool_dir, CH / 2, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	in.p = ct;
	in.len = ct_len;
	assert_int_equal(wss_cipher_run(a, GCM128, &k, &in, &o), -1);
	assert_int_equal(o.err.kind, ERR_HTTP);
	assert_string_equal(o.why, "could not spool the plaintext");
	assert_null(o.p);
	free(ct);
	free(plain);
	spool_free(sp);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_gcm_tag_last_chunk),
		cmocka_unit_test(test_cbc_padding),
		cmocka_unit_test(test_unbase64),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_spool_full),
	};

	return cmocka_run_group_tests(tests, testspool_setup,
	    testspool_teardown);
}
