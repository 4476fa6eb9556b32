"""Issue 13 item 2: decryption by key agreement, over HTTP against the real
binary on SQLite and PostgreSQL.  `as4gw push --encrypt` to an X25519 or EC
certificate sends an EncryptedKey with kw-aes128 and an xenc:AgreementMethod
(a fresh ephemeral key, HKDF with a random salt); a leg whose allowlist
lacks key agreement (every 1.x leg) refuses it with EBMS:0103 before any
cryptography and stores nothing.  The 2.0 legs that accept it come with
the edelivery-2.0 profiles (configuration: another part of the issue); the
key agreement itself is covered by tests/unit/test_wss_agree_*.c."""
import base64
import re

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, x25519

import tamper
from conftest import new_id
from test_decryption_keys import (_answer, built, leg, pair, payload,  # noqa: F401
                                  push, request_line)
import as4msg

XDSIG_MORE = 'http://www.w3.org/2021/04/xmldsig-more#'


@pytest.fixture
def ka_keys(tmp_path):
    """Key-agreement pairs of the gateway, issued by a CA (an X25519 key
    cannot sign its own certificate): x25519, p256."""
    d = tmp_path / 'ka'
    d.mkdir()
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = tamper.issue_cert(d / 'ca.crt', 'as4gw-ka-ca', ca_key, ca=True)
    for name, key in (('x25519', x25519.X25519PrivateKey.generate()),
                      ('p256', ec.generate_private_key(ec.SECP256R1()))):
        tamper.save_key(key, d / f'{name}.key')
        tamper.issue_cert(d / f'{name}.crt', f'as4gw-ka-{name}', key, ca, ca_key)
    return d


@pytest.mark.parametrize('name,agreement', [('x25519', XDSIG_MORE + 'x25519'),
                                            ('p256', 'http://www.w3.org/2009/xmlenc11#ECDH-ES')])
def test_key_agreement_on_a_1x_leg_is_refused(gateway_factory, ka_keys, payload, tmp_path,
                                              name, agreement):
    """The pair loads; push encrypts by key agreement; the default (1.x)
    allowlist has no key agreement: EBMS:0103, nothing stored, and the
    answer names no algorithm the log does not."""
    gw = gateway_factory(legs=leg([pair(ka_keys, name)])).start()
    mid = new_id()
    ct, body = built(tmp_path, payload, mid, ka_keys / f'{name}.crt')
    text = body.decode('latin-1')
    assert 'kw-aes128' in text and f'Algorithm="{agreement}"' in text, text[:3000]
    assert XDSIG_MORE + 'hkdf' in text and 'HKDFParams' in text
    salt = re.search(r'Salt[^>]*>([^<]+)<', text).group(1)
    assert len(base64.b64decode(salt)) == 32
    before = gw.store.totals()
    ans = gw.post(ct, body)
    assert ans.error_code == 'EBMS:0103', ans
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == before
    line = request_line(gw, mid)
    assert line['ebms_code'] == 'EBMS:0103', line
    assert 'key wrap not allowed' in line['detail'], line
    # push itself, to the same leg: the same refusal
    mid2 = new_id()
    p = push(gw, payload, mid2, ka_keys / f'{name}.crt')
    assert as4msg.Answer(200, {}, _answer(p.stdout)).error_code == 'EBMS:0103', p.stdout
    assert gw.store.counts(mid2) == (0, 0, 0)


def test_each_push_uses_a_fresh_ephemeral_key_and_salt(ka_keys, payload, tmp_path):
    """Two messages to the same certificate: different ephemeral keys and
    salts (ENTSOG AS4 4.0 2.2.6.2.3: ephemeral-static, random salts)."""
    seen = set()
    for _ in range(2):
        _, body = built(tmp_path, payload, new_id(), ka_keys / 'x25519.crt')
        text = body.decode('latin-1')
        key = re.search(r'DEREncodedKeyValue[^>]*>([^<]+)<', text).group(1)
        salt = re.search(r'Salt[^>]*>([^<]+)<', text).group(1)
        seen.add((key, salt))
        assert len(base64.b64decode(key)) == 44     # X25519 SubjectPublicKeyInfo
    assert len(seen) == 2 and len({k for k, _ in seen}) == 2 and len({s for _, s in seen}) == 2
