"""The crash harness of issue 4 item 1, shared by tests/integration/test_crash.py
(a small budget) and bench/crash (hundreds of iterations).

It drives the real binary of a fault-injection build (meson -Dfault_injection=true,
src/util/fault.h): for one store backend and one mode (a gateway fault point, or
"external": SIGKILL from outside at a random instant under load) it repeats

  1. start `as4gw serve` with AS4GW_FAULT=<point>@<k> (k random and small, so the
     kill hits a different request each time) and push a workload from several
     client threads: new MessageIds (unsigned on the dev-sample leg, signed on the
     dev-signed leg), some sent twice at once, some sent again from earlier
     iterations; record for every MessageId what was sent and every answer;
  2. see the process die by SIGKILL (the fault point's "as4gw: FAULT <name>:
     SIGKILL" on stderr), then look at the database as the crash left it:
     every Receipt a client got is stored with the same bytes, nothing is
     half-stored, and after http.after-commit / http.mid-response some message
     without an answer is stored (the point really sits after COMMIT);
  3. restart without the fault and re-send every message without a Receipt
     (and a random sample of those with one) until each has a Receipt; every
     Receipt for a MessageId must be byte-identical to the first one;
  4. check the store: exactly one inbox row per MessageId sent and none other,
     the stored receipt equal to what the clients got, the payload bytes equal
     to what was sent, a delivery row, no payload or delivery row without its
     inbox row, the duplicates counter between Receipts-1 and sends-1.

Then `as4gw deliver --to-dir` runs with deliver.after-claim / deliver.mid-write /
deliver.after-target
killing it (restarted with --stale-seconds 0 to take the claim over) until the
queue is empty, and every message must be delivered exactly once: one directory
per MessageId with the payload bytes, no .tmp-* leftovers, every delivery row
'done'.

Each violation is described where it is recorded (the Figures.violation calls).
Needs /usr/bin/python3 with psycopg2 (PostgreSQL); signed messages need lxml and
cryptography (tamper.py), else only unsigned ones are sent (said on stderr).
"""
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import as4msg  # noqa: E402

GATEWAY_POINTS = ('store.after-insert', 'store.before-commit', 'http.after-commit',
                  'http.mid-response')
EXTERNAL = 'external'
MODES = GATEWAY_POINTS + (EXTERNAL,)
DELIVER_POINTS = ('deliver.after-claim', 'deliver.mid-write', 'deliver.after-target')

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
LEGS = f'''
  <pmode id="dev-sample">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:Deliver</action>
    <security signing="never" encryption="never"/>
  </pmode>
  <pmode id="dev-signed">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:SignedOnly</action>
    <security signing="required">
      <signer><certificate>{{pki}}/sender.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>
    </security>
  </pmode>
'''
SIGNED_ACTION = 'urn:as4gw:dev:SignedOnly'
START_TIMEOUT = 20      # seconds for /healthz after a start
REQUEST_TIMEOUT = 60    # one HTTP request
RESEND_ROUNDS = 6       # rounds of re-sending after the restart
SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          '..', '..'))


def delivery_dir_name(mid, party='urn:as4gw:dev:sender'):
    """The --to-dir directory of a message (deliver.h): hex SHA-256 over the
    sending party, a NUL byte and the MessageId (the inbox key)."""
    return hashlib.sha256(party.encode() + b'\0' + mid.encode()).hexdigest()


class HarnessError(Exception):
    """The harness could not do its work (not a gateway invariant)."""


# ---- environment -------------------------------------------------------------

def fault_build(binary):
    """True when binary has the fault points compiled in: fault.c reads the
    variable AS4GW_FAULT, and the linker keeps fault.c only when a fault point
    calls it."""
    try:
        with open(binary, 'rb') as f:
            return b'AS4GW_FAULT' in f.read()
    except OSError:
        return False


def make_pki(directory):
    """A development PKI made by the shipped generator."""
    subprocess.run([os.path.join(SOURCE_DIR, 'certs', 'gen-dev-pki.sh'), str(directory)],
                   check=True, capture_output=True)
    return str(directory)


