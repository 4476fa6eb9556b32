/*
 * xml — the one place where libxml2 parse options, limits and error handlers
 * are set (DESIGN.md "Security rules"), plus namespaces and small DOM helpers.
 *
 * Parsing: XML_PARSE_NONET, no DTD of any kind (a DOCTYPE stops the parser),
 * no entity substitution, never XML_PARSE_HUGE; caps on the document's
 * bytes, depth, attributes per element, namespace declarations in scope,
 * nodes of every kind and (for request documents) libxml2's memory.  Only
 * UTF-8 and UTF-16 are accepted (SOAP 1.2 Part 1, 5); UTF-16 is converted
 * to UTF-8 first and libxml2 always decodes UTF-8, so every limit is
 * checked on the very text the parser reads.  The external entity loader
 * is replaced once by one that serves only the schemas embedded in the
 * binary and refuses everything else, so no file or network access can
 * come from XML processing.
 * A namespace name that is not a valid URI is tolerated (recorded senders
 * break long namespace names across lines); other namespace errors refuse.
 */
#ifndef AS4GW_XML_H
#define AS4GW_XML_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../util/arena.h"
#include "../util/err.h"

#define NS_SOAP12 "http://www.w3.org/2003/05/soap-envelope"
#define NS_SOAP11 "http://schemas.xmlsoap.org/soap/envelope/"
#define NS_EB "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
#define NS_EBBP "http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0"
#define NS_WSSE "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
#define NS_WSU "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
#define NS_DS "http://www.w3.org/2000/09/xmldsig#"
#define NS_XENC "http://www.w3.org/2001/04/xmlenc#"
#define NS_XENC11 "http://www.w3.org/2009/xmlenc11#"
#define NS_EBINT "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/multihop/200902/"

/* The default cap on a document's bytes (maxEnvelopeBytes). */
#define XML_MAX_BYTES_DEFAULT (4u * 1024u * 1024u)

struct xml_limits {
	size_t max_depth;         /* element nesting; default 64 */
	/* attributes + namespace declarations on one element, and namespace
	 * declarations in scope at any element; default 64 */
	size_t max_attributes;
	/* nodes of every kind: elements, attributes, namespace declarations,
	 * text, CDATA sections, comments, PIs; default 100000 */
	size_t max_nodes;
	/* the document's bytes as received; default XML_MAX_BYTES_DEFAULT;
	 * 0 = no cap (over it: ERR_SOAP Sender 413) */
	size_t max_bytes;
	/* bytes libxml2 may hold during the parse, counted per thread
	 * (xml_parse); 0 = not counted (the default) */
	size_t max_memory;
	/* 0 (default, SOAP envelopes): UTF-8 and UTF-16 only.  1 (XML
	 * attachments): also a declared encoding whose markup bytes are
	 * always ASCII (ISO-8859-n, windows-125n, Shift_JIS, EUC-JP, GBK,
	 * Big5, ...: xml_int.h), which libxml2 decodes; never UTF-7,
	 * ISO-2022-x or EBCDIC */
	int legacy_encodings;
};

/* The defaults named above. */
void xml_limits_default(struct xml_limits *lim);

/*
 * Once per process, before any thread parses: install the allocation hooks
 * that count a parse's memory, the refusing entity loader, initialise
 * libxml2.  Idempotent.
 */
void xml_global_init(void);

/*
 * Parse a complete document from memory under the hardening above.  The
 * document is owned by the arena (freed by arena_free).  Failures are
 * ERR_SOAP Sender with the libxml2 message in err.detail: 413 "XML
 * document too large" over max_bytes; 400 otherwise, with msg "DTD not
 * allowed" for a DOCTYPE, "XML too complex" past a limit, "XML encoding
 * must be UTF-8 or UTF-16" / "XML encoding inconsistent" for an encoding
 * declaration naming another encoding or not matching the bytes, "XML not
 * well-formed" (also for malformed UTF-8 or UTF-16).
 * With lim->max_memory set, libxml2's allocations for this parse are
 * counted (the UTF-16 conversion included) and the parse stops past the
 * limit ("XML too complex"); the memory the document keeps is then charged
 * to the arena (arena_charge), so it counts against the arena's budget.
 */
int xml_parse(struct arena *a, const char *data, size_t len,
    const struct xml_limits *lim, xmlDocPtr *ret_doc, struct err *err);

/*
 * RFC 7303 3.2, SOAP 1.2 Part 2, 7.1.4: the charset parameter of the
 * document's MIME type (NULL = none) must name UTF-8 or UTF-16 (-LE, -BE)
 * and agree with the document's first bytes; else ERR_SOAP Sender 400
 * ("XML encoding must be UTF-8 or UTF-16" / "XML encoding inconsistent").
 */
int xml_charset_check(const char *charset, const char *data, size_t len,
    struct err *err);

/* xml_parse for trusted local files (configuration): no byte cap (a file is
 * read up to 16 MiB), memory not counted; the caller frees the doc. */
int xml_parse_file(const char *path, const struct xml_limits *lim,
    xmlDocPtr *ret_doc, struct err *err);

/* Is node an element with this namespace URI (NULL = no namespace) and
 * local name (NULL = any name)? */
int xml_is(const xmlNode *node, const char *ns, const char *name);

/* First element child of parent matching ns/name (ns NULL = no namespace,
 * except that ns NULL with name NULL matches any element). */
xmlNodePtr xml_child(const xmlNode *parent, const char *ns, const char *name);

/* Next element sibling after node matching ns/name (NULL name = any). */
xmlNodePtr xml_next(const xmlNode *node, const char *ns, const char *name);

/* Number of element children matching ns/name. */
size_t xml_count(const xmlNode *parent, const char *ns, const char *name);

/* Text content, copied into the arena, leading/trailing whitespace trimmed;
 * "" for an empty element; NULL only on allocation failure or node == NULL. */
char *xml_text(struct arena *a, const xmlNode *node);

/* Attribute value (ns NULL = no namespace) copied into the arena; NULL if absent. */
char *xml_attr(struct arena *a, const xmlNode *node, const char *ns,
    const char *name);

/* Schemas compiled into the binary (generated from the schemas folder). */
struct xml_embedded {
	const char *name;          /* file name, e.g. "ebms-header-3_0-200704.xsd" */
	const unsigned char *data;
	size_t len;
};
extern const struct xml_embedded xml_embedded_files[];
extern const size_t xml_embedded_count;

/* The embedded file with this base name, or NULL. */
const struct xml_embedded *xml_embedded_find(const char *name);

/*
 * Compile an embedded XSD (its imports resolve only to other embedded files).
 * xsd:imports without schemaLocation of the xml, xlink and xmldsig
 * namespaces are served by small built-in schemas (xml:lang etc.; the
 * xmldsig one is lax), since libxml2 cannot resolve them otherwise.
 * The caller frees with xmlSchemaFree.  Thread-safe validation needs one
 * xmlSchemaValidCtxt per thread: see xml_validate().
 */
int xml_schema_load(const char *name, void **ret_schema, struct err *err);

/* Validate one element (and its subtree) against a loaded schema.  0 valid,
 * -1 invalid with the first libxml2 complaint in err.detail, err kind set by
 * the caller's choice of ebms_code (ERR_EBMS with that code). */
int xml_validate(void *schema, xmlNodePtr elem, const char *ebms_code,
    struct err *err);

#endif
