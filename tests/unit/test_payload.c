/* Unit tests for src/payload: the content hash that separates retry from drift. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "testutil.h"
#include "payload/payload.h"
#include "util/codec.h"

#define ROLE_INIT "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"
#define ROLE_RESP "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"
#define PTYPE "urn:oasis:names:tc:ebcore:partyid-type:unregistered"

/*
 * SHA-256 of the base fixture, computed independently (Python, from the
 * encoding documented in payload.h).  Stored hashes are compared with later
 * retries: if this changes, the encoding changed and needs a new tag.
 */
#define BASE_HASH_HEX \
	"33c8c172be44b688f9cd27bb7f500b2f08cf99f04d2f74741b2ac6606e3caa22"

/* A UserMessage built from arrays the mutators below may change. */
struct fixture {
	struct ebms_party_id from_ids[2], to_ids[1];
	struct ebms_property props[2];
	struct ebms_property part_props[2][2];
	struct ebms_part parts[2];
	unsigned char data0[9], data1[4];
	struct ebms_user_message um;
};

static void
fixture_init(struct fixture *f)
{
	static const unsigned char d0[9] = { '<', 'a', '>', 0, 'b', '<', '/', 'a', '>' };
	static const unsigned char d1[4] = { 0x00, 0xff, 0x10, 0x00 };

	memset(f, 0, sizeof(*f));
	memcpy(f->data0, d0, sizeof(d0));
	memcpy(f->data1, d1, sizeof(d1));
	f->from_ids[0] = (struct ebms_party_id){ PTYPE, "sender" };
	f->from_ids[1] = (struct ebms_party_id){ NULL, "urn:example:sender-alt" };
	f->to_ids[0] = (struct ebms_party_id){ PTYPE, "receiver" };
	f->props[0] = (struct ebms_property){ "originalSender", NULL, "urn:sender" };
	f->props[1] = (struct ebms_property){ "finalRecipient", NULL, "urn:recipient" };
	f->part_props[0][0] = (struct ebms_property){ "MimeType", NULL, "application/xml" };
	f->part_props[0][1] = (struct ebms_property){ "CharacterSet", NULL, "utf-8" };
	f->part_props[1][0] = (struct ebms_property){ "MimeType", NULL, "application/octet-stream" };
	f->parts[0].href = "cid:part1@as4gw.test";
	f->parts[0].content_id = "part1@as4gw.test";
	f->parts[0].props = f->part_props[0];
	f->parts[0].n_props = 2;
	f->parts[0].data = f->data0;
	f->parts[0].len = sizeof(f->data0);
	f->parts[0].media_type = "application/xml";
	f->parts[1].href = "cid:part2@as4gw.test";
	f->parts[1].content_id = "part2@as4gw.test";
	f->parts[1].props = f->part_props[1];
	f->parts[1].n_props = 1;
	f->parts[1].data = f->data1;
	f->parts[1].len = sizeof(f->data1);
	f->um.message_id = "msg-1@as4gw.test";
	f->um.timestamp = "2026-01-02T03:04:05.678Z";
	f->um.timestamp_ms = 1767323045678;
	f->um.from = (struct ebms_party){ f->from_ids, 2, ROLE_INIT };
	f->um.to = (struct ebms_party){ f->to_ids, 1, ROLE_RESP };
	f->um.agreement_ref = "urn:agreement:1";
	f->um.service = "urn:example:service";
	f->um.action = "Deliver";
	f->um.conversation_id = "conv-1";
	f->um.props = f->props;
	f->um.n_props = 2;
	f->um.parts = f->parts;
	f->um.n_parts = 2;
}

static void
fixture_hash(struct fixture *f, unsigned char out[CODEC_SHA256_LEN])
{
	assert_int_equal(payload_content_hash(&f->um, out), 0);
}

/* ---- mutations: what a retry may change (same) and may not (different) */

