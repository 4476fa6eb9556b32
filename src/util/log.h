/*
 * log — one JSON object per line on stderr (or a file).  Only the request
 * pipeline and the daemon's start/stop code log; libraries return struct err.
 * Never pass payloads or key material.  Every line is valid UTF-8 whatever
 * the strings hold: fields go through buf_json_escape(), which writes bytes
 * outside well-formed UTF-8 as U+FFFD (issue 10 item 7).
 */
#ifndef AS4GW_LOG_H
#define AS4GW_LOG_H

#include <stdint.h>
#include <stdio.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* Where lines go (default stderr) and the lowest level written. */
void log_init(FILE *out, enum log_level min);

/* {"ts":..,"level":..,"msg":..} — msg is printf-formatted and JSON-escaped. */
void log_msg(enum log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * {"ts":..,"level":..,"event":event,"msg":msg, name: value ...}: fields holds
 * n name/value pairs (2n strings; a NULL value omits its pair).  Names are
 * written as given (literals), values JSON-escaped.
 */
void log_event(enum log_level level, const char *event, const char *msg,
    const char *const *fields, size_t n);

/* The one line per request (issue 2, item 11).  NULL fields are omitted. */
struct log_request {
	const char *request_id;
	const char *peer;
	const char *method;
	const char *path;
	int status;
	const char *message_id;
	const char *from_party;
	const char *pmode;
	const char *outcome;   /* new | duplicate | drift | error | health ... */
	const char *ebms_code;
	const char *error;     /* err.msg */
	const char *detail;    /* err.detail (log only) */
	int replayed;          /* answered from the replay cache: "replayed":true */
	/* fingerprint of a retiring decryption pair the message was
	 * encrypted for: "decryption_retiring":"sha256:..." (NULL: none) */
	const char *decryption_retiring;
	const char *business_key;  /* issue 12 item 4: the business key */
	const char *business_note; /* why a payload gave no business key */
	const char *duplicate_of;  /* the MessageId holding the business key
	                            * of a flagged or refused message: the
	                            * line is then a warning */
	int64_t bytes_in;
	int64_t ms;
};

void log_request(const struct log_request *r);

#endif
