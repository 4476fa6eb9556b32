/*
 * trust_revoc — live revocation status of a certificate (issue 12 item 2):
 * OCSP from the certificate's Authority Information Access (RFC 6960, RFC
 * 5280 4.2.2.1) and CRLs from its CRL distribution points (RFC 5280
 * 4.2.1.13), each verified against the issuing CA, kept in a shared cache
 * that a background thread refreshes ahead of nextUpdate.
 *
 * Files: trust_fetch.c (bounded http:// GET/POST on OpenSSL's HTTP client),
 * trust_ocsp.c (request, response verification), trust_crldp.c (CRL fetch
 * and verification), trust_rcache.c (cache, single-flight, refresher).
 *
 * One struct trust_revoc is owned by the server process, not by a
 * configuration generation: it survives a reload.  Every function is
 * thread-safe.  No lock is held across a fetch; concurrent checks of the
 * same (issuer key, serial) wait for the one fetch in flight (single
 * flight), checks of other certificates never wait for it.  A check never
 * fetches when a fresh answer is cached.  Library code: nothing here logs.
 * Depends on util and OpenSSL only.
 */
#ifndef AS4GW_TRUST_REVOC_H
#define AS4GW_TRUST_REVOC_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ocsp.h>
#include <openssl/x509.h>

#include "../util/err.h"

enum trust_revoc_status {
	TRUST_REVOC_GOOD = 0,
	TRUST_REVOC_REVOKED,
	TRUST_REVOC_UNKNOWN,    /* no fresh status could be had */
};

/* Where an answer came from; CACHE: a fresh cached answer was used. */
enum trust_revoc_source {
	TRUST_REVOC_SRC_NONE = 0,
	TRUST_REVOC_SRC_OCSP,
	TRUST_REVOC_SRC_CRLDP,
	TRUST_REVOC_SRC_CRLFILE,
	TRUST_REVOC_SRC_CACHE,
};
#define TRUST_REVOC_N_SOURCES 5

/* Wire limits and timing (conf <revocation> attributes; defaults below). */
struct trust_revoc_limits {
	unsigned connect_timeout_ms;  /* connectTimeoutMs, default 2000 */
	unsigned timeout_s;           /* timeoutSeconds: whole exchange, default 5 */
	size_t max_ocsp_bytes;        /* maxOcspBytes, default 64 KiB */
	size_t max_crl_bytes;         /* maxCrlBytes, default 8 MiB */
	unsigned skew_s;              /* clockSkewSeconds, default 120 */
	unsigned refresh_ahead_s;     /* refreshAheadSeconds, default 300 */
	unsigned no_next_update_s;    /* noNextUpdateSeconds: lifetime of an
	                               * answer without nextUpdate, default 300 */
	unsigned failure_backoff_s;   /* failureBackoffSeconds: no new fetch of
	                               * a key within this after a failed one,
	                               * default 10 */
	unsigned idle_evict_s;        /* idleSeconds: an entry unused this long
	                               * is dropped, not refreshed, default 86400 */
	size_t max_entries;           /* maxEntries, default 10000 */
};

void trust_revoc_limits_default(struct trust_revoc_limits *lim);

/* The answer of one check. */
struct trust_revoc_answer {
	enum trust_revoc_status status;
	enum trust_revoc_source source;  /* CACHE when served from the cache */
	enum trust_revoc_source origin;  /* OCSP / CRLDP: who said it first */
	int64_t this_update_ms, next_update_ms;  /* 0 when unknown */
	int reason;                      /* CRL reason code when revoked, or -1 */
	char detail[200];                /* log-only: why unknown / failures */
};

/* Counters for metrics (read at scrape time by the server). */
struct trust_revoc_stats {
	/* checks[status][source] */
	uint64_t checks[3][TRUST_REVOC_N_SOURCES];
	uint64_t responder_failures;     /* fetches or verifications failed */
	size_t entries;                  /* cached answers */
	int64_t oldest_age_ms;           /* age of the oldest cached answer
	                                  * (now - thisUpdate), -1 when empty */
};

struct trust_revoc;

/* A new engine with a copy of lim; NULL when out of memory.  No thread
 * runs until trust_revoc_start(). */
struct trust_revoc *trust_revoc_new(const struct trust_revoc_limits *lim);

/* Start the background refresher; 0, or -1 with err. */
int trust_revoc_start(struct trust_revoc *r, struct err *err);

/* Replace the limits (a reload); takes effect for the next fetch. */
void trust_revoc_set_limits(struct trust_revoc *r,
    const struct trust_revoc_limits *lim);

/* Stop the refresher (waits for its fetch to end) and free.  Accepts NULL. */
void trust_revoc_free(struct trust_revoc *r);

/*
 * The status of cert, issued by issuer, at now_ms (epoch; 0 = now): a fresh
 * cached answer, else OCSP at the AIA responder, else the CRL distribution
 * points.  Both certificates are only read (up-referenced when cached).
 * Returns 0 with *ret filled (UNKNOWN is an answer, not an error), -1 with
 * err on a programming or memory failure.  now_ms is also the instant
 * cached answers are judged fresh at.
 */
int trust_revoc_check(struct trust_revoc *r, X509 *cert, X509 *issuer,
    int64_t now_ms, struct trust_revoc_answer *ret, struct err *err);

