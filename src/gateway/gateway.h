/*
 * gateway — one push end to end, without HTTP: MIME -> SOAP -> ebMS -> P-Mode
 * -> WS-Security (decrypt, verify) -> gunzip -> content hash -> Receipt ->
 * inbox, and the answer to send.  http/ feeds it bytes; fuzzers and tests can too.
 */
#ifndef AS4GW_GATEWAY_H
#define AS4GW_GATEWAY_H

#include <stddef.h>

#include "../conf/conf.h"
#include "../ebms/ebms.h"
#include "../payload/payload.h"
#include "../store/store.h"
#include "../util/arena.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../wss/wss.h"

/* The WS-Security side of one P-Mode leg, built once from the config. */
struct gateway_leg {
	struct wss_policy policy;
	struct trust *trust;         /* owned; NULL when the leg trusts no signer */
	struct wss_keyring *decrypt; /* owned, or NULL when it is the gateway's
	                              * default (gateway.decrypt) */
	char *signers_desc;          /* owned; policy.signers_desc (may be NULL) */
	/* the pair that signs the leg's Receipts and eb:Errors (issue 13;
	 * gateway_keys.c): gateway.keys[sign_index], borrowed */
	const struct wss_key *sign;
	size_t sign_index;
};

/* Long-lived and read-only once built; shared by all worker threads. */
struct inbox_recent;
struct gateway_replay;
struct spool;

struct gateway {
	const struct conf *conf;     /* borrowed; outlives the gateway */
	struct ebms_schema *schema;
	struct wss_key *key;         /* the default signing pair: keys[0] */
	struct wss_key *keys[CONF_SIGN_MAX]; /* owned; conf.signing order */
	size_t n_keys;
	struct wss_keyring *decrypt; /* default decryption pairs (conf.decrypt) */
	struct gateway_leg *legs;    /* parallel to conf->legs */
	struct payload_limits payload_limits;
	struct inbox_recent *recent; /* MessageIds answered lately (a hint) */
	struct gateway_replay *replay; /* verified requests (gateway_replay.c) */
	struct trust_revoc *revoc;   /* the server's revocation engine
	                              * (borrowed, outlives the gateway), or NULL */
};

/* Compile the schema, load the signing key and the default decryption
 * pairs, and per leg the trust (signer certificates, anchors), its own
 * decryption pairs and algorithm allowlist. */
int gateway_new(const struct conf *conf, struct gateway **ret, struct err *err);

/* gateway_new() for `serve`: legs with security/@revocation ask revoc (owned
 * by the caller, it must outlive the gateway; a reload passes the same).
 * Without an engine such legs find no status (require: 503). */
int gateway_new_revoc(const struct conf *conf, struct trust_revoc *revoc,
    struct gateway **ret, struct err *err);
void gateway_free(struct gateway *gw);

struct gateway_request {
	const char *content_type;    /* the HTTP Content-Type header, may be NULL */
	const unsigned char *body;
	size_t len;
	const char *peer;            /* client address, for the inbox row and log */
	/* issue 14: the request's spool (spool.h), bound to the thread for
	 * the request; body may be one of its mappings.  NULL: the request
	 * is in memory and outputs stay there too */
	struct spool *spool;
};

struct gateway_answer {
	int status;                  /* HTTP status */
	const char *content_type;    /* static string */
	struct buf body;             /* caller frees with buf_free */
	int retry_after;             /* seconds; 0 = no Retry-After header */
	/* for the log line (arena strings or static) */
	const char *outcome;         /* new | duplicate | drift | error */
	const char *message_id;
	const char *from_party;      /* the matched leg's canonical party
	                              * (conf.h), NULL before a match */
	const char *pmode;
	const char *ebms_code;
	int replayed;                /* answered by gateway_replay.c's cache */
	/* the message was encrypted for a decryption pair marked retiring:
	 * its short fingerprint (the keyring's; valid while the gateway is),
	 * else NULL */
	const char *decrypt_retiring;
	/* not NULL: accepted with no fresh revocation status under
	 * revocation="prefer"; why (arena), for a warning log line */
	const char *revocation_note;
	/* business-level duplicates (issue 12 item 4; arena or NULL) */
	const char *business_key;    /* the message's key (its leg checks) */
	const char *business_note;   /* why a payload gave no key (malformed) */
	const char *duplicate_of;    /* the MessageId holding the key, when
	                              * this one was flagged or refused */
	const char *business_mode;   /* "flag" | "refuse" with duplicate_of */
	struct err err;              /* what went wrong, if anything */
};

