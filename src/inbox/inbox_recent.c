/*
 * inbox_recent — the "probably a retry" hint of inbox.h: a direct-mapped
 * table of 64-bit FNV-1a hashes of MessageIds.  Nothing depends on it being
 * right; it only decides whether the gateway probes the store before it
 * signs a Receipt, which a retry does not need (the stored one is returned).
 */
#include "inbox.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

struct inbox_recent {
	uint64_t mask;
	_Atomic uint64_t *slots;
};

/* FNV-1a, 64 bit, over party, a NUL and the MessageId (the inbox key);
 * never 0 (0 marks an empty slot). */
static uint64_t
inbox_recent_hash(const char *party, const char *message_id)
{
	uint64_t h = 14695981039346656037ULL;
	const char *s;

	for (s = party; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	h *= 1099511628211ULL;  /* the NUL: h ^= 0 */
	for (s = message_id; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h != 0 ? h : 1;
}

struct inbox_recent *
inbox_recent_new(unsigned bits)
{
	struct inbox_recent *r;
	size_t n;

	if (bits == 0 || bits > 24)
		return NULL;
	n = (size_t)1 << bits;
	r = malloc(sizeof(*r));
	if (r == NULL)
		return NULL;
	r->mask = n - 1;
	/* calloc: untouched zero pages cost no resident memory until used */
	r->slots = calloc(n, sizeof(*r->slots));
	if (r->slots == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

void
inbox_recent_free(struct inbox_recent *r)
{
	if (r == NULL)
		return;
	free(r->slots);
	free(r);
}

int
inbox_recent_seen(const struct inbox_recent *r, const char *party,
    const char *message_id)
{
	uint64_t h;

	if (r == NULL || party == NULL || message_id == NULL)
		return 0;
	h = inbox_recent_hash(party, message_id);
	return atomic_load_explicit(&r->slots[h & r->mask],
	    memory_order_relaxed) == h;
}

void
inbox_recent_note(struct inbox_recent *r, const char *party,
    const char *message_id)
{
	uint64_t h;

	if (r == NULL || party == NULL || message_id == NULL)
		return;
	h = inbox_recent_hash(party, message_id);
	atomic_store_explicit(&r->slots[h & r->mask], h, memory_order_relaxed);
}
