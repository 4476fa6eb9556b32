/*
 * trust — who may sign for a party (issue 12): the signer certificates
 * listed for a P-Mode leg, the trust anchors their chains must reach, static
 * CRLs, the chain check at an instant (`--verify-at`) and the validity
 * windows learnt from it, and the RFC 4514 reading of a certificate name
 * (trust_dn.c).  Depends on util and OpenSSL only: no XML.  wss/ resolves a
 * ds:KeyInfo to a certificate (WS-Security X.509 Token Profile) and asks
 * trust whether it may sign.
 */
#ifndef AS4GW_TRUST_H
#define AS4GW_TRUST_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

#include "../util/err.h"
#include "trust_revoc.h"

/*
 * Trust for one P-Mode leg: the certificates bound to the leg's eb:From
 * party (the only ones whose key may verify its messages) and the anchors
 * their chains must reach.  Immutable once built except for the validity
 * windows it learns (under a lock); shared by all threads.
 */
struct trust;

/* Where a network member's PartyId is read in its certificate
 * (trust_party.c). */
enum trust_party_source {
	TRUST_PARTY_CN = 0,        /* the subject's commonName */
	TRUST_PARTY_SUBJECT,       /* the subject attribute party_attribute */
	TRUST_PARTY_SAN_URI,       /* a subjectAltName URI */
	TRUST_PARTY_SAN_DNS,       /* ... dNSName */
	TRUST_PARTY_SAN_EMAIL,     /* ... rfc822Name */
};

/*
 * A network (issue 12): any certificate chaining to the anchors may sign,
 * when (if listed) its issuer is one of issuers (RFC 4514 strings, read by
 * trust_dn_parse either way round) and it carries one of policies (dotted
 * OIDs in its certificatePolicies), for the PartyId the party rule reads
 * in it (trust_party_check).
 */
struct trust_network {
	const char *const *issuers;
	size_t n_issuers;
	const char *const *policies;
	size_t n_policies;
	enum trust_party_source party_source;
	const char *party_attribute;  /* TRUST_PARTY_SUBJECT: OID or short name */
};

/* What a trust is built from: PEM files (each may hold several
 * certificates) and CRL files (PEM, several per file, or one DER CRL);
 * with network set, no signers (a network trust, trust_network). */
struct trust_files {
	const char *const *signers;
	size_t n_signers;
	const char *const *anchors;
	size_t n_anchors;
	const char *const *crls;     /* may be NULL when n_crls is 0 */
	size_t n_crls;
	const struct trust_network *network;  /* NULL: listed signers */
};

/*
 * trust.c: load the files of f.  A file without any certificate (CRL) is an
 * error naming it (ERR_IO when it cannot be opened, else ERR_CONF).  Signer
 * and anchor lists must be non-empty (ERR_CONF).  With any CRL,
 * trust_chain_check() also refuses a signer certificate revoked by its
 * issuer's CRL, and one whose issuer has no CRL current at the instant
 * (only the signer is checked, not its CAs).  *ret is written only on
 * success; free it with trust_free (accepts NULL).
 */
int trust_new(const struct trust_files *f, struct trust **ret,
    struct err *err);
void trust_free(struct trust *t);

/*
 * Find a listed signer (trust.c).  The certificate returned is borrowed
 * from t (X509_up_ref it to keep it beyond t); NULL when none matches.
 *   trust_find_der: the signer whose DER encoding is these very bytes (a
 *     token that is a signer need not be parsed again: OpenSSL 3's
 *     d2i_X509 decodes the key through its providers, ~20% of a message);
 *   trust_find_ski: by SubjectKeyIdentifier (the extension, or when absent
 *     RFC 5280 4.2.1.2 (1): SHA-1 of the subjectPublicKey);
 *   trust_find_thumb: by SHA-1 of the whole certificate (WSS 1.1
 *     ThumbprintSHA1);
 *   trust_find_issuer: by serial number and an issuer equal to either name
 *     (X509_NAME_cmp: case and spacing insensitive).
 */
X509 *trust_find_der(const struct trust *t, const unsigned char *der,
    size_t len);
X509 *trust_find_ski(const struct trust *t, const unsigned char *id,
    size_t len);
