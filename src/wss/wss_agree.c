/*
 * wss_agree.c — the receiving half of key agreement (XML Encryption 1.1,
 * 5.6; eDelivery AS4 2.0 / ENTSOG AS4 4.0, 2.2.6.2.3 and 2.2.6.2.5.2; BDEW
 * AS4): the one reader of xenc:AgreementMethod, and the agreement, key
 * derivation and key unwrap it describes.
 *
 *   xenc:AgreementMethod Algorithm = xmldsig-more#x25519 | xmlenc11#ECDH-ES
 *     xenc11:KeyDerivationMethod Algorithm = xmldsig-more#hkdf
 *       dsig-more:HKDFParams: PRF (Algorithm hmac-sha256/384/512; also in
 *         xenc11 as some Santuario versions write it), Salt?, Info?,
 *         KeyLength? (octets, RFC 9231bis)
 *     | xenc11:KeyDerivationMethod Algorithm = xmlenc11#ConcatKDF
 *       xenc11:ConcatKDFParams @AlgorithmID @PartyUInfo @PartyVInfo
 *         (@SuppPubInfo @SuppPrivInfo; hex bit strings whose first octet
 *         counts padding bits, which must be 0) + ds:DigestMethod
 *     xenc:OriginatorKeyInfo: dsig11:DEREncodedKeyValue (an X25519 or EC
 *       SubjectPublicKeyInfo) or dsig11:ECKeyValue (NamedCurve urn:oid: +
 *       PublicKey, an uncompressed point), bare or inside ds:KeyValue
 *     xenc:RecipientKeyInfo: which of our key-agreement certificates
 *       (wss_keyring_pick_ref resolves it)
 *
 * The algorithm URIs are read first and decide the policy (EBMS:0103)
 * before anything else; every later failure — format, a point not on the
 * curve, an all-zero X25519 secret (RFC 7748 6.1), a KeyLength that is not
 * the wrap algorithm's, a failed unwrap — is a decryption failure the
 * caller answers with the one EBMS:0102; only a static reason is given,
 * for the log.  The sending half is src/sender/sender_agree.c.
 */
#include "wss_int.h"

#include <stdint.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/objects.h>
#include <openssl/x509.h>

#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_AGREE_MORE21 "http://www.w3.org/2021/04/xmldsig-more#"
#define WSS_AGREE_HMAC "http://www.w3.org/2001/04/xmldsig-more#hmac-"

/* Wire bounds: a Salt, an Info, each ConcatKDF field (octets); the base64
 * text of an originator key; the decimal digits of KeyLength. */
#define WSS_AGREE_PARAM_MAX 1024
#define WSS_AGREE_KEY_B64_MAX 2048
#define WSS_AGREE_DIGITS_MAX 4

/* The curves ECDH-ES may use (ENTSOG AS4 4.0, 2.2.6.2.5: at least P-256,
 * P-384, P-521 and brainpoolP256r1; BDEW AS4 the brainpool family). */
static const int wss_agree_curves[] = {
	NID_X9_62_prime256v1, NID_secp384r1, NID_secp521r1,
	NID_brainpoolP256r1, NID_brainpoolP384r1, NID_brainpoolP512r1,
};

/* A format failure: EBMS:0102 (the fixed msg) with why in the detail. */
static int
wss_agree_bad(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0102", "decryption failed");
	err_detail(err, "could not decrypt the encrypted payloads: key "
	    "agreement: %s", why);
	return -1;
}

/* A policy refusal: EBMS:0103 naming the algorithm (from its URI). */
static int
wss_agree_refuse(struct err *err, const char *what, const char *uri)
{
	err_set(err, ERR_EBMS, "EBMS:0103",
	    "encryption does not meet the security policy");
	err_detail(err, "key agreement: %s not allowed: %.160s", what,
	    uri != NULL ? uri : "(none)");
	return -1;
}

