/*
 * wss_kdf.c — the symmetric steps of key agreement (XML Encryption 1.1,
 * 5.4 / 5.6): the key derivation functions that turn a shared secret into
 * a key-encryption key — HKDF (RFC 5869; RFC 9231 2.9 names it for XML as
 * http://www.w3.org/2021/04/xmldsig-more#hkdf) and ConcatKDF (NIST SP
 * 800-56A rev. 3, 5.8.2.1.1, the one-step KDF; XML Encryption 1.1, 5.4.1)
 * — and AES key wrap (RFC 3394; XML Encryption 1.1, 5.7.2 kw-aes128/192/
 * 256) in both directions.  Plain OpenSSL 3 EVP, no xmlsec; no policy and
 * no XML here (wss_agree.c parses, sender/sender_agree.c builds).  Every
 * function fails with -1 and no reason: callers give the one decryption
 * failure answer.
 */
#include "wss_int.h"

#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

/* RFC 3394 2.2.3: the wrapped key is 8 octets longer than the key. */
#define WSS_KDF_WRAP_IV 8

/* The digest behind an enum wss_alg digest bit (WSS_DIG_*), or NULL. */
const EVP_MD *
wss_kdf_md(unsigned dig)
{
	switch (dig) {
	case WSS_DIG_SHA256: return EVP_sha256();
	case WSS_DIG_SHA384: return EVP_sha384();
	case WSS_DIG_SHA512: return EVP_sha512();
	default: return NULL;
	}
}

/* Run the OpenSSL KDF called name with params into out[0..out_len). */
static int
wss_kdf_run(const char *name, const OSSL_PARAM *params, unsigned char *out,
    size_t out_len)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, name, NULL);
	EVP_KDF_CTX *c = kdf != NULL ? EVP_KDF_CTX_new(kdf) : NULL;
	int rc = -1;

	if (c != NULL && out_len > 0 &&
	    EVP_KDF_derive(c, out, out_len, params) == 1)
		rc = 0;
	EVP_KDF_CTX_free(c);
	EVP_KDF_free(kdf);
	return rc;
}

/*
 * RFC 5869 HKDF (extract then expand) with HMAC over the digest of dig:
 * the secret z, an optional salt (absent or empty: HashLen zero octets,
 * RFC 5869 2.2 — the same HMAC key) and info (may be empty), out_len
 * octets (at most 255 HashLen) into out.  0 / -1.
 */
int
wss_kdf_hkdf(unsigned dig, const struct wss_bytes *z,
    const struct wss_bytes *salt, const struct wss_bytes *info,
    unsigned char *out, size_t out_len)
{
	const EVP_MD *md = wss_kdf_md(dig);
	OSSL_PARAM p[5], *q = p;
	unsigned char empty = 0;

	if (md == NULL || z->p == NULL || z->len == 0)
		return -1;
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
	    (char *)(uintptr_t)EVP_MD_get0_name(md), 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
	    (void *)(uintptr_t)z->p, z->len);
	if (salt->p != NULL && salt->len > 0)
		*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
		    (void *)(uintptr_t)salt->p, salt->len);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
	    info->p != NULL && info->len > 0 ? (void *)(uintptr_t)info->p :
	    &empty, info->p != NULL ? info->len : 0);
	*q = OSSL_PARAM_construct_end();
	return wss_kdf_run(OSSL_KDF_NAME_HKDF, p, out, out_len);
}

/*
 * NIST SP 800-56A rev. 3, 5.8.2.1.1 one-step KDF with H = the digest of
 * dig (XML Encryption 1.1, 5.4.1 ConcatKDF): K = H(counter || Z ||
 * OtherInfo) for counter = 1, 2, ... truncated to out_len octets, where
 * other = AlgorithmID || PartyUInfo || PartyVInfo (the caller assembles it,
 * padding octets already dropped).  OpenSSL calls this KDF "SSKDF".
 */
