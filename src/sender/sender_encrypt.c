/*
 * sender_encrypt.c — encryption of the attachments `as4gw push --encrypt`
 * sends (eDelivery AS4 1.15, 5.1.6 / 1.4.2.7): xenc11 rsa-oaep key transport
 * through wss/'s OAEP transform (wss_oaep_run), aes128-gcm content
 * encryption, Attachment-Content-Only with a cid: CipherReference.  Sender
 * code: linked into as4gw-client only, never into the serving daemon.
 */
#include "sender.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>

#include "../mime/mime_hdr.h"
#include "../spool/spool.h"
#include "../util/codec.h"
#include "../wss/wss_int.h"
#include "../xml/xml.h"

/* Largest RSA modulus we handle, in bytes (8192 bits). */
#define SENDER_ENC_MAX_IN 1024
/* Payloads one sender_encrypt_message() call encrypts. */
#define SENDER_ENC_MAX_PARTS 64
#define SENDER_ENC_GCM_IV 12         /* XML Encryption 1.1, 5.2.4 */
#define SENDER_ENC_GCM_TAG 16

#define SENDER_ENC_SKI "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0#X509SubjectKeyIdentifier"
#define SENDER_ENC_BASE64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define SENDER_ENC_WSSE11 "http://docs.oasis-open.org/wss/" \
	"oasis-wss-wssecurity-secext-1.1.xsd"
#define SENDER_ENC_TOKEN_EK "http://docs.oasis-open.org/wss/" \
	"oasis-wss-soap-message-security-1.1#EncryptedKey"
#define SENDER_ENC_KEY_LEN 16        /* aes128-gcm */

/* The state of one sender_encrypt_parts() call. */
struct sender_encrypt {
	struct arena *a;
	xmlDocPtr doc;
	X509 *recipient;
	const struct sender_agree_opts *agree; /* NULL: the 2.0 defaults */
	unsigned char key[SENDER_ENC_KEY_LEN];
	char ek_id[48];
	xmlNodePtr ek, reflist;
};

/*
 * A new element {href}name appended to parent (when not NULL), using the
 * namespace declaration in scope at parent or declaring prefix on the new
 * element itself.  NULL on failure.
 */
xmlNodePtr
sender_encrypt_el(xmlDocPtr doc, xmlNodePtr parent, const char *href,
    const char *prefix, const char *name)
{
	xmlNodePtr n = xmlNewDocNode(doc, NULL, (const xmlChar *)name, NULL);
	xmlNsPtr ns = NULL;

	if (n == NULL)
		return NULL;
	if (parent != NULL)
		ns = xmlSearchNsByHref(doc, parent, (const xmlChar *)href);
	if (ns == NULL)
		ns = xmlNewNs(n, (const xmlChar *)href,
		    (const xmlChar *)prefix);
	if (ns == NULL || (parent != NULL && xmlAddChild(parent, n) == NULL)) {
		xmlFreeNode(n);
		return NULL;
	}
	xmlSetNs(n, ns);
	return n;
}

/* Set an unqualified attribute; 1 ok, 0 failure (for && chains). */
int
sender_encrypt_set(xmlNodePtr n, const char *name, const char *value)
{
	return n != NULL && value != NULL &&
	    xmlSetProp(n, (const xmlChar *)name, (const xmlChar *)value) !=
	    NULL;
}

/* A new child element (see sender_encrypt_el) with an Algorithm attribute. */
xmlNodePtr
sender_encrypt_alg_el(xmlDocPtr doc, xmlNodePtr parent, const char *href,
    const char *name, const char *alg)
{
	const char *prefix = strcmp(href, NS_DS) == 0 ? "ds" :
	    strcmp(href, NS_XENC) == 0 ? "xenc" : "xenc11";
	xmlNodePtr n = sender_encrypt_el(doc, parent, href, prefix, name);

	return sender_encrypt_set(n, "Algorithm", alg) ? n : NULL;
}

/* The recipient's SubjectKeyIdentifier in base64 (arena): the extension,
 * else RFC 5280 4.2.1.2 method (1), SHA-1 of the public key bits. */
