/*
 * edifact — the one reader of an EDIFACT interchange header (ISO 9735):
 * the optional UNA service string advice and the UNB interchange header's
 * syntax identifier, sender, recipient (with their identification code
 * qualifiers) and interchange control reference, which together name one
 * interchange (the business key of issue 12 item 4).  Nothing past the
 * control reference is read: the rest of the interchange is the backend's.
 * Depends on util only; never logs.
 *
 * Bounds: every value is bounded by its ISO 9735 maximum length (below),
 * counted after release characters are removed, so the header read is at
 * most a few hundred bytes whatever the payload's size.
 */
#ifndef AS4GW_EDIFACT_H
#define AS4GW_EDIFACT_H

#include <stddef.h>

#include "../util/err.h"

/* ISO 9735 data element lengths (UNB, syntax versions 1 to 4). */
#define EDIFACT_ID_MAX 35    /* 0004 sender / 0010 recipient identification */
#define EDIFACT_QUAL_MAX 4   /* 0007 identification code qualifier */
#define EDIFACT_REF_MAX 14   /* 0020 interchange control reference */
#define EDIFACT_DATE_MAX 8   /* 0017 date: n6 (versions 1-3) or n8 (4) */
#define EDIFACT_TIME_MAX 4   /* 0019 time: n4 */
#define EDIFACT_ROUTE_MAX 35 /* 0008 / 0014 (an..14, version 4 an..35) */

/*
 * The service characters (UNA, or the defaults of ISO 9735 when the
 * interchange has no UNA: ':' '+' '.' '?' ' ' '\'').  release 0: none.
 */
struct edifact_delims {
	char component;      /* component data element separator */
	char element;        /* data element separator */
	char decimal;        /* decimal mark: '.' or ',' */
	char release;        /* release (escape) character, 0 = none */
	char repetition;     /* repetition separator (version 4), ' ' = none */
	char segment;        /* segment terminator */
};

/* An interchange header; the strings are NUL-terminated values with the
 * release characters removed ("" when an optional value is absent). */
struct edifact_unb {
	struct edifact_delims delims;
	int una;                                 /* 1: a UNA preceded the UNB */
	char syntax[5];                          /* "UNOA" .. "UNOY" */
	int version;                             /* 0002 syntax version, 1..4 */
	char sender[EDIFACT_ID_MAX + 1];         /* 0004, never empty */
	char sender_qual[EDIFACT_QUAL_MAX + 1];  /* 0007, may be "" */
	char recipient[EDIFACT_ID_MAX + 1];      /* 0010, never empty */
	char recipient_qual[EDIFACT_QUAL_MAX + 1]; /* 0007, may be "" */
	char reference[EDIFACT_REF_MAX + 1];     /* 0020, never empty */
};

/*
 * 1 when data looks like an interchange: it starts with "UNA" or "UNB"
 * (no byte order mark, no white space before), else 0.  Cheap: the
 * caller asks this before edifact_unb_parse().
 */
int edifact_is_interchange(const unsigned char *data, size_t len);

/*
 * Read the UNA (if any) and the UNB of the interchange in data[0..len).
 * 1 parsed (*ret filled), 0 not an interchange (edifact_is_interchange()
 * is 0), -1 malformed (ERR_EBMS "EBMS:0004", err's message says what):
 * a UNA not 9 bytes or with service characters that are letters, digits,
 * space, control bytes or not distinct; a UNB missing or out of order
 * (only CR/LF may separate UNA and UNB); a syntax identifier other than
 * UNOA..UNOY or a version other than 1..4; a value longer than its ISO
 * 9735 maximum; a required value empty (sender, recipient, date, time,
 * control reference); a component too many; a control byte (< 0x20,
 * 0x7f) in a value; a release character at the end of the data; data
 * that ends before the control reference's separator.
 */
int edifact_unb_parse(const unsigned char *data, size_t len,
    struct edifact_unb *ret, struct err *err);

#endif
