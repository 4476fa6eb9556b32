/*
 * payload_bizkey — the business key of a message (payload.h
 * "payload_business_key"): which business document it carries, read from
 * its payloads by the one reader of each grammar (edifact.h, sbdh.h).
 */
#include "payload.h"

#include <string.h>

#include "../edifact/edifact.h"
#include "../sbdh/sbdh.h"
#include "../spool/spool.h"
#include "../util/buf.h"

/* Append v percent-encoded (payload.h): printable, no ':' '/' '%'. */
static int
payload_bizkey_put(struct buf *b, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;
	int fail = 0;

	for (p = (const unsigned char *)v; *p != '\0' && fail == 0; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '%' && *p != ':' &&
		    *p != '/') {
			fail = buf_append(b, p, 1);
			continue;
		}
		fail = buf_printf(b, "%%%c%c", hex[*p >> 4], hex[*p & 0xf]);
	}
	return fail;
}

/* "edifact:" key of an interchange header into b. */
static int
payload_bizkey_edifact(struct buf *b, const struct edifact_unb *u)
{
	int fail = buf_puts(b, "edifact:");

	fail |= payload_bizkey_put(b, u->sender);
	fail |= buf_puts(b, ":");
	fail |= payload_bizkey_put(b, u->sender_qual);
	fail |= buf_puts(b, "/");
	fail |= payload_bizkey_put(b, u->recipient);
	fail |= buf_puts(b, ":");
	fail |= payload_bizkey_put(b, u->recipient_qual);
	fail |= buf_puts(b, "/");
	fail |= payload_bizkey_put(b, u->reference);
	return fail != 0 ? -1 : 0;
}

/* "sbdh:" key of a Standard Business Document Header into b. */
static int
payload_bizkey_sbdh(struct buf *b, const struct sbdh *h)
{
	int fail = buf_puts(b, "sbdh:");

	fail |= payload_bizkey_put(b, h->sender.scheme != NULL ?
	    h->sender.scheme : "");
	fail |= buf_puts(b, ":");
	fail |= payload_bizkey_put(b, h->sender.value);
	fail |= buf_puts(b, "/");
	fail |= payload_bizkey_put(b, h->instance_id);
	return fail != 0 ? -1 : 0;
}

/*
 * Whether p may be a Standard Business Document (payload.h): its SBDH
 * namespace name within the first PAYLOAD_SBDH_SNIFF_BYTES.  Only a hint
 * that saves parsing other XML; sbdh_parse() decides.
 */
static int
payload_bizkey_sbdh_like(const struct ebms_part *p)
{
	size_t n = p->len < PAYLOAD_SBDH_SNIFF_BYTES ? p->len :
	    PAYLOAD_SBDH_SNIFF_BYTES;
	int like = p->data != NULL && memmem(p->data, n, NS_SBDH,
	    sizeof(NS_SBDH) - 1) != NULL;

	spool_done(p->data, n);   /* a spooled payload's prefix (issue 14) */
	return like;
}

/* An SBDH payload: 1 its key appended to b, 0 none (*why), -1 no memory. */
static int
payload_bizkey_sbdh_part(struct arena *a, const struct ebms_part *p,
    const struct sbdh_limits *lim, struct buf *b, const char **why)
{
	struct sbdh_limits def;
	struct sbdh h;
	struct err err;
	int r;

	err_clear(&err);
	if (lim == NULL) {
		sbdh_limits_default(&def);
		lim = &def;
	}
	/* the whole document, under the XML limits (README "Peppol"); what
	 * the parser read leaves the resident set after (issue 14) */
	r = sbdh_parse(a, p->data, p->len, lim, &h, &err);
	spool_done(p->data, p->len);
	if (r == -1) {
		if (err.kind == ERR_INTERNAL)   /* out of request memory */
			return -1;
		*why = arena_sprintf(a, "%s%s%s", err.msg,
		    err.detail[0] != '\0' ? ": " : "", err.detail);
		return *why != NULL ? 0 : -1;
	}
	return payload_bizkey_sbdh(b, &h) == 0 ? 1 : -1;
}

/*
 * One payload: 1 its key appended to b, 0 it carries none (*why set when
 * it looked like an interchange or an SBDH but is malformed), -1 out of
 * memory.
 */
static int
payload_bizkey_part(struct arena *a, const struct ebms_part *p,
    const struct payload_bizkey_ctx *ctx, struct buf *b, const char **why)
{
	struct edifact_unb u;
	struct err err;
	int r;

	if (payload_bizkey_sbdh_like(p))
		return payload_bizkey_sbdh_part(a, p, ctx != NULL ?
		    ctx->sbdh_limits : NULL, b, why);
	err_clear(&err);
	/* the interchange header: a few hundred bytes, whatever the size */
	r = edifact_unb_parse(p->data, p->len, &u, &err);
	spool_done(p->data, p->len < PAYLOAD_SBDH_SNIFF_BYTES ? p->len :
	    PAYLOAD_SBDH_SNIFF_BYTES);
	if (r == -1) {
		*why = arena_strdup(a, err.msg);
		return *why != NULL ? 0 : -1;
	}
	if (r == 0)
		return 0;
	return payload_bizkey_edifact(b, &u) == 0 ? 1 : -1;
}

int
payload_business_key(struct arena *a, const struct ebms_user_message *um,
    const struct payload_bizkey_ctx *ctx, const char **ret,
    const char **ret_why)
{
	struct buf b = { 0 };
	const char *why = NULL;
	size_t i;
	int r = 0;

	*ret = NULL;
	*ret_why = NULL;
	/* a Peppol leg parsed the first (its only) payload's header */
	if (ctx != NULL && ctx->sbdh != NULL && um->n_parts > 0)
		r = payload_bizkey_sbdh(&b, ctx->sbdh) == 0 ? 1 : -1;
	for (i = 0; i < um->n_parts && r == 0 && why == NULL; i++)
		r = payload_bizkey_part(a, &um->parts[i], ctx, &b, &why);
	if (r == 1 && b.len > PAYLOAD_BUSINESS_KEY_MAX) {
		why = "business key longer than 1024 bytes";
		r = 0;
	}
	if (r == 1 && (*ret = arena_strndup(a, b.data, b.len)) == NULL)
		r = -1;
	if (r == 0)
		*ret_why = why;
	buf_free(&b);
	return r;
}
