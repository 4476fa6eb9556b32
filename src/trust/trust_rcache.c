/*
 * trust_rcache.c — the revocation engine's shared cache (issue 12 item 2).
 *
 * Entries are keyed by (SHA-256 of the issuer's public key, serial): the
 * pair RFC 6960's CertID names, without its hash-algorithm variants.  An
 * entry holds the last good or revoked answer until its nextUpdate (plus
 * the clock-skew allowance); a fresh answer is served without any fetch.
 * A missing or stale answer is fetched by the first check that needs it,
 * with the lock released: checks of the same key wait for that one fetch
 * (single flight, bounded by the fetch timeouts), checks of other keys do
 * not wait at all.  A failed fetch is not repeated for failureBackoffSeconds
 * (a dead responder is not hammered by every request).  The refresher
 * thread fetches answers due within refreshAheadSeconds before they expire,
 * one at a time (until they have expired), and drops entries unused for
 * idleSeconds.
 */
#include "trust_revoc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "../util/clock.h"

#define TRUST_RCACHE_BUCKETS 1024
#define TRUST_RCACHE_SERIAL_MAX 64     /* DER bytes of a serial (RFC 5280: <= 20) */
#define TRUST_RCACHE_KEY_MAX (32 + TRUST_RCACHE_SERIAL_MAX)

struct trust_rcache_entry {
	unsigned char key[TRUST_RCACHE_KEY_MAX];
	size_t key_len;
	X509 *cert, *issuer;           /* up-referenced, for the refresher */
	int has;                       /* ans is a good/revoked answer */
	struct trust_revoc_fresh ans;
	int inflight;                  /* a fetch runs (entry pinned) */
	unsigned waiters;              /* checks waiting for it (pinned) */
	int64_t failed_mono_ms;        /* last failed fetch; 0 none */
	int64_t used_ms;               /* last check (epoch) */
	struct trust_rcache_entry *next;
};

struct trust_revoc {
	pthread_mutex_t lock;
	pthread_cond_t done;           /* a fetch ended */
	pthread_cond_t wake;           /* the refresher: stop */
	struct trust_revoc_limits lim;
	struct trust_rcache_entry *bucket[TRUST_RCACHE_BUCKETS];
	size_t n;
	pthread_t thread;
	int running, stop;
	_Atomic uint64_t checks[3][TRUST_REVOC_N_SOURCES];
	_Atomic uint64_t failures;
};

void
trust_revoc_limits_default(struct trust_revoc_limits *lim)
{
	lim->connect_timeout_ms = 2000;
	lim->timeout_s = 5;
	lim->max_ocsp_bytes = 64u * 1024u;
	lim->max_crl_bytes = 8u * 1024u * 1024u;
	lim->skew_s = 120;
	lim->refresh_ahead_s = 300;
	lim->no_next_update_s = 300;
	lim->failure_backoff_s = 10;
	lim->idle_evict_s = 86400;
	lim->max_entries = 10000;
}

const char *
trust_revoc_status_name(enum trust_revoc_status st)
{
	return st == TRUST_REVOC_GOOD ? "good" :
	    st == TRUST_REVOC_REVOKED ? "revoked" : "unknown";
}

const char *
trust_revoc_source_name(enum trust_revoc_source src)
{
	static const char *const names[TRUST_REVOC_N_SOURCES] = {
		"none", "ocsp", "crldp", "crlfile", "cache" };

	return (unsigned)src < TRUST_REVOC_N_SOURCES ? names[src] : "none";
}

/* The two condition variables, on CLOCK_MONOTONIC; 0 / -1. */
static int
trust_rcache_conds(struct trust_revoc *r)
{
	pthread_condattr_t ca;
	int rc = -1;

	if (pthread_condattr_init(&ca) != 0)
		return -1;
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	    pthread_cond_init(&r->done, &ca) == 0) {
		if (pthread_cond_init(&r->wake, &ca) == 0)
			rc = 0;
		else
			(void)pthread_cond_destroy(&r->done);
	}
	(void)pthread_condattr_destroy(&ca);
	return rc;
}

