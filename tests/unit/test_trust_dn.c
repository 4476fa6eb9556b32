/*
 * Unit tests for src/trust/trust_dn.c: a table of distinguished name
 * strings (RFC 4514 and the RFC 1779 / .NET / Java habits seen in
 * ds:X509IssuerName) with the names they must read as — printed back in
 * RFC 2253 form, in both readings (RFC 4514 order and written order) — and
 * malformed strings, each refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/x509.h>

#include "trust/trust.h"

/* A name in RFC 2253 form (malloc). */
static char *
dn_print(const X509_NAME *name)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out;
	long n;

	assert_non_null(bio);
	assert_true(X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253) >= 0);
	n = BIO_get_mem_data(bio, &data);
	out = malloc((size_t)n + 1);
	assert_non_null(out);
	memcpy(out, data, (size_t)n);
	out[n] = '\0';
	BIO_free(bio);
	return out;
}

static const struct dn_case {
	const char *in;
	const char *rfc;   /* RFC 2253 print of the RFC 4514 reading; NULL: refused */
	const char *fwd;   /* ... of the written-order reading; NULL: not checked */
} dn_cases[] = {
	/* plain, spaced, keywords */
	{ "CN=Test,O=Org,C=BE", "CN=Test,O=Org,C=BE", "C=BE,O=Org,CN=Test" },
	{ "CN=Test, O=Org, C=BE", "CN=Test,O=Org,C=BE", NULL },
	{ "  CN = Test ,O= Org ,  C =BE  ", "CN=Test,O=Org,C=BE", NULL },
	{ "cn=Test;o=Org ; c=BE", "CN=Test,O=Org,C=BE", NULL },
	{ "C=BE, ST=Brussels, O=Org, CN=Test", "C=BE,ST=Brussels,O=Org,CN=Test",
	    "CN=Test,O=Org,ST=Brussels,C=BE" },
	{ "CN=x, S=Brussels, E=a@b.example", "CN=x,ST=Brussels,"
	    "emailAddress=a@b.example", NULL },
	{ "SERIALNUMBER=42,GIVENNAME=Ann,SURNAME=Lee,T=Dr,DC=example,UID=u1",
	    "serialNumber=42,GN=Ann,SN=Lee,title=Dr,DC=example,UID=u1", NULL },
	{ "ORGANIZATIONIDENTIFIER=VATBE-0123,STREET=Main 1,L=Gent,"
	    "POSTALCODE=9000,DNQ=q,INITIALS=AL", "organizationIdentifier="
	    "VATBE-0123,street=Main 1,L=Gent,postalCode=9000,dnQualifier=q,"
	    "initials=AL", NULL },
	/* escapes (RFC 4514 2.4) */
	{ "CN=Doe\\, John,O=Org", "CN=Doe\\, John,O=Org", NULL },
	{ "CN=Doe\\2C John,O=Org", "CN=Doe\\, John,O=Org", NULL },
	{ "CN=Doe\\2c John", "CN=Doe\\, John", NULL },
	{ "CN=say \\\"hi\\\",O=Org", "CN=say \\\"hi\\\",O=Org", NULL },
	{ "CN=a\\+b\\;c\\<d\\>e\\=f\\\\g", "CN=a\\+b\\;c\\<d\\>e=f\\\\g", NULL },
	{ "CN=\\ lead", "CN=\\ lead", NULL },
	{ "CN=trail\\ ", "CN=trail\\ ", NULL },
	{ "CN=trail   ,O=x", "CN=trail,O=x", NULL },
	{ "CN=\\#hash", "CN=\\#hash", NULL },
	{ "CN=Caf\\C3\\A9", "CN=Caf\\C3\\A9", NULL },
	/* quoted values (RFC 1779, .NET) */
	{ "CN=\"Doe, John\",O=Org", "CN=Doe\\, John,O=Org", NULL },
	{ "CN=\"a+b;c\" + UID=1", "UID=1+CN=a\\+b\\;c", NULL },
	{ "O=\"  spaced  \"", "O=\\  spaced \\ ", NULL },
	/* "#hex": the BER of a string value */
	{ "CN=#0c0454657374,O=Org", "CN=Test,O=Org", NULL },
	{ "CN=#130454657374", "CN=Test", NULL },
	{ "CN=#160454657374", "CN=Test", NULL },
	{ "CN=#1e080054006500730074", "CN=Test", NULL },
	{ "CN = #0C0454657374 , O=Org", "CN=Test,O=Org", NULL },
	/* multi-valued RDNs (RFC 2253 printing lists an RDN's attributes
	 * last first; comparison sorts them: DER SET OF) */
	{ "CN=self+UID=42,O=Org", "UID=42+CN=self,O=Org",
	    "O=Org,UID=42+CN=self" },
	{ "UID=42 + CN=self, O=Org", "CN=self+UID=42,O=Org", NULL },
	{ "O=Org,CN=a+CN=b+CN=c", "O=Org,CN=c+CN=b+CN=a", "CN=c+CN=b+CN=a,O=Org" },
	/* OIDs as keys */
	{ "2.5.4.3=Test,OID.2.5.4.10=Org", "CN=Test,O=Org", NULL },
	{ "oid.2.5.4.6=BE", "C=BE", NULL },
	{ "OID.2.5=x", "X500=x", NULL },
	{ "1.2.3.4=foo", "1.2.3.4=#0C03666F6F", NULL },
	{ "2.5.4.97=VATBE-1", "organizationIdentifier=VATBE-1", NULL },
	/* a value a PrintableString cannot hold goes in as UTF8String */
	{ "C=B_", "C=B_", NULL },
	{ "C=BEL", "C=BEL", NULL },
	{ "CN=", "CN=", NULL },
	/* malformed, each refused */
	{ "", NULL, NULL },
	{ "   ", NULL, NULL },
	{ "CN", NULL, NULL },
	{ "=x", NULL, NULL },
	{ "CN=x,", NULL, NULL },
	{ "CN=x;", NULL, NULL },
	{ "CN=x+", NULL, NULL },
	{ "CN=x,,O=y", NULL, NULL },
	{ ",CN=x", NULL, NULL },
	{ "XYZ=1", NULL, NULL },
	{ "C N=x", NULL, NULL },
	{ "CN:x", NULL, NULL },
	{ "CN=\"x", NULL, NULL },
	{ "CN=\"x\"y", NULL, NULL },
	{ "CN=\"x, O=y", NULL, NULL },
	{ "CN=#", NULL, NULL },
	{ "CN=#zz", NULL, NULL },
	{ "CN=#0c0", NULL, NULL },
	{ "CN=#0c05546573", NULL, NULL },
	{ "CN=#0c0454657374ff", NULL, NULL },
	{ "CN=#040454657374", NULL, NULL },     /* OCTET STRING */
	{ "CN=#03020000", NULL, NULL },         /* BIT STRING */
	{ "CN=#300603014102014", NULL, NULL },
	{ "CN=#3000", NULL, NULL },             /* SEQUENCE */
	{ "CN=#0500", NULL, NULL },             /* NULL */
	{ "OID.=x", NULL, NULL },
	{ "2.5.4.3.=x", NULL, NULL },           /* numericoid: no empty arc */
	{ "1..2=x", NULL, NULL },
	{ "2=x", NULL, NULL },
	{ "2.5.4.3.-1=x", NULL, NULL },
	{ "CN=x\\", NULL, NULL },               /* escapes nothing */
	{ "CN=\"x\\", NULL, NULL },
	{ "CN=x,O=y\\", NULL, NULL },
	{ "ORGANIZATIONIDENTIFIERORGANIZATIONIDENTIFIERORGANIZATIONIDENTIFIER"
	    "=x", NULL, NULL },
};

