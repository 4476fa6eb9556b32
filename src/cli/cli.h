/* cli — the `as4gw` subcommands.  Each returns the process exit status
 * (0 ok, 1 failure, 2 usage error) and prints its own messages. */
#ifndef AS4GW_CLI_H
#define AS4GW_CLI_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../util/arena.h"
#include "../util/buf.h"
#include "../util/err.h"

int cli_serve(int argc, char **argv);
int cli_push(int argc, char **argv);
int cli_replay(int argc, char **argv);
int cli_pmode_check(int argc, char **argv);
int cli_migrate(int argc, char **argv);

/* One-time library set-up shared by the subcommands (libxml2, xmlsec). */
int cli_global_init(void);
void cli_global_shutdown(void);

/*
 * Shared by `push` and `replay` (implemented in cli_push.c): file reading,
 * the HTTP client on libcurl, and the classification of an AS4 answer.
 */
struct cli_push_net {
	const char *url;
	const char *cacert;       /* PEM CA bundle for https; NULL = system store */
	int insecure;             /* skip TLS peer and host name verification */
	long timeout_s;           /* whole request; CLI_PUSH_TIMEOUT_S by default */
	long connect_timeout_s;   /* connection set-up; CLI_PUSH_CONNECT_TIMEOUT_S */
};

#define CLI_PUSH_TIMEOUT_S 60
#define CLI_PUSH_CONNECT_TIMEOUT_S 10
#define CLI_PUSH_MAX_ANSWER (64u * 1024 * 1024)   /* bytes of one HTTP answer */
#define CLI_PUSH_MAX_FILE (1024u * 1024 * 1024)   /* bytes of one input file */

/* One HTTP answer; content_type is arena memory, body is owned by the
 * struct and registered for release with the arena passed to the post. */
struct cli_push_answer {
	long status;
	const char *content_type;   /* NULL when the server sent none */
	struct buf body;
};

/* A keep-alive HTTP client (one libcurl easy handle). */
struct cli_push_client;

struct cli_push_client *cli_push_client_new(const struct cli_push_net *net,
    struct err *err);
void cli_push_client_free(struct cli_push_client *c);

/*
 * POST len bytes of body with this Content-Type and the extra header lines
 * ("Name: value", NULL-terminated list, may be NULL).  0 when any HTTP answer
 * arrived (whatever its status), -1 with ERR_IO on a transport failure.
 */
int cli_push_client_post(struct cli_push_client *c, struct arena *a,
    const char *content_type, const char *const *headers,
    const void *body, size_t len, struct cli_push_answer *ret,
    struct err *err);

/* Read a whole file into out (at most limit bytes); -1 with ERR_IO. */
int cli_push_read_file(const char *path, size_t limit, struct buf *out,
    struct err *err);

/* Parse a decimal number in [min, max]; -1 when it is not one. */
int cli_push_number(const char *s, long min, long max, long *ret);

enum cli_push_kind {
	CLI_PUSH_NONE = 0,   /* empty, not XML, or no signal or fault found */
	CLI_PUSH_RECEIPT,    /* eb:SignalMessage/eb:Receipt */
	CLI_PUSH_ERROR,      /* eb:SignalMessage/eb:Error (takes precedence) */
	CLI_PUSH_FAULT,      /* SOAP Fault in the Body, no eb:Error */
};

/* What an answer says; all strings are arena memory. */
struct cli_push_outcome {
	enum cli_push_kind kind;
	const char *ref;          /* RefToMessageId (or refToMessageInError); NULL if absent */
	const char *codes;        /* eb:Error codes, comma-separated; NULL if none */
	const char *description;  /* first eb:Error's text or the fault reason; may be NULL */
	const char *fault;        /* SOAP fault code, local name ("Sender"); NULL if none */
	const char *why;          /* for CLI_PUSH_NONE: what was found instead */
	xmlDocPtr doc;            /* the answer's envelope (owned by the arena) or NULL */
};

/*
 * Classify an answer: split a multipart/related answer to its root part,
 * parse it with the hardened parser, look for eb:Receipt, eb:Error and a
 * SOAP Fault.  Never fails: an unusable answer is CLI_PUSH_NONE with why set.
 */
void cli_push_outcome_parse(struct arena *a, const struct cli_push_answer *ans,
    struct cli_push_outcome *ret);

/* One line for an outcome: "receipt ref=X", "error EBMS:0004", "fault Sender" ... */
const char *cli_push_outcome_str(struct arena *a,
    const struct cli_push_outcome *o);

#endif
