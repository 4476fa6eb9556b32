/*
 * testagree — the fixture shared by the test_wss_agree_*.c programs (see
 * testagree.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "testagree.h"
#include "testkeys.h"

const char *const k_names[K_N] = { "x1", "x2", "p256", "p384",
	"bp256", "p256b", "rsa" };
const char *const k_gen[K_N] = {
	"-algorithm X25519", "-algorithm X25519",
	"-algorithm EC -pkeyopt ec_paramgen_curve:P-256",
	"-algorithm EC -pkeyopt ec_paramgen_curve:P-384",
	"-algorithm EC -pkeyopt ec_paramgen_curve:brainpoolP256r1",
	"-algorithm EC -pkeyopt ec_paramgen_curve:P-256",
	"-algorithm RSA -pkeyopt rsa_keygen_bits:2048",
};

struct testagree_fx fx;

/* fx.dir/name into out. */
const char *
tpath(char *out, size_t size, const char *name, const char *ext)
{
	(void)snprintf(out, size, "%s/%s%s", fx.dir, name, ext);
	return out;
}

/* Load pair i: its keyring, certificate and private key. */
static int
t_load(int i)
{
	char c[128], k[128];
	struct wss_keyring_spec spec = { tpath(c, sizeof(c), k_names[i],
	    ".crt"), tpath(k, sizeof(k), k_names[i], ".key"), 0 };
	struct err err;
	FILE *f;

	err_clear(&err);
	if (wss_keyring_new(&spec, 1, &fx.ring[i], &err) < 0) {
		fprintf(stderr, "keyring %s: %s %s\n", k_names[i], err.msg,
		    err.detail);
		return -1;
	}
	if ((f = fopen(c, "r")) == NULL)
		return -1;
	fx.cert[i] = PEM_read_X509(f, NULL, NULL, NULL);
	(void)fclose(f);
	if ((f = fopen(k, "r")) == NULL)
		return -1;
	fx.priv[i] = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	(void)fclose(f);
	return fx.cert[i] != NULL && fx.priv[i] != NULL ? 0 : -1;
}

/* A CA (P-256) and the pairs of k_names, each certificate issued by the CA
 * with an SKI (testkeys.h). */
int
group_setup(void **state)
{
	struct err err;
	int i;

	(void)state;
	err_clear(&err);
	xml_global_init();
	if (wss_global_init(&err) < 0 || testkeys_make(fx.dir,
	    "test_wss_agree", "subjectKeyIdentifier=hash") < 0)
		return -1;
	for (i = 0; i < K_N; i++)
		if (testkeys_leaf(fx.dir, k_names[i], k_gen[i]) < 0)
			return -1;
	for (i = 0; i < K_N; i++)
		if (t_load(i) < 0)
			return -1;
	return 0;
}

/* Free the pairs, remove the directory. */
int
group_teardown(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < K_N; i++) {
		wss_keyring_free(fx.ring[i]);
		X509_free(fx.cert[i]);
		EVP_PKEY_free(fx.priv[i]);
	}
	testkeys_remove(fx.dir);
	wss_global_shutdown();
	return 0;
}

/* The first element {ns}name at or below n (document order), or NULL. */
xmlNodePtr
t_find(xmlNodePtr n, const char *ns, const char *name)
{
	xmlNodePtr c, hit;

	if (n == NULL)
		return NULL;
	if (n->type == XML_ELEMENT_NODE && xml_is(n, ns, name))
		return n;
	for (c = n->children; c != NULL; c = c->next)
		if ((hit = t_find(c, ns, name)) != NULL)
			return hit;
	return NULL;
}

/* Unlink and free node. */
void
t_drop(xmlNodePtr node)
{
	assert_non_null(node);
	xmlUnlinkNode(node);
	xmlFreeNode(node);
}

/* The decoded base64 text of node (arena). */
unsigned char *
t_b64(struct arena *a, const xmlNode *node, size_t *ret_len)
{
	const char *t = xml_text(a, node);
	unsigned char *v = NULL;

	assert_non_null(t);
	assert_int_equal(codec_unbase64(a, t, strlen(t), &v, ret_len), 0);
	return v;
}

/* Parse text into a document owned by the arena. */
xmlDocPtr
t_parse(struct arena *a, const char *text, size_t len)
{
	xmlDocPtr doc = NULL;
	struct err err;

	err_clear(&err);
	if (xml_parse(a, text, len, NULL, &doc, &err) < 0)
		fail_msg("parse: %s %s", err.msg, err.detail);
	return doc;
}

/* err is the EBMS code want. */
void
t_code(const struct err *err, const char *want, const char *what)
{
	if (err->ebms_code == NULL || strcmp(err->ebms_code, want) != 0)
		fail_msg("%s: want %s, got %s \"%s\" (%s)", what, want,
		    err->ebms_code != NULL ? err->ebms_code : "(none)",
		    err->msg, err->detail);
	if (strcmp(want, "EBMS:0102") == 0)
		assert_string_equal(err->msg, "decryption failed");
}
