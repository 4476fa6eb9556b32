/*
 * conf_leg — the P-Mode legs of the configuration: each <pmode> read into a
 * struct pmode_leg (collaboration info, parties, security and receipt
 * policy, retention); the checks across legs that the schema cannot
 * express are conf_route.c's.  The <security> of a leg names files (signer
 * certificates, trust anchors, decryption pairs) that are resolved here and
 * checked for readability at the end of the load; certificates are not
 * parsed here (the gateway loads them through wss).  conf.c drives the
 * load; see conf_int.h.
 */
#include "conf_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../xml/xml.h"

/* ebMS3 Core 5.2.2.8: an untyped Service must be a URI (a PartyId need not
 * be, 5.2.2.4); a minimal check: scheme ":" something. */
static int
conf_leg_is_uri(const char *s)
{
	size_t i = 0;

	if (!isalpha((unsigned char)s[0]))
		return 0;
	while (isalnum((unsigned char)s[i]) || s[i] == '+' || s[i] == '-' ||
	    s[i] == '.')
		i++;
	return s[i] == ':' && s[i + 1] != '\0';
}

/* NULL-safe string equality (NULL equals only NULL). */
static int
conf_leg_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* 1 when the first n of ids hold the PartyId id (type included), else 0. */
static int
conf_leg_ids_have(const struct conf_party_id *ids, size_t n,
    const struct conf_party_id *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (conf_leg_eq(ids[i].value, id->value) &&
		    conf_leg_eq(ids[i].type, id->type))
			return 1;
	return 0;
}

/* The canonical name of a PartyId; see conf.h. */
char *
conf_party_id_name(struct arena *a, const char *type, const char *value)
{
	if (type != NULL)
		return arena_sprintf(a, "%s:%s", type, value);
	return arena_sprintf(a, "%s", value);
}

/* The sending party's canonical name; see conf.h. */
const char *
conf_from_name(struct arena *a, const struct pmode_leg *leg,
    const char *type, const char *value)
{
	if (leg->from.name != NULL || value == NULL)
		return leg->from.name;
	return conf_party_id_name(a, type, value);
}

/* The canonical name of p: "type:value" of its first PartyId, or the value
 * (the form the inbox, the log and the hand-off record; conf.h). */
static int
conf_leg_party_name(const struct conf_ctx *x, struct conf_party *p)
{
	const struct conf_party_id *id = &p->ids[0];
	size_t n;

	if (p->n_ids == 0 || id->value == NULL)
		return conf_fail_line(x, -1, "partyId without a value");
	n = strlen(id->value) + (id->type != NULL ? strlen(id->type) + 1 : 0) +
	    1;
	p->name = malloc(n);
	if (p->name == NULL)
		return conf_oom(x);
	if (id->type != NULL)
		(void)snprintf(p->name, n, "%s:%s", id->type, id->value);
	else
		(void)snprintf(p->name, n, "%s", id->value);
	return 0;
}

/*
 * <from> / <to>: the party's partyIds (ebMS3 Core 5.2.2.4: one party may
 * carry several, each with its type; the schema bounds the count), no
 * PartyId twice, and an optional role.
 */
static int
conf_leg_party(const struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *n, struct conf_party *p)
{
	size_t count;
	xmlNodePtr id;

	if (n == NULL)
		return conf_fail_line(x, -1, "pmode \"%s\": from/to missing",
		    leg->id);
	count = xml_count(n, CONF_NS, "partyId");
	if (conf_attr(x, n, "role", &p->role) == -1)
		return -1;
	if (count == 0)         /* any network member: conf_leg_open */
		return 0;
	p->ids = calloc(count, sizeof(*p->ids));
	if (p->ids == NULL)
		return conf_oom(x);
	for (id = xml_child(n, CONF_NS, "partyId"); id != NULL &&
	    p->n_ids < count; id = xml_next(id, CONF_NS, "partyId")) {
		struct conf_party_id *pi = &p->ids[p->n_ids++];

		if (conf_elem_text(x, id, &pi->value) == -1 ||
		    conf_attr(x, id, "type", &pi->type) == -1)
			return -1;
		if (conf_leg_ids_have(p->ids, p->n_ids - 1, pi))
			return conf_fail(x, id, "pmode \"%s\": %s: partyId "
			    "\"%s\" listed twice", leg->id,
			    (const char *)n->name, pi->value);
	}
	return conf_leg_party_name(x, p);
}

