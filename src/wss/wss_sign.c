/*
 * wss_sign.c — WS-Security for the envelopes we send (Receipts, eb:Error
 * signals, `push` messages): a wsse:Security header with the certificate as
 * BinarySecurityToken and an XML signature over elements referenced by
 * wsu:Id (WS-Security 1.1 X.509 Token Profile 3.2; eDelivery AS4 1.15,
 * 1.4.2.6) and, for `push` (src/sender/), over every attachment by "cid:"
 * with the SwA Attachment-Content-Signature-Transform (SwA Profile 1.1,
 * 5.3), the transforms verification uses too.  Modelled on the Receipt Domibus 5 sends:
 * wsse:Security is the last header block, after eb:Messaging.
 */
#include "wss.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include <libxml/chvalid.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/keys.h>
#include <xmlsec/templates.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>

#include "../mime/mime_hdr.h"
#include "../util/codec.h"
#include "../xml/xml.h"
#include "wss_int.h"

#define WSS_X509V3 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0#X509v3"
#define WSS_BASE64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"

/* More references than any message of ours needs (Messaging, Body, parts). */
#define WSS_SIGN_MAX_NODES 256
#define WSS_SIGN_MAX_PARTS 256

/*
 * A prefixed namespace declaration for href in scope at node; when there is
 * none, declare one on node, with prefix base (numbered if base is taken).
 */
static xmlNsPtr
wss_sign_ns(xmlNodePtr node, const char *href, const char *base)
{
	xmlNsPtr ns = xmlSearchNsByHref(node->doc, node, (const xmlChar *)href);
	char prefix[32];
	int i;

	if (ns != NULL && ns->prefix != NULL)
		return ns;
	(void)snprintf(prefix, sizeof(prefix), "%s", base);
	for (i = 1; i < 100 && xmlSearchNs(node->doc, node,
	    (const xmlChar *)prefix) != NULL; i++)
		(void)snprintf(prefix, sizeof(prefix), "%s%d", base, i);
	return xmlNewNs(node, (const xmlChar *)href, (const xmlChar *)prefix);
}

/*
 * The "#<wsu:Id>" reference URI for node, giving it a wsu:Id "<kind>-<uuid>"
 * when it has none.  The caller frees the result with xmlFree; NULL on
 * failure (also for an empty wsu:Id, which cannot be referenced).
 */
static xmlChar *
wss_sign_uri(xmlNodePtr node, const char *kind)
{
	xmlChar *id = xmlGetNsProp(node, (const xmlChar *)"Id",
	    (const xmlChar *)NS_WSU);
	xmlChar *uri = NULL;
	char buf[64], uuid[37];
	xmlNsPtr ns;

	if (id == NULL) {
		if (codec_uuid(uuid) < 0 ||
		    (ns = wss_sign_ns(node, NS_WSU, "wsu")) == NULL)
			goto out;
		(void)snprintf(buf, sizeof(buf), "%s-%s", kind, uuid);
		if (xmlNewNsProp(node, ns, (const xmlChar *)"Id",
		    (const xmlChar *)buf) == NULL)
			goto out;
		id = xmlStrdup((const xmlChar *)buf);
	}
	if (id != NULL && id[0] != '\0')
		uri = xmlStrncatNew((const xmlChar *)"#", id, -1);
out:
	xmlFree(id);
	return uri;
}

/* The envelope's SOAP Header, created as its first child when absent. */
xmlNodePtr
wss_sign_header(xmlNodePtr env, const char *soap)
{
	xmlNodePtr header = xml_child(env, soap, "Header");
	xmlNodePtr first;

	if (header != NULL)
		return header;
	header = xmlNewDocNode(env->doc, env->ns, (const xmlChar *)"Header",
	    NULL);
	if (header == NULL)
		return NULL;
	first = xml_child(env, NULL, NULL);
	if ((first != NULL ? xmlAddPrevSibling(first, header) :
	    xmlAddChild(env, header)) == NULL) {
		xmlFreeNode(header);
		header = NULL;
	}
	return header;
}

/* Unlink and free a node; accepts NULL. */
void
wss_sign_drop(xmlNodePtr node)
{
	if (node == NULL)
		return;
	xmlUnlinkNode(node);
	xmlFreeNode(node);
}

/*
 * Append an empty wsse:Security (mustUnderstand in the envelope's SOAP
 * version: WS-Security 1.1, 5) as the last header block; NULL on failure,
 * with nothing added.
 */
