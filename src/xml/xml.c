/*
 * xml — hardened libxml2 parsing and small DOM helpers.  See xml.h for the
 * rules enforced here; encodings are decided in xml_enc.c, allocations
 * counted in xml_mem.c, the embedded schemas served from xml_schema.c.
 *
 * Every parse installs its own structured error handler on its own
 * context, so no libxml2 message ever reaches stderr, whichever thread runs
 * it (libxml2 error globals are per thread).
 *
 * libxml2 reads the document through a read callback (xml_read), never
 * from memory in one piece: after a fatal error libxml2 2.9 goes on
 * parsing with the SAX callbacks (our limits) switched off, and
 * xmlStopParser() from an error handler frees the input under its feet.
 * A parse is ended instead by setting `stop` (xml_stop): the next read
 * says end of input, so at most the chunk already read is parsed after
 * any error or limit.
 */
#include "xml.h"
#include "xml_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlIO.h>
#include <libxml/xmlerror.h>

#include "../util/buf.h"

/* Longest element or attribute name accepted (libxml2 itself allows 50000). */
#define XML_NAME_MAX 1024
/* Largest configuration file read by xml_parse_file. */
#define XML_FILE_MAX (16u * 1024u * 1024u)
/* Bytes handed to libxml2 per read: what it may parse after a stop. */
#define XML_READ_CHUNK 4096

/* Per-parse state, reached from SAX callbacks through ctxt->_private and
 * from the read callback as its context. */