struct trust_revoc *
trust_revoc_new(const struct trust_revoc_limits *lim)
{
	struct trust_revoc *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	if (pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r);
		return NULL;
	}
	if (trust_rcache_conds(r) == -1) {
		(void)pthread_mutex_destroy(&r->lock);
		free(r);
		return NULL;
	}
	r->lim = *lim;
	return r;
}

void
trust_revoc_set_limits(struct trust_revoc *r,
    const struct trust_revoc_limits *lim)
{
	if (pthread_mutex_lock(&r->lock) != 0)
		return;
	r->lim = *lim;
	(void)pthread_mutex_unlock(&r->lock);
}

static void
trust_rcache_entry_free(struct trust_rcache_entry *e)
{
	X509_free(e->cert);
	X509_free(e->issuer);
	free(e);
}

/* The key of (issuer key, serial); 0 / -1 (serial too long). */
static int
trust_rcache_key(X509 *cert, X509 *issuer, unsigned char *key,
    size_t *ret_len)
{
	const ASN1_BIT_STRING *pk = X509_get0_pubkey_bitstr(issuer);
	const ASN1_INTEGER *serial = X509_get0_serialNumber(cert);
	unsigned char *p = key + 32;
	int n;

	if (pk == NULL || EVP_Digest(pk->data, (size_t)pk->length, key, NULL,
	    EVP_sha256(), NULL) != 1)
		return -1;
	n = i2d_ASN1_INTEGER(serial, NULL);
	if (n <= 0 || n > TRUST_RCACHE_SERIAL_MAX ||
	    i2d_ASN1_INTEGER(serial, &p) != n)
		return -1;
	*ret_len = 32 + (size_t)n;
	return 0;
}

static size_t
trust_rcache_hash(const unsigned char *key, size_t len)
{
	/* the first bytes are a SHA-256: mix in the serial's last bytes */
	size_t h = ((size_t)key[0] << 8 | key[1]) ^ key[len - 1] ^
	    (size_t)key[len - 2] << 3;

	return h % TRUST_RCACHE_BUCKETS;
}

/* Is the held answer fresh at now (nextUpdate + skew not passed)? */
static int
trust_rcache_fresh(const struct trust_revoc *r,
    const struct trust_rcache_entry *e, int64_t now_ms)
{
	return e->has &&
	    now_ms <= e->ans.next_update_ms + (int64_t)r->lim.skew_s * 1000 &&
	    e->ans.this_update_ms <= now_ms + (int64_t)r->lim.skew_s * 1000;
}

/* Unlink and free the least recently used unpinned entry (lock held). */
static void
trust_rcache_evict_one(struct trust_revoc *r)
{
	struct trust_rcache_entry **best = NULL, **pp;
	size_t b;

	for (b = 0; b < TRUST_RCACHE_BUCKETS; b++)
		for (pp = &r->bucket[b]; *pp != NULL; pp = &(*pp)->next)
			if (!(*pp)->inflight && (*pp)->waiters == 0 &&
			    (best == NULL || (*pp)->used_ms < (*best)->used_ms))
				best = pp;
	if (best != NULL) {
		struct trust_rcache_entry *e = *best;

		*best = e->next;
		trust_rcache_entry_free(e);
		r->n--;
	}
}

/* The entry of key, created (with references to both certificates) when
 * absent; NULL when out of memory (lock held). */
static struct trust_rcache_entry *
trust_rcache_get(struct trust_revoc *r, const unsigned char *key,
    size_t len, X509 *cert, X509 *issuer)
{
	size_t h = trust_rcache_hash(key, len);
	struct trust_rcache_entry *e;

	for (e = r->bucket[h]; e != NULL; e = e->next)
		if (e->key_len == len && memcmp(e->key, key, len) == 0)
			return e;
	if (r->n >= r->lim.max_entries)
		trust_rcache_evict_one(r);
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	memcpy(e->key, key, len);
	e->key_len = len;
	if (X509_up_ref(cert) != 1 || X509_up_ref(issuer) != 1) {
		free(e);
		return NULL;
	}
	e->cert = cert;
	e->issuer = issuer;
	e->next = r->bucket[h];
	r->bucket[h] = e;
	r->n++;
	return e;
}

