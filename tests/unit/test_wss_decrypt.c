/*
 * Unit tests for src/wss/wss_oaep.c and wss_decrypt.c: the RSA-OAEP key
 * transport transforms against the W3C XML Encryption 1.1 interop vectors
 * (../shared/vectors), wss_decrypt() on recorded AS4.NET / Holodeck traffic
 * (../shared/corpus: payloads must equal the extracted ground truth, the
 * *wrong-encrypted* negatives must give EBMS:0102), a table of generated
 * messages (every key transport and block algorithm, Content-Only and
 * Complete, every policy refusal and every kind of decryption failure —
 * the latter all byte-identical), and the round trip
 * sender_encrypt_parts() -> wss_decrypt().
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libxml/tree.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509v3.h>
#include <xmlsec/xmlsec.h>
#include <xmlsec/keys.h>
#include <xmlsec/openssl/evp.h>

#include "testutil.h"
#include "spool/spool.h"
#include "util/arena.h"
#include "util/codec.h"
#include "util/err.h"
#include "wss/wss.h"
#include "sender/sender.h"
#include "wss/wss_int.h"
#include "xml/xml.h"

#define XENC11 "http://www.w3.org/2009/xmlenc11#"
#define DSIG_MORE "http://www.w3.org/2001/04/xmldsig-more#"
#define SWA "http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#"
#define KT_XENC11 XENC11 "rsa-oaep"
#define KT_MGF1P NS_XENC "rsa-oaep-mgf1p"
#define KT_PKCS1 NS_XENC "rsa-1_5"
#define GCM128 XENC11 "aes128-gcm"
#define GCM192 XENC11 "aes192-gcm"
#define GCM256 XENC11 "aes256-gcm"
#define CBC128 NS_XENC "aes128-cbc"
#define THUMBPRINT "http://docs.oasis-open.org/wss/" \
	"oasis-wss-soap-message-security-1.1#ThumbprintSHA1"
#define CBC256 NS_XENC "aes256-cbc"
#define DM(uri) "<ds:DigestMethod Algorithm=\"" uri "\"/>"
#define MGF(name) "<xenc11:MGF Algorithm=\"" XENC11 name "\"/>"
#define VECTORS "vectors/xmlsec/xmlenc11-interop-2012/"
#define RES "thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.%s/" \
	"Resources/%s"
#define MAX_PARTS 8

static struct {
	char dir[64];
	struct wss_key *key;     /* recipient (the gateway) */
	struct wss_key *other;   /* somebody else */
	struct wss_keyring *ring;       /* gw's pair as a leg's keyring */
	struct wss_keyring *ring_other; /* other's */
	const char *thumb;       /* gw.crt's ThumbprintSHA1, base64 */
	X509 *cert;
	EVP_PKEY *pub;
	EVP_PKEY *priv;
} fx;

/* fx.dir/name into out. */
static const char *
tpath(char *out, size_t size, const char *name)
{
	(void)snprintf(out, size, "%s/%s", fx.dir, name);
	return out;
}

/* fx.ring / fx.ring_other from the key files, fx.thumb from fx.cert. */
static int
t_rings(void)
{
	static char thumb[64];
	unsigned char md[20];
	unsigned int len = 0;
	char a[128], b[128], c[128], d[128];
	struct wss_keyring_spec gw = { tpath(a, sizeof(a), "gw.crt"),
		tpath(b, sizeof(b), "gw.key"), 0 };
	struct wss_keyring_spec other = { tpath(c, sizeof(c), "other.crt"),
		tpath(d, sizeof(d), "other.key"), 0 };
	struct err err;

	err_clear(&err);
	if (wss_keyring_new(&gw, 1, &fx.ring, &err) < 0 ||
	    wss_keyring_new(&other, 1, &fx.ring_other, &err) < 0 ||
	    X509_digest(fx.cert, EVP_sha1(), md, &len) != 1 ||
	    EVP_EncodeBlock((unsigned char *)thumb, md, (int)len) <= 0)
		return -1;
	fx.thumb = thumb;
	return 0;
}

/* Two RSA key pairs with self-signed certificates (with an SKI). */
static int
group_setup(void **state)
{
	char cmd[1024], a[128], b[128];
	struct err err;
	FILE *f;

	(void)state;
	err_clear(&err);
	xml_global_init();
	(void)snprintf(fx.dir, sizeof(fx.dir), "/tmp/test_wss_decrypt.XXXXXX");
	if (mkdtemp(fx.dir) == NULL || wss_global_init(&err) < 0)
		return -1;
	(void)snprintf(cmd, sizeof(cmd), "cd %s && for n in gw other; do "
	    "openssl req -x509 -newkey rsa:2048 -nodes -keyout $n.key "
	    "-out $n.crt -subj /CN=$n -days 2 >/dev/null 2>&1 || exit 1; "
	    "done", fx.dir);
	if (system(cmd) != 0 ||
	    wss_key_load(tpath(a, sizeof(a), "gw.crt"),
	    tpath(b, sizeof(b), "gw.key"), &fx.key, &err) < 0 ||
	    wss_key_load(tpath(a, sizeof(a), "other.crt"),
	    tpath(b, sizeof(b), "other.key"), &fx.other, &err) < 0)
		return -1;
	f = fopen(tpath(a, sizeof(a), "gw.crt"), "r");
	fx.cert = f != NULL ? PEM_read_X509(f, NULL, NULL, NULL) : NULL;
	if (f != NULL)
		(void)fclose(f);
	fx.pub = fx.cert != NULL ? X509_get_pubkey(fx.cert) : NULL;
	if (fx.cert == NULL || t_rings() < 0)
		return -1;
	f = fopen(tpath(a, sizeof(a), "gw.key"), "r");
	fx.priv = f != NULL ? PEM_read_PrivateKey(f, NULL, NULL, NULL) : NULL;
	if (f != NULL)
		(void)fclose(f);
	return fx.pub != NULL && fx.priv != NULL ? 0 : -1;
}

/* Free the keys, remove the temporary files. */
static int
group_teardown(void **state)
{
	static const char *const files[] = { "gw.key", "gw.crt", "other.key",
	    "other.crt" };
	char p[128];
	size_t i;

	(void)state;
	wss_key_free(fx.key);
	wss_key_free(fx.other);
	wss_keyring_free(fx.ring);
	wss_keyring_free(fx.ring_other);
	X509_free(fx.cert);
	EVP_PKEY_free(fx.pub);
	EVP_PKEY_free(fx.priv);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		(void)unlink(tpath(p, sizeof(p), files[i]));
	(void)rmdir(fx.dir);
	wss_global_shutdown();
	return 0;
}

/* The wsse:Security header of a parsed envelope. */
static xmlNodePtr
t_security(xmlDocPtr doc)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);
	xmlNodePtr header = xml_child(root, NULL, "Header");

	if (header == NULL)
		header = xml_child(root, NS_SOAP12, "Header");
	return xml_child(header, NS_WSSE, "Security");
}

/* A default policy that decrypts with the pairs of ring. */
static struct wss_policy
t_policy(const struct wss_keyring *ring, unsigned extra)
{
	struct wss_policy pol;

	memset(&pol, 0, sizeof(pol));
	pol.algs = WSS_ALGS_DEFAULT | extra;
	pol.decrypt_keys = ring;
	return pol;
}

/* ------------------------------------------------------------------ */
/* Key transport: the W3C XML Encryption 1.1 interop vectors           */
/* ------------------------------------------------------------------ */

/* An xmlsec key holding the private key of a PKCS#12 file (passwd). */
static xmlSecKeyPtr
t_p12_key(const char *rel)
{
	size_t len = 0;
	char *der = testutil_read_shared(rel, &len);
	const unsigned char *p = (const unsigned char *)der;
	PKCS12 *p12 = der != NULL ? d2i_PKCS12(NULL, &p, (long)len) : NULL;
	EVP_PKEY *pkey = NULL;
	X509 *cert = NULL;
	xmlSecKeyDataPtr data;
	xmlSecKeyPtr key = NULL;

	if (p12 != NULL && PKCS12_parse(p12, "passwd", &pkey, &cert, NULL) ==
	    1 && (data = xmlSecOpenSSLEvpKeyAdopt(pkey)) != NULL) {
		pkey = NULL;
		key = xmlSecKeyCreate();
		if (key == NULL || xmlSecKeySetValue(key, data) < 0) {
			xmlSecKeyDataDestroy(data);
			if (key != NULL)
				xmlSecKeyDestroy(key);
			key = NULL;
		}
	}
	EVP_PKEY_free(pkey);
	X509_free(cert);
	PKCS12_free(p12);
	free(der);
	return key;
}