def new_store(backend, workdir, pg_admin_dsn=None):
    """A fresh store: an SQLite file under workdir, or a new database on the
    PostgreSQL server of pg_admin_dsn.  Returns its DSN."""
    if backend == 'sqlite':
        return f'sqlite:{workdir}/as4gw.db'
    import psycopg2
    name = 'as4gw_crash_' + uuid.uuid4().hex[:12]
    con = psycopg2.connect(pg_admin_dsn)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'CREATE DATABASE {name}')
    con.close()
    u = urllib.parse.urlsplit(pg_admin_dsn)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, '/' + name, u.query, ''))


def drop_store(dsn, pg_admin_dsn=None):
    """Remove a PostgreSQL database made by new_store (SQLite files go with
    their directory)."""
    if dsn.startswith('sqlite:') or not pg_admin_dsn:
        return
    import psycopg2
    con = psycopg2.connect(pg_admin_dsn)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS {urllib.parse.urlsplit(dsn).path[1:]}')
    con.close()


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Db:
    """Direct read access to the gateway's tables (never through as4gw).
    read() runs its queries in ONE read transaction (a snapshot), so a
    transaction that a killed gateway's PostgreSQL session commits meanwhile
    is seen by all of them or by none."""

    def __init__(self, dsn):
        self.dsn = dsn
        self.con = None

    def read(self, *queries):
        """[rows of each query] from one snapshot."""
        if self.dsn.startswith('sqlite:'):
            con = sqlite3.connect(self.dsn[len('sqlite:'):], timeout=30, isolation_level=None)
            try:
                con.execute('BEGIN')     # WAL: the snapshot starts at the first read
                out = [con.execute(q).fetchall() for q in queries]
                con.execute('COMMIT')
                return out
            finally:
                con.close()
        import psycopg2
        if self.con is None:
            self.con = psycopg2.connect(self.dsn)
            self.con.set_session(isolation_level='REPEATABLE READ', readonly=True)
        out = []
        try:
            with self.con.cursor() as cur:
                for q in queries:
                    cur.execute(q)
                    out.append([tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                                for r in cur.fetchall()])
        finally:
            self.con.rollback()
        return out

    def rows(self, query):
        return self.read(query)[0]

    def close(self):
        if self.con is not None:
            self.con.close()
            self.con = None


# ---- the processes -------------------------------------------------------------

def _env(fault):
    env = {k: v for k, v in os.environ.items() if k != 'AS4GW_FAULT'}
    if fault:
        env['AS4GW_FAULT'] = fault
    return env


def fault_line(point):
    """What fault_point() writes to stderr just before SIGKILL."""
    return f'as4gw: FAULT {point}: SIGKILL'


LIVE = set()   # Serve objects whose process may still run (kill_all)


def kill_all():
    """SIGKILL every gateway this module started that still runs (after an
    error or an interrupt, so no gateway outlives the harness)."""
    for gw in list(LIVE):
        gw.kill()
        gw.wait()


class Serve:
    """One `as4gw serve` process on a fresh port, its output in its own log."""

    seq = 0

    def __init__(self, binary, workdir, pki, dsn, threads=4, fault=None):
        Serve.seq += 1
        self.binary, self.fault = binary, fault
        self.port = free_port()
        self.config = os.path.join(workdir, 'as4gw.xml')
        write_config(self.config, pki, dsn, f'127.0.0.1:{self.port}', threads)
        self.log_path = os.path.join(workdir, f'serve-{Serve.seq}.log')
        self.proc = None

    def start(self):
        with open(self.log_path, 'wb') as log:
            self.proc = subprocess.Popen([self.binary, 'serve', '-c', self.config],
                                         stdout=log, stderr=subprocess.STDOUT,
                                         env=_env(self.fault))
        LIVE.add(self)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise HarnessError(f'as4gw serve exited {self.proc.returncode} at start: '
                                   f'{self.logtext()[-2000:]}')
            try:
                c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=5)
                c.request('GET', '/healthz')
                if c.getresponse().status == 200:
                    c.close()
                    return self
                c.close()
            except OSError:
                pass
            time.sleep(0.02)
        self.kill()
        raise HarnessError('as4gw serve did not become healthy: ' + self.logtext()[-2000:])

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """SIGKILL from outside; True when the process was still running."""
        if not self.alive():
            return False
        self.proc.send_signal(signal.SIGKILL)
        return True

    def wait(self, timeout=30, kill=True):
        """The exit status, or None when it is still running after timeout
        (then SIGKILLed and reaped unless not kill)."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            if not kill:
                return None
            self.proc.kill()
            self.proc.wait()
            rc = None
        LIVE.discard(self)
        return rc

    def stop(self):
        """SIGTERM and wait: the exit status (0 for a clean drain)."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        return self.wait()

    def logtext(self):
        try:
            with open(self.log_path, 'rb') as f:
                return f.read().decode('utf-8', 'replace')
        except OSError:
            return ''


