/*
 * pmode — select the P-Mode leg for a UserMessage (ebMS3 Core D.3: AgreementRef,
 * From/To PartyId + role, Service + type, Action) and report the field that
 * did not match.
 */
#ifndef AS4GW_PMODE_H
#define AS4GW_PMODE_H

#include "../conf/conf.h"
#include "../ebms/ebms.h"

/*
 * Find the one leg for um (every From and To PartyId listed by the leg's
 * party; if AgreementRef/@pmode is present it must equal the leg id).
 * Returns 1 and *ret_leg (borrowed from conf) on a match; otherwise -1 with
 * ERR_EBMS and a log-only err.detail:
 *   - EBMS:0010 "more than one P-Mode matches the message" when two legs
 *     match (detail "ambiguous: legs a, b"): never resolved by order;
 *   - EBMS:0101 when From mixes the PartyIds of a leg that accepts
 *     signatures with another leg's party (borrowing an identity);
 *   - EBMS:0010 "no P-Mode matches the message" otherwise, the detail naming
 *     the closest leg and the first field that differs ("leg \"x\":
 *     Service differs: got ...").
 */
int pmode_match(const struct conf *conf, const struct ebms_user_message *um,
    const struct pmode_leg **ret_leg, struct err *err);

#endif