/* Base64 content of node (arena). */
static unsigned char *
t_unbase64(struct arena *a, const xmlNode *node, size_t *ret_len)
{
	char *text = xml_text(a, node);
	unsigned char *out = NULL;

	assert_non_null(text);
	assert_int_equal(codec_unbase64(a, text, strlen(text), &out, ret_len),
	    0);
	return out;
}

/* Does key transport of ek's CipherValue with method succeed? */
static int
t_unwrap(struct arena *a, xmlNodePtr method, xmlNodePtr ek, xmlSecKeyPtr key,
    unsigned char *out, size_t *ret_len, int corrupt)
{
	xmlNodePtr cv = xml_child(xml_child(ek, NS_XENC, "CipherData"),
	    NS_XENC, "CipherValue");
	size_t n = 0;
	unsigned char *ct = t_unbase64(a, cv, &n);

	if (corrupt)
		ct[n / 2] ^= 0x01;
	return wss_oaep_run(method, key, 0, ct, n, out, 64, ret_len);
}

/* One vector: unwrap the key with our transform, decrypt the data, compare
 * with X.data; then a corrupted key cipher and wrong parameters fail. */
static void
t_vector(const char *name, const char *p12)
{
	char path[256];
	struct arena *a = arena_new(0);
	size_t xml_len = 0, want_len = 0, klen = 0, dlen = 0, plen = 0;
	char *xml, *want;
	xmlDocPtr doc = NULL;
	xmlNodePtr root, ek, m, dm;
	xmlSecKeyPtr key = t_p12_key(p12);
	unsigned char k[64], *dct, *plain = NULL;
	xmlChar *dump = NULL;
	int dump_len = 0;
	struct err err;

	(void)snprintf(path, sizeof(path), VECTORS "%s.xml", name);
	xml = testutil_read_shared(path, &xml_len);
	(void)snprintf(path, sizeof(path), VECTORS "%s.data", name);
	want = testutil_read_shared(path, &want_len);
	if (xml == NULL || want == NULL || key == NULL) {
		free(xml);
		free(want);
		arena_free(a);
		testutil_skip("xmlenc11 interop vectors not in ../shared");
	}
	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, xml_len, NULL, &doc, &err), 0);
	root = xmlDocGetRootElement(doc);
	ek = xml_child(xml_child(root, NS_DS, "KeyInfo"), NS_XENC,
	    "EncryptedKey");
	m = xml_child(ek, NS_XENC, "EncryptionMethod");
	assert_int_equal(wss_oaep_usable(m), 1);
	assert_int_equal(t_unwrap(a, m, ek, key, k, &klen, 0), 0);
	dct = t_unbase64(a, xml_child(xml_child(root, NS_XENC, "CipherData"),
	    NS_XENC, "CipherValue"), &dlen);
	assert_int_equal(wss_decrypt_cipher(a, xml_attr(a, xml_child(root,
	    NS_XENC, "EncryptionMethod"), NULL, "Algorithm"), k, klen, dct,
	    dlen, &plain, &plen), 0);
	/* Type Element: X.data is the document the element replaces the
	 * EncryptedData in, as libxml2 writes it */
	assert_int_equal(xml_parse(a, (const char *)plain, plen, NULL, &doc,
	    &err), 0);
	xmlDocDumpMemory(doc, &dump, &dump_len);
	assert_int_equal((size_t)dump_len, want_len);
	assert_memory_equal(dump, want, want_len);
	xmlFree(dump);
	/* a corrupted key cipher fails */
	assert_int_equal(t_unwrap(a, m, ek, key, k, &klen, 1), -1);
	/* so does the wrong digest, and a missing label */
	dm = xml_child(m, NS_DS, "DigestMethod");
	if (dm != NULL) {
		xmlSetProp(dm, (const xmlChar *)"Algorithm", (const xmlChar *)
		    (strstr(name, "Sha") != NULL ? NS_DS "sha1" :
		    NS_XENC "sha256"));
		assert_int_equal(t_unwrap(a, m, ek, key, k, &klen, 0), -1);
	}
	xmlSecKeyDestroy(key);
	free(xml);
	free(want);
	arena_free(a);
}

/* Every RSA key transport vector of the interop suite. */
static void
test_vectors(void **state)
{
	(void)state;
	t_vector("cipherText__RSA-2048__aes128-gcm__rsa-oaep-mgf1p",
	    VECTORS "RSA-2048_SHA256WithRSA.p12");
	t_vector("cipherText__RSA-3072__aes192-gcm__rsa-oaep-mgf1p__Sha256",
	    VECTORS "RSA-3072_SHA256WithRSA.p12");
	t_vector("cipherText__RSA-3072__aes256-gcm__rsa-oaep__Sha384-MGF_Sha1",
	    VECTORS "RSA-3072_SHA256WithRSA.p12");
	t_vector("cipherText__RSA-4096__aes256-gcm__rsa-oaep__Sha512-MGF_Sha1_"
	    "PSource", VECTORS "RSA-4096_SHA256WithRSA.p12");
}

/* The label vector fails once its OAEPparams is gone. */
static void
test_vector_label(void **state)
{
	const char *name = VECTORS "cipherText__RSA-4096__aes256-gcm__rsa-oaep"
	    "__Sha512-MGF_Sha1_PSource.xml";
	struct arena *a = arena_new(0);
	size_t len = 0, klen = 0;
	char *xml = testutil_read_shared(name, &len);
	xmlSecKeyPtr key = t_p12_key(VECTORS "RSA-4096_SHA256WithRSA.p12");
	xmlDocPtr doc = NULL;
	xmlNodePtr ek, m, label;
	unsigned char k[64];
	struct err err;

	(void)state;
	if (xml == NULL || key == NULL) {
		free(xml);
		arena_free(a);
		testutil_skip("xmlenc11 interop vectors not in ../shared");
	}
	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, len, NULL, &doc, &err), 0);
	ek = xml_child(xml_child(xmlDocGetRootElement(doc), NS_DS, "KeyInfo"),
	    NS_XENC, "EncryptedKey");
	m = xml_child(ek, NS_XENC, "EncryptionMethod");
	label = xml_child(m, NS_XENC, "OAEPparams");
	assert_non_null(label);
	assert_int_equal(t_unwrap(a, m, ek, key, k, &klen, 0), 0);
	xmlUnlinkNode(label);
	xmlFreeNode(label);
	assert_int_equal(t_unwrap(a, m, ek, key, k, &klen, 0), -1);
	xmlSecKeyDestroy(key);
	free(xml);
	arena_free(a);
}

/* wss_oaep_usable() decides the parameters without crypto. */
static void
test_oaep_usable(void **state)
{
	static const struct {
		const char *alg, *children;
		int usable;
	} cases[] = {
		{ KT_XENC11, "", 1 },
		{ KT_XENC11, DM(NS_XENC "sha256") MGF("mgf1sha256"), 1 },
		{ KT_XENC11, MGF("mgf1sha512") DM(DSIG_MORE "sha384")
		    "<xenc:OAEPparams>ZHVtbXkxMjM=</xenc:OAEPparams>", 1 },
		{ KT_XENC11, DM(DSIG_MORE "sha224") MGF("mgf1sha224"), 1 },
		{ KT_XENC11, " <!-- c --> " DM(NS_DS "sha1") " ", 1 },
		{ KT_MGF1P, "", 1 },
		{ KT_MGF1P, DM(NS_XENC "sha512"), 1 },
		{ KT_PKCS1, "", 1 },
		{ KT_MGF1P, MGF("mgf1sha256"), 0 },           /* no MGF there */
		{ KT_XENC11, DM(DSIG_MORE "md5"), 0 },
		{ KT_XENC11, DM("urn:x"), 0 },
		{ KT_XENC11, MGF("mgf1md5"), 0 },
		{ KT_XENC11, DM(NS_XENC "sha256") DM(NS_XENC "sha256"), 0 },
		{ KT_XENC11, MGF("mgf1sha1") MGF("mgf1sha1"), 0 },
		{ KT_XENC11, "<ds:DigestMethod/>", 0 },
		{ KT_XENC11, "<xenc:KeySize>128</xenc:KeySize>", 0 },
		{ KT_XENC11, "text", 0 },
		{ KT_XENC11, "<xenc:OAEPparams>!!</xenc:OAEPparams>", 0 },
		{ KT_PKCS1, DM(NS_DS "sha1"), 0 },
		{ NS_XENC "rsa-oaep", "", 0 },
		{ KT_XENC11 "x", "", 0 },
		{ NS_XENC "kw-aes128", "", 0 },
	};
	char xml[1024], big[1200];
	struct arena *a = arena_new(0);
	xmlDocPtr doc;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		(void)snprintf(xml, sizeof(xml), "<xenc:EncryptionMethod "
		    "xmlns:xenc=\"" NS_XENC "\" xmlns:ds=\"" NS_DS "\" "
		    "xmlns:xenc11=\"" XENC11 "\" Algorithm=\"%s\">%s"
		    "</xenc:EncryptionMethod>", cases[i].alg,
		    cases[i].children);
		err_clear(&err);
		assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc,
		    &err), 0);
		if (wss_oaep_usable(xmlDocGetRootElement(doc)) !=
		    cases[i].usable)
			fail_msg("case %zu (%s)", i, cases[i].children);
	}
	/* a label over 256 bytes */
	memset(big, 'A', sizeof(big));
	(void)snprintf(xml, sizeof(xml), "<e:EncryptionMethod xmlns:e=\""
	    NS_XENC "\" Algorithm=\"" KT_XENC11 "\"><e:OAEPparams>%.400s"
	    "</e:OAEPparams></e:EncryptionMethod>", big);
	assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc, &err), 0);
	assert_int_equal(wss_oaep_usable(xmlDocGetRootElement(doc)), 0);
	arena_free(a);
}

