/*
 * payload — what is done with payload bytes once they are final: gzip
 * decompression under caps (AS4 profile 3.1) and the content hash that tells
 * a legitimate retry from drift.
 */
#ifndef AS4GW_PAYLOAD_H
#define AS4GW_PAYLOAD_H

#include "../ebms/ebms.h"
#include "../util/arena.h"
#include "../util/codec.h"

/*
 * SHA-256 over what a legitimate retry keeps identical (DESIGN.md): MessageId,
 * From/To parties and roles, AgreementRef, Service, Action, ConversationId,
 * RefToMessageId, MessageProperties, and per PartInfo its href, properties and
 * final bytes — never Timestamp, signatures or ciphertext.  Every field is
 * length-prefixed so no two different messages share an encoding.
 *
 * The encoding (version 1, the rows stored before migration 004/003 and the
 * comparison of their retries; stored hashes are compared with later
 * retries, so it must never change silently — a change needs a new tag):
 *   str(s)   = 0xFFFFFFFFFFFFFFFF if s is NULL, else u64be(len) || bytes
 *   cnt(n)   = u64be(n)
 *   party(p) = str(role) cnt(n_ids) { str(type) str(value) }...
 *   prop(p)  = str(name) str(type) str(value)
 *   hash = SHA-256( str("as4gw-content-hash-v1")
 *     str(MessageId) party(From) party(To)
 *     str(AgreementRef) str(AgreementRef/@type) str(AgreementRef/@pmode)
 *     str(Service) str(Service/@type) str(Action) str(ConversationId)
 *     str(RefToMessageId)
 *     cnt(n MessageProperties) prop...
 *     cnt(n PartInfo) { str(href) cnt(n PartProperties) prop...
 *                       str(final bytes data/len) }... )
 * Not covered: Timestamp, Mpc, the MIME headers and media type beyond the
 * PartProperties, signatures, ciphertext.  Returns 0, or -1 if SHA-256 fails.
 */
int payload_content_hash(const struct ebms_user_message *um,
    unsigned char out[CODEC_SHA256_LEN]);

/*
 * Version 2 (issue 10, item 13), what new inbox rows store: the same fields
 * as version 1 except the PartInfo hrefs — a legitimate retry may be rebuilt
 * with fresh Content-IDs, and payload order + PartProperties + bytes still
 * identify the content; only the kind of href is kept (0 none: SOAP Body,
 * 1 cid:, 2 other).  Each field has its own digest, so a drift can be
 * logged with the first field that differs:
 *   field digests, PAYLOAD_FIELDS_FIXED + 2 per part, in this order:
 *     0 From = SHA-256(party(From))        1 To = SHA-256(party(To))
 *     2 AgreementRef = SHA-256(str(ref) str(@type) str(@pmode))
 *     3 Service = SHA-256(str(Service) str(@type))
 *     4 Action  5 ConversationId  6 RefToMessageId = SHA-256(str(...))
 *     7 MessageProperties = SHA-256(cnt(n) prop...)
 *     8 PartInfo count = SHA-256(cnt(n PartInfo))
 *     then per PartInfo i: SHA-256(cnt(href kind) cnt(n) prop...),
 *                          SHA-256(str(final bytes))
 *   hash = SHA-256( str("as4gw-content-hash-v2") str(MessageId)
 *                   str(field digests concatenated) )
 * *ret_fields (arena, *ret_len = 32 per digest) gets the digests.  The
 * inbox stores hash and digests; a row without digests was stored under
 * version 1 and is compared with the version 1 hash (store.h).  0, or -1
 * when SHA-256 fails or a is exhausted.
 */
#define PAYLOAD_FIELDS_FIXED 9
int payload_content_hash2(struct arena *a, const struct ebms_user_message *um,
    unsigned char out[CODEC_SHA256_LEN], unsigned char **ret_fields,
    size_t *ret_len);

