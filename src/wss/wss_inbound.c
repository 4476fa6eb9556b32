/*
 * wss_inbound.c — the WS-Security header of an incoming UserMessage under
 * the leg's policy: our Security header, duplicate IDs, the Timestamp,
 * decryption (wss_decrypt.c), then the signature: our own walk of SignedInfo
 * against the allowlists before any crypto (wss_inbound_sig.c, with the
 * reference coverage), key (wss_keyinfo.c) and trust (src/trust),
 * xmlsec with the SwA transforms (wss_swa.c), and reference coverage by node
 * identity (signature wrapping defence; DESIGN.md "Security rules").
 *
 * Stricter than the Java stacks on purpose (NEGATIVE-CASES 28-51):
 *  - a reference is "#<bare name>" naming exactly the caller's eb:Messaging
 *    or Body or our wsu:Timestamp, with exactly one exclusive c14n
 *    transform, or "cid:<Content-ID>" naming a part, with exactly one SwA
 *    signature transform; nothing else is signed, nothing twice;
 *  - wsse:Security may hold only ds:Signature, wsse:BinarySecurityToken,
 *    wsu:Timestamp, xenc:EncryptedKey and xenc:EncryptedData (all that the
 *    recorded eDelivery traffic uses);
 *  - a present signature is always verified, even on a leg that never signs
 *    (an untrusted signature is an error, not something to skip); encrypted
 *    content on a leg that never encrypts is refused before any crypto;
 *  - with encryption required, a payload in the SOAP Body (which cannot be
 *    decrypted here) is refused like an unencrypted attachment.
 * The key comes only from wss_keyinfo_resolve(): the context has no keys
 * manager and signKey is set, so xmlsec never reads KeyInfo.
 * Codes (ebMS3 Core 6.7.2): EBMS:0101 FailedAuthentication, EBMS:0102
 * FailedDecryption (wss_decrypt), EBMS:0103 PolicyNoncompliance.
 */
#include "wss.h"

#include <stdint.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/keys.h>
#include <xmlsec/list.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/openssl/evp.h>

#include "../trust/trust.h"
#include "../util/arena.h"
#include "../util/clock.h"
#include "../xml/xml.h"
#include "wss_int.h"
#include "wss_inbound_int.h"

#define WSS_IN_ROLE_ULTIMATE \
	"http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver"
#define WSS_IN_ROLE_NEXT "http://www.w3.org/2003/05/soap-envelope/role/next"
#define WSS_IN_ACTOR_NEXT "http://schemas.xmlsoap.org/soap/actor/next"

/* EBMS:0101 with one generic message; the reason goes to the log only. */
int
wss_in_auth(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "signature check failed");
	err_detail(err, "%s", why);
	return -1;
}

/* EBMS:0103: the message does not satisfy the leg's security policy. */
int
wss_in_policy(struct err *err, const char *msg)
{
	return err_set(err, ERR_EBMS, "EBMS:0103", "%s", msg);
}

/*
 * Is this header block targeted at us, the ultimate receiver?  SOAP 1.2
 * Part 1 5.2.2: no role means ultimateReceiver, and "next" is played by
 * every node including us; SOAP 1.1 4.2.2: no actor, or actor "next".
 */
static int
wss_in_for_us(const xmlNode *block, const char *soap)
{
	int v12 = strcmp(soap, NS_SOAP12) == 0;
	xmlChar *role = xmlGetNsProp(block,
	    (const xmlChar *)(v12 ? "role" : "actor"), (const xmlChar *)soap);
	int rc;

	if (role == NULL)
		return 1;
	if (v12)
		rc = xmlStrEqual(role, (const xmlChar *)WSS_IN_ROLE_ULTIMATE) ||
		    xmlStrEqual(role, (const xmlChar *)WSS_IN_ROLE_NEXT);
	else
		rc = xmlStrEqual(role, (const xmlChar *)WSS_IN_ACTOR_NEXT);
	xmlFree(role);
	return rc;
}

