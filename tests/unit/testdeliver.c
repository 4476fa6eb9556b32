/*
 * testdeliver — the fixture of the deliver tests over teststore's two
 * backends; see testdeliver.h.
 */
#include "testdeliver.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/codec.h"

/* A fresh database (teststore) and delivery directory. */
int
tdeliver_setup(void **state)
{
	struct tctx *c = *state;

	(void)snprintf(c->out, sizeof(c->out), "/tmp/as4gw-deliver-out-XXXXXX");
	if (mkdtemp(c->out) == NULL)
		return -1;
	return tstore_setup(state);
}

/* Remove the delivery directory, then the database. */
int
tdeliver_teardown(void **state)
{
	struct tctx *c = *state;

	rm_rf(c->out);
	return tstore_teardown(state);
}

/* Remove a directory tree with rm -rf (test scratch only). */
void
rm_rf(const char *path)
{
	char cmd[400];

	(void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", path);
}

/* A time column of id's row in table as ms since the epoch (not NULL). */
int64_t
tq_ms(const struct tctx *c, const char *col, const char *table,
    const char *id)
{
	char q[512];

	if (c->pg)
		(void)snprintf(q, sizeof(q), "SELECT CAST(round(extract(epoch "
		    "FROM %s) * 1000) AS bigint) FROM %s WHERE message_id = '%s'",
		    col, table, id);
	else
		(void)snprintf(q, sizeof(q), "SELECT %s FROM %s WHERE "
		    "message_id = '%s'", col, table, id);
	return tq_int(c, q);
}

/* The state of one delivery row, checked. */
void
tstate(const struct tctx *c, const char *id, const char *state, int attempts)
{
	char q[512];

	(void)snprintf(q, sizeof(q), "SELECT count(*) FROM delivery WHERE "
	    "message_id = '%s' AND state = '%s' AND attempts = %d", id, state,
	    attempts);
	tcount(c, q, 1);
}

/* The leg of tdeliver_msg's messages, for message.json (deliver_json.c):
 * the sender's party type and id, roles, service type, encryption. */
static struct conf_party_id tleg_from_id = { TS("sender"),
    TS("urn:oasis:names:tc:ebcore:partyid-type:unregistered") };
static struct conf_party_id tleg_to_id = { TS("receiver"), NULL };
static struct pmode_leg tleg = {
	.id = TS("leg-1"),
	.from = { &tleg_from_id, 1, TS(TSENDER), TS("urn:example:role:sender") },
	.to = { &tleg_to_id, 1, TS("receiver"), NULL },
	.service = TS("urn:example:service"),
	.service_type = TS("urn:example:service-type"),
	.action = TS("Deliver"),
	.encryption = CONF_REQUIRED,
};
struct conf tconf = { .legs = &tleg, .n_legs = 1 };

/* A message with three parts: XML, bytes with NULs, an empty Body payload
 * (teststore's message with another content hash, no agreement, no field
 * digests and other part properties). */
void
tdeliver_msg(struct tmsg *t, const char *id)
{
	tmsg_init(t, id, 0, "receipt");
	t->m.agreement_ref = NULL;
	t->m.field_hashes = NULL;
	t->m.field_hashes_len = 0;
	(void)codec_sha256(id, strlen(id), t->m.content_hash);
	t->parts[1].properties = "{\"CompressionType\":\"application/gzip\"}";
	t->parts[2] = (struct store_part){ 2, NULL, NULL,
	    "{\"a\\\"b\":\"\\u0001\"}", NULL, 0 };
	t->m.n_parts = 3;
}

/* Accept a new tdeliver_msg with id into s. */
void
tdeliver_accept(struct store *s, const char *id)
{
	struct arena *a = arena_new(0);
	struct tmsg t;

	tdeliver_msg(&t, id);
	(void)taccept(s, a, &t, STORE_NEW);
	arena_free(a);
}

/* The message.json deliver must write for tdeliver_msg(id) (id plain); the
 * same bytes whatever the attempt (the argument only documents the call). */
char *
texpected_json(const char *id_json, int attempts)
{
	static char out[4096];

	(void)snprintf(out, sizeof(out),
	    "{\n"
	    "  \"message_id\": \"%s\",\n"
	    "  \"from\": \"urn:oasis:names:tc:ebcore:partyid-type:unregistered:sender\",\n"
	    "  \"to\": \"receiver\",\n"
	    "  \"from_party\": {\"type\": "
	    "\"urn:oasis:names:tc:ebcore:partyid-type:unregistered\", "
	    "\"id\": \"sender\", \"role\": \"urn:example:role:sender\"},\n"
	    "  \"to_party\": {\"type\": null, \"id\": \"receiver\", "
	    "\"role\": null},\n"
	    "  \"service\": \"urn:example:service\",\n"
	    "  \"service_type\": \"urn:example:service-type\",\n"
	    "  \"action\": \"Deliver\",\n"
	    "  \"conversation_id\": \"conv-1\",\n"
	    "  \"agreement_ref\": null,\n"
	    "  \"pmode\": \"leg-1\",\n"
	    "  \"received_at\": \"" RECEIVED_ISO "\",\n"
	    "  \"business_key\": null,\n"
	    "  \"duplicate_of\": null,\n"
	    "  \"parts\": [\n"
	    "    {\"part_no\": 0, \"content_id\": \"part1@as4gw.test\", "
	    "\"mime_type\": \"application/xml\", \"properties\": "
	    "{\"MimeType\":\"application/xml\"}, \"file\": \"part-0.bin\", "
	    "\"size\": 4, \"sha256\": \"29114363f749a0226b6988dda3ca2492a954117a"
	    "b6b5f382706c20300dabc079\", \"transformations\": "
	    "[\"decrypted\"]},\n"
	    "    {\"part_no\": 1, \"content_id\": \"part2@as4gw.test\", "
	    "\"mime_type\": \"application/octet-stream\", \"properties\": "
	    "{\"CompressionType\":\"application/gzip\"}, "
	    "\"file\": \"part-1.bin\", \"size\": 7, \"sha256\": "
	    "\"47f0c90c6590fd0f93144a2c1ed6cd2218b1d8668acaa80945b6e698a9e9ff8a\", "
	    "\"transformations\": [\"decrypted\", \"decompressed\"]},\n"
	    "    {\"part_no\": 2, \"content_id\": null, \"mime_type\": null, "
	    "\"properties\": {\"a\\\"b\":\"\\u0001\"}, \"file\": \"part-2.bin\", "
	    "\"size\": 0, \"sha256\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
	    "649b934ca495991b7852b855\", \"transformations\": []}\n"
	    "  ]\n"
	    "}\n", id_json);
	(void)attempts;
	return out;
}

/* Assert dir/name holds exactly the files of tdeliver_msg with this JSON. */
void
tcheck_dir(const char *dir, const char *name, const char *json)
{
	static const char *const files[] = { "message.json", "part-0.bin",
	    "part-1.bin", "part-2.bin" };
	const void *want[] = { json, "<a/>", nul_bytes, "" };
	const size_t want_len[] = { strlen(json), 4, sizeof(nul_bytes), 0 };
	char p[512];
	struct dirent *de;
	size_t i, len, n = 0;
	char *got;
	DIR *d;

	for (i = 0; i < 4; i++) {
		(void)snprintf(p, sizeof(p), "%s/%s/%s", dir, name, files[i]);
		if ((got = testutil_read(p, &len)) == NULL)
			fail_msg("missing %s", p);
		if (len != want_len[i] || memcmp(got, want[i], len) != 0)
			fail_msg("%s: got %zu bytes: %.*s", p, len, (int)len, got);
		free(got);
	}
	(void)snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_non_null(d = opendir(p));
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	(void)closedir(d);
	assert_int_equal(n, 4);
}

/* Entries of dir: total count; fails on leftovers (.tmp-*, .old-*). */
size_t
tentries(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	assert_non_null(d = opendir(dir));
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_name[0] == '.')
			fail_msg("leftover %s/%s", dir, de->d_name);
		n++;
	}
	(void)closedir(d);
	return n;
}

