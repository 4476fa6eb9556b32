/*
 * Unit tests for src/gateway: one push end to end without HTTP, over a real
 * SQLite file, with keys from certs/gen-dev-pki.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "testutil.h"
#include "conf/conf.h"
#include "gateway/gateway.h"
#include "store/store.h"
#include "wss/wss.h"
#include "xml/xml.h"

struct fixture {
	char dir[64];
	struct conf *conf;
	struct gateway *gw;
	struct store *store;
};

#define ROLE "http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/"

static const char config_fmt[] =
    "<as4gw xmlns=\"urn:as4gw:config:1\"><gateway>"
    "<store>sqlite:%s/gw.db</store>"
    "<signing><certificate>%s/gateway.crt</certificate>"
    "<key>%s/gateway.key</key></signing>"
    /* the messages below are judged at this instant (eb:Timestamp age) */
    "<replay><verifyAt>2026-11-30T10:05:00Z</verifyAt></replay></gateway>"
    "<pmode id=\"t\"><from role=\"" ROLE "initiator\"><partyId>urn:a</partyId>"
    "</from><to role=\"" ROLE "responder\"><partyId>urn:b</partyId></to>"
    "<service>urn:s</service><action>A</action>"
    "<security signing=\"never\" encryption=\"never\"/></pmode></as4gw>";

static const char envelope_fmt[] =
    "<S:Envelope xmlns:S=\"http://www.w3.org/2003/05/soap-envelope\" "
    "xmlns:eb=\"http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/\">"
    "<S:Header><eb:Messaging S:mustUnderstand=\"true\"><eb:UserMessage>"
    "<eb:MessageInfo><eb:Timestamp>%s</eb:Timestamp>"
    "<eb:MessageId>%s</eb:MessageId></eb:MessageInfo><eb:PartyInfo>"
    "<eb:From><eb:PartyId>urn:a</eb:PartyId><eb:Role>" ROLE "initiator</eb:Role></eb:From>"
    "<eb:To><eb:PartyId>urn:b</eb:PartyId><eb:Role>" ROLE "responder</eb:Role></eb:To>"
    "</eb:PartyInfo><eb:CollaborationInfo><eb:Service>urn:s</eb:Service>"
    "<eb:Action>%s</eb:Action><eb:ConversationId>c</eb:ConversationId>"
    "</eb:CollaborationInfo><eb:PayloadInfo><eb:PartInfo href=\"cid:p1\"/>"
    "</eb:PayloadInfo></eb:UserMessage></eb:Messaging></S:Header><S:Body/>"
    "</S:Envelope>";

/* A multipart body with one payload stamped ts; returns malloc'd bytes. */
static char *
message_at(const char *mid, const char *action, const char *payload,
    const char *ts, size_t *ret_len)
{
	char env[4096], *out = malloc(8192);
	int n;

	(void)snprintf(env, sizeof(env), envelope_fmt, ts, mid, action);
	n = snprintf(out, 8192,
	    "--b\r\nContent-Type: application/soap+xml\r\n\r\n%s\r\n"
	    "--b\r\nContent-Type: application/xml\r\nContent-ID: <p1>\r\n\r\n%s\r\n"
	    "--b--\r\n", env, payload);
	*ret_len = (size_t)n;
	return out;
}

/* The same, stamped five minutes before the fixture's verifyAt. */
static char *
message(const char *mid, const char *action, const char *payload, size_t *ret_len)
{
	return message_at(mid, action, payload, "2026-11-30T10:00:00Z", ret_len);
}

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char cmd[512], path[128], text[2048];
	struct err err = {0};
	FILE *fp;

	(void)snprintf(f->dir, sizeof(f->dir), "/tmp/as4gw-gw-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	(void)snprintf(cmd, sizeof(cmd), "bash %s/certs/gen-dev-pki.sh %s >/dev/null 2>&1",
	    AS4GW_SOURCE_DIR, f->dir);
	if (system(cmd) != 0)
		return -1;
	(void)snprintf(path, sizeof(path), "%s/as4gw.xml", f->dir);
	(void)snprintf(text, sizeof(text), config_fmt, f->dir, f->dir, f->dir);
	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	(void)fputs(text, fp);
	(void)fclose(fp);
	xml_global_init();
	if (wss_global_init(&err) == -1 || conf_load(path, &f->conf, &err) == -1 ||
	    gateway_new(f->conf, &f->gw, &err) == -1 ||
	    store_open(f->conf->store_dsn, &f->store, &err) == -1 ||
	    store_migrate(f->store, &err) == -1) {
		fprintf(stderr, "setup: %s (%s)\n", err.msg, err.detail);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	store_close(f->store);
	gateway_free(f->gw);
	conf_free(f->conf);
	(void)snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	(void)system(cmd);
	free(f);
	return 0;
}

