#include "http_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "../metrics/metrics.h"
#include "../trust/trust_revoc.h"
#include "../util/clock.h"
#include "../util/codec.h"
#include "../util/fault.h"
#include "../util/log.h"

#define HTTP_TLS_PRIORITIES \
	"NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE"

/* Take a reference to the current generation. */
struct http_gen *
http_gen_get(struct http_server *srv)
{
	struct http_gen *g;

	(void)pthread_mutex_lock(&srv->gen_lock);
	g = srv->gen;
	g->refs++;
	(void)pthread_mutex_unlock(&srv->gen_lock);
	return g;
}

/* Drop a reference; the last one frees the generation (gateway first: it
 * borrows the conf).  Accepts NULL. */
void
http_gen_put(struct http_server *srv, struct http_gen *g)
{
	int last;

	if (g == NULL)
		return;
	(void)pthread_mutex_lock(&srv->gen_lock);
	last = --g->refs == 0;
	(void)pthread_mutex_unlock(&srv->gen_lock);
	if (!last)
		return;
	gateway_free(g->gw);
	conf_free(g->conf);
	free(g);
}

/* The calling worker's store connection, opened on first use; NULL if the
 * store cannot be opened now (the request then gets 503 and the next one
 * tries again). */
struct store *
http_store(struct http_server *srv, struct err *err)
{
	struct http_store_slot *slot = pthread_getspecific(srv->store_key);

	if (slot == NULL) {
		slot = calloc(1, sizeof(*slot));
		if (slot == NULL || pthread_setspecific(srv->store_key, slot) != 0) {
			free(slot);
			return NULL;
		}
		(void)pthread_mutex_lock(&srv->slots_lock);
		slot->next = srv->slots;
		srv->slots = slot;
		(void)pthread_mutex_unlock(&srv->slots_lock);
	}
	if (slot->store == NULL &&
	    store_open_timeout(srv->store_dsn, srv->store_timeout_ms,
	    &slot->store, err) == -1)
		slot->store = NULL;
	return slot->store;
}

/* Add the common headers to resp and queue it; 0 ok, -1 failed.  Takes
 * resp (destroyed here: libmicrohttpd keeps its own reference). */
static int
http_queue(struct MHD_Connection *conn, struct http_req *r, int status,
    struct MHD_Response *resp, const char *ctype, int retry_after)
{
	char ra[16];
	enum MHD_Result ok;

	if (ctype != NULL)
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (retry_after > 0) {
		(void)snprintf(ra, sizeof(ra), "%d", retry_after);
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
	}
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "POST");
	/* while draining, keep-alive clients must not start more requests */
	if (r->refused || atomic_load(&r->srv->stopping))
		(void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	(void)MHD_add_response_header(resp, "X-Request-Id", r->id);
	ok = MHD_queue_response(conn, (unsigned)status, resp);
	MHD_destroy_response(resp);
	if (ok != MHD_YES)
		return -1;
	r->status = status;
	return 0;
}

/* Queue a response with a copy of body; 0 ok, -1 failed. */
int
http_respond(struct MHD_Connection *conn, struct http_req *r, int status,
    const char *ctype, const void *body, size_t len, int retry_after)
{
	struct MHD_Response *resp;

	resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL)
		return -1;
	return http_queue(conn, r, status, resp, ctype, retry_after);
}

/* A text/plain answer. */
int
http_respond_text(struct MHD_Connection *conn, struct http_req *r, int status,
    const char *text)
{
	return http_respond(conn, r, status, "text/plain; charset=utf-8", text,
	    strlen(text), 0);
}

#ifdef AS4GW_FAULT_INJECTION
/* The answer of fault point http.mid-response: its body, sent in halves. */
struct http_fault_body {
	size_t len, half;
	char data[];
};

/* libmicrohttpd asks for more only once what it had is sent: the first
 * half goes out, then asking for the second half kills the process. */
static ssize_t
http_fault_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	const struct http_fault_body *b = cls;
	size_t n;

	if (pos >= b->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (pos >= b->half)
		fault_point("http.mid-response");
	n = b->len - (size_t)pos;
	if (pos < b->half && n > b->half - (size_t)pos)
		n = b->half - (size_t)pos;
	if (n > max)
		n = max;
	memcpy(buf, b->data + pos, n);
	return (ssize_t)n;
}