/* Ask the certificate's OCSP responder, then its CRL distribution points;
 * responder failures counted.  No lock held. */
static void
trust_rcache_fetch(struct trust_revoc *r, const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret)
{
	struct trust_revoc_fresh crl;
	char first[sizeof(ret->detail)];

	trust_ocsp_query(s, ret);
	if (ret->status != TRUST_REVOC_UNKNOWN)
		return;
	if (ret->asked)
		atomic_fetch_add(&r->failures, 1);
	trust_crldp_query(s, &crl);
	if (crl.status == TRUST_REVOC_UNKNOWN && crl.asked)
		atomic_fetch_add(&r->failures, 1);
	if (crl.status != TRUST_REVOC_UNKNOWN) {
		*ret = crl;
		return;
	}
	(void)snprintf(first, sizeof(first), "%s", ret->detail);
	(void)snprintf(ret->detail, sizeof(ret->detail), "%.95s; %.95s",
	    first, crl.detail);
}

/* Put a fetch's result into e and wake its waiters (lock held). */
static void
trust_rcache_store(struct trust_revoc *r, struct trust_rcache_entry *e,
    const struct trust_revoc_fresh *f)
{
	if (f->status != TRUST_REVOC_UNKNOWN) {
		e->ans = *f;
		e->has = 1;
		e->failed_mono_ms = 0;
	} else
		e->failed_mono_ms = clock_mono_ms();
	e->inflight = 0;
	(void)pthread_cond_broadcast(&r->done);
}

/* Release the lock around a fetch of e's status (lock held on entry and
 * on return; e pinned by inflight meanwhile). */
static void
trust_rcache_refetch(struct trust_revoc *r, struct trust_rcache_entry *e,
    int64_t now_ms, struct trust_revoc_fresh *ret)
{
	struct trust_revoc_limits lim = r->lim;
	struct trust_revoc_subject s = { e->cert, e->issuer, now_ms, &lim };

	e->inflight = 1;
	(void)pthread_mutex_unlock(&r->lock);
	trust_rcache_fetch(r, &s, ret);
	(void)pthread_mutex_lock(&r->lock);
	trust_rcache_store(r, e, ret);
}

/* An absolute CLOCK_MONOTONIC instant ms from now (the conds use it). */
static struct timespec
trust_rcache_after(int64_t ms)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* ret from an answer, as the check reports it. */
static void
trust_rcache_fill(struct trust_revoc_answer *ret,
    const struct trust_revoc_fresh *f, enum trust_revoc_source src)
{
	ret->status = f->status;
	ret->source = f->status == TRUST_REVOC_UNKNOWN ? TRUST_REVOC_SRC_NONE : src;
	ret->origin = f->origin;
	ret->this_update_ms = f->this_update_ms;
	ret->next_update_ms = f->next_update_ms;
	ret->reason = f->reason;
	(void)snprintf(ret->detail, sizeof(ret->detail), "%s", f->detail);
}

static void
trust_rcache_unknown(struct trust_revoc_answer *ret, const char *why)
{
	ret->status = TRUST_REVOC_UNKNOWN;
	ret->source = TRUST_REVOC_SRC_NONE;
	(void)snprintf(ret->detail, sizeof(ret->detail), "%s", why);
}

/*
 * The answer for e at now (lock held): fresh from the cache; else wait for
 * the fetch in flight (at most one exchange's timeouts); else, unless the
 * last fetch failed within the backoff, fetch it ourselves.
 */
