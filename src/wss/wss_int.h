/*
 * wss_int — declarations shared between the files of src/wss (xmlsec and
 * OpenSSL types) and with src/sender/, the outbound half of WS-Security that
 * `as4gw push` links; other modules include wss.h.
 */
#ifndef AS4GW_WSS_INT_H
#define AS4GW_WSS_INT_H

#include <openssl/evp.h>
#include <openssl/x509.h>
#include <xmlsec/keys.h>
#include <xmlsec/transforms.h>

#include "../util/arena.h"
#include "wss.h"

#define WSS_SWA_NS "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"

/* ---- wss.c ---- */

/* Wrap an OpenSSL key as an xmlsec key; pkey is consumed in every case
 * (freed on failure).  Only keys wss_sigalg_key_ok() accepts (Ed25519 as
 * wss_eddsa_adopt() key data).  NULL on failure. */
xmlSecKeyPtr wss_key_adopt(EVP_PKEY *pkey);

/* wss_dsig_ctx_new(1) plus what inbound messages need: the SwA signature
 * transforms, "cid:" references with
 * wss_swa_pre_exec, X509Data as the only KeyInfo data.  NULL on failure. */
struct _xmlSecDSigCtx *wss_dsig_ctx_inbound(void);

/* The certificate of a pair loaded by wss_key_load() (owned by k). */
X509 *wss_key_x509(const struct wss_key *k);

/* The private key of a pair loaded by wss_key_load() (owned by k): RSA,
 * EC, Ed25519 or X25519 — an X25519 pair has no xmlsec key
 * (wss_key_xmlsec() gives NULL) and serves only key agreement. */
EVP_PKEY *wss_key_pkey(const struct wss_key *k);

/* The certificate of a loaded verification certificate (owned by c). */
X509 *wss_cert_x509(const struct wss_cert *c);

/* ---- wss_xform.c: what our xmlsec transform klasses (wss_eddsa.c,
 * wss_oaep.c) share ---- */

/* Our state in a transform of one of our klasses: right after the
 * xmlSecTransform (the klass's objSize adds the state's size). */
void *wss_xform_state(xmlSecTransformPtr t);

/* setKeyReq: key data id, the private key (private 1) or the public one,
 * for usage. */
void wss_xform_key_req(xmlSecKeyReqPtr req, xmlSecKeyDataId id,
    int private_key, xmlSecKeyUsage usage);

/* setKey: a new reference to pkey (NULL: -1) in *slot, which drops the
 * one it held.  0 or -1. */
int wss_xform_key_ref(EVP_PKEY **slot, EVP_PKEY *pkey);

/* The start of an execute method: a new transform starts working.  1
 * working, 0 finished with no input left (nothing to do), -1 otherwise
 * (input after the end, a failed transform). */
int wss_xform_begin(xmlSecTransformPtr t);

/* ---- wss_eddsa.c: Ed25519 (RFC 9231 / RFC 8032) on OpenSSL 3 EVP ---- */

#define WSS_EDDSA_URI "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519"

/* The eddsa-ed25519 SignatureMethod klass (registered globally by
 * wss_eddsa_init(), called once from wss_global_init()). */
xmlSecTransformId wss_eddsa_id(void);
int wss_eddsa_init(struct err *err);

/* The xmlsec key data klass holding an Ed25519 EVP_PKEY (xmlsec 1.2.37's
 * own EVP adoption refuses Ed25519); never read from XML. */
xmlSecKeyDataId wss_eddsa_key_id(void);

/* An Ed25519 key (public, or private with public) as key data of that
 * klass; pkey is consumed in every case.  NULL when not Ed25519. */
xmlSecKeyDataPtr wss_eddsa_adopt(EVP_PKEY *pkey);

/* ---- wss_sigalg.c: signer key types and signature methods ---- */

/* May pkey sign (or verify) with us: RSA, Ed25519, or EC on a named
 * P-256, P-384, P-521, brainpoolP256r1/384r1/512r1 curve (never explicit
 * parameters)?  1 / 0. */
