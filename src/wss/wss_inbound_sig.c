/*
 * wss_inbound_sig.c — the half of wss_inbound() that reads the signature
 * before any cryptography (split from wss_inbound.c): the shape of
 * ds:Signature, our own walk of SignedInfo against the leg's allowlists
 * (NEGATIVE-CASES 34-38: exclusive c14n only, allowlisted SignatureMethod
 * and DigestMethod, "#id" and "cid:" references with exactly one allowed
 * transform, limits on references and transforms), and the coverage of
 * the references by node identity (29-31, 33, 46).  eDelivery AS4 2.0
 * (issue 13) adds eddsa-ed25519 and ecdsa-sha512 to the methods a leg
 * may list; whether the method fits the signer's key is wss_sigvalue.c's.
 */
#include "wss_inbound_int.h"

#include <string.h>

#include "../xml/xml.h"

#define WSS_IN_EXC_C14N "http://www.w3.org/2001/10/xml-exc-c14n#"
#define WSS_IN_SWA_CONTENT WSS_SWA_NS "Attachment-Content-Signature-Transform"
#define WSS_IN_SWA_COMPLETE WSS_SWA_NS "Attachment-Complete-Signature-Transform"

/* Defaults for a policy that leaves the limits 0 (wss.h); the longest
 * reference URI we look at (a Content-ID is far shorter). */
#define WSS_IN_MAX_REFERENCES 30
#define WSS_IN_MAX_TRANSFORMS 5
#define WSS_IN_MAX_URI 1024
#define WSS_IN_SIG_BITS (WSS_SIG_RSA_SHA256 | WSS_SIG_RSA_SHA384 |          \
	WSS_SIG_RSA_SHA512 | WSS_SIG_ECDSA_SHA256 | WSS_SIG_ECDSA_SHA384 |   \
	WSS_SIG_ECDSA_SHA512 | WSS_SIG_ED25519)
#define WSS_IN_DIG_BITS (WSS_DIG_SHA256 | WSS_DIG_SHA384 | WSS_DIG_SHA512)
/* What the "#id" references covered (bits). */
#define WSS_IN_MESSAGING 1u
#define WSS_IN_BODY 2u
#define WSS_IN_TIMESTAMP 4u

/* Children allowed in CanonicalizationMethod or an exclusive c14n
 * Transform: at most one ec:InclusiveNamespaces (Exclusive XML
 * Canonicalization 1.0, 3). */
static int
wss_in_c14n_children_ok(const xmlNode *method)
{
	xmlNodePtr c = xml_child(method, NULL, NULL);

	if (c == NULL)
		return 1;
	return xml_is(c, WSS_IN_EXC_C14N, "InclusiveNamespaces") &&
	    xml_next(c, NULL, NULL) == NULL;
}

/* Is the Algorithm attribute of n exactly uri? */
static int
wss_in_alg_is(const xmlNode *n, const char *uri)
{
	xmlChar *alg = xmlGetNoNsProp(n, (const xmlChar *)"Algorithm");
	int rc = alg != NULL && xmlStrEqual(alg, (const xmlChar *)uri);

	xmlFree(alg);
	return rc;
}

/* The enum wss_alg bit of n's Algorithm, if it is in mask and allowed. */
static unsigned
wss_in_alg_bit(const xmlNode *n, unsigned mask, unsigned allowed)
{
	xmlChar *alg = xmlGetNoNsProp(n, (const xmlChar *)"Algorithm");
	unsigned bit = wss_alg_from_uri((const char *)alg);

	xmlFree(alg);
	return (bit & mask & allowed) != 0 ? bit : 0;
}

/* A reference URI is "#" + a bare name (no XPointer, nothing xmlsec and
 * wss_id_find() could read differently) or "cid:" + Content-ID; http:,
 * file:, "" are refused before anything resolves them (NEGATIVE-CASES 34). */
static int
wss_in_uri_check(struct wss_in_ref *ref, struct err *err)
{
	const char *u = ref->uri;
	size_t len = u != NULL ? strlen(u) : 0;

	if (len < 2 || len > WSS_IN_MAX_URI)
		return wss_in_policy(err, "signature reference not allowed");
	if (wss_id_ref_ok(u)) /* "#" NCName: issue 10 item 8 */
		return 0;
	/* no fragment (xmlsec would parse the attachment as XML and run an
	 * XPointer on it) and no %00 (xmlsec unescapes before opening) */
	if (len > 4 && strncmp(u, "cid:", 4) == 0 &&
	    strpbrk(u, "#'\"<>()\\ \t\r\n") == NULL && strstr(u, "%00") == NULL) {
		ref->cid = 1;
		return 0;
	}
	return wss_in_policy(err, "signature reference not allowed");
}

