/*
 * deliver internals shared by deliver.c (queue, targets), deliver_json.c
 * (message.json) and deliver_sweep.c (leftover temporary directories).
 */
#ifndef AS4GW_DELIVER_INT_H
#define AS4GW_DELIVER_INT_H

#include "deliver.h"

#include "../util/buf.h"

#define DELIVER_NAME_LEN (2 * 32)
#define DELIVER_RMTREE_DEPTH 16  /* what a command may nest in its temp dir */

/*
 * The whole message.json of d into b (deliver.h "message.json"); conf (may
 * be NULL) gives the leg's parties, roles, service type and encryption
 * policy.  0 ok, -1 out of memory or hashing failed.
 */
int deliver_json(struct buf *b, const struct store_delivery *d,
    const struct conf *conf);

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

/* Hand the claimed d to o's target (directory or command): 0 ok, -1 the
 * target failed (err says why). */
int deliver_target(const struct deliver_opts *o,
    const struct store_delivery *d, const char *name, struct arena *a,
    struct err *err);

#endif
