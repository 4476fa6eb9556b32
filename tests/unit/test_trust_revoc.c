/*
 * Unit tests of trust/ revocation (issue 12 item 2): OCSP response and CRL
 * verification (tables of good and hostile answers built here with
 * OpenSSL), and the cache: served without a fetch while fresh, single
 * flight, stale answers not served, the background refresher, eviction.
 * The cache tests fetch over real loopback HTTP from a small server thread
 * in this file that serves a canned OCSP response.
 */
#include "../../src/trust/trust_revoc.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "../../src/util/clock.h"
#include "testutil.h"

#define HOUR_S 3600L

/* The fixture PKI: CA, delegated responder (+EKU), a CA-issued certificate
 * without the EKU, a rogue CA, a leaf; and the responder port. */
static struct {
	EVP_PKEY *ca_key, *rsp_key, *noeku_key, *rogue_key, *leaf_key;
	X509 *ca, *rsp, *noeku, *rogue, *leaf;
	int port;
} fx;

static EVP_PKEY *
make_key(void)
{
	EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");

	assert_non_null(k);
	return k;
}

static void
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	assert_non_null(ext);
	assert_int_equal(X509_add_ext(cert, ext, -1), 1);
	X509_EXTENSION_free(ext);
}

/* A certificate for key, named cn, issued by issuer (NULL: self-signed). */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *ikey,
    long serial, const char *ku, const char *eku, const char *aia)
{
	X509 *c = X509_new();
	X509_NAME *n = X509_NAME_new();

	assert_non_null(c);
	assert_int_equal(X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8,
	    (const unsigned char *)cn, -1, -1, 0), 1);
	assert_int_equal(X509_set_version(c, 2), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(c), serial), 1);
	assert_int_equal(X509_set_subject_name(c, n), 1);
	assert_int_equal(X509_set_issuer_name(c, issuer != NULL ?
	    X509_get_subject_name(issuer) : n), 1);
	X509_NAME_free(n);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(c), -86400L));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(c), 30 * 86400L));
	assert_int_equal(X509_set_pubkey(c, key), 1);
	if (issuer == NULL)
		issuer = c;
	add_ext(c, issuer, NID_basic_constraints, eku == NULL && aia == NULL &&
	    ku != NULL && strstr(ku, "keyCertSign") != NULL ?
	    "critical,CA:TRUE" : "critical,CA:FALSE");
	if (ku != NULL)
		add_ext(c, issuer, NID_key_usage, ku);
	if (eku != NULL)
		add_ext(c, issuer, NID_ext_key_usage, eku);
	if (aia != NULL)
		add_ext(c, issuer, NID_info_access, aia);
	assert_true(X509_sign(c, ikey != NULL ? ikey : key, EVP_sha256()) > 0);
	return c;
}

/* ---- OCSP responses ---- */

enum signer { BY_CA, BY_RSP, BY_NOEKU, BY_ROGUE };

/* DER of an OCSP response for the leaf (status, times relative to now in
 * seconds; next_s 0: no nextUpdate); *ret OPENSSL_malloc'd. */
