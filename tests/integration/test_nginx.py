"""as4gw behind Debian's nginx (issue 4 item 5): the SHIPPED
conf/nginx/as4gw.conf terminating TLS in front of two as4gw processes that
share one PostgreSQL database.

The nginx configuration under test is generated from the shipped file by
replacing only what a test cannot use (ports, certificate paths, log paths;
render_site() fails loudly if one of them is no longer in the file), wrapped
in a minimal nginx.conf (pid, temp and log paths under tmp; `user root;` only
here, when the tests run as root, so the workers can reach pytest's 0700 temp
directories).  nginx runs in the foreground (daemon off) and is stopped with
SIGTERM.

Needs /usr/sbin/nginx (Debian package `nginx`; AS4GW_NGINX overrides the
path) and PostgreSQL (AS4GW_TEST_PG_DSN); skips loudly without either.
"""
import concurrent.futures
import http.client
import glob
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import warnings

import pytest

from as4msg import Answer, user_message
from conftest import SRC, Gateway, free_port, make_dsn, new_id

NGINX = os.environ.get('AS4GW_NGINX', '/usr/sbin/nginx')
SHIPPED = os.path.join(SRC, 'conf', 'nginx', 'as4gw.conf')
TRUST_NGINX = '<trustedProxies><proxy>127.0.0.1</proxy></trustedProxies>'
PARTNER = '127.0.0.2'          # a partner's address: Linux routes 127/8 to lo
FORGED = '203.0.113.9'         # TEST-NET-3: an address nobody has
# The shipped client_max_body_size is the gateway's maxBodyBytes default,
# 8 GiB (issue 14; test_shipped_body_cap_is_the_gateways_default); the stack
# runs both at 32 MiB so a body of exactly the cap can be sent.
MAX_BODY = 32 * 1024 * 1024
SHIPPED_MAX_BODY = 'client_max_body_size 8g;'
GW_MAX_BODY = f'<maxBodyBytes>{MAX_BODY}</maxBodyBytes>'

if not os.access(NGINX, os.X_OK):
    sys.stderr.write(f'\nSKIPPED (loudly): {NGINX} not found: install the Debian package nginx\n')
    pytest.skip(f'NGINX NOT INSTALLED: {NGINX} (apt-get install nginx)',
                allow_module_level=True)


# ---- the nginx configuration, generated from the shipped file --------------

def render_site(tmp, port, upstream_ports, pki, client_ca=None):
    """The shipped server + upstream block with test ports and paths.  Each
    replacement must match exactly as often as expected: if the shipped file
    changes shape, this fails instead of silently testing something else."""
    with open(SHIPPED) as f:
        text = f.read()
    subs = [
        ('    listen 443 ssl;\n', f'    listen 127.0.0.1:{port} ssl;\n', 1),
        ('    listen [::]:443 ssl;\n', '', 1),     # no IPv6 needed in the test
        ('server 127.0.0.1:8080 ', f'server 127.0.0.1:{upstream_ports[0]} ', 1),
        # the shipped file has one instance and a commented second one
        # (issue 11 item 11): the tests run two, as the comment says to
        ('#server 127.0.0.1:8081 ', f'server 127.0.0.1:{upstream_ports[1]} ', 1),
        ('/etc/as4gw/tls/REPLACE-ME-server-fullchain.pem', f'{pki}/tls.crt', 1),
        ('/etc/as4gw/tls/REPLACE-ME-server.key', f'{pki}/tls.key', 1),
        ('/var/log/nginx/', f'{tmp}/', 2),
        (SHIPPED_MAX_BODY, 'client_max_body_size 32m;', 1),
    ]
    if client_ca is not None:   # the optional mutual-TLS lines, uncommented
        subs += [
            ('#ssl_client_certificate /etc/as4gw/tls/REPLACE-ME-partner-ca-bundle.pem;',
             f'ssl_client_certificate {client_ca};', 1),
            ('#ssl_verify_client on;', 'ssl_verify_client on;', 1),
            ('#ssl_verify_depth 3;', 'ssl_verify_depth 3;', 1),
        ]
    for old, new, n in subs:
        assert text.count(old) == n, \
            f'{SHIPPED} no longer contains {old!r} {n} time(s): update render_site()'
        text = text.replace(old, new)
    live = [l for l in text.splitlines()
            if 'REPLACE-ME' in l and not l.lstrip().startswith('#')]
    assert [l.split()[0] for l in live] == ['server_name'], live
    return text


