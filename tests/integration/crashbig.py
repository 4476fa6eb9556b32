"""The crash harness's large-payload mode (issue 14), shared by
tests/integration/test_crash.py (a few iterations) and bench/crash --big
(many, larger payloads).  crashlib.py is the small-message harness; this
module reuses its processes (Serve), stores and fault-build check.

Per iteration ONE message with a random payload well above the spool
threshold (spoolThresholdBytes, 1 MiB here) and above the store's chunk
threshold (8 MiB), pre-built by `as4gw push --write-requests` (unsigned,
signed, or signed + encrypted + compressed, in turn) and sent from the file
with sendfile(2).  The gateway is killed with SIGKILL, in turn:

  spooling             from outside, mid-upload: part of the body sent, and
                       the gateway holds an open file in its spool directory
                       (/proc/PID/fd), i.e. the body is being spooled
  store.after-insert   the fault points of crashlib: the upload is complete,
  store.before-commit  the rows are written, not committed
  http.after-commit    COMMIT done, no answer sent
  http.mid-response    part of the answer sent

then, with the gateway dead, the store is read as the crash left it, and
after a restart without the fault the message is sent again (twice) and an
earlier acknowledged one once.  Violations (Figures.violation):
  - a payload or chunk row without its inbox row, an inbox row without its
    delivery row, or one whose stored payload bytes do not have the sent
    payload's SHA-256 (chunks concatenated in order), in any state;
  - before COMMIT (spooling, store.*): the message is stored after the kill;
    after COMMIT (http.*): it is not;
  - a file left in the spool directory, or the restarted gateway still
    holding a descriptor into it once it has answered;
  - a retry not answered with a Receipt, or with a Receipt that is not
    byte-identical to the stored one (committed before the kill: the retry
    gets it; nothing committed: the retry is accepted fresh and every later
    send gets that one).
"""
import hashlib
import http.client
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import threading
import time
import uuid

import as4msg
import crashlib

SPOOLING = 'spooling'
BIG_MODES = (SPOOLING, 'store.after-insert', 'store.before-commit', 'http.after-commit',
             'http.mid-response')
COMMITTED = ('http.after-commit', 'http.mid-response')
# PostgreSQL also stops with the chunk rows COPYed ahead of the decision
# (store_pg_early.c): no row decided, the hashes not yet waited for
PG_MODES = BIG_MODES + ('store.early-chunks',)


def modes_for(backend):
    """The kill modes of a backend."""
    return PG_MODES if backend == 'postgresql' else BIG_MODES
KINDS = ('sec', 'unsigned', 'signed')
PARTY = 'urn:as4gw:dev:sender'
ACTION = {'unsigned': 'urn:as4gw:big:Unsigned', 'signed': 'urn:as4gw:big:Signed',
          'sec': 'urn:as4gw:big:SignedEncrypted'}
MIB = 1 << 20
SPOOL_THRESHOLD = MIB
SPOOL_WAIT = 30          # seconds for the gateway to open its spool file
REQUEST_TIMEOUT = 300


def _leg(pid, action, security):
    role = crashlib.ROLE
    return f'''  <pmode id="{pid}">
    <from role="{role}initiator"><partyId>{PARTY}</partyId></from>
    <to role="{role}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{action}</action>
    {security}
  </pmode>
'''


def write_config(path, pki, dsn, listen, spool, size):
    """The gateway: three legs, limits for a size-byte payload, the spool in
    spool (issue 14's <limits> keys)."""
    signer = (f'<signer><certificate>{pki}/sender.crt</certificate></signer>'
              f'<trust><anchor>{pki}/ca.crt</anchor></trust>')
    legs = (_leg('big-unsigned', ACTION['unsigned'],
                 '<security signing="never" encryption="never"/>') +
            _leg('big-signed', ACTION['signed'],
                 f'<security signing="required">{signer}</security>') +
            _leg('big-sec', ACTION['sec'],
                 f'<security signing="required" encryption="required">{signer}</security>'))
    body = size + size // 4 + 16 * MIB
    limits = (f'<maxBodyBytes>{body}</maxBodyBytes>'
              f'<requestMemoryBytes>{max(256 * MIB, 8 * size)}</requestMemoryBytes>'
              '<requestDeadlineSeconds>600</requestDeadlineSeconds>' +
              SPOOL_LIMITS.format(spool=spool, threshold=SPOOL_THRESHOLD))
    crashlib.write_config(path, pki, dsn, listen, threads=2, limits=limits, legs=legs)


