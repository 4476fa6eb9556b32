/*
 * payload — what is done with payload bytes once they are final: the content
 * hash that tells a legitimate retry from drift.  (Decompression with caps
 * joins in issue 3.)
 */
#ifndef AS4GW_PAYLOAD_H
#define AS4GW_PAYLOAD_H

#include "../ebms/ebms.h"
#include "../util/codec.h"

/*
 * SHA-256 over what a legitimate retry keeps identical (DESIGN.md): MessageId,
 * From/To parties and roles, AgreementRef, Service, Action, ConversationId,
 * RefToMessageId, MessageProperties, and per PartInfo its href, properties and
 * final bytes — never Timestamp, signatures or ciphertext.  Every field is
 * length-prefixed so no two different messages share an encoding.
 *
 * The encoding (version 1; stored hashes are compared with later retries, so
 * it must never change silently — a change needs a new tag):
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

#endif
