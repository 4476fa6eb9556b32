/*
 * Unit tests for src/wss/wss_kdf.c and wss_agree.c — key agreement for
 * decryption (issue 13 item 2) against outside references: RFC 5869 and
 * RFC 3394 known answers, the xmlsec X25519 + HKDF / ConcatKDF vectors of
 * ../shared/vectors, the two ENTSOG AS4 4.0 examples, ECDH-ES on P-256,
 * P-384 and brainpoolP256r1 against the openssl command line.  The keys:
 * testagree.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testagree.h"
#include "testutil.h"
#define GCM128 NS_XENC11 "aes128-gcm"
#define XV "vectors/xmlsec/"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

/* Hex text (colons and white space ignored) into out; the length. */
static size_t
t_hex(const char *h, unsigned char *out, size_t size)
{
	size_t n = 0;
	int hi = -1, v;

	for (; *h != '\0'; h++) {
		if ((v = codec_hexval((unsigned char)*h)) < 0)
			continue;
		if (hi < 0) {
			hi = v;
			continue;
		}
		assert_true(n < size);
		out[n++] = (unsigned char)(hi << 4 | v);
		hi = -1;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* Known answers: RFC 5869 A.1-A.3 (HKDF), RFC 3394 4.1 / 4.3 / 4.6    */
/* ------------------------------------------------------------------ */

static void
test_kdf_known_answers(void **state)
{
	unsigned char ikm[22], salt[13], info[10], okm[42], want[64], kek[32];
	unsigned char key[32], out[40], back[32];
	struct wss_bytes z = { ikm, 22 }, s = { salt, 13 }, in = { info, 10 };
	struct wss_bytes none = { NULL, 0 };
	size_t i;

	(void)state;
	memset(ikm, 0x0b, sizeof(ikm));
	for (i = 0; i < sizeof(salt); i++)
		salt[i] = (unsigned char)i;
	for (i = 0; i < sizeof(info); i++)
		info[i] = (unsigned char)(0xf0 + i);
	/* A.1: SHA-256 with salt and info */
	assert_int_equal(wss_kdf_hkdf(WSS_DIG_SHA256, &z, &s, &in, okm, 42), 0);
	t_hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	    "34007208d5b887185865", want, sizeof(want));
	assert_memory_equal(okm, want, 42);
	/* A.3: no salt, no info (salt absent = HashLen zeros) */
	assert_int_equal(wss_kdf_hkdf(WSS_DIG_SHA256, &z, &none, &none, okm, 42),
	    0);
	t_hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
	    "9d201395faa4b61a96c8", want, sizeof(want));
	assert_memory_equal(okm, want, 42);
	assert_int_equal(wss_kdf_hkdf(0, &z, &none, &none, okm, 42), -1);
	/* RFC 3394 4.1: 128-bit key under a 128-bit KEK */
	for (i = 0; i < 32; i++)
		kek[i] = (unsigned char)i;
	t_hex("00112233445566778899AABBCCDDEEFF000102030405060708090A0B0C0D0E0F",
	    key, sizeof(key));
	assert_int_equal(wss_kdf_wrap(kek, 16, key, 16, out, sizeof(out)), 0);
	t_hex("1FA68B0A8112B447AEF34BD8FB5A7B829D3E862371D2CFE5", want,
	    sizeof(want));
	assert_memory_equal(out, want, 24);
	assert_int_equal(wss_kdf_unwrap(kek, 16, out, 24, back, 16), 0);
	assert_memory_equal(back, key, 16);
	/* 4.3: 128-bit key under a 256-bit KEK; 4.6: 256-bit under 256 */
	assert_int_equal(wss_kdf_wrap(kek, 32, key, 16, out, sizeof(out)), 0);
	t_hex("64E8C3F9CE0F5BA263E9777905818A2A93C8191E7D6E8AE7", want,
	    sizeof(want));
	assert_memory_equal(out, want, 24);
	assert_int_equal(wss_kdf_wrap(kek, 32, key, 32, out, sizeof(out)), 0);
	t_hex("28C9F404C4B810F4CBCCB35CFB87F8263F5786E2D80ED326CBC7F0E71A99F43B"
	    "FB988B9B7A02DD21", want, sizeof(want));
	assert_memory_equal(out, want, 40);
	/* integrity check, sizes */
	out[5] ^= 1;
	memset(back, 0x55, sizeof(back));
	assert_int_equal(wss_kdf_unwrap(kek, 32, out, 40, back, 32), -1);
	assert_int_equal(back[0], 0x55);
	out[5] ^= 1;
	assert_int_equal(wss_kdf_unwrap(kek, 32, out, 40, back, 16), -1);
	assert_int_equal(wss_kdf_unwrap(kek, 16, out, 40, back, 32), -1);
	assert_int_equal(wss_kdf_unwrap(kek, 20, out, 40, back, 32), -1);
	assert_int_equal(wss_kdf_unwrap(kek, 32, out, 16, back, 8), -1);
	assert_int_equal(wss_kdf_unwrap(kek, 32, out, 40, back, 32), 0);
}