static int
make_ocsp(enum signer by, int status, long this_s, long next_s,
    OCSP_REQUEST *nonce_of, int bad_nonce, unsigned char **ret)
{
	OCSP_BASICRESP *bs = OCSP_BASICRESP_new();
	OCSP_CERTID *id = OCSP_cert_to_id(EVP_sha1(), fx.leaf, fx.ca);
	ASN1_TIME *tu = X509_gmtime_adj(NULL, this_s);
	ASN1_TIME *nu = next_s != 0 ? X509_gmtime_adj(NULL, next_s) : NULL;
	ASN1_TIME *rt = X509_gmtime_adj(NULL, -2 * HOUR_S);
	X509 *signer = by == BY_CA ? fx.ca : by == BY_RSP ? fx.rsp :
	    by == BY_NOEKU ? fx.noeku : fx.rogue;
	EVP_PKEY *key = by == BY_CA ? fx.ca_key : by == BY_RSP ? fx.rsp_key :
	    by == BY_NOEKU ? fx.noeku_key : fx.rogue_key;
	OCSP_RESPONSE *resp;
	int len;

	assert_non_null(OCSP_basic_add1_status(bs, id, status,
	    status == V_OCSP_CERTSTATUS_REVOKED ? OCSP_REVOKED_STATUS_KEYCOMPROMISE
	    : 0, status == V_OCSP_CERTSTATUS_REVOKED ? rt : NULL, tu, nu));
	if (nonce_of != NULL && !bad_nonce)
		assert_int_equal(OCSP_copy_nonce(bs, nonce_of), 1);
	if (bad_nonce)
		assert_int_equal(OCSP_basic_add1_nonce(bs, NULL, 16), 1);
	assert_int_equal(OCSP_basic_sign(bs, signer, key, EVP_sha256(), NULL,
	    0), 1);
	resp = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, bs);
	assert_non_null(resp);
	*ret = NULL;
	len = i2d_OCSP_RESPONSE(resp, ret);
	assert_true(len > 0);
	OCSP_RESPONSE_free(resp);
	OCSP_BASICRESP_free(bs);
	OCSP_CERTID_free(id);
	ASN1_TIME_free(tu);
	ASN1_TIME_free(nu);
	ASN1_TIME_free(rt);
	return len;
}

static const struct trust_revoc_limits *
limits(void)
{
	static struct trust_revoc_limits lim;

	trust_revoc_limits_default(&lim);
	lim.skew_s = 120;
	return &lim;
}

/* The leaf issued by the CA, now, default limits. */
static const struct trust_revoc_subject *
subject(void)
{
	static struct trust_revoc_subject s;

	s.cert = fx.leaf;
	s.issuer = fx.ca;
	s.now_ms = clock_epoch_ms();
	s.lim = limits();
	return &s;
}

struct ocsp_case {
	const char *name;
	enum signer by;
	int status;
	long this_s, next_s;
	int nonce;                  /* 0 none, 1 matching, 2 mismatching */
	enum trust_revoc_status want;
	const char *detail;         /* substring of the refusal, or NULL */
};

static const struct ocsp_case ocsp_cases[] = {
	{ "good by the CA", BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S, 0,
	    TRUST_REVOC_GOOD, NULL },
	{ "good by the delegated responder", BY_RSP, V_OCSP_CERTSTATUS_GOOD,
	    -60, HOUR_S, 1, TRUST_REVOC_GOOD, NULL },
	{ "revoked", BY_RSP, V_OCSP_CERTSTATUS_REVOKED, -60, HOUR_S, 0,
	    TRUST_REVOC_REVOKED, NULL },
	{ "unknown to the responder", BY_CA, V_OCSP_CERTSTATUS_UNKNOWN, -60,
	    HOUR_S, 0, TRUST_REVOC_UNKNOWN, "does not know" },
	{ "no nextUpdate", BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, 0, 0,
	    TRUST_REVOC_GOOD, NULL },
	{ "stale: nextUpdate past", BY_CA, V_OCSP_CERTSTATUS_GOOD,
	    -3 * HOUR_S, -HOUR_S, 0, TRUST_REVOC_UNKNOWN, "stale" },
	{ "nextUpdate past within the skew", BY_CA, V_OCSP_CERTSTATUS_GOOD,
	    -HOUR_S, -60, 0, TRUST_REVOC_GOOD, NULL },
	{ "future: thisUpdate ahead", BY_CA, V_OCSP_CERTSTATUS_GOOD, HOUR_S,
	    2 * HOUR_S, 0, TRUST_REVOC_UNKNOWN, "future" },
	{ "thisUpdate ahead within the skew", BY_CA, V_OCSP_CERTSTATUS_GOOD,
	    60, HOUR_S, 0, TRUST_REVOC_GOOD, NULL },
	{ "signed by another CA", BY_ROGUE, V_OCSP_CERTSTATUS_GOOD, -60,
	    HOUR_S, 0, TRUST_REVOC_UNKNOWN, "not signed" },
	{ "responder without id-kp-OCSPSigning", BY_NOEKU,
	    V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S, 0, TRUST_REVOC_UNKNOWN,
	    "not signed" },
	{ "nonce mismatch", BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S, 2,
	    TRUST_REVOC_UNKNOWN, "nonce" },
};

