/*
 * payload_par — one large part's bytes into two SHA-256 digests on two
 * threads (issue 14).  Both content-hash versions (payload.h) hash the
 * same bytes; for a part of a gigabyte that is two passes of SHA-256 on
 * the request's worker while the machine's other core waits.  Here the
 * caller's thread feeds the first digest and a helper thread the second,
 * in lockstep over SPOOL_CHUNK windows: window k is released behind
 * (spool_done, which also maps the next one ahead; only the caller's
 * thread has the request's spool bound) only after both threads read it,
 * so the resident set stays what one reader keeps and neither thread
 * faults a released page back in.  The digests are the ones a single
 * thread computes: each is fed the same bytes in the same order.
 */
#include "payload_int.h"

#include <pthread.h>
#include <stdatomic.h>

#include "../spool/spool.h"

static atomic_size_t payload_par_count;

/* The shared state of one lockstep run. */
struct payload_par {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct codec_sha256 *h;     /* the helper's digest */
	const unsigned char *data;
	size_t len;
	size_t posted;              /* windows the caller has let the helper read */
	size_t read;                /* windows the helper has read */
	int failed;                 /* an update of h failed */
};

/* Window k of the run: its start and length. */
static size_t
payload_par_window(const struct payload_par *r, size_t k, size_t *n)
{
	size_t off = k * SPOOL_CHUNK;

	*n = r->len - off > SPOOL_CHUNK ? SPOOL_CHUNK : r->len - off;
	return off;
}

/* The helper: each window once it is posted, then say it was read. */
static void *
payload_par_helper(void *arg)
{
	struct payload_par *r = arg;
	size_t k, off, n, windows = (r->len + SPOOL_CHUNK - 1) / SPOOL_CHUNK;

	for (k = 0; k < windows; k++) {
		pthread_mutex_lock(&r->lock);
		while (r->posted <= k)
			pthread_cond_wait(&r->cond, &r->lock);
		pthread_mutex_unlock(&r->lock);
		off = payload_par_window(r, k, &n);
		if (codec_sha256_update(r->h, r->data + off, n) == -1)
			r->failed = 1;
		pthread_mutex_lock(&r->lock);
		r->read = k + 1;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	return NULL;
}

/* The caller's side: post window k, hash it into a, wait for the helper
 * to have read it too, release it. */
static void
payload_par_step(struct payload_par *r, struct codec_sha256 *a, size_t k,
    int *a_failed)
{
	size_t off, n;

	off = payload_par_window(r, k, &n);
	pthread_mutex_lock(&r->lock);
	r->posted = k + 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (codec_sha256_update(a, r->data + off, n) == -1)
		*a_failed = 1;
	pthread_mutex_lock(&r->lock);
	while (r->read <= k)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	spool_done(r->data + off, n);
}

/* See payload_int.h. */
int
payload_par_update(struct codec_sha256 *a, struct codec_sha256 *b,
    const unsigned char *data, size_t len, int *a_failed, int *b_failed)
{
	struct payload_par r = { .h = b, .data = data, .len = len };
	size_t k, windows = (len + SPOOL_CHUNK - 1) / SPOOL_CHUNK;
	pthread_t t;

	if (len < PAYLOAD_PAR_MIN ||
	    pthread_mutex_init(&r.lock, NULL) != 0)
		return -1;
	if (pthread_cond_init(&r.cond, NULL) != 0) {
		pthread_mutex_destroy(&r.lock);
		return -1;
	}
	if (pthread_create(&t, NULL, payload_par_helper, &r) != 0) {
		pthread_cond_destroy(&r.cond);
		pthread_mutex_destroy(&r.lock);
		return -1;
	}
	for (k = 0; k < windows; k++)
		payload_par_step(&r, a, k, a_failed);
	pthread_join(t, NULL);
	atomic_fetch_add_explicit(&payload_par_count, 1, memory_order_relaxed);
	if (r.failed)
		*b_failed = 1;
	pthread_cond_destroy(&r.cond);
	pthread_mutex_destroy(&r.lock);
	return 0;
}

/* See payload_int.h. */
size_t
payload_par_runs(void)
{
	return atomic_load_explicit(&payload_par_count, memory_order_relaxed);
}
