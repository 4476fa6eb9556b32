/* clock — wall-clock timestamps for ebMS headers and logs, monotonic time for
 * durations and deadlines. */
#ifndef AS4GW_CLOCK_H
#define AS4GW_CLOCK_H

#include <stdint.h>
#include <time.h>

#define CLOCK_ISO_LEN 32

/* Milliseconds on the monotonic clock. */
int64_t clock_mono_ms(void);

/* Milliseconds since the epoch (UTC). */
int64_t clock_epoch_ms(void);

/* Write `ms` since the epoch as xsd:dateTime UTC with milliseconds,
 * "2026-11-30T12:00:00.123Z", into out[CLOCK_ISO_LEN]. */
void clock_iso8601(int64_t epoch_ms, char out[CLOCK_ISO_LEN]);

/*
 * Parse an xsd:dateTime (ebMS3 Core 5.2.2.1: Timestamp; offset or Z optional,
 * fractional seconds allowed).  Returns 0 and *ret_ms on success, -1 when the
 * text is not a valid dateTime.
 */
int clock_parse_iso8601(const char *s, int64_t *ret_ms);

#endif
