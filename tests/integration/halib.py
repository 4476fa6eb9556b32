"""The failover harness of issue 15 item 3, shared by
tests/integration/test_ha_failover.py (two failovers) and bench/failover
(ten and more in a row).

On the reference deployment of conf/ha (etcd, two Patroni-managed PostgreSQL
nodes with synchronous replication; conf/ha/ha.py) it runs two `as4gw serve`
instances on the multi-host DSN and one `as4gw deliver --follow`, and:

  1. pushes a workload from several client threads: new MessageIds (signed
     on the dev-signed leg, unsigned on dev-sample), every one without a
     Receipt sent again until it has one, and earlier ones with a Receipt
     sent again (a partner's retry);
  2. per failover: SIGKILL of the primary's postmaster (Patroni, with
     primary_start_timeout 0, hands over to the synchronous standby), and
     measures the time from the kill to the first Receipt of a message first
     sent after it; checks /readyz says 503 while there is no primary and 200
     again after; waits for the old primary to rejoin as the synchronous
     standby.  Or (how='stop') the primary's node frozen with SIGSTOP (a
     hung host): the gateways' waits end after <storeTimeoutSeconds>
     (STORE_TIMEOUT), Patroni's leader lock expires, SIGCONT after the
     promotion.  Or (how='cut', Run(netns=True): every node in a network
     namespace of its own, conf/ha/netns.py) the primary's node cut off the
     network: the same waits end, its Patroni cannot renew the lock and
     demotes it, the link comes back after the promotion;
  3. (test_ha_failover) loses the synchronous standby: pushes go on once
     Patroni has dropped it from synchronous_standby_names; it comes back;
  4. at the end, on the primary of the moment: exactly one inbox row per
     MessageId sent, the stored receipt byte-identical to every Receipt the
     clients got, the payload as sent; every answer a client got was a
     Receipt for its message or a 503 with Retry-After; every message
     delivered by the one deliverer (a claim in flight at a kill, committed
     with its answer lost, is taken over after the lease by a one-shot
     deliver: the documented crash path); a background purge (every second in
     each serve) ran on the final primary after the last failover.

Each violation is recorded where it is found (Run.violation).
"""
import functools
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import as4msg  # noqa: E402
import crashlib  # noqa: E402

SRC = crashlib.SOURCE_DIR
sys.path.insert(0, os.path.join(SRC, 'conf', 'ha'))
import ha  # noqa: E402

REQUEST_TIMEOUT = 60
# the gateways' <storeTimeoutSeconds>: how long a worker waits for a hung
# primary (failover(how='stop')) before it answers 503 and reconnects
STORE_TIMEOUT = 3


def process_tree(*roots):
    """The pids of roots and every process under them (/proc)."""
    kids = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(kids.get(p, []))
    return sorted(out)