struct xml_state {
	const struct xml_limits *lim;
	struct xml_mem *mem;  /* libxml2's allocations, or NULL: not counted */
	const char *in;       /* input not yet read by libxml2 */
	size_t in_left;
	size_t depth, nodes;
	int native;       /* libxml2 decodes a legacy encoding (xml_enc.c) */
	int stop;         /* end of input at the next read */
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
	lim->max_bytes = XML_MAX_BYTES_DEFAULT;
	lim->max_memory = 0;
	lim->legacy_encodings = 0;
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

/* pthread_once body of xml_global_init. */
static void
xml_global_init_once(void)
{
	xml_mem_install();
	xmlInitParser();
	xmlSetExternalEntityLoader(xml_schema_loader);
	xmlLineNumbersDefault(1);
	xmlThrDefLineNumbersDefaultValue(1);
	/* this thread, and the defaults every later thread starts with */
	xmlSetGenericErrorFunc(NULL, xml_silent_generic);
	xmlThrDefSetGenericErrorFunc(NULL, xml_silent_generic);
	xmlSetStructuredErrorFunc(NULL, xml_silent_structured);
	xmlThrDefSetStructuredErrorFunc(NULL, xml_silent_structured);
}

/* Once per process: allocation hooks, libxml2 init, refusing loader,
 * silent defaults. */
void
xml_global_init(void)
{
	(void)pthread_once(&xml_once, xml_global_init_once);
}

/* Copy a libxml2 error into a buffer: "line N: message" without the newline. */
void
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

/* End the parse: no more tree building, and end of input at libxml2's next
 * read (see the top of this file). */
static void
xml_stop(xmlParserCtxtPtr ctxt, struct xml_state *st)
{
	st->stop = 1;
	ctxt->disableSAX = 1;
}

/* libxml2's read callback: the next chunk of the document, or end of input
 * once the parse is stopped or over its memory budget. */
static int
xml_read(void *ctx, char *buf, int len)
{
	struct xml_state *st = ctx;
	size_t n;

	if (st->stop || (st->mem != NULL && st->mem->over) || len <= 0)
		return 0;
	n = st->in_left < (size_t)len ? st->in_left : (size_t)len;
	if (n > XML_READ_CHUNK)
		n = XML_READ_CHUNK;
	memcpy(buf, st->in, n);
	st->in += n;
	st->in_left -= n;
	return (int)n;
}

/* libxml2's close callback: the input belongs to the caller. */
static int
xml_read_close(void *ctx)
{
	(void)ctx;
	return 0;
}

/*
 * Structured error handler of our parser contexts: keep the first error;
 * stop at a fatal one (the document is refused anyway) and at a namespace
 * error that refuses the document.
 */
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
	if (e->level == XML_ERR_FATAL || st->ns_error)
		xml_stop(ctxt, st);
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

/* A limit was exceeded: say which where the log will show it, and stop. */
static void
xml_too_complex(xmlParserCtxtPtr ctxt, struct xml_state *st, size_t n_attrs)
{
	if (!st->complex)
		(void)snprintf(st->first, sizeof(st->first),
		    "line %d: limit exceeded at depth %zu, %zu attributes, "
		    "%zu nodes, %d namespaces in scope, %zu bytes of parser "
		    "memory", xmlSAX2GetLineNumber(ctxt), st->depth, n_attrs,
		    st->nodes, ctxt->nsNr / 2,
		    st->mem != NULL ? st->mem->used : 0);
	st->complex = 1;
	xml_stop(ctxt, st);
}

/*
 * Element start: enforce depth, attributes per element, namespace
 * declarations in scope (each prefix lookup of libxml2 scans them all),
 * total nodes, parser memory and name length while parsing, so a hostile
 * document is stopped early, then build the tree as libxml2's SAX2
 * handler does.
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
	    (size_t)ctxt->nsNr / 2 > st->lim->max_attributes ||
	    st->nodes > st->lim->max_nodes ||
	    (st->mem != NULL && st->mem->over) ||
	    xmlStrlen(localname) > XML_NAME_MAX ||
	    xml_names_too_long(attrs, nb_attrs, 5)) {
		xml_too_complex(ctxt, st, n_attrs);
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

/* Where libxml2's SAX2 handlers add a node, and its last child so far. */
struct xml_snap {
	xmlNodePtr parent, last;
};

/* The node the next text, comment or PI is added to (the document itself
 * outside the root element). */
static struct xml_snap
xml_snap(xmlParserCtxtPtr ctxt)
{
	struct xml_snap s;

	s.parent = ctxt->node != NULL ? ctxt->node : (xmlNodePtr)ctxt->myDoc;
	s.last = s.parent != NULL ? s.parent->last : NULL;
	return s;
}

/*
 * After a SAX2 handler ran: count the node it added, if it added one (text
 * appended to the text node before it is no new node), and stop past the
 * node or memory limit.  Every node type counts: an element flood and a
 * flood of comments, PIs or text between empty elements cost the same.
 */
static void
xml_added(xmlParserCtxtPtr ctxt, struct xml_snap s)
{
	struct xml_state *st = ctxt->_private;

	if (s.parent != NULL && s.parent->last != s.last)
		st->nodes++;
	if (st->nodes > st->lim->max_nodes ||
	    (st->mem != NULL && st->mem->over))
		xml_too_complex(ctxt, st, 0);
}

/* Character data and white space (XML 1.0 2.4, 2.10). */
static void
xml_on_text(void *user, const xmlChar *ch, int len)
{
	struct xml_snap s = xml_snap(user);

	xmlSAX2Characters(user, ch, len);
	xml_added(user, s);
}

/* A CDATA section (XML 1.0 2.7). */
static void
xml_on_cdata(void *user, const xmlChar *value, int len)
{
	struct xml_snap s = xml_snap(user);

	xmlSAX2CDataBlock(user, value, len);
	xml_added(user, s);
}

/* A comment (XML 1.0 2.5). */
static void
xml_on_comment(void *user, const xmlChar *value)
{
	struct xml_snap s = xml_snap(user);

	xmlSAX2Comment(user, value);
	xml_added(user, s);
}

/* A processing instruction (XML 1.0 2.6). */
static void
xml_on_pi(void *user, const xmlChar *target, const xmlChar *data)
{
	struct xml_snap s = xml_snap(user);

	xmlSAX2ProcessingInstruction(user, target, data);
	xml_added(user, s);
}

/* An entity reference node (only ever for an undeclared entity, refused). */
static void
xml_on_reference(void *user, const xmlChar *name)
{
	struct xml_snap s = xml_snap(user);

	xmlSAX2Reference(user, name);
	xml_added(user, s);
}

/* Install our options, limits and handlers on a fresh parser context. */
static void
xml_ctxt_setup(xmlParserCtxtPtr ctxt, struct xml_state *st)
{
	xmlSAXHandlerPtr sax = ctxt->sax;

	/* NONET, and UTF-8 whatever the declaration says (xml_enc.c checked
	 * it) unless it is a legacy encoding libxml2 must decode: never
	 * NOENT, DTDLOAD, DTDATTR or HUGE */
	(void)xmlCtxtUseOptions(ctxt, XML_PARSE_NONET |
	    (st->native ? 0 : XML_PARSE_IGNORE_ENC));
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
	sax->characters = xml_on_text;
	sax->ignorableWhitespace = xml_on_text;
	sax->cdataBlock = xml_on_cdata;
	sax->comment = xml_on_comment;
	sax->processingInstruction = xml_on_pi;
	sax->reference = xml_on_reference;
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
 * libxml2 checks duplicate attributes pairwise (quadratic) before any
 * callback sees the tag, so 100k attributes on one element must be refused
 * before it parses them.  Counts '=' outside quotes between '<' and '>';
 * stops at a DOCTYPE, which the parser refuses anyway.  It runs on the
 * text libxml2 reads (xml_enc.c), and is exact for well-formed
 * input: the two can disagree only after a well-formedness error, where
 * the parse stops within XML_READ_CHUNK bytes (xml_on_error).
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
 * Refuse what must not reach libxml2: an empty or oversized document,
 * another encoding, more attributes on one element than allowed.  On
 * success *ret is the text to parse (xml_enc_text; free ret->owned).
 */
static int
xml_pre(const char *data, size_t len, const struct xml_limits *lim,
    struct xml_text *ret, struct err *err)
{
	memset(ret, 0, sizeof(*ret));
	if (len == 0 || len > INT_MAX / 2)
		return err_soap(err, ERR_SOAP_SENDER, 400,
		    "XML document empty or too large");
	if (lim->max_bytes != 0 && len > lim->max_bytes) {
		err_soap(err, ERR_SOAP_SENDER, 413, "XML document too large");
		err_detail(err, "%zu bytes, more than %zu", len, lim->max_bytes);
		return -1;
	}
	if (xml_enc_text(data, len, lim->legacy_encodings, ret, err) == -1)
		return -1;
	if (xml_too_many_attrs(ret->p, ret->len, lim->max_attributes)) {
		xmlFree(ret->owned);
		ret->owned = NULL;
		err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
		err_detail(err, "more than %zu attributes on one element",
		    lim->max_attributes);
		return -1;
	}
	return 0;
}

/* The verdict on a finished parse; 0 keep the document. */
static int
xml_verdict(const xmlParserCtxt *ctxt, const struct xml_state *st,
    xmlDocPtr doc, struct err *err)
{
	if (st->dtd)
		err_soap(err, ERR_SOAP_SENDER, 400, "DTD not allowed");
	else if (st->complex || (st->mem != NULL && st->mem->over))
		err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
	else if (!ctxt->wellFormed || st->ns_error || st->stop ||
	    doc == NULL || xmlDocGetRootElement(doc) == NULL)
		err_soap(err, ERR_SOAP_SENDER, 400, "XML not well-formed");
	else
		return 0;
	if (st->first[0] != '\0')
		err_detail(err, "%s", st->first);
	else if (st->mem != NULL && st->mem->over)
		err_detail(err, "parser memory over %zu bytes", st->mem->limit);
	return -1;
}

/* Run libxml2 over st's input; the document (caller frees) or NULL. */
static xmlDocPtr
xml_run(struct xml_state *st, struct err *err)
{
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc;

	ctxt = xmlCreateIOParserCtxt(NULL, NULL, xml_read, xml_read_close, st,
	    st->native ? XML_CHAR_ENCODING_NONE : XML_CHAR_ENCODING_UTF8);
	if (ctxt == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "could not create XML parser");
		return NULL;
	}
	xml_ctxt_setup(ctxt, st);
	(void)xmlParseDocument(ctxt);
	doc = ctxt->myDoc;
	ctxt->myDoc = NULL;
	if (xml_verdict(ctxt, st, doc, err) == -1) {
		xmlFreeDoc(doc);
		doc = NULL;
	}
	ctxt->_private = NULL;
	xmlFreeParserCtxt(ctxt);
	return doc;
}

/*
 * Parse data with the hardened settings; on success *ret_doc is a document
 * the caller owns.  With mem (and lim->max_memory), libxml2's allocations
 * are counted into it from the first byte converted to the last freed.
 */
static int
xml_parse_raw(const char *data, size_t len, const struct xml_limits *lim,
    struct xml_mem *mem, xmlDocPtr *ret_doc, struct err *err)
{
	struct xml_limits deflim;
	struct xml_state st;
	struct xml_text text = { 0 };
	xmlDocPtr doc = NULL;

