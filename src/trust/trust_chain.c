/*
 * trust_chain.c — may a certificate sign for a leg: bound to its party,
 * keyUsage, and a chain to the leg's anchors valid at an instant (issue 3,
 * NEGATIVE-CASES 42-44; `--verify-at`), with the leaf's revocation by the
 * leg's static CRLs (X509_V_FLAG_CRL_CHECK without _ALL: an issuer without
 * a CRL current at the instant fails the check), then live revocation of
 * the verified chain (trust_revoc.h) when the leg asks for it.  A chain found valid
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

/* The instant of a check and what live revocation has to say. */
struct trust_chain_at {
	int64_t at_ms;
	struct trust_revoc_note *note;
};

void
trust_set_revocation(struct trust *t, struct trust_revoc *r,
    enum trust_revoc_mode mode)
{
	t->revoc = r;
	t->revoc_mode = mode;
}

/* Count the static CRL files' verdict (an X509_verify_cert() with
 * X509_V_FLAG_CRL_CHECK) for the revocation metrics. */
static void
trust_chain_count_crlfile(const struct trust *t, int ok, int e)
{
	if (t->revoc == NULL || t->vflags == 0)
		return;
	if (ok)
		trust_revoc_count(t->revoc, TRUST_REVOC_GOOD,
		    TRUST_REVOC_SRC_CRLFILE);
	else if (e == X509_V_ERR_CERT_REVOKED)
		trust_revoc_count(t->revoc, TRUST_REVOC_REVOKED,
		    TRUST_REVOC_SRC_CRLFILE);
	else if (e == X509_V_ERR_UNABLE_TO_GET_CRL ||
	    e == X509_V_ERR_CRL_HAS_EXPIRED)
		trust_revoc_count(t->revoc, TRUST_REVOC_UNKNOWN,
		    TRUST_REVOC_SRC_CRLFILE);
}

/* X509_verify_cert() of cert (with the untrusted chain) against t's
 * anchors at at->at_ms, then live revocation of the verified chain (not at
 * a fixed instant); on success the window of signer remember (NULL: not
 * cacheable) is remembered. */
static int
trust_chain_verify(const struct trust *t, const struct trust_signer *remember,
    X509 *cert, STACK_OF(X509) *chain, struct trust_chain_at *at,
    struct err *err)
{
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int64_t at_ms = at->at_ms;
	char why[256];
	int rc = -1, e, ok;

	if (ctx == NULL ||
	    X509_STORE_CTX_init(ctx, t->anchors, cert, chain) != 1) {
		err_set(err, ERR_INTERNAL, NULL, "could not set up certificate "
		    "verification");
		goto out;
	}
	trust_chain_params(ctx, t->vflags, at_ms);
	ok = X509_verify_cert(ctx) == 1;
	e = ok ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	trust_chain_count_crlfile(t, ok, e);
	if (!ok) {
		(void)snprintf(why, sizeof(why), "openssl: %s (depth %d)",
		    X509_verify_cert_error_string(e),
		    X509_STORE_CTX_get_error_depth(ctx));
		trust_fail(err, "certificate not trusted", why);
		goto out;
	}
	if (t->revoc_mode != TRUST_REVOC_OFF && at_ms == 0 &&
	    trust_revoc_chain(t->revoc, t->revoc_mode,
	    X509_STORE_CTX_get0_chain(ctx), 0, at->note, err) == -1)
		goto out;
	if (remember != NULL)
		trust_chain_remember(t, remember, ctx);
	rc = 0;
out:
	X509_STORE_CTX_free(ctx);
	return rc;
}

/* keyUsage (when present) allows digitalSignature (RFC 5280 4.2.1.3). */
static int
trust_chain_may_sign(X509 *cert, struct err *err)
{
	if ((X509_get_extension_flags(cert) & EXFLAG_KUSAGE) != 0 &&
	    (X509_get_key_usage(cert) & KU_DIGITAL_SIGNATURE) == 0)
		return trust_fail(err, "certificate may not sign",
		    "keyUsage lacks digitalSignature");
	return 0;
}

/*
 * A network member (issue 12): the issuer one of the network's, keyUsage,
 * the chain to the network's anchors at at_ms (never cached: members are
 * many and their windows unknown), then the certificate policy.  The
 * party it may sign for is trust_party_check()'s question.
 */
static int
trust_chain_member(const struct trust *t, X509 *cert, STACK_OF(X509) *chain,
    struct trust_chain_at *at, struct err *err)
{
	if (trust_party_issuer_ok(t, cert, err) < 0 ||
	    trust_chain_may_sign(cert, err) < 0 ||
	    trust_chain_verify(t, NULL, cert, chain, at, err) < 0 ||
	    trust_party_policy_ok(t, cert, err) < 0)
		return -1;
	return 0;
}

/* A listed signer: bound (DER-equal), keyUsage, and the chain, verified
 * or known from a remembered window. */
static int
trust_chain_signer(const struct trust *t, X509 *cert, STACK_OF(X509) *chain,
    struct trust_chain_at *at, struct err *err)
{
	const struct trust_signer *s = trust_signer_of(t, cert);
	int cacheable;

	if (s == NULL)
		return trust_fail(err, "certificate not bound to the sending "
		    "party", NULL);
	if (trust_chain_may_sign(cert, err) < 0)
		return -1;
	/* with CRLs the answer also depends on the CRLs' periods, with live
	 * revocation on the responders', and with certificates from the
	 * message on those: verify every time */
	cacheable = t->vflags == 0 && sk_X509_num(chain) <= 0 &&
	    t->revoc_mode == TRUST_REVOC_OFF;
	if (cacheable && trust_chain_known(t, s, at->at_ms))
		return 0;
	return trust_chain_verify(t, cacheable ? s : NULL, cert, chain, at,
	    err);
}

/* May cert sign for this leg?  See trust.h. */
int
trust_chain_check(const struct trust *t, X509 *cert, STACK_OF(X509) *chain,
    int64_t at_ms, struct err *err)
{
	return trust_chain_check_note(t, cert, chain, at_ms, NULL, err);
}

/* The same, with live revocation's note; see trust.h. */
int
trust_chain_check_note(const struct trust *t, X509 *cert,
    STACK_OF(X509) *chain, int64_t at_ms, struct trust_revoc_note *ret_note,
    struct err *err)
{
	struct trust_revoc_note note = {0};
	struct trust_chain_at at = { at_ms, &note };
	int rc;

	if (cert == NULL)
		rc = trust_fail(err, "certificate not bound to the sending "
		    "party", NULL);
	else if (t->network)
		rc = trust_chain_member(t, cert, chain, &at, err);
	else
		rc = trust_chain_signer(t, cert, chain, &at, err);
	if (rc == 0 && ret_note != NULL)
		*ret_note = note;
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
	    t->revoc_mode != TRUST_REVOC_OFF ||
	    (s = trust_signer_of(t, cert)) == NULL)
		return 0;
	w = trust_chain_window_of(t, s);
	if (!w.ok)
		return 0;
	*ret_from_ms = (int64_t)w.from * 1000;
	*ret_until_ms = (int64_t)w.until * 1000 + 999;
	return 1;
}
