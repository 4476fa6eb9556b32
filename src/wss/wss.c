/*
 * wss.c — xmlsec set-up, key and certificate loading, the document ID index
 * and the restricted dsig context shared by signing (wss_sign.c) and
 * verification (wss_verify.c).
 */
#include "wss.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/base64.h>
#include <xmlsec/crypto.h>
#include <xmlsec/errors.h>
#include <xmlsec/io.h>
#include <xmlsec/keys.h>
#include <xmlsec/list.h>
#include <xmlsec/openssl/evp.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>

#include "../xml/xml.h"
#include "wss_int.h"

struct wss_key {
	X509 *cert;
	EVP_PKEY *pkey;     /* the private key (any type) */
	xmlSecKeyPtr key;   /* it as an xmlsec key; NULL for a key type that
	                     * only agrees keys (X25519) */
	char *cert_b64;     /* DER certificate, base64, for the BST */
};

struct wss_cert {
	X509 *cert;
	xmlSecKeyPtr key;   /* the certificate's public key */
};

static int wss_initialised;

/* The first xmlsec error since wss_xmlsec_reset(), per thread (log detail). */
static _Thread_local char wss_last_error[256];

/*
 * xmlsec error callback: stay silent (library code never prints) and keep
 * the first, innermost complaint of the current operation for err.detail.
 */
static void
wss_on_xmlsec_error(const char *file, int line, const char *func,
    const char *obj, const char *subj, int reason, const char *msg)
{
	(void)file;
	(void)line;
	(void)obj;
	if (wss_last_error[0] != '\0')
		return;
	(void)snprintf(wss_last_error, sizeof(wss_last_error),
	    "xmlsec %s: %s: %s (reason %d)", func != NULL ? func : "?",
	    subj != NULL ? subj : "?", msg != NULL ? msg : "", reason);
}

/* Forget the last xmlsec error recorded on this thread. */
void
wss_xmlsec_reset(void)
{
	wss_last_error[0] = '\0';
}

/* Append the last xmlsec error of this thread (if any) to err.detail. */
void
wss_xmlsec_detail(struct err *err)
{
	if (wss_last_error[0] != '\0')
		err_detail(err, "%s", wss_last_error);
}

/* Append the first queued OpenSSL error to err.detail and clear the queue. */
static void
wss_openssl_detail(struct err *err)
{
	char buf[256];
	unsigned long e = ERR_peek_error();

	if (e != 0) {
		ERR_error_string_n(e, buf, sizeof(buf));
		err_detail(err, "openssl: %s", buf);
	}
	ERR_clear_error();
}

/*
 * Once per process: xmlsec core and its OpenSSL backend, with the IO
 * callbacks removed so that no reference can make xmlsec open a file or a
 * network connection (DESIGN.md "Security rules"; our cid: resolver is
 * registered later), unwrapped base64 output, and a silent error callback.
 */
int
wss_global_init(struct err *err)
{
	int stage = 0, rc = -1;

	if (wss_initialised)
		return 0;
	xmlSecErrorsSetCallback(wss_on_xmlsec_error);
	if (xmlSecInit() < 0)
		goto out;
	stage = 1;
	if (xmlSecCheckVersion() != 1 || xmlSecCryptoAppInit(NULL) < 0)
		goto out;
	stage = 2;
	if (xmlSecCryptoInit() < 0)
		goto out;
	/* again: xmlSecOpenSSLInit() installs its own callback, which would
	 * print to stderr and leave wss_xmlsec_detail() empty */
	xmlSecErrorsSetCallback(wss_on_xmlsec_error);
	xmlSecIOCleanupCallbacks();
	if (wss_swa_init(err) == -1 || wss_eddsa_init(err) == -1) {
		xmlSecCryptoShutdown();
		goto out;
	}
	xmlSecBase64SetDefaultLineSize(0);
	wss_initialised = 1;
	rc = 0;
out:
	if (rc != 0) {
		err_set(err, ERR_INTERNAL, NULL, "could not initialise xmlsec");
		wss_xmlsec_detail(err);
		if (stage >= 2)
			xmlSecCryptoAppShutdown();
		if (stage >= 1)
			xmlSecShutdown();
	}
	return rc;
}