/* Run one request and return the answer (body owned by the caller). */
static void
run(struct fixture *f, struct store *s, const char *ctype, const char *body,
    size_t len, struct gateway_answer *ans)
{
	struct gateway_request req = {ctype, (const unsigned char *)body, len, "test", NULL};
	struct arena *a = arena_new(0);

	assert_int_equal(gateway_receive(f->gw, s, a, &req, ans), 0);
	arena_free(a);  /* answer strings used below are static or copied */
}

#define CT "multipart/related; boundary=b; type=\"application/soap+xml\""

static void
test_new_then_duplicate(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a1, a2;
	size_t len;
	char *m = message("g1@test", "A", "<x/>", &len);

	run(f, f->store, CT, m, len, &a1);
	assert_int_equal(a1.status, 200);
	assert_string_equal(a1.outcome, "new");
	assert_non_null(strstr(a1.body.data, "RefToMessageId>g1@test<"));
	assert_non_null(strstr(a1.body.data, ":Receipt>"));
	run(f, f->store, CT, m, len, &a2);
	assert_int_equal(a2.status, 200);
	assert_string_equal(a2.outcome, "duplicate");
	assert_int_equal(a2.body.len, a1.body.len);
	assert_memory_equal(a2.body.data, a1.body.data, a1.body.len);
	buf_free(&a1.body);
	buf_free(&a2.body);
	free(m);
}

static void
test_drift(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a1, a2;
	size_t len1, len2;
	char *m1 = message("g2@test", "A", "<x>1</x>", &len1);
	char *m2 = message("g2@test", "A", "<x>2</x>", &len2);

	run(f, f->store, CT, m1, len1, &a1);
	run(f, f->store, CT, m2, len2, &a2);
	assert_string_equal(a1.outcome, "new");
	assert_string_equal(a2.outcome, "drift");
	assert_string_equal(a2.ebms_code, "EBMS:0004");
	assert_int_equal(a2.status, 200);
	assert_non_null(strstr(a2.body.data, "errorCode=\"EBMS:0004\""));
	buf_free(&a1.body);
	buf_free(&a2.body);
	free(m1);
	free(m2);
}

/* No store connection: everything before the store still runs, answer 503. */
static void
test_no_store_is_503(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a;
	size_t len;
	char *m = message("g3@test", "A", "<x/>", &len);

	run(f, NULL, CT, m, len, &a);
	assert_int_equal(a.status, 503);
	assert_int_equal(a.retry_after, 5);
	assert_int_equal(a.err.kind, ERR_STORE);
	buf_free(&a.body);
	free(m);
}

static const struct {
	const char *name, *ctype, *body;
	int status;
	const char *code;   /* ebMS code, or SOAP fault text, or NULL */
} refusals[] = {
	{"media type", "text/plain", "x", 415, NULL},
	{"no boundary", "multipart/related", "--b\r\n\r\nx\r\n--b--", 400, NULL},
	{"not xml", "application/soap+xml", "garbage", 400, "env:Sender"},
	{"doctype", "application/soap+xml", "<!DOCTYPE x><x/>", 400, "env:Sender"},
	{"no messaging", "application/soap+xml",
	    "<S:Envelope xmlns:S=\"http://www.w3.org/2003/05/soap-envelope\">"
	    "<S:Body/></S:Envelope>", 200, "EBMS:0009"},
};

static void
test_refusals(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a;
	size_t i;

	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		run(f, f->store, refusals[i].ctype, refusals[i].body,
		    strlen(refusals[i].body), &a);
		if (a.status != refusals[i].status)
			fail_msg("%s: status %d", refusals[i].name, a.status);
		assert_string_equal(a.outcome, "error");
		if (refusals[i].code != NULL &&
		    strstr(a.body.data, refusals[i].code) == NULL)
			fail_msg("%s: %s not in answer", refusals[i].name,
			    refusals[i].code);
		buf_free(&a.body);
	}
}

static void
test_pmode_mismatch(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a;
	size_t len;
	char *m = message("g4@test", "Other", "<x/>", &len);

	run(f, f->store, CT, m, len, &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.ebms_code, "EBMS:0010");
	assert_non_null(strstr(a.err.detail, "Action"));
	assert_non_null(strstr(a.body.data, "RefToMessageId>g4@test<"));
	buf_free(&a.body);
	free(m);
}

