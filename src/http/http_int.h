/*
 * http_int — what http.c (the server: daemon, routes, generations, drain)
 * and http_post.c (the AS4 POST: body, refusals, pipeline) share.  Not for
 * other modules: they use http.h.
 */
#ifndef AS4GW_HTTP_INT_H
#define AS4GW_HTTP_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/arena.h"
#include "../util/buf.h"
#include "../util/err.h"
#include "http.h"

struct MHD_Connection;
struct spool;
struct spool_file;

/* One store connection per worker thread, opened on first use. */
struct http_store_slot {
	struct http_store_slot *next;
	struct store *store;
};

/*
 * One configuration generation: the conf and the gateway built from it.
 * The server holds one reference to the current generation, every request
 * one to the generation it is bound to; the last reference frees both.
 */
struct http_gen {
	struct conf *conf;
	struct gateway *gw;
	int refs;                  /* under http_server.gen_lock */
};

struct http_server {
	struct MHD_Daemon *daemon;
	pthread_mutex_t gen_lock;
	struct http_gen *gen;      /* current; new requests take it */
	struct conf_limits limits; /* fixed at start, like the daemon's options */
	char *store_dsn;           /* fixed at start: the worker connections' */
	int store_timeout_ms;      /* fixed at start, like store_dsn */
	char *spool_dir;           /* fixed at start: <limits><spoolDir> */
	struct http_guard *guard;
	atomic_int inflight;
	atomic_int stopping;       /* set by http_stop: answers close the connection */
	pthread_key_t store_key;
	pthread_mutex_t slots_lock;
	struct http_store_slot *slots;
	char *tls_cert_pem, *tls_key_pem;
	int port;
	/* when a push last failed in the store (503) / last reached it (epoch
	 * ms): /readyz says not ready while failures are the latest news */
	_Atomic int64_t store_fail_ms, store_ok_ms;
};

/* How long a store failure keeps /readyz at 503 when no push succeeded
 * after it (then the ping decides again): short, so a store that is back
 * is ready again soon without traffic; a store that keeps failing keeps
 * failing the pushes that arrive, and each one renews it. */
#define HTTP_READY_FAIL_MS 5000

/* The Retry-After of a push refused for want of spool space (issue 14):
 * the gateway's for a store that cannot commit. */
#define HTTP_SPOOL_RETRY_AFTER_S 5

/* Note one push's store result for /readyz (http.c). */
void http_ready_note(struct http_server *srv, int store_failed);

/* Per request state, from the first access-handler call to completion. */
struct http_req {
	struct http_server *srv;
	struct http_gen *gen;      /* bound at the head, again at the body's end */
	struct http_guard_conn *gc;
	struct arena *arena;
	struct buf body;           /* the body while it is small (in memory) */
	/* issue 14: the body once it is large (http_spool.c): its spool
	 * and the one file it is written to; NULL while in memory */
	struct spool *spool;
	struct spool_file *spool_f;
	uint64_t body_bytes;       /* body bytes read (kept or dropped), for the log */
	/* the body could not be kept (the spool ran out of space: ERR_STORE):
	 * the rest is read and dropped, the answer comes at its end */
	struct err body_err;
	int64_t start_ms;
	uint64_t discarded;        /* body bytes read and dropped (http_discard) */
	int discard;               /* reading a body to drop it, answer after */
	int refused;               /* refused before the body ended */
	int late;                  /* began after the drain started: not processed */
	const char *refusal;       /* why (for the log when it could not be sent) */
	char id[37];
	char peer[INET6_ADDRSTRLEN];
	const char *method, *path;
	int status;
	const char *outcome;
};

/* A reference to the current generation / drop one (accepts NULL; the last
 * reference frees the generation). */
struct http_gen *http_gen_get(struct http_server *srv);
void http_gen_put(struct http_server *srv, struct http_gen *g);

/* The calling worker's store connection, opened on first use; NULL when
 * the store cannot be opened now. */
struct store *http_store(struct http_server *srv, struct err *err);

/* Queue an answer with a copy of body (plus the common headers); 0 ok, -1
 * failed.  http_respond_text: text/plain. */
int http_respond(struct MHD_Connection *conn, struct http_req *r, int status,
    const char *ctype, const void *body, size_t len, int retry_after);
int http_respond_text(struct MHD_Connection *conn, struct http_req *r,
    int status, const char *text);

/* Queue the pipeline's answer (fault builds: through http.mid-response). */
int http_respond_answer(struct MHD_Connection *conn, struct http_req *r,
    const struct gateway_answer *ans, int is_new);

/*
 * ---- http_post.c ----------------------------------------------------------
 *
 * One call of the access handler for POST on the AS4 path: first (the head
 * just read), a chunk of body, or the end of it.  0 ok, -1 close the
 * connection.
 */
int http_post(struct MHD_Connection *conn, struct http_req *r,
    const char *url, const char *data, size_t *data_size, int first);

/*
 * A request that is not an AS4 push and declares a body the server can
 * read cheaply (Content-Length or chunked, at most maxBodyBytes): 1 read it
 * to the end and drop it before answering (http_discard), 0 answer at once.
 * A peer that is still sending when the answer comes (libmicrohttpd closes
 * then) sees its write fail: behind a proxy, an upstream error.
 */
int http_body_to_discard(struct MHD_Connection *conn, const struct http_req *r);

/* Drop a chunk of such a body; 0 ok, -1 over maxBodyBytes (close). */
int http_discard(struct http_req *r, size_t len);

/*
 * ---- http_spool.c (issue 14) ----------------------------------------------
 *
 * At the head of a push: a declared body of spoolThresholdBytes or more
 * goes to a spool file.  0 ok (r->spool set), -1 refused at once: err
 * ERR_STORE (no room on the spool filesystem beyond spoolReserveBytes:
 * 503 + Retry-After) or ERR_INTERNAL (the spool directory failed).
 */
int http_spool_begin(struct http_req *r, uint64_t declared, struct err *err);

/*
 * Keep a piece of body: in memory, or in the spool file once the body
 * reached the threshold (a body without Content-Length moves there when
 * it grows to it).  0 ok, -1 err (ERR_STORE: no space left; the caller
 * drops the rest and answers 503 at the end).
 */
int http_spool_append(struct http_req *r, const char *data, size_t len,
    struct err *err);

/*
 * The whole body, in memory or mapped (spool_map): *ret_body, *ret_len
 * valid until http_spool_free().  0, or -1 err.
 */
int http_spool_body(struct http_req *r, const unsigned char **ret_body,
    size_t *ret_len, struct err *err);

/* Free the request's spool (every file: the kernel frees them); again is
 * a no-op.  Also called from the request-completed callback. */
void http_spool_free(struct http_req *r);

/* At start: spoolDir is a directory the gateway can create (anonymous)
 * files in; -1 ERR_CONF naming it (serve's start-up error). */
int http_spool_check(const char *dir, struct err *err);

#endif
