/*
 * sender_nrr.c — does a partner's NRR Receipt prove the message `as4gw
 * push` signed?  (AS4 profile 5.1.8 b: the Receipt copies the ds:References
 * of the sent SignedInfo.)  Only the comparison; the Receipt's signature is
 * wss_verify_envelope's job.
 */
#include "sender.h"

#include <stdio.h>
#include <string.h>

#include <libxml/chvalid.h>

#include "../xml/xml.h"

/* An NRR mismatch: the Receipt does not prove what we sent. */
static int
sender_nrr_fail(struct err *err, const char *why)
{
	err_set(err, ERR_EBMS, "EBMS:0101", "receipt does not match the "
	    "signed message: %s", why);
	return -1;
}

/* The SignedInfo of the signature in doc's wsse:Security, or NULL. */
static xmlNodePtr
sender_nrr_signed_info(xmlDocPtr doc)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(doc, &soap), sec;

	sec = xml_child(env != NULL ? xml_child(env, soap, "Header") : NULL,
	    NS_WSSE, "Security");
	return xml_child(xml_child(sec, NS_DS, "Signature"), NS_DS,
	    "SignedInfo");
}

/* eb:Receipt/ebbp:NonRepudiationInformation of a Receipt, or NULL. */
static xmlNodePtr
sender_nrr_info(xmlDocPtr doc)
{
	const char *soap = NULL;
	xmlNodePtr env = wss_envelope(doc, &soap), n;

	n = env != NULL ? xml_child(env, soap, "Header") : NULL;
	n = xml_child(xml_child(n, NS_EB, "Messaging"), NS_EB,
	    "SignalMessage");
	return xml_child(xml_child(n, NS_EB, "Receipt"), NS_EBBP,
	    "NonRepudiationInformation");
}

/* Attribute name present on both x and y with the same value? */
static int
sender_nrr_attr_eq(const xmlNode *x, const xmlNode *y, const char *name)
{
	xmlChar *u = x != NULL ? xmlGetNoNsProp(x, (const xmlChar *)name) :
	    NULL;
	xmlChar *v = y != NULL ? xmlGetNoNsProp(y, (const xmlChar *)name) :
	    NULL;
	int eq = u != NULL && v != NULL && xmlStrEqual(u, v);

	xmlFree(u);
	xmlFree(v);
	return eq;
}

/* The same non-empty text in x and y, blanks ignored (base64 may wrap)? */
static int
sender_nrr_text_eq(const xmlNode *x, const xmlNode *y)
{
	xmlChar *u = x != NULL ? xmlNodeGetContent(x) : NULL;
	xmlChar *v = y != NULL ? xmlNodeGetContent(y) : NULL;
	const xmlChar *p = u, *q = v;
	int eq = u != NULL && v != NULL, chars = 0;

	while (eq) {
		while (*p != '\0' && xmlIsBlank_ch(*p))
			p++;
		while (*q != '\0' && xmlIsBlank_ch(*q))
			q++;
		if (*p != *q)
			eq = 0;
		else if (*p == '\0')
			break;
		p++;
		q++;
		chars++;
	}
	xmlFree(u);
	xmlFree(v);
	return eq && chars > 0;
}

/* Same URI, DigestMethod and DigestValue (AS4 profile 5.1.8 b)? */
static int
sender_nrr_ref_eq(const xmlNode *sent, const xmlNode *got)
{
	return sender_nrr_attr_eq(sent, got, "URI") &&
	    sender_nrr_attr_eq(xml_child(sent, NS_DS, "DigestMethod"),
	    xml_child(got, NS_DS, "DigestMethod"), "Algorithm") &&
	    sender_nrr_text_eq(xml_child(sent, NS_DS, "DigestValue"),
	    xml_child(got, NS_DS, "DigestValue"));
}

/* Count the MessagePartNRInformation elements (each one ds:Reference). */
static int
sender_nrr_count(const xmlNode *nri, size_t *ret_n)
{
	xmlNodePtr p;
	size_t n = 0;

	for (p = xml_child(nri, NULL, NULL); p != NULL;
	    p = xml_next(p, NULL, NULL), n++)
		if (!xml_is(p, NS_EBBP, "MessagePartNRInformation") ||
		    xml_count(p, NULL, NULL) != 1 ||
		    xml_child(p, NS_DS, "Reference") == NULL)
			return -1;
	*ret_n = n;
	return 0;
}

/* How many sent references have exactly one equal copy in nri; the URI of
 * the first that has not goes to err.detail. */