static void m_none(struct fixture *f) { (void)f; }
static void m_timestamp(struct fixture *f)
{
	f->um.timestamp = "2026-01-02T03:09:59Z";
	f->um.timestamp_ms = 1767323399000;
}
static void m_mpc(struct fixture *f) { f->um.mpc = "urn:example:mpc"; }
static void m_media_type(struct fixture *f) { f->parts[0].media_type = "text/xml"; }
static void m_nodes(struct fixture *f)
{
	f->um.messaging = (xmlNodePtr)f;   /* another document: never dereferenced */
	f->um.node = (xmlNodePtr)f;
	f->parts[0].node = (xmlNodePtr)f;
}
static void m_message_id(struct fixture *f) { f->um.message_id = "msg-2@as4gw.test"; }
static void m_ref_to(struct fixture *f) { f->um.ref_to_message_id = "msg-0@as4gw.test"; }
static void m_ref_to_empty(struct fixture *f) { f->um.ref_to_message_id = ""; }
static void m_from_role(struct fixture *f) { f->um.from.role = ROLE_RESP; }
static void m_from_value(struct fixture *f) { f->from_ids[0].value = "sender2"; }
static void m_from_type(struct fixture *f) { f->from_ids[1].type = PTYPE; }
static void m_from_second_id(struct fixture *f) { f->um.from.n_ids = 1; }
static void m_to_value(struct fixture *f) { f->to_ids[0].value = "receiver2"; }
static void m_to_role(struct fixture *f) { f->um.to.role = ROLE_INIT; }
static void m_parties_swapped(struct fixture *f)
{
	struct ebms_party t = f->um.from;

	f->um.from = f->um.to;
	f->um.to = t;
}
static void m_agreement(struct fixture *f) { f->um.agreement_ref = "urn:agreement:2"; }
static void m_agreement_absent(struct fixture *f) { f->um.agreement_ref = NULL; }
static void m_agreement_empty(struct fixture *f) { f->um.agreement_ref = ""; }
static void m_agreement_type(struct fixture *f) { f->um.agreement_type = "x"; }
static void m_agreement_pmode(struct fixture *f) { f->um.agreement_pmode = "p"; }
static void m_service(struct fixture *f) { f->um.service = "urn:example:service2"; }
static void m_service_type(struct fixture *f) { f->um.service_type = "t"; }
static void m_action(struct fixture *f) { f->um.action = "Deliver2"; }
static void m_conversation(struct fixture *f) { f->um.conversation_id = "conv-2"; }
static void m_prop_value(struct fixture *f) { f->props[0].value = "urn:sender2"; }
static void m_prop_name(struct fixture *f) { f->props[1].name = "finalrecipient"; }
static void m_prop_type(struct fixture *f) { f->props[0].type = "string"; }
static void m_prop_dropped(struct fixture *f) { f->um.n_props = 1; }
static void m_props_swapped(struct fixture *f)
{
	struct ebms_property t = f->props[0];

	f->props[0] = f->props[1];
	f->props[1] = t;
}
static void m_href(struct fixture *f) { f->parts[1].href = "cid:part3@as4gw.test"; }
static void m_href_absent(struct fixture *f) { f->parts[1].href = NULL; }
static void m_part_prop_value(struct fixture *f) { f->part_props[0][1].value = "UTF-8"; }
static void m_part_prop_dropped(struct fixture *f) { f->parts[0].n_props = 1; }
static void m_payload_byte(struct fixture *f) { f->data0[3] = 1; }
static void m_payload_last_byte(struct fixture *f) { f->data1[3] = 1; }
static void m_payload_shorter(struct fixture *f) { f->parts[1].len = 3; }
static void m_payload_empty(struct fixture *f)
{
	f->parts[1].data = NULL;
	f->parts[1].len = 0;
}
static void m_part_dropped(struct fixture *f) { f->um.n_parts = 1; }
static void m_parts_swapped(struct fixture *f)
{
	struct ebms_part t = f->parts[0];

	f->parts[0] = f->parts[1];
	f->parts[1] = t;
}
/* field boundaries: the same bytes split differently must differ */
static void m_split_service_action(struct fixture *f)
{
	f->um.service = "urn:example:servic";
	f->um.action = "eDeliver";
}
static void m_split_party(struct fixture *f)
{
	/* a "type:value" rendering would make these equal; the hash must not */
	f->from_ids[0].type = "urn:oasis:names:tc:ebcore:partyid-type";
	f->from_ids[0].value = "unregistered:sender";
}
static void m_split_prop(struct fixture *f)
{
	f->props[0].name = "originalSenderurn:";
	f->props[0].value = "sender";
}
static void m_split_payload_href(struct fixture *f)
{
	/* move the last payload byte of part 0 into part 1's href */
	f->parts[0].len = 8;
	f->parts[1].href = ">cid:part2@as4gw.test";
}

struct hash_case {
	const char *name;
	void (*mutate)(struct fixture *f);
	int same;  /* 1: the hash must not change */
};

