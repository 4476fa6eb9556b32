/*
 * deliver_json — message.json, the metadata file of a message directory
 * (deliver.h "message.json"; README "Backend hand-off").  Nothing in it
 * changes between two deliveries of one message, so a redelivery writes a
 * byte-identical directory.
 */
#include "deliver_int.h"

#include <ctype.h>
#include <string.h>

#include "../conf/conf.h"
#include "../util/clock.h"
#include "../util/codec.h"

/* Append sep "key": "value" (or null) to b. */
static int
deliver_json_str(struct buf *b, const char *sep, const char *key,
    const char *value)
{
	if (buf_printf(b, "%s\"%s\": ", sep, key) == -1)
		return -1;
	if (value == NULL)
		return buf_puts(b, "null");
	if (buf_puts(b, "\"") == -1 || buf_json_escape(b, value) == -1)
		return -1;
	return buf_puts(b, "\"");
}

/* The object text of props without surrounding blanks, or NULL when it does
 * not look like a JSON object; *len its length. */
static const char *
deliver_json_object(const char *props, size_t *len)
{
	const char *end;

	if (props == NULL)
		return NULL;
	while (isspace((unsigned char)*props))
		props++;
	end = props + strlen(props);
	while (end > props && isspace((unsigned char)end[-1]))
		end--;
	if (end - props < 2 || *props != '{' || end[-1] != '}')
		return NULL;
	*len = (size_t)(end - props);
	return props;
}

/*
 * Append the stored PartProperties: the JSON object text as is (store code
 * wrote it from the header), or, should it not look like an object, as a
 * JSON string so message.json stays valid.
 */
static int
deliver_json_props(struct buf *b, const char *props)
{
	const char *o;
	size_t len;

	if (props == NULL)
		return buf_puts(b, "{}");
	if ((o = deliver_json_object(props, &len)) != NULL)
		return buf_append(b, o, len);
	if (buf_puts(b, "\"") == -1 || buf_json_escape(b, props) == -1)
		return -1;
	return buf_puts(b, "\"");
}

/*
 * 1 when the stored PartProperties object has a non-empty CompressionType:
 * the gateway then decompressed the part (AS4 profile 3.1; payload.h
 * refuses any other CompressionType than application/gzip).  A key is an
 * unescaped quote (inside a JSON string every quote is escaped) followed by
 * the name, a closing quote and a colon.
 */
static int
deliver_json_compressed(const char *props)
{
	static const char K[] = "\"CompressionType\"";
	const char *o, *p;
	size_t len;

	if ((o = deliver_json_object(props, &len)) == NULL)
		return 0;
	for (p = strstr(o, K); p != NULL; p = strstr(p + 1, K)) {
		const char *v = p + sizeof(K) - 1;

		if (p > o && p[-1] == '\\')
			continue;
		while (isspace((unsigned char)*v))
			v++;
		if (*v++ != ':')
			continue;
		while (isspace((unsigned char)*v))
			v++;
		return !(v[0] == '"' && v[1] == '"') && strncmp(v, "null", 4) != 0;
	}
	return 0;
}

/* The leg named pmode_id in conf, or NULL. */
static const struct pmode_leg *
deliver_json_leg(const struct conf *conf, const char *pmode_id)
{
	size_t i;

	if (conf == NULL || pmode_id == NULL)
		return NULL;
	for (i = 0; i < conf->n_legs; i++)
		if (strcmp(conf->legs[i].id, pmode_id) == 0)
			return &conf->legs[i];
	return NULL;
}

/*
 * Append sep "key": {"type", "id", "role"} for the stored canonical party
 * name: split by the configured leg's party when its canonical name is the
 * stored one (values may hold ':', so the name alone cannot be split);
 * otherwise an untyped name (no ':') is its id, and a typed one that the
 * configuration no longer names gives type and id null ("from"/"to" keep
 * the string).
 */
static int
deliver_json_party(struct buf *b, const char *key, const char *name,
    const struct conf_party *p, const char *open_type)
{
	const char *type = NULL, *id = NULL, *role = NULL;
	size_t tl = open_type != NULL ? strlen(open_type) : 0;

	if (p != NULL && p->name != NULL && name != NULL &&
	    strcmp(p->name, name) == 0) {
		type = p->ids[0].type;
		id = p->ids[0].value;
		role = p->role;
	} else if (p != NULL && p->n_ids == 0 && name != NULL && tl > 0 &&
	    strncmp(name, open_type, tl) == 0 && name[tl] == ':') {
		/* an open From (a network member): "type:value" */
		type = open_type;
		id = name + tl + 1;
		role = p->role;
	} else if (name != NULL && strchr(name, ':') == NULL) {
		id = name;
	}
	if (buf_printf(b, ",\n  \"%s\": {", key) == -1 ||
	    deliver_json_str(b, "", "type", type) == -1 ||
	    deliver_json_str(b, ", ", "id", id) == -1 ||
	    deliver_json_str(b, ", ", "role", role) == -1)
		return -1;
	return buf_puts(b, "}");
}

/* The @type of the leg's <service> with this value (the first listed), or
 * NULL (none, untyped, or an open Service: the type is not recorded). */