static void
trust_rcache_answer(struct trust_revoc *r, struct trust_rcache_entry *e,
    int64_t now_ms, struct trust_revoc_answer *ret)
{
	struct trust_revoc_fresh f;
	/* a fetch is at most one OCSP and TRUST_REVOC_MAX_CRL_URLS CRL
	 * exchanges, each within the connect and exchange timeouts */
	struct timespec until = trust_rcache_after(
	    (1 + TRUST_REVOC_MAX_CRL_URLS) * ((int64_t)r->lim.connect_timeout_ms +
	    (int64_t)r->lim.timeout_s * 1000) + 1000);
	int rc;

	for (;;) {
		if (trust_rcache_fresh(r, e, now_ms)) {
			trust_rcache_fill(ret, &e->ans, TRUST_REVOC_SRC_CACHE);
			return;
		}
		if (!e->inflight)
			break;
		e->waiters++;
		rc = pthread_cond_timedwait(&r->done, &r->lock, &until);
		e->waiters--;
		if (rc != 0 && e->inflight) {
			trust_rcache_unknown(ret, "no answer from the fetch "
			    "in flight");
			return;
		}
	}
	if (e->failed_mono_ms != 0 && clock_mono_ms() - e->failed_mono_ms <
	    (int64_t)r->lim.failure_backoff_s * 1000) {
		trust_rcache_unknown(ret, "revocation sources failed recently "
		    "(backoff)");
		return;
	}
	trust_rcache_refetch(r, e, now_ms, &f);
	trust_rcache_fill(ret, &f, f.origin);
}

int
trust_revoc_check(struct trust_revoc *r, X509 *cert, X509 *issuer,
    int64_t now_ms, struct trust_revoc_answer *ret, struct err *err)
{
	unsigned char key[TRUST_RCACHE_KEY_MAX];
	struct trust_rcache_entry *e;
	size_t len;

	if (r == NULL || cert == NULL || issuer == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "revocation check "
		    "without certificate");
	memset(ret, 0, sizeof(*ret));
	ret->reason = -1;
	if (now_ms == 0)
		now_ms = clock_epoch_ms();
	if (trust_rcache_key(cert, issuer, key, &len) == -1) {
		trust_rcache_unknown(ret, "unusable serial or issuer key");
		goto out;
	}
	if (pthread_mutex_lock(&r->lock) != 0)
		return err_set(err, ERR_INTERNAL, NULL, "revocation cache lock");
	e = trust_rcache_get(r, key, len, cert, issuer);
	if (e != NULL) {
		e->used_ms = now_ms;
		trust_rcache_answer(r, e, now_ms, ret);
	}
	(void)pthread_mutex_unlock(&r->lock);
	if (e == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
out:
	trust_revoc_count(r, ret->status, ret->source);
	return 0;
}

void
trust_revoc_count(struct trust_revoc *r, enum trust_revoc_status st,
    enum trust_revoc_source src)
{
	if (r != NULL && (unsigned)st < 3 &&
	    (unsigned)src < TRUST_REVOC_N_SOURCES)
		atomic_fetch_add(&r->checks[st][src], 1);
}

/* Is e's answer due for a refresh at now: used lately, not failed within
 * the backoff, not yet expired (an expired answer is asked for again by
 * the next check that needs it, not in the background, so a dead
 * responder is not polled for idleSeconds), and within refreshAheadSeconds
 * (or half its lifetime, when shorter) of nextUpdate?  (lock held) */
static int
trust_rcache_due(const struct trust_revoc *r,
    const struct trust_rcache_entry *e, int64_t now_ms, int64_t mono_ms)
{
	int64_t ahead = (int64_t)r->lim.refresh_ahead_s * 1000;
	int64_t life = e->ans.next_update_ms - e->ans.this_update_ms;
	int64_t backoff = (int64_t)r->lim.failure_backoff_s * 1000;

	if (e->inflight || !e->has || !trust_rcache_fresh(r, e, now_ms))
		return 0;
	if (now_ms - e->used_ms > (int64_t)r->lim.idle_evict_s * 1000)
		return 0;
	if (e->failed_mono_ms != 0 &&
	    mono_ms - e->failed_mono_ms < (backoff > 1000 ? backoff : 1000))
		return 0;
	if (life / 2 < ahead)
		ahead = life / 2;
	return now_ms >= e->ans.next_update_ms - ahead;
}

/* Drop idle unpinned entries; return the entry due soonest, or NULL. */
static struct trust_rcache_entry *
trust_rcache_sweep(struct trust_revoc *r, int64_t now_ms)
{
	struct trust_rcache_entry **pp, *e, *best = NULL;
	int64_t mono = clock_mono_ms();
	size_t b;

	for (b = 0; b < TRUST_RCACHE_BUCKETS; b++)
		for (pp = &r->bucket[b]; (e = *pp) != NULL;) {
			if (!e->inflight && e->waiters == 0 && now_ms -
			    e->used_ms > (int64_t)r->lim.idle_evict_s * 1000) {
				*pp = e->next;
				trust_rcache_entry_free(e);
				r->n--;
				continue;
			}
			if (trust_rcache_due(r, e, now_ms, mono) &&
			    (best == NULL || e->ans.next_update_ms <
			    best->ans.next_update_ms))
				best = e;
			pp = &e->next;
		}
	return best;
}

/* The refresher: once a second, refresh what is due, one at a time. */
static void *
trust_rcache_run(void *arg)
{
	struct trust_revoc *r = arg;
	struct trust_rcache_entry *e;
	struct trust_revoc_fresh f;
	struct timespec ts;

	(void)pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		ts = trust_rcache_after(1000);
		(void)pthread_cond_timedwait(&r->wake, &r->lock, &ts);
		while (!r->stop &&
		    (e = trust_rcache_sweep(r, clock_epoch_ms())) != NULL)
			trust_rcache_refetch(r, e, clock_epoch_ms(), &f);
	}
	(void)pthread_mutex_unlock(&r->lock);
	OPENSSL_thread_stop();
	return NULL;
}

