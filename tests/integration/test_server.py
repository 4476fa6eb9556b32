"""The running server: HTTPS, SIGTERM drain, /readyz and 503 while PostgreSQL is
away, the request log and X-Request-Id.  The real binary, real stores."""
import http.client
import json
import re
import signal
import socket
import ssl
import subprocess
import threading
import time
import warnings

import pytest

import as4msg
from as4msg import user_message
from conftest import Gateway, make_dsn, new_id, run_as4gw

UUID_RE = re.compile(r'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
LOG_KEYS = ('request_id', 'peer', 'method', 'path', 'status', 'message_id', 'from_party',
            'pmode', 'outcome', 'ebms_code', 'error', 'detail', 'replayed', 'bytes_in', 'ms')


class HttpsGateway(Gateway):
    """A gateway serving HTTPS with the development PKI's tls.crt/tls.key;
    the client trusts ca.crt and checks the name (the cert has IP:127.0.0.1)."""

    def __init__(self, tmp_path, pki, dsn, **kw):
        super().__init__(tmp_path, pki, dsn, **kw)
        with open(self.config) as f:
            text = f.read()
        tls = (f'<tls><certificate>{pki}/tls.crt</certificate>'
               f'<key>{pki}/tls.key</key></tls>\n    <signing>')
        with open(self.config, 'w') as f:
            f.write(text.replace('<signing>', tls, 1))
        self.ctx = ssl.create_default_context(cafile=f'{pki}/ca.crt')

    @property
    def url(self):
        return f'https://127.0.0.1:{self.port}/as4'

    def request(self, method, path, body=None, headers=None, timeout=30):
        c = http.client.HTTPSConnection('127.0.0.1', self.port, timeout=timeout,
                                        context=self.ctx)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return as4msg.Answer(r.status, dict(r.getheaders()), r.read())
        finally:
            c.close()


@pytest.fixture
def https_gateway(backend, tmp_path, pki):
    gw = HttpsGateway(tmp_path, pki, make_dsn(backend, tmp_path)).start()
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc} after SIGTERM: {gw.logtext()[-2000:]}'


def request_lines(gw):
    return [l for l in gw.log_lines() if l.get('event') == 'request']


# ---- HTTPS ------------------------------------------------------------------------

def test_https_push_gets_receipt(https_gateway):
    gw = https_gateway
    mid = new_id()
    ans = gw.post(*user_message(mid))
    assert ans.status == 200 and ans.is_receipt, ans
    assert ans.ref_to == mid and ans.signed
    assert gw.store.counts(mid) == (1, 1, 1)
    assert 'listening on https://' in gw.logtext()


