/*
 * wss_inbound_int.h — internal to wss_inbound.c and wss_inbound_sig.c (the
 * SignedInfo walk and the reference coverage, split off as wss_inbound.c
 * grew past 800 lines): the state of one wss_inbound() call and the
 * functions the two files call across.  Not for other modules.
 *
 * Ownership: every pointer in struct wss_in points into the request's
 * arena or the caller's document and parts.
 */
#ifndef AS4GW_WSS_INBOUND_INT_H
#define AS4GW_WSS_INBOUND_INT_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>
#include <openssl/x509.h>

#include "../trust/trust.h"
#include "../util/arena.h"
#include "../util/err.h"
#include "wss_int.h"

/* One ds:Reference of SignedInfo as our own walk read it. */
struct wss_in_ref {
	xmlNodePtr node;   /* the ds:Reference */
	const char *uri;   /* its URI (arena) */
	int cid;           /* 1: "cid:" attachment reference, 0: "#id" */
	int n_c14n;        /* exclusive c14n transforms */
	int n_swa;         /* SwA signature transforms */
};

/* Everything one wss_inbound() call works on. */
struct wss_in {
	struct arena *a;
	xmlDocPtr doc;
	xmlNodePtr messaging, body;        /* the caller's nodes */
	xmlNodePtr security, signature, timestamp;
	struct wss_part *parts;
	size_t n_parts;
	const struct wss_policy *pol;
	int has_enc;                       /* EncryptedKey/Data in Security */
	struct wss_dec_report dec;         /* what wss_decrypt did */
	struct wss_in_ref *refs;
	size_t n_refs;
	X509 *cert;                        /* signer (arena) */
	struct trust_revoc_note revoc;     /* prefer failed open */
	STACK_OF(X509) *chain;             /* its untrusted chain (arena) */
	/* the instants (ms) at which the wsu:Timestamp passes, as
	 * wss_in_timestamp found them; INT64_MIN/MAX: unbounded */
	int64_t ts_from, ts_until;
};

/* EBMS:0101 with one generic message, the reason (why) for the log only;
 * EBMS:0103 (the leg's policy) with msg.  Both return -1. */
int wss_in_auth(struct err *err, const char *why);
int wss_in_policy(struct err *err, const char *msg);

/* wss_inbound_sig.c: ds:Signature holds SignedInfo, SignatureValue and
 * KeyInfo, nothing else (EBMS:0103 otherwise). */
int wss_in_sig_shape(const xmlNode *sig, struct err *err);

/* wss_inbound_sig.c: SignedInfo read before xmlsec sees it — exclusive
 * c14n, a SignatureMethod in the leg's algs (rsa-sha*, ecdsa-sha*,
 * eddsa-ed25519), 1 .. max_references references, each "#id" with one
 * exclusive c14n transform or "cid:" with one SwA transform and an
 * allowed digest — into in->refs / in->n_refs.  EBMS:0103 otherwise. */
int wss_in_signed_info(struct wss_in *in, struct err *err);

/* wss_inbound_sig.c: the references cover exactly eb:Messaging, the
 * Body, the Timestamp (if any) and every part, each once (node identity;
 * the cid: resolver bound to in->parts). */
int wss_in_coverage(struct wss_in *in, struct err *err);

#endif
