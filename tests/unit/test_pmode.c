/*
 * test_pmode — P-Mode leg selection against tests/unit/conf/pmode-legs.xml
 * (legs "order", "order-cancel", "invoice"): a table of UserMessages built
 * by hand, each a base message with one field changed, and the leg it must
 * select or the EBMS:0010 detail it must produce.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pmode/pmode.h"
#include "xml/xml.h"
#include "testutil.h"

#define ROLE "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"
#define UNREG "urn:oasis:names:tc:ebcore:partyid-type:unregistered"

/* Which base message a case starts from. */
enum pmode_test_base { BASE_ORDER, BASE_INVOICE };

/* The one field a case changes. */
enum pmode_test_field {
	F_NONE, F_AGREEMENT, F_AGREEMENT_TYPE, F_PMODE, F_FROM_ID, F_FROM_TYPE,
	F_FROM_ROLE, F_TO_ID, F_TO_TYPE, F_TO_ROLE, F_SERVICE, F_SERVICE_TYPE,
	F_ACTION,
	F_FROM_EXTRA,   /* a second From PartyId (value, type UNREG) before the first */
	F_FROM_OTHERS,  /* F_FROM_EXTRA, and the first becomes "sender-z" */
};

struct pmode_case {
	const char *name;
	enum pmode_test_base base;
	enum pmode_test_field field;
	const char *value;      /* new value; NULL removes the field */
	const char *leg;        /* expected leg id, or NULL: EBMS:0010 */
	const char *detail;     /* substring of err.detail when refused */
};

