/*
 * sender — the outbound half of WS-Security for `as4gw push` (eDelivery AS4
 * 1.15, 1.4.2.6-7 and AS4 profile 5.1.8 b): sign a UserMessage with its
 * attachments, encrypt the attachments for a partner, and check that the
 * NRR Receipt that comes back copies the references we signed.  Linked into
 * the as4gw-client program only: the partner-facing daemon carries no
 * sender code (STYLE.md 17).  Depends on wss/ (signing engine, OAEP).
 */
#ifndef AS4GW_SENDER_H
#define AS4GW_SENDER_H

#include <stddef.h>

#include <openssl/x509.h>
#include <libxml/tree.h>

#include "../util/arena.h"
#include "../util/err.h"
#include "../wss/wss.h"

/*
 * Sign a UserMessage envelope the way eDelivery AS4 1.15 (1.4.2.6) says:
 * as wss_sign_envelope (wsse:Security mustUnderstand, X509v3 BST, rsa-sha256,
 * exclusive c14n, sha256, references "#<wsu:Id>" to eb:Messaging and the
 * SOAP Body, KeyInfo a SecurityTokenReference to the BST), plus one
 * reference "cid:<Content-ID>" per part (Content-ID %-encoded where a URL
 * needs it) with the SwA Attachment-Content-Signature-Transform over the
 * part's data as its content_type says to canonicalize it (SwA 1.1 5.4.2).
 * parts are not changed; n_parts may be 0 (at most 256).  The envelope must
 * not yet carry a wsse:Security header; on failure none is added.
 * Errors ERR_INTERNAL (e.g. an XML part that does not parse).
 */
int sender_sign_message(xmlDocPtr doc, const struct wss_key *key,
    struct wss_part *parts, size_t n_parts, struct err *err);

/* A certificate attachments are encrypted for (RSA key: rsa-oaep; X25519
 * or EC key: key agreement, sender_agree_ek), from a PEM file. */
struct sender_recipient;
int sender_recipient_load(const char *path, struct sender_recipient **ret,
    struct err *err);
void sender_recipient_free(struct sender_recipient *r);
/* The recipient's certificate (borrowed; valid while r lives). */
X509 *sender_recipient_cert(const struct sender_recipient *r);

/*
 * Encrypt every part (at least one) for r, eDelivery AS4 1.15 (1.4.2.7):
 * xenc11 rsa-oaep + mgf1sha256 + sha256 key transport, aes128-gcm,
 * Attachment-Content-Only, CipherReference cid:.  The EncryptedKey and
 * EncryptedData go first into the envelope's wsse:Security (made if
 * absent), so after sender_sign_message it is sign-then-encrypt and the
 * signature covers the plaintext the receiver gets back.  Each part's data
 * becomes IV || ciphertext || tag (arena; for a part that spool_want()
 * of the spool bound to this thread calls large, a mapped spool file:
 * sender_gcm_spool) and its content_type application/octet-stream.  On
 * failure (ERR_INTERNAL; ERR_STORE when the spool is full) nothing
 * changed.
 */
int sender_encrypt_message(struct arena *a, xmlDocPtr doc,
    const struct sender_recipient *r, struct wss_part *parts, size_t n,
    struct err *err);

/*
 * The work of sender_encrypt_message with the recipient's certificate, the
 * EncryptedKey and EncryptedData prepended to security (WS-Security 1.1, 5:
 * new elements go first), the EncryptedKey first; on failure neither doc
 * nor parts have changed.
 */
int sender_encrypt_parts(struct arena *a, xmlDocPtr doc, xmlNodePtr security,
    struct wss_part *parts, size_t n, X509 *recipient, struct err *err);

/*
 * sender_gcm.c: IV || AES-128-GCM(key, part's data) || tag, as
 * sender_encrypt_message writes a part, for a large part (issue 14): the
 * data is read in order in SPOOL_CHUNK pieces with spool_done() behind
 * it, the output goes to a new file of sp and is mapped into *ret (valid
 * until spool_free).  0, or -1 (ERR_INTERNAL; a full spool ERR_STORE).
 */
struct spool;
int sender_gcm_spool(struct spool *sp, const unsigned char *key,
    const struct wss_part *part, const unsigned char **ret, size_t *ret_len,
    struct err *err);

/* How sender_agree_ek() agrees on a key-encryption key (0: the
 * eDelivery AS4 2.0 default). */