int wss_sigalg_key_ok(const EVP_PKEY *pkey);

/* The octets of r (and of s) in an XML-DSig ECDSA SignatureValue for an
 * allowed EC key (the group order's size: 32, 48, 66 or 64); 0 for any
 * other key. */
size_t wss_sigalg_ec_half(const EVP_PKEY *pkey);

/* The SignatureMethod klass our signatures use with the pair k, the one
 * whose URI wss_sign_method_uri() (wss.h) names; NULL for a pair that
 * cannot sign (X25519). */
xmlSecTransformId wss_sign_method_id(const struct wss_key *k);

/* ---- wss_certid.c: naming certificates in log lines ---- */

/* wss_certinfo.c: the one-line RFC 2253 subject of x in the arena, cut
 * at max bytes (0: whole); NULL on failure. */
const char *wss_cert_subject(struct arena *a, X509 *x, size_t max);

/* Lower-case hex SHA-256 of x's DER into out[65] ("" and -1 on failure). */
int wss_cert_sha256(X509 *x, char out[65]);

/* "sha256 HEX, subject RFC2253[, ski HEX]" of x, in the arena (log only;
 * "none" for NULL, "?" when out of memory). */
const char *wss_cert_describe(struct arena *a, X509 *x);

/* What a ds:KeyInfo (with or without a wsse:SecurityTokenReference) names,
 * for the log: a certificate it carries or references (a BST, an X509v3
 * KeyIdentifier, ds:X509Certificate) described as above, a
 * KeyIdentifier's kind and value in hex, or an X509IssuerSerial; NULL
 * when none of these. */
const char *wss_keyinfo_describe(struct arena *a, xmlDocPtr doc,
    const xmlNode *key_info);

/* The decryption certificates of r (the first two, then how many more),
 * each as wss_cert_describe names it; "none" for NULL. */
const char *wss_keyring_describe(struct arena *a,
    const struct wss_keyring *r);

/* What wss_certid_detail() looks at: the request's Security header, its
 * ds:Signature, the signer certificate read from it (each may be NULL). */
struct wss_certid_ctx {
	struct arena *a;
	xmlDocPtr doc;
	const xmlNode *security, *signature;
	X509 *cert;
	const struct wss_policy *pol;
};

/*
 * The certificates behind an EBMS:0101 or EBMS:0102 in err, appended to
 * its log-only detail (issue 11 item 12; the answer's text stays fixed):
 * for 0101 the one the signature presented and those the leg lists
 * (pol->signers_desc); for 0102 what the first EncryptedKey names (unless
 * wss_keyring_pick named it already) and the leg's decryption
 * certificates.  Other errors are left alone.
 */
void wss_certid_detail(const struct wss_certid_ctx *c, struct err *err);

/* ---- wss_cipher.c: shared cipher helper ---- */

/* EVP_CipherUpdate over any length in int-sized chunks (encrypting or
 * decrypting, as c was initialised); bytes written to *ret_n.  0 / -1. */
int wss_evp_update(EVP_CIPHER_CTX *c, unsigned char *out,
    const unsigned char *in, size_t n, size_t *ret_n);

/* ---- wss_swa.c: the SwA profile transforms and the cid: resolver ---- */

/* Register the three SwA transforms and the cid: IO callback with xmlsec.
 * Called once from wss_global_init() after xmlSecIOCleanupCallbacks(). */
int wss_swa_init(struct err *err);

/*
 * What parsing and canonicalising one XML attachment may cost (issue 10
 * item 3): inbound, the request's maxXmlDepth and maxXmlNodes, the
 * attributes per element the envelope may have, and what is left of its
 * requestMemoryBytes budget (0 = no budget).
 */
struct wss_swa_limits {
	size_t max_depth, max_attributes, max_nodes;
	size_t max_memory;
};

