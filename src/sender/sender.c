/*
 * sender.c — what `as4gw push` needs of WS-Security besides encryption and
 * the NRR check: signing a UserMessage with its attachments (the engine is
 * wss/'s, shared with the Receipts the gateway signs) and loading the
 * certificate a partner's payloads are encrypted for.
 */
#include "sender.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>

#include "../wss/wss_int.h"

/* A certificate whose public key attachments are encrypted for. */
struct sender_recipient {
	X509 *cert;
	struct sender_agree_opts agree;  /* zero: the 2.0 defaults */
};

/* Sign eb:Messaging, the Body and every attachment; see sender.h. */
int
sender_sign_message(xmlDocPtr doc, const struct wss_key *key,
    struct wss_part *parts, size_t n_parts, struct err *err)
{
	return wss_sign_parts(doc, key, parts, n_parts, err);
}

/* Load the certificate attachments are encrypted for; see sender.h. */
int
sender_recipient_load(const char *path, struct sender_recipient **ret,
    struct err *err)
{
	struct sender_recipient *r = NULL;
	X509 *cert = NULL;
	EVP_PKEY *pub;
	int rc = -1;

	if (wss_read_cert(path, &cert, err) == -1)
		goto out;
	pub = X509_get0_pubkey(cert);
	/* RSA: rsa-oaep key transport; X25519 / EC: key agreement */
	if (pub == NULL || (EVP_PKEY_get_base_id(pub) != EVP_PKEY_RSA &&
	    EVP_PKEY_get_base_id(pub) != EVP_PKEY_X25519 &&
	    EVP_PKEY_get_base_id(pub) != EVP_PKEY_EC)) {
		err_set(err, ERR_CONF, NULL, "certificate \"%s\" has no RSA, "
		    "X25519 or EC key to encrypt for", path);
		goto out;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	r->cert = cert;
	cert = NULL;
	*ret = r;
	rc = 0;
out:
	ERR_clear_error();
	X509_free(cert);
	return rc;
}

/* Free a recipient certificate; accepts NULL. */
void
sender_recipient_free(struct sender_recipient *r)
{
	if (r == NULL)
		return;
	X509_free(r->cert);
	free(r);
}

/* The recipient's certificate (borrowed; valid while r lives). */
X509 *
sender_recipient_cert(const struct sender_recipient *r)
{
	return r->cert;
}

/* How a key agreement for r derives its key; see sender.h. */
void
sender_recipient_set_agree(struct sender_recipient *r,
    const struct sender_agree_opts *o)
{
	r->agree = *o;
}

const struct sender_agree_opts *
sender_recipient_agree(const struct sender_recipient *r)
{
	return &r->agree;
}