static char *
sender_encrypt_ski(struct arena *a, X509 *cert)
{
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(cert);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (ski != NULL)
		return codec_base64(a, ASN1_STRING_get0_data(ski),
		    (size_t)ASN1_STRING_length(ski));
	if (X509_pubkey_digest(cert, EVP_sha1(), md, &len) != 1)
		return NULL;
	return codec_base64(a, md, len);
}

/* The recipient's RSA public key as an xmlsec key (caller destroys). */
static xmlSecKeyPtr
sender_encrypt_pubkey(X509 *cert)
{
	EVP_PKEY *pkey = X509_get_pubkey(cert);

	if (pkey == NULL || EVP_PKEY_get_base_id(pkey) != EVP_PKEY_RSA) {
		EVP_PKEY_free(pkey);
		return NULL;
	}
	return wss_key_adopt(pkey);
}

/* A wsse:SecurityTokenReference naming cert by its
 * X509SubjectKeyIdentifier, appended to parent; see sender.h. */
int
sender_encrypt_ski_str(struct arena *a, xmlDocPtr doc, xmlNodePtr parent,
    X509 *cert)
{
	const char *ski = sender_encrypt_ski(a, cert);
	xmlNodePtr str, kid = NULL;

	str = parent != NULL ? sender_encrypt_el(doc, parent, NS_WSSE, "wsse",
	    "SecurityTokenReference") : NULL;
	if (str != NULL)
		kid = sender_encrypt_el(doc, str, NS_WSSE, "wsse",
		    "KeyIdentifier");
	if (ski == NULL ||
	    !sender_encrypt_set(kid, "EncodingType", SENDER_ENC_BASE64) ||
	    !sender_encrypt_set(kid, "ValueType", SENDER_ENC_SKI))
		return -1;
	xmlNodeAddContent(kid, (const xmlChar *)ski);
	return 0;
}

/* EncryptedKey's ds:KeyInfo: a SecurityTokenReference with the
 * recipient's X509SubjectKeyIdentifier (as Domibus 5 sends it). */
static int
sender_encrypt_ek_keyinfo(struct sender_encrypt *e)
{
	xmlNodePtr ki = sender_encrypt_el(e->doc, e->ek, NS_DS, "ds",
	    "KeyInfo");

	return sender_encrypt_ski_str(e->a, e->doc, ki, e->recipient);
}

/* RSA-encrypt the session key with the EncryptionMethod just written
 * (through our xmlsec transform) into CipherData/CipherValue. */
static int
sender_encrypt_ek_cipher(struct sender_encrypt *e, xmlNodePtr method)
{
	xmlSecKeyPtr pub = sender_encrypt_pubkey(e->recipient);
	unsigned char out[SENDER_ENC_MAX_IN];
	const char *b64 = NULL;
	xmlNodePtr cd, cv = NULL;
	size_t n = 0;

	if (pub != NULL && wss_oaep_run(method, pub, 1, e->key, sizeof(e->key),
	    out, sizeof(out), &n) == 0)
		b64 = codec_base64(e->a, out, n);
	if (pub != NULL)
		xmlSecKeyDestroy(pub);
	cd = b64 != NULL ? sender_encrypt_el(e->doc, e->ek, NS_XENC, "xenc",
	    "CipherData") : NULL;
	if (cd != NULL)
		cv = sender_encrypt_el(e->doc, cd, NS_XENC, "xenc",
		    "CipherValue");
	if (cv == NULL)
		return -1;
	xmlNodeAddContent(cv, (const xmlChar *)b64);
	return 0;
}

/* The xenc:EncryptedKey (xenc11 rsa-oaep, sha256, mgf1sha256 for an RSA
 * recipient; key agreement, sender_agree.c, for X25519 and EC) with an
 * empty ReferenceList, in e->ek / e->reflist. */
