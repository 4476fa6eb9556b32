/*
 * store_pg_wait — the deadline on every wait for the PostgreSQL server
 * (<storeTimeoutSeconds>, issue 15).  A server that hangs (its processes
 * stopped, its host frozen, a network cut where nothing answers) leaves a
 * blocking libpq call waiting for ever: TCP keepalives are answered by a
 * live kernel, and a request already sent is acknowledged.  So no result is
 * read before poll() on PQsocket() saw the server send something within
 * the store's timeout.  The deadline is per wait, not per statement: each
 * byte received starts it again, so a long but progressing result is not
 * cut.  Writes (a query, COPY data) are covered by libpq's
 * tcp_user_timeout (store_pg_open): the kernel gives the connection up
 * when sent data, or a zero window, stays unacknowledged that long — a
 * COPY the server keeps reading, however slowly, goes on.
 *
 * On expiry the socket is shut down (the blocking libpq call that follows
 * fails at once with a lost connection, and nothing on it waits again) and
 * the connection marked stale: the next use reconnects (store_pg_ensure),
 * a statement is not retried on the fresh one (the caller answers 503),
 * and a COMMIT that timed out is of unknown outcome, as when the
 * connection breaks: the partner's retry finds the stored row (the same
 * Receipt) or nothing.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <libpq-fe.h>

#include "store_pg_int.h"

/* The server said nothing for the store's timeout: give the connection up
 * (store_pg_int.h). */
void
store_pg_expire(struct store_pg *s)
{
	int fd = PQsocket(s->conn);

	if (fd >= 0)
		(void)shutdown(fd, SHUT_RDWR);
	s->stale = 1;
	s->timed_out = 1;
}

/* Wait until libpq can hand out a result without blocking (store_pg_int.h). */
int
store_pg_await(struct store_pg *s)
{
	struct pollfd pfd;
	int n;

	while (!s->timed_out && PQstatus(s->conn) == CONNECTION_OK &&
	    PQisBusy(s->conn)) {
		pfd.fd = PQsocket(s->conn);
		pfd.events = POLLIN;
		pfd.revents = 0;
		n = poll(&pfd, 1, s->timeout_ms);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0) {
			store_pg_expire(s);
			return -1;
		}
		if (n == -1 || PQconsumeInput(s->conn) == 0)
			return 0;  /* PQgetResult reports the failure */
	}
	return s->timed_out ? -1 : 0;
}

/* PQgetResult after store_pg_await (store_pg_int.h). */
PGresult *
store_pg_result(struct store_pg *s)
{
	(void)store_pg_await(s);
	return PQgetResult(s->conn);
}

/*
 * What PQexec returns, for a command sent with PQsend* (sent: its return
 * value): the last result, stopping at a COPY; NULL when nothing was sent
 * (PQerrorMessage says why).  A connection still busy with an earlier
 * command cannot be used again: stale.
 */
PGresult *
store_pg_finish(struct store_pg *s, int sent)
{
	PGresult *last = NULL, *res;
	ExecStatusType st;

	if (!sent) {
		if (PQtransactionStatus(s->conn) == PQTRANS_ACTIVE)
			s->stale = 1;
		return NULL;
	}
	while ((res = store_pg_result(s)) != NULL) {
		st = PQresultStatus(res);
		/* keep the first error, as PQexec does */
		if (last != NULL && PQresultStatus(last) == PGRES_FATAL_ERROR)
			PQclear(res);
		else {
			PQclear(last);
			last = res;
		}
		if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT ||
		    st == PGRES_COPY_BOTH || PQstatus(s->conn) == CONNECTION_BAD)
			break;
	}
	return last;
}

/* PQexec with the deadline (store_pg_int.h). */
PGresult *
store_pg_query(struct store_pg *s, const char *sql)
{
	return store_pg_finish(s, PQsendQuery(s->conn, sql));
}
