/*
 * wss_eddsa.c — Ed25519 signatures for XML Signature as an xmlsec transform
 * on OpenSSL 3 EVP, which xmlsec 1.2.37 lacks:
 *   http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519
 * (RFC 9231 2.3.9: "pure" Ed25519 of RFC 8032 5.1 over the canonical
 * SignedInfo, no prehash, no context; the SignatureValue is the 64 octets
 * R || S).  eDelivery AS4 2.0 (ENTSOG AS4 4.0 2.2.6.2.1) signs with it.
 *
 * xmlsec 1.2.37's xmlSecOpenSSLEvpKeyAdopt refuses Ed25519 keys, so this
 * file also has its own xmlsec key data klass holding the EVP_PKEY
 * (wss_key_adopt() in wss.c hands Ed25519 keys to wss_eddsa_adopt()).  The
 * key data is never read from or written to XML (usage 0): the key comes
 * from a certificate the caller chose, as for every other signature.
 *
 * Unlike rsa-oaep (wss_oaep.c) the transform is registered globally:
 * xmlsec's dsig code looks a SignatureMethod up in the global list, and no
 * klass of xmlsec's own claims this URI.  Ed25519ph, Ed25519ctx and Ed448
 * have other URIs and stay unknown (refused).  OpenSSL's verification
 * refuses a non-canonical S (S >= L, RFC 8032 5.1.7 step 1).
 */
#include "wss_int.h"

#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/buffer.h>
#include <xmlsec/keys.h>
#include <xmlsec/keysdata.h>
#include <xmlsec/transforms.h>

/* RFC 8032 5.1.6: a signature is R || S, 32 octets each. */
#define WSS_EDDSA_SIG_LEN 64
/* What we sign or verify is a canonical SignedInfo: at most 1 MiB, as
 * wss_sigvalue.c bounds it. */
#define WSS_EDDSA_MAX_IN ((xmlSecSize)1 << 20)

/* ---- the key data klass: an EVP_PKEY of type Ed25519 ---- */

#define WSS_EDDSA_KD_SIZE (sizeof(xmlSecKeyData) + sizeof(EVP_PKEY *))

/* The EVP_PKEY slot right after the xmlSecKeyData. */
static EVP_PKEY **
wss_eddsa_slot(xmlSecKeyDataPtr data)
{
	return (EVP_PKEY **)(void *)((xmlSecByte *)data +
	    sizeof(xmlSecKeyData));
}

/* xmlsec initialize method: no key yet. */
static int
wss_eddsa_kd_init(xmlSecKeyDataPtr data)
{
	*wss_eddsa_slot(data) = NULL;
	return 0;
}

/* xmlsec duplicate method: share the (immutable) key by reference. */
static int
wss_eddsa_kd_dup(xmlSecKeyDataPtr dst, xmlSecKeyDataPtr src)
{
	EVP_PKEY *pkey = *wss_eddsa_slot(src);

	if (pkey != NULL && EVP_PKEY_up_ref(pkey) != 1)
		return -1;
	EVP_PKEY_free(*wss_eddsa_slot(dst));
	*wss_eddsa_slot(dst) = pkey;
	return 0;
}

/* xmlsec finalize method: drop our reference. */
static void
wss_eddsa_kd_finalize(xmlSecKeyDataPtr data)
{
	EVP_PKEY_free(*wss_eddsa_slot(data));
	*wss_eddsa_slot(data) = NULL;
}

/* xmlsec getType method: public, and private too when the key has its
 * private half. */
static xmlSecKeyDataType
wss_eddsa_kd_type(xmlSecKeyDataPtr data)
{
	EVP_PKEY *pkey = *wss_eddsa_slot(data);
	size_t len = 0;

	if (pkey == NULL)
		return xmlSecKeyDataTypeUnknown;
	if (EVP_PKEY_get_raw_private_key(pkey, NULL, &len) == 1 && len > 0)
		return xmlSecKeyDataTypePrivate | xmlSecKeyDataTypePublic;
	ERR_clear_error();
	return xmlSecKeyDataTypePublic;
}