static void
test_ocsp_verify(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ocsp_cases) / sizeof(ocsp_cases[0]); i++) {
		const struct ocsp_case *c = &ocsp_cases[i];
		OCSP_REQUEST *req = OCSP_REQUEST_new();
		struct trust_revoc_fresh f;
		unsigned char *der;
		int len;

		assert_int_equal(OCSP_request_add1_nonce(req, NULL, -1), 1);
		len = make_ocsp(c->by, c->status, c->this_s, c->next_s,
		    c->nonce == 1 ? req : NULL, c->nonce == 2, &der);
		trust_ocsp_verify(der, (size_t)len, c->nonce != 0 ? req : NULL,
		    subject(), &f);
		if (f.status != c->want)
			fail_msg("%s: status %d, want %d (%s)", c->name,
			    (int)f.status, (int)c->want, f.detail);
		if (c->detail != NULL && strstr(f.detail, c->detail) == NULL)
			fail_msg("%s: detail \"%s\"", c->name, f.detail);
		if (c->want == TRUST_REVOC_REVOKED)
			assert_int_equal(f.reason, OCSP_REVOKED_STATUS_KEYCOMPROMISE);
		if (c->want == TRUST_REVOC_GOOD && c->next_s == 0)
			assert_true(f.next_update_ms > clock_epoch_ms());
		OPENSSL_free(der);
		OCSP_REQUEST_free(req);
	}
}

/* Garbage, truncation, trailing bytes, unsuccessful status. */
static void
test_ocsp_hostile_bytes(void **state)
{
	unsigned char *der, junk[] = { 0x30, 0x03, 0x0a, 0x01, 0x00 };
	struct trust_revoc_fresh f;
	OCSP_RESPONSE *r;
	unsigned char *p = NULL;
	int len, n;

	(void)state;
	len = make_ocsp(BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S, NULL, 0,
	    &der);
	trust_ocsp_verify(der, (size_t)len - 1, NULL, subject(), &f);
	assert_int_equal(f.status, TRUST_REVOC_UNKNOWN);
	trust_ocsp_verify(junk, 2, NULL, subject(), &f);
	assert_int_equal(f.status, TRUST_REVOC_UNKNOWN);
	r = OCSP_response_create(OCSP_RESPONSE_STATUS_TRYLATER, NULL);
	n = i2d_OCSP_RESPONSE(r, &p);
	trust_ocsp_verify(p, (size_t)n, NULL, subject(), &f);
	assert_int_equal(f.status, TRUST_REVOC_UNKNOWN);
	assert_non_null(strstr(f.detail, "trylater"));
	OPENSSL_free(p);
	OCSP_RESPONSE_free(r);
	OPENSSL_free(der);
}

/* ---- CRLs ---- */

/* A CRL (PEM when pem) of issuer signed by key, revoking the leaf when
 * revoke; times relative to now (next_s 0: none).  malloc'd bytes. */
static unsigned char *
make_crl(X509 *issuer, EVP_PKEY *key, int revoke, long this_s, long next_s,
    int pem, size_t *ret_len)
{
	X509_CRL *crl = X509_CRL_new();
	ASN1_TIME *t = X509_gmtime_adj(NULL, this_s);
	ASN1_TIME *n = next_s != 0 ? X509_gmtime_adj(NULL, next_s) : NULL;
	BIO *b = BIO_new(BIO_s_mem());
	unsigned char *out;
	char *data;
	long len;

	assert_int_equal(X509_CRL_set_version(crl, 1), 1);
	assert_int_equal(X509_CRL_set_issuer_name(crl,
	    X509_get_subject_name(issuer)), 1);
	assert_int_equal(X509_CRL_set1_lastUpdate(crl, t), 1);
	if (n != NULL)
		assert_int_equal(X509_CRL_set1_nextUpdate(crl, n), 1);
	if (revoke) {
		X509_REVOKED *r = X509_REVOKED_new();

		assert_int_equal(X509_REVOKED_set_serialNumber(r,
		    X509_get_serialNumber(fx.leaf)), 1);
		assert_int_equal(X509_REVOKED_set_revocationDate(r, t), 1);
		assert_int_equal(X509_CRL_add0_revoked(crl, r), 1);
	}
	assert_true(X509_CRL_sign(crl, key, EVP_sha256()) > 0);
	assert_int_equal(pem ? PEM_write_bio_X509_CRL(b, crl) :
	    i2d_X509_CRL_bio(b, crl), 1);
	len = BIO_get_mem_data(b, &data);
	out = malloc((size_t)len);
	assert_non_null(out);
	memcpy(out, data, (size_t)len);
	*ret_len = (size_t)len;
	BIO_free(b);
	X509_CRL_free(crl);
	ASN1_TIME_free(t);
	ASN1_TIME_free(n);
	return out;
}

