/*
 * wss — WS-Security on xmlsec1 (OpenSSL backend): one-time strict set-up,
 * key and certificate loading, signing of the gateway's own signals, and the
 * verification of a signal against a known certificate (used by `push` to
 * check the Receipt it gets back).  Inbound message verification, decryption
 * and the SwA transforms arrive with issue 3 and live here too.
 */
#ifndef AS4GW_WSS_H
#define AS4GW_WSS_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../util/err.h"

/*
 * Once per process after xml_global_init(): initialise xmlsec and its OpenSSL
 * backend, clear xmlsec's IO callbacks (no file/network reference
 * resolution), install an error callback that keeps xmlsec quiet.
 */
int wss_global_init(struct err *err);
void wss_global_shutdown(void);

/* A private key with its certificate, loaded once, shared read-only by threads. */
struct wss_key;

/* Load a PEM certificate and its PEM (unencrypted PKCS#8 or traditional) key;
 * the key must match the certificate. */
int wss_key_load(const char *cert_path, const char *key_path,
    struct wss_key **ret, struct err *err);
void wss_key_free(struct wss_key *k);

/* A certificate alone (for verification); PEM file. */
struct wss_cert;
int wss_cert_load(const char *path, struct wss_cert **ret, struct err *err);
void wss_cert_free(struct wss_cert *c);

/*
 * Sign a SOAP 1.2 envelope the way eDelivery AS4 1.15 signs (and Domibus
 * signs its Receipts): add to the SOAP Header a wsse:Security
 * (mustUnderstand="true") holding a BinarySecurityToken (X509v3) with the
 * certificate and a ds:Signature over eb:Messaging and the SOAP Body —
 * referenced by wsu:Id (created when absent) — with exclusive c14n, rsa-sha256
 * and sha256 digests, KeyInfo a SecurityTokenReference to the BST.
 */
int wss_sign_envelope(xmlDocPtr doc, const struct wss_key *key,
    struct err *err);

/*
 * Verify the ds:Signature in the envelope's wsse:Security with the public key
 * of cert only (never a key from the message).  The references must include
 * eb:Messaging and the SOAP Body, found by node identity after verification.
 * 0 valid; -1 invalid with ERR_EBMS EBMS:0101.
 */
int wss_verify_envelope(xmlDocPtr doc, const struct wss_cert *cert,
    struct err *err);

/*
 * Sign the given elements of doc (at least one): each is referenced as
 * "#<wsu:Id>" (the wsu:Id is created when absent), digested with exclusive
 * c14n + sha256; otherwise as wss_sign_envelope, which calls this with
 * eb:Messaging and the SOAP Body.  `as4gw push` and the tests use it directly.
 * The envelope must not already carry a wsse:Security header.  On failure
 * the document has no wsse:Security header added (wsu:Id attributes may stay).
 */
int wss_sign_nodes(xmlDocPtr doc, const struct wss_key *key,
    xmlNodePtr const *nodes, size_t n_nodes, struct err *err);

/*
 * Register every wsu:Id, Id, id and xml:id attribute of doc as an XML ID so
 * that same-document references "#value" resolve to it (and only to it).
 * A value carried by two different elements is refused: -1 with ERR_EBMS
 * EBMS:0101 (ID-wrapping defence).  Safe to call more than once.
 */
int wss_ids_index(xmlDocPtr doc, struct err *err);

/* The element carrying Id value id after wss_ids_index(), or NULL. */
xmlNodePtr wss_id_find(xmlDocPtr doc, const char *id);

/*
 * ---- Internal to the wss_*.c files (not for other modules) ----
 * xmlsec types are only forward-declared so that includers of wss.h need no
 * xmlsec headers.
 */
struct _xmlSecKey;
struct _xmlSecDSigCtx;

/* A fresh copy of the signing (private) key / verification (public) key:
 * the dsig context takes ownership of it.  NULL on failure. */
struct _xmlSecKey *wss_key_xmlsec(const struct wss_key *k);
struct _xmlSecKey *wss_cert_xmlsec(const struct wss_cert *c);

/* The certificate as base64 DER (no line breaks) for the BST; owned by k. */
const char *wss_key_cert_b64(const struct wss_key *k);

/* A dsig context without keys manager, limited to same-document references
 * and the allowlisted algorithms (exc-c14n, rsa-sha256 and sha256; when
 * verifying also rsa-sha384/512 and sha384/512).  NULL on failure. */
struct _xmlSecDSigCtx *wss_dsig_ctx_new(int verify);

/* The root element of doc if it is a SOAP 1.2 or 1.1 Envelope (its
 * namespace URI in *ret_ns), else NULL. */
xmlNodePtr wss_envelope(xmlDocPtr doc, const char **ret_ns);

/* Forget the last xmlsec error of this thread / append it to err.detail. */
void wss_xmlsec_reset(void);
void wss_xmlsec_detail(struct err *err);

#endif
