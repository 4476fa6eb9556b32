"""Database faults (issue 4 item 2; NEGATIVE-CASES 62): PostgreSQL stopped
under a load of concurrent pushes, PostgreSQL unreachable at start, SQLite
locked by another process.  The promise: answers during an outage are 503 with
Retry-After, nothing is half-stored, /readyz says not ready, and the gateway
recovers by itself when the database returns; an SQLite lock is waited out
(up to STORE_SQLITE_BUSY_MS, src/store/store.h) and only then answered 503.

test_server.py already covers sequential requests during a PostgreSQL outage
(test_postgresql_outage_*) and restarts that no request noticed; this file adds
concurrent load while the server goes away (fast and immediate shutdown),
start-up without the server, and SQLite lock contention."""
import hashlib
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from as4msg import Answer, user_message
from conftest import BIN, Gateway, free_port, new_id, run_as4gw, write_config

STORE_SQLITE_BUSY_S = 10    # src/store/store.h STORE_SQLITE_BUSY_MS


class Push:
    """One POST and its answer (or the connection error), with times."""

    def __init__(self, mid, ct, body):
        self.mid, self.ct, self.body = mid, ct, body
        self.t0 = self.t1 = None
        self.ans = None
        self.error = None

    def send(self, gw, timeout=60):
        self.t0 = time.monotonic()
        try:
            self.ans = gw.request('POST', '/as4', self.body, {'Content-Type': self.ct},
                                  timeout)
        except (OSError, http.client.HTTPException) as e:
            self.error = e
        self.t1 = time.monotonic()
        return self

    @property
    def receipt(self):
        a = self.ans
        return a is not None and a.status == 200 and a.is_receipt and a.ref_to == self.mid

    @property
    def unavailable(self):
        """503 with a positive Retry-After and no Receipt (README "Answers")."""
        a = self.ans
        return (a is not None and a.status == 503 and not a.is_receipt and
                a.headers.get('Retry-After', '').isdigit() and
                int(a.headers['Retry-After']) > 0)

    def __repr__(self):
        return f'<Push {self.mid} {self.ans or self.error!r}>'


def new_push():
    mid = new_id()
    return Push(mid, *user_message(mid, payload=f'<Invoice>{mid}</Invoice>'.encode()))


