/*
 * deliver — the backend hand-off behind `as4gw deliver` (DESIGN.md "Backend
 * hand-off"): claim a message from the delivery queue (store_claim), hand it
 * to the target, and only after the target succeeded mark it done
 * (store_finish ok).  A failed target puts the row back to 'ready' and it is
 * retried after a back-off; a deliverer that dies leaves the row 'claimed'
 * and another deliverer takes it over after stale_ms.
 *
 * Targets:
 *  - directory: DIR/<name>/ with message.json (the inbox row's metadata and
 *    the parts' content ids, MIME types, properties and file names) and one
 *    file per payload (part-<n>.bin), written into DIR/.tmp-<name>, fsync'd
 *    and renamed into place; <name> is a filesystem-safe, collision-free
 *    function of the inbox key (hex of SHA-256 over the sending party, a
 *    NUL byte and the MessageId: two parties' messages with one MessageId
 *    get two directories), so delivering the same message again after a
 *    crash replaces the directory with identical content: the backend sees
 *    each message once.
 *    Leftovers of a deliverer killed mid-write (DIR/.tmp-<name>-<pid>,
 *    DIR/.old-<name>-<pid>) are swept: by deliver_sweep() (the CLI calls
 *    it at start) and before a redelivery of <name> (deliver_sweep.c).
 *  - command: the same directory is built in a private temporary directory
 *    and CMD runs on it: a CMD that is one program path (letters, digits
 *    and / . _ - + , @ % : only; deliver_exec_direct) runs directly as
 *    `CMD PATH` (looked up in PATH without a '/'), anything else as
 *    `/bin/sh -c CMD sh PATH` (the path is $1); with AS4GW_MESSAGE_ID,
 *    AS4GW_FROM, AS4GW_SERVICE, AS4GW_ACTION, AS4GW_DIR in its environment;
 *    exit status 0 is success.  A command must be idempotent per
 *    (AS4GW_FROM, AS4GW_MESSAGE_ID), or per AS4GW_DIR's base name:
 *    a crash after it succeeded and before the row is marked done runs it
 *    again (README "Backend hand-off").
 *    The command runs in its own process group with stdin /dev/null and its
 *    stdout sent to the deliverer's stderr (so the deliverer's own stdout
 *    stays one line per message); after exec_timeout_s the whole group is
 *    killed (SIGKILL) and the attempt fails.  The temporary directory is
 *    removed afterwards, whatever the command left in it.
 *
 * message.json (one object; strings JSON-escaped, absent values null):
 *   {"message_id", "from", "to" (the canonical party names, "type:value"
 *    of the leg's first PartyId or its value), "from_party", "to_party"
 *    ({"type", "id", "role"} of that PartyId, from the configured leg:
 *    a value may hold ':', so the name is not split), "service",
 *    "service_type", "action", "conversation_id", "agreement_ref", "pmode",
 *    "received_at" (xsd:dateTime UTC, ms),
 *    "parts": [{"part_no", "content_id", "mime_type",
 *    "properties" (the PartProperties as the sender sent them), "file",
 *    "size" and "sha256" (of the file), "transformations" (what the
 *    gateway undid: "decrypted", "decompressed")}]}
 *   (deliver_json.c; README "Backend hand-off" has an example.)
 * Two deliveries of one message write byte-identical directories (the
 * attempt count is not in it; the report callback has it).
 *
 * Fault points deliver.after-claim, deliver.mid-write and
 * deliver.after-target sit here.
 * Depends on store, conf (the legs, for message.json) and util.
 */
#ifndef AS4GW_DELIVER_H
#define AS4GW_DELIVER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../store/store.h"
#include "../util/err.h"

/* What became of one claimed message, for the caller's output (the library
 * itself never prints).  Every pointer lives only during the callback. */
struct deliver_report {
	const char *message_id;
	const char *from_party;  /* with message_id, the inbox key */
	const char *name;        /* directory name (deliver_name) */
	int attempts;            /* claims so far, this one included */
	int ok;                  /* 1 delivered and marked done; 0 failed */
	int64_t retry_in_ms;     /* !ok: back-off before the next claim */
	const struct err *err;   /* !ok: why the target failed */
};

typedef void (*deliver_report_fn)(void *arg, const struct deliver_report *r);