static const struct pmode_case pmode_cases[] = {
	{ "order exact", BASE_ORDER, F_NONE, NULL, "order", NULL },
	{ "invoice exact", BASE_INVOICE, F_NONE, NULL, "invoice", NULL },
	{ "other action selects another leg", BASE_ORDER, F_ACTION,
	    "CancelOrder", "order-cancel", NULL },
	{ "@pmode naming the leg", BASE_ORDER, F_PMODE, "order", "order", NULL },
	{ "@pmode naming the other leg", BASE_ORDER, F_PMODE, "order-cancel",
	    NULL, "leg \"order\": AgreementRef/@pmode differs: got "
	    "\"order-cancel\", leg has \"order\"" },
	{ "@pmode unknown", BASE_ORDER, F_PMODE, "nope", NULL,
	    "AgreementRef/@pmode differs: got \"nope\"" },
	{ "agreement differs", BASE_ORDER, F_AGREEMENT, "urn:test:other", NULL,
	    "leg \"order\": AgreementRef differs: got \"urn:test:other\", leg "
	    "has \"urn:test:orders\"" },
	{ "agreement absent", BASE_ORDER, F_AGREEMENT, NULL, NULL,
	    "AgreementRef differs: got none" },
	{ "agreement type differs", BASE_ORDER, F_AGREEMENT_TYPE, "urn:x", NULL,
	    "AgreementRef/@type differs: got \"urn:x\"" },
	{ "agreement type absent", BASE_ORDER, F_AGREEMENT_TYPE, NULL, NULL,
	    "AgreementRef/@type differs: got none" },
	{ "agreement where the leg has none", BASE_INVOICE, F_AGREEMENT,
	    "urn:test:orders", NULL, "leg \"invoice\": AgreementRef differs: "
	    "got \"urn:test:orders\", leg has none" },
	{ "from party differs", BASE_ORDER, F_FROM_ID, "sender-z", NULL,
	    "leg \"order\": From/PartyId differs: got \"sender-z\" (type \""
	    UNREG "\"), leg has \"sender-a\" (type \"" UNREG "\")" },
	{ "from party type differs", BASE_ORDER, F_FROM_TYPE, "urn:other-type",
	    NULL, "From/PartyId differs: got \"sender-a\" (type "
	    "\"urn:other-type\")" },
	{ "from party type absent", BASE_ORDER, F_FROM_TYPE, NULL, NULL,
	    "From/PartyId differs: got \"sender-a\", leg has" },
	{ "from role differs", BASE_ORDER, F_FROM_ROLE, ROLE "responder", NULL,
	    "From/Role differs: got \"" ROLE "responder\", leg has \"" ROLE
	    "initiator\"" },
	{ "to party differs", BASE_ORDER, F_TO_ID, "gateway-z", NULL,
	    "To/PartyId differs: got \"gateway-z\"" },
	{ "to party type differs", BASE_ORDER, F_TO_TYPE, "urn:other-type", NULL,
	    "To/PartyId differs" },
	{ "to role differs", BASE_ORDER, F_TO_ROLE, "Buyer", NULL,
	    "To/Role differs: got \"Buyer\"" },
	{ "service differs", BASE_ORDER, F_SERVICE, "urn:test:service:other",
	    NULL, "Service differs: got \"urn:test:service:other\"" },
	{ "service type where the leg has none", BASE_ORDER, F_SERVICE_TYPE,
	    "urn:test:service-type", NULL, "Service/@type differs: got "
	    "\"urn:test:service-type\", leg has none" },
	{ "service type absent", BASE_INVOICE, F_SERVICE_TYPE, NULL, NULL,
	    "leg \"invoice\": Service/@type differs: got none" },
	{ "action unknown: first of the equally close legs", BASE_ORDER,
	    F_ACTION, "Unknown", NULL, "leg \"order\": Action differs: got "
	    "\"Unknown\", leg has \"SubmitOrder\"" },
	{ "role any on the leg", BASE_INVOICE, F_FROM_ROLE, "Whatever",
	    "invoice", NULL },
	{ "to role still checked", BASE_INVOICE, F_TO_ROLE, ROLE "initiator",
	    NULL, "leg \"invoice\": To/Role differs" },
	/* issue 10: every PartyId must be the leg's, not any one of them */
	{ "one PartyId of the leg's, one not", BASE_ORDER, F_FROM_EXTRA,
	    "sender-other", NULL, "leg \"order\": From/PartyId differs: got "
	    "\"sender-other\" (type \"" UNREG "\"), \"sender-a\" (type \""
	    UNREG "\"), leg has \"sender-a\" (type \"" UNREG "\")" },
	{ "no PartyId matches", BASE_ORDER, F_FROM_OTHERS, "sender-other", NULL,
	    "From/PartyId differs: got \"sender-other\" (type \"" UNREG "\"), "
	    "\"sender-z\"" },
};

static struct conf *pmode_conf;

/* The base message: fields of leg "order" or "invoice". */
static struct ebms_user_message *
pmode_base(struct arena *a, enum pmode_test_base base)
{
	struct ebms_user_message *um = arena_calloc(a, 1, sizeof(*um));
	int order = base == BASE_ORDER;

	assert_non_null(um);
	um->message_id = "m1@test";
	um->from.ids = arena_calloc(a, 2, sizeof(*um->from.ids));
	um->to.ids = arena_calloc(a, 1, sizeof(*um->to.ids));
	assert_non_null(um->from.ids);
	assert_non_null(um->to.ids);
	um->from.n_ids = 1;
	um->to.n_ids = 1;
	um->from.ids[0].value = order ? "sender-a" : "urn:test:sender";
	um->from.ids[0].type = order ? UNREG : NULL;
	um->from.role = ROLE "initiator";
	um->to.ids[0].value = order ? "gateway-b" : "urn:test:gateway";
	um->to.ids[0].type = order ? UNREG : NULL;
	um->to.role = ROLE "responder";
	um->agreement_ref = order ? "urn:test:orders" : NULL;
	um->agreement_type = order ? "urn:test:agreement-type" : NULL;
	um->service = order ? "urn:test:service:orders" : "invoicing";
	um->service_type = order ? NULL : "urn:test:service-type";
	um->action = order ? "SubmitOrder" : "SubmitInvoice";
	return um;
}

