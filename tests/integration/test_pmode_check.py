"""Issue 11 item 4: `as4gw pmode-check` loads every key and certificate
exactly as `serve` (and its reload) do, and prints subject, serial and
validity of each certificate; what serve refuses, pmode-check refuses."""
import datetime
import re

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from conftest import run_as4gw, write_config


def test_key_not_matching_its_certificate_is_refused_like_serve(tmp_path, pki):
    cfg = write_config(tmp_path / 'c.xml', pki, store=f'sqlite:{tmp_path}/x.db',
                       signing_key=f'{pki}/sender.key')
    check = run_as4gw('pmode-check', '-c', cfg)
    serve = run_as4gw('serve', '-c', cfg, timeout=30)
    assert serve.returncode != 0           # serve refuses to start ...
    assert check.returncode == 1, check    # ... and pmode-check says so
    assert check.stdout == ''
    lines = check.stderr.splitlines()
    assert len(lines) == 1, check.stderr
    assert 'does not match' in lines[0] and str(cfg) in lines[0], lines[0]


def test_certificates_are_described(tmp_path, pki):
    cfg = write_config(tmp_path / 'c.xml', pki, store=f'sqlite:{tmp_path}/x.db')
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    line = [l for l in p.stdout.splitlines() if l.startswith('  certificate signing ')]
    assert len(line) == 1, p.stdout
    m = re.search(r'subject (.*CN=as4gw-dev-gateway.*), serial ([0-9A-F]+), '
                  r'valid (\S+Z) to (\S+Z)$', line[0])
    assert m, line[0]
    cert = x509.load_pem_x509_certificate(open(f'{pki}/gateway.crt', 'rb').read())
    assert int(m.group(2), 16) == cert.serial_number
    assert m.group(4).startswith(cert.not_valid_after.strftime('%Y-%m-%dT%H:%M:%S'))
    # the signed leg's signer certificate is listed too
    assert re.search(r'^  certificate pmode dev-signed signer \S+sender\.crt: subject ',
                     p.stdout, re.M), p.stdout


def _expired_cert(path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'expired-partner')])
    now = datetime.datetime.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(0x1234)
            .not_valid_before(now - datetime.timedelta(days=400))
            .not_valid_after(now - datetime.timedelta(days=35))
            .sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def test_expired_certificate_is_warned_about(tmp_path, pki):
    cfg = write_config(tmp_path / 'c.xml', pki, store=f'sqlite:{tmp_path}/x.db')
    expired = tmp_path / 'expired.crt'
    _expired_cert(expired)
    text = open(cfg).read()
    assert f'{pki}/sender.crt' in text
    open(cfg, 'w').write(text.replace(f'{pki}/sender.crt', str(expired)))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr     # serve starts with it too
    assert 'serial 1234' in p.stdout
    assert re.search(r'WARNING: certificate \S+expired\.crt .*is not valid now', p.stderr), \
        p.stderr
