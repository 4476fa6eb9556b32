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
 * leg is the matched leg (never NULL): the row's from_party / to_party are
 * its configured parties' canonical names (conf.h struct conf_party), never
 * the message's own PartyIds.
 * DRIFT is reported as ERR_EBMS EBMS:0004 (ret->outcome still STORE_DRIFT),
 * with the first differing field in err's detail (the log) only.
 * s NULL (no connection) is ERR_STORE, like any other database failure.
 */
int inbox_accept(struct store *s, struct arena *a,
    const struct ebms_user_message *um, const struct pmode_leg *leg,
    const char *peer, const unsigned char *receipt, size_t receipt_len,
    struct store_result *ret, struct err *err);

/*
 * inbox_accept() in two steps, so the caller can probe the store before it
 * signs a Receipt (store.h "probe"): inbox_prepare() hashes the content and
 * maps um to *ret (pointers into um and a, valid while they are); then
 * inbox_submit() runs store_accept() with the receipt (NULL: a probe, which
 * may answer STORE_ABSENT) and may be called again on the same message.
 * DRIFT is ERR_EBMS EBMS:0004 as above.
 */
int inbox_prepare(struct arena *a, const struct ebms_user_message *um,
    const struct pmode_leg *leg, const char *peer, struct store_message *ret,
    struct err *err);
int inbox_submit(struct store *s, struct arena *a, struct store_message *m,
    const unsigned char *receipt, size_t receipt_len,
    struct store_result *ret, struct err *err);

/*
 * The content hashes of a large message are computed on a thread while the
 * caller signs and the store writes (m->pending, store.h): store_accept()
 * returns with them in, and the caller must call inbox_settle() before m,
 * um or the request's spool goes on every path that may not have reached
 * inbox_submit() (an error in between): it waits for them.  0, or -1 when
 * hashing failed; nothing to wait for is 0.
 */
int inbox_settle(struct store_message *m);

/*
 * Business-level duplicates (issue 12 item 4): after inbox_prepare(), set
 * m's business key (payload.h "payload_business_key", with ctx: an SBDH
 * parsed already, the limits of one to parse; NULL: none, the defaults)
 * and mode from the leg's
 * <businessDuplicates> (off: none).  *ret_why (may be NULL) gets why a
 * payload that looked like a business document gave no key (for the log),
 * else NULL.  0, or -1 (ERR_INTERNAL) out of request memory.
 * inbox_accept() does this itself.  A STORE_BUSINESS_DUP outcome of
 * inbox_submit() is ERR_EBMS EBMS:0004 (ebMS3 Core 6.7.1 has no code of
 * its own for it), ret->outcome still STORE_BUSINESS_DUP, the holder's
 * MessageId in err's detail only.
 */
struct payload_bizkey_ctx;
struct inbox_business_in {
	const struct ebms_user_message *um;
	const struct pmode_leg *leg;
	const struct payload_bizkey_ctx *ctx;  /* may be NULL */
};
int inbox_business(struct arena *a, const struct inbox_business_in *in,
    struct store_message *m, const char **ret_why, struct err *err);

/*
 * A hint, never a decision: the inbox keys (sending party, MessageId) this
 * process answered recently,
 * so a likely retry is probed (no Receipt signed) before a Receipt is made.
 * A fixed table of 64-bit hashes, one per slot (direct-mapped, newer evicts
 * older); safe to use from any number of threads without locks (relaxed
 * atomics: a lost or torn hint only costs a probe or a signature).  A false
 * "seen" costs one extra store round trip (the probe answers ABSENT); a
 * false "not seen" costs one Receipt signature.
 */
struct inbox_recent;

/* A table of 2^bits slots (8 bytes each); NULL when out of memory. */
struct inbox_recent *inbox_recent_new(unsigned bits);

/* Accepts NULL. */
void inbox_recent_free(struct inbox_recent *r);

/* 1 when (party, message_id) was probably noted, else 0 (also for r, party
 * or message_id NULL). */
int inbox_recent_seen(const struct inbox_recent *r, const char *party,
    const char *message_id);

/* Note (party, message_id) (r NULL: nothing). */
void inbox_recent_note(struct inbox_recent *r, const char *party,
    const char *message_id);

#endif