static void
test_crl_verify(void **state)
{
	static const struct {
		const char *name;
		int rogue, revoke, pem;
		long this_s, next_s;
		enum trust_revoc_status want;
		const char *detail;
	} cases[] = {
		{ "DER, not listed", 0, 0, 0, -60, HOUR_S, TRUST_REVOC_GOOD, NULL },
		{ "PEM, not listed", 0, 0, 1, -60, HOUR_S, TRUST_REVOC_GOOD, NULL },
		{ "PEM, revoked", 0, 1, 1, -60, HOUR_S, TRUST_REVOC_REVOKED, NULL },
		{ "DER, revoked", 0, 1, 0, -60, 0, TRUST_REVOC_REVOKED, NULL },
		{ "stale", 0, 0, 0, -3 * HOUR_S, -HOUR_S, TRUST_REVOC_UNKNOWN,
		    "stale" },
		{ "future", 0, 0, 0, HOUR_S, 2 * HOUR_S, TRUST_REVOC_UNKNOWN,
		    "future" },
		{ "another CA's", 1, 0, 0, -60, HOUR_S, TRUST_REVOC_UNKNOWN,
		    "another CA" },
	};
	struct trust_revoc_fresh f;
	unsigned char *crl;
	size_t i, len;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		crl = make_crl(cases[i].rogue ? fx.rogue : fx.ca, cases[i].rogue ?
		    fx.rogue_key : fx.ca_key, cases[i].revoke, cases[i].this_s,
		    cases[i].next_s, cases[i].pem, &len);
		trust_crldp_verify(crl, len, subject(), &f);
		if (f.status != cases[i].want)
			fail_msg("%s: status %d (%s)", cases[i].name,
			    (int)f.status, f.detail);
		if (cases[i].detail != NULL &&
		    strstr(f.detail, cases[i].detail) == NULL)
			fail_msg("%s: detail \"%s\"", cases[i].name, f.detail);
		free(crl);
	}
	/* same issuer name, other key: the signature decides */
	crl = make_crl(fx.ca, fx.rogue_key, 1, -60, HOUR_S, 0, &len);
	trust_crldp_verify(crl, len, subject(), &f);
	assert_int_equal(f.status, TRUST_REVOC_UNKNOWN);
	assert_non_null(strstr(f.detail, "signature"));
	free(crl);
}

/* ---- a loopback responder serving one canned body ---- */

