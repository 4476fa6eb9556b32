/*
 * Unit tests for src/sender/sender_agree.c against src/wss/wss_agree.c
 * (issue 13 item 2): the round trip of our sending half against our
 * receiving half, the refusals of tampered EncryptedKeys, and
 * wss_decrypt() on whole messages under the eDelivery AS4 2.0 policies.
 * The keys: testagree.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testagree.h"
#include "testutil.h"

/* Replace the text of node by s. */
static void
t_set_text(xmlNodePtr node, const char *s)
{
	assert_non_null(node);
	xmlNodeSetContent(node, (const xmlChar *)s);
}

/* ------------------------------------------------------------------ */
/* Round trip: sender_agree_ek() -> wss_agree_*()                      */
/* ------------------------------------------------------------------ */

static const unsigned char rt_cek[32] = "0123456789abcdef0123456789abcde";

/* An EncryptedKey for pair k by sender_agree_ek, serialised and parsed
 * again (its namespaces must stand on their own). */
static xmlDocPtr
t_make(struct arena *a, int k, const struct sender_agree_opts *o,
    size_t cek_len)
{
	static const char root[] = "<r xmlns:xenc=\"" NS_XENC "\">"
	    "<xenc:EncryptedKey Id=\"EK-1\"/></r>";
	xmlDocPtr doc = t_parse(a, root, strlen(root));
	xmlNodePtr ek = xml_child(xmlDocGetRootElement(doc), NS_XENC,
	    "EncryptedKey");
	xmlChar *out = NULL;
	int len = 0;

	assert_int_equal(sender_agree_ek(a, ek, fx.cert[k], o, rt_cek, cek_len),
	    0);
	xmlDocDumpMemory(doc, &out, &len);
	doc = t_parse(a, (const char *)out, (size_t)len);
	xmlFree(out);
	return doc;
}

/* The receiving side on doc with keyring ring: 0 and the key in out, or
 * -1 with err (parse / pick) or *why (agreement). */
static int
t_take(struct arena *a, xmlDocPtr doc, int ring, unsigned algs,
    size_t kek_len, size_t want, unsigned char *out, const char **why,
    struct err *err)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);
	xmlNodePtr am = t_find(root, NS_XENC, "AgreementMethod");
	const struct wss_key *key;
	unsigned char *ct;
	struct wss_agree p;
	struct wss_bytes w;
	size_t i = 0, ct_len = 0;

	err_clear(err);
	*why = NULL;
	if (wss_agree_parse(a, am, algs, &p, err) < 0 ||
	    wss_keyring_pick_ref(fx.ring[ring], a, doc, p.recipient, &i,
	    err) < 0)
		return -1;
	key = wss_keyring_key(fx.ring[ring], i);
	ct = t_b64(a, t_find(root, NS_XENC, "CipherValue"), &ct_len);
	p.kek_len = kek_len;
	w.p = ct;
	w.len = ct_len;
	return wss_agree_unwrap(&p, wss_key_pkey(key), &w, out, want, why);
}

/* Pair k, the KDF and wrap of o: the key comes back; the structure is
 * what the profiles say. */
static void
t_rt_one(int k, unsigned kdf, unsigned kw, unsigned dig)
{
	struct arena *a = arena_new(0);
	struct sender_agree_opts o = { kdf, kw, dig, (const unsigned char *)
	    "info", 4 };
	size_t kek_len = wss_kdf_kw_len(kw), cek_len = k == K_X1 ? 16 : 32;
	xmlDocPtr doc = t_make(a, k, &o, cek_len);
	xmlNodePtr root = xmlDocGetRootElement(doc);
	unsigned char out[32];
	const char *why = NULL;
	struct err err;

	assert_non_null(t_find(root, k == K_X1 || k == K_X2 ? DSIG11 : NS_DS,
	    k == K_X1 || k == K_X2 ? "DEREncodedKeyValue" : "KeyValue"));
	assert_non_null(t_find(root, NS_WSSE, "KeyIdentifier"));
	if (t_take(a, doc, k, ALL_ALGS, kek_len, cek_len, out, &why,
	    &err) < 0)
		fail_msg("%s kdf %x kw %x: %s %s %s", k_names[k], kdf, kw,
		    err.msg, err.detail, why != NULL ? why : "");
	assert_memory_equal(out, rt_cek, cek_len);
	/* with the wrong wrap size the KEK differs and nothing unwraps */
	assert_int_equal(t_take(a, doc, k, ALL_ALGS, kek_len == 16 ? 32 : 16,
	    cek_len, out, &why, &err), -1);
	arena_free(a);
}

