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
#include <stdint.h>

#include <libxml/tree.h>

#include "../util/arena.h"
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

/*
 * The SignatureMethod URI our signatures (wss_sign_*) use with the pair k
 * (wss_sigalg.c): rsa-sha256 for RSA, eddsa-ed25519 for Ed25519,
 * ecdsa-sha256 / -sha384 / -sha512 by the EC key's curve (256-bit,
 * 384-bit, P-521 and brainpoolP512r1).  Static; NULL for a pair that
 * cannot sign (X25519).  For pmode-check and the log.
 */
const char *wss_sign_method_uri(const struct wss_key *k);

/* A certificate alone (for verification); PEM file. */
struct wss_cert;
int wss_cert_load(const char *path, struct wss_cert **ret, struct err *err);
void wss_cert_free(struct wss_cert *c);

/* One certificate of a PEM file, for an operator (wss_certinfo.c). */
struct wss_cert_info {
	const char *subject;    /* RFC 2253 one line (arena) */
	const char *serial;     /* hex (arena) */
	const char *sha256;     /* lower-case hex SHA-256 of the DER (arena) */
	int64_t not_before_ms;  /* epoch ms */
	int64_t not_after_ms;
};

/*
 * Subject, serial and validity of every certificate in the PEM file at
 * path (at most 64), into an arena array (*ret, *ret_n).  -1 with ERR_IO
 * when the file cannot be opened, ERR_CONF when it holds no readable
 * certificate.
 */
int wss_cert_file_info(struct arena *a, const char *path,
    struct wss_cert_info **ret, size_t *ret_n, struct err *err);

/* The kind of key a certificate or pair holds (wss_keytype.c, issue 13). */
enum wss_keykind {
	WSS_KEY_OTHER = 0,
	WSS_KEY_RSA,
	WSS_KEY_EC,          /* any named curve: P-256, brainpoolP256r1 ... */
	WSS_KEY_ED25519,
	WSS_KEY_X25519,
};

struct wss_keytype {
	enum wss_keykind kind;
	char name[48];       /* "RSA 2048", "EC P-256", "EC brainpoolP256r1",
	                      * "Ed25519", "X25519" */
};

/* The key of the first certificate in a PEM file (ERR_IO / ERR_CONF when
 * it cannot be read), or of a loaded pair. */
int wss_keytype_file(const char *cert_path, struct wss_keytype *ret,
    struct err *err);
void wss_keytype_of(const struct wss_key *k, struct wss_keytype *ret);

/* The enum wss_alg bits a key of this kind signs with / receives a content
 * key by (key transport or agreement); 0 when none.  A key fits a leg
 * when these meet the leg's allowed algorithms. */
unsigned wss_keytype_sig_algs(enum wss_keykind kind);
unsigned wss_keytype_dec_algs(enum wss_keykind kind);

/*
 * Sign a SOAP 1.2 envelope the way eDelivery AS4 1.15 signs (and Domibus
 * signs its Receipts): add to the SOAP Header a wsse:Security
 * (mustUnderstand="true") holding a BinarySecurityToken (X509v3) with the
 * certificate and a ds:Signature over eb:Messaging and the SOAP Body —
 * referenced by wsu:Id (created when absent) — with exclusive c14n, the
 * key's SignatureMethod (rsa-sha256 for RSA; eddsa-ed25519 or ecdsa-sha*
 * for eDelivery AS4 2.0 keys: wss_sign_method_uri) and sha256 digests,
 * KeyInfo a SecurityTokenReference to the BST.
 */
int wss_sign_envelope(xmlDocPtr doc, const struct wss_key *key,
    struct err *err);

/*
 * Verify the ds:Signature in the envelope's wsse:Security with the public key
 * of cert only (never a key from the message): RSA, ECDSA or Ed25519, the
 * SignatureValue checked first as wss_sigvalue_check() does (method fits
 * the key, ECDSA raw r || s only).  The references must include
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
 * Is uri a same-document reference "#" + NCName (Namespaces in XML 1.0,
 * 3), the only "#id" form signature references may take?  Anything else
 * ('^', '(', quotes, '%' ...) could name one element in our ID index and
 * another in xmlsec's XPointer evaluation (issue 10 item 8).  1 yes, 0 no.
 */
int wss_id_ref_ok(const char *uri);

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
 * verifying also rsa-sha384/512, ecdsa-sha256/384/512, eddsa-ed25519 and
 * sha384/512).  NULL on failure. */