/* xmlsec getSize method: 256 bits. */
static xmlSecSize
wss_eddsa_kd_size(xmlSecKeyDataPtr data)
{
	return *wss_eddsa_slot(data) != NULL ? 256 : 0;
}

static const xmlSecKeyDataKlass wss_eddsa_kd_klass = {
	sizeof(xmlSecKeyDataKlass), WSS_EDDSA_KD_SIZE,
	(const xmlChar *)"wss-ed25519",
	xmlSecKeyDataUsageUnknown, /* never read from or written to XML */
	NULL, NULL, NULL,
	wss_eddsa_kd_init, wss_eddsa_kd_dup, wss_eddsa_kd_finalize, NULL,
	wss_eddsa_kd_type, wss_eddsa_kd_size, NULL,
	NULL, NULL, NULL, NULL,
	NULL, NULL,
	NULL, NULL,
};

/* See wss_int.h: the Ed25519 key data klass. */
xmlSecKeyDataId
wss_eddsa_key_id(void)
{
	return &wss_eddsa_kd_klass;
}

/* See wss_int.h: an Ed25519 EVP_PKEY as xmlsec key data (consumed). */
xmlSecKeyDataPtr
wss_eddsa_adopt(EVP_PKEY *pkey)
{
	xmlSecKeyDataPtr data = NULL;

	if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_ED25519 ||
	    (data = xmlSecKeyDataCreate(wss_eddsa_key_id())) == NULL) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	*wss_eddsa_slot(data) = pkey;
	return data;
}

/* ---- the signature transform ---- */

/* Per-transform state, placed right after the xmlSecTransform. */
struct wss_eddsa_ctx {
	EVP_PKEY *pkey;     /* our reference to the key */
	xmlSecBuffer data;  /* the octets signed or verified, kept whole:
	                     * pure Ed25519 hashes the message twice */
	int have_data;      /* data was initialised */
};

#define WSS_EDDSA_SIZE (sizeof(xmlSecTransform) + sizeof(struct wss_eddsa_ctx))

/* Our state inside a transform object of our klass. */
static struct wss_eddsa_ctx *
wss_eddsa_get(xmlSecTransformPtr t)
{
	return wss_xform_state(t);
}

/* xmlsec initialize method: no key, an empty buffer. */
static int
wss_eddsa_initialize(xmlSecTransformPtr t)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);

	memset(c, 0, sizeof(*c));
	if (xmlSecBufferInitialize(&c->data, 0) < 0)
		return -1;
	c->have_data = 1;
	return 0;
}

/* xmlsec finalize method: drop the key, wipe the buffer. */
static void
wss_eddsa_finalize(xmlSecTransformPtr t)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);

	EVP_PKEY_free(c->pkey);
	if (c->have_data)
		xmlSecBufferFinalize(&c->data);
	memset(c, 0, sizeof(*c));
}

/* xmlsec setKeyReq method: our Ed25519 key data, private to sign. */
static int
wss_eddsa_set_key_req(xmlSecTransformPtr t, xmlSecKeyReqPtr req)
{
	int sign = t->operation == xmlSecTransformOperationSign;

	wss_xform_key_req(req, wss_eddsa_key_id(), sign,
	    sign ? xmlSecKeyUsageSign : xmlSecKeyUsageVerify);
	return 0;
}

/* xmlsec setKey method: keep a reference to the key's EVP_PKEY. */
static int
wss_eddsa_set_key(xmlSecTransformPtr t, xmlSecKeyPtr key)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);
	xmlSecKeyDataPtr value = xmlSecKeyGetValue(key);

	if (value == NULL || !xmlSecKeyDataCheckId(value, wss_eddsa_key_id()))
		return -1;
	return wss_xform_key_ref(&c->pkey, *wss_eddsa_slot(value));
}

