/*
 * Unit tests for src/trust: loading signer and anchor PEM files and CRLs
 * (PEM and DER), the binding/keyUsage/chain/validity checks at an instant,
 * the validity windows learnt, and revocation by static CRL, over the
 * shared test PKI (testpki.c); network trusts (issue 12): membership by
 * issuer, policy and chain, the party rules (CN, subject attribute,
 * subjectAltName), and recorded Peppol access point certificates under
 * the Peppol test CAs.  The RFC 4514 reader has its own table
 * (test_trust_dn.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "testpki.h"
#include "testutil.h"
#include "trust/trust.h"
#include "util/err.h"

#define DAY_MS (86400LL * 1000)

static struct {
	struct trust *trust;       /* anchors: root */
	struct trust *trust_int;   /* anchors: the intermediate only */
} fx;

/* A trust from pki.dir file names. */
static struct trust *
make_trust(const char *signers, const char *anchors)
{
	char s[128], a[128];
	const char *sv[] = { testpki_path(s, sizeof(s), signers) };
	const char *av[] = { testpki_path(a, sizeof(a), anchors) };
	struct trust_files f = { .signers = sv, .n_signers = 1,
		.anchors = av, .n_anchors = 1 };
	struct trust *t = NULL;
	struct err err;

	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), 0);
	return t;
}

/* Generate the PKI, the files and the two trusts. */
static int
group_setup(void **state)
{
	(void)state;
	if (testpki_setup("test_trust") < 0)
		return -1;
	fx.trust = make_trust("signers.pem", "ca.pem");
	fx.trust_int = make_trust("signers.pem", "int.pem");
	return 0;
}

/* Free everything and remove the temporary files. */
static int
group_teardown(void **state)
{
	(void)state;
	trust_free(fx.trust);
	trust_free(fx.trust_int);
	testpki_teardown();
	return 0;
}

/* ---- trust_new ---- */

/* Files that cannot make a trust, and the error each gives. */
static void
test_new_failures(void **state)
{
	static const struct {
		const char *signers, *anchors, *crl; /* crl: NULL = none */
		size_t n_signers, n_anchors;
		enum err_kind kind;
		const char *msg;
	} cases[] = {
		{ "missing.pem", "ca.pem", NULL, 1, 1, ERR_IO, "missing.pem" },
		{ "garbage.pem", "ca.pem", NULL, 1, 1, ERR_CONF,
		    "no certificate in" },
		{ "key.pem", "ca.pem", NULL, 1, 1, ERR_CONF,
		    "no certificate in" },
		{ "broken.pem", "ca.pem", NULL, 1, 1, ERR_CONF, "broken.pem" },
		{ "signers.pem", "garbage.pem", NULL, 1, 1, ERR_CONF,
		    "garbage.pem" },
		{ "signers.pem", "ca.pem", NULL, 0, 1, ERR_CONF,
		    "trust anchors" },
		{ "signers.pem", "ca.pem", NULL, 1, 0, ERR_CONF,
		    "trust anchors" },
		{ "signers.pem", "ca.pem", "missing.crl", 1, 1, ERR_IO,
		    "could not open CRL file" },
		{ "signers.pem", "ca.pem", "garbage.pem", 1, 1, ERR_CONF,
		    "could not read CRL file" },
		{ "signers.pem", "ca.pem", "ca.pem", 1, 1, ERR_CONF,
		    "could not read CRL file" },
		{ "signers.pem", "ca.pem", "key.pem", 1, 1, ERR_CONF,
		    "could not read CRL file" },
	};
	char s[128], a[128], c[128];
	struct trust *t;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *sv[] = { testpki_path(s, sizeof(s), cases[i].signers) };
		const char *av[] = { testpki_path(a, sizeof(a), cases[i].anchors) };
		const char *cv[] = { cases[i].crl == NULL ? NULL :
			testpki_path(c, sizeof(c), cases[i].crl) };

		struct trust_files f = { .signers = sv,
			.n_signers = cases[i].n_signers, .anchors = av,
			.n_anchors = cases[i].n_anchors, .crls = cv,
			.n_crls = cases[i].crl != NULL };

		err_clear(&err);
		t = (struct trust *)0x1;
		assert_int_equal(trust_new(&f, &t, &err), -1);
		assert_ptr_equal(t, (struct trust *)0x1);
		assert_int_equal(err.kind, cases[i].kind);
		if (strstr(err.msg, cases[i].msg) == NULL)
			fail_msg("case %zu: \"%s\"", i, err.msg);
	}
	trust_free(NULL);
}

