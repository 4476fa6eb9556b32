/*
 * trust_crldp.c — CRLs from a certificate's CRL distribution points (RFC
 * 5280 4.2.1.13): http URIs of full names, tried in order; the CRL (DER, or
 * PEM as some CAs publish) is verified against the issuing CA (RFC 5280
 * 6.3.3) and the certificate looked up in it.
 */
#include "trust_revoc.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>


/* Record a refusal or failure as UNKNOWN from the CRL DPs. */
static void
trust_crldp_unknown(struct trust_revoc_fresh *ret, const char *why)
{
	ret->status = TRUST_REVOC_UNKNOWN;
	ret->origin = TRUST_REVOC_SRC_CRLDP;
	(void)snprintf(ret->detail, sizeof(ret->detail), "crldp: %.150s", why);
}

/* DER first, then PEM; NULL when neither. */
static X509_CRL *
trust_crldp_parse(const unsigned char *data, size_t len)
{
	const unsigned char *p = data;
	X509_CRL *crl = d2i_X509_CRL(NULL, &p, (long)len);
	BIO *b;

	if (crl != NULL && p == data + len)
		return crl;
	X509_CRL_free(crl);
	crl = NULL;
	if (len > 10 && memcmp(data, "-----BEGIN", 10) == 0 &&
	    (b = BIO_new_mem_buf(data, (int)len)) != NULL) {
		crl = PEM_read_bio_X509_CRL(b, NULL, NULL, NULL);
		BIO_free(b);
	}
	return crl;
}

/*
 * RFC 5280 6.3.3 (a)(f)(g): the CRL is issued by cert's issuer (name), the
 * issuer may sign CRLs (keyUsage cRLSign when present), the signature
 * verifies with its key; a delta CRL is not a complete answer.
 */
static const char *
trust_crldp_check_issuer(X509_CRL *crl, X509 *issuer)
{
	EVP_PKEY *pk = X509_get0_pubkey(issuer);

	if (X509_NAME_cmp(X509_CRL_get_issuer(crl),
	    X509_get_subject_name(issuer)) != 0)
		return "CRL issued by another CA";
	if ((X509_get_extension_flags(issuer) & EXFLAG_KUSAGE) != 0 &&
	    (X509_get_key_usage(issuer) & KU_CRL_SIGN) == 0)
		return "issuer may not sign CRLs";
	if (pk == NULL || X509_CRL_verify(crl, pk) != 1)
		return "CRL signature does not verify with the issuer's key";
	if (X509_CRL_get_ext_by_NID(crl, NID_delta_crl, -1) >= 0)
		return "delta CRL";
	return NULL;
}

/* thisUpdate / nextUpdate against now with the skew allowance. */
static const char *
trust_crldp_window(X509_CRL *crl, const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret)
{
	const struct trust_revoc_limits *lim = s->lim;
	int64_t skew = (int64_t)lim->skew_s * 1000, now_ms = s->now_ms;
	const ASN1_TIME *next = X509_CRL_get0_nextUpdate(crl);

	if (trust_revoc_time(X509_CRL_get0_lastUpdate(crl),
	    &ret->this_update_ms) == -1)
		return "unreadable thisUpdate";
	if (ret->this_update_ms > now_ms + skew)
		return "thisUpdate in the future";
	if (next == NULL) {
		ret->next_update_ms = now_ms + (int64_t)lim->no_next_update_s * 1000;
		return NULL;
	}
	if (trust_revoc_time(next, &ret->next_update_ms) == -1)
		return "unreadable nextUpdate";
	if (ret->next_update_ms + skew < now_ms)
		return "stale CRL (nextUpdate passed)";
	return NULL;
}

/* The reason code of a revoked entry, or -1. */
static int
trust_crldp_reason(X509_REVOKED *rev)
{
	ASN1_ENUMERATED *e = X509_REVOKED_get_ext_d2i(rev, NID_crl_reason,
	    NULL, NULL);
	int r = e != NULL ? (int)ASN1_ENUMERATED_get(e) : -1;

	ASN1_ENUMERATED_free(e);
	return r;
}

