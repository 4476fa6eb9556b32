/*
 * trust_party.c — a network's rules for its members (issue 12, README
 * "Networks"): the issuers and certificate policies a member certificate
 * may have, and the party rule that reads the member's PartyId in it (the
 * subject's CN for Peppol, whose AS4 profile makes the From PartyId the CN
 * of the sending access point's certificate; another subject attribute, or
 * a subjectAltName).  A valid signature by one member claiming another's
 * PartyId is refused here, after verification, before anything is stored.
 */
#include "trust_int.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/objects.h>
#include <openssl/x509v3.h>

/* Read the issuer strings (both readings each) and policy OIDs of n. */
static int
trust_party_lists(struct trust *t, const struct trust_network *n,
    struct err *err)
{
	size_t i;

	t->issuers = calloc(2 * n->n_issuers + 1, sizeof(*t->issuers));
	t->policies = calloc(n->n_policies + 1, sizeof(*t->policies));
	if (t->issuers == NULL || t->policies == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n->n_issuers; i++, t->n_issuers += 2)
		if (trust_dn_parse(n->issuers[i], &t->issuers[2 * i],
		    &t->issuers[2 * i + 1]) < 0)
			return err_set(err, ERR_CONF, NULL, "network issuer "
			    "\"%s\" is not a distinguished name (RFC 4514)",
			    n->issuers[i]);
	for (i = 0; i < n->n_policies; i++, t->n_policies++)
		if (!trust_dn_numericoid(n->policies[i]) ||
		    (t->policies[i] = OBJ_txt2obj(n->policies[i], 1)) == NULL)
			return err_set(err, ERR_CONF, NULL, "network policy "
			    "\"%s\" is not an OID", n->policies[i]);
	return 0;
}

/* Read the network settings of n into t; see trust_int.h. */
int
trust_party_init(struct trust *t, const struct trust_network *n,
    struct err *err)
{
	int rc = -1;

	t->network = 1;
	t->party_source = n->party_source;
	if (trust_party_lists(t, n, err) < 0)
		goto out;
	if (n->party_source == TRUST_PARTY_SUBJECT &&
	    (n->party_attribute == NULL ||
	    (t->party_attr = OBJ_txt2obj(n->party_attribute, 0)) == NULL)) {
		err_set(err, ERR_CONF, NULL, "network party attribute \"%s\" "
		    "is not an OID or attribute name", n->party_attribute != NULL ?
		    n->party_attribute : "");
		goto out;
	}
	rc = 0;
out:
	ERR_clear_error();
	return rc;
}

/* Free what trust_party_init made; see trust_int.h. */
void
trust_party_free(struct trust *t)
{
	size_t i;

	for (i = 0; t->issuers != NULL && i < t->n_issuers; i++)
		X509_NAME_free(t->issuers[i]);
	for (i = 0; t->policies != NULL && i < t->n_policies; i++)
		ASN1_OBJECT_free(t->policies[i]);
	free(t->issuers);
	free(t->policies);
	ASN1_OBJECT_free(t->party_attr);
}

/* The member's issuer is one of the network's (none listed: any). */
int
trust_party_issuer_ok(const struct trust *t, X509 *cert, struct err *err)
{
	const X509_NAME *issuer = X509_get_issuer_name(cert);
	size_t i;

	for (i = 0; i < t->n_issuers; i++)
		if (X509_NAME_cmp(issuer, t->issuers[i]) == 0)
			return 0;
	if (t->n_issuers == 0)
		return 0;
	return trust_fail(err, "certificate not trusted",
	    "issuer is not one of the network's");
}

/* RFC 5280 4.2.1.4: the member's certificatePolicies hold one of the
 * network's policies (none listed: any). */