/* A store outage seen by deliver_run (issue 11 item 1): reported once when
 * it starts and once when the store works again.  Pointers live only
 * during the callback. */
struct deliver_outage {
	int recovered;           /* 0: just failed; 1: works again */
	const char *what;        /* "claim", "release" or "wait" */
	const struct err *err;   /* !recovered: the failure */
	int64_t down_ms;         /* recovered: how long it failed */
	int retries;             /* recovered: failed tries */
};

typedef void (*deliver_outage_fn)(void *arg, const struct deliver_outage *e);

struct conf;

/*
 * stale_ms: claims older than this are taken over (their deliverer died);
 * the CLI's default is DELIVER_STALE_MS_DEFAULT, 0 takes any claim over at
 * once (tests), negative means the default.  Keep it above exec_timeout_s,
 * or a command still running is started a second time.
 */
struct deliver_opts {
	const char *to_dir;      /* exactly one of to_dir and exec_cmd */
	const char *exec_cmd;
	int64_t stale_ms;        /* see above; default 300000 */
	int follow;              /* 0: stop when the queue is empty; 1: wait */
	size_t max_messages;     /* 0 = no limit */
	unsigned exec_timeout_s; /* kill the command after this; 0 = 300 */
	deliver_report_fn report; /* after each claimed message; may be NULL */
	deliver_outage_fn outage; /* store outages; may be NULL */
	void *report_arg;         /* for report and outage */
	const struct conf *conf;  /* the legs, for message.json; may be NULL */
};

#define DELIVER_STALE_MS_DEFAULT INT64_C(600000) /* above the exec timeout */
#define DELIVER_EXEC_TIMEOUT_DEFAULT 300u
#define DELIVER_BACKOFF_MAX_MS INT64_C(60000)
#define DELIVER_WAIT_MS 5000     /* follow: one store_wait() */
#define DELIVER_OUTAGE_MIN_MS INT64_C(100)  /* store down: first sleep */
#define DELIVER_OUTAGE_MAX_MS INT64_C(5000) /* doubling up to this */
#define DELIVER_RELEASE_TRIES 10 /* not follow: release tries (~20 s) */

struct deliver_counts {
	size_t delivered;
	size_t failed;               /* target failed; row back to 'ready' */
};

/*
 * Deliver one message if one can be claimed: 1 delivered, 0 queue empty,
 * 2 target failed (row released; err says why), -1 store error.
 */
int deliver_one(struct store *s, const struct deliver_opts *o,
    struct err *err);

/*
 * Loop deliver_one(): until the queue is empty (follow 0), or until *stop
 * (follow 1: between messages store_wait() blocks up to 5 s for a NOTIFY).
 * Failed targets are retried after a back-off (1 s doubling to 60 s) without
 * blocking other messages.  Adds to *ret.  0 ok, -1 store error.
 * A store that fails (deliver_queue.c): follow 1 rides it out, backing off
 * DELIVER_OUTAGE_MIN_MS doubling to DELIVER_OUTAGE_MAX_MS and reconnecting,
 * until it works again or *stop; follow 0 returns -1 (a release of a
 * message already handed over is tried DELIVER_RELEASE_TRIES times first).
 * Either way a message handed over is released with its outcome, never
 * claimed again by this deliverer meanwhile.
 */
int deliver_run(struct store *s, const struct deliver_opts *o,
    const atomic_int *stop, struct deliver_counts *ret, struct err *err);

/*
 * The back-off after a failed target, by the claim count (attempts, this
 * claim included): 1 s, doubling, at most DELIVER_BACKOFF_MAX_MS.
 */
int64_t deliver_backoff_ms(int attempts);

/* Remove what dead deliverers left in o->to_dir (see above); how many.
 * 0 for the command target. */
size_t deliver_sweep(const struct deliver_opts *o);

/* 1 when --exec CMD is one program path run without a shell (see above). */
int deliver_exec_direct(const char *cmd);

/*
 * The directory name of a message: the lower-case hex SHA-256 over its
 * sending party, one NUL byte and its MessageId — the inbox key (a party
 * string holds no NUL), so filesystem-safe, collision-free across parties
 * and the same on every delivery — into out[2 * 32 + 1].  0 ok, -1
 * (ERR_INTERNAL) when hashing fails.
 */
int deliver_name(const char *from_party, const char *message_id,
    char out[65], struct err *err);

#endif