/* Queue ans with a callback body for fault point http.mid-response. */
static int
http_respond_mid_fault(struct MHD_Connection *conn, struct http_req *r,
    const struct gateway_answer *ans)
{
	struct http_fault_body *b = malloc(sizeof(*b) + ans->body.len + 1);
	struct MHD_Response *resp;

	if (b == NULL)
		return -1;
	b->len = ans->body.len;
	b->half = b->len / 2;
	if (b->len > 0)
		memcpy(b->data, ans->body.data, b->len);
	resp = MHD_create_response_from_callback(b->len, 4096, http_fault_read,
	    b, free);
	if (resp == NULL) {
		free(b);
		return -1;
	}
	return http_queue(conn, r, ans->status, resp, ans->content_type,
	    ans->retry_after);
}
#endif

/* Queue the pipeline's answer (fault builds: through http.mid-response). */
int
http_respond_answer(struct MHD_Connection *conn, struct http_req *r,
    const struct gateway_answer *ans, int is_new)
{
#ifdef AS4GW_FAULT_INJECTION
	if (is_new && fault_armed("http.mid-response"))
		return http_respond_mid_fault(conn, r, ans);
#else
	(void)is_new;
#endif
	return http_respond(conn, r, ans->status, ans->content_type,
	    ans->body.data, ans->body.len, ans->retry_after);
}

/* Note one push's store result for /readyz; see http_int.h. */
void
http_ready_note(struct http_server *srv, int store_failed)
{
	atomic_store(store_failed ? &srv->store_fail_ms : &srv->store_ok_ms,
	    clock_epoch_ms());
}

/* Is the latest store news a failure to commit a push, and recent?  A
 * store can answer a ping and still fail every commit (SQLite on a full
 * disk): readiness is the ability to accept. */
static int
http_ready_failing(struct http_server *srv)
{
	int64_t fail = atomic_load(&srv->store_fail_ms);

	return fail > atomic_load(&srv->store_ok_ms) &&
	    clock_epoch_ms() - fail < HTTP_READY_FAIL_MS;
}

/* GET /readyz: the store answers and pushes are not failing in it
 * (DESIGN.md "Interfaces"; issue 11 item 6b). */
static int
http_readyz(struct MHD_Connection *conn, struct http_req *r)
{
	struct err err = {0};
	struct store *s = http_store(r->srv, &err);

	if (http_ready_failing(r->srv)) {
		r->outcome = "not-ready";
		return http_respond(conn, r, 503, "text/plain; charset=utf-8",
		    "store failing commits\n", 22, 5);
	}
	if (s == NULL || store_ping(s, &err) == -1) {
		metrics_store_error();
		r->outcome = "not-ready";
		return http_respond(conn, r, 503, "text/plain; charset=utf-8",
		    "store unavailable\n", 18, 5);
	}
	r->outcome = "ready";
	return http_respond_text(conn, r, 200, "ready\n");
}

/* The revocation engine's counters, when serve has one. */
static void
http_metrics_revocation(const struct http_req *r)
{
	struct trust_revoc *rv = r->gen != NULL && r->gen->gw != NULL ?
	    r->gen->gw->revoc : NULL;
	struct trust_revoc_stats st;

	if (rv == NULL)
		return;
	trust_revoc_stats(rv, 0, &st);
	metrics_set_revocation((const uint64_t (*)[5])st.checks,
	    st.responder_failures, (int64_t)st.entries, st.oldest_age_ms);
}

/* The store's purge log for /metrics (unknown when it cannot be read). */
static void
http_metrics_purge_log(struct store *s)
{
	struct store_purge_totals t;
	struct metrics_purge_log m;
	struct err err = {0};
	size_t i, j;

	if (s == NULL || store_purge_totals(s, &t, &err) == -1) {
		metrics_set_purge_log(NULL);
		return;
	}
	_Static_assert(STORE_PURGE_N_SOURCES == METRICS_PURGE_SOURCES &&
	    STORE_PURGE_N_OUTCOMES == METRICS_PURGE_OUTCOMES,
	    "the purge log's sources and outcomes are the metric's labels");
	for (i = 0; i < METRICS_PURGE_SOURCES; i++) {
		for (j = 0; j < METRICS_PURGE_OUTCOMES; j++)
			m.runs[i][j] = t.runs[i][j];
		m.purged[i] = t.purged[i];
		m.last_ok_ms[i] = t.last_ok_ms[i];
	}
	metrics_set_purge_log(&m);
}

