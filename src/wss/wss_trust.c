/*
 * wss_trust.c — where the key of an inbound signature comes from and whether
 * it may sign for the leg (issue 3, "Keys and trust"; NEGATIVE-CASES 41-44).
 *
 * A struct wss_trust holds, for one P-Mode leg, the certificates bound to its
 * eb:From party (the signers) and the trust anchors their chains must reach.
 * wss_trust_resolve() turns a ds:KeyInfo into a certificate following the
 * WS-Security X.509 Token Profile 1.1: a BinarySecurityToken (X509v3, or
 * X509PKIPathv1 with the leaf last, 3.1.2), a KeyIdentifier (SKI, ThumbprintSHA1
 * or an inline X509v3), or ds:X509Data (IssuerSerial, SKI, inline
 * certificate).  References by identifier only ever find a configured signer.
 * A key from ds:KeyValue is never used.  wss_trust_check() then requires the
 * certificate to be one of the signers (DER-equal) and to chain to an anchor
 * at the given instant.
 *
 * Revocation: when the leg lists CRLs, the signer certificate (the leaf,
 * not its CAs: X509_V_FLAG_CRL_CHECK without _ALL) must not be revoked by
 * a current CRL of its issuer; an issuer without a CRL, or whose CRL is past
 * nextUpdate at the instant, fails the check (NEGATIVE-CASES 43).  Without
 * CRLs revocation is not checked.  OCSP is not supported.
 */
#include "wss_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_TRUST_X509_PROFILE "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0"
#define WSS_TRUST_X509V3 WSS_TRUST_X509_PROFILE "#X509v3"
#define WSS_TRUST_PKIPATH WSS_TRUST_X509_PROFILE "#X509PKIPathv1"
#define WSS_TRUST_SKI WSS_TRUST_X509_PROFILE "#X509SubjectKeyIdentifier"
#define WSS_TRUST_THUMBPRINT "http://docs.oasis-open.org/wss/" \
	"oasis-wss-soap-message-security-1.1#ThumbprintSHA1"
#define WSS_TRUST_BASE64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define WSS_TRUST_NS_DSIG11 "http://www.w3.org/2009/xmldsig11#"

/* Wire bounds (issue 3: every size from the wire is bounded). */
#define WSS_TRUST_TOKEN_MAX (64u * 1024u) /* base64 chars of a token */
#define WSS_TRUST_PATH_MAX 10             /* certificates in a PKIPath */
#define WSS_TRUST_ID_MAX 256              /* base64 chars of an SKI/thumbprint */
#define WSS_TRUST_NAME_MAX 4096           /* chars of an X509IssuerName */
#define WSS_TRUST_SERIAL_MAX 128          /* digits of an X509SerialNumber */
#define WSS_TRUST_AVA_MAX 64              /* attributes in an issuer name */
#define WSS_TRUST_SKI_LEN 64              /* longest SKI we index */

/* String types a "#hex" issuer name value may carry. */
#define WSS_TRUST_DN_TYPES (B_ASN1_DIRECTORYSTRING | B_ASN1_IA5STRING | \
	B_ASN1_VISIBLESTRING | B_ASN1_NUMERICSTRING)

/* A signer certificate with the identifiers a message may name it by. */
struct wss_trust_signer {
	X509 *cert;                                /* owned by wss_trust.certs */
	unsigned char ski[WSS_TRUST_SKI_LEN];      /* extension, or RFC 5280 4.2.1.2 (1) */
	size_t ski_len;
	unsigned char sha1[SHA_DIGEST_LENGTH];     /* ThumbprintSHA1 */
	unsigned char *der;                        /* its DER bytes (owned) */
	size_t der_len;
};

/* The instants (seconds) at which a signer's chain was last found valid;
 * ok 0: not known (see wss_trust_check). */
struct wss_trust_window {
	int ok;
	time_t from, until;
};

/* What wss_trust_check() learns: mutable behind a constant wss_trust. */
struct wss_trust_seen {
	pthread_mutex_t lock;
	struct wss_trust_window *win;              /* parallel to signers */
};

struct wss_trust {
	STACK_OF(X509) *certs;                     /* the signers */
	struct wss_trust_signer *signers;
	size_t n_signers;
	X509_STORE *anchors;                       /* and the CRLs */
	unsigned long vflags;                      /* X509_V_FLAG_CRL_CHECK or 0 */
	struct wss_trust_seen *seen;
};

/* One attribute of an issuer name string. */
struct wss_trust_ava {
	ASN1_OBJECT *obj;
	int type;                  /* MBSTRING_UTF8, or the tag of a #hex value */
	const unsigned char *val;  /* into wss_trust_dn.buf */
	size_t len;
	size_t rdn;                /* index of its RDN, left to right */
};

/* An issuer name string split into attributes. */
struct wss_trust_dn {
	struct wss_trust_ava ava[WSS_TRUST_AVA_MAX];
	size_t n;
	unsigned char *buf;        /* unescaped values (arena) */
	size_t used;
};

/* Record an EBMS:0101 FailedAuthentication with log-only detail. */
static int
wss_trust_fail(struct err *err, const char *msg, const char *detail)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "%s", msg);
	if (detail != NULL)
		err_detail(err, "%s", detail);
	return -1;
}

/* arena cleanups with the arena's signature */
static void
wss_trust_x509_free(void *p)
{
	X509_free(p);
}

static void
wss_trust_chain_free(void *p)
{
	sk_X509_pop_free(p, X509_free);
}

/* Hand cert (one reference) to the arena; on failure it is freed. */
static int
wss_trust_adopt(struct arena *a, X509 *cert, X509 **ret, struct err *err)
{
	if (arena_cleanup(a, wss_trust_x509_free, cert) < 0)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	*ret = cert;
	return 0;
}

/* Append every certificate of a PEM file to sk; a file without any is an
 * error that names the file. */
