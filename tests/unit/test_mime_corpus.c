/* Unit tests for mime/: the multipart/related parser on recorded AS4
 * messages from ../shared/corpus, compared with the extracted parts. */
#include "mime/mime.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testmime.h"
#include "testutil.h"

/* ------------------------------------------------------------------ */
/* Recorded messages                                                  */

#define TR "corpus/messages/thomsonreuters_eessi-as4.net/source/"
#define TRX "corpus/extracted/thomsonreuters_eessi-as4.net/source/"
#define RSS_ATT "att-0-_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware.bin"

struct corpus_case {
	const char *rel;      /* under TR and TRX */
	const char *ct;       /* reconstructed Content-Type */
	size_t n_parts;
	const char *ids[3];   /* Content-IDs in order; NULL = none */
	const char *att[3];   /* extracted attachment file per part, or NULL */
};

static const struct corpus_case corpus_cases[] = {
	{ "Eu.EDelivery.AS4.UnitTests/Resources/as4_single_payload.as4",
	  "multipart/related; boundary=\"=-PHQq1fuE9QxpIWax7CKj5w==\"; "
	  "type=\"application/soap+xml\"", 2, { NULL, "earth2" },
	  { NULL, "att-0-earth2.bin" } },
	{ "Eu.EDelivery.AS4.UnitTests/Resources/as4message.txt",
	  "multipart/related; boundary=\"=-M9awlqbs/xWAPxlvpSWrAg==\"; "
	  "type=\"application/soap+xml\"", 3, { NULL, "earth", "earth2" },
	  { NULL, "att-0-earth.bin", "att-1-earth2.bin" } },
	{ "Eu.EDelivery.AS4.ComponentTests/Resources/receiveagent_message.as4",
	  "multipart/related; boundary=\"=-C3oBZDXCy4W2LpjPUhC4rw==\"; "
	  "type=\"application/soap+xml\"", 2, { NULL, "earth" },
	  { NULL, "att-0-earth.bin" } },
	/* RSSBus: start= naming no part -> first part (NEGATIVE-CASES 12) */
	{ "Eu.EDelivery.AS4.UnitTests/Resources/rssbus_message.as4",
	  "multipart/related; boundary=\"NSMIMEBoundary__e5cfd617-6cec-4276-"
	  "b190-23f0b25d9d4d\"; type=\"application/soap+xml\"; "
	  "start=\"<not-the-root@nsoftware>\"", 2,
	  { "_f4691b6d-96fc-4ac8-a43e-2f495654f854",
	    "_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware" },
	  { NULL, RSS_ATT } },
	/* the same with start= naming the root */
	{ "Eu.EDelivery.AS4.UnitTests/Resources/rssbus_message.as4",
	  "multipart/related; boundary=\"NSMIMEBoundary__e5cfd617-6cec-4276-"
	  "b190-23f0b25d9d4d\"; type=\"application/soap+xml\"; "
	  "start=\"<_f4691b6d-96fc-4ac8-a43e-2f495654f854>\"", 2,
	  { "_f4691b6d-96fc-4ac8-a43e-2f495654f854",
	    "_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware" },
	  { NULL, RSS_ATT } },
};

/* The part equals a file under ../shared (root: envelope.xml). */
static void
test_corpus_compare(const char *dir, const char *file,
    const struct mime_part *p)
{
	char path[1024];
	size_t len;
	char *want;

	(void)snprintf(path, sizeof(path), TRX "%s/%s", dir, file);
	want = testutil_read_shared(path, &len);
	if (want == NULL)
		fail_msg("extracted file missing: %s", path);
	assert_int_equal(p->len, len);
	assert_memory_equal(p->data, want, len);
	free(want);
}

/* One recorded message parses into the listed parts. */
static void
test_corpus_one(struct arena *a, const struct corpus_case *c)
{
	char path[1024];
	struct mime_message m;
	struct err err = { 0 };
	size_t len, i;
	char *body;

	(void)snprintf(path, sizeof(path), TR "%s", c->rel);
	body = testutil_read_shared(path, &len);
	if (body == NULL)
		testutil_skip(path);
	if (mime_parse(a, c->ct, (const unsigned char *)body, len, NULL, &m,
	    &err) != 0)
		fail_msg("%s: %s", c->rel, err.msg);
	assert_int_equal(m.multipart, 1);
	assert_int_equal(m.n_parts, c->n_parts);
	assert_int_equal(m.root, 0);
	assert_string_equal(m.parts[0].media_type, "application/soap+xml");
	test_corpus_compare(c->rel, "envelope.xml", &m.parts[0]);
	for (i = 0; i < c->n_parts; i++) {
		if (c->ids[i] == NULL) {
			assert_null(m.parts[i].content_id);
			continue;
		}
		assert_string_equal(m.parts[i].content_id, c->ids[i]);
		assert_ptr_equal(mime_find(&m, c->ids[i]), &m.parts[i]);
		if (c->att[i] != NULL)
			test_corpus_compare(c->rel, c->att[i], &m.parts[i]);
	}
	free(body);
}

static void
test_corpus(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(corpus_cases) / sizeof(corpus_cases[0]); i++)
		test_corpus_one(*state, &corpus_cases[i]);
}

/* RSSBus with start= naming the gzip attachment: root not SOAP, 0007. */
static void
test_corpus_rssbus_bad_start(void **state)
{
	struct mime_message m;
	struct err err = { 0 };
	size_t len;
	char *body = testutil_read_shared(TR "Eu.EDelivery.AS4.UnitTests/"
	    "Resources/rssbus_message.as4", &len);

	if (body == NULL)
		testutil_skip("rssbus_message.as4 missing");
	assert_int_equal(mime_parse(*state, "multipart/related; boundary="
	    "\"NSMIMEBoundary__e5cfd617-6cec-4276-b190-23f0b25d9d4d\"; start="
	    "\"<_9334fca1-68ce-472b-a413-38d0fe867587@nsoftware>\"",
	    (const unsigned char *)body, len, NULL, &m, &err), -1);
	assert_int_equal(err.kind, ERR_EBMS);
	assert_string_equal(err.ebms_code, "EBMS:0007");
	free(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_corpus),
		T(test_corpus_rssbus_bad_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