static int
sender_encrypt_ek(struct sender_encrypt *e)
{
	xmlDocPtr doc = e->doc;
	xmlNodePtr m;
	char uuid[37];

	if (codec_uuid(uuid) < 0)
		return -1;
	(void)snprintf(e->ek_id, sizeof(e->ek_id), "EK-%s", uuid);
	e->ek = sender_encrypt_el(doc, NULL, NS_XENC, "xenc", "EncryptedKey");
	if (!sender_encrypt_set(e->ek, "Id", e->ek_id))
		return -1;
	/* an X25519 or EC certificate: key agreement (eDelivery AS4 2.0) */
	if (EVP_PKEY_get_base_id(X509_get0_pubkey(e->recipient)) !=
	    EVP_PKEY_RSA) {
		if (sender_agree_ek(e->a, e->ek, e->recipient, e->agree, e->key,
		    sizeof(e->key)) < 0)
			return -1;
		e->reflist = sender_encrypt_el(doc, e->ek, NS_XENC, "xenc",
		    "ReferenceList");
		return e->reflist != NULL ? 0 : -1;
	}
	m = sender_encrypt_alg_el(doc, e->ek, NS_XENC, "EncryptionMethod",
	    NS_XENC11 "rsa-oaep");
	if (m == NULL ||
	    sender_encrypt_alg_el(doc, m, NS_DS, "DigestMethod",
	    NS_XENC "sha256") == NULL ||
	    sender_encrypt_alg_el(doc, m, NS_XENC11, "MGF",
	    NS_XENC11 "mgf1sha256") == NULL ||
	    sender_encrypt_ek_keyinfo(e) < 0 || sender_encrypt_ek_cipher(e, m) < 0)
		return -1;
	e->reflist = sender_encrypt_el(doc, e->ek, NS_XENC, "xenc",
	    "ReferenceList");
	return e->reflist != NULL ? 0 : -1;
}

/* EncryptedData's ds:KeyInfo: a reference to our EncryptedKey. */
static int
sender_encrypt_ed_keyinfo(struct sender_encrypt *e, xmlNodePtr ed)
{
	char uri[64];
	xmlNodePtr ki, str, ref;
	xmlNsPtr ns;

	(void)snprintf(uri, sizeof(uri), "#%s", e->ek_id);
	ki = sender_encrypt_el(e->doc, ed, NS_DS, "ds", "KeyInfo");
	str = ki != NULL ? sender_encrypt_el(e->doc, ki, NS_WSSE, "wsse",
	    "SecurityTokenReference") : NULL;
	ns = str != NULL ? xmlNewNs(str, (const xmlChar *)SENDER_ENC_WSSE11,
	    (const xmlChar *)"wsse11") : NULL;
	if (ns == NULL || xmlNewNsProp(str, ns, (const xmlChar *)"TokenType",
	    (const xmlChar *)SENDER_ENC_TOKEN_EK) == NULL)
		return -1;
	ref = sender_encrypt_el(e->doc, str, NS_WSSE, "wsse", "Reference");
	return sender_encrypt_set(ref, "URI", uri) ? 0 : -1;
}

/* One xenc:EncryptedData for a part, listed in the ReferenceList. */
static xmlNodePtr
sender_encrypt_ed(struct sender_encrypt *e, const struct wss_part *part)
{
	const char *uri = mime_cid_url(e->a, part->content_id);
	xmlDocPtr doc = e->doc;
	char uuid[37], id[48], ref[52];
	xmlNodePtr ed = NULL, n = NULL;
	int ok;

	if (uri == NULL || codec_uuid(uuid) < 0)
		return NULL;
	(void)snprintf(id, sizeof(id), "ED-%s", uuid);
	(void)snprintf(ref, sizeof(ref), "#%s", id);
	ed = sender_encrypt_el(doc, NULL, NS_XENC, "xenc", "EncryptedData");
	ok = sender_encrypt_set(ed, "Id", id) && (part->content_type == NULL ||
	    sender_encrypt_set(ed, "MimeType", part->content_type)) &&
	    sender_encrypt_set(ed, "Type", WSS_SWA_NS "Attachment-Content-Only") &&
	    sender_encrypt_alg_el(doc, ed, NS_XENC, "EncryptionMethod",
	    NS_XENC11 "aes128-gcm") != NULL &&
	    sender_encrypt_ed_keyinfo(e, ed) == 0 &&
	    (n = sender_encrypt_el(doc, ed, NS_XENC, "xenc", "CipherData")) != NULL &&
	    (n = sender_encrypt_el(doc, n, NS_XENC, "xenc", "CipherReference")) !=
	    NULL && sender_encrypt_set(n, "URI", uri) &&
	    (n = sender_encrypt_el(doc, n, NS_XENC, "xenc", "Transforms")) != NULL &&
	    sender_encrypt_alg_el(doc, n, NS_DS, "Transform",
	    WSS_SWA_NS "Attachment-Ciphertext-Transform") != NULL &&
	    sender_encrypt_set(sender_encrypt_el(doc, e->reflist, NS_XENC, "xenc",
	    "DataReference"), "URI", ref);
	if (!ok) {
		xmlFreeNode(ed);
		ed = NULL;
	}
	return ed;
}

