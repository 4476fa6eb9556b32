/*
 * fuzz_revoc — libFuzzer driver for what a revocation source hands the
 * gateway (src/trust/trust_ocsp.c, trust_crldp.c): the bytes an OCSP
 * responder or a CRL distribution point answered, given to
 * trust_ocsp_verify() and trust_crldp_verify() for a certificate and its
 * issuer made once at start-up (a fresh P-256 CA key the input cannot
 * know).  Invariants: both always answer (no crash, no leak) with one of
 * the three statuses; no input is believed — GOOD or REVOKED needs a
 * response signed by the issuer's key, which the fuzzer does not have —
 * and an UNKNOWN answer always says why (its detail is not empty).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "trust/trust_revoc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which and abort. */
static __attribute__((noreturn)) void
fuzz_revoc_die(const char *what, const struct trust_revoc_fresh *f)
{
	fprintf(stderr, "fuzz_revoc: %s (status %d, detail \"%s\")\n", what,
	    (int)f->status, f->detail);
	abort();
}

/* A certificate for key's public half, named cn, signed by signer
 * (issued by issuer_name), valid from a day ago for a year; NULL on
 * failure. */
static X509 *
fuzz_revoc_cert(EVP_PKEY *key, const char *cn, EVP_PKEY *signer,
    const X509_NAME *issuer_name, long serial)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();

	if (x == NULL || name == NULL ||
	    X509_set_version(x, 2) != 1 ||
	    ASN1_INTEGER_set(X509_get_serialNumber(x), serial) != 1 ||
	    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	    (const unsigned char *)cn, -1, -1, 0) != 1 ||
	    X509_set_subject_name(x, name) != 1 ||
	    X509_set_issuer_name(x, issuer_name != NULL ? issuer_name : name)
	    != 1 ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -86400) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), 365L * 86400) == NULL ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_sign(x, signer, EVP_sha256()) <= 0) {
		X509_free(x);
		x = NULL;
	}
	X509_NAME_free(name);
	return x;
}

/* The CA and the leaf every input is judged for (made once). */
static X509 *fuzz_revoc_ca, *fuzz_revoc_leaf;

static void
fuzz_revoc_init(void)
{
	EVP_PKEY *ca_key = EVP_EC_gen("P-256"), *leaf_key = EVP_EC_gen("P-256");

	if (ca_key == NULL || leaf_key == NULL)
		abort();
	fuzz_revoc_ca = fuzz_revoc_cert(ca_key, "fuzz CA", ca_key, NULL, 1);
	if (fuzz_revoc_ca == NULL)
		abort();
	fuzz_revoc_leaf = fuzz_revoc_cert(leaf_key, "fuzz leaf", ca_key,
	    X509_get_subject_name(fuzz_revoc_ca), 2);
	if (fuzz_revoc_leaf == NULL)
		abort();
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(leaf_key);
}

/* The invariants of one answer. */
static void
fuzz_revoc_check(const struct trust_revoc_fresh *f)
{
	if (f->status == TRUST_REVOC_GOOD || f->status == TRUST_REVOC_REVOKED)
		fuzz_revoc_die("an unsigned answer was believed", f);
	if (f->status != TRUST_REVOC_UNKNOWN)
		fuzz_revoc_die("status out of range", f);
	if (f->detail[0] == '\0' ||
	    memchr(f->detail, '\0', sizeof(f->detail)) == NULL)
		fuzz_revoc_die("UNKNOWN without a reason", f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trust_revoc_limits lim;
	struct trust_revoc_subject s;
	struct trust_revoc_fresh f;

	if (fuzz_revoc_ca == NULL)
		fuzz_revoc_init();
	trust_revoc_limits_default(&lim);
	s.cert = fuzz_revoc_leaf;
	s.issuer = fuzz_revoc_ca;
	s.now_ms = (int64_t)time(NULL) * 1000;
	s.lim = &lim;
	trust_ocsp_verify(data, size, NULL, &s, &f);
	fuzz_revoc_check(&f);
	trust_crldp_verify(data, size, &s, &f);
	fuzz_revoc_check(&f);
	ERR_clear_error();
	return 0;
}
