/*
 * wss_oaep.c — RSA key transport for XML Encryption as xmlsec transforms on
 * OpenSSL 3 EVP, for what xmlsec 1.2.37 lacks:
 *  - http://www.w3.org/2009/xmlenc11#rsa-oaep with ds:DigestMethod and
 *    xenc11:MGF children (XML Encryption 1.1, 5.5.2), as eDelivery AS4 1.15
 *    (5.1.6, "Key Transport") requires it with SHA-256 and mgf1sha256;
 *  - http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p with a ds:DigestMethod
 *    other than SHA-1 (Domibus, Holodeck and AS4.NET send SHA-256); MGF1 is
 *    always SHA-1 there.
 * Both read an optional xenc:OAEPparams (the OAEP label).  The sender side
 * that uses them for `as4gw push --encrypt` is src/sender/sender_encrypt.c.
 *
 * The klasses are deliberately not registered globally: xmlsec 1.2.37 looks
 * an Algorithm up in its global list first (where its own rsa-oaep-mgf1p,
 * SHA-1 only, would win) and applies a context's enabledTransforms list only
 * afterwards.  wss_oaep_run() instead picks the klass from the Algorithm URI
 * — which the caller has already checked against the leg's allowlist — and
 * runs it in a private xmlSecTransformCtx, so no other klass can handle our
 * key transport.  rsa-1_5 (only when a P-Mode allows it) runs xmlsec's own
 * transform the same way.
 */
#include "wss_int.h"

#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/base64.h>
#include <xmlsec/buffer.h>
#include <xmlsec/keys.h>
#include <xmlsec/keysdata.h>
#include <xmlsec/transforms.h>
#include <xmlsec/openssl/crypto.h>
#include <xmlsec/openssl/evp.h>

#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_OAEP_XENC11 NS_XENC11
#define WSS_OAEP_DSIG_MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define WSS_OAEP_URI_XENC11 WSS_OAEP_XENC11 "rsa-oaep"
#define WSS_OAEP_URI_MGF1P NS_XENC "rsa-oaep-mgf1p"
#define WSS_OAEP_URI_PKCS1 NS_XENC "rsa-1_5"

/* Longest OAEP label (xenc:OAEPparams) we accept; real senders send none. */
#define WSS_OAEP_MAX_LABEL 256
/* Largest RSA modulus we handle, in bytes (8192 bits). */
#define WSS_OAEP_MAX_IN 1024

/* Per-transform state, placed right after the xmlSecTransform. */
struct wss_oaep_ctx {
	const EVP_MD *md;                 /* OAEP digest (DigestMethod) */
	const EVP_MD *mgf;                /* MGF1 digest */
	unsigned char label[WSS_OAEP_MAX_LABEL];
	size_t label_len;
	EVP_PKEY *pkey;                   /* our reference to the RSA key */
};

#define WSS_OAEP_SIZE (sizeof(xmlSecTransform) + sizeof(struct wss_oaep_ctx))

/* A digest by its DigestMethod URI and its xenc11 MGF URI. */
struct wss_oaep_md {
	const char *uri;
	const char *mgf_uri;
	const EVP_MD *(*md)(void);
};

/* XML Encryption 1.1, 5.4.2 (digests) and 5.5.2 (MGF1 variants). */
static const struct wss_oaep_md wss_oaep_mds[] = {
	{ NS_DS "sha1", WSS_OAEP_XENC11 "mgf1sha1", EVP_sha1 },
	{ WSS_OAEP_DSIG_MORE "sha224", WSS_OAEP_XENC11 "mgf1sha224",
	    EVP_sha224 },
	{ NS_XENC "sha256", WSS_OAEP_XENC11 "mgf1sha256", EVP_sha256 },
	{ WSS_OAEP_DSIG_MORE "sha384", WSS_OAEP_XENC11 "mgf1sha384",
	    EVP_sha384 },
	{ NS_XENC "sha512", WSS_OAEP_XENC11 "mgf1sha512", EVP_sha512 },
};

#define WSS_OAEP_N_MDS (sizeof(wss_oaep_mds) / sizeof(wss_oaep_mds[0]))

/* Our state inside a transform object of one of our klasses. */
static struct wss_oaep_ctx *
wss_oaep_get(xmlSecTransformPtr t)
{
	return wss_xform_state(t);
}

/* The digest named by a DigestMethod (mgf == 0) or MGF (mgf == 1)
 * Algorithm attribute of node, or NULL when absent or unknown. */
static const EVP_MD *
wss_oaep_digest(const xmlNode *node, int mgf)
{
	xmlChar *uri = xmlGetNoNsProp(node, (const xmlChar *)"Algorithm");
	const EVP_MD *md = NULL;
	size_t i;

	for (i = 0; uri != NULL && i < WSS_OAEP_N_MDS; i++) {
		const char *want = mgf ? wss_oaep_mds[i].mgf_uri :
		    wss_oaep_mds[i].uri;

		if (strcmp((const char *)uri, want) == 0)
			md = wss_oaep_mds[i].md();
	}
	xmlFree(uri);
	return md;
}

