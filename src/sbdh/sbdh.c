#include "sbdh.h"

#include <string.h>

/* State of one sbdh_read(). */
struct sbdh_ctx {
	struct arena *a;
	size_t max;          /* max_value_bytes */
	struct err *err;
};

/* "SBDH <field> <why>" as ERR_EBMS SBDH_EBMS_CODE; returns -1. */
static int
sbdh_fail(const struct sbdh_ctx *x, const char *field, const char *why)
{
	return err_set(x->err, ERR_EBMS, SBDH_EBMS_CODE, "SBDH %s %s", field,
	    why);
}

void
sbdh_limits_default(struct sbdh_limits *lim)
{
	xml_limits_default(&lim->xml);
	lim->xml.max_bytes = 0;
	lim->max_value_bytes = SBDH_MAX_VALUE_DEFAULT;
}

/*
 * A field's value: s (trimmed text) must not be empty, at most x->max bytes
 * and free of control characters (a value ends up in the inbox, the log
 * and comparisons with the ebMS header: no line breaks inside it).
 */
static int
sbdh_check_value(const struct sbdh_ctx *x, const char *field, const char *s)
{
	size_t n, i;

	if (s == NULL)
		return err_set(x->err, ERR_INTERNAL, NULL, "out of memory");
	n = strlen(s);
	if (n == 0)
		return sbdh_fail(x, field, "empty");
	if (n > x->max) {
		err_detail(x->err, "%zu bytes, limit %zu", n, x->max);
		return sbdh_fail(x, field, "too long");
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return sbdh_fail(x, field, "has a control character");
	return 0;
}

/*
 * The one child {NS_SBDH}name of parent into *ret_node: two or more is an
 * error; none is an error when required, else *ret_node = NULL.
 */
static int
sbdh_one(const struct sbdh_ctx *x, const xmlNode *parent, const char *name,
    int required, xmlNodePtr *ret_node)
{
	size_t n = xml_count(parent, NS_SBDH, name);

	if (n > 1)
		return sbdh_fail(x, name, "repeated");
	if (n == 0 && required)
		return sbdh_fail(x, name, "missing");
	*ret_node = n == 1 ? xml_child(parent, NS_SBDH, name) : NULL;
	return 0;
}

/* The text of a leaf element n (no child elements) into *ret. */
static int
sbdh_leaf(const struct sbdh_ctx *x, const xmlNode *n, const char *field,
    const char **ret)
{
	const char *s;

	if (xml_child(n, NULL, NULL) != NULL)
		return sbdh_fail(x, field, "has child elements");
	s = xml_text(x->a, n);
	if (sbdh_check_value(x, field, s) == -1)
		return -1;
	*ret = s;
	return 0;
}

/* The required leaf child {NS_SBDH}name of parent into *ret. */
static int
sbdh_field(const struct sbdh_ctx *x, const xmlNode *parent, const char *name,
    const char **ret)
{
	xmlNodePtr n;

	if (sbdh_one(x, parent, name, 1, &n) == -1)
		return -1;
	return sbdh_leaf(x, n, name, ret);
}

/* s without leading and trailing XML white space, in the arena (NULL in:
 * NULL out). */
static const char *
sbdh_trim(struct arena *a, const char *s)
{
	size_t n;

	if (s == NULL)
		return NULL;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' ||
	    s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	return arena_strndup(a, s, n);
}

/* SBDH 1.3 Partner: <Sender>/<Receiver> with one Identifier whose optional
 * @Authority is the identifier scheme (Peppol Envelope 2.0, 6.2/6.3). */
static int
sbdh_party(const struct sbdh_ctx *x, const xmlNode *hdr, const char *name,
    struct sbdh_id *ret)
{
	xmlNodePtr party, id;
	const char *scheme;

	if (sbdh_one(x, hdr, name, 1, &party) == -1 ||
	    sbdh_one(x, party, "Identifier", 1, &id) == -1 ||
	    sbdh_leaf(x, id, name, &ret->value) == -1)
		return -1;
	/* the unqualified attribute only (as xml_attr reads it) */
	if (xmlHasNsProp(id, (const xmlChar *)"Authority", NULL) == NULL) {
		ret->scheme = NULL;
		return 0;
	}
	scheme = sbdh_trim(x->a, xml_attr(x->a, id, NULL, "Authority"));
	if (sbdh_check_value(x, "Identifier/@Authority", scheme) == -1)
		return -1;
	ret->scheme = scheme;
	return 0;
}

/* SBDH 1.3 DocumentIdentification: Standard, TypeVersion,
 * InstanceIdentifier, Type, [MultipleType], CreationDateAndTime. */
static int
sbdh_docident(const struct sbdh_ctx *x, const xmlNode *hdr, struct sbdh *ret)
{
	xmlNodePtr di;

	if (sbdh_one(x, hdr, "DocumentIdentification", 1, &di) == -1)
		return -1;
	if (sbdh_field(x, di, "Standard", &ret->standard) == -1 ||
	    sbdh_field(x, di, "TypeVersion", &ret->type_version) == -1 ||
	    sbdh_field(x, di, "InstanceIdentifier", &ret->instance_id) == -1 ||
	    sbdh_field(x, di, "Type", &ret->type) == -1 ||
	    sbdh_field(x, di, "CreationDateAndTime", &ret->creation) == -1)
		return -1;
	return 0;
}

/* Where a Scope of this Type goes (NULL: a type we do not read). */
static struct sbdh_id *
sbdh_scope_slot(struct sbdh *ret, const char *type, struct sbdh_id *country)
{
	if (strcmp(type, "DOCUMENTID") == 0)
		return &ret->document_type;
	if (strcmp(type, "PROCESSID") == 0)
		return &ret->process;
	if (strcmp(type, "COUNTRY_C1") == 0)
		return country;
	return NULL;
}

/*
 * SBDH 1.3 BusinessScope/Scope (Type, InstanceIdentifier, [Identifier]):
 * Peppol Envelope 2.0, 6.5: DOCUMENTID and PROCESSID with their schemes in
 * Identifier, COUNTRY_C1.  Each at most once (two would be ambiguous);
 * other types (MLS_TO, MLS_TYPE, ...) are skipped.
 */
static int
sbdh_scopes(const struct sbdh_ctx *x, const xmlNode *hdr, struct sbdh *ret)
{
	struct sbdh_id country = {0}, *slot;
	xmlNodePtr bs, s, idn;
	const char *type;

	if (sbdh_one(x, hdr, "BusinessScope", 0, &bs) == -1)
		return -1;
	for (s = xml_child(bs, NS_SBDH, "Scope"); bs != NULL && s != NULL;
	    s = xml_next(s, NS_SBDH, "Scope")) {
		if (sbdh_field(x, s, "Type", &type) == -1)
			return -1;
		if ((slot = sbdh_scope_slot(ret, type, &country)) == NULL)
			continue;
		if (slot->value != NULL)
			return sbdh_fail(x, "Scope", "type repeated");
		if (sbdh_field(x, s, "InstanceIdentifier", &slot->value) == -1 ||
		    sbdh_one(x, s, "Identifier", 0, &idn) == -1 ||
		    (idn != NULL && sbdh_leaf(x, idn, "Scope/Identifier",
		    &slot->scheme) == -1))
			return -1;
	}
	ret->country_c1 = country.value;
	return 0;
}

/* Exactly one element, the business document, after the header. */
static int
sbdh_document(const struct sbdh_ctx *x, const xmlNode *hdr, struct sbdh *ret)
{
	xmlNodePtr doc = xml_next(hdr, NULL, NULL);

	if (doc == NULL)
		return sbdh_fail(x, "business document", "missing");
	if (xml_next(doc, NULL, NULL) != NULL)
		return sbdh_fail(x, "business document", "repeated");
	ret->document_ns = doc->ns != NULL ? arena_strdup(x->a,
	    (const char *)doc->ns->href) : NULL;
	ret->document_name = arena_strdup(x->a, (const char *)doc->name);
	if (ret->document_name == NULL ||
	    (doc->ns != NULL && ret->document_ns == NULL))
		return err_set(x->err, ERR_INTERNAL, NULL, "out of memory");
	return 0;
}

int
sbdh_read(struct arena *a, const xmlNode *root, size_t max_value_bytes,
    struct sbdh *ret, struct err *err)
{
	struct sbdh_ctx x = { a, max_value_bytes, err };
	struct sbdh s;
	xmlNodePtr hdr;

	memset(&s, 0, sizeof(s));
	if (!xml_is(root, NS_SBDH, "StandardBusinessDocument")) {
		if (root != NULL)
			err_detail(err, "root element {%s}%s",
			    root->ns != NULL ? (const char *)root->ns->href :
			    "", (const char *)root->name);
		return err_set(err, ERR_EBMS, SBDH_EBMS_CODE,
		    "payload is not an SBDH document");
	}
	hdr = xml_child(root, NULL, NULL);
	if (!xml_is(hdr, NS_SBDH, "StandardBusinessDocumentHeader"))
		return sbdh_fail(&x, "StandardBusinessDocumentHeader",
		    "missing");
	if (sbdh_field(&x, hdr, "HeaderVersion", &s.header_version) == -1 ||
	    sbdh_party(&x, hdr, "Sender", &s.sender) == -1 ||
	    sbdh_party(&x, hdr, "Receiver", &s.receiver) == -1 ||
	    sbdh_docident(&x, hdr, &s) == -1 ||
	    sbdh_scopes(&x, hdr, &s) == -1 ||
	    sbdh_document(&x, hdr, &s) == -1)
		return -1;
	*ret = s;
	return 0;
}

int
sbdh_parse(struct arena *a, const unsigned char *data, size_t len,
    const struct sbdh_limits *lim, struct sbdh *ret, struct err *err)
{
	struct err xe;
	xmlDocPtr doc;

	err_clear(&xe);
	if (xml_parse(a, (const char *)data, len, &lim->xml, &doc, &xe) == -1) {
		/* the XML verdict (DTD, limits, not well-formed) is the
		 * reason, not the answer: the answer is the ebMS one */
		if (xe.kind == ERR_INTERNAL)
			return err_set(err, ERR_INTERNAL, NULL, "%s", xe.msg);
		err_detail(err, "%s: %s", xe.msg, xe.detail);
		return err_set(err, ERR_EBMS, SBDH_EBMS_CODE,
		    "payload is not an SBDH document");
	}
	return sbdh_read(a, xmlDocGetRootElement(doc), lim->max_value_bytes,
	    ret, err);
}