/* The directory name of id, checked for shape. */
void
tname(const char *id, char name[65])
{
	struct err err = { 0 };
	size_t i;

	assert_int_equal(deliver_name(TSENDER, id, name, &err), 0);
	assert_int_equal(strlen(name), 64);
	for (i = 0; i < 64; i++)
		assert_non_null(strchr("0123456789abcdef", name[i]));
}

/* deliver_opts for the directory target of c. */
struct deliver_opts
tdir_opts(const struct tctx *c)
{
	struct deliver_opts o;

	memset(&o, 0, sizeof(o));
	o.to_dir = c->out;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	o.conf = &tconf;
	return o;
}

/* deliver_opts for a command. */
struct deliver_opts
texec_opts(const char *cmd, unsigned timeout_s)
{
	struct deliver_opts o;

	memset(&o, 0, sizeof(o));
	o.exec_cmd = cmd;
	o.stale_ms = DELIVER_STALE_MS_DEFAULT;
	o.conf = &tconf;
	o.exec_timeout_s = timeout_s;
	return o;
}

/* Record one report into the struct treports at arg. */
void
treport(void *arg, const struct deliver_report *r)
{
	struct treports *t = arg;

	t->n++;
	t->ok = r->ok;
	t->attempts = r->attempts;
	t->retry_in_ms = r->retry_in_ms;
	(void)snprintf(t->id, sizeof(t->id), "%s", r->message_id);
	(void)snprintf(t->name, sizeof(t->name), "%s", r->name);
	(void)snprintf(t->msg, sizeof(t->msg), "%s",
	    r->err != NULL ? r->err->msg : "");
	assert_true(r->ok == (r->err == NULL));
}
