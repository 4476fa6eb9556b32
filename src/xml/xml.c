/*
 * xml — hardened libxml2 parsing, the embedded-schema entity loader, schema
 * validation and small DOM helpers.  See xml.h for the rules enforced here.
 *
 * Every parse and validation installs its own structured error handler on
 * its own context, so no libxml2 message ever reaches stderr, whichever
 * thread runs it (libxml2 error globals are per thread).
 */
#include "xml.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlschemas.h>

#include "../util/buf.h"

/* Longest element or attribute name accepted (libxml2 itself allows 50000). */
#define XML_NAME_MAX 1024
/* Largest configuration file read by xml_parse_file. */
#define XML_FILE_MAX (16u * 1024u * 1024u)

/* Per-parse state, reached from SAX callbacks through ctxt->_private. */
struct xml_state {
	const struct xml_limits *lim;
	size_t depth, nodes;
	int dtd;          /* a DOCTYPE or entity declaration was seen */
	int complex;      /* a limit was exceeded */
	int ns_error;     /* a namespace error other than a non-URI name */
	char first[320];  /* first libxml2 complaint */
};

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

/* Fill lim with the documented defaults. */
void
xml_limits_default(struct xml_limits *lim)
{
	lim->max_depth = 64;
	lim->max_attributes = 64;
	lim->max_nodes = 100000;
}

/* Discard a libxml2 generic (printf-style) message: nothing may print. */
static void
xml_silent_generic(void *ctx, const char *msg, ...)
{
	(void)ctx;
	(void)msg;
}

/* Discard a structured libxml2 error reported outside our own contexts. */
static void
xml_silent_structured(void *ctx, xmlErrorPtr e)
{
	(void)ctx;
	(void)e;
}

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
static xmlParserInputPtr
xml_entity_loader(const char *url, const char *id, xmlParserCtxtPtr ctxt)
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

/* pthread_once body of xml_global_init. */
static void
xml_global_init_once(void)
{
	xmlInitParser();
	xmlSetExternalEntityLoader(xml_entity_loader);
	xmlLineNumbersDefault(1);
	xmlThrDefLineNumbersDefaultValue(1);
	/* this thread, and the defaults every later thread starts with */
	xmlSetGenericErrorFunc(NULL, xml_silent_generic);
	xmlThrDefSetGenericErrorFunc(NULL, xml_silent_generic);
	xmlSetStructuredErrorFunc(NULL, xml_silent_structured);
	xmlThrDefSetStructuredErrorFunc(NULL, xml_silent_structured);
}

/* Once per process: libxml2 init, refusing loader, silent defaults. */
void
xml_global_init(void)
{
	(void)pthread_once(&xml_once, xml_global_init_once);
}

/* Copy a libxml2 error into a buffer: "line N: message" without the newline. */
static void
xml_format_error(char *out, size_t size, const xmlError *e)
{
	const char *msg = e->message != NULL ? e->message : "error";
	size_t n;

	if (e->file != NULL && e->line > 0)
		(void)snprintf(out, size, "%s:%d: %s", e->file, e->line, msg);
	else if (e->line > 0)
		(void)snprintf(out, size, "line %d: %s", e->line, msg);
	else
		(void)snprintf(out, size, "%s", msg);
	n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == '\r'))
		out[--n] = '\0';
}

/* Structured error handler of our parser contexts: keep the first error. */
static void
xml_on_error(void *user, xmlErrorPtr e)
{
	xmlParserCtxtPtr ctxt = user;
	struct xml_state *st;

	if (ctxt == NULL || e == NULL || e->level < XML_ERR_ERROR)
		return;
	st = ctxt->_private;
	if (st == NULL)
		return;
	/* a namespace name that is not a valid URI (a line break inside it,
	 * seen in recorded messages) is tolerated; other namespace errors
	 * (undefined prefix, bad declaration) refuse the document */
	if (e->domain == XML_FROM_NAMESPACE && (e->code == XML_WAR_NS_URI ||
	    e->code == XML_WAR_NS_URI_RELATIVE))
		return;
	if (e->domain == XML_FROM_NAMESPACE)
		st->ns_error = 1;
	if (st->first[0] == '\0')
		xml_format_error(st->first, sizeof(st->first), e);
}

/* Any DOCTYPE (internal or external subset): refuse and stop at once. */
static void
xml_on_dtd(void *user, const xmlChar *name, const xmlChar *ext_id,
    const xmlChar *sys_id)
{
	xmlParserCtxtPtr ctxt = user;
	struct xml_state *st = ctxt->_private;

	(void)name;
	(void)ext_id;
	(void)sys_id;
	st->dtd = 1;
	xmlStopParser(ctxt);
}

