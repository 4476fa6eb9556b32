/*
 * cli_push_int.h — internal to `as4gw push` (cli_push.c, cli_push_opts.c,
 * cli_push_msg.c, and for large payloads cli_push_stage.c and
 * cli_push_body.c): the parsed command line, one built message, and the
 * functions the files call across.  Not for other modules.
 *
 * Ownership: every pointer in struct cli_push_opts and struct cli_push_msg
 * points into the arena given to cli_push_options() / cli_push_build() (or is
 * released by a cleanup registered on it: a large message's spool, whose
 * mappings its body's ranges point into); nothing here is freed by hand.
 */
#ifndef AS4GW_CLI_PUSH_INT_H
#define AS4GW_CLI_PUSH_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libxml/tree.h>

#include "cli.h"

struct wss_key;
struct sender_recipient;
struct spool;
struct cli_push_body;

/* Payload files of this size and more take the large path (issue 14):
 * staged into a spool file and streamed, never read into memory. */
#define CLI_PUSH_SPOOL_THRESHOLD ((uint64_t)8 << 20)

/* "[TYPE::]VALUE" as given on the command line. */
struct cli_push_typed {
	const char *type; /* NULL when absent */
	const char *value;
};

/* A --property: eb:MessageProperties/eb:Property (ebMS3 Core 5.2.2.11). */
struct cli_push_prop {
	const char *type; /* NULL when absent */
	const char *name;
	const char *value;
};

struct cli_push_payload {
	const char *path;
	const char *mime_type;
	const char *cid;
	struct buf data; /* the small path: the file (gzip after --compress) */
	int big;         /* the large path: staged per message instead */
};

struct cli_push_opts {
	struct cli_replay_net net;
	const char *message_id, *from_role, *to_role, *action, *conversation;
	struct cli_push_typed from, to, service, agreement;
	struct cli_push_payload *payloads;
	size_t n_payloads;
	struct cli_push_prop *props;
	size_t n_props;
	const char *gateway_cert, *save_request, *write_requests;
	const char *sign_cert, *sign_key, *recipient_cert;
	/* --profile: NULL (any key), or "edelivery-1.x", "edelivery-2.0",
	 * "edelivery-2.0-ec", "bdew" — the key types it needs and its key
	 * derivation (cli_push_profile_apply) */
	const char *profile;
	struct wss_key *key;             /* --sign: loaded by cli_push_load */
	struct sender_recipient *recipient; /* --encrypt: likewise */
	long count;
	int repeat, quiet, sign, encrypt, compress;
	/* --spool-threshold, --spool-dir: where the large path starts, and
	 * where its anonymous spool files go */
	uint64_t spool_threshold;
	const char *spool_dir;
};

/* One built message: the exact bytes and headers that go on the wire. */
struct cli_push_msg {
	const char *message_id;
	const char *content_type;
	struct buf body;
	xmlDocPtr sent; /* the signed envelope (arena), for the NRR check */
	/* the large path: the message's spool (bound to the thread while the
	 * message lives) and the body as ranges, body holding its framing;
	 * both NULL for a message built in memory */
	struct spool *spool;
	struct cli_push_body *stream;
};

/* cli_push_profile.c: is name a --profile (1 / 0)?  Do o's loaded
 * signing key and recipient certificate have the key types o->profile
 * needs — and set the recipient's key derivation: 0, or -1 ERR_CONF naming
 * the key that does not fit. */
int cli_push_profile_known(const char *name);
int cli_push_profile_apply(const struct cli_push_opts *o, struct err *err);

/* cli_push.c: arena cleanup wrapper: buf_free() takes a typed pointer. */
void cli_push_buf_cleanup(void *p);

/* cli_push_opts.c: parse the command line into o: 0 ok, 1 help was printed,
 * -1 usage error. */
int cli_push_options(struct arena *a, int argc, char **argv,
		     struct cli_push_opts *o);

/* cli_push_msg.c: build one message: a fresh MessageId (unless --message-id)
 * and Timestamp, compressed, signed and encrypted as asked. */
int cli_push_build(struct arena *a, const struct cli_push_opts *o,
		   struct cli_push_msg *m, struct err *err);

/*
 * cli_push_stage.c: the payload file at path, gzip'd when gzip is set, in
 * one pass into a new file of sp, mapped read-only: *ret / *ret_len valid
 * until spool_free(sp).  0, or -1 (ERR_IO naming the file, ERR_STORE when
 * the spool is full, ERR_INTERNAL).
 */
int cli_push_stage(struct spool *sp, const char *path, int gzip,
    const unsigned char **ret, size_t *ret_len, struct err *err);

/* A large part of a message: its data, and the marker that stands in
 * for it in the framed body (NULL: not a large part). */
struct cli_push_big {
	const char *mark;
	const unsigned char *data;
	size_t len;
};

/*
 * cli_push_body.c: the body of a large message as ranges: framed (what
 * mime_write wrote, owned by the caller and left unchanged) with each
 * big[i].mark that is not NULL replaced by big[i].data (in order of
 * appearance).  Refused (ERR_INTERNAL) when a marker is missing or a line
 * of the data starts with the MIME delimiter.  *ret lives in a.
 */
int cli_push_body_split(struct arena *a, const struct buf *framed,
    const struct cli_push_big *big, size_t n, struct cli_push_body **ret,
    struct err *err);
uint64_t cli_push_body_len(const struct cli_push_body *b);
void cli_push_body_rewind(struct cli_push_body *b);
/* libcurl's CURLOPT_READFUNCTION over b (ctx), from the cursor on. */
size_t cli_push_body_read(char *buf, size_t size, size_t nitems, void *ctx);
/* libcurl's CURLOPT_SEEKFUNCTION over b (ctx): the cursor to an offset
 * from the start (SEEK_SET; anything else CURL_SEEKFUNC_CANTSEEK). */
int cli_push_body_seek(void *ctx, curl_off_t offset, int origin);
/* The whole body to f; 0, or -1 with errno. */
int cli_push_body_write(struct cli_push_body *b, FILE *f);

#endif
