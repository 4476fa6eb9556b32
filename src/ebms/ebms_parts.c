/*
 * ebms_parts — bind each eb:PartInfo to the bytes it names: a MIME part
 * (cid:, ebMS3 Core 5.2.2.13, AS4 5.1.2) or an element of the SOAP Body
 * (no href, or a same-document "#id"), and check the AS4 compression rules
 * (AS4 3.1) that concern packaging.
 */
#include "ebms.h"

#include <string.h>

#include <libxml/tree.h>

#include "../xml/xml.h"

#define EBMS_GZIP "application/gzip"
/* Elements searched for an "#id" target inside the Body (bounded walk). */
#define EBMS_ID_SEARCH_MAX 100000

/*
 * AS4 3.1: only attachments are compressed, with CompressionType
 * application/gzip and a MimeType property giving the original type.  A
 * compressed part without MimeType cannot be decompressed into anything
 * known: EBMS:0303 DecompressionFailure (AS4.NET's conformance suite
 * expects that code; issue 10 item 10).
 */
static int
ebms_check_compression(const struct ebms_part *part, size_t i,
    struct err *err)
{
	if (part->compression_type == NULL)
		return 0;
	if (strcmp(part->compression_type, EBMS_GZIP) != 0)
		return err_set(err, ERR_EBMS, "EBMS:0303",
		    "payload %zu: unsupported CompressionType", i + 1);
	if (part->content_id == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0003",
		    "payload %zu: a SOAP Body payload cannot be compressed",
		    i + 1);
	if (part->mime_type == NULL || part->mime_type[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0303",
		    "payload %zu: compressed payload without MimeType property",
		    i + 1);
	return 0;
}

/* Bind a cid: PartInfo to its MIME part; used[] marks parts already taken. */
static int
ebms_bind_cid(struct ebms_part *part, size_t i,
    const struct mime_message *mime, unsigned char *used, struct err *err)
{
	const struct mime_part *mp = mime != NULL ?
	    mime_find(mime, part->content_id) : NULL;
	size_t idx;

	if (mp == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "payload %zu: no MIME part for its cid: reference", i + 1);
	idx = (size_t)(mp - mime->parts);
	if (idx == mime->root)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "payload %zu: cid: reference names the SOAP part", i + 1);
	if (used[idx])
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "payload %zu: MIME part already named by another eb:PartInfo",
		    i + 1);
	used[idx] = 1;
	part->mime = mp;
	part->data = mp->data;
	part->len = mp->len;
	part->media_type = part->mime_type != NULL ? part->mime_type :
	    mp->media_type;
	return 0;
}

/* Does element n carry an ID-like attribute (wsu:Id, xml:id, id, Id) = id? */
static int
ebms_has_id(const xmlNode *n, const char *id)
{
	const xmlAttr *at;

	for (at = n->properties; at != NULL; at = at->next) {
		if (strcmp((const char *)at->name, "Id") != 0 &&
		    strcmp((const char *)at->name, "id") != 0)
			continue;
		if (at->children != NULL && at->children->next == NULL &&
		    at->children->type == XML_TEXT_NODE &&
		    strcmp((const char *)at->children->content, id) == 0)
			return 1;
	}
	return 0;
}

/* The element of the Body subtree (Body included) whose ID is id, or NULL. */
static xmlNodePtr
ebms_find_in_body(xmlNodePtr body, const char *id)
{
	xmlNodePtr n = body;
	size_t seen = 0;

	while (n != NULL && seen++ < EBMS_ID_SEARCH_MAX) {
		if (n->type == XML_ELEMENT_NODE && ebms_has_id(n, id))
			return n;
		if (n->type == XML_ELEMENT_NODE && n->children != NULL) {
			n = n->children;
			continue;
		}
		while (n != NULL && n != body && n->next == NULL)
			n = n->parent;
		if (n == NULL || n == body)
			break;
		n = n->next;
	}
	return NULL;
}

/* Serialise element node on its own (in-scope namespaces declared on it). */
static int
ebms_serialise(struct arena *a, xmlNodePtr node, struct ebms_part *part,
    struct err *err)
{
	xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
	xmlBufferPtr b = xmlBufferCreate();
	xmlNodePtr copy = NULL;
	int rc = -1;

	if (doc == NULL || b == NULL ||
	    (copy = xmlDocCopyNode(node, doc, 1)) == NULL)
		goto out;
	(void)xmlDocSetRootElement(doc, copy);
	if (xmlNodeDump(b, doc, copy, 0, 0) < 0)
		goto out;
	part->len = (size_t)xmlBufferLength(b);
	part->data = arena_memdup(a, xmlBufferContent(b), part->len);
	if (part->data != NULL)
		rc = 0;
out:
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL, "could not serialise body payload");
	xmlBufferFree(b);
	xmlFreeDoc(doc);
	return rc;
}

/*
 * Bind a PartInfo without href (ebMS3 Core 5.2.2.13: the SOAP Body) or with
 * "#id" (an element of the Body; the Body itself means its content) to the
 * serialised element.  *taken is the one Body payload already bound.
 */
static int
ebms_bind_body(struct arena *a, struct ebms_part *part, size_t i,
    const struct soap_env *env, xmlNodePtr *taken, struct err *err)
{
	xmlNodePtr target = env->body;

	if (part->href != NULL) {
		target = ebms_find_in_body(env->body, part->href + 1);
		if (target == NULL)
			return err_set(err, ERR_EBMS, "EBMS:0011",
			    "payload %zu: \"%s\" names no element of the SOAP Body",
			    i + 1, part->href);
	}
	if (target == env->body)
		target = xml_child(env->body, NULL, NULL);
	if (target == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "payload %zu: the SOAP Body is empty", i + 1);
	if (*taken != NULL)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "payload %zu: more than one eb:PartInfo for the SOAP Body",
		    i + 1);
	*taken = target;
	part->mime = NULL;
	part->media_type = part->mime_type != NULL ? part->mime_type :
	    "application/xml";
	return ebms_serialise(a, target, part, err);
}

/* Every MIME part but the root must be named by a PartInfo (AS4 5.1.2). */
static int
ebms_check_unused(const struct mime_message *mime, const unsigned char *used,
    struct err *err)
{
	size_t i;

	for (i = 0; mime != NULL && i < mime->n_parts; i++)
		if (i != mime->root && !used[i])
			return err_set(err, ERR_EBMS, "EBMS:0011",
			    "MIME part %zu is not referenced by any eb:PartInfo",
			    i + 1);
	return 0;
}

/* Bind each PartInfo to its bytes; see ebms.h for the error codes. */
int
ebms_bind_parts(struct arena *a, struct ebms_user_message *um,
    const struct mime_message *mime, const struct soap_env *env,
    struct err *err)
{
	size_t n_mime = mime != NULL ? mime->n_parts : 0, i;
	unsigned char *used = arena_calloc(a, n_mime + 1, 1);
	xmlNodePtr taken = NULL;
	int rc = -1;

	if (used == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	for (i = 0; i < um->n_parts; i++) {
		struct ebms_part *part = &um->parts[i];

		if (ebms_check_compression(part, i, err) == -1)
			goto out;
		if (part->content_id != NULL ?
		    ebms_bind_cid(part, i, mime, used, err) == -1 :
		    ebms_bind_body(a, part, i, env, &taken, err) == -1)
			goto out;
	}
	if (ebms_check_unused(mime, used, err) == -1)
		goto out;
	rc = 0;
out:
	return rc;
}
