/*
 * trust_dn.c — a distinguished name string as an X509_NAME: RFC 4514
 * (and the RFC 1779 / .NET habits seen in ds:X509IssuerName: quoted values,
 * ';' between RDNs, "S=", "E=", "OID.2.5.4.3=").  The one reader of such
 * strings in the gateway; see trust.h for what is accepted.
 */
#include "trust_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/asn1.h>
#include <openssl/err.h>
#include <openssl/objects.h>

#include "../util/codec.h"

/* String types a "#hex" value may carry (RFC 4514 2.4: the BER of an
 * AttributeValue; directory strings only, no structured values). */
#define TRUST_DN_TYPES (B_ASN1_DIRECTORYSTRING | B_ASN1_IA5STRING | \
	B_ASN1_VISIBLESTRING | B_ASN1_NUMERICSTRING)

/* One attribute of a name string. */
struct trust_dn_ava {
	ASN1_OBJECT *obj;
	int type;                  /* MBSTRING_UTF8, or the tag of a #hex value */
	const unsigned char *val;  /* into trust_dn.buf */
	size_t len;
	size_t rdn;                /* index of its RDN, left to right */
};

/* A name string split into attributes. */
struct trust_dn {
	struct trust_dn_ava ava[TRUST_DN_AVA_MAX];
	size_t n;
	unsigned char *buf;        /* unescaped values (malloc) */
	size_t used;
};

/* Attribute type keywords as Java, .NET and OpenSSL write them (RFC 4514
 * 3 lists CN, L, ST, O, OU, C, STREET, DC, UID). */
static const struct {
	const char *key;
	int nid;
} trust_dn_keys[] = {
	{ "CN", NID_commonName }, { "C", NID_countryName },
	{ "O", NID_organizationName }, { "OU", NID_organizationalUnitName },
	{ "L", NID_localityName }, { "ST", NID_stateOrProvinceName },
	{ "S", NID_stateOrProvinceName }, { "STREET", NID_streetAddress },
	{ "DC", NID_domainComponent }, { "UID", NID_userId },
	{ "E", NID_pkcs9_emailAddress }, { "EMAIL", NID_pkcs9_emailAddress },
	{ "EMAILADDRESS", NID_pkcs9_emailAddress }, { "T", NID_title },
	{ "SERIALNUMBER", NID_serialNumber }, { "TITLE", NID_title },
	{ "G", NID_givenName }, { "GIVENNAME", NID_givenName },
	{ "SN", NID_surname }, { "SURNAME", NID_surname },
	{ "INITIALS", NID_initials }, { "DNQUALIFIER", NID_dnQualifier },
	{ "DNQ", NID_dnQualifier }, { "POSTALCODE", NID_postalCode },
	{ "ORGANIZATIONIDENTIFIER", NID_organizationIdentifier },
};