/* An entity declaration can only appear in a DTD: refuse and stop. */
static void
xml_on_entity(void *user, const xmlChar *name, int type,
    const xmlChar *public_id, const xmlChar *system_id, xmlChar *content)
{
	xmlParserCtxtPtr ctxt = user;
	struct xml_state *st = ctxt->_private;

	(void)name;
	(void)type;
	(void)public_id;
	(void)system_id;
	(void)content;
	st->dtd = 1;
	xmlStopParser(ctxt);
}

/* Is any of the nb (localname, prefix, ...) tuples' name over XML_NAME_MAX? */
static int
xml_names_too_long(const xmlChar **v, int nb, int stride)
{
	int i;

	for (i = 0; i < nb; i++)
		if (v[i * stride] != NULL &&
		    xmlStrlen(v[i * stride]) > XML_NAME_MAX)
			return 1;
	return 0;
}

/*
 * Element start: enforce depth, attributes per element, total nodes and
 * name length while parsing, so a hostile document is stopped early, then
 * build the tree as libxml2's SAX2 handler does.
 */
static void
xml_on_start(void *user, const xmlChar *localname, const xmlChar *prefix,
    const xmlChar *uri, int nb_ns, const xmlChar **ns, int nb_attrs,
    int nb_defaulted, const xmlChar **attrs)
{
	xmlParserCtxtPtr ctxt = user;
	struct xml_state *st = ctxt->_private;
	size_t n_attrs = (size_t)nb_attrs + (size_t)nb_ns;

	st->depth++;
	st->nodes += 1 + n_attrs;
	if (st->depth > st->lim->max_depth ||
	    n_attrs > st->lim->max_attributes ||
	    st->nodes > st->lim->max_nodes ||
	    xmlStrlen(localname) > XML_NAME_MAX ||
	    xml_names_too_long(attrs, nb_attrs, 5)) {
		st->complex = 1;
		(void)snprintf(st->first, sizeof(st->first),
		    "line %d: limit exceeded at depth %zu, %zu attributes, "
		    "%zu nodes", xmlSAX2GetLineNumber(ctxt), st->depth,
		    n_attrs, st->nodes);
		xmlStopParser(ctxt);
		return;
	}
	xmlSAX2StartElementNs(user, localname, prefix, uri, nb_ns, ns,
	    nb_attrs, nb_defaulted, attrs);
}

/* Element end: track depth and let SAX2 close the node. */
static void
xml_on_end(void *user, const xmlChar *localname, const xmlChar *prefix,
    const xmlChar *uri)
{
	xmlParserCtxtPtr ctxt = user;
	struct xml_state *st = ctxt->_private;

	if (st->depth > 0)
		st->depth--;
	xmlSAX2EndElementNs(user, localname, prefix, uri);
}

/* Install our options, limits and handlers on a fresh parser context. */
static void
xml_ctxt_setup(xmlParserCtxtPtr ctxt, struct xml_state *st)
{
	xmlSAXHandlerPtr sax = ctxt->sax;

	/* NONET only: never NOENT, DTDLOAD, DTDATTR or HUGE */
	(void)xmlCtxtUseOptions(ctxt, XML_PARSE_NONET);
	ctxt->_private = st;
	ctxt->linenumbers = 1;
	ctxt->replaceEntities = 0;
	ctxt->loadsubset = 0;
	ctxt->validate = 0;
	sax->initialized = XML_SAX2_MAGIC;
	sax->serror = xml_on_error;
	sax->error = xml_silent_generic;
	sax->warning = xml_silent_generic;
	sax->fatalError = xml_silent_generic;
	sax->internalSubset = xml_on_dtd;
	sax->externalSubset = xml_on_dtd;
	sax->entityDecl = xml_on_entity;
	sax->startElementNs = xml_on_start;
	sax->endElementNs = xml_on_end;
	ctxt->vctxt.error = xml_silent_generic;
	ctxt->vctxt.warning = xml_silent_generic;
}

/* Skip past the terminator of a comment, PI or CDATA section; NULL if none. */
static const char *
xml_skip_to(const char *p, const char *end, const char *term)
{
	const char *hit = memmem(p, (size_t)(end - p), term, strlen(term));

	return hit != NULL ? hit + strlen(term) : NULL;
}

/*
 * Linear pre-scan: does any start tag carry more than max attributes?
 * libxml2 checks duplicate attributes pairwise (quadratic), so 100k
 * attributes on one element must be refused before it sees them.  Counts
 * '=' outside quotes between '<' and '>' (exact for well-formed input);
 * stops at a DOCTYPE, which the parser refuses anyway.
 */
