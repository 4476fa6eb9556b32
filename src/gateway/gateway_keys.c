/*
 * gateway_keys — the gateway's key pairs as its legs use them (issue 13):
 * the signing pairs (<signing>, <signingKeys>) loaded once; per leg the
 * pair that signs its Receipts and eb:Errors (receipt/@signingKey, else
 * the first pair whose key fits the leg's algorithms: RSA for 1.x,
 * Ed25519 for eDelivery AS4 2.0, EC for its EC profile); and its
 * decryption pairs checked against its algorithms.  A key that cannot
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

/* What a leg's algorithms are called in a message: its profile, or "its
 * algorithm list" when it lists them. */
static const char *
gateway_keys_algs_name(const struct pmode_leg *leg)
{
	return leg->algorithms != NULL ? "its <algorithms>" :
	    conf_profile_name(leg->profile);
}

/* The key kind a leg's profile signs with, for a message. */
static const char *
gateway_keys_wanted(const struct pmode_leg *leg)
{
	if (leg->algorithms != NULL)
		return "a";
	switch (leg->profile) {
	case CONF_PROFILE_2_0: return "an Ed25519";
	case CONF_PROFILE_2_0_EC: return "an EC";
	default: return "an RSA";
	}
}

/*
 * The pair that signs the leg's Receipts and eb:Errors (gl->sign,
 * gl->sign_index): the one receipt/@signingKey names, which must fit
 * algs, else the first that fits.
 */
static int
gateway_keys_receipt(const struct gateway *gw, const struct pmode_leg *leg,
    unsigned algs, struct gateway_leg *gl, struct err *err)
{
	const struct conf *c = gw->conf;
	struct wss_keytype kt;
	size_t i;

	if (leg->receipt_key >= 0) {
		i = (size_t)leg->receipt_key;
		wss_keytype_of(gw->keys[i], &kt);
		if ((wss_keytype_sig_algs(kt.kind) & algs) == 0)
			return err_set(err, ERR_CONF, NULL, "pmode \"%s\": "
			    "receipt signingKey \"%s\" (%s) does not fit %s",
			    leg->id, c->signing[i].id, kt.name,
			    gateway_keys_algs_name(leg));
		gl->sign = gw->keys[i];
		gl->sign_index = i;
		return 0;
	}
	for (i = 0; i < gw->n_keys; i++) {
		wss_keytype_of(gw->keys[i], &kt);
		if ((wss_keytype_sig_algs(kt.kind) & algs) != 0) {
			gl->sign = gw->keys[i];
			gl->sign_index = i;
			return 0;
		}
	}
	return err_set(err, ERR_CONF, NULL, "pmode \"%s\": no gateway "
	    "signing pair fits %s: add %s pair to <signingKeys> (or name "
	    "one with receipt/@signingKey)", leg->id,
	    gateway_keys_algs_name(leg), gateway_keys_wanted(leg));
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
			    gateway_keys_algs_name(leg));
	}
	*ret_n_fit = n;
	return 0;
}

/*
 * The leg's decryption pairs (gl->decrypt; NULL: the gateway's default
 * keyring).  A leg that may receive encrypted messages under algorithms
 * with key transport or agreement needs pairs that fit them: its own
 * must all fit; of the gateway's default pairs it keeps those that fit
 * (a mixed <decryptionKeys> serves 1.x and 2.0 legs alike), and none
 * fitting is an error.
 */
static int
gateway_keys_decrypt(const struct gateway *gw, const struct pmode_leg *leg,
    unsigned algs, struct gateway_leg *gl, struct err *err)
{
	struct conf_keypair keep[CONF_DECRYPT_MAX];
	int fit[CONF_DECRYPT_MAX];
	size_t i, n_fit = 0, k = 0;

	if (leg->encryption == CONF_NEVER || (algs &
	    GATEWAY_KEYS_DEC_ALGS) == 0) {
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
		    gateway_keys_algs_name(leg));
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
	    gateway_keys_receipt(gw, leg, algs, gl, err) == -1)
		return -1;
	return 0;
}