/* `as4gw push` signing the operator's own files: depth and attributes 256,
 * 2,000,000 nodes, no budget (wss_swa_xml.c). */
extern const struct wss_swa_limits wss_swa_send_limits;

/* Bind this thread's cid: resolver (and the SwA transforms) to the parts of
 * the message being verified/decrypted, with the limits for XML parts
 * (NULL: wss_swa_send_limits); unbind when done.  Unbound, cid: resolves
 * to nothing. */
void wss_swa_bind(struct wss_part *parts, size_t n_parts,
    const struct wss_swa_limits *lim);
void wss_swa_unbind(void);

/* The part with this Content-ID (from a "cid:" URI, %-decoded), or NULL. */
struct wss_part *wss_swa_find(const char *uri);

/*
 * The octets a SwA signature transform digests for part, given the part's
 * data (what cid: served): the canonical content (SwA 1.1 5.4.2: XML types
 * exclusive c14n under lim (NULL: wss_swa_send_limits), other text/ types
 * CRLF line ends, else unchanged), preceded for Attachment-Complete
 * (complete != 0) by the canonical MIME headers (5.4.1) from part->headers
 * (or, when NULL, its Content-ID and Content-Type).  Appended to out; -1
 * when the part cannot be canonicalized (XML that does not parse, has a
 * DOCTYPE or exceeds lim, malformed headers).
 */
int wss_swa_canon(const struct wss_part *part, const unsigned char *data,
    size_t len, int complete, const struct wss_swa_limits *lim,
    xmlSecBufferPtr out);

/*
 * wss_swa_xml.c: SwA 1.1 5.4.2 for XML content: p[0..len) parsed under lim
 * (the part's copy counted against lim->max_memory, the parse — libxml2's
 * allocations counted — given the rest) and its exclusive c14n (no
 * comments) appended to out — with next
 * set, out is handed on to next (push mode, in ctx) in slices as it fills,
 * else kept, within the budget.  The canonical form is at most 8 times the
 * input plus 1 MiB.  -1 (reason recorded as an xmlsec error) when the part
 * does not parse or exceeds a limit.
 */
int wss_swa_xml(const unsigned char *p, size_t len,
    const struct wss_swa_limits *lim, xmlSecBufferPtr out,
    xmlSecTransformPtr next, xmlSecTransformCtxPtr ctx);

/* The limits for XML parts under policy p (wss_policy.max_xml_*, and its
 * max_memory less what the request's arena a holds, at most what a's own
 * budget leaves). */
void wss_swa_limits_of(const struct wss_policy *p, const struct arena *a,
    struct wss_swa_limits *ret);

/*
 * For dsigCtx->referencePreExecuteCallback when cid: references are allowed
 * (enabledReferenceUris has xmlSecTransformUriTypeRemote): refuses a cid:
 * URI with a fragment and any XML transform in a chain from an attachment.
 * Other URIs pass (0).
 */
int wss_swa_pre_exec(xmlSecTransformCtxPtr ctx);

xmlSecTransformId wss_swa_content_sig_id(void);  /* #Attachment-Content-Signature-Transform */
xmlSecTransformId wss_swa_complete_sig_id(void); /* #Attachment-Complete-Signature-Transform */
xmlSecTransformId wss_swa_ciphertext_id(void);   /* #Attachment-Ciphertext-Transform */

/* ---- wss_oaep.c: key transport xmlsec 1.2.37 lacks (OpenSSL 3 EVP) ---- */

/* http://www.w3.org/2009/xmlenc11#rsa-oaep with ds:DigestMethod and xenc11:MGF children */
xmlSecTransformId wss_oaep_xenc11_id(void);
/* http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p with ds:DigestMethod (SHA-1 default, SHA-256 ...) */
xmlSecTransformId wss_oaep_mgf1p_id(void);

