/*
 * pmode — P-Mode leg selection (ebMS3 Core D.3, and 4.x: "An MSH MUST NOT
 * process a message to normal completion if it has no matching P-Mode").
 *
 * A leg matches when every one of its match fields equals the message's:
 * AgreementRef (value and @type; a leg without agreement matches only
 * messages without one), AgreementRef/@pmode (when the message has it, it
 * must name the leg), From and To (ebMS3 Core 5.2.2.4: all the PartyIds of
 * one From identify one party, so EVERY PartyId of the message, type
 * included, must be one the leg lists for that party; the leg's role, if
 * set, equals the Role), Service (value and @type) and Action.  Strings
 * compare exactly; both sides are already trimmed.
 *
 * A message must match exactly one leg: two matches are refused as
 * ambiguous (conf lets legs on one route load; @pmode picks one of them),
 * never resolved by order.  A message whose From mixes the PartyIds of
 * different legs' parties, one of which accepts signatures, is refused as
 * an authentication failure: it claims an identity only a key bound to that
 * party may claim, and no single party's binding covers it.
 */
#include "pmode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many leg ids are named in an "ambiguous" detail. */
#define PMODE_AMBIGUOUS_NAMES 8

/* The match fields, in the order they are reported. */
enum pmode_field {
	PMODE_F_AGREEMENT = 0,
	PMODE_F_AGREEMENT_TYPE,
	PMODE_F_PMODE,
	PMODE_F_FROM_PARTY,
	PMODE_F_FROM_ROLE,
	PMODE_F_TO_PARTY,
	PMODE_F_TO_ROLE,
	PMODE_F_SERVICE,
	PMODE_F_SERVICE_TYPE,
	PMODE_F_ACTION,
	PMODE_F_COUNT
};

/* ebMS3 header names of the fields, for err.detail. */
static const char *const pmode_field_names[PMODE_F_COUNT] = {
	"AgreementRef", "AgreementRef/@type", "AgreementRef/@pmode",
	"From/PartyId", "From/Role", "To/PartyId", "To/Role",
	"Service", "Service/@type", "Action",
};

/* NULL-safe string equality (NULL equals only NULL). */
static int
pmode_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/* 1 when the leg's party lists the message's PartyId id (value and type). */
static int
pmode_party_has(const struct conf_party *leg, const struct ebms_party_id *id)
{
	size_t i;

	for (i = 0; i < leg->n_ids; i++)
		if (pmode_eq(leg->ids[i].value, id->value) &&
		    pmode_eq(leg->ids[i].type, id->type))
			return 1;
	return 0;
}

/* ebMS3 Core D.3.1 PMode.Initiator.Party and 5.2.2.4: every one of the
 * message's PartyIds (value and type) is one the leg lists for the party. */
static int
pmode_party_ok(const struct conf_party *leg, const struct ebms_party *msg)
{
	size_t i;

	if (msg->ids == NULL || msg->n_ids == 0)
		return 0;
	for (i = 0; i < msg->n_ids; i++)
		if (!pmode_party_has(leg, &msg->ids[i]))
			return 0;
	return 1;
}

/*
 * The From of a network leg (issue 12): exactly one PartyId, the one the
 * sender's certificate must name (checked after verification, gateway),
 * of the party rule's type; when the leg lists PartyIds, one of those.
 */
static int
pmode_network_from_ok(const struct pmode_leg *leg, const struct ebms_party *msg)
{
	if (msg->ids == NULL || msg->n_ids != 1 ||
	    !pmode_eq(msg->ids[0].type, leg->network->party_type))
		return 0;
	return leg->from.n_ids == 0 || pmode_party_has(&leg->from, &msg->ids[0]);
}

/* Service (type == 0: the value; 1: value and @type) one of the leg's
 * (none listed: any). */
static int
pmode_service_ok(const struct pmode_leg *leg,
    const struct ebms_user_message *um, int type)
{
	size_t i;

	for (i = 0; i < leg->n_services; i++)
		if (pmode_eq(leg->services[i].value, um->service) &&
		    (!type || pmode_eq(leg->services[i].type,
		    um->service_type)))
			return 1;
	return leg->n_services == 0;
}

/* Action one of the leg's (none listed: any). */
static int
pmode_action_ok(const struct pmode_leg *leg, const char *action)
{
	size_t i;

	for (i = 0; i < leg->n_actions; i++)
		if (pmode_eq(leg->actions[i], action))
			return 1;
	return leg->n_actions == 0;
}