/* GET /metrics: the store gauges and the purge log read now (unknown if
 * the store fails), then the whole exposition text. */
static int
http_metrics(struct MHD_Connection *conn, struct http_req *r)
{
	struct store_stats st;
	struct err err = {0};
	struct store *s = http_store(r->srv, &err);
	struct buf text = {0};
	int rc;

	if (s != NULL && store_stats(s, &st, &err) == 0) {
		metrics_set_store(st.inbox_rows, st.delivery_ready,
		    st.delivery_claimed);
		http_metrics_purge_log(s);
	} else {
		metrics_set_store(-1, -1, -1);
		metrics_set_purge_log(NULL);
		metrics_store_error();
	}
	http_metrics_revocation(r);
	r->outcome = "metrics";
	if (metrics_render(&text) == -1)
		rc = http_respond_text(conn, r, 500, "out of memory\n");
	else
		rc = http_respond(conn, r, 200, METRICS_CONTENT_TYPE, text.data,
		    text.len, 0);
	buf_free(&text);
	return rc;
}

static struct http_req *
http_req_new(struct http_server *srv, struct MHD_Connection *conn,
    const char *method, const char *url)
{
	struct http_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->arena = arena_new(srv->limits.request_memory_bytes);
	if (r->arena == NULL) {
		free(r);
		return NULL;
	}
	r->srv = srv;
	r->gen = http_gen_get(srv);
	r->start_ms = clock_mono_ms();
	r->body.limit = srv->limits.max_body_bytes;
	r->method = arena_strdup(r->arena, method);
	/* at most 200 bytes, cut between characters (issue 10 item 7) */
	r->path = arena_strndup(r->arena, url, buf_utf8_prefix(url, 200));
	if (codec_uuid(r->id) == -1)
		(void)snprintf(r->id, sizeof(r->id), "no-id");
	http_guard_peer(conn, r->gen->conf, r->peer, sizeof(r->peer));
	r->gc = http_guard_conn_of(conn);
	http_guard_head(srv->guard, r->gc);
	/* seq_cst pair with http_drain (stopping, then inflight): either the
	 * drain waits for this request, or this request sees the drain and is
	 * not processed; never a COMMIT the stopping daemon cannot answer */
	atomic_fetch_add(&srv->inflight, 1);
	r->late = atomic_load(&srv->stopping);
	metrics_inflight(1);
	return r;
}

/* GET routes besides the AS4 path. */
static int
http_route_get(struct MHD_Connection *conn, struct http_req *r,
    const char *url)
{
	if (strcmp(url, "/healthz") == 0) {
		r->outcome = "health";
		return http_respond_text(conn, r, 200, "ok\n");
	}
	if (strcmp(url, "/readyz") == 0)
		return http_readyz(conn, r);
	if (strcmp(url, "/metrics") == 0)
		return http_metrics(conn, r);
	r->outcome = "error";
	return http_respond_text(conn, r, 404, "not found\n");
}

/* Route one access-handler call: the AS4 push, the GET endpoints, or a
 * refusal. */
static enum MHD_Result
http_route(struct MHD_Connection *conn, struct http_req *r, const char *url,
    const char *method, const char *data, size_t *data_size, int first)
{
	const struct conf *c = r->gen->conf;
	int rc = 0;

	if (strcmp(url, c->http_path) == 0 &&
	    strcmp(method, MHD_HTTP_METHOD_POST) == 0) {
		rc = http_post(conn, r, url, data, data_size, first);
	} else if (strcmp(url, c->http_path) == 0) {
		r->outcome = "error";
		rc = http_respond_text(conn, r, 405, "method not allowed\n");
	} else if (strcmp(method, "GET") == 0) {
		rc = http_route_get(conn, r, url);
	} else {
		r->outcome = "error";
		rc = http_respond_text(conn, r, 404, "not found\n");
	}
	*data_size = 0;
	return rc == 0 ? MHD_YES : MHD_NO;
}

/* 1 when the request is the AS4 push (its body is the pipeline's). */
static int
http_is_push(const struct http_req *r, const char *url, const char *method)
{
	return strcmp(url, r->gen->conf->http_path) == 0 &&
	    strcmp(method, MHD_HTTP_METHOD_POST) == 0;
}

