/*
 * wss_keyinfo.c — where the key of an inbound signature comes from (issue 3,
 * "Keys and trust"; NEGATIVE-CASES 41): wss_keyinfo_resolve() turns a
 * ds:KeyInfo into a certificate following the WS-Security X.509 Token
 * Profile 1.1: a BinarySecurityToken (X509v3, or X509PKIPathv1 with the
 * leaf last, 3.1.2), a KeyIdentifier (SKI, ThumbprintSHA1 or an inline
 * X509v3), or ds:X509Data (IssuerSerial, SKI, inline certificate).
 * References by identifier only ever find a signer listed in the leg's
 * trust (src/trust), which also decides whether the certificate may sign.
 * A key from ds:KeyValue is never used.
 */
#include "wss_int.h"

#include <string.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "../trust/trust.h"
#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_KEYINFO_X509_PROFILE "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-x509-token-profile-1.0"
#define WSS_KEYINFO_X509V3 WSS_KEYINFO_X509_PROFILE "#X509v3"
#define WSS_KEYINFO_PKIPATH WSS_KEYINFO_X509_PROFILE "#X509PKIPathv1"
#define WSS_KEYINFO_SKI WSS_KEYINFO_X509_PROFILE "#X509SubjectKeyIdentifier"
#define WSS_KEYINFO_THUMBPRINT "http://docs.oasis-open.org/wss/" \
	"oasis-wss-soap-message-security-1.1#ThumbprintSHA1"
#define WSS_KEYINFO_BASE64 "http://docs.oasis-open.org/wss/2004/01/" \
	"oasis-200401-wss-soap-message-security-1.0#Base64Binary"
#define WSS_KEYINFO_NS_DSIG11 "http://www.w3.org/2009/xmldsig11#"

/* Wire bounds (issue 3: every size from the wire is bounded). */
#define WSS_KEYINFO_TOKEN_MAX (64u * 1024u) /* base64 chars of a token */
#define WSS_KEYINFO_PATH_MAX 10             /* certificates in a PKIPath */
#define WSS_KEYINFO_ID_MAX 256              /* base64 chars of an SKI/thumbprint */
#define WSS_KEYINFO_NAME_MAX 4096           /* chars of an X509IssuerName */
#define WSS_KEYINFO_SERIAL_MAX 128          /* digits of an X509SerialNumber */

/* Record an EBMS:0101 FailedAuthentication with log-only detail. */
static int
wss_keyinfo_fail(struct err *err, const char *msg, const char *detail)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "%s", msg);
	if (detail != NULL)
		err_detail(err, "%s", detail);
	return -1;
}

/* arena cleanups with the arena's signature */
static void
wss_keyinfo_x509_free(void *p)
{
	X509_free(p);
}

static void
wss_keyinfo_chain_free(void *p)
{
	sk_X509_pop_free(p, X509_free);
}

/* Hand cert (one reference) to the arena; on failure it is freed. */
static int
wss_keyinfo_adopt(struct arena *a, X509 *cert, X509 **ret, struct err *err)
{
	if (arena_cleanup(a, wss_keyinfo_x509_free, cert) < 0)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	*ret = cert;
	return 0;
}

/* Append every certificate of a PEM file to sk; a file without any is an

 */
static int
wss_keyinfo_text(struct arena *a, const xmlNode *node, size_t max, char **ret,
    struct err *err)
{
	const xmlNode *c;
	size_t n = 0;