DEBIAN_CONF = '/etc/nginx/nginx.conf'


def debian_wrapper(tmp, site, user, temps):
    """Debian's own /etc/nginx/nginx.conf with the site where the install
    instructions put it (conf.d/*.conf), and only the paths a test cannot use
    changed: its http-level settings (ssl_protocols TLSv1 TLSv1.1 ..., gzip)
    must not weaken the shipped server block.  None when there is no such
    file or it no longer has the expected shape."""
    if not os.path.exists(DEBIAN_CONF):
        return None
    with open(DEBIAN_CONF) as f:
        text = f.read()
    # (pattern, replacement): the replacement keeps group 1, the indentation
    subs = [
        (r'(?m)^()user\s+[^;]+;\n', user),
        (r'(?m)^()pid\s+[^;]+;', f'pid {tmp}/nginx.pid;'),
        (r'(?m)^()error_log\s+[^;]+;', f'error_log {tmp}/nginx-error.log info;'),
        (r'(?m)^(\s*)access_log\s+[^;]+;', f'access_log {tmp}/nginx-default-access.log;'),
        (r'(?m)^(\s*)include /etc/nginx/conf\.d/\*\.conf;', f'include {site};'),
        (r'(?m)^(\s*)include /etc/nginx/sites-enabled/\*;', '# (sites-enabled left out)'),
        (r'(?m)^()http \{\n', 'http {\n' + temps),
    ]
    for pattern, repl in subs:
        text, n = re.subn(pattern, lambda m, r=repl: m.group(1) + r, text)
        if n != 1:
            return None
    return 'daemon off;\n' + text


class Nginx:
    """Debian's nginx in the foreground with a generated configuration:
    the shipped site inside a minimal nginx.conf, or (debian=True) inside a
    copy of Debian's own /etc/nginx/nginx.conf."""

    def __init__(self, tmp, upstream_ports, pki, client_ca=None, debian=False):
        self.tmp = str(tmp)
        os.makedirs(self.tmp, exist_ok=True)
        self.port = free_port()
        site = os.path.join(self.tmp, 'as4gw.conf')
        with open(site, 'w') as f:
            f.write(render_site(self.tmp, self.port, upstream_ports, pki, client_ca))
        self.conf = os.path.join(self.tmp, 'nginx.conf')
        user = 'user root;\n' if os.getuid() == 0 else ''
        temps = ''.join(f'    {k}_temp_path {self.tmp}/{k};\n'
                        for k in ('client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'))
        if debian:
            text = debian_wrapper(self.tmp, site, user, temps)
            if text is None:
                sys.stderr.write(f'\nSKIPPED (loudly): {DEBIAN_CONF} absent or not Debian\'s\n')
                pytest.skip(f'DEBIAN NGINX.CONF NOT USABLE: {DEBIAN_CONF}')
        else:
            text = f'''# test wrapper around the shipped conf/nginx/as4gw.conf
{user}daemon off;
worker_processes 1;
pid {self.tmp}/nginx.pid;
error_log {self.tmp}/nginx-error.log info;
events {{ worker_connections 1024; }}
http {{
{temps}    access_log {self.tmp}/nginx-default-access.log;
    include {site};
}}
'''
        with open(self.conf, 'w') as f:
            f.write(text)
        self.proc = None

    def start(self):
        t = subprocess.run([NGINX, '-t', '-p', self.tmp, '-c', self.conf],
                           capture_output=True, text=True)
        assert t.returncode == 0, f'nginx -t refused the generated config:\n{t.stderr}'
        self.err = open(os.path.join(self.tmp, 'nginx-stderr.log'), 'ab')
        self.proc = subprocess.Popen([NGINX, '-p', self.tmp, '-c', self.conf],
                                     stdout=self.err, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f'nginx exited {self.proc.returncode}: {self.errors()}')
            try:
                socket.create_connection(('127.0.0.1', self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError('nginx did not start listening: ' + self.errors())

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.err.close()

    def errors(self):
        out = []
        for name in ('nginx-stderr.log', 'nginx-error.log', 'as4gw.error.log'):
            p = os.path.join(self.tmp, name)
            if os.path.exists(p):
                with open(p, errors='replace') as f:
                    out.append(f'--- {name}\n' + f.read()[-3000:])
        return '\n'.join(out)

    def access_log(self):
        with open(os.path.join(self.tmp, 'as4gw.access.log'), errors='replace') as f:
            return f.read().splitlines()


def tls_context(pki, client_cert=None):
    """Verifies nginx's certificate (dev PKI tls.crt: SAN IP 127.0.0.1)
    against the dev CA, as a partner would."""
    ctx = ssl.create_default_context(cafile=f'{pki}/ca.crt')
    if client_cert:
        ctx.load_cert_chain(f'{pki}/{client_cert}.crt', f'{pki}/{client_cert}.key')
    return ctx


def https(port, pki, method, path, body=None, headers=None, source='127.0.0.1',
          client_cert=None, timeout=60):
    """One request over a fresh TLS connection from the given source address."""
    c = http.client.HTTPSConnection('127.0.0.1', port, context=tls_context(pki, client_cert),
                                    timeout=timeout, source_address=(source, 0))
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return Answer(r.status, dict(r.getheaders()), r.read())
    finally:
        c.close()


def push(port, pki, mid, source='127.0.0.1', headers=None, **kw):
    ct, body = user_message(mid)
    h = {'Content-Type': ct}
    h.update(headers or {})
    return https(port, pki, 'POST', '/as4', body, h, source=source, **kw)


def handshake(port, pki, version, ciphers=None):
    """TLS handshake only: the negotiated (version, cipher), or None when
    nginx refuses it."""
    ctx = tls_context(pki)
    ctx.minimum_version = ctx.maximum_version = version
    if ciphers:
        ctx.set_ciphers(ciphers)
    try:
        with ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=10),
                             server_hostname='127.0.0.1') as s:
            return s.version(), s.cipher()[0]
    except ssl.SSLError:
        return None


