/*
 * payload — the content hash that tells a legitimate retry from drift.  The
 * encoding is documented in payload.h and pinned by a known-answer test.
 */
#include "payload.h"

#include <stdint.h>
#include <string.h>

#define PAYLOAD_HASH_TAG "as4gw-content-hash-v1"
#define PAYLOAD_HASH_NULL UINT64_MAX

/* A running hash that remembers whether any update failed. */
struct payload_hash {
	struct codec_sha256 *h;
	int failed;
};

/* Feed v as 8 bytes, big-endian. */
static void
payload_hash_u64(struct payload_hash *ph, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 7; i >= 0; i--) {
		b[i] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
	if (codec_sha256_update(ph->h, b, sizeof(b)) == -1)
		ph->failed = 1;
}

/* Feed len-prefixed bytes (data may be NULL when len is 0). */
static void
payload_hash_bytes(struct payload_hash *ph, const void *data, size_t len)
{
	payload_hash_u64(ph, (uint64_t)len);
	if (len > 0 && codec_sha256_update(ph->h, data, len) == -1)
		ph->failed = 1;
}

/* Feed a string; NULL (absent) is distinct from "" (empty). */
static void
payload_hash_str(struct payload_hash *ph, const char *s)
{
	if (s == NULL)
		payload_hash_u64(ph, PAYLOAD_HASH_NULL);
	else
		payload_hash_bytes(ph, s, strlen(s));
}

/* Role, then each PartyId (type, value) in document order. */
static void
payload_hash_party(struct payload_hash *ph, const struct ebms_party *p)
{
	size_t i;

	payload_hash_str(ph, p->role);
	payload_hash_u64(ph, (uint64_t)p->n_ids);
	for (i = 0; i < p->n_ids; i++) {
		payload_hash_str(ph, p->ids[i].type);
		payload_hash_str(ph, p->ids[i].value);
	}
}

/* A property list: count, then (name, type, value) in document order. */
static void
payload_hash_props(struct payload_hash *ph, const struct ebms_property *props,
    size_t n)
{
	size_t i;

	payload_hash_u64(ph, (uint64_t)n);
	for (i = 0; i < n; i++) {
		payload_hash_str(ph, props[i].name);
		payload_hash_str(ph, props[i].type);
		payload_hash_str(ph, props[i].value);
	}
}

/* The content hash; the field order is the one documented in payload.h. */
int
payload_content_hash(const struct ebms_user_message *um,
    unsigned char out[CODEC_SHA256_LEN])
{
	struct payload_hash ph = { codec_sha256_new(), 0 };
	size_t i;

	if (ph.h == NULL)
		return -1;
	payload_hash_str(&ph, PAYLOAD_HASH_TAG);
	payload_hash_str(&ph, um->message_id);
	payload_hash_party(&ph, &um->from);
	payload_hash_party(&ph, &um->to);
	payload_hash_str(&ph, um->agreement_ref);
	payload_hash_str(&ph, um->agreement_type);
	payload_hash_str(&ph, um->agreement_pmode);
	payload_hash_str(&ph, um->service);
	payload_hash_str(&ph, um->service_type);
	payload_hash_str(&ph, um->action);
	payload_hash_str(&ph, um->conversation_id);
	payload_hash_str(&ph, um->ref_to_message_id);
	payload_hash_props(&ph, um->props, um->n_props);
	payload_hash_u64(&ph, (uint64_t)um->n_parts);
	for (i = 0; i < um->n_parts; i++) {
		const struct ebms_part *p = &um->parts[i];

		payload_hash_str(&ph, p->href);
		payload_hash_props(&ph, p->props, p->n_props);
		payload_hash_bytes(&ph, p->data, p->len);
	}
	/* final runs (and frees) even after a failed update */
	if (codec_sha256_final(ph.h, out) == -1 || ph.failed)
		return -1;
	return 0;
}