/*
 * Every other request that comes with a body is answered once that body
 * has been read and dropped (up to maxBodyBytes; http_body_to_discard): a
 * proxy still sending it would otherwise see a broken connection, an
 * upstream error, and count it against the instance (issue 10 item 9a).
 */
static enum MHD_Result
http_access(void *cls, struct MHD_Connection *conn, const char *url,
    const char *method, const char *version, const char *data,
    size_t *data_size, void **con_cls)
{
	struct http_server *srv = cls;
	struct http_req *r = *con_cls;

	(void)version;
	if (r == NULL) {
		r = http_req_new(srv, conn, method, url);
		if (r == NULL)
			return MHD_NO;
		*con_cls = r;
		if (!http_is_push(r, url, method) &&
		    http_body_to_discard(conn, r)) {
			r->discard = 1;
			return MHD_YES;
		}
		return http_route(conn, r, url, method, data, data_size, 1);
	}
	if (r->discard && *data_size > 0) {
		if (http_discard(r, *data_size) == -1)
			return MHD_NO;
		*data_size = 0;
		return MHD_YES;
	}
	if (r->discard) {
		r->discard = 0;
		return http_route(conn, r, url, method, data, data_size, 1);
	}
	if (r->status != 0 && !r->refused) {
		*data_size = 0;
		return MHD_YES;
	}
	return http_route(conn, r, url, method, data, data_size, 0);
}

/* The request line of a request not logged by http_post_end. */
static void
http_completed_log(const struct http_req *r, enum MHD_RequestTerminationCode toe,
    enum http_guard_cut cut, int64_t ms)
{
	struct log_request lr = {0};
	char why[96];

	lr.request_id = r->id;
	lr.peer = r->peer;
	lr.method = r->method;
	lr.path = r->path;
	lr.status = r->status;
	lr.outcome = r->outcome != NULL ? r->outcome : "aborted";
	if (cut == HTTP_GUARD_DEADLINE && r->status == 0) {
		(void)snprintf(why, sizeof(why), "request not done within %u s "
		    "(requestDeadlineSeconds): connection cut",
		    r->srv->limits.request_deadline_s);
		lr.outcome = "timeout";
		lr.error = why;
	} else if (r->refusal != NULL && r->status == 0) {
		(void)snprintf(why, sizeof(why), "%s: connection closed without "
		    "an answer (mid-body)", r->refusal);
		lr.error = why;
	} else if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && r->status == 0) {
		lr.error = toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED ?
		    "connection timed out" : "connection closed";
	} else if (r->body_err.kind != ERR_NONE) {
		lr.error = r->body_err.msg;   /* no spool space (issue 14) */
	}
	lr.bytes_in = (int64_t)(r->body_bytes + r->discarded);
	lr.ms = ms;
	if (strcmp(lr.outcome, "health") != 0 && strcmp(lr.outcome, "ready") != 0 &&
	    strcmp(lr.outcome, "metrics") != 0)
		log_request(&lr);
}

/* Request finished (answered, timed out or aborted): log refusals, free. */
static void
http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct http_req *r = *con_cls;
	enum http_guard_cut cut;
	int64_t ms;

	(void)conn;
	if (r == NULL)
		return;
	ms = clock_mono_ms() - r->start_ms;
	cut = http_guard_was_cut(srv->guard, r->gc);
	http_guard_idle(srv->guard, r->gc);
	if (r->outcome == NULL || strcmp(r->outcome, "logged") != 0)
		http_completed_log(r, toe, cut, ms);
	metrics_request_ms(ms);
	buf_free(&r->body);
	http_spool_free(r);        /* refused, cut or aborted mid-body */
	arena_free(r->arena);
	http_gen_put(srv, r->gen);
	free(r);
	*con_cls = NULL;
	atomic_fetch_sub(&srv->inflight, 1);
	metrics_inflight(-1);
}

/* NOTIFY_CONNECTION: register a new connection with the guard, forget a
 * closing one (called before libmicrohttpd closes its fd). */
static void
http_notify_conn(void *cls, struct MHD_Connection *conn, void **socket_context,
    enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = http_guard_open(srv->guard, conn);
		return;
	}
	http_guard_close(srv->guard, *socket_context);
	*socket_context = NULL;
}

static void
http_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void)cls;
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	log_msg(LOG_WARN, "httpd: %s", line);
}