def assert_tls_policy(port, pki):
    """TLS 1.2 and 1.3 with the ENTSOG 2.2.6.1.3 suites; no TLS 1.1, no
    TLS 1.2 suite without forward secrecy or AEAD (all of which a default
    nginx/OpenSSL set-up would accept: HIGH:!aNULL:!MD5)."""
    v12, v13 = ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3
    assert handshake(port, pki, v13)[0] == 'TLSv1.3'
    assert handshake(port, pki, v12) in [('TLSv1.2', c) for c in
                                         ('ECDHE-RSA-AES256-GCM-SHA384',
                                          'ECDHE-RSA-AES128-GCM-SHA256')]
    assert handshake(port, pki, v12, 'ECDHE-RSA-AES128-GCM-SHA256') == \
        ('TLSv1.2', 'ECDHE-RSA-AES128-GCM-SHA256')
    for weak in ('ECDHE-RSA-AES128-SHA256', 'ECDHE-RSA-AES256-SHA', 'AES128-GCM-SHA256',
                 'ECDHE-RSA-CHACHA20-POLY1305'):
        assert handshake(port, pki, v12, weak) is None, f'{weak} accepted'
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with warnings.catch_warnings():     # TLSv1_1 is deprecated: that is the point
            warnings.simplefilter('ignore', DeprecationWarning)
            ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_1
        ctx.set_ciphers('ALL:@SECLEVEL=0')  # so that this client can offer it
    except (ValueError, ssl.SSLError):
        sys.stderr.write('\nNOTE: this OpenSSL cannot offer TLS 1.1; refusal not checked\n')
        return
    with pytest.raises((ssl.SSLError, ConnectionError)):
        with ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=10)):
            pass


def access_line(ngx, needle):
    """The last line of nginx's as4gw access log containing needle (nginx
    writes it just after answering: wait a little)."""
    deadline = time.time() + 10
    while True:
        lines = [l for l in ngx.access_log() if needle in l]
        if lines:
            return lines[-1]
        assert time.time() < deadline, f'{needle} not in the access log'
        time.sleep(0.05)


def requests_seen(gw, mid=None, path=None):
    """The gateway's request log lines, optionally for one MessageId or path."""
    return [l for l in gw.log_lines() if l.get('event') == 'request'
            and (mid is None or l.get('message_id') == mid)
            and (path is None or l.get('path') == path)]


def stored_source(gw, mid):
    return gw.store.query('SELECT source FROM inbox WHERE message_id = ?', mid)[0][0]


# ---- fixtures ---------------------------------------------------------------

