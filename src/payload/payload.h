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
 */
int payload_content_hash(const struct ebms_user_message *um,
    unsigned char out[CODEC_SHA256_LEN]);

#endif