/* Decode xenc:OAEPparams (base64) into the label; -1 when too long or bad. */
static int
wss_oaep_label(const xmlNode *node, struct wss_oaep_ctx *c)
{
	xmlChar *text = xmlNodeGetContent(node);
	xmlSecSize n = 0;
	int rc = -1;

	/* 4/3 of the label plus generous room for white space */
	if (text != NULL && xmlStrlen(text) <= 2 * WSS_OAEP_MAX_LABEL &&
	    xmlSecBase64Decode_ex(text, c->label, sizeof(c->label), &n) == 0) {
		c->label_len = n;
		rc = 0;
	}
	xmlFree(text);
	return rc;
}

/* Is node a text node holding only white space (or a comment)? */
static int
wss_oaep_ignorable(const xmlNode *node)
{
	if (node->type == XML_COMMENT_NODE)
		return 1;
	return node->type == XML_TEXT_NODE && xmlIsBlankNode(node);
}

/*
 * The parameters in the children of an xenc:EncryptionMethod: at most one
 * ds:DigestMethod (SHA-1 when absent), xenc11:MGF (only when xenc11; MGF1
 * with SHA-1 when absent) and xenc:OAEPparams.  Anything else, a repeated
 * child or an unknown digest is refused (-1).
 */
static int
wss_oaep_params(const xmlNode *method, int xenc11, struct wss_oaep_ctx *c)
{
	const xmlNode *n;
	int seen_md = 0, seen_mgf = 0, seen_label = 0, rc = 0;

	c->md = EVP_sha1();
	c->mgf = EVP_sha1();
	c->label_len = 0;
	for (n = method->children; n != NULL && rc == 0; n = n->next) {
		if (wss_oaep_ignorable(n))
			continue;
		if (xml_is(n, NS_DS, "DigestMethod") && seen_md++ == 0)
			rc = (c->md = wss_oaep_digest(n, 0)) != NULL ? 0 : -1;
		else if (xenc11 && xml_is(n, WSS_OAEP_XENC11, "MGF") &&
		    seen_mgf++ == 0)
			rc = (c->mgf = wss_oaep_digest(n, 1)) != NULL ? 0 : -1;
		else if (xml_is(n, NS_XENC, "OAEPparams") && seen_label++ == 0)
			rc = wss_oaep_label(n, c);
		else
			rc = -1;
	}
	return rc;
}

/* xmlsec initialize method: SHA-1 defaults, no key. */
static int
wss_oaep_initialize(xmlSecTransformPtr t)
{
	struct wss_oaep_ctx *c = wss_oaep_get(t);

	memset(c, 0, sizeof(*c));
	c->md = EVP_sha1();
	c->mgf = EVP_sha1();
	return 0;
}

/* xmlsec finalize method: drop the key reference, wipe the state. */
static void
wss_oaep_finalize(xmlSecTransformPtr t)
{
	struct wss_oaep_ctx *c = wss_oaep_get(t);

	EVP_PKEY_free(c->pkey);
	OPENSSL_cleanse(c, sizeof(*c));
}

/* xmlsec readNode method of the xenc11 rsa-oaep klass. */
static int
wss_oaep_read_xenc11(xmlSecTransformPtr t, xmlNodePtr node,
    xmlSecTransformCtxPtr tctx)
{
	(void)tctx;
	return wss_oaep_params(node, 1, wss_oaep_get(t));
}

/* xmlsec readNode method of the rsa-oaep-mgf1p klass (no MGF child). */
static int
wss_oaep_read_mgf1p(xmlSecTransformPtr t, xmlNodePtr node,
    xmlSecTransformCtxPtr tctx)
{
	(void)tctx;
	return wss_oaep_params(node, 0, wss_oaep_get(t));
}

/* xmlsec setKeyReq method: an RSA key, private to decrypt, public to
 * encrypt. */
static int
wss_oaep_set_key_req(xmlSecTransformPtr t, xmlSecKeyReqPtr req)
{
	int encrypt = t->operation == xmlSecTransformOperationEncrypt;

	wss_xform_key_req(req, xmlSecOpenSSLKeyDataRsaId, !encrypt,
	    encrypt ? xmlSecKeyUsageEncrypt : xmlSecKeyUsageDecrypt);
	return 0;
}

/* xmlsec setKey method: keep a reference to the key's EVP_PKEY. */
static int
wss_oaep_set_key(xmlSecTransformPtr t, xmlSecKeyPtr key)
{
	struct wss_oaep_ctx *c = wss_oaep_get(t);
	xmlSecKeyDataPtr value = xmlSecKeyGetValue(key);

	if (value == NULL ||
	    !xmlSecKeyDataCheckId(value, xmlSecOpenSSLKeyDataRsaId))
		return -1;
	return wss_xform_key_ref(&c->pkey,
	    xmlSecOpenSSLKeyDataRsaGetEvp(value));
}