/* The message's value of a single-valued field (not the PartyIds). */
static const char *
pmode_msg_value(const struct ebms_user_message *um, enum pmode_field f)
{
	switch (f) {
	case PMODE_F_AGREEMENT: return um->agreement_ref;
	case PMODE_F_AGREEMENT_TYPE: return um->agreement_type;
	case PMODE_F_PMODE: return um->agreement_pmode;
	case PMODE_F_FROM_ROLE: return um->from.role;
	case PMODE_F_TO_ROLE: return um->to.role;
	case PMODE_F_SERVICE: return um->service;
	case PMODE_F_SERVICE_TYPE: return um->service_type;
	case PMODE_F_ACTION: return um->action;
	default: return NULL;
	}
}

/* The leg's value of a single-valued field (not the PartyIds). */
static const char *
pmode_leg_value(const struct pmode_leg *leg, enum pmode_field f)
{
	switch (f) {
	case PMODE_F_AGREEMENT: return leg->agreement;
	case PMODE_F_AGREEMENT_TYPE: return leg->agreement_type;
	case PMODE_F_PMODE: return leg->id;
	case PMODE_F_FROM_ROLE: return leg->from.role;
	case PMODE_F_TO_ROLE: return leg->to.role;
	case PMODE_F_SERVICE: return leg->service;
	case PMODE_F_SERVICE_TYPE: return leg->service_type;
	case PMODE_F_ACTION: return leg->action;
	default: return NULL;
	}
}

/* Does field f of the message satisfy the leg? */
static int
pmode_field_ok(const struct pmode_leg *leg, const struct ebms_user_message *um,
    enum pmode_field f)
{
	switch (f) {
	case PMODE_F_PMODE:
		/* ebMS3 Core D.3.1 PMode.ID: AgreementRef/@pmode names it */
		return um->agreement_pmode == NULL ||
		    pmode_eq(leg->id, um->agreement_pmode);
	case PMODE_F_FROM_PARTY:
		return leg->network != NULL ?
		    pmode_network_from_ok(leg, &um->from) :
		    pmode_party_ok(&leg->from, &um->from);
	case PMODE_F_TO_PARTY:
		return pmode_party_ok(&leg->to, &um->to);
	case PMODE_F_FROM_ROLE:
	case PMODE_F_TO_ROLE:
		/* a leg without role accepts any Role */
		return pmode_leg_value(leg, f) == NULL ||
		    pmode_eq(pmode_leg_value(leg, f), pmode_msg_value(um, f));
	case PMODE_F_SERVICE:
		return pmode_service_ok(leg, um, 0);
	case PMODE_F_SERVICE_TYPE:
		return pmode_service_ok(leg, um, 1);
	case PMODE_F_ACTION:
		return pmode_action_ok(leg, um->action);
	default:
		return pmode_eq(pmode_leg_value(leg, f),
		    pmode_msg_value(um, f));
	}
}

/* How many fields match, and the first that does not (PMODE_F_COUNT if
 * none: the leg matches). */
static size_t
pmode_score(const struct pmode_leg *leg, const struct ebms_user_message *um,
    enum pmode_field *ret_first)
{
	size_t score = 0;
	int f;

	*ret_first = PMODE_F_COUNT;
	for (f = 0; f < PMODE_F_COUNT; f++) {
		if (pmode_field_ok(leg, um, (enum pmode_field)f))
			score++;
		else if (*ret_first == PMODE_F_COUNT)
			*ret_first = (enum pmode_field)f;
	}
	return score;
}

/* Bounded text being built for err.detail. */
struct pmode_text {
	char buf[400];
	size_t used;
};

/* Append printf-formatted text; truncates silently when full. */
static void __attribute__((format(printf, 2, 3)))
pmode_put(struct pmode_text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->used + 1 >= sizeof(t->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, sizeof(t->buf) - t->used, fmt, ap);
	va_end(ap);
	if (n < 0)
		t->buf[t->used] = '\0';
	else if ((size_t)n >= sizeof(t->buf) - t->used)
		t->used = sizeof(t->buf) - 1;
	else
		t->used += (size_t)n;
}

/* A value in quotes, or none; with " (type \"t\")" when type is set. */
static void
pmode_put_value(struct pmode_text *t, const char *value, const char *type)
{
	if (value == NULL)
		pmode_put(t, "none");
	else
		pmode_put(t, "\"%s\"", value);
	if (type != NULL)
		pmode_put(t, " (type \"%s\")", type);
}

/* The message's side of field f. */
static void
pmode_put_msg(struct pmode_text *t, const struct ebms_user_message *um,
    enum pmode_field f)
{
	const struct ebms_party *p = f == PMODE_F_FROM_PARTY ? &um->from :
	    &um->to;
	size_t i;