/* ------------------------------------------------------------------ */
/* The xmlsec vectors: X25519 + HKDF / ConcatKDF + kw-aes256            */
/* ------------------------------------------------------------------ */

static const char *const xv_names[] = {
	"enc_xdh_x25519_hkdf_sha256_kw_aes256_aes128gcm",
	"enc_xdh_x25519_hkdf_sha384_kw_aes256_aes128gcm",
	"enc_xdh_x25519_hkdf_sha512_kw_aes256_aes128gcm",
	"enc_xdh_x25519_concatkdf_sha256_kw_aes256_aes128gcm",
	"enc_xdh_x25519_concatkdf_sha384_kw_aes256_aes128gcm",
};

/* The vectors name the originator key by ds:KeyName: put the public key
 * file's SubjectPublicKeyInfo there as a DEREncodedKeyValue (the form
 * eDelivery AS4 2.0 sends), so that our parser reads it. */
static void
t_xv_originator(struct arena *a, xmlNodePtr am, const unsigned char *der,
    size_t der_len)
{
	xmlNodePtr oki = xml_child(am, NS_XENC, "OriginatorKeyInfo");
	xmlNodePtr kn = xml_child(oki, NS_DS, "KeyName"), dk;
	xmlNsPtr ns;

	t_drop(kn);
	dk = xmlNewChild(oki, NULL, (const xmlChar *)"DEREncodedKeyValue",
	    (const xmlChar *)codec_base64(a, der, der_len));
	ns = xmlNewNs(dk, (const xmlChar *)DSIG11, (const xmlChar *)"dsig11");
	xmlSetNs(dk, ns);
}

/* One vector: parse + agreement + KDF + unwrap, then AES-128-GCM of the
 * EncryptedData: its .data. */
