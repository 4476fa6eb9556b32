/*
 * wss_swa_xml.c — the canonical form of an XML attachment (SwA Profile 1.1,
 * 5.4.2: Exclusive XML Canonicalization without comments) under the
 * limits of the request that carries it (issue 10 item 3).
 *
 * The attachment is parsed whole by the project's hardened parser (no DTD,
 * no entities, no network) with the request's maxXmlDepth and maxXmlNodes,
 * into an arena whose budget is what the request has left of
 * requestMemoryBytes after the part's own copy, libxml2's allocations
 * counted against it (xml_parse's max_memory).  Any encoding a business
 * document may use whose markup stays ASCII is read (xml.h); no byte cap
 * but maxBodyBytes.  The canonical octets go straight on to the next
 * transform (the digest) in
 * slices instead of piling up, and are capped at WSS_SWA_XML_GROWTH times
 * the input, which keeps the work linear in the part's size (exclusive
 * c14n repeats a namespace declaration on every element that uses it, so
 * a crafted document could otherwise grow without bound).  `as4gw push`
 * signs its own files with the generous wss_swa_send_limits.
 */
#include "wss_int.h"

#include <stdint.h>
#include <stdio.h>

#include <libxml/c14n.h>
#include <libxml/xmlIO.h>

#include <xmlsec/xmlsec.h>
#include <xmlsec/buffer.h>
#include <xmlsec/errors.h>
#include <xmlsec/transforms.h>

#include "../xml/xml.h"

/* Canonical octets per input octet at most, plus slack for tiny parts. */
#define WSS_SWA_XML_GROWTH 8
#define WSS_SWA_XML_SLACK ((size_t)1 << 20)
/* Canonical octets passed on to the next transform at a time. */
#define WSS_SWA_XML_SLICE ((xmlSecSize)64 << 10)

/* What `as4gw push` allows itself when it signs the operator's files. */
const struct wss_swa_limits wss_swa_send_limits = {
	.max_depth = 256, .max_attributes = 256, .max_nodes = 2000000,
	.max_memory = 0,
};

/* requestMemoryBytes' default, for a policy that leaves max_memory 0. */
#define WSS_SWA_XML_MEMORY ((size_t)256 << 20)

/* See wss_int.h. */
void
wss_swa_limits_of(const struct wss_policy *p, const struct arena *a,
    struct wss_swa_limits *ret)
{
	size_t mem = p->max_memory != 0 ? p->max_memory : WSS_SWA_XML_MEMORY;
	size_t used = arena_used(a), left = arena_remaining(a);
	struct xml_limits d;

	xml_limits_default(&d);
	ret->max_depth = p->max_xml_depth != 0 ? p->max_xml_depth :
	    d.max_depth;
	ret->max_attributes = p->max_xml_attributes != 0 ?
	    p->max_xml_attributes : d.max_attributes;
	ret->max_nodes = p->max_xml_nodes != 0 ? p->max_xml_nodes :
	    d.max_nodes;
	ret->max_memory = mem > used ? mem - used : 1;
	if (left < ret->max_memory)
		ret->max_memory = left != 0 ? left : 1;
}

/* Where the canonical octets go. */
struct wss_swa_xml_sink {
	xmlSecBufferPtr out;
	size_t written, max;       /* octets written so far, and the cap */
	xmlSecTransformPtr next;   /* non-NULL: hand out on in slices */
	xmlSecTransformCtxPtr ctx;
	int over;                  /* the cap was hit */
};

/* Record why the part was refused (err.detail via wss.c's callback). */
static int
wss_swa_xml_fail(const char *why, const struct err *e)
{
	xmlSecError(XMLSEC_ERRORS_HERE, "swa-xml", NULL,
	    XMLSEC_ERRORS_R_INVALID_DATA, "XML attachment refused: %s%s%s",
	    why, e != NULL && e->detail[0] != '\0' ? ": " : "",
	    e != NULL ? e->detail : "");
	return -1;
}

