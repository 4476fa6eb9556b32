/*
 * http — the libmicrohttpd server: routing (POST <path>, GET /healthz,
 * GET /readyz, GET /metrics), limits, TLS, one store connection per worker
 * thread, deadlines a trickling client cannot stretch, the client address
 * behind trusted reverse proxies, configuration swap on reload, and
 * graceful drain on shutdown.  The AS4 work itself is gateway_receive().
 */
#ifndef AS4GW_HTTP_H
#define AS4GW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "../conf/conf.h"
#include "../gateway/gateway.h"
#include "../util/err.h"

struct http_server;

/*
 * Start listening on conf's host:port (HTTPS when tls_cert/tls_key are set).
 * gw must have been built from conf.  On success the server owns both
 * (http_stop or a later http_swap frees them); on failure the caller still
 * owns them.
 */
int http_start(struct conf *conf, struct gateway *gw,
    struct http_server **ret, struct err *err);

/* The port actually bound (useful with port 0). */
int http_port(const struct http_server *srv);

/*
 * Reload: new requests use conf/gw (gw built from conf; P-Modes,
 * certificates, trusted proxies, path) from now on, and so does every push
 * whose body is not complete yet (the configuration is bound again when it
 * is: issue 10 item 9c); pushes being processed finish on the previous
 * pair, which is freed when its last request completes.  The server owns conf and gw from this call on.  What is fixed
 * at start keeps its start value whatever conf says: listen address, TLS
 * files, threads, limits and store DSN (the caller warns about those).
 * Call from one thread at a time (the signal loop).  0 ok; -1 out of
 * memory, nothing swapped and the caller still owns conf and gw.
 */
int http_swap(struct http_server *srv, struct conf *conf, struct gateway *gw);

/*
 * Stop accepting, wait up to drain_ms for in-flight requests to finish,
 * stop the daemon and free everything (the configuration too).  Accepts NULL.
 */
void http_stop(struct http_server *srv, unsigned drain_ms);

/*
 * ---- internal: between http.c and http_guard.c ----------------------------
 *
 * The guard gives every connection two deadlines that libmicrohttpd's idle
 * timeout does not (a client sending one byte a second is never idle):
 * the request head (request line and headers) must be complete within
 * header_timeout_s of the connection being accepted, or of the previous
 * request on it completing; a request must be done within its deadline
 * (request_deadline_s from its head, plus HTTP_GUARD_GRACE_MS so that a
 * body chunk arriving late still gets its 408 first).  A reaper thread
 * shuts such connections down (shutdown(2), never close(2): the fd stays
 * libmicrohttpd's, and is only closed after http_guard_close() has removed
 * the entry under the same lock, so a shut-down fd is never a reused one).
 */
#define HTTP_GUARD_TICK_MS 250
#define HTTP_GUARD_GRACE_MS 1000

enum http_guard_cut { HTTP_GUARD_OK = 0, HTTP_GUARD_HEAD, HTTP_GUARD_DEADLINE };

struct http_guard;
struct http_guard_conn;

/* Start the reaper thread.  0 ok, -1 err. */
int http_guard_new(unsigned header_timeout_s, unsigned request_deadline_s,
    struct http_guard **ret, struct err *err);

/* Stop and join the reaper; free what is left.  Accepts NULL. */
void http_guard_free(struct http_guard *g);

struct MHD_Connection;

/*
 * A connection was accepted (libmicrohttpd NOTIFY_CONNECTION STARTED):
 * watch its socket.  Returns the entry for the connection's socket context,
 * or NULL when out of memory, in which case the connection has been shut
 * down (never left unguarded).
 */
struct http_guard_conn *http_guard_open(struct http_guard *g,
    struct MHD_Connection *conn);

/* The entry of a connection (its socket context), or NULL. */
struct http_guard_conn *http_guard_conn_of(struct MHD_Connection *conn);

/* The connection is closing (NOTIFY_CONNECTION CLOSED; its fd is still
 * open): forget it; log it when it was cut before a request began.
 * Accepts NULL c. */
void http_guard_close(struct http_guard *g, struct http_guard_conn *c);

/* The head of a request is complete (first access-handler call). */
void http_guard_head(struct http_guard *g, struct http_guard_conn *c);

/* The request completed: the next head's clock starts now. */
void http_guard_idle(struct http_guard *g, struct http_guard_conn *c);

/* Whether (and why) the reaper shut the connection down. */
enum http_guard_cut http_guard_was_cut(struct http_guard *g,
    const struct http_guard_conn *c);

/* A TCP peer: AF_INET (4 bytes) or AF_INET6 (16), network order. */
struct http_addr {
	int family;
	unsigned char addr[16];
};

/*
 * The client address (<trustedProxies>): when the TCP peer lies in one of
 * c's trusted proxies, the right-most address in the X-Forwarded-For values
 * (xff: every such header in order of arrival, n_xff of them) that is not
 * itself a trusted proxy: every hop right of it was added by a trusted
 * proxy.  If all are trusted, the left-most; an unparsable entry stops the
 * walk at the last address found so far.  Otherwise, or with no proxies,
 * the TCP peer.  Writes the address text into out (at least
 * INET6_ADDRSTRLEN bytes); returns 1 when it came from X-Forwarded-For.
 */
int http_guard_client(const struct conf *c, const struct http_addr *tcp,
    const char *const *xff, size_t n_xff, char *out, size_t outlen);

/* The client address of a request (http_guard_client over its TCP peer and
 * its X-Forwarded-For headers, the last 16 of them) into out, or "unknown". */
void http_guard_peer(struct MHD_Connection *conn, const struct conf *c,
    char *out, size_t outlen);

#endif