def write_config(path, pki, dsn, listen, threads=4, limits='', legs=None):
    """A complete configuration file: the two development legs, or legs
    (<pmode> elements: crashbig.py's); limits, if given, the content of
    <limits>."""
    legs = LEGS.replace('{pki}', str(pki)) if legs is None else legs
    limits = f'\n    <limits>{limits}</limits>' if limits else ''
    with open(path, 'w') as f:
        f.write(f'''<?xml version="1.0" encoding="UTF-8"?>
<as4gw xmlns="urn:as4gw:config:1">
  <gateway>
    <listen>{listen}</listen>
    <store>{dsn}</store>
    <threads>{threads}</threads>
    <signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>{limits}
  </gateway>
{legs}
</as4gw>
''')


# ---- messages ------------------------------------------------------------------

class Signer:
    """Signed pushes without one `as4gw push` per message: one request saved by
    `as4gw push --sign --save-request` (sent nowhere), then per message the
    MessageId and the payload replaced and the signature made valid again by
    tamper.py's signer (written from the specs, not from the gateway)."""

    TEMPLATE_ID = 'template@as4gw-crash'

    def __init__(self, binary, pki, workdir):
        import tamper  # lxml + cryptography
        self.tamper, self.key = tamper, f'{pki}/sender.key'
        payload = os.path.join(workdir, 'template.bin')
        with open(payload, 'wb') as f:
            f.write(b'template')
        saved = os.path.join(workdir, 'template.mime')
        r = subprocess.run([binary, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4',
                            '--from', 'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway',
                            '--service', 'urn:as4gw:dev:service', '--action', SIGNED_ACTION,
                            '--message-id', self.TEMPLATE_ID, '--conversation', 'conv-crash',
                            '--payload', f'{payload};mime=application/octet-stream',
                            '--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key',
                            self.key, '--connect-timeout', '2', '--save-request', saved],
                           capture_output=True, text=True, timeout=60)
        if not os.path.exists(saved + '.ct'):
            raise HarnessError('as4gw push --save-request wrote nothing: ' + r.stderr)
        self.template = tamper.Message.load(saved)
        self.cid = self.template.cid(1)

    def make(self, mid, payload):
        """(content_type, body) of a signed push of payload as mid."""
        t = self.tamper
        m = self.template.copy()
        env = t.once(m.envelope, f'<eb:MessageId>{self.TEMPLATE_ID}</eb:MessageId>',
                     f'<eb:MessageId>{as4msg.esc(mid)}</eb:MessageId>')
        env = t.set_cid_digest(env, self.cid, payload)
        m.envelope = t.resign(env, self.key)
        m.parts[1][1] = payload
        return m.http()


class Msg:
    """One MessageId: what was sent (always the same bytes) and what came back."""

    def __init__(self, mid, ct, body, payload, signed, iteration):
        self.mid, self.ct, self.body, self.payload = mid, ct, body, payload
        self.signed, self.iteration = signed, iteration
        self.receipt = None     # the first Receipt a client got
        self.receipts = 0       # Receipts received
        self.sends = 0          # POSTs started


# ---- figures -------------------------------------------------------------------