/* ------------------------------------------------------------------ */
/* Generated messages: algorithms, policy refusals, failure kinds      */
/* ------------------------------------------------------------------ */

/* What to break in a generated message. */
enum tbreak {
	B_NONE, B_TAG, B_KEYCT, B_BASE64, B_WRONGKEY, B_MISSING, B_SHORT,
	B_HEADERS, B_NOTRANSFORM, B_BADREF, B_UNREF, B_KEYINFO, B_PADDING,
	B_DUPID, B_SAMECID, B_KEYLEN, B_NOEK, B_BAREREF, B_NOKEY, B_TYPE,
	B_B64CTE, B_CIPHERVALUE,
};

struct tcase {
	const char *name;
	const char *kt, *params;  /* the EncryptedKey's EncryptionMethod */
	const char *md, *mgf;     /* test-side OAEP; md NULL: PKCS#1 v1.5 */
	const char *label;        /* test-side OAEP label */
	const char *enc;          /* block algorithm of both EncryptedData */
	int complete;             /* Attachment-Complete */
	unsigned extra;           /* allowed beyond WSS_ALGS_DEFAULT */
	enum tbreak brk;
	const char *code;         /* expected ebMS code; NULL: decrypts */
};

#define OAEP_X11 KT_XENC11, DM(NS_XENC "sha256") MGF("mgf1sha256"), \
	"SHA256", "SHA256", NULL
#define LABEL "<xenc:OAEPparams>ZHVtbXkxMjM=</xenc:OAEPparams>"

static const struct tcase tcases[] = {
	/* accepted */
	{ "xenc11 sha256 mgf1sha256", OAEP_X11, GCM128, 0, 0, B_NONE, NULL },
	{ "xenc11 defaults", KT_XENC11, "", "SHA1", "SHA1", NULL, GCM128, 0,
	    0, B_NONE, NULL },
	{ "xenc11 sha512 mgf1sha384 label", KT_XENC11, DM(NS_XENC "sha512")
	    MGF("mgf1sha384") LABEL, "SHA512", "SHA384", "dummy123", GCM256,
	    0, 0, B_NONE, NULL },
	{ "mgf1p", KT_MGF1P, "", "SHA1", "SHA1", NULL, GCM128, 0, 0, B_NONE,
	    NULL },
	{ "mgf1p sha256", KT_MGF1P, DM(NS_XENC "sha256"), "SHA256", "SHA1",
	    NULL, GCM128, 0, 0, B_NONE, NULL },
	{ "complete", OAEP_X11, GCM128, 1, 0, B_NONE, NULL },
	{ "complete base64 folded", OAEP_X11, GCM256, 1, 0, B_B64CTE, NULL },
	{ "bare DataReference", OAEP_X11, GCM128, 0, 0, B_BAREREF, NULL },
	{ "rsa-1_5 allowed", KT_PKCS1, "", NULL, NULL, NULL, GCM128, 0,
	    WSS_KT_RSA_1_5, B_NONE, NULL },
	{ "aes128-cbc allowed", OAEP_X11, CBC128, 0, WSS_ENC_AES_CBC, B_NONE,
	    NULL },
	{ "aes256-cbc allowed", OAEP_X11, CBC256, 1, WSS_ENC_AES_CBC, B_NONE,
	    NULL },
	/* refused by policy before any cryptography */
	{ "rsa-1_5", KT_PKCS1, "", NULL, NULL, NULL, GCM128, 0, 0, B_NONE,
	    "EBMS:0103" },
	{ "aes128-cbc", OAEP_X11, CBC128, 0, 0, B_NONE, "EBMS:0103" },
	{ "aes256-cbc", OAEP_X11, CBC256, 0, 0, B_NONE, "EBMS:0103" },
	{ "aes192-gcm", OAEP_X11, GCM192, 0, 0, B_NONE, "EBMS:0103" },
	{ "md5 digest", KT_XENC11, DM(DSIG_MORE "md5"), "SHA1", "SHA1", NULL,
	    GCM128, 0, 0, B_NONE, "EBMS:0103" },
	{ "MGF in mgf1p", KT_MGF1P, MGF("mgf1sha256"), "SHA1", "SHA1", NULL,
	    GCM128, 0, 0, B_NONE, "EBMS:0103" },
	{ "unknown key transport", "urn:x:kt", "", "SHA1", "SHA1", NULL,
	    GCM128, 0, 0, B_NONE, "EBMS:0103" },
	{ "element type", OAEP_X11, GCM128, 0, 0, B_TYPE, "EBMS:0103" },
	{ "no decryption key", OAEP_X11, GCM128, 0, 0, B_NOKEY, "EBMS:0103" },
	/* decryption failures: all the same EBMS:0102 */
	{ "tag", OAEP_X11, GCM128, 0, 0, B_TAG, "EBMS:0102" },
	{ "key cipher", OAEP_X11, GCM128, 0, 0, B_KEYCT, "EBMS:0102" },
	{ "base64", OAEP_X11, GCM128, 0, 0, B_BASE64, "EBMS:0102" },
	{ "wrong key", OAEP_X11, GCM128, 0, 0, B_WRONGKEY, "EBMS:0102" },
	{ "wrong key rsa-1_5", KT_PKCS1, "", NULL, NULL, NULL, GCM128, 0,
	    WSS_KT_RSA_1_5, B_WRONGKEY, "EBMS:0102" },
	{ "missing part", OAEP_X11, GCM128, 0, 0, B_MISSING, "EBMS:0102" },
	{ "short ciphertext", OAEP_X11, GCM128, 0, 0, B_SHORT, "EBMS:0102" },
	{ "complete headers", OAEP_X11, GCM128, 1, 0, B_HEADERS, "EBMS:0102" },
	{ "no transform", OAEP_X11, GCM128, 0, 0, B_NOTRANSFORM, "EBMS:0102" },
	{ "unknown reference", OAEP_X11, GCM128, 0, 0, B_BADREF, "EBMS:0102" },
	{ "unreferenced data", OAEP_X11, GCM128, 0, 0, B_UNREF, "EBMS:0102" },
	{ "keyinfo mismatch", OAEP_X11, GCM128, 0, 0, B_KEYINFO, "EBMS:0102" },
	{ "cbc padding", OAEP_X11, CBC128, 0, WSS_ENC_AES_CBC, B_PADDING,
	    "EBMS:0102" },
	{ "duplicate Id", OAEP_X11, GCM128, 0, 0, B_DUPID, "EBMS:0102" },
	{ "one part twice", OAEP_X11, GCM128, 0, 0, B_SAMECID, "EBMS:0102" },
	{ "session key length", OAEP_X11, GCM128, 0, 0, B_KEYLEN, "EBMS:0102" },
	{ "no EncryptedKey", OAEP_X11, GCM128, 0, 0, B_NOEK, "EBMS:0102" },
	{ "CipherValue data", OAEP_X11, GCM128, 0, 0, B_CIPHERVALUE,
	    "EBMS:0102" },
	{ "label mismatch", KT_XENC11, DM(NS_XENC "sha256") LABEL, "SHA256",
	    "SHA1", "other", GCM128, 0, 0, B_NONE, "EBMS:0102" },
	{ "digest mismatch", KT_XENC11, DM(NS_XENC "sha256"), "SHA1", "SHA1",
	    NULL, GCM128, 0, 0, B_NONE, "EBMS:0102" },
	{ "mgf mismatch", KT_XENC11, MGF("mgf1sha512"), "SHA1", "SHA1", NULL,
	    GCM128, 0, 0, B_NONE, "EBMS:0102" },
};