/* Policy attribute `name` of n (absent: keep *ret, the default). */
static int
conf_leg_policy_attr(const struct conf_ctx *x, const xmlNode *n,
    const char *name, enum conf_policy *ret)
{
	const char *s = conf_attr_get(x, n, name);

	if (s == NULL)
		return 0;
	if (strcmp(s, "required") == 0)
		*ret = CONF_REQUIRED;
	else if (strcmp(s, "optional") == 0)
		*ret = CONF_OPTIONAL;
	else if (strcmp(s, "never") == 0)
		*ret = CONF_NEVER;
	else
		return conf_fail(x, n, "security/@%s: \"%s\" is not required, "
		    "optional or never", name, s);
	return 0;
}

/* security/@revocation: require | prefer | off (default); only on a leg
 * that verifies signatures (issue 12 item 2). */
static int
conf_leg_revocation(const struct conf_ctx *x, const xmlNode *n,
    struct pmode_leg *leg)
{
	const char *s = conf_attr_get(x, n, "revocation");

	if (s == NULL || strcmp(s, "off") == 0)
		leg->revocation = CONF_NEVER;
	else if (strcmp(s, "prefer") == 0)
		leg->revocation = CONF_OPTIONAL;
	else if (strcmp(s, "require") == 0)
		leg->revocation = CONF_REQUIRED;
	else
		return conf_fail(x, n, "security/@revocation: \"%s\" is not "
		    "require, prefer or off", s);
	if (leg->revocation != CONF_NEVER && leg->signing == CONF_NEVER)
		return conf_fail(x, n, "pmode \"%s\": security/@revocation "
		    "needs signing", leg->id);
	return 0;
}

/* security/@profile (issue 13): edelivery-1.x (default), edelivery-2.0,
 * edelivery-2.0-ec; the schema allows only these words. */
static int
conf_leg_profile(const struct conf_ctx *x, const xmlNode *n,
    struct pmode_leg *leg)
{
	static const enum conf_profile all[] = { CONF_PROFILE_1X,
		CONF_PROFILE_2_0, CONF_PROFILE_2_0_EC };
	const char *s = conf_attr_get(x, n, "profile");
	size_t i;

	leg->profile = CONF_PROFILE_1X;
	if (s == NULL)
		return 0;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (strcmp(s, conf_profile_name(all[i])) == 0) {
			leg->profile = all[i];
			return 0;
		}
	return conf_fail(x, n, "pmode \"%s\": security/@profile \"%s\" is "
	    "not edelivery-1.x, edelivery-2.0 or edelivery-2.0-ec", leg->id, s);
}

/* receipt/@signingKey: the gateway signing pair (by id) that signs the
 * leg's Receipts and errors; absent: chosen by the gateway (-1). */
static int
conf_leg_receipt_key(const struct conf_ctx *x, const xmlNode *n,
    struct pmode_leg *leg)
{
	const char *s = n != NULL ? conf_attr_get(x, n, "signingKey") : NULL;

	leg->receipt_key = -1;
	if (s == NULL)
		return 0;
	leg->receipt_key = conf_keys_signing_find(x, s);
	if (leg->receipt_key == -1)
		return conf_fail(x, n, "pmode \"%s\": receipt/@signingKey "
		    "\"%s\" is not the id of a gateway <signing> pair",
		    leg->id, s);
	return 0;
}

