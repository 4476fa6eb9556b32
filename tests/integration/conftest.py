"""Integration fixtures: the real as4gw binary over real SQLite and PostgreSQL.

Environment (set by scripts/test): AS4GW_BIN, AS4GW_SOURCE_DIR, AS4GW_TEST_PG_DSN
(an admin DSN of a throwaway server; each gateway gets its own database),
AS4GW_SHARED (../shared with the corpus; corpus tests skip loudly without it).
"""
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
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

    def __init__(self, tmp_path, pki, dsn, legs=DEV_LEG + SIGNED_LEG, limits='',
                 extra_gateway=''):
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
    <threads>4</threads>
    <signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>
    {extra_gateway}
    <limits>{limits}</limits>
  </gateway>
{legs}
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
