/*
 * ebms_age.c — how old an incoming UserMessage may be: its eb:Timestamp
 * (ebMS3 Core 5.2.2.1, inside eb:Messaging, so covered by the signature on
 * a signed leg) against the instant the gateway judges it at (ebms.h).
 */
#include "ebms.h"

#include <inttypes.h>

#include "../util/clock.h"

#define EBMS_AGE_HOUR_MS INT64_C(3600000)

/* The instants at which a message stamped ts_ms passes (ebms.h). */
void
ebms_age_window(int64_t ts_ms, const struct ebms_age *bound,
    int64_t *ret_from, int64_t *ret_until)
{
	*ret_from = ts_ms - bound->skew_ms;
	*ret_until = ts_ms + bound->max_age_ms;
}

/*
 * Refuse a message whose eb:Timestamp lies outside [at - max_age,
 * at + skew]: too old to be told from a replay of a purged message, or
 * from the future beyond the clock skew we allow (ebms.h).
 */
int
ebms_age_check(const struct ebms_user_message *um, int64_t at_ms,
    const struct ebms_age *bound, struct err *err)
{
	char ts[CLOCK_ISO_LEN], at[CLOCK_ISO_LEN];
	int64_t from, until;

	ebms_age_window(um->timestamp_ms, bound, &from, &until);
	if (at_ms >= from && at_ms <= until)
		return 0;
	err_set(err, ERR_EBMS, "EBMS:0101",
	    "eb:Timestamp outside the accepted window");
	clock_iso8601(um->timestamp_ms, ts);
	clock_iso8601(at_ms, at);
	if (at_ms < from)
		err_detail(err, "eb:Timestamp %s is in the future at %s "
		    "(allowed skew %" PRId64 " s)", ts, at,
		    bound->skew_ms / 1000);
	else
		err_detail(err, "eb:Timestamp %s is %" PRId64 " h old at %s; "
		    "the bound is %" PRId64 " h (retention minus %" PRId64
		    " h): not distinguishable from a replay of a purged "
		    "message", ts, (at_ms - um->timestamp_ms) / EBMS_AGE_HOUR_MS,
		    at, bound->max_age_ms / EBMS_AGE_HOUR_MS,
		    EBMS_AGE_MARGIN_MS / EBMS_AGE_HOUR_MS);
	return -1;
}

/* The bound for a retention of retention_days and a skew (ebms.h). */
void
ebms_age_bound(int retention_days, unsigned skew_s, struct ebms_age *ret)
{
	ret->max_age_ms = (int64_t)retention_days * 24 * EBMS_AGE_HOUR_MS -
	    EBMS_AGE_MARGIN_MS;
	ret->skew_ms = (int64_t)skew_s * 1000;
}