void
trust_crldp_verify(const unsigned char *data, size_t len,
    const struct trust_revoc_subject *s, struct trust_revoc_fresh *ret)
{
	X509_CRL *crl = trust_crldp_parse(data, len);
	X509_REVOKED *rev = NULL;
	const char *why;

	memset(ret, 0, sizeof(*ret));
	ret->origin = TRUST_REVOC_SRC_CRLDP;
	ret->reason = -1;
	if (crl == NULL)
		why = "not a CRL";
	else if ((why = trust_crldp_check_issuer(crl, s->issuer)) == NULL &&
	    (why = trust_crldp_window(crl, s, ret)) == NULL) {
		/* 1 revoked, 2 removeFromCRL (not revoked), 0 not listed */
		if (X509_CRL_get0_by_cert(crl, &rev, s->cert) == 1) {
			ret->status = TRUST_REVOC_REVOKED;
			ret->reason = trust_crldp_reason(rev);
		} else
			ret->status = TRUST_REVOC_GOOD;
	}
	if (why != NULL)
		trust_crldp_unknown(ret, why);
	X509_CRL_free(crl);
	ERR_clear_error();
}

/* The http URIs of cert's distribution points (full names), at most max. */
static size_t
trust_crldp_urls(X509 *cert, const char **urls, size_t max,
    STACK_OF(DIST_POINT) **ret_dps)
{
	STACK_OF(DIST_POINT) *dps = X509_get_ext_d2i(cert,
	    NID_crl_distribution_points, NULL, NULL);
	size_t n = 0;
	int i, j;

	for (i = 0; i < sk_DIST_POINT_num(dps); i++) {
		DIST_POINT *dp = sk_DIST_POINT_value(dps, i);

		if (dp->distpoint == NULL || dp->distpoint->type != 0)
			continue;
		for (j = 0; j < sk_GENERAL_NAME_num(dp->distpoint->name.fullname);
		    j++) {
			GENERAL_NAME *g = sk_GENERAL_NAME_value(
			    dp->distpoint->name.fullname, j);
			const char *u;

			if (g->type != GEN_URI || n >= max)
				continue;
			u = (const char *)ASN1_STRING_get0_data(g->d.uniformResourceIdentifier);
			if (strncmp(u, "http://", 7) == 0 &&
			    strlen(u) == (size_t)ASN1_STRING_length(
			    g->d.uniformResourceIdentifier))
				urls[n++] = u;
		}
	}
	*ret_dps = dps;
	return n;
}

void
trust_crldp_query(const struct trust_revoc_subject *s,
    struct trust_revoc_fresh *ret)
{
	const char *urls[TRUST_REVOC_MAX_CRL_URLS];
	struct trust_fetch_req q = { NULL, NULL, NULL, NULL,
		s->lim->max_crl_bytes };
	STACK_OF(DIST_POINT) *dps = NULL;
	size_t n, i;
	unsigned char *data;
	size_t len;
	struct err err;

	memset(ret, 0, sizeof(*ret));
	ret->reason = -1;
	n = trust_crldp_urls(s->cert, urls, TRUST_REVOC_MAX_CRL_URLS, &dps);
	if (n == 0)
		trust_crldp_unknown(ret, "no http distribution point");
	for (i = 0; i < n; i++) {
		err_clear(&err);
		data = NULL;
		q.url = urls[i];
		if (trust_fetch(&q, s->lim, &data, &len, &err) == -1)
			trust_crldp_unknown(ret, err.msg);
		else
			trust_crldp_verify(data, len, s, ret);
		free(data);
		ret->asked = 1;
		if (ret->status != TRUST_REVOC_UNKNOWN)
			break;
	}
	CRL_DIST_POINTS_free(dps);
	ERR_clear_error();
}

/* Does cert name a place to ask (OCSP responder or CRL DP)? */
int
trust_revoc_has_source(X509 *cert)
{
	char url[1024];
	const char *urls[1];
	STACK_OF(DIST_POINT) *dps = NULL;
	size_t n;

	if (trust_ocsp_url(cert, url, sizeof(url)))
		return 1;
	n = trust_crldp_urls(cert, urls, 1, &dps);
	CRL_DIST_POINTS_free(dps);
	return n > 0;
}