def signal_pids(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


def post(port, ct, body, path='/as4', method='POST'):
    """(status, Retry-After header or None, body); raises OSError or
    HTTPException when the connection fails."""
    c = http.client.HTTPConnection('127.0.0.1', port, timeout=REQUEST_TIMEOUT)
    try:
        c.request(method, path, body=body,
                  headers={'Content-Type': ct} if ct else {})
        r = c.getresponse()
        data = r.read()
        return r.status, r.getheader('Retry-After'), data
    finally:
        c.close()


class Msg:
    def __init__(self, mid, ct, body, payload):
        self.mid, self.ct, self.body, self.payload = mid, ct, body, payload
        self.receipt = None
        self.sends = 0
        self.receipts = 0


class Run:
    """One deployment, its gateways and deliverer, a workload, failovers."""

    def __init__(self, binary, pki, workdir, base, clients=4, log=None, netns=False):
        self.binary, self.pki, self.dir = binary, str(pki), str(workdir)
        self.log = log or (lambda m: None)
        # the postgres user must reach its node directories: not under
        # pytest's private (0700) tmp_path
        self.hadir = tempfile.mkdtemp(prefix='as4gw-ha-')
        self.cluster = ha.Cluster(self.hadir, base=base, nodes=2,
                                  timing='demo', as4gw_bin=binary, log=self.log,
                                  netns=netns)
        self.clients = clients
        self.msgs = {}
        self.lock = threading.Lock()
        self.violations = []
        self.gws = []
        self.deliverer = None
        self.outdir = os.path.join(self.dir, 'delivered')
        self.stop_load = threading.Event()
        self.threads = []
        self.signer = None
        self.rng = random.Random(15)
        self.first_accept_after = None   # (kill time, Event, [seconds])
        self.counts = {'receipt': 0, '503': 0, 'resend_after_receipt': 0}
        self.timings = []                # per failover: kill -> first new Receipt
        self.up_seconds = None
        self.last_kill = None
        self.kills = []                  # the time of every kill / freeze
        self.takeovers = 0               # claims recovered by check_store
        self.checked = False             # check_store ran: logs not needed
        self.answers = []                # (sent at, seconds to the answer, status)
        self.outages = []                # per failover: answers, kill to new Receipt

    def violation(self, text):
        with self.lock:
            self.violations.append(text)

    # ---- setup ----------------------------------------------------------------
    def start(self):
        t0 = time.time()
        self.cluster.start_db()
        self.up_seconds = time.time() - t0
        dsn = self.cluster.dsn()
        for i in range(2):
            d = os.path.join(self.dir, f'gw{i}')
            os.makedirs(d, exist_ok=True)
            gw = crashlib.Serve(self.binary, d, self.pki, dsn)
            # the background purge every second: it must follow the primary
            with open(gw.config) as f:
                text = f.read()
            with open(gw.config, 'w') as f:
                f.write(text.replace('</signing>', '</signing>\n    <purge>'
                                     '<intervalSeconds>1</intervalSeconds></purge>\n'
                                     f'    <storeTimeoutSeconds>{STORE_TIMEOUT}'
                                     '</storeTimeoutSeconds>', 1))
            self.gws.append(gw.start())
        try:
            self.signer = crashlib.Signer(self.binary, self.pki, self.dir)
        except ImportError:
            sys.stderr.write('halib: lxml/cryptography missing: unsigned messages only\n')
        os.makedirs(self.outdir, exist_ok=True)
        self.deliver_log = open(os.path.join(self.dir, 'deliver.log'), 'ab')
        self.deliverer = subprocess.Popen(
            [self.binary, 'deliver', '-c', self.gws[0].config, '--to-dir', self.outdir,
             '--follow'], stdout=self.deliver_log, stderr=subprocess.STDOUT)
        return self

    def stop(self):
        self.stop_load.set()
        for t in self.threads:
            t.join(timeout=REQUEST_TIMEOUT + 5)
        if self.deliverer is not None and self.deliverer.poll() is None:
            self.deliverer.send_signal(signal.SIGTERM)
            try:
                self.deliverer.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.deliverer.kill()
                self.deliverer.wait()
        for gw in self.gws:
            gw.stop()
        self.cluster.stop()
        if self.violations or not self.checked:
            self.log(f'cluster logs kept in {self.hadir}/log')
        else:
            shutil.rmtree(self.hadir, ignore_errors=True)

    # ---- load -------------------------------------------------------------------
    def new_msg(self):
        mid = f'{uuid.uuid4().hex}@as4gw-ha'
        payload = os.urandom(16).hex().encode() + b'-payload'
        if self.signer is not None and self.rng.random() < 0.5:
            ct, body = self.signer.make(mid, payload)
        else:
            ct, body = as4msg.user_message(mid, payload=payload)
        m = Msg(mid, ct, body, payload)
        with self.lock:
            self.msgs[mid] = m
        return m

    def send(self, m, gw=None):
        """POST m once; True when it got its Receipt."""
        gw = gw or self.gws[self.rng.randrange(len(self.gws))]
        started = time.time()
        with self.lock:
            m.sends += 1
            had = m.receipt is not None
        try:
            status, retry_after, body = post(gw.port, m.ct, m.body)
        except (OSError, http.client.HTTPException) as e:
            self.violation(f'{m.mid}: no answer from a running gateway: {e!r}')
            return False
        with self.lock:
            self.answers.append((started, time.time() - started, status))
        if status == 503:
            if retry_after is None:
                self.violation(f'{m.mid}: 503 without Retry-After')
            with self.lock:
                self.counts['503'] += 1
            return False
        ans = as4msg.Answer(status, {}, body)
        if status != 200 or not ans.is_receipt or ans.ref_to != m.mid:
            self.violation(f'{m.mid}: answer {status} {body[:200]!r}')
            return False
        with self.lock:
            self.counts['receipt'] += 1
            m.receipts += 1
            if had:
                self.counts['resend_after_receipt'] += 1
            if m.receipt is None:
                m.receipt = body
            elif m.receipt != body:
                self.violations.append(f'{m.mid}: Receipt differs from the first one')
            f = self.first_accept_after
            if f is not None and not f[1].is_set() and m.sends == 1 and started > f[0]:
                f[2].append(time.time() - f[0])
                f[1].set()
        return True

    def client(self, seed):
        rng = random.Random(seed)
        while not self.stop_load.is_set():
            if rng.random() < 0.15:
                with self.lock:
                    done = [m for m in self.msgs.values() if m.receipt is not None]
                if done:
                    self.send(rng.choice(done))
                    continue
            m = self.new_msg()
            tries = 0
            # a partner retries a push without a Receipt (AS4 reception
            # awareness); here after 0.2 s instead of the Retry-After
            while not self.send(m) and not self.stop_load.is_set():
                tries += 1
                time.sleep(0.2)
                if tries > 300:
                    break

    def start_load(self):
        for i in range(self.clients):
            t = threading.Thread(target=self.client, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)

    def wait_receipts(self, n, timeout=60):
        """Until n more Receipts have come in."""
        goal = self.counts['receipt'] + n
        deadline = time.time() + timeout
        while self.counts['receipt'] < goal:
            if time.time() > deadline:
                raise RuntimeError(f'only {self.counts["receipt"]} Receipts of {goal}')
            time.sleep(0.05)

    # ---- the price of the second copy (bench) -----------------------------------
    def set_synchronous(self, on, timeout=60):
        """Turn Patroni's synchronous_mode on or off (PATCH /config, the REST
        form of `patronictl edit-config`) and wait until the primary's
        synchronous_standby_names says so."""
        c = self.cluster
        leader = c.leader()
        req = urllib.request.Request(c.rest(leader, '/config'), method='PATCH',
                                     data=json.dumps({'synchronous_mode': on}).encode(),
                                     headers={'Content-Type': 'application/json'})
        urllib.request.urlopen(req, timeout=10).read()
        deadline = time.time() + timeout
        while (c.psql(leader, 'SHOW synchronous_standby_names') != '') != on or \
                (on and c.sync_standby() is None):
            if time.time() > deadline:
                raise RuntimeError(f'synchronous_mode {on} not in effect after {timeout} s')
            time.sleep(0.2)

    def throughput(self, n, clients=8):
        """Push n signed messages, signed before the clock starts, from
        clients threads over both gateways (each retried until it has a
        Receipt); messages per second."""
        if self.signer is None:
            raise RuntimeError('signed pushes need lxml and cryptography')
        todo = []
        for _ in range(n):
            mid = f'{uuid.uuid4().hex}@as4gw-tp'
            payload = os.urandom(16).hex().encode() + b'-payload'
            ct, body = self.signer.make(mid, payload)
            m = Msg(mid, ct, body, payload)
            with self.lock:
                self.msgs[mid] = m
            todo.append(m)
        it = iter(todo)

        def worker(k):
            while True:
                with self.lock:
                    m = next(it, None)
                if m is None:
                    return
                tries = 0
                while not self.send(m, self.gws[k % len(self.gws)]) and tries < 50:
                    tries += 1
                    time.sleep(0.2)
        t0 = time.time()
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return n / (time.time() - t0)

    # ---- failover ---------------------------------------------------------------
    def readyz(self, gw):
        try:
            return post(gw.port, None, None, '/readyz', 'GET')[0]
        except (OSError, http.client.HTTPException):
            return None

    def failover(self, settle_receipts=20, timeout=90, how='kill'):
        """SIGKILL the primary's postmaster (how='kill'), or freeze its whole
        node (how='stop': SIGSTOP of its Patroni, postmaster and backends,
        a hung host: the leader lock expires after ttl, the gateways' waits
        on it after STORE_TIMEOUT; SIGCONT once the standby is promoted), or
        cut its node off the network (how='cut', Run(netns=True): its veth
        down, conf/ha/netns.py; the leader lock expires after ttl, Patroni
        on it demotes it, the gateways' waits on it end after STORE_TIMEOUT;
        healed once the standby is promoted and took a new message); wait
        for the new primary, the first new Receipt after the kill and the
        old primary's return as the synchronous standby.  Returns (old, new,
        seconds kill->accept)."""
        c = self.cluster
        old = c.leader()
        if old is None:
            raise RuntimeError('no primary before the kill')
        pid = c.postmaster_pid(old)
        resume = None
        t_kill = self.last_kill = time.time()
        self.kills.append(t_kill)
        if how == 'stop':
            frozen = process_tree(c.procs[f'patroni{old}'].pid, pid)
            signal_pids(frozen, signal.SIGSTOP)
            resume = functools.partial(signal_pids, frozen, signal.SIGCONT)
        elif how == 'cut':
            c.cut(old)
            resume = functools.partial(c.heal, old)
        else:
            os.kill(pid, signal.SIGKILL)
        try:
            return self._failover_wait(old, t_kill, settle_receipts, timeout, resume)
        finally:
            if resume is not None:
                resume()   # again after a failure: no frozen or cut node left

    def _failover_wait(self, old, t_kill, settle_receipts, timeout, resume):
        c = self.cluster
        # Until Patroni promotes the standby (a second or more) no node takes
        # writes: /readyz must say 503 meanwhile.  (For some milliseconds
        # the killed postmaster's orphaned backends still answer on their
        # open connections, and a commit the standby acknowledged still
        # returns: those Receipts are on the standby.)
        seen, new = set(), None
        while time.time() - t_kill < timeout:
            if 503 not in seen:
                seen.add(self.readyz(self.gws[0]))
            new = next((i for i in range(c.n) if i != old and
                        ha.http_status(c.rest(i, '/primary')) == 200), None)
            if new is not None:
                break
            time.sleep(0.05)
        if new is None:
            raise RuntimeError(f'no new primary within {timeout} s of killing pg{old}')
        if 503 not in seen:
            self.violation(f'/readyz never answered 503 between the kill and the '
                           f'promotion: {sorted(seen, key=str)}')
        # kill -> first Receipt of a message first sent after the promotion
        # was seen (so accepted by the new primary)
        ev, acc = threading.Event(), []
        self.first_accept_after = (time.time(), ev, acc)
        if not ev.wait(timeout):
            raise RuntimeError(f'no Receipt for a new message within {timeout} s of the '
                               f'promotion')
        acc[0] += self.first_accept_after[0] - t_kill
        # the frozen node wakes up: its Patroni finds the lock lost and
        # demotes it (a commit it takes meanwhile waits for its old
        # synchronous standby, then 503 after STORE_TIMEOUT); the cut node
        # is back (its Patroni demoted it during the cut)
        if resume is not None:
            resume()
        self.outages.append(self.outage(t_kill, time.time()))
        for gw in self.gws:
            deadline = time.time() + 30
            while self.readyz(gw) != 200:
                if time.time() > deadline:
                    self.violation(f'gateway on {gw.port}: /readyz not 200 after the failover')
                    break
                time.sleep(0.2)
        self.wait_receipts(settle_receipts)
        deadline = time.time() + timeout
        while c.sync_standby() != old:
            if time.time() > deadline:
                raise RuntimeError(f'pg{old} did not rejoin as the synchronous standby')
            time.sleep(0.5)
        rejoined = time.time() - t_kill
        self.timings.append((old, new, acc[0], rejoined))
        self.log(f'failover pg{old} -> pg{new}: first new Receipt {acc[0]:.2f} s after '
                 f'the kill, pg{old} synchronous standby again after {rejoined:.1f} s; '
                 f'pushes sent since the kill: {self.outages[-1]}')
        return old, new, acc[0]

    def outage(self, t0, t1):
        """What the pushes sent between t0 and t1 got: the counts of Receipts
        and 503s, and the longest a 503 took to come."""
        with self.lock:
            got = [(sec, st) for at, sec, st in self.answers if t0 <= at < t1]
        w503 = [sec for sec, st in got if st == 503]
        return (f'{sum(1 for _, st in got if st == 200)} Receipts, {len(w503)} x 503 '
                f'(the slowest after {max(w503, default=0):.1f} s)')

    def lose_standby(self, timeout=90):
        """The synchronous standby's host dies (SIGKILL of its Patroni and its
        postmaster): with synchronous_mode_strict off, commits wait until
        Patroni's next loop empties synchronous_standby_names, then the
        primary acknowledges alone.  Returns the seconds from the kill to the
        first Receipt of a message first sent after it; then the node is
        started again and must come back as the synchronous standby."""
        c = self.cluster
        s = c.sync_standby()
        if s is None:
            raise RuntimeError('no synchronous standby to lose')
        pid = c.postmaster_pid(s)
        leader = c.leader()
        t_kill = time.time()
        c.stop_node(s, signal.SIGKILL)
        os.kill(pid, signal.SIGKILL)
        # commits wait for the lost standby until Patroni drops it
        while c.psql(leader, 'SHOW synchronous_standby_names') != '':
            if time.time() - t_kill > timeout:
                raise RuntimeError(f'pg{leader} still waits for its lost standby')
            time.sleep(0.1)
        degraded = time.time() - t_kill
        ev, acc = threading.Event(), []
        self.first_accept_after = (time.time(), ev, acc)
        if not ev.wait(timeout):
            raise RuntimeError(f'no Receipt within {timeout} s of losing the standby')
        acc[0] += self.first_accept_after[0] - t_kill
        self.standby_lost = (degraded, acc[0])
        self.wait_receipts(10)
        c.start_node(s)
        deadline = time.time() + timeout
        while c.sync_standby() != s:
            if time.time() > deadline:
                raise RuntimeError(f'pg{s} did not come back as the synchronous standby')
            time.sleep(0.5)
        self.log(f'standby pg{s} lost: dropped from synchronous_standby_names '
                 f'{degraded:.2f} s and first new Receipt {acc[0]:.2f} s after the kill, '
                 f'back as synchronous standby after {time.time() - t_kill:.1f} s')
        return acc[0]

    # ---- the end --------------------------------------------------------------
    def finish(self, rounds=20):
        """Stop the load, send every message without a Receipt again until it
        has one, and every one with a Receipt once more (same bytes)."""
        self.stop_load.set()
        for t in self.threads:
            t.join(timeout=REQUEST_TIMEOUT + 5)
        self.threads = []
        for _ in range(rounds):
            left = [m for m in self.msgs.values() if m.receipt is None]
            if not left:
                break
            for m in left:
                self.send(m)
            time.sleep(0.5)
        for m in list(self.msgs.values()):
            if m.receipt is None:
                self.violation(f'{m.mid}: no Receipt after {m.sends} sends')
            else:
                self.send(m)

    def check_store(self):
        """On the primary: one row per MessageId, receipt and payload as the
        clients got and sent them; every message delivered."""
        c = self.cluster
        db = crashlib.Db(c.node_dsn(c.leader()))
        try:
            inbox, content, purges = db.read(
                'SELECT message_id, receipt FROM inbox',
                'SELECT message_id, content FROM payload WHERE part_no = 0',
                "SELECT extract(epoch FROM max(started_at))::float8 FROM purge_log"
                " WHERE source = 'background' AND outcome = 'ok'")
        finally:
            db.close()
        last_purge = purges[0][0]
        if self.last_kill is not None and (last_purge is None or
                                           last_purge < self.last_kill):
            self.violation('no background purge ran on the primary after the last '
                           'failover (the purge did not follow)')
        ids = [r[0] for r in inbox]
        if len(ids) != len(set(ids)):
            self.violation('a MessageId stored twice')
        stored = {mid: bytes(r) for mid, r in inbox}
        content = {mid: bytes(b) for mid, b in content}
        for m in self.msgs.values():
            if m.receipt is None:
                continue
            if m.mid not in stored:
                self.violation(f'{m.mid}: ACKNOWLEDGED LOSS: Receipt sent, not stored')
            elif stored[m.mid] != m.receipt:
                self.violation(f'{m.mid}: stored receipt differs from the Receipt sent')
            elif content.get(m.mid) != m.payload:
                self.violation(f'{m.mid}: stored payload differs from what was sent')
        extra = set(stored) - set(self.msgs)
        if extra:
            self.violation(f'{len(extra)} stored MessageIds never sent')
        deadline = time.time() + 60
        missing = set(stored)
        while time.time() < deadline:
            missing = {mid for mid in stored if not os.path.isdir(
                os.path.join(self.outdir, crashlib.delivery_dir_name(mid)))}
            if not missing:
                break
            time.sleep(0.5)
        if missing:
            missing -= self.take_over_claims(missing)
        if missing:
            self.violation(f'{len(missing)} stored messages not delivered by the '
                           f'deliverer (it did not follow the primary)')
        self.checked = True
        return len(stored)

    def take_over_claims(self, missing):
        """A claim whose COMMIT reached the synchronous standby while the
        primary died with its answer leaves the row 'claimed' on the new
        primary until the deliverer's stale lease (10 minutes) ends: the
        crash path of `as4gw deliver`, not a deliverer that did not follow.
        Such rows (claimed within 2 s of a kill) are taken over by a
        one-shot `deliver --stale-seconds 0`; the set it delivered."""
        c = self.cluster
        db = crashlib.Db(c.node_dsn(c.leader()))
        try:
            rows, = db.read("SELECT message_id, extract(epoch FROM claimed_at)::float8"
                            " FROM delivery WHERE state = 'claimed'")
        finally:
            db.close()
        near = {mid for mid, at in rows if mid in missing and
                any(abs(at - k) < 2 for k in self.kills)}
        if not near:
            return set()
        subprocess.run([self.binary, 'deliver', '-c', self.gws[0].config, '--to-dir',
                        self.outdir, '--stale-seconds', '0'], capture_output=True,
                       timeout=120)
        done = {mid for mid in near if os.path.isdir(
            os.path.join(self.outdir, crashlib.delivery_dir_name(mid)))}
        self.takeovers = len(done)
        self.log(f'{len(done)} claims in flight at a kill taken over after the lease')
        return done

    def lost(self):
        return sum(1 for v in self.violations if 'ACKNOWLEDGED LOSS' in v)