	for (c = node->children; c != NULL && n <= max; c = c->next) {
		if (c->type == XML_ELEMENT_NODE)
			return wss_keyinfo_fail(err, "malformed key reference",
			    "element inside a token value");
		if ((c->type == XML_TEXT_NODE ||
		    c->type == XML_CDATA_SECTION_NODE) && c->content != NULL)
			n += strlen((const char *)c->content);
	}
	if (n > max)
		return wss_keyinfo_fail(err, "malformed key reference",
		    "token value too long");
	*ret = xml_text(a, node);
	if (*ret == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

/* Bounded base64 content of node, decoded into the arena. */
static int
wss_keyinfo_decode(struct arena *a, const xmlNode *node, size_t max,
    unsigned char **ret, size_t *ret_len, struct err *err)
{
	char *text;

	if (wss_keyinfo_text(a, node, max, &text, err) < 0)
		return -1;
	if (codec_unbase64(a, text, strlen(text), ret, ret_len) < 0 ||
	    *ret_len == 0)
		return wss_keyinfo_fail(err, "malformed key reference",
		    "token value is not base64");
	return 0;
}

/* An element's EncodingType, when present, must be Base64Binary. */
static int
wss_keyinfo_base64_type(struct arena *a, const xmlNode *node, struct err *err)
{
	const char *enc = xml_attr(a, node, NULL, "EncodingType");

	if (enc != NULL && strcmp(enc, WSS_KEYINFO_BASE64) != 0)
		return wss_keyinfo_fail(err, "unsupported key reference",
		    "EncodingType is not Base64Binary");
	return 0;
}

/* One DER certificate in base64 (BST X509v3, KeyIdentifier X509v3,
 * ds:X509Certificate); trailing bytes are refused.  The very bytes of a
 * configured signer are that signer (one more reference), unparsed. */
static int
wss_keyinfo_inline(const struct trust *t, struct arena *a,
    const xmlNode *node, X509 **ret, struct err *err)
{
	unsigned char *der;
	const unsigned char *p;
	size_t len;
	X509 *cert;

	if (wss_keyinfo_decode(a, node, WSS_KEYINFO_TOKEN_MAX, &der, &len,
	    err) < 0)
		return -1;
	cert = trust_find_der(t, der, len);
	if (cert != NULL && X509_up_ref(cert) == 1)
		return wss_keyinfo_adopt(a, cert, ret, err);
	p = der;
	cert = d2i_X509(NULL, &p, (long)len);
	if (cert == NULL || p != der + len) {
		X509_free(cert);
		ERR_clear_error();
		return wss_keyinfo_fail(err, "malformed key reference",
		    "token is not one DER certificate");
	}
	return wss_keyinfo_adopt(a, cert, ret, err);
}

/* Split a PKIPath (SEQUENCE OF Certificate) into *ret_chain, every
 * certificate owned by the arena through the stack. */
static int
wss_keyinfo_path_split(struct arena *a, const unsigned char *der, size_t len,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	const unsigned char *p = der, *end = der + len;
	STACK_OF(X509) *sk = sk_X509_new_null();
	long body;
	int tag, cls, n = 0;
	X509 *cert;

	if (arena_cleanup(a, wss_keyinfo_chain_free, sk) < 0 || sk == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (ASN1_get_object(&p, &body, &tag, &cls, (long)len) !=
	    V_ASN1_CONSTRUCTED || tag != V_ASN1_SEQUENCE ||
	    cls != V_ASN1_UNIVERSAL || body != end - p)
		return wss_keyinfo_fail(err, "malformed key reference",
		    "PKIPath is not a DER SEQUENCE");
	while (p < end) {
		if (++n > WSS_KEYINFO_PATH_MAX)
			return wss_keyinfo_fail(err, "malformed key reference",
			    "PKIPath holds too many certificates");
		cert = d2i_X509(NULL, &p, end - p);
		if (cert == NULL)
			return wss_keyinfo_fail(err, "malformed key reference",
			    "bad certificate in PKIPath");
		if (sk_X509_push(sk, cert) <= 0) {
			X509_free(cert);
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
		}
	}
	if (n == 0)
		return wss_keyinfo_fail(err, "malformed key reference",
		    "empty PKIPath");
	*ret_chain = sk;
	return 0;
}

/* WSS X.509 Token Profile 1.1, 3.1.2: the leaf is the last certificate of
 * the path; the others go back as the untrusted chain. */
static int
wss_keyinfo_pkipath(struct arena *a, const xmlNode *bst, X509 **ret,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	unsigned char *der;
	size_t len;
	STACK_OF(X509) *sk = NULL;
	int rc = -1;

	if (wss_keyinfo_decode(a, bst, WSS_KEYINFO_TOKEN_MAX, &der, &len,
	    err) < 0 || wss_keyinfo_path_split(a, der, len, &sk, err) < 0)
		goto out;
	if (wss_keyinfo_adopt(a, sk_X509_pop(sk), ret, err) < 0)
		goto out;
	*ret_chain = sk;
	rc = 0;
out:
	ERR_clear_error();
	return rc;
}

/* The only element child of parent, or an EBMS:0101 naming the problem
 * (ds:KeyValue and dsig11:DEREncodedKeyValue are refused outright). */
static xmlNodePtr
wss_keyinfo_only_child(const xmlNode *parent, struct err *err)
{
	xmlNodePtr c, found = NULL;
	size_t n = 0;

	for (c = xml_child(parent, NULL, NULL); c != NULL;
	    c = xml_next(c, NULL, NULL)) {
		if (xml_is(c, NS_DS, "KeyValue") ||
		    xml_is(c, WSS_KEYINFO_NS_DSIG11, "DEREncodedKeyValue")) {
			wss_keyinfo_fail(err, "key not taken from KeyValue",
			    "ds:KeyInfo carries a bare public key");
			return NULL;
		}
		found = c;
		n++;
	}
	if (n != 1) {
		wss_keyinfo_fail(err, "unsupported key reference",
		    "expected exactly one key reference element");
		return NULL;
	}
	return found;
}

/* wsse:Reference URI="#id" to a wsse:BinarySecurityToken in wsse:Security. */
static int
wss_keyinfo_reference(const struct trust *t, struct arena *a,
    xmlDocPtr doc, const xmlNode *ref, X509 **ret,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	const char *uri = xml_attr(a, ref, NULL, "URI");
	const char *vt = xml_attr(a, ref, NULL, "ValueType");
	const char *bvt;
	xmlNodePtr bst;

	/* plain "#id" only, as wss_verify.c requires of references */
	if (uri == NULL || uri[0] != '#' || uri[1] == '\0' ||
	    strpbrk(uri + 1, "%'\"() \t\r\n") != NULL)
		return wss_keyinfo_fail(err, "security token not found",
		    "wsse:Reference URI is not \"#id\"");
	bst = wss_id_find(doc, uri + 1);
	if (!xml_is(bst, NS_WSSE, "BinarySecurityToken") ||
	    !xml_is(bst->parent, NS_WSSE, "Security"))
		return wss_keyinfo_fail(err, "security token not found",
		    "reference does not name a BinarySecurityToken in "
		    "wsse:Security");
	if (wss_keyinfo_base64_type(a, bst, err) < 0)
		return -1;
	/* a BST without ValueType is read as X509v3 (one recorded Holodeck
	 * message has none); the certificate is checked like any other */
	bvt = xml_attr(a, bst, NULL, "ValueType");
	if (bvt == NULL)
		bvt = WSS_KEYINFO_X509V3;
	if (vt != NULL && strcmp(vt, bvt) != 0)
		return wss_keyinfo_fail(err, "unsupported key reference",
		    "Reference ValueType differs from the token's");
	if (strcmp(bvt, WSS_KEYINFO_X509V3) == 0)
		return wss_keyinfo_inline(t, a, bst, ret, err);
	if (strcmp(bvt, WSS_KEYINFO_PKIPATH) == 0)
		return wss_keyinfo_pkipath(a, bst, ret, ret_chain, err);
	return wss_keyinfo_fail(err, "unsupported key reference",
	    "BinarySecurityToken ValueType not supported");
}

/* Look up a configured signer by an identifier carried in base64 in node;
 * the result is a new reference owned by the arena. */
static int
wss_keyinfo_lookup_id(const struct trust *t, struct arena *a,
    const xmlNode *node, int kind, X509 **ret, struct err *err)
{
	unsigned char *id;
	size_t len;
	X509 *cert;

	if (wss_keyinfo_decode(a, node, WSS_KEYINFO_ID_MAX, &id, &len, err) < 0)
		return -1;
	cert = kind == 0 ? trust_find_ski(t, id, len) :
	    trust_find_thumb(t, id, len);
	if (cert == NULL)
		return wss_keyinfo_fail(err, "no configured certificate matches "
		    "the key reference", kind == 0 ? "by SubjectKeyIdentifier" :
		    "by ThumbprintSHA1");
	if (X509_up_ref(cert) != 1)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	return wss_keyinfo_adopt(a, cert, ret, err);
}

/* wsse:KeyIdentifier: X509SubjectKeyIdentifier, ThumbprintSHA1 or X509v3. */
static int
wss_keyinfo_keyid(const struct trust *t, struct arena *a,
    const xmlNode *ki, X509 **ret, struct err *err)
{
	const char *vt = xml_attr(a, ki, NULL, "ValueType");

	if (wss_keyinfo_base64_type(a, ki, err) < 0)
		return -1;
	if (vt == NULL)
		return wss_keyinfo_fail(err, "unsupported key reference",
		    "KeyIdentifier without ValueType");
	if (strcmp(vt, WSS_KEYINFO_SKI) == 0)
		return wss_keyinfo_lookup_id(t, a, ki, 0, ret, err);
	if (strcmp(vt, WSS_KEYINFO_THUMBPRINT) == 0)
		return wss_keyinfo_lookup_id(t, a, ki, 1, ret, err);
	if (strcmp(vt, WSS_KEYINFO_X509V3) == 0)
		return wss_keyinfo_inline(t, a, ki, ret, err);
	return wss_keyinfo_fail(err, "unsupported key reference",
	    "KeyIdentifier ValueType not supported");
}


/* A decimal X509SerialNumber (xsd:integer) as an ASN1_INTEGER, or NULL. */
static ASN1_INTEGER *
wss_keyinfo_serial(const char *s)
{
	size_t sign = s[0] == '-', len = strlen(s);
	BIGNUM *bn = NULL;
	ASN1_INTEGER *ai = NULL;

	if (len == sign || strspn(s + sign, "0123456789") != len - sign)
		return NULL;
	if (BN_dec2bn(&bn, s) == (int)len)
		ai = BN_to_ASN1_INTEGER(bn, NULL);
	BN_free(bn);
	return ai;
}

/* The signer with this serial number whose issuer equals either reading of
 * the name string (compared as X509_NAME: case and spacing insensitive). */

/* Read the IssuerName and SerialNumber of a ds:X509IssuerSerial. */
static int
wss_keyinfo_issuer_serial_read(struct arena *a, const xmlNode *is,
    char **ret_name, char **ret_serial, struct err *err)
{
	const xmlNode *name = xml_child(is, NS_DS, "X509IssuerName");
	const xmlNode *serial = xml_child(is, NS_DS, "X509SerialNumber");

	if (xml_count(is, NULL, NULL) != 2 || name == NULL || serial == NULL)
		return wss_keyinfo_fail(err, "malformed key reference",
		    "X509IssuerSerial needs X509IssuerName and "
		    "X509SerialNumber");
	if (wss_keyinfo_text(a, name, WSS_KEYINFO_NAME_MAX, ret_name, err) < 0 ||
	    wss_keyinfo_text(a, serial, WSS_KEYINFO_SERIAL_MAX, ret_serial,
	    err) < 0)
		return -1;
	return 0;
}

/* ds:X509IssuerSerial resolved against the signers of t: the issuer name
 * read both ways (trust_dn_parse), compared as X509_NAME. */
static int
wss_keyinfo_issuer_serial(const struct trust *t, struct arena *a,
    const xmlNode *is, X509 **ret, struct err *err)
{
	X509_NAME *rev = NULL, *fwd = NULL;
	ASN1_INTEGER *serial = NULL;
	char *name = NULL, *digits = NULL;
	X509 *cert = NULL;
	int rc = -1;

	if (wss_keyinfo_issuer_serial_read(a, is, &name, &digits, err) < 0)
		goto out;
	if (name == NULL || digits == NULL ||
	    (serial = wss_keyinfo_serial(digits)) == NULL ||
	    trust_dn_parse(name, &rev, &fwd) < 0) {
		wss_keyinfo_fail(err, "malformed key reference",
		    "X509IssuerName or X509SerialNumber unreadable");
		goto out;
	}
	cert = trust_find_issuer(t, serial, rev, fwd);
	if (cert == NULL) {
		wss_keyinfo_fail(err, "no configured certificate matches the "
		    "key reference", NULL);
		err_detail(err, "by X509IssuerSerial \"%.200s\" %s", name,
		    digits);
		goto out;
	}
	if (X509_up_ref(cert) != 1) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = wss_keyinfo_adopt(a, cert, ret, err);
out:
	X509_NAME_free(rev);
	X509_NAME_free(fwd);
	ASN1_INTEGER_free(serial);
	ERR_clear_error();
	return rc;
}

/* ds:X509Data with one X509IssuerSerial, X509SKI or X509Certificate. */
static int
wss_keyinfo_x509data(const struct trust *t, struct arena *a,
    const xmlNode *data, X509 **ret, struct err *err)
{
	xmlNodePtr c = wss_keyinfo_only_child(data, err);

	if (c == NULL)
		return -1;
	if (xml_is(c, NS_DS, "X509IssuerSerial"))
		return wss_keyinfo_issuer_serial(t, a, c, ret, err);
	if (xml_is(c, NS_DS, "X509SKI"))
		return wss_keyinfo_lookup_id(t, a, c, 0, ret, err);
	if (xml_is(c, NS_DS, "X509Certificate"))
		return wss_keyinfo_inline(t, a, c, ret, err);
	return wss_keyinfo_fail(err, "unsupported key reference",
	    "ds:X509Data content not supported");
}

/* Where a key reference may sit: ds:KeyInfo, or for key agreement
 * xenc:RecipientKeyInfo (XML Encryption 1.1, 5.6: of type KeyInfoType)
 * and one ds:KeyValue directly in it (ENTSOG AS4 4.0, 2.2.6.2.5.2). */
static int
wss_keyinfo_holder(const xmlNode *n)
{
	if (xml_is(n, NS_DS, "KeyValue"))
		return n->parent != NULL && n->parent->type == XML_ELEMENT_NODE &&
		    xml_is(n->parent, NS_XENC, "RecipientKeyInfo");
	return xml_is(n, NS_DS, "KeyInfo") ||
	    xml_is(n, NS_XENC, "RecipientKeyInfo");
}

/* Resolve the certificate a ds:KeyInfo names; see wss_int.h. */
int
wss_keyinfo_resolve(const struct trust *t, struct arena *a,
    xmlDocPtr doc, xmlNodePtr key_info, X509 **ret_cert,
    STACK_OF(X509) **ret_chain, struct err *err)
{
	STACK_OF(X509) *chain = NULL;
	X509 *cert = NULL;
	xmlNodePtr ref, str;
	int rc = -1;

	if (!wss_keyinfo_holder(key_info)) {
		wss_keyinfo_fail(err, "unsupported key reference",
		    "no ds:KeyInfo");
		goto out;
	}
	if ((str = wss_keyinfo_only_child(key_info, err)) == NULL)
		goto out;
	if (xml_is(str, NS_DS, "X509Data")) {
		rc = wss_keyinfo_x509data(t, a, str, &cert, err);
	} else if (!xml_is(str, NS_WSSE, "SecurityTokenReference")) {
		wss_keyinfo_fail(err, "unsupported key reference",
		    "ds:KeyInfo content not supported");
	} else if ((ref = wss_keyinfo_only_child(str, err)) == NULL) {
		goto out;
	} else if (xml_is(ref, NS_WSSE, "Reference")) {
		rc = wss_keyinfo_reference(t, a, doc, ref, &cert, &chain, err);
	} else if (xml_is(ref, NS_WSSE, "KeyIdentifier")) {
		rc = wss_keyinfo_keyid(t, a, ref, &cert, err);
	} else if (xml_is(ref, NS_DS, "X509Data")) {
		rc = wss_keyinfo_x509data(t, a, ref, &cert, err);
	} else {
		wss_keyinfo_fail(err, "unsupported key reference",
		    "SecurityTokenReference content not supported");
	}
	if (rc == 0) {
		*ret_cert = cert;
		if (ret_chain != NULL)
			*ret_chain = chain;
	}
out:
	ERR_clear_error();
	return rc;
}

