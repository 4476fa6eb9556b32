/*
 * conf_keys.c — the gateway's key pairs.  Signing: <signing> (the default)
 * and the named <signingKeys><signing id> pairs a leg's Receipts and
 * errors may be signed with (issue 13: RSA for 1.x, Ed25519 for eDelivery
 * AS4 2.0, EC for its EC profile).  Decryption: a leg's <decryption>
 * elements and the gateway-wide default <decryptionKeys> (else the
 * <signing> pair).  Several pairs exist for a key rotation: partners switch
 * to the new encryption certificate at their own pace, and until the last
 * one has, the old key must still decrypt (README "Rotating keys").  Which
 * pair decrypts a message is the EncryptedKey's key reference's business
 * (wss_keyring.c); here the pairs are only read and checked for meaning.
 */
#include "conf_int.h"

#include <stdlib.h>
#include <string.h>

#include "../xml/xml.h"

/* @retiring of a <decryption>: 1 for "true"/"1" (xs:boolean). */
static int
conf_keys_retiring(const struct conf_ctx *x, const xmlNode *n)
{
	const char *v = conf_attr_get(x, n, "retiring");

	return v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

/*
 * Every <decryption> child of parent into v[0..*ret_n): at most
 * CONF_DECRYPT_MAX, no certificate file twice, not all of them retiring.
 * prefix starts every message.  0 with *ret_n 0 when there is none.
 */
static int
conf_keys_list(struct conf_ctx *x, const xmlNode *parent, const char *prefix,
    struct conf_keypair *v, size_t *ret_n)
{
	xmlNodePtr n;
	size_t i, k = 0, current = 0;

	for (n = xml_child(parent, CONF_NS, "decryption"); n != NULL;
	    n = xml_next(n, CONF_NS, "decryption")) {
		if (k == CONF_DECRYPT_MAX)
			return conf_fail(x, n, "%smore than %d <decryption> "
			    "pairs", prefix, CONF_DECRYPT_MAX);
		*ret_n = k + 1;  /* what conf_pair allocates is freed */
		if (conf_pair(x, n, prefix, &v[k].cert, &v[k].key) == -1)
			return -1;
		k++;
		for (i = 0; i + 1 < k; i++)
			if (strcmp(v[i].cert, v[k - 1].cert) == 0)
				return conf_fail(x, n, "%sdecryption "
				    "certificate \"%s\" listed twice", prefix,
				    v[i].cert);
		v[k - 1].retiring = conf_keys_retiring(x, n);
		current += !v[k - 1].retiring;
	}
	if (k > 0 && current == 0)
		return conf_fail(x, parent, "%severy <decryption> pair is "
		    "retiring: at least one must be current", prefix);
	return 0;
}

/* Copy n pairs from src into dst (own strings). */
static int
conf_keys_copy(const struct conf_ctx *x, const struct conf_keypair *src,
    size_t n, struct conf_keypair *dst, size_t *ret_n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		dst[i].cert = strdup(src[i].cert);
		dst[i].key = strdup(src[i].key);
		dst[i].retiring = src[i].retiring;
		*ret_n = i + 1;
		if (dst[i].cert == NULL || dst[i].key == NULL)
			return conf_oom(x);
	}
	return 0;
}

/* <decryptionKeys> of <gateway>, else the <signing> pair (read before). */
int
conf_keys_gateway(struct conf_ctx *x, const xmlNode *gw)
{
	struct conf *c = x->c;
	xmlNodePtr n = xml_child(gw, CONF_NS, "decryptionKeys");
	struct conf_keypair sign = { c->sign_cert, c->sign_key, 0 };

	if (n != NULL)
		return conf_keys_list(x, n, "gateway decryptionKeys: ",
		    c->decrypt, &c->n_decrypt);
	c->decrypt_signing = 1;
	return conf_keys_copy(x, &sign, 1, c->decrypt, &c->n_decrypt);
}

/* A leg's <decryption> pairs, else copies of the gateway's default. */
int
conf_keys_leg(struct conf_ctx *x, const xmlNode *sec, struct pmode_leg *leg)
{
	const char *prefix;

	if (sec != NULL && xml_child(sec, CONF_NS, "decryption") != NULL) {
		prefix = arena_sprintf(x->a, "pmode \"%s\": ", leg->id);
		if (prefix == NULL)
			return conf_oom(x);
		return conf_keys_list(x, sec, prefix, leg->decrypt,
		    &leg->n_decrypt);
	}
	leg->decrypt_default = 1;
	return conf_keys_copy(x, x->c->decrypt, x->c->n_decrypt, leg->decrypt,
	    &leg->n_decrypt);
}

/* The index of the signing pair with this id, or -1. */
int
conf_keys_signing_find(const struct conf_ctx *x, const char *id)
{
	size_t i;

	for (i = 0; i < x->c->n_signing; i++)
		if (strcmp(x->c->signing[i].id, id) == 0)
			return (int)i;
	return -1;
}

/*
 * One <signing> element n into the next pair of x->c->signing: its
 * certificate and key, and its id (dflt when the attribute is absent;
 * NULL: the id is required), not one taken before.
 */
static int
conf_keys_signing_one(struct conf_ctx *x, const xmlNode *n,
    const char *prefix, const char *dflt)
{
	struct conf *c = x->c;
	struct conf_signkey *s = &c->signing[c->n_signing];
	char *id = NULL;

	if (c->n_signing == CONF_SIGN_MAX)
		return conf_fail(x, n, "%smore than %d signing pairs", prefix,
		    CONF_SIGN_MAX);
	if (conf_attr(x, n, "id", &id) == -1)
		return -1;
	if (id == NULL && dflt == NULL)
		return conf_fail(x, n, "%ssigning without id", prefix);
	if (id == NULL && (id = strdup(dflt)) == NULL)
		return conf_oom(x);
	if (conf_keys_signing_find(x, id) != -1) {
		(void)conf_fail(x, n, "%ssigning id \"%s\" used twice", prefix,
		    id);
		free(id);
		return -1;
	}
	s->id = id;
	c->n_signing++;         /* what conf_pair reads is freed */
	return conf_pair(x, n, prefix, &s->cert, &s->key);
}

/* <signing> and <signingKeys> of <gateway>; see conf_int.h. */
int
conf_keys_signing(struct conf_ctx *x, const xmlNode *gw)
{
	xmlNodePtr n = xml_child(gw, CONF_NS, "signing");
	xmlNodePtr list = xml_child(gw, CONF_NS, "signingKeys");

	if (n == NULL)
		return conf_fail(x, gw, "gateway: signing missing");
	if (conf_keys_signing_one(x, n, "", "default") == -1)
		return -1;
	x->c->sign_cert = x->c->signing[0].cert;
	x->c->sign_key = x->c->signing[0].key;
	for (n = xml_child(list, CONF_NS, "signing"); n != NULL;
	    n = xml_next(n, CONF_NS, "signing"))
		if (conf_keys_signing_one(x, n, "gateway signingKeys: ",
		    NULL) == -1)
			return -1;
	return 0;
}

/* Free the strings of v[0..n). */
void
conf_keys_signing_free(struct conf_signkey *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].id);
		free(v[i].cert);
		free(v[i].key);
	}
}

/* Free the strings of v[0..n); accepts v NULL with n 0. */
void
conf_keys_free(struct conf_keypair *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].cert);
		free(v[i].key);
	}
}