@pytest.fixture(scope='module')
def stack(tmp_path_factory, pki):
    """nginx (shipped config) -> two as4gw instances -> one PostgreSQL."""
    root = tmp_path_factory.mktemp('nginx-stack')
    dsn = make_dsn('postgresql', root)
    gws = []
    for i in range(2):
        sub = root / f'gw{i}'
        sub.mkdir()
        gws.append(Gateway(sub, pki, dsn, extra_gateway=TRUST_NGINX, limits=GW_MAX_BODY))
    ngx = None
    try:
        for gw in gws:      # one after the other: the first creates the schema
            gw.start()
        ngx = Nginx(root / 'nginx', [gw.port for gw in gws], pki).start()
        yield ngx, gws
    finally:
        if ngx is not None:
            ngx.stop()
        for gw in gws:
            gw.stop()


# ---- tests ------------------------------------------------------------------

def test_same_message_id_pushed_concurrently_through_nginx(stack, pki):
    """Issue 4 item 5 / NEGATIVE-CASES 59 across instances: 32 concurrent
    pushes of one MessageId, spread by nginx over both instances, end as one
    inbox row and 32 byte-identical Receipts."""
    ngx, gws = stack
    mid = new_id()
    n = 32
    start = threading.Barrier(n)

    def one(_):
        start.wait()
        return push(ngx.port, pki, mid, source=PARTNER)

    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        answers = list(ex.map(one, range(n)))
    assert all(a.status == 200 and a.is_receipt and a.ref_to == mid for a in answers), \
        [a for a in answers if not a.is_receipt][:2]
    assert len({a.body for a in answers}) == 1, 'receipts differ'
    assert gws[0].store.counts(mid) == (1, 1, 1)
    row = gws[0].store.query('SELECT duplicates, receipt FROM inbox WHERE message_id = ?', mid)
    assert row[0][0] == n - 1 and row[0][1] == answers[0].body
    per_instance = [len(requests_seen(gw, mid)) for gw in gws]
    assert sum(per_instance) == n, per_instance
    assert all(k > 0 for k in per_instance), \
        f'nginx sent all {n} requests to one instance: {per_instance}'


def test_forwarded_client_address_is_stored(stack, pki):
    """X-Forwarded-For from nginx (a trusted proxy) is the stored source;
    the partner's own forged X-Forwarded-For is replaced by nginx."""
    ngx, gws = stack
    mid = new_id()
    ans = push(ngx.port, pki, mid, source=PARTNER, headers={'X-Forwarded-For': FORGED})
    assert ans.is_receipt, ans
    assert stored_source(gws[0], mid) == PARTNER
    line = [l for gw in gws for l in requests_seen(gw, mid)]
    assert len(line) == 1 and FORGED not in str(line[0]), line


@pytest.mark.parametrize('xff', [FORGED, f'{FORGED}, 127.0.0.1', '127.0.0.1'])
def test_direct_request_from_untrusted_peer_ignores_forwarded_for(stack, xff):
    """A partner that reaches an instance directly (not through nginx) cannot
    choose the address the gateway stores: its peer is not a trusted proxy."""
    _, gws = stack
    mid = new_id()
    ct, body = user_message(mid)
    c = http.client.HTTPConnection('127.0.0.1', gws[1].port, timeout=30,
                                   source_address=(PARTNER, 0))
    try:
        c.request('POST', '/as4', body, {'Content-Type': ct, 'X-Forwarded-For': xff})
        r = c.getresponse()
        ans = Answer(r.status, dict(r.getheaders()), r.read())
    finally:
        c.close()
    assert ans.is_receipt, ans
    assert stored_source(gws[1], mid) == PARTNER


def test_body_over_client_max_body_size_is_413_from_nginx(stack, pki):
    """Content-Length one byte over the gateway's maxBodyBytes: nginx answers
    413 itself from the header, no instance sees the request, nothing stored."""
    ngx, gws = stack
    before = gws[0].store.totals()
    seen = [len(requests_seen(gw)) for gw in gws]
    raw = socket.create_connection(('127.0.0.1', ngx.port), timeout=30)
    s = tls_context(pki).wrap_socket(raw, server_hostname='127.0.0.1')
    try:
        s.sendall(b'POST /as4 HTTP/1.1\r\nHost: localhost\r\n'
                  b'Content-Type: application/soap+xml\r\n'
                  b'Content-Length: %d\r\n\r\n' % (MAX_BODY + 1) + b'<x/>' * 1024)
        answer = s.recv(65536)
    finally:
        s.close()
    assert answer.startswith(b'HTTP/1.1 413'), answer[:200]
    assert b'nginx' in answer, answer[:400]     # nginx's own error page
    assert gws[0].store.totals() == before
    assert [len(requests_seen(gw)) for gw in gws] == seen


