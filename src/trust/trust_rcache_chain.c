/*
 * trust_rcache_chain.c — a leg's revocation policy over a verified chain
 * (issue 12 item 2): which certificates are asked about, and what a
 * revoked or missing status means under require and prefer.
 */
#include "trust_revoc.h"

#include <string.h>

#define TRUST_RCACHE_CHAIN_MAX 10   /* certificates of a chain looked at */

const char *
trust_revoc_mode_name(enum trust_revoc_mode mode)
{
	return mode == TRUST_REVOC_REQUIRE ? "require" :
	    mode == TRUST_REVOC_PREFER ? "prefer" : "off";
}

/* No fresh status for a certificate at depth: 503 under require, a note
 * under prefer. */
static int
trust_rcache_chain_unknown(enum trust_revoc_mode mode, int depth,
    const struct trust_revoc_answer *a, struct trust_revoc_note *note,
    struct err *err)
{
	if (mode == TRUST_REVOC_REQUIRE) {
		err_set(err, ERR_UNAVAILABLE, NULL, "no fresh revocation "
		    "status for the signer's chain");
		err_detail(err, "depth %d: %s", depth, a->detail);
		return -1;
	}
	note->failed_open = 1;
	(void)snprintf(note->detail, sizeof(note->detail), "depth %d: %.180s",
	    depth, a->detail);
	return 0;
}

int
trust_revoc_chain(struct trust_revoc *r, enum trust_revoc_mode mode,
    STACK_OF(X509) *chain, int64_t now_ms, struct trust_revoc_note *note,
    struct err *err)
{
	struct trust_revoc_answer a;
	int i, n = sk_X509_num(chain);

	memset(note, 0, sizeof(*note));
	if (mode == TRUST_REVOC_OFF)
		return 0;
	if (n > TRUST_RCACHE_CHAIN_MAX)
		n = TRUST_RCACHE_CHAIN_MAX;
	if (n < 2 || r == NULL) {
		memset(&a, 0, sizeof(a));
		(void)snprintf(a.detail, sizeof(a.detail), "%s",
		    r == NULL ? "no revocation engine" :
		    "self-signed signer: no issuer to ask");
		trust_revoc_count(r, TRUST_REVOC_UNKNOWN, TRUST_REVOC_SRC_NONE);
		return trust_rcache_chain_unknown(mode, 0, &a, note, err);
	}
	for (i = 0; i + 1 < n; i++) {
		X509 *c = sk_X509_value(chain, i);

		if (i > 0 && !trust_revoc_has_source(c))
			continue;
		if (trust_revoc_check(r, c, sk_X509_value(chain, i + 1), now_ms,
		    &a, err) == -1)
			return -1;
		if (a.status == TRUST_REVOC_REVOKED) {
			err_set(err, ERR_EBMS, "EBMS:0101", "certificate revoked");
			err_detail(err, "depth %d revoked (%s, reason %d)", i,
			    trust_revoc_source_name(a.origin), a.reason);
			return -1;
		}
		if (a.status == TRUST_REVOC_UNKNOWN &&
		    trust_rcache_chain_unknown(mode, i, &a, note, err) == -1)
			return -1;
	}
	return 0;
}