/* Apply a case's one change to um. */
static void
pmode_apply(struct ebms_user_message *um, const struct pmode_case *t)
{
	switch (t->field) {
	case F_NONE: break;
	case F_AGREEMENT: um->agreement_ref = t->value; break;
	case F_AGREEMENT_TYPE: um->agreement_type = t->value; break;
	case F_PMODE: um->agreement_pmode = t->value; break;
	case F_FROM_ID: um->from.ids[0].value = t->value; break;
	case F_FROM_TYPE: um->from.ids[0].type = t->value; break;
	case F_FROM_ROLE: um->from.role = t->value; break;
	case F_TO_ID: um->to.ids[0].value = t->value; break;
	case F_TO_TYPE: um->to.ids[0].type = t->value; break;
	case F_TO_ROLE: um->to.role = t->value; break;
	case F_SERVICE: um->service = t->value; break;
	case F_SERVICE_TYPE: um->service_type = t->value; break;
	case F_ACTION: um->action = t->value; break;
	case F_FROM_EXTRA:
	case F_FROM_OTHERS:
		/* the extra id first; F_FROM_OTHERS spoils the second */
		um->from.ids[1] = um->from.ids[0];
		um->from.ids[0].value = t->value;
		um->from.ids[0].type = UNREG;
		um->from.n_ids = 2;
		if (t->field == F_FROM_OTHERS)
			um->from.ids[1].value = "sender-z";
		break;
	}
}

/* Every case: the expected leg, or EBMS:0010 with the expected detail. */
static void
test_pmode_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pmode_cases) / sizeof(pmode_cases[0]); i++) {
		const struct pmode_case *t = &pmode_cases[i];
		struct arena *a = arena_new(0);
		const struct pmode_leg *leg = NULL;
		struct ebms_user_message *um;
		struct err err;
		int rc;

		assert_non_null(a);
		err_clear(&err);
		um = pmode_base(a, t->base);
		pmode_apply(um, t);
		rc = pmode_match(pmode_conf, um, &leg, &err);
		if (t->leg != NULL) {
			if (rc != 1 || leg == NULL || strcmp(leg->id, t->leg) != 0)
				fail_msg("%s: rc %d leg %s (%s)", t->name, rc,
				    leg != NULL ? leg->id : "none", err.detail);
			assert_int_equal(err.kind, ERR_NONE);
		} else {
			if (rc != -1 || leg != NULL)
				fail_msg("%s: matched %s", t->name,
				    leg != NULL ? leg->id : "?");
			assert_int_equal(err.kind, ERR_EBMS);
			assert_string_equal(err.ebms_code, "EBMS:0010");
			assert_string_equal(err.msg, "no P-Mode matches the message");
			if (strstr(err.detail, t->detail) == NULL)
				fail_msg("%s: detail \"%s\" lacks \"%s\"", t->name,
				    err.detail, t->detail);
		}
		arena_free(a);
	}
}

/* No legs at all (conf refuses that; pmode must still answer 0010). */
static void
test_pmode_no_legs(void **state)
{
	struct conf empty;
	struct arena *a = arena_new(0);
	const struct pmode_leg *leg = NULL;
	struct err err;

	(void)state;
	memset(&empty, 0, sizeof(empty));
	err_clear(&err);
	assert_int_equal(pmode_match(&empty, pmode_base(a, BASE_ORDER), &leg,
	    &err), -1);
	assert_null(leg);
	assert_string_equal(err.ebms_code, "EBMS:0010");
	assert_non_null(strstr(err.detail, "no P-Mode legs configured"));
	arena_free(a);
}

/* A message without any PartyId (hand-built) matches nothing. */
static void
test_pmode_no_party_ids(void **state)
{
	struct arena *a = arena_new(0);
	const struct pmode_leg *leg = NULL;
	struct ebms_user_message *um;
	struct err err;

	(void)state;
	err_clear(&err);
	um = pmode_base(a, BASE_ORDER);
	um->from.n_ids = 0;
	assert_int_equal(pmode_match(pmode_conf, um, &leg, &err), -1);
	assert_non_null(strstr(err.detail,
	    "leg \"order\": From/PartyId differs: got none"));
	arena_free(a);
}

