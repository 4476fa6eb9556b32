/*
 * wss_decrypt.c — decryption of the SwA attachments a partner encrypted
 * (WS-Security SwA Profile 1.1, 5.5; eDelivery AS4 1.15, 5.1.6; ebMS3 Core
 * 7.6: signed first, then encrypted), and the same encryption for
 * `as4gw push --encrypt`.
 *
 * Decryption runs in two phases.  The first reads only structure and
 * algorithm URIs and decides the policy (EBMS:0103) before any cryptography.
 * The second decrypts; every failure from there on — base64, key transport,
 * a wrong key, a GCM tag, a missing part, padding, Attachment-Complete
 * headers — gives the same EBMS:0102 answer (only the log detail says what
 * failed, issue 10 item 12), and after a key transport failure the work
 * goes on with a random key, so that neither the answer nor the timing
 * tells an RSA failure from a tag failure (Bleichenbacher/Manger
 * countermeasure; NEGATIVE-CASES 49).  Parts change only when everything
 * decrypted — except with AES-CBC, which authenticates nothing: there a
 * failure (bad padding above all) is reported but deferred, the parts get
 * what came out, and wss_inbound goes on to verify the signature as for
 * any other ciphertext before it answers EBMS:0102, so that a valid and
 * an invalid padding cost the same and get the same answer (padding
 * oracle, issue 10 item 6; wss_decrypt_mask).
 *
 * The key that unwraps an EncryptedKey is the leg's decryption pair its
 * ds:KeyInfo names (wss_keyring.c: during a rotation a leg has several);
 * a reference naming none of them fails like any other key transport,
 * and no key is ever tried on the off chance.
 *
 * eDelivery AS4 2.0 replaces key transport by key agreement: an
 * EncryptedKey with a kw-aes EncryptionMethod and an xenc:AgreementMethod
 * in its ds:KeyInfo (wss_agree.c) — the pair its RecipientKeyInfo names,
 * X25519 or ECDH-ES, HKDF or ConcatKDF, RFC 3394 unwrap — under the same
 * two phases and the same random-key discipline.
 *
 * The ciphertext of an attachment is its MIME part, found by Content-ID in
 * the parts array (no xmlsec IO callback involved); key transport runs
 * through our xmlsec transforms (wss_oaep.c), block decryption directly on
 * OpenSSL EVP (wss_cipher.c).
 */
#include "wss_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>
#include <xmlsec/openssl/evp.h>

#include "../util/codec.h"
#include "../mime/mime_hdr.h"
#include "../xml/xml.h"

#define WSS_DEC_CONTENT_ONLY WSS_SWA_NS "Attachment-Content-Only"
#define WSS_DEC_COMPLETE WSS_SWA_NS "Attachment-Complete"
#define WSS_DEC_CIPHERTEXT WSS_SWA_NS "Attachment-Ciphertext-Transform"

#define WSS_DEC_MAX_KEYS 4        /* xenc:EncryptedKey per message */
#define WSS_DEC_MAX_DATA 64       /* xenc:EncryptedData per message */
#define WSS_DEC_MAX_HEADERS 16384 /* Attachment-Complete header block */
#define WSS_DEC_MAX_RSA 1024      /* RSA block: 8192-bit modulus */

#define WSS_DEC_KT (WSS_KT_RSA_OAEP | WSS_KT_RSA_OAEP_MGF1P | WSS_KT_RSA_1_5)
#define WSS_DEC_KW (WSS_KW_AES128 | WSS_KW_AES192 | WSS_KW_AES256)
#define WSS_DEC_ENC (WSS_ENC_AES128_GCM | WSS_ENC_AES256_GCM | WSS_ENC_AES_CBC)


/* One xenc:EncryptedData child of the Security header. */
struct wss_dec_data {
	xmlNodePtr node;
	const char *id;            /* its Id (arena), or NULL */
	const char *alg;           /* EncryptionMethod Algorithm (arena) */
	int complete;              /* Type Attachment-Complete */
	int used;                  /* listed by an EncryptedKey */
	struct wss_part *part;     /* what it decrypts (staged until the end) */
	unsigned char *plain;
	size_t plain_len;
	int spooled;               /* plain is a spool mapping (read-only) */
	const char *content_type;  /* Complete: from the plaintext headers; Content-Only: @MimeType */
	const char *headers;
	size_t headers_len;
};