/* The digest bit of an HMAC PRF URI (RFC 6931 2.2.2), or 0. */
static unsigned
wss_agree_prf_bit(const char *uri)
{
	size_t n = strlen(WSS_AGREE_HMAC);

	if (uri == NULL || strncmp(uri, WSS_AGREE_HMAC, n) != 0)
		return 0;
	if (strcmp(uri + n, "sha256") == 0)
		return WSS_DIG_SHA256;
	if (strcmp(uri + n, "sha384") == 0)
		return WSS_DIG_SHA384;
	if (strcmp(uri + n, "sha512") == 0)
		return WSS_DIG_SHA512;
	return 0;
}

/* Does every element child of n have one of the given (ns, name) pairs
 * (ns_names: ns1, name1, ns2, name2, ..., NULL)? */
static int
wss_agree_only(const xmlNode *n, const char *const *ns_names)
{
	xmlNodePtr c;
	size_t i;
	int ok;

	for (c = xml_child(n, NULL, NULL); c != NULL;
	    c = xml_next(c, NULL, NULL)) {
		for (i = 0, ok = 0; ns_names[i] != NULL && !ok; i += 2)
			ok = xml_is(c, ns_names[i], ns_names[i + 1]);
		if (!ok)
			return 0;
	}
	return 1;
}

/* The one child {ns}name of n (NULL when absent); *dup is set when there
 * are several. */
static xmlNodePtr
wss_agree_one(const xmlNode *n, const char *ns, const char *name, int *dup)
{
	if (xml_count(n, ns, name) > 1)
		*dup = 1;
	return xml_child(n, ns, name);
}

/* The HKDF PRF element: dsig-more:PRF, or xenc11:PRF (not both). */
static xmlNodePtr
wss_agree_prf_node(const xmlNode *params, int *dup)
{
	xmlNodePtr a = wss_agree_one(params, WSS_AGREE_MORE21, "PRF", dup);
	xmlNodePtr b = wss_agree_one(params, NS_XENC11, "PRF", dup);

	if (a != NULL && b != NULL)
		*dup = 1;
	return a != NULL ? a : b;
}

/* The parameters element of the KeyDerivationMethod (HKDFParams or
 * ConcatKDFParams, the only child) and the digest URI inside it. */
static xmlNodePtr
wss_agree_kdf_params(struct arena *a, const xmlNode *kdm, unsigned kdf,
    const char **ret_dig)
{
	xmlNodePtr p, d;
	int dup = 0;

	if (xml_count(kdm, NULL, NULL) != 1)
		return NULL;
	if (kdf == WSS_KDF_HKDF) {
		p = xml_child(kdm, WSS_AGREE_MORE21, "HKDFParams");
		d = wss_agree_prf_node(p, &dup);
	} else {
		p = xml_child(kdm, NS_XENC11, "ConcatKDFParams");
		d = wss_agree_one(p, NS_DS, "DigestMethod", &dup);
	}
	if (p == NULL || d == NULL || dup)
		return NULL;
	*ret_dig = xml_attr(a, d, NULL, "Algorithm");
	return *ret_dig != NULL ? p : NULL;
}

/*
 * Pass 1: the algorithm URIs (AgreementMethod, KeyDerivationMethod, PRF or
 * DigestMethod) against algs — EBMS:0103 for one not allowed — and the
 * structure they sit in (EBMS:0102).  Sets ka, kdf, dig and *ret_params.
 */
static int
wss_agree_uris(struct arena *a, const xmlNode *am, unsigned algs,
    struct wss_agree *p, xmlNodePtr *ret_params, struct err *err)
{
	const char *ka = xml_attr(a, am, NULL, "Algorithm"), *kd, *dig = NULL;
	xmlNodePtr kdm = xml_child(am, NS_XENC11, "KeyDerivationMethod");

