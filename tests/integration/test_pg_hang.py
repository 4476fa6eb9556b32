"""A hung PostgreSQL server (issue 15): its processes stopped (SIGSTOP of the
postmaster and its backends — a frozen host, or a network cut where nothing
answers).  TCP keepalives do not help (the kernel still answers them) and a
request already sent is acknowledged, so before <storeTimeoutSeconds> a
worker waiting for the answer waited until the server died.  Now every wait
for the server has that deadline: pushes in flight get 503 + Retry-After
while the server is still stopped (not a hang), /readyz says not ready, nothing half-stored;
once the server runs again the retries get their Receipts (the stored one
if the stopped server committed the first try after all), one row each.
And a payload streamed by COPY for longer than the deadline is not cut
(the deadline is per wait for progress, not per statement).

PostgreSQL only (SQLite has no server to hang; its lock wait is
STORE_SQLITE_BUSY_MS).
"""
import os
import signal
import threading
import time

from conftest import Gateway, Store
import as4msg
import halib

TIMEOUT = 2   # storeTimeoutSeconds of the gateway under test


def server_pids(pg):
    """The postmaster and every process under it."""
    with open(os.path.join(pg.data, 'postmaster.pid')) as f:
        return halib.process_tree(int(f.readline()))


def push(gw, mid, payload=b'hang-payload'):
    ct, body = as4msg.user_message(mid, payload=payload)
    t0 = time.time()
    ans = gw.request('POST', '/as4', body, {'Content-Type': ct}, timeout=60)
    return ans, time.time() - t0


def test_hung_server_gets_503_then_receipts(pg_server, pki, tmp_path):
    pg = pg_server
    gw = Gateway(tmp_path, pki, pg.dsn, threads=3,
                 extra_gateway=f'<storeTimeoutSeconds>{TIMEOUT}</storeTimeoutSeconds>')
    gw.start()
    store = Store('postgresql', pg.dsn)
    pids = []
    try:
        ans, _ = push(gw, 'before@hang')
        assert ans.status == 200 and ans.is_receipt
        # a 24 MiB payload: streamed with COPY (chunked) for longer than
        # the 2 s deadline on this machine or not, it must not be cut
        big = os.urandom(1 << 20) * 24
        ans, took = push(gw, 'big@hang', big)
        assert ans.status == 200 and ans.is_receipt, (ans.status, ans.body[:300])
        assert store.counts('big@hang') == (1, 1, 1)

        pids = server_pids(pg)
        halib.signal_pids(pids, signal.SIGSTOP)
        res = {}

        def one(mid):
            res[mid] = push(gw, mid)
        mids = [f'hung-{i}@hang' for i in range(3)]
        ts = [threading.Thread(target=one, args=(m,)) for m in mids]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=90)
        for m in mids:
            # answered while the server is still stopped (the SIGCONT comes
            # below): the deadline ended the wait, never a hang (which the
            # client's 60 s timeout would turn into an error here); no
            # wall-clock bound, the machine may be loaded
            ans, _ = res[m]
            assert ans.status == 503, (m, ans.status, ans.body[:300])
            assert ans.headers.get('Retry-After'), ans.headers
        assert gw.get('/readyz').status == 503
        halib.signal_pids(pids, signal.SIGCONT)
        pids = []
        for m in mids:
            # a backend that had the call may have committed it after the
            # SIGCONT (its answer lost): all of the message or nothing
            assert store.counts(m) in ((0, 0, 0), (1, 1, 1)), m
        for m in mids + ['after@hang']:
            for _ in range(10):
                ans, _ = push(gw, m)
                if ans.status != 503:
                    break
                time.sleep(0.5)
            assert ans.status == 200 and ans.is_receipt, (m, ans.status, ans.body[:300])
            assert store.counts(m) == (1, 1, 1)
            assert store.query('SELECT receipt FROM inbox WHERE message_id = ?',
                               m)[0][0] == ans.body
        assert gw.get('/readyz').status == 200
    finally:
        halib.signal_pids(pids, signal.SIGCONT)
        gw.stop()
