"""The gateway follows the primary (issue 15 item 2) without an HA manager:
two private PostgreSQL servers A and B behind one multi-host DSN
(target_session_attrs=read-write).  The gateway's connections are on A; A
then turns read-only on the fly (ALTER SYSTEM default_transaction_read_only
+ reload: what a demoted primary looks like to a session that survives).
The next push fails on A with SQLSTATE 25006, which must drop the connection
so the retry on a fresh one lands on B (the writable host): a Receipt, the
message stored on B and not on A.  Before the fix the open connection stayed
on A and every push got 503 for as long as A lived.

PostgreSQL only: a DSN with several hosts is libpq's.
"""
import pytest

from conftest import Gateway, PgServer, Store, _pg_bin, run_as4gw
import as4msg


@pytest.fixture
def two_servers(pg_server):
    b = PgServer()
    try:
        yield pg_server, b.init().start()
    finally:
        b.remove()


def push(gw, mid):
    ct, body = as4msg.user_message(mid)
    return gw.post(ct, body)


def test_primary_turning_read_only_is_left_for_the_writable_host(two_servers, pki,
                                                                     tmp_path):
    a, b = two_servers
    assert _pg_bin() is not None
    dsn = (f'postgresql://{a.user}@127.0.0.1:{a.port},127.0.0.1:{b.port}/postgres'
           f'?target_session_attrs=read-write')
    gw = Gateway(tmp_path, pki, dsn, threads=1)
    # B gets the schema too (the gateway migrates the host it reaches: A)
    r = run_as4gw('migrate', '-c', gw.config, '--db', b.dsn)
    assert r.returncode == 0, r.stderr
    gw.start()
    try:
        ans = push(gw, 'before@follow')
        assert ans.status == 200 and ans.is_receipt
        sa, sb = Store('postgresql', a.dsn), Store('postgresql', b.dsn)
        assert sa.counts('before@follow') == (1, 1, 1)
        # A stops taking writes; the gateway's open session sees it at its
        # next statement
        a._run(f'{a.bin}/psql', '-XAtq', '-h', '127.0.0.1', '-p', str(a.port), '-U',
               a.user, '-d', 'postgres', '-c',
               'ALTER SYSTEM SET default_transaction_read_only = on')
        a._run(f'{a.bin}/psql', '-XAtq', '-h', '127.0.0.1', '-p', str(a.port), '-U',
               a.user, '-d', 'postgres', '-c', 'SELECT pg_reload_conf()')
        ans = push(gw, 'after@follow')
        assert ans.status == 200 and ans.is_receipt, (ans.status, ans.body[:300])
        assert sb.counts('after@follow') == (1, 1, 1)
        assert sa.counts('after@follow') == (0, 0, 0)
        assert sb.query('SELECT receipt FROM inbox WHERE message_id = ?',
                        'after@follow')[0][0] == ans.body
        assert gw.get('/readyz').status == 200
    finally:
        gw.stop()