/*
 * Can wss_oaep_run() handle this xenc:EncryptionMethod: Algorithm xenc11
 * rsa-oaep, rsa-oaep-mgf1p or rsa-1_5, and only known children (at most one
 * ds:DigestMethod sha1/sha224/sha256/sha384/sha512, one xenc11:MGF mgf1sha*
 * for xenc11 only, one xenc:OAEPparams of at most 256 bytes; none for
 * rsa-1_5)?  1 yes, 0 no.  No cryptography: used for the policy decision
 * before any decryption (the caller checks the Algorithm against the leg).
 */
int wss_oaep_usable(const xmlNode *method);

/*
 * Key transport as the EncryptionMethod says, run through our xmlsec
 * transform klass (rsa-1_5: xmlsec's own) in a private transform context:
 * decrypt (encrypt == 0; key holds the RSA private key) or encrypt (key
 * holds at least the public key).  The result (at most out_size bytes) goes
 * to out and its length to *ret_len.  0 ok; -1 on any failure, with no
 * reason (callers must not be able to tell failures apart).
 */
int wss_oaep_run(xmlNodePtr method, xmlSecKeyPtr key, int encrypt,
    const unsigned char *in, size_t in_len, unsigned char *out,
    size_t out_size, size_t *ret_len);


/* ---- wss_keyring.c ---- */

/*
 * The pair of r an xenc:EncryptedKey's ds:KeyInfo names (resolved as
 * wss_keyinfo_resolve() resolves signature key references, against r's
 * certificates; the certificate must be DER-equal to a pair's): index into
 * *ret.  An EncryptedKey without ds:KeyInfo names the pair only when r has
 * exactly one.  Else -1 with the EBMS:0102 answer (fixed msg) and, in
 * err.detail, the reference and the fingerprints of r's certificates.
 * Never tries a key.
 */
int wss_keyring_pick(const struct wss_keyring *r, struct arena *a,
    xmlDocPtr doc, const xmlNode *ek, size_t *ret, struct err *err);

/*
 * The pair of r a key agreement's xenc:RecipientKeyInfo names (its
 * wsse:SecurityTokenReference or ds:X509Data, also wrapped in one
 * ds:KeyValue as the ENTSOG ECDH-ES sample has it), resolved as
 * wss_keyring_pick() does; never by trying keys.  -1 with the EBMS:0102
 * answer otherwise.
 */
int wss_keyring_pick_ref(const struct wss_keyring *r, struct arena *a,
    xmlDocPtr doc, const xmlNode *rki, size_t *ret, struct err *err);

/* Pair i of r: its key, its short fingerprint ("sha256:" and 16 hex
 * digits of the certificate's SHA-256), retiring or not. */
const struct wss_key *wss_keyring_key(const struct wss_keyring *r, size_t i);
size_t wss_keyring_count(const struct wss_keyring *r);
const char *wss_keyring_fp(const struct wss_keyring *r, size_t i);
int wss_keyring_retiring(const struct wss_keyring *r, size_t i);

/* ---- wss_kdf.c: HKDF, ConcatKDF, AES key wrap (OpenSSL 3 EVP) ---- */

/* A read-only octet string (p may be NULL when len is 0). */
struct wss_bytes {
	const unsigned char *p;
	size_t len;
};

/* The digest of a WSS_DIG_* bit (sha256/384/512), or NULL. */
const EVP_MD *wss_kdf_md(unsigned dig);

/* The key length of a WSS_KW_AES* bit (16, 24, 32), or 0. */
size_t wss_kdf_kw_len(unsigned kw);

/* RFC 5869 HKDF-HMAC over dig's digest: secret z, salt (empty: none),
 * info (may be empty), out_len octets into out.  0 / -1. */
int wss_kdf_hkdf(unsigned dig, const struct wss_bytes *z,
    const struct wss_bytes *salt, const struct wss_bytes *info,
    unsigned char *out, size_t out_len);

/* SP 800-56A 5.8.2.1.1 one-step KDF (XML Encryption 1.1 ConcatKDF) over
 * dig's digest: secret z, OtherInfo other (padding octets dropped),
 * out_len octets into out.  0 / -1. */
