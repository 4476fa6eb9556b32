/*
 * wss_cipher.c — block decryption per XML Encryption 1.1 (5.2): AES-GCM
 * (IV || ciphertext || tag) and AES-CBC (IV || ciphertext, the last
 * plaintext octet the padding length) on OpenSSL EVP, for wss_decrypt.c;
 * the EVP update loop is shared with the encryption in src/sender/.
 * Policy is the caller's business; so is what to do with a bad CBC
 * padding (wss_decrypt.c answers it only after the signature was checked:
 * a padding oracle otherwise, issue 10 item 6).
 */
#include "wss_int.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "../xml/xml.h"

#define WSS_CIPHER_XENC11 "http://www.w3.org/2009/xmlenc11#"
#define WSS_CIPHER_GCM_IV 12         /* XML Encryption 1.1, 5.2.4 */
#define WSS_CIPHER_GCM_TAG 16
#define WSS_CIPHER_CBC_IV 16         /* XML Encryption 1.1, 5.2.2 */
#define WSS_CIPHER_CHUNK (1u << 30)  /* EVP lengths are int */

/* A block cipher we can run, by its XML Encryption URI. */
struct wss_cipher {
	const char *uri;
	const EVP_CIPHER *(*evp)(void);
	size_t key_len;
	int gcm;
};

static const struct wss_cipher wss_ciphers[] = {
	{ WSS_CIPHER_XENC11 "aes128-gcm", EVP_aes_128_gcm, 16, 1 },
	{ WSS_CIPHER_XENC11 "aes192-gcm", EVP_aes_192_gcm, 24, 1 },
	{ WSS_CIPHER_XENC11 "aes256-gcm", EVP_aes_256_gcm, 32, 1 },
	{ NS_XENC "aes128-cbc", EVP_aes_128_cbc, 16, 0 },
	{ NS_XENC "aes192-cbc", EVP_aes_192_cbc, 24, 0 },
	{ NS_XENC "aes256-cbc", EVP_aes_256_cbc, 32, 0 },
};

#define WSS_CIPHER_N (sizeof(wss_ciphers) / sizeof(wss_ciphers[0]))

/* The cipher for an XML Encryption block algorithm URI, or NULL. */
static const struct wss_cipher *
wss_cipher_of(const char *uri)
{
	size_t i;

	for (i = 0; uri != NULL && i < WSS_CIPHER_N; i++)
		if (strcmp(wss_ciphers[i].uri, uri) == 0)
			return &wss_ciphers[i];
	return NULL;
}

/* EVP_CipherUpdate over any length (wss_int.h). */
int
wss_evp_update(EVP_CIPHER_CTX *c, unsigned char *out,
    const unsigned char *in, size_t n, size_t *ret_n)
{
	size_t done = 0, total = 0, step;
	int got;

	while (done < n) {
		step = n - done > WSS_CIPHER_CHUNK ? WSS_CIPHER_CHUNK : n - done;
		if (EVP_CipherUpdate(c, out + total, &got, in + done,
		    (int)step) != 1 || got < 0)
			return -1;
		done += step;
		total += (size_t)got;
	}
	*ret_n = total;
	return 0;
}

/* AES-GCM: in = IV || ciphertext || tag; plaintext into out. */
static int
wss_cipher_gcm(EVP_CIPHER_CTX *c, const struct wss_cipher *ci,
    const unsigned char *key, const unsigned char *in, size_t in_len,
    unsigned char *out, size_t *ret_len)
{
	unsigned char tag[WSS_CIPHER_GCM_TAG];
	size_t n = in_len - WSS_CIPHER_GCM_IV - WSS_CIPHER_GCM_TAG, got = 0;
	int fin = 0;

	memcpy(tag, in + in_len - WSS_CIPHER_GCM_TAG, sizeof(tag));
	if (EVP_DecryptInit_ex(c, ci->evp(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, WSS_CIPHER_GCM_IV,
	    NULL) != 1 ||
	    EVP_DecryptInit_ex(c, NULL, NULL, key, in) != 1 ||
	    wss_evp_update(c, out, in + WSS_CIPHER_GCM_IV, n, &got) < 0 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, WSS_CIPHER_GCM_TAG,
	    tag) != 1 ||
	    EVP_DecryptFinal_ex(c, out + got, &fin) != 1 || got != n)
		return -1;
	*ret_len = n;
	return 0;
}

