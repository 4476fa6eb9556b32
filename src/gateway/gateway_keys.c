/*
 * gateway_keys — the gateway's key pairs as its legs use them (issue 13):
 * the signing pairs (<signing>, <signingKeys>) loaded once; per leg the
 * pair that signs its Receipts and eb:Errors (receipt/@signingKey, else
 * by its profile: the default pair for 1.x, the first Ed25519 pair for
 * eDelivery AS4 2.0, the first EC pair for its EC profile); and the
 * decryption pairs of a 2.0 leg checked against its algorithms.  A key that cannot
 * serve a leg is a start-up error naming the leg, never a surprise on the
 * first message.
 */
#include "gateway.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>

/* Key transport and agreement bits: a leg allowing none decrypts nothing. */
#define GATEWAY_KEYS_DEC_ALGS                                                \
	(WSS_KT_RSA_OAEP | WSS_KT_RSA_OAEP_MGF1P | WSS_KT_RSA_1_5 |          \
	    WSS_KA_X25519 | WSS_KA_ECDH_ES)

/* Load decryption pairs (conf's words -> wss's) into *ret. */
int
gateway_keyring(const struct conf_keypair *v, size_t n,
    struct wss_keyring **ret, struct err *err)
{
	struct wss_keyring_spec spec[WSS_KEYRING_MAX];
	size_t i;

	for (i = 0; i < n && i < WSS_KEYRING_MAX; i++) {
		spec[i].cert = v[i].cert;
		spec[i].key = v[i].key;
		spec[i].retiring = v[i].retiring;
	}
	return wss_keyring_new(spec, n, ret, err);
}

/* The smallest signal wss_sign_envelope() signs: eb:Messaging and Body. */
static const char gateway_keys_probe[] =
    "<S:Envelope xmlns:S=\"http://www.w3.org/2003/05/soap-envelope\">"
    "<S:Header><eb:Messaging xmlns:eb=\"http://docs.oasis-open.org/"
    "ebxml-msg/ebms/v3.0/ns/core/200704/\"/></S:Header><S:Body/>"
    "</S:Envelope>";

/*
 * Sign a throw-away signal with pair i: a pair this build cannot sign
 * Receipts with (a key type or curve its signer lacks) stops the start
 * instead of failing every Receipt of the legs that use it.
 */