int
trust_revoc_start(struct trust_revoc *r, struct err *err)
{
	if (r->running)
		return 0;
	if (pthread_create(&r->thread, NULL, trust_rcache_run, r) != 0)
		return err_set(err, ERR_INTERNAL, NULL, "could not start the "
		    "revocation refresher");
	r->running = 1;
	return 0;
}

void
trust_revoc_free(struct trust_revoc *r)
{
	struct trust_rcache_entry *e;
	size_t b;

	if (r == NULL)
		return;
	if (r->running) {
		(void)pthread_mutex_lock(&r->lock);
		r->stop = 1;
		(void)pthread_cond_broadcast(&r->wake);
		(void)pthread_mutex_unlock(&r->lock);
		(void)pthread_join(r->thread, NULL);
	}
	for (b = 0; b < TRUST_RCACHE_BUCKETS; b++)
		while ((e = r->bucket[b]) != NULL) {
			r->bucket[b] = e->next;
			trust_rcache_entry_free(e);
		}
	(void)pthread_cond_destroy(&r->done);
	(void)pthread_cond_destroy(&r->wake);
	(void)pthread_mutex_destroy(&r->lock);
	free(r);
}

void
trust_revoc_stats(struct trust_revoc *r, int64_t now_ms,
    struct trust_revoc_stats *ret)
{
	struct trust_rcache_entry *e;
	size_t b, s, src;

	memset(ret, 0, sizeof(*ret));
	ret->oldest_age_ms = -1;
	for (s = 0; s < 3; s++)
		for (src = 0; src < TRUST_REVOC_N_SOURCES; src++)
			ret->checks[s][src] = atomic_load(&r->checks[s][src]);
	ret->responder_failures = atomic_load(&r->failures);
	if (now_ms == 0)
		now_ms = clock_epoch_ms();
	if (pthread_mutex_lock(&r->lock) != 0)
		return;
	ret->entries = r->n;
	for (b = 0; b < TRUST_RCACHE_BUCKETS; b++)
		for (e = r->bucket[b]; e != NULL; e = e->next)
			if (e->has && now_ms - e->ans.this_update_ms >
			    ret->oldest_age_ms)
				ret->oldest_age_ms = now_ms - e->ans.this_update_ms;
	(void)pthread_mutex_unlock(&r->lock);
}
