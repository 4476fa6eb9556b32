/*
 * wss_certid.c — how a log line names a certificate (issue 11 item 12): its
 * SHA-256 fingerprint over the DER (what `openssl x509 -noout -fingerprint
 * -sha256` prints, here in lower-case hex without colons), its subject and,
 * when it has one, its SubjectKeyIdentifier (what senders put in an
 * EncryptedKey); and what a ds:KeyInfo names when it does not carry a
 * certificate; and the detail of an EBMS:0101 / EBMS:0102 built from them.
 * For the log only (err.detail): a partner's answer never carries it.
 */
#include "wss_int.h"

#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "../util/codec.h"
#include "../xml/xml.h"

#define WSS_CERTID_SUBJECT_MAX 200   /* bytes of a subject in a log line */
#define WSS_CERTID_ID_MAX 64         /* bytes of an identifier shown in hex */
#define WSS_CERTID_TEXT_MAX 160      /* bytes of a name quoted from XML */
#define WSS_CERTID_DER_MAX 65536     /* a certificate in a token */
#define WSS_CERTID_PAIRS_SHOWN 2     /* decryption pairs in a log line */

/* Lower-case hex SHA-256 of x's DER into out[65]; "" on failure. */
int
wss_cert_sha256(X509 *x, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	out[0] = '\0';
	if (x == NULL || X509_digest(x, EVP_sha256(), md, &n) != 1 || n != 32)
		return -1;
	codec_hex(md, n, out);
	return 0;
}

/* "sha256 HEX, subject S[, ski HEX]" of x (arena); "?" when out of memory. */
const char *
wss_cert_describe(struct arena *a, X509 *x)
{
	const ASN1_OCTET_STRING *ski;
	char fp[65], ski_hex[2 * WSS_CERTID_ID_MAX + 1] = "";
	const char *s, *subject;

	if (x == NULL)
		return "none";
	(void)wss_cert_sha256(x, fp);
	ski = X509_get0_subject_key_id(x);
	if (ski != NULL && ASN1_STRING_length(ski) > 0 &&
	    ASN1_STRING_length(ski) <= WSS_CERTID_ID_MAX)
		codec_hex(ASN1_STRING_get0_data(ski),
		    (size_t)ASN1_STRING_length(ski), ski_hex);
	subject = wss_cert_subject(a, x, WSS_CERTID_SUBJECT_MAX);
	s = arena_sprintf(a, "sha256 %s, subject %s%s%s", fp,
	    subject != NULL ? subject : "?", ski_hex[0] != '\0' ? ", ski " :
	    "", ski_hex);
	ERR_clear_error();
	return s != NULL ? s : "?";
}

/* The certificate in base64 DER text (a BinarySecurityToken, an X509v3
 * KeyIdentifier), described; NULL when it is not one. */
static const char *
wss_certid_b64cert(struct arena *a, const char *text)
{
	const unsigned char *p;
	unsigned char *der = NULL;
	const char *s = NULL;
	size_t len = 0;
	X509 *x;

	if (text == NULL || strlen(text) > 2 * WSS_CERTID_DER_MAX ||
	    codec_unbase64(a, text, strlen(text), &der, &len) < 0)
		return NULL;
	p = der;
	if ((x = d2i_X509(NULL, &p, (long)len)) != NULL)
		s = wss_cert_describe(a, x);
	X509_free(x);
	ERR_clear_error();
	return s;
}

/* A KeyIdentifier: its ValueType's fragment and its value (a certificate
 * described, an identifier in hex). */
static const char *
wss_certid_keyid(struct arena *a, const xmlNode *ki)
{
	const char *vt = xml_attr(a, ki, NULL, "ValueType");
	const char *text = xml_text(a, ki), *kind, *cert;
	char hex[2 * WSS_CERTID_ID_MAX + 1];
	unsigned char *id = NULL;
	size_t len = 0;

	kind = vt != NULL && strchr(vt, '#') != NULL ? strchr(vt, '#') + 1 :
	    vt != NULL ? vt : "(no ValueType)";
	if ((cert = wss_certid_b64cert(a, text)) != NULL)
		return arena_sprintf(a, "%.40s certificate %s", kind, cert);
	if (text == NULL || codec_unbase64(a, text, strlen(text), &id,
	    &len) < 0 || len == 0 || len > WSS_CERTID_ID_MAX)
		return arena_sprintf(a, "%.40s (unreadable)", kind);
	codec_hex(id, len, hex);
	return arena_sprintf(a, "%.40s %s", kind, hex);
}

