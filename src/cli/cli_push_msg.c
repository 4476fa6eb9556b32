/*
 * cli_push_msg — building one `as4gw push` message: the ebMS3 eb:Messaging
 * header and SOAP 1.2 envelope from the options, the attachments (gzip when
 * --compress), WS-Security signing and encryption (cli_push_secure) and the
 * MIME packaging; the result is the exact bytes and Content-Type that go on
 * the wire (struct cli_push_msg, cli_push_int.h).
 */
#include "cli_push_int.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <zlib.h>

#include "../mime/mime.h"
#include "../util/clock.h"
#include "../util/codec.h"
#include "../sender/sender.h"
#include "../spool/spool.h"
#include "../wss/wss.h"
#include "../xml/xml.h"

#define CLI_PUSH_GZIP "application/gzip" /* AS4 profile 3.1 */

/* <eb:NAME[ ATTR="VAL"]>TEXT</eb:NAME> with every value escaped; nonzero
 * when out of memory.  The attribute is left out when val is NULL. */
static int
cli_push_el(struct buf *b, const char *name, const char *attr, const char *val,
	    const char *text)
{
	int bad = buf_printf(b, "<eb:%s", name);

	if (attr != NULL && val != NULL) {
		bad |= buf_printf(b, " %s=\"", attr);
		bad |= buf_xml_escape(b, val);
		bad |= buf_puts(b, "\"");
	}
	bad |= buf_puts(b, ">");
	bad |= buf_xml_escape(b, text);
	bad |= buf_printf(b, "</eb:%s>", name);
	return bad;
}

/* ebMS3 Core 5.2.2.3-5.2.2.5: From or To, one PartyId and the Role. */
static int
cli_push_party(struct buf *b, const char *name, const struct cli_push_typed *id,
	       const char *role)
{
	int bad = buf_printf(b, "<eb:%s>", name);

	bad |= cli_push_el(b, "PartyId", "type", id->type, id->value);
	bad |= cli_push_el(b, "Role", NULL, NULL, role);
	bad |= buf_printf(b, "</eb:%s>", name);
	return bad;
}

/* ebMS3 Core 5.2.2.6-5.2.2.10, in schema order: AgreementRef?, Service,
 * Action, ConversationId. */
static int
cli_push_collab(struct buf *b, const struct cli_push_opts *o)
{
	int bad = buf_puts(b, "<eb:CollaborationInfo>");

	if (o->agreement.value != NULL)
		bad |= cli_push_el(b, "AgreementRef", "type", o->agreement.type,
				   o->agreement.value);
	bad |= cli_push_el(b, "Service", "type", o->service.type,
			   o->service.value);
	bad |= cli_push_el(b, "Action", NULL, NULL, o->action);
	bad |= cli_push_el(b, "ConversationId", NULL, NULL, o->conversation);
	bad |= buf_puts(b, "</eb:CollaborationInfo>");
	return bad;
}

/* ebMS3 Core 5.2.2.11: MessageProperties, one Property per --property (none:
 * no element, the schema wants at least one Property in it). */
static int
cli_push_props(struct buf *b, const struct cli_push_opts *o)
{
	size_t i;
	int bad = 0;

	if (o->n_props == 0)
		return 0;
	bad |= buf_puts(b, "<eb:MessageProperties>");
	for (i = 0; i < o->n_props; i++) {
		bad |= buf_puts(b, "<eb:Property name=\"");
		bad |= buf_xml_escape(b, o->props[i].name);
		bad |= buf_puts(b, "\"");
		if (o->props[i].type != NULL) {
			bad |= buf_puts(b, " type=\"");
			bad |= buf_xml_escape(b, o->props[i].type);
			bad |= buf_puts(b, "\"");
		}
		bad |= buf_puts(b, ">");
		bad |= buf_xml_escape(b, o->props[i].value);
		bad |= buf_puts(b, "</eb:Property>");
	}
	bad |= buf_puts(b, "</eb:MessageProperties>");
	return bad;
}

/* ebMS3 Core 5.2.2.12-5.2.2.13: one PartInfo per attachment, href="cid:..",
 * with the MimeType part property eDelivery AS4 requires, and with
 * --compress CompressionType (AS4 profile 3.1: MimeType is then the type of
 * the uncompressed payload).  No PayloadInfo at all without payloads (the
 * schema wants at least one PartInfo in it). */
static int
cli_push_payload_info(struct buf *b, const struct cli_push_opts *o)
{
	size_t i;
	int bad;

	if (o->n_payloads == 0)
		return 0;
	bad = buf_puts(b, "<eb:PayloadInfo>");
	for (i = 0; i < o->n_payloads; i++) {
		bad |= buf_puts(b, "<eb:PartInfo href=\"cid:");
		bad |= buf_xml_escape(b, o->payloads[i].cid);
		bad |= buf_puts(b, "\"><eb:PartProperties>");
		bad |= cli_push_el(b, "Property", "name", "MimeType",
				   o->payloads[i].mime_type);
		if (o->compress)
			bad |= cli_push_el(b, "Property", "name",
					   "CompressionType", CLI_PUSH_GZIP);
		bad |= buf_puts(b, "</eb:PartProperties></eb:PartInfo>");
	}
	bad |= buf_puts(b, "</eb:PayloadInfo>");
	return bad;
}