/* <security> and <receipt> of a leg (defaults set by the caller). */
static int
conf_leg_policy(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	xmlNodePtr n = xml_child(node, CONF_NS, "security");
	const char *s;

	if (n != NULL &&
	    (conf_leg_policy_attr(x, n, "signing", &leg->signing) == -1 ||
	    conf_leg_policy_attr(x, n, "encryption", &leg->encryption) == -1 ||
	    conf_leg_policy_attr(x, n, "timestamp", &leg->timestamp) == -1 ||
	    conf_leg_revocation(x, n, leg) == -1))
		return -1;
	if (conf_leg_profile(x, n, leg) == -1)
		return -1;
	/* a wsu:Timestamp counts only signed (WS-Security 1.1 10), and only a
	 * leg that requires signing can require a signed one */
	if (leg->timestamp == CONF_REQUIRED && leg->signing != CONF_REQUIRED)
		return conf_fail(x, n, "pmode \"%s\": security/@timestamp "
		    "\"required\" needs signing=\"required\"", leg->id);
	n = xml_child(node, CONF_NS, "receipt");
	if (conf_leg_receipt_key(x, n, leg) == -1)
		return -1;
	s = n != NULL ? conf_attr_get(x, n, "nonRepudiation") : NULL;
	if (s == NULL)
		return 0;
	if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
		leg->receipt_nrr = 1;
	else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
		leg->receipt_nrr = 0;
	else
		return conf_fail(x, n, "receipt/@nonRepudiation: \"%s\" is not "
		    "true or false", s);
	return 0;
}

/* Every <service> of node into leg->services (none: <anyService/>). */
static int
conf_leg_services(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	size_t n = xml_count(node, CONF_NS, "service"), i = 0;
	struct conf_service *sv;
	xmlNodePtr e;

	if (n == 0)
		return 0;
	leg->services = calloc(n, sizeof(*leg->services));
	if (leg->services == NULL)
		return conf_oom(x);
	leg->n_services = n;
	for (e = xml_child(node, CONF_NS, "service"); e != NULL && i < n;
	    e = xml_next(e, CONF_NS, "service"), i++) {
		sv = &leg->services[i];
		if (conf_elem_text(x, e, &sv->value) == -1 ||
		    conf_attr(x, e, "type", &sv->type) == -1)
			return -1;
		if (sv->type == NULL && !conf_leg_is_uri(sv->value))
			return conf_fail(x, e, "pmode \"%s\": service \"%s\" "
			    "has no type and is not a URI (ebMS3 Core 5.2.2.8)",
			    leg->id, sv->value);
	}
	return 0;
}

/* Every <action> of node into leg->actions (none: <anyAction/>). */
static int
conf_leg_actions(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	size_t n = xml_count(node, CONF_NS, "action"), i = 0;
	xmlNodePtr e;

	if (n == 0)
		return 0;
	leg->actions = calloc(n, sizeof(*leg->actions));
	if (leg->actions == NULL)
		return conf_oom(x);
	leg->n_actions = n;
	for (e = xml_child(node, CONF_NS, "action"); e != NULL && i < n;
	    e = xml_next(e, CONF_NS, "action"), i++)
		if (conf_elem_text(x, e, &leg->actions[i]) == -1)
			return -1;
	return 0;
}

/* <agreement>, <service>s and <action>s of a leg (the first service and
 * action also as leg->service, ->action; conf.h). */
static int
conf_leg_collab(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	xmlNodePtr n = xml_child(node, CONF_NS, "agreement");

	if (n != NULL && (conf_elem_text(x, n, &leg->agreement) == -1 ||
	    conf_attr(x, n, "type", &leg->agreement_type) == -1))
		return -1;
	if (conf_leg_services(x, node, leg) == -1 ||
	    conf_leg_actions(x, node, leg) == -1)
		return -1;
	if (leg->n_services == 0 &&
	    xml_child(node, CONF_NS, "anyService") == NULL)
		return conf_fail(x, node, "pmode \"%s\": service missing",
		    leg->id);
	if (leg->n_actions == 0 &&
	    xml_child(node, CONF_NS, "anyAction") == NULL)
		return conf_fail(x, node, "pmode \"%s\": action missing",
		    leg->id);
	if (leg->n_services > 0) {
		leg->service = leg->services[0].value;
		leg->service_type = leg->services[0].type;
	}
	if (leg->n_actions > 0)
		leg->action = leg->actions[0];
	return 0;
}

/* Replace each run of XML white space in s by one space; s is trimmed
 * (an <algorithms> list, so the gateway sees names and single spaces). */