/*
 * Run the pipeline and fill ret with the answer.  Always produces an answer
 * (worst case 500) and returns 0; -1 only if even the answer could not be
 * built (out of memory), in which case ret->status is 500 and body empty.
 * Nothing is stored unless the inbox transaction committed.
 */
int gateway_receive(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_request *req, struct gateway_answer *ret);

/*
 * gateway_keys.c (issue 13): the signing pairs of conf.signing into
 * gw->keys (gw->key the first; a key that cannot sign is refused) and the
 * default decryption pairs into gw->decrypt.  ERR_CONF naming the pair.
 */
int gateway_keys_load(struct gateway *gw, struct err *err);

/*
 * The keys of one leg whose allowed algorithms are algs: gl->sign, the
 * pair that signs its Receipts and eb:Errors (receipt/@signingKey, which
 * must fit the leg's profile, else by the profile: gw->key for 1.x, the
 * first Ed25519 pair for 2.0, the first EC pair for 2.0-ec), and
 * gl->decrypt (NULL: gw->decrypt), its decryption pairs, which on a 2.0
 * leg that may decrypt must fit algs (its own all; of the default pairs
 * those that fit are kept, at least one).  ERR_CONF naming the leg.
 */
int gateway_keys_leg(const struct gateway *gw, const struct pmode_leg *leg,
    unsigned algs, struct gateway_leg *gl, struct err *err);

/* Load decryption pairs (conf's words -> wss's) into *ret. */
int gateway_keyring(const struct conf_keypair *v, size_t n,
    struct wss_keyring **ret, struct err *err);

/*
 * gateway_peppol.c: on a leg with <peppol> (conf.h), the Peppol AS4
 * profile's receiving checks on um's final payload bytes (README "Peppol"):
 * one payload, an SBDH document, its sender/receiver equal to the
 * originalSender/finalRecipient properties (with types), its document type
 * and process to eb:Action and eb:Service (with type), both served by the
 * leg.  0 ok (or not a Peppol leg), -1 ERR_EBMS EBMS:0004 (or ERR_INTERNAL).
 * *ret_sbdh: the header read (arena), for the business key; NULL when the
 * leg has no <peppol>.
 */
struct sbdh;
int gateway_peppol_check(const struct gateway *gw, struct arena *a,
    const struct ebms_user_message *um, const struct pmode_leg *leg,
    const struct sbdh **ret_sbdh, struct err *err);

/* The limits of an SBDH read from a payload (gateway_peppol.c): an XML
 * attachment's (maxXmlDepth, maxAttachmentXmlNodes, maxXmlAttributes),
 * maxSbdhValueBytes, and what the request's arena has left. */
struct sbdh_limits;
void gateway_sbdh_limits(const struct conf_limits *lim, struct arena *a,
    struct sbdh_limits *ret);

/*
 * The replay cache of gateway_replay.c (for gateway.c and its tests): what
 * a verified, stored request was, keyed by SHA-256 over its Content-Type
 * and body.  Bodies larger than GATEWAY_REPLAY_MAX_BODY are not keyed.
 */
#define GATEWAY_REPLAY_KEY_LEN 32
#define GATEWAY_REPLAY_MAX_BODY (1024u * 1024u)

struct gateway_replay_hit {
	const char *message_id;      /* arena copy */
	const char *from_party;      /* arena copy or NULL; with message_id
	                              * the inbox key (store_message) */
	const char *pmode;           /* the leg's id (borrowed from conf) */
	unsigned char content_hash[STORE_HASH_LEN];    /* both versions */
	unsigned char content_hash_v1[STORE_HASH_LEN]; /* (store.h) */
};

/* NULL when out of memory; free accepts NULL. */
struct gateway_replay *gateway_replay_new(void);
void gateway_replay_free(struct gateway_replay *r);

/* 1 key written, 0 the request is not keyed (too large, digest failed). */
int gateway_replay_key(const struct gateway_request *req,
    unsigned char key[GATEWAY_REPLAY_KEY_LEN]);

/* Remember that the request with this key was hit->message_id, valid at
 * instants [from_ms, until_ms] (ids longer than 255 bytes are not kept). */
void gateway_replay_note(struct gateway_replay *r,
    const unsigned char key[GATEWAY_REPLAY_KEY_LEN],
    const struct gateway_replay_hit *hit, int64_t from_ms, int64_t until_ms);

/* 1 found and valid at at_ms (*ret filled, strings in a), 0 not, -1 out of
 * request memory. */
int gateway_replay_find(struct gateway_replay *r,
    const unsigned char key[GATEWAY_REPLAY_KEY_LEN], int64_t at_ms,
    struct arena *a, struct gateway_replay_hit *ret);

#endif