/* The two payloads (content) of every generated message. */
static const char *const t_content[2] = {
	"first payload \x01\x02\x7f bytes", "<doc>second</doc>",
};

/* One generated message. */
struct tmsg {
	struct arena *a;
	xmlDocPtr doc;
	struct wss_part parts[2];
};

/* Test-side key transport with plain OpenSSL (independent of ours). */
static size_t
t_rsa(const struct tcase *tc, const unsigned char *in, size_t n,
    unsigned char *out)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(fx.pub, NULL);
	unsigned char *label;
	size_t len = 512;

	assert_non_null(c);
	assert_int_equal(EVP_PKEY_encrypt_init(c), 1);
	if (tc->md == NULL) {
		assert_true(EVP_PKEY_CTX_set_rsa_padding(c,
		    RSA_PKCS1_PADDING) > 0);
	} else {
		assert_true(EVP_PKEY_CTX_set_rsa_padding(c,
		    RSA_PKCS1_OAEP_PADDING) > 0);
		assert_true(EVP_PKEY_CTX_set_rsa_oaep_md(c,
		    EVP_get_digestbyname(tc->md)) > 0);
		assert_true(EVP_PKEY_CTX_set_rsa_mgf1_md(c,
		    EVP_get_digestbyname(tc->mgf)) > 0);
	}
	if (tc->label != NULL) {
		label = OPENSSL_memdup(tc->label, strlen(tc->label));
		assert_true(EVP_PKEY_CTX_set0_rsa_oaep_label(c, label,
		    (int)strlen(tc->label)) > 0);
	}
	assert_int_equal(EVP_PKEY_encrypt(c, out, &len, in, n), 1);
	EVP_PKEY_CTX_free(c);
	return len;
}

/* Test-side block encryption: GCM IV||ct||tag, CBC IV||ct with XML
 * Encryption padding (pad length 0 when bad_pad). */
static unsigned char *
t_seal(struct arena *a, const char *enc, const unsigned char *key,
    size_t klen, const char *in, size_t n, size_t *ret_len, int bad_pad)
{
	int gcm = strstr(enc, "gcm") != NULL, got = 0, fin = 0;
	size_t iv = gcm ? 12 : 16, pad = gcm ? 0 : 16 - n % 16;
	char name[16];
	unsigned char *pt = arena_alloc(a, n + pad + 1);
	unsigned char *out = arena_alloc(a, iv + n + pad + 16);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();

	(void)snprintf(name, sizeof(name), "aes-%zu-%s", klen * 8,
	    gcm ? "gcm" : "cbc");
	memcpy(pt, in, n);
	if (pad > 0) {
		assert_int_equal(RAND_bytes(pt + n, (int)pad), 1);
		pt[n + pad - 1] = bad_pad ? 0 : (unsigned char)pad;
	}
	assert_int_equal(RAND_bytes(out, (int)iv), 1);
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_get_cipherbyname(name),
	    NULL, key, out), 1);
	assert_int_equal(EVP_CIPHER_CTX_set_padding(c, 0), 1);
	assert_int_equal(EVP_EncryptUpdate(c, out + iv, &got, pt,
	    (int)(n + pad)), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, out + iv + got, &fin), 1);
	*ret_len = iv + n + pad;
	if (gcm) {
		assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG,
		    16, out + iv + n), 1);
		*ret_len += 16;
	}
	EVP_CIPHER_CTX_free(c);
	return out;
}

/* The plaintext of payload i: content, or MIME headers + content. */
static const char *
t_plaintext(struct arena *a, const struct tcase *tc, size_t i)
{
	if (!tc->complete)
		return t_content[i];
	if (tc->brk == B_HEADERS)
		return arena_sprintf(a, "Content-Type application/xml\r\n"
		    "\r\n%s", t_content[i]);
	if (tc->brk == B_B64CTE)
		return arena_sprintf(a, "Content-Type: text/plain;\r\n "
		    "charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n"
		    "\r\n%s", codec_base64(a, t_content[i],
		    strlen(t_content[i])));
	return arena_sprintf(a, "Content-Type: application/xml\r\n"
	    "Content-ID: <p%zu@test>\r\n\r\n%s", i, t_content[i]);
}

/* One xenc:EncryptedData (the second one with a KeyInfo). */
static char *
t_ed(struct arena *a, const struct tcase *tc, const char *id,
    const char *cid, int second)
{
	const char *type = tc->brk == B_TYPE ? NS_XENC "Element" :
	    tc->complete ? SWA "Attachment-Complete" :
	    SWA "Attachment-Content-Only";
	const char *ki = !second ? "" : tc->brk == B_KEYINFO ?
	    "<ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference "
	    "URI=\"#EK-X\"/></wsse:SecurityTokenReference></ds:KeyInfo>" :
	    "<ds:KeyInfo><wsse:SecurityTokenReference><wsse:Reference "
	    "URI=\"#EK-1\"/></wsse:SecurityTokenReference></ds:KeyInfo>";
	const char *tr = second && tc->brk == B_NOTRANSFORM ? "" :
	    "<xenc:Transforms><ds:Transform Algorithm=\"" SWA
	    "Attachment-Ciphertext-Transform\"/></xenc:Transforms>";
	const char *cd = second && tc->brk == B_CIPHERVALUE ?
	    "<xenc:CipherValue>AAAA</xenc:CipherValue>" : "";

	return arena_sprintf(a, "<xenc:EncryptedData Id=\"%s\" Type=\"%s\">"
	    "<xenc:EncryptionMethod Algorithm=\"%s\"/>%s<xenc:CipherData>%s"
	    "<xenc:CipherReference URI=\"cid:%s\">%s</xenc:CipherReference>"
	    "</xenc:CipherData></xenc:EncryptedData>", id, type, tc->enc, ki,
	    cd, cid, tr);
}

/* The envelope: Security with EncryptedKey and two EncryptedData. */
static char *
t_xml(struct arena *a, const struct tcase *tc, const char *cv)
{
	const char *ref1 = tc->brk == B_BAREREF ? "ED-1" : "#ED-1";
	const char *ref2 = tc->brk == B_BADREF ? "#ED-9" : "#ED-2";
	char *ek = arena_sprintf(a, "<xenc:EncryptedKey Id=\"EK-1\">"
	    "<xenc:EncryptionMethod Algorithm=\"%s\">%s"
	    "</xenc:EncryptionMethod><ds:KeyInfo><wsse:SecurityTokenReference>"
	    "<wsse:KeyIdentifier ValueType=\"" THUMBPRINT "\">%s"
	    "</wsse:KeyIdentifier>"
	    "</wsse:SecurityTokenReference></ds:KeyInfo><xenc:CipherData>"
	    "<xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData>"
	    "<xenc:ReferenceList><xenc:DataReference URI=\"%s\"/>%s%s%s"
	    "</xenc:ReferenceList></xenc:EncryptedKey>", tc->kt, tc->params,
	    fx.thumb, cv, ref1, tc->brk == B_UNREF ? "" : "<xenc:DataReference URI=\"",
	    tc->brk == B_UNREF ? "" : ref2, tc->brk == B_UNREF ? "" : "\"/>");

	return arena_sprintf(a, "<S:Envelope xmlns:S=\"" NS_SOAP12 "\">"
	    "<S:Header><wsse:Security xmlns:wsse=\"" NS_WSSE "\" "
	    "xmlns:xenc=\"" NS_XENC "\" xmlns:ds=\"" NS_DS "\" "
	    "xmlns:xenc11=\"" XENC11 "\">%s%s%s</wsse:Security></S:Header>"
	    "<S:Body/></S:Envelope>", tc->brk == B_NOEK ? "" : ek,
	    t_ed(a, tc, "ED-1", "p0@test", 0),
	    t_ed(a, tc, tc->brk == B_DUPID ? "ED-1" : "ED-2",
	    tc->brk == B_SAMECID ? "p0@test" : "p1%40test", 1));
}