/* The SOAP 1.2 envelope: eb:Messaging (mustUnderstand, ebMS3 Core 5.2.1)
 * with one UserMessage, an empty Body; both carry a wsu:Id so that a signing
 * step can reference them (eDelivery AS4 1.15). */
static int
cli_push_envelope(struct buf *b, const struct cli_push_opts *o,
		  const char *msgid, const char *uuid)
{
	char ts[CLOCK_ISO_LEN];
	int bad;

	clock_iso8601(clock_epoch_ms(), ts);
	bad = buf_printf(b,
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<env:Envelope xmlns:env=\"" NS_SOAP12
			 "\" xmlns:eb=\"" NS_EB "\" "
			 "xmlns:wsu=\"" NS_WSU "\"><env:Header><eb:Messaging "
			 "env:mustUnderstand=\"true\" "
			 "wsu:Id=\"messaging-%s\"><eb:UserMessage>"
			 "<eb:MessageInfo>",
			 uuid);
	bad |= cli_push_el(b, "Timestamp", NULL, NULL, ts);
	bad |= cli_push_el(b, "MessageId", NULL, NULL, msgid);
	bad |= buf_puts(b, "</eb:MessageInfo><eb:PartyInfo>");
	bad |= cli_push_party(b, "From", &o->from, o->from_role);
	bad |= cli_push_party(b, "To", &o->to, o->to_role);
	bad |= buf_puts(b, "</eb:PartyInfo>");
	bad |= cli_push_collab(b, o);
	bad |= cli_push_props(b, o);
	bad |= cli_push_payload_info(b, o);
	bad |= buf_printf(b,
			  "</eb:UserMessage></eb:Messaging></env:Header>"
			  "<env:Body wsu:Id=\"body-%s\"/></env:Envelope>\n",
			  uuid);
	return bad;
}

/* The serialized document replaces the bytes in env (UTF-8, as parsed). */
static int
cli_push_dump(xmlDocPtr doc, struct buf *env, struct err *err)
{
	xmlChar *mem = NULL;
	int len = 0, rc = -1;

	xmlDocDumpMemoryEnc(doc, &mem, &len, "UTF-8");
	if (mem != NULL && len > 0) {
		buf_reset(env);
		rc = buf_append(env, mem, (size_t)len);
	}
	xmlFree(mem);
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL,
			"could not serialize the envelope");
	return rc;
}

/*
 * --sign and --encrypt on the built envelope (eDelivery AS4 1.15): sign
 * eb:Messaging, the Body and every attachment (after --compress: over the
 * gzip bytes, which is what the receiver has after decrypting), then
 * encrypt the attachments, sign-then-encrypt; env gets the secured
 * envelope, the attachments their ciphertext and type.  The signed document
 * stays in m->sent (arena) for the NRR check of the Receipt.
 */
static int
cli_push_secure(struct arena *a, const struct cli_push_opts *o,
		struct buf *env, struct mime_out_part *att,
		struct cli_push_msg *m, struct err *err)
{
	struct wss_part *wp;
	xmlDocPtr doc = NULL;
	size_t i, n = o->n_payloads;

	if ((wp = arena_calloc(a, n + 1, sizeof(*wp))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		wp[i].content_id = att[i].content_id;
		wp[i].content_type = att[i].content_type;
		wp[i].data = att[i].data;
		wp[i].len = att[i].len;
	}
	if (xml_parse(a, env->data, env->len, NULL, &doc, err) == -1 ||
	    (o->key != NULL &&
	     sender_sign_message(doc, o->key, wp, n, err) == -1) ||
	    (o->recipient != NULL &&
	     sender_encrypt_message(a, doc, o->recipient, wp, n, err) == -1) ||
	    cli_push_dump(doc, env, err) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		att[i].content_type = wp[i].content_type;
		att[i].data = wp[i].data;
		att[i].len = wp[i].len;
	}
	m->sent = o->key != NULL ? doc : NULL;
	return 0;
}

/* The attachments as they go out before security: the payload bytes (gzip
 * after --compress, then typed application/gzip: AS4 profile 3.1). */
static void
cli_push_attachments(const struct cli_push_opts *o, struct mime_out_part *att)
{
	size_t i;

	for (i = 0; i < o->n_payloads; i++) {
		att[i].content_id = o->payloads[i].cid;
		att[i].content_type =
		    o->compress ? CLI_PUSH_GZIP : o->payloads[i].mime_type;
		att[i].data = o->payloads[i].data.data;
		att[i].len = o->payloads[i].data.len;
	}
}

/* Arena cleanup: the message's spool files go (unbound first). */
static void
cli_push_spool_cleanup(void *p)
{
	if (spool_bound() == p)
		(void)spool_bind(NULL);
	spool_free(p);
}

/*
 * The large path (issue 14): each payload marked big is staged from its
 * file into the message's spool (made and bound to this thread on first
 * use, so that sender_encrypt_message spools the ciphertext of a large
 * part and every reader of a mapping releases it behind itself).
 */
static int
cli_push_big_parts(struct arena *a, const struct cli_push_opts *o,
		   struct mime_out_part *att, struct cli_push_msg *m,
		   struct err *err)
{
	const unsigned char *data = NULL;
	size_t i, len = 0;