/* ---- trust_chain_check ---- */

static const struct check_case {
	const char *name;
	int cert, chain;         /* chain: C_NONE for none */
	int use_int_anchor;
	long at_days;            /* 0: now */
	const char *msg;         /* NULL: accepted */
	const char *detail;
} check_cases[] = {
	{ "valid leaf with its intermediate", C_LEAF, C_INT, 0, 0, NULL, NULL },
	{ "valid leaf without its intermediate", C_LEAF, C_NONE, 0, 0,
	    "certificate not trusted", "local issuer" },
	{ "intermediate as anchor (chain prefix)", C_LEAF, C_NONE, 1, 0, NULL,
	    NULL },
	{ "leaf without SKI", C_NOSKI, C_INT, 0, 0, NULL, NULL },
	{ "expired", C_EXPIRED, C_INT, 0, 0, "certificate not trusted",
	    "expired" },
	{ "expired, evaluated in its validity", C_EXPIRED, C_INT, 0, -15, NULL,
	    NULL },
	{ "not yet valid", C_FUTURE, C_INT, 0, 0, "certificate not trusted",
	    "not yet valid" },
	{ "not yet valid, evaluated later", C_FUTURE, C_INT, 0, 15, NULL, NULL },
	{ "valid leaf after the root expired", C_LEAF, C_INT, 0, 1100,
	    "certificate not trusted", "expired" },
	{ "self-signed, not an anchor", C_SELF, C_NONE, 0, 0,
	    "certificate not trusted", "self" },
	{ "self-signed with a chain", C_SELF, C_INT, 0, 0,
	    "certificate not trusted", "self" },
	{ "valid but not bound to the party", C_STRANGER, C_INT, 0, 0,
	    "certificate not bound to the sending party", "" },
	{ "anchor itself is not a signer", C_CA, C_NONE, 0, 0,
	    "certificate not bound to the sending party", "" },
	{ "keyUsage without digitalSignature", C_NOSIGN, C_INT, 0, 0,
	    "certificate may not sign", "digitalSignature" },
	{ "intermediate with another key", C_LEAF, C_INT2, 0, 0,
	    "certificate not trusted", "signature" },
};

/* Table: binding, keyUsage, chain and validity decisions. */
static void
test_check_table(void **state)
{
	const struct check_case *c;
	STACK_OF(X509) *chain;
	struct err err;
	int64_t at;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(check_cases) / sizeof(*check_cases); i++) {
		c = &check_cases[i];
		chain = sk_X509_new_null();
		assert_non_null(chain);
		if (c->chain != C_NONE)
			assert_true(sk_X509_push(chain, pki.certs[c->chain]) > 0);
		at = c->at_days == 0 ? 0 :
		    (int64_t)time(NULL) * 1000 + c->at_days * DAY_MS;
		err_clear(&err);
		rc = trust_chain_check(c->use_int_anchor ? fx.trust_int :
		    fx.trust, pki.certs[c->cert], chain, at, &err);
		sk_X509_free(chain);
		if (c->msg == NULL) {
			if (rc != 0)
				fail_msg("%s: %s (%s)", c->name, err.msg,
				    err.detail);
			continue;
		}
		if (rc != -1 || err.kind != ERR_EBMS ||
		    strcmp(err.ebms_code, "EBMS:0101") != 0 ||
		    strcmp(err.msg, c->msg) != 0 ||
		    strstr(err.detail, c->detail) == NULL)
			fail_msg("%s: rc %d \"%s\" (%s)", c->name, rc, err.msg,
			    err.detail);
	}
}

/*
 * trust_chain_check() remembers the window in which a signer's chain (no CRLs,
 * no certificates from the message) was found valid; the window must not
 * let anything through outside it.  The expired leaf (valid -20 .. -10 days)
 * under the intermediate as anchor: accepted at -15 days (window learnt),
 * refused now and before its notBefore, accepted again at -12 days.
 */