/* Our wsse:Security header block (WS-Security 1.1 SOAP Message Security
 * 5: at most one per role), or none. */
static int
wss_in_locate(struct wss_in *in, struct err *err)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(in->doc, &soap), header = NULL, n;
	size_t count = 0;

	if (env != NULL)
		header = xml_child(env, soap, "Header");
	for (n = xml_child(header, NS_WSSE, "Security"); n != NULL;
	    n = xml_next(n, NS_WSSE, "Security")) {
		if (!wss_in_for_us(n, soap))
			continue;
		in->security = n;
		count++;
	}
	if (count > 1)
		return wss_in_policy(err, "more than one wsse:Security header "
		    "for this receiver");
	return 0;
}

/* The children of our Security header: what we know, each kind counted. */
static int
wss_in_scan(struct wss_in *in, struct err *err)
{
	size_t n_sig = 0, n_ts = 0;
	xmlNodePtr c;

	for (c = xml_child(in->security, NULL, NULL); c != NULL;
	    c = xml_next(c, NULL, NULL)) {
		if (xml_is(c, NS_DS, "Signature")) {
			in->signature = c;
			n_sig++;
		} else if (xml_is(c, NS_WSU, "Timestamp")) {
			in->timestamp = c;
			n_ts++;
		} else if (xml_is(c, NS_XENC, "EncryptedKey") ||
		    xml_is(c, NS_XENC, "EncryptedData")) {
			in->has_enc = 1;
		} else if (!xml_is(c, NS_WSSE, "BinarySecurityToken")) {
			return wss_in_policy(err, "unsupported element in "
			    "wsse:Security");
		}
	}
	if (n_sig > 1)
		return wss_in_policy(err, "more than one signature");
	if (n_ts > 1)
		return wss_in_policy(err, "more than one wsu:Timestamp");
	return 0;
}

/* Pre-order walk below top; descend 0 skips node's subtree. */
static xmlNodePtr
wss_in_walk(xmlNodePtr node, const xmlNode *top, int descend)
{
	if (descend && node->type == XML_ELEMENT_NODE && node->children != NULL)
		return node->children;
	while (node != top && node->next == NULL)
		node = node->parent;
	return node == top ? NULL : node->next;
}

/* Encrypted content outside our Security header is a copy in a wrapper
 * (NEGATIVE-CASES 50) or unsupported: either way not what gets decrypted. */
static int
wss_in_stray(struct wss_in *in, struct err *err)
{
	xmlNodePtr root = xmlDocGetRootElement(in->doc), n;
	int descend;

	for (n = root; n != NULL; n = wss_in_walk(n, root, descend)) {
		descend = n != in->security;
		if (xml_is(n, NS_XENC, "EncryptedData") ||
		    xml_is(n, NS_XENC, "EncryptedKey"))
			return wss_in_auth(err, "encrypted data outside the "
			    "wsse:Security header");
	}
	return 0;
}

/* wsu:Created or wsu:Expires as epoch ms: 1 found, 0 absent, -1 bad. */
static int
wss_in_ts_field(struct arena *a, const xmlNode *ts, const char *name,
    int64_t *ret)
{
	xmlNodePtr n = xml_child(ts, NS_WSU, name);
	char *text;

	if (n == NULL)
		return 0;
	if (xml_count(ts, NS_WSU, name) != 1 ||
	    (text = xml_text(a, n)) == NULL ||
	    clock_parse_iso8601(text, ret) < 0)
		return -1;
	return 1;
}

/* WS-Security 1.1 SOAP Message Security 10: Created (required here) no
 * later than now + skew, not expired at now - skew, Expires not before
 * Created (NEGATIVE-CASES 45); that it is signed is checked with coverage.
 * A leg with require_timestamp refuses a Security header without one (a
 * message without any Security header fails its required signing first). */