/* AES-128-GCM with a random IV: IV || ciphertext || tag (arena). */
static int
sender_encrypt_gcm(struct arena *a, const unsigned char *key,
    const unsigned char *in, size_t n, unsigned char **ret, size_t *ret_len)
{
	size_t total = SENDER_ENC_GCM_IV + n + SENDER_ENC_GCM_TAG, got = 0;
	unsigned char *out = arena_alloc(a, total);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int fin = 0, rc = -1;

	if (out == NULL || c == NULL || (n > 0 && in == NULL) ||
	    RAND_bytes(out, SENDER_ENC_GCM_IV) != 1)
		goto out;
	if (EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, SENDER_ENC_GCM_IV,
	    NULL) != 1 ||
	    EVP_EncryptInit_ex(c, NULL, NULL, key, out) != 1 ||
	    wss_evp_update(c, out + SENDER_ENC_GCM_IV, in, n, &got) < 0 ||
	    EVP_EncryptFinal_ex(c, out + SENDER_ENC_GCM_IV + got, &fin) != 1 ||
	    got != n || EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG,
	    SENDER_ENC_GCM_TAG, out + SENDER_ENC_GCM_IV + n) != 1)
		goto out;
	*ret = out;
	*ret_len = total;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* One part's IV || ciphertext || tag: in the arena, or for a large part
 * (spool_want of the spool bound to this thread, issue 14) in chunks into
 * a spool file, mapped (sender_gcm.c). */
static int
sender_encrypt_one(struct sender_encrypt *e, const struct wss_part *p,
    unsigned char **ret, size_t *ret_len, struct err *err)
{
	const unsigned char *m = NULL;

	if (!spool_want(spool_bound(), p->len))
		return sender_encrypt_gcm(e->a, e->key, p->data, p->len, ret,
		    ret_len);
	if (sender_gcm_spool(spool_bound(), e->key, p, &m, ret_len, err) == -1)
		return -1;
	*ret = (unsigned char *)(uintptr_t)m; /* read-only mapping */
	return 0;
}

/* Prepend the EncryptedKey and then the EncryptedData elements to the
 * Security header (WS-Security 1.1, 5). */
static int
sender_encrypt_insert(xmlNodePtr security, xmlNodePtr ek, xmlNodePtr *eds,
    size_t n)
{
	xmlNodePtr first = security->children;
	size_t i;

	for (i = 0; i <= n; i++) {
		xmlNodePtr node = i == 0 ? ek : eds[i - 1];

		if ((first != NULL ? xmlAddPrevSibling(first, node) :
		    xmlAddChild(security, node)) == NULL)
			return -1;
	}
	return 0;
}

/* The work of sender_encrypt_parts() with *e set up (recipient,
 * agreement options); see there. */
static int
sender_encrypt_run(struct sender_encrypt *e, xmlNodePtr security,
    struct wss_part *parts, size_t n, struct err *err)
{
	struct arena *a = e->a;
	xmlNodePtr *eds = NULL;
	unsigned char **ct = NULL;
	size_t *ct_len = NULL, i, built = 0;
	int rc = -1;

