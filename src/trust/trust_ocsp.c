/*
 * trust_ocsp.c — OCSP (RFC 6960) for one certificate: the responder URL
 * from its Authority Information Access (RFC 5280 4.2.2.1), a request with
 * a nonce (RFC 6960 4.4.1, optional in the answer: RFC 5019 profile
 * responders omit it), and the verification of the answer.
 */
#include "trust_revoc.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/x509v3.h>

#include "../util/clock.h"

#define TRUST_OCSP_CT "application/ocsp-request"

/* Record why an answer is refused (or a fetch failed) as UNKNOWN. */
static void
trust_ocsp_unknown(struct trust_revoc_fresh *ret, const char *why,
    const char *more)
{
	ret->status = TRUST_REVOC_UNKNOWN;
	ret->origin = TRUST_REVOC_SRC_OCSP;
	(void)snprintf(ret->detail, sizeof(ret->detail), "ocsp: %.150s%s%.30s", why,
	    more != NULL ? ": " : "", more != NULL ? more : "");
}

int
trust_ocsp_url(X509 *cert, char *buf, size_t size)
{
	STACK_OF(OPENSSL_STRING) *urls = X509_get1_ocsp(cert);
	int i, found = 0;

	for (i = 0; i < sk_OPENSSL_STRING_num(urls) && !found; i++) {
		const char *u = sk_OPENSSL_STRING_value(urls, i);

		if (strncmp(u, "http://", 7) == 0 && strlen(u) < size) {
			(void)snprintf(buf, size, "%s", u);
			found = 1;
		}
	}
	X509_email_free(urls);
	return found;
}

/* An ASN1 time as ms since the epoch; -1 when unreadable (trust_revoc.h:
 * the one reader of OCSP and CRL times). */
int
trust_revoc_time(const ASN1_TIME *t, int64_t *ret)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return -1;
	*ret = (int64_t)timegm(&tm) * 1000;
	return 0;
}

/*
 * RFC 6960 4.2.2.1 / RFC 5280 6.3.3: thisUpdate not in the future and
 * nextUpdate (when given) not in the past, each within the clock-skew
 * allowance.  Fills the times; 0 ok, -1 with a reason.
 */
static int
trust_ocsp_window(const ASN1_GENERALIZEDTIME *thisupd,
    const ASN1_GENERALIZEDTIME *nextupd, const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret, const char **why)
{
	const struct trust_revoc_limits *lim = s->lim;
	int64_t skew = (int64_t)lim->skew_s * 1000, now_ms = s->now_ms;

	if (trust_revoc_time(thisupd, &ret->this_update_ms) == -1)
		return *why = "unreadable thisUpdate", -1;
	if (ret->this_update_ms > now_ms + skew)
		return *why = "thisUpdate in the future", -1;
	if (nextupd == NULL) {
		ret->next_update_ms = now_ms + (int64_t)lim->no_next_update_s * 1000;
		return 0;
	}
	if (trust_revoc_time(nextupd, &ret->next_update_ms) == -1)
		return *why = "unreadable nextUpdate", -1;
	if (ret->next_update_ms < ret->this_update_ms)
		return *why = "nextUpdate before thisUpdate", -1;
	if (ret->next_update_ms + skew < now_ms)
		return *why = "stale response (nextUpdate passed)", -1;
	return 0;
}

/*
 * RFC 6960 4.2.2.2: the response is signed by the CA that issued cert, or
 * by a responder certificate the CA issued with id-kp-OCSPSigning.
 * OCSP_basic_verify() builds the signer's chain to issuer (trusted as given)
 * and makes both checks against the CertID; a key of any other CA fails.
 */
static int
trust_ocsp_signed(OCSP_BASICRESP *bs, X509 *issuer)
{
	X509_STORE *store = X509_STORE_new();
	STACK_OF(X509) *certs = sk_X509_new_null();
	int ok = 0;

	if (store != NULL && certs != NULL &&
	    X509_STORE_add_cert(store, issuer) == 1 &&
	    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN) == 1 &&
	    sk_X509_push(certs, issuer) > 0)
		ok = OCSP_basic_verify(bs, certs, store, 0) == 1;
	sk_X509_free(certs);
	X509_STORE_free(store);
	return ok;
}

