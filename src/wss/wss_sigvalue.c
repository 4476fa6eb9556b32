/*
 * wss_sigvalue.c — the SignatureValue checked over the canonical SignedInfo
 * before any reference is dereferenced (issue 10 item 3).
 *
 * xmlsec's core validation (xmlSecDSigCtxVerify) digests every reference
 * first and checks the SignatureValue last, so a forged signature used to
 * make the gateway canonicalise every attachment (an XML one parsed whole)
 * before it found out: a message signed by nobody cost as much as a genuine
 * one, or more.  The verification key is known beforehand (src/trust: the
 * certificate bound to the leg), so XML Signature 1.1, 3.2.2 (signature
 * validation: canonicalise SignedInfo with its CanonicalizationMethod,
 * verify SignatureValue with the key and SignatureMethod) runs here first,
 * on OpenSSL EVP; only a signature that passes goes on to xmlsec, which
 * then validates everything again as before.
 *
 * Only what wss_inbound.c's walk of SignedInfo allowed gets here: exclusive
 * c14n without comments (an optional ec:InclusiveNamespaces PrefixList) and
 * the allowlisted signature methods; this file checks them again and knows
 * no others.  Every failure is EBMS:0101.
 */
#include "wss_int.h"

#include <string.h>

#include <libxml/c14n.h>
#include <libxml/xmlIO.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>

#include "../util/buf.h"
#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_SV_EXC_C14N "http://www.w3.org/2001/10/xml-exc-c14n#"
#define WSS_SV_MORE "http://www.w3.org/2001/04/xmldsig-more#"
/* Canonical SignedInfo (at most max_references references) is far
 * smaller; a PrefixList has at most this many prefixes. */
#define WSS_SV_MAX_C14N ((size_t)1 << 20)
#define WSS_SV_MAX_PREFIXES 64
/* Longest SignatureValue: RSA 16384 bits, base64 with line breaks. */
#define WSS_SV_MAX_B64 4096

/* A signature method we verify (RFC 6931 2.3.2, 2.3.6; XML Signature 1.1
 * 6.4.3: ECDSA values are r || s, each as long as the group order; RFC
 * 9231 2.3.9: pure Ed25519, no digest of ours). */
struct wss_sv_method {
	const char *uri;
	unsigned bit;             /* enum wss_alg */
	const EVP_MD *(*md)(void); /* NULL: Ed25519 */
	int key_type;             /* EVP_PKEY_RSA, _EC or _ED25519 */
};

static const struct wss_sv_method wss_sv_methods[] = {
	{ WSS_SV_MORE "rsa-sha256", WSS_SIG_RSA_SHA256, EVP_sha256, EVP_PKEY_RSA },
	{ WSS_SV_MORE "rsa-sha384", WSS_SIG_RSA_SHA384, EVP_sha384, EVP_PKEY_RSA },
	{ WSS_SV_MORE "rsa-sha512", WSS_SIG_RSA_SHA512, EVP_sha512, EVP_PKEY_RSA },
	{ WSS_SV_MORE "ecdsa-sha256", WSS_SIG_ECDSA_SHA256, EVP_sha256,
	    EVP_PKEY_EC },
	{ WSS_SV_MORE "ecdsa-sha384", WSS_SIG_ECDSA_SHA384, EVP_sha384,
	    EVP_PKEY_EC },
	{ WSS_SV_MORE "ecdsa-sha512", WSS_SIG_ECDSA_SHA512, EVP_sha512,
	    EVP_PKEY_EC },
	{ WSS_EDDSA_URI, WSS_SIG_ED25519, NULL, EVP_PKEY_ED25519 },
};

/* RFC 8032 5.1.6: an Ed25519 signature is R || S, 64 octets. */
#define WSS_SV_ED25519_LEN 64

#define WSS_SV_N_METHODS (sizeof(wss_sv_methods) / sizeof(wss_sv_methods[0]))

/* EBMS:0101 with the generic message; the reason for the log only. */
static int
wss_sv_fail(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "signature check failed");
	err_detail(err, "%s", why);
	return -1;
}