static int
wss_in_timestamp(struct wss_in *in, struct err *err)
{
	int64_t at = in->pol->at_ms != 0 ? in->pol->at_ms : clock_epoch_ms();
	int64_t skew = in->pol->skew_ms > 0 ? in->pol->skew_ms : 0;
	int64_t created = 0, expires = 0;
	int hc, he;

	if (in->timestamp == NULL)
		return in->pol->require_timestamp ?
		    wss_in_policy(err, "message has no wsu:Timestamp") : 0;
	hc = wss_in_ts_field(in->a, in->timestamp, "Created", &created);
	he = wss_in_ts_field(in->a, in->timestamp, "Expires", &expires);
	if (hc != 1 || he < 0)
		return wss_in_auth(err, "malformed wsu:Timestamp");
	if (created > at + skew)
		return wss_in_auth(err, "wsu:Timestamp created in the future");
	if (he == 1 && expires < created)
		return wss_in_auth(err, "wsu:Timestamp expires before it was "
		    "created");
	if (he == 1 && expires <= at - skew)
		return wss_in_auth(err, "wsu:Timestamp expired");
	in->ts_from = created - skew;
	if (he == 1)
		in->ts_until = expires + skew - 1;
	return 0;
}

/* Bind the parts for cid: with the request's limits for XML parts. */
static void
wss_in_bind(const struct wss_in *in)
{
	struct wss_swa_limits lim;

	wss_swa_limits_of(in->pol, in->a, &lim);
	wss_swa_bind(in->parts, in->n_parts, &lim);
}

/* Decrypt before verifying (eDelivery AS4 1.15 signs, then encrypts); with
 * encryption required, every attachment must have been decrypted and the
 * Body must carry no payload (NEGATIVE-CASES 51). */
static int
wss_in_decrypt(struct wss_in *in, int *ret_decrypted, struct err *err)
{
	size_t i;

	if (in->has_enc) {
		if (in->pol->encryption == WSS_NEVER)
			return wss_in_policy(err, "encrypted payloads are not "
			    "expected on this leg");
		/* AES-CBC authenticates nothing: only under a signature,
		 * which covers the plaintext (issue 10 item 6) */
		if (in->signature == NULL &&
		    wss_decrypt_cbc_listed(in->security))
			return wss_in_policy(err, "AES-CBC encrypted payloads "
			    "in a message that is not signed");
		wss_in_bind(in);
		if (wss_decrypt(in->a, in->doc, in->security, in->parts,
		    in->n_parts, in->pol, &in->dec, err) < 0)
			return -1;
	}
	if (in->pol->encryption == WSS_REQUIRED) {
		for (i = 0; i < in->n_parts; i++)
			if (!in->parts[i].decrypted)
				return wss_in_policy(err, "payloads are not "
				    "encrypted");
		if (xml_child(in->body, NULL, NULL) != NULL)
			return wss_in_policy(err, "payloads are not encrypted");
	}
	*ret_decrypted = in->dec.n_decrypted > 0;
	return 0;
}


/* The key of the certificate KeyInfo names (never KeyValue, NEGATIVE-CASES
 * 41), bound to the leg, chaining to its anchors, valid at at_ms (42-44). */
static int
wss_in_key(struct wss_in *in, xmlSecKeyPtr *ret, struct err *err)
{
	xmlNodePtr ki = xml_child(in->signature, NS_DS, "KeyInfo");
	EVP_PKEY *pub;

	if (in->pol->trust == NULL)
		return wss_in_auth(err, "no signer certificates for this leg");
	if (ki == NULL)
		return wss_in_auth(err, "signature without KeyInfo");
	if (wss_keyinfo_resolve(in->pol->trust, in->a, in->doc, ki, &in->cert,
	    &in->chain, err) < 0 ||
	    trust_chain_check_note(in->pol->trust, in->cert, in->chain,
	    in->pol->at_ms, &in->revoc, err) < 0)
		return -1;
	pub = X509_get_pubkey(in->cert);
	*ret = pub != NULL ? wss_key_adopt(pub) : NULL;
	if (*ret == NULL)
		return wss_in_auth(err, "unsupported signer public key");
	return 0;
}

