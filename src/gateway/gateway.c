#include "gateway.h"

#include <stdlib.h>
#include <string.h>

#include "../inbox/inbox.h"
#include "../mime/mime.h"
#include "../payload/payload.h"
#include "../pmode/pmode.h"
#include "../receipt/receipt.h"
#include "../sbdh/sbdh.h"
#include "../soap/soap.h"
#include "../spool/spool.h"
#include "../trust/trust.h"
#include "../util/clock.h"
#include "../xml/xml.h"

#define GATEWAY_CT_SOAP "application/soap+xml; charset=utf-8"
#define GATEWAY_CT_TEXT "text/plain; charset=utf-8"
#define GATEWAY_RETRY_AFTER_S 5
/* 2^16 remembered MessageIds (512 KiB, resident only as slots are used) */
#define GATEWAY_RECENT_BITS 16

/* One request and its replay-cache key (gateway_replay.c). */
struct gateway_in {
	const struct gateway_request *req;
	int keyed;
	unsigned char key[GATEWAY_REPLAY_KEY_LEN];
	const struct sbdh *sbdh;     /* a Peppol leg's header, or NULL */
};

_Static_assert(CONF_DECRYPT_MAX == WSS_KEYRING_MAX,
    "conf and wss bound the decryption pairs alike");

/* conf's policy words -> wss's (the two modules do not depend on each other) */
static enum wss_need
gateway_need(enum conf_policy p)
{
	return p == CONF_REQUIRED ? WSS_REQUIRED :
	    p == CONF_OPTIONAL ? WSS_OPTIONAL : WSS_NEVER;
}

/* conf's party rule sources -> trust's (conf does not depend on trust) */
static enum trust_party_source
gateway_party_source(enum conf_party_source s)
{
	switch (s) {
	case CONF_PARTY_SUBJECT: return TRUST_PARTY_SUBJECT;
	case CONF_PARTY_SAN_URI: return TRUST_PARTY_SAN_URI;
	case CONF_PARTY_SAN_DNS: return TRUST_PARTY_SAN_DNS;
	case CONF_PARTY_SAN_EMAIL: return TRUST_PARTY_SAN_EMAIL;
	default: return TRUST_PARTY_CN;
	}
}

/* The trust of a <network> leg (issue 12): the network's anchors, CRLs,
 * issuers, policies and party rule. */
static int
gateway_trust_network(const struct conf_network *n, struct trust **ret,
    struct err *err)
{
	struct trust_network tn = {
		.issuers = (const char *const *)n->issuers,
		.n_issuers = n->n_issuers,
		.policies = (const char *const *)n->policies,
		.n_policies = n->n_policies,
		.party_source = gateway_party_source(n->party_source),
		.party_attribute = n->party_attribute,
	};
	struct trust_files f = {
		.anchors = (const char *const *)n->anchors,
		.n_anchors = n->n_anchors,
		.crls = (const char *const *)n->crls,
		.n_crls = n->n_crls,
		.network = &tn,
	};

	return trust_new(&f, ret, err);
}

/* The trust of one leg: its signers, anchors and CRLs (src/trust). */
static int
gateway_trust(const struct pmode_leg *leg, struct trust **ret,
    struct err *err)
{
	struct trust_files f = {
		.signers = (const char *const *)leg->signer_certs,
		.n_signers = leg->n_signer_certs,
		.anchors = (const char *const *)leg->trust_anchors,
		.n_anchors = leg->n_trust_anchors,
		.crls = (const char *const *)leg->trust_crls,
		.n_crls = leg->n_trust_crls,
	};

	return trust_new(&f, ret, err);
}

/* Signer certificates named in a 0101's log line (wss.h signers_desc). */
#define GATEWAY_SIGNERS_SHOWN 4

/*
 * The leg's signer certificates as a log line names them (issue 11 item
 * 12): "sha256 HEX, subject S" each, the first GATEWAY_SIGNERS_SHOWN, then
 * how many more.  malloc'd, or NULL (none, or unreadable: serve's load of
 * the same files reports those).
 */