# the spool keys of <limits> (issue 14)
SPOOL_LIMITS = ('<spoolDir>{spool}</spoolDir>'
                '<spoolThresholdBytes>{threshold}</spoolThresholdBytes>')


class BigServe(crashlib.Serve):
    """crashlib.Serve with this module's configuration."""

    def __init__(self, binary, workdir, pki, dsn, spool, size, fault=None):
        crashlib.Serve.seq += 1
        self.binary, self.fault = binary, fault
        self.port = crashlib.free_port()
        self.config = os.path.join(workdir, 'as4gw-big.xml')
        write_config(self.config, pki, dsn, f'127.0.0.1:{self.port}', spool, size)
        self.log_path = os.path.join(workdir, f'serve-big-{crashlib.Serve.seq}.log')
        self.proc = None

    def spool_fds(self, spool):
        """Descriptors the process holds into the spool directory."""
        n = 0
        fd_dir = f'/proc/{self.proc.pid}/fd'
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(os.path.join(fd_dir, fd)).startswith(spool + '/'):
                        n += 1
                except OSError:
                    pass
        except OSError:
            return 0
        return n


# ---- messages --------------------------------------------------------------------

class BigMsg:
    """One large message: the request file, its payload's SHA-256, answers."""

    def __init__(self, mid, kind, path, sha, it):
        self.mid, self.kind, self.path, self.sha, self.iteration = mid, kind, path, sha, it
        self.receipt = None


def write_random(path, size, randbytes):
    """size bytes of randbytes(n) into path, 4 MiB at a time: their hex
    SHA-256 (also test_big.py's payloads)."""
    h = hashlib.sha256()
    with open(path, 'wb') as f:
        left = size
        while left:
            b = randbytes(min(left, 4 * MIB))
            h.update(b)
            f.write(b)
            left -= len(b)
    return h.hexdigest()


def build(binary, pki, workdir, kind, size, rng, it):
    """A new message with size random bytes, pre-built; the payload file is
    removed again (the request holds it)."""
    mid = f'{uuid.uuid4()}@as4gw-crash-big'
    payload = os.path.join(workdir, 'payload.bin')
    sha = write_random(payload, size, rng.randbytes)
    path = os.path.join(workdir, f'req-{it}.req')
    cmd = [binary, 'push', '--write-requests', path, '--count', '1', '--quiet',
           '--message-id', mid, '--from', PARTY, '--to', 'urn:as4gw:dev:gateway',
           '--service', 'urn:as4gw:dev:service', '--action', ACTION[kind],
           '--payload', f'{payload};mime=application/octet-stream']
    if kind != 'unsigned':
        cmd += ['--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key']
    if kind == 'sec':
        cmd += ['--encrypt', '--recipient-cert', f'{pki}/gateway.crt', '--compress']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    os.unlink(payload)
    if r.returncode != 0 or not os.path.exists(path):
        raise crashlib.HarnessError(f'as4gw push --write-requests ({kind}): {r.stderr[-1000:]}')
    return BigMsg(mid, kind, path, sha, it)


def _request(path):
    with open(path, 'rb') as f:
        ct = f.readline().decode().strip()
        n = int(f.readline())
        return ct, f.tell(), n


def post(port, path, upto=None, sent=None):
    """POST the request of path (sendfile); (status, body), or None when the
    connection failed or the answer was cut short.  upto: send only that
    many body bytes, then set the event sent and wait for the process to be
    killed (the connection then fails: None)."""
    ct, off, n = _request(path)
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=REQUEST_TIMEOUT)
    try:
        c.putrequest('POST', '/as4', skip_accept_encoding=True)
        c.putheader('Content-Type', ct)
        c.putheader('Content-Length', str(n))
        c.endheaders()
        with open(path, 'rb') as f:
            c.sock.sendfile(f, off, n if upto is None else upto)
        if upto is not None:
            sent.set()
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException):
        if sent is not None:
            sent.set()
        return None
    finally:
        c.close()