/* The state of one wss_decrypt() call. */
struct wss_dec {
	struct arena *a;
	xmlDocPtr doc;             /* for BinarySecurityToken references */
	const struct wss_policy *pol;
	struct wss_part *parts;
	size_t n_parts;
	xmlNodePtr keys[WSS_DEC_MAX_KEYS];
	struct wss_agree *agree[WSS_DEC_MAX_KEYS]; /* key agreement, else NULL */
	size_t n_keys;
	struct wss_dec_data *data; /* WSS_DEC_MAX_DATA, arena */
	size_t n_data;
	int failed;
	int cbc;                   /* an EncryptedData uses AES-CBC */
	const char *retiring;      /* a retiring pair decrypted (its fingerprint) */
	struct err spool_err;      /* spooling a large plaintext failed (ENOSPC) */
	char why[sizeof(((struct err *)0)->detail)]; /* the first failure, for the log */
};

/* The one answer to every decryption failure: a fixed msg; what failed
 * goes to the log only (issue 10 item 12). */
static int
wss_dec_fail(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0102", "decryption failed");
	err_detail(err, "could not decrypt the encrypted payloads: %s", why);
	return -1;
}

/* Phase 2 failed: remember the first reason (log only) and go on. */
static void
wss_dec_failed(struct wss_dec *d, const char *why)
{
	if (!d->failed)
		(void)snprintf(d->why, sizeof(d->why), "%s", why);
	d->failed = 1;
}

/* After an AES-CBC decryption, any failure before the signature verified
 * is answered as a decryption failure; see wss_int.h. */
void
wss_decrypt_mask(struct err *err)
{
	char why[sizeof(err->detail)];

	/* no room to spool (issue 14) tells nothing about the ciphertext:
	 * the 503 a partner retries after */
	if (err->kind == ERR_STORE || (err->kind == ERR_EBMS &&
	    err->ebms_code != NULL && strcmp(err->ebms_code, "EBMS:0102") == 0))
		return;
	if (snprintf(why, sizeof(why), "after AES-CBC decryption, before the "
	    "signature verified: %s%s%.300s", err->msg,
	    err->detail[0] != '\0' ? ": " : "", err->detail) < 0)
		why[0] = '\0';
	err_clear(err);
	(void)wss_dec_fail(err, why);
}

/* A policy refusal (EBMS:0103), decided from public algorithm URIs only. */
static int
wss_dec_refuse(struct err *err, const char *why, const char *what)
{
	err_set(err, ERR_EBMS, "EBMS:0103",
	    "encryption does not meet the security policy");
	err_detail(err, "%s: %.160s", why, what);
	return -1;
}

/* The Algorithm of node's single xenc:EncryptionMethod (arena), or NULL. */
static const char *
wss_dec_alg(struct arena *a, const xmlNode *node, xmlNodePtr *ret_method)
{
	xmlNodePtr m = xml_child(node, NS_XENC, "EncryptionMethod");

	if (m == NULL || xml_count(node, NS_XENC, "EncryptionMethod") != 1)
		return NULL;
	*ret_method = m;
	return xml_attr(a, m, NULL, "Algorithm");
}

/*
 * Phase 1 for an EncryptedKey with a kw-aes EncryptionMethod: its
 * ds:KeyInfo must hold one xenc:AgreementMethod (XML Encryption 1.1, 5.6;
 * eDelivery AS4 2.0), parsed here — the wrap, agreement, KDF and PRF or
 * digest URIs decide the policy (EBMS:0103) before any cryptography.
 */
