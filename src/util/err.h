/*
 * err — how a failure travels from where it happens to the one place that
 * answers the partner and writes the log line.
 *
 * A struct err is caller-owned (usually on the stack or in the request).
 * Library code fills it and returns -1; it never logs.  `msg` is safe to show
 * to an operator; `detail` is for the log only and never sent to a partner.
 */
#ifndef AS4GW_ERR_H
#define AS4GW_ERR_H

#include <stdarg.h>

enum err_kind {
	ERR_NONE = 0,
	ERR_HTTP,     /* HTTP-level refusal: status in err.http_status (405, 413, 415, 400 ...) */
	ERR_SOAP,     /* not a usable SOAP message: answered with a SOAP 1.2 Fault */
	ERR_EBMS,     /* protocol error: answered with a signed eb:Error, code in err.ebms_code */
	ERR_STORE,    /* database unavailable or failed: 503 + Retry-After */
	ERR_CONF,     /* configuration invalid */
	ERR_IO,       /* file or network I/O */
	ERR_INTERNAL, /* bug or resource exhaustion: 500 */
	ERR_UNAVAILABLE, /* a status we depend on cannot be had now (no fresh
	                  * revocation status): 503 + Retry-After, nothing stored */
};

/* SOAP 1.2 fault codes (SOAP 1.2 Part 1, 5.4.6) used with ERR_SOAP. */
enum err_soap_code {
	ERR_SOAP_SENDER = 0,
	ERR_SOAP_VERSION_MISMATCH,
	ERR_SOAP_MUST_UNDERSTAND,
	ERR_SOAP_RECEIVER,
};

struct err {
	enum err_kind kind;
	const char *ebms_code;  /* "EBMS:0004" ... static string, or NULL */
	/* ERR_EBMS: the eb:ErrorDetail the partner gets (ebMS3 Core 6.2.9),
	 * a static string set by err_ebms() where a profile prescribes one
	 * (Peppol AS4 "PEPPOL:NOT_SERVICED"); NULL for every other error.
	 * Partner-visible, unlike `detail` below. */
	const char *ebms_detail;
	int http_status;        /* for ERR_HTTP / ERR_SOAP; 0 = default for the kind */
	enum err_soap_code soap_code;
	char msg[256];          /* short, operator-readable; lower case, no final period */
	char detail[512];       /* log-only detail (field names, library messages) */
};

/* Reset to ERR_NONE. Accepts NULL. */
void err_clear(struct err *err);

/*
 * Record a failure and return -1 so that `return err_set(...)` reads well.
 * Keeps the first failure: if err already holds one, nothing is overwritten.
 * err may be NULL.
 */
int err_set(struct err *err, enum err_kind kind, const char *ebms_code,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Like err_set for ERR_HTTP with a status code. */
int err_http(struct err *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like err_set for ERR_SOAP with a fault code and HTTP status. */
int err_soap(struct err *err, enum err_soap_code code, int status,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * Like err_set for ERR_EBMS with a partner-visible eb:ErrorDetail
 * (ebms_detail above; a static string, may be NULL).  Keeps the first
 * failure as err_set does: the detail never attaches to an earlier error.
 */
int err_ebms(struct err *err, const char *ebms_code, const char *ebms_detail,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#if defined(__clang_analyzer__) && !defined(AS4GW_ERR_IMPL)
/* For clang's static analyzer (scripts/lint): these always return -1.  It
 * cannot see that through a variadic call, and then explores "failed but
 * returned something else" paths that read outputs a failing function never
 * wrote (err.c, which defines them, sets AS4GW_ERR_IMPL). */
#define err_set(...) (err_set(__VA_ARGS__), -1)
#define err_http(...) (err_http(__VA_ARGS__), -1)
#define err_soap(...) (err_soap(__VA_ARGS__), -1)
#define err_ebms(...) (err_ebms(__VA_ARGS__), -1)
#endif

/* Append log-only detail (printf style); keeps what was there. */
void err_detail(struct err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Name of a kind for logs: "http", "soap", "ebms", "store" ... */
const char *err_kind_name(enum err_kind kind);

#endif