static int
xml_too_many_attrs(const char *data, size_t len, size_t max)
{
	const char *p = data, *end = data + len;
	size_t n;
	char quote;

	while (p != NULL && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		if (end - p >= 4 && memcmp(p, "<!--", 4) == 0)
			p = xml_skip_to(p + 4, end, "-->");
		else if (end - p >= 9 && memcmp(p, "<![CDATA[", 9) == 0)
			p = xml_skip_to(p + 9, end, "]]>");
		else if (end - p >= 2 && p[1] == '?')
			p = xml_skip_to(p + 2, end, "?>");
		else if (end - p >= 2 && p[1] == '!')
			return 0;
		else {
			for (p++, n = 0, quote = 0; p < end; p++) {
				if (quote != 0 && *p == quote)
					quote = 0;
				else if (quote == 0 && (*p == '"' || *p == '\''))
					quote = *p;
				else if (quote == 0 && *p == '=' && ++n > max)
					return 1;
				else if (quote == 0 && (*p == '>' || *p == '<'))
					break;
			}
		}
	}
	return 0;
}

/*
 * Parse data with the hardened settings; on success *ret_doc is a document
 * the caller owns.  Failures are ERR_SOAP Sender 400.
 */
static int
xml_parse_raw(const char *data, size_t len, const struct xml_limits *lim,
    xmlDocPtr *ret_doc, struct err *err)
{
	struct xml_limits deflim;
	struct xml_state st;
	xmlParserCtxtPtr ctxt = NULL;
	xmlDocPtr doc = NULL;
	int rc = -1;

	xml_global_init();
	if (lim == NULL) {
		xml_limits_default(&deflim);
		lim = &deflim;
	}
	memset(&st, 0, sizeof(st));
	st.lim = lim;
	if (len == 0 || len > INT_MAX) {
		err_soap(err, ERR_SOAP_SENDER, 400, "XML document empty or too large");
		goto out;
	}
	if (xml_too_many_attrs(data, len, lim->max_attributes)) {
		err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
		err_detail(err, "more than %zu attributes on one element",
		    lim->max_attributes);
		goto out;
	}
	ctxt = xmlCreateMemoryParserCtxt(data, (int)len);
	if (ctxt == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not create XML parser");
		goto out;
	}
	xml_ctxt_setup(ctxt, &st);
	(void)xmlParseDocument(ctxt);
	doc = ctxt->myDoc;
	ctxt->myDoc = NULL;
	if (st.dtd)
		err_soap(err, ERR_SOAP_SENDER, 400, "DTD not allowed");
	else if (st.complex)
		err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
	else if (!ctxt->wellFormed || st.ns_error || doc == NULL ||
	    xmlDocGetRootElement(doc) == NULL)
		err_soap(err, ERR_SOAP_SENDER, 400, "XML not well-formed");
	else
		rc = 0;
	if (rc == -1 && st.first[0] != '\0')
		err_detail(err, "%s", st.first);
out:
	if (rc == 0)
		*ret_doc = doc;
	else
		xmlFreeDoc(doc);
	if (ctxt != NULL) {
		ctxt->_private = NULL;
		xmlFreeParserCtxt(ctxt);
	}
	return rc;
}

/* Arena cleanup adapter for xmlFreeDoc. */
static void
xml_doc_free(void *p)
{
	xmlFreeDoc(p);
}

/* Parse request XML; the document belongs to the arena. */
int
xml_parse(struct arena *a, const char *data, size_t len,
    const struct xml_limits *lim, xmlDocPtr *ret_doc, struct err *err)
{
	xmlDocPtr doc = NULL;

	if (xml_parse_raw(data, len, lim, &doc, err) == -1)
		return -1;
	if (arena_cleanup(a, xml_doc_free, doc) == -1)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	*ret_doc = doc;
	return 0;
}

/*
 * Read a whole (bounded) file into malloc'd memory, growing with the file:
 * a fixed XML_FILE_MAX buffer per read cost 16 MiB for a 2 KiB config
 * (found fuzzing conf_load, where it was most of the time per input).
 */
