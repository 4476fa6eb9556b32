/*
 * http_guard — what the HTTP layer guards against besides sizes:
 *  - clients that trickle: a header deadline and a request deadline that
 *    hold however slowly the bytes come (slowloris, NEGATIVE-CASES 6),
 *    which libmicrohttpd's idle timeout cannot do;
 *  - forged client addresses: X-Forwarded-For is believed only from
 *    <trustedProxies>.
 *
 * The reaper and the fd: libmicrohttpd 0.9.75 calls the NOTIFY_CONNECTION
 * CLOSED callback from MHD_cleanup_connections() (and from the failure path
 * of internal_add_connection()) BEFORE it closes the connection's socket
 * (MHD_socket_close_chk_ comes after the notification in both).  The reaper
 * shuts a socket down only while holding the lock and only for an entry
 * still in the list; http_guard_close() takes the entry out under the same
 * lock.  So the fd the reaper touches is still the connection's own: it
 * cannot have been closed and reused by another accept().
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "../util/clock.h"
#include "../util/codec.h"
#include "../util/log.h"

/* X-Forwarded-For hops examined at most (right to left). */
#define HTTP_GUARD_MAX_HOPS 64
/* X-Forwarded-For headers of one request looked at (the last ones). */
#define HTTP_GUARD_XFF_HEADERS 16

struct http_guard_conn {
	struct http_guard_conn *prev, *next;
	int fd;
	int64_t accepted_ms;
	int64_t since_ms;        /* accepted, or the previous request completed */
	int64_t head_ms;         /* head of the current request done; 0 = reading it */
	unsigned requests;       /* completed on this connection */
	enum http_guard_cut cut;
	char peer[INET6_ADDRSTRLEN];
};

struct http_guard {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* signalled to stop the reaper */
	pthread_t reaper;
	int started, stop;
	int64_t header_ms, deadline_ms;
	struct http_guard_conn *conns;
};

/* The TCP peer of a connection; 0 ok, -1 unknown family. */
static int
http_guard_tcp_peer(struct MHD_Connection *conn, struct http_addr *ret)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci != NULL ? ci->client_addr : NULL;

	memset(ret, 0, sizeof(*ret));
	if (sa != NULL && sa->sa_family == AF_INET) {
		ret->family = AF_INET;
		memcpy(ret->addr, &((const struct sockaddr_in *)(const void *)
		    sa)->sin_addr, 4);
	} else if (sa != NULL && sa->sa_family == AF_INET6) {
		ret->family = AF_INET6;
		memcpy(ret->addr, &((const struct sockaddr_in6 *)(const void *)
		    sa)->sin6_addr, 16);
	} else {
		return -1;
	}
	return 0;
}

/*
 * 1 when bytes the client sent wait unread in the socket's receive buffer:
 * then the slow one is us (the worker thread is busy with another request,
 * e.g. waiting for the SQLite lock), not the client, and the connection is
 * not cut.  A trickling client cannot profit: a worker free to read drains
 * the buffer at once.
 */
static int
http_guard_unread(int fd)
{
	int pending = 0;

	return ioctl(fd, FIONREAD, &pending) == 0 && pending > 0;
}

/* Shut down what is past its deadline (lock held). */
static void
http_guard_sweep(struct http_guard *g, int64_t now)
{
	struct http_guard_conn *c;

	for (c = g->conns; c != NULL; c = c->next) {
		if (c->cut != HTTP_GUARD_OK || http_guard_unread(c->fd))
			continue;
		if (c->head_ms == 0 && now - c->since_ms > g->header_ms)
			c->cut = HTTP_GUARD_HEAD;
		else if (c->head_ms != 0 &&
		    now - c->head_ms > g->deadline_ms + HTTP_GUARD_GRACE_MS)
			c->cut = HTTP_GUARD_DEADLINE;
		else
			continue;
		/* wakes libmicrohttpd's poll: it reads EOF and closes */
		(void)shutdown(c->fd, SHUT_RDWR);
	}
}

