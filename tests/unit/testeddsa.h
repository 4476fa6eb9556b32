/*
 * testeddsa — the fixture shared by the test_wss_eddsa_*.c programs
 * (src/wss/wss_eddsa.c, wss_sigalg.c): the signer identities (Ed25519,
 * P-256, P-384, P-521, brainpoolP256r1, RSA) with keys and certificates
 * made by the openssl command into a temporary directory (a P-256 CA
 * issuing each leaf) at group setup, their trusts, the messages they sign,
 * and the text surgery the negatives use.  Helpers fail the running cmocka
 * test on error.
 */
#ifndef AS4GW_TESTEDDSA_H
#define AS4GW_TESTEDDSA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/tree.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/crypto.h>
#include <xmlsec/transforms.h>
#include <xmlsec/xmldsig.h>
#include <xmlsec/xmltree.h>

#include "testutil.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"
#include "wss/wss.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define MORE21 "http://www.w3.org/2021/04/xmldsig-more#"

/* The signer identities made by group_setup (leaf certificates issued by
 * a P-256 CA; RSA for the 1.x comparison). */
enum id { I_ED25519 = 0, I_P256, I_P384, I_P521, I_BP256, I_RSA, I_N };

/* Each identity's key type and the method our signing picks for it. */
struct testeddsa_ids {
	const char *name;
	const char *genpkey;   /* openssl genpkey arguments */
	const char *method;    /* SignatureMethod our signing picks */
};
extern const struct testeddsa_ids ids[I_N];

/* Made by group_setup: the directory, each identity's key, certificate
 * and trust (signer: its certificate, anchor: the CA). */
struct testeddsa_fx {
	char dir[64];
	struct wss_key *key[I_N];
	struct wss_cert *cert[I_N];
	struct trust *trust[I_N];
};
extern struct testeddsa_fx fx;

/* fx.dir/name into out. */
const char *path(char *out, size_t size, const char *name);

/* Trust: signer fx.dir/<name>.crt, anchor fx.dir/ca.crt. */
int trust_make(const char *name, struct trust **ret);

/* Make the PKI, load every pair and certificate, build the trusts. */
int group_setup(void **state);

/* Free everything, remove the temporary PKI. */
int group_teardown(void **state);

/* Parse with the hardened parser; the arena owns the document. */
xmlDocPtr parse(struct arena *a, const char *xml, size_t len);

/* Serialise doc into the arena. */
char *dump(struct arena *a, xmlDocPtr doc);

/* The decoded SignatureValue of text (arena). */
unsigned char *sigvalue(struct arena *a, const char *text, size_t *ret_len);

/* text with its SignatureValue replaced by raw (arena). */
char *with_sigvalue(struct arena *a, const char *text,
    const unsigned char *raw, size_t len);

/* text with the first from replaced by to (arena). */
char *replace(struct arena *a, const char *text, const char *from,
    const char *to);

/* text (Ed25519-signed) with L added to the S half of its signature
 * (arena).  L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032
 * 5.1); S + L < 2^256 since S < L. */
char *ed25519_s_plus_l(struct arena *a, const char *text);

#endif