static char *
xml_read_file(const char *path, size_t *ret_len, struct err *err)
{
	FILE *f = fopen(path, "rb");
	struct buf b = { 0 };
	char chunk[16384];
	size_t n = sizeof(chunk);
	int rc = 0;

	if (f == NULL) {
		rc = err_set(err, ERR_IO, NULL, "could not open file \"%s\": %m",
		    path);
		goto out;
	}
	/* the first append makes an empty file "", not NULL */
	while (rc == 0 && n == sizeof(chunk)) {
		n = fread(chunk, 1, sizeof(chunk), f);
		if (n > XML_FILE_MAX - b.len)
			rc = err_set(err, ERR_IO, NULL, "could not read file "
			    "\"%s\": too large", path);
		else if (buf_append(&b, chunk, n) == -1)
			rc = err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	if (rc == 0 && ferror(f))
		rc = err_set(err, ERR_IO, NULL, "could not read file \"%s\"",
		    path);
	if (rc == 0)
		*ret_len = b.len;
out:
	if (f != NULL)
		(void)fclose(f);
	if (rc == -1)
		buf_free(&b);
	return b.data;
}

/* Parse a trusted local file (configuration); the caller frees the doc. */
int
xml_parse_file(const char *path, const struct xml_limits *lim,
    xmlDocPtr *ret_doc, struct err *err)
{
	size_t len = 0;
	char *data = xml_read_file(path, &len, err);
	xmlDocPtr doc = NULL;
	int rc = -1;

	if (data == NULL)
		goto out;
	if (xml_parse_raw(data, len, lim, &doc, err) == -1) {
		err_detail(err, "file \"%s\"", path);
		goto out;
	}
	doc->URL = xmlStrdup((const xmlChar *)path);
	*ret_doc = doc;
	rc = 0;
out:
	free(data);
	return rc;
}

/* Is node an element with this namespace URI (NULL = none) and local name? */
int
xml_is(const xmlNode *node, const char *ns, const char *name)
{
	const char *uri;

	if (node == NULL || node->type != XML_ELEMENT_NODE)
		return 0;
	if (name != NULL && strcmp((const char *)node->name, name) != 0)
		return 0;
	uri = node->ns != NULL ? (const char *)node->ns->href : NULL;
	if (ns == NULL)
		return name == NULL || uri == NULL;
	return uri != NULL && strcmp(uri, ns) == 0;
}

/* Does node match the (ns, name) filter of xml_child/xml_next? */
static int
xml_matches(const xmlNode *node, const char *ns, const char *name)
{
	if (node->type != XML_ELEMENT_NODE)
		return 0;
	if (name == NULL)
		return ns == NULL || xml_is(node, ns, NULL);
	return xml_is(node, ns, name);
}

/* First element child of parent matching ns/name. */
xmlNodePtr
xml_child(const xmlNode *parent, const char *ns, const char *name)
{
	xmlNodePtr n;

	if (parent == NULL)
		return NULL;
	for (n = parent->children; n != NULL; n = n->next)
		if (xml_matches(n, ns, name))
			return n;
	return NULL;
}

/* Next element sibling after node matching ns/name. */
xmlNodePtr
xml_next(const xmlNode *node, const char *ns, const char *name)
{
	xmlNodePtr n;

	if (node == NULL)
		return NULL;
	for (n = node->next; n != NULL; n = n->next)
		if (xml_matches(n, ns, name))
			return n;
	return NULL;
}

/* Number of element children of parent matching ns/name. */
size_t
xml_count(const xmlNode *parent, const char *ns, const char *name)
{
	size_t count = 0;
	xmlNodePtr n;

	for (n = xml_child(parent, ns, name); n != NULL;
	    n = xml_next(n, ns, name))
		count++;
	return count;
}

/* Is c XML white space (XML 1.0 production S)? */
static int
xml_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Arena copy of s with leading/trailing XML white space removed. */
static char *
xml_trim_dup(struct arena *a, const char *s)
{
	size_t len;

	while (xml_space(*s))
		s++;
	len = strlen(s);
	while (len > 0 && xml_space(s[len - 1]))
		len--;
	return arena_strndup(a, s, len);
}

/* Trimmed text content of node, copied into the arena. */
char *
xml_text(struct arena *a, const xmlNode *node)
{
	xmlChar *content;
	char *ret;

	if (node == NULL)
		return NULL;
	content = xmlNodeGetContent(node);
	if (content == NULL)
		return arena_strdup(a, "");
	ret = xml_trim_dup(a, (const char *)content);
	xmlFree(content);
	return ret;
}

/* Attribute value (ns NULL = no namespace) copied into the arena, or NULL. */
char *
xml_attr(struct arena *a, const xmlNode *node, const char *ns,
    const char *name)
{
	xmlChar *v;
	char *ret;

	if (node == NULL || node->type != XML_ELEMENT_NODE)
		return NULL;
	if (ns == NULL)
		v = xmlGetNoNsProp(node, (const xmlChar *)name);
	else
		v = xmlGetNsProp(node, (const xmlChar *)name,
		    (const xmlChar *)ns);
	if (v == NULL)
		return NULL;
	ret = arena_strdup(a, (const char *)v);
	xmlFree(v);
	return ret;
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