/* What one reference element of a KeyInfo names (see wss_keyinfo_describe). */
static const char *
wss_certid_ref(struct arena *a, xmlDocPtr doc, const xmlNode *ref)
{
	const char *uri, *issuer, *serial;
	xmlNodePtr is, bst;

	if (xml_is(ref, NS_WSSE, "KeyIdentifier"))
		return wss_certid_keyid(a, ref);
	if (xml_is(ref, NS_WSSE, "Reference")) {
		uri = xml_attr(a, ref, NULL, "URI");
		bst = uri != NULL && uri[0] == '#' ?
		    wss_id_find(doc, uri + 1) : NULL;
		if (bst != NULL && xml_is(bst, NS_WSSE, "BinarySecurityToken"))
			return wss_certid_b64cert(a, xml_text(a, bst));
		return NULL;
	}
	if (xml_is(ref, NS_DS, "X509Data")) {
		is = xml_child(ref, NS_DS, "X509IssuerSerial");
		issuer = xml_text(a, xml_child(is, NS_DS, "X509IssuerName"));
		serial = xml_text(a, xml_child(is, NS_DS, "X509SerialNumber"));
		if (issuer != NULL && serial != NULL)
			return arena_sprintf(a, "issuer %.*s, serial %.40s",
			    WSS_CERTID_TEXT_MAX, issuer, serial);
		return wss_certid_b64cert(a, xml_text(a, xml_child(ref, NS_DS,
		    "X509Certificate")));
	}
	return NULL;
}

/* What a ds:KeyInfo names (see wss_int.h); NULL when nothing we read. */
const char *
wss_keyinfo_describe(struct arena *a, xmlDocPtr doc, const xmlNode *key_info)
{
	xmlNodePtr c = xml_child(key_info, NULL, NULL);

	if (xml_is(c, NS_WSSE, "SecurityTokenReference"))
		c = xml_child(c, NULL, NULL);
	return c != NULL ? wss_certid_ref(a, doc, c) : NULL;
}

/* The decryption certificates of r as wss_cert_describe names them, the
 * first WSS_CERTID_PAIRS_SHOWN (see wss_int.h). */
const char *
wss_keyring_describe(struct arena *a, const struct wss_keyring *r)
{
	size_t i, n = r != NULL ? wss_keyring_count(r) : 0;
	const char *s = "none";

	for (i = 0; i < n && i < WSS_CERTID_PAIRS_SHOWN; i++)
		s = arena_sprintf(a, "%s%s%s", i > 0 ? s : "", i > 0 ? "; " :
		    "", wss_cert_describe(a, wss_key_x509(wss_keyring_key(r,
		    i))));
	if (s != NULL && n > WSS_CERTID_PAIRS_SHOWN)
		s = arena_sprintf(a, "%s; and %zu more", s,
		    n - WSS_CERTID_PAIRS_SHOWN);
	return s != NULL ? s : "?";
}

/* The certificates behind an EBMS:0101 / EBMS:0102 (see wss_int.h). */
void
wss_certid_detail(const struct wss_certid_ctx *c, struct err *err)
{
	const xmlNode *ek;
	const char *named;

	if (err->kind != ERR_EBMS || err->ebms_code == NULL)
		return;
	if (strcmp(err->ebms_code, "EBMS:0101") == 0) {
		if (c->cert != NULL)
			err_detail(err, "; presented certificate %s",
			    wss_cert_describe(c->a, c->cert));
		if (c->signature != NULL && c->pol->signers_desc != NULL)
			err_detail(err, "; the leg's signers: %s",
			    c->pol->signers_desc);
	} else if (strcmp(err->ebms_code, "EBMS:0102") == 0) {
		ek = xml_child(c->security, NS_XENC, "EncryptedKey");
		named = ek != NULL ? wss_keyinfo_describe(c->a, c->doc,
		    xml_child(ek, NS_DS, "KeyInfo")) : NULL;
		/* wss_keyring_pick names a reference that matched no pair */
		if (named != NULL &&
		    strstr(err->detail, "EncryptedKey names") == NULL)
			err_detail(err, "; EncryptedKey for %s", named);
		err_detail(err, "; decryption certificates: %s",
		    wss_keyring_describe(c->a, c->pol->decrypt_keys));
	}
}