/*
 * payload_content_hash2 into v2, *ret_fields and *ret_len, and
 * payload_content_hash into v1, with each part's bytes read once (a large
 * spooled part is not paged in twice; issue 14).  0, or -1 as those.
 */
int payload_content_hashes(struct arena *a,
    const struct ebms_user_message *um, unsigned char v2[CODEC_SHA256_LEN],
    unsigned char **ret_fields, size_t *ret_len,
    unsigned char v1[CODEC_SHA256_LEN]);

/*
 * payload_content_hashes() on a thread of its own (issue 14), for a
 * message whose parts are large: the caller goes on (signs the Receipt,
 * opens the store's transaction and writes the payload rows) while the
 * bytes are hashed.  *ret_fields (in a) and *ret_len are set at once; the
 * digests are in once payload_hashes_wait() returned 0, which also copies
 * out the version 2 hash.  The version 1 hash is computed only when asked
 * for (payload_hashes_v1).  The thread binds the caller's spool (spool.h) to
 * release the windows it read; the caller must not add spool files nor
 * change um until the wait, and must wait before the spool or um goes (an
 * arena cleanup joins the thread too, a last resort against a leak, too
 * late where the spool goes before the arena).  Returns 0 with *ret set,
 * 1 when the parts are too small to be worth a thread (nothing started:
 * use payload_content_hashes), -1 when a is exhausted.
 */
struct payload_job;
int payload_hashes_start(struct arena *a, const struct ebms_user_message *um,
    unsigned char **ret_fields, size_t *ret_len, struct payload_job **ret);

/* Wait for job's thread; 0 with the version 2 hash copied out, -1 when
 * hashing failed.  May be called again, from any thread but one at a time. */
int payload_hashes_wait(struct payload_job *job,
    unsigned char v2[CODEC_SHA256_LEN]);

/*
 * The version 1 hash of job's message (payload_content_hash), which only a
 * row stored before the field digests existed is compared with: computed
 * on the caller's thread at the first call (after the wait; the parts'
 * bytes are read once more, released behind as ever), copied out at every
 * call.  0, or -1 when hashing failed.  The rules of payload_hashes_wait.
 */
int payload_hashes_v1(struct payload_job *job,
    unsigned char v1[CODEC_SHA256_LEN]);

/* Parts of at least this many bytes in all make payload_hashes_start()
 * start a thread. */
#define PAYLOAD_JOB_MIN ((size_t)8 << 20)

/* The name of field digest i ("From", "PartInfo[2] payload bytes"),
 * static or written into buf[len]. */
const char *payload_field_name(size_t i, char *buf, size_t len);

/*
 * For the log of a drift: the name of the first field whose digest differs
 * between a stored row's digests (NULL: a version 1 row, which has none) and
 * a message's (lengths in bytes).  Static or in buf[len].
 */
const char *payload_field_diff(const unsigned char *stored, size_t stored_len,
    const unsigned char *now, size_t now_len, char *buf, size_t len);

/*
 * Business-level duplicates (issue 12 item 4; README "Business-level
 * duplicates"): the key of the business document a message carries, which
 * the inbox compares across MessageIds of one sending party.  The first
 * payload in PartInfo order that carries one decides:
 *  - an EDIFACT interchange (edifact.h: starts with UNA or UNB):
 *      "edifact:" sender ":" qualifier "/" recipient ":" qualifier "/"
 *      control reference
 *    (ISO 9735 UNB 0004, 0007, 0010, 0007, 0020; the syntax identifier,
 *    date and time are not part of it: a re-sent interchange keeps its
 *    reference);
 *  - a Standard Business Document (sbdh.h; tried when the SBDH namespace
 *    name occurs within its first PAYLOAD_SBDH_SNIFF_BYTES, a hint that
 *    spares parsing other XML; sbdh_parse() under ctx->sbdh_limits
 *    decides; ctx->sbdh, when set, is the first payload's header, parsed
 *    already: it is not parsed again; ctx NULL: no header parsed, the
 *    defaults):
 *      "sbdh:" Sender/Identifier/@Authority ":" Sender/Identifier "/"
 *      DocumentIdentification/InstanceIdentifier;
 * each value percent-encoded (RFC 3986 style, upper-case hex) for every
 * byte outside 0x21..0x7e and for '%', ':' and '/', so the key is one
 * printable line with no ambiguity between fields.  1 a key (*ret, arena,
 * at most PAYLOAD_BUSINESS_KEY_MAX bytes); 0 none (*ret NULL; *ret_why set
 * when a payload looked like an interchange but its header is malformed:
 * the reason, for the log; such a message is checked no further); -1 out
 * of request memory.
 */