static struct {
	int fd;
	pthread_t th;
	atomic_int hits, delay_ms, stop;
	pthread_mutex_t lock;
	unsigned char *body;
	size_t len;
} srv = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Read the request (head and Content-Length body), answer, close. */
static void
srv_answer(int c)
{
	char buf[8192], head[256], *e, *cl;
	size_t got = 0, want = 0;
	ssize_t n;

	while (got < sizeof(buf) - 1 &&
	    (n = read(c, buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		buf[got] = '\0';
		if ((e = strstr(buf, "\r\n\r\n")) != NULL) {
			cl = strcasestr(buf, "Content-Length:");
			want = (size_t)(e + 4 - buf) +
			    (cl != NULL ? (size_t)atol(cl + 15) : 0);
			if (got >= want)
				break;
		}
	}
	atomic_fetch_add(&srv.hits, 1);
	if (atomic_load(&srv.delay_ms) > 0)
		(void)usleep((useconds_t)atomic_load(&srv.delay_ms) * 1000);
	(void)pthread_mutex_lock(&srv.lock);
	(void)snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Type: "
	    "application/ocsp-response\r\nContent-Length: %zu\r\n\r\n",
	    srv.len);
	if (write(c, head, strlen(head)) < 0 ||
	    (srv.len > 0 && write(c, srv.body, srv.len) < 0))
		(void)0;
	(void)pthread_mutex_unlock(&srv.lock);
	(void)close(c);
}

static void *
srv_run(void *arg)
{
	int c;

	(void)arg;
	while (!atomic_load(&srv.stop)) {
		c = accept(srv.fd, NULL, NULL);
		if (c >= 0)
			srv_answer(c);
	}
	return NULL;
}

static void
srv_start(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv.fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv.fd >= 0);
	assert_int_equal(bind(srv.fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(srv.fd, 16), 0);
	assert_int_equal(getsockname(srv.fd, (struct sockaddr *)&sa, &sl), 0);
	fx.port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&srv.th, NULL, srv_run, NULL), 0);
}

/* Serve an OCSP response for the leaf from now on. */
static void
srv_set(enum signer by, int status, long this_s, long next_s)
{
	unsigned char *der;
	int len = make_ocsp(by, status, this_s, next_s, NULL, 0, &der);

	(void)pthread_mutex_lock(&srv.lock);
	free(srv.body);
	srv.body = malloc((size_t)len);
	assert_non_null(srv.body);
	memcpy(srv.body, der, (size_t)len);
	srv.len = (size_t)len;
	(void)pthread_mutex_unlock(&srv.lock);
	OPENSSL_free(der);
	atomic_store(&srv.hits, 0);
}

/* ---- the cache ---- */

static void
test_cache_fresh_then_stale(void **state)
{
	struct trust_revoc *r = trust_revoc_new(limits());
	struct trust_revoc_answer a;
	struct trust_revoc_stats st;
	struct err err = {0};
	int64_t now = clock_epoch_ms();

	(void)state;
	srv_set(BY_RSP, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, now, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_GOOD);
	assert_int_equal(a.source, TRUST_REVOC_SRC_OCSP);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, now + 1000, &a,
	    &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_GOOD);
	assert_int_equal(a.source, TRUST_REVOC_SRC_CACHE);
	assert_int_equal(a.origin, TRUST_REVOC_SRC_OCSP);
	assert_int_equal(atomic_load(&srv.hits), 1);
	/* two hours on: the cached answer is stale and not served; the
	 * responder's (same) answer is stale too: no status */
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca,
	    now + 2 * HOUR_S * 1000, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_UNKNOWN);
	assert_int_equal(atomic_load(&srv.hits), 2);
	/* within failureBackoffSeconds: not asked again */
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca,
	    now + 2 * HOUR_S * 1000, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_UNKNOWN);
	assert_non_null(strstr(a.detail, "backoff"));
	assert_int_equal(atomic_load(&srv.hits), 2);
	trust_revoc_stats(r, now, &st);
	assert_int_equal(st.checks[TRUST_REVOC_GOOD][TRUST_REVOC_SRC_OCSP], 1);
	assert_int_equal(st.checks[TRUST_REVOC_GOOD][TRUST_REVOC_SRC_CACHE], 1);
	assert_int_equal(st.checks[TRUST_REVOC_UNKNOWN][TRUST_REVOC_SRC_NONE], 2);
	assert_true(st.responder_failures >= 1);
	assert_int_equal(st.entries, 1);
	assert_true(st.oldest_age_ms >= 60000);
	trust_revoc_free(r);
}

struct flight {
	struct trust_revoc *r;
	struct trust_revoc_answer a;
};

static void *
flight_run(void *arg)
{
	struct flight *f = arg;
	struct err err = {0};

	(void)trust_revoc_check(f->r, fx.leaf, fx.ca, 0, &f->a, &err);
	return NULL;
}