	if (n == 0 || n > SENDER_ENC_MAX_PARTS || security == NULL ||
	    e->recipient == NULL || (eds = arena_calloc(a, n, sizeof(*eds))) ==
	    NULL || (ct = arena_calloc(a, n, sizeof(*ct))) == NULL ||
	    (ct_len = arena_calloc(a, n, sizeof(*ct_len))) == NULL ||
	    RAND_bytes(e->key, sizeof(e->key)) != 1 || sender_encrypt_ek(e) < 0)
		goto out;
	for (built = 0; built < n; built++) {
		const struct wss_part *p = &parts[built];

		if (p->content_id == NULL || sender_encrypt_one(e, p,
		    &ct[built], &ct_len[built], err) < 0 ||
		    (eds[built] = sender_encrypt_ed(e, p)) == NULL)
			goto out;
	}
	if (sender_encrypt_insert(security, e->ek, eds, n) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		parts[i].data = ct[i];
		parts[i].len = ct_len[i];
		parts[i].content_type = "application/octet-stream";
	}
	rc = 0;
out:
	if (rc != 0) {
		for (i = 0; i < built; i++) {
			xmlUnlinkNode(eds[i]);
			xmlFreeNode(eds[i]);
		}
		xmlUnlinkNode(e->ek);
		xmlFreeNode(e->ek);
		err_set(err, ERR_INTERNAL, NULL,
		    "could not encrypt the payloads");
	}
	OPENSSL_cleanse(e->key, sizeof(e->key));
	return rc;
}

/*
 * Encrypt every part for recipient (see sender.h): a random AES-128 key; xenc:EncryptedKey
 * with xenc11 rsa-oaep + sha256 DigestMethod + mgf1sha256, ds:KeyInfo a
 * wsse:SecurityTokenReference with the recipient's X509SubjectKeyIdentifier,
 * and a ReferenceList; one xenc:EncryptedData per part (aes128-gcm,
 * Attachment-Content-Only, MimeType = the part's Content-Type,
 * CipherReference cid: with the Attachment-Ciphertext-Transform), all
 * inserted first into security.  Each part's data becomes IV || ciphertext
 * || tag (arena) and its content_type application/octet-stream.  On
 * failure neither doc nor parts have changed.
 */
int
sender_encrypt_parts(struct arena *a, xmlDocPtr doc, xmlNodePtr security,
    struct wss_part *parts, size_t n, X509 *recipient, struct err *err)
{
	struct sender_encrypt e = { .a = a, .doc = doc, .recipient = recipient };

	return sender_encrypt_run(&e, security, parts, n, err);
}

/*
 * Encrypt every attachment for r (eDelivery AS4 1.15, 1.4.2.7; the work is
 * sender_encrypt_parts); see sender.h.  The EncryptedKey and
 * EncryptedData go first into the existing wsse:Security (after signing:
 * sign-then-encrypt), or into a new one.
 */
int
sender_encrypt_message(struct arena *a, xmlDocPtr doc,
    const struct sender_recipient *r, struct wss_part *parts, size_t n,
    struct err *err)
{
	struct sender_encrypt e = { .a = a, .doc = doc };
	xmlNodePtr env, header = NULL, sec = NULL, made = NULL;
	const char *soap = NULL;

	env = wss_envelope(doc, &soap);
	if (env != NULL && r != NULL && n > 0 && wss_sign_parts_ok(parts, n))
		header = wss_sign_header(env, soap);
	if (header != NULL) {
		sec = xml_child(header, NS_WSSE, "Security");
		if (sec == NULL)
			sec = made = wss_sign_security_new(header, soap);
	}
	if (sec == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not encrypt the payloads: no envelope, payloads "
		    "or recipient");
	e.recipient = sender_recipient_cert(r);
	e.agree = sender_recipient_agree(r);
	if (sender_encrypt_run(&e, sec, parts, n, err) == -1) {
		wss_sign_drop(made);
		return -1;
	}
	return 0;
}
