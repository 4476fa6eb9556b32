/*
 * wss_swa.c — the OASIS WS-Security SOAP Messages with Attachments (SwA)
 * Profile 1.1 for xmlsec: a "cid:" resolver and the three SwA transforms.
 *
 * The resolver is an xmlsec IO callback (the only one registered: file,
 * http and ftp were removed by xmlSecIOCleanupCallbacks) that serves the
 * octets of a MIME part of the message this thread is processing, bound by
 * wss_swa_bind().  Nothing else ever resolves: unbound, an unknown
 * Content-ID, or any other scheme fails the reference.
 *
 * The transforms (SwA 1.1 5.4, as Apache WSS4J implements it, which is what
 * Domibus, Holodeck B2B and phase4 sign with):
 *  - Attachment-Content-Signature-Transform: the part's content after MIME
 *    content canonicalization (5.4.2): XML content types exclusive c14n
 *    (wss_swa_xml.c, under the request's limits bound with the parts),
 *    other text/ types CRLF line ends, everything else unchanged;
 *  - Attachment-Complete-Signature-Transform: the canonical MIME headers
 *    (5.4.1) followed by the canonical content;
 *  - Attachment-Ciphertext-Transform: identity (the cid: data of an
 *    xenc:CipherReference already is the ciphertext).
 * The signature transforms find their part from the reference URI and
 * insist that it is the part the resolver just served.
 */
#include "wss_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/base64.h>
#include <xmlsec/buffer.h>
#include <xmlsec/errors.h>
#include <xmlsec/io.h>
#include <xmlsec/transforms.h>

#include "../mime/mime.h"
#include "../mime/mime_hdr.h"
#include "../spool/spool.h"
#include "../xml/xml.h"

/* One MIME header value, and parameters per Content-Type/-Disposition. */
#define WSS_SWA_MAX_VALUE 16384
#define WSS_SWA_MAX_PARAMS 32
/* Octets a transform handles per step when they are pushed in bulk. */
#define WSS_SWA_SLICE ((xmlSecSize)64 << 10)

/* The parts cid: resolves to on this thread, the last one served, and
 * what canonicalising an XML part may cost (wss_swa_xml.c). */
struct wss_swa_binding {
	struct wss_part *parts;
	size_t n;
	const struct wss_part *opened;
	struct wss_swa_limits lim;
};

static _Thread_local struct wss_swa_binding wss_swa_tls;

/* An open cid: stream: a snapshot of the part's octets; done: where
 * the octets the reader has not released yet start (issue 14). */
struct wss_swa_stream {
	const unsigned char *data;
	size_t len, off, done;
};

/* One Content-Type / Content-Disposition parameter (arena copies). */
struct wss_swa_param {
	const char *name;
	char *value;
	size_t len;
};

/* How a part's content is canonicalized (SwA 1.1 5.4.2). */
enum wss_swa_kind { WSS_SWA_RAW, WSS_SWA_TEXT, WSS_SWA_XML };

/* Bind this thread's resolver to the parts of the current message. */
void
wss_swa_bind(struct wss_part *parts, size_t n_parts,
    const struct wss_swa_limits *lim)
{
	wss_swa_tls.parts = parts;
	wss_swa_tls.n = parts != NULL ? n_parts : 0;
	wss_swa_tls.opened = NULL;
	wss_swa_tls.lim = lim != NULL ? *lim : wss_swa_send_limits;
}

/* Forget the binding: cid: resolves to nothing again. */
void
wss_swa_unbind(void)
{
	memset(&wss_swa_tls, 0, sizeof(wss_swa_tls));
}

/* ASCII lower case (locale-independent). */
static char
wss_swa_lower(char c)
{
	if (c >= 'A' && c <= 'Z')
		c = (char)(c - 'A' + 'a');
	return c;
}

/* Does uri use the cid: scheme (RFC 2392, case-insensitive)?  Also the
 * xmlsec IO match callback: cid: URIs and nothing else. */
static int
wss_swa_is_cid(const char *uri)
{
	return uri != NULL && strncasecmp(uri, "cid:", 4) == 0;
}