/* AES-CBC: in = IV || ciphertext; the last plaintext octet is the padding
 * length (1..16), the other padding octets are arbitrary (XML Encryption
 * 1.1, 5.2).  A bad padding length still yields n - 16 octets in
 * *ret_len (1: reported, the caller decides). */
static int
wss_cipher_cbc(EVP_CIPHER_CTX *c, const struct wss_cipher *ci,
    const unsigned char *key, const unsigned char *in, size_t in_len,
    unsigned char *out, size_t *ret_len)
{
	size_t n = in_len - WSS_CIPHER_CBC_IV, got = 0;
	int fin = 0, bad;
	unsigned pad;

	if (n == 0 || n % WSS_CIPHER_CBC_IV != 0 ||
	    EVP_DecryptInit_ex(c, ci->evp(), NULL, key, in) != 1 ||
	    EVP_CIPHER_CTX_set_padding(c, 0) != 1 ||
	    wss_evp_update(c, out, in + WSS_CIPHER_CBC_IV, n, &got) < 0 ||
	    EVP_DecryptFinal_ex(c, out + got, &fin) != 1 || got != n)
		return -1;
	pad = out[n - 1];
	bad = pad == 0 || pad > WSS_CIPHER_CBC_IV;
	*ret_len = n - (bad ? WSS_CIPHER_CBC_IV : pad);
	return bad;
}

/* See wss_int.h. */
int
wss_cipher_block(struct arena *a, const char *alg_uri, const unsigned char *key,
    size_t key_len, const unsigned char *in, size_t in_len,
    unsigned char **ret, size_t *ret_len, const char **ret_why)
{
	const struct wss_cipher *ci = wss_cipher_of(alg_uri);
	EVP_CIPHER_CTX *c = NULL;
	unsigned char *out = NULL;
	size_t min, n = 0;
	int rc = -1;

	*ret_why = "unknown block cipher or key length";
	if (ci == NULL || key_len != ci->key_len || in == NULL)
		goto out;
	min = ci->gcm ? WSS_CIPHER_GCM_IV + WSS_CIPHER_GCM_TAG : WSS_CIPHER_CBC_IV;
	*ret_why = "ciphertext too short";
	if (in_len < min || (out = arena_alloc(a, in_len)) == NULL ||
	    (c = EVP_CIPHER_CTX_new()) == NULL)
		goto out;
	*ret_why = ci->gcm ? "AES-GCM tag mismatch" : "AES-CBC ciphertext not "
	    "in whole blocks";
	rc = ci->gcm ? wss_cipher_gcm(c, ci, key, in, in_len, out, &n) :
	    wss_cipher_cbc(c, ci, key, in, in_len, out, &n);
	if (rc == 1)
		*ret_why = "AES-CBC padding invalid";
	if (rc >= 0) {
		*ret = out;
		*ret_len = n;
	}
out:
	if (rc < 0 && out != NULL)
		OPENSSL_cleanse(out, in_len); /* no unverified plaintext */
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* See wss_int.h. */
int
wss_decrypt_cipher(struct arena *a, const char *alg_uri,
    const unsigned char *key, size_t key_len, const unsigned char *in,
    size_t in_len, unsigned char **ret, size_t *ret_len)
{
	unsigned char *out = NULL;
	const char *why;
	size_t n = 0;
	int rc = wss_cipher_block(a, alg_uri, key, key_len, in, in_len, &out, &n,
	    &why);

	if (rc == 1)
		OPENSSL_cleanse(out, n);
	if (rc != 0)
		return -1;
	*ret = out;
	*ret_len = n;
	return 0;
}


/* See wss_int.h. */
size_t
wss_cipher_key_len(const char *uri)
{
	const struct wss_cipher *ci = wss_cipher_of(uri);

	return ci != NULL ? ci->key_len : 0;
}

/* See wss_int.h. */
const EVP_CIPHER *
wss_cipher_evp(const char *uri, int *ret_gcm)
{
	const struct wss_cipher *ci = wss_cipher_of(uri);

	*ret_gcm = ci != NULL && ci->gcm;
	return ci != NULL ? ci->evp() : NULL;
}
