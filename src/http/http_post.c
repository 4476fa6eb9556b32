/*
 * http_post — the AS4 push on the wire: read the body within maxBodyBytes
 * and requestDeadlineSeconds, refuse what is too large or too late, bind
 * the configuration once the body is complete, run gateway_receive() and
 * log the one request line.  Also the rule for what the server refuses
 * otherwise: a body that is cheap to read is read and dropped first, so
 * the peer gets its answer instead of a broken connection (issue 10 9a).
 */
#include "http_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "../metrics/metrics.h"
#include "../spool/spool.h"
#include "../util/clock.h"
#include "../util/fault.h"
#include "../util/log.h"

/*
 * Refuse a POST before its body is read to the end (413, 408).  Only on the
 * first call (head just read) can libmicrohttpd 0.9.75 queue an answer: in
 * the middle of the body MHD_queue_response() fails, the access handler
 * returns MHD_NO and the connection is closed without one; the log line then
 * says so (http_completed_log).
 */
static int
http_post_refuse(struct MHD_Connection *conn, struct http_req *r, int status,
    const char *why)
{
	char text[96];

	r->refused = 1;
	r->refusal = why;
	r->outcome = "error";
	buf_free(&r->body);
	http_spool_free(r);
	metrics_message("error", NULL, status);
	(void)snprintf(text, sizeof(text), "%s\n", why);
	return http_respond_text(conn, r, status, text);
}

/* The declared Content-Length: 1 found (*ret set), 0 none, -1 unparsable. */
static int
http_post_length(struct MHD_Connection *conn, unsigned long long *ret)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end;

	if (cl == NULL)
		return 0;
	errno = 0;
	*ret = strtoull(cl, &end, 10);
	return errno != 0 || *end != '\0' ? -1 : 1;
}

/*
 * No room to spool the body (ERR_STORE): 503 + Retry-After, which AS4
 * senders retry after; anything else about the spool is a 500.  Nothing
 * is stored either way.
 */
static int
http_post_spool_refuse(struct MHD_Connection *conn, struct http_req *r)
{
	static const char busy[] = "service temporarily unavailable\n";
	const struct err *err = &r->body_err;

	r->refusal = err->msg;
	r->outcome = "error";
	http_spool_free(r);
	buf_free(&r->body);
	if (err->kind != ERR_STORE) {
		metrics_message("error", NULL, 500);
		return http_respond_text(conn, r, 500, "internal error\n");
	}
	metrics_message("error", NULL, 503);
	return http_respond(conn, r, 503, "text/plain; charset=utf-8", busy,
	    sizeof(busy) - 1, HTTP_SPOOL_RETRY_AFTER_S);
}

/*
 * First call for a POST: refuse a declared body over the cap before reading
 * it.  Not drained: reading more than maxBodyBytes is not cheap, and nginx
 * (client_max_body_size = maxBodyBytes) never passes such a request on.
 * A declared body of spoolThresholdBytes or more goes to a spool file; no
 * room for it there is a 503 at once, before any of it is read (issue 14).
 */
static int
http_post_begin(struct MHD_Connection *conn, struct http_req *r)
{
	unsigned long long n = 0;
	int declared = http_post_length(conn, &n);

	if (declared == -1 || (declared == 1 && n > r->body.limit))
		return http_post_refuse(conn, r, 413, "request body too large");
	if (declared == 1 && http_spool_begin(r, n, &r->body_err) == -1) {
		r->refused = 1;
		return http_post_spool_refuse(conn, r);
	}
	return 0;
}

/*
 * A chunk of body: keep it within the cap and the request deadline.  When
 * the spool runs out of space mid-body (ENOSPC: ERR_STORE) the answer
 * cannot be queued now (see http_post_refuse): the spool is freed, the
 * rest is read and dropped, and http_post_end answers 503.
 */
