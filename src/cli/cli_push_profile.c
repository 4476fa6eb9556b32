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

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "../sender/sender.h"
#include "../wss/wss.h"

struct cli_push_profile {
	const char *name;
	const char *sign_type;      /* wss_key_type() of --sign-key */
	const char *recipient_type; /* of --recipient-cert's public key */
	unsigned kdf;               /* for a key agreement; 0: none */
};

static const struct cli_push_profile cli_push_profiles[] = {
	{ "edelivery-1.x", "RSA", "RSA", 0 },
	{ "edelivery-2.0", "Ed25519", "X25519", WSS_KDF_HKDF },
	{ "edelivery-2.0-ec", "EC", "EC", WSS_KDF_HKDF },
	{ "bdew", "EC", "EC", WSS_KDF_CONCAT },
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

/* "RSA", "EC", "X25519" or "other" for a certificate's public key. */
static const char *
cli_push_profile_cert_type(X509 *cert)
{
	EVP_PKEY *pub = cert != NULL ? X509_get0_pubkey(cert) : NULL;
	int id = pub != NULL ? EVP_PKEY_get_base_id(pub) : 0;

	return id == EVP_PKEY_RSA ? "RSA" : id == EVP_PKEY_EC ? "EC" :
	    id == EVP_PKEY_X25519 ? "X25519" : id == EVP_PKEY_ED25519 ?
	    "Ed25519" : "other";
}

int
cli_push_profile_apply(const struct cli_push_opts *o, struct err *err)
{
	const struct cli_push_profile *p = cli_push_profile_find(o->profile);
	struct sender_agree_opts agree;
	const char *type;

	if (p == NULL)
		return 0;
	if (o->key != NULL && strcmp(type = wss_key_type(o->key),
	    p->sign_type) != 0)
		return err_set(err, ERR_CONF, NULL, "--profile %s signs with "
		    "an %s key; \"%s\" holds an %s key", p->name, p->sign_type,
		    o->sign_key, type);
	if (o->recipient == NULL)
		return 0;
	type = cli_push_profile_cert_type(sender_recipient_cert(o->recipient));
	if (strcmp(type, p->recipient_type) != 0)
		return err_set(err, ERR_CONF, NULL, "--profile %s encrypts for "
		    "an %s certificate; \"%s\" holds an %s key", p->name,
		    p->recipient_type, o->recipient_cert, type);
	memset(&agree, 0, sizeof(agree));
	agree.kdf = p->kdf;
	sender_recipient_set_agree(o->recipient, &agree);
	return 0;
}
