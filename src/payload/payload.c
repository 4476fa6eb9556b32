/*
 * payload — the content hash that tells a legitimate retry from drift.  The
 * encoding is documented in payload.h and pinned by a known-answer test.
 */
#include "payload.h"
#include "payload_int.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../spool/spool.h"

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

/* Feed a part's final bytes len-prefixed into a and, unless NULL, b too: in
 * SPOOL_CHUNK pieces, each read once for both, then released behind
 * (spool_done: a spooled payload of any size is read in order without
 * staying resident; issue 14); a large part's two on two threads. */
static void
payload_hash_data(struct payload_hash *a, struct payload_hash *b,
    const unsigned char *data, size_t len)
{
	size_t off, n;

	payload_hash_u64(a, (uint64_t)len);
	if (b != NULL)
		payload_hash_u64(b, (uint64_t)len);
	/* a large part: b on a second thread (payload_par.c) */
	if (b != NULL && payload_par_update(a->h, b->h, data, len, &a->failed,
	    &b->failed) == 0)
		return;
	for (off = 0; off < len; off += n) {
		n = len - off > SPOOL_CHUNK ? SPOOL_CHUNK : len - off;
		if (codec_sha256_update(a->h, data + off, n) == -1)
			a->failed = 1;
		if (b != NULL && codec_sha256_update(b->h, data + off, n) == -1)
			b->failed = 1;
		spool_done(data + off, n);
	}
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

/* Version 1 up to the parts: the fields before the first href. */
static void
payload_v1_head(struct payload_hash *ph, const struct ebms_user_message *um)
{
	payload_hash_str(ph, PAYLOAD_HASH_TAG);
	payload_hash_str(ph, um->message_id);
	payload_hash_party(ph, &um->from);
	payload_hash_party(ph, &um->to);
	payload_hash_str(ph, um->agreement_ref);
	payload_hash_str(ph, um->agreement_type);
	payload_hash_str(ph, um->agreement_pmode);
	payload_hash_str(ph, um->service);
	payload_hash_str(ph, um->service_type);
	payload_hash_str(ph, um->action);
	payload_hash_str(ph, um->conversation_id);
	payload_hash_str(ph, um->ref_to_message_id);
	payload_hash_props(ph, um->props, um->n_props);
	payload_hash_u64(ph, (uint64_t)um->n_parts);
}

/* Version 1 of part p before its bytes: href and PartProperties. */
static void
payload_v1_part(struct payload_hash *ph, const struct ebms_part *p)
{
	payload_hash_str(ph, p->href);
	payload_hash_props(ph, p->props, p->n_props);
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
	payload_v1_head(&ph, um);
	for (i = 0; i < um->n_parts; i++) {
		payload_v1_part(&ph, &um->parts[i]);
		payload_hash_data(&ph, NULL, um->parts[i].data,
		    um->parts[i].len);
	}
	/* final runs (and frees) even after a failed update */
	if (codec_sha256_final(ph.h, out) == -1 || ph.failed)
		return -1;
	return 0;
}

/* ---- version 2: per-field digests (payload.h) ---------------------------- */

#define PAYLOAD_HASH2_TAG "as4gw-content-hash-v2"

/* Names of the fixed fields, in digest order (payload.h). */
static const char *const payload_field_names[PAYLOAD_FIELDS_FIXED] = {
	"From", "To", "AgreementRef", "Service", "Action", "ConversationId",
	"RefToMessageId", "MessageProperties", "PartInfo count",
};

/* Start one field's digest. */
static void
payload_field_start(struct payload_hash *ph)
{
	ph->h = codec_sha256_new();
	ph->failed = ph->h == NULL;
}

/* End one field's digest into out; *bad is set when anything failed. */
static void
payload_field_end(struct payload_hash *ph, unsigned char *out, int *bad)
{
	if (ph->h == NULL || codec_sha256_final(ph->h, out) == -1 ||
	    ph->failed)
		*bad = 1;
	ph->h = NULL;
}

/* Fixed field i of um into the open digest (the order of the names). */
static void
payload_field_feed(struct payload_hash *ph, const struct ebms_user_message *um,
    size_t i)
{
	switch (i) {
	case 0: payload_hash_party(ph, &um->from); break;
	case 1: payload_hash_party(ph, &um->to); break;
	case 2:
		payload_hash_str(ph, um->agreement_ref);
		payload_hash_str(ph, um->agreement_type);
		payload_hash_str(ph, um->agreement_pmode);
		break;
	case 3:
		payload_hash_str(ph, um->service);
		payload_hash_str(ph, um->service_type);
		break;
	case 4: payload_hash_str(ph, um->action); break;
	case 5: payload_hash_str(ph, um->conversation_id); break;
	case 6: payload_hash_str(ph, um->ref_to_message_id); break;
	case 7: payload_hash_props(ph, um->props, um->n_props); break;
	default: payload_hash_u64(ph, (uint64_t)um->n_parts); break;
	}
}

/*
 * Part field k (0: where and PartProperties, 1: final bytes) of p into the
 * open digest.  Where is only the kind of href (absent, cid:, other), never
 * the Content-ID itself: a retry may be rebuilt with fresh Content-IDs.
 */
static void
payload_part_feed(struct payload_hash *ph, const struct ebms_part *p, int k)
{
	if (k == 1) {
		payload_hash_data(ph, NULL, p->data, p->len);
		return;
	}
	payload_hash_u64(ph, p->href == NULL ? 0 :
	    strncmp(p->href, "cid:", 4) == 0 ? 1 : 2);
	payload_hash_props(ph, p->props, p->n_props);
}

/* Every field digest of um into fields (n of them), but those of the part
 * bytes when skip_bytes (payload_content_hashes makes them); -1 if SHA-256
 * fails. */
static int
payload_fields(const struct ebms_user_message *um, unsigned char *fields,
    size_t n, int skip_bytes)
{
	struct payload_hash ph;
	int bad = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (skip_bytes && i >= PAYLOAD_FIELDS_FIXED &&
		    (i - PAYLOAD_FIELDS_FIXED) % 2 == 1)
			continue;
		payload_field_start(&ph);
		if (ph.h == NULL)
			return -1;
		if (i < PAYLOAD_FIELDS_FIXED)
			payload_field_feed(&ph, um, i);
		else
			payload_part_feed(&ph,
			    &um->parts[(i - PAYLOAD_FIELDS_FIXED) / 2],
			    (int)((i - PAYLOAD_FIELDS_FIXED) % 2));
		payload_field_end(&ph, fields + i * CODEC_SHA256_LEN, &bad);
	}
	return bad ? -1 : 0;
}

