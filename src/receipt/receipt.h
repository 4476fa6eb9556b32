/*
 * receipt — the gateway's answers as signed SOAP 1.2 envelopes: the AS4
 * Receipt for an accepted UserMessage (AS4 profile 5.1.8) and the eb:Error
 * signal (ebMS3 Core 6) for a refused one.
 */
#ifndef AS4GW_RECEIPT_H
#define AS4GW_RECEIPT_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../ebms/ebms.h"
#include "../util/arena.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "../wss/wss.h"

/*
 * Build and sign the Receipt for um: eb:SignalMessage with a new MessageId
 * ("<uuid>@as4gw"), Timestamp now, RefToMessageId = um's MessageId, and
 * eb:Receipt holding
 *  - when n_nrr_refs > 0 (a signed message; AS4 profile 5.1.8 (b), NRR):
 *    ebbp:NonRepudiationInformation with one ebbp:MessagePartNRInformation
 *    per element of nrr_refs, in that order, each an exact deep copy of the
 *    ds:Reference (from the verified SignedInfo; the caller's nodes are only
 *    read, never kept), made self-contained in namespaces;
 *  - else (AS4 profile 5.1.8 (a), reception awareness): a copy of the
 *    eb:UserMessage element.
 * nrr_refs may be NULL when n_nrr_refs is 0; every element must be a
 * ds:Reference (else ERR_INTERNAL: a programmer error).  The serialised
 * envelope is appended to out; ret_message_id (arena, may be NULL) receives
 * the Receipt's MessageId.
 */
int receipt_build(struct arena *a, const struct wss_key *key,
    const struct ebms_user_message *um, xmlNodePtr const *nrr_refs,
    size_t n_nrr_refs, struct buf *out, const char **ret_message_id,
    struct err *err);

/*
 * What an eb:Error signal says (ebMS3 Core 6.2), every field partner-visible
 * and so never err.detail:
 *  - ref_to_message_id: the refused MessageId, may be NULL when it could
 *    not be read; one that is not a usable MessageId (empty, over
 *    EBMS_MESSAGE_ID_MAX, whitespace or control characters, bad UTF-8) is
 *    left out too.  When present it goes to both eb:RefToMessageId and
 *    eb:Error/@refToMessageInError.
 *  - code: e.g. "EBMS:0010"; its severity, category and short description
 *    come from the catalogue (an unknown code becomes EBMS:0004).
 *  - description: short text for eb:Description (xml:lang "en"), may be
 *    NULL or empty (no element).
 *  - error_detail: text for eb:ErrorDetail (6.2.9), after eb:Description,
 *    where a profile prescribes one (Peppol AS4: "PEPPOL:NOT_SERVICED");
 *    NULL or empty for none.
 * Both texts are cut to 1 KiB and control characters are blanked (XML
 * escaping is done by the builder).
 */
struct receipt_error {
	const char *ref_to_message_id;
	const char *code;
	const char *description;
	const char *error_detail;
};

/*
 * Build and sign the eb:Error signal e (above), origin "ebMS", for a refused
 * message.  The serialised envelope is appended to out.
 */
int receipt_build_error(struct arena *a, const struct wss_key *key,
    const struct receipt_error *e, struct buf *out, struct err *err);

#endif