#define PAYLOAD_BUSINESS_KEY_MAX 1024
#define PAYLOAD_SBDH_SNIFF_BYTES 65536
struct sbdh;
struct sbdh_limits;
struct payload_bizkey_ctx {
	const struct sbdh_limits *sbdh_limits; /* NULL: sbdh.h's defaults */
	const struct sbdh *sbdh;      /* parts[0] parsed already (a Peppol
	                               * leg's checks), or NULL */
};
int payload_business_key(struct arena *a, const struct ebms_user_message *um,
    const struct payload_bizkey_ctx *ctx, const char **ret,
    const char **ret_why);

/*
 * Caps on decompression (NEGATIVE-CASES 53: a gzip bomb must stop early with
 * bounded memory).  A field set to 0 means "no limit" for that field.
 */
struct payload_limits {
	size_t max_decompressed_bytes; /* per part; default 8 GiB */
	unsigned max_ratio;            /* output/input, checked once a part's
	                                  output passes 1 MiB; default 1000 */
	size_t max_total_bytes;        /* all parts of one message; default 8 GiB */
};

/* Fill lim with the defaults of the config's <limits> keys
 * maxDecompressedBytes, maxDecompressionRatio, maxDecompressedTotalBytes
 * (conf.h CONF_MAX_DECOMPRESS*_DEFAULT, the one place they are named;
 * issue 14): an 8 GiB payload passes, a bomb of zeroes (deflate's
 * ~1030:1) stops at the ratio after 1 MiB of output.  Below the spool
 * threshold the request's memory budget bounds a part long before these. */
void payload_limits_default(struct payload_limits *lim);

/*
 * Decompress every part whose PartProperties carry a CompressionType (AS4
 * profile 3.1; eDelivery AS4 1.15, 1.4.3.1), after decryption.  Only
 * "application/gzip" is known; the part must be a MIME attachment and carry
 * a MimeType property, the media type of the original payload.  The data is
 * RFC 1952 gzip, one member or several concatenated; it is inflated with
 * zlib (gzip wrapper only, CRC-32 and ISIZE checked) under the caps of lim
 * (NULL = payload_limits_default).  On success each such part's data/len is
 * replaced by the decompressed bytes (arena-owned, exactly sized: a first
 * pass measures under the caps, a second fills the allocation; a part
 * spool_want(spool_bound(), len) calls large, or whose output grows that
 * large: one pass into a spool file, data the mapping, read-only, valid
 * until spool_free) and its
 * media_type becomes the MimeType value.  Parts without CompressionType (or
 * with an empty one) are left as they are.
 *  - CompressionType other than application/gzip  -> EBMS:0303
 *  - compressed payload in the SOAP Body           -> EBMS:0003
 *  - no (or an empty) MimeType property            -> EBMS:0303
 *  - empty data, not gzip, corrupt deflate data, bad CRC-32 or length,
 *    truncated, trailing bytes after the last member, a size or ratio cap
 *    exceeded, the arena or spool budget exhausted -> EBMS:0303
 *  - no space on the spool filesystem              -> ERR_STORE (503)
 * On failure no part of um is changed.
 */
int payload_decompress(struct arena *a, struct ebms_user_message *um,
    const struct payload_limits *lim, struct err *err);

#endif
