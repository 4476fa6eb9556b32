/*
 * http — the libmicrohttpd server: routing (POST <path>, GET /healthz,
 * GET /readyz), limits, TLS, one store connection per worker thread, and
 * graceful drain on shutdown.  The AS4 work itself is gateway_receive().
 */
#ifndef AS4GW_HTTP_H
#define AS4GW_HTTP_H

#include "../conf/conf.h"
#include "../gateway/gateway.h"
#include "../util/err.h"

struct http_server;

/* Start listening on conf's host:port (HTTPS when tls_cert/tls_key are set). */
int http_start(const struct conf *conf, const struct gateway *gw,
    struct http_server **ret, struct err *err);

/* The port actually bound (useful with port 0). */
int http_port(const struct http_server *srv);

/*
 * Stop accepting, wait up to drain_ms for in-flight requests to finish,
 * stop the daemon and free everything.  Accepts NULL.
 */
void http_stop(struct http_server *srv, unsigned drain_ms);

#endif