static char *
gateway_signers_desc(const struct pmode_leg *leg)
{
	struct arena *a = arena_new(0);
	struct wss_cert_info *v;
	struct buf b = {0};
	size_t i, j, n, shown = 0, more = 0;
	char *s = NULL;

	for (i = 0; a != NULL && i < leg->n_signer_certs; i++) {
		if (wss_cert_file_info(a, leg->signer_certs[i], &v, &n,
		    NULL) == -1)
			continue;
		for (j = 0; j < n; j++, shown++) {
			if (shown >= GATEWAY_SIGNERS_SHOWN) {
				more++;
				continue;
			}
			(void)buf_printf(&b, "%ssha256 %s, subject %s",
			    shown > 0 ? "; " : "", v[j].sha256, v[j].subject);
		}
	}
	if (more > 0)
		(void)buf_printf(&b, "; and %zu more", more);
	if (b.len > 0 && b.data != NULL)
		s = strdup(b.data);
	buf_free(&b);
	arena_free(a);
	return s;
}

/* Build the WS-Security policy of one leg: allowlist, trust, decryption pairs. */
static int
gateway_leg_init(const struct gateway *gw, const struct pmode_leg *leg,
    struct gateway_leg *gl, struct err *err)
{
	const struct conf *c = gw->conf;
	struct wss_policy *p = &gl->policy;

	p->signing = gateway_need(leg->signing);
	p->encryption = gateway_need(leg->encryption);
	/* issue 13: an explicit <algorithms> list wins over the profile */
	if (wss_alg_parse(leg->algorithms != NULL ? leg->algorithms :
	    conf_profile_name(leg->profile), &p->algs, err) == -1)
		goto fail;
	p->at_ms = c->verify_at_ms;
	p->skew_ms = (int64_t)leg->timestamp_skew_s * 1000;
	p->require_timestamp = leg->timestamp == CONF_REQUIRED;
	p->max_references = 30;
	p->max_transforms = 5;
	/* XML attachments: the request's limits (issue 10 item 3); their own
	 * node count, since an XML payload is parsed only once the
	 * SignatureValue verified, and real payloads outgrow an envelope */
	p->max_xml_depth = c->limits.max_xml_depth;
	p->max_xml_nodes = c->limits.max_attachment_xml_nodes;
	p->max_xml_attributes = c->limits.max_xml_attributes;
	p->max_memory = c->limits.request_memory_bytes;
	if (leg->network != NULL) {
		if (gateway_trust_network(leg->network, &gl->trust, err) == -1)
			goto fail;
	} else if (leg->n_signer_certs > 0 &&
	    gateway_trust(leg, &gl->trust, err) == -1) {
		goto fail;
	}
	if (gl->trust != NULL && leg->revocation != CONF_NEVER)
		trust_set_revocation(gl->trust, gw->revoc,
		    leg->revocation == CONF_REQUIRED ? TRUST_REVOC_REQUIRE :
		    TRUST_REVOC_PREFER);
	p->trust = gl->trust;
	gl->signers_desc = gateway_signers_desc(leg);
	p->signers_desc = gl->signers_desc;
	if (gateway_keys_leg(gw, leg, p->algs, gl, err) == -1)
		goto fail;
	p->decrypt_keys = gl->decrypt != NULL ? gl->decrypt : gw->decrypt;
	return 0;
fail:
	err_detail(err, "pmode \"%s\"", leg->id);
	return -1;
}

int
gateway_new(const struct conf *conf, struct gateway **ret, struct err *err)
{
	return gateway_new_revoc(conf, NULL, ret, err);
}

int
gateway_new_revoc(const struct conf *conf, struct trust_revoc *revoc,
    struct gateway **ret, struct err *err)
{
	struct gateway *gw = calloc(1, sizeof(*gw));
	size_t i;

