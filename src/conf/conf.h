/*
 * conf — the gateway configuration: gateway settings plus P-Mode legs, loaded
 * from XML and validated against schemas/as4gw-config.xsd (embedded), then
 * checked for meaning (files readable, ports in range, no duplicate leg ids).
 *
 * A struct conf is immutable once loaded and has one owner; relative paths in
 * the file are resolved against the file's directory at load time.  Every
 * char * in it (and in its legs) is malloc'd and owned by the struct conf;
 * conf_free() frees them all (the char ** arrays of a leg too: the array
 * and each string).  Every file path in it has been resolved and found
 * readable at load; conf does not parse certificates or keys.
 */
#ifndef AS4GW_CONF_H
#define AS4GW_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "../util/err.h"

/* One PartyId of a leg's party: value and @type (ebMS3 Core 5.2.2.4). */
struct conf_party_id {
	char *value;
	char *type;         /* NULL = no type attribute */
};

/*
 * A leg's <from> or <to> party.  ebMS3 Core 5.2.2.4: all the PartyIds of one
 * eb:From (eb:To) identify one party, so a message matches it only when every
 * one of its PartyIds (value and type) is in ids.
 */
struct conf_party {
	struct conf_party_id *ids;  /* n_ids >= 1, in document order */
	size_t n_ids;
	/* The canonical name recorded for the party (inbox from_party /
	 * to_party, the log's from_party, message.json, AS4GW_FROM):
	 * "type:value" of ids[0], or its value when untyped. */
	char *name;
	char *role;         /* NULL = any role */
};

enum conf_policy { CONF_NEVER = 0, CONF_OPTIONAL, CONF_REQUIRED };

/* A Peppol identifier of a leg's accepted list: scheme and value. */
struct conf_peppol_id {
	char *scheme;       /* never NULL: the attribute or the default */
	char *value;
};

/* Default schemes (Peppol Policy for use of Identifiers 4.x). */
#define CONF_PEPPOL_DOCTYPE_SCHEME "busdox-docid-qns"
#define CONF_PEPPOL_PROCESS_SCHEME "cenbii-procid-ubl"

/*
 * <peppol>: the leg follows the Peppol AS4 profile's receiving rules
 * (README "Peppol"): one payload, an SBDH document consistent with the
 * message's originalSender/finalRecipient properties, Action and Service.
 * Empty lists (NULL, 0) accept every document type / process.
 */
struct conf_peppol {
	struct conf_peppol_id *doc_types;   /* <documentType scheme> */
	size_t n_doc_types;
	struct conf_peppol_id *processes;   /* <process scheme> */
	size_t n_processes;
};

/*
 * Most decryption pairs a leg (or <decryptionKeys>) may list: the current
 * one and the ones partners may still encrypt for during a rotation.  The
 * pair is picked by the EncryptedKey's key reference, never by trying each
 * key, so the bound is about configuration, not cost per message.
 */
#define CONF_DECRYPT_MAX 4

/* One <decryption> pair: the gateway's certificate and key (PEM). */
struct conf_keypair {
	char *cert;
	char *key;
	int retiring;       /* @retiring="true": log each use, to be dropped */
};

/*
 * Most gateway signing pairs: <signing> and up to 7 more in <signingKeys>
 * (RSA for 1.x legs, Ed25519 for eDelivery AS4 2.0, EC for its EC
 * profile and BDEW; issue 13).
 */
#define CONF_SIGN_MAX 8

/* A gateway signing pair: id, certificate and key (PEM). */
struct conf_signkey {
	char *id;           /* <signing id>; "default" for <signing> without */
	char *cert;
	char *key;
};

/* security/@profile of a leg (issue 13): the algorithm set it accepts
 * when it lists no <algorithms>, and the kind of gateway key that signs
 * its Receipts and errors. */
enum conf_profile {
	CONF_PROFILE_1X = 0,     /* "edelivery-1.x", the default: RSA */
	CONF_PROFILE_2_0,        /* "edelivery-2.0": Ed25519, X25519 */
	CONF_PROFILE_2_0_EC,     /* "edelivery-2.0-ec": ECDSA, ECDH-ES */
};

/* <businessDuplicates> of a leg (issue 12 item 4): what a new MessageId
 * carrying a business document already stored for the party becomes. */
