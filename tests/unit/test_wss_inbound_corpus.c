/*
 * Unit tests for wss_inbound.c on recorded traffic from ../shared (skipped
 * loudly when the corpus is absent): a Holodeck message signed with SKI
 * (rsa-sha384), intact and with an attachment byte flipped, and an AS4.NET
 * message signed (IssuerSerial) and encrypted, decrypted with one key pair,
 * two, and the wrong one.  The policy variants are testinbound.h's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/tree.h>

#include "testinbound.h"
#include "testutil.h"
#include "mime/mime.h"
#include "soap/soap.h"
#include "trust/trust.h"
#include "util/clock.h"
#include "xml/xml.h"

#define AS4NET "corpus/messages/thomsonreuters_eessi-as4.net/source/"
#define AS4NET_X "corpus/extracted/thomsonreuters_eessi-as4.net/source/"
#define HOLODECK "Eu.EDelivery.AS4.ComponentTests/Resources/" \
	"signed_holodeck_message.as4"
#define ENCSIGNED "Eu.EDelivery.AS4.UnitTests/Resources/" \
	"as4-encrypted-signed-issuerserial.as4"
#define HOLODECK_CT "multipart/related; boundary=\"MIMEBoundary_" \
	"bcb27a6f984295aa9962b01ef2fb3e8d982de76d061ab23f\"; " \
	"type=\"application/soap+xml\""
#define ENCSIGNED_CT "multipart/related; boundary=\"MIMEBoundary_" \
	"416ba07b9ac392cc88fdb1c2ed23ba5e2e6d64fdf13325f1\"; " \
	"type=\"application/soap+xml\""
#define KEY_A "corpus/keys/5e320e3a1dda" /* CN=AccessPointA */
#define KEY_B "corpus/keys/3da5db472d77" /* CN=AccessPointB */

/* A recorded message split and parsed the way the gateway does it. */
struct corpus_msg {
	struct wss_part parts[8];
	size_t n_parts;
	xmlDocPtr doc;
	xmlNodePtr messaging, body;
};

/* Read, split and parse rel (Content-Type ct); 0 ok, 1 corpus absent. */
static int
corpus_load(struct arena *a, const char *rel, const char *ct,
    struct corpus_msg *cm)
{
	struct mime_message m;
	struct soap_env env;
	struct err err;
	size_t len, i;
	char *body = testutil_read_shared(rel, &len);
	const struct mime_part *root;

	memset(cm, 0, sizeof(*cm));
	err_clear(&err);
	if (body == NULL)
		return 1;
	assert_int_equal(arena_cleanup(a, free, body), 0);
	assert_int_equal(mime_parse(a, ct, (const unsigned char *)body, len,
	    NULL, &m, &err), 0);
	root = &m.parts[m.root];
	assert_int_equal(xml_parse(a, (const char *)root->data, root->len,
	    NULL, &cm->doc, &err), 0);
	assert_int_equal(soap_open(cm->doc, &env, &err), 0);
	for (i = 0; i < m.n_parts && cm->n_parts < 8; i++) {
		struct wss_part *p = &cm->parts[cm->n_parts];

		if (i == m.root)
			continue;
		p->content_id = m.parts[i].content_id;
		p->content_type = m.parts[i].content_type;
		p->data = m.parts[i].data;
		p->len = m.parts[i].len;
		cm->n_parts++;
	}
	cm->messaging = xml_child(env.header, NS_EB, "Messaging");
	cm->body = env.body;
	return 0;
}

/* wss_inbound over a loaded recorded message. */
static int
corpus_inbound(struct arena *a, struct corpus_msg *cm,
    const struct wss_policy *pol, struct wss_result *res, struct err *err)
{
	err_clear(err);
	return wss_inbound(a, cm->doc, cm->messaging, cm->body, cm->parts,
	    cm->n_parts, pol, res, err);
}

/* Trust with one self-signed certificate as signer and anchor. */
static struct trust *
corpus_trust(const char *rel)
{
	char path[4096];
	const char *p = path;
	struct trust *t = NULL;
	struct err err;

	err_clear(&err);
	(void)snprintf(path, sizeof(path), "%s/%s.pem", testutil_shared_dir(),
	    rel);
	assert_int_equal(trust_new(&(struct trust_files){ .signers = &p,
	    .n_signers = 1, .anchors = &p, .n_anchors = 1 }, &t, &err), 0);
	return t;
}

/* Holodeck -> AS4.NET: rsa-sha384, SKI, 2 cid: references (corpus row
 * 110); the same with one attachment byte flipped (39). */
static void
test_corpus_holodeck(void **state)
{
	struct arena *a = arena_new(0);
	struct trust *t;
	struct corpus_msg cm;
	struct wss_policy pol;
	struct wss_result res;
	struct err err;
	unsigned char *copy;

	(void)state;
	if (corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm) != 0) {
		arena_free(a);
		testutil_skip("corpus message " HOLODECK " is not present");
	}
	policy(P_DEFAULT, &pol);
	pol.trust = t = corpus_trust(KEY_B);
	assert_int_equal(clock_parse_iso8601("2018-01-24T16:12:22Z",
	    &pol.at_ms), 0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("refused: %s %s (%s)", err.ebms_code, err.msg,
		    err.detail);
	assert_int_equal(cm.n_parts, 2);
	assert_true(res.verified && res.n_references == 4);
	assert_non_null(strstr(res.signer, "CN=AccessPointB"));

	assert_int_equal(corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm), 0);
	copy = arena_memdup(a, cm.parts[1].data, cm.parts[1].len);
	assert_non_null(copy);
	copy[cm.parts[1].len / 2] ^= 0x20;
	cm.parts[1].data = copy;
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0101");
	/* nothing is cached between calls: an intact copy verifies again */
	assert_int_equal(corpus_load(a, AS4NET HOLODECK, HOLODECK_CT, &cm), 0);
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), 0);
	trust_free(t);
	arena_free(a);
}

