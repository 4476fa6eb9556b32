"""A test PKI for live revocation (issue 12 item 2) and the servers it names.

RevocPKI builds, in a temp dir, a CA, its delegated OCSP responder (with
id-kp-OCSPSigning), a rogue CA (the "wrong key"), and one signer certificate
per scenario whose AIA OCSP URL / CRL distribution point point at loopback
servers the tests start:
  - a real `openssl ocsp` responder (-index, -rsigner, -CA) for good, revoked
    and unknown (a serial the index does not know);
  - RevocHTTP, a tiny python HTTP server: /ca.crl (the CA's CRL), /stale and
    /future (OCSP responses with nextUpdate past / thisUpdate ahead),
    /wrongkey (a response signed by the rogue CA), /slow (answers after
    `slow_s`); a port nothing listens on stands for a responder that is down.
Certificates and responses are made with the `cryptography` package; the
OCSP responder is the openssl CLI.
"""
import datetime
import http.server
import os
import socket
import subprocess
import threading
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509 import ocsp
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, AuthorityInformationAccessOID

UTC = datetime.timezone.utc
SCENARIOS = ('good', 'revoked', 'unknown', 'down', 'slow', 'stale', 'future',
             'wrongkey', 'crl_good', 'crl_revoked')


def _free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _write(path, data):
    with open(path, 'wb') as f:
        f.write(data)
    return path


class RevocPKI:
    def __init__(self, d):
        self.d = str(d)
        self.ocsp_port = _free_port()
        self.http_port = _free_port()
        self.down_port = _free_port()   # nothing listens there
        now = datetime.datetime.now(UTC)
        self.nb, self.na = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
        self.ca_key, self.ca = self._ca('Revocation Test CA')
        self.rogue_key, self.rogue = self._ca('Rogue CA')
        self.rsp_key = _key()
        self.rsp = self._issue(self.rsp_key, 'Revocation Test OCSP', eku=[ExtendedKeyUsageOID.OCSP_SIGNING])
        self.certs = {}
        for i, s in enumerate(SCENARIOS):
            # signers: RSA (what `as4gw push` signs with)
            k = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            c = self._issue(k, f'sender-{s}', aia=self._aia(s), crldp=self._crldp(s),
                            serial=0x1000 + i)
            self.certs[s] = c
            _write(self.path(f'{s}.crt'), c.public_bytes(serialization.Encoding.PEM))
            _write(self.path(f'{s}.key'), k.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()))
        pem = serialization.Encoding.PEM
        _write(self.path('ca.crt'), self.ca.public_bytes(pem))
        _write(self.path('ca.key'), self.ca_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        _write(self.path('ocsp.crt'), self.rsp.public_bytes(pem))
        _write(self.path('ocsp.key'), self.rsp_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self._index()
        self._responses()

    def path(self, name):
        return os.path.join(self.d, name)

    # -- certificates --
    def _ca(self, cn):
        k = _key()
        c = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
             .public_key(k.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(self.nb).not_valid_after(self.na)
             .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
             .add_extension(x509.KeyUsage(False, False, False, False, False, True, True,
                                          False, False), True)
             .sign(k, hashes.SHA256()))
        return k, c

    def _aia(self, s):
        url = {'good': f'http://127.0.0.1:{self.ocsp_port}/',
               'revoked': f'http://127.0.0.1:{self.ocsp_port}/',
               'unknown': f'http://127.0.0.1:{self.ocsp_port}/',
               'down': f'http://127.0.0.1:{self.down_port}/',
               'slow': f'http://127.0.0.1:{self.http_port}/slow',
               'stale': f'http://127.0.0.1:{self.http_port}/stale',
               'future': f'http://127.0.0.1:{self.http_port}/future',
               'wrongkey': f'http://127.0.0.1:{self.http_port}/wrongkey'}.get(s)
        return url

    def _crldp(self, s):
        return f'http://127.0.0.1:{self.http_port}/ca.crl' if s.startswith('crl_') else None

    def _issue(self, k, cn, eku=None, aia=None, crldp=None, serial=None):
        b = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(self.ca.subject)
             .public_key(k.public_key())
             .serial_number(serial or x509.random_serial_number())
             .not_valid_before(self.nb).not_valid_after(self.na)
             .add_extension(x509.BasicConstraints(ca=False, path_length=None), True)
             .add_extension(x509.KeyUsage(True, True, False, False, False, False, False,
                                          False, False), True))
        if eku:
            b = b.add_extension(x509.ExtendedKeyUsage(eku), False)
        if aia:
            b = b.add_extension(x509.AuthorityInformationAccess([x509.AccessDescription(
                AuthorityInformationAccessOID.OCSP, x509.UniformResourceIdentifier(aia))]), False)
        if crldp:
            b = b.add_extension(x509.CRLDistributionPoints([x509.DistributionPoint(
                [x509.UniformResourceIdentifier(crldp)], None, None, None)]), False)
        return b.sign(self.ca_key, hashes.SHA256())

    # -- revocation data --
    def _index(self):
        """openssl ca's index.txt: good V, revoked R; 'unknown' absent."""
        exp = self.na.strftime('%y%m%d%H%M%SZ')
        rev = self.nb.strftime('%y%m%d%H%M%SZ')
        lines = []
        for s in ('good', 'revoked'):
            c = self.certs[s]
            status, when = ('R', rev) if s == 'revoked' else ('V', '')
            lines.append(f'{status}\t{exp}\t{when}\t{c.serial_number:X}\tunknown\t/CN=sender-{s}\n')
        _write(self.path('index.txt'), ''.join(lines).encode())
        _write(self.path('index.txt.attr'), b'unique_subject = no\n')

    def _response(self, cert, this, nxt, key, signer):
        b = (ocsp.OCSPResponseBuilder()
             .add_response(cert=cert, issuer=self.ca, algorithm=hashes.SHA1(),
                           cert_status=ocsp.OCSPCertStatus.GOOD, this_update=this,
                           next_update=nxt, revocation_time=None, revocation_reason=None)
             .responder_id(ocsp.OCSPResponderEncoding.HASH, signer)
             .certificates([signer]))
        return b.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)

    def _responses(self):
        now = datetime.datetime.now(UTC)
        h = datetime.timedelta(hours=1)
        self.resp = {
            '/stale': self._response(self.certs['stale'], now - 3 * h, now - 2 * h,
                                     self.ca_key, self.ca),
            '/future': self._response(self.certs['future'], now + 2 * h, now + 3 * h,
                                      self.ca_key, self.ca),
            '/wrongkey': self._response(self.certs['wrongkey'], now - h, now + h,
                                        self.rogue_key, self.rogue),
            '/slow': self._response(self.certs['slow'], now - h, now + h,
                                    self.ca_key, self.ca),
        }
        crl = (x509.CertificateRevocationListBuilder().issuer_name(self.ca.subject)
               .last_update(now - h).next_update(now + h)
               .add_revoked_certificate(x509.RevokedCertificateBuilder()
                                        .serial_number(self.certs['crl_revoked'].serial_number)
                                        .revocation_date(now - h).build())
               .sign(self.ca_key, hashes.SHA256()))
        # PEM: the engine takes DER or PEM; PEM is the less obvious one
        self.resp['/ca.crl'] = crl.public_bytes(serialization.Encoding.PEM)


