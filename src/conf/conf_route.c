/*
 * conf_route — the checks across P-Mode legs that the schema cannot
 * express: unique ids, one canonical name per party, and no two legs one
 * message could match (counting open parties and Service/Action lists of
 * network legs, issue 12), except legs on one route that
 * AgreementRef/@pmode tells apart (pmode_match refuses a message that
 * matches two legs).  conf.c runs it once the legs are read.
 */
#include "conf_int.h"

#include <string.h>

/* NULL-safe string equality (NULL equals only NULL). */
static int
conf_route_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* 1 when the first n of ids hold the PartyId id (type included), else 0. */
static int
conf_route_ids_have(const struct conf_party_id *ids, size_t n,
    const struct conf_party_id *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (conf_route_eq(ids[i].value, id->value) &&
		    conf_route_eq(ids[i].type, id->type))
			return 1;
	return 0;
}

/* Could one message's party match both a and b?  Some PartyId in both
 * lists (a message naming only such ids), and roles that agree (NULL = any). */
static int
conf_route_party_overlap(const struct conf_party *a, const struct conf_party *b)
{
	size_t i;

	if (a->role != NULL && b->role != NULL && !conf_route_eq(a->role, b->role))
		return 0;
	for (i = 0; i < a->n_ids; i++)
		if (conf_route_ids_have(b->ids, b->n_ids, &a->ids[i]))
			return 1;
	return 0;
}

/* The same party: the same PartyIds (as sets) and the same role. */
static int
conf_route_party_same(const struct conf_party *a, const struct conf_party *b)
{
	size_t i;

	if (a->n_ids != b->n_ids || !conf_route_eq(a->role, b->role))
		return 0;
	for (i = 0; i < a->n_ids; i++)   /* no duplicates: one way suffices */
		if (!conf_route_ids_have(b->ids, b->n_ids, &a->ids[i]))
			return 0;
	return 1;
}

/* Could one message's Service match both a and b (none listed: any)? */
static int
conf_route_services_overlap(const struct pmode_leg *a, const struct pmode_leg *b)
{
	size_t i, j;

	if (a->n_services == 0 || b->n_services == 0)
		return 1;
	for (i = 0; i < a->n_services; i++)
		for (j = 0; j < b->n_services; j++)
			if (conf_route_eq(a->services[i].value,
			    b->services[j].value) &&
			    conf_route_eq(a->services[i].type, b->services[j].type))
				return 1;
	return 0;
}

/* Could one message's Action match both a and b (none listed: any)? */
static int
conf_route_actions_overlap(const struct pmode_leg *a, const struct pmode_leg *b)
{
	size_t i, j;

	if (a->n_actions == 0 || b->n_actions == 0)
		return 1;
	for (i = 0; i < a->n_actions; i++)
		for (j = 0; j < b->n_actions; j++)
			if (strcmp(a->actions[i], b->actions[j]) == 0)
				return 1;
	return 0;
}

/* The same Service and Action lists (as sets; no duplicates assumed: a
 * count and one-way inclusion), "any" equal only to "any". */
static int
conf_route_lists_same(const struct pmode_leg *a, const struct pmode_leg *b)
{
	size_t i, j, hit;

	if (a->n_services != b->n_services || a->n_actions != b->n_actions)
		return 0;
	for (i = 0, hit = 0; i < a->n_services; i++)
		for (j = 0; j < b->n_services; j++)
			hit += conf_route_eq(a->services[i].value,
			    b->services[j].value) &&
			    conf_route_eq(a->services[i].type, b->services[j].type);
	if (hit < a->n_services)
		return 0;
	for (i = 0, hit = 0; i < a->n_actions; i++)
		for (j = 0; j < b->n_actions; j++)
			hit += strcmp(a->actions[i], b->actions[j]) == 0;
	return hit >= a->n_actions;
}

/* The PartyId type the open From of a network leg admits (the party
 * rule's; NULL = untyped). */
static const char *
conf_route_open_type(const struct pmode_leg *l)
{
	return l->network != NULL ? l->network->party_type : NULL;
}

/* Does p list a PartyId of this type? */
static int
conf_route_type_listed(const struct conf_party *p, const char *type)
{
	size_t i;

	for (i = 0; i < p->n_ids; i++)
		if (conf_route_eq(p->ids[i].type, type))
			return 1;
	return 0;
}

/* Could one message's From match both legs?  An open From (a network's
 * members, conf.h) takes any one PartyId of its rule's type. */
static int
conf_route_from_overlap(const struct pmode_leg *a, const struct pmode_leg *b)
{
	const struct conf_party *pa = &a->from, *pb = &b->from;

	if (pa->role != NULL && pb->role != NULL &&
	    !conf_route_eq(pa->role, pb->role))
		return 0;
	if (pa->n_ids == 0 && pb->n_ids == 0)
		return conf_route_eq(conf_route_open_type(a), conf_route_open_type(b));
	if (pa->n_ids == 0)
		return conf_route_type_listed(pb, conf_route_open_type(a));
	if (pb->n_ids == 0)
		return conf_route_type_listed(pa, conf_route_open_type(b));
	return conf_route_party_overlap(pa, pb);
}

/* The same From: both open alike, or the same listed party. */
static int
conf_route_from_same(const struct pmode_leg *a, const struct pmode_leg *b)
{
	if (a->from.n_ids == 0 || b->from.n_ids == 0)
		return a->from.n_ids == b->from.n_ids &&
		    conf_route_eq(a->from.role, b->from.role) &&
		    conf_route_eq(conf_route_open_type(a), conf_route_open_type(b));
	return conf_route_party_same(&a->from, &b->from);
}

