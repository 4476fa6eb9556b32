/*
 * testwriter — the fixture of the SQLite writer and checkpoint tests; see
 * testwriter.h.
 */
#include "testwriter.h"

#include <stdio.h>
#include <string.h>

/* A fresh temp directory and a migrated database in it. */
int
twriter_setup(void **state)
{
	const struct tctx *c = *state;
	struct store *s = NULL;
	struct err err = { 0 };

	if (tstore_setup(state) != 0)
		return -1;
	if (store_open(c->dsn, &s, &err) == -1 || store_migrate(s, &err) == -1)
		return -1;
	store_close(s);
	return 0;
}

/* Open a store on the test's file (migrated already). */
struct store *
wopen(const struct tctx *c)
{
	struct store *s = NULL;
	struct err err = { 0 };

	if (store_open(c->dsn, &s, &err) == -1)
		fail_msg("open: %s", err.msg);
	return s;
}

/* The writer behind a store handle. */
struct store_sqlite_writer *
wwriter(struct store *s)
{
	return ((struct store_sqlite *)s)->w;
}

/* Message "w-<k>" with two parts; variant != 0 changes the content (hash). */
void
wmsg_init(struct wmsg *t, int k, int variant, const char *receipt)
{
	size_t i;

	memset(t, 0, sizeof(*t));
	(void)snprintf(t->id, sizeof(t->id), "w-%d@as4gw.test", k);
	t->m.message_id = t->id;
	t->m.from_party = "urn:from";
	t->m.to_party = "urn:to";
	t->m.service = "svc";
	t->m.action = "act";
	t->m.conversation_id = "conv";
	t->m.pmode_id = "leg";
	t->m.partition_key = "2026-01";
	t->m.received_at_ms = RECEIVED_MS;
	memset(t->m.content_hash, 0x40 + variant, STORE_HASH_LEN);
	memcpy(t->m.content_hash, &k, sizeof(k));
	memcpy(t->m.content_hash_v1, t->m.content_hash, STORE_HASH_LEN);
	t->m.field_hashes = t->m.content_hash;  /* one digest: a v2 row */
	t->m.field_hashes_len = STORE_HASH_LEN;
	if (receipt != NULL) {
		(void)snprintf(t->receipt, sizeof(t->receipt), "%s", receipt);
		t->m.receipt = (const unsigned char *)t->receipt;
		t->m.receipt_len = strlen(t->receipt);
	}
	for (i = 0; i < 2; i++) {
		memset(t->data[i], 'a' + (int)i + variant, sizeof(t->data[i]));
		t->parts[i].part_no = (int)i;
		t->parts[i].content_id = i == 0 ? "cid:a" : "cid:b";
		t->parts[i].mime_type = "application/octet-stream";
		t->parts[i].data = t->data[i];
		t->parts[i].len = sizeof(t->data[i]);
	}
	t->m.parts = t->parts;
	t->m.n_parts = 2;
}
