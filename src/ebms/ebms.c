/*
 * ebms — read eb:Messaging (ebMS3 Core 5.2) into a struct ebms_user_message:
 * schema validation against the embedded ebMS3 header schema, then the
 * semantic checks the schema cannot express.
 */
#include "ebms.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/xmlschemas.h>

#include "../mime/mime_hdr.h"
#include "../util/clock.h"
#include "../xml/xml.h"

#define EBMS_SCHEMA_FILE "ebms-header-3_0-200704.xsd"

struct ebms_schema {
	void *xsd;  /* xmlSchemaPtr, read-only once compiled */
};

/* Compile the embedded ebMS3 header schema (imports soap11/soap12.xsd). */
int
ebms_schema_load(struct ebms_schema **ret, struct err *err)
{
	struct ebms_schema *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (xml_schema_load(EBMS_SCHEMA_FILE, &s->xsd, err) == -1) {
		free(s);
		return -1;
	}
	*ret = s;
	return 0;
}

/* Free a schema from ebms_schema_load; accepts NULL. */
void
ebms_schema_free(struct ebms_schema *s)
{
	if (s == NULL)
		return;
	xmlSchemaFree(s->xsd);
	free(s);
}

/*
 * ebMS3 Core 5.2.2.1: MessageId is an RFC 2822 msg-id without the angle
 * brackets.  Pragmatic check: 1..EBMS_MESSAGE_ID_MAX bytes, no white space
 * or control characters, no '<' or '>'.
 */
static int
ebms_message_id_ok(const char *id)
{
	size_t len = id != NULL ? strlen(id) : 0;
	const unsigned char *c;

	if (len == 0 || len > EBMS_MESSAGE_ID_MAX)
		return 0;
	for (c = (const unsigned char *)id; *c != '\0'; c++)
		if (*c <= 0x20 || *c == 0x7f || *c == '<' || *c == '>')
			return 0;
	return 1;
}

/* Is s an absolute URI: scheme ":" something, no white space (RFC 3986 3.1)? */
static int
ebms_is_uri(const char *s)
{
	const char *c = s;

	if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
		return 0;
	while ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
	    (*c >= '0' && *c <= '9') || *c == '+' || *c == '-' || *c == '.')
		c++;
	if (*c != ':' || c[1] == '\0')
		return 0;
	for (; *c != '\0'; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return 0;
	return 1;
}

/* Arena copy of an attribute with surrounding white space removed. */
static const char *
ebms_attr(struct arena *a, const xmlNode *node, const char *name)
{
	char *v = xml_attr(a, node, NULL, name);
	size_t len;

	if (v == NULL)
		return NULL;
	while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')
		v++;
	len = strlen(v);
	while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t' ||
	    v[len - 1] == '\r' || v[len - 1] == '\n'))
		v[--len] = '\0';
	return v;
}

/* Trimmed text of the child eb:<name> of parent; NULL if absent. */
static const char *
ebms_child_text(struct arena *a, const xmlNode *parent, const char *name)
{
	xmlNodePtr n = xml_child(parent, NS_EB, name);

	return n != NULL ? xml_text(a, n) : NULL;
}

/* The MessageId of the first UserMessage (else SignalMessage), if valid. */
static const char *
ebms_peek_message_id(struct arena *a, const xmlNode *messaging)
{
	xmlNodePtr m = xml_child(messaging, NS_EB, "UserMessage");
	const char *id;

	if (m == NULL)
		m = xml_child(messaging, NS_EB, "SignalMessage");
	id = ebms_child_text(a, xml_child(m, NS_EB, "MessageInfo"), "MessageId");
	return ebms_message_id_ok(id) ? id : NULL;
}

/* ebMS3 Core 5.2.1: exactly one eb:Messaging in the SOAP Header. */
static int
ebms_find_messaging(const struct soap_env *env, xmlNodePtr *ret,
    struct err *err)
{
	size_t n = xml_count(env->header, NS_EB, "Messaging");

	if (env->header == NULL || n == 0)
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "no eb:Messaging header");
	if (n > 1)
		return err_set(err, ERR_EBMS, "EBMS:0003",
		    "more than one eb:Messaging header");
	*ret = xml_child(env->header, NS_EB, "Messaging");
	return 0;
}