struct _xmlSecDSigCtx *wss_dsig_ctx_new(int verify);

/* The root element of doc if it is a SOAP 1.2 or 1.1 Envelope (its
 * namespace URI in *ret_ns), else NULL. */
xmlNodePtr wss_envelope(xmlDocPtr doc, const char **ret_ns);

/* Forget the last xmlsec error of this thread / append it to err.detail. */
void wss_xmlsec_reset(void);
void wss_xmlsec_detail(struct err *err);

/* ------------------------------------------------------------------------
 * Inbound WS-Security (issue 3): decryption, signature verification over
 * eb:Messaging, the Body and SwA attachments, key resolution and trust.
 * ---------------------------------------------------------------------- */

/* Algorithms a leg may allow (bit set); see wss_alg_parse for names. */
enum wss_alg {
	WSS_SIG_RSA_SHA256 = 1u << 0,   /* xmldsig-more#rsa-sha256 */
	WSS_SIG_RSA_SHA384 = 1u << 1,
	WSS_SIG_RSA_SHA512 = 1u << 2,
	WSS_SIG_ECDSA_SHA256 = 1u << 3, /* xmldsig-more#ecdsa-sha256 */
	WSS_SIG_ECDSA_SHA384 = 1u << 4,
	WSS_SIG_ED25519 = 1u << 5,      /* 2021/04/xmldsig-more#eddsa-ed25519 (RFC 9231) */
	WSS_SIG_ECDSA_SHA512 = 1u << 6, /* xmldsig-more#ecdsa-sha512 */
	WSS_DIG_SHA256 = 1u << 8,       /* xmlenc#sha256 */
	WSS_DIG_SHA384 = 1u << 9,       /* xmldsig-more#sha384 */
	WSS_DIG_SHA512 = 1u << 10,      /* xmlenc#sha512 */
	WSS_KT_RSA_OAEP = 1u << 16,     /* xmlenc11#rsa-oaep (+ MGF, DigestMethod) */
	WSS_KT_RSA_OAEP_MGF1P = 1u << 17, /* xmlenc#rsa-oaep-mgf1p (+ DigestMethod) */
	WSS_KW_AES128 = 1u << 12,       /* xmlenc#kw-aes128: key wrap after key agreement */
	WSS_KW_AES192 = 1u << 13,       /* xmlenc#kw-aes192 */
	WSS_KW_AES256 = 1u << 14,       /* xmlenc#kw-aes256 */
	WSS_KT_RSA_1_5 = 1u << 18,      /* xmlenc#rsa-1_5: refused unless allowed */
	WSS_KA_X25519 = 1u << 19,       /* 2021/04/xmldsig-more#x25519 (AgreementMethod) */
	WSS_KA_ECDH_ES = 1u << 20,      /* xmlenc11#ECDH-ES */
	WSS_KDF_HKDF = 1u << 21,        /* 2021/04/xmldsig-more#hkdf (KeyDerivationMethod) */
	WSS_KDF_CONCAT = 1u << 22,      /* xmlenc11#ConcatKDF */
	WSS_ENC_AES128_GCM = 1u << 24,  /* xmlenc11#aes128-gcm */
	WSS_ENC_AES256_GCM = 1u << 25,
	WSS_ENC_AES_CBC = 1u << 26,     /* xmlenc#aes128-cbc / aes256-cbc: refused unless allowed */
};

/* Everything except rsa-1_5 and CBC (eDelivery AS4 1.15 and the OASIS AS4 profile). */
#define WSS_ALGS_DEFAULT                                                     \
	(WSS_SIG_RSA_SHA256 | WSS_SIG_RSA_SHA384 | WSS_SIG_RSA_SHA512 |      \
	    WSS_SIG_ECDSA_SHA256 | WSS_SIG_ECDSA_SHA384 | WSS_DIG_SHA256 |   \
	    WSS_DIG_SHA384 | WSS_DIG_SHA512 | WSS_KT_RSA_OAEP |              \
	    WSS_KT_RSA_OAEP_MGF1P | WSS_ENC_AES128_GCM | WSS_ENC_AES256_GCM)

/*
 * eDelivery AS4 2.0 (2024; ENTSOG AS4 4.0 2.2.6.2): Ed25519 signatures,
 * X25519 + HKDF key agreement, AES key wrap, AES-GCM — and nothing RSA, so
 * that a 2.0 leg cannot be downgraded.  kw-aes256 / aes256-gcm and the
 * longer digests are accepted as stronger variants.
 */