/* The basic response's answer for id; 0 / -1 with *why. */
static int
trust_ocsp_single(OCSP_BASICRESP *bs, OCSP_CERTID *id,
    const struct trust_revoc_subject *s, struct trust_revoc_fresh *ret,
    const char **why)
{
	ASN1_GENERALIZEDTIME *rev = NULL, *thisupd = NULL, *nextupd = NULL;
	int st = -1, reason = -1;

	if (OCSP_resp_find_status(bs, id, &st, &reason, &rev, &thisupd,
	    &nextupd) != 1)
		return *why = "no status for the certificate", -1;
	if (trust_ocsp_window(thisupd, nextupd, s, ret, why) == -1)
		return -1;
	switch (st) {
	case V_OCSP_CERTSTATUS_GOOD:
		ret->status = TRUST_REVOC_GOOD;
		break;
	case V_OCSP_CERTSTATUS_REVOKED:
		ret->status = TRUST_REVOC_REVOKED;
		ret->reason = reason;
		break;
	default:
		return *why = "responder does not know the certificate", -1;
	}
	return 0;
}

void
trust_ocsp_verify(const unsigned char *der, size_t len,
    OCSP_REQUEST *req, const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret)
{
	const unsigned char *p = der;
	OCSP_RESPONSE *resp = d2i_OCSP_RESPONSE(NULL, &p, (long)len);
	OCSP_BASICRESP *bs = NULL;
	OCSP_CERTID *id = NULL;
	const char *why = NULL;
	int n;

	memset(ret, 0, sizeof(*ret));
	ret->origin = TRUST_REVOC_SRC_OCSP;
	ret->reason = -1;
	if (resp == NULL || p != der + len)
		why = "not a DER OCSPResponse";
	else if ((n = OCSP_response_status(resp)) !=
	    OCSP_RESPONSE_STATUS_SUCCESSFUL)
		why = OCSP_response_status_str(n);
	else if ((bs = OCSP_response_get1_basic(resp)) == NULL)
		why = "not a basic response";
	else if (req != NULL && OCSP_check_nonce(req, bs) == 0)
		why = "nonce mismatch";
	else if (!trust_ocsp_signed(bs, s->issuer))
		why = "response not signed by the issuer or its responder";
	else if ((id = OCSP_cert_to_id(EVP_sha1(), s->cert, s->issuer)) == NULL)
		why = "could not build the CertID";
	else
		(void)trust_ocsp_single(bs, id, s, ret, &why);
	if (why != NULL)
		trust_ocsp_unknown(ret, why, NULL);
	OCSP_CERTID_free(id);
	OCSP_BASICRESP_free(bs);
	OCSP_RESPONSE_free(resp);
	ERR_clear_error();
}

/* RFC 6960 4.1.1: a request for cert's CertID (SHA-1, as responders
 * expect) with a nonce; NULL when out of memory. */
static OCSP_REQUEST *
trust_ocsp_request(X509 *cert, X509 *issuer)
{
	OCSP_REQUEST *req = OCSP_REQUEST_new();
	OCSP_CERTID *id = OCSP_cert_to_id(EVP_sha1(), cert, issuer);

	if (req == NULL || id == NULL || OCSP_request_add0_id(req, id) == NULL) {
		OCSP_CERTID_free(id);
		OCSP_REQUEST_free(req);
		return NULL;
	}
	if (OCSP_request_add1_nonce(req, NULL, -1) != 1) {
		OCSP_REQUEST_free(req);
		return NULL;
	}
	return req;
}

void
trust_ocsp_query(const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret)
{
	char url[1024];
	struct trust_fetch_req q = { url, TRUST_OCSP_CT,
		ASN1_ITEM_rptr(OCSP_REQUEST), NULL, s->lim->max_ocsp_bytes };
	OCSP_REQUEST *req = NULL;
	unsigned char *der = NULL;
	size_t len = 0;
	struct err err = {0};

	memset(ret, 0, sizeof(*ret));
	ret->reason = -1;
	if (!trust_ocsp_url(s->cert, url, sizeof(url))) {
		trust_ocsp_unknown(ret, "no http responder in the AIA", NULL);
		return;
	}
	if ((req = trust_ocsp_request(s->cert, s->issuer)) == NULL) {
		trust_ocsp_unknown(ret, "could not build the request", NULL);
		return;
	}
	ret->asked = 1;
	q.req = (const ASN1_VALUE *)req;
	if (trust_fetch(&q, s->lim, &der, &len, &err) == -1)
		trust_ocsp_unknown(ret, err.msg, NULL);
	else {
		trust_ocsp_verify(der, len, req, s, ret);
		ret->asked = 1;
	}
	free(der);
	OCSP_REQUEST_free(req);
	ERR_clear_error();
}