static void
test_check_window(void **state)
{
	static const struct {
		long at_days;
		const char *detail;  /* NULL: accepted */
	} steps[] = {
		{ -15, NULL }, { 0, "expired" }, { -25, "not yet valid" },
		{ -12, NULL }, { -9, "expired" }, { -15, NULL },
	};
	struct err err;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(steps) / sizeof(*steps); i++) {
		err_clear(&err);
		rc = trust_chain_check(fx.trust_int, pki.certs[C_EXPIRED], NULL,
		    steps[i].at_days == 0 ? 0 : (int64_t)time(NULL) * 1000 +
		    steps[i].at_days * DAY_MS, &err);
		if (steps[i].detail == NULL && rc != 0)
			fail_msg("step %zu: %s (%s)", i, err.msg, err.detail);
		if (steps[i].detail != NULL && (rc != -1 ||
		    strstr(err.detail, steps[i].detail) == NULL))
			fail_msg("step %zu: rc %d (%s)", i, rc, err.detail);
	}
}

/* ---- revocation (NEGATIVE-CASES 43) ---- */

/* Trusts of test_crl: anchor the root; CRLs from these files. */
enum { R_NONE, R_PEM, R_DER, R_ROOT_ONLY, R_COUNT };
static const char *const crl_files[R_COUNT] = {
	[R_NONE] = NULL, [R_PEM] = "crl.pem", [R_DER] = "crl-empty.der",
	[R_ROOT_ONLY] = "crl-ca.pem",
};

static const struct crl_case {
	const char *name;
	int trust, cert;         /* chain: always the intermediate */
	long at_days;            /* 0: now */
	const char *detail;      /* NULL: accepted */
} crl_cases[] = {
	{ "revoked leaf", R_PEM, C_NOSKI, 0, "certificate revoked" },
	{ "leaf not revoked", R_PEM, C_LEAF, 0, NULL },
	{ "revoked leaf, no CRL configured (opt-in)", R_NONE, C_NOSKI, 0,
	    NULL },
	{ "leaf, CRL past nextUpdate", R_PEM, C_LEAF, 60, "CRL has expired" },
	{ "leaf, CRL not yet valid", R_PEM, C_LEAF, -5, "CRL is not yet valid" },
	{ "DER CRL revoking nothing", R_DER, C_NOSKI, 0, NULL },
	{ "issuer without a CRL", R_ROOT_ONLY, C_LEAF, 0,
	    "unable to get certificate CRL" },
};

/* Table: revocation decisions with and without CRLs. */
static void
test_crl(void **state)
{
	struct trust *trusts[R_COUNT] = { NULL };
	const struct crl_case *c;
	char s[128], a[128], p[128];
	const char *sv[1], *av[1], *cv[1];
	struct trust_files f = { .signers = sv, .n_signers = 1, .anchors = av,
		.n_anchors = 1, .crls = cv };
	STACK_OF(X509) *chain = sk_X509_new_null();
	struct err err;
	size_t i;
	int rc;

	(void)state;
	assert_non_null(chain);
	assert_true(sk_X509_push(chain, pki.certs[C_INT]) > 0);
	sv[0] = testpki_path(s, sizeof(s), "signers.pem");
	av[0] = testpki_path(a, sizeof(a), "ca.pem");
	for (i = 0; i < R_COUNT; i++) {
		cv[0] = crl_files[i] == NULL ? NULL :
		    testpki_path(p, sizeof(p), crl_files[i]);
		err_clear(&err);
		f.n_crls = crl_files[i] != NULL;
		assert_int_equal(trust_new(&f, &trusts[i], &err), 0);
	}
	for (i = 0; i < sizeof(crl_cases) / sizeof(*crl_cases); i++) {
		c = &crl_cases[i];
		err_clear(&err);
		rc = trust_chain_check(trusts[c->trust], pki.certs[c->cert], chain,
		    c->at_days == 0 ? 0 : (int64_t)time(NULL) * 1000 +
		    c->at_days * DAY_MS, &err);
		if (c->detail == NULL ? rc != 0 : (rc != -1 ||
		    err.kind != ERR_EBMS ||
		    strcmp(err.ebms_code, "EBMS:0101") != 0 ||
		    strcmp(err.msg, "certificate not trusted") != 0 ||
		    strstr(err.detail, c->detail) == NULL))
			fail_msg("%s: rc %d \"%s\" (%s)", c->name, rc, err.msg,
			    err.detail);
	}
	for (i = 0; i < R_COUNT; i++)
		trust_free(trusts[i]);
	sk_X509_free(chain);
}