/* Undo wss_global_init() at process exit. */
void
wss_global_shutdown(void)
{
	if (!wss_initialised)
		return;
	xmlSecCryptoShutdown();
	xmlSecCryptoAppShutdown();
	xmlSecShutdown();
	wss_initialised = 0;
}

/* PEM password callback that refuses: an encrypted key is an error here,
 * never an interactive prompt on the daemon's terminal. */
int
wss_no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* The first certificate of a PEM file; see wss_int.h. */
int
wss_read_cert(const char *path, X509 **ret, struct err *err)
{
	BIO *bio = BIO_new_file(path, "r");
	X509 *cert = NULL;

	if (bio == NULL) {
		err_set(err, ERR_IO, NULL,
		    "could not open certificate \"%s\": %s", path,
		    strerror(errno));
		goto out;
	}
	cert = PEM_read_bio_X509(bio, NULL, wss_no_password, NULL);
	if (cert == NULL)
		err_set(err, ERR_CONF, NULL,
		    "could not read a PEM certificate from \"%s\"", path);
out:
	wss_openssl_detail(err);
	BIO_free(bio);
	*ret = cert;
	return cert != NULL ? 0 : -1;
}

/* An unencrypted PEM private key (PKCS#8 or traditional): RSA, EC or
 * Ed25519 to sign (which curves: wss_sigalg_key_ok(), checked when the key
 * is adopted), X25519 to agree keys (issue 13). */
static int
wss_read_pkey(const char *path, EVP_PKEY **ret, struct err *err)
{
	BIO *bio = BIO_new_file(path, "r");
	EVP_PKEY *pkey = NULL;
	int rc = -1;

	if (bio == NULL) {
		err_set(err, ERR_IO, NULL, "could not open key \"%s\": %s",
		    path, strerror(errno));
		goto out;
	}
	pkey = PEM_read_bio_PrivateKey(bio, NULL, wss_no_password, NULL);
	if (pkey == NULL) {
		err_set(err, ERR_CONF, NULL, "could not read an unencrypted "
		    "PEM private key from \"%s\"", path);
		goto out;
	}
	if (EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA &&
	    EVP_PKEY_get_base_id(pkey) != EVP_PKEY_EC &&
	    EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519 &&
	    EVP_PKEY_get_base_id(pkey) != EVP_PKEY_X25519) {
		err_set(err, ERR_CONF, NULL, "key \"%s\" is not an RSA, EC, "
		    "Ed25519 or X25519 key", path);
		goto out;
	}
	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC &&
	    !wss_sigalg_key_ok(pkey)) {
		err_set(err, ERR_CONF, NULL, "key \"%s\" is not on a named "
		    "curve we sign with (P-256, P-384, P-521, "
		    "brainpoolP256r1/384r1/512r1)", path);
		goto out;
	}
	*ret = pkey;
	pkey = NULL;
	rc = 0;
out:
	wss_openssl_detail(err);
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	return rc;
}

/*
 * Wrap an OpenSSL key as an xmlsec key; pkey is consumed in every case.
 * Only signer key types (wss_sigalg_key_ok: RSA, Ed25519 — as our own key
 * data, xmlsec 1.2.37 has none — and EC on an allowlisted named curve);
 * anything else (DSA, Ed448, other curves) is NULL.
 */
xmlSecKeyPtr
wss_key_adopt(EVP_PKEY *pkey)
{
	xmlSecKeyDataPtr data = NULL;
	xmlSecKeyPtr key = NULL;

	if (!wss_sigalg_key_ok(pkey)) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	if (EVP_PKEY_get_base_id(pkey) == EVP_PKEY_ED25519)
		data = wss_eddsa_adopt(pkey);
	else if ((data = xmlSecOpenSSLEvpKeyAdopt(pkey)) == NULL)
		EVP_PKEY_free(pkey);
	if (data == NULL)
		return NULL;
	key = xmlSecKeyCreate();
	if (key == NULL || xmlSecKeySetValue(key, data) < 0) {
		xmlSecKeyDataDestroy(data);
		if (key != NULL)
			xmlSecKeyDestroy(key);
		key = NULL;
	}
	return key;
}

