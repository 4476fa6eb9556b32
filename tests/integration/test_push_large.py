"""`as4gw push` of large payloads (issue 14 item 5): a payload file of
--spool-threshold bytes or more is staged from disk into a spool file
(gzip'd on the way with --compress), signed from the mapping, encrypted in
chunks into another spool file and uploaded by libcurl's read callback (or
written by --write-requests) from ranges: never read into memory whole.
Below the threshold the same message takes the in-memory path.  Both sides
are sent to the real gateway (SQLite and PostgreSQL): accepted with a
Receipt whose NRR digests match, and stored byte for byte (checked by
SHA-256 of what `as4gw deliver --to-dir` hands off).  The body
--write-requests writes is posted unchanged with curl and accepted too, and
a large eDelivery AS4 2.0 message (Ed25519, X25519) is opened by the
independent receiver (edelivery2_open.py).  Memory is not asserted here
(bench/ prints it)."""
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from conftest import new_id, run_as4gw

sys.path.insert(0, os.path.dirname(__file__))
import test_push_security as ps  # noqa: E402  (legs, push helper)
from edelivery2_gw import e2pki  # noqa: E402,F401  (fixture)
from test_edelivery2_profiles import e2gw  # noqa: E402,F401  (fixture: the 2.0 legs)

SIZE = 24 << 20            # above the default threshold (8 MiB)
LIMITS = f'<maxBodyBytes>{96 << 20}</maxBodyBytes>'


@pytest.fixture
def gw(gateway_factory):
    return gateway_factory(legs=ps.LEGS, limits=LIMITS).start()


@pytest.fixture(scope='module')
def big(tmp_path_factory):
    """A 24 MiB payload: random octets with compressible stretches, and a
    line that looks like a MIME delimiter (not ours)."""
    path = tmp_path_factory.mktemp('big') / 'archive.bin'
    with open(path, 'wb') as f:
        for i in range(SIZE >> 20):
            f.write(os.urandom(1 << 19) + bytes([i]) * ((1 << 19) - 20)
                    + b'\r\n--MIMEBoundary_\r\n')
    return path


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def delivered(gw, tmp_path, mid):
    """SHA-256 of each part `as4gw deliver --to-dir` hands off for mid."""
    out = tmp_path / 'handoff'
    r = run_as4gw('deliver', '-c', gw.config, '--to-dir', out, '--once', timeout=120)
    assert r.returncode == 0, r.stderr
    [d] = list(out.iterdir())
    meta = json.loads((d / 'message.json').read_text())
    assert meta['message_id'] == mid
    return sorted(sha256_file(p) for p in d.glob('part-*.bin'))


MODES = {
    'signed': dict(action='urn:as4gw:dev:SignedOnly', sign='sender'),
    'signed-encrypted-compressed': dict(action='urn:as4gw:dev:Secure', sign='sender',
                                        encrypt='gateway', compress=True),
}


@pytest.mark.parametrize('side', ['spooled', 'memory'])
@pytest.mark.parametrize('mode', sorted(MODES))
def test_large_push_accepted_and_stored_byte_identical(gw, pki, big, tmp_path, mode, side):
    """The same 24 MiB payload above the threshold (the large path: the
    default threshold) and below it (--spool-threshold over its size: the
    in-memory path): Receipt, NRR digests match, stored byte for byte."""
    mid = new_id()
    extra = ['--timeout', '300', '--spool-dir', tmp_path]
    if side == 'memory':
        extra += ['--spool-threshold', str(SIZE + 1)]
    p = ps.push(gw.url, pki, mid, *extra, payloads=[big], **MODES[mode])
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified, 3 NRR digests match' in p.stderr
    assert gw.store.counts(mid) == (1, 1, 1)
    assert delivered(gw, tmp_path, mid) == [sha256_file(big)]
    assert os.listdir(tmp_path / 'handoff')  # and nothing left in the spool dir
    assert [f for f in os.listdir(tmp_path) if f.startswith('as4gw-spool')] == []