enum conf_business {
	CONF_BUSINESS_FLAG = 0,  /* the default: stored, marked, logged */
	CONF_BUSINESS_REFUSE,    /* EBMS:0004, nothing stored */
	CONF_BUSINESS_OFF        /* not checked, no key stored */
};

/* Where a network's party rule reads the sender's PartyId in its
 * certificate (issue 12): the subject's CN, another subject attribute, or
 * a subjectAltName of one kind. */
enum conf_party_source {
	CONF_PARTY_CN = 0,
	CONF_PARTY_SUBJECT,
	CONF_PARTY_SAN_URI,
	CONF_PARTY_SAN_DNS,
	CONF_PARTY_SAN_EMAIL,
};

/*
 * <security><network> (issue 12, README "Networks"): the leg accepts a
 * signature by any certificate that chains to the network's anchors (and,
 * when listed, was issued by one of issuers and carries one of policies),
 * provided the eb:From PartyId it claims is the one the party rule reads
 * in the certificate.  Files resolved and checked like <trust>'s.
 */
struct conf_network {
	char **anchors;               /* n_anchors >= 1 */
	size_t n_anchors;
	char **crls;                  /* may be empty */
	size_t n_crls;
	char **issuers;               /* RFC 4514 names; empty = any issuer */
	size_t n_issuers;
	char **policies;              /* dotted OIDs; empty = any policy */
	size_t n_policies;
	char *party_type;             /* the PartyId type; NULL = untyped */
	enum conf_party_source party_source;
	char *party_attribute;        /* CONF_PARTY_SUBJECT: OID or short name */
};

/* A <service> of a leg: value and @type (ebMS3 Core 5.2.2.8). */
struct conf_service {
	char *value;
	char *type;                   /* NULL = no type */
};

struct pmode_leg {
	char *id;
	char *agreement;        /* NULL = leg matches messages without AgreementRef */
	char *agreement_type;   /* NULL = no type */
	/* from: on a network leg, n_ids may be 0 (any member of the network;
	 * name NULL: the inbox records the message's "type:value") */
	struct conf_party from, to;
	/* <service>s (at least one) and <action>s, or <anyService/> /
	 * <anyAction/> (network legs only: n_services / n_actions 0);
	 * service, service_type and action are the first listed (NULL when
	 * any) */
	struct conf_service *services;
	size_t n_services;
	char **actions;
	size_t n_actions;
	char *service;
	char *service_type;     /* NULL = no type */
	char *action;
	struct conf_network *network;   /* NULL: listed <signer>s */
	/* security policy: <security> (issue 3, inbound WS-Security) */
	enum conf_policy signing;     /* default REQUIRED */
	enum conf_policy encryption;  /* default OPTIONAL */
	/*
	 * <signer><certificate>: PEM files with the certificate(s) bound to
	 * the leg's eb:From party, the only keys allowed to sign its messages.
	 * Never empty when signing is REQUIRED or OPTIONAL (the load refuses
	 * that); may be empty (NULL, 0) when signing is NEVER.
	 */
	char **signer_certs;
	size_t n_signer_certs;
	/* <trust><anchor>: CA certificates (PEM) the signer's chain must
	 * reach; never empty when there are signer_certs (a self-signed
	 * partner certificate is listed as its own anchor). */
	char **trust_anchors;
	size_t n_trust_anchors;
	/* <trust><crl>: CRL files (PEM or DER) of the CAs that issue signer
	 * certificates; may be empty (NULL, 0): then no revocation check.
	 * Once any is given, the issuer of every signer certificate needs
	 * one (the leaf is checked, not the rest of the chain). */
	char **trust_crls;
	size_t n_trust_crls;
	/* <decryption> (1 .. CONF_DECRYPT_MAX, document order): the
	 * gateway's pairs for payloads encrypted to it on this leg, no
	 * certificate twice.  Never empty after conf_load(): without
	 * <decryption> they are copies of the gateway's default pairs
	 * (conf.decrypt) and decrypt_default is 1. */
	struct conf_keypair decrypt[CONF_DECRYPT_MAX];
	size_t n_decrypt;
	int decrypt_default;
	/* <algorithms>: allowed algorithm short names separated by single
	 * spaces ("rsa-sha256 sha256 rsa-oaep aes128-gcm"), every name one of
	 * the schema's enumeration; NULL = the default set (everything but
	 * rsa-1_5 and aes-cbc).  The gateway turns it into bits with
	 * wss_alg_parse(); conf does not depend on wss. */
	char *algorithms;
	/* security/@profile (default CONF_PROFILE_1X): the allowlist when
	 * algorithms is NULL (the gateway asks wss_alg_parse() for the set
	 * conf_profile_name() names), and the receipt key's kind */
	enum conf_profile profile;
	/* <receipt signingKey="ID">: index into conf.signing of the pair
	 * that signs this leg's Receipts and eb:Errors; -1 (absent): the
	 * pair its profile picks (gateway_keys.c) */
	int receipt_key;
	/* security/@timestamp: CONF_REQUIRED = every message must carry a
	 * signed wsu:Timestamp (only with signing CONF_REQUIRED); default
	 * CONF_OPTIONAL (checked when present) */
	enum conf_policy timestamp;
	unsigned timestamp_skew_s;    /* timestampSkewSeconds, default 300, 0..3600;
	                               * also the eb:Timestamp's (ebms_age_check) */
	int receipt_nrr;              /* 1: NRR receipt for signed messages (default) */
	/* security/@revocation (issue 12 item 2): live revocation of the
	 * signer's chain (OCSP, CRL distribution points).  CONF_NEVER "off"
	 * (default), CONF_OPTIONAL "prefer" (no status: accepted, logged),
	 * CONF_REQUIRED "require" (no status: 503 + Retry-After).  Revoked is
	 * EBMS:0101 under both. */
	enum conf_policy revocation;
	int retention_days;           /* 0 = the gateway default */
	/* <maxBodyBytes> of the leg (issue 14 item 4): a body larger than
	 * this is refused with 413 once the message matched the leg; 0 =
	 * only the gateway's limits/maxBodyBytes */
	uint64_t max_body_bytes;
	struct conf_peppol *peppol;   /* owned; NULL = not a Peppol leg */
	enum conf_business business_duplicates; /* default CONF_BUSINESS_FLAG */
};