/* ---- network trusts (issue 12) ---- */

#define NET_POLICY "1.3.6.1.4.1.99999.12.1"

/* A member certificate under the intermediate (key K_LEAF): subject CN
 * and O, a policy (NULL: none) and a subjectAltName (NULL: none). */
static X509 *
make_member(const char *cn, const char *org, const char *policy,
    const char *san)
{
	X509 *cert = X509_new();
	X509_NAME *name = X509_NAME_new();
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	assert_true(cert != NULL && name != NULL);
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
	    (const unsigned char *)org, -1, -1, 0), 1);
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
	    (const unsigned char *)cn, -1, -1, 0), 1);
	assert_int_equal(X509_set_version(cert, 2), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(cert), 77), 1);
	assert_int_equal(X509_set_subject_name(cert, name), 1);
	assert_int_equal(X509_set_issuer_name(cert,
	    X509_get_subject_name(pki.certs[C_INT])), 1);
	X509_NAME_free(name);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(cert), -86400L));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(cert), 86400L * 30));
	assert_int_equal(X509_set_pubkey(cert, pki.keys[K_LEAF]), 1);
	X509V3_set_ctx(&ctx, pki.certs[C_INT], cert, NULL, NULL, 0);
	if (policy != NULL) {
		CERTIFICATEPOLICIES *cp = sk_POLICYINFO_new_null();
		POLICYINFO *pi = POLICYINFO_new();

		assert_true(cp != NULL && pi != NULL);
		ASN1_OBJECT_free(pi->policyid);
		pi->policyid = OBJ_txt2obj(policy, 1);
		assert_true(sk_POLICYINFO_push(cp, pi) > 0);
		assert_int_equal(X509_add1_ext_i2d(cert, NID_certificate_policies, cp,
		    0, 0), 1);
		CERTIFICATEPOLICIES_free(cp);
	}
	if (san != NULL) {
		ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, san);
		assert_non_null(ext);
		assert_int_equal(X509_add_ext(cert, ext, -1), 1);
		X509_EXTENSION_free(ext);
	}
	assert_true(X509_sign(cert, pki.keys[K_INT], EVP_sha256()) > 0);
	return cert;
}

/* A network trust over pki.dir/anchors (or an absolute path). */
static struct trust *
make_network(const char *anchors, const struct trust_network *n)
{
	char a[4096];
	const char *av[] = { anchors[0] == '/' ? anchors :
		testpki_path(a, sizeof(a), anchors) };
	struct trust_files f = { .anchors = av, .n_anchors = 1, .network = n };
	struct trust *t = NULL;
	struct err err;

	err_clear(&err);
	if (trust_new(&f, &t, &err) != 0)
		fail_msg("%s (%s)", err.msg, err.detail);
	return t;
}

/* Membership: chain to the network's anchors, issuer, policy; the party
 * rules read the PartyId the member may claim. */
