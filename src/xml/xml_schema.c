/*
 * xml_schema — the embedded schemas: the process-wide entity loader that
 * serves them (and refuses everything else), XSD compilation with the
 * built-in stand-ins for location-less imports, and validation.
 */
#include "xml.h"
#include "xml_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

#include "../util/buf.h"


/* The last path component of a URL or system id ("a/b/soap11.xsd" -> "soap11.xsd"). */
static const char *
xml_base_name(const char *url)
{
	const char *slash = strrchr(url, '/');
	const char *bslash = strrchr(url, '\\');

	if (bslash != NULL && (slash == NULL || bslash > slash))
		slash = bslash;
	return slash != NULL ? slash + 1 : url;
}

/* The embedded file with this base name, or NULL. */
const struct xml_embedded *
xml_embedded_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < xml_embedded_count; i++)
		if (xml_embedded_files[i].name != NULL &&
		    strcmp(xml_embedded_files[i].name, name) == 0)
			return &xml_embedded_files[i];
	return NULL;
}

/*
 * Schemas for namespaces that the embedded XSDs import without a
 * schemaLocation.  libxml2 cannot resolve xml:lang (used by soap12.xsd and
 * the ebMS header schema) or the xlink/xmldsig references of the ebBP
 * signals schema otherwise.  xml.xsd and xlink.xsd declare the attributes
 * used; the xmldsig one is a lax stand-in (ds:Signature and ds:Reference
 * accept any content), since signatures are verified by wss/, not by XSD.
 */
struct xml_builtin {
	const char *ns;
	const char *name;
	const char *text;
};

static const struct xml_builtin xml_builtins[] = {
	{"http://www.w3.org/XML/1998/namespace", "xml.xsd",
	    "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\""
	    " targetNamespace=\"http://www.w3.org/XML/1998/namespace\">"
	    "<xs:attribute name=\"lang\"><xs:simpleType><xs:union"
	    " memberTypes=\"xs:language\"><xs:simpleType><xs:restriction"
	    " base=\"xs:string\"><xs:enumeration value=\"\"/></xs:restriction>"
	    "</xs:simpleType></xs:union></xs:simpleType></xs:attribute>"
	    "<xs:attribute name=\"space\"><xs:simpleType><xs:restriction"
	    " base=\"xs:NCName\"><xs:enumeration value=\"default\"/>"
	    "<xs:enumeration value=\"preserve\"/></xs:restriction>"
	    "</xs:simpleType></xs:attribute>"
	    "<xs:attribute name=\"base\" type=\"xs:anyURI\"/>"
	    "<xs:attribute name=\"id\" type=\"xs:ID\"/></xs:schema>"},
	{"http://www.w3.org/1999/xlink", "xlink.xsd",
	    "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\""
	    " targetNamespace=\"http://www.w3.org/1999/xlink\">"
	    "<xs:attribute name=\"type\" type=\"xs:string\"/>"
	    "<xs:attribute name=\"href\" type=\"xs:anyURI\"/>"
	    "<xs:attribute name=\"role\" type=\"xs:anyURI\"/>"
	    "<xs:attribute name=\"arcrole\" type=\"xs:anyURI\"/>"
	    "<xs:attribute name=\"title\" type=\"xs:string\"/>"
	    "<xs:attribute name=\"show\" type=\"xs:string\"/>"
	    "<xs:attribute name=\"actuate\" type=\"xs:string\"/></xs:schema>"},
	{"http://www.w3.org/2000/09/xmldsig#", "xmldsig-lax.xsd",
	    "<xs:schema xmlns:xs=\"http://www.w3.org/2001/XMLSchema\""
	    " targetNamespace=\"http://www.w3.org/2000/09/xmldsig#\">"
	    "<xs:complexType name=\"Lax\" mixed=\"true\"><xs:sequence>"
	    "<xs:any namespace=\"##any\" processContents=\"lax\" minOccurs=\"0\""
	    " maxOccurs=\"unbounded\"/></xs:sequence>"
	    "<xs:anyAttribute processContents=\"lax\"/></xs:complexType>"
	    "<xs:element name=\"Signature\" type=\"Lax\""
	    " xmlns=\"http://www.w3.org/2000/09/xmldsig#\"/>"
	    "<xs:element name=\"Reference\" type=\"Lax\""
	    " xmlns=\"http://www.w3.org/2000/09/xmldsig#\"/></xs:schema>"},
};

#define XML_N_BUILTINS (sizeof(xml_builtins) / sizeof(xml_builtins[0]))

/* Is the import tag [tag, tag + len) location-less for a built-in namespace? */
static const struct xml_builtin *
xml_import_builtin(const char *tag, size_t len)
{
	char quoted[128];
	size_t i;
	int n;

	if (memmem(tag, len, "schemaLocation", 14) != NULL)
		return NULL;
	for (i = 0; i < XML_N_BUILTINS; i++) {
		n = snprintf(quoted, sizeof(quoted), "\"%s\"", xml_builtins[i].ns);
		if (n < 2 || (size_t)n >= sizeof(quoted))
			continue;
		if (memmem(tag, len, quoted, (size_t)n) != NULL)
			return &xml_builtins[i];
		quoted[0] = '\'';
		quoted[n - 1] = '\'';
		if (memmem(tag, len, quoted, (size_t)n) != NULL)
			return &xml_builtins[i];
	}
	return NULL;
}

/*
 * Copy schema text into out, adding schemaLocation="<built-in>" to every
 * xsd:import of a built-in namespace that has none (see xml_builtins).
 */