	if (gw == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	gw->conf = conf;
	gw->revoc = revoc;
	/* <limits> maxDecompressed* (issue 14) */
	gw->payload_limits.max_decompressed_bytes =
	    conf->limits.max_decompressed_bytes;
	gw->payload_limits.max_ratio = conf->limits.max_decompression_ratio;
	gw->payload_limits.max_total_bytes =
	    conf->limits.max_decompressed_total_bytes;
	gw->legs = calloc(conf->n_legs > 0 ? conf->n_legs : 1, sizeof(*gw->legs));
	if (gw->legs == NULL) {
		free(gw);
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	}
	if ((gw->recent = inbox_recent_new(GATEWAY_RECENT_BITS)) == NULL ||
	    (gw->replay = gateway_replay_new()) == NULL) {
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto fail;
	}
	if (ebms_schema_load(&gw->schema, err) == -1 ||
	    gateway_keys_load(gw, err) == -1)
		goto fail;
	for (i = 0; i < conf->n_legs; i++)
		if (gateway_leg_init(gw, &conf->legs[i], &gw->legs[i], err) == -1)
			goto fail;
	*ret = gw;
	return 0;
fail:
	gateway_free(gw);
	return -1;
}

void
gateway_free(struct gateway *gw)
{
	size_t i;

	if (gw == NULL)
		return;
	for (i = 0; gw->legs != NULL && i < gw->conf->n_legs; i++) {
		trust_free(gw->legs[i].trust);
		wss_keyring_free(gw->legs[i].decrypt);
		free(gw->legs[i].signers_desc);
	}
	free(gw->legs);
	inbox_recent_free(gw->recent);
	gateway_replay_free(gw->replay);
	ebms_schema_free(gw->schema);
	for (i = 0; i < gw->n_keys; i++)
		wss_key_free(gw->keys[i]);
	wss_keyring_free(gw->decrypt);
	free(gw);
}

/* Is this header block marked mustUnderstand (SOAP 1.2 Part 1, 5.2.3)? */
static int
gateway_must_understand(const xmlNode *block, const struct soap_env *env)
{
	const char *ns = env->version == SOAP_11 ? NS_SOAP11 : NS_SOAP12;
	xmlChar *v = xmlGetNsProp(block, (const xmlChar *)"mustUnderstand",
	    (const xmlChar *)ns);
	int yes;

	if (v == NULL)
		return 0;
	yes = strcmp((const char *)v, "true") == 0 || strcmp((const char *)v, "1") == 0;
	xmlFree(v);
	return yes;
}

/*
 * SOAP 1.2 Part 1, 5.2.3: a header block we are required to understand but
 * do not is a MustUnderstand fault.  We understand eb:Messaging and
 * wsse:Security (the latter is refused by policy until verification lands).
 */
static int
gateway_check_headers(const struct soap_env *env, struct err *err)
{
	xmlNodePtr h;

	if (env->header == NULL)
		return 0;
	for (h = xml_child(env->header, NULL, NULL); h != NULL;
	    h = xml_next(h, NULL, NULL)) {
		if (xml_is(h, NS_EB, "Messaging") || xml_is(h, NS_WSSE, "Security"))
			continue;
		if (gateway_must_understand(h, env)) {
			err_detail(err, "header block {%s}%s",
			    h->ns != NULL ? (const char *)h->ns->href : "",
			    (const char *)h->name);
			return err_soap(err, ERR_SOAP_MUST_UNDERSTAND, 500,
			    "a mandatory header block is not understood");
		}
	}
	return 0;
}

/*
 * A decrypted part without a MimeType property is stored with the media type
 * its encryption declares (XML Encryption 1.1 3.1 EncryptedData/@MimeType,
 * or the Content-Type inside an Attachment-Complete plaintext), not as the
 * ciphertext part's application/octet-stream (issue 10 item 11).
 */
static void
gateway_decrypted_type(struct arena *a, struct ebms_part *p,
    const struct wss_part *wp)
{
	struct mime_ct ct;

	if (wp->decrypted && p->mime_type == NULL && wp->content_type != NULL &&
	    mime_ct_parse(a, wp->content_type, &ct) == 0)
		p->media_type = ct.type;
}

/*
 * A network leg (issue 12, README "Networks"): once the signature has
 * verified, the certificate that made it must name the eb:From PartyId
 * the message claims (pmode_match let through exactly one, of the party
 * rule's type).  A member claiming another member's id is EBMS:0101;
 * nothing has been stored yet.  Other legs: bound by their signer list.
 */
static int
gateway_member(const struct gateway_leg *gl, const struct ebms_user_message *um,
    const struct wss_result *res, struct err *err)
{
	if (!trust_is_network(gl->trust))
		return 0;
	if (!res->verified || um->from.n_ids != 1)
		return err_set(err, ERR_EBMS, "EBMS:0101",
		    "certificate not bound to the sending party");
	return trust_party_check(gl->trust, res->signer_cert,
	    um->from.ids[0].value, err);
}

/* 1 when [p, p + n) overlaps [q, q + m). */
static int
gateway_overlap(const unsigned char *p, size_t n, const unsigned char *q,
    size_t m)
{
	return p != NULL && q != NULL && p < q + m && q < p + n;
}

/*
 * WS-Security under the leg's policy (issue 3): decrypt the attachments,
 * verify the signature over eb:Messaging, the Body and every attachment,
 * then put the final bytes back into the UserMessage's parts and gunzip
 * what PartProperties say is compressed.
 */
static int
gateway_secure(const struct gateway *gw, struct arena *a,
    const struct soap_env *env, struct ebms_user_message *um,
    const struct gateway_leg *gl, struct wss_result *res, struct err *err)
{
	struct wss_part *parts;
	size_t i, n = 0;

	parts = arena_calloc(a, um->n_parts > 0 ? um->n_parts : 1, sizeof(*parts));
	if (parts == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < um->n_parts; i++) {
		const struct mime_part *mp = um->parts[i].mime;

		if (mp == NULL)
			continue;   /* a payload in the SOAP Body: covered with it */
		parts[n].content_id = mp->content_id;
		parts[n].content_type = mp->content_type;
		parts[n].headers = mp->headers;
		parts[n].headers_len = mp->headers_len;
		parts[n].data = mp->data;
		parts[n].len = mp->len;
		n++;
	}
	if (wss_inbound(a, env->doc, um->messaging, env->body, parts, n,
	    &gl->policy, res, err) == -1 ||
	    gateway_member(gl, um, res, err) == -1)
		return -1;
	for (i = 0, n = 0; i < um->n_parts; i++) {
		if (um->parts[i].mime == NULL)
			continue;
		/* a ciphertext replaced by its plaintext is read no more */
		if (!gateway_overlap(parts[n].data, parts[n].len,
		    um->parts[i].mime->data, um->parts[i].mime->len))
			spool_drop(um->parts[i].mime->data,
			    um->parts[i].mime->len);
		um->parts[i].data = parts[n].data;
		um->parts[i].len = parts[n].len;
		gateway_decrypted_type(a, &um->parts[i], &parts[n]);
		n++;
	}
	return payload_decompress(a, um, &gw->payload_limits, err);
}

/*
 * ebMS3 Core 5.2.2.1: the eb:Timestamp against the retention (ebms.h,
 * README "Message age"), at <replay><verifyAt> when set.  Runs after
 * wss_inbound(): on a signed leg the timestamp is the authenticated one in
 * the signed eb:Messaging; an unsigned leg gets the same bound on a
 * timestamp anyone may write.  The retention is the shorter of the leg's
 * and the gateway's: rows of a leg removed or renamed since are purged by
 * the gateway's.  The replay cache window (sec) shrinks to the instants at
 * which this check passes again.
 */
static int
gateway_check_age(const struct gateway *gw, const struct ebms_user_message *um,
    const struct pmode_leg *leg, struct wss_result *sec, struct err *err)
{
	const struct conf *c = gw->conf;
	int64_t at = c->verify_at_ms != 0 ? c->verify_at_ms : clock_epoch_ms();
	int days = c->retention_days;
	struct ebms_age bound;
	int64_t from, until;

	if (leg->retention_days > 0 && leg->retention_days < days)
		days = leg->retention_days;
	ebms_age_bound(days, leg->timestamp_skew_s, &bound);
	if (ebms_age_check(um, at, &bound, err) == -1)
		return -1;
	ebms_age_window(um->timestamp_ms, &bound, &from, &until);
	if (from > sec->valid_from_ms)
		sec->valid_from_ms = from;
	if (until < sec->valid_until_ms)
		sec->valid_until_ms = until;
	return 0;
}

/*
 * SOAP 1.2 Part 2, 7.1.4 / RFC 7303 3.2: a charset parameter on the root
 * part's media type (the request's, for a bare envelope) must name UTF-8 or
 * UTF-16 and agree with the bytes; the XML declaration is checked by
 * xml_parse().
 */
static int
gateway_charset(struct arena *a, const struct mime_part *root,
    struct err *err)
{
	struct mime_ct ct;

