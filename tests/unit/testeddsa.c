/*
 * testeddsa — the fixture shared by the test_wss_eddsa_*.c programs (see
 * testeddsa.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testeddsa.h"
#include "testkeys.h"

const struct testeddsa_ids ids[I_N] = {
	{ "ed25519", "-algorithm ED25519", MORE21 "eddsa-ed25519" },
	{ "p256", "-algorithm EC -pkeyopt ec_paramgen_curve:P-256",
	  MORE "ecdsa-sha256" },
	{ "p384", "-algorithm EC -pkeyopt ec_paramgen_curve:P-384",
	  MORE "ecdsa-sha384" },
	{ "p521", "-algorithm EC -pkeyopt ec_paramgen_curve:P-521",
	  MORE "ecdsa-sha512" },
	{ "bp256", "-algorithm EC -pkeyopt ec_paramgen_curve:brainpoolP256r1",
	  MORE "ecdsa-sha256" },
	{ "rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:2048",
	  MORE "rsa-sha256" },
};

struct testeddsa_fx fx;

/* fx.dir/name into out. */
const char *
path(char *out, size_t size, const char *name)
{
	(void)snprintf(out, size, "%s/%s", fx.dir, name);
	return out;
}

/* The CA, one leaf per identity (testkeys.h), and the leaves that must be
 * refused: secp256k1, explicit P-256 parameters. */
static int
pki_make(void)
{
	if (testkeys_make(fx.dir, "test_wss_eddsa",
	    "keyUsage=critical,digitalSignature") < 0)
		return -1;
	for (int i = 0; i < I_N; i++)
		if (testkeys_leaf(fx.dir, ids[i].name, ids[i].genpkey) < 0)
			return -1;
	if (testkeys_leaf(fx.dir, "k1", "-algorithm EC -pkeyopt "
	    "ec_paramgen_curve:secp256k1") < 0 ||
	    testkeys_sh(fx.dir, "openssl x509 -in k1.crt -outform DER | "
	    "base64 -w0 >k1.b64") < 0)
		return -1;
	return testkeys_sh(fx.dir, "openssl ecparam -name prime256v1 "
	    "-param_enc explicit -genkey -noout -out %s.key 2>/dev/null && "
	    "openssl req -x509 -key %s.key -subj /CN=explicit -days 30 "
	    "-out explicit.crt 2>/dev/null", "explicit", "explicit");
}

/* Trust: signer fx.dir/<name>.crt, anchor fx.dir/ca.crt. */
int
trust_make(const char *name, struct trust **ret)
{
	char crt[128], ca[128], file[64];
	const char *s = crt, *c = ca;
	struct err err;

	err_clear(&err);
	(void)snprintf(file, sizeof(file), "%s.crt", name);
	path(crt, sizeof(crt), file);
	path(ca, sizeof(ca), "ca.crt");
	return trust_new(&(struct trust_files){ .signers = &s, .n_signers = 1,
	    .anchors = &c, .n_anchors = 1 }, ret, &err);
}

/* Make the PKI, load every pair and certificate, build the trusts. */
int
group_setup(void **state)
{
	char crt[128], key[128], f1[64], f2[64];
	struct err err;

	(void)state;
	err_clear(&err);
	xml_global_init();
	if (wss_global_init(&err) < 0 || pki_make() < 0)
		return -1;
	for (int i = 0; i < I_N; i++) {
		(void)snprintf(f1, sizeof(f1), "%s.crt", ids[i].name);
		(void)snprintf(f2, sizeof(f2), "%s.key", ids[i].name);
		if (wss_key_load(path(crt, sizeof(crt), f1),
		    path(key, sizeof(key), f2), &fx.key[i], &err) < 0 ||
		    wss_cert_load(crt, &fx.cert[i], &err) < 0 ||
		    trust_make(ids[i].name, &fx.trust[i]) < 0) {
			fprintf(stderr, "setup %s: %s %s\n", ids[i].name,
			    err.msg, err.detail);
			return -1;
		}
	}
	return 0;
}

/* Free everything, remove the temporary PKI. */
int
group_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < I_N; i++) {
		wss_key_free(fx.key[i]);
		wss_cert_free(fx.cert[i]);
		trust_free(fx.trust[i]);
	}
	testkeys_remove(fx.dir);
	wss_global_shutdown();
	return 0;
}

/* Parse with the hardened parser; the arena owns the document. */
xmlDocPtr
parse(struct arena *a, const char *xml, size_t len)
{
	struct err err;
	xmlDocPtr doc = NULL;

	err_clear(&err);
	if (xml_parse(a, xml, len, NULL, &doc, &err) != 0)
		fail_msg("parse: %s %s", err.msg, err.detail);
	return doc;
}

/* Serialise doc into the arena. */
char *
dump(struct arena *a, xmlDocPtr doc)
{
	xmlChar *mem = NULL;
	int len = 0;
	char *s;

	xmlDocDumpMemoryEnc(doc, &mem, &len, "UTF-8");
	assert_non_null(mem);
	s = arena_strndup(a, (const char *)mem, (size_t)len);
	xmlFree(mem);
	return s;
}

/* The decoded SignatureValue of text (arena). */
unsigned char *
sigvalue(struct arena *a, const char *text, size_t *ret_len)
{
	const char *b = strstr(text, "SignatureValue>");
	const char *e = b != NULL ? strstr(b, "</") : NULL;
	unsigned char *raw = NULL;

	assert_non_null(e);
	b += strlen("SignatureValue>");
	assert_int_equal(codec_unbase64(a, b, (size_t)(e - b), &raw,
	    ret_len), 0);
	return raw;
}

/* text with its SignatureValue replaced by raw (arena). */
char *
with_sigvalue(struct arena *a, const char *text, const unsigned char *raw,
    size_t len)
{
	const char *b = strstr(text, "SignatureValue>");
	const char *e = strstr(b, "</");
	char *b64 = codec_base64(a, raw, len);

	b += strlen("SignatureValue>");
	return arena_sprintf(a, "%.*s%s%s", (int)(b - text), text, b64, e);
}

/* text with the first from replaced by to (arena). */
char *
replace(struct arena *a, const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);

	if (at == NULL)
		fail_msg("\"%s\" not in the text", from);
	return arena_sprintf(a, "%.*s%s%s", (int)(at - text), text, to,
	    at + strlen(from));
}

/* text (Ed25519-signed) with L added to the S half of its signature
 * (arena).  L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032
 * 5.1); S + L < 2^256 since S < L. */
char *
ed25519_s_plus_l(struct arena *a, const char *text)
{
	static const unsigned char l[32] = {  /* little-endian, as S is */
		0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58,
		0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
	};
	size_t len;
	unsigned char *raw = sigvalue(a, text, &len);
	unsigned carry = 0;

	assert_int_equal(len, 64);
	for (int i = 0; i < 32; i++) {
		carry += (unsigned)raw[32 + i] + l[i];
		raw[32 + i] = (unsigned char)carry;
		carry >>= 8;
	}
	assert_int_equal(carry, 0);
	return with_sigvalue(a, text, raw, len);
}