/* xmlsec digests and checks the signature value.  Valid: status succeeded,
 * the references we checked, same order and URIs, each succeeded (39, 40). */
static int
wss_in_xmlsec(struct wss_in *in, xmlSecDSigCtxPtr ctx, struct err *err)
{
	xmlSecSize i, n;
	xmlSecDSigReferenceCtxPtr ref;

	if (xmlSecDSigCtxVerify(ctx, in->signature) < 0) {
		wss_in_auth(err, "signature not processable");
		wss_xmlsec_detail(err);
		return -1;
	}
	if (ctx->status != xmlSecDSigStatusSucceeded) {
		wss_in_auth(err, "signature or digest value mismatch");
		wss_xmlsec_detail(err);
		return -1;
	}
	n = xmlSecPtrListGetSize(&ctx->signedInfoReferences);
	for (i = 0; i < n && n == in->n_refs; i++) {
		ref = xmlSecPtrListGetItem(&ctx->signedInfoReferences, i);
		if (ref == NULL || ref->status != xmlSecDSigStatusSucceeded)
			return wss_in_auth(err, "reference not verified");
		if (ref->uri == NULL || strcmp((const char *)ref->uri,
		    in->refs[i].uri) != 0)
			break;
	}
	if (n != in->n_refs || i != n)
		return wss_in_auth(err, "xmlsec saw other references");
	return 0;
}

/* Key, context, verification; the parts are bound for cid: meanwhile. */
static int
wss_in_verify(struct wss_in *in, struct err *err)
{
	xmlSecDSigCtxPtr ctx = NULL;
	xmlSecKeyPtr key = NULL;
	int rc = -1;

	wss_xmlsec_reset();
	/* the SignatureValue first: a forged signature must not make us
	 * dereference (canonicalise, digest) a single reference */
	if (wss_in_key(in, &key, err) < 0 ||
	    wss_sigvalue_check(in->a, in->signature, in->cert, in->pol->algs,
	    err) < 0)
		goto out;
	ctx = wss_dsig_ctx_inbound();
	if (ctx == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not set up signature "
		    "verification");
		wss_xmlsec_detail(err);
		goto out;
	}
	ctx->signKey = key;
	key = NULL;
	rc = wss_in_xmlsec(in, ctx, err);
out:
	if (key != NULL)
		xmlSecKeyDestroy(key);
	if (ctx != NULL)
		xmlSecDSigCtxDestroy(ctx);
	return rc;
}