int wss_kdf_concat(unsigned dig, const struct wss_bytes *z,
    const struct wss_bytes *other, unsigned char *out, size_t out_len);

/* RFC 3394 AES key wrap of key (16/24/32 octets) under kek (16/24/32):
 * key_len + 8 octets into out (out_size at least that).  0 / -1. */
int wss_kdf_wrap(const unsigned char *kek, size_t kek_len,
    const unsigned char *key, size_t key_len, unsigned char *out,
    size_t out_size);

/* RFC 3394 unwrap of in under kek, integrity checked; the key must be
 * exactly want octets (into out).  out untouched on failure.  0 / -1. */
int wss_kdf_unwrap(const unsigned char *kek, size_t kek_len,
    const unsigned char *in, size_t in_len, unsigned char *out, size_t want);

/* ---- wss_agree.c: xenc:AgreementMethod, receiving ---- */

#define WSS_NS_DSIG11 "http://www.w3.org/2009/xmldsig11#"
#define WSS_NS_DSIG_MORE21 "http://www.w3.org/2021/04/xmldsig-more#"
/* Largest raw shared secret (P-521: 66 octets). */
#define WSS_AGREE_Z_MAX 128

/* What an xenc:AgreementMethod says (pointers into the arena / the doc). */
struct wss_agree {
	unsigned ka;               /* WSS_KA_X25519 or WSS_KA_ECDH_ES */
	unsigned kdf;              /* WSS_KDF_HKDF or WSS_KDF_CONCAT */
	unsigned dig;              /* WSS_DIG_*: the HKDF PRF's or ConcatKDF's digest */
	struct wss_bytes salt, info; /* HKDF; p NULL when absent */
	size_t key_len;            /* HKDF KeyLength in octets, 0 when absent */
	struct wss_bytes other;    /* ConcatKDF OtherInfo (padding octets dropped) */
	int orig_der;              /* orig: a SubjectPublicKeyInfo (DEREncodedKeyValue) */
	int curve;                 /* ECKeyValue: NID of its NamedCurve; else 0 */
	struct wss_bytes orig;     /* the originator's public key: DER, or an EC point */
	const xmlNode *recipient;  /* xenc:RecipientKeyInfo (wss_keyring_pick_ref) */
	/* set by the caller, not the parser: the kw-aes key size of the
	 * EncryptedKey's EncryptionMethod (16, 24, 32) */
	size_t kek_len;
};

/*
 * Parse an xenc:AgreementMethod (XML Encryption 1.1, 5.6; RFC 9231; the
 * grammar at the top of wss_agree.c) into *ret.  The algorithm URIs come
 * first: an agreement, KDF or PRF/digest not in algs (or unknown) ->
 * EBMS:0103; then any format failure (unknown or repeated elements,
 * oversize or malformed values, a curve other than P-256/384/521 or
 * brainpoolP256r1/384r1/512r1, a ConcatKDF field with padding bits) ->
 * EBMS:0102 with the fixed msg and the reason in err.detail.  No
 * cryptography; the originator key is checked when deriving.
 */
int wss_agree_parse(struct arena *a, const xmlNode *am, unsigned algs,
    struct wss_agree *ret, struct err *err);

/* Does priv serve p: X25519 for x25519, EC for ECDH-ES on the curve an
 * ECKeyValue names?  1 / 0. */
int wss_agree_fits(const struct wss_agree *p, const EVP_PKEY *priv);

/* The raw shared secret of priv and peer (peer validated; an all-zero
 * secret refused, RFC 7748 6.1) into z (WSS_AGREE_Z_MAX).  0 / -1. */
int wss_agree_secret(EVP_PKEY *priv, EVP_PKEY *peer, unsigned char *z,
    size_t *z_len);

/* The key-encryption key (p->kek_len octets: the kw-aes size, at most
 * 32) from the secret z by p's KDF; an HKDF KeyLength other than
 * p->kek_len fails.  0 / -1 with a static reason in *why. */
