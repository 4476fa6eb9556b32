/*
 * conf_network — a leg's <security><network> (issue 12, README
 * "Networks"): the network's anchors (and CRLs), the issuers and
 * certificate policies a member's certificate may have, and the party
 * rule that reads the member's PartyId in its certificate.  Certificates
 * and names are not parsed here: the gateway builds the trust (src/trust)
 * and refuses what it cannot read at start.
 */
#include "conf_int.h"

#include <stdlib.h>
#include <string.h>

#include "../xml/xml.h"

/* The party rule's sources, as the schema spells them. */
static const struct {
	const char *name;
	enum conf_party_source source;
} conf_network_sources[] = {
	{ "cn", CONF_PARTY_CN }, { "subject", CONF_PARTY_SUBJECT },
	{ "san-uri", CONF_PARTY_SAN_URI }, { "san-dns", CONF_PARTY_SAN_DNS },
	{ "san-email", CONF_PARTY_SAN_EMAIL },
};

/* Every child `name` of parent as text into *ret / *ret_n (may be none). */
static int
conf_network_texts(const struct conf_ctx *x, const xmlNode *parent,
    const char *name, char ***ret, size_t *ret_n)
{
	size_t n = xml_count(parent, CONF_NS, name), i = 0;
	xmlNodePtr e;

	if (n == 0)
		return 0;
	*ret = calloc(n, sizeof(**ret));
	if (*ret == NULL)
		return conf_oom(x);
	*ret_n = n;
	for (e = xml_child(parent, CONF_NS, name); e != NULL && i < n;
	    e = xml_next(e, CONF_NS, name), i++)
		if (conf_elem_text(x, e, &(*ret)[i]) == -1)
			return -1;
	return 0;
}

/* <party type="..." source="cn|subject|san-*" attribute="..."/>. */
static int
conf_network_party(const struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *p, struct conf_network *n)
{
	const char *src = conf_attr_get(x, p, "source");
	size_t i;

	if (conf_attr(x, p, "type", &n->party_type) == -1 ||
	    conf_attr(x, p, "attribute", &n->party_attribute) == -1)
		return -1;
	n->party_source = CONF_PARTY_CN;
	for (i = 0; src != NULL && i < sizeof(conf_network_sources) /
	    sizeof(conf_network_sources[0]); i++)
		if (strcmp(src, conf_network_sources[i].name) == 0)
			break;
	if (src != NULL && i == sizeof(conf_network_sources) /
	    sizeof(conf_network_sources[0]))
		return conf_fail(x, p, "pmode \"%s\": network/party/@source "
		    "\"%s\" is not cn, subject, san-uri, san-dns or san-email",
		    leg->id, src);
	if (src != NULL)
		n->party_source = conf_network_sources[i].source;
	if ((n->party_source == CONF_PARTY_SUBJECT) !=
	    (n->party_attribute != NULL))
		return conf_fail(x, p, "pmode \"%s\": network/party/@attribute "
		    "goes with source=\"subject\", and only there", leg->id);
	return 0;
}

/* Read a leg's <network>; see conf_int.h. */
int
conf_network_parse(struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *net, struct conf_network **ret)
{
	struct conf_network *n = calloc(1, sizeof(*n));
	xmlNodePtr party = xml_child(net, CONF_NS, "party");

	if (n == NULL)
		return conf_oom(x);
	*ret = n;       /* the leg owns it from here: conf_leg_free */
	if (conf_leg_files(x, leg, net, "anchor", &n->anchors,
	    &n->n_anchors) == -1)
		return -1;
	if (xml_count(net, CONF_NS, "crl") > 0 && conf_leg_files(x, leg, net,
	    "crl", &n->crls, &n->n_crls) == -1)
		return -1;
	if (conf_network_texts(x, net, "issuer", &n->issuers,
	    &n->n_issuers) == -1 ||
	    conf_network_texts(x, net, "policy", &n->policies,
	    &n->n_policies) == -1)
		return -1;
	if (party == NULL)
		return conf_fail(x, net, "pmode \"%s\": network without "
		    "<party>: say how a member's PartyId is read in its "
		    "certificate", leg->id);
	return conf_network_party(x, leg, party, n);
}

/* Free a network; accepts NULL. */
void
conf_network_free(struct conf_network *n)
{
	if (n == NULL)
		return;
	conf_leg_strv_free(n->anchors, n->n_anchors);
	conf_leg_strv_free(n->crls, n->n_crls);
	conf_leg_strv_free(n->issuers, n->n_issuers);
	conf_leg_strv_free(n->policies, n->n_policies);
	free(n->party_type);
	free(n->party_attribute);
	free(n);
}