static void
test_round_trip(void **state)
{
	static const unsigned kws[3] = { WSS_KW_AES128, WSS_KW_AES192,
	    WSS_KW_AES256 };
	static const int keys[4] = { K_X1, K_P256, K_P384, K_BP256 };
	size_t i, j;

	(void)state;
	for (i = 0; i < 4; i++) {
		for (j = 0; j < 3; j++) {
			t_rt_one(keys[i], WSS_KDF_HKDF, kws[j], WSS_DIG_SHA256);
			t_rt_one(keys[i], WSS_KDF_CONCAT, kws[j],
			    j == 0 ? WSS_DIG_SHA256 : j == 1 ?
			    WSS_DIG_SHA384 : WSS_DIG_SHA512);
		}
	}
	t_rt_one(K_X1, WSS_KDF_HKDF, WSS_KW_AES128, WSS_DIG_SHA512);
	t_rt_one(K_P256, WSS_KDF_HKDF, WSS_KW_AES256, WSS_DIG_SHA384);
}

/* ------------------------------------------------------------------ */
/* Refusals                                                            */
/* ------------------------------------------------------------------ */

enum op { OP_NONE, OP_TEXT, OP_DROP, OP_ATTR, OP_ADD, OP_PRF11, OP_RING,
	OP_KEYVALUE, OP_ISSUER_SERIAL, OP_X509V3 };

/* One tampering of a good EncryptedKey and what it must give: a parse
 * or key reference answer (code), or a failed agreement (why holds
 * this), or success (neither). */
struct neg {
	const char *name;
	int k;                     /* the pair it is made for */
	unsigned kdf;
	enum op op;
	const char *ns, *el;       /* the element tampered with */
	const char *arg, *arg2;    /* text / attribute name, value */
	unsigned algs;             /* 0: ALL_ALGS */
	const char *code;
	const char *why;
};