/* RFC 8032 5.1.6: sign the collected octets into the output buffer. */
static int
wss_eddsa_sign(xmlSecTransformPtr t)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	size_t len = WSS_EDDSA_SIG_LEN;
	int rc = -1;

	if (md == NULL || xmlSecBufferSetMaxSize(&t->outBuf,
	    WSS_EDDSA_SIG_LEN) < 0 ||
	    EVP_DigestSignInit(md, NULL, NULL, NULL, c->pkey) != 1 ||
	    EVP_DigestSign(md, xmlSecBufferGetData(&t->outBuf), &len,
	    xmlSecBufferGetData(&c->data), xmlSecBufferGetSize(&c->data)) !=
	    1 || len != WSS_EDDSA_SIG_LEN ||
	    xmlSecBufferSetSize(&t->outBuf, WSS_EDDSA_SIG_LEN) < 0)
		goto out;
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	ERR_clear_error();
	return rc;
}

/*
 * xmlsec execute method: collect the input (bounded); at the end sign it,
 * or keep it for the verify method.
 */
static int
wss_eddsa_execute(xmlSecTransformPtr t, int last, xmlSecTransformCtxPtr tctx)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);
	xmlSecSize n = xmlSecBufferGetSize(&t->inBuf);
	int r;

	(void)tctx;
	if (c->pkey == NULL)
		return -1;
	if ((r = wss_xform_begin(t)) != 1)
		return r;
	if (n > 0) {
		if (xmlSecBufferGetSize(&c->data) + n > WSS_EDDSA_MAX_IN ||
		    xmlSecBufferAppend(&c->data, xmlSecBufferGetData(&t->inBuf),
		    n) < 0 || xmlSecBufferRemoveHead(&t->inBuf, n) < 0)
			return -1;
	}
	if (!last)
		return 0;
	if (t->operation == xmlSecTransformOperationSign &&
	    wss_eddsa_sign(t) < 0)
		return -1;
	t->status = xmlSecTransformStatusFinished;
	return 0;
}

/* xmlsec verify method: RFC 8032 5.1.7 over the collected octets; the
 * status says whether the signature is valid. */
static int
wss_eddsa_verify(xmlSecTransformPtr t, const xmlSecByte *sig,
    xmlSecSize sig_len, xmlSecTransformCtxPtr tctx)
{
	struct wss_eddsa_ctx *c = wss_eddsa_get(t);
	EVP_MD_CTX *md;
	int ok;

	(void)tctx;
	if (t->operation != xmlSecTransformOperationVerify ||
	    t->status != xmlSecTransformStatusFinished || c->pkey == NULL)
		return -1;
	md = EVP_MD_CTX_new();
	ok = md != NULL && sig_len == WSS_EDDSA_SIG_LEN &&
	    EVP_DigestVerifyInit(md, NULL, NULL, NULL, c->pkey) == 1 &&
	    EVP_DigestVerify(md, sig, WSS_EDDSA_SIG_LEN,
	    xmlSecBufferGetData(&c->data), xmlSecBufferGetSize(&c->data)) == 1;
	EVP_MD_CTX_free(md);
	ERR_clear_error();
	t->status = ok ? xmlSecTransformStatusOk : xmlSecTransformStatusFail;
	return 0;
}

static const xmlSecTransformKlass wss_eddsa_klass = {
	sizeof(xmlSecTransformKlass), WSS_EDDSA_SIZE,
	(const xmlChar *)"wss-eddsa-ed25519",
	(const xmlChar *)WSS_EDDSA_URI,
	xmlSecTransformUsageSignatureMethod,
	wss_eddsa_initialize, wss_eddsa_finalize,
	NULL, NULL,
	wss_eddsa_set_key_req, wss_eddsa_set_key, wss_eddsa_verify,
	xmlSecTransformDefaultGetDataType,
	xmlSecTransformDefaultPushBin, xmlSecTransformDefaultPopBin,
	NULL, NULL,
	wss_eddsa_execute,
	NULL, NULL,
};

/* See wss_int.h: the eddsa-ed25519 signature transform klass. */
xmlSecTransformId
wss_eddsa_id(void)
{
	return &wss_eddsa_klass;
}

/* See wss_int.h: register the transform with xmlsec (once). */
int
wss_eddsa_init(struct err *err)
{
	if (xmlSecTransformIdsRegister(wss_eddsa_id()) < 0) {
		err_set(err, ERR_INTERNAL, NULL,
		    "could not register the eddsa-ed25519 transform");
		wss_xmlsec_detail(err);
		return -1;
	}
	return 0;
}