/* The reaper: sweep every HTTP_GUARD_TICK_MS until told to stop. */
static void *
http_guard_run(void *arg)
{
	struct http_guard *g = arg;
	struct timespec ts;

	(void)pthread_mutex_lock(&g->lock);
	while (!g->stop) {
		(void)clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += HTTP_GUARD_TICK_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		(void)pthread_cond_timedwait(&g->wake, &g->lock, &ts);
		if (!g->stop)
			http_guard_sweep(g, clock_mono_ms());
	}
	(void)pthread_mutex_unlock(&g->lock);
	return NULL;
}

/* Guard with the two deadlines; the reaper thread starts now. */
int
http_guard_new(unsigned header_timeout_s, unsigned request_deadline_s,
    struct http_guard **ret, struct err *err)
{
	struct http_guard *g = calloc(1, sizeof(*g));
	pthread_condattr_t ca;
	int rc = -1;

	if (g == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	g->header_ms = (int64_t)header_timeout_s * 1000;
	g->deadline_ms = (int64_t)request_deadline_s * 1000;
	(void)pthread_mutex_init(&g->lock, NULL);
	if (pthread_condattr_init(&ca) != 0)
		goto out;
	/* deadlines on the monotonic clock: a wall-clock step changes nothing */
	if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	    pthread_cond_init(&g->wake, &ca) == 0) {
		if (pthread_create(&g->reaper, NULL, http_guard_run, g) == 0)
			g->started = 1;
		else
			(void)pthread_cond_destroy(&g->wake);
	}
	(void)pthread_condattr_destroy(&ca);
	if (g->started)
		rc = 0;
out:
	if (rc == -1) {
		(void)pthread_mutex_destroy(&g->lock);
		free(g);
		return err_set(err, ERR_INTERNAL, NULL,
		    "could not start the connection deadline thread");
	}
	*ret = g;
	return 0;
}

/* Stop the reaper, then free the list (empty once the daemon stopped). */
void
http_guard_free(struct http_guard *g)
{
	struct http_guard_conn *c;

	if (g == NULL)
		return;
	(void)pthread_mutex_lock(&g->lock);
	g->stop = 1;
	(void)pthread_cond_signal(&g->wake);
	(void)pthread_mutex_unlock(&g->lock);
	(void)pthread_join(g->reaper, NULL);
	/* none are left once the daemon stopped; free any anyway */
	while ((c = g->conns) != NULL) {
		g->conns = c->next;
		free(c);
	}
	(void)pthread_cond_destroy(&g->wake);
	(void)pthread_mutex_destroy(&g->lock);
	free(g);
}

/* The TCP peer's address text, or "unknown". */
static void
http_guard_peer_text(struct MHD_Connection *conn, char *out, size_t outlen)
{
	struct http_addr tcp;

	if (http_guard_tcp_peer(conn, &tcp) == -1 ||
	    inet_ntop(tcp.family, tcp.addr, out, (socklen_t)outlen) == NULL)
		(void)snprintf(out, outlen, "unknown");
}

/* Register a new connection: its fd and accept time, under the lock. */
struct http_guard_conn *
http_guard_open(struct http_guard *g, struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_CONNECTION_FD);
	struct http_guard_conn *c;

	if (ci == NULL)
		return NULL;    /* not a socket: nothing a client can hold */
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		/* an unguarded connection could be held forever: refuse it */
		(void)shutdown(ci->connect_fd, SHUT_RDWR);
		return NULL;
	}
	c->fd = ci->connect_fd;
	c->accepted_ms = c->since_ms = clock_mono_ms();
	http_guard_peer_text(conn, c->peer, sizeof(c->peer));
	(void)pthread_mutex_lock(&g->lock);
	c->next = g->conns;
	if (g->conns != NULL)
		g->conns->prev = c;
	g->conns = c;
	(void)pthread_mutex_unlock(&g->lock);
	return c;
}

/* The entry http_guard_open() left in the socket context. */
struct http_guard_conn *
http_guard_conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn,
	    MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci != NULL ? ci->socket_context : NULL;
}

