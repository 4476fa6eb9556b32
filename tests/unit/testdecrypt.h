/*
 * testdecrypt — the fixture shared by the test_wss_decrypt_*.c programs
 * (src/wss/wss_oaep.c, wss_decrypt.c): two RSA key pairs made at group
 * setup, the algorithm URIs of the tests, and the comparison every
 * EBMS:0102 answer goes through.  Helpers fail the running cmocka test on
 * error.
 */
#ifndef AS4GW_TESTDECRYPT_H
#define AS4GW_TESTDECRYPT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libxml/tree.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>
#include <xmlsec/openssl/evp.h>

#include "testutil.h"
#include "spool/spool.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"
#include "wss/wss.h"
#include "sender/sender.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define XENC11 "http://www.w3.org/2009/xmlenc11#"
#define DSIG_MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define SWA "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"
#define KT_XENC11 XENC11 "rsa-oaep"
#define KT_MGF1P NS_XENC "rsa-oaep-mgf1p"
#define KT_PKCS1 NS_XENC "rsa-1_5"
#define GCM128 XENC11 "aes128-gcm"
#define GCM192 XENC11 "aes192-gcm"
#define GCM256 XENC11 "aes256-gcm"
#define DM(uri) "<ds:DigestMethod Algorithm=\"" uri "\"/>"
#define MGF(name) "<xenc11:MGF Algorithm=\"" XENC11 name "\"/>"

struct testdecrypt_fx {
	char dir[64];
	struct wss_key *key;     /* recipient (the gateway) */
	struct wss_key *other;   /* somebody else */
	struct wss_keyring *ring;       /* gw's pair as a leg's keyring */
	struct wss_keyring *ring_other; /* other's */
	const char *thumb;       /* gw.crt's ThumbprintSHA1, base64 */
	X509 *cert;
	EVP_PKEY *pub;
	EVP_PKEY *priv;
};

extern struct testdecrypt_fx fx;

/* fx.dir/name into out. */
const char *tpath(char *out, size_t size, const char *name);
/* Two RSA key pairs with self-signed certificates (with an SKI) in fx;
 * group_teardown frees them and removes their files. */
int group_setup(void **state);
int group_teardown(void **state);

/* The wsse:Security header of a parsed envelope. */
xmlNodePtr t_security(xmlDocPtr doc);
/* A default policy that decrypts with the pairs of ring. */
struct wss_policy t_policy(const struct wss_keyring *ring, unsigned extra);
/* Base64 content of node (arena). */
unsigned char *t_unbase64(struct arena *a, const xmlNode *node,
    size_t *ret_len);
/* A spool in a fresh directory (threshold 0, budget max), bound. */
struct spool *t_spool_bind(char *dir, uint64_t max);

/* The first EBMS:0102 answer; every other must be answered the same. */
extern struct err t_first_0102;
/* Log details of the decryption failures seen (issue 10 item 12). */
extern char t_details[64][sizeof(((struct err *)0)->detail)];
extern size_t t_n_details;
/* Compare a decryption failure with the first one seen (t_first_0102):
 * the answer the generated table gives (EBMS:0102 "decryption failed"),
 * identical; the log detail says what failed and is collected. */
void t_same_0102(const struct err *err, const char *what);

#endif