	for (i = 0; i < o->n_payloads; i++) {
		if (!o->payloads[i].big)
			continue;
		if (m->spool == NULL) {
			if (spool_new(o->spool_dir, 0,
				      (size_t)o->spool_threshold, &m->spool,
				      err) == -1)
				return -1;
			if (arena_cleanup(a, cli_push_spool_cleanup,
					  m->spool) == -1) {
				m->spool = NULL; /* freed by arena_cleanup */
				return err_set(err, ERR_INTERNAL, NULL,
					       "out of memory");
			}
			(void)spool_bind(m->spool);
		}
		if (cli_push_stage(m->spool, o->payloads[i].path, o->compress,
				   &data, &len, err) == -1)
			return -1;
		att[i].data = data;
		att[i].len = len;
	}
	return 0;
}

/*
 * The multipart body: mime_write() over the parts, a large part framed
 * with a marker in place of its data, then cut at the markers into the
 * ranges that are uploaded (cli_push_body.c).  parts[0] is the envelope.
 */
static int
cli_push_package(struct arena *a, const struct cli_push_opts *o,
		 struct mime_out_part *parts, const char *uuid,
		 struct cli_push_msg *m, struct err *err)
{
	size_t i, n = o->n_payloads;
	struct cli_push_big *big;

	if (m->spool == NULL)
		return mime_write(a, parts, n + 1, NULL, &m->body,
				  &m->content_type, err);
	if ((big = arena_calloc(a, n + 1, sizeof(*big))) == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (i = 0; i < n; i++) {
		if (!o->payloads[i].big)
			continue;
		big[i].mark = arena_sprintf(a, "as4gw-push-part-%zu-%s", i,
					    uuid);
		if (big[i].mark == NULL)
			return err_set(err, ERR_INTERNAL, NULL,
				       "out of memory");
		big[i].data = parts[i + 1].data;
		big[i].len = parts[i + 1].len;
		parts[i + 1].data = big[i].mark;
		parts[i + 1].len = strlen(big[i].mark);
	}
	if (mime_write(a, parts, n + 1, NULL, &m->body, &m->content_type,
		       err) == -1)
		return -1;
	return cli_push_body_split(a, &m->body, big, n, &m->stream, err);
}

/* Build one message: a fresh MessageId (unless --message-id) and Timestamp;
 * secured as the options say; a bare SOAP body without payloads, else
 * multipart/related (ebMS3 Core 5.1.1: both packagings are legal). */
int
cli_push_build(struct arena *a, const struct cli_push_opts *o,
	       struct cli_push_msg *m, struct err *err)
{
	struct mime_out_part *parts = NULL;
	struct buf env = {0};
	char uuid[37];
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (codec_uuid(uuid) == -1 ||
	    arena_cleanup(a, cli_push_buf_cleanup, &m->body) == -1)
		goto out;
	m->message_id = o->message_id != NULL
			    ? o->message_id
			    : arena_sprintf(a, "%s@as4gw-push", uuid);
	if (m->message_id == NULL ||
	    cli_push_envelope(&env, o, m->message_id, uuid) != 0 ||
	    (parts = arena_calloc(a, o->n_payloads + 1, sizeof(*parts))) ==
		NULL)
		goto out;
	cli_push_attachments(o, parts + 1);
	if (cli_push_big_parts(a, o, parts + 1, m, err) == -1)
		goto out;
	if ((o->key != NULL || o->recipient != NULL) &&
	    cli_push_secure(a, o, &env, parts + 1, m, err) == -1)
		goto out;
	if (o->n_payloads == 0) {
		m->content_type = "application/soap+xml; charset=UTF-8";
		rc = buf_append(&m->body, env.data, env.len);
		goto out;
	}
	parts[0].content_id = arena_sprintf(a, "envelope-%s@as4gw-push", uuid);
	parts[0].content_type = "application/soap+xml; charset=UTF-8";
	parts[0].data = env.data;
	parts[0].len = env.len;
	rc = cli_push_package(a, o, parts, uuid, m, err);
out:
	if (rc == -1)
		err_set(err, ERR_INTERNAL, NULL, "could not build the message");
	buf_free(&env);
	return rc;
}
