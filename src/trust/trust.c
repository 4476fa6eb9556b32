/*
 * trust.c — the trust of one P-Mode leg (issue 3, "Keys and trust"; issue
 * 12): its signer certificates indexed by the identifiers a message may name
 * them by (DER, SKI, SHA-1 thumbprint, issuer and serial), its anchors and
 * CRLs in an X509_STORE.  The chain check is trust_chain.c's.
 */
#include "trust_int.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

/* Record an EBMS:0101 FailedAuthentication; see trust_int.h. */
int
trust_fail(struct err *err, const char *msg, const char *detail)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "%s", msg);
	if (detail != NULL)
		err_detail(err, "%s", detail);
	return -1;
}

/* Keep the signer's DER (trust_find_der). */
static int
trust_signer_der(struct trust_signer *s)
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

/* The SKI of s->cert: the extension, or RFC 5280 4.2.1.2 (1) when absent;
 * none (length 0) when the extension is longer than we index. */
static void
trust_signer_ski(struct trust_signer *s)
{
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(s->cert);
	unsigned int len = 0;

	if (ski != NULL && (size_t)ASN1_STRING_length(ski) <= sizeof(s->ski)) {
		len = (unsigned int)ASN1_STRING_length(ski);
		memcpy(s->ski, ASN1_STRING_get0_data(ski), len);
	} else if (ski == NULL && X509_pubkey_digest(s->cert, EVP_sha1(),
	    s->ski, &len) != 1) {
		len = 0;
	}
	s->ski_len = len;
}

/* Cache the extensions (so that later reads from threads do not write) and
 * compute the identifiers of each signer. */
