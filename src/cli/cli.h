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
int cli_deliver(int argc, char **argv);
int cli_purge(int argc, char **argv);

/* "as4gw: PREFIX MSG" on stderr as one line (white space runs folded). */
void cli_fail(const char *prefix, const char *msg);

/* One-time library set-up shared by the subcommands (libxml2, xmlsec). */
int cli_global_init(void);
void cli_global_shutdown(void);

/*
 * Shared by `push` and `replay` (implemented in cli_replay.c): file reading,
 * the HTTP client on libcurl, and the classification of an AS4 answer.
 */
struct cli_replay_net {
	const char *url;
	const char *cacert;     /* PEM CA bundle for https; NULL = system's */
	int insecure;           /* skip TLS peer and host name verification */
	long timeout_s;         /* whole request (CLI_REPLAY_TIMEOUT_S) */
	long connect_timeout_s; /* connection set-up */
};

#define CLI_REPLAY_TIMEOUT_S 60
#define CLI_REPLAY_CONNECT_TIMEOUT_S 10
#define CLI_REPLAY_MAX_ANSWER ((size_t)64 * 1024 * 1024) /* one answer */
#define CLI_REPLAY_MAX_FILE ((size_t)1024 * 1024 * 1024) /* one input file */

/* One HTTP answer; content_type is arena memory, body is owned by the
 * struct and registered for release with the arena passed to the post. */
struct cli_replay_answer {
	long status;
	const char *content_type; /* NULL when the server sent none */
	struct buf body;
};

/* A keep-alive HTTP client (one libcurl easy handle). */
struct cli_replay_client;

struct cli_replay_client *
cli_replay_client_new(const struct cli_replay_net *net, struct err *err);
void cli_replay_client_free(struct cli_replay_client *c);

/*
 * POST len bytes of body with this Content-Type and the extra header lines
 * ("Name: value", NULL-terminated list, may be NULL).  0 when any HTTP answer
 * arrived (whatever its status), -1 with ERR_IO on a transport failure.
 */
int cli_replay_client_post(struct cli_replay_client *c, struct arena *a,
    const char *content_type, const char *const *headers,
    const void *body, size_t len, struct cli_replay_answer *ret,
    struct err *err);

/* Read a whole file into out (at most limit bytes); -1 with ERR_IO. */
int cli_replay_read_file(const char *path, size_t limit, struct buf *out,
    struct err *err);

/* Parse a decimal number in [min, max]; -1 when it is not one. */
int cli_replay_number(const char *s, long min, long max, long *ret);

enum cli_replay_kind {
	CLI_REPLAY_NONE = 0, /* empty, not XML, no signal or fault found */
	CLI_REPLAY_RECEIPT,  /* eb:SignalMessage/eb:Receipt */
	CLI_REPLAY_ERROR,    /* eb:SignalMessage/eb:Error (wins over Receipt) */
	CLI_REPLAY_FAULT,    /* SOAP Fault in the Body, no eb:Error */
};

/* What an answer says; all strings are arena memory. */
struct cli_replay_outcome {
	enum cli_replay_kind kind;
	const char *ref;         /* RefToMessageId or refToMessageInError */
	const char *codes;       /* eb:Error codes, comma-separated, or NULL */
	const char *description; /* first eb:Error text or fault reason */
	const char *fault;       /* fault code, local name ("Sender") or NULL */
	const char *why;         /* CLI_REPLAY_NONE: what was found instead */
	xmlDocPtr doc;           /* the answer's envelope (arena) or NULL */
};

/*
 * Classify an answer: split a multipart/related answer to its root part,
 * parse it with the hardened parser, look for eb:Receipt, eb:Error and a
 * SOAP Fault.  Never fails: an unusable answer is CLI_REPLAY_NONE, why set.
 */
void cli_replay_outcome_parse(struct arena *a,
    const struct cli_replay_answer *ans, struct cli_replay_outcome *ret);

/* One line for an outcome: "receipt ref=X", "error EBMS:0004",
 * "fault Sender", or why there is none. */
const char *cli_replay_outcome_str(struct arena *a,
    const struct cli_replay_outcome *o);

#endif
