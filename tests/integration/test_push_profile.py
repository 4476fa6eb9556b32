"""Issue 13 item 5: `as4gw push --profile NAME` sends eDelivery AS4 2.0
(Ed25519 + X25519/HKDF), its EC option (ECDSA + ECDH-ES/HKDF) and BDEW's
(ECDSA + ECDH-ES/ConcatKDF).  Keys that do not fit the profile are refused
before anything is built or sent; the message push builds carries the
profile's algorithms (read back from the bytes, not from push's output)."""
import re

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, x25519

import tamper
from conftest import new_id, run_as4gw

ACTION = 'urn:as4gw:dev:Deliver'
XDSIG_MORE = 'http://www.w3.org/2021/04/xmldsig-more#'
XENC11 = 'http://www.w3.org/2009/xmlenc11#'


@pytest.fixture(scope='module')
def keys(tmp_path_factory):
    """Signing pairs (rsa, ed25519, p256, bp256) and recipient certificates
    (rsa, x25519, p256, bp256) issued by one CA."""
    d = tmp_path_factory.mktemp('profile-keys')
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = tamper.issue_cert(d / 'ca.crt', 'as4gw-profile-ca', ca_key, ca=True)
    made = {
        'rsa': rsa.generate_private_key(public_exponent=65537, key_size=2048),
        'ed25519': ed25519.Ed25519PrivateKey.generate(),
        'x25519': x25519.X25519PrivateKey.generate(),
        'p256': ec.generate_private_key(ec.SECP256R1()),
        'bp256': ec.generate_private_key(ec.BrainpoolP256R1()),
    }
    for name, key in made.items():
        tamper.save_key(key, d / f'{name}.key')
        tamper.issue_cert(d / f'{name}.crt', f'as4gw-profile-{name}', key, ca, ca_key)
    return d


@pytest.fixture
def payload(tmp_path):
    p = tmp_path / 'invoice.xml'
    p.write_bytes(b'<Invoice xmlns="urn:example:invoice"><ID>1</ID></Invoice>')
    return p


def build(tmp_path, keys, payload, profile, sign, recipient):
    """Run push --write-requests with --profile: (CompletedProcess, body)."""
    out = tmp_path / f'{new_id()}.req'
    args = ['push', '--write-requests', out, '--from', 'urn:as4gw:dev:sender',
            '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
            '--action', ACTION, '--payload', str(payload), '--compress']
    if profile is not None:
        args += ['--profile', profile]
    if sign is not None:
        args += ['--sign', '--sign-cert', keys / f'{sign}.crt', '--sign-key', keys / f'{sign}.key']
    if recipient is not None:
        args += ['--encrypt', '--recipient-cert', keys / f'{recipient}.crt']
    p = run_as4gw(*args)
    body = b''
    if p.returncode == 0:
        data = open(out, 'rb').read()
        _, n, rest = data.split(b'\n', 2)
        body = rest[:int(n)]
    return p, body.decode('latin-1')


@pytest.mark.parametrize('profile,sign,recipient,expect', [
    ('edelivery-2.0', 'ed25519', 'x25519',
     [XDSIG_MORE + 'eddsa-ed25519', XDSIG_MORE + 'x25519', XDSIG_MORE + 'hkdf',
      'DEREncodedKeyValue', 'kw-aes128', 'aes128-gcm']),
    ('edelivery-2.0-ec', 'p256', 'p256',
     ['xmldsig-more#ecdsa-sha256', XENC11 + 'ECDH-ES', XDSIG_MORE + 'hkdf', 'ECKeyValue',
      'urn:oid:1.2.840.10045.3.1.7']),
    ('bdew', 'bp256', 'bp256',
     ['xmldsig-more#ecdsa-sha256', XENC11 + 'ECDH-ES', XENC11 + 'ConcatKDF', 'ConcatKDFParams',
      'urn:oid:1.3.36.3.3.2.8.1.1.7']),
    ('edelivery-1.x', 'rsa', 'rsa',
     ['xmldsig-more#rsa-sha256', XENC11 + 'rsa-oaep']),
])
def test_profile_builds_its_algorithms(tmp_path, keys, payload, profile, sign, recipient, expect):
    p, text = build(tmp_path, keys, payload, profile, sign, recipient)
    assert p.returncode == 0, p.stderr
    for s in expect:
        assert s in text, (profile, s, text[:4000])
    # nothing of another profile's key derivation slipped in
    if profile == 'bdew':
        assert 'HKDFParams' not in text
    elif profile != 'edelivery-1.x':
        assert 'ConcatKDF' not in text and 'rsa-oaep' not in text and 'rsa-sha256' not in text
    # signed, then encrypted: the signature's SignatureMethod is the key's
    methods = re.findall(r'SignatureMethod Algorithm="([^"]+)"', text)
    assert len(methods) == 1, methods


@pytest.mark.parametrize('profile,sign,recipient,wrong', [
    ('edelivery-2.0', 'rsa', 'x25519', 'rsa.key'),        # downgrade of the signature
    ('edelivery-2.0', 'ed25519', 'rsa', 'rsa.crt'),       # downgrade of the encryption
    ('edelivery-2.0', 'ed25519', 'p256', 'p256.crt'),
    ('edelivery-2.0-ec', 'ed25519', 'p256', 'ed25519.key'),
    ('edelivery-2.0-ec', 'p256', 'x25519', 'x25519.crt'),
    ('bdew', 'p256', 'rsa', 'rsa.crt'),
    ('edelivery-1.x', 'ed25519', 'rsa', 'ed25519.key'),
    ('edelivery-1.x', 'rsa', 'x25519', 'x25519.crt'),
])
def test_keys_that_do_not_fit_the_profile_are_refused(tmp_path, keys, payload, profile, sign,
                                                      recipient, wrong):
    """Refused before anything is built: exit 1, the message names the
    profile and the file that does not fit, no request written."""
    p, text = build(tmp_path, keys, payload, profile, sign, recipient)
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert profile in p.stderr and wrong in p.stderr, p.stderr
    assert text == ''
    assert not list(tmp_path.glob('*.req')) or all(f.stat().st_size == 0
                                                   for f in tmp_path.glob('*.req'))


def test_unknown_profile_is_a_usage_error(tmp_path, keys, payload):
    p, _ = build(tmp_path, keys, payload, 'edelivery-3.0', 'ed25519', 'x25519')
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert 'edelivery-3.0' in p.stderr