X509 *trust_find_thumb(const struct trust *t, const unsigned char *id,
    size_t len);
X509 *trust_find_issuer(const struct trust *t, const ASN1_INTEGER *serial,
    const X509_NAME *a, const X509_NAME *b);

/*
 * trust_chain.c: may cert sign for this leg?  It is one of t's signers
 * (DER-equal; else "certificate not bound to the sending party") — for a
 * network trust: its issuer is one of the network's (when listed) — its
 * keyUsage (when present) includes digitalSignature, it chains (with the
 * untrusted chain, may be NULL) to one of t's anchors, and it and the chain
 * are valid at at_ms (0 = now; RFC 5280 6.1.3 (a)(2)); with CRLs it is not
 * revoked by a CRL current at at_ms.  Anchors need not be self-signed
 * (X509_V_FLAG_PARTIAL_CHAIN: eDelivery AS4 1.15, 1.5.3.3 allows chain
 * prefixes).  A network member's certificate must also carry one of the
 * network's policies (when listed).  Else EBMS:0101 with the reason in
 * err.detail.
 */
int trust_chain_check(const struct trust *t, X509 *cert,
    STACK_OF(X509) *chain, int64_t at_ms, struct err *err);

/*
 * trust_chain.c: trust_chain_check() with live revocation (issue 12 item
 * 2): when t has it (trust_set_revocation), the verified chain is then
 * checked by trust_revoc_chain() — revoked EBMS:0101, no fresh status
 * ERR_UNAVAILABLE under require; under prefer *ret_note (may be NULL) says
 * when it failed open.  Skipped when at_ms != 0 (`--verify-at`: no
 * responder answers for the past).
 */
int trust_chain_check_note(const struct trust *t, X509 *cert,
    STACK_OF(X509) *chain, int64_t at_ms, struct trust_revoc_note *ret_note,
    struct err *err);

/*
 * trust_chain.c: ask r (the server's engine; it must outlive t) about the
 * signer's chain under mode from now on.  Called once, before t is shared.
 */
void trust_set_revocation(struct trust *t, struct trust_revoc *r,
    enum trust_revoc_mode mode);

/*
 * trust_chain.c: the instants (epoch ms, inclusive) within which cert, a
 * signer of t, was found to chain validly by an earlier trust_chain_check()
 * that did not depend on CRLs, live revocation or on certificates from the
 * message: 1 known
 * (*ret_from_ms, *ret_until_ms written), 0 not known (t may be NULL).
 */
int trust_chain_window(const struct trust *t, const X509 *cert,
    int64_t *ret_from_ms, int64_t *ret_until_ms);

/* Is t a network trust (any member may sign, trust_party_check binds the
 * party)?  1 / 0; t may be NULL. */
int trust_is_network(const struct trust *t);

/*
 * trust_party.c: does cert (a network member, trust_chain_check passed)
 * name the PartyId value claimed, by t's party rule?  The CN or subject
 * attribute must occur once in the subject and equal claimed byte for
 * byte; a subjectAltName of the rule's kind may be any one of those the
 * certificate lists.  0 yes; -1 EBMS:0101 ("certificate not bound to the
 * sending party", what the certificate names in err.detail).  A trust of
 * listed signers answers 0 (its binding is the signer list).
 */
int trust_party_check(const struct trust *t, X509 *cert, const char *claimed,
    struct err *err);

/*
 * trust_dn.c: read a distinguished name string — RFC 4514 (escapes "\,"
 * and "\2C", quoted values as RFC 1779 and .NET write them, "#hex" BER
 * string values, '+' joining attributes into one RDN, ',' or ';' between
 * RDNs, keywords of Java, .NET and OpenSSL, dotted OIDs with or without
 * "OID.") — into two names: *ret_rfc read as RFC 4514 says (last RDN first,
 * as Java and .NET write it) and *ret_fwd in the written order (OpenSSL's
 * one-line style).  At most TRUST_DN_AVA_MAX attributes.  0 ok (both names
 * the caller's to X509_NAME_free); -1 malformed (nothing written).
 */
#define TRUST_DN_AVA_MAX 64
int trust_dn_parse(const char *s, X509_NAME **ret_rfc, X509_NAME **ret_fwd);

#endif