#define WSS_ALGS_EDELIVERY_2_0                                               \
	(WSS_SIG_ED25519 | WSS_DIG_SHA256 | WSS_DIG_SHA384 | WSS_DIG_SHA512 | \
	    WSS_KA_X25519 | WSS_KDF_HKDF | WSS_KW_AES128 | WSS_KW_AES256 |   \
	    WSS_ENC_AES128_GCM | WSS_ENC_AES256_GCM)

/* Its alternative elliptic-curve option (2.2.6.2.5): ECDSA and ECDH-ES on
 * P-256, P-384, P-521 or brainpoolP256r1, with HKDF. */
#define WSS_ALGS_EDELIVERY_2_0_EC                                            \
	(WSS_SIG_ECDSA_SHA256 | WSS_SIG_ECDSA_SHA384 | WSS_SIG_ECDSA_SHA512 | \
	    WSS_DIG_SHA256 | WSS_DIG_SHA384 | WSS_DIG_SHA512 |               \
	    WSS_KA_ECDH_ES | WSS_KDF_HKDF | WSS_KW_AES128 | WSS_KW_AES256 |  \
	    WSS_ENC_AES128_GCM | WSS_ENC_AES256_GCM)

/* Key agreement, derivation and wrap bits: what an EncryptedKey with an
 * xenc:AgreementMethod needs (instead of a WSS_KT_* bit). */
#define WSS_ALGS_KEY_AGREEMENT                                               \
	(WSS_KA_X25519 | WSS_KA_ECDH_ES | WSS_KDF_HKDF | WSS_KDF_CONCAT |     \
	    WSS_KW_AES128 | WSS_KW_AES192 | WSS_KW_AES256)

/*
 * Parse a space-separated list of short names ("rsa-sha256 ecdsa-sha256
 * sha256 rsa-oaep rsa-oaep-mgf1p rsa-1_5 aes128-gcm aes256-gcm aes-cbc
 * eddsa-ed25519 ecdsa-sha512 x25519 ecdh-es hkdf concatkdf kw-aes128
 * kw-aes192 kw-aes256 ...") into bits; the profile names "default" /
 * "edelivery-1.x" (WSS_ALGS_DEFAULT), "edelivery-2.0" and
 * "edelivery-2.0-ec" stand for their sets.  -1 on an unknown name (err
 * names it).  Implemented in wss_policy.c.
 */
int wss_alg_parse(const char *list, unsigned *ret_bits, struct err *err);

/* The bit for an algorithm URI, or 0 when the URI is not one we know. */
unsigned wss_alg_from_uri(const char *uri);

/* The configuration names of the algorithms in bits, separated by single
 * spaces, in out (truncated to size); pmode-check prints them. */
void wss_alg_names(unsigned bits, char *out, size_t size);

/* Who may sign for a leg's party: src/trust (trust.h). */
struct trust;
struct x509_st;                      /* OpenSSL's X509 */

/*
 * The gateway's decryption pairs of one leg (wss_keyring.c): 1 ..
 * WSS_KEYRING_MAX certificate + key pairs, e.g. the current one and the
 * one partners may still encrypt for during a rotation.  The pair that
 * decrypts a message is the one its xenc:EncryptedKey's key reference
 * names, never found by trying keys.  Immutable once built; shared by all
 * threads.
 */
struct wss_keyring;

#define WSS_KEYRING_MAX 4

/* One pair to load: PEM certificate and unencrypted key files; retiring
 * pairs are reported in wss_result.decrypted_retiring when used. */
struct wss_keyring_spec {
	const char *cert;
	const char *key;
	int retiring;
};

/*
 * Load n pairs (1 .. WSS_KEYRING_MAX) as wss_key_load() does (the key must
 * match its certificate); two pairs with the same certificate are refused.
 * ERR_CONF naming the file on failure.
 */
int wss_keyring_new(const struct wss_keyring_spec *v, size_t n,
    struct wss_keyring **ret, struct err *err);
void wss_keyring_free(struct wss_keyring *r);

/* The SHA-256 fingerprint of the first certificate of a PEM file, lower
 * case hex (64 digits and NUL into out).  -1 when it cannot be read. */
int wss_cert_file_sha256(const char *path, char out[65]);

/* One policy per P-Mode leg, built once by the gateway from the config. */
enum wss_need { WSS_NEVER = 0, WSS_OPTIONAL, WSS_REQUIRED };

