/*
 * wss_certinfo.c — what an operator needs to know of the certificates in a
 * PEM file before a reload (`as4gw pmode-check`): subject, serial number
 * and validity of each (and the SHA-256 fingerprint, wss_certid.c).
 * Reading only; trust decisions are src/trust's.
 */
#include "wss.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "wss_int.h"

/* Most certificates read from one file (a bundle of anchors). */
#define WSS_CERTINFO_MAX 64

/* An ASN1_TIME as epoch milliseconds; -1 when unreadable. */
static int
wss_certinfo_time(const ASN1_TIME *t, int64_t *ret_ms)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*ret_ms = (int64_t)timegm(&tm) * 1000;
	return 0;
}

/* See wss_int.h. */
const char *
wss_cert_subject(struct arena *a, X509 *x, size_t max)
{
	BIO *b = BIO_new(BIO_s_mem());
	const char *s = NULL;
	char *p;
	long n;

	if (b != NULL && X509_NAME_print_ex(b, X509_get_subject_name(x), 0,
	    XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) >= 0 &&
	    (n = BIO_get_mem_data(b, &p)) >= 0)
		s = arena_strndup(a, p, max != 0 && (size_t)n > max ?
		    max : (size_t)n);
	BIO_free(b);
	return s;
}

/* The serial number of x in hex, in the arena; NULL on failure. */
static const char *
wss_certinfo_serial(struct arena *a, X509 *x)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(x), NULL);
	char *hex = bn != NULL ? BN_bn2hex(bn) : NULL;
	const char *s = hex != NULL ? arena_strdup(a, hex) : NULL;

	OPENSSL_free(hex);
	BN_free(bn);
	return s;
}

/* Fill one record from x; -1 when a field cannot be read. */
static int
wss_certinfo_one(struct arena *a, X509 *x, struct wss_cert_info *ret)
{
	char fp[65];

	ret->subject = wss_cert_subject(a, x, 0);
	ret->serial = wss_certinfo_serial(a, x);
	ret->sha256 = wss_cert_sha256(x, fp) == 0 ? arena_strdup(a, fp) : NULL;
	if (ret->subject == NULL || ret->serial == NULL || ret->sha256 == NULL ||
	    wss_certinfo_time(X509_get0_notBefore(x), &ret->not_before_ms) ||
	    wss_certinfo_time(X509_get0_notAfter(x), &ret->not_after_ms))
		return -1;
	return 0;
}

/* Describe every certificate in a PEM file; see wss.h. */
int
wss_cert_file_info(struct arena *a, const char *path,
    struct wss_cert_info **ret, size_t *ret_n, struct err *err)
{
	struct wss_cert_info *v = arena_calloc(a, WSS_CERTINFO_MAX, sizeof(*v));
	BIO *bio = BIO_new_file(path, "r");
	size_t n = 0;
	X509 *x;
	int rc = -1;

	if (v == NULL || bio == NULL) {
		err_set(err, ERR_IO, NULL, "could not open certificate file "
		    "\"%s\": %s", path, v == NULL ? "out of memory" :
		    strerror(errno));
		goto out;
	}
	while (n < WSS_CERTINFO_MAX && (x = PEM_read_bio_X509(bio, NULL,
	    wss_no_password, NULL)) != NULL) {
		rc = wss_certinfo_one(a, x, &v[n]);
		X509_free(x);
		if (rc == -1)
			break;
		n++;
	}
	rc = n > 0 && rc == 0 ? 0 : -1;
	if (rc == -1)
		err_set(err, ERR_CONF, NULL, "could not read the certificates "
		    "in \"%s\"", path);
	*ret = v;
	*ret_n = n;
out:
	ERR_clear_error();
	BIO_free(bio);
	return rc;
}