static int
xml_schema_patch(const char *src, size_t len, struct buf *out)
{
	const struct xml_builtin *b;
	const char *p = src, *end = src + len, *hit, *gt;

	while ((hit = memmem(p, (size_t)(end - p), "import", 6)) != NULL) {
		hit += 6;
		gt = memchr(hit, '>', (size_t)(end - hit));
		if (gt == NULL)
			break;
		if (hit - src < 8 || (hit[-7] != ':' && hit[-7] != '<') ||
		    (*hit != ' ' && *hit != '\t' && *hit != '\n' && *hit != '\r'))
			b = NULL;
		else
			b = xml_import_builtin(hit, (size_t)(gt - hit));
		if (buf_append(out, p, (size_t)(hit - p)) == -1 ||
		    (b != NULL && buf_printf(out, " schemaLocation=\"%s\"",
		    b->name) == -1))
			return -1;
		p = hit;
	}
	return buf_append(out, p, (size_t)(end - p));
}

/* Patched text of the embedded or built-in schema with this base name. */
static int
xml_schema_text(const char *name, struct buf *out)
{
	const struct xml_embedded *e = xml_embedded_find(name);
	size_t i;

	if (e != NULL)
		return e->len > 0 && e->len <= INT_MAX ?
		    xml_schema_patch((const char *)e->data, e->len, out) : -1;
	for (i = 0; i < XML_N_BUILTINS; i++)
		if (name != NULL && strcmp(xml_builtins[i].name, name) == 0)
			return buf_puts(out, xml_builtins[i].text);
	return -1;
}

/*
 * The process-wide external entity loader: serves the embedded schemas (by
 * base name, for xsd:import schemaLocation) and refuses everything else, so
 * no file or network access ever comes from XML processing.
 */
xmlParserInputPtr
xml_schema_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt)
{
	struct buf text = {0};
	xmlParserInputBufferPtr pbuf = NULL;
	xmlParserInputPtr in = NULL;
	const char *name = url != NULL ? url : id;

	if (name == NULL || xml_schema_text(xml_base_name(name), &text) == -1 ||
	    text.len > INT_MAX)
		goto out;
	/* a copy: static buffers are mishandled by libxml2 2.9 */
	pbuf = xmlParserInputBufferCreateMem(text.data, (int)text.len,
	    XML_CHAR_ENCODING_NONE);
	if (pbuf == NULL)
		goto out;
	in = xmlNewIOInputStream(ctxt, pbuf, XML_CHAR_ENCODING_NONE);
	if (in == NULL) {
		xmlFreeParserInputBuffer(pbuf);
		goto out;
	}
	in->filename = (const char *)xmlStrdup(
	    (const xmlChar *)xml_base_name(name));
out:
	buf_free(&text);
	return in;
}

/* Structured error handler for schema parsing/validation: keep the first. */
static void
xml_on_schema_error(void *user, xmlErrorPtr e)
{
	char *first = user;

	if (e == NULL || e->level < XML_ERR_ERROR || first[0] != '\0')
		return;
	xml_format_error(first, 320, e);
}

/* Compile an embedded XSD; imports resolve only to embedded files. */
int
xml_schema_load(const char *name, void **ret_schema, struct err *err)
{
	xmlSchemaParserCtxtPtr pctxt = NULL;
	xmlSchemaPtr schema = NULL;
	struct buf text = {0};
	char first[320] = "";
	int rc = -1;

	xml_global_init();
	if (name == NULL || xml_embedded_find(name) == NULL) {
		err_set(err, ERR_CONF, NULL, "no embedded schema \"%s\"",
		    name != NULL ? name : "(null)");
		goto out;
	}
	if (xml_schema_text(name, &text) == -1 || text.len > INT_MAX ||
	    (pctxt = xmlSchemaNewMemParserCtxt(text.data,
	    (int)text.len)) == NULL) {
		err_set(err, ERR_CONF, NULL, "could not read schema \"%s\"", name);
		goto out;
	}
	xmlSchemaSetParserStructuredErrors(pctxt, xml_on_schema_error, first);
	schema = xmlSchemaParse(pctxt);
	if (schema == NULL) {
		err_set(err, ERR_CONF, NULL, "could not compile schema \"%s\"",
		    name);
		err_detail(err, "%s", first);
		goto out;
	}
	*ret_schema = schema;
	rc = 0;
out:
	xmlSchemaFreeParserCtxt(pctxt);
	buf_free(&text);
	return rc;
}

/* Validate elem against schema with a fresh (per-call) validation context. */
int
xml_validate(void *schema, xmlNodePtr elem, const char *ebms_code,
    struct err *err)
{
	xmlSchemaValidCtxtPtr vctxt = NULL;
	char first[320] = "";
	int rc = -1, v;

	if (schema == NULL || elem == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "no schema or element to validate");
		goto out;
	}
	vctxt = xmlSchemaNewValidCtxt(schema);
	if (vctxt == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	xmlSchemaSetValidStructuredErrors(vctxt, xml_on_schema_error, first);
	v = xmlSchemaValidateOneElement(vctxt, elem);
	if (v == 0) {
		rc = 0;
		goto out;
	}
	if (ebms_code != NULL)
		err_set(err, ERR_EBMS, ebms_code, "%s is not valid against the schema",
		    (const char *)elem->name);
	else
		err_set(err, ERR_CONF, NULL, "%s is not valid against the schema",
		    (const char *)elem->name);
	err_detail(err, "%s", first[0] != '\0' ? first : "validation failed");
out:
	xmlSchemaFreeValidCtxt(vctxt);
	return rc;
}
