/*
 * testagree — the fixture shared by the test_wss_agree_*.c programs
 * (src/wss/wss_kdf.c, wss_agree.c, src/sender/sender_agree.c): the key
 * pairs (X25519, P-256, P-384, brainpoolP256r1, RSA) with certificates
 * issued by a P-256 CA, made by the openssl command into a temporary
 * directory at group setup and loaded as keyrings, and the small XML and
 * hex helpers of the cases.  Helpers fail the running cmocka test on
 * error.
 */
#ifndef AS4GW_TESTAGREE_H
#define AS4GW_TESTAGREE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libxml/tree.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>

#include "testutil.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"
#include "wss/wss.h"
#include "sender/sender.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define MORE21 "http://www.w3.org/2021/04/xmldsig-more#"
#define DSIG11 "http://www.w3.org/2009/xmldsig11#"
#define ALL_ALGS (WSS_ALGS_KEY_AGREEMENT | WSS_DIG_SHA256 | WSS_DIG_SHA384 | \
	WSS_DIG_SHA512)

/* The generated key pairs: name, openssl genpkey arguments. */
enum { K_X1, K_X2, K_P256, K_P384, K_BP256, K_P256B, K_RSA, K_N };
extern const char *const k_names[K_N];
extern const char *const k_gen[K_N];

/* Made by group_setup: the directory, each pair's keyring (the pair as a
 * leg's decryption keys), certificate and private key. */
struct testagree_fx {
	char dir[64];
	struct wss_keyring *ring[K_N];
	X509 *cert[K_N];
	EVP_PKEY *priv[K_N];
};
extern struct testagree_fx fx;

/* fx.dir/name into out. */
const char *tpath(char *out, size_t size, const char *name, const char *ext);

/* A CA (P-256) and the pairs of k_names, each certificate issued by the CA
 * with an SKI (testkeys.h). */
int group_setup(void **state);

/* Free the pairs, remove the directory. */
int group_teardown(void **state);

/* The first element {ns}name at or below n (document order), or NULL. */
xmlNodePtr t_find(xmlNodePtr n, const char *ns, const char *name);

/* Unlink and free node. */
void t_drop(xmlNodePtr node);

/* The decoded base64 text of node (arena). */
unsigned char *t_b64(struct arena *a, const xmlNode *node, size_t *ret_len);

/* Parse text into a document owned by the arena. */
xmlDocPtr t_parse(struct arena *a, const char *text, size_t len);

/* err is the EBMS code want. */
void t_code(const struct err *err, const char *want, const char *what);

#endif