# ---- the store as it is ------------------------------------------------------------

class BigStore:
    """Reads the gateway's tables directly (never through as4gw), with no
    gateway running: payloads stored whole (payload.content) or in chunk
    rows (payload_chunk, issue 14), hashed piece by piece."""

    def __init__(self, dsn):
        self.dsn = dsn
        self.pg = not dsn.startswith('sqlite:')

    def _connect(self):
        if not self.pg:
            return sqlite3.connect(self.dsn[len('sqlite:'):], timeout=30)
        import psycopg2
        con = psycopg2.connect(self.dsn)
        con.set_session(readonly=True)
        return con

    def rows(self, sql, *args):
        con = self._connect()
        try:
            cur = con.cursor()
            cur.execute(sql.replace('?', '%s') if self.pg else sql, args)
            return cur.fetchall()
        finally:
            con.close()

    def has_chunks(self):
        q = ("SELECT count(*) FROM information_schema.tables WHERE table_name = 'payload_chunk'"
             if self.pg else
             "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'payload_chunk'")
        return self.rows(q)[0][0] == 1

    def payload_sha(self, mid):
        """[hex SHA-256 of each stored payload of mid, in part order]."""
        chunks = self.has_chunks()
        out = []
        for (part,) in self.rows('SELECT part_no FROM payload WHERE message_id = ? '
                                 'ORDER BY part_no', mid):
            h = hashlib.sha256()
            for piece in self._pieces(mid, part, chunks):
                h.update(piece)
            out.append(h.hexdigest())
        return out

    def _pieces(self, mid, part, chunks):
        """The bytes of one payload, content then its chunks, one row at a
        time (a server-side cursor on PostgreSQL)."""
        con = self._connect()
        try:
            cur = con.cursor()
            q = 'SELECT content FROM payload WHERE message_id = ? AND part_no = ?'
            cur.execute(q.replace('?', '%s') if self.pg else q, (mid, part))
            content = cur.fetchone()[0]
            if content is not None:
                yield bytes(content)
            if not chunks:
                return
            q = ('SELECT content FROM payload_chunk WHERE message_id = ? AND part_no = ? '
                 'ORDER BY chunk_no')
            if self.pg:
                cur = con.cursor(name='chunks')
                cur.itersize = 8
                q = q.replace('?', '%s')
            cur.execute(q, (mid, part))
            for (c,) in cur:
                yield bytes(c)
        finally:
            con.close()

    def orphans(self):
        """[(MessageId, what)] of rows that must not exist in any state."""
        out = [(r[0], 'payload row without its inbox row') for r in self.rows(
            crashlib.Harness.ORPHANS[0])]
        out += [(r[0], 'delivery row without its inbox row') for r in self.rows(
            crashlib.Harness.ORPHANS[1])]
        out += [(r[0], 'inbox row without its delivery row') for r in self.rows(
            crashlib.Harness.ORPHANS[2])]
        if self.has_chunks():
            out += [(r[0], 'chunk row without its payload row') for r in self.rows(
                'SELECT c.message_id FROM payload_chunk c LEFT JOIN payload p ON '
                'p.from_party = c.from_party AND p.message_id = c.message_id AND '
                'p.part_no = c.part_no WHERE p.message_id IS NULL')]
        return out

    def inbox(self):
        """{MessageId: stored receipt bytes}."""
        return {mid: bytes(rc) for mid, rc in self.rows('SELECT message_id, receipt FROM inbox')}


# ---- the harness -------------------------------------------------------------------