static int
wss_dec_check_agree(struct wss_dec *d, xmlNodePtr ek, unsigned kw,
    const char *uri, struct err *err)
{
	xmlNodePtr ki = xml_child(ek, NS_DS, "KeyInfo");
	xmlNodePtr am = xml_child(ki, NS_XENC, "AgreementMethod");
	struct wss_agree *p;

	if ((d->pol->algs & kw) == 0)
		return wss_dec_refuse(err, "key wrap not allowed", uri);
	if (am == NULL)
		return wss_dec_refuse(err, "key wrap without key agreement "
		    "(no xenc:AgreementMethod) not supported", uri);
	if (xml_count(ek, NS_DS, "KeyInfo") != 1 ||
	    xml_count(ki, NULL, NULL) != 1)
		return wss_dec_fail(err, "EncryptedKey KeyInfo holds more "
		    "than its AgreementMethod");
	if (d->n_keys == WSS_DEC_MAX_KEYS)
		return wss_dec_fail(err, "too many EncryptedKey elements");
	if ((p = arena_calloc(d->a, 1, sizeof(*p))) == NULL)
		return wss_dec_fail(err, "out of request memory");
	if (wss_agree_parse(d->a, am, d->pol->algs, p, err) < 0)
		return -1;
	p->kek_len = wss_kdf_kw_len(kw);
	d->agree[d->n_keys] = p;
	d->keys[d->n_keys++] = ek;
	return 0;
}

/* Phase 1 for an EncryptedKey: allowed key transport with known
 * parameters, or key agreement (else EBMS:0103).  On a leg without the
 * key transport bits (eDelivery AS4 2.0) rsa-oaep is refused here, so
 * nothing downgrades to RSA. */
static int
wss_dec_check_key(struct wss_dec *d, xmlNodePtr ek, struct err *err)
{
	xmlNodePtr m = NULL;
	const char *uri = wss_dec_alg(d->a, ek, &m);
	unsigned bit = wss_alg_from_uri(uri);

	if (uri == NULL)
		return wss_dec_fail(err, "EncryptedKey without one "
		    "EncryptionMethod Algorithm");
	if ((bit & WSS_DEC_KW) != 0)
		return wss_dec_check_agree(d, ek, bit, uri, err);
	if ((bit & WSS_DEC_KT) == 0 || (d->pol->algs & bit) == 0)
		return wss_dec_refuse(err, "key transport not allowed", uri);
	if (!wss_oaep_usable(m))
		return wss_dec_refuse(err, "key transport parameters not "
		    "allowed", uri);
	if (d->n_keys == WSS_DEC_MAX_KEYS)
		return wss_dec_fail(err, "too many EncryptedKey elements");
	d->keys[d->n_keys++] = ek;
	return 0;
}

/* Phase 1 for an EncryptedData: allowed block algorithm and an SwA type
 * (else EBMS:0103). */
static int
wss_dec_check_data(struct wss_dec *d, xmlNodePtr ed, struct err *err)
{
	xmlNodePtr m = NULL;
	const char *uri = wss_dec_alg(d->a, ed, &m);
	const char *type = xml_attr(d->a, ed, NULL, "Type");
	unsigned bit = wss_alg_from_uri(uri);
	struct wss_dec_data *x;

	if (uri == NULL)
		return wss_dec_fail(err, "EncryptedData without one "
		    "EncryptionMethod Algorithm");
	if ((bit & WSS_DEC_ENC) == 0 || (d->pol->algs & bit) == 0 ||
	    wss_cipher_key_len(uri) == 0)
		return wss_dec_refuse(err, "encryption algorithm not allowed",
		    uri);
	if (type == NULL || (strcmp(type, WSS_DEC_CONTENT_ONLY) != 0 &&
	    strcmp(type, WSS_DEC_COMPLETE) != 0))
		return wss_dec_refuse(err, "encrypted data type not supported",
		    type != NULL ? type : "(none)");
	if (d->n_data == WSS_DEC_MAX_DATA)
		return wss_dec_fail(err, "too many EncryptedData elements");
	x = &d->data[d->n_data++];
	x->node = ed;
	x->alg = uri;
	d->cbc |= bit == WSS_ENC_AES_CBC;
	x->complete = strcmp(type, WSS_DEC_COMPLETE) == 0;
	x->id = xml_attr(d->a, ed, NULL, "Id");
	/* Content-Only: the plaintext's media type travels in @MimeType (XML
	 * Encryption 3.1; WSS4J sets it), needed by the SwA signature transform */
	if (!x->complete)
		x->content_type = xml_attr(d->a, ed, NULL, "MimeType");
	return 0;
}