/* An EVP context for RSA-OAEP with the transform's digests and label. */
static EVP_PKEY_CTX *
wss_oaep_pctx(const struct wss_oaep_ctx *c, int encrypt)
{
	EVP_PKEY_CTX *pctx = EVP_PKEY_CTX_new(c->pkey, NULL);
	unsigned char *label = NULL;
	int ok;

	ok = pctx != NULL && (encrypt ? EVP_PKEY_encrypt_init(pctx) :
	    EVP_PKEY_decrypt_init(pctx)) > 0 &&
	    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_OAEP_PADDING) > 0 &&
	    EVP_PKEY_CTX_set_rsa_oaep_md(pctx, c->md) > 0 &&
	    EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, c->mgf) > 0;
	if (ok && c->label_len > 0) {
		/* set0 takes ownership of the copy only on success */
		label = OPENSSL_memdup(c->label, c->label_len);
		ok = label != NULL && EVP_PKEY_CTX_set0_rsa_oaep_label(pctx,
		    label, (int)c->label_len) > 0;
		if (ok)
			label = NULL;
	}
	OPENSSL_free(label);
	if (!ok) {
		EVP_PKEY_CTX_free(pctx);
		pctx = NULL;
	}
	return pctx;
}

/* Encrypt or decrypt the whole input buffer into the output buffer. */
static int
wss_oaep_process(xmlSecTransformPtr t)
{
	struct wss_oaep_ctx *c = wss_oaep_get(t);
	xmlSecBufferPtr in = &t->inBuf, out = &t->outBuf;
	int encrypt = t->operation == xmlSecTransformOperationEncrypt;
	EVP_PKEY_CTX *pctx = NULL;
	size_t out_len;
	int rc = -1, r;

	if (c->pkey == NULL || xmlSecBufferGetSize(out) != 0 ||
	    (pctx = wss_oaep_pctx(c, encrypt)) == NULL)
		goto out;
	out_len = (size_t)EVP_PKEY_get_size(c->pkey);
	if (out_len == 0 || out_len > WSS_OAEP_MAX_IN ||
	    xmlSecBufferSetMaxSize(out, (xmlSecSize)out_len) < 0)
		goto out;
	if (encrypt)
		r = EVP_PKEY_encrypt(pctx, xmlSecBufferGetData(out), &out_len,
		    xmlSecBufferGetData(in), xmlSecBufferGetSize(in));
	else
		r = EVP_PKEY_decrypt(pctx, xmlSecBufferGetData(out), &out_len,
		    xmlSecBufferGetData(in), xmlSecBufferGetSize(in));
	if (r <= 0 || xmlSecBufferSetSize(out, (xmlSecSize)out_len) < 0 ||
	    xmlSecBufferRemoveHead(in, xmlSecBufferGetSize(in)) < 0)
		goto out;
	rc = 0;
out:
	EVP_PKEY_CTX_free(pctx);
	ERR_clear_error();
	return rc;
}

/*
 * xmlsec execute method: collect the input (at most one RSA block) and
 * process it when the last chunk arrived.
 */
static int
wss_oaep_execute(xmlSecTransformPtr t, int last, xmlSecTransformCtxPtr tctx)
{
	int r;

	(void)tctx;
	if ((r = wss_xform_begin(t)) != 1)
		return r;     /* finished: only an empty final push may follow */
	if (xmlSecBufferGetSize(&t->inBuf) > WSS_OAEP_MAX_IN)
		return -1;
	if (!last)
		return 0;
	if (wss_oaep_process(t) < 0)
		return -1;
	t->status = xmlSecTransformStatusFinished;
	return 0;
}

static const xmlSecTransformKlass wss_oaep_xenc11_klass = {
	sizeof(xmlSecTransformKlass), WSS_OAEP_SIZE,
	(const xmlChar *)"wss-rsa-oaep-xenc11",
	(const xmlChar *)WSS_OAEP_URI_XENC11,
	xmlSecTransformUsageEncryptionMethod,
	wss_oaep_initialize, wss_oaep_finalize,
	wss_oaep_read_xenc11, NULL,
	wss_oaep_set_key_req, wss_oaep_set_key, NULL,
	xmlSecTransformDefaultGetDataType,
	xmlSecTransformDefaultPushBin, xmlSecTransformDefaultPopBin,
	NULL, NULL,
	wss_oaep_execute,
	NULL, NULL,
};