	if (root->content_type == NULL ||
	    mime_ct_parse(a, root->content_type, &ct) == -1)
		return 0;      /* mime_parse() judged the header already */
	return xml_charset_check(mime_ct_param(&ct, "charset"),
	    (const char *)root->data, root->len, err);
}

/*
 * The envelope's XML limits (README "Configuration"): every node kind
 * counts, the root part has its own byte cap, and libxml2's memory is
 * counted against what the request's arena has left.
 */
static void
gateway_xml_limits(const struct conf_limits *lim, struct arena *a,
    struct xml_limits *ret)
{
	xml_limits_default(ret);
	ret->max_depth = lim->max_xml_depth;
	ret->max_nodes = lim->max_xml_nodes;
	ret->max_attributes = lim->max_xml_attributes;
	ret->max_bytes = lim->max_envelope_bytes;
	ret->max_memory = arena_remaining(a);
}

/* Parse and validate up to a P-Mode-matched UserMessage. */
static int
gateway_parse(const struct gateway *gw, struct arena *a,
    const struct gateway_request *req, struct soap_env *env,
    struct ebms_user_message **ret_um, struct gateway_answer *ans)
{
	const struct conf_limits *lim = &gw->conf->limits;
	struct mime_limits mlim;
	struct xml_limits xlim;
	struct mime_message mime;
	const struct mime_part *root;
	xmlDocPtr doc;
	struct err *err = &ans->err;