/* ---- issue 10: party identity (tests/unit/conf/pmode-party.xml) ----- */

#define PA { UNREG, "party-a" }
#define PA2 { NULL, "urn:test:party-a" }
#define PB { UNREG, "party-b" }
#define PC { UNREG, "party-c" }
#define PD { UNREG, "party-d" }
#define PR { UNREG, "party-r" }
#define GW { UNREG, "gw" }
#define GW2 { NULL, "urn:test:gw" }

/* A message's From and To PartyIds, Action and @pmode, and the answer. */
struct pmode_party_case {
	const char *name;
	struct ebms_party_id from[3];
	size_t n_from;
	struct ebms_party_id to[2];
	size_t n_to;
	const char *action;
	const char *pmode;      /* AgreementRef/@pmode, or NULL */
	const char *leg;        /* expected leg, or NULL: refused */
	const char *code;       /* when refused */
	const char *detail;     /* substring of err.detail when refused */
};

static const struct pmode_party_case pmode_party_cases[] = {
	{ "one PartyId of A", { PA }, 1, { GW }, 1, "Submit", NULL,
	    "a-orders", NULL, NULL },
	{ "both PartyIds of A, either order", { PA2, PA }, 2, { GW2, GW }, 2,
	    "Submit", NULL, "a-orders", NULL, NULL },
	{ "A borrowed by B on A's signed leg", { PA, PB }, 2, { GW }, 1,
	    "Submit", NULL, NULL, "EBMS:0101", "From mixes the PartyIds of "
	    "leg \"a-orders\" (signing required) with another leg's party: "
	    "\"party-b\"" },
	{ "B first, then A", { PB, PA }, 2, { GW }, 1, "Submit", NULL, NULL,
	    "EBMS:0101", "leg \"a-orders\"" },
	{ "B's leg named by @pmode", { PA, PB }, 2, { GW }, 1, "Submit",
	    "b-orders", NULL, "EBMS:0101", "From mixes" },
	{ "unsigned C borrowing signed A", { PC, PA }, 2, { GW }, 1, "Submit",
	    NULL, NULL, "EBMS:0101", "leg \"a-orders\"" },
	{ "A with B's optional signing leg", { PB, PA2 }, 2, { GW }, 1,
	    "Submit", NULL, NULL, "EBMS:0101", NULL },
	{ "two unsigned parties mixed", { PC, PD }, 2, { GW }, 1, "Submit",
	    NULL, NULL, "EBMS:0010", "From/PartyId differs" },
	{ "A with an unknown PartyId", { PA, { UNREG, "party-x" } }, 2,
	    { GW }, 1, "Submit", NULL, NULL, "EBMS:0010", "leg \"a-orders\": "
	    "From/PartyId differs: got \"party-a\" (type \"" UNREG "\"), "
	    "\"party-x\" (type \"" UNREG "\"), leg has \"party-a\" (type \""
	    UNREG "\"), \"urn:test:party-a\"" },
	{ "A's value with the wrong type", { { NULL, "party-a" } }, 1, { GW },
	    1, "Submit", NULL, NULL, "EBMS:0010", "From/PartyId differs" },
	{ "To: another party and the gateway", { PA }, 1,
	    { { UNREG, "other" }, GW }, 2, "Submit", NULL, NULL, "EBMS:0010",
	    "leg \"a-orders\": To/PartyId differs: got \"other\"" },
	{ "@pmode naming another party's leg", { PA }, 1, { GW }, 1, "Submit",
	    "c-orders", NULL, "EBMS:0010", "leg \"a-orders\": "
	    "AgreementRef/@pmode differs" },
	{ "one route, no @pmode: ambiguous", { PR }, 1, { GW }, 1, "Route",
	    NULL, NULL, "EBMS:0010", "ambiguous: legs r1, r2" },
	{ "one route, @pmode r2", { PR }, 1, { GW }, 1, "Route", "r2", "r2",
	    NULL, NULL },
	{ "one route, @pmode r1", { PR }, 1, { GW }, 1, "Route", "r1", "r1",
	    NULL, NULL },
	{ "one route, @pmode unknown", { PR }, 1, { GW }, 1, "Route", "r3",
	    NULL, "EBMS:0010", "AgreementRef/@pmode differs: got \"r3\"" },
};