xmlNodePtr
wss_sign_security_new(xmlNodePtr header, const char *soap)
{
	xmlNodePtr sec;
	xmlNsPtr wsse, soapns;

	sec = xmlNewDocNode(header->doc, NULL, (const xmlChar *)"Security",
	    NULL);
	if (sec == NULL || xmlAddChild(header, sec) == NULL) {
		xmlFreeNode(sec);
		return NULL;
	}
	wsse = wss_sign_ns(sec, NS_WSSE, "wsse");
	soapns = wss_sign_ns(sec, soap, "env");
	if (wsse == NULL || soapns == NULL)
		goto fail;
	xmlSetNs(sec, wsse);
	if (xmlNewNsProp(sec, soapns, (const xmlChar *)"mustUnderstand",
	    (const xmlChar *)(strcmp(soap, NS_SOAP12) == 0 ? "true" : "1")) ==
	    NULL)
		goto fail;
	return sec;
fail:
	wss_sign_drop(sec);
	return NULL;
}

/*
 * Append wsse:Security as the last header block, holding the
 * BinarySecurityToken (X509v3, base64 DER).  The token's wsu:Id goes to
 * bst_uri ("#..."); on failure the partly built header is removed again.
 */
static xmlNodePtr
wss_sign_security(xmlNodePtr header, const char *soap,
    const struct wss_key *key, char *bst_uri, size_t bst_uri_size)
{
	xmlNodePtr sec, bst = NULL;
	xmlChar *uri = NULL;

	sec = wss_sign_security_new(header, soap);
	if (sec == NULL)
		return NULL;
	bst = xmlNewTextChild(sec, sec->ns,
	    (const xmlChar *)"BinarySecurityToken",
	    (const xmlChar *)wss_key_cert_b64(key));
	if (bst == NULL ||
	    xmlNewProp(bst, (const xmlChar *)"EncodingType",
	    (const xmlChar *)WSS_BASE64) == NULL ||
	    xmlNewProp(bst, (const xmlChar *)"ValueType",
	    (const xmlChar *)WSS_X509V3) == NULL ||
	    (uri = wss_sign_uri(bst, "X509")) == NULL)
		goto fail;
	(void)snprintf(bst_uri, bst_uri_size, "%s", (const char *)uri);
	xmlFree(uri);
	return sec;
fail:
	wss_sign_drop(sec);
	return NULL;
}

/* Remove the whitespace-only text nodes the xmlsec templates insert, so our
 * signatures are compact and survive parsers that drop blanks. */
static void
wss_sign_strip_blanks(xmlNodePtr node)
{
	xmlNodePtr c, next;

	for (c = node->children; c != NULL; c = next) {
		next = c->next;
		if (c->type == XML_TEXT_NODE && xmlIsBlankNode(c)) {
			xmlUnlinkNode(c);
			xmlFreeNode(c);
		} else if (c->type == XML_ELEMENT_NODE) {
			wss_sign_strip_blanks(c);
		}
	}
}

/* KeyInfo: a SecurityTokenReference to the BinarySecurityToken. */
static int
wss_sign_keyinfo(xmlNodePtr sig, xmlNsPtr wsse, const char *bst_uri)
{
	xmlNodePtr ki = xmlSecTmplSignatureEnsureKeyInfo(sig, NULL);
	xmlNodePtr str, ref;

	if (ki == NULL)
		return -1;
	str = xmlNewChild(ki, wsse, (const xmlChar *)"SecurityTokenReference",
	    NULL);
	ref = str != NULL ? xmlNewChild(str, wsse,
	    (const xmlChar *)"Reference", NULL) : NULL;
	if (ref == NULL ||
	    xmlNewProp(ref, (const xmlChar *)"URI",
	    (const xmlChar *)bst_uri) == NULL ||
	    xmlNewProp(ref, (const xmlChar *)"ValueType",
	    (const xmlChar *)WSS_X509V3) == NULL)
		return -1;
	return 0;
}

/*
 * One Reference per attachment (SwA Profile 1.1, 5.3; eDelivery AS4 1.15,
 * 1.4.2.6): "cid:<Content-ID>", the Attachment-Content-Signature-Transform
 * (the part's canonical content, whatever its headers), sha256.
 */
static int
wss_sign_part_refs(xmlNodePtr sig, const struct wss_part *parts, size_t n)
{
	struct arena *a = n > 0 ? arena_new(0) : NULL;
	xmlNodePtr ref;
	const char *uri;
	size_t i;
	int rc = -1;

	if (n > 0 && a == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		/* "cid:" + the Content-ID, %-encoded by the one encoder */
		uri = mime_cid_url(a, parts[i].content_id);
		ref = uri != NULL ? xmlSecTmplSignatureAddReference(sig,
		    xmlSecTransformSha256Id, NULL, (const xmlChar *)uri,
		    NULL) : NULL;
		if (ref == NULL || xmlSecTmplReferenceAddTransform(ref,
		    wss_swa_content_sig_id()) == NULL)
			goto out;
	}
	rc = 0;
out:
	arena_free(a);
	return rc;
}