/* The DER encoding of cert in base64 without line breaks (malloc). */
static char *
wss_cert_base64(X509 *cert)
{
	unsigned char *der = NULL;
	char *b64 = NULL;
	int len = i2d_X509(cert, &der);

	if (len <= 0)
		goto out;
	b64 = malloc(4 * (((size_t)len + 2) / 3) + 1);
	if (b64 != NULL)
		(void)EVP_EncodeBlock((unsigned char *)b64, der, len);
out:
	OPENSSL_free(der);
	return b64;
}

/* Load the signing key and its certificate; the key must match it. */
int
wss_key_load(const char *cert_path, const char *key_path,
    struct wss_key **ret, struct err *err)
{
	struct wss_key *k = calloc(1, sizeof(*k));
	EVP_PKEY *pkey = NULL;
	int rc = -1;

	if (k == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (wss_read_cert(cert_path, &k->cert, err) < 0 ||
	    wss_read_pkey(key_path, &pkey, err) < 0)
		goto out;
	if (X509_check_private_key(k->cert, pkey) != 1) {
		err_set(err, ERR_CONF, NULL, "key \"%s\" does not match "
		    "certificate \"%s\"", key_path, cert_path);
		goto out;
	}
	k->cert_b64 = wss_cert_base64(k->cert);
	k->pkey = pkey;
	pkey = NULL;
	if (EVP_PKEY_up_ref(k->pkey) == 1 &&
	    EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_X25519)
		k->key = wss_key_adopt(k->pkey);
	if (k->cert_b64 == NULL || (k->key == NULL &&
	    EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_X25519)) {
		err_set(err, ERR_INTERNAL, NULL, "could not prepare key \"%s\"",
		    key_path);
		wss_xmlsec_detail(err);
		goto out;
	}
	*ret = k;
	k = NULL;
	rc = 0;
out:
	ERR_clear_error();
	EVP_PKEY_free(pkey);
	wss_key_free(k);
	return rc;
}

/* Free a key loaded by wss_key_load(); accepts NULL. */
void
wss_key_free(struct wss_key *k)
{
	if (k == NULL)
		return;
	if (k->key != NULL)
		xmlSecKeyDestroy(k->key);
	EVP_PKEY_free(k->pkey);
	X509_free(k->cert);
	free(k->cert_b64);
	free(k);
}

/* Load a certificate whose public key verifies signatures. */
int
wss_cert_load(const char *path, struct wss_cert **ret, struct err *err)
{
	struct wss_cert *c = calloc(1, sizeof(*c));
	EVP_PKEY *pub;
	int rc = -1;

	if (c == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (wss_read_cert(path, &c->cert, err) < 0)
		goto out;
	pub = X509_get_pubkey(c->cert);
	c->key = pub != NULL ? wss_key_adopt(pub) : NULL;
	if (c->key == NULL) {
		err_set(err, ERR_CONF, NULL, "unsupported public key in \"%s\"",
		    path);
		wss_xmlsec_detail(err);
		goto out;
	}
	*ret = c;
	c = NULL;
	rc = 0;
out:
	ERR_clear_error();
	wss_cert_free(c);
	return rc;
}

/* Free a certificate; accepts NULL. */
void
wss_cert_free(struct wss_cert *c)
{
	if (c == NULL)
		return;
	if (c->key != NULL)
		xmlSecKeyDestroy(c->key);
	X509_free(c->cert);
	free(c);
}

/* Per-signature copy of the private key (the dsig context owns it). */
struct _xmlSecKey *
wss_key_xmlsec(const struct wss_key *k)
{
	return k->key != NULL ? xmlSecKeyDuplicate(k->key) : NULL;
}

/* The private key of a loaded pair (owned by k). */
EVP_PKEY *
wss_key_pkey(const struct wss_key *k)
{
	return k->pkey;
}

/* Per-verification copy of the public key (the dsig context owns it). */
struct _xmlSecKey *
wss_cert_xmlsec(const struct wss_cert *c)
{
	return xmlSecKeyDuplicate(c->key);
}

/* The certificate of a loaded verification certificate (owned by c). */
X509 *
wss_cert_x509(const struct wss_cert *c)
{
	return c->cert;
}

/* The certificate of a loaded pair (owned by k). */
X509 *
wss_key_x509(const struct wss_key *k)
{
	return k->cert;
}

/* The BST content: base64 DER of the signing certificate. */
const char *
wss_key_cert_b64(const struct wss_key *k)
{
	return k->cert_b64;
}

/*
 * A dsig context with no keys manager (the caller sets signKey, so KeyInfo
 * is never used to find a key), same-document references only, no
 * manifests, and the algorithm allowlist (eDelivery AS4 1.15, 1.4.2.6:
 * rsa-sha256 and sha256; exclusive c14n as every AS4 stack uses it).
 * Verifying also rsa-sha384/512, ecdsa-sha256/384/512 and eddsa-ed25519
 * (eDelivery AS4 2.0) with sha384/512 digests; signing adds the method of
 * its key (wss_sign.c).  Which one a message may use, and whether it fits
 * the key, is decided before xmlsec runs (wss_sigvalue.c).
 */
struct _xmlSecDSigCtx *
wss_dsig_ctx_new(int verify)
{
	xmlSecTransformId sig_ids[] = {
		xmlSecTransformExclC14NId, xmlSecTransformRsaSha256Id,
		xmlSecTransformRsaSha384Id, xmlSecTransformRsaSha512Id,
		xmlSecTransformEcdsaSha256Id, xmlSecTransformEcdsaSha384Id,
		xmlSecTransformEcdsaSha512Id, wss_eddsa_id(),
	};
	xmlSecTransformId ref_ids[] = {
		xmlSecTransformExclC14NId, xmlSecTransformSha256Id,
		xmlSecTransformSha384Id, xmlSecTransformSha512Id,
	};
	size_t i, n = verify ? 8 : 2, n_ref = verify ? 4 : 2;
	xmlSecDSigCtxPtr ctx = xmlSecDSigCtxCreate(NULL);
	int rc = 0;

	if (ctx == NULL)
		return NULL;
	ctx->enabledReferenceUris = xmlSecTransformUriTypeSameDocument;
	ctx->flags |= XMLSEC_DSIG_FLAGS_IGNORE_MANIFESTS;
	for (i = 0; i < n && rc == 0; i++)
		rc = xmlSecDSigCtxEnableSignatureTransform(ctx, sig_ids[i]);
	for (i = 0; i < n_ref && rc == 0; i++)
		rc = xmlSecDSigCtxEnableReferenceTransform(ctx, ref_ids[i]);
	if (rc != 0) {
		xmlSecDSigCtxDestroy(ctx);
		ctx = NULL;
	}
	return ctx;
}

/*
 * The restricted context of wss_dsig_ctx_new(1) plus what inbound messages
 * need: the SwA signature transforms and "cid:"
 * references (xmlsec classes them as remote; our URI check already refused
 * every other remote URI, and the only IO callback is the cid: resolver).
 * Moved here from wss_inbound.c, which uses it.
 */
struct _xmlSecDSigCtx *
wss_dsig_ctx_inbound(void)
{
	xmlSecTransformId ref_ids[2];
	xmlSecDSigCtxPtr ctx = wss_dsig_ctx_new(1);
	size_t i;

	if (ctx == NULL)
		return NULL;
	ref_ids[0] = wss_swa_content_sig_id();
	ref_ids[1] = wss_swa_complete_sig_id();
	ctx->enabledReferenceUris = xmlSecTransformUriTypeSameDocument |
	    xmlSecTransformUriTypeRemote;
	/* second guard on each reference's transform chain (wss_swa.c) */
	ctx->referencePreExecuteCallback = wss_swa_pre_exec;
	/* KeyInfo is never read (signKey is set first); were it read, only
	 * X509Data would count, never KeyValue */
	if (xmlSecPtrListAdd(&ctx->keyInfoReadCtx.enabledKeyData,
	    (xmlSecPtr)(uintptr_t)xmlSecKeyDataX509Id) < 0) {
		xmlSecDSigCtxDestroy(ctx);
		return NULL;
	}
	for (i = 0; i < 2; i++) {
		if (ref_ids[i] == NULL ||
		    xmlSecDSigCtxEnableReferenceTransform(ctx,
		    ref_ids[i]) < 0) {
			xmlSecDSigCtxDestroy(ctx);
			return NULL;
		}
	}
	return ctx;
}

/* Does this attribute carry an element identifier we resolve "#x" to? */
static int
wss_is_id_attr(const xmlAttr *attr)
{
	const xmlChar *ns = attr->ns != NULL ? attr->ns->href : NULL;

	/* ID too (SAML-style, issue 3 item 1): never resolved by us, but one
	 * value on two elements is refused whatever the attribute's spelling */
	if (ns == NULL)
		return xmlStrEqual(attr->name, (const xmlChar *)"Id") ||
		    xmlStrEqual(attr->name, (const xmlChar *)"id") ||
		    xmlStrEqual(attr->name, (const xmlChar *)"ID");
	if (xmlStrEqual(ns, (const xmlChar *)NS_WSU))
		return xmlStrEqual(attr->name, (const xmlChar *)"Id");
	return xmlStrEqual(ns, XML_XML_NAMESPACE) &&
	    xmlStrEqual(attr->name, (const xmlChar *)"id");
}

/*
 * Register one ID attribute: 0 ok (also when the value is already bound to
 * the same element), 1 the value names another element, -1 out of memory.
 */
static int
wss_id_add(xmlDocPtr doc, xmlAttrPtr attr)
{
	xmlChar *value = xmlNodeListGetString(doc, attr->children, 1);
	xmlAttrPtr seen;
	int rc = 0;

	if (value == NULL || value[0] == '\0')
		goto out; /* an empty Id cannot be referenced */
	seen = xmlGetID(doc, value);
	if (seen == NULL)
		rc = xmlAddID(NULL, doc, value, attr) != NULL ? 0 : -1;
	else if (seen != attr && (seen->type != XML_ATTRIBUTE_NODE ||
	    seen->parent != attr->parent))
		rc = 1;
out:
	xmlFree(value);
	return rc;
}

/* Pre-order walk of the element tree below top (entity content excluded). */
static xmlNodePtr
wss_walk_next(xmlNodePtr node, const xmlNode *top)
{
	if (node->type == XML_ELEMENT_NODE && node->children != NULL)
		return node->children;
	while (node != top && node->next == NULL)
		node = node->parent;
	return node == top ? NULL : node->next;
}

/* Index all ID attributes of doc; see wss.h. */
int
wss_ids_index(xmlDocPtr doc, struct err *err)
{
	xmlNodePtr root = xmlDocGetRootElement(doc), n;
	xmlAttrPtr attr;
	int rc = 0;

	for (n = root; n != NULL && rc == 0; n = wss_walk_next(n, root)) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		for (attr = n->properties; attr != NULL && rc == 0;
		    attr = attr->next)
			if (wss_is_id_attr(attr))
				rc = wss_id_add(doc, attr);
	}
	if (rc == 1) {
		err_set(err, ERR_EBMS, "EBMS:0101",
		    "signature check failed: duplicate id");
		err_detail(err, "one Id value on two elements (possible "
		    "wrapping attack)");
	} else if (rc == -1) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	return rc == 0 ? 0 : -1;
}

/* The element whose indexed Id equals id, or NULL. */
xmlNodePtr
wss_id_find(xmlDocPtr doc, const char *id)
{
	xmlAttrPtr attr = xmlGetID(doc, (const xmlChar *)id);

	if (attr == NULL || attr->type != XML_ATTRIBUTE_NODE)
		return NULL;
	return attr->parent;
}

/* "#" + NCName and nothing else; see wss.h. */
int
wss_id_ref_ok(const char *uri)
{
	return uri != NULL && uri[0] == '#' &&
	    xmlValidateNCName((const xmlChar *)uri + 1, 0) == 0;
}

/* The SOAP 1.2 or 1.1 Envelope element of doc, or NULL. */
xmlNodePtr
wss_envelope(xmlDocPtr doc, const char **ret_ns)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);

	if (xml_is(root, NS_SOAP12, "Envelope"))
		*ret_ns = NS_SOAP12;
	else if (xml_is(root, NS_SOAP11, "Envelope"))
		*ret_ns = NS_SOAP11;
	else
		root = NULL;
	return root;
}