/* Read a whole PEM file for libmicrohttpd's in-memory TLS options. */
static char *
http_read_pem(const char *path, struct err *err)
{
	FILE *f = fopen(path, "rb");
	struct buf b = {0};
	char chunk[4096];
	size_t n;

	if (f == NULL) {
		err_set(err, ERR_CONF, NULL, "could not open \"%s\": %s", path,
		    strerror(errno));
		return NULL;
	}
	b.limit = 1 << 20;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(&b, chunk, n) == -1)
			break;
	if (ferror(f) || !feof(f) || b.data == NULL) {
		err_set(err, ERR_CONF, NULL, "could not read \"%s\"", path);
		buf_free(&b);
	}
	(void)fclose(f);
	return b.data;
}

static int
http_bind_addr(const struct conf *c, struct sockaddr_storage *ss, struct err *err)
{
	struct addrinfo hints = {0}, *res = NULL;
	char port[8];
	int gai;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	(void)snprintf(port, sizeof(port), "%d", c->listen_port);
	gai = getaddrinfo(c->listen_host, port, &hints, &res);
	if (gai != 0 || res == NULL)
		return err_set(err, ERR_CONF, NULL, "could not resolve listen address \"%s\": %s",
		    c->listen_host, gai_strerror(gai));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static void
http_store_slots_free(struct http_server *srv)
{
	struct http_store_slot *s;

	while ((s = srv->slots) != NULL) {
		srv->slots = s->next;
		store_close(s->store);
		free(s);
	}
}

static int
http_start_daemon(struct http_server *srv, const struct conf *c,
    struct sockaddr_storage *ss, struct err *err)
{
	/*
	 * poll(), not epoll (MHD_USE_AUTO picks epoll on Linux): with a thread
	 * pool, MHD_quiesce_daemon() races each worker's own removal of the
	 * listening socket from its epoll set and libmicrohttpd aborts the
	 * process when it loses (MHD_PANIC on ENOENT); poll() workers are told
	 * through their ITC instead.
	 */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
	    MHD_USE_ERROR_LOG | MHD_USE_POLL;
	const union MHD_DaemonInfo *di;

	if (ss->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (srv->tls_cert_pem != NULL)
		flags |= MHD_USE_TLS;
	/* the logger first, so no option's complaint reaches stderr raw */
	srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, http_access, srv,
	    MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, srv,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)c->threads,
	    MHD_OPTION_CONNECTION_TIMEOUT, c->limits.connection_timeout_s,
	    MHD_OPTION_CONNECTION_LIMIT, c->limits.max_connections,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, c->limits.per_ip_connections,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, c->limits.connection_memory_bytes,
	    MHD_OPTION_STRICT_FOR_CLIENT, 1,
	    MHD_OPTION_NOTIFY_COMPLETED, http_completed, srv,
	    MHD_OPTION_NOTIFY_CONNECTION, http_notify_conn, srv,
	    srv->tls_cert_pem != NULL ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END,
	    srv->tls_cert_pem,
	    MHD_OPTION_HTTPS_MEM_KEY, srv->tls_key_pem,
	    MHD_OPTION_HTTPS_PRIORITIES, HTTP_TLS_PRIORITIES,
	    MHD_OPTION_END);
	if (srv->daemon == NULL)
		return err_set(err, ERR_CONF, NULL,
		    "could not listen on %s:%d (address in use, or TLS set-up failed)",
		    c->listen_host, c->listen_port);
	di = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
	srv->port = di != NULL ? di->port : c->listen_port;
	return 0;
}

/* A generation holding conf and gw, with the server's reference. */
static struct http_gen *
http_gen_new(struct conf *conf, struct gateway *gw)
{
	struct http_gen *g = calloc(1, sizeof(*g));

	if (g != NULL) {
		g->conf = conf;
		g->gw = gw;
		g->refs = 1;
	}
	return g;
}