static void
t_xv_one(const char *name, EVP_PKEY *priv, const unsigned char *der,
    size_t der_len)
{
	struct arena *a = arena_new(0);
	char rel[256];
	size_t len = 0, want_len = 0, ct_len = 0, dct_len = 0, plain_len = 0;
	size_t body_len;
	char *text, *want, *body;
	xmlDocPtr doc;
	xmlNodePtr root, ek, am;
	struct wss_agree p;
	struct err err;
	unsigned char key[32], *ct, *dct, *plain = NULL;
	struct wss_bytes w;
	const char *why = NULL;

	(void)snprintf(rel, sizeof(rel), XV "aleksey-xmlenc-01/%s.xml", name);
	text = testutil_read_shared(rel, &len);
	(void)snprintf(rel, sizeof(rel), XV "aleksey-xmlenc-01/%s.data", name);
	want = testutil_read_shared(rel, &want_len);
	assert_non_null(text);
	assert_non_null(want);
	doc = t_parse(a, text, len);
	root = xmlDocGetRootElement(doc);
	ek = t_find(root, NS_XENC, "EncryptedKey");
	am = t_find(ek, NS_XENC, "AgreementMethod");
	t_xv_originator(a, am, der, der_len);
	err_clear(&err);
	if (wss_agree_parse(a, am, ALL_ALGS, &p, &err) < 0)
		fail_msg("%s: %s %s", name, err.msg, err.detail);
	assert_int_equal(p.ka, WSS_KA_X25519);
	assert_int_equal(p.key_len, p.kdf == WSS_KDF_HKDF ? 32 : 0);
	ct = t_b64(a, t_find(ek, NS_XENC, "CipherValue"), &ct_len);
	/* the ConcatKDF vectors wrap a 32-octet key and use its first 16
	 * octets for aes128-gcm (an xmlsec quirk: wss_decrypt() refuses a
	 * content key whose length is not the block algorithm's) */
	assert_true(ct_len == 24 || ct_len == 40);
	p.kek_len = 32;     /* kw-aes256 */
	w.p = ct;
	w.len = ct_len;
	if (wss_agree_unwrap(&p, priv, &w, key, ct_len - 8, &why) < 0)
		fail_msg("%s: %s", name, why);
	dct = t_b64(a, xml_child(xml_child(root, NS_XENC, "CipherData"),
	    NS_XENC, "CipherValue"), &dct_len);
	assert_int_equal(wss_decrypt_cipher(a, GCM128, key, 16, dct, dct_len,
	    &plain, &plain_len), 0);
	/* Type Element: xmlsec's .data is the document after decryption, the
	 * XML declaration line, the element (our plaintext) and a newline */
	body = strchr(want, '\n');
	assert_non_null(body);
	assert_memory_equal(want, "<?xml version=\"1.0\"", 19);
	body++;
	body_len = want_len - (size_t)(body - want);
	assert_true(body_len > 0 && body[body_len - 1] == '\n');
	assert_int_equal(plain_len, body_len - 1);
	assert_memory_equal(plain, body, plain_len);
	/* the same with a flipped wrapped-key octet fails */
	ct[3] ^= 1;
	assert_int_equal(wss_agree_unwrap(&p, priv, &w, key, ct_len - 8, &why),
	    -1);
	free(text);
	free(want);
	arena_free(a);
}

static void
test_xmlsec_vectors(void **state)
{
	char *pem, *der;
	size_t pem_len = 0, der_len = 0, i;
	BIO *b;
	EVP_PKEY *priv;

	(void)state;
	pem = testutil_read_shared(XV "keys/xdh/xdh-x25519-second-key.pem",
	    &pem_len);
	der = testutil_read_shared(XV "keys/xdh/xdh-x25519-first-pubkey.der",
	    &der_len);
	if (pem == NULL || der == NULL) {
		free(pem);
		free(der);
		testutil_skip("xmlsec X25519 vectors not found under ../shared "
		    "(set AS4GW_SHARED): the outside reference was NOT checked");
	}
	b = BIO_new_mem_buf(pem, (int)pem_len);
	priv = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	BIO_free(b);
	assert_non_null(priv);
	for (i = 0; i < sizeof(xv_names) / sizeof(xv_names[0]); i++)
		t_xv_one(xv_names[i], priv, (const unsigned char *)der, der_len);
	EVP_PKEY_free(priv);
	free(pem);
	free(der);
	/* enc_hkdf_hmac_sha256_aes256gcm derives from a named master key
	 * ("hkdf-ikm") of xmlsec's keys.xml, which ../shared does not hold:
	 * HKDF alone is checked against RFC 5869 instead (above) */
	testutil_skip_note("enc_hkdf_hmac_sha256_aes256gcm: its IKM (xmlsec "
	    "keys.xml \"hkdf-ikm\") is not in ../shared; HKDF is checked "
	    "against RFC 5869 A.1/A.3 in test_kdf_known_answers");
}

/* ------------------------------------------------------------------ */
/* ENTSOG AS4 4.0 2.2.6.2.4 / 2.2.6.2.5.2 examples (typed in)          */
/* ------------------------------------------------------------------ */

#define ENTSOG_SKI "<wsse:SecurityTokenReference xmlns:wsse=\"" NS_WSSE "\">" \
	"<wsse:KeyIdentifier EncodingType=\"http://docs.oasis-open.org/wss/" \
	"2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary\" " \
	"ValueType=\"http://docs.oasis-open.org/wss/2004/01/oasis-200401-" \
	"wss-x509-token-profile-1.0#X509SubjectKeyIdentifier\"> ENCODED " \
	"</wsse:KeyIdentifier></wsse:SecurityTokenReference>"

