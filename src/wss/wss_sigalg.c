/*
 * wss_sigalg.c — which keys may sign and with what: the signer key types
 * (RSA, Ed25519, ECDSA on an allowlisted named curve), the length of an
 * XML-DSig ECDSA SignatureValue for a key, and the SignatureMethod our own
 * signatures use for a key.
 *
 * Curves (eDelivery AS4 2.0 2.2.6.2.5 and ENTSOG AS4 4.0: secp256r1; BDEW
 * AS4: brainpoolP256r1; RFC 5639 and FIPS 186-4 for the others): P-256,
 * P-384, P-521, brainpoolP256r1/384r1/512r1, each by name only — a key
 * with explicit curve parameters is refused even when they spell one of
 * these (RFC 5480 2.1.1: implicitCurve and specifiedCurve MUST NOT be
 * used), and so is every other curve (secp256k1, ...).
 */
#include "wss_int.h"

#include <string.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/transforms.h>

#define WSS_SIGALG_MORE "http://www.w3.org/2001/04/xmldsig-more#"

/* An allowed curve: its NID, the octets of its group order (XML Signature
 * 1.1 6.4.3: r and s each take that many) and the ECDSA digest our own
 * signatures use with it (RFC 5656 6.2.1's size rule). */
struct wss_sigalg_curve {
	int nid;
	int md_bits;
	size_t half;
};

static const struct wss_sigalg_curve wss_sigalg_curves[] = {
	{ NID_X9_62_prime256v1, 256, 32 },
	{ NID_secp384r1, 384, 48 },
	{ NID_secp521r1, 512, 66 },
	{ NID_brainpoolP256r1, 256, 32 },
	{ NID_brainpoolP384r1, 384, 48 },
	{ NID_brainpoolP512r1, 512, 64 },
};

#define WSS_SIGALG_N_CURVES \
	(sizeof(wss_sigalg_curves) / sizeof(wss_sigalg_curves[0]))

/* The allowed curve of an EC key, or NULL (explicit parameters, unknown
 * or other curve). */
static const struct wss_sigalg_curve *
wss_sigalg_curve(const EVP_PKEY *pkey)
{
	char name[64], enc[32];
	size_t i;
	int nid;

	if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC ||
	    EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_EC_ENCODING,
	    enc, sizeof(enc), NULL) != 1 ||
	    strcmp(enc, OSSL_PKEY_EC_ENCODING_GROUP) != 0 ||
	    EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME,
	    name, sizeof(name), NULL) != 1) {
		ERR_clear_error();
		return NULL;
	}
	nid = OBJ_sn2nid(name);
	for (i = 0; i < WSS_SIGALG_N_CURVES; i++)
		if (nid != NID_undef && wss_sigalg_curves[i].nid == nid)
			return &wss_sigalg_curves[i];
	return NULL;
}

/* See wss_int.h: may this key sign (or verify) with us? */
int
wss_sigalg_key_ok(const EVP_PKEY *pkey)
{
	int type = pkey != NULL ? EVP_PKEY_get_base_id(pkey) : EVP_PKEY_NONE;

	if (type == EVP_PKEY_RSA || type == EVP_PKEY_ED25519)
		return 1;
	return type == EVP_PKEY_EC && wss_sigalg_curve(pkey) != NULL;
}

/* See wss_int.h: octets of r (and of s) for an allowed EC key, else 0. */
size_t
wss_sigalg_ec_half(const EVP_PKEY *pkey)
{
	const struct wss_sigalg_curve *c = wss_sigalg_curve(pkey);

	return c != NULL ? c->half : 0;
}

/* The transform and URI our signatures use with pkey; -1 for a key that
 * does not sign with us. */
static int
wss_sigalg_of(const EVP_PKEY *pkey, xmlSecTransformId *ret_id,
    const char **ret_uri)
{
	const struct wss_sigalg_curve *c;

	switch (pkey != NULL ? EVP_PKEY_get_base_id(pkey) : EVP_PKEY_NONE) {
	case EVP_PKEY_RSA:
		*ret_id = xmlSecTransformRsaSha256Id;
		*ret_uri = WSS_SIGALG_MORE "rsa-sha256";
		return 0;
	case EVP_PKEY_ED25519:
		*ret_id = wss_eddsa_id();
		*ret_uri = WSS_EDDSA_URI;
		return 0;
	case EVP_PKEY_EC:
		if ((c = wss_sigalg_curve(pkey)) == NULL)
			return -1;
		*ret_id = c->md_bits == 256 ? xmlSecTransformEcdsaSha256Id :
		    c->md_bits == 384 ? xmlSecTransformEcdsaSha384Id :
		    xmlSecTransformEcdsaSha512Id;
		*ret_uri = c->md_bits == 256 ? WSS_SIGALG_MORE "ecdsa-sha256" :
		    c->md_bits == 384 ? WSS_SIGALG_MORE "ecdsa-sha384" :
		    WSS_SIGALG_MORE "ecdsa-sha512";
		return 0;
	default:
		return -1;
	}
}

/* See wss_int.h: the SignatureMethod transform for a signing pair. */
xmlSecTransformId
wss_sign_method_id(const struct wss_key *k)
{
	xmlSecTransformId id = NULL;
	const char *uri;

	return wss_sigalg_of(wss_key_pkey(k), &id, &uri) == 0 ? id : NULL;
}

/* See wss_int.h: the SignatureMethod URI for a signing pair. */
const char *
wss_sign_method_uri(const struct wss_key *k)
{
	xmlSecTransformId id;
	const char *uri = NULL;

	return wss_sigalg_of(wss_key_pkey(k), &id, &uri) == 0 ? uri : NULL;
}
