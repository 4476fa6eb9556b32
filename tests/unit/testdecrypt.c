/*
 * testdecrypt — the fixture of the test_wss_decrypt_*.c programs: two RSA
 * key pairs with self-signed certificates (gw, other) generated with
 * OpenSSL into a temporary directory, their keyrings, and the helpers the
 * key transport, generated, recorded and round-trip tests share.
 */
#include "testdecrypt.h"

#include <openssl/pem.h>

#include "testutil.h"

struct testdecrypt_fx fx;

/* fx.dir/name into out. */
const char *
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
int
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
int
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
xmlNodePtr
t_security(xmlDocPtr doc)
{
	xmlNodePtr root = xmlDocGetRootElement(doc);
	xmlNodePtr header = xml_child(root, NULL, "Header");

	if (header == NULL)
		header = xml_child(root, NS_SOAP12, "Header");
	return xml_child(header, NS_WSSE, "Security");
}

/* A default policy that decrypts with the pairs of ring. */
struct wss_policy
t_policy(const struct wss_keyring *ring, unsigned extra)
{
	struct wss_policy pol;

	memset(&pol, 0, sizeof(pol));
	pol.algs = WSS_ALGS_DEFAULT | extra;
	pol.decrypt_keys = ring;
	return pol;
}

/* Base64 content of node (arena). */
unsigned char *
t_unbase64(struct arena *a, const xmlNode *node, size_t *ret_len)
{
	char *text = xml_text(a, node);
	unsigned char *out = NULL;

	assert_non_null(text);
	assert_int_equal(codec_unbase64(a, text, strlen(text), &out, ret_len),
	    0);
	return out;
}

/* A spool in a fresh directory (threshold 0, budget max), bound. */
struct spool *
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

/* The first EBMS:0102 answer; every other must be answered the same. */
struct err t_first_0102;

/* Log details of the decryption failures seen (issue 10 item 12). */
char t_details[64][sizeof(((struct err *)0)->detail)];
size_t t_n_details;

/* Compare a decryption failure with the first one seen: the answer (code
 * and msg) identical, the one the generated table gives; the log detail says what failed and is collected. */
void
t_same_0102(const struct err *err, const char *what)
{
	size_t i;

	if (t_first_0102.kind == ERR_NONE) {
		/* what test_generated asserts of the table's first one: every
		 * program compares its answers with the same answer */
		assert_int_equal(err->kind, ERR_EBMS);
		assert_string_equal(err->ebms_code, "EBMS:0102");
		assert_string_equal(err->msg, "decryption failed");
		t_first_0102 = *err;
	}
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