/* Refuse a Messaging without a UserMessage, naming the signal it carries. */
static int
ebms_refuse_signals(const xmlNode *messaging, struct err *err)
{
	xmlNodePtr sig = xml_child(messaging, NS_EB, "SignalMessage");

	if (sig == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:Messaging carries no eb:UserMessage");
	if (xml_child(sig, NS_EB, "PullRequest") != NULL)
		return err_set(err, ERR_EBMS, "EBMS:0004",
		    "pull requests are not served by this gateway");
	if (xml_child(sig, NS_EB, "Receipt") != NULL)
		return err_set(err, ERR_EBMS, "EBMS:0004",
		    "receipts are not accepted here");
	if (xml_child(sig, NS_EB, "Error") != NULL)
		return err_set(err, ERR_EBMS, "EBMS:0004",
		    "error signals are not accepted here");
	return err_set(err, ERR_EBMS, "EBMS:0004",
	    "signal messages are not accepted here");
}

/* Read the eb:Property children of parent (MessageProperties, PartProperties). */
static int
ebms_read_props(struct arena *a, const xmlNode *parent,
    struct ebms_property **ret, size_t *ret_n, struct err *err)
{
	size_t n = xml_count(parent, NS_EB, "Property"), i = 0;
	struct ebms_property *p = NULL;
	xmlNodePtr node;

	if (n > 0 && (p = arena_calloc(a, n, sizeof(*p))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (node = xml_child(parent, NS_EB, "Property"); node != NULL && i < n;
	    node = xml_next(node, NS_EB, "Property"), i++) {
		p[i].name = ebms_attr(a, node, "name");
		p[i].type = ebms_attr(a, node, "type");
		p[i].value = xml_text(a, node);
		if (p[i].value == NULL)
			return err_set(err, ERR_INTERNAL, NULL, "out of memory");
		if (p[i].name == NULL || p[i].name[0] == '\0')
			return err_set(err, ERR_EBMS, "EBMS:0009",
			    "eb:Property without a name");
	}
	*ret = p;
	*ret_n = n;
	return 0;
}

/* Value of the property called name, or NULL. */
static const char *
ebms_prop(const struct ebms_property *p, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(p[i].name, name) == 0)
			return p[i].value;
	return NULL;
}

/* ebMS3 Core 5.2.2.1: MessageInfo (Timestamp, MessageId, RefToMessageId). */
static int
ebms_read_message_info(struct arena *a, const xmlNode *um_node,
    struct ebms_user_message *um, struct err *err)
{
	xmlNodePtr info = xml_child(um_node, NS_EB, "MessageInfo");

	um->message_id = ebms_child_text(a, info, "MessageId");
	um->timestamp = ebms_child_text(a, info, "Timestamp");
	um->ref_to_message_id = ebms_child_text(a, info, "RefToMessageId");
	um->mpc = ebms_attr(a, um_node, "mpc");
	if (!ebms_message_id_ok(um->message_id))
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:MessageId missing, empty, longer than %d bytes or "
		    "containing white space, control characters or <>",
		    EBMS_MESSAGE_ID_MAX);
	if (um->timestamp == NULL ||
	    clock_parse_iso8601(um->timestamp, &um->timestamp_ms) == -1)
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:Timestamp missing or not a valid dateTime");
	if (um->ref_to_message_id != NULL &&
	    !ebms_message_id_ok(um->ref_to_message_id))
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:RefToMessageId is not a valid message id");
	return 0;
}

/* ebMS3 Core 5.2.2.3-5.2.2.5: one From or To party (PartyId+, Role). */
static int
ebms_read_party(struct arena *a, const xmlNode *node, const char *what,
    struct ebms_party *party, struct err *err)
{
	size_t n = xml_count(node, NS_EB, "PartyId"), i = 0;
	xmlNodePtr id;

	if (n == 0)
		return err_set(err, ERR_EBMS, "EBMS:0009", "eb:%s has no eb:PartyId",
		    what);
	party->ids = arena_calloc(a, n, sizeof(*party->ids));
	if (party->ids == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	party->n_ids = n;
	for (id = xml_child(node, NS_EB, "PartyId"); id != NULL && i < n;
	    id = xml_next(id, NS_EB, "PartyId"), i++) {
		party->ids[i].type = ebms_attr(a, id, "type");
		party->ids[i].value = xml_text(a, id);
		if (party->ids[i].value == NULL || party->ids[i].value[0] == '\0')
			return err_set(err, ERR_EBMS, "EBMS:0009",
			    "empty eb:PartyId in eb:%s", what);
		/*
		 * ebMS3 Core 5.2.2.4 sets no syntax for a PartyId without
		 * @type (unlike AgreementRef and Service), and Holodeck,
		 * Flame and AS4.NET send plain names: accepted; the P-Mode
		 * decides whether the party is known.
		 */
	}
	party->role = ebms_child_text(a, node, "Role");
	if (party->role == NULL || party->role[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:%s has no eb:Role", what);
	return 0;
}

/* ebMS3 Core 5.2.2.6-5.2.2.10: CollaborationInfo. */
static int
ebms_read_collab(struct arena *a, const xmlNode *um_node,
    struct ebms_user_message *um, struct err *err)
{
	xmlNodePtr ci = xml_child(um_node, NS_EB, "CollaborationInfo");
	xmlNodePtr ref = xml_child(ci, NS_EB, "AgreementRef");
	xmlNodePtr svc = xml_child(ci, NS_EB, "Service");

	if (ref != NULL) {
		um->agreement_ref = xml_text(a, ref);
		um->agreement_type = ebms_attr(a, ref, "type");
		um->agreement_pmode = ebms_attr(a, ref, "pmode");
	}
	um->service = svc != NULL ? xml_text(a, svc) : NULL;
	um->service_type = ebms_attr(a, svc, "type");
	um->action = ebms_child_text(a, ci, "Action");
	um->conversation_id = ebms_child_text(a, ci, "ConversationId");
	if (um->service == NULL || um->service[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0009", "empty eb:Service");
	if (um->action == NULL || um->action[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0009", "empty eb:Action");
	if (um->conversation_id == NULL)
		return err_set(err, ERR_EBMS, "EBMS:0009",
		    "eb:ConversationId missing");
	/* ebMS3 Core 5.2.2.7: without @type the AgreementRef MUST be a URI */
	if (um->agreement_ref != NULL && um->agreement_type == NULL &&
	    !ebms_is_uri(um->agreement_ref))
		return err_set(err, ERR_EBMS, "EBMS:0003",
		    "eb:AgreementRef has no type and is not a URI");
	/* ebMS3 Core 5.2.2.8: without @type the Service MUST be a URI */
	if (um->service_type == NULL && !ebms_is_uri(um->service))
		return err_set(err, ERR_EBMS, "EBMS:0003",
		    "eb:Service has no type and is not a URI");
	return 0;
}

/* ebMS3 Core 5.2.2.13: one PartInfo (href, PartProperties). */
static int
ebms_read_part(struct arena *a, xmlNodePtr node, struct ebms_part *part,
    struct err *err)
{
	part->node = node;
	part->href = ebms_attr(a, node, "href");
	if (ebms_read_props(a, xml_child(node, NS_EB, "PartProperties"),
	    &part->props, &part->n_props, err) == -1)
		return -1;
	part->mime_type = ebms_prop(part->props, part->n_props, "MimeType");
	part->compression_type = ebms_prop(part->props, part->n_props,
	    "CompressionType");
	if (part->compression_type != NULL && part->compression_type[0] == '\0')
		part->compression_type = NULL;  /* AS4 3.1: empty = none */
	if (part->href == NULL || part->href[0] == '#')
		return part->href != NULL && part->href[1] == '\0' ?
		    err_set(err, ERR_EBMS, "EBMS:0011",
		    "eb:PartInfo href \"#\" names no element") : 0;
	if (strncasecmp(part->href, "cid:", 4) != 0)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "eb:PartInfo references an external payload");
	/* RFC 2392 2, decoded by the one cid: decoder (mime_hdr.h) that the
	 * signature's cid: resolver uses too */
	if (mime_cid_match(part->href + 4, strlen(part->href + 4), "") == -1)
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "eb:PartInfo href is not a valid cid: URL");
	part->content_id = mime_cid_decode(a, part->href + 4);
	if (part->content_id == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	if (part->content_id[0] == '\0')
		return err_set(err, ERR_EBMS, "EBMS:0011",
		    "eb:PartInfo href \"cid:\" is empty");
	return 0;
}

/* ebMS3 Core 5.2.2.12: PayloadInfo (PartInfo+), optional. */
static int
ebms_read_payload_info(struct arena *a, const xmlNode *um_node,
    struct ebms_user_message *um, struct err *err)
{
	xmlNodePtr pi = xml_child(um_node, NS_EB, "PayloadInfo");
	size_t n = xml_count(pi, NS_EB, "PartInfo"), i = 0;
	xmlNodePtr node;

	if (n == 0)
		return 0;
	um->parts = arena_calloc(a, n, sizeof(*um->parts));
	if (um->parts == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	um->n_parts = n;
	for (node = xml_child(pi, NS_EB, "PartInfo"); node != NULL && i < n;
	    node = xml_next(node, NS_EB, "PartInfo"), i++)
		if (ebms_read_part(a, node, &um->parts[i], err) == -1)
			return -1;
	return 0;
}

/* Fill um from a schema-valid eb:UserMessage and run the semantic checks. */
static int
ebms_read_user_message(struct arena *a, xmlNodePtr node,
    struct ebms_user_message *um, struct err *err)
{
	xmlNodePtr pinfo = xml_child(node, NS_EB, "PartyInfo");

	um->node = node;
	if (ebms_read_message_info(a, node, um, err) == -1 ||
	    ebms_read_party(a, xml_child(pinfo, NS_EB, "From"), "From",
	    &um->from, err) == -1 ||
	    ebms_read_party(a, xml_child(pinfo, NS_EB, "To"), "To", &um->to,
	    err) == -1 ||
	    ebms_read_collab(a, node, um, err) == -1 ||
	    ebms_read_props(a, xml_child(node, NS_EB, "MessageProperties"),
	    &um->props, &um->n_props, err) == -1 ||
	    ebms_read_payload_info(a, node, um, err) == -1)
		return -1;
	return 0;
}

/*
 * Interoperability allowance: AS4.NET writes an empty <eb:PartProperties/>
 * and an empty <eb:Schemas/> in eb:PartInfo; neither is valid against the
 * ebMS3 schema (PartProperties needs a Property, Schemas does not exist).
 * Is n such an empty element (no element children, no attributes)?
 */
static int
ebms_is_quirk(const xmlNode *n)
{
	return (xml_is(n, NS_EB, "PartProperties") ||
	    xml_is(n, NS_EB, "Schemas")) && n->properties == NULL &&
	    xml_child(n, NULL, NULL) == NULL;
}

/* Count (and with prune, remove) the AS4.NET empty elements of one PartInfo. */
static size_t
ebms_part_quirks(xmlNodePtr part, int prune)
{
	xmlNodePtr n, next;
	size_t count = 0;

	for (n = part->children; n != NULL; n = next) {
		next = n->next;
		if (!ebms_is_quirk(n))
			continue;
		count++;
		if (prune) {
			xmlUnlinkNode(n);
			xmlFreeNode(n);
		}
	}
	return count;
}

/* Count (and with prune, remove) the AS4.NET empty elements in PartInfos. */
static size_t
ebms_quirks(xmlNodePtr messaging, int prune)
{
	xmlNodePtr um, part;
	size_t count = 0;

	for (um = xml_child(messaging, NS_EB, "UserMessage"); um != NULL;
	    um = xml_next(um, NS_EB, "UserMessage"))
		for (part = xml_child(xml_child(um, NS_EB, "PayloadInfo"), NS_EB,
		    "PartInfo"); part != NULL;
		    part = xml_next(part, NS_EB, "PartInfo"))
			count += ebms_part_quirks(part, prune);
	return count;
}

/*
 * Validate eb:Messaging against the ebMS3 schema (-> EBMS:0009).  The
 * request document is never changed (signatures cover it): when the AS4.NET
 * empty elements are present, a pruned copy is validated instead.
 */
static int
ebms_validate(const struct ebms_schema *schema, xmlNodePtr messaging,
    struct err *err)
{
	xmlDocPtr doc = NULL;
	xmlNodePtr copy;
	int rc = -1;

	if (ebms_quirks(messaging, 0) == 0)
		return xml_validate(schema->xsd, messaging, "EBMS:0009", err);
	doc = xmlNewDoc((const xmlChar *)"1.0");
	copy = doc != NULL ? xmlDocCopyNode(messaging, doc, 1) : NULL;
	if (copy == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	(void)xmlDocSetRootElement(doc, copy);
	(void)ebms_quirks(copy, 1);
	rc = xml_validate(schema->xsd, copy, "EBMS:0009", err);
out:
	xmlFreeDoc(doc);
	return rc;
}

/* Read eb:Messaging into a UserMessage; see ebms.h for the error codes. */
int
ebms_parse(struct arena *a, const struct ebms_schema *schema,
    const struct soap_env *env, struct ebms_user_message **ret,
    const char **ret_message_id, struct err *err)
{
	struct ebms_user_message *um = NULL;
	xmlNodePtr messaging = NULL, node;
	const char *peek;
	int rc = -1;

	if (ebms_find_messaging(env, &messaging, err) == -1)
		goto out;
	peek = ebms_peek_message_id(a, messaging);
	if (peek != NULL && ret_message_id != NULL)
		*ret_message_id = peek;
	if (ebms_validate(schema, messaging, err) == -1)
		goto out;
	node = xml_child(messaging, NS_EB, "UserMessage");
	if (node == NULL) {
		ebms_refuse_signals(messaging, err);
		goto out;
	}
	if (xml_next(node, NS_EB, "UserMessage") != NULL) {
		err_set(err, ERR_EBMS, "EBMS:0003",
		    "more than one eb:UserMessage in eb:Messaging");
		goto out;
	}
	um = arena_alloc(a, sizeof(*um));
	if (um == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	um->messaging = messaging;
	if (ebms_read_user_message(a, node, um, err) == -1)
		goto out;
	*ret = um;
	rc = 0;
out:
	return rc;
}
