/*
 * conf_peppol — a leg's <peppol> element (README "Peppol"): the switch for
 * the Peppol AS4 profile's receiving checks and the document types and
 * processes the leg accepts.
 */
#include "conf_int.h"

#include <stdlib.h>
#include <string.h>

#include "../xml/xml.h"

/*
 * Every child `name` of pe into the malloc'd array *ret of *ret_n: the
 * trimmed value and @scheme (default def_scheme).  The schema bounds the
 * count.
 */
static int
conf_peppol_ids(const struct conf_ctx *x, const xmlNode *pe, const char *name,
    const char *def_scheme, struct conf_peppol_id **ret, size_t *ret_n)
{
	size_t n = xml_count(pe, CONF_NS, name), i = 0;
	xmlNodePtr e;

	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (*ret == NULL)
		return conf_oom(x);
	*ret_n = n;     /* NULL entries until read: conf_peppol_free copes */
	for (e = xml_child(pe, CONF_NS, name); e != NULL && i < n;
	    e = xml_next(e, CONF_NS, name), i++) {
		struct conf_peppol_id *id = &(*ret)[i];

		if (conf_elem_text(x, e, &id->value) == -1 ||
		    conf_attr(x, e, "scheme", &id->scheme) == -1)
			return -1;
		if (id->scheme == NULL && (id->scheme = strdup(def_scheme)) == NULL)
			return conf_oom(x);
	}
	return 0;
}

/* A leg's <peppol> (node: the <pmode>), absent: leg->peppol stays NULL. */
int
conf_peppol_parse(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	xmlNodePtr pe = xml_child(node, CONF_NS, "peppol");
	struct conf_peppol *p;

	if (pe == NULL)
		return 0;
	if ((p = leg->peppol = calloc(1, sizeof(*p))) == NULL)
		return conf_oom(x);
	if (conf_peppol_ids(x, pe, "documentType", CONF_PEPPOL_DOCTYPE_SCHEME,
	    &p->doc_types, &p->n_doc_types) == -1 ||
	    conf_peppol_ids(x, pe, "process", CONF_PEPPOL_PROCESS_SCHEME,
	    &p->processes, &p->n_processes) == -1)
		return -1;
	return 0;
}

/* Free an array of n identifiers and the array. */
static void
conf_peppol_ids_free(struct conf_peppol_id *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].scheme);
		free(v[i].value);
	}
	free(v);
}

/* Free p and what it owns; accepts NULL. */
void
conf_peppol_free(struct conf_peppol *p)
{
	if (p == NULL)
		return;
	conf_peppol_ids_free(p->doc_types, p->n_doc_types);
	conf_peppol_ids_free(p->processes, p->n_processes);
	free(p);
}