static const char *
deliver_json_service_type(const struct pmode_leg *leg, const char *service)
{
	size_t i;

	if (leg == NULL || service == NULL)
		return NULL;
	for (i = 0; i < leg->n_services; i++)
		if (strcmp(leg->services[i].value, service) == 0)
			return leg->services[i].type;
	/* a leg built without the list (its first service only) */
	if (leg->n_services == 0 && leg->service != NULL &&
	    strcmp(leg->service, service) == 0)
		return leg->service_type;
	return NULL;
}

/* Append one part's object (see deliver.h); given its file's digest, or
 * (NULL) hashing its bytes in memory. */
static int
deliver_json_part(struct buf *b, const struct store_part *p,
    const struct deliver_digest *given, int decrypted)
{
	static const char S[] = ", ";
	unsigned char md[CODEC_SHA256_LEN];
	char hex[2 * CODEC_SHA256_LEN + 1];
	int dz = deliver_json_compressed(p->properties);

	if (given != NULL)
		memcpy(md, given->md, sizeof(md));
	else if (store_part_streamed(p) || codec_sha256(p->data != NULL ?
	    p->data : (const void *)"", p->len, md) == -1)
		return -1;
	codec_hex(md, sizeof(md), hex);
	if (buf_printf(b, "{\"part_no\": %d", p->part_no) == -1 ||
	    deliver_json_str(b, S, "content_id", p->content_id) == -1 ||
	    deliver_json_str(b, S, "mime_type", p->mime_type) == -1 ||
	    buf_puts(b, ", \"properties\": ") == -1 ||
	    deliver_json_props(b, p->properties) == -1 ||
	    buf_printf(b, ", \"file\": \"part-%d.bin\", \"size\": %zu, "
	    "\"sha256\": \"%s\", \"transformations\": [%s%s%s]}", p->part_no,
	    p->len, hex, decrypted ? "\"decrypted\"" : "",
	    decrypted && dz ? ", " : "", dz ? "\"decompressed\"" : "") == -1)
		return -1;
	return 0;
}

/*
 * Append the "parts" array, one object per line.  "decrypted" is listed
 * for the attachments (content_id set) of a leg that requires encryption:
 * the gateway refuses such a message unless they were encrypted (the store
 * does not record it for a leg where encryption is optional).
 */
static int
deliver_json_parts(struct buf *b, const struct store_delivery *d,
    const struct deliver_digest *md, const struct pmode_leg *leg)
{
	int enc = leg != NULL && leg->encryption == CONF_REQUIRED;
	size_t i;

	if (buf_puts(b, ",\n  \"parts\": [") == -1)
		return -1;
	for (i = 0; i < d->n_parts; i++)
		if (buf_puts(b, i > 0 ? ",\n    " : "\n    ") == -1 ||
		    deliver_json_part(b, &d->parts[i], md != NULL ? &md[i] :
		    NULL, enc && d->parts[i].content_id != NULL) == -1)
			return -1;
	return buf_puts(b, d->n_parts > 0 ? "\n  ]\n}\n" : "]\n}\n");
}

/* The whole message.json of d into b (deliver_int.h). */
int
deliver_json(struct buf *b, const struct store_delivery *d,
    const struct conf *conf)
{
	return deliver_json_md(b, d, NULL, conf);
}

/* message.json with the parts' digests given (deliver_int.h). */
int
deliver_json_md(struct buf *b, const struct store_delivery *d,
    const struct deliver_digest *md, const struct conf *conf)
{
	static const char T[] = ",\n  ";
	const struct pmode_leg *leg = deliver_json_leg(conf, d->pmode_id);
	char at[CLOCK_ISO_LEN];

	clock_iso8601(d->received_at_ms, at);
	if (buf_puts(b, "{\n  \"message_id\": \"") == -1 ||
	    buf_json_escape(b, d->message_id) == -1 ||
	    buf_puts(b, "\"") == -1 ||
	    deliver_json_str(b, T, "from", d->from_party) == -1 ||
	    deliver_json_str(b, T, "to", d->to_party) == -1 ||
	    deliver_json_party(b, "from_party", d->from_party,
	    leg != NULL ? &leg->from : NULL, leg != NULL &&
	    leg->network != NULL ? leg->network->party_type : NULL) == -1 ||
	    deliver_json_party(b, "to_party", d->to_party,
	    leg != NULL ? &leg->to : NULL, NULL) == -1 ||
	    deliver_json_str(b, T, "service", d->service) == -1 ||
	    deliver_json_str(b, T, "service_type",
	    deliver_json_service_type(leg, d->service)) == -1 ||
	    deliver_json_str(b, T, "action", d->action) == -1 ||
	    deliver_json_str(b, T, "conversation_id",
	    d->conversation_id) == -1 ||
	    deliver_json_str(b, T, "agreement_ref", d->agreement_ref) == -1 ||
	    deliver_json_str(b, T, "pmode", d->pmode_id) == -1 ||
	    deliver_json_str(b, T, "received_at", at) == -1 ||
	    deliver_json_str(b, T, "business_key", d->business_key) == -1 ||
	    deliver_json_str(b, T, "duplicate_of",
	    d->business_duplicate_of) == -1)
		return -1;
	return deliver_json_parts(b, d, md, leg);
}