/*
 * The one bound part whose Content-ID is id: id as xmlsec hands it to the
 * resolver (already %-unescaped) when decoded, else the %-encoded form from
 * a cid: URL.  NULL when none, when two match, or when id is malformed.
 */
static struct wss_part *
wss_swa_lookup(const char *id, int decoded)
{
	struct wss_part *found = NULL;
	size_t i;
	int m;

	for (i = 0; i < wss_swa_tls.n; i++) {
		if (wss_swa_tls.parts[i].content_id == NULL)
			continue;
		m = decoded ? strcmp(id, wss_swa_tls.parts[i].content_id) == 0 :
		    mime_cid_match(id, strlen(id),
		    wss_swa_tls.parts[i].content_id);
		if (m == -1 || (m == 1 && found != NULL))
			return NULL;
		if (m == 1)
			found = &wss_swa_tls.parts[i];
	}
	return found;
}

/* The bound part a "cid:" URI names (%-decoded once, RFC 2392), or NULL. */
struct wss_part *
wss_swa_find(const char *uri)
{
	if (!wss_swa_is_cid(uri))
		return NULL;
	return wss_swa_lookup(uri + 4, 0);
}

/*
 * xmlsec IO open.  xmlsec hands over the URI already %-unescaped
 * (xmlSecTransformInputURIOpen), so the Content-ID is compared as is: the
 * part served is the one wss_swa_find() names for the raw URI.
 */
static void *
wss_swa_io_open(const char *uri)
{
	const struct wss_part *part;
	struct wss_swa_stream *s = NULL;

	part = wss_swa_is_cid(uri) ? wss_swa_lookup(uri + 4, 1) : NULL;
	if (part == NULL || (part->data == NULL && part->len != 0))
		goto out;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		goto out;
	s->data = part->data;
	s->len = part->len;
	wss_swa_tls.opened = part;
out:
	return s;
}

/*
 * xmlsec IO read: the next octets of the part.  The part is read once,
 * in order (the digest of a reference), so what was copied is released
 * behind the reader in pieces of SPOOL_CHUNK (spool_done: a spooled part
 * of 1 GiB does not stay resident; memory parts are left alone).
 */
static int
wss_swa_io_read(void *ctx, char *buf, int len)
{
	struct wss_swa_stream *s = ctx;
	size_t n;

	if (s == NULL || buf == NULL || len < 0 || s->off > s->len)
		return -1;
	n = s->len - s->off;
	if (n > (size_t)len)
		n = (size_t)len;
	if (n > 0)
		memcpy(buf, s->data + s->off, n);
	s->off += n;
	if (s->off - s->done >= SPOOL_CHUNK ||
	    (s->off == s->len && s->off > s->done)) {
		spool_done(s->data + s->done, s->off - s->done);
		s->done = s->off;
	}
	return (int)n;
}

/* xmlsec IO close. */
static int
wss_swa_io_close(void *ctx)
{
	free(ctx);
	return 0;
}

/* Append len octets to an xmlsec buffer (whose sizes are unsigned int). */
static int
wss_swa_put(xmlSecBufferPtr out, const void *p, size_t len)
{
	if (len == 0)
		return 0;
	if (len > XMLSEC_SIZE_MAX - xmlSecBufferGetSize(out))
		return -1;
	return xmlSecBufferAppend(out, p, (xmlSecSize)len) < 0 ? -1 : 0;
}

/*
 * SwA 1.1 5.4.2 by media type (as WSS4J and the corpus checker decide):
 * text/xml, application/xml and any type/subtype+xml are XML; other text/
 * types are text; the rest is octets.  No Content-Type is text/plain.
 */
static enum wss_swa_kind
wss_swa_kind(const char *content_type)
{
	struct arena *a = arena_new(0);
	enum wss_swa_kind kind = WSS_SWA_RAW;
	struct mime_ct ct;
	size_t n;

	/* the one Content-Type grammar (mime_ct); unparseable: octets */
	if (a != NULL && mime_ct_parse(a, content_type != NULL ? content_type :
	    "text/plain", &ct) == 0) {
		n = strlen(ct.type);
		if (strcmp(ct.type, "text/xml") == 0 ||
		    strcmp(ct.type, "application/xml") == 0 ||
		    (n > 4 && strcmp(ct.type + n - 4, "+xml") == 0))
			kind = WSS_SWA_XML;
		else if (strncmp(ct.type, "text/", 5) == 0)
			kind = WSS_SWA_TEXT;
	}
	arena_free(a);
	return kind;
}