	mime_limits_default(&mlim);
	mlim.max_parts = lim->max_parts;
	if (mime_parse(a, req->content_type, req->body, req->len, &mlim, &mime,
	    err) == -1)
		return -1;
	root = &mime.parts[mime.root];
	gateway_xml_limits(lim, a, &xlim);
	if (gateway_charset(a, root, err) == -1 ||
	    xml_parse(a, (const char *)root->data, root->len, &xlim, &doc,
	    err) == -1 || soap_open(doc, env, err) == -1 ||
	    gateway_check_headers(env, err) == -1)
		return -1;
	if (ebms_parse(a, gw->schema, env, ret_um, &ans->message_id, err) == -1)
		return -1;
	ans->message_id = (*ret_um)->message_id;
	if (env->version == SOAP_11)
		return err_soap(err, ERR_SOAP_VERSION_MISMATCH, 500,
		    "only SOAP 1.2 is supported (AS4 profile 2.1)");
	return ebms_bind_parts(a, *ret_um, &mime, env, err);
}

/* A stored request whose verification holds for a while: remember it so
 * the same bytes again are answered by gateway_replayed(). */
static void
gateway_remember(const struct gateway *gw, const struct gateway_in *in,
    const struct store_message *m, const struct pmode_leg *leg,
    const struct wss_result *sec)
{
	struct gateway_replay_hit hit;

	if (!in->keyed || !sec->replayable)
		return;
	hit.message_id = m->message_id;
	hit.from_party = m->from_party;  /* with message_id, the inbox key */
	hit.pmode = leg->id;
	memcpy(hit.content_hash, m->content_hash, sizeof(hit.content_hash));
	memcpy(hit.content_hash_v1, m->content_hash_v1,
	    sizeof(hit.content_hash_v1));
	gateway_replay_note(gw->replay, in->key, &hit, sec->valid_from_ms,
	    sec->valid_until_ms);
}

/*
 * The very bytes of a request this gateway verified and stored, inside the
 * window in which they would verify again: let the store decide on the
 * inbox key (sending party, MessageId) and content hashes alone (a probe).
 * 1 answered (a duplicate: the stored Receipt), 0 take the full path (not
 * cached, expired window, purged meanwhile, or any store trouble, which the
 * full path reports).
 */
static int
gateway_replayed(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_in *in, struct gateway_answer *ans)
{
	int64_t now = clock_epoch_ms();
	int64_t at = gw->conf->verify_at_ms != 0 ? gw->conf->verify_at_ms : now;
	struct gateway_replay_hit hit;
	struct store_message m;
	struct store_result res;
	struct err err;

	err_clear(&err);
	if (s == NULL || !in->keyed ||
	    gateway_replay_find(gw->replay, in->key, at, a, &hit) != 1 ||
	    hit.from_party == NULL)
		return 0;
	memset(&m, 0, sizeof(m));
	m.message_id = hit.message_id;
	m.from_party = hit.from_party;
	memcpy(m.content_hash, hit.content_hash, sizeof(m.content_hash));
	memcpy(m.content_hash_v1, hit.content_hash_v1,
	    sizeof(m.content_hash_v1));
	m.received_at_ms = now;
	if (inbox_submit(s, a, &m, NULL, 0, &res, &err) == -1 ||
	    res.outcome != STORE_DUPLICATE ||
	    buf_append(&ans->body, res.receipt, res.receipt_len) == -1) {
		buf_reset(&ans->body);
		return 0;
	}
	ans->status = 200;
	ans->content_type = GATEWAY_CT_SOAP;
	ans->outcome = "duplicate";
	ans->replayed = 1;
	ans->message_id = hit.message_id;
	ans->from_party = hit.from_party;
	ans->pmode = hit.pmode;
	return 1;
}

/*
 * A key (party, MessageId) this process answered lately is probably a
 * retry: probe the store first (store.h), which answers a duplicate with
 * the stored Receipt without our signing a new one that would be thrown
 * away.  0 decided (*res filled), 1 not stored (sign and accept), -1
 * failed.
 */
static int
gateway_probe(const struct gateway *gw, struct store *s, struct arena *a,
    struct store_message *m, struct store_result *res, struct err *err)
{
	if (!inbox_recent_seen(gw->recent, m->from_party, m->message_id))
		return 1;
	if (inbox_submit(s, a, m, NULL, 0, res, err) == -1)
		return -1;
	return res->outcome == STORE_ABSENT ? 1 : 0;
}

/*
 * The business key of um (issue 12 item 4) into m: from the header a
 * Peppol leg's checks read, else read here under the same limits.
 */
static int
gateway_business(const struct gateway *gw, struct arena *a,
    const struct gateway_in *in, const struct inbox_business_in *bin,
    struct store_message *m, struct gateway_answer *ans)
{
	struct inbox_business_in b = *bin;
	struct payload_bizkey_ctx ctx;
	struct sbdh_limits lim;