/* The verified references (for the NRR Receipt) and the signer. */
static int
wss_in_result(struct wss_in *in, struct wss_result *res, struct err *err)
{
	char subject[256];
	size_t i;

	res->references = arena_calloc(in->a, in->n_refs,
	    sizeof(*res->references));
	(void)X509_NAME_oneline(X509_get_subject_name(in->cert), subject,
	    sizeof(subject));
	res->signer = arena_strdup(in->a, subject);
	res->signer_cert = in->cert;
	if (res->references == NULL || res->signer == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < in->n_refs; i++)
		res->references[i] = in->refs[i].node;
	res->n_references = in->n_refs;
	res->verified = 1;
	if (in->revoc.failed_open &&
	    (res->revocation_note = arena_strdup(in->a, in->revoc.detail)) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

/* No Security header for us: acceptable only if the leg requires neither
 * signing (NEGATIVE-CASES 28) nor encryption of a message with payloads. */
static int
wss_in_absent(const struct wss_in *in, struct err *err)
{
	if (in->pol->signing == WSS_REQUIRED)
		return wss_in_policy(err, "message is not signed");
	if (in->pol->encryption == WSS_REQUIRED &&
	    (in->n_parts > 0 || xml_child(in->body, NULL, NULL) != NULL))
		return wss_in_policy(err, "payloads are not encrypted");
	return 0;
}

/* The signature part of wss_inbound(): policy, checks, crypto, result. */
static int
wss_in_signature(struct wss_in *in, struct wss_result *res, struct err *err)
{
	if (in->signature == NULL) {
		if (in->pol->signing == WSS_REQUIRED)
			return wss_in_policy(err, "message is not signed");
		if (in->timestamp != NULL)
			return wss_in_policy(err, "wsu:Timestamp is not "
			    "signed");
		return 0;
	}
	wss_in_bind(in);
	if (wss_in_sig_shape(in->signature, err) < 0 ||
	    wss_in_signed_info(in, err) < 0 ||
	    wss_in_coverage(in, err) < 0 || wss_in_verify(in, err) < 0)
		return -1;
	return wss_in_result(in, res, err);
}

/*
 * When would the same request pass again (wss_result.replayable)?  Always,
 * unless its wsu:Timestamp (WS-Security 10: Created <= at + skew, Expires >
 * at - skew, as wss_in_timestamp checks) or its signer's certificate chain
 * (a window trust_chain_check learnt; unknown with CRLs or a chain from the
 * message: then not replayable) bound it.
 */
static void
wss_in_window(const struct wss_in *in, struct wss_result *res)
{
	int64_t from = in->ts_from, until = in->ts_until, cf, cu;

	if (res->verified) {
		if (in->chain != NULL || trust_chain_window(in->pol->trust,
		    in->cert, &cf, &cu) != 1)
			return;
		from = cf > from ? cf : from;
		until = cu < until ? cu : until;
	}
	res->replayable = 1;
	res->valid_from_ms = from;
	res->valid_until_ms = until;
}

/* Process the request's wsse:Security header under pol; see wss.h. */
int
wss_inbound(struct arena *a, xmlDocPtr doc, xmlNodePtr messaging,
    xmlNodePtr body, struct wss_part *parts, size_t n_parts,
    const struct wss_policy *pol, struct wss_result *ret, struct err *err)
{
	struct wss_in in = { .a = a, .doc = doc, .messaging = messaging,
		.body = body, .parts = parts, .n_parts = n_parts, .pol = pol,
		.ts_from = INT64_MIN, .ts_until = INT64_MAX };
	struct wss_result res = { 0 };
	int rc = -1;

	if (messaging == NULL || body == NULL ||
	    (n_parts > 0 && parts == NULL)) {
		err_set(err, ERR_INTERNAL, NULL, "wss_inbound: no eb:Messaging "
		    "or SOAP Body");
		goto out;
	}
	if (wss_in_locate(&in, err) < 0 || wss_in_stray(&in, err) < 0)
		goto out;
	if (in.security == NULL) {
		if (wss_in_absent(&in, err) < 0)
			goto out;
	} else if (wss_ids_index(doc, err) < 0 || wss_in_scan(&in, err) < 0 ||
	    wss_in_timestamp(&in, err) < 0 ||
	    wss_in_decrypt(&in, &res.decrypted, err) < 0 ||
	    wss_in_signature(&in, &res, err) < 0 || in.dec.failed) {
		goto out;   /* dec.failed: AES-CBC, EBMS:0102 deferred */
	}
	wss_in_window(&in, &res);
	res.decrypted_retiring = in.dec.retiring;
	*ret = res;
	rc = 0;
out:
	/* issue 10 item 6: after AES-CBC, no failure tells more than
	 * "decryption failed" until the signature has verified */
	if (rc != 0 && in.dec.cbc && !res.verified)
		wss_decrypt_mask(err);
	if (rc != 0) {
		struct wss_certid_ctx cc = { a, doc, in.security, in.signature,
			in.cert, pol };

		wss_certid_detail(&cc, err);
	}
	wss_swa_unbind();
	ERR_clear_error();
	return rc;
}