/* At most max_transforms (NEGATIVE-CASES 36), each exclusive c14n ("#id")
 * or a SwA signature transform ("cid:", SwA Profile 1.1 5.3); XPath,
 * XPath-Filter2, XSLT, enveloped-signature are refused unrun (35). */
static int
wss_in_transforms(struct wss_in *in, const xmlNode *transforms,
    struct wss_in_ref *ref, struct err *err)
{
	unsigned max = in->pol->max_transforms != 0 ?
	    in->pol->max_transforms : WSS_IN_MAX_TRANSFORMS;
	size_t n = 0;
	xmlNodePtr t;

	for (t = xml_child(transforms, NULL, NULL); t != NULL;
	    t = xml_next(t, NULL, NULL))
		if (++n > max)
			return wss_in_policy(err, "too many transforms");
	for (t = xml_child(transforms, NULL, NULL); t != NULL;
	    t = xml_next(t, NULL, NULL)) {
		if (!xml_is(t, NS_DS, "Transform"))
			break;
		if (!ref->cid && wss_in_alg_is(t, WSS_IN_EXC_C14N) &&
		    wss_in_c14n_children_ok(t)) {
			ref->n_c14n++;
			continue;
		}
		if (ref->cid && (wss_in_alg_is(t, WSS_IN_SWA_CONTENT) ||
		    wss_in_alg_is(t, WSS_IN_SWA_COMPLETE)) &&
		    xml_child(t, NULL, NULL) == NULL) {
			ref->n_swa++;
			continue;
		}
		break;
	}
	if (t != NULL)
		return wss_in_policy(err, "transform not allowed");
	return 0;
}

/* One ds:Reference: URI, Transforms, DigestMethod, DigestValue. */
static int
wss_in_reference(struct wss_in *in, xmlNodePtr node, struct wss_in_ref *ref,
    struct err *err)
{
	xmlNodePtr c = xml_child(node, NULL, NULL), dv;

	ref->node = node;
	ref->uri = xml_attr(in->a, node, NULL, "URI");
	if (wss_in_uri_check(ref, err) < 0)
		return -1;
	if (xml_is(c, NS_DS, "Transforms")) {
		if (wss_in_transforms(in, c, ref, err) < 0)
			return -1;
		c = xml_next(c, NULL, NULL);
	}
	dv = xml_next(c, NULL, NULL);
	if (!xml_is(c, NS_DS, "DigestMethod") ||
	    !xml_is(dv, NS_DS, "DigestValue") ||
	    xml_next(dv, NULL, NULL) != NULL)
		return wss_in_policy(err, "unsupported signature structure");
	if (xml_child(c, NULL, NULL) != NULL ||
	    wss_in_alg_bit(c, WSS_IN_DIG_BITS, in->pol->algs) == 0)
		return wss_in_policy(err, "digest algorithm not allowed");
	/* exactly one transform of the right kind, nothing implicit */
	if (ref->cid ? ref->n_swa != 1 || ref->n_c14n != 0 :
	    ref->n_c14n != 1 || ref->n_swa != 0)
		return wss_in_policy(err, "transform not allowed");
	return 0;
}

/* ds:Signature holds SignedInfo, SignatureValue, KeyInfo and no Object. */
int
wss_in_sig_shape(const xmlNode *sig, struct err *err)
{
	xmlNodePtr si = xml_child(sig, NULL, NULL);
	xmlNodePtr sv = xml_next(si, NULL, NULL);
	xmlNodePtr ki = xml_next(sv, NULL, NULL);

	if (!xml_is(si, NS_DS, "SignedInfo") ||
	    !xml_is(sv, NS_DS, "SignatureValue") ||
	    (ki != NULL && (!xml_is(ki, NS_DS, "KeyInfo") ||
	    xml_next(ki, NULL, NULL) != NULL)))
		return wss_in_policy(err, "unsupported signature structure");
	return 0;
}

/* SignedInfo read before xmlsec sees it: exclusive c14n only (NEGATIVE-CASES
 * 38), an allowed SignatureMethod (37), 1..max_references references (36). */