static void
test_network_rules(void **state)
{
	static const char *const issuers[] = {
		"CN=Test Intermediate, O=Test Org, ST=Brussels, C=BE" };
	static const char *const others[] = { "CN=Someone Else" };
	static const char *const policies[] = { NET_POLICY };
	static const struct {
		enum trust_party_source src;
		const char *attr, *claim;
		int ok;
	} rules[] = {
		{ TRUST_PARTY_CN, NULL, "POP000001", 1 },
		{ TRUST_PARTY_CN, NULL, "POP000002", 0 },
		{ TRUST_PARTY_CN, NULL, "pop000001", 0 },
		{ TRUST_PARTY_CN, NULL, "POP00000", 0 },
		{ TRUST_PARTY_SUBJECT, "O", "Member Org", 1 },
		{ TRUST_PARTY_SUBJECT, "2.5.4.10", "Member Org", 1 },
		{ TRUST_PARTY_SUBJECT, "organizationIdentifier", "x", 0 },
		{ TRUST_PARTY_SAN_URI, NULL, "urn:member:1", 1 },
		{ TRUST_PARTY_SAN_URI, NULL, "member.example", 0 },
		{ TRUST_PARTY_SAN_DNS, NULL, "member.example", 1 },
		{ TRUST_PARTY_SAN_EMAIL, NULL, "ap@member.example", 1 },
		{ TRUST_PARTY_SAN_EMAIL, NULL, "urn:member:1", 0 },
	};
	X509 *m = make_member("POP000001", "Member Org", NET_POLICY,
	    "URI:urn:member:1,DNS:member.example,email:ap@member.example");
	X509 *nopol = make_member("POP000001", "Member Org", NULL, NULL);
	STACK_OF(X509) *chain = sk_X509_new_null();
	struct trust_network n = { .issuers = issuers, .n_issuers = 1,
		.policies = policies, .n_policies = 1 };
	struct trust *t;
	struct err err;
	size_t i;

	(void)state;
	assert_true(chain != NULL && sk_X509_push(chain, pki.certs[C_INT]) > 0);
	for (i = 0; i < sizeof(rules) / sizeof(*rules); i++) {
		n.party_source = rules[i].src;
		n.party_attribute = rules[i].attr;
		t = make_network("ca.pem", &n);
		assert_int_equal(trust_is_network(t), 1);
		err_clear(&err);
		assert_int_equal(trust_chain_check(t, m, chain, 0, &err), 0);
		err_clear(&err);
		if ((trust_party_check(t, m, rules[i].claim, &err) == 0) !=
		    rules[i].ok)
			fail_msg("rule %zu claiming \"%s\": %s (%s)", i,
			    rules[i].claim, err.msg, err.detail);
		if (!rules[i].ok)
			assert_string_equal(err.ebms_code, "EBMS:0101");
		trust_free(t);
	}
	n.party_source = TRUST_PARTY_CN;
	n.party_attribute = NULL;
	t = make_network("ca.pem", &n);
	err_clear(&err);
	assert_int_equal(trust_chain_check(t, nopol, chain, 0, &err), -1);
	assert_non_null(strstr(err.detail, "policies"));
	err_clear(&err);    /* without its intermediate: no chain */
	assert_int_equal(trust_chain_check(t, m, NULL, 0, &err), -1);
	assert_non_null(strstr(err.detail, "issuer"));
	err_clear(&err);    /* a listed signer's trust is not a network's */
	assert_int_equal(trust_party_check(fx.trust, m, "anything", &err), 0);
	assert_int_equal(trust_is_network(fx.trust), 0);
	trust_free(t);
	n.issuers = others;
	t = make_network("ca.pem", &n);
	err_clear(&err);
	assert_int_equal(trust_chain_check(t, m, chain, 0, &err), -1);
	assert_non_null(strstr(err.detail, "issuer is not one"));
	trust_free(t);
	/* another network's anchors (the intermediate's twin with another key) */
	n.issuers = NULL;
	n.n_issuers = 0;
	testpki_write_pem("int2.pem", (const int[]){ C_INT2 }, 1);
	t = make_network("int2.pem", &n);
	err_clear(&err);
	assert_int_equal(trust_chain_check(t, m, NULL, 0, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0101");
	trust_free(t);
	sk_X509_free(chain);
	X509_free(m);
	X509_free(nopol);
}

/* Network trusts that cannot be built. */
static void
test_network_new_failures(void **state)
{
	static const char *const bad_dn[] = { "not a name" };
	static const char *const bad_oid[] = { "1..2" };
	struct trust_network n = { .party_source = TRUST_PARTY_CN };
	char a[128], s[128];
	const char *av[] = { testpki_path(a, sizeof(a), "ca.pem") };
	const char *sv[] = { testpki_path(s, sizeof(s), "signers.pem") };
	struct trust_files f = { .anchors = av, .n_anchors = 1, .network = &n };
	struct trust *t = NULL;
	struct err err;

	(void)state;
	n.issuers = bad_dn;
	n.n_issuers = 1;
	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), -1);
	assert_non_null(strstr(err.msg, "not a distinguished name"));
	n.n_issuers = 0;
	n.policies = bad_oid;
	n.n_policies = 1;
	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), -1);
	assert_non_null(strstr(err.msg, "not an OID"));
	n.n_policies = 0;
	n.party_source = TRUST_PARTY_SUBJECT;
	n.party_attribute = "noSuchAttribute";
	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), -1);
	n.party_source = TRUST_PARTY_CN;
	n.party_attribute = NULL;
	f.signers = sv;
	f.n_signers = 1;
	err_clear(&err);
	assert_int_equal(trust_new(&f, &t, &err), -1);
	assert_null(t);
}