/*
 * The replay path end to end: the same bytes again are answered from the
 * cache (replayed, the stored Receipt); after the row is deleted behind the
 * gateway's back the cache does not decide: the full path stores it anew.
 */
static void
test_replay_path(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a1, a2, a3;
	sqlite3 *db = NULL;
	char path[128];
	size_t len;
	char *m = message("g9@test", "A", "<x>9</x>", &len);

	run(f, f->store, CT, m, len, &a1);
	assert_string_equal(a1.outcome, "new");
	assert_int_equal(a1.replayed, 0);
	run(f, f->store, CT, m, len, &a2);
	assert_string_equal(a2.outcome, "duplicate");
	assert_int_equal(a2.replayed, 1);
	assert_string_equal(a2.pmode, "t");
	assert_int_equal(a2.body.len, a1.body.len);
	assert_memory_equal(a2.body.data, a1.body.data, a1.body.len);
	/* another Content-Type is another key: verified in full */
	buf_free(&a2.body);
	run(f, f->store, CT "; charset=utf-8", m, len, &a2);
	assert_string_equal(a2.outcome, "duplicate");
	assert_int_equal(a2.replayed, 0);
	(void)snprintf(path, sizeof(path), "%s/gw.db", f->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_busy_timeout(db, 10000), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA foreign_keys = ON; DELETE "
	    "FROM inbox WHERE message_id = 'g9@test'", NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_changes(db), 1);
	(void)sqlite3_close(db);
	run(f, f->store, CT, m, len, &a3);
	assert_string_equal(a3.outcome, "new");
	assert_int_equal(a3.replayed, 0);
	buf_free(&a1.body);
	buf_free(&a2.body);
	buf_free(&a3.body);
	free(m);
}

/* Inbox rows of one MessageId in the fixture's SQLite file. */
static int
rows_of(struct fixture *f, const char *mid)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char path[128];
	int n = -1;

	(void)snprintf(path, sizeof(path), "%s/gw.db", f->dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM inbox "
	    "WHERE message_id = ?", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_bind_text(st, 1, mid, -1, SQLITE_STATIC),
	    SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	(void)sqlite3_close(db);
	return n;
}

/*
 * eb:Timestamp age (README "Message age"), judged at the fixture's verifyAt
 * 2026-11-30T10:05:00Z with the default retention (30 days) and skew (300
 * s): the oldest accepted stamp is 30 days minus one hour before it, the
 * newest 300 s after it; outside, EBMS:0101 and no row.
 */
static const struct {
	const char *mid, *ts;
	int ok;
} age_cases[] = {
	{"age1@test", "2026-10-31T11:05:00Z", 1},
	{"age2@test", "2026-10-31T11:04:59.999Z", 0},
	{"age3@test", "2026-11-30T10:10:00Z", 1},
	{"age4@test", "2026-11-30T10:10:00.001Z", 0},
	{"age5@test", "2026-11-30T12:05:00+02:00", 1},
	{"age6@test", "2025-11-30T10:00:00Z", 0},
};

static void
test_age(void **state)
{
	struct fixture *f = *state;
	struct gateway_answer a;
	size_t i, len;

	for (i = 0; i < sizeof(age_cases) / sizeof(age_cases[0]); i++) {
		char *m = message_at(age_cases[i].mid, "A", "<x/>",
		    age_cases[i].ts, &len);

		run(f, f->store, CT, m, len, &a);
		assert_int_equal(a.status, 200);
		if (age_cases[i].ok) {
			assert_string_equal(a.outcome, "new");
		} else {
			if (a.ebms_code == NULL ||
			    strcmp(a.ebms_code, "EBMS:0101") != 0)
				fail_msg("%s: not EBMS:0101", age_cases[i].ts);
			assert_non_null(strstr(a.err.detail, "eb:Timestamp"));
			assert_non_null(strstr(a.body.data,
			    "errorCode=\"EBMS:0101\""));
		}
		assert_int_equal(rows_of(f, age_cases[i].mid), age_cases[i].ok);
		buf_free(&a.body);
		free(m);
	}
}