/* See wss_int.h (AES-CBC needs a signature: issue 10 item 6). */
int
wss_decrypt_cbc_listed(const xmlNode *security)
{
	xmlNodePtr c, m;
	xmlChar *alg;
	unsigned bit = 0;

	for (c = xml_child(security, NS_XENC, "EncryptedData");
	    c != NULL && bit == 0; c = xml_next(c, NS_XENC, "EncryptedData")) {
		m = xml_child(c, NS_XENC, "EncryptionMethod");
		alg = xmlGetNoNsProp(m, (const xmlChar *)"Algorithm");
		bit = wss_alg_from_uri((const char *)alg) & WSS_ENC_AES_CBC;
		xmlFree(alg);
	}
	return bit != 0;
}

/* Phase 1: every EncryptedKey and EncryptedData of the Security header. */
static int
wss_dec_collect(struct wss_dec *d, xmlNodePtr security, struct err *err)
{
	xmlNodePtr n;
	int rc = 0;

	for (n = xml_child(security, NULL, NULL); n != NULL && rc == 0;
	    n = xml_next(n, NULL, NULL)) {
		if (xml_is(n, NS_XENC, "EncryptedKey"))
			rc = wss_dec_check_key(d, n, err);
		else if (xml_is(n, NS_XENC, "EncryptedData"))
			rc = wss_dec_check_data(d, n, err);
	}
	return rc;
}

/* The EncryptedData a DataReference names ("#id", or the bare id AS4.NET
 * writes), or NULL when none or more than one carries that Id. */
static struct wss_dec_data *
wss_dec_ref(struct wss_dec *d, const xmlNode *ref)
{
	const char *uri = xml_attr(d->a, ref, NULL, "URI"), *id;
	struct wss_dec_data *hit = NULL;
	size_t i, hits = 0;

	if (uri == NULL)
		return NULL;
	id = uri[0] == '#' ? uri + 1 : uri;
	for (i = 0; i < d->n_data && id[0] != '\0'; i++) {
		if (d->data[i].id != NULL && strcmp(d->data[i].id, id) == 0) {
			hit = &d->data[i];
			hits++;
		}
	}
	return hits == 1 ? hit : NULL;
}

/* The part whose Content-ID the cid: URL (without "cid:") names. */
static struct wss_part *
wss_dec_find(struct wss_dec *d, const char *url)
{
	const char *id = mime_cid_decode(d->a, url);
	size_t i;

	for (i = 0; id != NULL && i < d->n_parts; i++)
		if (d->parts[i].content_id != NULL &&
		    strcmp(d->parts[i].content_id, id) == 0)
			return &d->parts[i];
	return NULL;
}

/* The part an EncryptedData's CipherReference names: CipherData holds only
 * a CipherReference "cid:..." whose xenc:Transforms hold exactly the SwA
 * Attachment-Ciphertext-Transform (SwA Profile 1.1, 5.5.2). */
static struct wss_part *
wss_dec_part(struct wss_dec *d, const xmlNode *ed)
{
	xmlNodePtr cd = xml_child(ed, NS_XENC, "CipherData");
	xmlNodePtr cr = xml_child(cd, NS_XENC, "CipherReference");
	xmlNodePtr tr = xml_child(cr, NS_XENC, "Transforms");
	xmlNodePtr t = xml_child(tr, NS_DS, "Transform");
	const char *uri = xml_attr(d->a, cr, NULL, "URI");
	const char *alg = xml_attr(d->a, t, NULL, "Algorithm");

	if (xml_count(ed, NS_XENC, "CipherData") != 1 ||
	    xml_count(cd, NULL, NULL) != 1 || cr == NULL ||
	    xml_count(cr, NULL, NULL) != 1 || xml_count(tr, NULL, NULL) != 1 ||
	    alg == NULL || strcmp(alg, WSS_DEC_CIPHERTEXT) != 0 ||
	    uri == NULL || strncasecmp(uri, "cid:", 4) != 0)
		return NULL;
	return wss_dec_find(d, uri + 4);
}

/* An EncryptedData's optional ds:KeyInfo must point at its EncryptedKey
 * (a wsse:SecurityTokenReference with one wsse:Reference "#<EK Id>"). */