def test_several_large_messages_and_repeats_and_the_saved_request(gw, pki, big, tmp_path):
    """--count 2 builds (and stages) each large message anew; --repeat sends
    the same large body twice (the second gets the stored Receipt); the
    body --save-request wrote is what was sent: replayed, it is a retry."""
    args = ['push', '--url', gw.url, '--from', 'urn:as4gw:dev:sender',
            '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
            '--action', 'urn:as4gw:dev:SignedOnly', '--payload', big, '--sign',
            '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
            '--gateway-cert', f'{pki}/gateway.crt', '--timeout', '300', '--spool-dir', tmp_path]
    r = run_as4gw(*args, '--count', '2', timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'sent 2: 2 ok, 0 failed' in r.stderr
    assert gw.store.totals() == (2, 2, 2)
    mid = new_id()
    saved = tmp_path / 'request.mime'
    r = run_as4gw(*args, '--message-id', mid, '--count', '2', '--repeat', '--save-request',
                  saved, timeout=300)
    assert r.returncode == 0, r.stderr
    assert 'sent 2: 2 ok, 0 failed' in r.stderr
    assert gw.store.totals() == (3, 3, 3)
    assert os.path.getsize(saved) > SIZE
    r = run_as4gw('replay', '--url', gw.url, '--expect', 'receipt', '--timeout', '300', saved,
                  timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert gw.store.totals() == (3, 3, 3)
    assert gw.store.query('SELECT count(*) FROM inbox WHERE message_id = ?', mid)[0][0] == 1


def test_small_payloads_through_the_spooled_path(gw, pki, tmp_path):
    """--spool-threshold 0 sends even a few bytes (and an XML part, whose
    SwA digest is over its canonical form) the large way: accepted, stored
    as sent."""
    x = tmp_path / 'invoice.xml'
    x.write_bytes(ps.XML_PAYLOAD)
    b = tmp_path / 'scan.bin'
    b.write_bytes(ps.BIN_PAYLOAD)
    mid = new_id()
    p = ps.push(gw.url, pki, mid, '--spool-threshold', '0', payloads=[x, b], sign='sender',
                encrypt='gateway', compress=True)
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified, 4 NRR digests match' in p.stderr
    rows = ps.stored_payloads(gw.store, mid)
    assert [r[0] for r in rows] == [ps.XML_PAYLOAD, ps.BIN_PAYLOAD]


def read_requests(path):
    """(Content-Type, offset, length) of each message of a --write-requests
    file, without reading the bodies."""
    out = []
    with open(path, 'rb') as f:
        while True:
            ct = f.readline()
            if not ct:
                return out
            n = int(f.readline())
            out.append((ct.decode().strip(), f.tell(), n))
            f.seek(n, 1)


def test_write_requests_body_of_a_large_payload_accepted_when_posted(gw, pki, big, tmp_path):
    """--write-requests streams the large body to the file; posted unchanged
    with curl it is accepted and the payload stored byte for byte."""
    mid = new_id()
    out = tmp_path / 'load.req'
    p = ps.push(gw.url, pki, mid, '--write-requests', out, '--spool-dir', tmp_path,
                action='urn:as4gw:dev:Secure', payloads=[big], sign='sender',
                encrypt='gateway', compress=True)
    assert p.returncode == 0, p.stderr
    [(ct, off, n)] = read_requests(out)
    assert ct.startswith('multipart/related; boundary=')
    assert os.path.getsize(out) == off + n
    body = tmp_path / 'body.bin'
    with open(out, 'rb') as f, open(body, 'wb') as g:
        f.seek(off)
        g.write(f.read(n))
    assert gw.store.totals() == (0, 0, 0)
    r = subprocess.run(['curl', '-sS', '--max-time', '300', '-H', f'Content-Type: {ct}',
                        '-H', 'MIME-Version: 1.0', '-H', 'Expect:', '--data-binary', f'@{body}',
                        '-w', '\n%{http_code}', gw.url], capture_output=True, timeout=320)
    answer, _, status = r.stdout.rpartition(b'\n')
    assert status == b'200', r.stdout[-2000:] + r.stderr
    assert b'Receipt' in answer and mid.encode() in answer
    assert gw.store.counts(mid) == (1, 1, 1)
    assert delivered(gw, tmp_path, mid) == [sha256_file(big)]


def test_large_edelivery_2_0_message_opens_independently(pki, big, tmp_path):
    """A large payload under --profile edelivery-2.0 (Ed25519 signature,
    X25519 + HKDF key agreement, gzip, aes128-gcm in chunks): the
    independent receiver opens it with the recipient's key and gets the
    payload back byte for byte."""
    import edelivery2 as e2
    import edelivery2_pki as pk
    p = pk.Pki(tmp_path / 'e2')
    rcpt = p.agreement('gateway-ka-x25519', 'x25519')
    s = p.signer('partner-ed25519', 'ed25519')
    out = tmp_path / 'req.bin'
    r = run_as4gw('push', '--from', 'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway',
                  '--service', 'urn:as4gw:dev:service', '--action', 'urn:as4gw:dev:Deliver',
                  '--payload', f'{big};mime=application/octet-stream', '--compress',
                  '--sign', '--sign-cert', s.cert_path, '--sign-key', s.key_path,
                  '--profile', 'edelivery-2.0', '--encrypt', '--recipient-cert', rcpt.cert_path,
                  '--spool-dir', tmp_path, '--write-requests', out, timeout=300)
    assert r.returncode == 0, r.stderr
    [(ct, off, n)] = read_requests(out)
    with open(out, 'rb') as f:
        f.seek(off)
        body = f.read(n)
    o = e2.open_message(ct, body, keys=[(rcpt.cert, rcpt.key)])
    [data] = o.payloads.values()
    assert hashlib.sha256(data).hexdigest() == sha256_file(big)
    si = o.root.find('.//ds:SignedInfo', e2.NS)
    assert si.find('ds:SignatureMethod', e2.NS).get('Algorithm') == e2.ED25519


def test_large_edelivery_2_0_push_accepted_by_the_gateway(e2gw, e2pki, big, tmp_path):
    """The same over HTTP to a gateway's eDelivery AS4 2.0 leg (Ed25519,
    X25519 + HKDF): an Ed25519-signed Receipt whose NRR digests match, the
    payload stored byte for byte."""
    mid = new_id()
    s, x = e2pki.signers['ed25519'], e2pki.agree['x25519']
    r = run_as4gw('push', '--url', e2gw.url, '--from', 'urn:as4gw:e2:partner-20',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:e2:service',
                  '--action', 'urn:as4gw:e2:Deliver20', '--message-id', mid,
                  '--payload', f'{big};mime=application/octet-stream', '--compress',
                  '--sign', '--sign-cert', s.cert_path, '--sign-key', s.key_path,
                  '--profile', 'edelivery-2.0', '--encrypt', '--recipient-cert', x.cert_path,
                  '--gateway-cert', e2pki.gw_sign['gw-ed25519'].cert_path,
                  '--spool-dir', tmp_path, '--timeout', '300', timeout=300)
    assert r.returncode == 0, r.stderr
    assert f'receipt ok: ref {mid} signature verified, 3 NRR digests match' in r.stderr
    assert e2gw.store.counts(mid) == (1, 1, 1)
    assert delivered(e2gw, tmp_path, mid) == [sha256_file(big)]


def test_spool_dir_that_cannot_be_used_fails_before_sending(gw, pki, big, tmp_path):
    """A large payload whose spool directory does not exist: push fails
    naming the spool, nothing is sent or stored."""
    mid = new_id()
    p = ps.push(gw.url, pki, mid, '--spool-dir', tmp_path / 'missing',
                action='urn:as4gw:dev:SignedOnly', payloads=[big], sign='sender')
    assert p.returncode == 1
    assert 'spool' in p.stderr, p.stderr
    assert p.stdout == ''
    assert gw.store.totals() == (0, 0, 0)


@pytest.fixture
def small_fs(tmp_path):
    """A 4 MiB tmpfs (root only: skipped where it cannot be mounted)."""
    d = tmp_path / 'small'
    d.mkdir()
    if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', d],
                      capture_output=True).returncode != 0:
        pytest.skip('cannot mount a tmpfs here (needs root)')
    yield d
    subprocess.run(['umount', d], check=True)


def test_spool_out_of_space_fails_cleanly_before_sending(gw, pki, big, small_fs):
    """ENOSPC while staging a large payload: push says the spool has no
    space left and exits 1; nothing is sent or stored, and the spool
    filesystem is empty again (anonymous files)."""
    mid = new_id()
    p = ps.push(gw.url, pki, mid, '--spool-dir', small_fs, action='urn:as4gw:dev:Secure',
                payloads=[big], sign='sender', encrypt='gateway')
    assert p.returncode == 1
    assert 'spool: no space left' in p.stderr, p.stderr
    assert p.stdout == ''
    assert gw.store.totals() == (0, 0, 0)
    assert os.listdir(small_fs) == []
    st = os.statvfs(small_fs)
    assert st.f_bfree == st.f_blocks


class DropSecondRequest:
    """A TCP relay to the gateway whose FIRST connection, once it has relayed
    an answer, reads the next request whole and closes without answering: a
    kept-alive connection that the server side dropped mid-request.  libcurl
    retries such a request on a new connection (relayed plainly), which
    needs the body read again from the start."""

    def __init__(self, port):
        self.port_to = port
        self.ls = socket.socket()
        self.ls.bind(('127.0.0.1', 0))
        self.ls.listen(8)
        self.port = self.ls.getsockname()[1]
        self.conns = 0
        self.dropped = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c, self.conns == 1), daemon=True).start()

    def _serve(self, c, drop):
        s = socket.create_connection(('127.0.0.1', self.port_to))
        answered = threading.Event()
        got = False

        def back():
            while (d := s.recv(65536)):
                c.sendall(d)
                answered.set()
            c.close()
        threading.Thread(target=back, daemon=True).start()
        c.settimeout(0.5)
        while True:
            try:
                d = c.recv(65536)
            except socket.timeout:
                if drop and answered.is_set() and got:
                    break           # the second request is in: drop it
                continue
            if not d:
                break
            if drop and answered.is_set():
                got = True          # bytes after an answer: request two
                continue
            got = False
            s.sendall(d)
        if drop:
            self.dropped += 1
        c.close()
        s.close()

    def close(self):
        self.ls.close()


