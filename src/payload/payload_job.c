/*
 * payload_job — the content hashes of a large message on a thread of their
 * own (issue 14; payload.h payload_hashes_start).  Hashing a gigabyte
 * takes about as long as the store's writing it; done one after the other
 * they add up, done at the same time on the machine's two cores the
 * Receipt goes out about a second per GiB sooner.  The thread computes
 * exactly what payload_content_hashes() computes (payload_hashes_fill);
 * only when is different, and version 1 only on demand
 * (payload_hashes_v1): it is compared only with rows stored before the
 * field digests existed, and leaving it out hashes each byte once, not
 * twice.
 */
#include "payload.h"
#include "payload_int.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../spool/spool.h"

struct payload_job {
	pthread_t thread;
	const struct ebms_user_message *um;
	struct spool *spool;          /* the caller's, bound on the thread */
	unsigned char *fields;
	unsigned char v2[CODEC_SHA256_LEN], v1[CODEC_SHA256_LEN];
	size_t n;
	int started, joined, rc;
	int v1_rc;                    /* payload_hashes_v1: 1 not yet, 0, -1 */
};

/* The thread: the caller's spool bound, so its windows are released. */
static void *
payload_job_run(void *arg)
{
	struct payload_job *j = arg;

	(void)spool_bind(j->spool);
	j->rc = payload_hashes_fill(j->um, j->fields, j->n, j->v2, NULL);
	(void)spool_bind(NULL);
	return NULL;
}

/* Join the thread once; its answer. */
static int
payload_job_join(struct payload_job *j)
{
	if (j->started && !j->joined) {
		(void)pthread_join(j->thread, NULL);
		j->joined = 1;
	}
	return j->rc;
}

/* See payload.h. */
int
payload_hashes_wait(struct payload_job *j, unsigned char v2[CODEC_SHA256_LEN])
{
	if (payload_job_join(j) == -1)
		return -1;
	memcpy(v2, j->v2, CODEC_SHA256_LEN);
	return 0;
}

/* See payload.h. */
int
payload_hashes_v1(struct payload_job *j, unsigned char v1[CODEC_SHA256_LEN])
{
	if (payload_job_join(j) == -1)
		return -1;
	if (j->v1_rc == 1)
		j->v1_rc = payload_content_hash(j->um, j->v1);
	if (j->v1_rc == -1)
		return -1;
	memcpy(v1, j->v1, CODEC_SHA256_LEN);
	return 0;
}

/* The arena's last resort: never leave the thread running. */
static void
payload_job_cleanup(void *p)
{
	(void)payload_job_join(p);
}

/* The bytes of um's parts, saturating. */
static size_t
payload_job_bytes(const struct ebms_user_message *um)
{
	size_t n = 0, i;

	for (i = 0; i < um->n_parts; i++)
		n = um->parts[i].len > SIZE_MAX - n ? SIZE_MAX :
		    n + um->parts[i].len;
	return n;
}

/* See payload.h. */
int
payload_hashes_start(struct arena *a, const struct ebms_user_message *um,
    unsigned char **ret_fields, size_t *ret_len, struct payload_job **ret)
{
	struct payload_job *j;

	*ret = NULL;
	if (payload_job_bytes(um) < PAYLOAD_JOB_MIN)
		return 1;
	if ((j = arena_calloc(a, 1, sizeof(*j))) == NULL ||
	    (j->fields = arena_calloc(a, PAYLOAD_FIELDS_COUNT(um),
	    CODEC_SHA256_LEN)) == NULL ||
	    arena_cleanup(a, payload_job_cleanup, j) == -1)
		return -1;
	j->um = um;
	j->spool = spool_bound();
	j->v1_rc = 1;
	j->n = PAYLOAD_FIELDS_COUNT(um);
	*ret_fields = j->fields;
	*ret_len = j->n * CODEC_SHA256_LEN;
	*ret = j;
	if (pthread_create(&j->thread, NULL, payload_job_run, j) == 0) {
		j->started = 1;
		return 0;
	}
	/* no thread: hash here and now, the same answer */
	j->rc = payload_hashes_fill(um, j->fields, j->n, j->v2, NULL);
	return 0;
}