static int
trust_index(struct trust *t, struct err *err)
{
	struct trust_signer *s;
	unsigned int len;
	size_t i;

	t->n_signers = (size_t)sk_X509_num(t->certs);
	t->signers = calloc(t->n_signers > 0 ? t->n_signers : 1,
	    sizeof(*t->signers));
	if (t->signers == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < t->n_signers; i++) {
		s = &t->signers[i];
		s->cert = sk_X509_value(t->certs, (int)i);
		if (X509_check_purpose(s->cert, -1, 0) != 1)
			return err_set(err, ERR_CONF, NULL, "signer certificate "
			    "%zu has invalid extensions", i + 1);
		trust_signer_ski(s);
		if (X509_digest(s->cert, EVP_sha1(), s->sha1, &len) != 1)
			return err_set(err, ERR_INTERNAL, NULL, "could not "
			    "digest signer certificate");
		if (trust_signer_der(s) < 0)
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	return 0;
}

/* Put the anchors into t's X509_STORE (extensions cached first). */
static int
trust_store(struct trust *t, STACK_OF(X509) *anchors, struct err *err)
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
trust_seen_free(struct trust_seen *seen)
{
	if (seen == NULL)
		return;
	(void)pthread_mutex_destroy(&seen->lock);
	free(seen->win);
	free(seen);
}

/* No window known yet for any of n signers; NULL when out of memory. */
static struct trust_seen *
trust_seen_new(size_t n)
{
	struct trust_seen *seen = calloc(1, sizeof(*seen));

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

/* Read the files of f into t (signers, anchors, CRLs). */
static int
trust_load(struct trust *t, const struct trust_files *f, struct err *err)
{
	STACK_OF(X509) *anchors = sk_X509_new_null();
	size_t i;
	int rc = -1;

	if (anchors == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < f->n_signers; i++)
		if (trust_pem_certs(f->signers[i], t->certs, err) < 0)
			goto out;
	for (i = 0; i < f->n_anchors; i++)
		if (trust_pem_certs(f->anchors[i], anchors, err) < 0)
			goto out;
	if (trust_index(t, err) < 0 || trust_store(t, anchors, err) < 0)
		goto out;
	for (i = 0; i < f->n_crls; i++)
		if (trust_pem_crls(t->anchors, f->crls[i], err) < 0)
			goto out;
	t->vflags = f->n_crls > 0 ? X509_V_FLAG_CRL_CHECK : 0;
	rc = 0;
out:
	sk_X509_pop_free(anchors, X509_free);
	return rc;
}

/*
 * Load the signer and anchor PEM files and the CRL files of one leg; see
 * trust.h.  Signers and anchors must be non-empty: a leg without either
 * could never accept a signature, which is a configuration error better
 * found at start.
 */
int
trust_new(const struct trust_files *f, struct trust **ret, struct err *err)
{
	struct trust *t = NULL;
	int rc = -1;

	if ((f->n_signers == 0 && f->network == NULL) || f->n_anchors == 0) {
		err_set(err, ERR_CONF, NULL, "signature trust needs signer "
		    "certificates and trust anchors");
		goto out;
	}
	if (f->n_signers > 0 && f->network != NULL) {
		err_set(err, ERR_CONF, NULL, "a network trust lists no signer "
		    "certificates");
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL || (t->certs = sk_X509_new_null()) == NULL ||
	    (t->anchors = X509_STORE_new()) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	if (trust_load(t, f, err) < 0 ||
	    (f->network != NULL && trust_party_init(t, f->network, err) < 0))
		goto out;
	if ((t->seen = trust_seen_new(t->n_signers)) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	*ret = t;
	t = NULL;
	rc = 0;
out:
	ERR_clear_error();
	trust_free(t);
	return rc;
}

/* Free a trust; accepts NULL. */
void
trust_free(struct trust *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; t->signers != NULL && i < t->n_signers; i++)
		free(t->signers[i].der);
	trust_seen_free(t->seen);
	trust_party_free(t);
	sk_X509_pop_free(t->certs, X509_free);
	free(t->signers);
	X509_STORE_free(t->anchors);
	free(t);
}

/* Is t a network trust?  See trust.h. */
int
trust_is_network(const struct trust *t)
{
	return t != NULL && t->network;
}

/* The signer DER-equal to cert; see trust_int.h. */
const struct trust_signer *
trust_signer_of(const struct trust *t, const X509 *cert)
{
	size_t i;

	for (i = 0; t != NULL && i < t->n_signers; i++)
		if (X509_cmp(cert, t->signers[i].cert) == 0)
			return &t->signers[i];
	return NULL;
}

/* The signer with these DER bytes; see trust.h. */
X509 *
trust_find_der(const struct trust *t, const unsigned char *der, size_t len)
{
	const struct trust_signer *s;
	size_t i;

	for (i = 0; t != NULL && i < t->n_signers; i++) {
		s = &t->signers[i];
		if (s->der_len == len && memcmp(s->der, der, len) == 0)
			return s->cert;
	}
	return NULL;
}

/* The signer with this SubjectKeyIdentifier; see trust.h. */
X509 *
trust_find_ski(const struct trust *t, const unsigned char *id, size_t len)
{
	const struct trust_signer *s;
	size_t i;

	for (i = 0; t != NULL && len > 0 && i < t->n_signers; i++) {
		s = &t->signers[i];
		if (s->ski_len == len && memcmp(s->ski, id, len) == 0)
			return s->cert;
	}
	return NULL;
}

/* The signer with this SHA-1 thumbprint; see trust.h. */
X509 *
trust_find_thumb(const struct trust *t, const unsigned char *id, size_t len)
{
	const struct trust_signer *s;
	size_t i;

	for (i = 0; t != NULL && len == SHA_DIGEST_LENGTH &&
	    i < t->n_signers; i++) {
		s = &t->signers[i];
		if (memcmp(s->sha1, id, len) == 0)
			return s->cert;
	}
	return NULL;
}

/* The signer with this serial number whose issuer is a or b; see trust.h. */
X509 *
trust_find_issuer(const struct trust *t, const ASN1_INTEGER *serial,
    const X509_NAME *a, const X509_NAME *b)
{
	const X509_NAME *issuer;
	X509 *cert;
	size_t i;

	for (i = 0; t != NULL && i < t->n_signers; i++) {
		cert = t->signers[i].cert;
		if (ASN1_INTEGER_cmp(X509_get0_serialNumber(cert), serial) != 0)
			continue;
		issuer = X509_get_issuer_name(cert);
		if (X509_NAME_cmp(issuer, a) == 0 ||
		    X509_NAME_cmp(issuer, b) == 0)
			return cert;
	}
	return NULL;
}