def test_a_retried_upload_reads_the_body_again(gw, pki, tmp_path):
    """The large path's body comes from libcurl's read callback; when a
    kept-alive connection is closed mid-request, libcurl sends the request
    again on a new connection, from the start: push's seek callback moves
    the body back (without it: "necessary data rewind wasn't possible").
    --repeat sends the same message twice over one connection; the relay
    drops the second request once."""
    x = tmp_path / 'scan.bin'
    x.write_bytes(os.urandom(300 << 10))
    relay = DropSecondRequest(gw.port)
    try:
        r = run_as4gw('push', '--url', f'http://127.0.0.1:{relay.port}/as4', '--from',
                      'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway', '--service',
                      'urn:as4gw:dev:service', '--action', 'urn:as4gw:dev:SignedOnly',
                      '--payload', x, '--sign', '--sign-cert', f'{pki}/sender.crt',
                      '--sign-key', f'{pki}/sender.key', '--gateway-cert', f'{pki}/gateway.crt',
                      '--spool-threshold', '0', '--spool-dir', tmp_path, '--timeout', '60',
                      '--count', '2', '--repeat', timeout=120)
    finally:
        relay.close()
    assert relay.dropped == 1 and relay.conns >= 2, (relay.dropped, relay.conns)
    assert r.returncode == 0, r.stderr
    assert 'sent 2: 2 ok, 0 failed' in r.stderr
    assert gw.store.totals() == (1, 1, 1)