class Figures:
    """What one scenario (backend, mode) did and found."""

    def __init__(self, backend, mode):
        self.backend, self.mode = backend, mode
        self.iterations = 0
        self.kills = 0          # gateway deaths by SIGKILL that the mode caused
        self.missed = 0         # iterations where the fault point never fired
        self.messages = 0       # distinct MessageIds
        self.signed = 0         # of which signed
        self.sends = 0          # POSTs
        self.retries = 0        # POSTs of a MessageId after its first
        self.lost_answers = 0   # POSTs answered by a dying process (no answer)
        self.unacked_stored = 0  # at a kill: stored new messages with a send left unanswered
        self.transient = 0      # 503 or connection errors from a running gateway
        self.deliver_kills = {p: 0 for p in DELIVER_POINTS}
        self.deliver_missed = 0
        self.deliver_runs = 0
        self.delivered = 0
        self.redelivered = 0    # directories written again after deliver.after-target
        self.seconds = 0.0
        self.violations = []
        self.lock = threading.Lock()

    def violation(self, text):
        with self.lock:
            self.violations.append(text)

    def row(self):
        d = self.deliver_kills
        return (f'{self.backend:<10} {self.mode:<20} iter {self.iterations:>4}  '
                f'kills {self.kills:>4}  missed {self.missed:>3}  msgs {self.messages:>5} '
                f'(signed {self.signed})  sends {self.sends:>5}  retries {self.retries:>5}  '
                f'no-answer {self.lost_answers:>4}  committed-unanswered '
                f'{self.unacked_stored:>4}  transient {self.transient:>3}  '
                f'deliver kills claim/write/target {d[DELIVER_POINTS[0]]}/'
                f'{d[DELIVER_POINTS[1]]}/{d[DELIVER_POINTS[2]]} '
                f'runs {self.deliver_runs} missed {self.deliver_missed} '
                f'delivered {self.delivered} (again {self.redelivered})  '
                f'violations {len(self.violations)}  {self.seconds:.1f}s')


# ---- HTTP ----------------------------------------------------------------------

def post(port, ct, body):
    """POST to /as4: (status, body).  Raises OSError/HTTPException when the
    connection fails or the answer is cut short (IncompleteRead: fewer bytes
    than its Content-Length)."""
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=REQUEST_TIMEOUT)
    try:
        c.request('POST', '/as4', body=body, headers={'Content-Type': ct})
        r = c.getresponse()
        data = r.read()
        return r.status, data
    finally:
        c.close()


# ---- the harness ---------------------------------------------------------------