int wss_agree_derive(const struct wss_agree *p, const struct wss_bytes *z,
    unsigned char *kek, const char **why);

/*
 * The whole receiving side: p's originator key (type and curve of priv,
 * public key validation), the agreement with priv, the KDF to a
 * p->kek_len KEK, the RFC 3394 unwrap of wrapped into key (exactly want
 * octets).  0 ok; -1 with a static reason in *why (log only: the answer
 * is the one EBMS:0102).  key untouched on failure.
 */
int wss_agree_unwrap(const struct wss_agree *p, EVP_PKEY *priv,
    const struct wss_bytes *wrapped, unsigned char *key, size_t want,
    const char **why);

/* ---- wss_decrypt.c ---- */

/* Does security hold an xenc:EncryptedData whose EncryptionMethod is
 * AES-CBC (the algorithm URIs only, before any cryptography)?  1 / 0. */
int wss_decrypt_cbc_listed(const xmlNode *security);

/* What wss_decrypt() did besides succeeding or failing. */
struct wss_dec_report {
	size_t n_decrypted;  /* parts decrypted */
	/* an EncryptedData uses AES-CBC, which authenticates nothing: until
	 * the signature has verified, every failure is answered as a
	 * decryption failure (wss_decrypt_mask; issue 10 item 6) */
	int cbc;
	/* with cbc: decryption failed — err holds the EBMS:0102 answer and
	 * the parts what came out; the caller verifies the signature all
	 * the same and only then answers err */
	int failed;
	/* the fingerprint of a retiring pair that decrypted, else NULL */
	const char *retiring;
};

/*
 * Decrypt what the Security header encrypts: xenc:EncryptedKey (key transport
 * per pol->algs with the pair of pol->decrypt_keys its key reference names:
 * wss_keyring_pick; or kw-aes with an xenc:AgreementMethod: wss_agree.c,
 * the pair its RecipientKeyInfo names, wss_keyring_pick_ref; Id or wsu:Id)
 * and the xenc:EncryptedData it lists
 * (CipherReference cid: + Attachment-Ciphertext-Transform, type
 * Attachment-Content-Only or Attachment-Complete), replacing each part's
 * data (and content_type for Complete).  Algorithms outside pol->algs ->
 * EBMS:0103 (decided from the algorithm URIs before any crypto); every
 * cryptographic or format failure -> EBMS:0102 with one fixed msg, what
 * failed in err.detail (for the log only).  Details: only direct children
 * of security are considered; every EncryptedData there must be listed by
 * exactly one EncryptedKey (DataReference "#id", or the bare id AS4.NET
 * writes) and decrypt, else nothing changes — but with AES-CBC see
 * wss_dec_report.failed; an EncryptedData Type other than the two SwA
 * types -> EBMS:0103, as is an encrypted message when pol->decrypt_keys is
 * NULL; the OAEP DigestMethod/MGF need not be in pol->algs (SHA-1 is the
 * default there and harmless) but must be known.  For Attachment-Complete
 * also headers/headers_len become the decrypted MIME header block (its
 * lines with their line ends, without the empty line).  No Security
 * children to decrypt: 0 with a zero report.  doc: where a
 * BinarySecurityToken reference is looked up (wss_ids_index() first).
 * A part spool_want(spool_bound(), len) calls large is decrypted through
 * wss_cipher_run() (issue 14): its data becomes a read-only spool mapping;
 * no room to spool it is that error (ERR_STORE: ENOSPC, or the spool
 * budget's 413), not EBMS:0102.
 */
int wss_decrypt(struct arena *a, xmlDocPtr doc, xmlNodePtr security,
    struct wss_part *parts, size_t n_parts, const struct wss_policy *pol,
    struct wss_dec_report *ret, struct err *err);