/* One line for a connection cut before its request began (no request line
 * is logged for it otherwise); an idle keep-alive connection is routine. */
static void
http_guard_log_cut(const struct http_guard *g, const struct http_guard_conn *c)
{
	struct log_request lr = {0};
	char id[37], why[96];

	if (c->requests > 0) {
		log_msg(LOG_DEBUG, "keep-alive connection from %s: no request "
		    "head within %lld s after request %u, closed", c->peer,
		    (long long)(g->header_ms / 1000), c->requests);
		return;
	}
	if (codec_uuid(id) == -1)
		(void)snprintf(id, sizeof(id), "no-id");
	(void)snprintf(why, sizeof(why), "request head not complete within "
	    "%lld s (headerTimeoutSeconds)", (long long)(g->header_ms / 1000));
	lr.request_id = id;
	lr.peer = c->peer;
	lr.outcome = "timeout";
	lr.error = why;
	lr.ms = clock_mono_ms() - c->accepted_ms;
	log_request(&lr);
}

/* Unlink under the lock before libmicrohttpd closes the fd; log a cut. */
void
http_guard_close(struct http_guard *g, struct http_guard_conn *c)
{
	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&g->lock);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	(void)pthread_mutex_unlock(&g->lock);
	if (c->cut == HTTP_GUARD_HEAD)
		http_guard_log_cut(g, c);
	free(c);
}

/* The request deadline runs from now; the header deadline is met. */
void
http_guard_head(struct http_guard *g, struct http_guard_conn *c)
{
	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&g->lock);
	c->head_ms = clock_mono_ms();
	(void)pthread_mutex_unlock(&g->lock);
}

/* Back to waiting for a head: keep-alive gets the header deadline too. */
void
http_guard_idle(struct http_guard *g, struct http_guard_conn *c)
{
	if (c == NULL)
		return;
	(void)pthread_mutex_lock(&g->lock);
	c->head_ms = 0;
	c->since_ms = clock_mono_ms();
	c->requests++;
	(void)pthread_mutex_unlock(&g->lock);
}

/* What the reaper did to the connection, read under the lock. */
enum http_guard_cut
http_guard_was_cut(struct http_guard *g, const struct http_guard_conn *c)
{
	enum http_guard_cut cut;

	if (c == NULL)
		return HTTP_GUARD_OK;
	(void)pthread_mutex_lock(&g->lock);
	cut = c->cut;
	(void)pthread_mutex_unlock(&g->lock);
	return cut;
}

/* ---- the client address behind trusted proxies ---------------------------- */

/* 1 when the address lies in one of the trusted proxy blocks. */
static int
http_guard_trusted(const struct conf *c, const struct http_addr *a)
{
	size_t i;

	for (i = 0; i < c->n_trusted_proxies; i++)
		if (conf_cidr_match(&c->trusted_proxies[i], a->family, a->addr))
			return 1;
	return 0;
}

/*
 * One X-Forwarded-For entry: "192.0.2.1", "2001:db8::1", "[2001:db8::1]",
 * "[2001:db8::1]:443" or "192.0.2.1:443" (spaces around it trimmed by the
 * caller).  0 ok, -1 not an address (names, "unknown", garbage).
 */
static int
http_guard_parse(const char *s, size_t len, struct http_addr *ret)
{
	char host[INET6_ADDRSTRLEN + 8];
	const char *colon;
	size_t n = len;

	if (len == 0 || len >= sizeof(host))
		return -1;
	if (s[0] == '[') {
		colon = memchr(s, ']', len);
		if (colon == NULL || (colon + 1 < s + len && colon[1] != ':'))
			return -1;
		s++;
		n = (size_t)(colon - s);
	} else if ((colon = memchr(s, ':', len)) != NULL &&
	    memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)) == NULL) {
		n = (size_t)(colon - s);     /* IPv4:port */
	}
	memcpy(host, s, n);
	host[n] = '\0';
	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, host, ret->addr) == 1)
		ret->family = AF_INET;
	else if (inet_pton(AF_INET6, host, ret->addr) == 1)
		ret->family = AF_INET6;
	else
		return -1;
	return 0;
}

