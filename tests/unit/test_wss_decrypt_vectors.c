/*
 * Unit tests for src/wss/wss_oaep.c: the RSA-OAEP key transport transforms
 * against the W3C XML Encryption 1.1 interop vectors (../shared/vectors),
 * their labels and which OAEP parameters are usable (testdecrypt.h: the
 * keys).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testdecrypt.h"
#include "testutil.h"

#define VECTORS "vectors/xmlsec/xmlenc11-interop-2012/"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_vector_label),
		cmocka_unit_test(test_oaep_usable),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
