/*
 * deliver internals shared by deliver.c (queue, targets), deliver_json.c
 * (message.json) and deliver_sweep.c (leftover temporary directories).
 */
#ifndef AS4GW_DELIVER_INT_H
#define AS4GW_DELIVER_INT_H

#include "deliver.h"

#include "../util/buf.h"
#include "../util/codec.h"

#define DELIVER_NAME_LEN (2 * 32)
#define DELIVER_FILE_MODE 0640
#define DELIVER_RMTREE_DEPTH 16  /* what a command may nest in its temp dir */

/*
 * The whole message.json of d into b (deliver.h "message.json"); conf (may
 * be NULL) gives the leg's parties, roles, service type and encryption
 * policy.  0 ok, -1 out of memory or hashing failed.
 */
int deliver_json(struct buf *b, const struct store_delivery *d,
    const struct conf *conf);

/* The SHA-256 of one part file, as written. */
struct deliver_digest {
	unsigned char md[CODEC_SHA256_LEN];
};

/*
 * deliver_json() with the parts' digests given (md[i] for d->parts[i],
 * computed while their files were written): needed for a part stored in
 * chunks (store_part_streamed), whose bytes are not in memory; md NULL
 * hashes the parts in memory (then a chunked part fails: -1).
 */
int deliver_json_md(struct buf *b, const struct store_delivery *d,
    const struct deliver_digest *md, const struct conf *conf);

/* One message being written into a directory (deliver.c, deliver_part.c). */
struct deliver_job {
	struct store *s;              /* reads the parts stored in chunks */
	const struct store_delivery *d;
	const struct conf *conf;      /* may be NULL */
	int sync;                     /* fsync files and directory */
	struct deliver_digest *md;    /* one per part, set by
	                               * deliver_part_write */
};

/*
 * Write part i of j->d as the new file part-<n>.bin under dfd (fsync'd
 * when j->sync) and its SHA-256 into j->md[i]: bytes in memory as they
 * are, a part stored in chunks streamed from the store one chunk at a time
 * (store_payload_read), so memory does not grow with the payload.  0, or
 * -1 (ERR_IO writing; ERR_STORE reading, e.g. the row was purged).
 */
int deliver_part_write(int dfd, const struct deliver_job *j, size_t i,
    struct err *err);

/* Remove name under dfd and everything in it (depth bounded, symbolic
 * links removed, never followed).  0 ok or absent, -1 with errno. */
int deliver_rmtree_at(int dfd, const char *name, int depth);

/*
 * Remove the temporary directories (".tmp-<name>-<pid>", ".old-<name>-<pid>")
 * under pfd that a deliverer left behind: only those whose pid is not a live
 * process, or that are older than stale_ms (a live writer finishes a
 * message far sooner; its claim was taken over by then anyway).  Only the
 * ones of message name when name is not NULL.  Returns how many were removed.
 */
size_t deliver_sweep_at(int pfd, const char *name, int64_t stale_ms);

/* Hand the claimed d to o's target (directory or command), its parts
 * stored in chunks read from s: 0 ok, -1 the target failed (err says
 * why). */
int deliver_target(struct store *s, const struct deliver_opts *o,
    const struct store_delivery *d, const char *name, struct arena *a,
    struct err *err);

#endif