/*
 * The next entry of one header value, right to left.  *end is one more than
 * the length of the text still to walk (start with strlen(v) + 1; 0 = done).
 * 0 ok (*tok, *toklen set, spaces trimmed; may be empty), -1 none left.
 */
static int
http_guard_prev(const char *v, size_t *end, const char **tok, size_t *toklen)
{
	size_t e, b;

	if (*end == 0)
		return -1;
	e = b = *end - 1;
	while (b > 0 && v[b - 1] != ',')
		b--;
	*end = b;       /* text left: [0, b - 1) before the comma */
	while (b < e && (v[b] == ' ' || v[b] == '\t'))
		b++;
	while (e > b && (v[e - 1] == ' ' || v[e - 1] == '\t'))
		e--;
	*tok = v + b;
	*toklen = e - b;
	return 0;
}

/* Walk one header value right to left: 1 stop here (found the client or
 * an entry that is not an address), 0 go on to the header before. */
static int
http_guard_walk(const struct conf *c, const char *v, struct http_addr *cur,
    int *from_xff, unsigned *hops)
{
	struct http_addr next;
	size_t end = strlen(v) + 1, len;
	const char *tok;

	while (http_guard_prev(v, &end, &tok, &len) == 0) {
		if (http_guard_parse(tok, len, &next) == -1)
			return 1;
		*cur = next;
		*from_xff = 1;
		if (!http_guard_trusted(c, cur) || ++*hops >= HTTP_GUARD_MAX_HOPS)
			return 1;
	}
	return 0;
}

/* Walk X-Forwarded-For right to left while the hops are trusted. */
int
http_guard_client(const struct conf *c, const struct http_addr *tcp,
    const char *const *xff, size_t n_xff, char *out, size_t outlen)
{
	struct http_addr cur = *tcp;
	unsigned hops = 0;
	int from_xff = 0;
	size_t h;

	if (c->n_trusted_proxies > 0 && http_guard_trusted(c, tcp))
		for (h = n_xff; h > 0; h--)
			if (http_guard_walk(c, xff[h - 1], &cur, &from_xff,
			    &hops) == 1)
				break;
	if (inet_ntop(cur.family, cur.addr, out, (socklen_t)outlen) == NULL) {
		(void)snprintf(out, outlen, "unknown");
		from_xff = 0;
	}
	return from_xff;
}

/* The X-Forwarded-For values of a request, oldest first, the last
 * HTTP_GUARD_XFF_HEADERS of them. */
struct http_guard_xff {
	const char *v[HTTP_GUARD_XFF_HEADERS];
	size_t n;
};

/* MHD_KeyValueIterator: keep the X-Forwarded-For values. */
static enum MHD_Result
http_guard_xff_add(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct http_guard_xff *x = cls;

	(void)kind;
	if (value == NULL || strcasecmp(key, "X-Forwarded-For") != 0)
		return MHD_YES;
	if (x->n == HTTP_GUARD_XFF_HEADERS) {
		memmove(x->v, x->v + 1, sizeof(x->v[0]) * (HTTP_GUARD_XFF_HEADERS - 1));
		x->n--;
	}
	x->v[x->n++] = value;
	return MHD_YES;
}

/* The client address of the request: the TCP peer, or behind a trusted
 * proxy the address X-Forwarded-For names (http_guard_client). */
void
http_guard_peer(struct MHD_Connection *conn, const struct conf *c, char *out,
    size_t outlen)
{
	struct http_addr tcp;
	struct http_guard_xff xff = {0};

	if (http_guard_tcp_peer(conn, &tcp) == -1) {
		(void)snprintf(out, outlen, "unknown");
		return;
	}
	if (c->n_trusted_proxies > 0)
		(void)MHD_get_connection_values(conn, MHD_HEADER_KIND,
		    http_guard_xff_add, &xff);
	(void)http_guard_client(c, &tcp, xff.v, xff.n, out, outlen);
}