struct conf_limits {
	size_t max_body_bytes;          /* maxBodyBytes, default 8 GiB (a leg may cap lower:
	                                 * pmode_leg.max_body_bytes) */
	unsigned connection_timeout_s;  /* connectionTimeoutSeconds, default 30 */
	unsigned request_deadline_s;    /* requestDeadlineSeconds, default 120 */
	unsigned per_ip_connections;    /* perIpConnections, default 32 */
	unsigned max_connections;       /* maxConnections, default 512 */
	size_t connection_memory_bytes; /* connectionMemoryBytes, default 32 KiB (bounds request headers: NEGATIVE-CASES 3) */
	size_t request_memory_bytes;    /* requestMemoryBytes: per-request arena budget, default 256 MiB */
	size_t max_parts;               /* maxParts: MIME parts per message, default 64 */
	size_t max_xml_depth;           /* maxXmlDepth, default 64 */
	size_t max_xml_nodes;           /* maxXmlNodes: nodes of every kind (elements, attributes,
	                                 * text, CDATA, comments, PIs), default 100000 */
	size_t max_attachment_xml_nodes; /* maxAttachmentXmlNodes: the same count for an XML payload
	                                 * canonicalised for its SwA signature reference (parsed only
	                                 * after the SignatureValue verified; still within
	                                 * requestMemoryBytes), default 2000000 */
	size_t max_xml_attributes;      /* maxXmlAttributes: attributes + namespace declarations per
	                                 * element, and namespace declarations in scope, default 64 */
	size_t max_envelope_bytes;      /* maxEnvelopeBytes: the SOAP root part (the whole body of a
	                                 * bare application/soap+xml request), default 4 MiB; 413 */
	size_t max_sbdh_value_bytes;    /* maxSbdhValueBytes: longest SBDH field (identifiers ...)
	                                 * a Peppol leg reads from a payload, default 1024 */
	unsigned header_timeout_s;      /* headerTimeoutSeconds, default 10: the whole request head
	                                 * (request line and headers) must arrive within it, however
	                                 * slowly it trickles (slowloris: NEGATIVE-CASES 6) */
	/* gzip decompression caps (AS4 3.1; payload.h; issue 14): over one,
	 * EBMS:0303 as soon as the output passes it */
	size_t max_decompressed_bytes;  /* maxDecompressedBytes: per part, default 8 GiB */
	unsigned max_decompression_ratio; /* maxDecompressionRatio: output/input once a part's
	                                 * output passes 1 MiB, default 1000 */
	size_t max_decompressed_total_bytes; /* maxDecompressedTotalBytes: all parts of a
	                                 * message, default 8 GiB */
	/* issue 14: a body of spoolThresholdBytes or more (declared, or grown
	 * to it) is written to a spool file in conf.spool_dir instead of
	 * memory, and so is a decoded part that large; spooled bytes do not
	 * count against requestMemoryBytes */
	size_t spool_threshold_bytes;   /* spoolThresholdBytes, default 1 MiB; 0 = spool every body */
	size_t spool_reserve_bytes;     /* spoolReserveBytes: free space the spool filesystem keeps
	                                 * (a declared body that would eat into it: 503 at once),
	                                 * default 256 MiB; 0 allowed */
};