struct wss_policy {
	enum wss_need signing;
	enum wss_need encryption;
	unsigned algs;                   /* allowed enum wss_alg bits */
	const struct trust *trust;       /* NULL: no signature can be trusted */
	const struct wss_keyring *decrypt_keys; /* NULL: nothing can be decrypted */
	const char *signers_desc;        /* log only: the leg's signer
	                                  * certificates as wss_cert_describe
	                                  * names them, "; "-separated; may be
	                                  * NULL */
	int64_t at_ms;                   /* instant for validity and timestamps; 0 = now */
	int64_t skew_ms;                 /* allowed wsu:Timestamp clock skew */
	int require_timestamp;           /* 1: a signed wsu:Timestamp is required (EBMS:0103 without) */
	unsigned max_references;         /* default 30 */
	unsigned max_transforms;         /* per reference, default 5 */
	/* XML attachments are parsed under the request's limits (issue 10
	 * item 3): maxXmlDepth, maxXmlNodes, maxXmlAttributes and
	 * requestMemoryBytes (less what the request's arena holds); 0 = the
	 * xml_limits_default() value, and 256 MiB */
	size_t max_xml_depth, max_xml_nodes, max_xml_attributes;
	size_t max_memory;
};

/* An attachment as wss sees it.  Decryption replaces data/len (arena) and,
 * for Attachment-Complete, content_type with the decrypted part's. */
struct wss_part {
	const char *content_id;          /* without "cid:" and "<>" */
	const char *content_type;        /* MIME Content-Type value */
	const char *headers;             /* raw MIME header block of the part (Attachment-Complete), may be NULL */
	size_t headers_len;
	const unsigned char *data;
	size_t len;
	int decrypted;                   /* set by wss_decrypt */
};

struct wss_result {
	int verified;                    /* a signature was verified */
	int decrypted;                   /* at least one payload was decrypted */
	/* the short fingerprint (wss_keyring_fp) of a retiring pair that
	 * decrypted this message, NULL when none did (static storage of
	 * the keyring: valid while the policy is) */
	const char *decrypted_retiring;
	xmlNodePtr *references;          /* the verified ds:Reference elements (request doc), for the NRR Receipt */
	size_t n_references;
	const char *signer;              /* subject of the signing certificate, for the log (arena) */
	/* not NULL: no fresh revocation status for the signer's chain, and
	 * the leg's revocation="prefer" let the message pass (the pipeline
	 * logs a warning); why, for the log (arena) */
	const char *revocation_note;
	struct x509_st *signer_cert;     /* the signing certificate (arena), NULL unless verified */
	/*
	 * For a cache of verified requests (gateway_replay.c): the very same
	 * request would pass again, the same way, at every instant (epoch ms,
	 * as wss_policy.at_ms counts) in [valid_from_ms, valid_until_ms] —
	 * timestamp freshness and certificate validity are the only checks
	 * that depend on the instant.  replayable 0: not known (a leg with
	 * CRLs, certificates taken from the message).
	 */
	int replayable;
	int64_t valid_from_ms, valid_until_ms;
};

/*
 * Process the request's wsse:Security header under pol (wss_inbound.c):
 * at most one Security header for us; duplicate ID values refused;
 * decryption first (eDelivery signs then encrypts, so the signature covers
 * plaintext); then the signature: allowlisted algorithms and transforms,
 * at most max_references references with at most max_transforms transforms,
 * key only from a BinarySecurityToken / SKI / IssuerSerial resolved against
 * pol->trust (never ds:KeyValue), the certificate bound to the leg and valid
 * at pol->at_ms; the references must cover exactly eb:Messaging, the SOAP
 * Body and every attachment in parts, each once, checked by node identity
 * after verification; wsu:Timestamp (if any, and required with
 * pol->require_timestamp) signed, single, fresh.
 * Errors: EBMS:0101 authentication, EBMS:0102 decryption (always the same
 * msg so there is no oracle), EBMS:0103 policy.  The log-only detail of an
 * EBMS:0101 names the certificate the message presented and the leg's
 * (pol->signers_desc); of an EBMS:0102 what the EncryptedKey names and the
 * leg's decryption certificate (issue 11 item 12).
 */
int wss_inbound(struct arena *a, xmlDocPtr doc, xmlNodePtr messaging,
    xmlNodePtr body, struct wss_part *parts, size_t n_parts,
    const struct wss_policy *pol, struct wss_result *ret, struct err *err);

#endif
