"""The generated attacks of the test_attacks_*.py files against eDelivery AS4 2.0
messages (issue 13, "every tamper of the 1.x attack suite that applies"),
over HTTP against the real binary on SQLite and PostgreSQL.

The test functions are those files' own, imported; pytest gives them
this module's fixtures: `pki` is the dev PKI with sender.crt/.key replaced
by the Ed25519 sender (so every tamper.resign(..., pki / 'sender.key')
re-signs with eddsa-ed25519), `make` runs `as4gw push --profile
edelivery-2.0` (encryption: X25519 to gateway-x25519.crt), `apki` holds
Ed25519 attacker certificates, and every leg has profile="edelivery-2.0"
with the gateway's Ed25519 signing pair.  Every answer the gateway gives
here (eb:Error or Receipt) is checked to be signed with eddsa-ed25519 by
gateway-ed25519.crt (python-cryptography, test_profiles.verify_signal).
The 2.0-EC profile gets the same proof in one test at the end (P-256
sender, ecdsa-sha256 re-signed as raw r || s, Receipts by gateway-p256).

Left out, as they do not apply to 2.0: 37 rsa-sha1/rsa-md5 and the
rsa-sha512 leg allowlist (RSA; an RSA signature on a 2.0 leg is
test_profiles' downgrade test), 39 encrypted-plaintext, 47-49, the CBC
padding oracle and the first half of 51 (they need the RSA-transported
content key or rsa-1_5 / aes-cbc, which 2.0 does not have), 41's
ds:RSAKeyValue (replaced below by the attacker's Ed25519 key in
dsig11:DEREncodedKeyValue), 45 --verify-at (a serve option, not a
signature property), 52-54 unsigned and 55-59 (no signature involved).

Like the 1.x attacks, every test runs on both sides of the spool threshold
(in memory, and with every body spooled: attacklib.py, issue 14).
"""
import base64
import functools
import re
import shutil
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

import as4msg
import attacklib as ta
import tamper
import test_attacks_signature
from conftest import BIN, free_port
from tamper import Message, element, once
from test_profiles import ECDSA_SHA256, ED25519, verify_signal

# The applicable cases of the test_attacks_*.py files, run as they are (pytest
# collects these names in this module, with this module's fixtures).
from test_attacks_compression import test_52_signed_compressed_payload_not_gzip  # noqa: F401
from test_attacks_encryption import (  # noqa: F401
    test_50_encrypted_data_in_header_wrapper,
    test_51_control_encrypted_accepted,
    test_51_payload_in_body_where_encryption_required,
)
from test_attacks_signature import (  # noqa: F401
    test_38_other_canonicalization_refused,
    test_40_content_changed_after_signing,
    test_42_untrusted_signer,
    test_43_signer_certificate_not_valid_now,
    test_44_trusted_certificate_not_bound_to_leg,
    test_45_control_fresh_timestamp_accepted,
    test_45_timestamp_checked,
    test_46_timestamp_duplicated_or_unsigned,
    test_58_forged_signature_does_not_reserve_victim_id,
    test_58_forgery_after_genuine_gets_no_stored_receipt,
)
from test_attacks_wrapping import (  # noqa: F401
    test_28_unsigned_message_to_signing_leg,
    test_29_signature_not_covering_messaging,
    test_30_signature_not_covering_one_payload,
    test_31_xsw_signed_body_wrapped,
    test_32_duplicate_id_forged_copy_first,
    test_33_forged_messaging_in_place_signed_one_wrapped,
    test_34_reference_uri_outside_the_message,
    test_35_forbidden_transforms_not_run,
    test_36_too_many_transforms_or_references,
    test_id_reference_with_caret_refused,
    test_resigning_alone_is_accepted,
)

EB = ta.EB
SIGNING_KEYS = ('<signingKeys><signing id="ed25519"><certificate>{pki}/gateway-ed25519.crt'
                '</certificate><key>{pki}/gateway-ed25519.key</key></signing>'
                '<signing id="p256"><certificate>{pki}/gateway-p256.crt</certificate>'
                '<key>{pki}/gateway-p256.key</key></signing></signingKeys>')
