/*
 * pmode — P-Mode leg selection (ebMS3 Core D.3, and 4.x: "An MSH MUST NOT
 * process a message to normal completion if it has no matching P-Mode").
 *
 * A leg matches when every one of its match fields equals the message's:
 * AgreementRef (value and @type; a leg without agreement matches only
 * messages without one), AgreementRef/@pmode (when the message has it, it
 * must name the leg), From and To (one of the message's PartyIds equals the
 * leg's PartyId, type included; the leg's role, if set, equals the Role),
 * Service (value and @type) and Action.  Strings compare exactly; both sides
 * are already trimmed.  conf refuses ambiguous legs, so at most one leg
 * matches; should two ever match, the first wins.
 */
#include "pmode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* ebMS3 Core D.3.1 PMode.Initiator.Party: one of the message's PartyIds
 * (value and type) is the leg's. */
static int
pmode_party_ok(const struct conf_party *leg, const struct ebms_party *msg)
{
	size_t i;

	for (i = 0; msg->ids != NULL && i < msg->n_ids; i++)
		if (pmode_eq(leg->party_id, msg->ids[i].value) &&
		    pmode_eq(leg->party_type, msg->ids[i].type))
			return 1;
	return 0;
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
		return pmode_party_ok(&leg->from, &um->from);
	case PMODE_F_TO_PARTY:
		return pmode_party_ok(&leg->to, &um->to);
	case PMODE_F_FROM_ROLE:
	case PMODE_F_TO_ROLE:
		/* a leg without role accepts any Role */
		return pmode_leg_value(leg, f) == NULL ||
		    pmode_eq(pmode_leg_value(leg, f), pmode_msg_value(um, f));
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

/* The leg's side of field f. */
static void
pmode_put_leg(struct pmode_text *t, const struct pmode_leg *leg,
    enum pmode_field f)
{
	const struct conf_party *p = f == PMODE_F_FROM_PARTY ? &leg->from :
	    &leg->to;

	if (f == PMODE_F_FROM_PARTY || f == PMODE_F_TO_PARTY)
		pmode_put_value(t, p->party_id, p->party_type);
	else if ((f == PMODE_F_FROM_ROLE || f == PMODE_F_TO_ROLE) &&
	    pmode_leg_value(leg, f) == NULL)
		pmode_put(t, "any");
	else
		pmode_put_value(t, pmode_leg_value(leg, f), NULL);
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

/* Select the leg for um; see pmode.h. */
int
pmode_match(const struct conf *conf, const struct ebms_user_message *um,
    const struct pmode_leg **ret_leg, struct err *err)
{
	const struct pmode_leg *best = NULL;
	enum pmode_field first, best_first = PMODE_F_COUNT;
	size_t i, score, best_score = 0;
	int rc = -1;

	for (i = 0; conf != NULL && um != NULL && i < conf->n_legs; i++) {
		score = pmode_score(&conf->legs[i], um, &first);
		if (first == PMODE_F_COUNT) {
			*ret_leg = &conf->legs[i];
			rc = 1;
			goto out;
		}
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
out:
	return rc;
}