	p->ka = wss_alg_from_uri(ka);
	if ((p->ka != WSS_KA_X25519 && p->ka != WSS_KA_ECDH_ES) ||
	    (algs & p->ka) == 0)
		return wss_agree_refuse(err, "agreement method", ka);
	if (kdm == NULL || xml_count(am, NS_XENC11, "KeyDerivationMethod") != 1)
		return wss_agree_bad(err, "not one KeyDerivationMethod");
	kd = xml_attr(a, kdm, NULL, "Algorithm");
	p->kdf = wss_alg_from_uri(kd);
	if ((p->kdf != WSS_KDF_HKDF && p->kdf != WSS_KDF_CONCAT) ||
	    (algs & p->kdf) == 0)
		return wss_agree_refuse(err, "key derivation", kd);
	if ((*ret_params = wss_agree_kdf_params(a, kdm, p->kdf, &dig)) == NULL)
		return wss_agree_bad(err, "KeyDerivationMethod parameters "
		    "malformed (one HKDFParams with one PRF, or one "
		    "ConcatKDFParams with one DigestMethod)");
	p->dig = p->kdf == WSS_KDF_HKDF ? wss_agree_prf_bit(dig) :
	    wss_alg_from_uri(dig);
	if ((p->dig & (WSS_DIG_SHA256 | WSS_DIG_SHA384 | WSS_DIG_SHA512)) == 0 ||
	    (algs & p->dig) == 0)
		return wss_agree_refuse(err, p->kdf == WSS_KDF_HKDF ?
		    "HKDF PRF" : "ConcatKDF digest", dig);
	return 0;
}

/* The base64 text of a leaf element (no element children), decoded and
 * at most max octets (arena).  -1 when malformed or too long. */
static int
wss_agree_b64(struct arena *a, const xmlNode *n, size_t max,
    struct wss_bytes *ret)
{
	const char *t = xml_text(a, n);
	unsigned char *v = NULL;
	size_t len = 0;

	if (t == NULL || xml_count(n, NULL, NULL) != 0 ||
	    strlen(t) > (max + 2) / 3 * 4 + max / 16 + 64 ||
	    codec_unbase64(a, t, strlen(t), &v, &len) < 0 || len > max)
		return -1;
	ret->p = v;
	ret->len = len;
	return 0;
}

/* HKDFParams KeyLength: 1 .. WSS_AGREE_DIGITS_MAX decimal digits, 1 ..
 * 1024 (octets; checked against the wrap algorithm when deriving). */
static int
wss_agree_keylen(struct arena *a, const xmlNode *n, size_t *ret)
{
	const char *t = xml_text(a, n);
	size_t v = 0, i;

	if (t == NULL || xml_count(n, NULL, NULL) != 0 || t[0] == '\0' ||
	    strlen(t) > WSS_AGREE_DIGITS_MAX)
		return -1;
	for (i = 0; t[i] != '\0'; i++) {
		if (t[i] < '0' || t[i] > '9')
			return -1;
		v = v * 10 + (size_t)(t[i] - '0');
	}
	if (v == 0 || v > 1024)
		return -1;
	*ret = v;
	return 0;
}

/* dsig-more:HKDFParams (RFC 9231bis 2.9): PRF, Salt?, Info?, KeyLength?;
 * nothing else. */
static int
wss_agree_hkdf(struct arena *a, const xmlNode *hp, struct wss_agree *p,
    struct err *err)
{
	static const char *const known[] = {
		WSS_AGREE_MORE21, "PRF", NS_XENC11, "PRF",
		WSS_AGREE_MORE21, "Salt", WSS_AGREE_MORE21, "Info",
		WSS_AGREE_MORE21, "KeyLength", NULL,
	};
	int dup = 0;
	xmlNodePtr salt = wss_agree_one(hp, WSS_AGREE_MORE21, "Salt", &dup);
	xmlNodePtr info = wss_agree_one(hp, WSS_AGREE_MORE21, "Info", &dup);
	xmlNodePtr kl = wss_agree_one(hp, WSS_AGREE_MORE21, "KeyLength", &dup);