/* Concurrent checks of one certificate: one fetch, every check answered. */
static void
test_cache_single_flight(void **state)
{
	struct trust_revoc *r = trust_revoc_new(limits());
	struct flight f[4];
	pthread_t th[4];
	size_t i;

	(void)state;
	srv_set(BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S);
	atomic_store(&srv.delay_ms, 300);
	for (i = 0; i < 4; i++) {
		f[i].r = r;
		assert_int_equal(pthread_create(&th[i], NULL, flight_run, &f[i]), 0);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(f[i].a.status, TRUST_REVOC_GOOD);
	}
	atomic_store(&srv.delay_ms, 0);
	assert_int_equal(atomic_load(&srv.hits), 1);
	trust_revoc_free(r);
}

/* The refresher fetches an answer due within refreshAheadSeconds without
 * any check asking. */
static void
test_cache_refresher(void **state)
{
	struct trust_revoc_limits lim = *limits();
	struct trust_revoc *r;
	struct trust_revoc_answer a;
	struct err err = {0};
	int i;

	(void)state;
	lim.refresh_ahead_s = 86400;   /* capped at half the answer's life */
	r = trust_revoc_new(&lim);
	srv_set(BY_CA, V_OCSP_CERTSTATUS_GOOD, -HOUR_S, HOUR_S);
	assert_int_equal(trust_revoc_start(r, &err), 0);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, 0, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_GOOD);
	for (i = 0; i < 50 && atomic_load(&srv.hits) < 2; i++)
		(void)usleep(100000);
	assert_true(atomic_load(&srv.hits) >= 2);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, 0, &a, &err), 0);
	assert_int_equal(a.source, TRUST_REVOC_SRC_CACHE);
	trust_revoc_free(r);
}

/* An answer that has expired is not polled in the background (a dead or
 * stale responder is asked again only when a check needs it). */
static void
test_cache_refresher_stops_at_expiry(void **state)
{
	struct trust_revoc_limits lim = *limits();
	struct trust_revoc *r;
	struct trust_revoc_answer a;
	struct err err = {0};
	int h;

	(void)state;
	lim.skew_s = 0;
	lim.failure_backoff_s = 0;
	lim.refresh_ahead_s = 86400;
	r = trust_revoc_new(&lim);
	srv_set(BY_CA, V_OCSP_CERTSTATUS_GOOD, -HOUR_S, 2);
	assert_int_equal(trust_revoc_start(r, &err), 0);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, 0, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_GOOD);
	(void)usleep(4000000);      /* expired; refreshes failed (stale) */
	h = atomic_load(&srv.hits);
	(void)usleep(2500000);
	assert_int_equal(atomic_load(&srv.hits), h);
	trust_revoc_free(r);
}

/* maxEntries bounds the cache. */
static void
test_cache_eviction(void **state)
{
	struct trust_revoc_limits lim = *limits();
	struct trust_revoc *r;
	struct trust_revoc_answer a;
	struct trust_revoc_stats st;
	struct err err = {0};

	(void)state;
	lim.max_entries = 1;
	r = trust_revoc_new(&lim);
	srv_set(BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S);
	assert_int_equal(trust_revoc_check(r, fx.leaf, fx.ca, 0, &a, &err), 0);
	/* no AIA, no CRL DP: nothing to ask, no status, nothing fetched */
	assert_int_equal(trust_revoc_check(r, fx.rsp, fx.ca, 0, &a, &err), 0);
	assert_int_equal(a.status, TRUST_REVOC_UNKNOWN);
	trust_revoc_stats(r, 0, &st);
	assert_int_equal(st.entries, 1);
	assert_int_equal(atomic_load(&srv.hits), 1);
	trust_revoc_free(r);
}

