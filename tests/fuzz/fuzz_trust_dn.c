/*
 * fuzz_trust_dn — libFuzzer driver for the distinguished name reader
 * (src/trust/trust_dn.c): trust_dn_parse() on the input as a string (cut
 * at the first NUL, at most FUZZ_TRUST_DN_MAX bytes, as the X509IssuerName
 * bound of wss_keyinfo.c).  Invariants: an accepted string yields two
 * names with the same attributes in reverse RDN order, and the RFC 2253
 * print of the RFC 4514 reading reads back as an equal name.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "trust/trust.h"

#define FUZZ_TRUST_DN_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which and abort. */
static __attribute__((noreturn)) void
fuzz_trust_dn_die(const char *what, const char *in)
{
	fprintf(stderr, "fuzz_trust_dn: %s: \"%s\"\n", what, in);
	abort();
}

/* name in RFC 2253 form (malloc), or NULL when it cannot be printed. */
static char *
fuzz_trust_dn_print(const X509_NAME *name)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (bio != NULL &&
	    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253) >= 0 &&
	    (n = BIO_get_mem_data(bio, &data)) >= 0 &&
	    (out = malloc((size_t)n + 1)) != NULL) {
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(bio);
	return out;
}

/* Are entries a and b the same attribute and value? */
static int
fuzz_trust_dn_same(const X509_NAME_ENTRY *a, const X509_NAME_ENTRY *b)
{
	return OBJ_cmp(X509_NAME_ENTRY_get_object(a),
	    X509_NAME_ENTRY_get_object(b)) == 0 &&
	    ASN1_STRING_cmp(X509_NAME_ENTRY_get_data(a),
	    X509_NAME_ENTRY_get_data(b)) == 0;
}

/* The two readings hold the same RDNs in reverse order, each RDN's
 * attributes in the same (written) order. */
static void
fuzz_trust_dn_mirror(const X509_NAME *rfc, const X509_NAME *fwd,
    const char *in)
{
	int n = X509_NAME_entry_count(rfc), i, j = 0, k, sets;
	const X509_NAME_ENTRY *e;

	if (n < 1 || n != X509_NAME_entry_count(fwd))
		fuzz_trust_dn_die("readings differ in size", in);
	sets = X509_NAME_ENTRY_set(X509_NAME_get_entry(rfc, n - 1)) + 1;
	for (k = 0; k < sets; k++)
		for (i = 0; i < n; i++) {
			e = X509_NAME_get_entry(rfc, i);
			if (X509_NAME_ENTRY_set(e) != sets - 1 - k)
				continue;
			if (j >= n || X509_NAME_ENTRY_set(
			    X509_NAME_get_entry(fwd, j)) != k ||
			    !fuzz_trust_dn_same(e, X509_NAME_get_entry(fwd, j)))
				fuzz_trust_dn_die("readings are not mirrors", in);
			j++;
		}
	if (j != n)
		fuzz_trust_dn_die("readings are not mirrors", in);
}

/* Does name hold a NumericString ("#12..." value)?  X509_NAME_cmp does
 * not canonicalise that type, and its RFC 2253 print reads back as a
 * UTF8String: such a name cannot compare equal to its print. */
static int
fuzz_trust_dn_numeric(const X509_NAME *name)
{
	int i;

	for (i = 0; i < X509_NAME_entry_count(name); i++)
		if (ASN1_STRING_type(X509_NAME_ENTRY_get_data(
		    X509_NAME_get_entry(name, i))) == V_ASN1_NUMERICSTRING)
			return 1;
	return 0;
}

/* The RFC 2253 print of rfc reads back as an equal name (when it prints,
 * holds no NumericString, and both names canonicalise: X509_NAME_cmp -2
 * is "cannot compare"). */
static void
fuzz_trust_dn_round(const X509_NAME *rfc, const char *in)
{
	X509_NAME *again = NULL, *again_fwd = NULL;
	char *printed = fuzz_trust_dn_numeric(rfc) ? NULL :
	    fuzz_trust_dn_print(rfc);
	int cmp;

	if (printed != NULL && strlen(printed) <= FUZZ_TRUST_DN_MAX &&
	    trust_dn_parse(printed, &again, &again_fwd) == 0) {
		cmp = X509_NAME_cmp(rfc, again);
		if (cmp != 0 && cmp != -2)
			fuzz_trust_dn_die("print does not read back", in);
	}
	X509_NAME_free(again);
	X509_NAME_free(again_fwd);
	free(printed);
}

/* One input: parse, check the invariants. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[FUZZ_TRUST_DN_MAX + 1];
	X509_NAME *rfc = NULL, *fwd = NULL;

	if (size > FUZZ_TRUST_DN_MAX)
		size = FUZZ_TRUST_DN_MAX;
	memcpy(s, data, size);
	s[size] = '\0';
	if (trust_dn_parse(s, &rfc, &fwd) == 0) {
		if (rfc == NULL || fwd == NULL)
			fuzz_trust_dn_die("accepted without names", s);
		fuzz_trust_dn_mirror(rfc, fwd, s);
		fuzz_trust_dn_round(rfc, s);
	}
	X509_NAME_free(rfc);
	X509_NAME_free(fwd);
	ERR_clear_error();
	return 0;
}