static const xmlSecTransformKlass wss_oaep_mgf1p_klass = {
	sizeof(xmlSecTransformKlass), WSS_OAEP_SIZE,
	(const xmlChar *)"wss-rsa-oaep-mgf1p",
	(const xmlChar *)WSS_OAEP_URI_MGF1P,
	xmlSecTransformUsageEncryptionMethod,
	wss_oaep_initialize, wss_oaep_finalize,
	wss_oaep_read_mgf1p, NULL,
	wss_oaep_set_key_req, wss_oaep_set_key, NULL,
	xmlSecTransformDefaultGetDataType,
	xmlSecTransformDefaultPushBin, xmlSecTransformDefaultPopBin,
	NULL, NULL,
	wss_oaep_execute,
	NULL, NULL,
};

/* The xenc11 rsa-oaep klass. */
xmlSecTransformId
wss_oaep_xenc11_id(void)
{
	return &wss_oaep_xenc11_klass;
}

/* The rsa-oaep-mgf1p klass (any DigestMethod, MGF1-SHA-1). */
xmlSecTransformId
wss_oaep_mgf1p_id(void)
{
	return &wss_oaep_mgf1p_klass;
}

/* The klass for an EncryptionMethod's Algorithm, or NULL when unknown. */
static xmlSecTransformId
wss_oaep_klass_of(const xmlNode *method)
{
	xmlChar *uri = xmlGetNoNsProp(method, (const xmlChar *)"Algorithm");
	xmlSecTransformId id = NULL;

	if (uri == NULL)
		return NULL;
	if (xmlStrEqual(uri, (const xmlChar *)WSS_OAEP_URI_XENC11))
		id = wss_oaep_xenc11_id();
	else if (xmlStrEqual(uri, (const xmlChar *)WSS_OAEP_URI_MGF1P))
		id = wss_oaep_mgf1p_id();
	else if (xmlStrEqual(uri, (const xmlChar *)WSS_OAEP_URI_PKCS1))
		id = xmlSecOpenSSLTransformRsaPkcs1Id;
	xmlFree(uri);
	return id;
}

/* See wss_int.h: parameters checked without any cryptography. */
int
wss_oaep_usable(const xmlNode *method)
{
	xmlSecTransformId id = wss_oaep_klass_of(method);
	struct wss_oaep_ctx c;
	const xmlNode *n;

	if (id == NULL)
		return 0;
	if (id == wss_oaep_xenc11_id() || id == wss_oaep_mgf1p_id())
		return wss_oaep_params(method, id == wss_oaep_xenc11_id(),
		    &c) == 0;
	for (n = method->children; n != NULL; n = n->next)
		if (!wss_oaep_ignorable(n))
			return 0; /* rsa-1_5 has no parameters */
	return 1;
}

/* Check the key against the transform's requirements and hand it over. */
static int
wss_oaep_key(xmlSecTransformPtr t, xmlSecKeyPtr key)
{
	xmlSecKeyReq req;
	int rc = -1;

	if (xmlSecKeyReqInitialize(&req) < 0)
		return -1;
	if (xmlSecTransformSetKeyReq(t, &req) == 0 &&
	    xmlSecKeyMatch(key, NULL, &req) == 1 &&
	    xmlSecTransformSetKey(t, key) == 0)
		rc = 0;
	xmlSecKeyReqFinalize(&req);
	return rc;
}

/* See wss_int.h: key transport through our xmlsec transform. */
int
wss_oaep_run(xmlNodePtr method, xmlSecKeyPtr key, int encrypt,
    const unsigned char *in, size_t in_len, unsigned char *out,
    size_t out_size, size_t *ret_len)
{
	xmlSecTransformId id = wss_oaep_klass_of(method);
	xmlSecTransformCtxPtr ctx = NULL;
	xmlSecTransformPtr t;
	xmlSecSize n;
	int rc = -1;

	if (id == NULL || key == NULL || in_len == 0 ||
	    in_len > WSS_OAEP_MAX_IN || (ctx = xmlSecTransformCtxCreate()) ==
	    NULL || (t = xmlSecTransformCtxCreateAndAppend(ctx, id)) == NULL)
		goto out;
	t->operation = encrypt ? xmlSecTransformOperationEncrypt :
	    xmlSecTransformOperationDecrypt;
	if ((id->readNode != NULL && id->readNode(t, method, ctx) < 0) ||
	    wss_oaep_key(t, key) < 0 ||
	    xmlSecTransformCtxBinaryExecute(ctx, in, (xmlSecSize)in_len) < 0 ||
	    ctx->result == NULL)
		goto out;
	n = xmlSecBufferGetSize(ctx->result);
	if (n == 0 || n > out_size)
		goto out;
	memcpy(out, xmlSecBufferGetData(ctx->result), n);
	*ret_len = n;
	rc = 0;
out:
	if (ctx != NULL)
		xmlSecTransformCtxDestroy(ctx);
	ERR_clear_error();
	return rc;
}