	gateway_sbdh_limits(&gw->conf->limits, a, &lim);
	ctx.sbdh_limits = &lim;
	ctx.sbdh = in->sbdh;
	b.ctx = &ctx;
	return inbox_business(a, &b, m, &ans->business_note, &ans->err);
}

/*
 * A business-level duplicate (issue 12 item 4) for the log and metrics: a
 * NEW row stored flagged, or one refused; nothing otherwise (a retry of
 * the same MessageId is a plain duplicate).
 */
static void
gateway_business_note(struct gateway_answer *ans,
    const struct store_result *res)
{
	if (res->outcome == STORE_BUSINESS_DUP) {
		ans->outcome = "business-duplicate";
		ans->business_mode = "refuse";
	} else if (res->outcome == STORE_NEW &&
	    res->business_duplicate_of != NULL)
		ans->business_mode = "flag";
	else
		return;
	ans->duplicate_of = res->business_duplicate_of;
}

/* Accepted or duplicate: answer the Receipt (ours, or the stored bytes). */
static int
gateway_accept(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_in *in, struct ebms_user_message *um,
    const struct pmode_leg *leg, const struct wss_result *sec,
    struct gateway_answer *ans)
{
	const struct gateway_request *req = in->req;
	struct buf receipt = {0};
	struct store_result res = {0};
	struct inbox_business_in bin = { um, leg, NULL };
	struct store_message m = {0};
	int rc = -1, r;

