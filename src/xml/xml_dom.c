/*
 * xml_dom — small DOM helpers over libxml2 trees: element tests, child and
 * sibling lookup by namespace and name, trimmed text and attribute values
 * copied into the request arena.
 */
#include "xml.h"

#include <string.h>

#include <libxml/tree.h>

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