/* Compare a decrypted part with the corpus ground truth. */
static void
corpus_same(const struct wss_part *p, const char *rel)
{
	size_t len;
	char *want = testutil_read_shared(rel, &len);

	assert_non_null(want);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, want, len);
	free(want);
}

/* A keyring of the one pair crt + key; 0 / -1. */
static int
t_ring(const char *crt, const char *key, struct wss_keyring **ret)
{
	struct wss_keyring_spec spec = { crt, key, 0 };
	struct err err;

	err_clear(&err);
	return wss_keyring_new(&spec, 1, ret, &err);
}

/* AS4.NET: signed by AccessPointA (IssuerSerial), encrypted for
 * AccessPointB (rsa-oaep-mgf1p/sha256, aes128-gcm) (corpus row 126). */
static void
test_corpus_encrypted_signed(void **state)
{
	static const char dir[] = AS4NET_X ENCSIGNED "/decrypted-b545c3a0-e57f"
	    "-46aa-862f-381eb4b7009-";
	struct arena *a = arena_new(0);
	char crt[4096], key[4096], want[512];
	struct wss_keyring *dk = NULL;
	struct wss_keyring_spec two[2];
	char crt_a[4096], key_a[4096];
	struct trust *t;
	struct corpus_msg cm;
	struct wss_policy pol;
	struct wss_result res;
	struct err err;
	size_t i;

	(void)state;
	if (corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm) != 0) {
		arena_free(a);
		testutil_skip("corpus message " ENCSIGNED " is not present");
	}
	err_clear(&err);
	(void)snprintf(crt, sizeof(crt), "%s/" KEY_B ".pem",
	    testutil_shared_dir());
	(void)snprintf(key, sizeof(key), "%s/" KEY_B ".key.pem",
	    testutil_shared_dir());
	assert_int_equal(t_ring(crt, key, &dk), 0);
	policy(P_ENC_REQUIRED, &pol);
	pol.trust = t = corpus_trust(KEY_A);
	pol.decrypt_keys = dk;
	assert_int_equal(clock_parse_iso8601("2018-12-19T08:56:26Z",
	    &pol.at_ms), 0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("refused: %s %s (%s)", err.ebms_code, err.msg,
		    err.detail);
	assert_true(res.verified && res.decrypted && res.n_references == 4);
	assert_non_null(strstr(res.signer, "CN=AccessPointA"));
	assert_int_equal(cm.n_parts, 2);
	for (i = 0; i < cm.n_parts; i++) {
		assert_true(cm.parts[i].decrypted);
		(void)snprintf(want, sizeof(want), "%s%s.bin", dir,
		    strstr(cm.parts[i].content_id, "1650194442") != NULL ?
		    "1650194442@CLT-SMOREELS." : "291596031@CLT-SMOREELS.m");
		corpus_same(&cm.parts[i], want);
	}
	/* AccessPointA's pair beside AccessPointB's: the EncryptedKey's
	 * IssuerSerial picks B's, and the message decrypts as before */
	wss_keyring_free(dk);
	dk = NULL;
	(void)snprintf(crt_a, sizeof(crt_a), "%s/" KEY_A ".pem",
	    testutil_shared_dir());
	(void)snprintf(key_a, sizeof(key_a), "%s/" KEY_A ".key.pem",
	    testutil_shared_dir());
	two[0] = (struct wss_keyring_spec){ crt_a, key_a, 0 };
	two[1] = (struct wss_keyring_spec){ crt, key, 1 };
	assert_int_equal(wss_keyring_new(two, 2, &dk, &err), 0);
	pol.decrypt_keys = dk;
	assert_int_equal(corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm),
	    0);
	if (corpus_inbound(a, &cm, &pol, &res, &err) != 0)
		fail_msg("two pairs: %s (%s)", err.msg, err.detail);
	assert_true(res.decrypted);
	assert_non_null(res.decrypted_retiring);    /* B is the retiring one */
	/* AccessPointA's alone: the reference names no pair -> EBMS:0102,
	 * the log detail names the reference and the pair's fingerprint */
	wss_keyring_free(dk);
	dk = NULL;
	assert_int_equal(t_ring(crt_a, key_a, &dk), 0);
	pol.decrypt_keys = dk;
	assert_int_equal(corpus_load(a, AS4NET ENCSIGNED, ENCSIGNED_CT, &cm),
	    0);
	assert_int_equal(corpus_inbound(a, &cm, &pol, &res, &err), -1);
	assert_string_equal(err.ebms_code, "EBMS:0102");
	assert_string_equal(err.msg, "decryption failed");
	assert_non_null(strstr(err.detail, "X509IssuerSerial \"CN=AccessPointB\""));
	assert_non_null(strstr(err.detail, "sha256:"));
	trust_free(t);
	wss_keyring_free(dk);
	arena_free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_holodeck),
		cmocka_unit_test(test_corpus_encrypted_signed),
	};

	return cmocka_run_group_tests_name("wss inbound corpus", tests,
	    tinbound_libs_setup, tinbound_libs_teardown);
}
