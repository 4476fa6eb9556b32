/*
 * testpki — the shared test PKI of the trust unit tests; see testpki.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "testpki.h"

struct testpki pki;

const struct testpki_spec testpki_specs[C_COUNT] = {
	[C_CA] = { "/C=BE/O=Test Org/CN=Test Root CA", -1, K_CA, "1",
	    -1000, 1000, 1, 1, 0 },
	[C_INT] = { "/C=BE/ST=Brussels/O=Test Org/CN=Test Intermediate", C_CA,
	    K_INT, "2", -1000, 1000, 1, 1, 0 },
	[C_INT2] = { "/C=BE/ST=Brussels/O=Test Org/CN=Test Intermediate", C_CA,
	    K_INT2, "3", -1000, 1000, 1, 1, 0 },
	[C_LEAF] = { "/C=BE/O=Test Org/CN=leaf", C_INT, K_LEAF,
	    "123456789012345678901234567890", -10, 365, 0, 1, 1 },
	[C_EXPIRED] = { "/C=BE/O=Test Org/CN=expired", C_INT, K_LEAF, "11",
	    -20, -10, 0, 1, 1 },
	[C_FUTURE] = { "/C=BE/O=Test Org/CN=future", C_INT, K_LEAF, "12",
	    10, 20, 0, 1, 1 },
	[C_NOSKI] = { "/C=BE/O=Test Org/CN=noski", C_INT, K_NOSKI, "13",
	    -10, 365, 0, 0, 1 },
	[C_SELF] = { "/O=Test Org/CN=self+UID=42", -1, K_LEAF, "14",
	    -10, 365, 0, 1, 1 },
	[C_NOSIGN] = { "/C=BE/O=Test Org/CN=nosign", C_INT, K_LEAF, "15",
	    -10, 365, 0, 1, 2 },
	[C_STRANGER] = { "/C=BE/O=Test Org/CN=stranger", C_INT, K_LEAF, "16",
	    -10, 365, 0, 1, 1 },
};

/* pki.dir/name into out. */
const char *
testpki_path(char *out, size_t size, const char *name)
{
	(void)snprintf(out, size, "%s/%s", pki.dir, name);
	return out;
}

/* "/C=BE/O=x/CN=y+UID=z" into an X509_NAME ('+' joins the previous RDN). */
static X509_NAME *
make_name(const char *subject)
{
	X509_NAME *name = X509_NAME_new();
	char buf[256], *p = buf, *end, *eq;
	int set;

	assert_non_null(name);
	(void)snprintf(buf, sizeof(buf), "%s", subject);
	while (*p != '\0') {
		set = *p == '+' ? -1 : 0;
		p++;
		end = p + strcspn(p, "/+");
		eq = strchr(p, '=');
		assert_true(eq != NULL && eq < end);
		*eq = '\0';
		{
			char sep = *end;

			*end = '\0';
			assert_int_equal(X509_NAME_add_entry_by_txt(name, p,
			    MBSTRING_UTF8, (const unsigned char *)eq + 1, -1,
			    -1, set), 1);
			*end = sep;
		}
		p = end;
	}
	return name;
}

/* Add one extension by its config-file text. */
static void
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	assert_non_null(ext);
	assert_int_equal(X509_add_ext(cert, ext, -1), 1);
	X509_EXTENSION_free(ext);
}

/* Make certificate i of specs. */
static X509 *
make_cert(int i)
{
	X509 *cert = X509_new(), *issuer;
	EVP_PKEY *sign_key;
	X509_NAME *name = make_name(testpki_specs[i].subject);
	BIGNUM *bn = NULL;

	assert_non_null(cert);
	assert_non_null(name);
	issuer = testpki_specs[i].issuer < 0 ? cert : pki.certs[testpki_specs[i].issuer];
	sign_key = pki.keys[testpki_specs[i].issuer < 0 ? testpki_specs[i].key :
	    testpki_specs[testpki_specs[i].issuer].key];
	assert_int_equal(X509_set_version(cert, 2), 1);
	assert_true(BN_dec2bn(&bn, testpki_specs[i].serial) > 0);
	assert_non_null(BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)));
	BN_free(bn);
	assert_int_equal(X509_set_subject_name(cert, name), 1);
	assert_int_equal(X509_set_issuer_name(cert, testpki_specs[i].issuer < 0 ?
	    name : X509_get_subject_name(issuer)), 1);
	X509_NAME_free(name);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(cert),
	    testpki_specs[i].from_days * 86400L));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(cert),
	    testpki_specs[i].to_days * 86400L));
	assert_int_equal(X509_set_pubkey(cert, pki.keys[testpki_specs[i].key]), 1);
	add_ext(cert, issuer, NID_basic_constraints, testpki_specs[i].ca ?
	    "critical,CA:TRUE" : "critical,CA:FALSE");
	if (testpki_specs[i].ca)
		add_ext(cert, issuer, NID_key_usage,
		    "critical,keyCertSign,cRLSign");
	else if (testpki_specs[i].ku != 0)
		add_ext(cert, issuer, NID_key_usage, testpki_specs[i].ku == 1 ?
		    "critical,digitalSignature" : "critical,keyEncipherment");
	if (testpki_specs[i].ski)
		add_ext(cert, issuer, NID_subject_key_identifier, "hash");
	assert_true(X509_sign(cert, sign_key, EVP_sha256()) > 0);
	return cert;
}