static const char entsog_x25519[] =
    "<xenc:AgreementMethod xmlns:xenc=\"" NS_XENC "\" xmlns:xenc11=\""
    NS_XENC11 "\" xmlns:dsig-more=\"" MORE21 "\" xmlns:dsig11=\"" DSIG11
    "\" Algorithm=\"http://www.w3.org/2021/04/xmldsig-more#x25519\">\n"
    " <xenc11:KeyDerivationMethod Algorithm=\"http://www.w3.org/2021/04/"
    "xmldsig-more#hkdf\">\n  <dsig-more:HKDFParams>\n"
    "   <dsig-more:PRF Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#"
    "hmac-sha256\"/>\n"
    "   <dsig-more:Salt>xWdTey4T6awUJkp0NPZNVTa2JQkWukC0Uk+qaeEpn4Y="
    "</dsig-more:Salt>\n"
    "   <dsig-more:Info>dGVzdC1pbmZvLWRhdGE=</dsig-more:Info>\n"
    "   <dsig-more:KeyLength>16</dsig-more:KeyLength>\n"
    "  </dsig-more:HKDFParams>\n </xenc11:KeyDerivationMethod>\n"
    " <xenc:OriginatorKeyInfo>\n  <dsig11:DEREncodedKeyValue>MCowBQYDK2VuAy"
    "EAX9737D4yIsyDF0tGeaJm4FrSjy16UzKVdUEFtsrTCy8=</dsig11:DEREncodedKey"
    "Value>\n </xenc:OriginatorKeyInfo>\n <xenc:RecipientKeyInfo>"
    ENTSOG_SKI "</xenc:RecipientKeyInfo>\n</xenc:AgreementMethod>";