class OpenSSLResponder:
    """`openssl ocsp` as the OCSP responder for pki, on pki.ocsp_port."""

    def __init__(self, pki):
        self.pki = pki
        self.proc = None

    def start(self):
        p = self.pki
        self.proc = subprocess.Popen(
            ['openssl', 'ocsp', '-index', p.path('index.txt'), '-port',
             str(p.ocsp_port), '-rsigner', p.path('ocsp.crt'), '-rkey',
             p.path('ocsp.key'), '-CA', p.path('ca.crt'), '-nmin', '60', '-ignore_err',
             '-timeout', '5'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                # a request line, so the single-threaded responder does not
                # wait for one: it answers an error and is ready
                with socket.create_connection(('127.0.0.1', p.ocsp_port), timeout=2) as s:
                    s.sendall(b'GET / HTTP/1.0\r\n\r\n')
                    s.recv(100)
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError('openssl ocsp did not start')

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


class RevocHTTP:
    """The CRL / canned-response server for pki, on pki.http_port."""

    def __init__(self, pki, slow_s=30):
        self.pki, self.slow_s = pki, slow_s
        self.hits = {}
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self):
                path = self.path.split('?')[0]
                outer.hits[path] = outer.hits.get(path, 0) + 1
                n = int(self.headers.get('Content-Length') or 0)
                if n:
                    self.rfile.read(n)
                body = outer.pki.resp.get(path)
                if body is None:
                    self.send_error(404)
                    return
                if path == '/slow':
                    time.sleep(outer.slow_s)
                self.send_response(200)
                self.send_header('Content-Type', 'application/pkix-crl' if path.endswith('.crl')
                                 else 'application/ocsp-response')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

            do_GET = _answer
            do_POST = _answer

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', pki.http_port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