/* The table itself: keys, windows, long ids, a slot taken by another key. */
static void
test_replay_table(void **state)
{
	struct gateway_replay *r = gateway_replay_new();
	struct gateway_request q1 = { "text/a", (const unsigned char *)"abc", 3,
	    NULL, NULL }, q2 = { "text/a", (const unsigned char *)"abd", 3,
	    NULL, NULL },
	    q3 = { NULL, (const unsigned char *)"abc", 3, NULL, NULL },
	    big = { "text/a", (const unsigned char *)"x",
	    GATEWAY_REPLAY_MAX_BODY + 1, NULL, NULL };
	unsigned char k1[GATEWAY_REPLAY_KEY_LEN], k2[GATEWAY_REPLAY_KEY_LEN];
	unsigned char k3[GATEWAY_REPLAY_KEY_LEN];
	struct gateway_replay_hit hit = { "m1@x", "urn:a", "t", {1, 2, 3},
	    {4, 5} };
	struct gateway_replay_hit got;
	struct arena *a = arena_new(0);
	char longid[300];

	(void)state;
	assert_non_null(r);
	assert_non_null(a);
	assert_int_equal(gateway_replay_key(&q1, k1), 1);
	assert_int_equal(gateway_replay_key(&q2, k2), 1);
	assert_int_equal(gateway_replay_key(&q3, k3), 1);
	assert_memory_not_equal(k1, k2, sizeof(k1));
	assert_memory_not_equal(k1, k3, sizeof(k1));
	assert_int_equal(gateway_replay_key(&big, k3), 0);
	assert_int_equal(gateway_replay_find(r, k1, 100, a, &got), 0);
	gateway_replay_note(r, k1, &hit, 100, 200);
	assert_int_equal(gateway_replay_find(r, k1, 99, a, &got), 0);
	assert_int_equal(gateway_replay_find(r, k1, 201, a, &got), 0);
	assert_int_equal(gateway_replay_find(r, k2, 150, a, &got), 0);
	assert_int_equal(gateway_replay_find(r, k1, 100, a, &got), 1);
	assert_int_equal(gateway_replay_find(r, k1, 200, a, &got), 1);
	assert_string_equal(got.message_id, "m1@x");
	assert_string_equal(got.from_party, "urn:a");
	assert_string_equal(got.pmode, "t");
	assert_memory_equal(got.content_hash, hit.content_hash,
	    sizeof(hit.content_hash));
	assert_memory_equal(got.content_hash_v1, hit.content_hash_v1,
	    sizeof(hit.content_hash_v1));
	/* a key landing in the same slot replaces it: k1 is then unknown */
	memcpy(k3, k1, sizeof(k3));
	k3[31] ^= 1;
	gateway_replay_note(r, k3, &hit, 0, 1000);
	assert_int_equal(gateway_replay_find(r, k1, 150, a, &got), 0);
	assert_int_equal(gateway_replay_find(r, k3, 150, a, &got), 1);
	/* ids longer than a slot holds, and empty windows, are not kept */
	memset(longid, 'i', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	hit.message_id = longid;
	gateway_replay_note(r, k2, &hit, 0, 1000);
	assert_int_equal(gateway_replay_find(r, k2, 150, a, &got), 0);
	hit.message_id = "m2@x";
	gateway_replay_note(r, k2, &hit, 10, 9);
	assert_int_equal(gateway_replay_find(r, k2, 10, a, &got), 0);
	assert_int_equal(gateway_replay_find(NULL, k2, 10, a, &got), 0);
	gateway_replay_free(r);
	gateway_replay_free(NULL);
	arena_free(a);
}

/* Issue 13: a leg whose profile its keys do not fit. */
struct profile_case {
	const char *extra;     /* <gateway> children after <signing> */
	const char *security;  /* the leg's <security> ... </security> */
	const char *receipt;   /* the leg's <receipt>, or "" */
	const char *expect;    /* NULL: starts; else in err.msg */
};

static const struct profile_case profile_cases[] = {
	/* 2.0 without an Ed25519 pair: no key signs its Receipts */
	{ "", "<security signing=\"never\" encryption=\"never\" "
	    "profile=\"edelivery-2.0\"/>", "",
	    "pmode \"p\": no gateway signing pair fits edelivery-2.0: add an "
	    "Ed25519 pair to <signingKeys>" },
	{ "", "<security signing=\"never\" encryption=\"never\" "
	    "profile=\"edelivery-2.0-ec\"/>", "",
	    "pmode \"p\": no gateway signing pair fits edelivery-2.0-ec: add "
	    "an EC pair" },
	/* the RSA pair named explicitly does not fit either */
	{ "", "<security signing=\"never\" encryption=\"never\" "
	    "profile=\"edelivery-2.0\"/>", "<receipt signingKey=\"default\"/>",
	    "pmode \"p\": receipt signingKey \"default\" (RSA 2048) does not "
	    "fit edelivery-2.0" },
	/* RSA decryption pairs (the default: the signing pair) on 2.0 */
	{ "", "<security signing=\"never\" profile=\"edelivery-2.0\"/>", "",
	    "pmode \"p\": none of the gateway's decryption pairs fits "
	    "edelivery-2.0" },
	{ "", "<security signing=\"never\" profile=\"edelivery-2.0\">"
	    "<decryption><certificate>@/gateway.crt</certificate>"
	    "<key>@/gateway.key</key></decryption></security>", "",
	    "pmode \"p\": decryption certificate \"@/gateway.crt\" "
	    "(RSA 2048) does not fit edelivery-2.0" },
	/* an X25519 pair on a 1.x leg loads: key agreement is refused per
	 * message there (EBMS:0103), as before profiles */
	{ "", "<security signing=\"never\"><decryption>"
	    "<certificate>@/gateway-x25519.crt</certificate>"
	    "<key>@/gateway-x25519.key</key></decryption></security>", "",
	    NULL },
	/* an explicit list wins over the profile's set; a 1.x leg's
	 * Receipts are the default pair's whatever its list */
	{ "", "<security signing=\"never\" profile=\"edelivery-1.x\">"
	    "<algorithms>eddsa-ed25519 sha256</algorithms></security>", "",
	    NULL },
};

/* tmpl with each '@' replaced by dir, into out. */
static void
profile_subst(char *out, size_t size, const char *tmpl, const char *dir)
{
	size_t n = 0;

	for (; *tmpl != '\0' && n + strlen(dir) + 1 < size; tmpl++) {
		if (*tmpl == '@') {
			memcpy(out + n, dir, strlen(dir));
			n += strlen(dir);
		} else {
			out[n++] = *tmpl;
		}
	}
	out[n] = '\0';
}

/* Load the config made of c (paths under dir); 0 started, else -1 with
 * err set. */
static int
profile_try(const char *dir, const struct profile_case *c, unsigned *algs,
    struct err *err)
{
	char path[128], sec[1024], text[4096];
	struct conf *conf = NULL;
	struct gateway *gw = NULL;
	FILE *fp;
	int rc;

	(void)snprintf(path, sizeof(path), "%s/profile.xml", dir);
	profile_subst(sec, sizeof(sec), c->security, dir);
	(void)snprintf(text, sizeof(text), "<as4gw xmlns=\"urn:as4gw:config:1\">"
	    "<gateway><signing><certificate>%s/gateway.crt</certificate>"
	    "<key>%s/gateway.key</key></signing>%s</gateway><pmode id=\"p\">"
	    "<from><partyId>urn:a</partyId></from><to><partyId>urn:b</partyId>"
	    "</to><service>urn:s</service><action>P</action>%s%s</pmode>"
	    "</as4gw>", dir, dir, c->extra, sec, c->receipt);
	if ((fp = fopen(path, "w")) == NULL)
		return -1;
	(void)fputs(text, fp);
	(void)fclose(fp);
	rc = conf_load(path, &conf, err) == 0 &&
	    gateway_new(conf, &gw, err) == 0 ? 0 : -1;
	if (rc == 0)
		*algs = gw->legs[0].policy.algs;
	gateway_free(gw);
	conf_free(conf);
	return rc;
}

static void
test_profile_keys(void **state)
{
	struct fixture *f = *state;
	char want[512];
	unsigned algs = 0;
	size_t i;

	for (i = 0; i < sizeof(profile_cases) / sizeof(profile_cases[0]); i++) {
		const struct profile_case *c = &profile_cases[i];
		struct err err = {0};
		int rc = profile_try(f->dir, c, &algs, &err);

		if (c->expect == NULL) {
			if (rc != 0)
				fail_msg("case %zu: %s", i, err.msg);
			continue;
		}
		profile_subst(want, sizeof(want), c->expect, f->dir);
		if (rc == 0 || err.kind != ERR_CONF ||
		    strstr(err.msg, want) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
			    err.msg, want);
	}
	/* the last case started: its explicit list, not the 1.x set */
	assert_int_equal(algs, WSS_SIG_ED25519 | WSS_DIG_SHA256);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_then_duplicate),
		cmocka_unit_test(test_drift),
		cmocka_unit_test(test_no_store_is_503),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_pmode_mismatch),
		cmocka_unit_test(test_replay_path),
		cmocka_unit_test(test_replay_table),
		cmocka_unit_test(test_age),
		cmocka_unit_test(test_profile_keys),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