	if (f != PMODE_F_FROM_PARTY && f != PMODE_F_TO_PARTY) {
		pmode_put_value(t, pmode_msg_value(um, f), NULL);
		return;
	}
	if (p->ids == NULL || p->n_ids == 0)
		pmode_put_value(t, NULL, NULL);
	for (i = 0; p->ids != NULL && i < p->n_ids; i++) {
		if (i > 0)
			pmode_put(t, ", ");
		pmode_put_value(t, p->ids[i].value, p->ids[i].type);
	}
}

/* Does the leg accept any value of field f (not the PartyIds)? */
static int
pmode_leg_open(const struct pmode_leg *leg, enum pmode_field f)
{
	switch (f) {
	case PMODE_F_FROM_ROLE:
	case PMODE_F_TO_ROLE:
		return pmode_leg_value(leg, f) == NULL;
	case PMODE_F_SERVICE:
	case PMODE_F_SERVICE_TYPE:
		return leg->n_services == 0;
	case PMODE_F_ACTION:
		return leg->n_actions == 0;
	default:
		return 0;
	}
}

/* The leg's side of field f. */
static void
pmode_put_leg(struct pmode_text *t, const struct pmode_leg *leg,
    enum pmode_field f)
{
	const struct conf_party *p = f == PMODE_F_FROM_PARTY ? &leg->from :
	    &leg->to;
	size_t i;

	if (f == PMODE_F_FROM_PARTY && p->n_ids == 0) {
		pmode_put(t, "one PartyId of type ");
		pmode_put_value(t, leg->network != NULL ?
		    leg->network->party_type : NULL, NULL);
	} else if (f == PMODE_F_FROM_PARTY || f == PMODE_F_TO_PARTY) {
		for (i = 0; i < p->n_ids; i++) {
			if (i > 0)
				pmode_put(t, ", ");
			pmode_put_value(t, p->ids[i].value, p->ids[i].type);
		}
	} else if (pmode_leg_open(leg, f)) {
		pmode_put(t, "any");
	} else {
		pmode_put_value(t, pmode_leg_value(leg, f), NULL);
		if ((f == PMODE_F_SERVICE && leg->n_services > 1) ||
		    (f == PMODE_F_ACTION && leg->n_actions > 1))
			pmode_put(t, " and others");
	}
}

/* err.detail for a mismatch: `leg "x": Service differs: got "a", leg has
 * "b"` (log only: DESIGN.md "Details go to the log"). */
static void
pmode_detail(struct err *err, const struct pmode_leg *leg,
    const struct ebms_user_message *um, enum pmode_field f)
{
	struct pmode_text t;

	t.buf[0] = '\0';
	t.used = 0;
	pmode_put(&t, "leg \"%s\": %s differs: got ", leg->id,
	    pmode_field_names[f]);
	pmode_put_msg(&t, um, f);
	pmode_put(&t, ", leg has ");
	pmode_put_leg(&t, leg, f);
	err_detail(err, "%s", t.buf);
}

/*
 * Could the message be meant for this leg?  Every field but
 * AgreementRef/@pmode and the From PartyIds matches, and the leg lists at
 * least one of the From PartyIds.
 */
static int
pmode_candidate(const struct pmode_leg *leg,
    const struct ebms_user_message *um)
{
	size_t i;
	int f;

	for (f = 0; f < PMODE_F_COUNT; f++)
		if (f != PMODE_F_PMODE && f != PMODE_F_FROM_PARTY &&
		    !pmode_field_ok(leg, um, (enum pmode_field)f))
			return 0;
	for (i = 0; um->from.ids != NULL && i < um->from.n_ids; i++)
		if (pmode_party_has(&leg->from, &um->from.ids[i]))
			return 1;
	return 0;
}

/* Mark in listed[] the From PartyIds some candidate leg lists. */
static void
pmode_mark_listed(const struct conf *conf, const struct ebms_user_message *um,
    unsigned char *listed)
{
	size_t i, k;

	for (i = 0; i < conf->n_legs; i++) {
		if (!pmode_candidate(&conf->legs[i], um))
			continue;
		for (k = 0; k < um->from.n_ids; k++)
			if (pmode_party_has(&conf->legs[i].from,
			    &um->from.ids[k]))
				listed[k] = 1;
	}
}

/* The first From PartyId a candidate lists (listed[]) but leg does not, or
 * -1. */
static long
pmode_foreign_id(const struct pmode_leg *leg,
    const struct ebms_user_message *um, const unsigned char *listed)
{
	size_t k;

	for (k = 0; k < um->from.n_ids; k++)
		if (listed[k] && !pmode_party_has(&leg->from, &um->from.ids[k]))
			return (long)k;
	return -1;
}