/* Build the message of a case: random session key, test-side crypto. */
static void
t_build(const struct tcase *tc, struct tmsg *m)
{
	size_t klen = strstr(tc->enc, "256") != NULL ? 32 :
	    strstr(tc->enc, "192") != NULL ? 24 : 16, rlen, i, n;
	unsigned char key[40], rsa[512], *ct;
	const char *pt, *cv, *xml;
	struct err err;

	m->a = arena_new(0);
	assert_int_equal(RAND_bytes(key, sizeof(key)), 1);
	rlen = t_rsa(tc, key, tc->brk == B_KEYLEN ? klen + 8 : klen, rsa);
	if (tc->brk == B_KEYCT)
		rsa[rlen / 2] ^= 0x01;
	cv = tc->brk == B_BASE64 ? "AAAA!!!!" : codec_base64(m->a, rsa, rlen);
	for (i = 0; i < 2; i++) {
		pt = t_plaintext(m->a, tc, i);
		ct = t_seal(m->a, tc->enc, key, klen, pt, strlen(pt), &n,
		    tc->brk == B_PADDING);
		if (i == 1 && tc->brk == B_TAG)
			ct[n - 1] ^= 0x01;
		if (i == 1 && tc->brk == B_SHORT)
			n = 20;
		m->parts[i].content_id = i == 0 ? "p0@test" :
		    tc->brk == B_MISSING ? "px@test" : "p1@test";
		m->parts[i].content_type = "application/octet-stream";
		m->parts[i].data = ct;
		m->parts[i].len = n;
	}
	xml = t_xml(m->a, tc, cv);
	err_clear(&err);
	assert_int_equal(xml_parse(m->a, xml, strlen(xml), NULL, &m->doc,
	    &err), 0);
}

/* The parts of a decrypted generated message hold the plaintext. */
static void
t_check_plain(const struct tcase *tc, const struct tmsg *m)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		assert_int_equal(m->parts[i].decrypted, 1);
		assert_int_equal(m->parts[i].len, strlen(t_content[i]));
		assert_memory_equal(m->parts[i].data, t_content[i],
		    m->parts[i].len);
		if (!tc->complete) {
			assert_string_equal(m->parts[i].content_type,
			    "application/octet-stream");
			continue;
		}
		assert_string_equal(m->parts[i].content_type,
		    tc->brk == B_B64CTE ? "text/plain; charset=utf-8" :
		    "application/xml");
		assert_non_null(m->parts[i].headers);
		assert_int_equal(m->parts[i].headers_len,
		    strlen(m->parts[i].headers));
		assert_non_null(strstr(m->parts[i].headers, "Content-"));
	}
}

/* Run one case; the error goes to *ret_err. */
static void
t_case(const struct tcase *tc, struct err *ret_err)
{
	struct wss_policy pol = t_policy(tc->brk == B_WRONGKEY ?
	    fx.ring_other : tc->brk == B_NOKEY ? NULL : fx.ring, tc->extra);
	const unsigned char *orig[2];
	struct wss_dec_report rep;
	struct tmsg m;
	int rc;

	memset(&m, 0, sizeof(m));
	t_build(tc, &m);
	orig[0] = m.parts[0].data;
	orig[1] = m.parts[1].data;
	err_clear(ret_err);
	rc = wss_decrypt(m.a, m.doc, t_security(m.doc), m.parts, 2, &pol, &rep,
	    ret_err);
	assert_int_equal(rep.cbc, rc == 0 && strstr(tc->enc, "cbc") != NULL);
	if (tc->code == NULL) {
		if (rc != 0 || rep.failed)
			fail_msg("%s: %s (%s)", tc->name, ret_err->msg,
			    ret_err->detail);
		assert_int_equal(rep.n_decrypted, 2);
		t_check_plain(tc, &m);
	} else if (rep.cbc) {
		/* AES-CBC: the failure is reported, its answer deferred
		 * until the signature was checked over what came out */
		if (rc != 0 || !rep.failed || ret_err->kind != ERR_EBMS ||
		    strcmp(ret_err->ebms_code, tc->code) != 0)
			fail_msg("%s: want deferred %s, got rc %d %s",
			    tc->name, tc->code, rc, ret_err->msg);
	} else {
		if (rc != -1 || ret_err->kind != ERR_EBMS ||
		    strcmp(ret_err->ebms_code, tc->code) != 0)
			fail_msg("%s: want %s, got rc %d %s", tc->name,
			    tc->code, rc, ret_err->msg);
		/* parts untouched on failure */
		assert_ptr_equal(m.parts[0].data, orig[0]);
		assert_ptr_equal(m.parts[1].data, orig[1]);
		assert_int_equal(m.parts[0].decrypted + m.parts[1].decrypted,
		    0);
	}
	arena_free(m.a);
}

/* The first EBMS:0102 answer; every other must be answered the same. */
static struct err t_first_0102;

/* Log details of the decryption failures seen (issue 10 item 12). */
static char t_details[64][sizeof(((struct err *)0)->detail)];
static size_t t_n_details;

/* Compare a decryption failure with the first one seen: the answer (code
 * and msg) identical; the log detail says what failed and is collected. */
static void
t_same_0102(const struct err *err, const char *what)
{
	size_t i;

	if (t_first_0102.kind == ERR_NONE)
		t_first_0102 = *err;
	if (err->kind != t_first_0102.kind ||
	    strcmp(err->ebms_code, t_first_0102.ebms_code) != 0 ||
	    strcmp(err->msg, t_first_0102.msg) != 0 ||
	    memcmp(err->msg, t_first_0102.msg, sizeof(err->msg)) != 0)
		fail_msg("%s: answer differs: \"%s\" / \"%s\"", what, err->msg,
		    err->detail);
	if (strncmp(err->detail, "could not decrypt the encrypted payloads: ",
	    42) != 0 || strlen(err->detail) <= 42)
		fail_msg("%s: no reason in the log detail \"%s\"", what,
		    err->detail);
	for (i = 0; i < t_n_details; i++)
		if (strcmp(t_details[i], err->detail) == 0)
			return;
	if (t_n_details < sizeof(t_details) / sizeof(t_details[0]))
		memcpy(t_details[t_n_details++], err->detail,
		    sizeof(t_details[0]));
}

/* Every case of the table; all EBMS:0102 answers identical, their log
 * details telling the kinds of failure apart. */
static void
test_generated(void **state)
{
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
		t_case(&tcases[i], &err);
		if (tcases[i].code != NULL &&
		    strcmp(tcases[i].code, "EBMS:0102") == 0)
			t_same_0102(&err, tcases[i].name);
	}
	assert_int_equal(t_first_0102.kind, ERR_EBMS);
	assert_string_equal(t_first_0102.msg, "decryption failed");
	/* tag, key transport, padding, missing part, headers, references */
	assert_true(t_n_details >= 6);
}

/* A spool in a fresh directory (threshold 0, budget max), bound. */
static struct spool *
t_spool_bind(char *dir, uint64_t max)
{
	struct spool *sp = NULL;
	struct err err;

	assert_non_null(mkdtemp(dir));
	err_clear(&err);
	assert_int_equal(spool_new(dir, max, 0, &sp, &err), 0);
	(void)spool_bind(sp);
	return sp;
}

/*
 * Issue 14: the whole table again with a spool bound whose threshold is 0,
 * so that every part decrypts in pieces into a spool file
 * (wss_cipher_stream.c; Attachment-Complete base64 content too): the same
 * plaintexts, the same answers.  A spool that cannot take the plaintext
 * shows the path was taken: its error, not a decryption failure.
 */
static void
test_generated_spooled(void **state)
{
	char dir[] = "/tmp/as4gw-test-dec-XXXXXX";
	char dir2[] = "/tmp/as4gw-test-dec-XXXXXX";
	struct spool *sp = t_spool_bind(dir, 0);
	struct err err;

	test_generated(state);
	spool_free(sp);
	assert_int_equal(rmdir(dir), 0);
	sp = t_spool_bind(dir2, 1);
	{
		struct wss_policy pol = t_policy(fx.ring, 0);
		struct wss_dec_report rep;
		struct tmsg m;

		memset(&m, 0, sizeof(m));
		t_build(&tcases[0], &m);
		err_clear(&err);
		assert_int_equal(wss_decrypt(m.a, m.doc, t_security(m.doc),
		    m.parts, 2, &pol, &rep, &err), -1);
		assert_int_equal(err.kind, ERR_HTTP);
		assert_int_equal(m.parts[0].decrypted + m.parts[1].decrypted, 0);
		arena_free(m.a);
	}
	(void)spool_bind(NULL);
	spool_free(sp);
	assert_int_equal(rmdir(dir2), 0);
}