static int
http_post_chunk(struct MHD_Connection *conn, struct http_req *r,
    const char *data, size_t len)
{
	int64_t deadline = (int64_t)r->srv->limits.request_deadline_s * 1000;

	if (r->refused)
		return 0;
	if (clock_mono_ms() - r->start_ms > deadline)
		return http_post_refuse(conn, r, 408, "request deadline exceeded");
	r->body_bytes += len;
	if (r->body_bytes > r->body.limit)
		return http_post_refuse(conn, r, 413, "request body too large");
	if (r->body_err.kind != ERR_NONE)
		return 0;
	if (http_spool_append(r, data, len, &r->body_err) == -1) {
		http_spool_free(r);
		buf_free(&r->body);
	}
	return 0;
}

/* The request line of a finished push. */
static void
http_post_log(const struct http_req *r, const struct gateway_answer *ans,
    const struct err *serr)
{
	struct log_request lr = {0};

	lr.request_id = r->id;
	lr.peer = r->peer;
	lr.method = r->method;
	lr.path = r->path;
	lr.status = ans->status;
	lr.message_id = ans->message_id;
	lr.from_party = ans->from_party;
	lr.pmode = ans->pmode;
	lr.outcome = ans->outcome;
	lr.replayed = ans->replayed;
	lr.decryption_retiring = ans->decrypt_retiring;
	lr.business_key = ans->business_key;
	lr.business_note = ans->business_note;
	lr.duplicate_of = ans->duplicate_of;
	lr.ebms_code = ans->ebms_code;
	lr.error = ans->err.kind != ERR_NONE ? ans->err.msg : NULL;
	lr.detail = ans->err.detail[0] != '\0' ? ans->err.detail :
	    (serr->kind != ERR_NONE ? serr->msg : NULL);
	lr.bytes_in = (int64_t)r->body_bytes;
	lr.ms = clock_mono_ms() - r->start_ms;
	log_request(&lr);
}

/*
 * The body is complete: from now on the request is judged by the
 * configuration current NOW, not the one of its head (issue 10 item 9c: a
 * push whose head came before a reload that removed its leg, its partner's
 * certificate or its trusted proxy is refused like any push after it).
 * The client address is worked out again under the new trusted proxies.
 * 1 the AS4 path is still url, 0 it moved (the request is answered 404).
 */
static int
http_post_rebind(struct MHD_Connection *conn, struct http_req *r,
    const char *url)
{
	struct http_gen *now = http_gen_get(r->srv);

	if (now == r->gen) {
		http_gen_put(r->srv, now);
		return 1;
	}
	http_gen_put(r->srv, r->gen);
	r->gen = now;
	http_guard_peer(conn, now->conf, r->peer, sizeof(r->peer));
	return strcmp(url, now->conf->http_path) == 0;
}

/*
 * A push the store failed (503): news for /readyz only when the connection
 * it used is still up and the store still answers a ping — it is reachable
 * but cannot commit (SQLite on a full disk, a lock held past the busy
 * timeout, a refusing trigger).  A push that lost its connection (PostgreSQL
 * stopping, restarting, still starting up) says nothing about commits: an
 * unreachable store fails the ping /readyz makes itself, and is ready again
 * as soon as it answers.
 */
static void
http_post_store_failed(struct http_req *r)
{
	struct err err = {0};
	struct store *s = http_store(r->srv, &err);

	if (s != NULL && !store_lost(s) && store_ping(s, &err) == 0)
		http_ready_note(r->srv, 1);
}

/* revocation="prefer" let a push through without a fresh status (issue
 * 12 item 2): a warning line and a metric, so it is not silent. */
static void
http_post_revocation_note(const struct http_req *r,
    const struct gateway_answer *ans)
{
	const char *fields[] = { "request_id", r->id, "message_id",
		ans->message_id, "pmode", ans->pmode, "detail",
		ans->revocation_note };

	if (ans->revocation_note == NULL || ans->outcome == NULL ||
	    (strcmp(ans->outcome, "new") != 0 &&
	    strcmp(ans->outcome, "duplicate") != 0))
		return;
	metrics_revocation_fail_open();
	log_event(LOG_WARN, "revocation_unknown", "no fresh revocation status "
	    "for the signer; accepted under revocation=\"prefer\"", fields, 4);
}

/*
 * The pipeline's answer is out: metrics, /readyz news, the warning of a
 * fail-open revocation and the request line.
 */
