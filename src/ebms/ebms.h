/*
 * ebms — the ebMS3 message header (ebMS3 Core 5.2): the UserMessage model,
 * schema and semantic validation, PartInfo <-> MIME consistency, and the
 * catalogue of standard error codes (ebMS3 Core 6.7).
 *
 * All strings in the model are arena copies (trimmed text); xmlNodePtr fields
 * borrow from the request's document.  Nothing here logs.
 */
#ifndef AS4GW_EBMS_H
#define AS4GW_EBMS_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "../mime/mime.h"
#include "../soap/soap.h"
#include "../util/arena.h"
#include "../util/err.h"

#define EBMS_MESSAGE_ID_MAX 255

struct ebms_party_id {
	const char *type;   /* NULL if absent */
	const char *value;
};

struct ebms_party {
	struct ebms_party_id *ids;
	size_t n_ids;
	const char *role;
};

struct ebms_property {
	const char *name;
	const char *type;   /* NULL if absent */
	const char *value;
};

struct ebms_part {
	const char *href;             /* as written; NULL = payload in the SOAP Body */
	const char *content_id;       /* href without "cid:"; NULL unless href is cid: */
	struct ebms_property *props;  /* PartProperties */
	size_t n_props;
	const char *mime_type;        /* PartProperties "MimeType", or NULL */
	const char *compression_type; /* PartProperties "CompressionType", or NULL */
	xmlNodePtr node;              /* the eb:PartInfo element */
	/*
	 * Set by ebms_bind_parts(): the MIME part carrying this payload and its
	 * bytes.  Later stages (decryption, decompression) replace data/len with
	 * the final bytes; the content hash and the store use data/len.
	 */
	const struct mime_part *mime;
	const unsigned char *data;
	size_t len;
	const char *media_type;       /* final media type: MimeType property, else the MIME part's */
};

struct ebms_user_message {
	/* MessageInfo */
	const char *message_id;
	const char *timestamp;
	int64_t timestamp_ms;
	const char *ref_to_message_id;  /* NULL if absent */
	const char *mpc;                /* NULL if absent (default MPC) */
	/* PartyInfo */
	struct ebms_party from, to;
	/* CollaborationInfo */
	const char *agreement_ref;      /* NULL if absent */
	const char *agreement_type;
	const char *agreement_pmode;    /* AgreementRef/@pmode */
	const char *service;
	const char *service_type;
	const char *action;
	const char *conversation_id;
	/* MessageProperties */
	struct ebms_property *props;
	size_t n_props;
	/* PayloadInfo */
	struct ebms_part *parts;
	size_t n_parts;
	/* borrowed nodes, for signature coverage and receipts */
	xmlNodePtr messaging;           /* eb:Messaging */
	xmlNodePtr node;                /* eb:UserMessage */
};

/* The compiled ebMS3 header schema; load once, share read-only. */
struct ebms_schema;
int ebms_schema_load(struct ebms_schema **ret, struct err *err);
void ebms_schema_free(struct ebms_schema *s);

/*
 * Read eb:Messaging from the SOAP header into a UserMessage.
 *  - no eb:Messaging (or no SOAP Header)            -> EBMS:0009
 *  - eb:Messaging invalid against the ebMS3 schema  -> EBMS:0009 (detail: the schema complaint)
 *  - more than one eb:Messaging or eb:UserMessage   -> EBMS:0003
 *  - empty MessageId, longer than EBMS_MESSAGE_ID_MAX, or with
 *    whitespace/control characters, bad Timestamp, empty PartyId,
 *    missing Role, empty Service/Action             -> EBMS:0009
 *  - AgreementRef without type that is not a URI    -> EBMS:0003 (ebMS3 5.2.2.7)
 *  - Service without type that is not a URI         -> EBMS:0003 (ebMS3 5.2.2.8)
 *  - PartInfo href neither cid: nor same-document "#..." (external payloads)
 *                                                   -> EBMS:0011
 *  - only signals (Receipt, Error, PullRequest)     -> EBMS:0004 (not accepted by a receiving gateway)
 * When an error is set and a MessageId was readable, *ret_message_id (may be
 * NULL) receives it so the eb:Error can carry RefToMessageId.
 */
int ebms_parse(struct arena *a, const struct ebms_schema *schema,
    const struct soap_env *env, struct ebms_user_message **ret,
    const char **ret_message_id, struct err *err);

/*
 * Bind each PartInfo to its MIME part (ebMS3 5.2.2.13, AS4 5.1.2) and fill
 * mime/data/len/media_type.  PartInfo cid: with no MIME part, a MIME part
 * other than the root that no PartInfo names, or two PartInfo naming one part
 * -> EBMS:0011.  A PartInfo without href takes the first element child of the
 * SOAP Body (serialised) as its data.
 */
int ebms_bind_parts(struct arena *a, struct ebms_user_message *um,
    const struct mime_message *mime, const struct soap_env *env,
    struct err *err);

/*
 * The age bound (ebms_age.c; README "Message age").  A message is stored at
 * received_at >= eb:Timestamp - skew and purged once received_at < now -
 * retention, so a replay of a purged message has an eb:Timestamp older than
 * retention - skew at the instant it comes back.  Refusing everything older
 * than retention - EBMS_AGE_MARGIN_MS (the largest skew the configuration
 * allows: timestampSkewSeconds <= 3600) therefore refuses every replay of a
 * purged message, whatever skew the leg had when the message was first
 * accepted; the rest of the hour covers clock differences between gateway
 * instances and the purge.
 */
#define EBMS_AGE_MARGIN_MS INT64_C(3600000)

struct ebms_age {
	int64_t max_age_ms;   /* oldest eb:Timestamp accepted: at - max_age_ms */
	int64_t skew_ms;      /* newest accepted: at + skew_ms */
};

/* The bound for a retention of retention_days (>= 1) and a clock skew of
 * skew_s seconds: max_age retention - EBMS_AGE_MARGIN_MS. */
void ebms_age_bound(int retention_days, unsigned skew_s, struct ebms_age *ret);

/* [*ret_from, *ret_until]: the instants (epoch ms) at which a message
 * stamped ts_ms passes ebms_age_check(). */
void ebms_age_window(int64_t ts_ms, const struct ebms_age *bound,
    int64_t *ret_from, int64_t *ret_until);

/*
 * ebMS3 Core 5.2.2.1: um's eb:Timestamp at the instant at_ms (epoch ms) must
 * be no older than bound->max_age_ms and no later than at_ms +
 * bound->skew_ms.  0 ok; -1 EBMS:0101 (one fixed msg; detail for the log
 * says which bound failed and by how much).
 */
int ebms_age_check(const struct ebms_user_message *um, int64_t at_ms,
    const struct ebms_age *bound, struct err *err);

/* Standard error codes (ebMS3 Core 6.7.1 and AS4 profile). */
struct ebms_error_def {
	const char *code;          /* "EBMS:0004" */
	const char *short_desc;    /* "Other" */
	const char *severity;      /* "failure" | "warning" */
	const char *category;      /* "Content" | "Communication" | "Processing" |
	                              "Unpackaging" (spelt as in ebMS3 Core 6.7.1) */
};

/* The definition for code, or the one for EBMS:0004 if code is unknown/NULL. */
const struct ebms_error_def *ebms_error_find(const char *code);

#endif
