/*
 * sender_gcm.c — AES-128-GCM of a large attachment into a spool file, in
 * SPOOL_CHUNK pieces (issue 14 item 5): the same octets as
 * sender_encrypt.c's in-memory encryption (XML Encryption 1.1, 5.2.4: a
 * random 96-bit IV, then the ciphertext, then the 128-bit tag; eDelivery
 * AS4 1.15 aes128-gcm), but the plaintext is read in order with
 * spool_done() behind it and the ciphertext is written to a file of the
 * spool and mapped, so neither is ever resident whole.  Sender code:
 * linked into as4gw-client only.
 */
#include "sender.h"

#include <stdlib.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "../spool/spool.h"
#include "../wss/wss_int.h"

#define SENDER_GCM_IV 12   /* XML Encryption 1.1, 5.2.4 */
#define SENDER_GCM_TAG 16

/* Encrypt in[0..n) with c into f, a chunk at a time; buf has SPOOL_CHUNK
 * + a block of room. */
static int
sender_gcm_run(EVP_CIPHER_CTX *c, const unsigned char *in, size_t n,
    unsigned char *buf, struct spool_file *f, struct err *err)
{
	size_t off = 0, step, got;

	while (off < n) {
		step = n - off < SPOOL_CHUNK ? n - off : SPOOL_CHUNK;
		got = 0;
		if (wss_evp_update(c, buf, in + off, step, &got) < 0)
			return err_set(err, ERR_INTERNAL, NULL,
			    "could not encrypt the payloads");
		if (spool_write(f, buf, got, err) == -1)
			return -1;
		spool_done(in + off, step);
		off += step;
	}
	return 0;
}

/* IV || AES-128-GCM(key, part's data) || tag into a new file of sp,
 * mapped into *ret; see sender.h. */
int
sender_gcm_spool(struct spool *sp, const unsigned char *key,
    const struct wss_part *part, const unsigned char **ret, size_t *ret_len,
    struct err *err)
{
	const unsigned char *in = part->data;
	size_t n = part->len;
	unsigned char iv[SENDER_GCM_IV], tag[SENDER_GCM_TAG], *buf = NULL;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	struct spool_file *f = NULL;
	int fin = 0, rc = -1;

	if (c == NULL || (buf = malloc(SPOOL_CHUNK + 32)) == NULL ||
	    (n > 0 && in == NULL) || RAND_bytes(iv, sizeof(iv)) != 1 ||
	    EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, SENDER_GCM_IV,
	    NULL) != 1 || EVP_EncryptInit_ex(c, NULL, NULL, key, iv) != 1) {
		(void)err_set(err, ERR_INTERNAL, NULL,
		    "could not encrypt the payloads");
		goto out;
	}
	if (spool_file(sp, &f, err) == -1 ||
	    spool_write(f, iv, sizeof(iv), err) == -1 ||
	    sender_gcm_run(c, in, n, buf, f, err) == -1)
		goto out;
	/* GCM is a stream mode: Final writes nothing, the tag comes after */
	if (EVP_EncryptFinal_ex(c, buf, &fin) != 1 || fin != 0 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, SENDER_GCM_TAG,
	    tag) != 1) {
		(void)err_set(err, ERR_INTERNAL, NULL,
		    "could not encrypt the payloads");
		goto out;
	}
	if (spool_write(f, tag, sizeof(tag), err) == -1 ||
	    spool_map(f, ret, err) == -1)
		goto out;
	*ret_len = (size_t)spool_size(f);
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	free(buf);
	return rc;
}