/* Write certificates to a PEM file in pki.dir. */
void
testpki_write_pem(const char *name, const int *which, size_t n)
{
	char path[128];
	FILE *f = fopen(testpki_path(path, sizeof(path), name), "w");
	size_t i;

	assert_non_null(f);
	for (i = 0; i < n; i++)
		assert_int_equal(PEM_write_X509(f, pki.certs[which[i]]), 1);
	assert_int_equal(fclose(f), 0);
}

/* Write a text file in pki.dir. */
static void
write_text(const char *name, const char *text)
{
	char path[128];
	FILE *f = fopen(testpki_path(path, sizeof(path), name), "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/*
 * Append to pki.dir/name (PEM) or write it (DER) a CRL of certificate issuer,
 * current from yesterday for 30 days, revoking revoked (C_NONE: nothing).
 */
static void
write_crl(const char *name, int issuer, int revoked, int der)
{
	X509_CRL *crl = X509_CRL_new();
	ASN1_TIME *t = ASN1_TIME_new();
	X509_REVOKED *r;
	char path[128];
	BIO *bio;

	assert_true(crl != NULL && t != NULL);
	assert_int_equal(X509_CRL_set_version(crl, 1), 1);
	assert_int_equal(X509_CRL_set_issuer_name(crl,
	    X509_get_subject_name(pki.certs[issuer])), 1);
	assert_non_null(X509_gmtime_adj(t, -86400L));
	assert_int_equal(X509_CRL_set1_lastUpdate(crl, t), 1);
	if (revoked != C_NONE) {
		r = X509_REVOKED_new();
		assert_non_null(r);
		assert_int_equal(X509_REVOKED_set_serialNumber(r,
		    X509_get_serialNumber(pki.certs[revoked])), 1);
		assert_int_equal(X509_REVOKED_set_revocationDate(r, t), 1);
		assert_int_equal(X509_CRL_add0_revoked(crl, r), 1);
	}
	assert_non_null(X509_gmtime_adj(t, 30 * 86400L));
	assert_int_equal(X509_CRL_set1_nextUpdate(crl, t), 1);
	assert_int_equal(X509_CRL_sort(crl), 1);
	assert_true(X509_CRL_sign(crl, pki.keys[testpki_specs[issuer].key],
	    EVP_sha256()) > 0);
	bio = BIO_new_file(testpki_path(path, sizeof(path), name), der ? "wb" :
	    "a");
	assert_non_null(bio);
	assert_int_equal(der ? i2d_X509_CRL_bio(bio, crl) :
	    PEM_write_bio_X509_CRL(bio, crl), 1);
	BIO_free(bio);
	ASN1_TIME_free(t);
	X509_CRL_free(crl);
}

/* Generate the PKI and its files; see testpki.h. */
int
testpki_setup(const char *name)
{
	static const int signers[] = { C_LEAF, C_EXPIRED, C_FUTURE, C_NOSKI,
		C_SELF, C_NOSIGN };
	static const int ca[] = { C_CA }, in[] = { C_INT };
	char path[128];
	BIO *bio;
	int i;

	(void)snprintf(pki.dir, sizeof(pki.dir), "/tmp/%s.XXXXXX", name);
	if (mkdtemp(pki.dir) == NULL)
		return -1;
	for (i = 0; i < K_COUNT; i++)
		if ((pki.keys[i] = EVP_EC_gen("P-256")) == NULL)
			return -1;
	for (i = 0; i < C_COUNT; i++)
		pki.certs[i] = make_cert(i);
	testpki_write_pem("signers.pem", signers, sizeof(signers) / sizeof(*signers));
	testpki_write_pem("ca.pem", ca, 1);
	testpki_write_pem("int.pem", in, 1);
	write_text("garbage.pem", "this is not a certificate\n");
	write_text("broken.pem", "-----BEGIN CERTIFICATE-----\nMIIB!!!!\n"
	    "-----END CERTIFICATE-----\n");
	bio = BIO_new_file(testpki_path(path, sizeof(path), "key.pem"), "w");
	if (bio == NULL || PEM_write_bio_PrivateKey(bio, pki.keys[K_LEAF], NULL,
	    NULL, 0, NULL, NULL) != 1)
		return -1;
	BIO_free(bio);
	/* crl.pem: the root's CRL, then the intermediate's revoking noski */
	write_crl("crl.pem", C_CA, C_NONE, 0);
	write_crl("crl.pem", C_INT, C_NOSKI, 0);
	write_crl("crl-empty.der", C_INT, C_NONE, 1);
	write_crl("crl-ca.pem", C_CA, C_NONE, 0);
	return 0;
}

/* Free the PKI, remove its files and directory; see testpki.h. */
void
testpki_teardown(void)
{
	char p[512];
	DIR *d = opendir(pki.dir);
	struct dirent *e;
	size_t i;

	while (d != NULL && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			(void)unlink(testpki_path(p, sizeof(p), e->d_name));
	if (d != NULL)
		(void)closedir(d);
	(void)rmdir(pki.dir);
	for (i = 0; i < C_COUNT; i++)
		X509_free(pki.certs[i]);
	for (i = 0; i < K_COUNT; i++)
		EVP_PKEY_free(pki.keys[i]);
}
