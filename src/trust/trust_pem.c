/*
 * trust_pem.c — reading the certificate and CRL files a leg's trust is
 * built from (PEM certificates; PEM or DER CRLs).  Errors name the file.
 */
#include "trust_int.h"

#include <errno.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>

/* PEM password callback that refuses, so an encrypted file is an error
 * rather than a prompt on the daemon's terminal. */
static int
trust_pem_no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return -1;
}

/* Append every certificate of a PEM file to sk; see trust_int.h. */
int
trust_pem_certs(const char *path, STACK_OF(X509) *sk, struct err *err)
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
	while ((cert = PEM_read_bio_X509(bio, NULL, trust_pem_no_password,
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
trust_pem_add_crl(X509_STORE *store, X509_CRL *crl, const char *path,
    struct err *err)
{
	int rc = 0;

	if (X509_STORE_add_crl(store, crl) != 1)
		rc = err_set(err, ERR_CONF, NULL, "could not add CRL from "
		    "\"%s\"", path);
	X509_CRL_free(crl);
	return rc;
}

/* Add every CRL of a file to store; see trust_int.h. */
int
trust_pem_crls(X509_STORE *store, const char *path, struct err *err)
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
	while ((crl = PEM_read_bio_X509_CRL(bio, NULL, trust_pem_no_password,
	    NULL)) != NULL) {
		if (trust_pem_add_crl(store, crl, path, err) < 0)
			goto out;
		n++;
	}
	e = ERR_peek_last_error();
	if (n == 0 && BIO_reset(bio) == 0 &&
	    (crl = d2i_X509_CRL_bio(bio, NULL)) != NULL) {
		rc = trust_pem_add_crl(store, crl, path, err);
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