/* Report one wrong case (all are reported before the test fails); 1. */
static size_t
dn_bad(const char *what, const char *in, const char *got, const char *want)
{
	print_error("\"%s\": %s \"%s\", want \"%s\"\n", in, what, got, want);
	return 1;
}

/* Each string reads as the table says, both ways, or is refused. */
static void
test_dn_table(void **state)
{
	const struct dn_case *c;
	X509_NAME *rfc, *fwd;
	char *got;
	size_t i, bad = 0;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(dn_cases) / sizeof(*dn_cases); i++) {
		c = &dn_cases[i];
		rfc = fwd = (X509_NAME *)0x1;
		rc = trust_dn_parse(c->in, &rfc, &fwd);
		if (c->rfc == NULL) {
			if (rc != -1 || rfc != (X509_NAME *)0x1 ||
			    fwd != (X509_NAME *)0x1)
				bad += dn_bad("accepted", c->in, "", "refused");
			continue;
		}
		if (rc != 0) {
			bad += dn_bad("refused", c->in, "", c->rfc);
			continue;
		}
		got = dn_print(rfc);
		if (strcmp(got, c->rfc) != 0)
			bad += dn_bad("read as", c->in, got, c->rfc);
		free(got);
		got = dn_print(fwd);
		if (c->fwd != NULL && strcmp(got, c->fwd) != 0)
			bad += dn_bad("written order", c->in, got, c->fwd);
		free(got);
		X509_NAME_free(rfc);
		X509_NAME_free(fwd);
	}
	assert_int_equal(bad, 0);
}