/* Skip spaces. */
static const char *
trust_dn_space(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* RFC 4512 1.4: numericoid = number 1*( DOT number ); see trust_int.h. */
int
trust_dn_numericoid(const char *s)
{
	size_t n, arcs = 0;

	for (;;) {
		n = strspn(s, "0123456789");
		if (n == 0)
			return 0;
		arcs++;
		s += n;
		if (*s == '\0')
			return arcs >= 2;
		if (*s++ != '.')
			return 0;
	}
}

/* A keyword's or dotted OID's object (RFC 4514 3: descr / numericoid). */
static int
trust_dn_object(char *key, size_t n, ASN1_OBJECT **ret)
{
	size_t i;

	if (strncasecmp(key, "OID.", 4) == 0)
		memmove(key, key + 4, n - 3);
	if (key[0] >= '0' && key[0] <= '9') {
		if (!trust_dn_numericoid(key))
			return -1;
		*ret = OBJ_txt2obj(key, 1);
		return *ret != NULL ? 0 : -1;
	}
	for (i = 0; i < sizeof(trust_dn_keys) / sizeof(trust_dn_keys[0]); i++)
		if (strcasecmp(key, trust_dn_keys[i].key) == 0) {
			*ret = OBJ_nid2obj(trust_dn_keys[i].nid);
			return *ret != NULL ? 0 : -1;
		}
	return -1;
}

/* The attribute type before '=': a keyword, or a dotted OID ("OID." allowed). */
static int
trust_dn_key(const char **pp, ASN1_OBJECT **ret)
{
	char key[64];
	const char *p = trust_dn_space(*pp);
	size_t n = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789.-");

	if (n == 0 || n >= sizeof(key))
		return -1;
	memcpy(key, p, n);
	key[n] = '\0';
	p = trust_dn_space(p + n);
	if (*p != '=')
		return -1;
	*pp = p + 1;
	return trust_dn_object(key, n, ret);
}

/* "#hex": the BER of a string value (RFC 4514 2.4); its content bytes and
 * tag go into ava. */
static int
trust_dn_hex(const char **pp, struct trust_dn *dn, struct trust_dn_ava *ava)
{
	const char *p = *pp + 1;
	unsigned char *der = dn->buf + dn->used;
	const unsigned char *q = der;
	size_t n = 0;
	ASN1_STRING *s;
	int hi, lo, rc = -1;

	while ((hi = codec_hexval(p[0])) >= 0 &&
	    (lo = codec_hexval(p[1])) >= 0) {
		der[n++] = (unsigned char)(hi << 4 | lo);
		p += 2;
	}
	s = n > 0 ? d2i_ASN1_PRINTABLE(NULL, &q, (long)n) : NULL;
	if (s == NULL || q != der + n ||
	    (ASN1_tag2bit(ASN1_STRING_type(s)) & TRUST_DN_TYPES) == 0)
		goto out;
	ava->type = ASN1_STRING_type(s);
	ava->len = (size_t)ASN1_STRING_length(s);
	memmove(der, ASN1_STRING_get0_data(s), ava->len);
	ava->val = der;
	dn->used += ava->len;
	*pp = p;
	rc = 0;
out:
	ASN1_STRING_free(s);
	ERR_clear_error();
	return rc;
}

/*
 * A plain or quoted string value with RFC 4514 escapes ("\," "\2C");
 * unescaped trailing spaces are dropped.  Stops at an unescaped ',' ';' or
 * '+' (plain) or at the closing quote.  A '\' that escapes nothing (last
 * in the string) is malformed.
 */
static int
trust_dn_string(const char **pp, struct trust_dn *dn, struct trust_dn_ava *ava)
{
	const char *p = *pp;
	int quoted = *p == '"', hi, lo;
	unsigned char *out = dn->buf + dn->used;
	size_t n = 0, keep = 0;

	p += quoted;
	for (; *p != '\0'; p++) {
		if (quoted ? *p == '"' : strchr(",;+", *p) != NULL)
			break;
		if (*p == '\\' && (hi = codec_hexval(p[1])) >= 0 &&
		    (lo = codec_hexval(p[2])) >= 0) {
			out[n++] = (unsigned char)(hi << 4 | lo);
			p += 2;
		} else if (*p == '\\') {
			if (p[1] == '\0')
				return -1;
			out[n++] = (unsigned char)*++p;
		} else {
			out[n++] = (unsigned char)*p;
			if (*p == ' ' && !quoted)
				continue;
		}
		keep = n;
	}
	if (quoted && *p++ != '"')
		return -1;
	ava->type = MBSTRING_UTF8;
	ava->val = out;
	ava->len = quoted ? n : keep;
	dn->used += ava->len;
	*pp = p;
	return 0;
}

/* Split a name string into dn (values unescaped into dn->buf). */
static int
trust_dn_split(const char *s, struct trust_dn *dn)
{
	const char *p = trust_dn_space(s);
	struct trust_dn_ava *ava;
	size_t rdn = 0;

	if (*p == '\0')
		return -1;
	for (;;) {
		if (dn->n == TRUST_DN_AVA_MAX)
			return -1;
		ava = &dn->ava[dn->n++];
		ava->rdn = rdn;
		if (trust_dn_key(&p, &ava->obj) < 0)
			return -1;
		p = trust_dn_space(p);
		if ((*p == '#' ? trust_dn_hex(&p, dn, ava) :
		    trust_dn_string(&p, dn, ava)) < 0)
			return -1;
		p = trust_dn_space(p);
		if (*p == '\0')
			return 0;
		if (*p == ',' || *p == ';')
			rdn++;
		else if (*p != '+')
			return -1;
		p++;
	}
}

/*
 * Append one attribute.  A value the attribute's usual string type cannot
 * hold (a long CN, '_' in a PrintableString) goes in as UTF8String: the
 * comparison canonicalises string types anyway.
 */
static int
trust_dn_add(X509_NAME *name, const struct trust_dn_ava *v, int set)
{
	int ok = X509_NAME_add_entry_by_OBJ(name, v->obj, v->type, v->val,
	    (int)v->len, -1, set);

	if (ok != 1 && v->type == MBSTRING_UTF8)
		ok = X509_NAME_add_entry_by_OBJ(name, v->obj,
		    V_ASN1_UTF8STRING, v->val, (int)v->len, -1, set);
	ERR_clear_error();
	return ok == 1 ? 0 : -1;
}

/*
 * Build the X509_NAME for dn: reverse = 1 reads the string as RFC 4514 does
 * (last RDN first), 0 in the order written.  Attributes joined by '+' share
 * an RDN.
 */
static X509_NAME *
trust_dn_name(const struct trust_dn *dn, int reverse)
{
	X509_NAME *name = X509_NAME_new();
	size_t r, i, last = dn->n > 0 ? dn->ava[dn->n - 1].rdn : 0, k;
	const struct trust_dn_ava *v;
	int set;

	for (k = 0; name != NULL && k <= last; k++) {
		r = reverse ? last - k : k;
		set = 0;
		for (i = 0; i < dn->n && name != NULL; i++) {
			v = &dn->ava[i];
			if (v->rdn != r)
				continue;
			if (trust_dn_add(name, v, set) < 0) {
				X509_NAME_free(name);
				name = NULL;
			}
			set = -1;
		}
	}
	return name;
}

/* Read a name string both ways; see trust.h. */
int
trust_dn_parse(const char *s, X509_NAME **ret_rfc, X509_NAME **ret_fwd)
{
	struct trust_dn *dn = calloc(1, sizeof(*dn));
	X509_NAME *rfc = NULL, *fwd = NULL;
	size_t i;
	int rc = -1;

	if (dn == NULL || (dn->buf = malloc(strlen(s) + 1)) == NULL)
		goto out;
	if (trust_dn_split(s, dn) < 0 ||
	    (rfc = trust_dn_name(dn, 1)) == NULL ||
	    (fwd = trust_dn_name(dn, 0)) == NULL)
		goto out;
	*ret_rfc = rfc;
	*ret_fwd = fwd;
	rfc = fwd = NULL;
	rc = 0;
out:
	for (i = 0; dn != NULL && i < dn->n; i++)
		ASN1_OBJECT_free(dn->ava[i].obj);
	if (dn != NULL)
		free(dn->buf);
	free(dn);
	X509_NAME_free(rfc);
	X509_NAME_free(fwd);
	ERR_clear_error();
	return rc;
}