DECRYPTION = ('<decryption><certificate>{pki}/gateway-x25519.crt</certificate>'
              '<key>{pki}/gateway-x25519.key</key></decryption>')

# attacklib.ATTACK_LEGS' actions (the imported tests name them), each a
# profile="edelivery-2.0" leg.
ATTACK_LEGS_2_0 = ''.join(f'''
  <pmode id="{pid}">
    <from role="{as4msg.ROLE_INIT}"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{as4msg.ROLE_RESP}"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{EB}{action}</action>
    <security signing="required" encryption="{enc}" profile="edelivery-2.0">
      <signer><certificate>{signer}</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>{DECRYPTION}
    </security>
  </pmode>''' for pid, action, enc, signer in [
    ('signed-2-0', 'SignedOnly', 'optional', '{pki}/sender.crt'),
    ('enc-required-2-0', 'EncRequired', 'required', '{pki}/sender.crt'),
    ('self-signed-2-0', 'SelfSigned', 'optional', '{apki}/selfsigned.crt'),
    ('other-ca-2-0', 'OtherCa', 'optional', '{apki}/other.crt'),
    ('expired-2-0', 'Expired', 'optional', '{apki}/expired.crt'),
    ('not-yet-valid-2-0', 'NotYetValid', 'optional', '{apki}/future.crt'),
]) + f'''
  <pmode id="signed-2-0-ec">
    <from role="{as4msg.ROLE_INIT}"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{as4msg.ROLE_RESP}"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{EB}SignedEc</action>
    <security signing="required" encryption="optional" profile="edelivery-2.0-ec">
      <signer><certificate>{{pki}}/sender-p256.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>
      <decryption><certificate>{{pki}}/gateway-p256-ecdh.crt</certificate>
        <key>{{pki}}/gateway-p256-ecdh.key</key></decryption>
    </security>
  </pmode>'''


# ---- fixtures (attacklib.py's, in 2.0) --------------------------------------

@pytest.fixture(scope='module')
def pki(pki, tmp_path_factory):
    """The dev PKI with sender.crt/.key = sender-ed25519.crt/.key (what the
    imported tests re-sign with); gateway.crt/.key stay RSA (the gateway's
    default <signing>, which 2.0 legs do not use)."""
    d = tmp_path_factory.mktemp('pki-2-0')
    for f in pki.iterdir():
        if f.is_file():
            shutil.copy2(f, d / f.name)
    for ext in ('crt', 'key'):
        shutil.copy2(pki / f'sender-ed25519.{ext}', d / f'sender.{ext}')
    return d


@pytest.fixture(scope='module')
def apki(pki, tmp_path_factory):
    """attacklib.apki with Ed25519 keys: self-signed, from another CA
    under the sender's name, expired, not yet valid, and the attacker."""
    d = tmp_path_factory.mktemp('attack-pki-2-0')
    ca_cert, ca_key = tamper.load_cert(f'{pki}/ca.crt'), tamper.load_key(f'{pki}/ca.key')
    k = ed25519.Ed25519PrivateKey.generate()
    evil_ca_key = ed25519.Ed25519PrivateKey.generate()
    evil_ca = tamper.issue_cert(d / 'evil-ca.crt', 'as4gw-dev-ca', evil_ca_key, ca=True)
    for name, issuer, days in [('selfsigned', (None, None), (-1, 730)),
                               ('other', (evil_ca, evil_ca_key), (-1, 730)),
                               ('expired', (ca_cert, ca_key), (-400, -30)),
                               ('future', (ca_cert, ca_key), (30, 400)),
                               ('attacker', (None, None), (-1, 730))]:
        tamper.save_key(k, d / f'{name}.key')
        tamper.issue_cert(d / f'{name}.crt', 'as4gw-dev-sender-ed25519', k, *issuer, days=days)
    return d


def _legs(apki):
    return ATTACK_LEGS_2_0.replace('{apki}', str(apki))


