/*
 * trust_int — what the files of src/trust share: the layout of struct
 * trust and the file readers.  Other modules include trust.h.
 */
#ifndef AS4GW_TRUST_INT_H
#define AS4GW_TRUST_INT_H

#include <pthread.h>
#include <time.h>

#include <openssl/sha.h>
#include <openssl/x509_vfy.h>

#include "trust.h"
#include "trust_revoc.h"

#define TRUST_SKI_LEN 64              /* longest SKI we index */

/* A signer certificate with the identifiers a message may name it by. */
struct trust_signer {
	X509 *cert;                            /* owned by trust.certs */
	unsigned char ski[TRUST_SKI_LEN];      /* extension, or RFC 5280 4.2.1.2 (1) */
	size_t ski_len;
	unsigned char sha1[SHA_DIGEST_LENGTH]; /* ThumbprintSHA1 */
	unsigned char *der;                    /* its DER bytes (owned) */
	size_t der_len;
};

/* The instants (seconds) at which a signer's chain was last found valid;
 * ok 0: not known (see trust_chain_check). */
struct trust_window {
	int ok;
	time_t from, until;
};

/* What trust_chain_check() learns: mutable behind a constant trust. */
struct trust_seen {
	pthread_mutex_t lock;
	struct trust_window *win;              /* parallel to signers */
};

struct trust {
	STACK_OF(X509) *certs;                 /* the signers */
	struct trust_signer *signers;
	size_t n_signers;
	X509_STORE *anchors;                   /* and the CRLs */
	unsigned long vflags;                  /* X509_V_FLAG_CRL_CHECK or 0 */
	struct trust_seen *seen;
	struct trust_revoc *revoc;             /* the server's; not owned */
	enum trust_revoc_mode revoc_mode;      /* live revocation (issue 12) */
	/* a network trust (trust_network): no signers */
	int network;
	X509_NAME **issuers;                   /* 2 per issuer string: both readings */
	size_t n_issuers;
	ASN1_OBJECT **policies;
	size_t n_policies;
	enum trust_party_source party_source;
	ASN1_OBJECT *party_attr;               /* TRUST_PARTY_SUBJECT */
};

/* trust_party.c: read the network settings of n into t (issuer names,
 * policy OIDs, the party rule); ERR_CONF naming what cannot be read. */
int trust_party_init(struct trust *t, const struct trust_network *n,
    struct err *err);

/* trust_party.c: free what trust_party_init made; accepts a trust
 * without. */
void trust_party_free(struct trust *t);

/* trust_party.c: the network checks of cert after its chain verified:
 * issuer (checked before) and policy.  0 / -1 EBMS:0101. */
int trust_party_issuer_ok(const struct trust *t, X509 *cert, struct err *err);
int trust_party_policy_ok(const struct trust *t, X509 *cert, struct err *err);

/* trust.c: the signer DER-equal to cert, or NULL. */
const struct trust_signer *trust_signer_of(const struct trust *t,
    const X509 *cert);

/* trust.c: record an EBMS:0101 FailedAuthentication with log-only detail
 * (may be NULL); returns -1. */
int trust_fail(struct err *err, const char *msg, const char *detail);

/* trust_dn.c: is s a dotted OID (RFC 4512 1.4 numericoid: two or more
 * arcs of digits, no empty arc)?  1 / 0.  OBJ_txt2obj takes "1..2". */
int trust_dn_numericoid(const char *s);

/* trust_pem.c: append every certificate of a PEM file to sk; a file
 * without any is an error that names the file. */
int trust_pem_certs(const char *path, STACK_OF(X509) *sk, struct err *err);

/* trust_pem.c: add every CRL of a file to store: PEM (several allowed) or
 * one DER CRL; a file without any is an error that names the file. */
int trust_pem_crls(X509_STORE *store, const char *path, struct err *err);

#endif