static const char entsog_ecdh[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<xenc:AgreementMethod Algorithm=\"http://www.w3.org/2009/xmlenc11#"
    "ECDH-ES\" xmlns:xenc=\"" NS_XENC "\" xmlns:ds=\"" NS_DS "\" "
    "xmlns:dsig-more=\"" MORE21 "\" xmlns:dsig11=\"" DSIG11 "\" "
    "xmlns:xenc11=\"" NS_XENC11 "\" xmlns:wsse=\"" NS_WSSE "\" xmlns:wsu=\""
    NS_WSU "\">\n"
    " <xenc11:KeyDerivationMethod Algorithm=\"http://www.w3.org/2021/04/"
    "xmldsig-more#hkdf\" xmlns:xenc11=\"" NS_XENC11 "\">\n"
    "  <dsig-more:HKDFParams xmlns:dsig-more=\"" MORE21 "\">\n"
    "   <dsig-more:PRF Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#"
    "hmac-sha256\"/>\n"
    "   <dsig-more:Salt>DXitIRbhMjQaOT3WXgi8Nj1iNaiy5UPCpdjwXwun8Mk="
    "</dsig-more:Salt>\n"
    "   <dsig-more:Info>dGVzdC1pbmZvLWRhdGE=</dsig-more:Info>\n"
    "   <dsig-more:KeyLength>16</dsig-more:KeyLength>\n"
    "  </dsig-more:HKDFParams>\n </xenc11:KeyDerivationMethod>\n"
    " <xenc:OriginatorKeyInfo>\n  <ds:KeyValue>\n"
    "   <dsig11:ECKeyValue xmlns:dsig11=\"" DSIG11 "\">\n"
    "    <dsig11:NamedCurve URI=\"urn:oid:1.3.36.3.3.2.8.1.1.7\"/>\n"
    "    <dsig11:PublicKey>\n"
    "     BAHQXIjLoPO4LBehXFzOveAzouszXfs3aTmkFiwPrsXwTgaV7lBy5B7mPRLYCB7NgPl"
    "WD/Yhx1Oq\n"
    "     JmSkrU+HjugU6AFPPrUmNARHk7x+JKK+V5v8ErNO1+GSnB25X6N9y08rIHeYaazT5"
    "Rc9YpdwEFBG\n"
    "     mPOciWlDJCOfRVLJtcRF2X6L0Q==\n"
    "    </dsig11:PublicKey>\n   </dsig11:ECKeyValue>\n  </ds:KeyValue>\n"
    " </xenc:OriginatorKeyInfo>\n <xenc:RecipientKeyInfo>\n  <ds:KeyValue>\n"
    "   <!-- Assumes the recipient key is has been shared as a certificate "
    "and can be referenced using its SKI. -->\n   " ENTSOG_SKI "\n"
    "  </ds:KeyValue>\n </xenc:RecipientKeyInfo>\n</xenc:AgreementMethod>";

/* The HKDF parameters both examples share. */
static void
t_entsog_hkdf(struct arena *a, const struct wss_agree *p, const char *salt)
{
	unsigned char *s = NULL;
	size_t n = 0;

	assert_int_equal(p->kdf, WSS_KDF_HKDF);
	assert_int_equal(p->dig, WSS_DIG_SHA256);
	assert_int_equal(p->key_len, 16);
	assert_int_equal(codec_unbase64(a, salt, strlen(salt), &s, &n), 0);
	assert_int_equal(p->salt.len, 32);
	assert_memory_equal(p->salt.p, s, n);
	assert_int_equal(p->info.len, 14);
	assert_memory_equal(p->info.p, "test-info-data", 14);
	assert_true(xml_is(p->recipient, NS_XENC, "RecipientKeyInfo"));
}

static void
test_entsog_examples(void **state)
{
	struct arena *a = arena_new(0);
	xmlDocPtr doc = t_parse(a, entsog_x25519, strlen(entsog_x25519));
	struct wss_agree p;
	struct err err;
	EVP_PKEY *k;
	const unsigned char *q;
	unsigned char raw[32], want[32], key[16], wrapped[24] = { 0 };
	struct wss_bytes w = { wrapped, sizeof(wrapped) };
	size_t raw_len = sizeof(raw);
	const char *why = NULL;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_agree_parse(a, xmlDocGetRootElement(doc),
	    WSS_ALGS_EDELIVERY_2_0, &p, &err), 0);
	assert_int_equal(p.ka, WSS_KA_X25519);
	t_entsog_hkdf(a, &p, "xWdTey4T6awUJkp0NPZNVTa2JQkWukC0Uk+qaeEpn4Y=");
	assert_true(p.orig_der);
	q = p.orig.p;
	k = d2i_PUBKEY(NULL, &q, (long)p.orig.len);
	assert_non_null(k);
	assert_int_equal(EVP_PKEY_get_base_id(k), EVP_PKEY_X25519);
	assert_int_equal(EVP_PKEY_get_raw_public_key(k, raw, &raw_len), 1);
	t_hex("5fdef7ec3e3222cc83174b4679a266e05ad28f2d7a533295754105b6cad30b2f",
	    want, sizeof(want));
	assert_memory_equal(raw, want, 32);
	EVP_PKEY_free(k);
	/* the ECDH-ES example: brainpoolP256r1, but a 133-octet point (the
	 * size of a P-521 point): parsed, then refused as no point of the
	 * curve */
	doc = t_parse(a, entsog_ecdh, strlen(entsog_ecdh));
	assert_int_equal(wss_agree_parse(a, xmlDocGetRootElement(doc),
	    WSS_ALGS_EDELIVERY_2_0_EC, &p, &err), 0);
	assert_int_equal(p.ka, WSS_KA_ECDH_ES);
	t_entsog_hkdf(a, &p, "DXitIRbhMjQaOT3WXgi8Nj1iNaiy5UPCpdjwXwun8Mk=");
	assert_false(p.orig_der);
	assert_int_equal(p.curve, NID_brainpoolP256r1);
	assert_int_equal(p.orig.len, 133);
	assert_int_equal(p.orig.p[0], 0x04);
	assert_true(wss_agree_fits(&p, fx.priv[K_BP256]));
	assert_false(wss_agree_fits(&p, fx.priv[K_P256]));
	assert_false(wss_agree_fits(&p, fx.priv[K_X1]));
	p.kek_len = 16;
	assert_int_equal(wss_agree_unwrap(&p, fx.priv[K_BP256], &w, key, 16,
	    &why), -1);
	assert_non_null(strstr(why, "not a point of the curve"));
	/* the X25519 example on an EC leg and vice versa: EBMS:0103 */
	assert_int_equal(wss_agree_parse(a, xmlDocGetRootElement(doc),
	    WSS_ALGS_EDELIVERY_2_0, &p, &err), -1);
	t_code(&err, "EBMS:0103", "ECDH-ES on a 2.0 leg");
	arena_free(a);
}

