/*
 * wss_keyring.c — the gateway's decryption pairs of one leg and the choice
 * of the pair that decrypts a message (README "Rotating keys").
 *
 * During a rotation of the gateway's encryption certificate partners switch
 * at their own pace: some encrypt for the old certificate, some for the new
 * one.  The xenc:EncryptedKey says which (XML Encryption 1.1, 3.5.1: its
 * ds:KeyInfo names the recipient's key; WSS X.509 Token Profile 1.1, 3.2:
 * a wsse:SecurityTokenReference by X509IssuerSerial, SubjectKeyIdentifier,
 * ThumbprintSHA1 or a BinarySecurityToken), and that reference alone picks
 * the pair.  Trying each key in turn would make every configured key an
 * oracle and multiply the RSA cost of a forged message; so a reference that
 * names none of the pairs is a decryption failure (EBMS:0102) before any
 * key is used.  References are resolved by wss_keyinfo_resolve(), the one
 * reader of that grammar, against a trust (src/trust) listing the pairs'
 * certificates as the ones references may name.
 */
#include "wss_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "../trust/trust.h"
#include "../xml/xml.h"

/* Hex digits of the SHA-256 fingerprint kept for the log. */
#define WSS_KEYRING_FP_HEX 16
/* Characters of a reference's text quoted in the log. */
#define WSS_KEYRING_QUOTE 120

struct wss_keyring_pair {
	struct wss_key *key;
	char fp[8 + WSS_KEYRING_FP_HEX];   /* "sha256:" + hex + NUL */
	int retiring;
};

struct wss_keyring {
	struct wss_keyring_pair pairs[WSS_KEYRING_MAX];
	size_t n;
	struct trust *index;       /* the pairs' certificates, for references */
	char fps[WSS_KEYRING_MAX * 26];  /* "fp1, fp2" for the log */
};

/* The SHA-256 of x's DER in lower-case hex (64 digits and NUL). */
static int
wss_keyring_sha256(X509 *x, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	if (X509_digest(x, EVP_sha256(), md, &len) != 1 || len != 32)
		return -1;
	for (i = 0; i < len; i++)
		(void)snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}

/* See wss.h. */
int
wss_cert_file_sha256(const char *path, char out[65])
{
	X509 *x = NULL;
	struct err err;
	int rc;

	err_clear(&err);
	if (wss_read_cert(path, &x, &err) < 0)
		return -1;
	rc = wss_keyring_sha256(x, out);
	X509_free(x);
	ERR_clear_error();
	return rc;
}

/* "sha256:" and the first WSS_KEYRING_FP_HEX hex digits of x's. */
static void
wss_keyring_short(X509 *x, char *out, size_t size)
{
	char hex[65];

	if (wss_keyring_sha256(x, hex) < 0)
		(void)snprintf(out, size, "sha256:?");
	else
		(void)snprintf(out, size, "sha256:%.*s", WSS_KEYRING_FP_HEX,
		    hex);
}

/* Load pair i of v into r; a certificate already in r is refused. */
static int
wss_keyring_load(struct wss_keyring *r, const struct wss_keyring_spec *v,
    size_t i, struct err *err)
{
	struct wss_keyring_pair *p = &r->pairs[i];
	size_t j;

	if (wss_key_load(v[i].cert, v[i].key, &p->key, err) < 0)
		return -1;
	r->n = i + 1;
	p->retiring = v[i].retiring;
	wss_keyring_short(wss_key_x509(p->key), p->fp, sizeof(p->fp));
	for (j = 0; j < i; j++)
		if (X509_cmp(wss_key_x509(r->pairs[j].key),
		    wss_key_x509(p->key)) == 0)
			return err_set(err, ERR_CONF, NULL, "decryption "
			    "certificates \"%s\" and \"%s\" are the same "
			    "certificate", v[j].cert, v[i].cert);
	(void)snprintf(r->fps + strlen(r->fps), sizeof(r->fps) -
	    strlen(r->fps), "%s%s", i > 0 ? ", " : "", p->fp);
	return 0;
}