struct sender_agree_opts {
	unsigned kdf;              /* WSS_KDF_HKDF (default) or WSS_KDF_CONCAT */
	unsigned kw;               /* WSS_KW_AES128 (default), _AES192, _AES256 */
	unsigned dig;              /* WSS_DIG_SHA256 (default), _SHA384, _SHA512 */
	const unsigned char *info; /* HKDF Info; NULL: none (ENTSOG 4.0: MAY be empty) */
	size_t info_len;
};

/*
 * Key agreement for an X25519 or EC recipient certificate (eDelivery AS4
 * 2.0 / ENTSOG AS4 4.0 2.2.6.2.3, 2.2.6.2.5.2; sender_agree.c): a fresh
 * ephemeral key, X25519 or ECDH-ES with the recipient's public key, HKDF
 * (a random 32-octet Salt, o->info, KeyLength in octets) or ConcatKDF
 * (AlgorithmID = the wrap URI), RFC 3394 wrap of cek.  Appended to ek:
 * xenc:EncryptionMethod kw-aes*, ds:KeyInfo/xenc:AgreementMethod
 * (OriginatorKeyInfo: dsig11:DEREncodedKeyValue for X25519,
 * ds:KeyValue/dsig11:ECKeyValue for EC; RecipientKeyInfo: a
 * wsse:SecurityTokenReference with the recipient's SKI KeyIdentifier) and
 * xenc:CipherData.  0 / -1 (ek may hold a part of it: the caller drops it).
 */
int sender_agree_ek(struct arena *a, xmlNodePtr ek, X509 *recipient,
    const struct sender_agree_opts *o, const unsigned char *cek,
    size_t cek_len);

/* How sender_encrypt_message() agrees on a key for r (an X25519 or EC
 * recipient; `as4gw push --profile`): *o copied; the default is zero (the
 * 2.0 defaults).  The options r holds. */
void sender_recipient_set_agree(struct sender_recipient *r,
    const struct sender_agree_opts *o);
const struct sender_agree_opts *sender_recipient_agree(
    const struct sender_recipient *r);

/* sender_encrypt.c helpers shared with sender_agree.c: a new element
 * {href}name appended to parent (the namespace in scope, else declared
 * with prefix); an unqualified attribute (1 ok, 0 failure); an element
 * with an Algorithm attribute; a wsse:SecurityTokenReference with cert's
 * X509SubjectKeyIdentifier KeyIdentifier (the extension, else the SHA-1
 * of the public key bits) appended to parent (0 / -1). */
xmlNodePtr sender_encrypt_el(xmlDocPtr doc, xmlNodePtr parent,
    const char *href, const char *prefix, const char *name);
int sender_encrypt_set(xmlNodePtr n, const char *name, const char *value);
xmlNodePtr sender_encrypt_alg_el(xmlDocPtr doc, xmlNodePtr parent,
    const char *href, const char *name, const char *alg);
int sender_encrypt_ski_str(struct arena *a, xmlDocPtr doc, xmlNodePtr parent,
    X509 *cert);

/*
 * Does an NRR Receipt (AS4 profile 5.1.8 b) prove the message we signed?
 * The Receipt's eb:Receipt/ebbp:NonRepudiationInformation must hold as many
 * ebbp:MessagePartNRInformation (each one ds:Reference) as the SignedInfo
 * of sent's signature has ds:References, and each sent reference must
 * match exactly one of them by URI, DigestMethod and DigestValue.  Only the
 * comparison: the Receipt's own signature is wss_verify_envelope's job.
 * 0 with the number of references in *ret_n; -1 ERR_EBMS EBMS:0101 on any
 * mismatch or a Receipt without NRR, ERR_INTERNAL when sent is not signed.
 */
int sender_nrr_match(xmlDocPtr sent, xmlDocPtr receipt, size_t *ret_n,
    struct err *err);

/*
 * Is a Receipt whose NRR does not match sent (sender_nrr_match failed) the
 * stored Receipt of an EARLIER transmission of the same message — what the
 * gateway answers a retry that was built and signed anew (new Timestamp and
 * wsu:Ids, so new eb:Messaging and Body digests)?  Yes (0, *ret_n = the
 * number of payload digests that match) when the NRR holds as many
 * references as sent's SignedInfo and every sent "cid:" reference (the
 * payloads, whose digests are over the same bytes) has exactly one equal
 * copy in it.  Only meaningful for a Receipt whose signature the gateway's
 * certificate verified: the caller must have checked it.  -1 otherwise.
 */
int sender_nrr_earlier(xmlDocPtr sent, xmlDocPtr receipt, size_t *ret_n);

#endif
