/*
 * cli_push_profile.c — `as4gw push --profile NAME`: which key types a
 * profile sends with, checked before anything is built or sent, and the
 * key derivation it asks of a key agreement.
 *
 *   edelivery-1.x     RSA signing key, RSA recipient (rsa-oaep)
 *   edelivery-2.0     Ed25519 signing key, X25519 recipient, HKDF
 *                     (eDelivery AS4 2.0; ENTSOG AS4 4.0 2.2.6.2)
 *   edelivery-2.0-ec  EC signing key, EC recipient (ECDH-ES), HKDF
 *                     (its alternative EC option, 2.2.6.2.5)
 *   bdew              EC signing key, EC recipient (ECDH-ES), ConcatKDF
 *                     (the German energy market's AS4 profile)
 *
 * Without --profile any key push can use is used, as before.
 */
#include "cli_push_int.h"

#include <string.h>

#include "../sender/sender.h"
#include "../wss/wss.h"

struct cli_push_profile {
	const char *name;
	enum wss_keykind sign;       /* of --sign-key */
	enum wss_keykind recipient;  /* of --recipient-cert's public key */
	const char *sign_name, *recipient_name;
	unsigned kdf;                /* for a key agreement; 0: none */
};

static const struct cli_push_profile cli_push_profiles[] = {
	{ "edelivery-1.x", WSS_KEY_RSA, WSS_KEY_RSA, "RSA", "RSA", 0 },
	{ "edelivery-2.0", WSS_KEY_ED25519, WSS_KEY_X25519, "Ed25519",
	    "X25519", WSS_KDF_HKDF },
	{ "edelivery-2.0-ec", WSS_KEY_EC, WSS_KEY_EC, "EC", "EC",
	    WSS_KDF_HKDF },
	{ "bdew", WSS_KEY_EC, WSS_KEY_EC, "EC", "EC", WSS_KDF_CONCAT },
};

#define CLI_PUSH_N_PROFILES \
	(sizeof(cli_push_profiles) / sizeof(cli_push_profiles[0]))

/* The profile called name, or NULL. */
static const struct cli_push_profile *
cli_push_profile_find(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && i < CLI_PUSH_N_PROFILES; i++)
		if (strcmp(name, cli_push_profiles[i].name) == 0)
			return &cli_push_profiles[i];
	return NULL;
}

int
cli_push_profile_known(const char *name)
{
	return cli_push_profile_find(name) != NULL;
}

int
cli_push_profile_apply(const struct cli_push_opts *o, struct err *err)
{
	const struct cli_push_profile *p = cli_push_profile_find(o->profile);
	struct sender_agree_opts agree;
	struct wss_keytype kt;

	if (p == NULL)
		return 0;
	if (o->key != NULL) {
		wss_keytype_of(o->key, &kt);
		if (kt.kind != p->sign)
			return err_set(err, ERR_CONF, NULL, "--profile %s signs "
			    "with an %s key; \"%s\" holds %s", p->name,
			    p->sign_name, o->sign_key, kt.name);
	}
	if (o->recipient == NULL)
		return 0;
	if (wss_keytype_file(o->recipient_cert, &kt, err) == -1)
		return -1;
	if (kt.kind != p->recipient)
		return err_set(err, ERR_CONF, NULL, "--profile %s encrypts for "
		    "an %s certificate; \"%s\" holds %s", p->name,
		    p->recipient_name, o->recipient_cert, kt.name);
	memset(&agree, 0, sizeof(agree));
	agree.kdf = p->kdf;
	sender_recipient_set_agree(o->recipient, &agree);
	return 0;
}