/* ------------------------------------------------------------------ */
/* ECDH-ES against the openssl command line (an independent tool)      */
/* ------------------------------------------------------------------ */

/* Run a shell command in fx.dir; its output's hex octets into out. */
static size_t
t_sh(const char *cmd, unsigned char *out, size_t size)
{
	char full[2048], buf[1024];
	size_t n = 0;
	FILE *f;

	(void)snprintf(full, sizeof(full), "cd %s && %s 2>/dev/null", fx.dir,
	    cmd);
	f = popen(full, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	assert_int_equal(pclose(f), 0);
	return t_hex(buf, out, size);
}

/* An AgreementMethod (ECDH-ES, the ephemeral key eph as ECKeyValue) with
 * the given KeyDerivationMethod element text. */
static const char *
t_ecdh_method(struct arena *a, EVP_PKEY *eph, const char *kdm)
{
	unsigned char pt[160];
	size_t pt_len = 0;
	char oid[64], g[64];

	assert_int_equal(EVP_PKEY_get_utf8_string_param(eph,
	    OSSL_PKEY_PARAM_GROUP_NAME, g, sizeof(g), NULL), 1);
	assert_true(OBJ_obj2txt(oid, sizeof(oid), OBJ_nid2obj(OBJ_txt2nid(g)),
	    1) > 0);
	assert_int_equal(EVP_PKEY_get_octet_string_param(eph,
	    OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pt, sizeof(pt), &pt_len), 1);
	return arena_sprintf(a, "<xenc:AgreementMethod xmlns:xenc=\"" NS_XENC
	    "\" xmlns:xenc11=\"" NS_XENC11 "\" xmlns:ds=\"" NS_DS "\" "
	    "xmlns:dm=\"" MORE21 "\" xmlns:d11=\"" DSIG11 "\" Algorithm=\""
	    NS_XENC11 "ECDH-ES\">%s<xenc:OriginatorKeyInfo><ds:KeyValue>"
	    "<d11:ECKeyValue><d11:NamedCurve URI=\"urn:oid:%s\"/><d11:PublicKey>"
	    "%s</d11:PublicKey></d11:ECKeyValue></ds:KeyValue>"
	    "</xenc:OriginatorKeyInfo><xenc:RecipientKeyInfo>" ENTSOG_SKI
	    "</xenc:RecipientKeyInfo></xenc:AgreementMethod>", kdm, oid,
	    codec_base64(a, pt, pt_len));
}

/* Parse m, check Z and the KEK against the command line's, and unwrap
 * a key wrapped under the command line's KEK. */
static void
t_ecdh_check(struct arena *a, int k, EVP_PKEY *eph, const char *m,
    const unsigned char *z, size_t z_len, const unsigned char *kek)
{
	xmlDocPtr doc = t_parse(a, m, strlen(m));
	unsigned char z2[WSS_AGREE_Z_MAX], kek2[16], cek[16], w[24], out[16];
	struct wss_bytes zb = { z2, 0 }, wb = { w, sizeof(w) };
	const char *why = NULL;
	struct wss_agree p;
	struct err err;

	err_clear(&err);
	if (wss_agree_parse(a, xmlDocGetRootElement(doc), ALL_ALGS, &p,
	    &err) < 0)
		fail_msg("%s: %s", err.msg, err.detail);
	p.kek_len = 16;
	assert_int_equal(wss_agree_secret(fx.priv[k], eph, z2, &zb.len), 0);
	assert_int_equal(zb.len, z_len);
	assert_memory_equal(z2, z, z_len);
	assert_int_equal(wss_agree_derive(&p, &zb, kek2, &why), 0);
	assert_memory_equal(kek2, kek, 16);
	assert_int_equal(RAND_bytes(cek, 16), 1);
	assert_int_equal(wss_kdf_wrap(kek, 16, cek, 16, w, sizeof(w)), 0);
	if (wss_agree_unwrap(&p, fx.priv[k], &wb, out, 16, &why) < 0)
		fail_msg("%s: %s", k_names[k], why);
	assert_memory_equal(out, cek, 16);
}

/* One curve: an ephemeral key, Z, HKDF and SSKDF by the command line. */
static void
t_ecdh_curve(int k)
{
	struct arena *a = arena_new(0);
	char cmd[1024], zhex[300], p[128];
	unsigned char z[WSS_AGREE_Z_MAX], kek[64];
	size_t z_len, i;
	EVP_PKEY *eph;
	FILE *f;

	(void)snprintf(cmd, sizeof(cmd), "openssl genpkey %s -out eph.key && "
	    "openssl pkey -in eph.key -pubout -out eph.pub && openssl pkeyutl "
	    "-derive -inkey eph.key -peerkey %s.pub | od -An -tx1", k_gen[k],
	    k_names[k]);
	z_len = t_sh(cmd, z, sizeof(z));
	assert_true(z_len >= 32);
	f = fopen(tpath(p, sizeof(p), "eph", ".pub"), "r");
	assert_non_null(f);
	eph = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	(void)fclose(f);
	assert_non_null(eph);
	for (i = 0; i < z_len; i++)
		(void)snprintf(zhex + 2 * i, 3, "%02x", z[i]);
	(void)snprintf(cmd, sizeof(cmd), "openssl kdf -keylen 16 -kdfopt "
	    "digest:SHA256 -kdfopt hexkey:%s -kdfopt hexsalt:00112233445566778899"
	    " -kdfopt hexinfo:74657374 HKDF", zhex);
	assert_int_equal(t_sh(cmd, kek, sizeof(kek)), 16);
	t_ecdh_check(a, k, eph, t_ecdh_method(a, eph, "<xenc11:KeyDerivation"
	    "Method Algorithm=\"" MORE21 "hkdf\"><dm:HKDFParams><dm:PRF "
	    "Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#hmac-sha256\"/>"
	    "<dm:Salt>ABEiM0RVZneImQ==</dm:Salt><dm:Info>dGVzdA==</dm:Info>"
	    "<dm:KeyLength>16</dm:KeyLength></dm:HKDFParams>"
	    "</xenc11:KeyDerivationMethod>"), z, z_len, kek);
	(void)snprintf(cmd, sizeof(cmd), "openssl kdf -keylen 16 -kdfopt "
	    "digest:SHA384 -kdfopt hexkey:%s -kdfopt hexinfo:0a0b0c0d11223344 "
	    "SSKDF", zhex);
	assert_int_equal(t_sh(cmd, kek, sizeof(kek)), 16);
	t_ecdh_check(a, k, eph, t_ecdh_method(a, eph, "<xenc11:KeyDerivation"
	    "Method Algorithm=\"" NS_XENC11 "ConcatKDF\"><xenc11:ConcatKDFParams "
	    "AlgorithmID=\"000a0b0c0d\" PartyUInfo=\"001122\" PartyVInfo=\""
	    "003344\"><ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/"
	    "xmldsig-more#sha384\"/></xenc11:ConcatKDFParams>"
	    "</xenc11:KeyDerivationMethod>"), z, z_len, kek);
	EVP_PKEY_free(eph);
	arena_free(a);
}

static void
test_ecdh_openssl_cli(void **state)
{
	(void)state;
	t_ecdh_curve(K_P256);
	t_ecdh_curve(K_P384);
	t_ecdh_curve(K_BP256);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kdf_known_answers),
		cmocka_unit_test(test_xmlsec_vectors),
		cmocka_unit_test(test_entsog_examples),
		cmocka_unit_test(test_ecdh_openssl_cli),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
