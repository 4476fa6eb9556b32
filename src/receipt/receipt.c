/*
 * receipt.c — the gateway's signed answers: the AS4 Receipt (AS4 profile
 * 5.1.8: non-repudiation of receipt with the verified ds:References of a
 * signed message, else reception awareness with a copy of the
 * eb:UserMessage) and the eb:Error
 * signal (ebMS3 Core 6.2, 6.3).  Both are SOAP 1.2 envelopes shaped like the
 * Receipt Domibus 5 sends: eb:Messaging (mustUnderstand) with one
 * eb:SignalMessage, an empty Body, both signed by wss_sign_envelope().
 */
#include "receipt.h"

#include <string.h>

#include <libxml/tree.h>
#include <libxml/xmlstring.h>

#include "../util/clock.h"
#include "../util/codec.h"
#include "../xml/xml.h"

/* Longest eb:Error/eb:Description or eb:ErrorDetail we send (bytes). */
#define RECEIPT_DESCRIPTION_MAX 1024

/* The signal envelope under construction; the arena owns doc. */
struct receipt_doc {
	xmlDocPtr doc;
	xmlNsPtr eb;
	xmlNodePtr signal;        /* eb:SignalMessage */
	const char *message_id;   /* the signal's own MessageId (arena) */
};

/* arena cleanup for the envelope document */
static void
receipt_doc_free(void *p)
{
	xmlFreeDoc(p);
}

/*
 * Can s be echoed as a MessageId reference?  Non-empty, at most
 * EBMS_MESSAGE_ID_MAX bytes, valid UTF-8, no whitespace or control
 * characters (ebMS3 Core 5.2.2.1; what ebms_parse accepts).
 */