/* libxml2 output callback: append to out under the cap, and in push mode
 * hand every full slice on to the next transform. */
static int
wss_swa_xml_write(void *ctx, const char *p, int len)
{
	struct wss_swa_xml_sink *s = ctx;
	xmlSecBufferPtr out = s->out;

	if (len < 0 || (size_t)len > XMLSEC_SIZE_MAX - xmlSecBufferGetSize(out))
		return -1;
	if ((size_t)len > s->max - s->written) {
		s->over = 1;
		return -1;
	}
	if (len > 0 && xmlSecBufferAppend(out, (const xmlSecByte *)p,
	    (xmlSecSize)len) < 0)
		return -1;
	s->written += (size_t)len;
	if (s->next == NULL || xmlSecBufferGetSize(out) < WSS_SWA_XML_SLICE)
		return len;
	if (xmlSecTransformPushBin(s->next, xmlSecBufferGetData(out),
	    xmlSecBufferGetSize(out), 0, s->ctx) < 0)
		return -1;
	(void)xmlSecBufferSetSize(out, 0);
	return len;
}

/* The cap on canonical octets: linear in len, and when they are kept in
 * memory (no next transform) within what the budget leaves. */
static size_t
wss_swa_xml_cap(size_t len, const struct wss_swa_limits *lim, int kept)
{
	size_t cap = SIZE_MAX;

	if (len <= (SIZE_MAX - WSS_SWA_XML_SLACK) / WSS_SWA_XML_GROWTH)
		cap = len * WSS_SWA_XML_GROWTH + WSS_SWA_XML_SLACK;
	if (kept && lim->max_memory != 0 && lim->max_memory - len < cap)
		cap = lim->max_memory - len;
	return cap;
}

/* See wss_int.h. */
int
wss_swa_xml(const unsigned char *p, size_t len,
    const struct wss_swa_limits *lim, xmlSecBufferPtr out,
    xmlSecTransformPtr next, xmlSecTransformCtxPtr ctx)
{
	struct wss_swa_xml_sink sink = { out, 0, 0, next, ctx, 0 };
	struct xml_limits xl;
	struct arena *a = NULL;
	xmlOutputBufferPtr ob = NULL;
	xmlDocPtr doc = NULL;
	struct err e = { 0 };
	int rc = -1;

	/* the part's copy is the request's already; its parse gets the rest,
	 * libxml2's allocations counted (xml_parse) */
	if (lim->max_memory != 0 && len >= lim->max_memory)
		return wss_swa_xml_fail("larger than the request's memory "
		    "budget", NULL);
	sink.max = wss_swa_xml_cap(len, lim, next == NULL);
	xml_limits_default(&xl);
	xl.max_depth = lim->max_depth;
	xl.max_attributes = lim->max_attributes;
	xl.max_nodes = lim->max_nodes;
	xl.max_bytes = 0;          /* maxBodyBytes bounds an attachment */
	xl.max_memory = lim->max_memory != 0 ? lim->max_memory - len : 0;
	xl.legacy_encodings = 1;   /* business documents (xml.h) */
	a = arena_new(lim->max_memory != 0 ? lim->max_memory - len : 0);
	if (a == NULL)
		goto out;
	if (xml_parse(a, (const char *)p, len, &xl, &doc, &e) == -1) {
		wss_swa_xml_fail(e.msg, &e);
		goto out;
	}
	ob = xmlOutputBufferCreateIO(wss_swa_xml_write, NULL, &sink, NULL);
	if (ob == NULL)
		goto out;
	rc = xmlC14NDocSaveTo(doc, NULL, XML_C14N_EXCLUSIVE_1_0, NULL, 0,
	    ob) < 0 ? -1 : 0;
	if (xmlOutputBufferClose(ob) < 0)
		rc = -1;
	if (rc < 0 && sink.over)
		wss_swa_xml_fail("canonical form over its size cap", NULL);
out:
	arena_free(a);
	return rc;
}