	if (s == NULL) {
		err_set(&ans->err, ERR_STORE, NULL, "store not connected");
		goto out;
	}
	if (inbox_prepare(a, um, leg, req->peer, &m, &ans->err) == -1 ||
	    gateway_business(gw, a, in, &bin, &m, ans) == -1 ||
	    (r = gateway_probe(gw, s, a, &m, &res, &ans->err)) == -1)
		goto fail;
	ans->business_key = m.business_key;
	/* NRR Receipt (AS4 5.1.8 b) for a verified message, when the leg wants it */
	if (r == 1 && (receipt_build(a, gw->legs[leg - gw->conf->legs].sign, um,
	    leg->receipt_nrr && sec->verified ? sec->references : NULL,
	    leg->receipt_nrr && sec->verified ? sec->n_references : 0,
	    &receipt, NULL, &ans->err) == -1 ||
	    inbox_submit(s, a, &m, (const unsigned char *)receipt.data,
	    receipt.len, &res, &ans->err) == -1))
		goto fail;
	if (res.outcome == STORE_ABSENT) {
		/* only a probe answers ABSENT; the full accept never does */
		err_set(&ans->err, ERR_STORE, NULL, "message disappeared");
		goto out;
	}
	inbox_recent_note(gw->recent, m.from_party, m.message_id);
	gateway_remember(gw, in, &m, leg, sec);
	ans->outcome = res.outcome == STORE_NEW ? "new" : "duplicate";
	gateway_business_note(ans, &res);
	ans->status = 200;
	ans->content_type = GATEWAY_CT_SOAP;
	if (buf_append(&ans->body, res.receipt, res.receipt_len) == -1) {
		err_set(&ans->err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	rc = 0;
	goto out;
fail:
	if (res.outcome == STORE_DRIFT)
		ans->outcome = "drift";
	gateway_business_note(ans, &res);
out:
	(void)inbox_settle(&m);    /* the hash thread ends before the spool */
	buf_free(&receipt);
	return rc;
}

/* Turn ans->err into the answer the partner gets (DESIGN.md "Errors");
 * an eb:Error is signed with key (the matched leg's, else the default). */
static int
gateway_answer_error(const struct gateway *gw, const struct wss_key *key,
    struct arena *a, struct gateway_answer *ans)
{
	const struct err *err = &ans->err;
	/* the partner sees msg and the profile's ErrorDetail, never detail */
	const struct receipt_error re = { ans->message_id, err->ebms_code,
	    err->msg, err->ebms_detail };
	struct err berr = {0};

	buf_reset(&ans->body);
	ans->ebms_code = err->ebms_code;
	if (ans->outcome == NULL)
		ans->outcome = "error";
	switch (err->kind) {
	case ERR_EBMS:
		ans->status = 200;
		ans->content_type = GATEWAY_CT_SOAP;
		if (receipt_build_error(a, key, &re, &ans->body, &berr) == 0)
			return 0;
		break;
	case ERR_SOAP:
		ans->status = err->http_status != 0 ? err->http_status : 400;
		ans->content_type = GATEWAY_CT_SOAP;
		if (soap_fault_write(err, &ans->body) == 0)
			return 0;
		break;
	case ERR_HTTP:
		ans->status = err->http_status != 0 ? err->http_status : 400;
		ans->content_type = GATEWAY_CT_TEXT;
		return buf_printf(&ans->body, "%s\n", err->msg);
	case ERR_STORE:
		ans->status = 503;
		ans->retry_after = GATEWAY_RETRY_AFTER_S;
		ans->content_type = GATEWAY_CT_TEXT;
		return buf_puts(&ans->body, "service temporarily unavailable\n");
	case ERR_UNAVAILABLE:
		/* no fresh revocation status under require (issue 12 item 2):
		 * unknown, not bad; the sender's retry succeeds once a
		 * responder answers */
		ans->status = 503;
		ans->retry_after = (int)gw->conf->revocation.retry_after_s;
		ans->content_type = GATEWAY_CT_TEXT;
		return buf_puts(&ans->body, "service temporarily unavailable\n");
	default:
		break;
	}
	buf_reset(&ans->body);
	ans->status = 500;
	ans->content_type = GATEWAY_CT_TEXT;
	if (berr.kind != ERR_NONE)
		err_detail(&ans->err, "answer: %s", berr.msg);
	return buf_puts(&ans->body, "internal error\n");
}

/* The leg's own <maxBodyBytes> (issue 14 item 4), checked as soon as the
 * leg is known and before any work on the message: over it 413. */
static int
gateway_leg_cap(const struct pmode_leg *leg, const struct gateway_request *req,
    struct err *err)
{
	if (leg->max_body_bytes == 0 || req->len <= leg->max_body_bytes)
		return 0;
	err_http(err, 413, "request body too large for its P-Mode");
	err_detail(err, "pmode \"%s\" maxBodyBytes %llu", leg->id,
	    (unsigned long long)leg->max_body_bytes);
	return -1;
}

int
gateway_receive(const struct gateway *gw, struct store *s, struct arena *a,
    const struct gateway_request *req, struct gateway_answer *ans)
{
	struct ebms_user_message *um = NULL;
	const struct pmode_leg *leg = NULL;
	struct wss_result sec = {0};
	struct gateway_in in = { .req = req };
	const struct wss_key *key = gw->key;
	struct soap_env env;
	int secured;

	memset(ans, 0, sizeof(*ans));
	in.keyed = gateway_replay_key(req, in.key);
	if (gateway_replayed(gw, s, a, &in, ans) == 1)
		return 0;
	if (gateway_parse(gw, a, req, &env, &um, ans) == 0 &&
	    pmode_match(gw->conf, um, &leg, &ans->err) == 1) {
		ans->pmode = leg->id;
		key = gw->legs[leg - gw->conf->legs].sign;   /* issue 13 */
		/* the leg's party, not the message's first PartyId (an open
		 * From: the one it carries, bound after verification) */
		ans->from_party = conf_from_name(a, leg, um->from.n_ids == 1 ?
		    um->from.ids[0].type : NULL, um->from.n_ids == 1 ?
		    um->from.ids[0].value : NULL);
		secured = gateway_leg_cap(leg, req, &ans->err) == 0 &&
		    gateway_secure(gw, a, &env, um,
		    &gw->legs[leg - gw->conf->legs], &sec, &ans->err) == 0;
		ans->decrypt_retiring = sec.decrypted_retiring;
		if (secured &&
		    gateway_check_age(gw, um, leg, &sec, &ans->err) == 0 &&
		    gateway_peppol_check(gw, a, um, leg, &in.sbdh,
		    &ans->err) == 0 &&
		    gateway_accept(gw, s, a, &in, um, leg, &sec, ans) == 0) {
			/* accepted under prefer without a fresh status? */
			ans->revocation_note = sec.revocation_note;
			return 0;
		}
	}
	if (ans->err.kind == ERR_NONE)
		err_set(&ans->err, ERR_INTERNAL, NULL, "request failed");
	if (gateway_answer_error(gw, key, a, ans) == -1) {
		ans->status = 500;
		return -1;
	}
	return 0;
}