/*
 * Two legs a message could match both (ignoring AgreementRef/@pmode): 0
 * none, 1 legs on one route (the same match fields, the same parties) that
 * only AgreementRef/@pmode tells apart, 2 a partial overlap (which of them a
 * message matches would depend on which of the shared PartyIds, roles,
 * services or actions it names: a configuration mistake).
 */
static int
conf_route_overlap(const struct pmode_leg *a, const struct pmode_leg *b)
{
	if (!conf_route_eq(a->agreement, b->agreement) ||
	    !conf_route_eq(a->agreement_type, b->agreement_type) ||
	    !conf_route_services_overlap(a, b) || !conf_route_actions_overlap(a, b) ||
	    !conf_route_from_overlap(a, b) ||
	    !conf_route_party_overlap(&a->to, &b->to))
		return 0;
	return conf_route_lists_same(a, b) && conf_route_from_same(a, b) &&
	    conf_route_party_same(&a->to, &b->to) ? 1 : 2;
}

/*
 * One party, one name (ebMS3 Core 5.2.2.4: a PartyId identifies one party):
 * two legs whose <what> lists share a PartyId name the same party, so they
 * must start with the same partyId (the canonical name the inbox records),
 * and different parties must not print the same canonical name.
 */
static int
conf_route_party_names(const struct conf_ctx *x, size_t i, size_t j,
    const char *what, const struct conf_party *a, const struct conf_party *b)
{
	const struct pmode_leg *legs = x->c->legs;
	size_t k;
	int shared = 0;

	if (a->n_ids == 0 || b->n_ids == 0)     /* an open From: no name */
		return 0;
	if (conf_route_ids_have(a->ids, 1, &b->ids[0]))
		return 0;       /* the same first partyId: the same name */
	for (k = 0; k < a->n_ids && !shared; k++)
		shared = conf_route_ids_have(b->ids, b->n_ids, &a->ids[k]);
	if (shared)
		return conf_fail_line(x, x->leg_lines[i], "pmode \"%s\": %s "
		    "shares a partyId with pmode \"%s\" (line %ld) but starts "
		    "with another: the first partyId is the party's canonical "
		    "name and must be the same", legs[i].id, what, legs[j].id,
		    x->leg_lines[j]);
	if (strcmp(a->name, b->name) == 0)
		return conf_fail_line(x, x->leg_lines[i], "pmode \"%s\": %s "
		    "\"%s\" is also the canonical name of another party in "
		    "pmode \"%s\" (line %ld)", legs[i].id, what, a->name,
		    legs[j].id, x->leg_lines[j]);
	return 0;
}

/*
 * Legs a and b (at x->leg_lines[i], [j]) against each other.  Legs on one
 * route load (AS4.NET and Holodeck define several P-Modes on one route, told
 * apart by AgreementRef/@pmode; pmode_match refuses a message without @pmode
 * that matches both) but must authenticate the sender alike: otherwise
 * naming the weaker leg would borrow the party's identity without its key.
 * Any other overlap is refused.
 */
static int
conf_route_pair(const struct conf_ctx *x, size_t i, size_t j)
{
	const struct pmode_leg *a = &x->c->legs[i], *b = &x->c->legs[j];

	if (strcmp(a->id, b->id) == 0)
		return conf_fail_line(x, x->leg_lines[i], "duplicate pmode id "
		    "\"%s\" (first at line %ld)", a->id, x->leg_lines[j]);
	if (conf_route_party_names(x, i, j, "from", &a->from, &b->from) == -1 ||
	    conf_route_party_names(x, i, j, "to", &a->to, &b->to) == -1)
		return -1;
	switch (conf_route_overlap(a, b)) {
	case 0:
		return 0;
	case 1:
		if ((a->peppol == NULL) != (b->peppol == NULL))
			return conf_fail_line(x, x->leg_lines[i], "pmode "
			    "\"%s\" and pmode \"%s\" (line %ld) share a route "
			    "but only one has <peppol>: naming the other in "
			    "AgreementRef/@pmode would skip the Peppol checks",
			    a->id, b->id, x->leg_lines[j]);
		if (a->signing == b->signing)
			return 0;
		return conf_fail_line(x, x->leg_lines[i], "pmode \"%s\" and "
		    "pmode \"%s\" (line %ld) share a route but sign "
		    "differently (%s, %s): naming the weaker one in "
		    "AgreementRef/@pmode would borrow the party's identity",
		    a->id, b->id, x->leg_lines[j], conf_policy_name(a->signing),
		    conf_policy_name(b->signing));
	default:
		return conf_fail_line(x, x->leg_lines[i], "pmode \"%s\" is "
		    "ambiguous: a message could match it and pmode \"%s\" "
		    "(line %ld), which lists other PartyIds or roles; legs on "
		    "one route must list the same parties", a->id, b->id,
		    x->leg_lines[j]);
	}
}

/* Unique leg ids; no two legs a message could both match, except legs on
 * one route told apart by AgreementRef/@pmode (conf_route_pair). */
int
conf_route_check(const struct conf_ctx *x)
{
	size_t i, j;

	for (i = 1; i < x->c->n_legs; i++)
		for (j = 0; j < i; j++)
			if (conf_route_pair(x, i, j) == -1)
				return -1;
	return 0;
}