#define X25519_SPKI "MCowBQYDK2VuAyEA"
#define HMAC "http://www.w3.org/2001/04/xmldsig-more#hmac-"
static const struct neg negs[] = {
	{ "good X25519", K_X1, WSS_KDF_HKDF, OP_NONE, 0, 0, 0, 0, 0, 0, 0 },
	{ "good P-256", K_P256, WSS_KDF_HKDF, OP_NONE, 0, 0, 0, 0, 0, 0, 0 },
	{ "PRF in xenc11 (Santuario)", K_X1, WSS_KDF_HKDF, OP_PRF11, MORE21,
	  "PRF", 0, 0, 0, 0, 0 },
	{ "RecipientKeyInfo in ds:KeyValue (ENTSOG ECDH-ES)", K_P256,
	  WSS_KDF_HKDF, OP_KEYVALUE, NS_WSSE, "SecurityTokenReference", 0, 0,
	  0, 0, 0 },
	{ "RecipientKeyInfo by IssuerSerial", K_X1, WSS_KDF_HKDF,
	  OP_ISSUER_SERIAL, NS_WSSE, "SecurityTokenReference", 0, 0, 0, 0, 0 },
	{ "RecipientKeyInfo by X509v3 KeyIdentifier", K_BP256, WSS_KDF_CONCAT,
	  OP_X509V3, NS_WSSE, "KeyIdentifier", 0, 0, 0, 0, 0 },
	{ "RecipientKeyInfo by KeyName", K_X1, WSS_KDF_HKDF, OP_ADD, NS_XENC,
	  "RecipientKeyInfo", "KeyName", 0, 0, "EBMS:0102", 0 },
	{ "wrong salt", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21, "Salt",
	  "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 0, 0, 0, "unwrap" },
	{ "salt dropped", K_X1, WSS_KDF_HKDF, OP_DROP, MORE21, "Salt", 0, 0, 0,
	  0, "unwrap" },
	{ "wrong info", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21, "Info", "d3Jvbmc=",
	  0, 0, 0, "unwrap" },
	{ "info dropped", K_P256, WSS_KDF_HKDF, OP_DROP, MORE21, "Info", 0, 0,
	  0, 0, "unwrap" },
	{ "KeyLength 32 for kw-aes128", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21,
	  "KeyLength", "32", 0, 0, 0, "KeyLength" },
	{ "KeyLength in bits", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21,
	  "KeyLength", "128", 0, 0, 0, "KeyLength" },
	{ "KeyLength not a number", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21,
	  "KeyLength", "16a", 0, 0, "EBMS:0102", 0 },
	{ "X25519 zero point", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", X25519_SPKI
	  "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 0, 0, 0, "all-zero" },
	{ "X25519 point 1", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", X25519_SPKI
	  "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", 0, 0, 0, "all-zero" },
	{ "X25519 order-8 point", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", X25519_SPKI
	  "4Ot6fDtBuK4WVuP68Z/EatoJjeucMrH9hmIFFl9JuAA=", 0, 0, 0, "all-zero" },
	{ "X25519 other order-8 point", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", X25519_SPKI
	  "X5yVvKNQjCSx0LFVnIPvWwREXMRYHI6G2CJO3dCfEVc=", 0, 0, 0, "all-zero" },
	{ "X25519 p-1", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", X25519_SPKI
	  "7P///////////////////////////////////////38=", 0, 0, 0, "all-zero" },
	{ "DER garbage", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", "Z2FyYmFnZQ==", 0, 0, 0, "malformed" },
	{ "DER not base64", K_X1, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "DEREncodedKeyValue", "!!!!", 0, 0, "EBMS:0102", 0 },
	{ "P-256 point off the curve", K_P256, WSS_KDF_HKDF, OP_ATTR, DSIG11,
	  "PublicKey", "flip", 0, 0, 0, "curve" },
	{ "P-256 point at infinity", K_P256, WSS_KDF_HKDF, OP_TEXT, DSIG11,
	  "PublicKey", "AA==", 0, 0, 0, "curve" },
	{ "P-256 named curve P-384", K_P256, WSS_KDF_HKDF, OP_ATTR, DSIG11,
	  "NamedCurve", "URI", "urn:oid:1.3.132.0.34", 0, 0, "does not fit" },
	{ "secp256k1", K_P256, WSS_KDF_HKDF, OP_ATTR, DSIG11, "NamedCurve",
	  "URI", "urn:oid:1.3.132.0.10", 0, "EBMS:0102", 0 },
	{ "wrong recipient", K_X1, WSS_KDF_HKDF, OP_RING, 0, 0, 0, 0, 0,
	  "EBMS:0102", 0 },
	{ "X25519 for an EC pair", K_X1, WSS_KDF_HKDF, OP_RING, 0, 0, "p256",
	  0, 0, "EBMS:0102", 0 },
	{ "unknown PRF", K_X1, WSS_KDF_HKDF, OP_ATTR, MORE21, "PRF",
	  "Algorithm", HMAC "sha1", 0, "EBMS:0103", 0 },
	{ "PRF not allowed", K_X1, WSS_KDF_HKDF, OP_ATTR, MORE21, "PRF",
	  "Algorithm", HMAC "sha384", WSS_ALGS_EDELIVERY_2_0 &
	  ~(unsigned)WSS_DIG_SHA384, "EBMS:0103", 0 },
	{ "ConcatKDF md5", K_P256, WSS_KDF_CONCAT, OP_ATTR, NS_DS,
	  "DigestMethod", "Algorithm", "http://www.w3.org/2001/04/xmldsig-"
	  "more#md5", 0, "EBMS:0103", 0 },
	{ "ConcatKDF padding bits", K_P256, WSS_KDF_CONCAT, OP_ATTR, NS_XENC11,
	  "ConcatKDFParams", "PartyUInfo", "01ab", 0, "EBMS:0102", 0 },
	{ "ConcatKDF odd hex", K_P256, WSS_KDF_CONCAT, OP_ATTR, NS_XENC11,
	  "ConcatKDFParams", "AlgorithmID", "00abc", 0, "EBMS:0102", 0 },
	{ "ConcatKDF other PartyVInfo", K_P256, WSS_KDF_CONCAT, OP_ATTR,
	  NS_XENC11, "ConcatKDFParams", "PartyVInfo", "0001", 0, 0, "unwrap" },
	{ "ConcatKDF on a 2.0-ec leg", K_P256, WSS_KDF_CONCAT, OP_NONE, 0, 0,
	  0, 0, WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103", 0 },
	{ "X25519 on a 2.0-ec leg", K_X1, WSS_KDF_HKDF, OP_NONE, 0, 0, 0, 0,
	  WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103", 0 },
	{ "unknown agreement", K_X1, WSS_KDF_HKDF, OP_ATTR, NS_XENC,
	  "AgreementMethod", "Algorithm", NS_XENC "dh", 0, "EBMS:0103", 0 },
	{ "unknown KDF", K_X1, WSS_KDF_HKDF, OP_ATTR, NS_XENC11,
	  "KeyDerivationMethod", "Algorithm", NS_XENC11 "pbkdf2", 0,
	  "EBMS:0103", 0 },
	{ "no OriginatorKeyInfo", K_X1, WSS_KDF_HKDF, OP_DROP, NS_XENC,
	  "OriginatorKeyInfo", 0, 0, 0, "EBMS:0102", 0 },
	{ "no RecipientKeyInfo", K_X1, WSS_KDF_HKDF, OP_DROP, NS_XENC,
	  "RecipientKeyInfo", 0, 0, 0, "EBMS:0102", 0 },
	{ "no KeyDerivationMethod", K_X1, WSS_KDF_HKDF, OP_DROP, NS_XENC11,
	  "KeyDerivationMethod", 0, 0, 0, "EBMS:0102", 0 },
	{ "no PRF", K_X1, WSS_KDF_HKDF, OP_DROP, MORE21, "PRF", 0, 0, 0,
	  "EBMS:0102", 0 },
	{ "no ECKeyValue PublicKey", K_P256, WSS_KDF_HKDF, OP_DROP, DSIG11,
	  "PublicKey", 0, 0, 0, "EBMS:0102", 0 },
	{ "unknown HKDFParams child", K_X1, WSS_KDF_HKDF, OP_ADD, MORE21,
	  "HKDFParams", "Iterations", 0, 0, "EBMS:0102", 0 },
	{ "repeated Salt", K_X1, WSS_KDF_HKDF, OP_ADD, MORE21, "HKDFParams",
	  "Salt", 0, 0, "EBMS:0102", 0 },
	{ "unknown AgreementMethod child", K_X1, WSS_KDF_HKDF, OP_ADD, NS_XENC,
	  "AgreementMethod", "KA-Nonce", 0, 0, "EBMS:0102", 0 },
	{ "oversize Salt", K_X1, WSS_KDF_HKDF, OP_TEXT, MORE21, "Salt", "big",
	  0, 0, "EBMS:0102", 0 },
	{ "corrupt CipherValue", K_X1, WSS_KDF_HKDF, OP_TEXT, NS_XENC,
	  "CipherValue", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0, 0, 0, "unwrap" },
};

/* The issuer of cert as RFC 2253 text (arena). */
static const char *
t_issuer(struct arena *a, X509 *cert)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p = NULL, *out;
	long n;

	assert_non_null(b);
	assert_true(X509_NAME_print_ex(b, X509_get_issuer_name(cert), 0,
	    XN_FLAG_RFC2253) >= 0);
	n = BIO_get_mem_data(b, &p);
	out = arena_strndup(a, p, (size_t)n);
	BIO_free(b);
	return out;
}

/* The RecipientKeyInfo forms senders use, from the SKI one we write:
 * the reference wrapped in ds:KeyValue, an IssuerSerial, the certificate
 * in an X509v3 KeyIdentifier. */
static void
t_recipient(struct arena *a, xmlNodePtr el, enum op op, X509 *cert)
{
	xmlNodePtr kv, xd, is;
	unsigned char *der = NULL;
	char *name;
	BIGNUM *bn;
	int len;

	if (op == OP_KEYVALUE) {
		kv = xmlNewNode(NULL, (const xmlChar *)"KeyValue");
		xmlSetNs(kv, xmlNewNs(kv, (const xmlChar *)NS_DS,
		    (const xmlChar *)"ds"));
		assert_non_null(xmlReplaceNode(el, kv));
		assert_non_null(xmlAddChild(kv, el));
	} else if (op == OP_X509V3) {
		len = i2d_X509(cert, &der);
		assert_true(len > 0);
		assert_non_null(xmlSetProp(el, (const xmlChar *)"ValueType",
		    (const xmlChar *)"http://docs.oasis-open.org/wss/2004/01/"
		    "oasis-200401-wss-x509-token-profile-1.0#X509v3"));
		t_set_text(el, codec_base64(a, der, (size_t)len));
		OPENSSL_free(der);
	} else {
		t_drop(xml_child(el, NULL, NULL));
		xd = xmlNewChild(el, NULL, (const xmlChar *)"X509Data", NULL);
		xmlSetNs(xd, xmlNewNs(xd, (const xmlChar *)NS_DS,
		    (const xmlChar *)"ds"));
		is = xmlNewChild(xd, xd->ns, (const xmlChar *)"X509IssuerSerial",
		    NULL);
		(void)xmlNewTextChild(is, xd->ns, (const xmlChar *)
		    "X509IssuerName", (const xmlChar *)t_issuer(a, cert));
		bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), NULL);
		name = bn != NULL ? BN_bn2dec(bn) : NULL;
		assert_non_null(name);
		(void)xmlNewTextChild(is, xd->ns, (const xmlChar *)
		    "X509SerialNumber", (const xmlChar *)name);
		OPENSSL_free(name);
		BN_free(bn);
	}
}

/* Apply n's tampering to doc; the keyring to use. */
static int
t_tamper(struct arena *a, xmlDocPtr doc, const struct neg *n)
{
	xmlNodePtr el = n->el != NULL ? t_find(xmlDocGetRootElement(doc), n->ns,
	    n->el) : NULL;
	xmlNsPtr ns;
	char *big;
	unsigned char *pt;
	size_t len = 0;

	switch (n->op) {
	case OP_TEXT:
		if (strcmp(n->arg, "big") == 0) {
			big = arena_alloc(a, 3001);
			memset(big, 'A', 3000);
			big[3000] = '\0';
			t_set_text(el, big);
		} else {
			t_set_text(el, n->arg);
		}
		break;
	case OP_DROP: t_drop(el); break;
	case OP_ATTR:
		if (strcmp(n->arg, "flip") == 0) {
			pt = t_b64(a, el, &len);
			pt[len - 1] ^= 1;
			t_set_text(el, codec_base64(a, pt, len));
		} else {
			assert_non_null(xmlSetProp(el, (const xmlChar *)n->arg,
			    (const xmlChar *)n->arg2));
		}
		break;
	case OP_ADD:
		assert_non_null(xmlNewChild(el, el->ns, (const xmlChar *)n->arg,
		    (const xmlChar *)"AAAA"));
		break;
	case OP_PRF11:
		ns = xmlNewNs(el, (const xmlChar *)NS_XENC11,
		    (const xmlChar *)"x11");
		xmlSetNs(el, ns);
		break;
	case OP_RING:
		return n->arg != NULL ? K_P256 : K_X2;
	case OP_KEYVALUE:
	case OP_ISSUER_SERIAL:
	case OP_X509V3:
		t_recipient(a, el, n->op, fx.cert[n->k]);
		break;
	default: break;
	}
	return n->k;
}

static void
test_refusals(void **state)
{
	const struct neg *n;
	struct sender_agree_opts o = { 0, 0, 0, (const unsigned char *)"i", 1 };
	unsigned char out[16];
	const char *why;
	struct err err;
	size_t i;
	int rc, ring;

	(void)state;
	for (i = 0; i < sizeof(negs) / sizeof(negs[0]); i++) {
		struct arena *a = arena_new(0);
		xmlDocPtr doc;

		n = &negs[i];
		o.kdf = n->kdf;
		doc = t_make(a, n->k, &o, 16);
		ring = t_tamper(a, doc, n);
		rc = t_take(a, doc, ring, n->algs != 0 ? n->algs : ALL_ALGS,
		    16, 16, out, &why, &err);
		if (n->code == NULL && n->why == NULL && rc != 0)
			fail_msg("%s: refused: %s %s", n->name, err.detail,
			    why != NULL ? why : "");
		if (n->code != NULL) {
			assert_int_equal(rc, -1);
			assert_null(why);
			t_code(&err, n->code, n->name);
		}
		if (n->why != NULL && (rc != -1 || why == NULL ||
		    strstr(why, n->why) == NULL))
			fail_msg("%s: want a failure with \"%s\", got %d %s %s",
			    n->name, n->why, rc, why != NULL ? why : "",
			    err.detail);
		arena_free(a);
	}
}

/* ------------------------------------------------------------------ */
/* wss_decrypt() on whole messages                                     */
/* ------------------------------------------------------------------ */

static const char dm_envelope[] = "<S:Envelope xmlns:S=\"" NS_SOAP12 "\" "
    "xmlns:wsu=\"" NS_WSU "\"><S:Header><wsse:Security xmlns:wsse=\""
    NS_WSSE "\" S:mustUnderstand=\"true\"/></S:Header><S:Body/>"
    "</S:Envelope>";

/* A message with two parts encrypted for pair k by sender_encrypt_parts
 * (key agreement for X25519 and EC, rsa-oaep for RSA), re-parsed. */
static xmlDocPtr
t_message(struct arena *a, int k, struct wss_part *parts)
{
	static const unsigned char bin[3] = { 0, 1, 2 };
	xmlDocPtr doc = t_parse(a, dm_envelope, strlen(dm_envelope));
	xmlNodePtr sec = t_find(xmlDocGetRootElement(doc), NS_WSSE,
	    "Security");
	xmlChar *out = NULL;
	struct err err;
	int len = 0;

	memset(parts, 0, 2 * sizeof(*parts));
	parts[0].content_id = "a@x";
	parts[0].content_type = "application/xml";
	parts[0].data = (const unsigned char *)"<doc>hello</doc>";
	parts[0].len = 16;
	parts[1].content_id = "b@x";
	parts[1].content_type = "application/gzip";
	parts[1].data = bin;
	parts[1].len = sizeof(bin);
	err_clear(&err);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 2,
	    fx.cert[k], &err), 0);
	xmlDocDumpMemory(doc, &out, &len);
	doc = t_parse(a, (const char *)out, (size_t)len);
	xmlFree(out);
	return doc;
}