/* Recorded Peppol access point certificates (from BSTs of real messages,
 * ../shared/corpus/keys) under the Peppol test CAs, at the instant of
 * their message and now. */
static void
test_network_peppol_corpus(void **state)
{
	static const struct {
		const char *cert, *cn;
		int64_t at_s;        /* 0: now */
		int chain_ok;
	} cases[] = {
		/* Governikus POP000260 (AP TEST CA G2), governikus.as4in */
		{ "corpus/keys/821e53a11883.pem", "POP000260", 1646674888, 1 },
		{ "corpus/keys/821e53a11883.pem", "POP000260", 0, 0 },
		/* Dataport PDE000357 (G2), dataport1-mustunderstand.as4in */
		{ "corpus/keys/74c24165e800.pem", "PDE000357", 1646000000, 1 },
		/* Helger POP000306 (AP TEST CA G3), dump-raw.as4out */
		{ "corpus/keys/06dadae737d8.pem", "POP000306", 0, 1 },
	};
	static const char *const issuers[] = {
		"CN=PEPPOL ACCESS POINT TEST CA - G2,OU=FOR TEST ONLY,"
		    "O=OpenPEPPOL AISBL,C=BE",
		"CN=PEPPOL ACCESS POINT TEST CA - G3,OU=FOR TEST ONLY,"
		    "O=OpenPEPPOL AISBL,C=BE" };
	struct trust_network n = { .issuers = issuers, .n_issuers = 2,
		.party_source = TRUST_PARTY_CN };
	char bundle[128], path[4096];
	FILE *out;
	char *pem;
	size_t i, len;
	struct trust *t;
	struct err err;
	X509 *cert;
	BIO *bio;

	(void)state;
	if (testutil_shared_dir() == NULL)
		testutil_skip("../shared (the corpus) is absent: recorded Peppol "
		    "certificates not tested under a network trust");
	/* the network's bundle: AP TEST CA G2 and G3 with their roots */
	out = fopen(testpki_path(bundle, sizeof(bundle), "peppol.pem"), "w");
	assert_non_null(out);
	for (i = 0; i < 4; i++) {
		static const char *const ca[] = { "a0627c7d3e96", "bd77a11e2b21",
			"b965544218e0", "0e9ab7342cd2" };

		(void)snprintf(path, sizeof(path), "corpus/keys/%s.pem", ca[i]);
		pem = testutil_read_shared(path, &len);
		assert_non_null(pem);
		assert_int_equal(fwrite(pem, 1, len, out), len);
		free(pem);
	}
	assert_int_equal(fclose(out), 0);
	t = make_network("peppol.pem", &n);
	for (i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		(void)snprintf(path, sizeof(path), "%s/%s",
		    testutil_shared_dir(), cases[i].cert);
		bio = BIO_new_file(path, "r");
		assert_non_null(bio);
		cert = PEM_read_bio_X509(bio, NULL, NULL, NULL);
		BIO_free(bio);
		assert_non_null(cert);
		err_clear(&err);
		if ((trust_chain_check(t, cert, NULL, cases[i].at_s * 1000,
		    &err) == 0) != cases[i].chain_ok)
			fail_msg("%s at %lld: %s (%s)", cases[i].cert,
			    (long long)cases[i].at_s, err.msg, err.detail);
		err_clear(&err);
		assert_int_equal(trust_party_check(t, cert, cases[i].cn, &err), 0);
		assert_int_equal(trust_party_check(t, cert, "POP000001", &err),
		    -1);
		X509_free(cert);
	}
	trust_free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_failures),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_check_window),
		cmocka_unit_test(test_crl),
		cmocka_unit_test(test_network_rules),
		cmocka_unit_test(test_network_new_failures),
		cmocka_unit_test(test_network_peppol_corpus),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
