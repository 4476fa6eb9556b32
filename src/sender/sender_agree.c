/*
 * sender_agree.c — the sending half of key agreement (eDelivery AS4 2.0;
 * ENTSOG AS4 4.0 2.2.6.2.3 steps 1-8 and 2.2.6.2.5.2; XML Encryption 1.1,
 * 5.6): a fresh ephemeral key for each message, X25519 or ECDH-ES with the
 * recipient certificate's key, HKDF or ConcatKDF to a key-encryption key,
 * RFC 3394 wrap of the content key, and the xenc:AgreementMethod that lets
 * the receiver (wss_agree.c) do the same.  Sender code: linked into
 * as4gw-client only (STYLE.md 17).
 */
#include "sender.h"

#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "../util/codec.h"
#include "../wss/wss_int.h"
#include "../xml/xml.h"

#define SENDER_AGREE_MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define SENDER_AGREE_SALT 32   /* ENTSOG 4.0: random salts SHOULD be used */

/* The state of one sender_agree_ek() call. */
struct sender_agree {
	struct arena *a;
	xmlDocPtr doc;
	X509 *recipient;
	struct wss_agree p;        /* the parameters, as the receiver reads them */
	unsigned kw;
	EVP_PKEY *eph;             /* the ephemeral key pair */
	unsigned char wrapped[40];
	size_t wrapped_len;
};

/* The URIs of the algorithms we write (XML Encryption 1.1; RFC 6931;
 * RFC 9231). */
static const char *
sender_agree_uri(unsigned bit)
{
	switch (bit) {
	case WSS_KW_AES128: return NS_XENC "kw-aes128";
	case WSS_KW_AES192: return NS_XENC "kw-aes192";
	case WSS_KW_AES256: return NS_XENC "kw-aes256";
	case WSS_KA_X25519: return WSS_NS_DSIG_MORE21 "x25519";
	case WSS_KA_ECDH_ES: return NS_XENC11 "ECDH-ES";
	case WSS_KDF_HKDF: return WSS_NS_DSIG_MORE21 "hkdf";
	case WSS_KDF_CONCAT: return NS_XENC11 "ConcatKDF";
	case WSS_DIG_SHA256: return NS_XENC "sha256";
	case WSS_DIG_SHA384: return SENDER_AGREE_MORE "sha384";
	case WSS_DIG_SHA512: return NS_XENC "sha512";
	default: return NULL;
	}
}

/* A fresh key pair of the recipient key's type and group. */
static EVP_PKEY *
sender_agree_ephemeral(EVP_PKEY *pub, unsigned *ret_ka)
{
	char g[64];
	size_t len = 0;

	if (EVP_PKEY_get_base_id(pub) == EVP_PKEY_X25519) {
		*ret_ka = WSS_KA_X25519;
		return EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
	}
	if (EVP_PKEY_get_base_id(pub) != EVP_PKEY_EC ||
	    EVP_PKEY_get_utf8_string_param(pub, OSSL_PKEY_PARAM_GROUP_NAME, g,
	    sizeof(g), &len) != 1)
		return NULL;
	*ret_ka = WSS_KA_ECDH_ES;
	return EVP_PKEY_Q_keygen(NULL, NULL, "EC", g);
}

/* ConcatKDF OtherInfo: AlgorithmID = the wrap URI's octets; PartyUInfo
 * and PartyVInfo empty (each written as "00": no padding bits). */
static void
sender_agree_other(struct sender_agree *s)
{
	const char *uri = sender_agree_uri(s->kw);

	s->p.other.p = (const unsigned char *)uri;
	s->p.other.len = strlen(uri);
}

/* Agree, derive and wrap: fills s->p, s->eph and s->wrapped. */
static int
sender_agree_keys(struct sender_agree *s, const unsigned char *cek,
    size_t cek_len)
{
	EVP_PKEY *pub = X509_get0_pubkey(s->recipient);
	unsigned char z[WSS_AGREE_Z_MAX], kek[32], *salt;
	struct wss_bytes zb = { z, 0 };
	size_t kek_len = wss_kdf_kw_len(s->kw);
	const char *why = NULL;
	int rc = -1;

	salt = arena_alloc(s->a, SENDER_AGREE_SALT);
	if (pub == NULL || salt == NULL || kek_len == 0 ||
	    (s->eph = sender_agree_ephemeral(pub, &s->p.ka)) == NULL ||
	    RAND_bytes(salt, SENDER_AGREE_SALT) != 1)
		goto out;
	s->p.kek_len = kek_len;
	if (s->p.kdf == WSS_KDF_HKDF) {
		s->p.salt.p = salt;
		s->p.salt.len = SENDER_AGREE_SALT;
		s->p.key_len = kek_len;
	} else {
		sender_agree_other(s);
	}
	if (wss_agree_secret(s->eph, pub, z, &zb.len) < 0 ||
	    wss_agree_derive(&s->p, &zb, kek, &why) < 0 ||
	    wss_kdf_wrap(kek, kek_len, cek, cek_len, s->wrapped,
	    sizeof(s->wrapped)) < 0)
		goto out;
	s->wrapped_len = cek_len + 8;
	rc = 0;
out:
	OPENSSL_cleanse(z, sizeof(z));
	OPENSSL_cleanse(kek, sizeof(kek));
	return rc;
}