static void
conf_leg_collapse(char *s)
{
	char *start = s, *w = s;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
			if (w > start && w[-1] != ' ')
				*w++ = ' ';
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/*
 * Every child `name` of parent (<signer><certificate>, <trust><anchor>,
 * <trust><crl>):
 * a file name, resolved, into the malloc'd array *ret of *ret_n, queued for
 * the file check as `pmode "id": signer certificate`.  The schema bounds
 * the count; at least one is required here.
 */
int
conf_leg_files(struct conf_ctx *x, const struct pmode_leg *leg,
    const xmlNode *parent, const char *name, char ***ret, size_t *ret_n)
{
	size_t n = xml_count(parent, CONF_NS, name), i = 0;
	const char *what;
	xmlNodePtr e;

	if (n == 0)
		return conf_fail(x, parent, "pmode \"%s\": %s: %s missing",
		    leg->id, (const char *)parent->name, name);
	what = arena_sprintf(x->a, "pmode \"%s\": %s %s", leg->id,
	    (const char *)parent->name, name);
	*ret = calloc(n, sizeof(**ret));
	if (what == NULL || *ret == NULL)
		return conf_oom(x);
	*ret_n = n;     /* NULL entries until read: conf_leg_free copes */
	for (e = xml_child(parent, CONF_NS, name); e != NULL && i < n;
	    e = xml_next(e, CONF_NS, name), i++)
		if (conf_elem_text(x, e, &(*ret)[i]) == -1 ||
		    conf_resolve_in_place(x, &(*ret)[i]) == -1 ||
		    conf_file_later(x, e, what, (*ret)[i]) == -1)
			return -1;
	return 0;
}

/*
 * A leg trusting a network (issue 12) instead of listed <signer>s: only
 * with signing="required" (a network member is known by its signature
 * alone), and no <signer>/<trust> beside it.
 */
static int
conf_leg_network(struct conf_ctx *x, const xmlNode *sec, const xmlNode *net,
    struct pmode_leg *leg)
{
	if (xml_child(sec, CONF_NS, "signer") != NULL ||
	    xml_child(sec, CONF_NS, "trust") != NULL)
		return conf_fail(x, net, "pmode \"%s\": <network> replaces "
		    "<signer> and <trust>: list one or the other", leg->id);
	if (leg->signing != CONF_REQUIRED)
		return conf_fail(x, net, "pmode \"%s\": <network> needs "
		    "signing=\"required\"", leg->id);
	return conf_network_parse(x, leg, net, &leg->network);
}

/*
 * <signer> and <trust> of a leg's <security> (sec, may be NULL).  A leg
 * that may receive signed messages must say whose signature it trusts
 * (issue 3: the certificate bound to the leg's eb:From party), and a signer
 * needs the anchors its chain must reach: no implicit trust, not even in a
 * self-signed certificate.
 */
static int
conf_leg_trust(struct conf_ctx *x, const xmlNode *node, const xmlNode *sec,
    struct pmode_leg *leg)
{
	xmlNodePtr signer = xml_child(sec, CONF_NS, "signer");
	xmlNodePtr trust = xml_child(sec, CONF_NS, "trust");
	xmlNodePtr net = xml_child(sec, CONF_NS, "network");

	if (net != NULL)
		return conf_leg_network(x, sec, net, leg);
	if (signer == NULL && leg->signing != CONF_NEVER)
		return conf_fail(x, sec != NULL ? sec : node, "pmode \"%s\": "
		    "signing is %s but no <signer> names the partner "
		    "certificate(s) trusted to sign", leg->id,
		    conf_policy_name(leg->signing));
	if (signer != NULL && trust == NULL)
		return conf_fail(x, signer, "pmode \"%s\": <signer> without "
		    "<trust>: list the CA(s) its chain must reach (a "
		    "self-signed certificate as its own <anchor>)", leg->id);
	if (signer != NULL && conf_leg_files(x, leg, signer, "certificate",
	    &leg->signer_certs, &leg->n_signer_certs) == -1)
		return -1;
	if (trust != NULL && conf_leg_files(x, leg, trust, "anchor",
	    &leg->trust_anchors, &leg->n_trust_anchors) == -1)
		return -1;
	/* optional CRLs: revocation is checked only when some are listed */
	if (trust != NULL && xml_count(trust, CONF_NS, "crl") > 0 &&
	    conf_leg_files(x, leg, trust, "crl", &leg->trust_crls,
	    &leg->n_trust_crls) == -1)
		return -1;
	return 0;
}

/*
 * The rest of a leg's <security> (sec, may be NULL): the decryption pairs
 * (default: copies of the gateway's default pairs), the algorithm list
 * (NULL = default; the schema refused unknown names) and the wsu:Timestamp
 * skew.
 */
static int
conf_leg_crypto(struct conf_ctx *x, const xmlNode *sec, struct pmode_leg *leg)
{
	unsigned long long v;
	int r;

	if (conf_keys_leg(x, sec, leg) == -1)
		return -1;
	r = conf_text(x, sec, "algorithms", &leg->algorithms);
	if (r == -1)
		return -1;
	if (r == 1)
		conf_leg_collapse(leg->algorithms);
	r = conf_uint(x, sec, "timestampSkewSeconds", 0, 3600, &v);
	if (r == 1)
		leg->timestamp_skew_s = (unsigned)v;
	return r == -1 ? -1 : 0;
}

/* <businessDuplicates>flag|refuse|off</businessDuplicates> (issue 12 item
 * 4; the schema allows only these words; absent: flag). */
static int
conf_leg_business(struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	char *v = NULL;
	int r = conf_text(x, node, "businessDuplicates", &v);

	leg->business_duplicates = CONF_BUSINESS_FLAG;
	if (r == 1 && strcmp(v, "refuse") == 0)
		leg->business_duplicates = CONF_BUSINESS_REFUSE;
	else if (r == 1 && strcmp(v, "off") == 0)
		leg->business_duplicates = CONF_BUSINESS_OFF;
	else if (r == 1 && strcmp(v, "flag") != 0)
		r = conf_fail(x, node, "pmode \"%s\": businessDuplicates "
		    "\"%s\" is not flag, refuse or off", leg->id, v);
	free(v);
	return r == -1 ? -1 : 0;
}

/* Open match fields (a <from> without partyId, <anyService/>,
 * <anyAction/>) only on a network leg: there the signature says who
 * sent; a listed-signer leg names its partner (issue 12).  The To party
 * stays fixed everywhere. */
static int
conf_leg_open(const struct conf_ctx *x, const xmlNode *node,
    const struct pmode_leg *leg)
{
	if (leg->to.n_ids == 0)
		return conf_fail(x, node, "pmode \"%s\": to: partyId missing",
		    leg->id);
	if (leg->network != NULL)
		return 0;
	if (leg->from.n_ids == 0)
		return conf_fail(x, node, "pmode \"%s\": from: partyId "
		    "missing (only a <network> leg may leave it open)",
		    leg->id);
	if (leg->n_services == 0 || leg->n_actions == 0)
		return conf_fail(x, node, "pmode \"%s\": <anyService/> and "
		    "<anyAction/> need a <network> leg", leg->id);
	return 0;
}

/*
 * <retentionDays> (not shorter than the retry window) and <maxBodyBytes>
 * (issue 14 item 4: the leg's own body cap, within the gateway's range)
 * of a leg.
 */
static int
conf_leg_numbers(const struct conf_ctx *x, const xmlNode *node,
    struct pmode_leg *leg)
{
	unsigned long long v;
	int r;

	r = conf_days(x, node, "retentionDays", &leg->retention_days);
	if (r == -1)
		return -1;
	if (r == 1 && leg->retention_days < x->c->retry_window_days)
		return conf_fail(x, xml_child(node, CONF_NS, "retentionDays"),
		    "pmode \"%s\": retentionDays (%d) is shorter than "
		    "partnerRetryWindowDays (%d)", leg->id, leg->retention_days,
		    x->c->retry_window_days);
	r = conf_uint(x, node, "maxBodyBytes", 1024, 1ULL << 36, &v);
	if (r == 1)
		leg->max_body_bytes = v;
	return r == -1 ? -1 : 0;
}

/* One <pmode> element into leg. */
static int
conf_leg_one(struct conf_ctx *x, const xmlNode *node, struct pmode_leg *leg)
{
	xmlNodePtr sec = xml_child(node, CONF_NS, "security");

	leg->signing = CONF_REQUIRED;
	leg->encryption = CONF_OPTIONAL;
	leg->timestamp = CONF_OPTIONAL;
	leg->receipt_nrr = 1;
	leg->timestamp_skew_s = CONF_SKEW_DEFAULT;
	if (conf_attr(x, node, "id", &leg->id) == -1)
		return -1;
	if (leg->id == NULL)
		return conf_fail(x, node, "pmode without id");
	if (conf_leg_collab(x, node, leg) == -1 ||
	    conf_leg_party(x, leg, xml_child(node, CONF_NS, "from"),
	    &leg->from) == -1 ||
	    conf_leg_party(x, leg, xml_child(node, CONF_NS, "to"),
	    &leg->to) == -1 ||
	    conf_leg_policy(x, node, leg) == -1 ||
	    conf_leg_trust(x, node, sec, leg) == -1 ||
	    conf_leg_crypto(x, sec, leg) == -1 ||
	    conf_peppol_parse(x, node, leg) == -1 ||
	    conf_leg_business(x, node, leg) == -1 ||
	    conf_leg_open(x, node, leg) == -1)
		return -1;
	return conf_leg_numbers(x, node, leg);
}

/* Every <pmode> of the root into c->legs. */
int
conf_leg_parse(struct conf_ctx *x, const xmlNode *root)
{
	size_t n = xml_count(root, CONF_NS, "pmode"), i = 0;
	xmlNodePtr node;

	if (n == 0)
		return conf_fail(x, root, "no pmode");
	x->c->legs = calloc(n, sizeof(*x->c->legs));
	x->leg_lines = arena_calloc(x->a, n, sizeof(*x->leg_lines));
	if (x->c->legs == NULL || x->leg_lines == NULL)
		return conf_oom(x);
	x->c->n_legs = n;
	for (node = xml_child(root, CONF_NS, "pmode"); node != NULL && i < n;
	    node = xml_next(node, CONF_NS, "pmode"), i++) {
		x->leg_lines[i] = xmlGetLineNo(node);
		if (conf_leg_one(x, node, &x->c->legs[i]) == -1)
			return -1;
	}
	return 0;
}

/* Free an array of n strings and the array; see conf_int.h. */
void
conf_leg_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++)
		free(v[i]);
	free(v);
}