/* Turn the failure in err into the decryption failure answer (EBMS:0102,
 * the fixed msg), its msg and detail kept in the log detail: for any
 * failure after an AES-CBC decryption before the signature verified.
 * ERR_STORE (no room to spool a large plaintext; issue 14) is left as it
 * is: it depends on the disk, never on the ciphertext. */
void wss_decrypt_mask(struct err *err);

/* ---- wss_cipher.c ---- */

/*
 * Block decryption per XML Encryption 1.1 (5.2): alg_uri xenc11
 * aes128/192/256-gcm (IV = first 12 bytes, tag = last 16) or xenc
 * aes128/192/256-cbc (IV = first 16 bytes, last octet = padding length).
 * key_len must match the algorithm.  Plaintext in the arena.  0 ok, -1 on
 * any failure (no reason).  Policy is the caller's business.
 */
int wss_decrypt_cipher(struct arena *a, const char *alg_uri,
    const unsigned char *key, size_t key_len, const unsigned char *in,
    size_t in_len, unsigned char **ret, size_t *ret_len);

/*
 * wss_decrypt_cipher() with what failed in *ret_why (a static string, for
 * the log), and an AES-CBC padding that is not valid as 1 — with the
 * octets, less one block, in *ret / *ret_len all the same (wss_decrypt.c
 * decides what to do with them).
 */
int wss_cipher_block(struct arena *a, const char *alg_uri,
    const unsigned char *key, size_t key_len, const unsigned char *in,
    size_t in_len, unsigned char **ret, size_t *ret_len,
    const char **ret_why);

/* The key length of a block algorithm URI we can run, or 0. */
size_t wss_cipher_key_len(const char *uri);

/* The EVP cipher of a block algorithm URI we can run (NULL: none), and
 * in *ret_gcm whether it is AES-GCM. */
const EVP_CIPHER *wss_cipher_evp(const char *uri, int *ret_gcm);

/* ---- wss_cipher_stream.c: large attachments (issue 14) ---- */

/* What wss_cipher_run() and wss_cipher_unbase64() hand back. */
struct wss_cipher_out {
	unsigned char *p;          /* the plaintext; a mapping when spooled */
	size_t len;
	int spooled;               /* p is a spool mapping: read-only, never
	                            * written or cleansed; lives until spool_free */
	const char *why;           /* what failed (static, for the log) */
	struct err err;            /* a spool failure (ERR_STORE on ENOSPC ...),
	                            * else ERR_NONE */
};

/*
 * wss_cipher_block() of in with key for a ciphertext spool_want(
 * spool_bound(), in->len) says is large (else it is wss_cipher_block()
 * itself, into the arena).  The ciphertext is read in order in SPOOL_CHUNK
 * pieces (spool_done() behind) and decrypted with EVP into a spool file
 * of the bound spool; the plaintext is mapped and handed out in out->p
 * only after EVP_DecryptFinal verified the GCM tag.  On a failure the file
 * is never mapped nor used: out->p stays NULL.  Returns as
 * wss_cipher_block() (1: AES-CBC padding invalid, the octets less one
 * block mapped all the same).  Memory: one SPOOL_CHUNK buffer, whatever
 * the length.
 */
int wss_cipher_run(struct arena *a, const char *alg_uri,
    const struct wss_bytes *key, const struct wss_bytes *in,
    struct wss_cipher_out *out);

/*
 * codec_unbase64() of in into a spool file of the bound spool when
 * spool_want() says so (read in order, spool_done() behind; mapped:
 * out->spooled), else into the arena.  0, or -1 on invalid base64 or a
 * spool failure (out->err).
 */
int wss_cipher_unbase64(struct arena *a, const struct wss_bytes *in,
    struct wss_cipher_out *out);

/* ---- wss_sigvalue.c ---- */