	xml_global_init();
	if (lim == NULL) {
		xml_limits_default(&deflim);
		lim = &deflim;
	}
	memset(&st, 0, sizeof(st));
	st.lim = lim;
	if (mem != NULL && lim->max_memory != 0) {
		st.mem = mem;
		xml_mem_begin(mem, lim->max_memory);
	}
	if (xml_pre(data, len, lim, &text, err) == 0) {
		st.in = text.p;
		st.in_left = text.len;
		st.native = text.native;
		if (st.mem != NULL && st.mem->over)
			err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
		else
			doc = xml_run(&st, err);
	}
	xmlFree(text.owned);
	if (st.mem != NULL)
		xml_mem_end();
	if (doc == NULL)
		return -1;
	*ret_doc = doc;
	return 0;
}

/* Arena cleanup adapter for xmlFreeDoc. */
static void
xml_doc_free(void *p)
{
	xmlFreeDoc(p);
}

/* Parse request XML; the document belongs to the arena (and, when counted,
 * so does the memory it holds). */
int
xml_parse(struct arena *a, const char *data, size_t len,
    const struct xml_limits *lim, xmlDocPtr *ret_doc, struct err *err)
{
	struct xml_mem mem = { 0 };
	xmlDocPtr doc = NULL;

	if (xml_parse_raw(data, len, lim, &mem, &doc, err) == -1)
		return -1;
	if (arena_charge(a, mem.used) == -1) {
		xmlFreeDoc(doc);
		err_soap(err, ERR_SOAP_SENDER, 400, "XML too complex");
		err_detail(err, "the document holds %zu bytes, more than the "
		    "request's memory budget left", mem.used);
		return -1;
	}
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
	struct xml_limits flim;
	size_t len = 0;
	char *data = xml_read_file(path, &len, err);
	xmlDocPtr doc = NULL;
	int rc = -1;

	if (data == NULL)
		goto out;
	/* a trusted file is bounded by XML_FILE_MAX, its memory by nothing */
	if (lim != NULL)
		flim = *lim;
	else
		xml_limits_default(&flim);
	flim.max_bytes = 0;
	flim.max_memory = 0;
	if (xml_parse_raw(data, len, &flim, NULL, &doc, err) == -1) {
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
