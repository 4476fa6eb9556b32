/*
 * wss_keytype.c — what kind of key a certificate or a loaded pair holds
 * (RSA, EC on which curve, Ed25519, X25519), and which of a leg's
 * algorithms such a key can sign or decrypt with (issue 13: a leg's
 * profile decides which gateway key signs its Receipts, and refuses
 * decryption pairs that cannot serve it).  Reading only.
 */
#include "wss.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "wss_int.h"

/* RFC 5480 / RFC 5639 curve names as operators know them. */
static const char *
wss_keytype_curve(const char *group)
{
	if (strcmp(group, "prime256v1") == 0)
		return "P-256";
	if (strcmp(group, "secp384r1") == 0)
		return "P-384";
	if (strcmp(group, "secp521r1") == 0)
		return "P-521";
	return group;
}

/* The kind and name of pkey into *ret (WSS_KEY_OTHER for the rest). */
static void
wss_keytype_pkey(EVP_PKEY *pkey, struct wss_keytype *ret)
{
	char group[64] = "";
	size_t len = 0;

	memset(ret, 0, sizeof(*ret));
	switch (pkey != NULL ? EVP_PKEY_get_base_id(pkey) : EVP_PKEY_NONE) {
	case EVP_PKEY_RSA:
		ret->kind = WSS_KEY_RSA;
		(void)snprintf(ret->name, sizeof(ret->name), "RSA %d",
		    EVP_PKEY_get_bits(pkey));
		break;
	case EVP_PKEY_EC:
		ret->kind = WSS_KEY_EC;
		if (EVP_PKEY_get_group_name(pkey, group, sizeof(group),
		    &len) != 1)
			(void)snprintf(group, sizeof(group), "unknown curve");
		(void)snprintf(ret->name, sizeof(ret->name), "EC %s",
		    wss_keytype_curve(group));
		break;
	case EVP_PKEY_ED25519:
		ret->kind = WSS_KEY_ED25519;
		(void)snprintf(ret->name, sizeof(ret->name), "Ed25519");
		break;
	case EVP_PKEY_X25519:
		ret->kind = WSS_KEY_X25519;
		(void)snprintf(ret->name, sizeof(ret->name), "X25519");
		break;
	default:
		ret->kind = WSS_KEY_OTHER;
		(void)snprintf(ret->name, sizeof(ret->name), "%s",
		    pkey != NULL ? OBJ_nid2sn(EVP_PKEY_get_base_id(pkey)) :
		    "unreadable");
		break;
	}
}

/* The public key of the first certificate of a PEM file; see wss.h. */
int
wss_keytype_file(const char *cert_path, struct wss_keytype *ret,
    struct err *err)
{
	X509 *x = NULL;

	if (wss_read_cert(cert_path, &x, err) == -1) {
		ERR_clear_error();
		return -1;
	}
	wss_keytype_pkey(X509_get0_pubkey(x), ret);
	X509_free(x);
	ERR_clear_error();
	return 0;
}

/* The kind of a loaded pair; see wss.h. */
void
wss_keytype_of(const struct wss_key *k, struct wss_keytype *ret)
{
	wss_keytype_pkey(wss_key_pkey(k), ret);
}

/*
 * The SignatureMethods a key of this kind signs with (XML Signature 1.1
 * 6.4, RFC 9231 2.3.4 for Ed25519); X25519 signs nothing.
 */
unsigned
wss_keytype_sig_algs(enum wss_keykind kind)
{
	switch (kind) {
	case WSS_KEY_RSA:
		return WSS_SIG_RSA_SHA256 | WSS_SIG_RSA_SHA384 |
		    WSS_SIG_RSA_SHA512;
	case WSS_KEY_EC:
		return WSS_SIG_ECDSA_SHA256 | WSS_SIG_ECDSA_SHA384 |
		    WSS_SIG_ECDSA_SHA512;
	case WSS_KEY_ED25519:
		return WSS_SIG_ED25519;
	default:
		return 0;
	}
}

/*
 * How a pair of this kind receives a content key (XML Encryption 1.1 5.5
 * key transport, 5.6 key agreement; RFC 9231 2.4 X25519); Ed25519 only
 * signs.
 */
unsigned
wss_keytype_dec_algs(enum wss_keykind kind)
{
	switch (kind) {
	case WSS_KEY_RSA:
		return WSS_KT_RSA_OAEP | WSS_KT_RSA_OAEP_MGF1P | WSS_KT_RSA_1_5;
	case WSS_KEY_EC:
		return WSS_KA_ECDH_ES;
	case WSS_KEY_X25519:
		return WSS_KA_X25519;
	default:
		return 0;
	}
}
