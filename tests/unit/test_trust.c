/*
 * Unit tests for src/trust: loading signer and anchor PEM files and CRLs
 * (PEM and DER), the binding/keyUsage/chain/validity checks at an instant,
 * the validity windows learnt, and revocation by static CRL, over the
 * shared test PKI (testpki.c).  The RFC 4514 reader has its own table
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

#include <openssl/x509.h>

#include "testpki.h"
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_failures),
		cmocka_unit_test(test_check_table),
		cmocka_unit_test(test_check_window),
		cmocka_unit_test(test_crl),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