static size_t
sender_nrr_hits(const xmlNode *si, const xmlNode *nri, struct err *err)
{
	xmlNodePtr r, p;
	size_t n = 0, hits;
	xmlChar *uri;

	for (r = xml_child(si, NS_DS, "Reference"); r != NULL;
	    r = xml_next(r, NS_DS, "Reference")) {
		hits = 0;
		for (p = xml_child(nri, NULL, NULL); p != NULL;
		    p = xml_next(p, NULL, NULL))
			hits += (size_t)sender_nrr_ref_eq(r,
			    xml_child(p, NS_DS, "Reference"));
		if (hits == 1) {
			n++;
		} else if (err->detail[0] == '\0') {
			uri = xmlGetNoNsProp(r, (const xmlChar *)"URI");
			err_detail(err, "first differing reference \"%s\"",
			    uri != NULL ? (const char *)uri : "");
			xmlFree(uri);
		}
	}
	return n;
}

/* Does the Receipt copy exactly the references we signed?  See wss.h. */
int
sender_nrr_match(xmlDocPtr sent, xmlDocPtr receipt, size_t *ret_n,
    struct err *err)
{
	xmlNodePtr si = sent != NULL ? sender_nrr_signed_info(sent) : NULL;
	xmlNodePtr nri = receipt != NULL ? sender_nrr_info(receipt) : NULL;
	size_t n_sent, n_got = 0, n_same;
	struct err why;
	char msg[96];

	err_clear(&why);
	if (si == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "the sent message is not signed");
	if (nri == NULL)
		return sender_nrr_fail(err, "not a non-repudiation receipt");
	if (sender_nrr_count(nri, &n_got) == -1)
		return sender_nrr_fail(err, "malformed "
		    "ebbp:MessagePartNRInformation");
	n_sent = xml_count(si, NS_DS, "Reference");
	n_same = sender_nrr_hits(si, nri, &why);
	if (n_same == n_sent && n_got == n_sent) {
		*ret_n = n_sent;
		return 0;
	}
	(void)snprintf(msg, sizeof(msg), "%zu of %zu signed digests in its "
	    "%zu NRR references", n_same, n_sent, n_got);
	sender_nrr_fail(err, msg);
	if (why.detail[0] != '\0')
		err_detail(err, "%s", why.detail);
	return -1;
}

/* Is r a reference to an attachment ("cid:" URI)? */
static int
sender_nrr_is_cid(const xmlNode *r)
{
	xmlChar *uri = xmlGetNoNsProp(r, (const xmlChar *)"URI");
	int cid = uri != NULL && xmlStrncasecmp(uri,
	    (const xmlChar *)"cid:", 4) == 0;

	xmlFree(uri);
	return cid;
}

/* How many of the sent cid: references have exactly one equal copy in
 * nri (*ret_cid: how many cid: references were sent). */
static size_t
sender_nrr_cid_hits(const xmlNode *si, const xmlNode *nri, size_t *ret_cid)
{
	xmlNodePtr r, p;
	size_t n = 0, hits, cids = 0;

	for (r = xml_child(si, NS_DS, "Reference"); r != NULL;
	    r = xml_next(r, NS_DS, "Reference")) {
		if (!sender_nrr_is_cid(r))
			continue;
		cids++;
		hits = 0;
		for (p = xml_child(nri, NULL, NULL); p != NULL;
		    p = xml_next(p, NULL, NULL))
			hits += (size_t)sender_nrr_ref_eq(r,
			    xml_child(p, NS_DS, "Reference"));
		n += hits == 1;
	}
	*ret_cid = cids;
	return n;
}

/* A Receipt for an earlier transmission of the same payloads?  See
 * sender.h. */
int
sender_nrr_earlier(xmlDocPtr sent, xmlDocPtr receipt, size_t *ret_n)
{
	xmlNodePtr si = sent != NULL ? sender_nrr_signed_info(sent) : NULL;
	xmlNodePtr nri = receipt != NULL ? sender_nrr_info(receipt) : NULL;
	size_t n_got = 0, n_cid = 0, n_same;

	if (si == NULL || nri == NULL || sender_nrr_count(nri, &n_got) == -1 ||
	    n_got != xml_count(si, NS_DS, "Reference"))
		return -1;
	n_same = sender_nrr_cid_hits(si, nri, &n_cid);
	if (n_same != n_cid)
		return -1;
	*ret_n = n_cid;
	return 0;
}