/* Load the pairs and index their certificates; see wss.h. */
int
wss_keyring_new(const struct wss_keyring_spec *v, size_t n,
    struct wss_keyring **ret, struct err *err)
{
	struct wss_keyring *r = NULL;
	const char *certs[WSS_KEYRING_MAX];
	struct trust_files files = { 0 };
	size_t i;
	int rc = -1;

	if (n == 0 || n > WSS_KEYRING_MAX) {
		err_set(err, ERR_CONF, NULL, "1 to %d decryption pairs, not "
		    "%zu", WSS_KEYRING_MAX, n);
		goto out;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		certs[i] = v[i].cert;
		if (wss_keyring_load(r, v, i, err) < 0)
			goto out;
	}
	/* the certificates as "signers" (what references may name) and as
	 * anchors (never used: nothing here is a trust decision) */
	files.signers = certs;
	files.n_signers = n;
	files.anchors = certs;
	files.n_anchors = n;
	if (trust_new(&files, &r->index, err) < 0) {
		err_detail(err, "decryption certificates");
		goto out;
	}
	*ret = r;
	r = NULL;
	rc = 0;
out:
	wss_keyring_free(r);
	return rc;
}

/* Accepts NULL. */
void
wss_keyring_free(struct wss_keyring *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->n; i++)
		wss_key_free(r->pairs[i].key);
	trust_free(r->index);
	free(r);
}

const struct wss_key *
wss_keyring_key(const struct wss_keyring *r, size_t i)
{
	return r->pairs[i].key;
}

/* How many pairs r has (1 .. WSS_KEYRING_MAX). */
size_t
wss_keyring_count(const struct wss_keyring *r)
{
	return r->n;
}

const char *
wss_keyring_fp(const struct wss_keyring *r, size_t i)
{
	return r->pairs[i].fp;
}

int
wss_keyring_retiring(const struct wss_keyring *r, size_t i)
{
	return r->pairs[i].retiring;
}

/* The EBMS:0102 answer for a reference that names no pair of r. */
static int
wss_keyring_fail(const struct wss_keyring *r, const char *named,
    const char *why, struct err *err)
{
	err_clear(err);
	err_set(err, ERR_EBMS, "EBMS:0102", "decryption failed");
	err_detail(err, "EncryptedKey names %s%s%s, none of the decryption "
	    "certificates (%s)", named, why[0] != '\0' ? ": " : "", why,
	    r->fps);
	return -1;
}

/* s, or "" for a value that is absent. */
static const char *
wss_keyring_str(const char *s)
{
	return s != NULL ? s : "";
}

/* The leaf element of a key reference (below ds:KeyInfo, through
 * wsse:SecurityTokenReference and ds:X509Data), for the log. */
static const xmlNode *
wss_keyring_leaf(const xmlNode *ki)
{
	const xmlNode *n = xml_child(ki, NULL, NULL);

	while (n != NULL && (xml_is(n, NS_WSSE, "SecurityTokenReference") ||
	    xml_is(n, NS_DS, "X509Data") ||
	    xml_is(n, NS_DS, "X509IssuerSerial")))
		n = xml_child(n, NULL, NULL);
	return n;
}