/* Check one party case against conf. */
static void
pmode_party_check(const struct conf *conf, const struct pmode_party_case *t)
{
	struct ebms_user_message um;
	const struct pmode_leg *leg = NULL;
	struct err err;
	int rc;

	memset(&um, 0, sizeof(um));
	err_clear(&err);
	um.message_id = "m1@test";
	um.from.ids = (struct ebms_party_id *)(uintptr_t)t->from;
	um.from.n_ids = t->n_from;
	um.to.ids = (struct ebms_party_id *)(uintptr_t)t->to;
	um.to.n_ids = t->n_to;
	um.service = "urn:test:svc";
	um.action = t->action;
	um.agreement_pmode = t->pmode;
	rc = pmode_match(conf, &um, &leg, &err);
	if (t->leg != NULL) {
		if (rc != 1 || leg == NULL || strcmp(leg->id, t->leg) != 0)
			fail_msg("%s: rc %d leg %s (%s)", t->name, rc,
			    leg != NULL ? leg->id : "none", err.detail);
		return;
	}
	if (rc != -1 || leg != NULL)
		fail_msg("%s: matched %s", t->name, leg != NULL ? leg->id : "?");
	assert_int_equal(err.kind, ERR_EBMS);
	if (strcmp(err.ebms_code, t->code) != 0)
		fail_msg("%s: %s (%s), want %s", t->name, err.ebms_code,
		    err.detail, t->code);
	/* the partner's text is fixed: the legs are named in the log only */
	if (strcmp(t->code, "EBMS:0101") == 0)
		assert_string_equal(err.msg, "signature check failed");
	else if (strstr(err.detail, "ambiguous") != NULL)
		assert_string_equal(err.msg,
		    "more than one P-Mode matches the message");
	else
		assert_string_equal(err.msg, "no P-Mode matches the message");
	if (t->detail != NULL && strstr(err.detail, t->detail) == NULL)
		fail_msg("%s: detail \"%s\" lacks \"%s\"", t->name,
		    err.detail, t->detail);
}

/*
 * Every PartyId of From (To) must be one the leg lists for its party; a
 * From that mixes a signed leg's party with another's is EBMS:0101; two
 * matching legs are refused unless @pmode names one.
 */
static void
test_pmode_party(void **state)
{
	struct conf *conf = NULL;
	struct err err;
	size_t i;

	(void)state;
	err_clear(&err);
	if (conf_load(AS4GW_SOURCE_DIR "/tests/unit/conf/pmode-party.xml",
	    &conf, &err) == -1)
		fail_msg("%s", err.msg);
	for (i = 0; i < sizeof(pmode_party_cases) /
	    sizeof(pmode_party_cases[0]); i++)
		pmode_party_check(conf, &pmode_party_cases[i]);
	conf_free(conf);
}

/* ---- issue 12: network legs (tests/unit/conf/pmode-network.xml) ---- */

#define AP(v) { "urn:test:ap", v }