/* What one signature covers: elements by wsu:Id, attachments by cid:. */
struct wss_sign_refs {
	xmlNodePtr const *nodes;
	size_t n_nodes;
	const struct wss_part *parts;
	size_t n_parts;
};

/*
 * The ds:Signature template inside sec: exclusive c14n, the key's method
 * (wss_sign_method_id: rsa-sha256 for RSA, eddsa-ed25519, ecdsa-sha*),
 * one Reference per node (exclusive c14n transform, sha256 digest), then
 * one per attachment, KeyInfo.
 */
static xmlNodePtr
wss_sign_template(xmlNodePtr sec, xmlSecTransformId method,
    const struct wss_sign_refs *r, const char *bst_uri)
{
	xmlNodePtr sig, ref;
	xmlChar *uri;
	size_t i;

	sig = xmlSecTmplSignatureCreateNsPref(sec->doc,
	    xmlSecTransformExclC14NId, method, NULL, (const xmlChar *)"ds");
	if (sig == NULL)
		return NULL;
	if (xmlAddChild(sec, sig) == NULL) {
		xmlFreeNode(sig);
		return NULL;
	}
	for (i = 0; i < r->n_nodes; i++) {
		uri = wss_sign_uri(r->nodes[i], "id");
		ref = uri != NULL ? xmlSecTmplSignatureAddReference(sig,
		    xmlSecTransformSha256Id, NULL, uri, NULL) : NULL;
		xmlFree(uri);
		if (ref == NULL || xmlSecTmplReferenceAddTransform(ref,
		    xmlSecTransformExclC14NId) == NULL)
			return NULL;
	}
	if (wss_sign_part_refs(sig, r->parts, r->n_parts) < 0 ||
	    wss_sign_keyinfo(sig, sec->ns, bst_uri) < 0)
		return NULL;
	wss_sign_strip_blanks(sig);
	return sig;
}

/*
 * The signing context of wss_dsig_ctx_new(0) with the key's signature
 * method; with attachments also "cid:"
 * references (xmlsec classes them as remote; the only IO callback left is
 * our cid: resolver) through the SwA content transform, with wss_swa.c's
 * guard on every reference chain.  NULL on failure.
 */
static xmlSecDSigCtxPtr
wss_sign_ctx(xmlSecTransformId method, int with_parts)
{
	xmlSecDSigCtxPtr ctx = wss_dsig_ctx_new(0);

	if (ctx != NULL && method != xmlSecTransformRsaSha256Id &&
	    xmlSecDSigCtxEnableSignatureTransform(ctx, method) < 0) {
		xmlSecDSigCtxDestroy(ctx);
		return NULL;
	}
	if (ctx == NULL || !with_parts)
		return ctx;
	ctx->enabledReferenceUris |= xmlSecTransformUriTypeRemote;
	ctx->referencePreExecuteCallback = wss_swa_pre_exec;
	if (xmlSecDSigCtxEnableReferenceTransform(ctx,
	    wss_swa_content_sig_id()) < 0) {
		xmlSecDSigCtxDestroy(ctx);
		ctx = NULL;
	}
	return ctx;
}

/* Compute digests and signature value with a copy of the private key; the
 * parts are bound to the cid: resolver meanwhile. */
static int
wss_sign_run(xmlNodePtr sig, const struct wss_key *key,
    struct wss_part *parts, size_t n_parts)
{
	xmlSecDSigCtxPtr ctx = wss_sign_ctx(wss_sign_method_id(key),
	    n_parts > 0);
	int rc = -1;

	if (ctx == NULL)
		goto out;
	ctx->signKey = wss_key_xmlsec(key);
	if (n_parts > 0)
		wss_swa_bind(parts, n_parts, NULL);
	if (ctx->signKey == NULL || xmlSecDSigCtxSign(ctx, sig) < 0)
		goto out;
	rc = 0;
out:
	wss_swa_unbind();
	if (ctx != NULL)
		xmlSecDSigCtxDestroy(ctx);
	ERR_clear_error();
	return rc;
}