/* A child element {href}name with the base64 text of v. */
static xmlNodePtr
sender_agree_b64_el(struct sender_agree *s, xmlNodePtr parent,
    const char *href, const char *prefix, const char *name,
    const struct wss_bytes *v)
{
	const char *b64 = codec_base64(s->a, v->p, v->len);
	xmlNodePtr e = b64 != NULL ? sender_encrypt_el(s->doc, parent, href,
	    prefix, name) : NULL;

	if (e != NULL)
		xmlNodeAddContent(e, (const xmlChar *)b64);
	return e;
}

/* dsig-more:HKDFParams: PRF, Salt, Info (when given), KeyLength. */
static int
sender_agree_hkdf(struct sender_agree *s, xmlNodePtr kdm)
{
	static const char *const hmac[] = { "sha256", "sha384", "sha512" };
	unsigned d = s->p.dig;
	xmlNodePtr hp = sender_encrypt_el(s->doc, kdm, WSS_NS_DSIG_MORE21,
	    "dsig-more", "HKDFParams");
	xmlNodePtr prf = hp != NULL ? sender_encrypt_el(s->doc, hp,
	    WSS_NS_DSIG_MORE21, "dsig-more", "PRF") : NULL;
	char uri[64], kl[16];

	(void)snprintf(uri, sizeof(uri), "%shmac-%s", SENDER_AGREE_MORE,
	    hmac[d == WSS_DIG_SHA256 ? 0 : d == WSS_DIG_SHA384 ? 1 : 2]);
	(void)snprintf(kl, sizeof(kl), "%zu", s->p.key_len);
	if (!sender_encrypt_set(prf, "Algorithm", uri) ||
	    sender_agree_b64_el(s, hp, WSS_NS_DSIG_MORE21, "dsig-more", "Salt",
	    &s->p.salt) == NULL ||
	    (s->p.info.p != NULL && sender_agree_b64_el(s, hp,
	    WSS_NS_DSIG_MORE21, "dsig-more", "Info", &s->p.info) == NULL))
		return -1;
	hp = sender_encrypt_el(s->doc, hp, WSS_NS_DSIG_MORE21, "dsig-more",
	    "KeyLength");
	if (hp == NULL)
		return -1;
	xmlNodeAddContent(hp, (const xmlChar *)kl);
	return 0;
}

/* xenc11:ConcatKDFParams (hex attributes, leading 00) + ds:DigestMethod. */
static int
sender_agree_concat(struct sender_agree *s, xmlNodePtr kdm)
{
	xmlNodePtr cp = sender_encrypt_el(s->doc, kdm, NS_XENC11, "xenc11",
	    "ConcatKDFParams");
	char *hex = arena_alloc(s->a, 2 * s->p.other.len + 3);

	if (cp == NULL || hex == NULL)
		return -1;
	hex[0] = hex[1] = '0';
	codec_hex(s->p.other.p, s->p.other.len, hex + 2);
	return sender_encrypt_set(cp, "AlgorithmID", hex) &&
	    sender_encrypt_set(cp, "PartyUInfo", "00") &&
	    sender_encrypt_set(cp, "PartyVInfo", "00") &&
	    sender_encrypt_alg_el(s->doc, cp, NS_DS, "DigestMethod",
	    sender_agree_uri(s->p.dig)) != NULL ? 0 : -1;
}

/* The NID of an EC key's named curve, or NID_undef. */
static int
sender_agree_nid(const EVP_PKEY *k)
{
	char g[64];
	size_t len = 0;

	if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME, g,
	    sizeof(g), &len) != 1)
		return NID_undef;
	return OBJ_txt2nid(g);
}

/* The ephemeral public key: DEREncodedKeyValue (X25519, ENTSOG 2.2.6.2.3
 * step 2) or ds:KeyValue/dsig11:ECKeyValue (ECDH-ES, 2.2.6.2.5.2). */