static int
gateway_keys_probe_sign(const struct gateway *gw, size_t i, struct err *err)
{
	xmlDocPtr doc = xmlReadMemory(gateway_keys_probe,
	    (int)strlen(gateway_keys_probe), NULL, NULL, XML_PARSE_NONET);
	struct wss_keytype kt;
	struct err e = {0};
	int rc;

	if (doc == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	rc = wss_sign_envelope(doc, gw->keys[i], &e);
	xmlFreeDoc(doc);
	if (rc == 0)
		return 0;
	wss_keytype_of(gw->keys[i], &kt);
	return err_set(err, ERR_CONF, NULL, "signing pair \"%s\" (%s) cannot "
	    "sign a Receipt: %s", gw->conf->signing[i].id, kt.name, e.msg);
}

/* Every signing pair of the configuration into gw->keys (gw->key: the
 * first, the default) and the default decryption pairs. */
int
gateway_keys_load(struct gateway *gw, struct err *err)
{
	const struct conf *c = gw->conf;
	struct wss_keytype kt;
	size_t i;

	for (i = 0; i < c->n_signing; i++) {
		if (wss_key_load(c->signing[i].cert, c->signing[i].key,
		    &gw->keys[i], err) == -1)
			return -1;
		gw->n_keys = i + 1;
		wss_keytype_of(gw->keys[i], &kt);
		if (wss_keytype_sig_algs(kt.kind) == 0)
			return err_set(err, ERR_CONF, NULL, "signing pair "
			    "\"%s\" (%s) cannot sign", c->signing[i].id,
			    kt.name);
		if (gateway_keys_probe_sign(gw, i, err) == -1)
			return -1;
	}
	gw->key = gw->keys[0];
	return gateway_keyring(c->decrypt, c->n_decrypt, &gw->decrypt, err);
}

/* The key kind a leg's profile signs with, for a message. */
static const char *
gateway_keys_wanted(enum conf_profile p)
{
	return p == CONF_PROFILE_2_0 ? "an Ed25519" :
	    p == CONF_PROFILE_2_0_EC ? "an EC" : "a";
}

/*
 * Does a key of this kind sign the Receipts of a leg under profile p?
 * edelivery-2.0: Ed25519; edelivery-2.0-ec: EC (any allowed curve, so
 * brainpool for BDEW); edelivery-1.x: any key that signs (the leg's
 * <algorithms> restricts what partners send, not what it answers with).
 */
static int
gateway_keys_sign_fits(enum conf_profile p, enum wss_keykind kind)
{
	switch (p) {
	case CONF_PROFILE_2_0: return kind == WSS_KEY_ED25519;
	case CONF_PROFILE_2_0_EC: return kind == WSS_KEY_EC;
	default: return wss_keytype_sig_algs(kind) != 0;
	}
}

/*
 * The pair that signs the leg's Receipts and eb:Errors (gl->sign,
 * gl->sign_index): the one receipt/@signingKey names, which must fit the
 * leg's profile; else for edelivery-1.x the default <signing> pair, for
 * the 2.0 profiles the first pair of their kind.
 */
static int
gateway_keys_receipt(const struct gateway *gw, const struct pmode_leg *leg,
    struct gateway_leg *gl, struct err *err)
{
	const struct conf *c = gw->conf;
	struct wss_keytype kt;
	size_t i;

	for (i = 0; i < gw->n_keys; i++) {
		if (leg->receipt_key >= 0 && i != (size_t)leg->receipt_key)
			continue;
		wss_keytype_of(gw->keys[i], &kt);
		if (gateway_keys_sign_fits(leg->profile, kt.kind)) {
			gl->sign = gw->keys[i];
			gl->sign_index = i;
			return 0;
		}
		if (leg->receipt_key >= 0)
			return err_set(err, ERR_CONF, NULL, "pmode \"%s\": "
			    "receipt signingKey \"%s\" (%s) does not fit %s",
			    leg->id, c->signing[i].id, kt.name,
			    conf_profile_name(leg->profile));
	}
	return err_set(err, ERR_CONF, NULL, "pmode \"%s\": no gateway "
	    "signing pair fits %s: add %s pair to <signingKeys> (or name "
	    "one with receipt/@signingKey)", leg->id,
	    conf_profile_name(leg->profile), gateway_keys_wanted(leg->profile));
}

/* fit[i] = pair i of the leg can receive a content key under algs. */
static int
gateway_keys_fit(const struct pmode_leg *leg, unsigned algs, int *fit,
    size_t *ret_n_fit, struct err *err)
{
	struct wss_keytype kt;
	size_t i, n = 0;

	for (i = 0; i < leg->n_decrypt; i++) {
		if (wss_keytype_file(leg->decrypt[i].cert, &kt, err) == -1)
			return -1;
		fit[i] = (wss_keytype_dec_algs(kt.kind) & algs) != 0;
		n += fit[i] != 0;
		if (!fit[i] && !leg->decrypt_default)
			return err_set(err, ERR_CONF, NULL, "pmode \"%s\": "
			    "decryption certificate \"%s\" (%s) does not "
			    "fit %s", leg->id, leg->decrypt[i].cert, kt.name,
			    conf_profile_name(leg->profile));
	}
	*ret_n_fit = n;
	return 0;
}

/*
 * The leg's decryption pairs (gl->decrypt; NULL: the gateway's default
 * keyring).  A leg under a 2.0 profile that may receive encrypted
 * messages needs pairs that fit its algorithms (X25519 for edelivery-2.0,
 * EC for edelivery-2.0-ec or an ecdh-es list): its own must all fit; of
 * the gateway's default pairs it keeps those that fit (a mixed
 * <decryptionKeys> serves 1.x and 2.0 legs alike), and none fitting is an
 * error.  A 1.x leg keeps every pair: what it does not allow is refused
 * per message (EBMS:0103), as before profiles.
 */
static int
gateway_keys_decrypt(const struct gateway *gw, const struct pmode_leg *leg,
    unsigned algs, struct gateway_leg *gl, struct err *err)
{
	struct conf_keypair keep[CONF_DECRYPT_MAX];
	int fit[CONF_DECRYPT_MAX];
	size_t i, n_fit = 0, k = 0;

	if (leg->profile == CONF_PROFILE_1X || leg->encryption == CONF_NEVER ||
	    (algs & GATEWAY_KEYS_DEC_ALGS) == 0) {
		if (leg->decrypt_default)
			return 0;
		return gateway_keyring(leg->decrypt, leg->n_decrypt,
		    &gl->decrypt, err);
	}
	if (gateway_keys_fit(leg, algs, fit, &n_fit, err) == -1)
		return -1;
	if (n_fit == 0)
		return err_set(err, ERR_CONF, NULL, "pmode \"%s\": none of "
		    "the gateway's decryption pairs fits %s (an edelivery-2.0 "
		    "leg decrypts with X25519 pairs, an edelivery-2.0-ec leg "
		    "with EC pairs): give the leg its <decryption>", leg->id,
		    conf_profile_name(leg->profile));
	if (leg->decrypt_default && n_fit == leg->n_decrypt)
		return 0;
	for (i = 0; i < leg->n_decrypt; i++)
		if (fit[i])
			keep[k++] = leg->decrypt[i];
	return gateway_keyring(keep, k, &gl->decrypt, err);
}

/* The keys of one leg under its allowed algorithms; see gateway.h. */
int
gateway_keys_leg(const struct gateway *gw, const struct pmode_leg *leg,
    unsigned algs, struct gateway_leg *gl, struct err *err)
{
	if (gateway_keys_decrypt(gw, leg, algs, gl, err) == -1 ||
	    gateway_keys_receipt(gw, leg, gl, err) == -1)
		return -1;
	return 0;
}