/* Count one check made elsewhere (static CRL files: SRC_CRLFILE). */
void trust_revoc_count(struct trust_revoc *r, enum trust_revoc_status st,
    enum trust_revoc_source src);

/* A snapshot of the counters and cache gauges. */
void trust_revoc_stats(struct trust_revoc *r, int64_t now_ms,
    struct trust_revoc_stats *ret);

/* "good" / "revoked" / "unknown"; "ocsp" / "crldp" / "crlfile" / "cache". */
const char *trust_revoc_status_name(enum trust_revoc_status st);
const char *trust_revoc_source_name(enum trust_revoc_source src);

/* A leg's policy: <security revocation="require|prefer|off">. */
enum trust_revoc_mode {
	TRUST_REVOC_OFF = 0,
	TRUST_REVOC_PREFER,      /* revoked refused; no status: accepted */
	TRUST_REVOC_REQUIRE,     /* revoked refused; no status: 503 */
};

/* What a passing chain check has to say (prefer failed open). */
struct trust_revoc_note {
	int failed_open;         /* 1: no fresh status, accepted under prefer */
	char detail[200];
};

/*
 * The revocation check of a verified chain (leaf first, as
 * X509_STORE_CTX_get0_chain() gives it) under mode (trust_rcache_chain.c):
 * the leaf always, each CA below the last certificate when it names an
 * OCSP responder or CRL distribution point; the last certificate (the
 * anchor) never.  A revoked certificate is EBMS:0101 (ERR_EBMS) under
 * require and prefer; no fresh status is ERR_UNAVAILABLE (503, Retry-After)
 * under require, and under prefer passes with note->failed_open.  A chain
 * of one certificate (a self-signed signer, its own anchor) has no issuer
 * to ask: no status.  0 pass, -1 refused with err.
 */
int trust_revoc_chain(struct trust_revoc *r, enum trust_revoc_mode mode,
    STACK_OF(X509) *chain, int64_t now_ms, struct trust_revoc_note *note,
    struct err *err);

/* "require" / "prefer" / "off". */
const char *trust_revoc_mode_name(enum trust_revoc_mode mode);

/* ---- parts shared by the engine's files (not for other modules) ---- */

/* One fetched status: what trust_ocsp / trust_crldp hand the cache. */
struct trust_revoc_fresh {
	enum trust_revoc_status status;  /* UNKNOWN: failed, see detail */
	enum trust_revoc_source origin;
	int64_t this_update_ms, next_update_ms;
	int reason;
	int asked;                       /* a fetch was attempted */
	char detail[200];
};

/* What one status is asked about: the certificate, its issuer, the
 * instant answers are judged at, and the limits of the fetch. */
struct trust_revoc_subject {
	X509 *cert, *issuer;
	int64_t now_ms;
	const struct trust_revoc_limits *lim;
};

/* One http:// exchange: POST req (DER of item it, as content_type) when req
 * != NULL, else GET; at most max_bytes of answer. */
struct trust_fetch_req {
	const char *url;
	const char *content_type;
	const ASN1_ITEM *it;
	const ASN1_VALUE *req;
	size_t max_bytes;
};

/*
 * Bounded http:// exchange (trust_fetch.c) within lim's timeouts; *ret
 * malloc'd (caller frees).  0 ok, -1 with a reason in err (ERR_IO).
 */
int trust_fetch(const struct trust_fetch_req *q,
    const struct trust_revoc_limits *lim, unsigned char **ret,
    size_t *ret_len, struct err *err);

/* thisUpdate / nextUpdate (ASN1 UTCTime or GeneralizedTime) as ms since
 * the epoch (trust_ocsp.c); 0, or -1 when unreadable. */
int trust_revoc_time(const ASN1_TIME *t, int64_t *ret);

/* The first http:// OCSP URL of cert's AIA into buf; 1 found, 0 none. */
int trust_ocsp_url(X509 *cert, char *buf, size_t size);

/*
 * Verify a DER OCSP response for cert/issuer at now_ms (RFC 6960 3.2,
 * 4.2.2.2): successful, signed by issuer or by a responder certificate
 * issued by it with id-kp-OCSPSigning, a SingleResponse for the CertID,
 * nonce equal when both sides carry one, thisUpdate not after now+skew,
 * nextUpdate not before now-skew.  Fills *ret (UNKNOWN + detail when
 * refused).  req: the request (its nonce), or NULL.
 */
void trust_ocsp_verify(const unsigned char *der, size_t len,
    OCSP_REQUEST *req, const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret);

/* Ask cert's OCSP responder; UNKNOWN + detail when there is none or it
 * fails. */
void trust_ocsp_query(const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret);

/* Verify a CRL (DER or PEM bytes) of issuer and look up cert in it
 * (RFC 5280 6.3.3: signature by the issuer, nextUpdate honoured). */
void trust_crldp_verify(const unsigned char *data, size_t len,
    const struct trust_revoc_subject *s, struct trust_revoc_fresh *ret);

/* Try cert's http:// CRL distribution points in order, at most this many
 * URIs (a fetch is then bounded by 1 + this many exchanges). */
#define TRUST_REVOC_MAX_CRL_URLS 4
void trust_crldp_query(const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret);

/* 1 when cert names an OCSP responder or a CRL distribution point. */
int trust_revoc_has_source(X509 *cert);

#endif