static const struct hash_case hash_cases[] = {
	{ "rebuilt identically", m_none, 1 },
	{ "timestamp", m_timestamp, 1 },
	{ "mpc (not covered)", m_mpc, 1 },
	{ "media type outside PartProperties", m_media_type, 1 },
	{ "xml node pointers", m_nodes, 1 },
	{ "message id", m_message_id, 0 },
	{ "ref to message id", m_ref_to, 0 },
	{ "ref to message id empty vs absent", m_ref_to_empty, 0 },
	{ "from role", m_from_role, 0 },
	{ "from party value", m_from_value, 0 },
	{ "from party type", m_from_type, 0 },
	{ "from second party id dropped", m_from_second_id, 0 },
	{ "to party value", m_to_value, 0 },
	{ "to role", m_to_role, 0 },
	{ "from and to swapped", m_parties_swapped, 0 },
	{ "agreement ref", m_agreement, 0 },
	{ "agreement ref absent", m_agreement_absent, 0 },
	{ "agreement ref empty", m_agreement_empty, 0 },
	{ "agreement type", m_agreement_type, 0 },
	{ "agreement pmode", m_agreement_pmode, 0 },
	{ "service", m_service, 0 },
	{ "service type", m_service_type, 0 },
	{ "action", m_action, 0 },
	{ "conversation id", m_conversation, 0 },
	{ "message property value", m_prop_value, 0 },
	{ "message property name", m_prop_name, 0 },
	{ "message property type", m_prop_type, 0 },
	{ "message property dropped", m_prop_dropped, 0 },
	{ "message properties reordered", m_props_swapped, 0 },
	{ "part href", m_href, 0 },
	{ "part href absent", m_href_absent, 0 },
	{ "part property value", m_part_prop_value, 0 },
	{ "part property dropped", m_part_prop_dropped, 0 },
	{ "one payload byte (after a NUL)", m_payload_byte, 0 },
	{ "last payload byte", m_payload_last_byte, 0 },
	{ "payload shorter", m_payload_shorter, 0 },
	{ "payload empty", m_payload_empty, 0 },
	{ "part dropped", m_part_dropped, 0 },
	{ "parts reordered", m_parts_swapped, 0 },
	{ "boundary service/action", m_split_service_action, 0 },
	{ "boundary party type/value", m_split_party, 0 },
	{ "boundary property name/value", m_split_prop, 0 },
	{ "boundary payload/next href", m_split_payload_href, 0 },
};

/* Every case against the unchanged base, from separately built fixtures. */
static void
test_hash_cases(void **state)
{
	struct fixture base, f;
	unsigned char h0[CODEC_SHA256_LEN], h1[CODEC_SHA256_LEN];
	size_t i;

	(void)state;
	fixture_init(&base);
	fixture_hash(&base, h0);
	for (i = 0; i < sizeof(hash_cases) / sizeof(hash_cases[0]); i++) {
		fixture_init(&f);
		hash_cases[i].mutate(&f);
		fixture_hash(&f, h1);
		if ((memcmp(h0, h1, sizeof(h0)) == 0) != hash_cases[i].same)
			fail_msg("case \"%s\": hash %s", hash_cases[i].name,
			    hash_cases[i].same ? "changed" : "did not change");
	}
}

/* No two mutations that must differ from the base collide with each other. */
static void
test_hash_cases_distinct(void **state)
{
	enum { N = sizeof(hash_cases) / sizeof(hash_cases[0]) };
	unsigned char h[N][CODEC_SHA256_LEN];
	struct fixture f;
	size_t i, j;

	(void)state;
	for (i = 0; i < N; i++) {
		fixture_init(&f);
		hash_cases[i].mutate(&f);
		fixture_hash(&f, h[i]);
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			if (!hash_cases[i].same && !hash_cases[j].same &&
			    memcmp(h[i], h[j], CODEC_SHA256_LEN) == 0)
				fail_msg("\"%s\" and \"%s\" collide",
				    hash_cases[i].name, hash_cases[j].name);
}

/* The encoding is pinned: a known answer for the base fixture. */
static void
test_hash_known_answer(void **state)
{
	struct fixture f;
	unsigned char h[CODEC_SHA256_LEN];
	char hex[2 * CODEC_SHA256_LEN + 1];

	(void)state;
	fixture_init(&f);
	fixture_hash(&f, h);
	codec_hex(h, sizeof(h), hex);
	assert_string_equal(hex, BASE_HASH_HEX);
}

/* A minimal message: no properties, no parts, no optional fields. */
static void
test_hash_minimal(void **state)
{
	struct ebms_party_id id = { NULL, "urn:a" };
	struct ebms_user_message um;
	unsigned char h1[CODEC_SHA256_LEN], h2[CODEC_SHA256_LEN];

	(void)state;
	memset(&um, 0, sizeof(um));
	um.message_id = "m";
	um.from = (struct ebms_party){ &id, 1, ROLE_INIT };
	um.to = (struct ebms_party){ &id, 1, ROLE_RESP };
	um.service = "urn:s";
	um.action = "a";
	um.conversation_id = "c";
	assert_int_equal(payload_content_hash(&um, h1), 0);
	um.conversation_id = "";
	assert_int_equal(payload_content_hash(&um, h2), 0);
	assert_memory_not_equal(h1, h2, sizeof(h1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_cases),
		cmocka_unit_test(test_hash_cases_distinct),
		cmocka_unit_test(test_hash_known_answer),
		cmocka_unit_test(test_hash_minimal),
	};

	return cmocka_run_group_tests_name("payload", tests, NULL, NULL);
}