class Load:
    """Client threads pushing new messages, pause seconds apart, until stopped."""

    def __init__(self, gw, clients=6, pause=0.05):
        self.pause = pause
        self.gw, self.pushes = gw, []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._client) for _ in range(clients)]

    def _client(self):
        while not self.stop.is_set():
            p = new_push().send(self.gw)
            with self.lock:
                self.pushes.append(p)
            time.sleep(self.pause)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()

    def receipts(self):
        with self.lock:
            return sum(p.receipt for p in self.pushes)

    def wait_receipts(self, n, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if sum(p.receipt for p in self.pushes) >= n:
                    return
            time.sleep(0.05)
        pytest.fail(f'fewer than {n} Receipts in {timeout}s: {self.pushes[-5:]}')


def stored(gw, mid):
    """(inbox, payload, delivery) row counts and the stored receipt."""
    rows = gw.store.query('SELECT receipt FROM inbox WHERE message_id = ?', mid)
    return gw.store.counts(mid), bytes(rows[0][0]) if rows else None


def wait_ready(gw, timeout=15):
    """Poll /readyz until 200; then it must stay 200 (every worker)."""
    deadline = time.monotonic() + timeout
    while gw.get('/readyz').status != 200:
        assert time.monotonic() < deadline, 'gateway not ready again after PostgreSQL returned'
        time.sleep(0.1)
    assert [gw.get('/readyz').status for _ in range(8)] == [200] * 8


# ---- PostgreSQL stopped under load -------------------------------------------------

@pytest.mark.parametrize('mode', ['fast', 'immediate'])
def test_postgresql_stopped_under_load(pg_server, tmp_path, pki, mode):
    """Six clients push new messages (each 50 ms apart) while PostgreSQL is stopped
    (pg_ctl -m fast: sessions terminated; -m immediate: the postmaster quits
    without a checkpoint, as in a crash) and started again.  Every answer is a
    Receipt or 503 + Retry-After (the gateway itself never fails), every push
    made while the server is down is 503, /readyz is 503 then 200 again, and
    no push begun after the server is back gets a 503: no restart needed."""
    gw = Gateway(tmp_path, pki, pg_server.dsn, threads=4).start()
    try:
        with Load(gw) as load:
            load.wait_receipts(20)
            assert pg_server.stop(mode) == 0
            t_down = time.monotonic()
            time.sleep(1.0)
            ready_down = [gw.get('/readyz') for _ in range(6)]
            t_up = time.monotonic()
            pg_server.start()
            t_back = time.monotonic()
            load.wait_receipts(load.receipts() + 30)
        wait_ready(gw)
        pushes = load.pushes
        assert all(a.status == 503 and int(a.headers.get('Retry-After', '0')) > 0
                   for a in ready_down), ready_down
        odd = [p for p in pushes if not (p.receipt or p.unavailable)]
        assert odd == [], f'answers neither Receipt nor 503 + Retry-After: {odd[:5]}'
        down = [p for p in pushes if p.t0 >= t_down and p.t1 <= t_up]
        assert down and all(p.unavailable for p in down), down[:5]
        late = [p for p in pushes if p.t0 >= t_back and not p.receipt]
        assert late == [], f'503 after PostgreSQL was back: {late[:5]}'
        n503, kept = _check_nothing_half_stored(gw, pushes)
        print(f'{mode}: {len(pushes)} pushes, {n503} answered 503 ({kept} of them '
              f'stored all the same, their resends got the stored Receipt)')
    finally:
        assert gw.stop() == 0


def _rows(gw):
    """{message_id: [inbox, payload, delivery] row counts} and {message_id:
    stored receipt}, read in three queries."""
    counts = {}
    for i, t in enumerate(('inbox', 'payload', 'delivery')):
        for mid, n in gw.store.query(f'SELECT message_id, count(*) FROM {t} GROUP BY message_id'):
            counts.setdefault(mid, [0, 0, 0])[i] = n
    receipts = {mid: bytes(r) for mid, r in gw.store.query('SELECT message_id, receipt FROM inbox')}
    return {m: tuple(c) for m, c in counts.items()}, receipts


def _check_nothing_half_stored(gw, pushes):
    """Every Receipt is stored with its bytes; every 503'd message is absent or
    completely stored, and a resend gets the Receipt (the stored one if it was
    there): one complete row set per message, no row without its inbox row."""
    counts, receipts = _rows(gw)
    assert set(counts) == set(receipts), 'payload or delivery rows without their inbox row'
    assert set(counts) <= {p.mid for p in pushes}
    again = []
    for p in pushes:
        assert counts.get(p.mid, (0, 0, 0)) in ((0, 0, 0), (1, 1, 1)), (p, counts[p.mid])
        if p.receipt:
            assert receipts.get(p.mid) == p.ans.body, f'{p}: Receipt not stored as sent'
        else:
            again.append(Push(p.mid, p.ct, p.body).send(gw))
    stored_503 = [a for a in again if a.mid in receipts]
    for a in again:
        assert a.receipt, a
        if a.mid in receipts:
            assert a.ans.body == receipts[a.mid], f'{a.mid}: resend got another Receipt'
    counts, receipts = _rows(gw)
    assert counts == {p.mid: (1, 1, 1) for p in pushes}
    assert all(receipts[a.mid] == a.ans.body for a in again)
    return len(again), len(stored_503)


# ---- PostgreSQL unreachable at start -------------------------------------------

@pytest.mark.parametrize('where', ['stopped', 'wrong-port'])
def test_serve_without_postgresql_refuses_then_starts_when_it_is_back(pg_server, tmp_path,
                                                                       pki, where):
    """serve migrates before it listens, so without the database (server
    stopped, or nothing at that port) it refuses to start: exit 1 and one line
    on stderr, promptly (README "Command line"; test_cli.py checks the line for
    an unused port).  With the server back, a gateway on it starts and works."""
    port = free_port()
    dsn = pg_server.dsn
    if where == 'stopped':
        assert pg_server.stop('fast') == 0
    else:
        dsn = dsn.replace(f':{pg_server.port}/', f':{free_port()}/')
    cfg = write_config(tmp_path / 'pg.xml', pki, listen=f'127.0.0.1:{port}', store=dsn)
    t0 = time.monotonic()
    p = run_as4gw('serve', '-c', cfg, timeout=30)
    assert time.monotonic() - t0 < 10
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, p.stderr    # one JSON line (issue 11 item 12)
    assert json.loads(lines[0])['msg'].startswith('store: '), p.stderr
    assert p.stdout == ''
    if where == 'stopped':
        pg_server.start()
    gw = Gateway(tmp_path, pki, pg_server.dsn).start()
    try:
        push = new_push().send(gw)
        assert push.receipt, push
        assert stored(gw, push.mid) == ((1, 1, 1), push.ans.body)
    finally:
        assert gw.stop() == 0


# ---- SQLite locked by another process --------------------------------------------

HOLDER = '''
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
con.execute('BEGIN IMMEDIATE')
print('locked', flush=True)
time.sleep(float(sys.argv[2]))
t = time.monotonic()
con.execute('ROLLBACK')
print('released', t, time.monotonic(), flush=True)
'''


class Holder:
    """Another process holding SQLite's write lock (BEGIN IMMEDIATE) for
    seconds; started, it has the lock.  wait() reads when it let go: from
    t_release (before its ROLLBACK) to t_released (after), on the same
    CLOCK_MONOTONIC as time.monotonic() here."""

    def __init__(self, path, seconds):
        self.proc = subprocess.Popen([sys.executable, '-c', HOLDER, path, str(seconds)],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        assert line == 'locked\n', line
        self.t_locked = time.monotonic()
        self.t_release = self.t_released = None

    def wait(self):
        word, t0, t1 = self.proc.stdout.readline().split()
        assert word == 'released', word
        self.t_release, self.t_released = float(t0), float(t1)
        assert self.proc.wait(timeout=30) == 0


def _push_concurrently(gw, n):
    pushes = [new_push() for _ in range(n)]
    ts = [threading.Thread(target=p.send, args=(gw,)) for p in pushes]
    for t in ts:
        t.start()
    return pushes, ts


@pytest.fixture
def sqlite_gw(tmp_path, pki):
    gw = Gateway(tmp_path, pki, f'sqlite:{tmp_path}/busy.db', threads=4).start()
    warm = new_push().send(gw)
    assert warm.receipt, warm
    yield gw
    assert gw.stop() == 0


def test_sqlite_lock_held_briefly_is_waited_out(sqlite_gw):
    """Pushes arriving while another process holds the write lock for 2 s wait
    for it and get their Receipts: nothing reaches the partner."""
    gw = sqlite_gw
    holder = Holder(gw.dsn[len('sqlite:'):], 2)
    pushes, ts = _push_concurrently(gw, 6)
    time.sleep(0.3)
    late = new_push().send(gw)    # one more, sequential, while still held
    holder.wait()
    for t in ts:
        t.join()
    pushes.append(late)
    assert all(p.receipt for p in pushes), [p for p in pushes if not p.receipt]
    # they really waited for the lock (answered only once it was released)
    assert all(p.t1 >= holder.t_release for p in pushes), \
        [(p.t0 - holder.t_locked, p.t1 - holder.t_locked) for p in pushes]
    for p in pushes:
        assert stored(gw, p.mid) == ((1, 1, 1), p.ans.body)


def _raw_post(sock, port, push):
    """POST push on an already open connection; the Answer."""
    head = (f'POST /as4 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {push.ct}\r\n'
            f'Content-Length: {len(push.body)}\r\nConnection: close\r\n\r\n').encode()
    push.t0 = time.monotonic()
    try:
        sock.sendall(head + push.body)
        r = http.client.HTTPResponse(sock)
        r.begin()
        push.ans = Answer(r.status, dict(r.getheaders()), r.read())
    except (OSError, http.client.HTTPException) as e:
        push.error = e
    push.t1 = time.monotonic()


def test_sqlite_lock_held_past_busy_timeout_is_503_then_recovers(tmp_path, pki):
    """Held longer than the busy timeout (12 s > 10 s): the push waiting for
    the lock gets 503 + Retry-After after the timeout and nothing of it is
    stored; once the lock is released its resend gets the Receipt.
    One worker thread, and a second connection that worker accepted before the
    first push arrived: its request sits unread while the worker waits for
    the lock; it must still be answered (a Receipt once the lock is gone, or
    503), not cut."""
    gw = Gateway(tmp_path, pki, f'sqlite:{tmp_path}/busy.db', threads=1).start()
    try:
        warm = new_push().send(gw)
        assert warm.receipt, warm
        hold = STORE_SQLITE_BUSY_S + 2
        holder = Holder(gw.dsn[len('sqlite:'):], hold)
        queued = new_push()
        with socket.create_connection(('127.0.0.1', gw.port), timeout=60) as sock:
            time.sleep(1.5)                  # accepted by the idle worker
            first = new_push()
            t = threading.Thread(target=first.send, args=(gw,))
            t.start()
            time.sleep(0.3)                  # the worker is in first's busy wait
            _raw_post(sock, gw.port, queued)
            t.join()
        holder.wait()
        when = [(p.ans.status if p.ans else p.error, round(p.t0 - holder.t_locked, 2),
                 round(p.t1 - holder.t_locked, 2)) for p in (first, queued)]
        assert first.unavailable, when
        # it waited the busy timeout (no sooner; bounded), while the lock was held
        assert STORE_SQLITE_BUSY_S - 0.5 <= first.t1 - first.t0 <= STORE_SQLITE_BUSY_S + 5, when
        assert first.t1 <= holder.t_released + 1, when
        assert stored(gw, first.mid) == ((0, 0, 0), None)
        assert gw.get('/healthz').status == 200
        again = Push(first.mid, first.ct, first.body).send(gw)
        assert again.receipt, again
        assert stored(gw, first.mid) == ((1, 1, 1), again.ans.body)
        # the worker was busy, not the client: its request must not be cut by the
        # header deadline (src/http/http_guard.c: unread bytes are our delay)
        assert queued.receipt or queued.unavailable, when
        if queued.receipt:
            assert queued.t1 >= holder.t_release, f'a Receipt while the lock was held: {when}'
            assert stored(gw, queued.mid) == ((1, 1, 1), queued.ans.body)
        else:
            assert stored(gw, queued.mid) == ((0, 0, 0), None)
    finally:
        assert gw.stop() == 0


# ---- deliver --follow riding out store outages (issue 11 item 1) -------------------

class Deliverer:
    """`as4gw deliver --follow --to-dir OUT` in the background, its stdout and
    stderr in files."""

    def __init__(self, gw, out, *extra):
        self.out, self.dir = out, out.parent
        self.stdout = open(self.dir / 'deliver.out', 'w+')
        self.stderr = open(self.dir / 'deliver.err', 'w+')
        self.proc = subprocess.Popen([BIN, 'deliver', '-c', gw.config, '--to-dir', out,
                                      '--follow', *extra],
                                     stdout=self.stdout, stderr=self.stderr)

    def stop(self):
        """SIGTERM, then (exit status, stdout lines, stderr JSON lines)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self.stdout.seek(0)
        self.stderr.seek(0)
        out, err = self.stdout.read().splitlines(), self.stderr.read().splitlines()
        self.stdout.close()
        self.stderr.close()
        return rc, out, [json.loads(x) for x in err]

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _wait_all_done(gw, timeout=60):
    """Until every delivery row is 'done' (the store answering): their ids."""
    deadline = time.monotonic() + timeout
    while True:
        states = gw.store.query('SELECT message_id, state FROM delivery')
        if states and all(s == 'done' for _, s in states):
            return {m for m, _ in states}
        assert time.monotonic() < deadline, \
            f'not all delivered in {timeout}s: {[x for x in states if x[1] != "done"][:5]}'
        time.sleep(0.1)


def _check_once(gw, d, rc, lines, ids):
    """Every stored message delivered exactly once: one 'delivered' line each,
    one directory each and nothing else, attempts 1."""
    assert rc == 0, (lines[-5:])
    got = [ln.split()[1] for ln in lines if ln.startswith('delivered ') and '->' in ln]
    assert sorted(got) == sorted(ids), (len(got), len(ids))
    assert sorted(os.listdir(d.out)) == sorted(
        hashlib.sha256(b'urn:as4gw:dev:sender\0' + m.encode()).hexdigest() for m in ids)
    attempts = gw.store.query('SELECT attempts, count(*) FROM delivery GROUP BY attempts')
    assert [tuple(a) for a in attempts] == [(1, len(ids))], attempts


def _outages(log):
    down = [x for x in log if x.get('event') == 'store-outage']
    up = [x for x in log if x.get('event') == 'store-recovered']
    return down, up


def test_deliver_follow_rides_out_a_postgresql_restart(pg_server, tmp_path, pki):
    """`deliver --follow` exited ("could not reconnect to postgresql: ... the
    database system is shutting down", status 1) when PostgreSQL restarted.
    Now it backs off, reconnects, LISTENs again and keeps going: every stored
    message delivered exactly once, one log line when the outage starts and one
    when it is over (not one per retry), and a message pushed afterwards is
    delivered at once (the NOTIFY wake-up works again)."""
    gw = Gateway(tmp_path, pki, pg_server.dsn, threads=4).start()
    d = Deliverer(gw, tmp_path / 'out')
    try:
        with Load(gw, clients=3, pause=0.1) as load:
            load.wait_receipts(15)
            assert pg_server.stop('fast') == 0   # pg_ctl restart -m fast
            time.sleep(1.5)
            pg_server.start()
            wait_ready(gw)
            load.wait_receipts(load.receipts() + 15)
        assert d.proc.poll() is None, 'deliver --follow exited during the restart'
        ids = _wait_all_done(gw)
        time.sleep(1.0)
        late = new_push().send(gw)
        assert late.receipt, late
        t0 = time.monotonic()
        _wait_all_done(gw)
        waited = time.monotonic() - t0
        rc, lines, log = d.stop()
        _check_once(gw, d, rc, lines, ids | {late.mid})
        assert waited < 3, f'delivered {waited:.1f}s after the push: no NOTIFY wake-up'
        down, up = _outages(log)
        assert len(down) == len(up) >= 1, log
        assert len(down) <= 3, f'one line per outage, not per retry: {down}'
        assert all(x['level'] == 'warn' and x['error'] for x in down), down
        assert log[0]['event'] == 'deliver-start', log[0]
    finally:
        d.kill()
        assert gw.stop() == 0


def test_deliver_follow_rides_out_sqlite_commit_failures(tmp_path, pki):
    """SQLite on a full disk: a claim that cannot commit, and a release of a
    message already handed over that cannot commit ("could not release
    delivery: database or disk is full", then the row waited --stale-seconds).
    Now deliver keeps running, retries the release until it commits, and every
    message is delivered exactly once, within seconds of the disk having room."""
    gw = Gateway(tmp_path, pki, f'sqlite:{tmp_path}/full.db', threads=4).start()
    path = gw.dsn[len('sqlite:'):]
    d = Deliverer(gw, tmp_path / 'out')

    def sql(text):
        con = sqlite3.connect(path, timeout=30)
        con.execute(text)
        con.commit()
        con.close()

    try:
        ids = set()
        for when in ('', "WHEN NEW.state = 'done'"):   # every UPDATE; the release only
            sql(f"CREATE TRIGGER full BEFORE UPDATE ON delivery {when} BEGIN "
                "SELECT RAISE(ABORT, 'database or disk is full'); END")
            pushes = [new_push().send(gw) for _ in range(4)]
            assert all(p.receipt for p in pushes), pushes
            ids |= {p.mid for p in pushes}
            time.sleep(2.5)
            states = dict(gw.store.query('SELECT message_id, state FROM delivery'))
            assert all(states[p.mid] != 'done' for p in pushes), states
            if when:   # handed over, its release failing: claimed, in its directory
                assert sorted(states[p.mid] for p in pushes).count('claimed') == 1, states
            assert d.proc.poll() is None, 'deliver --follow exited on a commit failure'
            sql('DROP TRIGGER full')
            t0 = time.monotonic()
            _wait_all_done(gw, timeout=30)
            assert time.monotonic() - t0 < 10, 'the row waited for --stale-seconds'
        rc, lines, log = d.stop()
        _check_once(gw, d, rc, lines, ids)
        down, up = _outages(log)
        assert len(down) == len(up) == 2, log
        assert [x['what'] for x in down] == ['claim', 'release'], down
        assert 'database or disk is full' in down[1]['error'], down
    finally:
        d.kill()
        assert gw.stop() == 0
