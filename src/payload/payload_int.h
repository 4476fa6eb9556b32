/*
 * payload_int.h — what payload's own files share (not for other modules).
 */
#ifndef AS4GW_PAYLOAD_INT_H
#define AS4GW_PAYLOAD_INT_H

#include <stddef.h>

#include "../ebms/ebms.h"
#include "../util/codec.h"

/* Parts shorter than this are hashed on one thread (payload_par.c): a
 * second thread costs more than it saves on a few SPOOL_CHUNKs. */
#define PAYLOAD_PAR_MIN ((size_t)8 << 20)

/*
 * Feed data[0, len) into a on the calling thread and into b on a helper
 * thread at the same time, each SPOOL_CHUNK window released behind
 * (spool_done) once both read it; a failed update sets *a_failed or
 * *b_failed.  0, or -1 when len < PAYLOAD_PAR_MIN or no thread could be
 * started: then nothing was fed and the caller feeds both itself.
 */
int payload_par_update(struct codec_sha256 *a, struct codec_sha256 *b,
    const unsigned char *data, size_t len, int *a_failed, int *b_failed);

/* The number of field digests of um (payload.h, version 2). */
#define PAYLOAD_FIELDS_COUNT(um) (PAYLOAD_FIELDS_FIXED + 2 * (um)->n_parts)

/*
 * payload_content_hashes() into buffers the caller allocated: fields[n]
 * (n = PAYLOAD_FIELDS_COUNT(um) digests), v2 and v1 (v1 NULL: version 2
 * only, each part's bytes hashed once instead of twice).  Allocates nothing
 * from an arena, so it may run on a thread of its own (payload_job.c).
 * 0, or -1 when SHA-256 fails.
 */
int payload_hashes_fill(const struct ebms_user_message *um,
    unsigned char *fields, size_t n, unsigned char v2[CODEC_SHA256_LEN],
    unsigned char v1[CODEC_SHA256_LEN]);

/* How many payload_par_update() runs used the second thread so far (for
 * tests and the curious; a relaxed counter). */
size_t payload_par_runs(void);

#endif