def test_body_of_exactly_max_body_size_reaches_the_gateway(stack, pki):
    """The other side of the alignment: nginx passes exactly maxBodyBytes on
    (the instance judges it: 415 for this media type), nothing stored."""
    ngx, gws = stack
    before = gws[0].store.totals()
    ans = https(ngx.port, pki, 'POST', '/as4', b'\0' * MAX_BODY,
                {'Content-Type': 'text/plain'}, timeout=120)
    assert ans.status == 415, ans
    assert any(l.get('status') == 415 and l.get('bytes_in') == MAX_BODY
               for gw in gws for l in requests_seen(gw)), 'no instance logged it'
    assert gws[0].store.totals() == before


def test_slow_body_streamed_to_the_instance(stack, pki):
    """proxy_request_buffering off (issue 14: nginx must not write a multi-GiB
    body to its temp directory before the gateway spools it again): a partner
    dripping its body over 6 s is passed through as it arrives -- the
    instance's own request time covers the drip -- and gets its Receipt (the
    drip stays inside connectionTimeoutSeconds and requestDeadlineSeconds)."""
    ngx, gws = stack
    mid = new_id()
    ct, body = user_message(mid)
    raw = socket.create_connection(('127.0.0.1', ngx.port), timeout=30)
    s = tls_context(pki).wrap_socket(raw, server_hostname='127.0.0.1')
    try:
        s.sendall(b'POST /as4 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'
                  b'Content-Type: %s\r\nContent-Length: %d\r\n\r\n' % (ct.encode(), len(body)))
        step = len(body) // 12 + 1
        for i in range(0, len(body), step):
            s.sendall(body[i:i + step])
            time.sleep(0.5)
        answer = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            answer += chunk
    finally:
        s.close()
    assert answer.startswith(b'HTTP/1.1 200'), answer[:200]
    line = [l for gw in gws for l in requests_seen(gw, mid)]
    assert len(line) == 1 and line[0]['ms'] >= 3000, line
    assert gws[0].store.counts(mid) == (1, 1, 1)


def test_shipped_body_cap_is_the_gateways_default():
    """The shipped client_max_body_size is the gateway's maxBodyBytes default
    (pmode-check prints it: 8 GiB), and the AS4 location streams the body."""
    with open(SHIPPED) as f:
        text = f.read()
    assert text.count(SHIPPED_MAX_BODY) == 1
    assert re.search(r'(?m)^\s*proxy_request_buffering off;', text)
    with open(os.path.join(SRC, 'conf', 'as4gw.xml')) as f:
        assert '<maxBodyBytes>8589934592</maxBodyBytes>' in f.read()


def test_slow_header_cut_by_nginx(stack, pki):
    """client_header_timeout 10s is a deadline for the whole head, not an
    idle timer: a head trickled at 1 byte / 0.5 s (never idle) is cut by
    10 + 3 s, and no instance ever sees it."""
    ngx, gws = stack
    seen = [len(requests_seen(gw)) for gw in gws]
    head = (b'POST /as4 HTTP/1.1\r\nHost: localhost\r\nX-Padding: ' + b'p' * 300 + b'\r\n\r\n')
    raw = socket.create_connection(('127.0.0.1', ngx.port), timeout=30)
    s = tls_context(pki).wrap_socket(raw, server_hostname='127.0.0.1')
    s.settimeout(0.5)
    t0, sent, took = time.monotonic(), 0, None
    try:
        while time.monotonic() - t0 < 25 and took is None:
            try:
                if s.recv(4096) == b'':
                    took = time.monotonic() - t0
            except TimeoutError:
                s.send(head[sent:sent + 1])
                sent += 1
            except (OSError, ssl.SSLError):
                took = time.monotonic() - t0
    finally:
        s.close()
    assert took is not None and 9 <= took <= 13, f'cut after {took} s ({sent} bytes sent)'
    assert sent < len(head)
    assert [len(requests_seen(gw)) for gw in gws] == seen