/* The leg policy over a chain: require / prefer / revoked. */
static void
test_chain_policy(void **state)
{
	struct trust_revoc_limits lim = *limits();
	STACK_OF(X509) *chain = sk_X509_new_null();
	struct trust_revoc_note note;
	struct trust_revoc *r;
	struct err err;

	(void)state;
	lim.failure_backoff_s = 0;
	r = trust_revoc_new(&lim);
	assert_true(sk_X509_push(chain, fx.leaf) > 0);
	assert_true(sk_X509_push(chain, fx.ca) > 0);
	srv_set(BY_RSP, V_OCSP_CERTSTATUS_REVOKED, -60, HOUR_S);
	err_clear(&err);
	assert_int_equal(trust_revoc_chain(r, TRUST_REVOC_PREFER, chain, 0,
	    &note, &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0101");
	trust_revoc_free(r);
	r = trust_revoc_new(&lim);
	srv_set(BY_ROGUE, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S);
	err_clear(&err);
	assert_int_equal(trust_revoc_chain(r, TRUST_REVOC_REQUIRE, chain, 0,
	    &note, &err), -1);
	assert_int_equal(err.kind, ERR_UNAVAILABLE);
	err_clear(&err);
	assert_int_equal(trust_revoc_chain(r, TRUST_REVOC_PREFER, chain, 0,
	    &note, &err), 0);
	assert_int_equal(note.failed_open, 1);
	assert_non_null(strstr(note.detail, "not signed"));
	srv_set(BY_CA, V_OCSP_CERTSTATUS_GOOD, -60, HOUR_S);
	err_clear(&err);
	assert_int_equal(trust_revoc_chain(r, TRUST_REVOC_REQUIRE, chain, 0,
	    &note, &err), 0);
	assert_int_equal(note.failed_open, 0);
	/* a chain of one (self-signed signer): nobody to ask */
	(void)sk_X509_pop(chain);
	err_clear(&err);
	assert_int_equal(trust_revoc_chain(r, TRUST_REVOC_REQUIRE, chain, 0,
	    &note, &err), -1);
	assert_int_equal(err.kind, ERR_UNAVAILABLE);
	sk_X509_free(chain);
	trust_revoc_free(r);
}

static int
setup(void **state)
{
	char aia[128];

	(void)state;
	srv_start();
	(void)snprintf(aia, sizeof(aia), "OCSP;URI:http://127.0.0.1:%d/",
	    fx.port);
	fx.ca_key = make_key();
	fx.rsp_key = make_key();
	fx.noeku_key = make_key();
	fx.rogue_key = make_key();
	fx.leaf_key = make_key();
	fx.ca = make_cert(fx.ca_key, "Test CA", NULL, NULL, 1,
	    "critical,keyCertSign,cRLSign", NULL, NULL);
	fx.rogue = make_cert(fx.rogue_key, "Rogue CA", NULL, NULL, 1,
	    "critical,keyCertSign,cRLSign", NULL, NULL);
	fx.rsp = make_cert(fx.rsp_key, "Test OCSP", fx.ca, fx.ca_key, 2,
	    "critical,digitalSignature", "OCSPSigning", NULL);
	fx.noeku = make_cert(fx.noeku_key, "Test not OCSP", fx.ca, fx.ca_key,
	    3, "critical,digitalSignature", NULL, NULL);
	fx.leaf = make_cert(fx.leaf_key, "Test leaf", fx.ca, fx.ca_key, 4,
	    "critical,digitalSignature", NULL, aia);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	atomic_store(&srv.stop, 1);
	(void)shutdown(srv.fd, SHUT_RDWR);
	(void)close(srv.fd);
	(void)pthread_join(srv.th, NULL);
	free(srv.body);
	X509_free(fx.ca);
	X509_free(fx.rogue);
	X509_free(fx.rsp);
	X509_free(fx.noeku);
	X509_free(fx.leaf);
	EVP_PKEY_free(fx.ca_key);
	EVP_PKEY_free(fx.rsp_key);
	EVP_PKEY_free(fx.noeku_key);
	EVP_PKEY_free(fx.rogue_key);
	EVP_PKEY_free(fx.leaf_key);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ocsp_verify),
		cmocka_unit_test(test_ocsp_hostile_bytes),
		cmocka_unit_test(test_crl_verify),
		cmocka_unit_test(test_cache_fresh_then_stale),
		cmocka_unit_test(test_cache_single_flight),
		cmocka_unit_test(test_cache_refresher),
		cmocka_unit_test(test_cache_refresher_stops_at_expiry),
		cmocka_unit_test(test_cache_eviction),
		cmocka_unit_test(test_chain_policy),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