/* wss_decrypt under algs with pair ring: 0 and the parts decrypted, or
 * -1 with the answer code and the parts unchanged. */
static void
t_decrypt(int k, int ring, unsigned algs, const char *code, int wsu_id,
    const char *salt)
{
	struct arena *a = arena_new(0);
	struct wss_part parts[2], orig[2];
	xmlDocPtr doc = t_message(a, k, parts);
	xmlNodePtr root = xmlDocGetRootElement(doc), ek, ed;
	xmlNodePtr sec = t_find(root, NS_WSSE, "Security");
	struct wss_policy pol;
	struct wss_dec_report rep;
	struct err err;
	int rc;

	memcpy(orig, parts, sizeof(parts));
	ek = t_find(root, NS_XENC, "EncryptedKey");
	if (wsu_id) {   /* the eDelivery 2.0 sample's form */
		assert_int_equal(xmlUnsetProp(ek, (const xmlChar *)"Id"), 0);
		assert_non_null(xmlSetNsProp(ek, xmlSearchNsByHref(doc, root,
		    (const xmlChar *)NS_WSU), (const xmlChar *)"Id",
		    (const xmlChar *)"EK-1"));
		for (ed = xml_child(sec, NS_XENC, "EncryptedData"); ed != NULL;
		    ed = xml_next(ed, NS_XENC, "EncryptedData"))
			assert_non_null(xmlSetProp(t_find(ed, NS_WSSE,
			    "Reference"), (const xmlChar *)"URI",
			    (const xmlChar *)"#EK-1"));
	}
	if (salt != NULL)
		t_set_text(t_find(root, MORE21, "Salt"), salt);
	if (salt != NULL && strcmp(salt, "nokeyinfo") == 0)
		t_drop(t_find(ek, NS_DS, "KeyInfo"));
	memset(&pol, 0, sizeof(pol));
	pol.algs = algs;
	pol.decrypt_keys = fx.ring[ring];
	err_clear(&err);
	rc = wss_decrypt(a, doc, sec, parts, 2,
	    &pol, &rep, &err);
	if (code == NULL) {
		if (rc != 0)
			fail_msg("%s: %s %s", k_names[k], err.msg, err.detail);
		assert_int_equal(rep.n_decrypted, 2);
		assert_int_equal(parts[0].len, 16);
		assert_memory_equal(parts[0].data, "<doc>hello</doc>", 16);
		assert_int_equal(parts[1].len, 3);
		assert_string_equal(parts[1].content_type, "application/gzip");
	} else {
		assert_int_equal(rc, -1);
		t_code(&err, code, k_names[k]);
		assert_ptr_equal(parts[0].data, orig[0].data);
		assert_ptr_equal(parts[1].data, orig[1].data);
	}
	arena_free(a);
}