/* After AES-CBC every failure is masked as EBMS:0102, but no room to
 * spool a plaintext (ERR_STORE, issue 14) stays the 503 it is. */
static void
test_mask_store(void **state)
{
	struct err err;

	(void)state;
	err_clear(&err);
	(void)err_set(&err, ERR_STORE, NULL, "spool: no space left");
	wss_decrypt_mask(&err);
	assert_int_equal(err.kind, ERR_STORE);
	err_clear(&err);
	(void)err_set(&err, ERR_EBMS, "EBMS:0101", "signature invalid");
	wss_decrypt_mask(&err);
	assert_string_equal(err.ebms_code, "EBMS:0102");
}

/*
 * Two pairs (issue 11 item 9): the EncryptedKey's ThumbprintSHA1 picks gw's,
 * listed second and retiring (reported); without a ds:KeyInfo only a leg
 * with a single pair decrypts (no key is tried); the same certificate twice
 * is refused at load.
 */
static void
test_keyring(void **state)
{
	char a[128], b[128], c[128], d[128];
	struct wss_keyring_spec two[2] = {
		{ tpath(a, sizeof(a), "other.crt"), tpath(b, sizeof(b),
		    "other.key"), 0 },
		{ tpath(c, sizeof(c), "gw.crt"), tpath(d, sizeof(d), "gw.key"),
		    1 },
	};
	struct wss_keyring *ring2 = NULL, *dup = NULL;
	struct wss_policy pol;
	struct wss_dec_report rep;
	struct tmsg m;
	struct err err;
	xmlNodePtr ki;

	(void)state;
	err_clear(&err);
	assert_int_equal(wss_keyring_new(two, 2, &ring2, &err), 0);
	memset(&m, 0, sizeof(m));
	t_build(&tcases[0], &m);
	pol = t_policy(ring2, 0);
	assert_int_equal(wss_decrypt(m.a, m.doc, t_security(m.doc), m.parts, 2,
	    &pol, &rep, &err), 0);
	assert_int_equal(rep.n_decrypted, 2);
	assert_string_equal(rep.retiring, wss_keyring_fp(ring2, 1));
	t_check_plain(&tcases[0], &m);
	arena_free(m.a);

	memset(&m, 0, sizeof(m));
	t_build(&tcases[0], &m);
	ki = xml_child(xml_child(t_security(m.doc), NS_XENC, "EncryptedKey"),
	    NS_DS, "KeyInfo");
	assert_non_null(ki);
	xmlUnlinkNode(ki);
	xmlFreeNode(ki);
	err_clear(&err);
	assert_int_equal(wss_decrypt(m.a, m.doc, t_security(m.doc), m.parts, 2,
	    &pol, &rep, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0102");
	assert_non_null(strstr(err.detail, "no ds:KeyInfo"));
	assert_non_null(strstr(err.detail, wss_keyring_fp(ring2, 0)));
	pol = t_policy(fx.ring, 0);
	err_clear(&err);
	assert_int_equal(wss_decrypt(m.a, m.doc, t_security(m.doc), m.parts, 2,
	    &pol, &rep, &err), 0);
	assert_null(rep.retiring);
	t_check_plain(&tcases[0], &m);
	arena_free(m.a);

	two[0] = two[1];
	err_clear(&err);
	assert_int_equal(wss_keyring_new(two, 2, &dup, &err), -1);
	assert_int_equal(err.kind, ERR_CONF);
	assert_non_null(strstr(err.msg, "same certificate"));
	assert_null(dup);
	wss_keyring_free(ring2);
}

/* A Security header without encryption decrypts nothing, successfully. */
static void
test_nothing_encrypted(void **state)
{
	static const char xml[] = "<S:Envelope xmlns:S=\"" NS_SOAP12 "\">"
	    "<S:Header><wsse:Security xmlns:wsse=\"" NS_WSSE "\">"
	    "<wsse:BinarySecurityToken>AAAA</wsse:BinarySecurityToken>"
	    "</wsse:Security></S:Header><S:Body/></S:Envelope>";
	struct arena *a = arena_new(0);
	struct wss_policy pol = t_policy(NULL, 0);
	struct wss_dec_report rep = { 99, 1, 1, "x" };
	xmlDocPtr doc = NULL;
	struct err err;

	(void)state;
	err_clear(&err);
	assert_int_equal(xml_parse(a, xml, strlen(xml), NULL, &doc, &err), 0);
	assert_int_equal(wss_decrypt(a, doc, t_security(doc), NULL, 0, &pol,
	    &rep, &err), 0);
	assert_int_equal(rep.n_decrypted + (size_t)rep.cbc +
	    (size_t)rep.failed, 0);
	arena_free(a);
}

/* ------------------------------------------------------------------ */
/* Recorded traffic                                                    */
/* ------------------------------------------------------------------ */

/* A raw multipart body split into the root part and attachments. */
struct tmime {
	const char *root;
	size_t root_len;
	struct wss_part parts[MAX_PARTS];
	size_t n;
};

/* First occurrence of needle in h[0..n), or NULL. */
static const char *
t_find(const char *h, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(h + i, needle, k) == 0)
			return h + i;
	return NULL;
}

/* A header value from a part's header block (arena), "<>" stripped. */
static const char *
t_header(struct arena *a, const char *h, size_t n, const char *name)
{
	size_t k = strlen(name), i = 0, j;

	while (i < n) {
		for (j = i; j < n && h[j] != '\r' && h[j] != '\n'; j++)
			;
		if (j - i > k && h[i + k] == ':' &&
		    strncasecmp(h + i, name, k) == 0) {
			i += k + 1;
			while (i < j && (h[i] == ' ' || h[i] == '<'))
				i++;
			while (j > i && (h[j - 1] == ' ' || h[j - 1] == '>'))
				j--;
			return arena_strndup(a, h + i, j - i);
		}
		i = j;
		while (i < n && (h[i] == '\r' || h[i] == '\n'))
			i++;
	}
	return NULL;
}

/* Split a recorded body (boundary sniffed from its first delimiter line;
 * a BOM or blank lines before it are preamble). */
static void
t_mime(struct arena *a, const char *body, size_t len, struct tmime *m)
{
	const char *end = body + len, *p = t_find(body, len, "--"), *eol;
	const char *next, *hend;
	char delim[128];
	size_t dl;

	assert_non_null(p);
	for (eol = p; eol < end && *eol != '\r' && *eol != '\n'; eol++)
		;
	dl = (size_t)snprintf(delim, sizeof(delim), "\r\n--%.*s",
	    (int)(eol - p - 2), p + 2);
	for (p = eol + 2, m->n = 0;; m->n++) {
		next = t_find(p, (size_t)(end - p), delim);
		hend = next != NULL ? t_find(p, (size_t)(next - p),
		    "\r\n\r\n") : NULL;
		assert_non_null(hend);
		assert_true(m->n <= MAX_PARTS);
		if (m->n == 0) {
			m->root = hend + 4;
			m->root_len = (size_t)(next - m->root);
		} else {
			struct wss_part *q = &m->parts[m->n - 1];

			q->content_id = t_header(a, p, (size_t)(hend - p),
			    "Content-ID");
			q->content_type = t_header(a, p, (size_t)(hend - p),
			    "Content-Type");
			q->data = (const unsigned char *)hend + 4;
			q->len = (size_t)(next - (hend + 4));
		}
		p = next + dl;
		if (p + 2 <= end && p[0] == '-' && p[1] == '-')
			break;
		p += 2;
	}
}

/* A recorded message ready for wss_decrypt(). */
struct trec {
	struct arena *a;
	char *raw;
	xmlDocPtr doc;
	struct tmime mime;
	struct wss_key *key;
	struct wss_keyring *ring;  /* the same pair as a leg's keyring */
};

/* Load corpus message rel and the corpus key <sha>; 0, or -1 when
 * ../shared is absent (the caller skips). */
static int
t_rec_load(struct trec *r, const char *rel, const char *sha)
{
	char path[512], cert[512], key[512];
	size_t len = 0;
	struct wss_keyring_spec spec = { NULL, NULL, 0 };
	struct err err;

	memset(r, 0, sizeof(*r));
	(void)snprintf(path, sizeof(path), "corpus/messages/%s", rel);
	r->raw = testutil_read_shared(path, &len);
	if (r->raw == NULL)
		return -1;
	r->a = arena_new(0);
	t_mime(r->a, r->raw, len, &r->mime);
	err_clear(&err);
	assert_int_equal(xml_parse(r->a, r->mime.root, r->mime.root_len, NULL,
	    &r->doc, &err), 0);
	(void)snprintf(cert, sizeof(cert), "%s/corpus/keys/%s.pem",
	    testutil_shared_dir(), sha);
	(void)snprintf(key, sizeof(key), "%s/corpus/keys/%s.key.pem",
	    testutil_shared_dir(), sha);
	if (wss_key_load(cert, key, &r->key, &err) < 0)
		fail_msg("key %s: %s", sha, err.msg);
	spec.cert = cert;
	spec.key = key;
	if (wss_keyring_new(&spec, 1, &r->ring, &err) < 0)
		fail_msg("keyring %s: %s", sha, err.msg);
	return 0;
}

/* Release a recorded message. */
static void
t_rec_free(struct trec *r)
{
	wss_key_free(r->key);
	wss_keyring_free(r->ring);
	arena_free(r->a);
	free(r->raw);
}

/* wss_decrypt() on a recorded message under the default policy. */
static int
t_rec_decrypt(struct trec *r, struct err *err)
{
	struct wss_policy pol = t_policy(r->ring, 0);
	struct wss_dec_report rep;

	err_clear(err);
	/* as wss_inbound: IDs first, for BinarySecurityToken references */
	if (wss_ids_index(r->doc, err) < 0)
		return -1;
	return wss_decrypt(r->a, r->doc, t_security(r->doc), r->mime.parts,
	    r->mime.n, &pol, &rep, err);
}

/* One recorded message that must decrypt to the extracted ground truth:
 * pairs of Content-ID and decrypted-*.bin file name. */
static void
t_rec_ok(const char *rel, const char *sha, const char *const *pairs,
    size_t n_pairs)
{
	char path[512];
	struct trec r;
	struct err err;
	size_t i, j, len;
	char *want;

	if (t_rec_load(&r, rel, sha) < 0)
		testutil_skip("corpus not in ../shared");
	if (t_rec_decrypt(&r, &err) < 0)
		fail_msg("%s: %s", rel, err.msg);
	for (i = 0; i < n_pairs; i++) {
		for (j = 0; j < r.mime.n; j++)
			if (strcmp(r.mime.parts[j].content_id, pairs[2 * i]) ==
			    0)
				break;
		assert_true(j < r.mime.n);
		assert_int_equal(r.mime.parts[j].decrypted, 1);
		(void)snprintf(path, sizeof(path), "corpus/extracted/%s/%s",
		    rel, pairs[2 * i + 1]);
		want = testutil_read_shared(path, &len);
		assert_non_null(want);
		assert_int_equal(r.mime.parts[j].len, len);
		assert_memory_equal(r.mime.parts[j].data, want, len);
		free(want);
	}
	t_rec_free(&r);
}

#define PARTYC "21f569479758"
#define ACCESS_POINT_B "3da5db472d77"
#define PARTYA "0d512bdcd9f1"
#define ISSUERSERIAL_CID "b545c3a0-e57f-46aa-862f-381eb4b7009-"
#define BUNDLED_CID "30392f3c-bc9c-4a1f-ba5e-5d4d81382ee-"

/* AS4.NET: xenc11 rsa-oaep (SHA-256 digest, default MGF) + aes128-gcm. */
static void
test_corpus_compressed(void **state)
{
	static const char *const pairs[] = {
		"flower", "decrypted-flower.bin",
		"xmldoc", "decrypted-xmldoc.bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-compressed-message.as4");
	t_rec_ok(rel, PARTYC, pairs, 2);
}

/* Holodeck: rsa-oaep-mgf1p with SHA-256, IssuerSerial, signed too. */
static void
test_corpus_issuerserial(void **state)
{
	static const char *const pairs[] = {
		ISSUERSERIAL_CID "291596031@CLT-SMOREELS.mshome.net",
		"decrypted-" ISSUERSERIAL_CID "291596031@CLT-SMOREELS.m.bin",
		ISSUERSERIAL_CID "1650194442@CLT-SMOREELS.mshome.net",
		"decrypted-" ISSUERSERIAL_CID "1650194442@CLT-SMOREELS..bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-signed-issuerserial.as4");
	t_rec_ok(rel, ACCESS_POINT_B, pairs, 2);
}

/* Holodeck UserMessage bundled with a Receipt, 3.3 MB payload. */
static void
test_corpus_bundled(void **state)
{
	static const char *const pairs[] = {
		BUNDLED_CID "1136335733@CLT-SNEIRINCK",
		"decrypted-" BUNDLED_CID "1136335733@CLT-SNEIRINCK.bin",
		BUNDLED_CID "1427821804@CLT-SNEIRINCK",
		"decrypted-" BUNDLED_CID "1427821804@CLT-SNEIRINCK.bin",
	};
	char rel[256];

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4_bundled_encrypted_message");
	t_rec_ok(rel, PARTYC, pairs, 2);
}

/* AS4.NET test 8.4.6: corrupted attachments -> EBMS:0102, the same bytes
 * as every generated failure. */
static void
test_corpus_wrong_encrypted(void **state)
{
	static const char *const files[][2] = {
		{ "ComponentTests",
		    "receiveagent-wrong-encrypted-message.as4" },
		{ "IntegrationTests", "as4-soap-wrong-encrypted-message.txt" },
		{ "UnitTests", "as4-soap-wrong-encrypted-message" },
	};
	char rel[256];
	struct trec r;
	struct err err;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		(void)snprintf(rel, sizeof(rel), RES, files[i][0], files[i][1]);
		if (t_rec_load(&r, rel, PARTYA) < 0)
			testutil_skip("corpus not in ../shared");
		assert_int_equal(t_rec_decrypt(&r, &err), -1);
		assert_string_equal(err.ebms_code, "EBMS:0102");
		assert_int_equal(r.mime.parts[0].decrypted, 0);
		t_same_0102(&err, files[i][1]);
		t_rec_free(&r);
	}
}