/*
 * XML Signature 1.1, 3.2.2 before any reference is dereferenced: the
 * SignatureValue of signature verified over its ds:SignedInfo (exclusive
 * c14n without comments, the InclusiveNamespaces PrefixList honoured) with
 * the public key of cert, by an allowlisted SignatureMethod in algs
 * (rsa-sha256/384/512, ecdsa-sha256/384/512, eddsa-ed25519) fitting the
 * key (wss_sigalg_key_ok: EC on an allowed named curve; ECDSA values raw
 * r || s of exactly twice the order's size, Ed25519 64 octets).  0 valid; -1
 * EBMS:0101 with the reason in err.detail.  xmlsec verifies everything
 * again afterwards; this only makes a forged signature cheap to refuse.
 */
int wss_sigvalue_check(struct arena *a, xmlNodePtr signature, X509 *cert,
    unsigned algs, struct err *err);

/* ---- wss_keyinfo.c ---- */

/*
 * Resolve the signing certificate named by a ds:KeyInfo: a
 * wsse:SecurityTokenReference to a wsse:BinarySecurityToken in doc (X509v3
 * or X509PKIPathv1: leaf = last in path; the rest returned in *ret_chain),
 * a KeyIdentifier (X509SubjectKeyIdentifier, or X509v3 with the certificate
 * inline), or ds:X509Data/X509IssuerSerial — the last two resolved against
 * the signer certificates of t (trust_find_*).  Never ds:KeyValue.  The
 * certificate and chain are owned by the arena; *ret_chain is NULL unless
 * the token is a PKIPath (ret_chain may be NULL).  Also accepted:
 * KeyIdentifier ThumbprintSHA1 (WSS 1.1), ds:X509SKI and
 * ds:X509Certificate, ds:X509Data directly in ds:KeyInfo; a BST must sit in
 * wsse:Security.  Whether the certificate may sign is trust_chain_check()'s
 * question.  Key agreement (wss_keyring_pick_ref) names the recipient's
 * certificate the same way in an xenc:RecipientKeyInfo, possibly inside
 * one ds:KeyValue: those are accepted as key_info too.  Failure ->
 * EBMS:0101.
 */
int wss_keyinfo_resolve(const struct trust *t, struct arena *a,
    xmlDocPtr doc, xmlNodePtr key_info, X509 **ret_cert,
    STACK_OF(X509) **ret_chain, struct err *err);

/* ---- wss_sign.c: the signing engine, also used by src/sender/ ---- */

/*
 * Sign eb:Messaging, the SOAP Body and every attachment the way eDelivery
 * AS4 1.15 (1.4.2.6) says: as wss_sign_envelope plus one reference
 * "cid:<Content-ID>" per part (%-encoded where a URL needs it) with the SwA
 * Attachment-Content-Signature-Transform (SwA 1.1 5.4.2).  parts are not
 * changed; n_parts may be 0 (at most 256).  The envelope must not yet carry
 * a wsse:Security header; on failure none is added.  ERR_INTERNAL.
 */
int wss_sign_parts(xmlDocPtr doc, const struct wss_key *key,
    struct wss_part *parts, size_t n_parts, struct err *err);

/* The SOAP Header of env (made first in env when absent), or NULL. */
xmlNodePtr wss_sign_header(xmlNodePtr env, const char *soap);
/* A new empty wsse:Security (mustUnderstand) last in header, or NULL. */
xmlNodePtr wss_sign_security_new(xmlNodePtr header, const char *soap);
/* Unlink and free node; accepts NULL. */
void wss_sign_drop(xmlNodePtr node);
/* Are the parts usable for cid: references (each with a Content-ID)? */
int wss_sign_parts_ok(const struct wss_part *parts, size_t n);

/* wss.c: the first certificate of a PEM file into *ret (ERR_IO when it
 * cannot be opened, ERR_CONF when it holds no PEM certificate). */
int wss_read_cert(const char *path, X509 **ret, struct err *err);

/* wss.c: PEM password callback that refuses, so an encrypted key or file is
 * an error rather than a prompt on the daemon's terminal. */
int wss_no_password(char *buf, int size, int rwflag, void *u);

#endif
