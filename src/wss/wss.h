/*
 * wss — WS-Security on xmlsec1 (OpenSSL backend): one-time strict set-up,
 * key and certificate loading, signing of the gateway's own signals, and the
 * verification of a signal against a known certificate (used by `push` to
 * check the Receipt it gets back).  Inbound message verification, decryption
 * and the SwA transforms arrive with issue 3 and live here too.
 */
#ifndef AS4GW_WSS_H
#define AS4GW_WSS_H

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

#endif
