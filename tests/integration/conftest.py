"""Integration fixtures: the real as4gw binary over real SQLite and PostgreSQL.

Environment (set by scripts/test): AS4GW_BIN, AS4GW_SOURCE_DIR, AS4GW_TEST_PG_DSN
(an admin DSN of a throwaway server; each gateway gets its own database),
AS4GW_SHARED (../shared with the corpus; corpus tests skip loudly without it).
"""
import glob
import http.client
import json
import os
import pwd
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import as4msg  # noqa: E402

SRC = os.environ.get('AS4GW_SOURCE_DIR',
                     os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..')))
BIN = os.environ.get('AS4GW_BIN', os.path.join(SRC, 'build-test', 'as4gw'))
SHARED = os.environ.get('AS4GW_SHARED', os.path.join(SRC, '..', 'shared'))
PG_DSN = os.environ.get('AS4GW_TEST_PG_DSN')

DEV_LEG = '''
  <pmode id="dev-sample">
    <from role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:Deliver</action>
    <security signing="never" encryption="never"/>
  </pmode>
'''
SIGNED_LEG = '''
  <pmode id="dev-signed">
    <from role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:SignedOnly</action>
    <security signing="required">
      <signer><certificate>{pki}/sender.crt</certificate></signer>
      <trust><anchor>{pki}/ca.crt</anchor></trust>
    </security>
  </pmode>
'''


def shared_path(rel):
    """Absolute path under ../shared, or skip the test LOUDLY when absent."""
    p = os.path.join(SHARED, rel)
    if not os.path.exists(p):
        sys.stderr.write(f'\nSKIPPED (loudly): {rel} not found: ../shared is absent\n')
        pytest.skip(f'SHARED CORPUS ABSENT: {rel}')
    return p


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port



def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'timing: compares response times; run by bench/oracle '
        '(AS4GW_TIMING=1), never by scripts/test (timed assertions on a '
        'shared machine are noise)')


def pytest_collection_modifyitems(config, items):
    """Without AS4GW_TIMING=1 the timing tests are deselected (bench/oracle)."""
    if os.environ.get('AS4GW_TIMING') == '1':
        return
    timed = [i for i in items if i.get_closest_marker('timing') is not None]
    if timed:
        config.hook.pytest_deselected(items=timed)
        items[:] = [i for i in items if i.get_closest_marker('timing') is None]

@pytest.fixture(scope='session')
def pki(tmp_path_factory):
    """A development PKI made by the shipped generator, in a temp dir."""
    d = tmp_path_factory.mktemp('pki')
    subprocess.run([os.path.join(SRC, 'certs', 'gen-dev-pki.sh'), str(d)],
                   check=True, capture_output=True)
    return d


class Store:
    """Direct read access to the gateway's tables (not through as4gw)."""

    def __init__(self, backend, dsn):
        self.backend, self.dsn = backend, dsn

    def query(self, sql, *args):
        if self.backend == 'sqlite':
            con = sqlite3.connect(self.dsn[len('sqlite:'):], timeout=30)
            try:
                return con.execute(sql, args).fetchall()
            finally:
                con.close()
        import psycopg2
        con = psycopg2.connect(self.dsn)
        try:
            with con.cursor() as cur:
                cur.execute(sql.replace('?', '%s'), args)
                rows = cur.fetchall()
            con.rollback()
            return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r)
                    for r in rows]
        finally:
            con.close()

    def execute(self, sql, *args):
        """One statement committed (a write behind the gateway's back, such
        as a purge or an operator's); SQLite with its foreign keys on."""
        if self.backend == 'sqlite':
            con = sqlite3.connect(self.dsn[len('sqlite:'):], timeout=30)
            try:
                con.execute('PRAGMA foreign_keys = ON')
                con.execute(sql, args)
                con.commit()
            finally:
                con.close()
            return
        import psycopg2
        con = psycopg2.connect(self.dsn)
        try:
            with con.cursor() as cur:
                cur.execute(sql.replace('?', '%s'), args)
            con.commit()
        finally:
            con.close()

    def counts(self, message_id):
        """(inbox, payload, delivery) row counts for one MessageId."""
        return tuple(self.query(f'SELECT count(*) FROM {t} WHERE message_id = ?',
                                message_id)[0][0]
                     for t in ('inbox', 'payload', 'delivery'))

    def totals(self):
        return tuple(self.query(f'SELECT count(*) FROM {t}')[0][0]
                     for t in ('inbox', 'payload', 'delivery'))