@pytest.mark.parametrize('path', ['/metrics', '/healthz', '/readyz', '/', '/as4/../metrics'])
def test_internal_endpoints_not_public(stack, pki, path):
    """Only /as4 is exposed: /metrics, health and readiness are 404 from
    nginx and never reach an instance."""
    ngx, gws = stack
    if path in ('/metrics', '/healthz', '/readyz'):   # control: it exists inside
        assert gws[0].get(path).status == 200
    seen = [len(requests_seen(gw)) for gw in gws]
    ans = https(ngx.port, pki, 'GET', path)
    assert ans.status == 404, ans
    assert b'nginx' in ans.body, ans
    assert [len(requests_seen(gw)) for gw in gws] == seen
    assert 'upstream=-/' in access_line(ngx, f'"GET {path} HTTP/1.1"')


def test_only_post_on_as4(stack, pki):
    ngx, gws = stack
    seen = [len(requests_seen(gw)) for gw in gws]
    assert https(ngx.port, pki, 'GET', '/as4').status == 403
    assert [len(requests_seen(gw)) for gw in gws] == seen
    assert 'upstream=-/' in access_line(ngx, '"GET /as4 HTTP/1.1"')


def test_tls_policy(stack, pki):
    """ENTSOG AS4 profile 2.2.6.1.2-3: TLS 1.2 and 1.3 only, PFS + AEAD."""
    ngx, _ = stack
    assert_tls_policy(ngx.port, pki)


def test_site_inside_debians_own_nginx_conf(stack, pki, tmp_path):
    """Installed as documented (Debian's nginx.conf includes it from
    conf.d/): it loads, pushes get their Receipts, and Debian's http-level
    `ssl_protocols TLSv1 TLSv1.1 ...` and `ssl_prefer_server_ciphers on`
    do not change its TLS policy."""
    _, gws = stack
    ngx = Nginx(tmp_path / 'debian', [gw.port for gw in gws], pki, debian=True).start()
    try:
        mid = new_id()
        assert push(ngx.port, pki, mid, source=PARTNER).is_receipt
        assert stored_source(gws[0], mid) == PARTNER
        assert_tls_policy(ngx.port, pki)
    finally:
        ngx.stop()


def test_optional_client_certificate_block(stack, pki, tmp_path):
    """The shipped mutual-TLS lines, uncommented: a partner without a client
    certificate gets 400 from nginx, one with a certificate from the
    configured CA gets its Receipt."""
    _, gws = stack
    ngx = Nginx(tmp_path / 'mtls', [gw.port for gw in gws], pki,
                client_ca=f'{pki}/ca.crt').start()
    try:
        before = gws[0].store.totals()
        ans = push(ngx.port, pki, new_id())
        assert ans.status == 400, ans
        assert gws[0].store.totals() == before
        mid = new_id()
        ans = push(ngx.port, pki, mid, client_cert='sender')
        assert ans.is_receipt, ans
        assert access_line(ngx, 'client_cert=SUCCESS')
    finally:
        ngx.stop()


def shipped_upstream_keepalive_timeout():
    """keepalive_timeout (seconds) of the shipped upstream block."""
    with open(SHIPPED) as f:
        text = f.read()
    block = text[text.index('upstream as4gw_backend {'):]
    block = block[:block.index('\n}\n')]
    m = re.search(r'(?m)^\s*keepalive_timeout\s+(\d+)s;', block)
    assert m, 'no keepalive_timeout in the upstream block'
    return int(m.group(1))


def gateway_header_timeout_default():
    """The gateway's headerTimeoutSeconds default: its idle cut of a
    keep-alive connection."""
    for path in sorted(glob.glob(os.path.join(SRC, 'src', 'conf', 'conf*.c'))):
        with open(path) as f:
            m = re.search(r'lim->header_timeout_s = (\d+);', f.read())
        if m:
            return int(m.group(1))
    raise AssertionError('headerTimeoutSeconds default not found in src/conf')


def test_upstream_keepalive_closes_before_the_gateway_does(stack, pki):
    """Issue 10 item 9d: nginx closes an idle upstream connection clearly
    before the gateway's idle cut (headerTimeoutSeconds), so it never reuses
    one the gateway is closing; pushes after an idle pause longer than the
    gateway's cut all get their Receipts and nginx logs no upstream that
    closed under it."""
    ngx, gws = stack
    cut = gateway_header_timeout_default()
    assert shipped_upstream_keepalive_timeout() * 2 <= cut
    for _ in range(4):                      # connections into nginx's cache
        assert push(ngx.port, pki, new_id(), source=PARTNER).is_receipt
    time.sleep(cut + 1.5)
    answers = [push(ngx.port, pki, new_id(), source=PARTNER) for _ in range(6)]
    assert all(a.status == 200 and a.is_receipt for a in answers), \
        [a.status for a in answers]
    assert 'prematurely closed' not in ngx.errors()