/* What a reference names, quoted for the log (arena; never NULL). */
static const char *
wss_keyring_named(struct arena *a, const xmlNode *ki)
{
	const xmlNode *n = wss_keyring_leaf(ki);
	const xmlNode *is = n != NULL ? n->parent : NULL;
	const char *s = NULL, *vt;

	if (n == NULL)
		return "an empty key reference";
	if (xml_is(is, NS_DS, "X509IssuerSerial"))
		s = arena_sprintf(a, "X509IssuerSerial \"%.*s\" %.*s",
		    WSS_KEYRING_QUOTE, wss_keyring_str(xml_text(a,
		    xml_child(is, NS_DS, "X509IssuerName"))), 64,
		    wss_keyring_str(xml_text(a, xml_child(is, NS_DS,
		    "X509SerialNumber"))));
	else if (xml_is(n, NS_WSSE, "Reference"))
		s = arena_sprintf(a, "the token \"%.*s\"", WSS_KEYRING_QUOTE,
		    wss_keyring_str(xml_attr(a, n, NULL, "URI")));
	else if ((vt = xml_attr(a, n, NULL, "ValueType")) != NULL &&
	    strchr(vt, '#') != NULL)
		s = arena_sprintf(a, "%s \"%.*s\"", strchr(vt, '#') + 1,
		    WSS_KEYRING_QUOTE, wss_keyring_str(xml_text(a, n)));
	else
		s = arena_sprintf(a, "%s \"%.*s\"", (const char *)n->name,
		    WSS_KEYRING_QUOTE, wss_keyring_str(xml_text(a, n)));
	return s != NULL ? s : "a key reference";
}

/* The pair whose certificate the reference in holder (a ds:KeyInfo, an
 * xenc:RecipientKeyInfo or a ds:KeyValue in one) names: index into *ret. */
static int
wss_keyring_find(const struct wss_keyring *r, struct arena *a,
    xmlDocPtr doc, const xmlNode *holder, size_t *ret, struct err *err)
{
	char fp[8 + WSS_KEYRING_FP_HEX], why[sizeof(err->msg) + 64];
	struct err e;
	X509 *cert = NULL;
	size_t i;

	err_clear(&e);
	if (wss_keyinfo_resolve(r->index, a, doc, (xmlNodePtr)(uintptr_t)holder,
	    &cert, NULL, &e) < 0) {
		(void)snprintf(why, sizeof(why), "%s%s%.60s", e.msg,
		    e.detail[0] != '\0' ? ", " : "", e.detail);
		return wss_keyring_fail(r, wss_keyring_named(a, holder), why,
		    err);
	}
	for (i = 0; i < r->n; i++) {
		if (X509_cmp(cert, wss_key_x509(r->pairs[i].key)) == 0) {
			*ret = i;
			return 0;
		}
	}
	wss_keyring_short(cert, fp, sizeof(fp));
	return wss_keyring_fail(r, wss_keyring_named(a, holder), fp, err);
}

/* Pick the pair an EncryptedKey names; see wss_int.h. */
int
wss_keyring_pick(const struct wss_keyring *r, struct arena *a,
    xmlDocPtr doc, const xmlNode *ek, size_t *ret, struct err *err)
{
	xmlNodePtr ki = xml_child(ek, NS_DS, "KeyInfo");

	if (ki == NULL && r->n == 1) {
		*ret = 0;
		return 0;
	}
	if (ki == NULL || xml_count(ek, NS_DS, "KeyInfo") != 1)
		return wss_keyring_fail(r, ki == NULL ? "no certificate (no "
		    "ds:KeyInfo) with several pairs configured" :
		    "several ds:KeyInfo", "", err);
	return wss_keyring_find(r, a, doc, ki, ret, err);
}

/* Pick the pair a RecipientKeyInfo names (key agreement); see
 * wss_int.h.  Even with one pair the reference must name it: the
 * agreement needs the right key type, and a partner that names another
 * certificate gets the decryption failure, not a guess. */
int
wss_keyring_pick_ref(const struct wss_keyring *r, struct arena *a,
    xmlDocPtr doc, const xmlNode *rki, size_t *ret, struct err *err)
{
	const xmlNode *holder = rki;
	xmlNodePtr kv = xml_child(rki, NS_DS, "KeyValue");

	/* ENTSOG AS4 4.0 2.2.6.2.5.2 wraps the reference in ds:KeyValue */
	if (kv != NULL && xml_count(rki, NULL, NULL) == 1)
		holder = kv;
	if (holder == NULL || xml_count(holder, NULL, NULL) != 1)
		return wss_keyring_fail(r, "not one key reference in "
		    "RecipientKeyInfo", "", err);
	return wss_keyring_find(r, a, doc, holder, ret, err);
}