static void
http_post_done(struct http_req *r, const struct gateway_answer *ans,
    const struct err *serr)
{
	r->outcome = "logged";
	metrics_message(ans->outcome, ans->ebms_code, ans->status);
	if (ans->decrypt_retiring != NULL)
		metrics_decrypt_retiring();
	if (ans->business_mode != NULL)
		metrics_business_duplicate(ans->business_mode);
	/* a 503 for want of a revocation status is not the store's */
	if (ans->status == 503 && ans->err.kind != ERR_UNAVAILABLE)
		metrics_store_error();
	if (ans->status == 503 && ans->err.kind != ERR_UNAVAILABLE)
		http_post_store_failed(r);
	else if (ans->outcome != NULL && (strcmp(ans->outcome, "new") == 0 ||
	    strcmp(ans->outcome, "duplicate") == 0))
		http_ready_note(r->srv, 0);
	http_post_revocation_note(r, ans);
	http_post_log(r, ans, serr);
}

/*
 * Run the pipeline over the body (issue 14: a spooled body is its
 * mapping, and the request's spool is bound to this thread for the
 * length of gateway_receive(), then freed with everything in it).
 */
static int
http_post_run(struct MHD_Connection *conn, struct http_req *r)
{
	struct gateway_request greq = {0};
	struct gateway_answer ans;
	struct err serr = {0};
	struct spool *was;
	int rc, is_new;

	if (http_spool_body(r, &greq.body, &greq.len, &r->body_err) == -1)
		return http_post_spool_refuse(conn, r);
	greq.content_type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	greq.peer = r->peer;
	greq.spool = r->spool;
	was = spool_bind(r->spool);
	(void)gateway_receive(r->gen->gw, http_store(r->srv, &serr), r->arena,
	    &greq, &ans);
	(void)spool_bind(was);
	is_new = ans.outcome != NULL && strcmp(ans.outcome, "new") == 0;
	/* fault point: committed, the partner has not been answered */
	if (is_new)
		fault_point("http.after-commit");
	rc = http_respond_answer(conn, r, &ans, is_new);
	http_post_done(r, &ans, &serr);
	buf_free(&ans.body);
	/* the spool goes in http_completed, once the answer is sent: closing
	 * a spooled GiB gives its page-cache pages back, which took a second
	 * the partner waited for when it came first */
	return rc;
}

/* The whole body is in: run the AS4 pipeline and answer. */
static int
http_post_end(struct MHD_Connection *conn, struct http_req *r,
    const char *url)
{
	if (r->late) {
		/* nothing stored: the partner retries, on another instance or
		 * after the restart */
		r->outcome = "draining";
		http_spool_free(r);
		return http_respond(conn, r, 503, "text/plain; charset=utf-8",
		    "shutting down\n", 14, 1);
	}
	/* the spool ran out of space mid-body: read to the end, now 503 */
	if (r->body_err.kind != ERR_NONE)
		return http_post_spool_refuse(conn, r);
	if (!http_post_rebind(conn, r, url)) {
		r->outcome = "error";
		http_spool_free(r);
		return http_respond_text(conn, r, 404, "not found\n");
	}
	return http_post_run(conn, r);
}

/* One access-handler call for POST on the AS4 path (http_int.h). */
int
http_post(struct MHD_Connection *conn, struct http_req *r, const char *url,
    const char *data, size_t *data_size, int first)
{
	int rc = 0;

	if (first)
		rc = http_post_begin(conn, r);
	else if (*data_size > 0)
		rc = http_post_chunk(conn, r, data, *data_size);
	else if (!r->refused)
		rc = http_post_end(conn, r, url);
	*data_size = 0;
	return rc;
}

/* Whether to read a refused request's body before answering (http_int.h). */
int
http_body_to_discard(struct MHD_Connection *conn, const struct http_req *r)
{
	unsigned long long n = 0;

	switch (http_post_length(conn, &n)) {
	case 1: return n > 0 && n <= r->body.limit;
	case 0:
		return MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		    MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
	default: return 0;
	}
}

/* Drop a chunk of a refused request's body, up to maxBodyBytes. */
int
http_discard(struct http_req *r, size_t len)
{
	r->discarded += len;
	return r->discarded > r->body.limit ? -1 : 0;
}