def test_instance_down_push_retried_on_the_other(stack, pki):
    """proxy_next_upstream ... non_idempotent: with one instance killed, every
    push still gets its Receipt (nginx re-sends it to the other instance,
    safe because a push is idempotent per MessageId), then the instance
    comes back.  Runs last in this module: it restarts an instance."""
    ngx, gws = stack
    gws[0].proc.kill()
    gws[0].proc.wait()
    gws[0].log.close()
    try:
        for _ in range(6):
            mid = new_id()
            ans = push(ngx.port, pki, mid)
            assert ans.is_receipt, ans
            assert gws[1].store.counts(mid) == (1, 1, 1)
    finally:
        gws[0].start()
    dead = f'127.0.0.1:{gws[0].port}'
    retried = [l for l in ngx.access_log() if f'upstream={dead}, ' in l]
    assert retried and ' 200 ' in retried[-1], \
        f'no push was re-sent from {dead} to the other instance: {ngx.access_log()[-6:]}'
    mid = new_id()
    assert push(ngx.port, pki, mid).is_receipt


# ---- issue 10 item 9a: one request never takes an instance out --------------

def hostile_request(port, pki, head, body_len=4 << 20):
    """One POST with the given extra header lines and a body of body_len
    bytes, sent at once (nginx buffers it): the status line nginx answers
    with, or None when the connection broke without one."""
    raw = socket.create_connection(('127.0.0.1', port), timeout=60)
    s = tls_context(pki).wrap_socket(raw, server_hostname='127.0.0.1')
    try:
        s.sendall(b'POST ' + head[0] + b' HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n'
                  b'Content-Type: application/soap+xml\r\n' + head[1] +
                  b'Content-Length: %d\r\n\r\n' % body_len)
        chunk, sent = b'<' * 65536, 0
        try:
            while sent < body_len:
                s.sendall(chunk[:body_len - sent])
                sent += len(chunk)
        except OSError:
            pass
        answer = b''
        while True:
            try:
                data = s.recv(65536)
            except OSError:
                break
            if not data:
                break
            answer += data
    finally:
        s.close()
    return answer.split(b'\r\n', 1)[0] if answer else None


HOSTILE_HEADS = {
    # ~30 KiB of headers (issue 10 item 9a): over nginx's head limit
    'big-headers': (b'/as4', b''.join(b'X-Pad-%d: ' % i + b'p' * 1000 + b'\r\n'
                                      for i in range(30))),
    # a head nginx accepts, with more header records than the gateway's
    # connectionMemoryBytes holds: nginx passes only the headers it names
    'many-headers': (b'/as4', b''.join(b'X-%d: y\r\n' % i for i in range(1200))),
    # the same through query arguments (each one a record in the gateway)
    'many-args': (b'/as4?' + b'a&' * 1500 + b'a', b''),
}


@pytest.mark.parametrize('kind', sorted(HOSTILE_HEADS))
def test_oversized_head_costs_that_request_only(stack, pki, kind):
    """Issue 10 item 9a: a POST with a head the gateway could not hold and a
    4 MiB body gets its 4xx, nothing is stored, and right after it the
    partners' normal pushes get their Receipts on EVERY instance (no 502:
    no instance was marked down, the request was not replayed)."""
    ngx, gws = stack
    before = gws[0].store.totals()
    status = hostile_request(ngx.port, pki, HOSTILE_HEADS[kind])
    assert status is not None and re.match(rb'HTTP/1\.1 4\d\d ', status), status
    assert gws[0].store.totals() == before
    seen = [len(requests_seen(gw)) for gw in gws]
    mids = [new_id() for _ in range(8)]
    answers = [push(ngx.port, pki, mid, source=PARTNER) for mid in mids]
    assert all(a.status == 200 and a.is_receipt for a in answers), \
        [(a.status, a.body[:200]) for a in answers if not a.is_receipt]
    served = [len(requests_seen(gw)) - k for gw, k in zip(gws, seen)]
    assert all(k > 0 for k in served), f'an instance got no push after the hostile one: {served}'
    assert not [l for l in ngx.access_log()[-12:] if '/502/' in l or ' 502 ' in l]