int
wss_kdf_concat(unsigned dig, const struct wss_bytes *z,
    const struct wss_bytes *other, unsigned char *out, size_t out_len)
{
	const EVP_MD *md = wss_kdf_md(dig);
	OSSL_PARAM p[4], *q = p;
	unsigned char empty = 0;

	if (md == NULL || z->p == NULL || z->len == 0)
		return -1;
	*q++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST,
	    (char *)(uintptr_t)EVP_MD_get0_name(md), 0);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY,
	    (void *)(uintptr_t)z->p, z->len);
	*q++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO,
	    other->p != NULL && other->len > 0 ? (void *)(uintptr_t)other->p :
	    &empty, other->p != NULL ? other->len : 0);
	*q = OSSL_PARAM_construct_end();
	return wss_kdf_run(OSSL_KDF_NAME_SSKDF, p, out, out_len);
}

/* The AES key wrap cipher for a key-encryption key of kek_len octets. */
static const EVP_CIPHER *
wss_kdf_wrap_cipher(size_t kek_len)
{
	switch (kek_len) {
	case 16: return EVP_aes_128_wrap();
	case 24: return EVP_aes_192_wrap();
	case 32: return EVP_aes_256_wrap();
	default: return NULL;
	}
}

/* The key length of a kw-aes* bit (WSS_KW_*), or 0. */
size_t
wss_kdf_kw_len(unsigned kw)
{
	switch (kw) {
	case WSS_KW_AES128: return 16;
	case WSS_KW_AES192: return 24;
	case WSS_KW_AES256: return 32;
	default: return 0;
	}
}

/* One RFC 3394 pass (enc 1 wrap, 0 unwrap) of in under kek into out
 * (room for in->len + 8); the output length into *ret_len. */
static int
wss_kdf_kw(int enc, const struct wss_bytes *kek, const struct wss_bytes *in,
    unsigned char *out, size_t *ret_len)
{
	const EVP_CIPHER *ciph = wss_kdf_wrap_cipher(kek->len);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, fin = 0, rc = -1;

	if (c == NULL || ciph == NULL || in->len > 1032)
		goto out;
	EVP_CIPHER_CTX_set_flags(c, EVP_CIPHER_CTX_FLAG_WRAP_ALLOW);
	if (EVP_CipherInit_ex(c, ciph, NULL, kek->p, NULL, enc) != 1 ||
	    EVP_CipherUpdate(c, out, &n, in->p, (int)in->len) != 1 || n < 0 ||
	    EVP_CipherFinal_ex(c, out + n, &fin) != 1)
		goto out;
	*ret_len = (size_t)n + (size_t)fin;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/*
 * RFC 3394 key wrap of key (16, 24 or 32 octets) under kek (16, 24 or 32
 * octets, the kw-aes size): key_len + 8 octets into out.  0 / -1.
 */
int
wss_kdf_wrap(const unsigned char *kek, size_t kek_len,
    const unsigned char *key, size_t key_len, unsigned char *out,
    size_t out_size)
{
	struct wss_bytes k = { kek, kek_len }, in = { key, key_len };
	size_t n = 0;

	if (key_len < 16 || key_len % 8 != 0 || key_len > 1024 ||
	    out_size < key_len + WSS_KDF_WRAP_IV ||
	    wss_kdf_kw(1, &k, &in, out, &n) < 0 ||
	    n != key_len + WSS_KDF_WRAP_IV)
		return -1;
	return 0;
}

/*
 * RFC 3394 unwrap of in (24 .. 1032 octets, a multiple of 8) under kek: the
 * integrity check value must hold (2.2.3) and the key be exactly want
 * octets; then it goes to out (want octets).  out untouched on failure.
 */
int
wss_kdf_unwrap(const unsigned char *kek, size_t kek_len,
    const unsigned char *in, size_t in_len, unsigned char *out, size_t want)
{
	unsigned char tmp[1024 + WSS_KDF_WRAP_IV];
	struct wss_bytes k = { kek, kek_len }, w = { in, in_len };
	size_t n = 0;
	int rc = -1;

	if (in_len < 24 || in_len % 8 != 0 || in_len > sizeof(tmp) ||
	    in_len - WSS_KDF_WRAP_IV != want)
		return -1;
	if (wss_kdf_kw(0, &k, &w, tmp, &n) == 0 &&
	    n == want) {
		memcpy(out, tmp, want);
		rc = 0;
	}
	OPENSSL_cleanse(tmp, sizeof(tmp));
	return rc;
}
