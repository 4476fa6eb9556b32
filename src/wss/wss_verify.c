/*
 * wss_verify.c — verification of a signed envelope against one known
 * certificate (`as4gw push` checking the Receipt or eb:Error it gets back).
 *
 * The key comes only from the certificate the caller trusts, never from the
 * message (KeyInfo is ignored): RSA, ECDSA or Ed25519 (eDelivery AS4 2.0
 * Receipts), the SignatureValue checked over SignedInfo first by
 * wss_sigvalue_check() (the method fits the key; ECDSA raw r || s only).
 * Duplicate Id values are refused before xmlsec runs, and after a valid
 * signature the references are resolved by us to elements and compared by
 * node identity with eb:Messaging and the SOAP Body of this envelope (XML
 * signature wrapping defence; DESIGN.md "Security rules").  Every failure is EBMS:0101 FailedAuthentication (ebMS3 Core
 * 6.7.2); the reason goes to err.detail only.
 */
#include "wss.h"

#include <openssl/err.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>
#include <xmlsec/list.h>
#include <xmlsec/xmldsig.h>

#include "../xml/xml.h"
#include "wss_int.h"

/* Every signature method a Receipt we asked for may use. */
#define WSS_VERIFY_SIG_BITS (WSS_SIG_RSA_SHA256 | WSS_SIG_RSA_SHA384 |      \
	WSS_SIG_RSA_SHA512 | WSS_SIG_ECDSA_SHA256 | WSS_SIG_ECDSA_SHA384 |   \
	WSS_SIG_ECDSA_SHA512 | WSS_SIG_ED25519)

/* The elements a verification looks at. */
struct wss_verify_targets {
	xmlNodePtr env, header, body, messaging, signature;
};

/* Record an EBMS:0101 failure with a log-only reason. */
static int
wss_verify_fail(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "signature check failed");
	err_detail(err, "%s", why);
	return -1;
}

/*
 * Find the envelope's parts: exactly one Header, Body, eb:Messaging and
 * wsse:Security header block, and exactly one ds:Signature in it.
 */
static int
wss_verify_locate(xmlDocPtr doc, struct wss_verify_targets *t,
    struct err *err)
{
	const char *soap = NULL;
	xmlNodePtr sec;

	t->env = wss_envelope(doc, &soap);
	if (t->env == NULL)
		return wss_verify_fail(err, "not a SOAP envelope");
	t->header = xml_child(t->env, soap, "Header");
	t->body = xml_child(t->env, soap, "Body");
	if (xml_count(t->env, soap, "Header") != 1 ||
	    xml_count(t->env, soap, "Body") != 1)
		return wss_verify_fail(err, "need one SOAP Header and Body");
	t->messaging = xml_child(t->header, NS_EB, "Messaging");
	if (xml_count(t->header, NS_EB, "Messaging") != 1)
		return wss_verify_fail(err, "need exactly one eb:Messaging");
	sec = xml_child(t->header, NS_WSSE, "Security");
	if (xml_count(t->header, NS_WSSE, "Security") != 1)
		return wss_verify_fail(err, "need exactly one wsse:Security");
	t->signature = xml_child(sec, NS_DS, "Signature");
	if (xml_count(sec, NS_DS, "Signature") != 1)
		return wss_verify_fail(err, "need exactly one ds:Signature");
	return 0;
}

/*
 * After xmlsec found the signature valid: every SignedInfo reference must
 * have verified and name an element by Id ("#id"), and together they must
 * cover this envelope's eb:Messaging and SOAP Body (node identity).
 */
static int
wss_verify_coverage(xmlDocPtr doc, xmlSecDSigCtxPtr ctx,
    const struct wss_verify_targets *t, struct err *err)
{
	xmlSecSize i, n = xmlSecPtrListGetSize(&ctx->signedInfoReferences);
	xmlSecDSigReferenceCtxPtr ref;
	int have_messaging = 0, have_body = 0;
	xmlNodePtr node;

	for (i = 0; i < n; i++) {
		ref = xmlSecPtrListGetItem(&ctx->signedInfoReferences, i);
		if (ref == NULL || ref->status != xmlSecDSigStatusSucceeded)
			return wss_verify_fail(err, "reference not verified");
		/* plain "#NCName" only: no XPointer, no escapes that xmlsec
		 * and wss_id_find() might read differently */
		if (!wss_id_ref_ok((const char *)ref->uri))
			return wss_verify_fail(err, "reference is not \"#id\"");
		node = wss_id_find(doc, (const char *)ref->uri + 1);
		if (node == NULL)
			return wss_verify_fail(err, "no element with that Id");
		have_messaging |= node == t->messaging;
		have_body |= node == t->body;
	}
	if (!have_messaging)
		return wss_verify_fail(err, "eb:Messaging is not signed");
	if (!have_body)
		return wss_verify_fail(err, "SOAP Body is not signed");
	return 0;
}

/* Verify the envelope's signature with cert's public key; see wss.h. */
int
wss_verify_envelope(xmlDocPtr doc, const struct wss_cert *cert,
    struct err *err)
{
	struct wss_verify_targets t = { 0 };
	xmlSecDSigCtxPtr ctx = NULL;
	struct arena *a = arena_new(0);
	int rc = -1;

	wss_xmlsec_reset();
	if (a == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (wss_verify_locate(doc, &t, err) < 0 ||
	    wss_ids_index(doc, err) < 0 ||
	    wss_sigvalue_check(a, t.signature, wss_cert_x509(cert),
	    WSS_VERIFY_SIG_BITS, err) < 0)
		goto out;
	ctx = wss_dsig_ctx_new(1);
	if (ctx == NULL || (ctx->signKey = wss_cert_xmlsec(cert)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not set up signature "
		    "verification");
		wss_xmlsec_detail(err);
		goto out;
	}
	if (xmlSecDSigCtxVerify(ctx, t.signature) < 0) {
		wss_verify_fail(err, "signature not processable");
		wss_xmlsec_detail(err);
		goto out;
	}
	if (ctx->status != xmlSecDSigStatusSucceeded) {
		wss_verify_fail(err, "signature or digest value mismatch");
		wss_xmlsec_detail(err);
		goto out;
	}
	if (wss_verify_coverage(doc, ctx, &t, err) < 0)
		goto out;
	rc = 0;
out:
	if (ctx != NULL)
		xmlSecDSigCtxDestroy(ctx);
	arena_free(a);
	ERR_clear_error();
	return rc;
}