def make_dsn(backend, tmp_path):
    if backend == 'sqlite':
        return f'sqlite:{tmp_path}/as4gw.db'
    if not PG_DSN:
        sys.stderr.write('\nSKIPPED (loudly): AS4GW_TEST_PG_DSN not set (run scripts/test)\n')
        pytest.skip('POSTGRESQL NOT AVAILABLE: AS4GW_TEST_PG_DSN not set')
    import psycopg2
    name = 'as4gw_' + uuid.uuid4().hex[:12]
    con = psycopg2.connect(PG_DSN)
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'CREATE DATABASE {name}')
    con.close()
    u = urllib.parse.urlsplit(PG_DSN)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, '/' + name, u.query, ''))


class Gateway:
    """One running `as4gw serve` process."""

    # <limits> keys every gateway of the running test gets before its own
    # (the spool_side fixture: the same test through the spooled path)
    default_limits = ''
    spooled = None      # the spool_side fixture's gateways, else None
    spooled_dir = None  # and their spool directory

    def __init__(self, tmp_path, pki, dsn, legs=DEV_LEG + SIGNED_LEG, limits='',
                 extra_gateway='', threads=4):
        limits = Gateway.default_limits + limits
        self.spool_left = None
        self._spool_dir = Gateway.spooled_dir
        if Gateway.spooled is not None:
            Gateway.spooled.append(self)
        self.tmp = tmp_path
        self.dsn = dsn
        self.port = free_port()
        self.config = os.path.join(tmp_path, 'as4gw.xml')
        with open(self.config, 'w') as f:
            f.write(f'''<?xml version="1.0" encoding="UTF-8"?>
<as4gw xmlns="urn:as4gw:config:1">
  <gateway>
    <listen>127.0.0.1:{self.port}</listen>
    <store>{dsn}</store>
    <threads>{threads}</threads>
    <signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>
    {extra_gateway}
    <limits>{limits}</limits>
  </gateway>
{legs.replace('{pki}', str(pki))}
</as4gw>
''')
        self.log_path = os.path.join(tmp_path, f'as4gw-{self.port}.log')
        self.proc = None

    def start(self, *extra):
        self.log = open(self.log_path, 'ab')
        self.proc = subprocess.Popen([BIN, 'serve', '-c', self.config, *extra],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f'as4gw exited {self.proc.returncode}: {self.logtext()}')
            try:
                if self.get('/healthz').status == 200:
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError('as4gw did not become healthy: ' + self.logtext())

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        if Gateway.spool_dir_of(self) is not None:
            self.spool_left = wait_no_spool_fds(self, Gateway.spool_dir_of(self))
            self.spooled_requests = spooled_requests(self)
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        return rc

    def logtext(self):
        with open(self.log_path, 'rb') as f:
            return f.read().decode('utf-8', 'replace')

    def log_lines(self):
        out = []
        for line in self.logtext().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}/as4'

    @staticmethod
    def spool_dir_of(gw):
        """The spool directory the spool_side fixture gave gw, or None."""
        return getattr(gw, '_spool_dir', None)

    def request(self, method, path, body=None, headers=None, timeout=30):
        c = http.client.HTTPConnection('127.0.0.1', self.port, timeout=timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return as4msg.Answer(r.status, dict(r.getheaders()), r.read())
        finally:
            c.close()

    def get(self, path):
        return self.request('GET', path)

    def post(self, content_type, body, path='/as4', headers=None):
        h = {'Content-Type': content_type} if content_type is not None else {}
        h.update(headers or {})
        return self.request('POST', path, body, h)

    @property
    def store(self):
        return Store('sqlite' if self.dsn.startswith('sqlite:') else 'postgresql', self.dsn)


@pytest.fixture(params=['sqlite', 'postgresql'])
def backend(request):
    return request.param


@pytest.fixture
def gateway(backend, tmp_path, pki):
    """A fresh gateway over a fresh store for each test, on both backends."""
    gw = Gateway(tmp_path, pki, make_dsn(backend, tmp_path)).start()
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc} after SIGTERM: {gw.logtext()[-2000:]}'