/* Tampering with a valid recorded message: a flipped attachment byte
 * (GCM tag) -> EBMS:0102; the EncryptedKey switched to rsa-1_5 ->
 * EBMS:0103 under the default policy. */
static void
test_corpus_tampered(void **state)
{
	char rel[256];
	struct trec r;
	struct err err;
	xmlNodePtr ek;
	unsigned char *copy;

	(void)state;
	(void)snprintf(rel, sizeof(rel), RES, "UnitTests",
	    "as4-encrypted-compressed-message.as4");
	if (t_rec_load(&r, rel, PARTYC) < 0)
		testutil_skip("corpus not in ../shared");
	copy = arena_memdup(r.a, r.mime.parts[1].data, r.mime.parts[1].len);
	copy[r.mime.parts[1].len / 2] ^= 0x80;
	r.mime.parts[1].data = copy;
	assert_int_equal(t_rec_decrypt(&r, &err), -1);
	t_same_0102(&err, "flipped attachment byte");
	ek = xml_child(t_security(r.doc), NS_XENC, "EncryptedKey");
	xmlSetProp(xml_child(ek, NS_XENC, "EncryptionMethod"),
	    (const xmlChar *)"Algorithm", (const xmlChar *)KT_PKCS1);
	assert_int_equal(t_rec_decrypt(&r, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0103");
	t_rec_free(&r);
}

/* ------------------------------------------------------------------ */
/* Round trip: sender_encrypt_parts() -> wss_decrypt()                    */
/* ------------------------------------------------------------------ */

static const char rt_envelope[] = "<S:Envelope xmlns:S=\"" NS_SOAP12 "\">"
    "<S:Header><wsse:Security xmlns:wsse=\"" NS_WSSE "\" "
    "S:mustUnderstand=\"true\"><wsse:BinarySecurityToken>AAAA"
    "</wsse:BinarySecurityToken></wsse:Security></S:Header><S:Body/>"
    "</S:Envelope>";

/* The EncryptedKey says what eDelivery AS4 1.15 specifies, and plain
 * OpenSSL can unwrap its key (interoperability). */
static void
t_rt_check_ek(struct arena *a, xmlNodePtr ek)
{
	const ASN1_OCTET_STRING *ski = X509_get0_subject_key_id(fx.cert);
	xmlNodePtr m = xml_child(ek, NS_XENC, "EncryptionMethod");
	xmlNodePtr kid = xml_child(xml_child(xml_child(ek, NS_DS, "KeyInfo"),
	    NS_WSSE, "SecurityTokenReference"), NS_WSSE, "KeyIdentifier");
	EVP_PKEY_CTX *c;
	unsigned char *ct, key[512];
	size_t n = 0, klen = sizeof(key);

	assert_string_equal(xml_attr(a, m, NULL, "Algorithm"), KT_XENC11);
	assert_string_equal(xml_attr(a, xml_child(m, NS_DS, "DigestMethod"),
	    NULL, "Algorithm"), NS_XENC "sha256");
	assert_string_equal(xml_attr(a, xml_child(m, XENC11, "MGF"), NULL,
	    "Algorithm"), XENC11 "mgf1sha256");
	assert_non_null(strstr(xml_attr(a, kid, NULL, "ValueType"),
	    "#X509SubjectKeyIdentifier"));
	assert_non_null(ski);
	assert_string_equal(xml_text(a, kid), codec_base64(a,
	    ASN1_STRING_get0_data(ski), (size_t)ASN1_STRING_length(ski)));
	ct = t_unbase64(a, xml_child(xml_child(ek, NS_XENC, "CipherData"),
	    NS_XENC, "CipherValue"), &n);
	c = EVP_PKEY_CTX_new(fx.priv, NULL);
	assert_non_null(c);
	assert_int_equal(EVP_PKEY_decrypt_init(c), 1);
	assert_true(EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) >
	    0);
	assert_true(EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) > 0);
	assert_true(EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) > 0);
	assert_int_equal(EVP_PKEY_decrypt(c, key, &klen, ct, n), 1);
	assert_int_equal(klen, 16);
	EVP_PKEY_CTX_free(c);
}

