/*
 * testkeys — keys and certificates made with the openssl command into a
 * temporary directory, the PKI shared by the key-type tests (testagree.c
 * for test_wss_agree_*.c, testeddsa.c for test_wss_eddsa_*.c): a P-256 CA
 * (ca.key, ca.crt) issuing a leaf NAME.crt for every key NAME.key that
 * openssl genpkey makes: the request is the CA's with the leaf's public
 * key forced in (-force_pubkey), so a key that cannot sign (X25519) gets
 * its certificate too.
 */
#ifndef AS4GW_TESTKEYS_H
#define AS4GW_TESTKEYS_H

#include <stddef.h>

/*
 * A fresh directory /tmp/PREFIX.XXXXXX into dir (64 bytes) with the CA in
 * it and the file leaf.ext that every leaf gets as its extensions (ext: one
 * openssl x509 -extfile line, e.g. "keyUsage=critical,digitalSignature").
 * 0 ok, -1 failed.
 */
int testkeys_make(char *dir, const char *prefix, const char *ext);

/* A key NAME.key (genpkey: openssl genpkey arguments), its public key
 * NAME.pub and the CA's certificate for it NAME.crt, in dir.  0 ok, -1
 * failed. */
int testkeys_leaf(const char *dir, const char *name, const char *genpkey);

/* Run a shell command (printf format) in dir; 0 when it exited 0. */
int testkeys_sh(const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Remove dir and everything in it. */
void testkeys_remove(const char *dir);

#endif