@pytest.fixture
def gateway_factory(backend, tmp_path, pki):
    """Build gateways with custom legs/limits: factory(legs=..., limits=...)."""
    made = []

    def factory(**kw):
        sub = tmp_path / f'gw{len(made)}'
        sub.mkdir()
        gw = Gateway(sub, pki, make_dsn(backend, sub), **kw)
        made.append(gw)
        return gw

    yield factory
    for gw in made:
        gw.stop()


def new_id():
    return f'{uuid.uuid4()}@as4gw-test'


# ---- issue 14: the spooled receive path --------------------------------------

def spool_limits(spool_dir, threshold=0, reserve=0):
    """<limits> keys that spool every body of threshold bytes or more (0: all)
    into spool_dir."""
    return (f'<spoolDir>{spool_dir}</spoolDir>'
            f'<spoolThresholdBytes>{threshold}</spoolThresholdBytes>'
            f'<spoolReserveBytes>{reserve}</spoolReserveBytes>')


@pytest.fixture(params=['memory', 'spooled'])
def spool_side(request, tmp_path):
    """Both sides of spoolThresholdBytes (issue 14: "test both sides of the
    threshold"): 'memory' runs the test as it is (its bodies are below the
    default 1 MiB), 'spooled' with spoolThresholdBytes 0, so every body and
    every transfer-encoded part goes through a spool file in a directory of
    the test's own; after the test no gateway holds a descriptor into it."""
    if request.param == 'memory':
        yield None
        return
    d = tmp_path / 'spool'
    d.mkdir()
    Gateway.default_limits = spool_limits(d)
    Gateway.spooled = made = []
    Gateway.spooled_dir = str(d)
    try:
        yield str(d)
    finally:
        Gateway.default_limits = ''
        Gateway.spooled = None
        Gateway.spooled_dir = None
    spooled = 0
    for gw in made:
        running = gw.proc is not None and gw.proc.poll() is None
        left = wait_no_spool_fds(gw, str(d)) if running else gw.spool_left
        assert not left, f'spool files left open: {left}'
        spooled += spooled_requests(gw) if running else \
            getattr(gw, 'spooled_requests', 0)
    # the spooled side did go through the spool (as4gw_spooled_requests_total)
    assert not made or spooled > 0, 'no request was spooled'


def spooled_requests(gw):
    """as4gw_spooled_requests_total of a running gateway (0 if unreadable)."""
    try:
        text = gw.get('/metrics').body.decode()
    except OSError:
        return 0
    m = re.search(r'^as4gw_spooled_requests_total (\d+)', text, re.M)
    return int(m.group(1)) if m else 0


def wait_no_spool_fds(gw, spool_dir, timeout=3.0):
    """The gateway's descriptors into spool_dir once its requests are done
    (the spool is freed in the request-completed callback, just after the
    answer is sent): [] when none is left within timeout."""
    deadline = time.time() + timeout
    while True:
        left = open_fds_under(spool_dir, gw.proc.pid)
        if not left or time.time() > deadline:
            return left
        time.sleep(0.05)


def open_fds_under(path, pid=None):
    """Descriptors of process pid (every as4gw serve process when None) whose
    link points into directory path: spool files still open (an O_TMPFILE
    file reads as "PATH/#INODE (deleted)")."""
    pids = [pid] if pid is not None else [
        int(p) for p in os.listdir('/proc') if p.isdigit() and _is_as4gw(int(p))]
    out = []
    for p in pids:
        try:
            fds = os.listdir(f'/proc/{p}/fd')
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f'/proc/{p}/fd/{fd}')
            except OSError:
                continue
            if link.startswith(path.rstrip('/') + '/'):
                out.append((p, fd, link))
    return out


def _is_as4gw(pid):
    try:
        return os.readlink(f'/proc/{pid}/exe') == os.path.realpath(BIN)
    except OSError:
        return False


# ---- added for test_cli.py and test_server.py ------------------------------