class BigHarness:
    """One backend, one store, iterations rotating through modes and kinds."""

    def __init__(self, binary, pki, workdir, backend, dsn, modes, size, rng, log=None):
        self.binary, self.pki, self.workdir = binary, pki, workdir
        self.dsn, self.modes, self.size, self.rng = dsn, modes, size, rng
        self.log = log or (lambda s: None)
        self.spool = os.path.join(workdir, 'spool')
        os.makedirs(self.spool, exist_ok=True)
        self.store = BigStore(dsn)
        self.fig = crashlib.Figures(backend, 'big:' + ','.join(modes))
        self.msgs = []
        self.stored_at_kill = None   # the receipt stored when the kill left one

    def serve(self, fault=None):
        return BigServe(self.binary, self.workdir, self.pki, self.dsn, self.spool, self.size,
                        fault).start()

    def iteration(self, it):
        mode = self.modes[it % len(self.modes)]
        m = build(self.binary, self.pki, self.workdir, KINDS[it % len(KINDS)], self.size,
                  self.rng, it)
        self.msgs.append(m)
        self.fig.messages += 1
        self.fig.signed += m.kind != 'unsigned'
        self.log(f'  iteration {it}: {mode}, {m.kind}, {self.size >> 20} MiB')
        gw = self.serve(None if mode == SPOOLING else f'{mode}@1')
        if mode == SPOOLING:
            self._kill_spooling(gw, m)
        else:
            self.fig.sends += 1
            ans = post(gw.port, m.path)
            if ans is not None and gw.wait(timeout=5, kill=False) is None:
                self.fig.violation(f'{m.mid}: {mode} did not fire; answer {ans[0]}')
                gw.kill()
        self._dead(gw, mode)
        self._check(it, crashed=mode)
        gw = self.serve()
        self._retry(gw, m, mode)
        rc = gw.stop()
        if rc != 0:
            self.fig.violation(f'iteration {it}: as4gw serve exited {rc} after SIGTERM')
        self._check(it)
        self.fig.iterations += 1

    def _kill_spooling(self, gw, m):
        """Send about half the body, see the spool file open, SIGKILL."""
        n = _request(m.path)[2]
        sent = threading.Event()
        t = threading.Thread(target=post, args=(gw.port, m.path, n // 2, sent))
        self.fig.sends += 1
        t.start()
        sent.wait(REQUEST_TIMEOUT)
        deadline = time.time() + SPOOL_WAIT
        while gw.spool_fds(self.spool) == 0 and time.time() < deadline and gw.alive():
            time.sleep(0.02)
        if gw.spool_fds(self.spool) == 0:
            self.fig.violation(f'{m.mid}: half the body sent but no spool file open in '
                               f'{self.spool}')
        gw.kill()
        t.join()

    def _dead(self, gw, mode):
        """The gateway died by SIGKILL (and the fault point's line)."""
        rc = gw.wait()
        text = gw.logtext()
        if rc != -signal.SIGKILL:
            self.fig.violation(f'{mode}: as4gw serve exit {rc}: {text[-1500:]}')
        elif mode != SPOOLING and crashlib.fault_line(mode) not in text:
            self.fig.violation(f'{mode}: SIGKILL without "{crashlib.fault_line(mode)}"')
        else:
            self.fig.kills += 1
            os.unlink(gw.log_path)
        self.fig.lost_answers += 1

    def _check(self, it, crashed=None):
        """The store with no gateway running: no orphan, this iteration's
        message stored (complete, its bytes' SHA-256) or not as the kill's
        instant says, every acknowledged message stored with its Receipt,
        nothing in the spool directory."""
        m = self.msgs[-1]
        for mid, what in self.store.orphans():
            self.fig.violation(f'{mid}: {what} (iteration {it})')
        inbox = self.store.inbox()
        known = {x.mid: x for x in self.msgs}
        for mid in inbox:
            if mid not in known:
                self.fig.violation(f'{mid}: inbox row for a MessageId nobody sent')
        if crashed is not None:
            stored = m.mid in inbox
            if stored != (crashed in COMMITTED):
                self.fig.violation(f'{m.mid}: killed at {crashed}, then '
                                   f'{"stored" if stored else "not stored"}')
            self.fig.unacked_stored += stored
            self.stored_at_kill = inbox.get(m.mid)
        if m.mid in inbox and self.store.payload_sha(m.mid) != [m.sha]:
            self.fig.violation(f'{m.mid}: stored payload is not the {m.kind} payload sent '
                               f'(SHA-256 {self.store.payload_sha(m.mid)} vs {m.sha})')
        for x in self.msgs:
            if x.receipt is not None and inbox.get(x.mid) != x.receipt:
                self.fig.violation(f'{x.mid}: acknowledged, stored receipt differs or missing')
        left = os.listdir(self.spool)
        if left:
            self.fig.violation(f'spool directory holds {left} (iteration {it})')

    def _send(self, gw, m, expect):
        """Send m to a running gateway: the Receipt must come, byte-identical
        to expect when expect is not None."""
        self.fig.sends += 1
        self.fig.retries += 1
        ans = post(gw.port, m.path)
        a = as4msg.Answer(ans[0], {}, ans[1]) if ans else None
        if a is None or ans[0] != 200 or not a.is_receipt or a.ref_to != m.mid:
            self.fig.violation(f'{m.mid} ({m.kind}): retry answered '
                               f'{ans[0] if ans else "nothing"} '
                               f'{a.error_code if a else ""}: {ans[1][-300:] if ans else b""!r}')
            return None
        if expect is not None and ans[1] != expect:
            self.fig.violation(f'{m.mid}: retry got a Receipt that differs from the stored one')
        return ans[1]

    def _retry(self, gw, m, mode):
        """After the restart: m twice (the stored Receipt if it was
        committed, else a fresh one, then that one again), an earlier
        acknowledged message once; then no spool descriptor is left."""
        first = self._send(gw, m, self.stored_at_kill)
        if first is not None:
            m.receipt = first
            self._send(gw, m, first)
        older = [x for x in self.msgs[:-1] if x.receipt is not None]
        if older:
            x = self.rng.choice(older)
            self._send(gw, x, x.receipt)
        deadline = time.time() + 10
        while gw.spool_fds(self.spool) and time.time() < deadline:
            time.sleep(0.05)
        if gw.spool_fds(self.spool):
            self.fig.violation(f'{m.mid}: the gateway holds {gw.spool_fds(self.spool)} '
                               f'spool descriptors after answering')

    def final(self):
        """Every message stored once with its bytes and its Receipt."""
        inbox = self.store.inbox()
        for m in self.msgs:
            if m.mid not in inbox:
                self.fig.violation(f'{m.mid}: never stored')
            elif self.store.payload_sha(m.mid) != [m.sha]:
                self.fig.violation(f'{m.mid}: stored payload bytes differ from those sent')
            elif m.receipt is not None and inbox[m.mid] != m.receipt:
                self.fig.violation(f'{m.mid}: stored receipt differs from the Receipt sent')
            if os.path.exists(m.path):
                os.unlink(m.path)


def run_big(binary, pki, workdir, backend, iterations, size=24 * MIB, modes=None,
            pg_admin_dsn=None, seed=None, keep=False, log=None):
    """Run the large-payload scenario in a fresh store: its Figures.  The
    store and work directory are removed afterwards unless keep or a
    violation.  modes: the kill modes in turn (default modes_for(backend))."""
    modes = modes if modes is not None else modes_for(backend)
    t0 = time.time()
    os.makedirs(workdir, exist_ok=True)
    dsn = crashlib.new_store(backend, workdir, pg_admin_dsn)
    h = BigHarness(binary, pki, workdir, backend, dsn, modes, size, random.Random(seed), log)
    try:
        for it in range(iterations):
            h.iteration(it)
        h.final()
    except crashlib.HarnessError as e:
        h.fig.violation(f'harness: {e}')
    finally:
        crashlib.kill_all()
    h.fig.seconds = time.time() - t0
    if not keep and not h.fig.violations:
        crashlib.drop_store(dsn, pg_admin_dsn)
        shutil.rmtree(workdir, ignore_errors=True)
    return h.fig
