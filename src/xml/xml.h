/*
 * xml — the one place where libxml2 parse options, limits and error handlers
 * are set (DESIGN.md "Security rules"), plus namespaces and small DOM helpers.
 *
 * Parsing: XML_PARSE_NONET, no DTD of any kind (a DOCTYPE stops the parser),
 * no entity substitution, never XML_PARSE_HUGE; caps on depth, attributes per
 * element and total nodes.  The external entity loader is replaced once by one
 * that serves only the schemas embedded in the binary and refuses everything
 * else, so no file or network access can come from XML processing.
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

struct xml_limits {
	size_t max_depth;         /* element nesting; default 64 */
	size_t max_attributes;    /* per element; default 64 */
	size_t max_nodes;         /* elements + attributes in the document; default 100000 */
};

/* The defaults named above. */
void xml_limits_default(struct xml_limits *lim);

/*
 * Once per process, before any thread parses: install the refusing entity
 * loader, initialise libxml2.  Idempotent.
 */
void xml_global_init(void);

/*
 * Parse a complete document from memory under the hardening above.  The
 * document is owned by the arena (freed by arena_free).  Failures are
 * ERR_SOAP (Sender, HTTP 400) with the libxml2 message in err.detail; a
 * DOCTYPE is refused with msg "DTD not allowed".
 */
int xml_parse(struct arena *a, const char *data, size_t len,
    const struct xml_limits *lim, xmlDocPtr *ret_doc, struct err *err);

/* Same, for trusted local files (configuration); the caller frees the doc. */
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
