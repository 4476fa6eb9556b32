"""Issue 13 items 1, 3 and 4 (the signature side of eDelivery AS4 2.0), over
HTTP against the real binary on SQLite and PostgreSQL: `as4gw push --sign`
with an Ed25519, a brainpoolP256r1 or a P-521 key signs with eddsa-ed25519 /
ecdsa-sha256 / ecdsa-sha512 (the method follows the key); a leg whose
<algorithms> are those of edelivery-2.0 or edelivery-2.0-ec stores it and answers a
Receipt; a 1.x leg refuses Ed25519, a 2.0 leg refuses RSA (no downgrade),
both with EBMS:0103 and nothing stored.  A gateway whose signing pair is
Ed25519 signs its Receipts with eddsa-ed25519, and push verifies them with
--gateway-cert (wss_verify_envelope).  An Ed25519 signature with a
non-canonical S and ECDSA values in DER are EBMS:0101 with nothing stored.
The rest of the signature checks is in tests/unit/test_wss_eddsa_sign.c
(xmlsec's vectors, methods that do not fit the key, curves)."""
import base64
import re

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import as4msg
import tamper
from conftest import new_id, run_as4gw
from test_decryption_keys import _answer, payload  # noqa: F401

EB = 'urn:as4gw:dev:'
MORE = 'http://www.w3.org/2001/04/xmldsig-more#'
EDDSA = 'http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519'

# The signature algorithms of the edelivery-2.0 and -2.0-ec profiles, by
# name (the profile attribute itself is configuration's part of the issue).
ALGS_2_0 = 'eddsa-ed25519 sha256 sha384 sha512'
ALGS_2_0_EC = 'ecdsa-sha256 ecdsa-sha384 ecdsa-sha512 sha256 sha384 sha512'

# (pmode id, action, signer certificate, algorithms; None: the 1.x default)
LEGS = [
    ('ed-2-0', 'Ed20', '{keys}/ed25519.crt', ALGS_2_0),
    ('bp-2-0-ec', 'Bp20', '{keys}/bp256.crt', ALGS_2_0_EC),
    ('p521-2-0-ec', 'P521', '{keys}/p521.crt', ALGS_2_0_EC),
    ('ed-1-x', 'Ed1x', '{keys}/ed25519.crt', None),
    ('rsa-2-0', 'Rsa20', '{pki}/sender.crt', ALGS_2_0),
]


def legs(keys):
    out = ''
    for pid, action, signer, algs in LEGS:
        a = f'<algorithms>{algs}</algorithms>' if algs else ''
        out += f'''
  <pmode id="{pid}">
    <from role="{as4msg.ROLE_INIT}"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{as4msg.ROLE_RESP}"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{EB}{action}</action>
    <security signing="required">
      <signer><certificate>{signer.replace('{keys}', str(keys))}</certificate></signer>
      <trust><anchor>{keys}/ca.crt</anchor><anchor>{{pki}}/ca.crt</anchor></trust>{a}
    </security>
  </pmode>'''
    return out


@pytest.fixture
def keys(tmp_path):
    """Signer pairs issued by a P-256 CA: ed25519, bp256, p521, and the
    gateway's own Ed25519 signing pair (gw-ed25519)."""
    d = tmp_path / 'sig'
    d.mkdir()
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = tamper.issue_cert(d / 'ca.crt', 'as4gw-sig-ca', ca_key, ca=True)
    for name, key in (('ed25519', ed25519.Ed25519PrivateKey.generate()),
                      ('bp256', ec.generate_private_key(ec.BrainpoolP256R1())),
                      ('p521', ec.generate_private_key(ec.SECP521R1())),
                      ('gw-ed25519', ed25519.Ed25519PrivateKey.generate())):
        tamper.save_key(key, d / f'{name}.key')
        tamper.issue_cert(d / f'{name}.crt', f'as4gw-sig-{name}', key, ca, ca_key)
    return d


def push(gw, payload, mid, action, cert, key, *extra):
    return run_as4gw('push', '--url', gw.url, '--from', 'urn:as4gw:dev:sender',
                     '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                     '--action', EB + action, '--message-id', mid, '--payload', str(payload),
                     '--sign', '--sign-cert', str(cert), '--sign-key', str(key), *extra)


def built_raw(tmp_path, payload, mid, action, cert, key):
    """(content type, body) of the signed message push builds but does not
    send (--write-requests)."""
    out = tmp_path / f'{mid}.req'
    p = run_as4gw('push', '--write-requests', out, '--from', 'urn:as4gw:dev:sender',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                  '--action', EB + action, '--message-id', mid, '--payload', str(payload),
                  '--sign', '--sign-cert', str(cert), '--sign-key', str(key))
    assert p.returncode == 0, p.stderr
    ct, n, rest = open(out, 'rb').read().split(b'\n', 2)
    return ct.decode(), rest[:int(n)]


def built(tmp_path, payload, mid, action, cert, key):
    """The body of the signed message push builds, as text."""
    return built_raw(tmp_path, payload, mid, action, cert, key)[1].decode('latin-1')


# RFC 8032 5.1: the order of the Ed25519 base point
ED25519_L = 2**252 + 27742317777372353535851937790883648493


def s_plus_l(sig):
    """An Ed25519 signature with L added to S: [S]B = [S + L]B, so only the
    RFC 8032 5.1.7 check S < L refuses it."""
    s = int.from_bytes(sig[32:], 'little') + ED25519_L
    return sig[:32] + s.to_bytes(32, 'little')