class Harness:
    """One scenario: one backend, one store, one mode, many iterations."""

    def __init__(self, binary, pki, workdir, backend, dsn, mode, rng, messages=12,
                 clients=4, threads=4, signer=None, log=None):
        self.binary, self.pki, self.workdir = binary, pki, str(workdir)
        self.dsn, self.mode, self.rng = dsn, mode, rng
        self.n_new, self.clients, self.threads = messages, clients, threads
        self.signer, self.log = signer, log or (lambda s: None)
        self.db = Db(dsn)
        self.fig = Figures(backend, mode)
        self.msgs = {}
        self.lock = threading.Lock()
        self.answered = 0
        self.answered_cv = threading.Condition(self.lock)
        self.config = None
        self.redelivered = {}   # MessageId -> directory content at an after-target kill
        self.lost_mids = set()  # MessageIds with a send the killed process never answered

    # -- workload --

    def _new_msg(self, it):
        mid = f'{uuid.uuid4()}@as4gw-crash'
        signed = self.signer is not None and self.rng.random() < 0.25
        if signed:
            payload = self.rng.randbytes(self.rng.randint(1, 3000))
            ct, body = self.signer.make(mid, payload)
        else:
            payload = (f'<Invoice n="{it}">{uuid.uuid4().hex}</Invoice>' *
                       self.rng.randint(1, 40)).encode()
            ct, body = as4msg.user_message(mid, payload=payload, conversation='conv-crash')
        m = Msg(mid, ct, body, payload, signed, it)
        self.msgs[mid] = m
        self.fig.messages += 1
        self.fig.signed += signed
        return m

    def _workload(self, it):
        """New messages and a few older ones again, shuffled; a quarter of the
        new ones twice, the copy right after the original, so two clients
        (they take items round robin) send both at about the same time."""
        new = [self._new_msg(it) for _ in range(self.n_new)]
        old = [m for m in self.msgs.values() if m.iteration < it]
        base = new + self.rng.sample(old, min(len(old), 3))
        self.rng.shuffle(base)
        items = []
        for m in base:
            items += [m, m] if m.iteration == it and self.rng.random() < 0.25 else [m]
        return new, items

    # -- sending --

    def _send(self, gw, m):
        """POST m once and record the answer: 'receipt', 'lost' (no complete
        answer from a dying process), 'transient' (503 or connection error from
        a running one) or 'bad' (a violation)."""
        with self.lock:
            m.sends += 1
            self.fig.sends += 1
            if m.sends > 1:
                self.fig.retries += 1
        try:
            status, body = post(gw.port, m.ct, m.body)
        except (OSError, http.client.HTTPException):
            status, body = None, b''
        ans = as4msg.Answer(status, {}, body) if status is not None else None
        if ans is not None and status == 200 and ans.is_receipt and ans.ref_to == m.mid:
            return self._got_receipt(m, body)
        dead = not gw.alive()
        if not dead and status != 503:
            # the answer may come from a process that is being killed right
            # now: its sockets close a moment before it can be reaped
            dead = gw.wait(timeout=0.3, kill=False) is not None
        with self.lock:
            if dead:
                self.fig.lost_answers += 1
                self.lost_mids.add(m.mid)
                return 'lost'
            if status is None or status == 503:
                self.fig.transient += 1
                return 'transient'
        self.fig.violation(f'{m.mid}: answer {status} from a running gateway: {body[:300]!r}')
        return 'bad'

    def _got_receipt(self, m, body):
        with self.lock:
            m.receipts += 1
            self.answered += 1
            self.answered_cv.notify_all()
            if m.receipt is None:
                m.receipt = body
                return 'receipt'
        if body != m.receipt:
            self.fig.violation(f'{m.mid}: Receipt differs from the first one received '
                               f'({len(body)} vs {len(m.receipt)} bytes)')
        return 'receipt'

    def _clients(self, gw, items, stop_on_death):
        """Send items from self.clients threads; with stop_on_death every
        client stops at the first sign of a dead process (what is left is
        sent after the restart)."""
        stop = threading.Event()

        def client(queue):
            for m in queue:
                if stop.is_set():
                    return
                if self._send(gw, m) == 'lost' and stop_on_death:
                    stop.set()

        ts = [threading.Thread(target=client, args=(items[i::self.clients],))
              for i in range(self.clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    # -- one iteration --

    def _killer(self, gw, n_items, done):
        """External mode: SIGKILL after a random number of answers plus a
        random delay, i.e. at a random instant while requests are in flight."""
        target = self.rng.randint(0, max(0, n_items - 2))
        delay = self.rng.uniform(0, 0.004 if target else 0.05)

        def run():
            with self.answered_cv:
                self.answered_cv.wait_for(lambda: self.answered >= target or done.is_set(),
                                          timeout=REQUEST_TIMEOUT)
            time.sleep(delay)
            gw.kill()
        t = threading.Thread(target=run)
        t.start()
        return t

    def iteration(self, it):
        """One kill, restart, re-send and check cycle."""
        new, items = self._workload(it)
        point = None if self.mode == EXTERNAL else self.mode
        k = self.rng.randint(1, min(6, len(new)))
        gw = Serve(self.binary, self.workdir, self.pki, self.dsn, self.threads,
                   f'{point}@{k}' if point else None).start()
        self.config = gw.config
        with self.lock:
            self.answered = 0
            self.lost_mids = set()
        done = threading.Event()
        killer = self._killer(gw, len(items), done) if point is None else None
        self._clients(gw, items, stop_on_death=True)
        done.set()
        if killer:
            with self.answered_cv:
                self.answered_cv.notify_all()
            killer.join()
        self._after_phase1(gw, point, k)
        self._check_crash_state(it)
        gw = Serve(self.binary, self.workdir, self.pki, self.dsn, self.threads).start()
        self._resend(gw, it)
        rc = gw.stop()
        if rc != 0:
            self.fig.violation(f'iteration {it}: as4gw serve exited {rc} after SIGTERM: '
                               f'{gw.logtext()[-1000:]}')
        else:
            os.unlink(gw.log_path)
        self._check_store(it)
        self.fig.iterations += 1

    def _after_phase1(self, gw, point, k):
        """Did the mode kill the process?  Count it, or count a miss."""
        if gw.alive():
            if point is None:
                gw.kill()   # the load ended before the killer's instant
            else:
                self.fig.missed += 1
                self.log(f'  fault {point}@{k} did not fire')
                rc = gw.stop()
                if rc != 0:
                    self.fig.violation(f'as4gw serve exited {rc} after SIGTERM')
                return
        rc = gw.wait()
        text = gw.logtext()
        if rc != -signal.SIGKILL:
            self.fig.violation(f'as4gw serve ({self.mode}@{k}) died with status {rc}: '
                               f'{text[-1500:]}')
        elif point is not None and fault_line(point) not in text:
            self.fig.violation(f'as4gw serve killed by SIGKILL without "{fault_line(point)}": '
                               f'{text[-1500:]}')
        else:
            self.fig.kills += 1
            os.unlink(gw.log_path)

    def _resend(self, gw, it):
        """Re-send every message without a Receipt, and a sample of those
        with one, until every message has a Receipt."""
        acked = [m for m in self.msgs.values() if m.receipt is not None]
        sample = self.rng.sample(acked, len(acked) * 3 // 10 if len(acked) < 40 else 12)
        todo = [m for m in self.msgs.values() if m.receipt is None] + sample
        for _ in range(RESEND_ROUNDS):
            if not todo:
                break
            self.rng.shuffle(todo)
            self._clients(gw, todo, stop_on_death=False)
            todo = [m for m in self.msgs.values() if m.receipt is None]
        for m in todo:
            self.fig.violation(f'{m.mid}: no Receipt after {m.sends} sends '
                               f'(iteration {it})')

    # -- the invariants --

    ORPHANS = (
        'SELECT p.message_id FROM payload p LEFT JOIN inbox i ON i.message_id = p.message_id '
        'WHERE i.message_id IS NULL',
        'SELECT d.message_id FROM delivery d LEFT JOIN inbox i ON i.message_id = d.message_id '
        'WHERE i.message_id IS NULL',
        'SELECT i.message_id FROM inbox i LEFT JOIN delivery d ON d.message_id = i.message_id '
        'WHERE d.message_id IS NULL',
        'SELECT message_id, count(*) FROM payload GROUP BY message_id',
        'SELECT message_id, receipt, duplicates FROM inbox',
    )

    def _orphans(self, *more):
        """Read the store in one snapshot and report rows that must not exist
        in any committed state: payload or delivery rows without their inbox
        row; inbox rows without their delivery row or with a payload count
        other than sent; rows of MessageIds nobody sent.  Returns the inbox
        rows (message_id, receipt, duplicates) and the results of more."""
        res = self.db.read(*self.ORPHANS, *more)
        for what, rows in zip(('payload row without its inbox row',
                               'delivery row without its inbox row',
                               'inbox row without its delivery row'), res):
            for (mid,) in rows:
                self.fig.violation(f'{mid}: {what}')
        parts, inbox = dict(res[3]), res[4]
        for mid, _, _ in inbox:
            if mid not in self.msgs:
                self.fig.violation(f'{mid}: inbox row for a MessageId nobody sent')
            elif parts.get(mid, 0) != 1:
                self.fig.violation(f'{mid}: {parts.get(mid, 0)} payload rows, 1 sent')
        return inbox, res[5:]

    def _check_crash_state(self, it):
        """Right after the kill, before the restart: nothing acknowledged lost,
        nothing half-stored."""
        stored = {}
        for mid, receipt, _ in self._orphans()[0]:
            if mid in stored:
                self.fig.violation(f'{mid}: two inbox rows')
            stored[mid] = bytes(receipt)
        # new messages a send of which got no answer, yet stored (a twin sent
        # at the same time may have got the Receipt of the duplicate)
        unanswered = sum(1 for mid in self.lost_mids
                         if mid in stored and self.msgs[mid].iteration == it)
        self.fig.unacked_stored += unanswered
        if unanswered == 0 and self.mode in ('http.after-commit', 'http.mid-response'):
            # the request the point killed had committed: its row is there
            self.fig.violation(f'{self.mode} fired but no message whose send got no '
                               f'answer is stored')
        for m in self.msgs.values():
            if m.receipt is None:
                continue
            if m.mid not in stored:
                self.fig.violation(f'{m.mid}: acknowledged with a Receipt but not stored '
                                   f'after the kill')
            elif stored[m.mid] != m.receipt:
                self.fig.violation(f'{m.mid}: stored receipt differs from the Receipt '
                                   f'the client got before the kill')

    def _check_store(self, it):
        """After the restart and re-sends: exactly one complete row set per
        MessageId sent, receipts and payload bytes as sent and received."""
        inbox, (content,) = self._orphans('SELECT message_id, content FROM payload '
                                          'WHERE part_no = 0')
        ids = [r[0] for r in inbox]
        if len(ids) != len(set(ids)):
            self.fig.violation(f'iteration {it}: duplicate inbox rows')
        stored = {mid: bytes(rc) for mid, rc, _ in inbox}
        dups = {mid: d for mid, _, d in inbox}
        content = dict(content)
        for m in self.msgs.values():
            if m.mid not in stored:
                self.fig.violation(f'{m.mid}: sent, answered, not stored')
                continue
            if m.receipt is not None and stored[m.mid] != m.receipt:
                self.fig.violation(f'{m.mid}: stored receipt differs from the Receipt sent')
            if bytes(content.get(m.mid, b'')) != m.payload:
                self.fig.violation(f'{m.mid}: stored payload differs from what was sent')
            if not m.receipts - 1 <= dups[m.mid] <= m.sends - 1:
                self.fig.violation(f'{m.mid}: duplicates {dups[m.mid]} for {m.receipts} '
                                   f'Receipts out of {m.sends} sends')

    # -- delivery --

    def _deliver(self, out, fault=None, takeover=False):
        """One `as4gw deliver --to-dir out` run (until the queue is empty): (status, output)."""
        args = [self.binary, 'deliver', '--to-dir', out, '-c', self.config]
        if takeover:
            args += ['--stale-seconds', '0']
        r = subprocess.run(args, capture_output=True, text=True, env=_env(fault), timeout=300)
        self.fig.deliver_runs += 1
        return r.returncode, r.stdout + r.stderr

    def _pending(self):
        return self.db.rows("SELECT count(*) FROM delivery WHERE state <> 'done'")[0][0]

    def deliver(self, rounds):
        """Deliver everything, killed by the deliver fault points in turn for
        rounds runs (each taking over the previous run's claim), then drained
        by a run without a fault; then check exactly-once delivery."""
        out = os.path.join(self.workdir, 'out')
        os.makedirs(out, exist_ok=True)
        takeover, kills = False, 0
        for i in range(rounds):
            pending = self._pending()
            if pending == 0:
                break
            point = DELIVER_POINTS[i % len(DELIVER_POINTS)]
            k = self.rng.randint(1, min(4, pending))
            rc, text = self._deliver(out, f'{point}@{k}', takeover)
            if rc == -signal.SIGKILL and fault_line(point) in text:
                self.fig.deliver_kills[point] += 1
                takeover, kills = True, kills + 1
                self._check_deliver_kill(out, point, kills)
            elif rc == 0:
                self.fig.deliver_missed += 1
                self.log(f'  deliver fault {point}@{k} did not fire ({pending} pending)')
            else:
                self.fig.violation(f'as4gw deliver ({point}@{k}) exited {rc}: {text[-1500:]}')
                return
        rc, text = self._deliver(out, None, True)
        if rc != 0:
            self.fig.violation(f'as4gw deliver exited {rc}: {text[-1500:]}')
        self._check_delivered(out)

    def _check_deliver_kill(self, out, point, kills):
        """After the kills-th deliver kill: the row the killed run had claimed
        is 'claimed' (the latest claim), and so may be claims of earlier
        killed runs not taken over yet (rows with equal created_at are claimed
        in no set order); after deliver.after-target the latest claim's
        directory is already complete (and is remembered: the takeover must
        write it again with the same content)."""
        claimed = [r[0] for r in self.db.rows(
            "SELECT message_id FROM delivery WHERE state = 'claimed' ORDER BY claimed_at DESC")]
        if not 1 <= len(claimed) <= kills:
            self.fig.violation(f'after {point}: {len(claimed)} claimed delivery rows after '
                               f'{kills} killed deliverers')
        if point == 'deliver.mid-write' and not any(
                e.startswith('.tmp-') for e in os.listdir(out)):
            # the kill left a half-written directory (issue 11 item 1b): the
            # next run must sweep it (_check_delivered finds any leftover)
            self.fig.violation('deliver.mid-write fired but left no .tmp-* directory')
        elif point == 'deliver.after-target':
            mid = claimed[0]
            if self._check_message_dir(out, self.msgs.get(mid), mid):
                self.redelivered.setdefault(mid, self._dir_content(out, mid))

    @staticmethod
    def _dir_content(out, mid):
        """{file name: bytes} of a delivery directory: a redelivery after a
        crash must write the same bytes (deliver.h), message.json included."""
        d = os.path.join(out, delivery_dir_name(mid))
        files = {}
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), 'rb') as f:
                files[name] = f.read()
        return files

    def _check_message_dir(self, out, m, mid):
        """DIR/<hex SHA-256 of party NUL MessageId>/ holds message.json naming it and
        the payload bytes in part-<n>.bin.  True when it does."""
        d = os.path.join(out, delivery_dir_name(mid))
        if m is None or not os.path.isdir(d):
            self.fig.violation(f'{mid}: no delivery directory {d}')
            return False
        try:
            with open(os.path.join(d, 'message.json')) as f:
                meta = json.load(f)
        except (OSError, ValueError) as e:
            self.fig.violation(f'{mid}: message.json unreadable: {e}')
            return False
        if not isinstance(meta, dict) or meta.get('message_id') != mid:
            self.fig.violation(f'{mid}: message.json does not name the MessageId')
            return False
        parts = sorted((p for p in os.listdir(d) if re.fullmatch(r'part-\d+\.bin', p)),
                       key=lambda p: int(p[5:-4]))
        data = []
        for p in parts:
            with open(os.path.join(d, p), 'rb') as f:
                data.append(f.read())
        if data != [m.payload]:
            self.fig.violation(f'{mid}: delivered parts {[len(x) for x in data]} bytes, '
                               f'sent [{len(m.payload)}]')
            return False
        return True

    def _check_delivered(self, out):
        """Every message once: one directory per MessageId and no other, no
        temporary leftovers, every delivery row 'done' and processed_at set."""
        names = {delivery_dir_name(mid): m for mid, m in self.msgs.items()}
        entries = set(os.listdir(out))
        for e in sorted(entries - set(names)):
            self.fig.violation(f'delivery directory {e}: '
                               + ('temporary leftover (never swept)'
                                  if e.startswith(('.tmp-', '.old-')) else
                                  'no MessageId sent has this name'))
        for name, m in names.items():
            if name not in entries:
                self.fig.violation(f'{m.mid}: not delivered')
            else:
                self._check_message_dir(out, m, m.mid)
        self.fig.delivered = len(entries & set(names))
        for mid, before in self.redelivered.items():
            if mid in self.msgs and self._dir_content(out, mid) != before:
                self.fig.violation(f'{mid}: delivered again after deliver.after-target '
                                   f'with other content')
        self.fig.redelivered = len(self.redelivered)
        states = dict(self.db.rows('SELECT state, count(*) FROM delivery GROUP BY state'))
        if states != {'done': len(self.msgs)}:
            self.fig.violation(f'delivery states {states}, expected all {len(self.msgs)} done')
        n = self.db.rows('SELECT count(*) FROM inbox WHERE processed_at IS NULL')[0][0]
        if n:
            self.fig.violation(f'{n} inbox rows without processed_at after delivery')


def run_scenario(binary, pki, workdir, backend, mode, iterations, pg_admin_dsn=None,
                 seed=None, messages=12, clients=4, deliver_rounds=None, signer=None,
                 keep=False, log=None):
    """Run one scenario in a fresh store and return its Figures.  The store
    and work directory are removed afterwards unless keep or a violation."""
    t0 = time.time()
    os.makedirs(workdir, exist_ok=True)
    rng = random.Random(seed)
    dsn = new_store(backend, workdir, pg_admin_dsn)
    h = Harness(binary, pki, workdir, backend, dsn, mode, rng, messages, clients,
                signer=signer, log=log)
    try:
        for it in range(iterations):
            h.iteration(it)
            if log and (it + 1) % 25 == 0:
                log(f'  {backend} {mode}: {it + 1}/{iterations} iterations, '
                    f'{len(h.fig.violations)} violations')
        if deliver_rounds is None:
            deliver_rounds = max(len(DELIVER_POINTS), iterations)
        if deliver_rounds >= 0:
            h.deliver(deliver_rounds)
    except HarnessError as e:
        h.fig.violation(f'harness: {e}')
    finally:
        kill_all()
    h.db.close()
    h.fig.seconds = time.time() - t0
    if not keep and not h.fig.violations:
        drop_store(dsn, pg_admin_dsn)
        shutil.rmtree(workdir, ignore_errors=True)
    return h.fig