int
trust_party_policy_ok(const struct trust *t, X509 *cert, struct err *err)
{
	CERTIFICATEPOLICIES *cp;
	size_t i;
	int j, found = 0;

	if (t->n_policies == 0)
		return 0;
	cp = X509_get_ext_d2i(cert, NID_certificate_policies, NULL, NULL);
	for (j = 0; cp != NULL && j < sk_POLICYINFO_num(cp) && !found; j++)
		for (i = 0; i < t->n_policies && !found; i++)
			found = OBJ_cmp(sk_POLICYINFO_value(cp, j)->policyid,
			    t->policies[i]) == 0;
	CERTIFICATEPOLICIES_free(cp);
	ERR_clear_error();
	if (!found)
		return trust_fail(err, "certificate not trusted",
		    "certificate carries none of the network's policies");
	return 0;
}

/* Is the string s (of length len) exactly claimed? */
static int
trust_party_eq(const unsigned char *s, int len, const char *claimed)
{
	return len >= 0 && (size_t)len == strlen(claimed) &&
	    memcmp(s, claimed, (size_t)len) == 0;
}

/* The subject attribute obj, which must occur once, as UTF-8 equal to
 * claimed: 1 equal, 0 not, -1 absent or several (*ret_what says). */
static int
trust_party_subject(X509 *cert, const ASN1_OBJECT *obj, const char *claimed,
    const char **ret_what)
{
	const X509_NAME *subject = X509_get_subject_name(cert);
	int at = X509_NAME_get_index_by_OBJ(subject, obj, -1), len, r;
	unsigned char *utf8 = NULL;

	if (at < 0 || X509_NAME_get_index_by_OBJ(subject, obj, at) >= 0) {
		*ret_what = at < 0 ? "the attribute is not in the subject" :
		    "the attribute occurs more than once in the subject";
		return -1;
	}
	len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(
	    X509_NAME_get_entry(subject, at)));
	r = utf8 != NULL && trust_party_eq(utf8, len, claimed);
	OPENSSL_free(utf8);
	*ret_what = "the certificate names another party";
	return r;
}

/* One subjectAltName of kind type (GEN_URI, GEN_DNS, GEN_EMAIL) equals
 * claimed: 1, else 0. */
static int
trust_party_san(X509 *cert, int type, const char *claimed)
{
	GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name,
	    NULL, NULL);
	const GENERAL_NAME *g;
	int i, found = 0, t;
	const ASN1_STRING *v;

	for (i = 0; names != NULL && i < sk_GENERAL_NAME_num(names) &&
	    !found; i++) {
		g = sk_GENERAL_NAME_value(names, i);
		v = GENERAL_NAME_get0_value(g, &t);
		found = t == type && v != NULL && trust_party_eq(
		    ASN1_STRING_get0_data(v), ASN1_STRING_length(v), claimed);
	}
	GENERAL_NAMES_free(names);
	ERR_clear_error();
	return found;
}

/* Does cert name the claimed PartyId by t's party rule?  See trust.h. */
int
trust_party_check(const struct trust *t, X509 *cert, const char *claimed,
    struct err *err)
{
	static const int san[] = { [TRUST_PARTY_SAN_URI] = GEN_URI,
		[TRUST_PARTY_SAN_DNS] = GEN_DNS,
		[TRUST_PARTY_SAN_EMAIL] = GEN_EMAIL };
	const char *what = "no subjectAltName of the rule's kind names it";
	int r;

	if (t == NULL || !t->network)
		return 0;
	if (cert == NULL || claimed == NULL)
		return trust_fail(err, "certificate not bound to the sending "
		    "party", "no certificate or no PartyId");
	if (t->party_source == TRUST_PARTY_CN)
		r = trust_party_subject(cert, OBJ_nid2obj(NID_commonName),
		    claimed, &what);
	else if (t->party_source == TRUST_PARTY_SUBJECT)
		r = trust_party_subject(cert, t->party_attr, claimed, &what);
	else
		r = trust_party_san(cert, san[t->party_source], claimed);
	if (r == 1)
		return 0;
	trust_fail(err, "certificate not bound to the sending party", NULL);
	err_detail(err, "From PartyId \"%.100s\": %s", claimed, what);
	return -1;
}