/* <revocation>: the live revocation engine's limits (issue 12 item 2);
 * every fetch is bounded by them.  The engine is the server's: these apply
 * to it at start and at every reload. */
struct conf_revocation {
	unsigned connect_timeout_ms;  /* connectTimeoutMs, default 2000 */
	unsigned timeout_s;           /* timeoutSeconds: a whole exchange, default 5 */
	size_t max_ocsp_bytes;        /* maxOcspBytes, default 64 KiB */
	size_t max_crl_bytes;         /* maxCrlBytes, default 8 MiB */
	unsigned skew_s;              /* clockSkewSeconds, default 120 */
	unsigned refresh_ahead_s;     /* refreshAheadSeconds, default 300 */
	unsigned no_next_update_s;    /* noNextUpdateSeconds, default 300 */
	unsigned failure_backoff_s;   /* failureBackoffSeconds, default 10 */
	unsigned idle_s;              /* idleSeconds, default 86400 */
	size_t max_entries;           /* maxEntries, default 10000 */
	unsigned retry_after_s;       /* retryAfterSeconds: the 503's, default 30 */
};

/* An address block from <trustedProxies><proxy>: "10.0.0.0/8", "::1", "192.0.2.7". */
struct conf_cidr {
	int family;                     /* AF_INET or AF_INET6 */
	unsigned char addr[16];         /* network order; the first 4 bytes for AF_INET */
	unsigned prefix;                /* 0..32 or 0..128 */
};

struct conf {
	char *path;              /* the file loaded */
	char *listen_host;       /* default 127.0.0.1 */
	int listen_port;         /* default 8080 */
	char *http_path;         /* default /as4 */
	char *store_dsn;         /* default sqlite:var/as4gw.db */
	int store_timeout_ms;    /* <storeTimeoutSeconds>, default 30 s
	                          * (STORE_TIMEOUT_MS): per wait for PostgreSQL */
	char *spool_dir;         /* <limits><spoolDir>, default /var/tmp (resolved like
	                          * the store file); serve checks at start that it is
	                          * a writable directory */
	unsigned threads;        /* default 4 */
	char *tls_cert;          /* NULL = plain HTTP */
	char *tls_key;
	/* <signing> (signing[0], the default: errors before any leg is
	 * known, 1.x legs) and <signingKeys><signing id> in document
	 * order; ids unique.  n_signing >= 1. */
	struct conf_signkey signing[CONF_SIGN_MAX];
	size_t n_signing;
	char *sign_cert;         /* signing[0].cert (not owned separately) */
	char *sign_key;          /* signing[0].key (not owned separately) */
	/* The default decryption pairs of legs without <decryption>:
	 * <decryptionKeys>, else (decrypt_signing 1) one copy of the
	 * signing pair.  Never empty after conf_load(). */
	struct conf_keypair decrypt[CONF_DECRYPT_MAX];
	size_t n_decrypt;
	int decrypt_signing;
	int retention_days;      /* default 30 */
	int retry_window_days;   /* partnerRetryWindowDays: retention may not be shorter; default 7 */
	/*
	 * <trustedProxies><proxy>: peers whose X-Forwarded-For header is
	 * believed (a reverse proxy such as nginx).  Empty (the default): the
	 * header is ignored and the peer is the TCP client address.
	 */
	struct conf_cidr *trusted_proxies;
	size_t n_trusted_proxies;
	/* <purge>: retention purge run by `serve` in the background */
	unsigned purge_interval_s;  /* intervalSeconds, default 3600; 0 = only `as4gw purge` */
	unsigned purge_batch;       /* batch: inbox rows per transaction, default 500 */
	int purge_undelivered;      /* undelivered="purge": also rows whose delivery is not
	                             * done; default 0 (kept, counted, logged) */
	struct conf_limits limits;
	struct conf_revocation revocation;
	/*
	 * <replay><verifyAt>: evaluate certificate validity and wsu:Timestamp
	 * freshness at this instant (ms since the epoch) instead of now, to
	 * replay recorded traffic.  0 = now (the default).  NEVER in
	 * production: expired certificates and stale messages would be accepted;
	 * the gateway must log loudly when it is set.
	 */
	int64_t verify_at_ms;
	struct pmode_leg *legs;
	size_t n_legs;
};

