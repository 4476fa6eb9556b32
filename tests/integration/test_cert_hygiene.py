"""Certificate hygiene (issue 12 item 5): /metrics has the days until expiry
of every configured certificate (the gateway's signing certificate, each
leg's decryption certificate, partner signers and trust anchors), labelled
by role, leg, subject and SHA-256; serve logs a warning at start (and after a
reload) for each that expires within 30 days, an error for one that has
expired.  pmode-check warns by the same rule.  On SQLite and PostgreSQL.
"""
import datetime
import re
import signal
import time

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from conftest import DEV_LEG, SIGNED_LEG, run_as4gw

LEG = '''
  <pmode id="{id}">
    <from role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator"><partyId>urn:as4gw:dev:{id}</partyId></from>
    <to role="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:{id}</action>
    <security signing="required">
      <signer><certificate>{signer}</certificate></signer>
      <trust><anchor>{anchor}</anchor></trust>
    </security>
  </pmode>
'''


def make_cert(path, cn, not_before_days, not_after_days):
    """A self-signed certificate valid from now+not_before_days to
    now+not_after_days; returns its SHA-256 (hex)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = datetime.datetime.utcnow()
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now + datetime.timedelta(days=not_before_days))
            .not_valid_after(now + datetime.timedelta(days=not_after_days))
            .sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert.fingerprint(hashes.SHA256()).hex()


def expiry_series(gw):
    """{(role, leg, subject, sha256): days} of as4gw_certificate_expiry_days."""
    out = {}
    pat = re.compile(r'^as4gw_certificate_expiry_days\{role="([^"]*)",leg="([^"]*)",'
                     r'subject="([^"]*)",sha256="([0-9a-f]{64})"\} (-?[0-9.]+)$')
    for line in gw.get('/metrics').body.decode().splitlines():
        m = pat.match(line)
        if m:
            out[m.groups()[:4]] = float(m.group(5))
    return out


def test_expiring_certificates_are_measured_and_logged(gateway_factory, tmp_path, pki):
    soon, expired = tmp_path / 'soon.crt', tmp_path / 'expired.crt'
    fp_soon = make_cert(soon, 'soon-partner', -100, 10)
    fp_expired = make_cert(expired, 'expired-anchor', -400, -35)
    legs = (DEV_LEG + SIGNED_LEG +
            LEG.format(id='soon', signer=soon, anchor=soon) +
            LEG.format(id='old', signer='{pki}/sender.crt', anchor=expired))
    gw = gateway_factory(legs=legs).start()
    series = expiry_series(gw)
    days = series[('signer', 'soon', 'CN=soon-partner', fp_soon)]
    assert 9.9 < days <= 10.0, days
    assert 9.9 < series[('anchor', 'soon', 'CN=soon-partner', fp_soon)] <= 10.0
    assert -35.1 < series[('anchor', 'old', 'CN=expired-anchor', fp_expired)] < -34.9
    # the gateway's own signing certificate (2 years) and the others are there
    signing = [v for k, v in series.items() if k[0] == 'signing' and k[1] == '']
    assert len(signing) == 1 and 700 < signing[0] <= 731, series
    assert any(k[:2] == ('signer', 'dev-signed') for k in series), series
    lines = gw.log_lines()
    warn = [l for l in lines if l.get('event') == 'certificate-expiring']
    assert len(warn) == 2, warn   # the soon certificate as signer and as anchor
    assert all(l['level'] == 'warn' and l['sha256'] == fp_soon and l['pmode'] == 'soon'
               and l['subject'] == 'CN=soon-partner' and l['days_left'] in ('9', '10')
               and l['file'] == str(soon) for l in warn), warn
    assert {l['role'] for l in warn} == {'signer', 'anchor'}
    err = [l for l in lines if l.get('event') == 'certificate-expired']
    assert len(err) == 1 and err[0]['level'] == 'error', err
    assert err[0]['sha256'] == fp_expired and err[0]['role'] == 'anchor'
    # nothing else is reported: the development PKI is valid for two years
    assert not [l for l in lines if str(l.get('event', '')).startswith('certificate-')
                and l.get('pmode') not in ('soon', 'old')]
    # a reload looks again: one more line each
    gw.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while time.time() < deadline and len(
            [l for l in gw.log_lines() if l.get('event') == 'certificate-expiring']) < 4:
        time.sleep(0.1)
    assert len([l for l in gw.log_lines()
                if l.get('event') == 'certificate-expiring']) == 4
    # pmode-check warns by the same rule
    p = run_as4gw('pmode-check', '-c', gw.config)
    assert p.returncode == 0, p.stderr
    assert re.search(r'WARNING: certificate \S+soon\.crt \(pmode soon signer, '
                     r'CN=soon-partner\) expires ', p.stderr), p.stderr
    assert re.search(r'WARNING: certificate \S+expired\.crt .*is not valid now', p.stderr)


def test_decryption_certificate_is_measured(gateway_factory, tmp_path, pki):
    """A leg's own decryption pair gets role "decryption" under its leg."""
    legs = DEV_LEG + SIGNED_LEG.replace(
        '</trust>', '</trust>\n      <decryption><certificate>{pki}/tls.crt'
        '</certificate><key>{pki}/tls.key</key></decryption>')
    gw = gateway_factory(legs=legs).start()
    series = expiry_series(gw)
    dec = [v for k, v in series.items() if k[:2] == ('decryption', 'dev-signed')]
    assert len(dec) == 1 and 700 < dec[0] <= 731, series