static int
receipt_id_ok(const char *s)
{
	size_t i, len = s != NULL ? strlen(s) : 0;

	if (len == 0 || len > EBMS_MESSAGE_ID_MAX ||
	    !xmlCheckUTF8((const unsigned char *)s))
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/*
 * A copy of s fit for an XML text node: at most RECEIPT_DESCRIPTION_MAX
 * bytes (cut on a character boundary), control characters other than tab
 * and newlines replaced by a space, and, if it is still not valid UTF-8,
 * every non-ASCII byte replaced by '?'.  XML escaping is left to libxml2.
 */
static char *
receipt_clean_text(struct arena *a, const char *s)
{
	size_t i, len = strlen(s);
	unsigned char *c;
	char *out;

	if (len > RECEIPT_DESCRIPTION_MAX) {
		len = RECEIPT_DESCRIPTION_MAX;
		while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80)
			len--;
	}
	out = arena_strndup(a, s, len);
	if (out == NULL)
		return NULL;
	for (c = (unsigned char *)out; *c != '\0'; c++)
		if (*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r')
			*c = ' ';
	if (!xmlCheckUTF8((const unsigned char *)out))
		for (i = 0; i < len; i++)
			if ((unsigned char)out[i] >= 0x80)
				out[i] = '?';
	return out;
}

/*
 * The SOAP 1.2 envelope skeleton: Envelope (env, eb, wsse, wsu declared
 * once), Header/eb:Messaging[mustUnderstand]/eb:SignalMessage and an empty
 * Body.  The document is handed to the arena at once.
 */
static int
receipt_skeleton(struct arena *a, struct receipt_doc *rd)
{
	xmlNodePtr env, header, messaging;
	xmlNsPtr soap;

	rd->doc = xmlNewDoc((const xmlChar *)"1.0");
	if (rd->doc == NULL ||
	    arena_cleanup(a, receipt_doc_free, rd->doc) < 0)
		return -1;
	env = xmlNewDocNode(rd->doc, NULL, (const xmlChar *)"Envelope", NULL);
	if (env == NULL)
		return -1;
	(void)xmlDocSetRootElement(rd->doc, env);
	soap = xmlNewNs(env, (const xmlChar *)NS_SOAP12,
	    (const xmlChar *)"env");
	rd->eb = xmlNewNs(env, (const xmlChar *)NS_EB, (const xmlChar *)"eb");
	if (soap == NULL || rd->eb == NULL ||
	    xmlNewNs(env, (const xmlChar *)NS_WSSE,
	    (const xmlChar *)"wsse") == NULL ||
	    xmlNewNs(env, (const xmlChar *)NS_WSU,
	    (const xmlChar *)"wsu") == NULL)
		return -1;
	xmlSetNs(env, soap);
	header = xmlNewChild(env, soap, (const xmlChar *)"Header", NULL);
	messaging = xmlNewChild(header, rd->eb, (const xmlChar *)"Messaging",
	    NULL);
	/* ebMS3 Core 5.2.1: eb:Messaging/@mustUnderstand, true */
	if (messaging == NULL || xmlNewNsProp(messaging, soap,
	    (const xmlChar *)"mustUnderstand", (const xmlChar *)"true") == NULL)
		return -1;
	rd->signal = xmlNewChild(messaging, rd->eb,
	    (const xmlChar *)"SignalMessage", NULL);
	if (rd->signal == NULL ||
	    xmlNewChild(env, soap, (const xmlChar *)"Body", NULL) == NULL)
		return -1;
	return 0;
}

/*
 * Start a signal: skeleton plus eb:MessageInfo with Timestamp (now),
 * a new MessageId "<uuid>@as4gw" and RefToMessageId when ref is not NULL
 * (ebMS3 Core 5.2.2.1).
 */
static int
receipt_start(struct arena *a, const char *ref, struct receipt_doc *rd,
    struct err *err)
{
	char uuid[37], ts[CLOCK_ISO_LEN];
	xmlNodePtr info;
	int rc = -1;

	memset(rd, 0, sizeof(*rd));
	if (codec_uuid(uuid) < 0 || receipt_skeleton(a, rd) < 0)
		goto out;
	rd->message_id = arena_sprintf(a, "%s@as4gw", uuid);
	clock_iso8601(clock_epoch_ms(), ts);
	info = xmlNewChild(rd->signal, rd->eb, (const xmlChar *)"MessageInfo",
	    NULL);
	if (rd->message_id == NULL || info == NULL ||
	    xmlNewTextChild(info, rd->eb, (const xmlChar *)"Timestamp",
	    (const xmlChar *)ts) == NULL ||
	    xmlNewTextChild(info, rd->eb, (const xmlChar *)"MessageId",
	    (const xmlChar *)rd->message_id) == NULL)
		goto out;
	if (ref != NULL && xmlNewTextChild(info, rd->eb,
	    (const xmlChar *)"RefToMessageId", (const xmlChar *)ref) == NULL)
		goto out;
	rc = 0;
out:
	if (rc != 0)
		err_set(err, ERR_INTERNAL, NULL, "could not build signal");
	return rc;
}

/* Sign the envelope and append its serialisation (UTF-8, with XML
 * declaration) to out. */
static int
receipt_finish(struct receipt_doc *rd, const struct wss_key *key,
    struct buf *out, struct err *err)
{
	xmlChar *mem = NULL;
	int len = 0, rc = -1;

	if (wss_sign_envelope(rd->doc, key, err) < 0)
		goto out;
	xmlDocDumpMemoryEnc(rd->doc, &mem, &len, "UTF-8");
	if (mem == NULL || len <= 0 || buf_append(out, mem, (size_t)len) < 0) {
		err_set(err, ERR_INTERNAL, NULL, "could not serialise signal "
		    "message");
		goto out;
	}
	rc = 0;
out:
	xmlFree(mem);
	return rc;
}

/* AS4 profile 5.1.8 (a): eb:Receipt holds a copy of the eb:UserMessage
 * structure; xmlDocCopyNode declares on the copy every namespace it uses. */
static int
receipt_awareness(struct receipt_doc *rd, xmlNodePtr receipt,
    const struct ebms_user_message *um, struct err *err)
{
	xmlNodePtr copy = xmlDocCopyNode(um->node, rd->doc, 1);

	if (copy == NULL || xmlAddChild(receipt, copy) == NULL) {
		xmlFreeNode(copy);
		return err_set(err, ERR_INTERNAL, NULL, "could not copy "
		    "UserMessage");
	}
	return 0;
}

/*
 * AS4 profile 5.1.8 (b), Appendix A.3: the content of eb:Receipt is one
 * ebbp:NonRepudiationInformation with one ebbp:MessagePartNRInformation per
 * verified reference, in order, each holding an exact deep copy of the
 * ds:Reference (Transforms, DigestMethod, DigestValue, whitespace).  The
 * copy is made for our document with the namespaces it uses declared on
 * it (xmlDocCopyNode looks them up in the source tree), so it does not
 * depend on the sender's ancestors.
 */
static int
receipt_nrr(struct receipt_doc *rd, xmlNodePtr receipt,
    xmlNodePtr const *refs, size_t n, struct err *err)
{
	xmlNodePtr nri, part, copy;
	xmlNsPtr ebbp;
	size_t i;

	ebbp = xmlNewNs(receipt, (const xmlChar *)NS_EBBP,
	    (const xmlChar *)"ebbp");
	nri = ebbp != NULL ? xmlNewChild(receipt, ebbp,
	    (const xmlChar *)"NonRepudiationInformation", NULL) : NULL;
	if (nri == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "could not build "
		    "NonRepudiationInformation");
	for (i = 0; i < n; i++) {
		part = xmlNewChild(nri, ebbp,
		    (const xmlChar *)"MessagePartNRInformation", NULL);
		copy = part != NULL ? xmlDocCopyNode(refs[i], rd->doc, 1) :
		    NULL;
		if (copy == NULL || xmlAddChild(part, copy) == NULL) {
			xmlFreeNode(copy);
			return err_set(err, ERR_INTERNAL, NULL, "could not copy "
			    "ds:Reference %zu", i + 1);
		}
	}
	return 0;
}

/* Are the NRR references usable: present when counted, each a ds:Reference? */
static int
receipt_refs_ok(xmlNodePtr const *refs, size_t n)
{
	size_t i;

	if (n > 0 && refs == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (!xml_is(refs[i], NS_DS, "Reference"))
			return 0;
	return 1;
}

/* Build and sign the Receipt for um; see receipt.h. */
int
receipt_build(struct arena *a, const struct wss_key *key,
    const struct ebms_user_message *um, xmlNodePtr const *nrr_refs,
    size_t n_nrr_refs, struct buf *out, const char **ret_message_id,
    struct err *err)
{
	struct receipt_doc rd;
	xmlNodePtr receipt;
	int rc = -1;

	if (um == NULL || !receipt_id_ok(um->message_id) ||
	    !xml_is(um->node, NS_EB, "UserMessage") ||
	    !receipt_refs_ok(nrr_refs, n_nrr_refs)) {
		err_set(err, ERR_INTERNAL, NULL, "cannot build receipt: no "
		    "usable eb:UserMessage or ds:Reference");
		goto out;
	}
	if (receipt_start(a, um->message_id, &rd, err) < 0)
		goto out;
	receipt = xmlNewChild(rd.signal, rd.eb, (const xmlChar *)"Receipt",
	    NULL);
	if (receipt == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not build receipt");
		goto out;
	}
	if ((n_nrr_refs > 0 ? receipt_nrr(&rd, receipt, nrr_refs, n_nrr_refs,
	    err) : receipt_awareness(&rd, receipt, um, err)) < 0 ||
	    receipt_finish(&rd, key, out, err) < 0)
		goto out;
	if (ret_message_id != NULL)
		*ret_message_id = rd.message_id;
	rc = 0;
out:
	return rc;
}

/* Set the eb:Error attributes (ebMS3 Core 6.2.2 - 6.2.7). */
static int
receipt_error_attrs(xmlNodePtr e, const struct ebms_error_def *def,
    const char *ref)
{
	if (xmlNewProp(e, (const xmlChar *)"origin",
	    (const xmlChar *)"ebMS") == NULL ||
	    xmlNewProp(e, (const xmlChar *)"category",
	    (const xmlChar *)def->category) == NULL ||
	    xmlNewProp(e, (const xmlChar *)"errorCode",
	    (const xmlChar *)def->code) == NULL ||
	    xmlNewProp(e, (const xmlChar *)"severity",
	    (const xmlChar *)def->severity) == NULL)
		return -1;
	if (ref != NULL && xmlNewProp(e, (const xmlChar *)"refToMessageInError",
	    (const xmlChar *)ref) == NULL)
		return -1;
	if (xmlNewProp(e, (const xmlChar *)"shortDescription",
	    (const xmlChar *)def->short_desc) == NULL)
		return -1;
	return 0;
}

/* Add the text child `name` of the eb:Error e (eb:Description with
 * xml:lang "en", eb:ErrorDetail), cleaned as receipt.h says; nothing for a
 * NULL or empty text.  -1 when it could not be built. */
static int
receipt_error_text(struct arena *a, const struct receipt_doc *rd,
    xmlNodePtr e, const char *name, const char *text, const char *lang)
{
	char *clean;
	xmlNodePtr n;

	if (text == NULL || text[0] == '\0')
		return 0;
	if ((clean = receipt_clean_text(a, text)) == NULL)
		return -1;
	/* xmlNewTextChild escapes the text (& < >) */
	n = xmlNewTextChild(e, rd->eb, (const xmlChar *)name,
	    (const xmlChar *)clean);
	if (n == NULL)
		return -1;
	if (lang != NULL)
		xmlNodeSetLang(n, (const xmlChar *)lang);
	return 0;
}

/* Build and sign an eb:Error signal; see receipt.h. */
int
receipt_build_error(struct arena *a, const struct wss_key *key,
    const struct receipt_error *re, struct buf *out, struct err *err)
{
	const struct ebms_error_def *def = ebms_error_find(re->code);
	const char *ref = receipt_id_ok(re->ref_to_message_id) ?
	    re->ref_to_message_id : NULL;
	struct receipt_doc rd;
	xmlNodePtr e;
	int rc = -1;

	if (receipt_start(a, ref, &rd, err) < 0)
		goto out;
	e = xmlNewChild(rd.signal, rd.eb, (const xmlChar *)"Error", NULL);
	/* ebMS3 Core 6.2.8, 6.2.9 and the header schema: eb:Description,
	 * then eb:ErrorDetail */
	if (e == NULL || receipt_error_attrs(e, def, ref) < 0 ||
	    receipt_error_text(a, &rd, e, "Description", re->description,
	    "en") < 0 ||
	    receipt_error_text(a, &rd, e, "ErrorDetail", re->error_detail,
	    NULL) < 0) {
		err_set(err, ERR_INTERNAL, NULL, "could not build eb:Error");
		goto out;
	}
	if (receipt_finish(&rd, key, out, err) < 0)
		goto out;
	rc = 0;
out:
	return rc;
}