/* The server without daemon and guard: generation, fixed settings, locks. */
static struct http_server *
http_server_new(struct conf *conf, struct gateway *gw, struct err *err)
{
	struct http_server *srv = calloc(1, sizeof(*srv));

	if (srv == NULL || pthread_key_create(&srv->store_key, NULL) != 0) {
		free(srv);
		err_set(err, ERR_INTERNAL, NULL, "could not create the server");
		return NULL;
	}
	(void)pthread_mutex_init(&srv->gen_lock, NULL);
	(void)pthread_mutex_init(&srv->slots_lock, NULL);
	atomic_init(&srv->inflight, 0);
	atomic_init(&srv->stopping, 0);
	srv->limits = conf->limits;
	srv->store_timeout_ms = conf->store_timeout_ms;
	if ((srv->store_dsn = strdup(conf->store_dsn)) == NULL ||
	    (srv->spool_dir = strdup(conf->spool_dir)) == NULL ||
	    (srv->gen = http_gen_new(conf, gw)) == NULL) {
		http_stop(srv, 0);
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		return NULL;
	}
	return srv;
}

/* Server, guard, TLS material, then the daemon; on failure the caller
 * keeps conf and gw. */
int
http_start(struct conf *conf, struct gateway *gw, struct http_server **ret,
    struct err *err)
{
	struct http_server *srv = http_server_new(conf, gw, err);
	struct sockaddr_storage ss;

	if (srv == NULL)
		return -1;
	if (http_spool_check(srv->spool_dir, err) == -1)
		goto fail;
	if (http_guard_new(conf->limits.header_timeout_s,
	    conf->limits.request_deadline_s, &srv->guard, err) == -1)
		goto fail;
	if (conf->tls_cert != NULL &&
	    ((srv->tls_cert_pem = http_read_pem(conf->tls_cert, err)) == NULL ||
	    (srv->tls_key_pem = http_read_pem(conf->tls_key, err)) == NULL))
		goto fail;
	if (http_bind_addr(conf, &ss, err) == -1 ||
	    http_start_daemon(srv, conf, &ss, err) == -1)
		goto fail;
	*ret = srv;
	return 0;
fail:
	/* the caller keeps conf and gw */
	srv->gen->conf = NULL;
	srv->gen->gw = NULL;
	http_stop(srv, 0);
	return -1;
}

int
http_port(const struct http_server *srv)
{
	return srv->port;
}

/* New requests take the new generation; the old one is released. */
int
http_swap(struct http_server *srv, struct conf *conf, struct gateway *gw)
{
	struct http_gen *g = http_gen_new(conf, gw), *old;

	if (g == NULL)
		return -1;
	(void)pthread_mutex_lock(&srv->gen_lock);
	old = srv->gen;
	srv->gen = g;
	(void)pthread_mutex_unlock(&srv->gen_lock);
	/* freed now, or by the last request still running on it */
	http_gen_put(srv, old);
	return 0;
}

/*
 * Stop accepting and let the requests in flight finish (SIGTERM drain); their
 * answers say "Connection: close".  The listening socket stays open until
 * MHD_stop_daemon() (libmicrohttpd: a worker may still use it); shutdown()
 * makes the kernel refuse new connections now instead of queueing them.
 */
static void
http_drain(struct http_server *srv, unsigned drain_ms)
{
	int64_t until = clock_mono_ms() + drain_ms;
	MHD_socket lsock;

	atomic_store(&srv->stopping, 1);
	lsock = MHD_quiesce_daemon(srv->daemon);
	if (lsock != MHD_INVALID_SOCKET)
		(void)shutdown(lsock, SHUT_RDWR);
	while (atomic_load(&srv->inflight) > 0 && clock_mono_ms() < until)
		(void)usleep(20 * 1000);
	MHD_stop_daemon(srv->daemon);
	if (lsock != MHD_INVALID_SOCKET)
		(void)close(lsock);
}

/* Drain, stop the daemon, then free what its callbacks used. */
void
http_stop(struct http_server *srv, unsigned drain_ms)
{
	if (srv == NULL)
		return;
	if (srv->daemon != NULL)
		http_drain(srv, drain_ms);
	/* after the daemon: its last CLOSED notifications reach the guard */
	http_guard_free(srv->guard);
	http_store_slots_free(srv);
	(void)pthread_key_delete(srv->store_key);
	(void)pthread_mutex_destroy(&srv->slots_lock);
	http_gen_put(srv, srv->gen);
	(void)pthread_mutex_destroy(&srv->gen_lock);
	if (srv->tls_key_pem != NULL)
		explicit_bzero(srv->tls_key_pem, strlen(srv->tls_key_pem));
	free(srv->tls_cert_pem);
	free(srv->tls_key_pem);
	free(srv->store_dsn);
	free(srv->spool_dir);
	free(srv);
}