/* At most TRUST_DN_AVA_MAX attributes; the two readings of a name are one
 * another's reverse and compare equal to a certificate's name. */
static void
test_dn_limits(void **state)
{
	char buf[1024];
	size_t i, n = 0;
	X509_NAME *rfc = NULL, *fwd = NULL, *want = X509_NAME_new();

	(void)state;
	for (i = 0; i < TRUST_DN_AVA_MAX; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%sOU=%zu",
		    i > 0 ? "," : "", i);
	assert_int_equal(trust_dn_parse(buf, &rfc, &fwd), 0);
	assert_int_equal(X509_NAME_entry_count(rfc), TRUST_DN_AVA_MAX);
	X509_NAME_free(rfc);
	X509_NAME_free(fwd);
	(void)snprintf(buf + n, sizeof(buf) - n, ",OU=x");
	assert_int_equal(trust_dn_parse(buf, &rfc, &fwd), -1);
	/* what a certificate holds: C=BE, O=Test Org, CN=Test CA */
	assert_non_null(want);
	assert_int_equal(X509_NAME_add_entry_by_txt(want, "C", MBSTRING_ASC,
	    (const unsigned char *)"BE", -1, -1, 0), 1);
	assert_int_equal(X509_NAME_add_entry_by_txt(want, "O", MBSTRING_ASC,
	    (const unsigned char *)"Test Org", -1, -1, 0), 1);
	assert_int_equal(X509_NAME_add_entry_by_txt(want, "CN", MBSTRING_ASC,
	    (const unsigned char *)"Test CA", -1, -1, 0), 1);
	assert_int_equal(trust_dn_parse("cn=TEST  CA, o=test org, c=be", &rfc,
	    &fwd), 0);
	assert_int_equal(X509_NAME_cmp(rfc, want), 0);
	assert_int_not_equal(X509_NAME_cmp(fwd, want), 0);
	X509_NAME_free(rfc);
	X509_NAME_free(fwd);
	assert_int_equal(trust_dn_parse("C=BE,O=Test Org,CN=Test CA", &rfc,
	    &fwd), 0);
	assert_int_equal(X509_NAME_cmp(fwd, want), 0);
	X509_NAME_free(rfc);
	X509_NAME_free(fwd);
	X509_NAME_free(want);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dn_table),
		cmocka_unit_test(test_dn_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
