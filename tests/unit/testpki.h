/*
 * testpki — the small test PKI of the trust and key-resolution unit tests
 * (test_trust.c, test_wss_keyinfo.c): keys, a root, two intermediates with
 * the same name, leaves (expired, not yet valid, without SKI, self-signed,
 * without digitalSignature, unbound) and CRLs, generated with OpenSSL into
 * a temporary directory at start.
 */
#ifndef AS4GW_TESTPKI_H
#define AS4GW_TESTPKI_H

#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

enum { K_CA, K_INT, K_INT2, K_LEAF, K_NOSKI, K_COUNT };
enum {
	C_CA, C_INT, C_INT2, C_LEAF, C_EXPIRED, C_FUTURE, C_NOSKI, C_SELF,
	C_NOSIGN, C_STRANGER, C_COUNT, C_NONE = -1
};

/* How each test certificate is made (subject in DER order, '+' joins an
 * attribute to the previous RDN). */

/* How each test certificate is made (subject in DER order, '+' joins an
 * attribute to the previous RDN). */
struct testpki_spec {
	const char *subject;
	int issuer;              /* index, or -1 self-signed */
	int key;
	const char *serial;      /* decimal */
	long from_days, to_days;
	int ca, ski, ku;         /* ku: 0 none, 1 digitalSignature, 2 keyEncipherment */
};
extern const struct testpki_spec testpki_specs[C_COUNT];

struct testpki {
	char dir[64];
	EVP_PKEY *keys[K_COUNT];
	X509 *certs[C_COUNT];
};
extern struct testpki pki;

/*
 * Generate the PKI and write into pki.dir: signers.pem (leaf, expired,
 * future, noski, self, nosign), ca.pem (root), int.pem (intermediate),
 * garbage.pem, broken.pem, key.pem (a private key), crl.pem (the root's
 * CRL and the intermediate's revoking noski), crl-empty.der (the
 * intermediate's, DER, revoking nothing), crl-ca.pem (the root's only).
 * name: the directory's prefix under /tmp.  0 ok, -1 failed.
 */
int testpki_setup(const char *name);
/* Free the PKI and remove pki.dir and the files in it. */
void testpki_teardown(void);

/* pki.dir/name into out. */
const char *testpki_path(char *out, size_t size, const char *name);

/* Write certificates (indexes into pki.certs) to a PEM file in pki.dir. */
void testpki_write_pem(const char *name, const int *which, size_t n);

#endif
