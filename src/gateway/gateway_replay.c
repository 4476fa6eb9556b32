/*
 * gateway_replay — answer a retry of the very same request bytes without
 * parsing and verifying them again.
 *
 * A sender that lost our Receipt sends the same bytes again.  Parsing the
 * MIME and XML and verifying the signature would give the same result as
 * the first time at any instant in the window wss_inbound() reported
 * (wss_result.replayable: timestamp freshness and certificate validity are
 * the only checks that depend on the instant), under the same configuration
 * (the cache belongs to one gateway generation; a reload starts empty).  So
 * a request whose SHA-256 over Content-Type and body matches one this
 * gateway verified and stored, seen again inside that window, goes straight
 * to the store as a probe (store.h) of the inbox key it was stored under
 * (sending party and MessageId): the store still decides (DUPLICATE with
 * the stored Receipt and the counter, or ABSENT after a purge, when the
 * request is processed in full).  Outside the window, or not in the table,
 * the request takes the full path and gets the full checks.
 *
 * A direct-mapped table of GATEWAY_REPLAY_SLOTS entries under one mutex
 * (entries are copied out, never referenced outside the lock).
 */
#include "gateway.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/codec.h"

#define GATEWAY_REPLAY_BITS 12              /* 4096 entries, ~2.2 MiB */
#define GATEWAY_REPLAY_SLOTS (1u << GATEWAY_REPLAY_BITS)
#define GATEWAY_REPLAY_TEXT 256             /* ids kept up to 255 bytes */

struct gateway_replay_entry {
	int used;
	unsigned char key[CODEC_SHA256_LEN];
	unsigned char content_hash[STORE_HASH_LEN];
	unsigned char content_hash_v1[STORE_HASH_LEN];
	int64_t from_ms, until_ms;
	const char *pmode;                  /* the leg's id: lives with conf */
	char message_id[GATEWAY_REPLAY_TEXT];
	char from_party[GATEWAY_REPLAY_TEXT];
};

struct gateway_replay {
	pthread_mutex_t lock;
	struct gateway_replay_entry *slots; /* calloc: resident once used */
};

struct gateway_replay *
gateway_replay_new(void)
{
	struct gateway_replay *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->slots = calloc(GATEWAY_REPLAY_SLOTS, sizeof(*r->slots));
	if (r->slots == NULL || pthread_mutex_init(&r->lock, NULL) != 0) {
		free(r->slots);
		free(r);
		return NULL;
	}
	return r;
}

void
gateway_replay_free(struct gateway_replay *r)
{
	if (r == NULL)
		return;
	(void)pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
}

/* SHA-256 over Content-Type, a NUL and the body: 1 keyed, 0 not (too large
 * to be worth hashing twice, or the digest failed). */
int
gateway_replay_key(const struct gateway_request *req,
    unsigned char key[GATEWAY_REPLAY_KEY_LEN])
{
	struct codec_sha256 *h;
	const char *ct = req->content_type != NULL ? req->content_type : "";

	if (req->len > GATEWAY_REPLAY_MAX_BODY ||
	    (h = codec_sha256_new()) == NULL)
		return 0;
	if (codec_sha256_update(h, ct, strlen(ct) + 1) == -1 ||
	    codec_sha256_update(h, req->body, req->len) == -1) {
		(void)codec_sha256_final(h, key);
		return 0;
	}
	return codec_sha256_final(h, key) == 0 ? 1 : 0;
}

/* The slot of a key: its first bytes are already uniformly distributed. */
static struct gateway_replay_entry *
gateway_replay_slot(const struct gateway_replay *r, const unsigned char *key)
{
	size_t i = ((size_t)key[0] << 8 | key[1]) & (GATEWAY_REPLAY_SLOTS - 1);

	return &r->slots[i];
}

/* Copy s into the fixed field; 0, or -1 when it does not fit. */
static int
gateway_replay_copy(char *dst, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n >= GATEWAY_REPLAY_TEXT)
		return -1;
	memcpy(dst, s != NULL ? s : "", n + 1);
	return 0;
}

void
gateway_replay_note(struct gateway_replay *r,
    const unsigned char key[GATEWAY_REPLAY_KEY_LEN],
    const struct gateway_replay_hit *hit, int64_t from_ms, int64_t until_ms)
{
	struct gateway_replay_entry e, *slot;

	if (r == NULL || hit->message_id == NULL || from_ms > until_ms)
		return;
	memset(&e, 0, sizeof(e));
	if (gateway_replay_copy(e.message_id, hit->message_id) == -1 ||
	    gateway_replay_copy(e.from_party, hit->from_party) == -1)
		return;
	e.used = 1;
	memcpy(e.key, key, sizeof(e.key));
	memcpy(e.content_hash, hit->content_hash, sizeof(e.content_hash));
	memcpy(e.content_hash_v1, hit->content_hash_v1,
	    sizeof(e.content_hash_v1));
	e.from_ms = from_ms;
	e.until_ms = until_ms;
	e.pmode = hit->pmode;
	slot = gateway_replay_slot(r, key);
	if (pthread_mutex_lock(&r->lock) != 0)
		return;
	*slot = e;
	(void)pthread_mutex_unlock(&r->lock);
}

int
gateway_replay_find(struct gateway_replay *r,
    const unsigned char key[GATEWAY_REPLAY_KEY_LEN], int64_t at_ms,
    struct arena *a, struct gateway_replay_hit *ret)
{
	const struct gateway_replay_entry *slot;
	struct gateway_replay_entry e;

	if (r == NULL)
		return 0;
	slot = gateway_replay_slot(r, key);
	if (pthread_mutex_lock(&r->lock) != 0)
		return 0;
	e = *slot;
	(void)pthread_mutex_unlock(&r->lock);
	if (!e.used || memcmp(e.key, key, sizeof(e.key)) != 0 ||
	    at_ms < e.from_ms || at_ms > e.until_ms)
		return 0;
	ret->message_id = arena_strdup(a, e.message_id);
	ret->from_party = e.from_party[0] != '\0' ?
	    arena_strdup(a, e.from_party) : NULL;
	ret->pmode = e.pmode;
	memcpy(ret->content_hash, e.content_hash, sizeof(ret->content_hash));
	memcpy(ret->content_hash_v1, e.content_hash_v1,
	    sizeof(ret->content_hash_v1));
	if (ret->message_id == NULL ||
	    (e.from_party[0] != '\0' && ret->from_party == NULL))
		return -1;
	return 1;
}