/* The Security header after encryption: EncryptedKey first, then one
 * EncryptedData per part (Content-Only, MimeType kept), then the BST. */
static void
t_rt_check(struct arena *a, xmlNodePtr sec, const struct wss_part *parts,
    const struct wss_part *orig, size_t n_parts)
{
	xmlNodePtr n = xml_child(sec, NULL, NULL);
	size_t i;

	assert_true(xml_is(n, NS_XENC, "EncryptedKey"));
	t_rt_check_ek(a, n);
	for (i = 0; i < n_parts; i++) {
		n = xml_next(n, NULL, NULL);
		assert_true(xml_is(n, NS_XENC, "EncryptedData"));
		assert_string_equal(xml_attr(a, n, NULL, "Type"),
		    SWA "Attachment-Content-Only");
		assert_string_equal(xml_attr(a, n, NULL, "MimeType"),
		    orig[i].content_type);
		assert_string_equal(parts[i].content_type,
		    "application/octet-stream");
		assert_int_equal(parts[i].len, orig[i].len + 28);
	}
	assert_true(xml_is(xml_next(n, NULL, NULL), NS_WSSE,
	    "BinarySecurityToken"));
}

/* Encrypt three parts (text, binary of bin_len with an odd Content-ID,
 * empty), check the structure, serialise and re-parse, decrypt; with
 * flip, the last GCM tag byte of the binary part flipped first: EBMS:0102
 * and no part changed. */
static void
t_round_trip(size_t bin_len, int flip)
{
	static const char *const ids[3] = { "a@x", "b c/d%@x", "empty@x" };
	struct arena *a = arena_new(0);
	struct wss_policy pol = t_policy(fx.ring, 0);
	struct wss_part parts[3], orig[3];
	unsigned char *bin = malloc(bin_len);
	xmlDocPtr doc = NULL, doc2 = NULL;
	xmlNodePtr sec;
	xmlChar *out = NULL;
	struct wss_dec_report rep;
	struct err err;
	size_t i;
	int out_len = 0;

	assert_non_null(bin);
	assert_int_equal(RAND_bytes(bin, (int)bin_len), 1);
	memset(parts, 0, sizeof(parts));
	for (i = 0; i < 3; i++) {
		parts[i].content_id = ids[i];
		parts[i].content_type = i == 0 ? "application/xml" :
		    "application/gzip";
	}
	parts[0].data = (const unsigned char *)"<doc>hello</doc>";
	parts[0].len = 16;
	parts[1].data = bin;
	parts[1].len = bin_len;
	parts[2].data = (const unsigned char *)"";
	memcpy(orig, parts, sizeof(parts));
	err_clear(&err);
	assert_int_equal(xml_parse(a, rt_envelope, strlen(rt_envelope), NULL,
	    &doc, &err), 0);
	sec = t_security(doc);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 3, fx.cert,
	    &err), 0);
	t_rt_check(a, sec, parts, orig, 3);
	xmlDocDumpMemory(doc, &out, &out_len);
	assert_int_equal(xml_parse(a, (const char *)out, (size_t)out_len, NULL,
	    &doc2, &err), 0);
	xmlFree(out);
	/* the wrong recipient key fails, the right one decrypts */
	pol.decrypt_keys = fx.ring_other;
	assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts, 3, &pol,
	    &rep, &err), -1);
	t_same_0102(&err, "round trip, other key");
	pol.decrypt_keys = fx.ring;
	err_clear(&err);
	if (flip) {
		struct wss_part enc[3];
		/* the sender may have left the ciphertext in a read-only
		 * spool mapping (a large part, issue 14): flip a copy */
		unsigned char *ct = malloc(parts[1].len);

		assert_non_null(ct);
		memcpy(ct, parts[1].data, parts[1].len);
		ct[parts[1].len - 1] ^= 1;
		parts[1].data = ct;
		memcpy(enc, parts, sizeof(enc));
		assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts,
		    3, &pol, &rep, &err), -1);
		t_same_0102(&err, "round trip, last tag byte");
		assert_memory_equal(parts, enc, sizeof(enc));
		free(ct);
		goto out;
	}
	assert_int_equal(wss_decrypt(a, doc2, t_security(doc2), parts, 3, &pol,
	    &rep, &err), 0);
	assert_int_equal(rep.n_decrypted, 3);
	for (i = 0; i < 3; i++) {
		assert_int_equal(parts[i].len, orig[i].len);
		assert_memory_equal(parts[i].data, orig[i].data, orig[i].len);
	}
out:
	free(bin);
	arena_free(a);
}

static void
test_round_trip(void **state)
{
	(void)state;
	t_round_trip(1000, 0);
}

/* Issue 14: parts over several SPOOL_CHUNKs decrypted into a spool file
 * (threshold 0); a tag failure at the end of the last chunk: EBMS:0102,
 * nothing changed. */
static void
test_round_trip_spooled(void **state)
{
	char dir[] = "/tmp/as4gw-test-dec-XXXXXX";
	struct spool *sp = t_spool_bind(dir, 0);

	(void)state;
	t_round_trip(3 * SPOOL_CHUNK + 1, 0);
	t_round_trip(SPOOL_CHUNK - 1, 0);
	t_round_trip(2 * SPOOL_CHUNK + 5, 1);
	(void)spool_bind(NULL);
	spool_free(sp);
	assert_int_equal(rmdir(dir), 0);
}

/* sender_encrypt_parts() refusals leave document and parts unchanged. */
static void
test_encrypt_refusals(void **state)
{
	struct arena *a = arena_new(0);
	struct wss_part parts[2];
	xmlDocPtr doc = NULL;
	xmlNodePtr sec;
	struct err err;

	(void)state;
	memset(parts, 0, sizeof(parts));
	parts[0].content_id = "a@x";
	parts[0].data = (const unsigned char *)"x";
	parts[0].len = 1;
	parts[1].data = (const unsigned char *)"y"; /* no Content-ID */
	parts[1].len = 1;
	err_clear(&err);
	assert_int_equal(xml_parse(a, rt_envelope, strlen(rt_envelope), NULL,
	    &doc, &err), 0);
	sec = t_security(doc);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 0, fx.cert,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	err_clear(&err);
	assert_int_equal(sender_encrypt_parts(a, doc, sec, parts, 2, fx.cert,
	    &err), -1);
	assert_int_equal(err.kind, ERR_INTERNAL);
	assert_int_equal(xml_count(sec, NULL, NULL), 1);
	assert_string_equal((const char *)parts[0].data, "x");
	assert_null(parts[0].content_type);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_vector_label),
		cmocka_unit_test(test_oaep_usable),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_generated_spooled),
		cmocka_unit_test(test_mask_store),
		cmocka_unit_test(test_nothing_encrypted),
		cmocka_unit_test(test_keyring),
		cmocka_unit_test(test_corpus_compressed),
		cmocka_unit_test(test_corpus_issuerserial),
		cmocka_unit_test(test_corpus_bundled),
		cmocka_unit_test(test_corpus_wrong_encrypted),
		cmocka_unit_test(test_corpus_tampered),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_spooled),
		cmocka_unit_test(test_encrypt_refusals),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