/* Free the strings of a party (not the struct). */
static void
conf_leg_party_free(struct conf_party *p)
{
	size_t i;

	for (i = 0; p->ids != NULL && i < p->n_ids; i++) {
		free(p->ids[i].value);
		free(p->ids[i].type);
	}
	free(p->ids);
	free(p->name);
	free(p->role);
}

/* Free n services and the array; accepts NULL. */
static void
conf_leg_services_free(struct conf_service *v, size_t n)
{
	size_t i;

	for (i = 0; v != NULL && i < n; i++) {
		free(v[i].value);
		free(v[i].type);
	}
	free(v);
}

/* Free the strings of leg (not the struct); accepts NULL. */
void
conf_leg_free(struct pmode_leg *leg)
{
	if (leg == NULL)
		return;
	free(leg->id);
	free(leg->agreement);
	free(leg->agreement_type);
	conf_leg_party_free(&leg->from);
	conf_leg_party_free(&leg->to);
	conf_leg_services_free(leg->services, leg->n_services);
	conf_leg_strv_free(leg->actions, leg->n_actions);
	conf_network_free(leg->network);
	conf_leg_strv_free(leg->signer_certs, leg->n_signer_certs);
	conf_leg_strv_free(leg->trust_anchors, leg->n_trust_anchors);
	conf_leg_strv_free(leg->trust_crls, leg->n_trust_crls);
	conf_keys_free(leg->decrypt, leg->n_decrypt);
	free(leg->algorithms);
	conf_peppol_free(leg->peppol);
}