def run_as4gw(*args, timeout=60, cwd=None):
    """Run the as4gw binary once: CompletedProcess with text stdout/stderr."""
    return subprocess.run([BIN, *[str(a) for a in args]], capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


def write_config(path, pki, listen='127.0.0.1:0', store=None, legs=DEV_LEG + SIGNED_LEG,
                 tls='', threads=4, signing_key=None):
    """Write a complete configuration file; tls is inserted where the schema
    wants it (before <signing>).  Returns the path."""
    store_el = f'<store>{store}</store>' if store is not None else ''
    key = signing_key or f'{pki}/gateway.key'
    with open(path, 'w') as f:
        f.write(f'''<?xml version="1.0" encoding="UTF-8"?>
<as4gw xmlns="urn:as4gw:config:1">
  <gateway>
    <listen>{listen}</listen>
    {store_el}
    <threads>{threads}</threads>
    {tls}
    <signing><certificate>{pki}/gateway.crt</certificate><key>{key}</key></signing>
  </gateway>
{legs.replace('{pki}', str(pki))}
</as4gw>
''')
    return str(path)


def _pg_bin():
    """Directory of the PostgreSQL server binaries, or None."""
    cand = os.environ.get('AS4GW_PG_BIN')
    if cand and os.path.exists(os.path.join(cand, 'pg_ctl')):
        return cand
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/pg_ctl'),
                   key=lambda p: [int(x) if x.isdigit() else x
                                  for x in re.split(r'(\d+)', p)])
    return os.path.dirname(found[-1]) if found else None


class PgServer:
    """A private throwaway PostgreSQL cluster that a test may stop and start
    (the shared AS4GW_TEST_PG_DSN server must never be stopped)."""

    def __init__(self):
        self.bin = _pg_bin()
        self.dir = tempfile.mkdtemp(prefix='as4gw-pg-')
        self.data = os.path.join(self.dir, 'data')
        self.port = free_port()
        self.user = 'postgres' if os.getuid() == 0 else pwd.getpwuid(os.getuid()).pw_name
        if os.getuid() == 0:
            pw = pwd.getpwnam('postgres')
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def _run(self, *args, check=True):
        cmd = list(args)
        if os.getuid() == 0:
            cmd = ['runuser', '-u', 'postgres', '--'] + cmd
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=120)

    def init(self):
        self._run(os.path.join(self.bin, 'initdb'), '-D', self.data, '-A', 'trust',
                  '-U', self.user, '-E', 'UTF8')
        return self

    def start(self):
        self._run(os.path.join(self.bin, 'pg_ctl'), '-D', self.data, '-w',
                  '-l', os.path.join(self.dir, 'log'), '-o',
                  f'-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1', 'start')
        return self

    def stop(self, mode='fast'):
        return self._run(os.path.join(self.bin, 'pg_ctl'), '-D', self.data, '-w',
                         '-m', mode, 'stop', check=False).returncode

    @property
    def dsn(self):
        return f'postgresql://{self.user}@127.0.0.1:{self.port}/postgres'

    def remove(self):
        self.stop('immediate')
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def pg_server():
    """A private PostgreSQL the test may stop and restart; skips loudly when
    there are no server binaries (or, as root, no postgres user)."""
    why = None
    if _pg_bin() is None:
        why = 'no PostgreSQL server binaries (/usr/lib/postgresql/*/bin)'
    elif os.getuid() == 0:
        try:
            pwd.getpwnam('postgres')
        except KeyError:
            why = 'running as root and there is no postgres user to run initdb'
    if why:
        sys.stderr.write(f'\nSKIPPED (loudly): {why}\n')
        pytest.skip(f'PRIVATE POSTGRESQL NOT AVAILABLE: {why}')
    pg = PgServer()
    try:
        pg.init().start()
        yield pg
    finally:
        pg.remove()


# ---- the attack suite's fixtures ---------------------------------------------

# attacklib.py's fixtures, here so that every test_attacks_*.py file shares one
# attack gateway per backend and spool side (session scope: a fixture imported
# into each test file would be one per file).  Without lxml or cryptography
# the attack files skip, loudly, on their own.
try:
    import cryptography  # noqa: F401  (tamper.py needs both)
    import lxml  # noqa: F401
except ImportError:
    pass
else:
    from attacklib import agw, apki, attack_gw, bombs, fresh_gw, make  # noqa: E402,F401
