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
	{ "second PartyId matches", BASE_ORDER, F_FROM_EXTRA, "sender-other",
	    "order", NULL },
	{ "no PartyId matches", BASE_ORDER, F_FROM_EXTRA, "sender-other", NULL,
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
		/* the extra id first; the case without a leg spoils the second */
		um->from.ids[1] = um->from.ids[0];
		um->from.ids[0].value = t->value;
		um->from.ids[0].type = UNREG;
		um->from.n_ids = 2;
		if (t->leg == NULL)
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
	};

	xml_global_init();
	return cmocka_run_group_tests(tests, pmode_setup, pmode_teardown);
}