@pytest.fixture(scope='module', params=ta.SIDES, ids=['-'.join(p) for p in ta.SIDES])
def attack_gw(request, tmp_path_factory, pki, apki):
    """attacklib.attack_gw: one gateway with every 2.0 attack leg per
    backend and spool side."""
    backend, side = request.param
    gw = ta.start_attack_gw(tmp_path_factory, pki, backend, side, _legs(apki),
                            extra_gateway=SIGNING_KEYS.replace('{pki}', str(pki)))
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc} after SIGTERM: {gw.logtext()[-2000:]}'


@pytest.fixture
def agw(attack_gw):
    """attacklib.agw: checked after each test on the spooled side."""
    yield from ta.spool_checked(attack_gw)


@pytest.fixture
def fresh_gw(gateway_factory, pki, apki, spool_side):
    return gateway_factory(legs=_legs(apki),
                           extra_gateway=SIGNING_KEYS.replace('{pki}', str(pki))).start()


@pytest.fixture
def make(request, tmp_path, pki, apki):
    """attacklib.make for 2.0: `as4gw push --profile edelivery-2.0`;
    signer 'sender' (Ed25519), 'gateway' (gateway-ed25519, same CA, not the
    leg's signer) or an apki name; any encrypt_to means the leg's X25519
    key-agreement certificate (2.0 has no RSA key transport).  Built once
    for every backend and spool side (attacklib.made_once)."""
    return ta.made_once(request, functools.partial(_push, tmp_path, pki, apki))


def _push(tmp_path, pki, apki, n, action=ta.SIGNED, signer='sender', encrypt_to=None,
          compress=False, payloads=((b'<Invoice>1</Invoice>', 'application/xml'),),
          message_id=None):
    """The message `as4gw push --profile edelivery-2.0 --save-request` writes."""
    out = tmp_path / f'msg2-{n}.req'
    args = [BIN, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4',
            '--from', 'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway',
            '--service', 'urn:as4gw:dev:service', '--action', action,
            '--profile', 'edelivery-2.0-ec' if signer == 'sender-p256' else 'edelivery-2.0',
            '--connect-timeout', '2', '--timeout', '5', '--save-request', str(out)]
    for i, (data, mime) in enumerate(payloads):
        p = tmp_path / f'msg2-{n}-payload-{i + 1}'
        p.write_bytes(data)
        args += ['--payload', f'{p};mime={mime};cid=part-{i + 1}@as4gw-test']
    if signer is not None:
        d, name = {'sender': (pki, 'sender'), 'gateway': (pki, 'gateway-ed25519'),
                   'sender-p256': (pki, 'sender-p256')}.get(signer, (apki, signer))
        args += ['--sign', '--sign-cert', f'{d}/{name}.crt', '--sign-key', f'{d}/{name}.key']
    if encrypt_to is not None:
        args += ['--encrypt', '--recipient-cert', f'{pki}/gateway-x25519.crt']
    if compress:
        args.append('--compress')
    if message_id is not None:
        args += ['--message-id', message_id]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.exists(), f'as4gw push wrote no request: {p.stderr}'
    msg = Message.load(str(out))
    if signer not in (None, 'sender-p256'):
        assert ED25519 in msg.envelope, msg.envelope[:3000]
    return msg


@pytest.fixture(autouse=True)
def signed_in_kind(monkeypatch, pki):
    """Every answer attacklib.post() gets here, eb:Error or Receipt, is
    signed by the leg's key: eddsa-ed25519 by gateway-ed25519.crt (the EC
    test sets ecdsa-sha256 by gateway-p256.crt in the dict returned)."""
    post = ta.post
    want = {'cert': f'{pki}/gateway-ed25519.crt', 'method': ED25519, 'checked': 0}

    def checked(gw, msg, timeout=30):
        ans = post(gw, msg, timeout)
        if ans.status == 200 and (ans.error_code or ans.is_receipt):
            assert verify_signal(ans.body, want['cert']) == want['method'], ans
            want['checked'] += 1
        return ans
    monkeypatch.setattr(ta, 'post', checked)
    return want


# ---- the cases that apply only in part ---------------------------------------

@pytest.mark.parametrize('kind', ['hmac-sha256', 'digest-sha1', 'digest-md5'])
def test_37_weak_algorithms_refused(agw, make, pki, kind):
    """test_attacks_signature 37 without rsa-sha1/rsa-md5 (RSA); the weak digests are
    genuinely re-signed with Ed25519."""
    test_attacks_signature.test_37_weak_algorithms_refused(agw, make, pki, kind)


