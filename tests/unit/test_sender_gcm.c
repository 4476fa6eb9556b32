/* Unit tests for src/sender/sender_gcm.c (issue 14 item 5): a large part
 * encrypted in chunks into a spool file is IV || ciphertext || tag that
 * AES-128-GCM with the same key opens to the same octets (across chunk
 * boundaries and for the empty part), and a tampered last chunk fails the
 * tag. */
#include "sender/sender.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "spool/spool.h"
#include "testutil.h"

/* Open IV || ct || tag with key into out: 0 the tag verified, -1 not. */
static int
t_open(const unsigned char *key, const unsigned char *in, size_t n,
    unsigned char *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	size_t len = n - 28;
	int got = 0, fin = 0, rc = -1;

	if (c != NULL &&
	    EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1 &&
	    EVP_DecryptInit_ex(c, NULL, NULL, key, in) == 1 &&
	    EVP_DecryptUpdate(c, out, &got, in + 12, (int)len) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16,
	    (void *)(uintptr_t)(in + 12 + len)) == 1 &&
	    EVP_DecryptFinal_ex(c, out + got, &fin) == 1)
		rc = 0;
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* Encrypt len pseudo-random octets; open them again; tamper. */
static void
t_case(size_t len)
{
	char tmpl[] = "/tmp/as4gw-test-gcm-XXXXXX";
	const char *dir = mkdtemp(tmpl);
	unsigned char key[16] = "0123456789abcdef", *plain, *back, *copy;
	const unsigned char *ct = NULL;
	struct wss_part part = { .content_id = "p@x" };
	struct spool *sp = NULL;
	struct err err;
	size_t i, ct_len = 0;

	err_clear(&err);
	assert_non_null(dir);
	plain = malloc(len + 1);
	back = malloc(len + 1);
	assert_non_null(plain);
	assert_non_null(back);
	for (i = 0; i < len; i++)
		plain[i] = (unsigned char)(i * 2654435761u >> 13);
	part.data = plain;
	part.len = len;
	assert_int_equal(spool_new(dir, 0, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	assert_int_equal(sender_gcm_spool(sp, key, &part, &ct, &ct_len, &err),
	    0);
	assert_int_equal(ct_len, 12 + len + 16);
	assert_int_equal(t_open(key, ct, ct_len, back), 0);
	assert_memory_equal(back, plain, len);
	/* a flipped octet in the last chunk: the tag does not verify */
	copy = malloc(ct_len);
	assert_non_null(copy);
	memcpy(copy, ct, ct_len);
	copy[ct_len - 17] ^= 1;
	assert_int_equal(t_open(key, copy, ct_len, back), -1);
	free(copy);
	spool_free(sp);
	assert_int_equal(rmdir(dir), 0);  /* nothing left in the spool dir */
	free(plain);
	free(back);
}

static void
t_sizes(void **state)
{
	(void)state;
	t_case(1);
	t_case(SPOOL_CHUNK - 1);
	t_case(SPOOL_CHUNK);
	t_case(3 * SPOOL_CHUNK + 12345);
}

/* No spool directory: an error, nothing encrypted. */
static void
t_no_dir(void **state)
{
	unsigned char key[16] = { 0 }, data[4] = "abcd";
	const unsigned char *ct = NULL;
	struct wss_part part = { .content_id = "p@x", .data = data, .len = 4 };
	struct spool *sp = NULL;
	struct err err;
	size_t ct_len = 0;

	(void)state;
	err_clear(&err);
	assert_int_equal(spool_new("/nonexistent-as4gw-dir", 0, 0, &sp, &err),
	    0);
	assert_int_equal(sender_gcm_spool(sp, key, &part, &ct, &ct_len, &err),
	    -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_null(ct);
	spool_free(sp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sizes),
		cmocka_unit_test(t_no_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