static int
wss_dec_keyinfo(struct wss_dec *d, const xmlNode *ed, const char *ek_id)
{
	xmlNodePtr ki = xml_child(ed, NS_DS, "KeyInfo");
	xmlNodePtr str = xml_child(ki, NS_WSSE, "SecurityTokenReference");
	xmlNodePtr ref = xml_child(str, NS_WSSE, "Reference");
	const char *uri = xml_attr(d->a, ref, NULL, "URI");

	if (ki == NULL)
		return 0;
	if (xml_count(ed, NS_DS, "KeyInfo") != 1 ||
	    xml_count(ki, NULL, NULL) != 1 || xml_count(str, NULL, NULL) != 1 ||
	    uri == NULL || ek_id == NULL || uri[0] != '#' ||
	    strcmp(uri + 1, ek_id) != 0)
		return -1;
	return 0;
}

/* Where the Attachment-Complete header block ends: *ret_hl = its length
 * (lines with their line ends, without the empty line), *ret_skip = where
 * the content starts.  -1 when there is no empty line within the limit. */
static int
wss_dec_split(const unsigned char *p, size_t n, size_t *ret_hl,
    size_t *ret_skip)
{
	size_t i, lim = n < WSS_DEC_MAX_HEADERS ? n : WSS_DEC_MAX_HEADERS;
	size_t hl = 0, skip = 0;

	if (n >= 1 && p[0] == '\n')
		skip = 1;
	else if (n >= 2 && p[0] == '\r' && p[1] == '\n')
		skip = 2;
	for (i = 0; skip == 0 && i + 1 < lim; i++) {
		if (p[i] != '\n')
			continue;
		hl = i + 1;
		if (p[i + 1] == '\n')
			skip = i + 2;
		else if (i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n')
			skip = i + 3;
	}
	if (skip == 0)
		return -1;
	*ret_hl = hl;
	*ret_skip = skip;
	return 0;
}

/* The unfolded value of header `name` in the block (NULL when absent);
 * *bad is set for a malformed block or a repeated field (mime_hdr_get). */
static char *
wss_dec_header(struct arena *a, const char *h, size_t n, const char *name,
    int *bad)
{
	const char *v;
	size_t len;
	char *found = NULL;

	switch (mime_hdr_get(h, n, name, &v, &len)) {
	case 1:
		if ((found = mime_hdr_unfold(a, v, len)) == NULL)
			*bad = 1;
		break;
	case 0:
		break;
	default:
		*bad = 1;
		break;
	}
	return found;
}

/*
 * Attachment-Complete (SwA Profile 1.1, 5.5.1): the plaintext is the part's
 * MIME headers, an empty line and the content.  Content-Type defaults to
 * text/plain (RFC 2045 5.2); Content-Transfer-Encoding may be identity or
 * base64.
 */
static int
wss_dec_complete(struct wss_dec *d, struct wss_dec_data *x, unsigned char *p,
    size_t n)
{
	struct arena *a = d->a;
	const char *h = (const char *)p, *ct, *cte;
	struct wss_cipher_out o;
	struct wss_bytes in;
	size_t hl, skip;
	int bad = 0;

	if (wss_dec_split(p, n, &hl, &skip) < 0 || memchr(p, '\0', hl) != NULL)
		return -1;
	ct = wss_dec_header(a, h, hl, "Content-Type", &bad);
	cte = wss_dec_header(a, h, hl, "Content-Transfer-Encoding", &bad);
	x->headers = arena_strndup(a, h, hl);
	if (bad || x->headers == NULL)
		return -1;
	x->headers_len = hl;
	x->content_type = ct != NULL && ct[0] != '\0' ? ct : "text/plain";
	if (cte != NULL && strcasecmp(cte, "base64") == 0) {
		/* a large content decodes into a spool file (issue 14) */
		in.p = p + skip;
		in.len = n - skip;
		if (wss_cipher_unbase64(a, &in, &o) < 0) {
			if (o.err.kind != ERR_NONE && d->spool_err.kind == ERR_NONE)
				d->spool_err = o.err;
			return -1;
		}
		x->plain = o.p;
		x->plain_len = o.len;
		x->spooled = o.spooled;
		return 0;
	}
	if (cte != NULL && strcasecmp(cte, "binary") != 0 &&
	    strcasecmp(cte, "7bit") != 0 && strcasecmp(cte, "8bit") != 0)
		return -1;
	x->plain = p + skip;
	x->plain_len = n - skip;
	return 0;
}

/* Phase 2 for one EncryptedData with the session key: stage its plaintext
 * (and for Complete its headers); a failure is noted in d.  AES-CBC with
 * a bad padding stages what came out all the same (see the top). */
static void
wss_dec_data(struct wss_dec *d, struct wss_dec_data *x, const char *ek_id,
    const unsigned char *key, size_t key_len)
{
	struct wss_part *part = wss_dec_part(d, x->node);
	struct wss_bytes k = { key, key_len }, in;
	struct wss_cipher_out o;
	const char *why = NULL;
	size_t i;
	int rc = -1;

	memset(&o, 0, sizeof(o));
	if (part == NULL || part->decrypted)
		why = "no MIME part for an EncryptedData's CipherReference "
		    "(or no Attachment-Ciphertext-Transform)";
	else if (wss_dec_keyinfo(d, x->node, ek_id) < 0)
		why = "EncryptedData KeyInfo does not name its EncryptedKey";
	for (i = 0; why == NULL && i < d->n_data; i++)
		if (d->data[i].part == part)
			why = "one part named by two EncryptedData";
	if (why == NULL) {
		/* a large part: in pieces into a spool file (issue 14) */
		in.p = part->data;
		in.len = part->len;
		rc = wss_cipher_run(d->a, x->alg, &k, &in, &o);
		why = o.why;
		if (o.err.kind != ERR_NONE && d->spool_err.kind == ERR_NONE)
			d->spool_err = o.err;
	}
	if (rc >= 0) {
		x->part = part;
		x->plain = o.p;
		x->plain_len = o.len;
		x->spooled = o.spooled;
	}
	if (rc >= 0 && x->complete) {
		x->plain = NULL;
		if (wss_dec_complete(d, x, o.p, o.len) < 0 && rc == 0) {
			why = "Attachment-Complete plaintext is not a MIME part";
			rc = -1;
		}
	}
	if (rc != 0)
		wss_dec_failed(d, why);
}

/* An EncryptedKey's one CipherData/CipherValue, decoded (arena). */
static int
wss_dec_cipher_value(struct wss_dec *d, const xmlNode *ek,
    unsigned char **ret, size_t *ret_len)
{
	xmlNodePtr cd = xml_child(ek, NS_XENC, "CipherData");
	const char *text = xml_text(d->a, xml_child(cd, NS_XENC,
	    "CipherValue"));

	if (text == NULL || xml_count(ek, NS_XENC, "CipherData") != 1 ||
	    xml_count(cd, NULL, NULL) != 1 || strlen(text) > 4 * WSS_DEC_MAX_RSA)
		return -1;
	return codec_unbase64(d->a, text, strlen(text), ret, ret_len);
}

/* Decrypt an EncryptedKey's CipherValue with xkey into key[0..want); key
 * untouched on failure. */
static int
wss_dec_unwrap(struct wss_dec *d, xmlNodePtr ek, xmlSecKeyPtr xkey,
    unsigned char *key, size_t want)
{
	xmlNodePtr m = xml_child(ek, NS_XENC, "EncryptionMethod");
	unsigned char *ct = NULL, out[WSS_DEC_MAX_RSA];
	size_t ct_len = 0, n = 0;
	int rc = -1;

	if (wss_dec_cipher_value(d, ek, &ct, &ct_len) < 0)
		goto out;
	if (xkey != NULL && wss_oaep_run(m, xkey, 0, ct, ct_len, out,
	    sizeof(out), &n) == 0 && n == want) {
		memcpy(key, out, want);
		rc = 0;
	}
out:
	OPENSSL_cleanse(out, sizeof(out));
	return rc;
}

/*
 * Key transport for one EncryptedKey with the decryption pair its key
 * reference names (wss_keyring_pick: never by trying keys); a reference
 * naming no pair is noted as the failure (EBMS:0102) and key stays random.
 * 0 the session key is in key[0..want), -1 not.
 */
static int
wss_dec_transport(struct wss_dec *d, xmlNodePtr ek, unsigned char *key,
    size_t want)
{
	const struct wss_keyring *r = d->pol->decrypt_keys;
	struct err e;
	xmlSecKeyPtr xkey;
	size_t i = 0;
	int rc;

	err_clear(&e);
	if (wss_keyring_pick(r, d->a, d->doc, ek, &i, &e) < 0) {
		wss_dec_failed(d, e.detail);
		return -1;
	}
	xkey = wss_key_xmlsec(wss_keyring_key(r, i));
	if (xkey == NULL)
		wss_dec_failed(d, "decryption key not usable");
	rc = wss_dec_unwrap(d, ek, xkey, key, want);
	if (xkey != NULL)
		xmlSecKeyDestroy(xkey);
	if (rc == 0 && wss_keyring_retiring(r, i))
		d->retiring = wss_keyring_fp(r, i);
	return rc;
}

/*
 * Key agreement for EncryptedKey k (wss_agree.c): the pair its
 * RecipientKeyInfo names (wss_keyring_pick_ref, never by trying keys),
 * which must be of the agreement's type; then agreement, KDF and unwrap
 * into key[0..want).  A failure is noted and key stays random.
 */
static int
wss_dec_agree(struct wss_dec *d, size_t k, unsigned char *key, size_t want)
{
	const struct wss_keyring *r = d->pol->decrypt_keys;
	const struct wss_agree *p = d->agree[k];
	const char *why = NULL;
	unsigned char *ct = NULL;
	struct wss_bytes w = { NULL, 0 };
	size_t i = 0;
	struct err e;

	err_clear(&e);
	if (wss_keyring_pick_ref(r, d->a, d->doc, p->recipient, &i, &e) < 0) {
		wss_dec_failed(d, e.detail);
		return -1;
	}
	if (wss_dec_cipher_value(d, d->keys[k], &ct, &w.len) < 0) {
		why = "EncryptedKey CipherValue malformed";
	} else {
		w.p = ct;
		if (wss_agree_unwrap(p, wss_key_pkey(wss_keyring_key(r, i)),
		    &w, key, want, &why) == 0)
			why = NULL;
	}
	if (why != NULL) {
		wss_dec_failed(d, why);
		return -1;
	}
	if (wss_keyring_retiring(r, i))
		d->retiring = wss_keyring_fp(r, i);
	return 0;
}

/* The Id an EncryptedData's SecurityTokenReference may name: Id (WSS4J,
 * the eDelivery 1.15 sample) or else wsu:Id (the eDelivery 2.0 sample). */
static const char *
wss_dec_ek_id(struct wss_dec *d, const xmlNode *ek)
{
	const char *id = xml_attr(d->a, ek, NULL, "Id");

	return id != NULL ? id : xml_attr(d->a, ek, NS_WSU, "Id");
}

/*
 * Phase 2 for one EncryptedKey: a random key first, replaced by the real
 * one when key transport works, then every EncryptedData of its
 * ReferenceList — also with the random key, so that a key transport
 * failure costs what a tag failure costs.
 */
static void
wss_dec_key(struct wss_dec *d, size_t k)
{
	xmlNodePtr ek = d->keys[k];
	xmlNodePtr list = xml_child(ek, NS_XENC, "ReferenceList"), r;
	const char *ek_id = wss_dec_ek_id(d, ek);
	struct wss_dec_data *x;
	unsigned char key[32];
	size_t want = 16, n_refs = xml_count(list, NS_XENC, "DataReference");

	r = xml_child(list, NS_XENC, "DataReference");
	if (r == NULL || n_refs > WSS_DEC_MAX_DATA ||
	    xml_count(ek, NS_XENC, "ReferenceList") != 1 ||
	    xml_count(list, NULL, NULL) != n_refs) {
		wss_dec_failed(d, "EncryptedKey without one ReferenceList of "
		    "DataReferences");
		r = NULL;
	}
	x = r != NULL ? wss_dec_ref(d, r) : NULL;
	if (x != NULL && wss_cipher_key_len(x->alg) != 0)
		want = wss_cipher_key_len(x->alg);
	if (RAND_bytes(key, sizeof(key)) != 1 || (d->agree[k] != NULL ?
	    wss_dec_agree(d, k, key, want) : wss_dec_transport(d, ek, key,
	    want)) < 0)
		wss_dec_failed(d, "key transport failed (EncryptedKey not for "
		    "our key, corrupt, or of the wrong length)");
	for (; r != NULL; r = xml_next(r, NS_XENC, "DataReference")) {
		x = wss_dec_ref(d, r);
		if (x == NULL || x->used)
			wss_dec_failed(d, "DataReference names no EncryptedData "
			    "(or one named twice)");
		else
			wss_dec_data(d, x, ek_id, key, want);
		if (x != NULL)
			x->used = 1;
	}
	OPENSSL_cleanse(key, sizeof(key));
}

/* Commit the staged plaintexts to the parts (after an AES-CBC failure,
 * those that there are). */
static void
wss_dec_apply(struct wss_dec *d)
{
	struct wss_dec_data *x;
	size_t i;

	for (i = 0; i < d->n_data; i++) {
		x = &d->data[i];
		if (x->part == NULL || x->plain == NULL)
			continue;
		x->part->data = x->plain;
		x->part->len = x->plain_len;
		x->part->decrypted = 1;
		if (x->complete) {
			x->part->content_type = x->content_type;
			x->part->headers = x->headers;
			x->part->headers_len = x->headers_len;
		} else if (x->content_type != NULL && x->content_type[0] != '\0') {
			x->part->content_type = x->content_type;
		}
	}
}

/* Phase 2 over all EncryptedKeys; every EncryptedData must be decrypted. */
static void
wss_dec_run(struct wss_dec *d)
{
	size_t i;

	for (i = 0; i < d->n_keys; i++)
		wss_dec_key(d, i);
	for (i = 0; i < d->n_data; i++)
		if (!d->data[i].used)
			wss_dec_failed(d, "EncryptedData not listed by an "
			    "EncryptedKey");
}

/* Decrypt the payloads the Security header encrypts; see wss_int.h. */
int
wss_decrypt(struct arena *a, xmlDocPtr doc, xmlNodePtr security,
    struct wss_part *parts, size_t n_parts, const struct wss_policy *pol,
    struct wss_dec_report *ret, struct err *err)
{
	struct wss_dec d;
	size_t i;

	memset(&d, 0, sizeof(d));
	memset(ret, 0, sizeof(*ret));
	d.a = a;
	d.doc = doc;
	d.pol = pol;
	d.parts = parts;
	d.n_parts = n_parts;
	d.data = arena_calloc(a, WSS_DEC_MAX_DATA, sizeof(*d.data));
	if (d.data == NULL)
		return wss_dec_fail(err, "out of request memory");
	if (wss_dec_collect(&d, security, err) < 0)
		return -1;
	if (d.n_keys == 0 && d.n_data == 0)
		return 0;
	if (pol->decrypt_keys == NULL)
		return wss_dec_refuse(err, "encrypted message", "the leg has "
		    "no decryption key");
	if (d.n_keys == 0)
		return wss_dec_fail(err, "EncryptedData without EncryptedKey");
	ret->cbc = d.cbc;
	wss_dec_run(&d);
	if (d.failed && (!d.cbc || d.spool_err.kind != ERR_NONE)) {
		for (i = 0; i < d.n_data; i++)
			if (d.data[i].plain != NULL && !d.data[i].spooled)
				OPENSSL_cleanse(d.data[i].plain,
				    d.data[i].plain_len);
		/* no room to spool a plaintext: the 503 a partner retries
		 * after, whatever the key or padding (the work is the same) */
		if (d.spool_err.kind != ERR_NONE) {
			*err = d.spool_err;
			return -1;
		}
		return wss_dec_fail(err, d.why);
	}
	if (d.failed) /* AES-CBC: reported, the answer deferred */
		(void)wss_dec_fail(err, d.why);
	wss_dec_apply(&d);
	ret->failed = d.failed;
	ret->n_decrypted = d.n_data;
	ret->retiring = d.failed ? NULL : d.retiring;
	return 0;
}