@pytest.mark.parametrize('kind', ['xml-payload', 'binary-payload'])
def test_39_attachment_byte_flipped(agw, make, pki, kind):
    """test_attacks_signature 39 without encrypted-plaintext (RSA content key)."""
    test_attacks_signature.test_39_attachment_byte_flipped(agw, make, pki, kind)


@pytest.mark.parametrize('kind', ['keyvalue-only', 'keyvalue-beside-token-reference'])
def test_41_attacker_key_in_keyvalue(agw, make, apki, kind):
    """NEGATIVE-CASES 41 in 2.0 -> EBMS:0101: a signature valid under the
    attacker's Ed25519 key, which travels in dsig11:DEREncodedKeyValue
    (XML-DSig 1.1 4.5.2.3; Ed25519 has no ds:KeyValue form)."""
    msg = make()
    attacker = tamper.load_key(apki / 'attacker.key')
    spki = attacker.public_key().public_bytes(serialization.Encoding.DER,
                                              serialization.PublicFormat.SubjectPublicKeyInfo)
    kv = ('<dsig11:DEREncodedKeyValue xmlns:dsig11="http://www.w3.org/2009/xmldsig11#">'
          f'{base64.b64encode(spki).decode()}</dsig11:DEREncodedKeyValue>')

    def swap(e):
        ki = element(e, 'ds:KeyInfo')
        inner = kv if kind == 'keyvalue-only' else kv + element(ki, 'wsse:SecurityTokenReference')
        e = once(e, ki, f'<ds:KeyInfo>{inner}</ds:KeyInfo>')
        return tamper.resign(e, str(apki / 'attacker.key'), digests=False)
    ta.refused(agw, ta.edit(msg, swap), 'EBMS:0101', ta.message_id(msg))


# ---- ecdsa-sha256 (edelivery-2.0-ec): tamper.resign() on P-256 ------------

def test_ecdsa_resigning_alone_accepted_and_resigned_attacks_refused(fresh_gw, make, pki,
                                                                      signed_in_kind):
    """The same proof for the 2.0-EC profile (sender-p256, ecdsa-sha256):
    re-signing alone (raw r || s, XML-DSig 1.1 6.4.3) is accepted; re-signed
    29 (eb:Messaging not covered) and 38 (inclusive c14n) are EBMS:0103 and
    re-signed 45 (expired timestamp) EBMS:0101, nothing stored; every
    answer is signed ecdsa-sha256 by gateway-p256.crt."""
    signed_in_kind.update(cert=f'{pki}/gateway-p256.crt', method=ECDSA_SHA256)
    key = pki / 'sender-p256.key'
    bad = [
        (lambda e: once(e, tamper.messaging_ref(e), ''), 'EBMS:0103'),
        (lambda e: re.sub(r'(<ds:CanonicalizationMethod Algorithm=")[^"]*',
                          lambda m: m.group(1) + tamper.INC_C14N, e), 'EBMS:0103'),
        (lambda e: tamper.add_signed_timestamp(e, 'TS-1', ta.utcnow() - 2 * ta.HOUR,
                                               ta.utcnow() - ta.HOUR), 'EBMS:0101'),
    ]
    for fn, code in bad:
        msg = make(action=EB + 'SignedEc', signer='sender-p256')
        assert ECDSA_SHA256 in msg.envelope, msg.envelope[:3000]
        ta.refused(fresh_gw, ta.resigned(msg, fn, key), code, ta.message_id(msg))
    msg = make(action=EB + 'SignedEc', signer='sender-p256')
    again = ta.resigned(msg, lambda e: e, key)
    sv = tamper.text_of(again.envelope, 'ds:SignatureValue')
    assert again.envelope != msg.envelope and len(base64.b64decode(sv)) == 64
    ta.accepted(fresh_gw, again)
    assert fresh_gw.store.counts(ta.message_id(msg)) == (1, 1, 1)
    assert signed_in_kind['checked'] == 4
