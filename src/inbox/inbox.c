/*
 * inbox — the transactional accept: hash the content, map the verified
 * UserMessage onto a store_message and hand it to store_accept(), which
 * decides new / duplicate / drift in one database transaction.
 */
#include "inbox.h"

#include <string.h>
#include <time.h>

#include "../payload/payload.h"
#include "../util/buf.h"
#include "../util/clock.h"

/* "YYYY-MM" (UTC) of epoch_ms, the retention partition of the row. */
static const char *
inbox_partition_key(struct arena *a, int64_t epoch_ms)
{
	time_t secs = (time_t)(epoch_ms / 1000);
	struct tm tm;

	if (gmtime_r(&secs, &tm) == NULL)
		return NULL;
	return arena_sprintf(a, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
}

/*
 * PartProperties as a JSON object {"name":"value",...} in document order
 * (the type attribute is not kept); arena copy, NULL on failure.
 */
static const char *
inbox_props_json(struct arena *a, const struct ebms_part *part)
{
	struct buf b = { 0 };
	const char *ret = NULL;
	size_t i;
	int fail;

	fail = buf_puts(&b, "{");
	for (i = 0; i < part->n_props && fail == 0; i++) {
		const struct ebms_property *p = &part->props[i];

		fail |= buf_puts(&b, i > 0 ? ",\"" : "\"");
		fail |= buf_json_escape(&b, p->name != NULL ? p->name : "");
		fail |= buf_puts(&b, "\":\"");
		fail |= buf_json_escape(&b, p->value != NULL ? p->value : "");
		fail |= buf_puts(&b, "\"");
	}
	if (fail == 0 && buf_puts(&b, "}") == 0)
		ret = arena_strndup(a, b.data, b.len);
	buf_free(&b);
	return ret;
}

/* One store_part per PartInfo, in PartInfo order. */
static int
inbox_parts(struct arena *a, const struct ebms_user_message *um,
    struct store_message *m)
{
	struct store_part *parts = NULL;
	size_t i;

	if (um->n_parts > 0) {
		parts = arena_calloc(a, um->n_parts, sizeof(*parts));
		if (parts == NULL)
			return -1;
	}
	for (i = 0; i < um->n_parts; i++) {
		const struct ebms_part *p = &um->parts[i];

		parts[i].part_no = (int)i;
		parts[i].content_id = p->content_id;
		parts[i].mime_type = p->media_type != NULL ? p->media_type :
		    p->mime_type;
		parts[i].properties = inbox_props_json(a, p);
		parts[i].data = p->data;
		parts[i].len = p->len;
		if (parts[i].properties == NULL)
			return -1;
	}
	m->parts = parts;
	m->n_parts = um->n_parts;
	return 0;
}

/* A large message's hashes being computed (store.h struct store_pending). */
struct inbox_pending {
	struct store_pending base;
	struct payload_job *job;
	struct store_message *m;
};

/* store_pending.wait: the job's hashes into the message. */
static int
inbox_pending_wait(void *ctx)
{
	struct inbox_pending *p = ctx;

	return payload_hashes_wait(p->job, p->m->content_hash);
}

/* store_pending.v1: the version 1 hash, computed now (payload.h). */
static int
inbox_pending_v1(void *ctx)
{
	struct inbox_pending *p = ctx;

	return payload_hashes_v1(p->job, p->m->content_hash_v1);
}

/*
 * Both content hashes (payload.h): version 2 with its field digests, which
 * a new row stores, and version 1, which only a row stored before the
 * digests existed is compared with (README "The inbox guarantees").  A
 * large message's are computed on a thread while the store works
 * (m->pending; inbox_settle), its version 1 only if the store asks.
 */
static int
inbox_hash(struct arena *a, const struct ebms_user_message *um,
    struct store_message *m)
{
	struct inbox_pending *p = arena_calloc(a, 1, sizeof(*p));
	unsigned char *fields = NULL;
	int r;

	if (p == NULL)
		return -1;
	r = payload_hashes_start(a, um, &fields, &m->field_hashes_len, &p->job);
	if (r == 0) {
		p->base.wait = inbox_pending_wait;
		p->base.v1 = inbox_pending_v1;
		p->base.ctx = p;
		p->m = m;
		m->pending = &p->base;
	} else if (r == -1 || payload_content_hashes(a, um, m->content_hash,
	    &fields, &m->field_hashes_len, m->content_hash_v1) == -1)
		return -1;
	m->field_hashes = fields;
	return 0;
}

/* See inbox.h. */
int
inbox_settle(struct store_message *m)
{
	if (m->pending == NULL)
		return 0;
	return m->pending->wait(m->pending->ctx);
}

/* Map the UserMessage onto the inbox row; -1 with err set on failure. */
static int
inbox_message(struct arena *a, const struct ebms_user_message *um,
    const struct pmode_leg *leg, const char *peer, struct store_message *m,
    struct err *err)
{
	if (leg == NULL)
		return err_set(err, ERR_INTERNAL, NULL,
		    "no P-Mode leg for the inbox row");
	/* the leg's configured parties, not what the message named first:
	 * pmode_match checked that every PartyId is one of theirs (conf.h
	 * struct conf_party: the canonical name); on a network leg with an
	 * open From, the one PartyId the signer's certificate names */
	m->message_id = um->message_id;
	m->from_party = conf_from_name(a, leg, um->from.n_ids == 1 ?
	    um->from.ids[0].type : NULL, um->from.n_ids == 1 ?
	    um->from.ids[0].value : NULL);
	m->to_party = leg->to.name;
	m->service = um->service;
	m->action = um->action;
	m->conversation_id = um->conversation_id;
	m->agreement_ref = um->agreement_ref;
	m->pmode_id = leg->id;
	m->source = peer;
	m->received_at_ms = clock_epoch_ms();
	m->partition_key = inbox_partition_key(a, m->received_at_ms);
	if (m->from_party == NULL || m->partition_key == NULL ||
	    inbox_parts(a, um, m) == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not build the inbox row (out of request memory)");
	if (inbox_hash(a, um, m) == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not hash the message content");
	return 0;
}

/* Hash the content and map um onto *ret (see inbox.h). */
int
inbox_prepare(struct arena *a, const struct ebms_user_message *um,
    const struct pmode_leg *leg, const char *peer, struct store_message *ret,
    struct err *err)
{
	memset(ret, 0, sizeof(*ret));
	return inbox_message(a, um, leg, peer, ret, err);
}

/* The business key of um and the leg's mode into m (see inbox.h). */
int
inbox_business(struct arena *a, const struct inbox_business_in *in,
    struct store_message *m, const char **ret_why, struct err *err)
{
	const struct pmode_leg *leg = in->leg;
	const char *why = NULL;

	m->business_key = NULL;
	m->business_mode = STORE_BUSINESS_OFF;
	if (ret_why != NULL)
		*ret_why = NULL;
	if (leg->business_duplicates == CONF_BUSINESS_OFF)
		return 0;
	if (payload_business_key(a, in->um, in->ctx, &m->business_key,
	    &why) == -1)
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not read the business key (out of request memory)");
	if (m->business_key != NULL)
		m->business_mode = leg->business_duplicates ==
		    CONF_BUSINESS_REFUSE ? STORE_BUSINESS_REFUSE :
		    STORE_BUSINESS_FLAG;
	if (ret_why != NULL)
		*ret_why = why;
	return 0;
}

/* store_accept() with this receipt (NULL: probe); DRIFT becomes EBMS:0004. */
int
inbox_submit(struct store *s, struct arena *a, struct store_message *m,
    const unsigned char *receipt, size_t receipt_len,
    struct store_result *ret, struct err *err)
{
	struct store_result res;

	/* no connection (never opened, or lost at start-up): the database is
	 * unavailable, which the partner sees as 503 and retries later */
	if (s == NULL)
		return err_set(err, ERR_STORE, NULL, "no store connection");
	m->receipt = receipt;
	m->receipt_len = receipt_len;
	if (store_accept(s, m, a, &res, err) == -1)
		return -1;
	*ret = res;
	/* ebMS3 Core 6.7.1: no dedicated code for a reused MessageId.  The
	 * differing field goes to the log only (err detail), never to the
	 * partner, whose answer stays one fixed text. */
	if (res.outcome == STORE_DRIFT) {
		char buf[64];

		(void)err_set(err, ERR_EBMS, "EBMS:0004",
		    "message id already used for other content");
		err_detail(err, "drift: first differing field %s",
		    m->field_hashes == NULL ? "unknown (probe)" :
		    payload_field_diff(res.stored_fields, res.stored_fields_len,
		    m->field_hashes, m->field_hashes_len, buf, sizeof(buf)));
		return -1;
	}
	/* the partner learns that its own document was seen before, never
	 * under which MessageId (the log has it) */
	if (res.outcome == STORE_BUSINESS_DUP) {
		(void)err_set(err, ERR_EBMS, "EBMS:0004",
		    "business document already received under another "
		    "message id");
		err_detail(err, "business duplicate of %s (key %s)",
		    res.business_duplicate_of != NULL ?
		    res.business_duplicate_of : "?", m->business_key);
		return -1;
	}
	return 0;
}

/* Hash, map and accept in one call (see inbox.h). */
int
inbox_accept(struct store *s, struct arena *a,
    const struct ebms_user_message *um, const struct pmode_leg *leg,
    const char *peer, const unsigned char *receipt, size_t receipt_len,
    struct store_result *ret, struct err *err)
{
	struct inbox_business_in bin = { um, leg, NULL };
	struct store_message m;
	int rc;

	if (s == NULL)
		return err_set(err, ERR_STORE, NULL, "no store connection");
	rc = inbox_prepare(a, um, leg, peer, &m, err) == -1 ||
	    inbox_business(a, &bin, &m, NULL, err) == -1 ||
	    inbox_submit(s, a, &m, receipt, receipt_len, ret, err) == -1 ?
	    -1 : 0;
	(void)inbox_settle(&m);
	return rc;
}