/* The version 2 hash over um's field digests (n of them). */
static int
payload_v2_outer(const struct ebms_user_message *um,
    const unsigned char *fields, size_t n, unsigned char out[CODEC_SHA256_LEN])
{
	struct payload_hash ph = { NULL, 0 };

	payload_field_start(&ph);
	if (ph.h == NULL)
		return -1;
	payload_hash_str(&ph, PAYLOAD_HASH2_TAG);
	payload_hash_str(&ph, um->message_id);
	payload_hash_bytes(&ph, fields, n * CODEC_SHA256_LEN);
	if (codec_sha256_final(ph.h, out) == -1 || ph.failed)
		return -1;
	return 0;
}

/* The version 2 content hash and its field digests (payload.h). */
int
payload_content_hash2(struct arena *a, const struct ebms_user_message *um,
    unsigned char out[CODEC_SHA256_LEN], unsigned char **ret_fields,
    size_t *ret_len)
{
	size_t n = PAYLOAD_FIELDS_FIXED + 2 * um->n_parts;
	unsigned char *fields = arena_calloc(a, n, CODEC_SHA256_LEN);

	if (fields == NULL || payload_fields(um, fields, n, 0) == -1 ||
	    payload_v2_outer(um, fields, n, out) == -1)
		return -1;
	*ret_fields = fields;
	*ret_len = n * CODEC_SHA256_LEN;
	return 0;
}

/* Both versions into fields[n] (allocated), v2 and v1, or only version 2
 * when v1 is NULL (payload_int.h). */
int
payload_hashes_fill(const struct ebms_user_message *um, unsigned char *fields,
    size_t n, unsigned char v2[CODEC_SHA256_LEN],
    unsigned char v1[CODEC_SHA256_LEN])
{
	struct payload_hash ph1 = { NULL, 0 }, ph2;
	struct payload_hash *p1 = v1 != NULL ? &ph1 : NULL;  /* version 1 */
	size_t i;
	int bad = 0;

	if (payload_fields(um, fields, n, 1) == -1)
		return -1;
	if (p1 != NULL) {
		payload_field_start(p1);
		if (p1->h == NULL)
			return -1;
		payload_v1_head(p1, um);
	}
	for (i = 0; i < um->n_parts; i++) {
		if (p1 != NULL)
			payload_v1_part(p1, &um->parts[i]);
		payload_field_start(&ph2);
		if (ph2.h == NULL) {
			bad = 1;
			break;
		}
		payload_hash_data(&ph2, p1, um->parts[i].data,
		    um->parts[i].len);
		payload_field_end(&ph2, fields + (PAYLOAD_FIELDS_FIXED +
		    2 * i + 1) * CODEC_SHA256_LEN, &bad);
	}
	if (p1 != NULL)
		payload_field_end(p1, v1, &bad);
	if (bad || payload_v2_outer(um, fields, n, v2) == -1)
		return -1;
	return 0;
}

/* Both versions, each part's bytes read once (payload.h). */
int
payload_content_hashes(struct arena *a, const struct ebms_user_message *um,
    unsigned char v2[CODEC_SHA256_LEN], unsigned char **ret_fields,
    size_t *ret_len, unsigned char v1[CODEC_SHA256_LEN])
{
	size_t n = PAYLOAD_FIELDS_COUNT(um);
	unsigned char *fields = arena_calloc(a, n, CODEC_SHA256_LEN);

	if (fields == NULL || payload_hashes_fill(um, fields, n, v2, v1) == -1)
		return -1;
	*ret_fields = fields;
	*ret_len = n * CODEC_SHA256_LEN;
	return 0;
}

/* The name of field digest i (payload.h), written into buf. */
const char *
payload_field_name(size_t i, char *buf, size_t len)
{
	size_t part;

	if (i < PAYLOAD_FIELDS_FIXED)
		return payload_field_names[i];
	part = (i - PAYLOAD_FIELDS_FIXED) / 2;
	(void)snprintf(buf, len, "PartInfo[%zu] %s", part,
	    (i - PAYLOAD_FIELDS_FIXED) % 2 == 0 ? "PartProperties" :
	    "payload bytes");
	return buf;
}

/* The first field in which two digest lists differ (payload.h). */
const char *
payload_field_diff(const unsigned char *stored, size_t stored_len,
    const unsigned char *now, size_t now_len, char *buf, size_t len)
{
	size_t n = (stored_len < now_len ? stored_len : now_len) /
	    CODEC_SHA256_LEN, i;

	if (stored == NULL)
		return "content (row stored before per-field digests)";
	for (i = 0; i < n; i++)
		if (memcmp(stored + i * CODEC_SHA256_LEN,
		    now + i * CODEC_SHA256_LEN, CODEC_SHA256_LEN) != 0)
			return payload_field_name(i, buf, len);
	if (stored_len != now_len)
		return "PartInfo count";
	return "none (every field digest equal)";
}
