/*
 * Unit tests for wss_policy.c: the algorithm vocabulary — exact URIs
 * mapped to their bit (SHA-1, MD5 and near misses to none) and the
 * configuration names of algorithm lists.  (wss_inbound.c:
 * test_wss_inbound*.c.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/err.h"
#include "wss/wss.h"

/* Exact URIs map to their bit; SHA-1, MD5 and near misses to 0. */
static void
test_alg_from_uri(void **state)
{
	static const struct { const char *uri; unsigned bit; } t[] = {
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
		    WSS_SIG_RSA_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
		    WSS_SIG_RSA_SHA384 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
		    WSS_SIG_RSA_SHA512 },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
		    WSS_SIG_ECDSA_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
		    WSS_SIG_ECDSA_SHA384 },
		{ "http://www.w3.org/2001/04/xmlenc#sha256", WSS_DIG_SHA256 },
		{ "http://www.w3.org/2001/04/xmldsig-more#sha384",
		    WSS_DIG_SHA384 },
		{ "http://www.w3.org/2001/04/xmlenc#sha512", WSS_DIG_SHA512 },
		{ "http://www.w3.org/2009/xmlenc11#rsa-oaep", WSS_KT_RSA_OAEP },
		{ "http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p",
		    WSS_KT_RSA_OAEP_MGF1P },
		{ "http://www.w3.org/2001/04/xmlenc#rsa-1_5", WSS_KT_RSA_1_5 },
		{ "http://www.w3.org/2009/xmlenc11#aes128-gcm",
		    WSS_ENC_AES128_GCM },
		{ "http://www.w3.org/2009/xmlenc11#aes256-gcm",
		    WSS_ENC_AES256_GCM },
		{ "http://www.w3.org/2001/04/xmlenc#aes128-cbc",
		    WSS_ENC_AES_CBC },
		{ "http://www.w3.org/2001/04/xmlenc#aes256-cbc",
		    WSS_ENC_AES_CBC },
		{ "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512",
		    WSS_SIG_ECDSA_SHA512 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519",
		    WSS_SIG_ED25519 },
		{ "http://www.w3.org/2021/04/xmldsig-more#x25519",
		    WSS_KA_X25519 },
		{ "http://www.w3.org/2009/xmlenc11#ECDH-ES", WSS_KA_ECDH_ES },
		{ "http://www.w3.org/2021/04/xmldsig-more#hkdf", WSS_KDF_HKDF },
		{ "http://www.w3.org/2009/xmlenc11#ConcatKDF", WSS_KDF_CONCAT },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes128", WSS_KW_AES128 },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes192", WSS_KW_AES192 },
		{ "http://www.w3.org/2001/04/xmlenc#kw-aes256", WSS_KW_AES256 },
		/* Ed25519ph / Ed25519ctx and Ed448 are not eDelivery's */
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519ph", 0 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519ctx", 0 },
		{ "http://www.w3.org/2021/04/xmldsig-more#eddsa-ed448", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#eddsa-ed25519", 0 },
		{ "http://www.w3.org/2009/xmlenc11#ecdh-es", 0 },
		{ "http://www.w3.org/2000/09/xmldsig#rsa-sha1", 0 },
		{ "http://www.w3.org/2000/09/xmldsig#sha1", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#md5", 0 },
		{ "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256x", 0 },
		{ "HTTP://www.w3.org/2001/04/xmldsig-more#rsa-sha256", 0 },
		{ "http://www.w3.org/2001/04/xmlenc#sha384", 0 },
		{ "", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (wss_alg_from_uri(t[i].uri) != t[i].bit)
			fail_msg("%s: got %#x", t[i].uri,
			    wss_alg_from_uri(t[i].uri));
	assert_int_equal(wss_alg_from_uri(NULL), 0);
}

/* Configuration names, separators, "default"; unknown names refused. */
static void
test_alg_parse(void **state)
{
	static const struct { const char *list; int rc; unsigned bits; } t[] = {
		{ "rsa-sha256 sha256", 0, WSS_SIG_RSA_SHA256 | WSS_DIG_SHA256 },
		{ " ecdsa-sha384,\tsha512\n", 0,
		    WSS_SIG_ECDSA_SHA384 | WSS_DIG_SHA512 },
		{ "default rsa-1_5 aes-cbc", 0,
		    WSS_ALGS_DEFAULT | WSS_KT_RSA_1_5 | WSS_ENC_AES_CBC },
		{ "rsa-sha384 rsa-sha512 ecdsa-sha256 sha384 rsa-oaep "
		    "rsa-oaep-mgf1p aes128-gcm aes256-gcm", 0,
		    WSS_SIG_RSA_SHA384 | WSS_SIG_RSA_SHA512 |
		    WSS_SIG_ECDSA_SHA256 | WSS_DIG_SHA384 | WSS_KT_RSA_OAEP |
		    WSS_KT_RSA_OAEP_MGF1P | WSS_ENC_AES128_GCM |
		    WSS_ENC_AES256_GCM },
		{ "edelivery-1.x", 0, WSS_ALGS_DEFAULT },
		{ "edelivery-2.0", 0, WSS_ALGS_EDELIVERY_2_0 },
		{ "edelivery-2.0-ec", 0, WSS_ALGS_EDELIVERY_2_0_EC },
		{ "ecdsa-sha256 sha256 ecdh-es concatkdf kw-aes128 aes128-gcm",
		    0, WSS_SIG_ECDSA_SHA256 | WSS_DIG_SHA256 | WSS_KA_ECDH_ES |
		    WSS_KDF_CONCAT | WSS_KW_AES128 | WSS_ENC_AES128_GCM },
		{ "eddsa-ed25519 x25519 hkdf kw-aes192 ecdsa-sha512", 0,
		    WSS_SIG_ED25519 | WSS_KA_X25519 | WSS_KDF_HKDF |
		    WSS_KW_AES192 | WSS_SIG_ECDSA_SHA512 },
		{ "edelivery-2", -1, 0 },
		{ "rsa-sha256 rsa-sha1", -1, 0 },
		{ "md5", -1, 0 },
		{ "RSA-SHA256", -1, 0 },
		{ "", -1, 0 },
		{ "  ", -1, 0 },
	};
	struct err err;
	unsigned bits;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		err_clear(&err);
		bits = 12345;
		assert_int_equal(wss_alg_parse(t[i].list, &bits, &err),
		    t[i].rc);
		if (t[i].rc == 0)
			assert_int_equal(bits, t[i].bits);
		else
			assert_true(bits == 12345 && err.kind == ERR_CONF);
	}
	err_clear(&err);
	assert_int_equal(wss_alg_parse("sha256 bogus-alg", &bits, &err), -1);
	assert_non_null(strstr(err.msg, "bogus-alg"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alg_from_uri),
		cmocka_unit_test(test_alg_parse),
	};

	return cmocka_run_group_tests_name("wss policy", tests, NULL, NULL);
}