/* The allowed method of SignatureMethod sm, or NULL. */
static const struct wss_sv_method *
wss_sv_method_of(struct arena *a, const xmlNode *sm, unsigned algs)
{
	const char *uri = xml_attr(a, sm, NULL, "Algorithm");
	size_t i;

	for (i = 0; uri != NULL && i < WSS_SV_N_METHODS; i++)
		if (strcmp(wss_sv_methods[i].uri, uri) == 0)
			return (wss_sv_methods[i].bit & algs) != 0 ?
			    &wss_sv_methods[i] : NULL;
	return NULL;
}

/*
 * The InclusiveNamespaces PrefixList of an exclusive c14n method (Exclusive
 * XML Canonicalization 1.0, 3: whitespace-separated prefixes, "#default"
 * for the default namespace, which libxml2 understands as such) as the
 * NULL-terminated array xmlC14NExecute wants (arena), or NULL for none.
 * -1 when the list is too long or memory runs out.
 */
static int
wss_sv_prefixes(struct arena *a, const xmlNode *method, xmlChar ***ret)
{
	xmlNodePtr inc = xml_child(method, WSS_SV_EXC_C14N,
	    "InclusiveNamespaces");
	char *list = inc != NULL ? xml_attr(a, inc, NULL, "PrefixList") : NULL;
	xmlChar **v;
	char *tok, *save = NULL;
	size_t n = 0;

	*ret = NULL;
	if (list == NULL)
		return 0;
	v = arena_calloc(a, WSS_SV_MAX_PREFIXES + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	for (tok = strtok_r(list, " \t\r\n", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == WSS_SV_MAX_PREFIXES)
			return -1;
		v[n++] = (xmlChar *)tok;
	}
	*ret = v;
	return 0;
}

/*
 * xmlC14NExecute visibility: the node set of SignedInfo (XML Signature 1.1,
 * 4.4.3: the element, its descendants, their attributes and namespace
 * nodes), as xmlsec selects it.  For attribute and namespace nodes libxml2
 * passes their element as parent.
 */
static int
wss_sv_visible(void *top, xmlNodePtr node, xmlNodePtr parent)
{
	const xmlNode *n = node;

	if (node->type == XML_NAMESPACE_DECL ||
	    node->type == XML_ATTRIBUTE_NODE)
		n = parent;
	for (; n != NULL; n = n->parent)
		if (n == top)
			return 1;
	return 0;
}

/* libxml2 output callback appending to a struct buf (its limit holds). */
static int
wss_sv_write(void *ctx, const char *p, int len)
{
	return len >= 0 && buf_append(ctx, p, (size_t)len) == 0 ? len : -1;
}

/* Exclusive c14n without comments of si (prefixes as the method says). */
static int
wss_sv_c14n(struct arena *a, xmlNodePtr si, struct buf *out)
{
	xmlNodePtr method = xml_child(si, NS_DS, "CanonicalizationMethod");
	xmlChar *alg = xmlGetNoNsProp(method, (const xmlChar *)"Algorithm");
	xmlOutputBufferPtr ob = NULL;
	xmlChar **prefixes = NULL;
	int rc = -1, ok;

	ok = alg != NULL && xmlStrEqual(alg, (const xmlChar *)WSS_SV_EXC_C14N);
	xmlFree(alg);
	if (!ok || wss_sv_prefixes(a, method, &prefixes) < 0)
		return -1;
	out->limit = WSS_SV_MAX_C14N;
	ob = xmlOutputBufferCreateIO(wss_sv_write, NULL, out, NULL);
	if (ob == NULL)
		return -1;
	rc = xmlC14NExecute(si->doc, wss_sv_visible, si,
	    XML_C14N_EXCLUSIVE_1_0, prefixes, 0, ob) < 0 ? -1 : 0;
	if (xmlOutputBufferClose(ob) < 0)
		rc = -1;
	return rc;
}

/* XML Signature 1.1 6.4.3: r || s, each exactly half octets long (the
 * group order's size: a DER-encoded value, or one with leading zeros cut,
 * has another length and is refused), as DER (arena). */
static int
wss_sv_ecdsa_der(struct arena *a, const unsigned char *raw, size_t len,
    size_t half, unsigned char **ret, size_t *ret_len)
{
	ECDSA_SIG *sig = ECDSA_SIG_new();
	BIGNUM *r = NULL, *s = NULL;
	unsigned char *der = NULL;
	int n, rc = -1;

	if (sig == NULL || half == 0 || len != 2 * half || len > 2 * 66)
		goto out;
	r = BN_bin2bn(raw, (int)(len / 2), NULL);
	s = BN_bin2bn(raw + len / 2, (int)(len / 2), NULL);
	if (r == NULL || s == NULL || ECDSA_SIG_set0(sig, r, s) != 1)
		goto out;
	r = s = NULL;
	n = i2d_ECDSA_SIG(sig, &der);
	if (n <= 0 || (*ret = arena_memdup(a, der, (size_t)n)) == NULL)
		goto out;
	*ret_len = (size_t)n;
	rc = 0;
out:
	OPENSSL_free(der);
	BN_free(r);
	BN_free(s);
	ECDSA_SIG_free(sig);
	return rc;
}

/* The decoded SignatureValue, in the form EVP_DigestVerify takes, for
 * the key pkey of type key_type. */
static int
wss_sv_value(struct arena *a, const xmlNode *sv, const EVP_PKEY *pkey,
    int key_type, unsigned char **ret, size_t *ret_len)
{
	char *text = xml_text(a, sv);
	unsigned char *raw = NULL;
	size_t len = 0;

	if (text == NULL || strlen(text) > WSS_SV_MAX_B64 ||
	    codec_unbase64(a, text, strlen(text), &raw, &len) < 0 || len == 0)
		return -1;
	if (key_type == EVP_PKEY_EC)
		return wss_sv_ecdsa_der(a, raw, len, wss_sigalg_ec_half(pkey),
		    ret, ret_len);
	if (key_type == EVP_PKEY_ED25519 && len != WSS_SV_ED25519_LEN)
		return -1;
	*ret = raw;
	*ret_len = len;
	return 0;
}

/* EVP_DigestVerify of sig over data with pkey and md (NULL for Ed25519,
 * which OpenSSL verifies as RFC 8032 5.1.7 says, S < L included): 1
 * valid, 0 not. */
static int
wss_sv_evp(EVP_PKEY *pkey, const EVP_MD *md, const unsigned char *sig,
    size_t sig_len, const void *data, size_t len)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok;

	ok = c != NULL &&
	    EVP_DigestVerifyInit(c, NULL, md, NULL, pkey) == 1 &&
	    EVP_DigestVerify(c, sig, sig_len, data, len) == 1;
	EVP_MD_CTX_free(c);
	return ok;
}