def test_https_negotiates_tls12_or_later(https_gateway, pki):
    with socket.create_connection(('127.0.0.1', https_gateway.port), timeout=10) as raw:
        with https_gateway.ctx.wrap_socket(raw, server_hostname='127.0.0.1') as s:
            assert s.version() in ('TLSv1.2', 'TLSv1.3')
    # TLS 1.2 exactly is still offered
    ctx = ssl.create_default_context(cafile=f'{pki}/ca.crt')
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(('127.0.0.1', https_gateway.port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname='127.0.0.1') as s:
            assert s.version() == 'TLSv1.2'


def test_as4gw_push_over_https(https_gateway, pki, tmp_path):
    gw = https_gateway
    payload = tmp_path / 'p.xml'
    payload.write_bytes(b'<Invoice>tls</Invoice>')
    base = ['push', '--url', gw.url, '--from', 'urn:as4gw:dev:sender',
            '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
            '--action', 'urn:as4gw:dev:Deliver', '--payload', payload,
            '--gateway-cert', f'{pki}/gateway.crt']
    # the development CA is not in the system store: refused before anything is sent
    untrusted = new_id()
    p = run_as4gw(*base, '--message-id', untrusted)
    assert p.returncode == 1
    assert gw.store.counts(untrusted) == (0, 0, 0)
    mid = new_id()
    p = run_as4gw(*base, '--message-id', mid, '--cacert', f'{pki}/ca.crt')
    assert p.returncode == 0, p.stderr
    assert 'signature verified' in p.stderr
    assert gw.store.counts(mid) == (1, 1, 1)
    assert gw.store.totals() == (1, 1, 1)


def _local_openssl_speaks_tls11(pki):
    """Whether this Python/OpenSSL can complete a TLS 1.1 handshake at all
    (with itself); otherwise a refusal would prove nothing about the gateway."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        srv_ctx.minimum_version = srv_ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        cli_ctx.minimum_version = cli_ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    try:
        srv_ctx.set_ciphers('DEFAULT:@SECLEVEL=0')
        cli_ctx.set_ciphers('DEFAULT:@SECLEVEL=0')
        srv_ctx.load_cert_chain(f'{pki}/tls.crt', f'{pki}/tls.key')
    except ssl.SSLError:
        return False
    cli_ctx.check_hostname = False
    cli_ctx.verify_mode = ssl.CERT_NONE
    lsock = socket.socket()
    lsock.bind(('127.0.0.1', 0))
    lsock.listen(1)
    result = {}

    def serve():
        try:
            conn, _ = lsock.accept()
            conn.settimeout(5)
            with srv_ctx.wrap_socket(conn, server_side=True) as s:
                result['server'] = s.version()
        except (OSError, ssl.SSLError):
            pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    ok = False
    try:
        with socket.create_connection(lsock.getsockname(), timeout=5) as raw:
            with cli_ctx.wrap_socket(raw) as s:
                ok = s.version() == 'TLSv1.1'
    except (OSError, ssl.SSLError):
        ok = False
    finally:
        t.join(5)
        lsock.close()
    return ok


def test_tls11_and_below_refused(https_gateway, pki):
    if not _local_openssl_speaks_tls11(pki):
        import sys
        sys.stderr.write('\nSKIPPED (loudly): local OpenSSL cannot offer TLS 1.1\n')
        pytest.skip('LOCAL OPENSSL CANNOT OFFER TLS 1.1: refusal not testable here')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DeprecationWarning)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1
        ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    ctx.set_ciphers('DEFAULT:@SECLEVEL=0')
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(('127.0.0.1', https_gateway.port), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with ctx.wrap_socket(raw) as s:
                s.sendall(b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
                s.recv(100)
    # the gateway is unharmed
    assert https_gateway.get('/healthz').status == 200


def test_plain_http_to_https_port_gets_no_200(https_gateway):
    gw = https_gateway
    mid = new_id()
    ct, body = user_message(mid)
    head = (f'POST /as4 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ct}\r\n'
            f'Content-Length: {len(body)}\r\nConnection: close\r\n\r\n').encode()
    with socket.create_connection(('127.0.0.1', gw.port), timeout=10) as s:
        try:
            s.sendall(head + body)
            got = s.recv(4096)
        except ConnectionError:
            got = b''
    assert not got.startswith(b'HTTP/1.1 200'), got[:200]
    assert not got.startswith(b'HTTP/1.0 200'), got[:200]
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.get('/healthz').status == 200


# ---- SIGTERM drain ------------------------------------------------------------------

def _connect_refused_within(port, seconds):
    """True once a new TCP connection to port is refused (polling)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        except ConnectionResetError:
            pass  # queued on the listening socket as it was closed: poll again
        time.sleep(0.05)
    return False


def test_sigterm_drains_request_in_flight(gateway):
    mid = new_id()
    ct, body = user_message(mid, payload=b'<Invoice>drain</Invoice>' * 200)
    half = len(body) // 2
    head = (f'POST /as4 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ct}\r\n'
            f'Content-Length: {len(body)}\r\nConnection: close\r\n\r\n').encode()
    s = socket.create_connection(('127.0.0.1', gateway.port), timeout=30)
    try:
        s.sendall(head + body[:half])
        time.sleep(0.5)  # the server has read the headers: the request is in flight
        gateway.proc.send_signal(signal.SIGTERM)
        # the listening socket goes away while the request is still open
        assert _connect_refused_within(gateway.port, 10), 'still accepting after SIGTERM'
        assert gateway.proc.poll() is None, 'exited with a request in flight'
        s.sendall(body[half:])
        r = http.client.HTTPResponse(s)
        r.begin()
        ans = as4msg.Answer(r.status, dict(r.getheaders()), r.read())
    finally:
        s.close()
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    assert gateway.proc.wait(timeout=30) == 0
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert bytes(gateway.store.query('SELECT receipt FROM inbox WHERE message_id = ?',
                                     mid)[0][0]) == ans.body
    msgs = [l.get('msg', '') for l in gateway.log_lines()]
    assert any('draining' in m for m in msgs) and any('stopped' in m for m in msgs)


def test_sigterm_with_busy_keepalive_clients_exits_promptly(gateway):
    """Partners pushing back to back on keep-alive connections must not hold the
    drain open until the request deadline (120 s): answers given while draining
    say "Connection: close".  Every Receipt a client got is stored, nothing more."""
    got, errors, lock = [], [], threading.Lock()

    def client():
        c = http.client.HTTPConnection('127.0.0.1', gateway.port, timeout=30)
        try:
            while True:
                mid = new_id()
                ct, body = user_message(mid)
                c.request('POST', '/as4', body, {'Content-Type': ct})
                r = c.getresponse()
                ans = as4msg.Answer(r.status, dict(r.getheaders()), r.read())
                with lock:
                    got.append((mid, ans))
                if (r.getheader('Connection') or '').lower() == 'close':
                    return
        except (OSError, http.client.HTTPException) as e:
            with lock:
                errors.append(e)  # between two requests when the daemon stopped
        finally:
            c.close()

    clients = [threading.Thread(target=client, daemon=True) for _ in range(8)]
    for t in clients:
        t.start()
    deadline = time.monotonic() + 15
    while len(got) < 40 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(got) >= 40, (len(got), errors)
    t0 = time.monotonic()
    gateway.proc.send_signal(signal.SIGTERM)
    try:
        rc = gateway.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail('as4gw still draining 60 s after SIGTERM with busy keep-alive clients')
    took = time.monotonic() - t0
    for t in clients:
        t.join(30)
    assert rc == 0
    assert took < 10, f'drain took {took:.1f}s'
    assert not any(t.is_alive() for t in clients)
    # a request that began after the drain started is not processed: 503
    # (Retry-After, Connection: close) and nothing stored for it
    late = [(m, a) for m, a in got if a.status == 503]
    for m, a in late:
        assert int(a.headers.get('Retry-After', '0')) > 0, a.headers
        assert a.headers.get('Connection', '').lower() == 'close'
        assert gateway.store.counts(m) == (0, 0, 0)
    ok = [(m, a) for m, a in got if a.status != 503]
    bad = [(m, a) for m, a in ok if not (a.status == 200 and a.is_receipt and a.ref_to == m)]
    assert not bad, bad[:1]
    for m, _ in ok[-8:]:
        assert gateway.store.counts(m) == (1, 1, 1)
    assert gateway.store.totals() == (len(ok),) * 3
    closed = [a for _, a in got if a.headers.get('Connection', '').lower() == 'close']
    assert len(closed) + len(errors) == len(clients), (len(closed), errors)


@pytest.mark.parametrize('sig', [signal.SIGTERM, signal.SIGINT])
def test_signal_on_idle_gateway_exits_0_quickly(gateway, sig):
    mid = new_id()
    assert gateway.post(*user_message(mid)).is_receipt
    t0 = time.monotonic()
    gateway.proc.send_signal(sig)
    assert gateway.proc.wait(timeout=10) == 0
    assert time.monotonic() - t0 < 5
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_sighup_with_unchanged_config_keeps_serving(gateway):
    gateway.proc.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    assert gateway.proc.poll() is None
    mid = new_id()
    assert gateway.post(*user_message(mid)).is_receipt
    assert gateway.store.counts(mid) == (1, 1, 1)


# ---- /readyz and 503 while PostgreSQL is away ----------------------------------------

def _assert_503(ans):
    assert ans.status == 503, ans
    assert int(ans.headers.get('Retry-After', '0')) > 0, ans.headers
    assert not ans.is_receipt


def test_postgresql_outage_readyz_503_and_recovery(pg_server, tmp_path, pki):
    """One worker thread, so every step hits the same store connection."""
    gw = Gateway(tmp_path, pki, pg_server.dsn, threads=1).start()
    try:
        assert gw.get('/readyz').status == 200
        first_mid = new_id()
        first = gw.post(*user_message(first_mid))
        assert first.is_receipt, first

        assert pg_server.stop('fast') == 0
        _assert_503(gw.get('/readyz'))
        assert gw.get('/healthz').status == 200  # alive, just not ready
        mid = new_id()
        _assert_503(gw.post(*user_message(mid)))
        _assert_503(gw.post(*user_message(first_mid)))  # even a retry: no stored receipt to read
        _assert_503(gw.get('/readyz'))

        pg_server.start()
        assert gw.get('/readyz').status == 200
        assert gw.store.counts(mid) == (0, 0, 0)  # nothing half-stored
        ans = gw.post(*user_message(mid))
        assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
        assert gw.store.counts(mid) == (1, 1, 1)
        again = gw.post(*user_message(first_mid))
        assert again.body == first.body
        assert gw.store.counts(first_mid) == (1, 1, 1)
        assert gw.store.totals() == (2, 2, 2)
        lines = [l for l in request_lines(gw) if l.get('status') == 503]
        posts = [l for l in lines if l['method'] == 'POST']
        assert len(posts) == 2 and all(l['outcome'] == 'error' for l in posts), lines
        assert [l['message_id'] for l in posts] == [mid, first_mid]
        assert all(l['error'] for l in posts)
        # a failed readiness probe is worth a line; a passing one is not logged
        assert [l['outcome'] for l in lines if l['method'] == 'GET'] == ['not-ready'] * 2
    finally:
        assert gw.stop() == 0


def test_postgresql_outage_with_worker_pool(pg_server, tmp_path, pki):
    """Four workers, each with its own connection: every request during the
    outage is 503 and stores nothing; after PostgreSQL returns every worker
    recovers without a restart, and no request after PostgreSQL is back gets a
    503 (a stale connection is reset and the first command retried once)."""
    threads = 4
    gw = Gateway(tmp_path, pki, pg_server.dsn, threads=threads).start()
    try:
        warm = [new_id() for _ in range(8)]
        for m in warm:
            assert gw.post(*user_message(m)).is_receipt
        assert pg_server.stop('fast') == 0
        down = [new_id() for _ in range(8)]
        for m in down:
            _assert_503(gw.post(*user_message(m)))
        for _ in range(4):
            _assert_503(gw.get('/readyz'))
        pg_server.start()
        for m in down:
            assert gw.store.counts(m) == (0, 0, 0)
        after = []
        for _ in range(threads + 1):
            after.append(gw.get('/readyz').status)
            if after[-1] == 200:
                break
        assert after[-1] == 200, after
        for m in down:
            for _ in range(threads + 1):
                a = gw.post(*user_message(m))
                after.append(a.status)
                if a.status != 503:
                    break
            assert a.status == 200 and a.is_receipt and a.ref_to == m, a
            assert gw.store.counts(m) == (1, 1, 1)
        assert after.count(503) == 0, after
        assert gw.store.totals() == (16, 16, 16)
    finally:
        assert gw.stop() == 0


def _restart_unnoticed(pg_server, tmp_path, pki):
    """A one-worker gateway whose store connection is used, then PostgreSQL
    restarts with no request in between: the connection is stale."""
    gw = Gateway(tmp_path, pki, pg_server.dsn, threads=1).start()
    assert gw.post(*user_message(new_id())).is_receipt
    assert pg_server.stop('fast') == 0
    pg_server.start()
    return gw


# A connection that did not see PostgreSQL restart still looks CONNECTION_OK;
# store_pg_begin() reconnects and retries the first command of a unit of work
# once, so the first request after an unnoticed restart succeeds.


def test_readyz_after_unnoticed_postgresql_restart(pg_server, tmp_path, pki):
    gw = _restart_unnoticed(pg_server, tmp_path, pki)
    try:
        assert gw.get('/readyz').status == 200
    finally:
        assert gw.stop() == 0


def test_push_after_unnoticed_postgresql_restart(pg_server, tmp_path, pki):
    gw = _restart_unnoticed(pg_server, tmp_path, pki)
    try:
        mid = new_id()
        ans = gw.post(*user_message(mid))
        assert ans.status == 200 and ans.is_receipt, ans
    finally:
        assert gw.stop() == 0


# ---- request log and X-Request-Id ----------------------------------------------------

def test_one_log_line_per_request_with_documented_keys(gateway):
    marker = 'PAYLOAD-MARKER-' + new_id()
    payload = f'<Secret>{marker}</Secret>'.encode()
    mid, bad_mid = new_id(), new_id()
    ct, body = user_message(mid, payload=payload)
    bad_ct, bad_body = user_message(bad_mid, payload=payload, action='urn:as4gw:dev:Nope')
    trunc = body[:len(body) - 40]
    sent = [
        ('POST', '/as4', body, {'Content-Type': ct}, 200, 'new'),
        ('POST', '/as4', body, {'Content-Type': ct}, 200, 'duplicate'),
        ('POST', '/as4', bad_body, {'Content-Type': bad_ct}, 200, 'error'),
        ('POST', '/as4', trunc, {'Content-Type': ct}, 400, 'error'),
        ('POST', '/as4', payload, {'Content-Type': 'text/plain'}, 415, 'error'),
        ('GET', '/as4', None, {}, 405, 'error'),
        ('GET', '/nothing-here', None, {}, 404, 'error'),
    ]
    before = len(request_lines(gateway))
    answers = []
    for method, path, b, h, status, _ in sent:
        a = gateway.request(method, path, b, h)
        assert a.status == status, (method, path, a)
        answers.append(a)
    time.sleep(0.2)
    lines = request_lines(gateway)[before:]
    assert len(lines) == len(sent), lines
    ids = [a.headers.get('X-Request-Id') for a in answers]
    assert all(i and UUID_RE.match(i) for i in ids), ids
    assert len(set(ids)) == len(ids)
    by_id = {l['request_id']: l for l in lines}
    assert set(by_id) == set(ids)
    for (method, path, b, _, status, outcome), rid in zip(sent, ids):
        line = by_id[rid]
        assert set(line) - {'ts', 'level', 'event'} <= set(LOG_KEYS), line
        for key in ('request_id', 'peer', 'method', 'path', 'status', 'outcome',
                    'bytes_in', 'ms'):
            assert key in line, (key, line)
        assert line['method'] == method and line['path'] == path
        assert line['status'] == status and line['outcome'] == outcome, line
        assert line['peer'] == '127.0.0.1'
        assert line['bytes_in'] == (len(b) if b else 0)
        assert isinstance(line['ms'], int) and line['ms'] >= 0
    new, dup, refused = (by_id[i] for i in ids[:3])
    for line in (new, dup):
        assert line['message_id'] == mid and line['pmode'] == 'dev-sample'
        assert line['from_party'] == 'urn:as4gw:dev:sender'
        assert 'ebms_code' not in line and 'error' not in line
    assert refused['message_id'] == bad_mid and refused['ebms_code'] == 'EBMS:0010'
    assert refused['error'] and 'detail' in refused
    assert marker not in gateway.logtext()
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.counts(bad_mid) == (0, 0, 0)


def test_every_log_line_is_json(gateway):
    """stderr carries nothing but JSON lines (start, requests, stop)."""
    assert gateway.post(*user_message(new_id())).is_receipt
    assert gateway.get('/nope').status == 404
    assert gateway.stop() == 0
    lines = [l for l in gateway.logtext().splitlines() if l.strip()]
    assert lines
    for l in lines:
        obj = json.loads(l)
        assert isinstance(obj, dict) and 'ts' in obj and 'level' in obj, l
    assert not any(json.loads(l).get('level') == 'warn' for l in lines), lines


def test_x_request_id_matches_log(gateway):
    mid = new_id()
    ans = gateway.post(*user_message(mid))
    rid = ans.headers.get('X-Request-Id')
    assert rid and UUID_RE.match(rid)
    lines = [l for l in request_lines(gateway) if l.get('request_id') == rid]
    assert len(lines) == 1
    assert lines[0]['message_id'] == mid and lines[0]['status'] == 200
    # probes carry an id too, and are not logged as requests
    probe = gateway.get('/healthz')
    assert UUID_RE.match(probe.headers.get('X-Request-Id', ''))
    assert not [l for l in request_lines(gateway)
                if l.get('request_id') == probe.headers['X-Request-Id']]


def test_refused_before_body_is_logged_once_with_request_id(gateway_factory):
    gw = gateway_factory(limits='<maxBodyBytes>2048</maxBodyBytes>').start()
    mid = new_id()
    ct, body = user_message(mid, payload=b'x' * 5000)
    ans = gw.post(ct, body)
    assert ans.status == 413
    rid = ans.headers.get('X-Request-Id')
    time.sleep(0.2)
    lines = [l for l in request_lines(gw) if l.get('request_id') == rid]
    assert len(lines) == 1 and lines[0]['status'] == 413, request_lines(gw)
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.stop() == 0


# ---- issue 10 item 7: the log is valid UTF-8 JSON whatever the bytes -------------

def raw_request(port, head, body=b''):
    """Send raw bytes (no client-side encoding), return the status code."""
    with socket.create_connection(('127.0.0.1', port), timeout=30) as s:
        s.sendall(head + body)
        r = http.client.HTTPResponse(s)
        r.begin()
        r.read()
        return r.status


def test_log_is_valid_utf8_json_with_hostile_bytes(gateway):
    """%ff in the path (decoded to a raw byte), a path cut at 200 bytes in
    the middle of a character, raw bytes >= 0x80 in a MIME header value that
    ends in the log's detail: every log line still decodes as strict UTF-8
    and parses as JSON; invalid bytes became U+FFFD, the path was cut
    between characters."""
    port = gateway.port
    assert raw_request(port, b'GET /%ff%fe%c3 HTTP/1.1\r\nHost: x\r\n\r\n') == 404
    long_path = b'/' + b'a' * 198 + '\u00e9'.encode() * 4        # byte 200 splits a char
    assert raw_request(port, b'GET ' + long_path + b' HTTP/1.1\r\nHost: x\r\n\r\n') == 404
    mid = new_id()
    ct, body = user_message(mid)
    bad = body.replace(b'Content-Transfer-Encoding: binary',
                       b'Content-Transfer-Encoding: bin\xffary\xc3', 1)
    assert bad != body
    refused = gateway.post(ct, bad)
    assert refused.status in (200, 400), refused
    assert gateway.store.counts(mid) == (0, 0, 0)
    assert gateway.stop() == 0
    with open(gateway.log_path, 'rb') as f:
        raw_lines = [l for l in f.read().split(b'\n') if l.strip()]
    lines = [json.loads(l.decode('utf-8', 'strict')) for l in raw_lines]
    paths = [l.get('path') for l in lines if l.get('event') == 'request']
    assert '/\ufffd\ufffd\ufffd' in paths, paths
    cut = [p for p in paths if p and p.startswith('/aaa')]
    assert cut == ['/' + 'a' * 198], cut    # byte 200 would split the first e-acute
    details = [l.get('detail', '') for l in lines if l.get('event') == 'request']
    assert any('bin\ufffdary\ufffd' in d for d in details), details


def test_refused_message_log_line_names_message_id_and_pmode(gateway):
    """Issue 10 item 12: an operator finds a refused message by its
    MessageId, and learns the leg it matched, whenever the gateway got that
    far: the log line of every refusal after eb:MessageInfo was read has
    message_id; after a leg matched, pmode too.  Nothing stored."""
    cases = []
    mid = new_id()      # matched dev-signed, refused: not signed
    cases.append((mid, 'EBMS:0103', 'dev-signed', gateway.post(
        'application/soap+xml', as4msg.envelope(mid, cids=(),
                                                action='urn:as4gw:dev:SignedOnly').encode())))
    mid = new_id()      # no leg
    cases.append((mid, 'EBMS:0010', None, gateway.post(
        'application/soap+xml', as4msg.envelope(mid, cids=(), action='urn:nope').encode())))
    mid = new_id()      # a PartInfo whose part is missing
    cases.append((mid, None, None, gateway.post(
        'application/soap+xml', as4msg.envelope(mid).encode())))
    lines = [l for l in gateway.log_lines() if l.get('event') == 'request']
    for mid, code, pmode, ans in cases:
        assert ans.status == 200 and ans.error_code is not None, ans
        assert code is None or ans.error_code == code, (code, ans.error_code)
        line = [l for l in lines if l.get('message_id') == mid]
        assert len(line) == 1, (mid, lines[-3:])
        assert line[0]['outcome'] == 'error' and line[0]['ebms_code'] == ans.error_code
        assert line[0].get('pmode') == pmode, line[0]
        assert gateway.store.counts(mid) == (0, 0, 0)