static int
sender_agree_originator(struct sender_agree *s, xmlNodePtr oki)
{
	unsigned char *der = NULL, pt[160];
	struct wss_bytes v = { pt, 0 };
	char urn[80];
	int len, rc = -1;
	xmlNodePtr kv, nc;

	if (s->p.ka == WSS_KA_X25519) {
		if ((len = i2d_PUBKEY(s->eph, &der)) > 0) {
			v.p = der;
			v.len = (size_t)len;
			if (sender_agree_b64_el(s, oki, WSS_NS_DSIG11, "dsig11",
			    "DEREncodedKeyValue", &v) != NULL)
				rc = 0;
		}
		OPENSSL_free(der);
		return rc;
	}
	(void)snprintf(urn, sizeof(urn), "urn:oid:");
	kv = sender_encrypt_el(s->doc, oki, NS_DS, "ds", "KeyValue");
	kv = kv != NULL ? sender_encrypt_el(s->doc, kv, WSS_NS_DSIG11,
	    "dsig11", "ECKeyValue") : NULL;
	nc = kv != NULL ? sender_encrypt_el(s->doc, kv, WSS_NS_DSIG11,
	    "dsig11", "NamedCurve") : NULL;
	if (nc == NULL || OBJ_obj2txt(urn + 8, (int)sizeof(urn) - 8,
	    OBJ_nid2obj(sender_agree_nid(s->eph)), 1) <= 0 ||
	    EVP_PKEY_get_octet_string_param(s->eph,
	    OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt, sizeof(pt), &v.len) != 1)
		return -1;
	return sender_encrypt_set(nc, "URI", urn) &&
	    sender_agree_b64_el(s, kv, WSS_NS_DSIG11, "dsig11", "PublicKey",
	    &v) != NULL ? 0 : -1;
}

/* xenc:RecipientKeyInfo: a wsse:SecurityTokenReference with the
 * recipient's X509SubjectKeyIdentifier (ENTSOG 2.2.6.2.3 step 3). */
static int
sender_agree_recipient(struct sender_agree *s, xmlNodePtr rki)
{
	return sender_encrypt_ski_str(s->a, s->doc, rki, s->recipient);
}

/* ds:KeyInfo/xenc:AgreementMethod under ek (ENTSOG 2.2.6.2.3 steps 1-5, 8). */
static int
sender_agree_method(struct sender_agree *s, xmlNodePtr ek)
{
	xmlNodePtr ki = sender_encrypt_el(s->doc, ek, NS_DS, "ds", "KeyInfo");
	xmlNodePtr am = ki != NULL ? sender_encrypt_el(s->doc, ki, NS_XENC,
	    "xenc", "AgreementMethod") : NULL;
	xmlNodePtr kdm, oki, rki;

	if (!sender_encrypt_set(am, "Algorithm", sender_agree_uri(s->p.ka)))
		return -1;
	kdm = sender_encrypt_alg_el(s->doc, am, NS_XENC11,
	    "KeyDerivationMethod", sender_agree_uri(s->p.kdf));
	if (kdm == NULL || (s->p.kdf == WSS_KDF_HKDF ?
	    sender_agree_hkdf(s, kdm) : sender_agree_concat(s, kdm)) < 0)
		return -1;
	oki = sender_encrypt_el(s->doc, am, NS_XENC, "xenc",
	    "OriginatorKeyInfo");
	rki = oki != NULL ? sender_encrypt_el(s->doc, am, NS_XENC, "xenc",
	    "RecipientKeyInfo") : NULL;
	if (rki == NULL || sender_agree_originator(s, oki) < 0 ||
	    sender_agree_recipient(s, rki) < 0)
		return -1;
	return 0;
}

/* Key agreement into ek; see sender.h. */
int
sender_agree_ek(struct arena *a, xmlNodePtr ek, X509 *recipient,
    const struct sender_agree_opts *o, const unsigned char *cek,
    size_t cek_len)
{
	xmlDocPtr doc = ek->doc;
	struct sender_agree s;
	struct wss_bytes w;
	xmlNodePtr cd;
	int rc = -1;

	memset(&s, 0, sizeof(s));
	s.a = a;
	s.doc = doc;
	s.recipient = recipient;
	s.kw = o != NULL && o->kw != 0 ? o->kw : WSS_KW_AES128;
	s.p.kdf = o != NULL && o->kdf != 0 ? o->kdf : WSS_KDF_HKDF;
	s.p.dig = o != NULL && o->dig != 0 ? o->dig : WSS_DIG_SHA256;
	if (o != NULL && o->info != NULL) {
		s.p.info.p = o->info;
		s.p.info.len = o->info_len;
	}
	if (recipient == NULL || cek_len > 32 || sender_agree_uri(s.kw) ==
	    NULL || sender_agree_uri(s.p.dig) == NULL ||
	    sender_agree_keys(&s, cek, cek_len) < 0 ||
	    sender_encrypt_alg_el(doc, ek, NS_XENC, "EncryptionMethod",
	    sender_agree_uri(s.kw)) == NULL || sender_agree_method(&s, ek) < 0)
		goto out;
	cd = sender_encrypt_el(doc, ek, NS_XENC, "xenc", "CipherData");
	w.p = s.wrapped;
	w.len = s.wrapped_len;
	if (cd == NULL || sender_agree_b64_el(&s, cd, NS_XENC, "xenc",
	    "CipherValue", &w) == NULL)
		goto out;
	rc = 0;
out:
	EVP_PKEY_free(s.eph);
	OPENSSL_cleanse(s.wrapped, sizeof(s.wrapped));
	return rc;
}