def as_der(sig):
    """An XML-DSig ECDSA value (r || s) as the DER SEQUENCE Java yields."""
    h = len(sig) // 2
    return encode_dss_signature(int.from_bytes(sig[:h], 'big'), int.from_bytes(sig[h:], 'big'))


@pytest.mark.parametrize('action,name,method', [
    ('Ed20', 'ed25519', EDDSA),
    ('Bp20', 'bp256', MORE + 'ecdsa-sha256'),
    ('P521', 'p521', MORE + 'ecdsa-sha512')])
def test_2_0_signature_is_stored(gateway_factory, keys, payload, tmp_path, action, name,
                                 method):
    """The method follows the key; the 2.0 leg verifies it, stores the
    message and answers a Receipt."""
    text = built(tmp_path, payload, new_id(), action, keys / f'{name}.crt',
                 keys / f'{name}.key')
    assert f'SignatureMethod Algorithm="{method}"' in text, text[:3000]
    gw = gateway_factory(legs=legs(keys)).start()
    mid = new_id()
    p = push(gw, payload, mid, action, keys / f'{name}.crt', keys / f'{name}.key')
    assert p.returncode == 0, (p.stdout, p.stderr, gw.logtext()[-2000:])
    assert as4msg.Answer(200, {}, _answer(p.stdout)).is_receipt
    assert gw.store.counts(mid) == (1, 1, 1)


@pytest.mark.parametrize('action,cert,key,why', [
    ('Ed1x', '{keys}/ed25519.crt', '{keys}/ed25519.key', 'eddsa-ed25519 on a 1.x leg'),
    ('Rsa20', '{pki}/sender.crt', '{pki}/sender.key', 'rsa-sha256 on a 2.0 leg (downgrade)'),
    ('Bp20', '{keys}/ed25519.crt', '{keys}/ed25519.key', 'eddsa-ed25519 on a 2.0-ec leg')])
def test_method_the_leg_does_not_list_is_refused(gateway_factory, keys, pki, payload,
                                                 action, cert, key, why):
    """EBMS:0103 before any cryptography, nothing stored."""
    gw = gateway_factory(legs=legs(keys)).start()
    c = cert.replace('{keys}', str(keys)).replace('{pki}', str(pki))
    k = key.replace('{keys}', str(keys)).replace('{pki}', str(pki))
    before = gw.store.totals()
    mid = new_id()
    p = push(gw, payload, mid, action, c, k)
    assert p.returncode == 1, (why, p.stdout)
    assert as4msg.Answer(200, {}, _answer(p.stdout)).error_code == 'EBMS:0103', (why, p.stdout)
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == before


def test_receipt_signed_with_ed25519_and_verified_by_push(gateway_factory, keys, pki, payload):
    """The gateway's signing pair is Ed25519: its Receipt carries an
    eddsa-ed25519 signature that push verifies against --gateway-cert, and
    refuses against another certificate."""
    gw = gateway_factory(legs=legs(keys))
    cfg = open(gw.config).read()
    assert f'{pki}/gateway.key' in cfg
    cfg = cfg.replace(f'<certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key',
                      f'<certificate>{keys}/gw-ed25519.crt</certificate>'
                      f'<key>{keys}/gw-ed25519.key')
    open(gw.config, 'w').write(cfg)
    gw.start()
    mid = new_id()
    p = push(gw, payload, mid, 'Ed20', keys / 'ed25519.crt', keys / 'ed25519.key',
             '--gateway-cert', keys / 'gw-ed25519.crt')
    assert p.returncode == 0, (p.stdout, p.stderr, gw.logtext()[-2000:])
    body = _answer(p.stdout)
    assert as4msg.Answer(200, {}, body).is_receipt
    assert f'SignatureMethod Algorithm="{EDDSA}"'.encode() in body, body[:2000]
    assert gw.store.counts(mid) == (1, 1, 1)
    # the same Receipt checked against a certificate that did not sign it
    mid2 = new_id()
    p = push(gw, payload, mid2, 'Ed20', keys / 'ed25519.crt', keys / 'ed25519.key',
             '--gateway-cert', keys / 'bp256.crt')
    assert p.returncode != 0, p.stdout
    assert gw.store.counts(mid2) == (1, 1, 1)


@pytest.mark.parametrize('action,name,change', [
    ('Ed20', 'ed25519', s_plus_l),
    ('Bp20', 'bp256', as_der),
    ('P521', 'p521', as_der)], ids=['ed25519-s-plus-l', 'bp256-der', 'p521-der'])
def test_malformed_signature_value_is_refused(gateway_factory, keys, payload, tmp_path,
                                              action, name, change):
    """A non-canonical Ed25519 S, an ECDSA value in DER: EBMS:0101, nothing
    stored; the same message untouched is stored."""
    gw = gateway_factory(legs=legs(keys)).start()
    mid = new_id()
    ct, body = built_raw(tmp_path, payload, mid, action, keys / f'{name}.crt',
                         keys / f'{name}.key')
    m = re.search(rb'SignatureValue>([^<]+)<', body)
    bad = base64.b64encode(change(base64.b64decode(m.group(1))))
    before = gw.store.totals()
    ans = gw.post(ct, body[:m.start(1)] + bad + body[m.end(1):])
    assert ans.error_code == 'EBMS:0101', ans
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == before
    assert gw.post(ct, body).is_receipt
    assert gw.store.counts(mid) == (1, 1, 1)