	if (dup || !wss_agree_only(hp, known))
		return wss_agree_bad(err, "HKDFParams: unknown or repeated "
		    "element");
	if (salt != NULL && wss_agree_b64(a, salt, WSS_AGREE_PARAM_MAX,
	    &p->salt) < 0)
		return wss_agree_bad(err, "HKDFParams Salt malformed or too "
		    "long");
	if (info != NULL && wss_agree_b64(a, info, WSS_AGREE_PARAM_MAX,
	    &p->info) < 0)
		return wss_agree_bad(err, "HKDFParams Info malformed or too "
		    "long");
	if (kl != NULL && wss_agree_keylen(a, kl, &p->key_len) < 0)
		return wss_agree_bad(err, "HKDFParams KeyLength malformed");
	return 0;
}

/* One ConcatKDFParams attribute (XML Encryption 1.1, 5.4.1): hex, an
 * even number of digits, first octet 00 (no padding bits), which is
 * dropped; the rest appended to other.  Absent or empty (the empty bit
 * string: XML Encryption 1.1's own ECDH-ES example, 5.6.3, writes
 * PartyUInfo="" PartyVInfo=""): nothing. */
static int
wss_agree_concat_attr(struct arena *a, const xmlNode *n, const char *name,
    unsigned char *other, size_t *len)
{
	const char *h = xml_attr(a, n, NULL, name);
	size_t hl, i;
	int hi, lo;

	if (h == NULL || h[0] == '\0')
		return 0;
	hl = strlen(h);
	if (hl < 2 || hl % 2 != 0 || hl / 2 - 1 > WSS_AGREE_PARAM_MAX ||
	    h[0] != '0' || h[1] != '0')
		return -1;
	for (i = 2; i < hl; i += 2) {
		hi = codec_hexval((unsigned char)h[i]);
		lo = codec_hexval((unsigned char)h[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		other[(*len)++] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

/* xenc11:ConcatKDFParams: OtherInfo = AlgorithmID || PartyUInfo ||
 * PartyVInfo [|| SuppPubInfo || SuppPrivInfo] (SP 800-56A 5.8.2.1.1). */
static int
wss_agree_concat(struct arena *a, const xmlNode *cp, struct wss_agree *p,
    struct err *err)
{
	static const char *const fields[] = { "AlgorithmID", "PartyUInfo",
	    "PartyVInfo", "SuppPubInfo", "SuppPrivInfo" };
	static const char *const known[] = { NS_DS, "DigestMethod", NULL };
	unsigned char *other = arena_alloc(a, 5 * WSS_AGREE_PARAM_MAX);
	size_t i, len = 0;

	if (other == NULL)
		return wss_agree_bad(err, "out of request memory");
	if (!wss_agree_only(cp, known))
		return wss_agree_bad(err, "ConcatKDFParams: unknown element");
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (wss_agree_concat_attr(a, cp, fields[i], other, &len) < 0)
			return wss_agree_bad(err, "ConcatKDFParams: a field is "
			    "not hex with a leading 00 octet, or too long");
	p->other.p = other;
	p->other.len = len;
	return 0;
}

/* The NID of a dsig11:NamedCurve URI "urn:oid:<dotted OID>" among
 * wss_agree_curves, or 0. */
static int
wss_agree_curve(const char *uri)
{
	ASN1_OBJECT *o;
	size_t i;
	int nid;

	if (uri == NULL || strncmp(uri, "urn:oid:", 8) != 0 ||
	    strlen(uri) > 64 || uri[8] < '0' || uri[8] > '9' ||
	    strspn(uri + 8, "0123456789.") != strlen(uri + 8) ||
	    (o = OBJ_txt2obj(uri + 8, 1)) == NULL)
		return 0;
	nid = OBJ_obj2nid(o);
	ASN1_OBJECT_free(o);
	for (i = 0; i < sizeof(wss_agree_curves) / sizeof(int); i++)
		if (wss_agree_curves[i] == nid)
			return nid;
	return 0;
}

/* dsig11:ECKeyValue (XML Signature 1.1, 4.5.2.3): NamedCurve (URI) and
 * PublicKey, nothing else (explicit ECParameters are refused). */
static int
wss_agree_eckv(struct arena *a, const xmlNode *kv, struct wss_agree *p,
    struct err *err)
{
	static const char *const known[] = { WSS_NS_DSIG11, "NamedCurve",
	    WSS_NS_DSIG11, "PublicKey", NULL };
	xmlNodePtr nc = xml_child(kv, WSS_NS_DSIG11, "NamedCurve");
	xmlNodePtr pk = xml_child(kv, WSS_NS_DSIG11, "PublicKey");

	if (nc == NULL || pk == NULL || !wss_agree_only(kv, known) ||
	    xml_count(kv, NULL, NULL) != 2 || xml_count(nc, NULL, NULL) != 0)
		return wss_agree_bad(err, "ECKeyValue: not one NamedCurve and "
		    "one PublicKey");
	if ((p->curve = wss_agree_curve(xml_attr(a, nc, NULL, "URI"))) == 0)
		return wss_agree_bad(err, "ECKeyValue: curve not supported");
	if (wss_agree_b64(a, pk, WSS_AGREE_KEY_B64_MAX, &p->orig) < 0)
		return wss_agree_bad(err, "ECKeyValue: PublicKey malformed");
	return 0;
}

/* xenc:OriginatorKeyInfo: one DEREncodedKeyValue (the only form for
 * X25519), or (ECDH-ES) one ECKeyValue, bare or in one ds:KeyValue. */
static int
wss_agree_originator(struct arena *a, const xmlNode *oki,
    struct wss_agree *p, struct err *err)
{
	xmlNodePtr k = xml_child(oki, NULL, NULL);

	if (k == NULL || xml_count(oki, NULL, NULL) != 1)
		return wss_agree_bad(err, "OriginatorKeyInfo: not one key");
	if (xml_is(k, WSS_NS_DSIG11, "DEREncodedKeyValue")) {
		p->orig_der = 1;
		if (wss_agree_b64(a, k, WSS_AGREE_KEY_B64_MAX, &p->orig) < 0 ||
		    p->orig.len == 0)
			return wss_agree_bad(err, "DEREncodedKeyValue "
			    "malformed");
		return 0;
	}
	if (xml_is(k, NS_DS, "KeyValue") && xml_count(k, NULL, NULL) == 1)
		k = xml_child(k, NULL, NULL);
	if (p->ka != WSS_KA_ECDH_ES || !xml_is(k, WSS_NS_DSIG11, "ECKeyValue"))
		return wss_agree_bad(err, "OriginatorKeyInfo: no "
		    "DEREncodedKeyValue (X25519) or ECKeyValue (ECDH-ES)");
	return wss_agree_eckv(a, k, p, err);
}

/* Parse an xenc:AgreementMethod; see wss_int.h. */
int
wss_agree_parse(struct arena *a, const xmlNode *am, unsigned algs,
    struct wss_agree *ret, struct err *err)
{
	static const char *const known[] = { NS_XENC11, "KeyDerivationMethod",
	    NS_XENC, "OriginatorKeyInfo", NS_XENC, "RecipientKeyInfo", NULL };
	struct wss_agree p;
	xmlNodePtr params = NULL, oki, rki;

	memset(&p, 0, sizeof(p));
	if (!xml_is(am, NS_XENC, "AgreementMethod"))
		return wss_agree_bad(err, "no xenc:AgreementMethod");
	if (wss_agree_uris(a, am, algs, &p, &params, err) < 0)
		return -1;
	oki = xml_child(am, NS_XENC, "OriginatorKeyInfo");
	rki = xml_child(am, NS_XENC, "RecipientKeyInfo");
	if (!wss_agree_only(am, known) || oki == NULL || rki == NULL ||
	    xml_count(am, NS_XENC, "OriginatorKeyInfo") != 1 ||
	    xml_count(am, NS_XENC, "RecipientKeyInfo") != 1)
		return wss_agree_bad(err, "AgreementMethod: unknown element, "
		    "or not one OriginatorKeyInfo and one RecipientKeyInfo");
	if ((p.kdf == WSS_KDF_HKDF ? wss_agree_hkdf(a, params, &p, err) :
	    wss_agree_concat(a, params, &p, err)) < 0 ||
	    wss_agree_originator(a, oki, &p, err) < 0)
		return -1;
	p.recipient = rki;
	*ret = p;
	return 0;
}

/* The group name of an EC key into name[size] ("" when none). */
static void
wss_agree_group(const EVP_PKEY *k, char *name, size_t size)
{
	size_t len = 0;

	name[0] = '\0';
	if (EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME,
	    name, size, &len) != 1)
		name[0] = '\0';
}

/* Does the private key priv serve this agreement: X25519 for x25519, EC
 * (on the originator's named curve, when it names one) for ECDH-ES? */
int
wss_agree_fits(const struct wss_agree *p, const EVP_PKEY *priv)
{
	char g[64];

	if (priv == NULL)
		return 0;
	if (p->ka == WSS_KA_X25519)
		return EVP_PKEY_get_base_id(priv) == EVP_PKEY_X25519;
	if (p->ka != WSS_KA_ECDH_ES || EVP_PKEY_get_base_id(priv) != EVP_PKEY_EC)
		return 0;
	wss_agree_group(priv, g, sizeof(g));
	return p->curve == 0 || (OBJ_nid2sn(p->curve) != NULL &&
	    strcmp(g, OBJ_nid2sn(p->curve)) == 0);
}

/* A SubjectPublicKeyInfo of exactly der[0..len) (nothing after it). */
static EVP_PKEY *
wss_agree_spki(const unsigned char *der, size_t len)
{
	const unsigned char *q = der;
	EVP_PKEY *k;

	if (len > 4096 || (k = d2i_PUBKEY(NULL, &q, (long)len)) == NULL)
		return NULL;
	if (q != der + len) {
		EVP_PKEY_free(k);
		return NULL;
	}
	return k;
}

/* An EC public key on group from an uncompressed point of exactly the
 * field's size (SEC 1 2.3.3; no compressed form, no infinity). */
static EVP_PKEY *
wss_agree_point(const char *group, int bits, const unsigned char *pt,
    size_t len)
{
	size_t flen = ((size_t)bits + 7) / 8;
	OSSL_PARAM prm[3];
	EVP_PKEY_CTX *c;
	EVP_PKEY *k = NULL;

	if (bits <= 0 || len != 1 + 2 * flen || pt[0] != 0x04)
		return NULL;
	prm[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
	    (char *)(uintptr_t)group, 0);
	prm[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
	    (void *)(uintptr_t)pt, len);
	prm[2] = OSSL_PARAM_construct_end();
	c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (c == NULL || EVP_PKEY_fromdata_init(c) != 1 ||
	    EVP_PKEY_fromdata(c, &k, EVP_PKEY_PUBLIC_KEY, prm) != 1)
		k = NULL;
	EVP_PKEY_CTX_free(c);
	return k;
}

/* The originator's public key, of priv's type and (EC) group, checked
 * (SP 800-56A 5.6.2.3.3 full public key validation: EVP_PKEY_public_check
 * — on the curve, not infinity, in range).  NULL with *why on failure. */
static EVP_PKEY *
wss_agree_peer(const struct wss_agree *p, const EVP_PKEY *priv,
    const char **why)
{
	char g[64], pg[64];
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = NULL;

	wss_agree_group(priv, g, sizeof(g));
	if (p->orig_der)
		k = wss_agree_spki(p->orig.p, p->orig.len);
	else if (p->ka == WSS_KA_ECDH_ES)
		k = wss_agree_point(g, EVP_PKEY_get_bits(priv), p->orig.p,
		    p->orig.len);
	*why = "originator key malformed, or not a point of the curve";
	if (k == NULL || EVP_PKEY_get_base_id(k) != EVP_PKEY_get_base_id(priv))
		goto fail;
	if (p->ka == WSS_KA_ECDH_ES) {
		wss_agree_group(k, pg, sizeof(pg));
		*why = "originator key on another curve than ours";
		if (g[0] == '\0' || strcmp(g, pg) != 0)
			goto fail;
		*why = "originator key fails public key validation (not a "
		    "point of the curve, or infinity)";
		c = EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL);
		if (c == NULL || EVP_PKEY_public_check(c) != 1)
			goto fail;
	}
	EVP_PKEY_CTX_free(c);
	return k;
fail:
	EVP_PKEY_CTX_free(c);
	EVP_PKEY_free(k);
	return NULL;
}

/* Was every octet of p[0..n) zero (in time independent of the values)? */
static int
wss_agree_zero(const unsigned char *p, size_t n)
{
	unsigned char acc = 0;
	size_t i;

	for (i = 0; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* The raw shared secret Z of priv and peer into z[0..*z_len) (room for
 * WSS_AGREE_Z_MAX).  An all-zero Z is refused (RFC 7748 6.1). */
int
wss_agree_secret(EVP_PKEY *priv, EVP_PKEY *peer, unsigned char *z,
    size_t *z_len)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_pkey(NULL, priv, NULL);
	size_t n = 0;
	int rc = -1;

	if (c == NULL || EVP_PKEY_derive_init(c) != 1 ||
	    EVP_PKEY_derive_set_peer_ex(c, peer, 1) != 1 ||
	    EVP_PKEY_derive(c, NULL, &n) != 1 || n == 0 ||
	    n > WSS_AGREE_Z_MAX || EVP_PKEY_derive(c, z, &n) != 1 ||
	    wss_agree_zero(z, n))
		goto out;
	*z_len = n;
	rc = 0;
out:
	EVP_PKEY_CTX_free(c);
	return rc;
}

/* The key-encryption key from Z by the parsed KDF (see wss_int.h). */
int
wss_agree_derive(const struct wss_agree *p, const struct wss_bytes *z,
    unsigned char *kek, const char **why)
{
	*why = "key wrap size not 16, 24 or 32 octets";
	if (p->kek_len != 16 && p->kek_len != 24 && p->kek_len != 32)
		return -1;
	*why = "HKDF KeyLength does not match the key wrap algorithm";
	if (p->kdf == WSS_KDF_HKDF && p->key_len != 0 &&
	    p->key_len != p->kek_len)
		return -1;
	*why = "key derivation failed";
	if (p->kdf == WSS_KDF_HKDF)
		return wss_kdf_hkdf(p->dig, z, &p->salt, &p->info, kek,
		    p->kek_len);
	if (p->kdf == WSS_KDF_CONCAT)
		return wss_kdf_concat(p->dig, z, &p->other, kek, p->kek_len);
	return -1;
}

/* Agreement, derivation and unwrap; see wss_int.h. */
int
wss_agree_unwrap(const struct wss_agree *p, EVP_PKEY *priv,
    const struct wss_bytes *wrapped, unsigned char *key, size_t want,
    const char **why)
{
	unsigned char z[WSS_AGREE_Z_MAX], kek[32];
	struct wss_bytes zb = { z, 0 };
	EVP_PKEY *peer = NULL;
	int rc = -1;

	*why = "our key does not fit the agreement method (type or curve)";
	if (!wss_agree_fits(p, priv) || p->kek_len > sizeof(kek) ||
	    (peer = wss_agree_peer(p, priv, why)) == NULL)
		goto out;
	*why = "key agreement failed (all-zero shared secret or a "
	    "small-order originator key)";
	if (wss_agree_secret(priv, peer, z, &zb.len) < 0 ||
	    wss_agree_derive(p, &zb, kek, why) < 0)
		goto out;
	*why = "key unwrap failed (integrity check: not for our key, wrong "
	    "parameters, or corrupt)";
	if (wss_kdf_unwrap(kek, p->kek_len, wrapped->p, wrapped->len, key,
	    want) < 0)
		goto out;
	rc = 0;
out:
	OPENSSL_cleanse(z, sizeof(z));
	OPENSSL_cleanse(kek, sizeof(kek));
	EVP_PKEY_free(peer);
	return rc;
}