static const struct pmode_network_case {
	const char *name;
	struct ebms_party_id from[2];
	size_t n_from;
	const char *service, *service_type, *action;
	const char *leg;        /* expected leg, or NULL: EBMS:0010 */
	const char *detail;     /* substring of err.detail when refused */
} pmode_network_cases[] = {
	{ "a member, first service, any action", { AP("POP1") }, 1,
	    "urn:test:svc", NULL, "Anything", "net", NULL },
	{ "another member, second service", { AP("POP2") }, 1, "other-svc",
	    "t", "Submit", "net", NULL },
	{ "second service without its type", { AP("POP1") }, 1, "other-svc",
	    NULL, "x", NULL, "leg \"net\": Service/@type differs" },
	{ "a service not listed", { AP("POP1") }, 1, "urn:nope", NULL, "x",
	    NULL, "Service differs: got \"urn:nope\", leg has "
	    "\"urn:test:svc\" and others" },
	{ "two PartyIds", { AP("POP1"), AP("POP2") }, 2, "urn:test:svc", NULL,
	    "x", NULL, "leg has one PartyId of type \"urn:test:ap\"" },
	{ "the member's id untyped", { { NULL, "POP1" } }, 1, "urn:test:svc",
	    NULL, "x", NULL, "From/PartyId differs" },
	{ "the listed party", { { NULL, "urn:test:listed" } }, 1,
	    "urn:test:svc", NULL, "Submit", "listed", NULL },
	/* the closest leg is the open one (its Action is any) */
	{ "the listed party, another action", { { NULL, "urn:test:listed" } },
	    1, "urn:test:svc", NULL, "Cancel", NULL, "leg \"net\": "
	    "From/PartyId differs: got \"urn:test:listed\"" },
};

/* An open From takes one PartyId of the party rule's type; Service is one
 * of the listed, Action any; the listed leg beside it is unchanged. */
static void
test_pmode_network(void **state)
{
	static const struct ebms_party_id gw = GW;
	const struct pmode_network_case *t;
	const struct pmode_leg *leg;
	struct ebms_user_message um;
	struct conf *conf = NULL;
	struct err err;
	size_t i;
	int rc;

	(void)state;
	err_clear(&err);
	if (conf_load(AS4GW_SOURCE_DIR "/tests/unit/conf/pmode-network.xml",
	    &conf, &err) == -1)
		fail_msg("%s (%s)", err.msg, err.detail);
	for (i = 0; i < sizeof(pmode_network_cases) /
	    sizeof(pmode_network_cases[0]); i++) {
		t = &pmode_network_cases[i];
		memset(&um, 0, sizeof(um));
		um.message_id = "m1@test";
		um.from.ids = (struct ebms_party_id *)(uintptr_t)t->from;
		um.from.n_ids = t->n_from;
		um.to.ids = (struct ebms_party_id *)(uintptr_t)&gw;
		um.to.n_ids = 1;
		um.service = t->service;
		um.service_type = t->service_type;
		um.action = t->action;
		leg = NULL;
		err_clear(&err);
		rc = pmode_match(conf, &um, &leg, &err);
		if (t->leg != NULL && (rc != 1 || strcmp(leg->id, t->leg) != 0))
			fail_msg("%s: rc %d (%s)", t->name, rc, err.detail);
		if (t->leg == NULL && (rc != -1 ||
		    strcmp(err.ebms_code, "EBMS:0010") != 0 ||
		    strstr(err.detail, t->detail) == NULL))
			fail_msg("%s: rc %d %s \"%s\"", t->name, rc,
			    err.ebms_code != NULL ? err.ebms_code : "", err.detail);
	}
	conf_free(conf);
}

/* Load the legs once for the group. */
static int
pmode_setup(void **state)
{
	struct err err;

	(void)state;
	err_clear(&err);
	if (conf_load(AS4GW_SOURCE_DIR "/tests/unit/conf/pmode-legs.xml",
	    &pmode_conf, &err) == -1) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

/* Free the legs. */
static int
pmode_teardown(void **state)
{
	(void)state;
	conf_free(pmode_conf);
	pmode_conf = NULL;
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmode_table),
		cmocka_unit_test(test_pmode_no_legs),
		cmocka_unit_test(test_pmode_no_party_ids),
		cmocka_unit_test(test_pmode_party),
		cmocka_unit_test(test_pmode_network),
	};

	xml_global_init();
	return cmocka_run_group_tests(tests, pmode_setup, pmode_teardown);
}
