/*
 * wss_xform — the scaffolding our own xmlsec transform klasses share
 * (wss_eddsa.c: the eddsa-ed25519 SignatureMethod; wss_oaep.c: RSA-OAEP
 * key transport): where a transform keeps its state, the key it asks
 * xmlsec for, the reference it keeps to that key, and the status steps of
 * an execute method that collects its whole input (xmlsec 1.2
 * transforms.h, xmlSecTransformKlass).
 */
#include "wss_int.h"

#include <openssl/evp.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>
#include <xmlsec/transforms.h>

/* See wss_int.h: the state after the xmlSecTransform. */
void *
wss_xform_state(xmlSecTransformPtr t)
{
	return (void *)((xmlSecByte *)t + sizeof(xmlSecTransform));
}

/* See wss_int.h: a setKeyReq method's answer. */
void
wss_xform_key_req(xmlSecKeyReqPtr req, xmlSecKeyDataId id, int private_key,
    xmlSecKeyUsage usage)
{
	req->keyId = id;
	req->keyType = private_key ? xmlSecKeyDataTypePrivate :
	    xmlSecKeyDataTypePublic;
	req->keyUsage = usage;
}

/* See wss_int.h: the key a setKey method keeps. */
int
wss_xform_key_ref(EVP_PKEY **slot, EVP_PKEY *pkey)
{
	if (pkey == NULL || EVP_PKEY_up_ref(pkey) != 1)
		return -1;
	EVP_PKEY_free(*slot);
	*slot = pkey;
	return 0;
}

/* See wss_int.h: None -> Working; a finished transform takes only an
 * empty final push. */
int
wss_xform_begin(xmlSecTransformPtr t)
{
	if (t->status == xmlSecTransformStatusNone)
		t->status = xmlSecTransformStatusWorking;
	if (t->status == xmlSecTransformStatusWorking)
		return 1;
	return t->status == xmlSecTransformStatusFinished &&
	    xmlSecBufferGetSize(&t->inBuf) == 0 ? 0 : -1;
}
