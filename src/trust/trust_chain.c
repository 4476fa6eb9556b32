/*
 * trust_chain.c — may a certificate sign for a leg: bound to its party,
 * keyUsage, and a chain to the leg's anchors valid at an instant (issue 3,
 * NEGATIVE-CASES 42-44; `--verify-at`), with the leaf's revocation by the
 * leg's static CRLs (X509_V_FLAG_CRL_CHECK without _ALL: an issuer without
 * a CRL current at the instant fails the check).  A chain found valid
 * without CRLs and without certificates from the message is valid at every
 * instant within its certificates' validity periods: that window is
 * remembered, so a signer is verified once per window, not per message.
 */
#include "trust_int.h"

#include <stdio.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

/* An ASN1_TIME as seconds since the epoch; -1 when unreadable. */
static int
trust_chain_time(const ASN1_TIME *at, time_t *ret)
{
	struct tm tm;

	if (at == NULL || ASN1_TIME_to_tm(at, &tm) != 1)
		return -1;
	*ret = timegm(&tm);
	return 0;
}

/*
 * After X509_verify_cert() succeeded for signer s without CRLs and without
 * certificates from the message: the verified chain is valid at every
 * instant within all its certificates' validity periods (RFC 5280 6.1.3
 * (a)(2): notBefore <= t, t before notAfter as X509_cmp_time() counts), and
 * nothing else it checked depends on the instant.  Remember that window.
 */
static void
trust_chain_remember(const struct trust *t, const struct trust_signer *s,
    X509_STORE_CTX *ctx)
{
	struct trust_window *w = &t->seen->win[s - t->signers];
	STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(ctx);
	time_t from = 0, until = 0, nb, na;
	int i, n = sk_X509_num(chain);

	for (i = 0; i < n; i++) {
		X509 *c = sk_X509_value(chain, i);

		if (trust_chain_time(X509_get0_notBefore(c), &nb) < 0 ||
		    trust_chain_time(X509_get0_notAfter(c), &na) < 0)
			return;
		if (i == 0 || nb > from)
			from = nb;
		if (i == 0 || na - 1 < until)
			until = na - 1;
	}
	if (n <= 0 || pthread_mutex_lock(&t->seen->lock) != 0)
		return;
	w->ok = 1;
	w->from = from;
	w->until = until;
	(void)pthread_mutex_unlock(&t->seen->lock);
}

/* A copy of signer s's remembered window (taken under the lock). */
static struct trust_window
trust_chain_window_of(const struct trust *t, const struct trust_signer *s)
{
	struct trust_window w = { 0 };

	if (pthread_mutex_lock(&t->seen->lock) != 0)
		return w;
	w = t->seen->win[s - t->signers];
	(void)pthread_mutex_unlock(&t->seen->lock);
	return w;
}

/* Was s's chain found valid for a window holding the instant? */
static int
trust_chain_known(const struct trust *t, const struct trust_signer *s,
    int64_t at_ms)
{
	struct trust_window w = trust_chain_window_of(t, s);
	time_t at = at_ms != 0 ? (time_t)(at_ms / 1000) : time(NULL);

	return w.ok && w.from <= at && at <= w.until;
}

/* Verification parameters: the instant (for CRLs too), any purpose, the
 * leaf's revocation when CRLs are configured, and configured anchors
 * trusted as given even when not self-signed (eDelivery AS4 1.15, 1.5.3.3:
 * anchors may be chain prefixes). */
static void
trust_chain_params(X509_STORE_CTX *ctx, unsigned long vflags, int64_t at_ms)
{
	X509_VERIFY_PARAM *vp = X509_STORE_CTX_get0_param(ctx);

	(void)X509_VERIFY_PARAM_set_flags(vp,
	    X509_V_FLAG_PARTIAL_CHAIN | vflags);
	(void)X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_ANY);
	if (at_ms != 0)
		X509_VERIFY_PARAM_set_time(vp, (time_t)(at_ms / 1000));
}

/* X509_verify_cert() of cert (with the untrusted chain) against t's
 * anchors at at_ms; on success the window of signer remember (NULL: not
 * cacheable) is remembered. */
static int
trust_chain_verify(const struct trust *t, const struct trust_signer *remember,
    X509 *cert, STACK_OF(X509) *chain, int64_t at_ms, struct err *err)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	char why[256];
	int rc = -1, e;

	if (ctx == NULL ||
	    X509_STORE_CTX_init(ctx, t->anchors, cert, chain) != 1) {
		err_set(err, ERR_INTERNAL, NULL, "could not set up certificate "
		    "verification");
		goto out;
	}
	trust_chain_params(ctx, t->vflags, at_ms);
	if (X509_verify_cert(ctx) != 1) {
		e = X509_STORE_CTX_get_error(ctx);
		(void)snprintf(why, sizeof(why), "openssl: %s (depth %d)",
		    X509_verify_cert_error_string(e),
		    X509_STORE_CTX_get_error_depth(ctx));
		trust_fail(err, "certificate not trusted", why);
		goto out;
	}
	if (remember != NULL)
		trust_chain_remember(t, remember, ctx);
	rc = 0;
out:
	X509_STORE_CTX_free(ctx);
	return rc;
}

/* May cert sign for this leg?  See trust.h. */
int
trust_chain_check(const struct trust *t, X509 *cert, STACK_OF(X509) *chain,
    int64_t at_ms, struct err *err)
{
	const struct trust_signer *s;
	int rc = -1, cacheable;

	if (cert == NULL || (s = trust_signer_of(t, cert)) == NULL) {
		trust_fail(err, "certificate not bound to the sending party",
		    NULL);
		goto out;
	}
	if ((X509_get_extension_flags(cert) & EXFLAG_KUSAGE) != 0 &&
	    (X509_get_key_usage(cert) & KU_DIGITAL_SIGNATURE) == 0) {
		trust_fail(err, "certificate may not sign",
		    "keyUsage lacks digitalSignature");
		goto out;
	}
	/* with CRLs the answer also depends on the CRLs' periods, and with
	 * certificates from the message on those: verify every time */
	cacheable = t->vflags == 0 && sk_X509_num(chain) <= 0;
	if (cacheable && trust_chain_known(t, s, at_ms))
		rc = 0;
	else
		rc = trust_chain_verify(t, cacheable ? s : NULL, cert, chain,
		    at_ms, err);
out:
	ERR_clear_error();
	return rc;
}

/* The remembered validity window of a signer's chain; see trust.h. */
int
trust_chain_window(const struct trust *t, const X509 *cert,
    int64_t *ret_from_ms, int64_t *ret_until_ms)
{
	const struct trust_signer *s;
	struct trust_window w;

	if (t == NULL || cert == NULL || t->vflags != 0 ||
	    (s = trust_signer_of(t, cert)) == NULL)
		return 0;
	w = trust_chain_window_of(t, s);
	if (!w.ok)
		return 0;
	*ret_from_ms = (int64_t)w.from * 1000;
	*ret_until_ms = (int64_t)w.until * 1000 + 999;
	return 1;
}