static int
wss_trust_read_pem(const char *path, STACK_OF(X509) *sk, struct err *err)
{
	BIO *bio = BIO_new_file(path, "r");
	X509 *cert;
	size_t n = 0;
	unsigned long e;
	int rc = -1;

	if (bio == NULL) {
		err_set(err, ERR_IO, NULL, "could not open certificate file "
		    "\"%s\": %s", path, strerror(errno));
		goto out;
	}
	ERR_clear_error();
	while ((cert = PEM_read_bio_X509(bio, NULL, wss_no_password,
	    NULL)) != NULL) {
		if (sk_X509_push(sk, cert) <= 0) {
			X509_free(cert);
			err_set(err, ERR_INTERNAL, NULL, "out of memory");
			goto out;
		}
		n++;
	}
	e = ERR_peek_last_error();
	if (ERR_GET_LIB(e) != ERR_LIB_PEM ||
	    ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
		err_set(err, ERR_CONF, NULL, "could not read certificate file "
		    "\"%s\"", path);
	else if (n == 0)
		err_set(err, ERR_CONF, NULL, "no certificate in \"%s\"", path);
	else
		rc = 0;
out:
	ERR_clear_error();
	BIO_free(bio);
	return rc;
}

/* Add crl (one reference, always consumed) to store. */
static int
wss_trust_add_crl(X509_STORE *store, X509_CRL *crl, const char *path,
    struct err *err)
{
	int rc = 0;

	if (X509_STORE_add_crl(store, crl) != 1)
		rc = err_set(err, ERR_CONF, NULL, "could not add CRL from "
		    "\"%s\"", path);
	X509_CRL_free(crl);
	return rc;
}

/* Add every CRL of a file to store: PEM (several allowed) or one DER CRL;
 * a file without any is an error that names the file. */
static int
wss_trust_read_crls(X509_STORE *store, const char *path, struct err *err)
{
	BIO *bio = BIO_new_file(path, "rb");
	X509_CRL *crl;
	unsigned long e;
	size_t n = 0;
	int rc = -1;

	if (bio == NULL) {
		err_set(err, ERR_IO, NULL, "could not open CRL file \"%s\": %s",
		    path, strerror(errno));
		goto out;
	}
	ERR_clear_error();
	while ((crl = PEM_read_bio_X509_CRL(bio, NULL, wss_no_password,
	    NULL)) != NULL) {
		if (wss_trust_add_crl(store, crl, path, err) < 0)
			goto out;
		n++;
	}
	e = ERR_peek_last_error();
	if (n == 0 && BIO_reset(bio) == 0 &&
	    (crl = d2i_X509_CRL_bio(bio, NULL)) != NULL) {
		rc = wss_trust_add_crl(store, crl, path, err);
		goto out;
	}
	if (n == 0 || ERR_GET_LIB(e) != ERR_LIB_PEM ||
	    ERR_GET_REASON(e) != PEM_R_NO_START_LINE)
		err_set(err, ERR_CONF, NULL, "could not read CRL file \"%s\"",
		    path);
	else
		rc = 0;
out:
	ERR_clear_error();
	BIO_free(bio);
	return rc;
}

/* Keep the signer's DER: a token with these very bytes is this signer and
 * need not be parsed again (OpenSSL 3's d2i_X509 decodes the public key
 * through its provider machinery: ~20% of a signed message's CPU). */
static int
wss_trust_signer_der(struct wss_trust_signer *s)
{
	unsigned char *p;
	int n = i2d_X509(s->cert, NULL);

	if (n <= 0 || (s->der = malloc((size_t)n)) == NULL)
		return -1;
	p = s->der;
	if (i2d_X509(s->cert, &p) != n)
		return -1;
	s->der_len = (size_t)n;
	return 0;
}

/* Cache the extensions (so that later reads from threads do not write) and
 * compute the identifiers of each signer. */
static int
wss_trust_index(struct wss_trust *t, struct err *err)
{
	struct wss_trust_signer *s;
	const ASN1_OCTET_STRING *ski;
	unsigned int len;
	size_t i;

	t->n_signers = (size_t)sk_X509_num(t->certs);
	t->signers = calloc(t->n_signers, sizeof(*t->signers));
	if (t->signers == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < t->n_signers; i++) {
		s = &t->signers[i];
		s->cert = sk_X509_value(t->certs, (int)i);
		if (X509_check_purpose(s->cert, -1, 0) != 1)
			return err_set(err, ERR_CONF, NULL, "signer certificate "
			    "%zu has invalid extensions", i + 1);
		ski = X509_get0_subject_key_id(s->cert);
		len = 0;
		if (ski != NULL &&
		    (size_t)ASN1_STRING_length(ski) <= sizeof(s->ski)) {
			len = (unsigned int)ASN1_STRING_length(ski);
			memcpy(s->ski, ASN1_STRING_get0_data(ski), len);
		} else if (ski == NULL && X509_pubkey_digest(s->cert,
		    EVP_sha1(), s->ski, &len) != 1) {
			len = 0;
		}
		s->ski_len = len;
		if (X509_digest(s->cert, EVP_sha1(), s->sha1, &len) != 1)
			return err_set(err, ERR_INTERNAL, NULL, "could not "
			    "digest signer certificate");
		if (wss_trust_signer_der(s) < 0)
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	return 0;
}

/* Put the anchors into t's X509_STORE (extensions cached first). */
static int
wss_trust_store(struct wss_trust *t, STACK_OF(X509) *anchors, struct err *err)
{
	X509 *cert;
	int i;

	for (i = 0; i < sk_X509_num(anchors); i++) {
		cert = sk_X509_value(anchors, i);
		if (X509_check_purpose(cert, -1, 0) != 1)
			return err_set(err, ERR_CONF, NULL, "trust anchor %d "
			    "has invalid extensions", i + 1);
		if (X509_STORE_add_cert(t->anchors, cert) != 1)
			return err_set(err, ERR_INTERNAL, NULL, "could not add "
			    "trust anchor %d", i + 1);
	}
	return 0;
}

/* Accepts NULL. */
static void
wss_trust_seen_free(struct wss_trust_seen *seen)
{
	if (seen == NULL)
		return;
	(void)pthread_mutex_destroy(&seen->lock);
	free(seen->win);
	free(seen);
}

/* No window known yet for any of n signers; NULL when out of memory. */
static struct wss_trust_seen *
wss_trust_seen_new(size_t n)
{
	struct wss_trust_seen *seen = calloc(1, sizeof(*seen));

	if (seen == NULL)
		return NULL;
	seen->win = calloc(n > 0 ? n : 1, sizeof(*seen->win));
	if (seen->win == NULL || pthread_mutex_init(&seen->lock, NULL) != 0) {
		free(seen->win);
		free(seen);
		return NULL;
	}
	return seen;
}

/*
 * Load the signer and anchor PEM files and the CRL files of one leg.
 * Signers and anchors must be non-empty: a leg without either could never
 * accept a signature, which is a configuration error better found at start.
 * CRLs are optional; any turns on the revocation check of the signer.
 */
int
wss_trust_new(const char *const *signer_files, size_t n_signers,
    const char *const *anchor_files, size_t n_anchors,
    const char *const *crl_files, size_t n_crls,
    struct wss_trust **ret, struct err *err)
{
	struct wss_trust *t = NULL;
	STACK_OF(X509) *anchors = NULL;
	size_t i;
	int rc = -1;

	if (n_signers == 0 || n_anchors == 0) {
		err_set(err, ERR_CONF, NULL, "signature trust needs signer "
		    "certificates and trust anchors");
		goto out;
	}
	t = calloc(1, sizeof(*t));
	anchors = sk_X509_new_null();
	if (t == NULL || anchors == NULL ||
	    (t->certs = sk_X509_new_null()) == NULL ||
	    (t->anchors = X509_STORE_new()) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < n_signers; i++)
		if (wss_trust_read_pem(signer_files[i], t->certs, err) < 0)
			goto out;
	for (i = 0; i < n_anchors; i++)
		if (wss_trust_read_pem(anchor_files[i], anchors, err) < 0)
			goto out;
	if (wss_trust_index(t, err) < 0 || wss_trust_store(t, anchors, err) < 0)
		goto out;
	if ((t->seen = wss_trust_seen_new(t->n_signers)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < n_crls; i++)
		if (wss_trust_read_crls(t->anchors, crl_files[i], err) < 0)
			goto out;
	t->vflags = n_crls > 0 ? X509_V_FLAG_CRL_CHECK : 0;
	*ret = t;
	t = NULL;
	rc = 0;
out:
	ERR_clear_error();
	sk_X509_pop_free(anchors, X509_free);
	wss_trust_free(t);
	return rc;
}

/* Free a trust; accepts NULL. */
void
wss_trust_free(struct wss_trust *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; t->signers != NULL && i < t->n_signers; i++)
		free(t->signers[i].der);
	wss_trust_seen_free(t->seen);
	sk_X509_pop_free(t->certs, X509_free);
	free(t->signers);
	X509_STORE_free(t->anchors);
	free(t);
}

/*
 * The trimmed text of an element that holds only text, copied into the
 * arena; refused before copying when longer than max.
 */
static int
wss_trust_text(struct arena *a, const xmlNode *node, size_t max, char **ret,
    struct err *err)
{
	const xmlNode *c;
	size_t n = 0;

	for (c = node->children; c != NULL && n <= max; c = c->next) {
		if (c->type == XML_ELEMENT_NODE)
			return wss_trust_fail(err, "malformed key reference",
			    "element inside a token value");
		if ((c->type == XML_TEXT_NODE ||
		    c->type == XML_CDATA_SECTION_NODE) && c->content != NULL)
			n += strlen((const char *)c->content);
	}
	if (n > max)
		return wss_trust_fail(err, "malformed key reference",
		    "token value too long");
	*ret = xml_text(a, node);
	if (*ret == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

/* Bounded base64 content of node, decoded into the arena. */
static int
wss_trust_decode(struct arena *a, const xmlNode *node, size_t max,
    unsigned char **ret, size_t *ret_len, struct err *err)
{
	char *text;

	if (wss_trust_text(a, node, max, &text, err) < 0)
		return -1;
	if (codec_unbase64(a, text, strlen(text), ret, ret_len) < 0 ||
	    *ret_len == 0)
		return wss_trust_fail(err, "malformed key reference",
		    "token value is not base64");
	return 0;
}

/* An element's EncodingType, when present, must be Base64Binary. */
static int
wss_trust_base64_type(struct arena *a, const xmlNode *node, struct err *err)
{
	const char *enc = xml_attr(a, node, NULL, "EncodingType");

	if (enc != NULL && strcmp(enc, WSS_TRUST_BASE64) != 0)
		return wss_trust_fail(err, "unsupported key reference",
		    "EncodingType is not Base64Binary");
	return 0;
}

/* One DER certificate in base64 (BST X509v3, KeyIdentifier X509v3,
 * ds:X509Certificate); trailing bytes are refused.  The very bytes of a
 * configured signer are that signer (one more reference), unparsed. */
static int
wss_trust_inline(const struct wss_trust *t, struct arena *a,
    const xmlNode *node, X509 **ret, struct err *err)
{
	unsigned char *der;
	const unsigned char *p;
	size_t len, i;
	X509 *cert;

	if (wss_trust_decode(a, node, WSS_TRUST_TOKEN_MAX, &der, &len,
	    err) < 0)
		return -1;
	for (i = 0; t != NULL && i < t->n_signers; i++) {
		const struct wss_trust_signer *s = &t->signers[i];

		if (s->der_len == len && memcmp(s->der, der, len) == 0 &&
		    X509_up_ref(s->cert) == 1)
			return wss_trust_adopt(a, s->cert, ret, err);
	}
	p = der;
	cert = d2i_X509(NULL, &p, (long)len);
	if (cert == NULL || p != der + len) {
		X509_free(cert);
		ERR_clear_error();
		return wss_trust_fail(err, "malformed key reference",
		    "token is not one DER certificate");
	}
	return wss_trust_adopt(a, cert, ret, err);
}

/* Split a PKIPath (SEQUENCE OF Certificate) into *ret_chain, every
 * certificate owned by the arena through the stack. */
static int
wss_trust_path_split(struct arena *a, const unsigned char *der, size_t len,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	const unsigned char *p = der, *end = der + len;
	STACK_OF(X509) *sk = sk_X509_new_null();
	long body;
	int tag, cls, n = 0;
	X509 *cert;

	if (arena_cleanup(a, wss_trust_chain_free, sk) < 0 || sk == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (ASN1_get_object(&p, &body, &tag, &cls, (long)len) !=
	    V_ASN1_CONSTRUCTED || tag != V_ASN1_SEQUENCE ||
	    cls != V_ASN1_UNIVERSAL || body != end - p)
		return wss_trust_fail(err, "malformed key reference",
		    "PKIPath is not a DER SEQUENCE");
	while (p < end) {
		if (++n > WSS_TRUST_PATH_MAX)
			return wss_trust_fail(err, "malformed key reference",
			    "PKIPath holds too many certificates");
		cert = d2i_X509(NULL, &p, end - p);
		if (cert == NULL)
			return wss_trust_fail(err, "malformed key reference",
			    "bad certificate in PKIPath");
		if (sk_X509_push(sk, cert) <= 0) {
			X509_free(cert);
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
		}
	}
	if (n == 0)
		return wss_trust_fail(err, "malformed key reference",
		    "empty PKIPath");
	*ret_chain = sk;
	return 0;
}

/* WSS X.509 Token Profile 1.1, 3.1.2: the leaf is the last certificate of
 * the path; the others go back as the untrusted chain. */
static int
wss_trust_pkipath(struct arena *a, const xmlNode *bst, X509 **ret,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	unsigned char *der;
	size_t len;
	STACK_OF(X509) *sk = NULL;
	int rc = -1;

	if (wss_trust_decode(a, bst, WSS_TRUST_TOKEN_MAX, &der, &len,
	    err) < 0 || wss_trust_path_split(a, der, len, &sk, err) < 0)
		goto out;
	if (wss_trust_adopt(a, sk_X509_pop(sk), ret, err) < 0)
		goto out;
	*ret_chain = sk;
	rc = 0;
out:
	ERR_clear_error();
	return rc;
}

/* The only element child of parent, or an EBMS:0101 naming the problem
 * (ds:KeyValue and dsig11:DEREncodedKeyValue are refused outright). */
static xmlNodePtr
wss_trust_only_child(const xmlNode *parent, struct err *err)
{
	xmlNodePtr c, found = NULL;
	size_t n = 0;

	for (c = xml_child(parent, NULL, NULL); c != NULL;
	    c = xml_next(c, NULL, NULL)) {
		if (xml_is(c, NS_DS, "KeyValue") ||
		    xml_is(c, WSS_TRUST_NS_DSIG11, "DEREncodedKeyValue")) {
			wss_trust_fail(err, "key not taken from KeyValue",
			    "ds:KeyInfo carries a bare public key");
			return NULL;
		}
		found = c;
		n++;
	}
	if (n != 1) {
		wss_trust_fail(err, "unsupported key reference",
		    "expected exactly one key reference element");
		return NULL;
	}
	return found;
}

/* wsse:Reference URI="#id" to a wsse:BinarySecurityToken in wsse:Security. */
static int
wss_trust_reference(const struct wss_trust *t, struct arena *a,
    xmlDocPtr doc, const xmlNode *ref, X509 **ret,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	const char *uri = xml_attr(a, ref, NULL, "URI");
	const char *vt = xml_attr(a, ref, NULL, "ValueType");
	const char *bvt;
	xmlNodePtr bst;

	/* plain "#id" only, as wss_verify.c requires of references */
	if (uri == NULL || uri[0] != '#' || uri[1] == '\0' ||
	    strpbrk(uri + 1, "%'\"() \t\r\n") != NULL)
		return wss_trust_fail(err, "security token not found",
		    "wsse:Reference URI is not \"#id\"");
	bst = wss_id_find(doc, uri + 1);
	if (!xml_is(bst, NS_WSSE, "BinarySecurityToken") ||
	    !xml_is(bst->parent, NS_WSSE, "Security"))
		return wss_trust_fail(err, "security token not found",
		    "reference does not name a BinarySecurityToken in "
		    "wsse:Security");
	if (wss_trust_base64_type(a, bst, err) < 0)
		return -1;
	/* a BST without ValueType is read as X509v3 (one recorded Holodeck
	 * message has none); the certificate is checked like any other */
	bvt = xml_attr(a, bst, NULL, "ValueType");
	if (bvt == NULL)
		bvt = WSS_TRUST_X509V3;
	if (vt != NULL && strcmp(vt, bvt) != 0)
		return wss_trust_fail(err, "unsupported key reference",
		    "Reference ValueType differs from the token's");
	if (strcmp(bvt, WSS_TRUST_X509V3) == 0)
		return wss_trust_inline(t, a, bst, ret, err);
	if (strcmp(bvt, WSS_TRUST_PKIPATH) == 0)
		return wss_trust_pkipath(a, bst, ret, ret_chain, err);
	return wss_trust_fail(err, "unsupported key reference",
	    "BinarySecurityToken ValueType not supported");
}

/* The signer whose SKI (kind 0) or SHA-1 thumbprint (kind 1) is id. */
static X509 *
wss_trust_by_id(const struct wss_trust *t, int kind,
    const unsigned char *id, size_t len)
{
	const struct wss_trust_signer *s;
	size_t i;

	for (i = 0; i < t->n_signers; i++) {
		s = &t->signers[i];
		if (kind == 0 && s->ski_len == len && len > 0 &&
		    memcmp(s->ski, id, len) == 0)
			return s->cert;
		if (kind == 1 && len == sizeof(s->sha1) &&
		    memcmp(s->sha1, id, len) == 0)
			return s->cert;
	}
	return NULL;
}

/* Look up a configured signer by an identifier carried in base64 in node;
 * the result is a new reference owned by the arena. */
static int
wss_trust_lookup_id(const struct wss_trust *t, struct arena *a,
    const xmlNode *node, int kind, X509 **ret, struct err *err)
{
	unsigned char *id;
	size_t len;
	X509 *cert;

	if (wss_trust_decode(a, node, WSS_TRUST_ID_MAX, &id, &len, err) < 0)
		return -1;
	cert = wss_trust_by_id(t, kind, id, len);
	if (cert == NULL)
		return wss_trust_fail(err, "no configured certificate matches "
		    "the key reference", kind == 0 ? "by SubjectKeyIdentifier" :
		    "by ThumbprintSHA1");
	if (X509_up_ref(cert) != 1)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return wss_trust_adopt(a, cert, ret, err);
}

/* wsse:KeyIdentifier: X509SubjectKeyIdentifier, ThumbprintSHA1 or X509v3. */
static int
wss_trust_keyid(const struct wss_trust *t, struct arena *a,
    const xmlNode *ki, X509 **ret, struct err *err)
{
	const char *vt = xml_attr(a, ki, NULL, "ValueType");

	if (wss_trust_base64_type(a, ki, err) < 0)
		return -1;
	if (vt == NULL)
		return wss_trust_fail(err, "unsupported key reference",
		    "KeyIdentifier without ValueType");
	if (strcmp(vt, WSS_TRUST_SKI) == 0)
		return wss_trust_lookup_id(t, a, ki, 0, ret, err);
	if (strcmp(vt, WSS_TRUST_THUMBPRINT) == 0)
		return wss_trust_lookup_id(t, a, ki, 1, ret, err);
	if (strcmp(vt, WSS_TRUST_X509V3) == 0)
		return wss_trust_inline(t, a, ki, ret, err);
	return wss_trust_fail(err, "unsupported key reference",
	    "KeyIdentifier ValueType not supported");
}

/* ---- X509IssuerName: RFC 4514 (and RFC 1779 / .NET) strings ---- */

/* Attribute type keywords as Java, .NET and OpenSSL write them. */
static const struct {
	const char *key;
	int nid;
} wss_trust_dn_keys[] = {
	{ "CN", NID_commonName }, { "C", NID_countryName },
	{ "O", NID_organizationName }, { "OU", NID_organizationalUnitName },
	{ "L", NID_localityName }, { "ST", NID_stateOrProvinceName },
	{ "S", NID_stateOrProvinceName }, { "STREET", NID_streetAddress },
	{ "DC", NID_domainComponent }, { "UID", NID_userId },
	{ "E", NID_pkcs9_emailAddress }, { "EMAIL", NID_pkcs9_emailAddress },
	{ "EMAILADDRESS", NID_pkcs9_emailAddress }, { "T", NID_title },
	{ "SERIALNUMBER", NID_serialNumber }, { "TITLE", NID_title },
	{ "G", NID_givenName }, { "GIVENNAME", NID_givenName },
	{ "SN", NID_surname }, { "SURNAME", NID_surname },
	{ "INITIALS", NID_initials }, { "DNQUALIFIER", NID_dnQualifier },
	{ "DNQ", NID_dnQualifier }, { "POSTALCODE", NID_postalCode },
	{ "ORGANIZATIONIDENTIFIER", NID_organizationIdentifier },
};

/* Skip spaces. */
static const char *
wss_trust_dn_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* The attribute type before '=': a keyword, or a dotted OID ("OID." allowed). */
static int
wss_trust_dn_key(const char **pp, ASN1_OBJECT **ret)
{
	char key[64];
	const char *p = wss_trust_dn_space(*pp);
	size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789.-"), i;

	if (n == 0 || n >= sizeof(key))
		return -1;
	memcpy(key, p, n);
	key[n] = '\0';
	p = wss_trust_dn_space(p + n);
	if (*p != '=')
		return -1;
	*pp = p + 1;
	if (strncasecmp(key, "OID.", 4) == 0)
		memmove(key, key + 4, n - 3);
	if (key[0] >= '0' && key[0] <= '9') {
		*ret = OBJ_txt2obj(key, 1);
		return *ret != NULL ? 0 : -1;
	}
	for (i = 0; i < sizeof(wss_trust_dn_keys) / sizeof(wss_trust_dn_keys[0]);
	    i++)
		if (strcasecmp(key, wss_trust_dn_keys[i].key) == 0) {
			*ret = OBJ_nid2obj(wss_trust_dn_keys[i].nid);
			return *ret != NULL ? 0 : -1;
		}
	return -1;
}

/* "#hex": the BER of a string value (RFC 4514 2.4); its content bytes and
 * tag go into ava. */
static int
wss_trust_dn_hex(const char **pp, struct wss_trust_dn *dn,
    struct wss_trust_ava *ava)
{
	const char *p = *pp + 1;
	unsigned char *der = dn->buf + dn->used;
	const unsigned char *q = der;
	size_t n = 0;
	ASN1_STRING *s;
	int hi, lo, rc = -1;

	while ((hi = codec_hexval(p[0])) >= 0 &&
	    (lo = codec_hexval(p[1])) >= 0) {
		der[n++] = (unsigned char)(hi << 4 | lo);
		p += 2;
	}
	s = n > 0 ? d2i_ASN1_PRINTABLE(NULL, &q, (long)n) : NULL;
	if (s == NULL || q != der + n ||
	    (ASN1_tag2bit(ASN1_STRING_type(s)) & WSS_TRUST_DN_TYPES) == 0)
		goto out;
	ava->type = ASN1_STRING_type(s);
	ava->len = (size_t)ASN1_STRING_length(s);
	memmove(der, ASN1_STRING_get0_data(s), ava->len);
	ava->val = der;
	dn->used += ava->len;
	*pp = p;
	rc = 0;
out:
	ASN1_STRING_free(s);
	ERR_clear_error();
	return rc;
}

/*
 * A plain or quoted string value with RFC 4514 escapes ("\," "\2C");
 * unescaped trailing spaces are dropped.  Stops at an unescaped ',' ';' or
 * '+' (plain) or at the closing quote.
 */
static int
wss_trust_dn_string(const char **pp, struct wss_trust_dn *dn,
    struct wss_trust_ava *ava)
{
	const char *p = *pp;
	int quoted = *p == '"', hi, lo;
	unsigned char *out = dn->buf + dn->used;
	size_t n = 0, keep = 0;

	p += quoted;
	for (; *p != '\0'; p++) {
		if (quoted ? *p == '"' : strchr(",;+", *p) != NULL)
			break;
		if (*p == '\\' && (hi = codec_hexval(p[1])) >= 0 &&
		    (lo = codec_hexval(p[2])) >= 0) {
			out[n++] = (unsigned char)(hi << 4 | lo);
			p += 2;
		} else if (*p == '\\' && p[1] != '\0') {
			out[n++] = (unsigned char)*++p;
		} else {
			out[n++] = (unsigned char)*p;
			if (*p == ' ' && !quoted)
				continue;
		}
		keep = n;
	}
	if (quoted && *p++ != '"')
		return -1;
	ava->type = MBSTRING_UTF8;
	ava->val = out;
	ava->len = quoted ? n : keep;
	dn->used += ava->len;
	*pp = p;
	return 0;
}

/* Split an issuer name string into dn (values unescaped into the arena). */
static int
wss_trust_dn_parse(struct arena *a, const char *s, struct wss_trust_dn *dn)
{
	const char *p = wss_trust_dn_space(s);
	struct wss_trust_ava *ava;
	size_t rdn = 0;

	dn->buf = arena_alloc(a, strlen(s) + 1);
	if (dn->buf == NULL || *p == '\0')
		return -1;
	for (;;) {
		if (dn->n == WSS_TRUST_AVA_MAX)
			return -1;
		ava = &dn->ava[dn->n++];
		ava->rdn = rdn;
		if (wss_trust_dn_key(&p, &ava->obj) < 0)
			return -1;
		p = wss_trust_dn_space(p);
		if ((*p == '#' ? wss_trust_dn_hex(&p, dn, ava) :
		    wss_trust_dn_string(&p, dn, ava)) < 0)
			return -1;
		p = wss_trust_dn_space(p);
		if (*p == '\0')
			return 0;
		if (*p == ',' || *p == ';')
			rdn++;
		else if (*p != '+')
			return -1;
		p++;
	}
}

/* Free the attribute types of dn (dynamic ones only are really freed). */
static void
wss_trust_dn_clear(struct wss_trust_dn *dn)
{
	size_t i;

	for (i = 0; i < dn->n; i++)
		ASN1_OBJECT_free(dn->ava[i].obj);
	dn->n = 0;
}

/*
 * Append one attribute.  A value the attribute's usual string type cannot
 * hold (a long CN, '_' in a PrintableString) goes in as UTF8String: the
 * comparison canonicalises string types anyway.
 */
static int
wss_trust_dn_add(X509_NAME *name, const struct wss_trust_ava *v, int set)
{
	int ok = X509_NAME_add_entry_by_OBJ(name, v->obj, v->type, v->val,
	    (int)v->len, -1, set);

	if (ok != 1 && v->type == MBSTRING_UTF8)
		ok = X509_NAME_add_entry_by_OBJ(name, v->obj,
		    V_ASN1_UTF8STRING, v->val, (int)v->len, -1, set);
	ERR_clear_error();
	return ok == 1 ? 0 : -1;
}

/*
 * Build the X509_NAME for dn: reverse = 1 reads the string as RFC 4514 does
 * (last RDN first, as Java and .NET write it), 0 in the order written
 * (OpenSSL's one-line style).  Attributes joined by '+' share an RDN.
 */
static X509_NAME *
wss_trust_dn_name(const struct wss_trust_dn *dn, int reverse)
{
	X509_NAME *name = X509_NAME_new();
	size_t r, i, last = dn->n > 0 ? dn->ava[dn->n - 1].rdn : 0, k;
	const struct wss_trust_ava *v;
	int set;

	for (k = 0; name != NULL && k <= last; k++) {
		r = reverse ? last - k : k;
		set = 0;
		for (i = 0; i < dn->n && name != NULL; i++) {
			v = &dn->ava[i];
			if (v->rdn != r)
				continue;
			if (wss_trust_dn_add(name, v, set) < 0) {
				X509_NAME_free(name);
				name = NULL;
			}
			set = -1;
		}
	}
	return name;
}

/* A decimal X509SerialNumber (xsd:integer) as an ASN1_INTEGER, or NULL. */
static ASN1_INTEGER *
wss_trust_serial(const char *s)
{
	size_t sign = s[0] == '-', len = strlen(s);
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;

	if (len == sign || strspn(s + sign, "0123456789") != len - sign)
		return NULL;
	if (BN_dec2bn(&bn, s) == (int)len)
		ai = BN_to_ASN1_INTEGER(bn, NULL);
	BN_free(bn);
	return ai;
}

/* The signer with this serial number whose issuer equals either reading of
 * the name string (compared as X509_NAME: case and spacing insensitive). */
static X509 *
wss_trust_by_issuer(const struct wss_trust *t, const ASN1_INTEGER *serial,
    const X509_NAME *rev, const X509_NAME *fwd)
{
	const X509_NAME *issuer;
	X509 *cert;
	size_t i;

	for (i = 0; i < t->n_signers; i++) {
		cert = t->signers[i].cert;
		if (ASN1_INTEGER_cmp(X509_get0_serialNumber(cert), serial) != 0)
			continue;
		issuer = X509_get_issuer_name(cert);
		if (X509_NAME_cmp(issuer, rev) == 0 ||
		    X509_NAME_cmp(issuer, fwd) == 0)
			return cert;
	}
	return NULL;
}

/* Read the IssuerName and SerialNumber of a ds:X509IssuerSerial. */
static int
wss_trust_issuer_serial_read(struct arena *a, const xmlNode *is,
    char **ret_name, char **ret_serial, struct err *err)
{
	const xmlNode *name = xml_child(is, NS_DS, "X509IssuerName");
	const xmlNode *serial = xml_child(is, NS_DS, "X509SerialNumber");

	if (xml_count(is, NULL, NULL) != 2 || name == NULL || serial == NULL)
		return wss_trust_fail(err, "malformed key reference",
		    "X509IssuerSerial needs X509IssuerName and "
		    "X509SerialNumber");
	if (wss_trust_text(a, name, WSS_TRUST_NAME_MAX, ret_name, err) < 0 ||
	    wss_trust_text(a, serial, WSS_TRUST_SERIAL_MAX, ret_serial,
	    err) < 0)
		return -1;
	return 0;
}

/* ds:X509IssuerSerial resolved against the signers of t. */
static int
wss_trust_issuer_serial(const struct wss_trust *t, struct arena *a,
    const xmlNode *is, X509 **ret, struct err *err)
{
	struct wss_trust_dn *dn = arena_alloc(a, sizeof(*dn));
	X509_NAME *rev = NULL, *fwd = NULL;
	ASN1_INTEGER *serial = NULL;
	char *name, *digits;
	X509 *cert = NULL;
	int rc = -1;

	if (dn == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (wss_trust_issuer_serial_read(a, is, &name, &digits, err) < 0)
		goto out;
	if ((serial = wss_trust_serial(digits)) == NULL ||
	    wss_trust_dn_parse(a, name, dn) < 0 ||
	    (rev = wss_trust_dn_name(dn, 1)) == NULL ||
	    (fwd = wss_trust_dn_name(dn, 0)) == NULL) {
		wss_trust_fail(err, "malformed key reference",
		    "X509IssuerName or X509SerialNumber unreadable");
		goto out;
	}
	cert = wss_trust_by_issuer(t, serial, rev, fwd);
	if (cert == NULL) {
		wss_trust_fail(err, "no configured certificate matches the "
		    "key reference", NULL);
		err_detail(err, "by X509IssuerSerial \"%.200s\" %s", name,
		    digits);
		goto out;
	}
	if (X509_up_ref(cert) != 1) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = wss_trust_adopt(a, cert, ret, err);
out:
	if (dn != NULL)
		wss_trust_dn_clear(dn);
	X509_NAME_free(rev);
	X509_NAME_free(fwd);
	ASN1_INTEGER_free(serial);
	ERR_clear_error();
	return rc;
}

/* ds:X509Data with one X509IssuerSerial, X509SKI or X509Certificate. */
static int
wss_trust_x509data(const struct wss_trust *t, struct arena *a,
    const xmlNode *data, X509 **ret, struct err *err)
{
	xmlNodePtr c = wss_trust_only_child(data, err);

	if (c == NULL)
		return -1;
	if (xml_is(c, NS_DS, "X509IssuerSerial"))
		return wss_trust_issuer_serial(t, a, c, ret, err);
	if (xml_is(c, NS_DS, "X509SKI"))
		return wss_trust_lookup_id(t, a, c, 0, ret, err);
	if (xml_is(c, NS_DS, "X509Certificate"))
		return wss_trust_inline(t, a, c, ret, err);
	return wss_trust_fail(err, "unsupported key reference",
	    "ds:X509Data content not supported");
}

/* Resolve the certificate a ds:KeyInfo names; see wss_int.h. */
int
wss_trust_resolve(const struct wss_trust *t, struct arena *a,
    xmlDocPtr doc, xmlNodePtr key_info, X509 **ret_cert,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	STACK_OF(X509) *chain = NULL;
	X509 *cert = NULL;
	xmlNodePtr ref, str;
	int rc = -1;

	if (!xml_is(key_info, NS_DS, "KeyInfo")) {
		wss_trust_fail(err, "unsupported key reference",
		    "no ds:KeyInfo");
		goto out;
	}
	if ((str = wss_trust_only_child(key_info, err)) == NULL)
		goto out;
	if (xml_is(str, NS_DS, "X509Data")) {
		rc = wss_trust_x509data(t, a, str, &cert, err);
	} else if (!xml_is(str, NS_WSSE, "SecurityTokenReference")) {
		wss_trust_fail(err, "unsupported key reference",
		    "ds:KeyInfo content not supported");
	} else if ((ref = wss_trust_only_child(str, err)) == NULL) {
		goto out;
	} else if (xml_is(ref, NS_WSSE, "Reference")) {
		rc = wss_trust_reference(t, a, doc, ref, &cert, &chain, err);
	} else if (xml_is(ref, NS_WSSE, "KeyIdentifier")) {
		rc = wss_trust_keyid(t, a, ref, &cert, err);
	} else if (xml_is(ref, NS_DS, "X509Data")) {
		rc = wss_trust_x509data(t, a, ref, &cert, err);
	} else {
		wss_trust_fail(err, "unsupported key reference",
		    "SecurityTokenReference content not supported");
	}
	if (rc == 0) {
		*ret_cert = cert;
		if (ret_chain != NULL)
			*ret_chain = chain;
	}
out:
	ERR_clear_error();
	return rc;
}

/* The signer bound to the leg's From party that cert is DER-equal to, or
 * NULL. */
static const struct wss_trust_signer *
wss_trust_bound(const struct wss_trust *t, const X509 *cert)
{
	size_t i;

	for (i = 0; i < t->n_signers; i++)
		if (X509_cmp(cert, t->signers[i].cert) == 0)
			return &t->signers[i];
	return NULL;
}

/* An ASN1_TIME as seconds since the epoch; -1 when unreadable. */
static int
wss_trust_time(const ASN1_TIME *at, time_t *ret)
{
	struct tm tm;

	if (at == NULL || ASN1_TIME_to_tm(at, &tm) != 1)
		return -1;
	*ret = timegm(&tm);
	return 0;
}

/*
 * After X509_verify_cert() succeeded for signer s without CRLs and without
 * certificates from the message: the verified chain is valid at every
 * instant within all its certificates' validity periods (RFC 5280 6.1.3
 * (a)(2): notBefore <= t, t before notAfter as X509_cmp_time() counts), and
 * nothing else it checked depends on the instant.  Remember that window.
 */
static void
wss_trust_remember(const struct wss_trust *t, const struct wss_trust_signer *s,
    X509_STORE_CTX *ctx)
{
	struct wss_trust_window *w = &t->seen->win[s - t->signers];
	STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
	time_t from = 0, until = 0, nb, na;
	int i, n = sk_X509_num(chain);

	for (i = 0; i < n; i++) {
		X509 *c = sk_X509_value(chain, i);

		if (wss_trust_time(X509_get0_notBefore(c), &nb) < 0 ||
		    wss_trust_time(X509_get0_notAfter(c), &na) < 0)
			return;
		if (i == 0 || nb > from)
			from = nb;
		if (i == 0 || na - 1 < until)
			until = na - 1;
	}
	if (n == 0 || pthread_mutex_lock(&t->seen->lock) != 0)
		return;
	w->ok = 1;
	w->from = from;
	w->until = until;
	(void)pthread_mutex_unlock(&t->seen->lock);
}

/* A copy of signer s's remembered window (taken under the lock). */
static struct wss_trust_window
wss_trust_window_of(const struct wss_trust *t, const struct wss_trust_signer *s)
{
	struct wss_trust_window w = { 0 };

	if (pthread_mutex_lock(&t->seen->lock) != 0)
		return w;
	w = t->seen->win[s - t->signers];
	(void)pthread_mutex_unlock(&t->seen->lock);
	return w;
}

/* Was s's chain found valid for a window holding the instant? */
static int
wss_trust_known(const struct wss_trust *t, const struct wss_trust_signer *s,
    int64_t at_ms)
{
	struct wss_trust_window w = wss_trust_window_of(t, s);
	time_t at = at_ms != 0 ? (time_t)(at_ms / 1000) : time(NULL);

	return w.ok && w.from <= at && at <= w.until;
}

/* Verification parameters: the instant (for CRLs too), any purpose, the
 * leaf's revocation when CRLs are configured, and configured anchors
 * trusted as given even when not self-signed (eDelivery AS4 1.15, 1.5.3.3:
 * anchors may be chain prefixes). */
static void
wss_trust_params(X509_STORE_CTX *ctx, unsigned long vflags, int64_t at_ms)
{
	X509_VERIFY_PARAM *vp = X509_STORE_CTX_get0_param(ctx);

	(void)X509_VERIFY_PARAM_set_flags(vp,
	    X509_V_FLAG_PARTIAL_CHAIN | vflags);
	(void)X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_ANY);
	if (at_ms != 0)
		X509_VERIFY_PARAM_set_time(vp, (time_t)(at_ms / 1000));
}

/*
 * May cert sign for this leg?  Bound to the From party (NEGATIVE-CASES 44),
 * keyUsage (when present) includes digitalSignature, and the chain reaches
 * an anchor with every certificate valid at at_ms (NEGATIVE-CASES 42, 43),
 * and, when the trust has CRLs, cert is not revoked by a CRL current at
 * at_ms (detail "certificate revoked", "CRL has expired", ...).
 */
int
wss_trust_check(const struct wss_trust *t, X509 *cert,
    STACK_OF(X509) *chain, int64_t at_ms, struct err *err)
{
	const struct wss_trust_signer *s;
	X509_STORE_CTX *ctx = NULL;
	char why[256];
	int rc = -1, e, cacheable;

	if (cert == NULL || (s = wss_trust_bound(t, cert)) == NULL) {
		wss_trust_fail(err, "certificate not bound to the sending party",
		    NULL);
		goto out;
	}
	if ((X509_get_extension_flags(cert) & EXFLAG_KUSAGE) != 0 &&
	    (X509_get_key_usage(cert) & KU_DIGITAL_SIGNATURE) == 0) {
		wss_trust_fail(err, "certificate may not sign",
		    "keyUsage lacks digitalSignature");
		goto out;
	}
	/* with CRLs the answer also depends on the CRLs' periods, and with
	 * certificates from the message on those: verify every time */
	cacheable = t->vflags == 0 && sk_X509_num(chain) <= 0;
	if (cacheable && wss_trust_known(t, s, at_ms)) {
		rc = 0;
		goto out;
	}
	ctx = X509_STORE_CTX_new();
	if (ctx == NULL ||
	    X509_STORE_CTX_init(ctx, t->anchors, cert, chain) != 1) {
		err_set(err, ERR_INTERNAL, NULL, "could not set up certificate "
		    "verification");
		goto out;
	}
	wss_trust_params(ctx, t->vflags, at_ms);
	if (X509_verify_cert(ctx) != 1) {
		e = X509_STORE_CTX_get_error(ctx);
		(void)snprintf(why, sizeof(why), "openssl: %s (depth %d)",
		    X509_verify_cert_error_string(e),
		    X509_STORE_CTX_get_error_depth(ctx));
		wss_trust_fail(err, "certificate not trusted", why);
		goto out;
	}
	if (cacheable)
		wss_trust_remember(t, s, ctx);
	rc = 0;
out:
	X509_STORE_CTX_free(ctx);
	ERR_clear_error();
	return rc;
}

/* The remembered validity window of a signer's chain; see wss_int.h. */
int
wss_trust_window(const struct wss_trust *t, const X509 *cert,
    int64_t *ret_from_ms, int64_t *ret_until_ms)
{
	const struct wss_trust_signer *s;
	struct wss_trust_window w;

	if (t == NULL || cert == NULL || t->vflags != 0 ||
	    (s = wss_trust_bound(t, cert)) == NULL)
		return 0;
	w = wss_trust_window_of(t, s);
	if (!w.ok)
		return 0;
	*ret_from_ms = (int64_t)w.from * 1000;
	*ret_until_ms = (int64_t)w.until * 1000 + 999;
	return 1;
}