/* Check the SignatureValue first; see wss_int.h. */
int
wss_sigvalue_check(struct arena *a, xmlNodePtr signature, X509 *cert,
    unsigned algs, struct err *err)
{
	xmlNodePtr si = xml_child(signature, NS_DS, "SignedInfo");
	xmlNodePtr sv = xml_child(signature, NS_DS, "SignatureValue");
	const struct wss_sv_method *m;
	EVP_PKEY *pkey = X509_get0_pubkey(cert);
	struct buf c14n = { 0 };
	unsigned char *sig = NULL;
	size_t sig_len = 0;
	int rc = -1;

	m = wss_sv_method_of(a, xml_child(si, NS_DS, "SignatureMethod"), algs);
	if (m == NULL || sv == NULL) {
		wss_sv_fail(err, "signature method not allowed");
		goto out;
	}
	if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != m->key_type ||
	    !wss_sigalg_key_ok(pkey)) {
		wss_sv_fail(err, "signer key does not fit the signature "
		    "method");
		goto out;
	}
	if (wss_sv_c14n(a, si, &c14n) < 0) {
		wss_sv_fail(err, "SignedInfo cannot be canonicalized");
		goto out;
	}
	if (wss_sv_value(a, sv, pkey, m->key_type, &sig, &sig_len) < 0 ||
	    !wss_sv_evp(pkey, m->md != NULL ? m->md() : NULL, sig, sig_len,
	    c14n.data, c14n.len)) {
		wss_sv_fail(err, "SignatureValue does not verify over "
		    "SignedInfo (no reference was dereferenced)");
		goto out;
	}
	rc = 0;
out:
	buf_free(&c14n);
	return rc;
}
