/*
 * inbox — the transactional accept: turn a verified, P-Mode-matched
 * UserMessage and its signed Receipt into new / duplicate / drift through one
 * store transaction.
 */
#ifndef AS4GW_INBOX_H
#define AS4GW_INBOX_H

#include "../conf/conf.h"
#include "../ebms/ebms.h"
#include "../store/store.h"

/*
 * Hash the content, map um to a store_message and run store_accept().
 * DRIFT is reported as ERR_EBMS EBMS:0004 (ret->outcome still STORE_DRIFT).
 * s NULL (no connection) is ERR_STORE, like any other database failure.
 */
int inbox_accept(struct store *s, struct arena *a,
    const struct ebms_user_message *um, const struct pmode_leg *leg,
    const char *peer, const unsigned char *receipt, size_t receipt_len,
    struct store_result *ret, struct err *err);

#endif