/*
 * Load and validate FILE.  On failure err.msg names the problem in one line,
 * with the file and line where known: `conf/as4gw.xml:12: pmode "a": ...`.
 */
int conf_load(const char *path, struct conf **ret, struct err *err);

/* Accepts NULL. */
void conf_free(struct conf *c);

/*
 * Parse "host:port" (IPv4, [IPv6] or name) for --listen; 0 ok, -1 invalid.
 * Port 0..65535 (0 = any free port).  *ret_host is malloc'd, without the
 * brackets of an IPv6 literal; the caller frees it.  Outputs are written only
 * on success.
 */
int conf_parse_listen(const char *s, char **ret_host, int *ret_port);

/*
 * Parse "ADDR" or "ADDR/PREFIX" (IPv4 or IPv6 literal) into *ret; 0 ok, -1
 * invalid (a name, a prefix out of range, host bits set are all refused).
 */
int conf_cidr_parse(const char *s, struct conf_cidr *ret);

/* 1 when addr (4 or 16 bytes, network order, of family) lies in c, else 0.
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) matches IPv4 blocks. */
int conf_cidr_match(const struct conf_cidr *c, int family, const void *addr);

/* The default limits documented in struct conf_limits. */
void conf_limits_default(struct conf_limits *lim);

/* The defaults of the gzip decompression caps (maxDecompressedBytes,
 * maxDecompressionRatio, maxDecompressedTotalBytes), one name each: the
 * payload module's own defaults (payload_limits_default) are these. */
#define CONF_MAX_DECOMPRESSED_DEFAULT ((size_t)8 << 30)
#define CONF_MAX_DECOMPRESSION_RATIO_DEFAULT 1000u
#define CONF_MAX_DECOMPRESSED_TOTAL_DEFAULT ((size_t)8 << 30)

/* 1 when every <limits> key (the one table conf_gateway.c reads them by)
 * has the same value in a and b, else 0: what a reload compares, so a key
 * added to the table can never be missed. */
int conf_limits_equal(const struct conf_limits *a, const struct conf_limits *b);

/* The default revocation limits documented in struct conf_revocation. */
void conf_revocation_default(struct conf_revocation *rv);

/* The canonical name of a PartyId: "type:value", or value when type is
 * NULL (struct conf_party.name; for an open From, the message's PartyId).
 * In arena a (util/arena.h); NULL when out of memory. */
struct arena;
char *conf_party_id_name(struct arena *a, const char *type,
    const char *value);

/* The sending party's canonical name for a message leg matched: the leg's
 * From name, or for an open From (a network leg) the name of the one
 * PartyId the message carries (type, value). */
const char *conf_from_name(struct arena *a, const struct pmode_leg *leg,
    const char *type, const char *value);

/* Default of pmode_leg.timestamp_skew_s (seconds). */
#define CONF_SKEW_DEFAULT 300u

/* "required", "optional" or "never". */
const char *conf_policy_name(enum conf_policy p);

/* "edelivery-1.x", "edelivery-2.0" or "edelivery-2.0-ec". */
const char *conf_profile_name(enum conf_profile p);

#endif