static void
test_decrypt_messages(void **state)
{
	(void)state;
	t_decrypt(K_X1, K_X1, WSS_ALGS_EDELIVERY_2_0, NULL, 0, NULL);
	t_decrypt(K_X1, K_X1, WSS_ALGS_EDELIVERY_2_0, NULL, 1, NULL);
	t_decrypt(K_P256, K_P256, WSS_ALGS_EDELIVERY_2_0_EC, NULL, 1, NULL);
	t_decrypt(K_P384, K_P384, WSS_ALGS_EDELIVERY_2_0_EC, NULL, 0, NULL);
	t_decrypt(K_BP256, K_BP256, WSS_ALGS_EDELIVERY_2_0_EC, NULL, 0, NULL);
	/* the wrong leg: EC on a 2.0 leg, X25519 on a 2.0-ec leg, either
	 * on a 1.x leg */
	t_decrypt(K_P256, K_P256, WSS_ALGS_EDELIVERY_2_0, "EBMS:0103", 0, NULL);
	t_decrypt(K_X1, K_X1, WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103", 0, NULL);
	t_decrypt(K_X1, K_X1, WSS_ALGS_DEFAULT, "EBMS:0103", 0, NULL);
	/* rsa-oaep on a 2.0 leg: the downgrade is refused */
	t_decrypt(K_RSA, K_RSA, WSS_ALGS_DEFAULT, NULL, 0, NULL);
	t_decrypt(K_RSA, K_RSA, WSS_ALGS_EDELIVERY_2_0, "EBMS:0103", 0, NULL);
	t_decrypt(K_RSA, K_RSA, WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0103", 0,
	    NULL);
	/* another recipient, a wrong salt: the one decryption failure */
	t_decrypt(K_X1, K_X2, WSS_ALGS_EDELIVERY_2_0, "EBMS:0102", 0, NULL);
	t_decrypt(K_P256, K_P256B, WSS_ALGS_EDELIVERY_2_0_EC, "EBMS:0102", 0,
	    NULL);
	t_decrypt(K_X1, K_X1, WSS_ALGS_EDELIVERY_2_0, "EBMS:0102", 0,
	    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
	/* kw-aes128 without an AgreementMethod (a pre-shared key) */
	t_decrypt(K_X1, K_X1, WSS_ALGS_EDELIVERY_2_0, "EBMS:0103", 0,
	    "nokeyinfo");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_decrypt_messages),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
