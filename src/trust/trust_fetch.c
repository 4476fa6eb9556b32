/*
 * trust_fetch.c — one bounded http:// exchange for revocation data (RFC 6960
 * Appendix A.1: OCSP over HTTP; RFC 5280 4.2.1.13: CRLs by http URI) on
 * OpenSSL's HTTP client.  The connect is ours (non-blocking, its own
 * timeout); the request and the response head go through
 * OSSL_HTTP_REQ_CTX with the exchange's timeout; the body is read to EOF
 * with a byte cap and the same deadline.  https is not used: OCSP responses
 * and CRLs are signed, and a TLS fetch to check a TLS chain would recurse.
 */
#include "trust_revoc.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/http.h>

#include "../util/clock.h"

#define TRUST_FETCH_LINE 4096   /* longest response header line */

/* The parts of an http:// URL (OpenSSL's parser, the one owner). */
struct trust_fetch_url {
	char *host, *port, *path, *query;
};

static void
trust_fetch_url_free(struct trust_fetch_url *u)
{
	OPENSSL_free(u->host);
	OPENSSL_free(u->port);
	OPENSSL_free(u->path);
	OPENSSL_free(u->query);
}

/* Split url; http only.  0 / -1 with err. */
static int
trust_fetch_url(const char *url, struct trust_fetch_url *u, struct err *err)
{
	char *user = NULL, *frag = NULL;
	int ssl = 0, rc = -1;

	memset(u, 0, sizeof(*u));
	if (OSSL_HTTP_parse_url(url, &ssl, &user, &u->host, &u->port, NULL,
	    &u->path, &u->query, &frag) != 1)
		err_set(err, ERR_IO, NULL, "unusable URL \"%.100s\"", url);
	else if (ssl)
		err_set(err, ERR_IO, NULL, "not an http URL \"%.100s\"", url);
	else
		rc = 0;
	OPENSSL_free(user);
	OPENSSL_free(frag);
	ERR_clear_error();
	return rc;
}

/* Wait for a non-blocking connect; 0 connected, -1 failed or timed out. */
static int
trust_fetch_wait_connect(int fd, unsigned timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int soerr = 0, n;
	socklen_t len = sizeof(soerr);

	do
		n = poll(&p, 1, (int)timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		return -1;
	return soerr == 0 ? 0 : -1;
}

/* A connected non-blocking socket to host:port within the connect timeout;
 * fd, or -1 with err. */
static int
trust_fetch_connect(const struct trust_fetch_url *u, unsigned timeout_ms,
    struct err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	int fd = -1, g;

	if ((g = getaddrinfo(u->host, u->port, &hints, &res)) != 0) {
		err_set(err, ERR_IO, NULL, "could not resolve \"%s\": %s",
		    u->host, gai_strerror(g));
		return -1;
	}
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if ((connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
		    (errno == EINPROGRESS &&
		    trust_fetch_wait_connect(fd, timeout_ms) == 0)))
			break;
		(void)close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		err_set(err, ERR_IO, NULL, "could not connect to %s:%s",
		    u->host, u->port);
	return fd;
}

/* The request line, Host and body; 0 / -1. */
static int
trust_fetch_request(OSSL_HTTP_REQ_CTX *rctx, const struct trust_fetch_url *u,
    const struct trust_fetch_req *q, int timeout_s)
{
	char path[2048];
	int n;

	n = snprintf(path, sizeof(path), "%s%s%s", u->path,
	    u->query != NULL ? "?" : "", u->query != NULL ? u->query : "");
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	if (OSSL_HTTP_REQ_CTX_set_request_line(rctx, q->req != NULL, NULL, NULL,
	    path) != 1 ||
	    OSSL_HTTP_REQ_CTX_add1_header(rctx, "Host", u->host) != 1 ||
	    OSSL_HTTP_REQ_CTX_set_expected(rctx, NULL, 0, timeout_s, 0) != 1)
		return -1;
	if (q->req != NULL && OSSL_HTTP_REQ_CTX_set1_req(rctx, q->content_type,
	    q->it, q->req) != 1)
		return -1;
	return 0;
}

/* Read the body from rbio to EOF: at most max bytes, by max_time. */
static int
trust_fetch_body(BIO *rbio, size_t max, time_t max_time, unsigned char **ret,
    size_t *ret_len, struct err *err)
{
	unsigned char *b = malloc(max + 1);
	size_t len = 0;
	int n;

	if (b == NULL)
		return err_set(err, ERR_INTERNAL, NULL, "out of memory");
	for (;;) {
		n = BIO_read(rbio, b + len, (int)(max + 1 - len));
		if (n > 0) {
			len += (size_t)n;
			if (len > max) {
				free(b);
				return err_set(err, ERR_IO, NULL, "response "
				    "larger than %zu bytes", max);
			}
			continue;
		}
		if (!BIO_should_retry(rbio))
			break;
		if (BIO_wait(rbio, max_time, 100) <= 0) {
			free(b);
			return err_set(err, ERR_IO, NULL, "response timed out");
		}
	}
	*ret = b;
	*ret_len = len;
	return 0;
}

int
trust_fetch(const struct trust_fetch_req *q,
    const struct trust_revoc_limits *lim, unsigned char **ret,
    size_t *ret_len, struct err *err)
{
	struct trust_fetch_url u;
	OSSL_HTTP_REQ_CTX *rctx = NULL;
	BIO *bio = NULL, *rbio;
	time_t max_time = time(NULL) + (time_t)lim->timeout_s;
	int fd, rc = -1;

	if (trust_fetch_url(q->url, &u, err) == -1)
		return -1;
	if ((fd = trust_fetch_connect(&u, lim->connect_timeout_ms, err)) < 0)
		goto out;
	if ((bio = BIO_new_socket(fd, BIO_CLOSE)) == NULL) {
		(void)close(fd);
		err_set(err, ERR_INTERNAL, NULL, "out of memory");
		goto out;
	}
	(void)BIO_set_nbio(bio, 1);
	if ((rctx = OSSL_HTTP_REQ_CTX_new(bio, bio, TRUST_FETCH_LINE)) == NULL ||
	    trust_fetch_request(rctx, &u, q, (int)lim->timeout_s) == -1) {
		err_set(err, ERR_INTERNAL, NULL, "could not build request");
		goto out;
	}
	OSSL_HTTP_REQ_CTX_set_max_response_length(rctx, q->max_bytes);
	if ((rbio = OSSL_HTTP_REQ_CTX_exchange(rctx)) == NULL) {
		err_set(err, ERR_IO, NULL, "no usable answer from %s:%s%s",
		    u.host, u.port, time(NULL) >= max_time ? " (timeout)" : "");
		goto out;
	}
	rc = trust_fetch_body(rbio, q->max_bytes, max_time, ret, ret_len, err);
out:
	OSSL_HTTP_REQ_CTX_free(rctx);
	BIO_free_all(bio);
	trust_fetch_url_free(&u);
	ERR_clear_error();
	return rc;
}
