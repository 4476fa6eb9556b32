/*
 * fuzz_mime — libFuzzer driver for the multipart/related parser (src/mime).
 *
 * Input: the Content-Type header value, a '\n', then the request body
 * (tests/fuzz/seeds.py writes the corpus messages this way).  An input
 * without '\n' is a Content-Type alone with an empty body.
 *
 * Besides "no crash, no leak, no undefined behaviour", a parsed multipart
 * message must survive a round trip: mime_write() of its parts (root first,
 * fixed boundary), parsed again, gives the same parts (Content-ID, data).
 * A difference aborts, so libFuzzer keeps the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mime/mime.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"

#define FUZZ_MIME_BUDGET (64u << 20)
#define FUZZ_MIME_BOUNDARY "fuzz-boundary-7d1c5e0b"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which and abort (libFuzzer saves the input). */
static __attribute__((noreturn)) void
fuzz_mime_die(const char *what, size_t i)
{
	fprintf(stderr, "fuzz_mime: round trip: %s (part %zu)\n", what, i);
	abort();
}

/* Properties of every successful parse that callers rely on. */
static void
fuzz_mime_check(const struct mime_message *m)
{
	size_t i;

	if (m->n_parts == 0 || m->root >= m->n_parts)
		fuzz_mime_die("root out of range", m->root);
	for (i = 0; i < m->n_parts; i++) {
		const struct mime_part *p = &m->parts[i];

		if (p->content_type == NULL || p->media_type == NULL ||
		    p->transfer_encoding == NULL ||
		    (p->data == NULL && p->len > 0))
			fuzz_mime_die("missing field", i);
		if (p->content_id != NULL && mime_find(m, p->content_id) != p)
			fuzz_mime_die("mime_find misses its own Content-ID", i);
	}
}

/* Two strings that are both NULL or equal. */
static int
fuzz_mime_same(const char *x, const char *y)
{
	return (x == NULL && y == NULL) ||
	    (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* Write m's parts again and parse the result: the same parts must come back. */
static void
fuzz_mime_roundtrip(struct arena *a, const struct mime_message *m)
{
	struct mime_out_part *out;
	struct mime_message m2;
	struct buf body = { 0 };
	struct err err = { 0 };
	const char *ct = NULL;
	size_t i, j;

	out = arena_calloc(a, m->n_parts, sizeof(*out));
	if (out == NULL)
		return;
	for (i = 0, j = 1; i < m->n_parts; i++) {
		const struct mime_part *p = &m->parts[i];
		struct mime_out_part *o = &out[i == m->root ? 0 : j++];

		o->content_id = p->content_id;
		o->content_type = p->content_type;
		o->data = p->data;
		o->len = p->len;
	}
	/* refused (a part holding the boundary, CR/LF in a value): fine */
	if (mime_write(a, out, m->n_parts, FUZZ_MIME_BOUNDARY, &body, &ct,
	    &err) == -1)
		goto out;
	if (mime_parse(a, ct, (const unsigned char *)body.data, body.len, NULL,
	    &m2, &err) == -1) {
		fprintf(stderr, "fuzz_mime: reparse: %s (%s)\n", err.msg,
		    err.detail);
		fuzz_mime_die("written message does not parse", 0);
	}
	if (m2.n_parts != m->n_parts || m2.root != 0)
		fuzz_mime_die("part count or root differs", m2.n_parts);
	for (i = 0; i < m2.n_parts; i++) {
		if (!fuzz_mime_same(m2.parts[i].content_id, out[i].content_id))
			fuzz_mime_die("Content-ID differs", i);
		if (m2.parts[i].len != out[i].len || (out[i].len > 0 &&
		    memcmp(m2.parts[i].data, out[i].data, out[i].len) != 0))
			fuzz_mime_die("data differs", i);
	}
out:
	buf_free(&body);
}

/* One input: parse, check the result, round-trip it through the writer. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t ct_len = nl != NULL ? (size_t)(nl - data) : size;
	const unsigned char *body = nl != NULL ? nl + 1 : data + size;
	size_t len = size - (size_t)(body - data);
	struct mime_limits lim;
	struct mime_message m;
	struct err err = { 0 };
	struct arena *a = arena_new(FUZZ_MIME_BUDGET);
	char *ct = a != NULL ? arena_strndup(a, (const char *)data, ct_len) :
	    NULL;

	if (ct == NULL)
		goto out;
	mime_limits_default(&lim);
	lim.max_parts = 16;
	if (mime_parse(a, ct, body, len, &lim, &m, &err) == -1) {
		if (err.kind == ERR_NONE)
			fuzz_mime_die("failure without an error", 0);
		goto out;
	}
	fuzz_mime_check(&m);
	if (m.multipart)
		fuzz_mime_roundtrip(a, &m);
out:
	arena_free(a);
	return 0;
}