/*
 * A message that matched no leg, borrowing an identity?  Its From names
 * PartyIds of a candidate leg that accepts signatures (signing not
 * "never") together with a PartyId that leg does not list but another
 * candidate does: it mixes two configured parties, one of them
 * authenticated by a bound key.  EBMS:0101 then (README "Configuration"),
 * with the legs in the log only.  Linear in the PartyIds times the legs.
 * 1 borrowed (err set), 0 not (or out of memory: the caller answers 0010).
 */
static int
pmode_borrowed(const struct conf *conf, const struct ebms_user_message *um,
    struct err *err)
{
	unsigned char *listed;
	long k = -1;
	size_t i;

	if (um->from.ids == NULL || um->from.n_ids < 2)
		return 0;
	listed = calloc(um->from.n_ids, 1);
	if (listed == NULL)
		return 0;
	pmode_mark_listed(conf, um, listed);
	for (i = 0; i < conf->n_legs && k == -1; i++)
		if (conf->legs[i].signing != CONF_NEVER &&
		    pmode_candidate(&conf->legs[i], um))
			k = pmode_foreign_id(&conf->legs[i], um, listed);
	free(listed);
	if (k == -1)
		return 0;
	/* ebMS3 Core 6.7.2 FailedAuthentication, with the one text of every
	 * signature failure (no oracle) */
	err_set(err, ERR_EBMS, "EBMS:0101", "signature check failed");
	err_detail(err, "From mixes the PartyIds of leg \"%s\" (signing %s) "
	    "with another leg's party: \"%s\" is not one of its PartyIds",
	    conf->legs[i - 1].id, conf_policy_name(conf->legs[i - 1].signing),
	    um->from.ids[k].value);
	return 1;
}

/* Every leg um matches: the first in *ret_leg, their count returned, up to
 * PMODE_AMBIGUOUS_NAMES of their ids in t ("a, b"). */
static size_t
pmode_matches(const struct conf *conf, const struct ebms_user_message *um,
    const struct pmode_leg **ret_leg, struct pmode_text *t)
{
	enum pmode_field first;
	size_t i, n = 0;

	for (i = 0; i < conf->n_legs; i++) {
		(void)pmode_score(&conf->legs[i], um, &first);
		if (first != PMODE_F_COUNT)
			continue;
		if (n == 0)
			*ret_leg = &conf->legs[i];
		if (n < PMODE_AMBIGUOUS_NAMES)
			pmode_put(t, "%s%s", n > 0 ? ", " : "",
			    conf->legs[i].id);
		else if (n == PMODE_AMBIGUOUS_NAMES)
			pmode_put(t, ", ...");
		n++;
	}
	return n;
}

/* No leg matches: EBMS:0010 naming the closest leg and the first field
 * that differs. */
static void
pmode_no_match(const struct conf *conf, const struct ebms_user_message *um,
    struct err *err)
{
	const struct pmode_leg *best = NULL;
	enum pmode_field first, best_first = PMODE_F_COUNT;
	size_t i, score, best_score = 0;

	for (i = 0; i < conf->n_legs; i++) {
		score = pmode_score(&conf->legs[i], um, &first);
		if (best == NULL || score > best_score) {
			best = &conf->legs[i];
			best_score = score;
			best_first = first;
		}
	}
	/* ebMS3 Core 4.x / 6.7.1: no matching P-Mode -> EBMS:0010 */
	err_set(err, ERR_EBMS, "EBMS:0010", "no P-Mode matches the message");
	if (best != NULL)
		pmode_detail(err, best, um, best_first);
	else
		err_detail(err, "no P-Mode legs configured");
}

/* Select the leg for um; see pmode.h. */
int
pmode_match(const struct conf *conf, const struct ebms_user_message *um,
    const struct pmode_leg **ret_leg, struct err *err)
{
	const struct pmode_leg *leg = NULL;
	struct pmode_text t;
	size_t n;

	t.buf[0] = '\0';
	t.used = 0;
	if (conf == NULL || um == NULL) {
		err_set(err, ERR_EBMS, "EBMS:0010",
		    "no P-Mode matches the message");
		err_detail(err, "no P-Mode legs configured");
		return -1;
	}
	n = pmode_matches(conf, um, &leg, &t);
	if (n == 1) {
		*ret_leg = leg;
		return 1;
	}
	if (n > 1) {
		/* never resolved by order: AgreementRef/@pmode must say */
		err_set(err, ERR_EBMS, "EBMS:0010",
		    "more than one P-Mode matches the message");
		err_detail(err, "ambiguous: legs %s", t.buf);
	} else if (pmode_borrowed(conf, um, err) == 0) {
		pmode_no_match(conf, um, err);
	}
	return -1;
}