/* Do all nodes belong to doc's tree? (programmer error otherwise) */
static int
wss_sign_nodes_ok(xmlDocPtr doc, xmlNodePtr const *nodes, size_t n)
{
	size_t i;

	if (n == 0 || n > WSS_SIGN_MAX_NODES)
		return 0;
	for (i = 0; i < n; i++)
		if (nodes[i] == NULL || nodes[i]->doc != doc ||
		    nodes[i]->type != XML_ELEMENT_NODE)
			return 0;
	return 1;
}

/* Are the parts usable for cid: references (each with a Content-ID)? */
int
wss_sign_parts_ok(const struct wss_part *parts, size_t n)
{
	size_t i;

	if (n > WSS_SIGN_MAX_PARTS || (n > 0 && parts == NULL))
		return 0;
	for (i = 0; i < n; i++)
		if (parts[i].content_id == NULL ||
		    parts[i].content_id[0] == '\0' ||
		    (parts[i].len > 0 && parts[i].data == NULL))
			return 0;
	return 1;
}

/*
 * Sign nodes and parts of doc (wss_sign_nodes, wss_sign_parts): a new
 * wsse:Security with the BST and the ds:Signature; on failure it is
 * removed again.
 */
static int
wss_sign_do(xmlDocPtr doc, const struct wss_key *key,
    xmlNodePtr const *nodes, size_t n_nodes, struct wss_part *parts,
    size_t n_parts, struct err *err)
{
	xmlNodePtr env, header = NULL, sec = NULL, sig;
	xmlSecTransformId method = wss_sign_method_id(key);
	const struct wss_sign_refs refs = { nodes, n_nodes, parts, n_parts };
	const char *soap = NULL;
	char bst_uri[64];
	struct err ierr;
	int rc = -1;

	wss_xmlsec_reset();
	err_clear(&ierr);
	env = wss_envelope(doc, &soap);
	if (env != NULL && method != NULL &&
	    wss_sign_nodes_ok(doc, nodes, n_nodes) &&
	    wss_sign_parts_ok(parts, n_parts))
		header = wss_sign_header(env, soap);
	if (header == NULL || xml_child(header, NS_WSSE, "Security") != NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not sign envelope");
		err_detail(err, "not a SOAP envelope, a key that cannot sign, "
		    "bad node or part list or wsse:Security already present");
		goto out;
	}
	sec = wss_sign_security(header, soap, key, bst_uri, sizeof(bst_uri));
	sig = sec != NULL ? wss_sign_template(sec, method, &refs, bst_uri) :
	    NULL;
	if (sig == NULL || wss_ids_index(doc, &ierr) < 0 ||
	    wss_sign_run(sig, key, parts, n_parts) < 0) {
		err_set(err, ERR_INTERNAL, NULL, "could not sign envelope");
		if (ierr.kind != ERR_NONE)
			err_detail(err, "%s: %s", ierr.msg, ierr.detail);
		wss_xmlsec_detail(err);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		wss_sign_drop(sec);
	return rc;
}

/* Sign the given elements of doc; see wss.h. */
int
wss_sign_nodes(xmlDocPtr doc, const struct wss_key *key,
    xmlNodePtr const *nodes, size_t n_nodes, struct err *err)
{
	return wss_sign_do(doc, key, nodes, n_nodes, NULL, 0, err);
}

/* eb:Messaging and the SOAP Body of doc in nodes[0..1]; -1 when absent. */
static int
wss_sign_targets(xmlDocPtr doc, xmlNodePtr nodes[2], struct err *err)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(doc, &soap);

	nodes[0] = nodes[1] = NULL;
	if (env != NULL) {
		nodes[0] = xml_child(xml_child(env, soap, "Header"), NS_EB,
		    "Messaging");
		nodes[1] = xml_child(env, soap, "Body");
	}
	if (nodes[0] == NULL || nodes[1] == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "could not sign "
		    "envelope: no eb:Messaging header or no SOAP Body");
	return 0;
}

/* Sign eb:Messaging and the SOAP Body of an envelope; see wss.h. */
int
wss_sign_envelope(xmlDocPtr doc, const struct wss_key *key,
    struct err *err)
{
	xmlNodePtr nodes[2];

	if (wss_sign_targets(doc, nodes, err) == -1)
		return -1;
	return wss_sign_do(doc, key, nodes, 2, NULL, 0, err);
}

/* Sign eb:Messaging, the Body and every attachment; see wss_int.h. */
int
wss_sign_parts(xmlDocPtr doc, const struct wss_key *key,
    struct wss_part *parts, size_t n_parts, struct err *err)
{
	xmlNodePtr nodes[2];

	if (wss_sign_targets(doc, nodes, err) == -1)
		return -1;
	return wss_sign_do(doc, key, nodes, 2, parts, n_parts, err);
}
