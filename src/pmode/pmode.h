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
 * Find the leg for um.  Returns 1 and *ret_leg (borrowed from conf) on a
 * match; otherwise ERR_EBMS EBMS:0010 with err.detail naming the closest leg
 * and the first field that differs ("leg \"x\": Service differs: got ..."),
 * and returns -1.  If AgreementRef/@pmode is present it must equal the leg id.
 */
int pmode_match(const struct conf *conf, const struct ebms_user_message *um,
    const struct pmode_leg **ret_leg, struct err *err);

#endif