/* Text canonical form (RFC 2045 / SwA 5.4.2): CR, LF and CRLF become CRLF.
 * Streams: *cr says whether the octet before p was a CR (an LF right
 * after it is the CRLF already written), and is updated for the next call.
 * An empty part may come as p == NULL (xmlsec's empty buffer has no data):
 * nothing to append, and no pointer arithmetic on NULL. */
static int
wss_swa_crlf(const unsigned char *p, size_t len, int *cr,
    xmlSecBufferPtr out)
{
	size_t i, run = 0;
	int rc = 0, after_cr;

	if (len == 0)
		return 0;
	for (i = 0; i < len && rc == 0; i++) {
		if (p[i] != '\r' && p[i] != '\n')
			continue;
		rc = wss_swa_put(out, p + run, i - run);
		after_cr = i > 0 ? p[i - 1] == '\r' : *cr;
		if (rc == 0 && (p[i] == '\r' || !after_cr))
			rc = wss_swa_put(out, "\r\n", 2);
		run = i + 1;
	}
	if (rc == 0)
		rc = wss_swa_put(out, p + run, len - run);
	*cr = p[len - 1] == '\r';
	return rc;
}

/* Parameters whose values SwA 5.4.1 (as WSS4J) compares case-insensitively. */
static int
wss_swa_lc_param(const char *name)
{
	static const char *const names[] = { "charset", "creation-date",
		"filename", "modification-date", "padding", "read-date",
		"size", "type" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return 0;
}

/* qsort order of parameters: by (lower-case) name. */
static int
wss_swa_param_cmp(const void *x, const void *y)
{
	return strcmp(((const struct wss_swa_param *)x)->name,
	    ((const struct wss_swa_param *)y)->name);
}

/* Append ;name="value" with '"' and '\' escaped (SwA 5.4.1 quoting). */
static int
wss_swa_param_emit(const struct wss_swa_param *pr, xmlSecBufferPtr out)
{
	size_t i;
	int rc = 0;

	rc |= wss_swa_put(out, ";", 1);
	rc |= wss_swa_put(out, pr->name, strlen(pr->name));
	rc |= wss_swa_put(out, "=\"", 2);
	for (i = 0; i < pr->len && rc == 0; i++) {
		if (pr->value[i] == '"' || pr->value[i] == '\\')
			rc |= wss_swa_put(out, "\\", 1);
		rc |= wss_swa_put(out, pr->value + i, 1);
	}
	rc |= wss_swa_put(out, "\"", 1);
	return rc == 0 ? 0 : -1;
}

/*
 * SwA 5.4.1 for Content-Type and Content-Disposition (uncommented value v,
 * parsed by the one parameter grammar, mime_ct_value_parse): the value
 * itself lower case, then its parameters sorted by name, each as
 * ;name="value", the values of wss_swa_lc_param's lower case.  A parameter
 * named twice is refused (by the parser).
 */
static int
wss_swa_structured(struct arena *a, const char *v, xmlSecBufferPtr out)
{
	struct wss_swa_param pr[WSS_SWA_MAX_PARAMS];
	const struct mime_param *params;
	const char *value;
	size_t n, i, j;

	if (mime_ct_value_parse(a, v, &value, &params, &n) == -1 ||
	    n > WSS_SWA_MAX_PARAMS || wss_swa_put(out, value, strlen(value)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		pr[i].name = params[i].name;
		pr[i].len = strlen(params[i].value);
		pr[i].value = arena_strndup(a, params[i].value, pr[i].len);
		if (pr[i].value == NULL)
			return -1;
		for (j = 0; wss_swa_lc_param(pr[i].name) && j < pr[i].len; j++)
			pr[i].value[j] = wss_swa_lower(pr[i].value[j]);
	}
	qsort(pr, n, sizeof(pr[0]), wss_swa_param_cmp);
	for (i = 0; i < n; i++)
		if (wss_swa_param_emit(&pr[i], out) < 0)
			return -1;
	return 0;
}

/* SwA 5.4.1: the headers that are signed, in sorted order and this case. */
static const char *const wss_swa_hdrs[] = {
	"Content-Description", "Content-Disposition", "Content-ID",
	"Content-Location", "Content-Type",
};

/*
 * Append the canonical value of wss_swa_hdrs[i] from its raw value: unfold;
 * Content-Description (unstructured) RFC 2047-decoded; comments and the
 * surrounding blanks removed; Content-Type and -Disposition normalised.
 */
static int
wss_swa_hdr_value(size_t i, const char *v, size_t len, xmlSecBufferPtr out)
{
	struct arena *a = len <= WSS_SWA_MAX_VALUE ? arena_new(0) : NULL;
	char *s = a != NULL ? mime_hdr_unfold(a, v, len) : NULL;
	int rc = -1;

	if (s == NULL || (i == 0 && mime_hdr_rfc2047(s) < 0) ||
	    mime_hdr_uncomment(s) < 0)
		goto out;
	if (i == 1 || i == 4)
		rc = wss_swa_structured(a, s, out);
	else
		rc = wss_swa_put(out, s, strlen(s));
out:
	arena_free(a);
	return rc;
}

/* A header block for a part that came without one: its Content-ID and
 * Content-Type.  malloc'd; NULL when out of memory. */
static char *
wss_swa_synth(const struct wss_part *part, size_t *ret_len)
{
	const char *id = part->content_id, *ct = part->content_type;
	size_t len = (id != NULL ? strlen(id) + 18 : 0) +
	    (ct != NULL ? strlen(ct) + 16 : 0) + 1;
	char *s = malloc(len);
	int n;

	if (s == NULL)
		return NULL;
	n = snprintf(s, len, "%s%s%s%s%s%s", id != NULL ? "Content-ID: <" : "",
	    id != NULL ? id : "", id != NULL ? ">\r\n" : "",
	    ct != NULL ? "Content-Type: " : "", ct != NULL ? ct : "",
	    ct != NULL ? "\r\n" : "");
	*ret_len = n > 0 ? (size_t)n : 0;
	return s;
}

/*
 * SwA 1.1 5.4.1 MIME header canonicalization: of the part's headers only
 * Content-Description, -Disposition, -ID, -Location and -Type, in that
 * order, as "Name:value" CRLF; a missing Content-Type is written as
 * text/plain;charset="us-ascii".  A listed header present twice fails.
 */
static int
wss_swa_headers(const struct wss_part *part, xmlSecBufferPtr out)
{
	static const char dflt[] = "text/plain;charset=\"us-ascii\"";
	const char *h = part->headers, *v = NULL;
	char *synth = NULL;
	size_t hlen = part->headers_len, i, vlen = 0;
	int rc = -1, found;

	if (h == NULL && (h = synth = wss_swa_synth(part, &hlen)) == NULL)
		goto out;
	for (i = 0; i < sizeof(wss_swa_hdrs) / sizeof(wss_swa_hdrs[0]); i++) {
		found = mime_hdr_get(h, hlen, wss_swa_hdrs[i], &v, &vlen);
		if (found == -1)
			goto out;
		if (found == 0 && i != 4)
			continue;
		if (wss_swa_put(out, wss_swa_hdrs[i], strlen(wss_swa_hdrs[i])) <
		    0 || wss_swa_put(out, ":", 1) < 0 ||
		    (found ? wss_swa_hdr_value(i, v, vlen, out) :
		    wss_swa_put(out, dflt, sizeof(dflt) - 1)) < 0 ||
		    wss_swa_put(out, "\r\n", 2) < 0)
			goto out;
	}
	rc = 0;
out:
	free(synth);
	return rc;
}

/* The octets a SwA signature transform digests; see wss_int.h. */
int
wss_swa_canon(const struct wss_part *part, const unsigned char *data,
    size_t len, int complete, const struct wss_swa_limits *lim,
    xmlSecBufferPtr out)
{
	int cr = 0;

	if (complete && wss_swa_headers(part, out) < 0)
		return -1;
	switch (wss_swa_kind(part->content_type)) {
	case WSS_SWA_XML:
		return wss_swa_xml(data, len, lim != NULL ? lim :
		    &wss_swa_send_limits, out, NULL, NULL);
	case WSS_SWA_TEXT:
		return wss_swa_crlf(data, len, &cr, out);
	default:
		return wss_swa_put(out, data, len);
	}
}

/* Record why a transform failed for err.detail (via wss.c's callback). */
static int
wss_swa_fail(const char *why)
{
	xmlSecError(XMLSEC_ERRORS_HERE, "swa-transform", NULL,
	    XMLSEC_ERRORS_R_INVALID_DATA, "%s", why);
	return -1;
}

/*
 * The part a signature transform canonicalizes: the one the reference URI
 * names, which must be the part the cid: resolver served for it (so the
 * octets and the content type belong together).
 */
static const struct wss_part *
wss_swa_ref_part(const xmlSecTransformCtx *ctx)
{
	const struct wss_part *part;

	part = ctx != NULL ? wss_swa_find((const char *)ctx->uri) : NULL;
	return part != NULL && part == wss_swa_tls.opened ? part : NULL;
}

/*
 * What a transform remembers between calls (after the xmlSecTransform in
 * the same allocation: the klass's objSize).  Zeroed by xmlsec.
 */
struct wss_swa_state {
	const struct wss_part *part; /* signature transforms: the part */
	enum wss_swa_kind kind;      /* how its content is canonicalized */
	int cr;                      /* text: the last octet seen was a CR */
};

/* The state of transform t. */
static struct wss_swa_state *
wss_swa_state(xmlSecTransformPtr t)
{
	return (struct wss_swa_state *)(void *)((xmlSecByte *)t +
	    sizeof(xmlSecTransform));
}

/*
 * First call of a transform: find the part (signature transforms), how to
 * canonicalize it, and for Attachment-Complete put the canonical headers
 * into outBuf.  Later calls: nothing.  0 go on, 1 finished already and no
 * data (nothing to do), -1 refused.
 */
static int
wss_swa_start(xmlSecTransformPtr t, xmlSecTransformCtxPtr ctx, xmlSecSize n)
{
	struct wss_swa_state *st = wss_swa_state(t);
	int r;

	if (t->status == xmlSecTransformStatusFinished)
		return n == 0 ? 1 : wss_swa_fail("data after the end");
	if (t->status == xmlSecTransformStatusWorking)
		return 0;
	if (t->status != xmlSecTransformStatusNone)
		return wss_swa_fail("unexpected transform status");
	t->status = xmlSecTransformStatusWorking;
	st->kind = WSS_SWA_RAW;
	if (t->id == wss_swa_ciphertext_id())
		return 0;
	st->part = wss_swa_ref_part(ctx);
	if (st->part == NULL)
		return wss_swa_fail("not applied to a bound cid: part");
	st->kind = wss_swa_kind(st->part->content_type);
	if (t->id == wss_swa_complete_sig_id() &&
	    wss_swa_headers(st->part, &t->outBuf) < 0)
		return wss_swa_fail("attachment cannot be canonicalized");
	/* XML is canonicalized whole: room for the part at once, instead of
	 * xmlsec doubling (and zeroing) its buffer as the octets come, if the
	 * request's budget has room for it (wss_swa_xml.c) */
	if (st->kind == WSS_SWA_XML && wss_swa_tls.lim.max_memory != 0 &&
	    st->part->len >= wss_swa_tls.lim.max_memory)
		return wss_swa_fail("XML attachment larger than the request's "
		    "memory budget");
	if (st->kind == WSS_SWA_XML && st->part->len <= XMLSEC_SIZE_MAX) {
		t->inBuf.allocMode = xmlSecAllocModeExact;
		r = xmlSecBufferSetMaxSize(&t->inBuf,
		    (xmlSecSize)st->part->len);
		t->inBuf.allocMode = xmlSecAllocModeDouble;
		if (r < 0)
			return wss_swa_fail("out of memory");
	}
	return 0;
}

/*
 * Canonical octets of the input p[0..n) into outBuf: text with its line
 * ends made CRLF as it streams, other octets unchanged, XML collected in
 * inBuf (which p may already be) and canonicalized whole when last is set
 * — in push mode (push != NULL) passed on to the next transform in slices
 * as they come, under the limits bound with the parts.
 */
static int
wss_swa_feed(xmlSecTransformPtr t, const xmlSecByte *p, xmlSecSize n,
    int last, xmlSecTransformCtxPtr push)
{
	struct wss_swa_state *st = wss_swa_state(t);
	xmlSecBufferPtr in = &t->inBuf, out = &t->outBuf;
	int rc;

	switch (st->kind) {
	case WSS_SWA_XML:
		if (p != xmlSecBufferGetData(in) && wss_swa_put(in, p, n) < 0)
			return wss_swa_fail("out of memory");
		if (!last)
			return 0;
		rc = wss_swa_xml(xmlSecBufferGetData(in),
		    xmlSecBufferGetSize(in), &wss_swa_tls.lim, out,
		    push != NULL ? t->next : NULL, push);
		xmlSecBufferEmpty(in);
		break;
	case WSS_SWA_TEXT:
		rc = wss_swa_crlf(p, n, &st->cr, out);
		break;
	default:
		rc = wss_swa_put(out, p, n);
		break;
	}
	return rc < 0 ? wss_swa_fail("attachment cannot be canonicalized") : 0;
}

/*
 * Execute method, for the pop mode of xmlSecTransformDefaultPopBin() (our
 * chains push: see wss_swa_push_bin): what came into inBuf goes to outBuf.
 */
static int
wss_swa_execute(xmlSecTransformPtr t, int last, xmlSecTransformCtxPtr ctx)
{
	xmlSecBufferPtr in = &t->inBuf;
	xmlSecSize n = xmlSecBufferGetSize(in);
	int r = wss_swa_start(t, ctx, n);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (wss_swa_feed(t, xmlSecBufferGetData(in), n, last, NULL) < 0)
		return -1;
	if (wss_swa_state(t)->kind != WSS_SWA_XML &&
	    xmlSecBufferRemoveHead(in, n) < 0)
		return wss_swa_fail("out of memory");
	if (last)
		t->status = xmlSecTransformStatusFinished;
	return 0;
}

/* Hand n octets at p (and the end of the data, if last) to the next
 * transform of the chain, if any. */
static int
wss_swa_next(xmlSecTransformPtr t, const xmlSecByte *p, xmlSecSize n,
    int last, xmlSecTransformCtxPtr ctx)
{
	if (t->next == NULL || (n == 0 && !last))
		return 0;
	return xmlSecTransformPushBin(t->next, p, n, last, ctx);
}

/*
 * One slice of pushed input: octets that stay as they are go straight to
 * the next transform (no copy); otherwise the canonical octets collect in
 * outBuf and go on from there in one push.
 */
static int
wss_swa_step(xmlSecTransformPtr t, const xmlSecByte *p, xmlSecSize n,
    int last, xmlSecTransformCtxPtr ctx)
{
	xmlSecBufferPtr out = &t->outBuf;
	int rc;

	if (wss_swa_state(t)->kind == WSS_SWA_RAW &&
	    xmlSecBufferGetSize(out) == 0)
		return wss_swa_next(t, p, n, last, ctx);
	if (wss_swa_feed(t, p, n, last, ctx) < 0)
		return -1;
	rc = wss_swa_next(t, xmlSecBufferGetData(out), xmlSecBufferGetSize(out),
	    last, ctx);
	/* emptied without xmlSecBufferEmpty's zeroing of the whole buffer at
	 * every step (xmlsec zeroes it when the transform is destroyed) */
	(void)xmlSecBufferSetSize(out, 0);
	return rc;
}

/*
 * Push method of the three transforms.  xmlSecTransformDefaultPushBin
 * would let the whole canonical part pile up in outBuf and then pass it on
 * in 1 KiB pieces, each xmlSecBufferRemoveHead() moving and zeroing the
 * rest: quadratic in the part size (a 100 MiB attachment never finished)
 * and up to four times the part in memory (inBuf and outBuf, each grown by
 * doubling and zeroed).  Here octets stream through in slices of
 * at most WSS_SWA_SLICE (text at most doubles), and only XML, which is
 * canonicalized whole, is collected.
 */
static int
wss_swa_push_bin(xmlSecTransformPtr t, const xmlSecByte *data,
    xmlSecSize n, int last, xmlSecTransformCtxPtr ctx)
{
	xmlSecSize step;
	int r = wss_swa_start(t, ctx, n), whole;

	if (r != 0)
		return r < 0 ? -1 : 0;
	whole = wss_swa_state(t)->kind == WSS_SWA_XML;
	do {
		step = whole || n <= WSS_SWA_SLICE ? n : WSS_SWA_SLICE;
		if (wss_swa_step(t, data, step, last && step == n, ctx) < 0)
			return -1;
		if (step > 0)
			data += step;
		n -= step;
	} while (n > 0);
	if (last)
		t->status = xmlSecTransformStatusFinished;
	return 0;
}

/* A binary transform klass (as xmlsec's base64 / memBuf), with our state. */
#define WSS_SWA_KLASS(name, href) {                                          \
	sizeof(xmlSecTransformKlass),                                       \
	sizeof(xmlSecTransform) + sizeof(struct wss_swa_state),             \
	(const xmlChar *)(name), (const xmlChar *)(WSS_SWA_NS href),        \
	xmlSecTransformUsageDSigTransform,                                  \
	NULL, NULL, NULL, NULL, NULL, NULL, NULL,                           \
	xmlSecTransformDefaultGetDataType, wss_swa_push_bin,                \
	xmlSecTransformDefaultPopBin, NULL, NULL, wss_swa_execute, NULL, NULL }

static xmlSecTransformKlass wss_swa_content_klass = WSS_SWA_KLASS(
    "swa-content-signature", "Attachment-Content-Signature-Transform");
static xmlSecTransformKlass wss_swa_complete_klass = WSS_SWA_KLASS(
    "swa-complete-signature", "Attachment-Complete-Signature-Transform");
static xmlSecTransformKlass wss_swa_ciphertext_klass = WSS_SWA_KLASS(
    "swa-ciphertext", "Attachment-Ciphertext-Transform");

/* The transform ids (their URIs: SwA 1.1 section 5). */
xmlSecTransformId
wss_swa_content_sig_id(void)
{
	return &wss_swa_content_klass;
}

xmlSecTransformId
wss_swa_complete_sig_id(void)
{
	return &wss_swa_complete_klass;
}

xmlSecTransformId
wss_swa_ciphertext_id(void)
{
	return &wss_swa_ciphertext_klass;
}

/*
 * Reference pre-execute check for contexts that allow cid: references (it
 * runs after the resolver opened the URI, before any octet moves): the
 * part served must be the part wss_swa_find() names for the raw URI
 * (xmlsec unescapes it first, so "%00" would cut it short), and a chain
 * that starts from an attachment takes octets only — no fragment
 * ("cid:x#xpointer(...)" would make xmlsec parse the attachment as XML)
 * and no XML transform (parser, XPath, XPointer, c14n) anywhere in it.
 */
int
wss_swa_pre_exec(xmlSecTransformCtxPtr ctx)
{
	xmlSecTransformPtr t;

	if (ctx == NULL || !wss_swa_is_cid((const char *)ctx->uri))
		return 0;
	if (ctx->xptrExpr != NULL)
		return wss_swa_fail("cid: reference with a fragment");
	if (wss_swa_ref_part(ctx) == NULL)
		return wss_swa_fail("cid: reference resolved ambiguously");
	for (t = ctx->first; t != NULL; t = t->next)
		if (t->id->pushXml != NULL || t->id->popXml != NULL)
			return wss_swa_fail("xml transform on an attachment");
	return 0;
}

/* Register the cid: resolver and the three transforms with xmlsec. */
int
wss_swa_init(struct err *err)
{
	if (xmlSecIORegisterCallbacks(wss_swa_is_cid, wss_swa_io_open,
	    wss_swa_io_read, wss_swa_io_close) < 0 ||
	    xmlSecTransformIdsRegister(wss_swa_content_sig_id()) < 0 ||
	    xmlSecTransformIdsRegister(wss_swa_complete_sig_id()) < 0 ||
	    xmlSecTransformIdsRegister(wss_swa_ciphertext_id()) < 0) {
		err_set(err, ERR_INTERNAL, NULL,
		    "could not register the swa transforms");
		wss_xmlsec_detail(err);
		return -1;
	}
	return 0;
}
