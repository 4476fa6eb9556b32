/* cli — the `as4gw` subcommands.  Each returns the process exit status
 * (0 ok, 1 failure, 2 usage error) and prints its own messages. */
#ifndef AS4GW_CLI_H
#define AS4GW_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
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
int cli_inbox(int argc, char **argv);
int cli_copy(int argc, char **argv);

/* ---- cli_certwatch.c: certificate hygiene of serve (issue 12 item 5) ---- */
struct conf;

/* Every certificate of c: its days until expiry into /metrics, and a log
 * line for each that expires within 30 days, has expired or is not valid
 * yet.  At start, after a reload, once a day. */
void cli_certwatch(const struct conf *c);

/* ---- cli_common.c: shared by as4gw and as4gw-client ---- */

/* "as4gw: PREFIX MSG" on stderr as one line (white space runs folded):
 * the errors of the interactive commands (migrate, purge, pmode-check,
 * inbox, push, replay). */
void cli_fail(const char *prefix, const char *msg);

/*
 * The daemons' (serve, deliver) start-up error: ONE JSON log line on
 * stderr like their other lines (issue 11 item 12), level "error", event
 * "start-failed", msg PREFIX MSG with white space runs folded.
 */
void cli_start_failed(const char *prefix, const char *msg);

/* One-time library set-up shared by the subcommands (libxml2, xmlsec). */
int cli_global_init(void);
void cli_global_shutdown(void);

/* Parse a decimal number in [min, max]; -1 when it is not one. */
int cli_number(const char *s, long min, long max, long *ret);

/* A subcommand: its name, its function (argv[0] is the command's name),
 * its line in the usage text, and flags: CLI_CMD_BARE runs it without
 * cli_global_init, CLI_CMD_DAEMON says it logs JSON lines (so does a
 * failure of the library set-up). */
#define CLI_CMD_BARE 1
#define CLI_CMD_DAEMON 2
struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
	int flags;
};

/*
 * Run argv[1] from cmds (n of them) with the libraries set up, or print the
 * usage (prog names the program in it): the exit status (2 usage error).
 */
int cli_dispatch(const char *prog, const struct cli_cmd *cmds, size_t n,
    int argc, char **argv);

/*
 * as4gw's push and replay (cli_exec.c): run the same command line in the
 * as4gw-client program, where the sending tools live (not in the serving
 * daemon): the file next to this executable, else the one installed in
 * AS4GW_LIBEXECDIR.  argv[0] is the command.  Returns only on failure (1).
 */
int cli_client_exec(int argc, char **argv);

/*
 * The libcurl functions `push` and `replay` use (cli_curl.c).  The binary
 * does not link libcurl, so that `serve` never maps it (issue 5: idle RSS):
 * cli_curl_init() dlopen()s libcurl.so.4 on first use and resolves these.
 * Only curl's headers are compiled in (types, CURLOPT_* constants).  The
 * members are not named curl_* because curl.h defines curl_easy_setopt and
 * curl_easy_getinfo as macros.  Without curl's type-checking macros, pass
 * setopt/getinfo arguments of the exact type (long, curl_off_t, pointers).
 */
struct cli_curl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	struct curl_slist *(*slist_append)(struct curl_slist *list,
	    const char *line);
	void (*slist_free_all)(struct curl_slist *list);
};

/*
 * Load libcurl (first call) and run curl_global_init() (first call after
 * start or cli_curl_shutdown()); *ret_curl is a static table valid until
 * exit.  Safe to call again.  -1 with ERR_INTERNAL ("could not load libcurl
 * (libcurl.so.4): <dlerror>").  Not thread-safe: call before making threads.
 */
int cli_curl_init(const struct cli_curl **ret_curl, struct err *err);

/* curl_global_cleanup() when cli_curl_init() ran it; otherwise nothing. */
void cli_curl_shutdown(void);

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

/* A keep-alive HTTP client (one libcurl easy handle).  Making the first
 * one loads libcurl (cli_curl_init); call cli_curl_shutdown() at the end. */
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

/*
 * A request: its Content-Type, extra header lines ("Name: value",
 * NULL-terminated, may be NULL) and a body of len bytes: at data, or (read
 * not NULL) produced by read with ctx as libcurl's CURLOPT_READFUNCTION /
 * READDATA, so a body of gigabytes is uploaded without being in memory
 * (`push`, issue 14), and moved back by seek when libcurl sends it again
 * (a reused connection found closed mid-request).
 */
struct cli_replay_body {
	const char *content_type;
	const char *const *headers;
	const void *data;
	uint64_t len;
	curl_read_callback read;
	curl_seek_callback seek;  /* with read: CURLOPT_SEEKFUNCTION (ctx),
	                           * so libcurl can send the body again */
	void *ctx;
};

/* POST a request as cli_replay_client_post does (0 / -1 ERR_IO); a read
 * callback that aborts is a transport failure. */
int cli_replay_client_send(struct cli_replay_client *c, struct arena *a,
    const struct cli_replay_body *body, struct cli_replay_answer *ret,
    struct err *err);

/* Read a whole file into out (at most limit bytes); -1 with ERR_IO. */
int cli_replay_read_file(const char *path, size_t limit, struct buf *out,
    struct err *err);


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
	const char *errors;      /* every eb:Error on one line: "CODE SHORT:
				  * Description (detail: ErrorDetail)", "; "
				  * between them; or NULL */
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