int
wss_in_signed_info(struct wss_in *in, struct err *err)
{
	unsigned max = in->pol->max_references != 0 ?
	    in->pol->max_references : WSS_IN_MAX_REFERENCES;
	xmlNodePtr si = xml_child(in->signature, NULL, NULL), c14n, sm, r;
	size_t n, i;

	c14n = xml_child(si, NULL, NULL);
	sm = xml_next(c14n, NULL, NULL);
	if (!xml_is(c14n, NS_DS, "CanonicalizationMethod") ||
	    !xml_is(sm, NS_DS, "SignatureMethod"))
		return wss_in_policy(err, "unsupported signature structure");
	if (!wss_in_alg_is(c14n, WSS_IN_EXC_C14N) ||
	    !wss_in_c14n_children_ok(c14n))
		return wss_in_policy(err, "canonicalization method not "
		    "allowed");
	if (xml_child(sm, NULL, NULL) != NULL ||
	    wss_in_alg_bit(sm, WSS_IN_SIG_BITS, in->pol->algs) == 0)
		return wss_in_policy(err, "signature algorithm not allowed");
	n = xml_count(si, NULL, NULL) - 2;
	if (n == 0 || n > max)
		return wss_in_policy(err, n == 0 ? "signature without "
		    "references" : "too many signature references");
	in->refs = arena_calloc(in->a, n, sizeof(*in->refs));
	if (in->refs == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (r = xml_next(sm, NULL, NULL), i = 0; r != NULL;
	    r = xml_next(r, NULL, NULL), i++) {
		if (!xml_is(r, NS_DS, "Reference"))
			return wss_in_policy(err, "unsupported signature "
			    "structure");
		if (wss_in_reference(in, r, &in->refs[i], err) < 0)
			return -1;
	}
	in->n_refs = n;
	return 0;
}

/* Is n named like an element we require signed (a wrapped copy)? */
static int
wss_in_lookalike(const xmlNode *n)
{
	return xml_is(n, NS_EB, "Messaging") || xml_is(n, NS_SOAP12, "Body") ||
	    xml_is(n, NS_SOAP11, "Body") || xml_is(n, NS_WSU, "Timestamp");
}

/* A "#id" reference must name (node identity) the caller's eb:Messaging
 * or Body or our Timestamp; a copy elsewhere is signature wrapping
 * (NEGATIVE-CASES 31, 33). */
static int
wss_in_cover_id(struct wss_in *in, const struct wss_in_ref *ref,
    unsigned *seen, struct err *err)
{
	xmlNodePtr t = wss_id_find(in->doc, ref->uri + 1);
	unsigned bit;

	if (t == NULL)
		return wss_in_auth(err, "reference to an unknown id");
	if (t == in->messaging)
		bit = WSS_IN_MESSAGING;
	else if (t == in->body)
		bit = WSS_IN_BODY;
	else if (in->timestamp != NULL && t == in->timestamp)
		bit = WSS_IN_TIMESTAMP;
	else if (wss_in_lookalike(t))
		return wss_in_auth(err, "reference to a copy of eb:Messaging, "
		    "the Body or the Timestamp (signature wrapping)");
	else
		return wss_in_policy(err, "signature covers an element the "
		    "policy does not name");
	if (*seen & bit)
		return wss_in_policy(err, "element signed twice");
	*seen |= bit;
	return 0;
}

/* A "cid:" reference must name one of the parts, each at most once. */
static int
wss_in_cover_cid(struct wss_in *in, const struct wss_in_ref *ref,
    unsigned char *covered, struct err *err)
{
	struct wss_part *p = wss_swa_find(ref->uri);
	size_t i;

	for (i = 0; i < in->n_parts && p != &in->parts[i]; i++)
		;
	if (p == NULL || i == in->n_parts)
		return wss_in_auth(err, "reference to an attachment that is "
		    "not in the message");
	if (covered[i])
		return wss_in_policy(err, "attachment signed twice");
	covered[i] = 1;
	return 0;
}

/*
 * The references cover exactly eb:Messaging, the Body, the Timestamp (if
 * any) and every part, each once (NEGATIVE-CASES 29, 30, 46).  Checked on
 * the ID index built before anything ran; verification does not change
 * the tree, so these are the nodes xmlsec digests.
 */
int
wss_in_coverage(struct wss_in *in, struct err *err)
{
	unsigned char *covered = NULL;
	unsigned seen = 0;
	size_t i;
	int rc = 0;

	if (in->n_parts > 0 &&
	    (covered = arena_calloc(in->a, in->n_parts, 1)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < in->n_refs && rc == 0; i++)
		rc = in->refs[i].cid ?
		    wss_in_cover_cid(in, &in->refs[i], covered, err) :
		    wss_in_cover_id(in, &in->refs[i], &seen, err);
	if (rc < 0)
		return -1;
	if (!(seen & WSS_IN_MESSAGING))
		return wss_in_policy(err, "eb:Messaging is not signed");
	if (!(seen & WSS_IN_BODY))
		return wss_in_policy(err, "the SOAP Body is not signed");
	if (in->timestamp != NULL && !(seen & WSS_IN_TIMESTAMP))
		return wss_in_policy(err, "wsu:Timestamp is not signed");
	for (i = 0; covered != NULL && i < in->n_parts; i++)
		if (!covered[i])
			return wss_in_policy(err, "a payload is not signed");
	return 0;
}
