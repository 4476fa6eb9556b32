/*
 * certwatch — the certificates of a configuration and their expiry (see
 * certwatch.h).  RFC 5280 4.1.2.5: a certificate is valid from notBefore
 * to notAfter inclusive.
 */
#include "certwatch.h"

#include <string.h>

#include "../util/clock.h"

#define CERTWATCH_DAY_MS INT64_C(86400000)

/* What certwatch_list() fills as it goes. */
struct certwatch_acc {
	struct arena *a;
	struct certwatch_cert *v;
	size_t n, cap;
	struct err *err;
	int failed;
};

/* Append the certificates of the file at path (NULL: none) with their
 * role, leg and retiring flag; a file that cannot be read is remembered
 * in acc->err. */
static void
certwatch_file(struct certwatch_acc *acc, const char *role, const char *leg,
    const char *path, int retiring)
{
	struct wss_cert_info *info;
	struct certwatch_cert *v;
	struct err e;
	size_t i, n, cap;

	err_clear(&e);
	if (path == NULL)
		return;
	if (wss_cert_file_info(acc->a, path, &info, &n, &e) == -1) {
		if (!acc->failed)
			*acc->err = e;
		acc->failed = 1;
		return;
	}
	if (acc->n + n > acc->cap) {
		cap = acc->cap * 2 + n + 8;
		v = arena_calloc(acc->a, cap, sizeof(*v));
		if (v == NULL) {
			if (!acc->failed)
				err_set(acc->err, ERR_INTERNAL, NULL,
				    "out of memory");
			acc->failed = 1;
			return;
		}
		if (acc->n > 0)
			memcpy(v, acc->v, acc->n * sizeof(*v));
		acc->v = v;
		acc->cap = cap;
	}
	for (i = 0; i < n; i++) {
		v = &acc->v[acc->n++];
		v->role = role;
		v->leg = leg;
		v->path = path;
		v->retiring = retiring;
		v->info = info[i];
	}
}

/* Decryption pairs: role "decryption", retiring as configured. */
static void
certwatch_pairs(struct certwatch_acc *acc, const char *leg,
    const struct conf_keypair *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		certwatch_file(acc, "decryption", leg, v[i].cert,
		    v[i].retiring);
}

/* Every certificate of c (certwatch.h). */
int
certwatch_list(struct arena *a, const struct conf *c,
    struct certwatch_cert **ret, size_t *ret_n, struct err *err)
{
	struct certwatch_acc acc = { .a = a, .err = err };
	const struct pmode_leg *l;
	const char *role;
	size_t i, j;

	certwatch_file(&acc, "signing", NULL, c->sign_cert, 0);
	for (i = 1; i < c->n_signing; i++) {    /* <signingKeys> (issue 13) */
		role = arena_sprintf(a, "signing %s", c->signing[i].id);
		certwatch_file(&acc, role != NULL ? role : "signing", NULL,
		    c->signing[i].cert, 0);
	}
	certwatch_file(&acc, "tls", NULL, c->tls_cert, 0);
	if (!c->decrypt_signing)
		certwatch_pairs(&acc, NULL, c->decrypt, c->n_decrypt);
	for (i = 0; i < c->n_legs; i++) {
		l = &c->legs[i];
		if (!l->decrypt_default)
			certwatch_pairs(&acc, l->id, l->decrypt, l->n_decrypt);
		for (j = 0; j < l->n_signer_certs; j++)
			certwatch_file(&acc, "signer", l->id,
			    l->signer_certs[j], 0);
		for (j = 0; j < l->n_trust_anchors; j++)
			certwatch_file(&acc, "anchor", l->id,
			    l->trust_anchors[j], 0);
	}
	*ret = acc.v;
	*ret_n = acc.n;
	return acc.failed ? -1 : 0;
}

/* The state of x at now_ms (certwatch.h). */
enum certwatch_state
certwatch_state(const struct certwatch_cert *x, int64_t now_ms)
{
	if (now_ms < x->info.not_before_ms)
		return CERTWATCH_NOT_YET;
	if (now_ms > x->info.not_after_ms)
		return CERTWATCH_EXPIRED;
	if (x->info.not_after_ms - now_ms <
	    (int64_t)CERTWATCH_SOON_DAYS * CERTWATCH_DAY_MS)
		return CERTWATCH_SOON;
	return CERTWATCH_OK;
}

/* verifyAt, else now (certwatch.h). */
int64_t
certwatch_now(const struct conf *c)
{
	return c->verify_at_ms != 0 ? c->verify_at_ms : clock_epoch_ms();
}
