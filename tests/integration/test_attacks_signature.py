"""Generated attacks on the signature's cryptography and trust (issue 3;
NEGATIVE-CASES 37-46, 58): weak algorithms and other canonicalizations,
content changed after signing, attacker keys, untrusted or expired signer
certificates, wsu:Timestamp, and forgeries that must not reserve or answer
for the victim's MessageId (55-57 and 59 are in test_inbox.py).

Every test runs on SQLite and PostgreSQL and on both sides of the spool
threshold (in memory, and with every body spooled: attacklib.py, issue 14),
with the same answers; the fixtures and helpers are attacklib.py's.
"""
import datetime
import os
import re
import sys

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        sys.stderr.write(f'\nSKIPPED (loudly): {__name__} needs python3-{_module}\n')
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import attacklib as al  # noqa: E402  (al.post: test_attacks_2_0 wraps it)
import tamper  # noqa: E402
from conftest import new_id  # noqa: E402
from attacklib import (  # noqa: E402
    ATTACK_LEGS, EB, HOUR, SIGNED, accepted, edit, flip, message_id, refused, resigned, utcnow)
from tamper import attr, element, once  # noqa: E402


# ---- algorithms and canonicalization (37, 38) -------------------------------

def _set_signature_method(e, uri):
    return re.sub(r'(<ds:SignatureMethod Algorithm=")[^"]*', lambda m: m.group(1) + uri, e)


def _set_digest_methods(e, uri):
    return re.sub(r'(<ds:DigestMethod Algorithm=")[^"]*', lambda m: m.group(1) + uri, e)


@pytest.mark.parametrize('kind', ['rsa-sha1', 'rsa-md5', 'hmac-sha256', 'digest-sha1',
                                  'digest-md5'])
def test_37_weak_algorithms_refused(agw, make, pki, kind):
    """NEGATIVE-CASES 37 -> EBMS:0103 (wss_inbound.c refuses them by its
    allowlist before any cryptography).  rsa-sha1 and the digests are
    genuinely valid signatures; the cid: digest is recomputed with the weak
    digest too (binary payload: SwA content transform = the octets)."""
    data = os.urandom(512)
    msg = make(payloads=[(data, 'application/octet-stream')])
    key = str(pki / 'sender.key')
    if kind == 'rsa-sha1':
        bad = edit(msg, lambda e: tamper.resign(_set_signature_method(e, tamper.RSA_SHA1), key))
    elif kind == 'rsa-md5':
        try:
            bad = edit(msg, lambda e: tamper.resign(_set_signature_method(e, tamper.RSA_MD5), key))
        except Exception:   # an OpenSSL that refuses MD5 signatures: the URI alone
            bad = edit(msg, lambda e: _set_signature_method(e, tamper.RSA_MD5))
    elif kind == 'hmac-sha256':
        bad = edit(msg, lambda e: _set_signature_method(e, tamper.HMAC_SHA256))
    else:
        uri = tamper.SHA1 if kind == 'digest-sha1' else tamper.MD5
        bad = edit(msg, lambda e: tamper.resign(tamper.set_cid_digest(
            _set_digest_methods(e, uri), 'part-1@as4gw-test', data, uri), key))
    refused(agw, bad, 'EBMS:0103', message_id(msg))


def test_37_leg_allowlist(fresh_gw, make, pki):
    """Issue 3 item 2 (per-P-Mode allowlist): a leg that allows only
    rsa-sha512 refuses rsa-sha256 (EBMS:0103) and accepts the same message
    signed with rsa-sha512."""
    msg = make(action=EB + 'Sha512Only')
    refused(fresh_gw, msg, 'EBMS:0103', message_id(msg))
    good = edit(msg, lambda e: tamper.resign(_set_signature_method(e, tamper.RSA_SHA512),
                                             str(pki / 'sender.key')))
    accepted(fresh_gw, good)


@pytest.mark.parametrize('where', ['signed-info', 'reference'])
@pytest.mark.parametrize('uri', [tamper.INC_C14N, tamper.INC_C14N_WC, tamper.EXC_C14N_WC,
                                 tamper.C14N11],
                         ids=['inclusive', 'inclusive-comments', 'exclusive-comments', 'c14n11'])
def test_38_other_canonicalization_refused(agw, make, pki, where, uri):
    """NEGATIVE-CASES 38 -> EBMS:0103, for genuinely valid signatures that
    use it (on SignedInfo, or as the transform of the eb:Messaging reference)."""
    msg = make()

    def change(e):
        if where == 'signed-info':
            return re.sub(r'(<ds:CanonicalizationMethod Algorithm=")[^"]*',
                          lambda m: m.group(1) + uri, e)
        ref = tamper.messaging_ref(e)
        return once(e, ref, ref.replace(f'Algorithm="{tamper.EXC_C14N}"', f'Algorithm="{uri}"'))
    refused(agw, resigned(msg, change, pki / 'sender.key'), 'EBMS:0103', message_id(msg))


# ---- content changed after signing (39, 40) ---------------------------------

@pytest.mark.parametrize('kind', ['xml-payload', 'binary-payload', 'encrypted-plaintext'])
def test_39_attachment_byte_flipped(agw, make, pki, kind):
    """NEGATIVE-CASES 39 -> EBMS:0101.  encrypted-plaintext: the flipped
    plaintext is encrypted again with the message's own key (decryption
    succeeds, the signature over the plaintext does not)."""
    if kind == 'xml-payload':
        msg = make()
        bad = msg.copy()
        bad.parts[1][1] = bad.parts[1][1].replace(b'>1<', b'>2<')
    elif kind == 'binary-payload':
        msg = make(payloads=[(os.urandom(4096), 'application/octet-stream')])
        bad = msg.copy()
        bad.parts[1][1] = flip(bad.parts[1][1], 2000)
    else:
        msg = make(encrypt_to=pki / 'gateway.crt')
        key = tamper.content_key(msg.envelope, pki / 'gateway.key')
        plain = tamper.gcm_open(key, msg.parts[1][1])
        bad = msg.copy()
        bad.parts[1][1] = tamper.gcm_seal(key, plain.replace(b'>1<', b'>2<'))
    assert bad.http() != msg.http()
    refused(agw, bad, 'EBMS:0101', message_id(msg))


@pytest.mark.parametrize('kind', ['body-attribute', 'body-ns-attribute', 'body-child',
                                  'messaging-text'])
def test_40_content_changed_after_signing(agw, make, kind):
    """NEGATIVE-CASES 40 -> EBMS:0101 (and the like for eb:Messaging)."""
    msg = make()

    def change(e):
        body = element(e, 'env:Body')
        if kind == 'body-attribute':
            return once(e, body, body.replace('<env:Body ', '<env:Body priority="1" '))
        if kind == 'body-ns-attribute':
            return once(e, body, body.replace(
                '<env:Body ', '<env:Body xmlns:x="urn:as4gw-test:evil" x:paid="yes" '))
        if kind == 'body-child':
            return once(e, body, body.replace('/>', '><x:Pay xmlns:x="urn:x"/></env:Body>'))
        return once(e, '<eb:ConversationId>', '<eb:ConversationId>x')
    refused(agw, edit(msg, change), 'EBMS:0101', message_id(msg))


# ---- keys and trust (41-44) -------------------------------------------------

@pytest.mark.parametrize('kind', ['keyvalue-only', 'keyvalue-beside-token-reference'])
def test_41_attacker_key_in_keyvalue(agw, make, apki, kind):
    """NEGATIVE-CASES 41 -> EBMS:0101: a signature valid under the attacker's
    key, which travels in ds:KeyValue."""
    msg = make()
    attacker = tamper.load_key(apki / 'attacker.key')

    def swap(e):
        ki = element(e, 'ds:KeyInfo')
        kv = tamper.rsa_key_value(attacker)
        inner = kv if kind == 'keyvalue-only' else kv + element(ki, 'wsse:SecurityTokenReference')
        e = once(e, ki, f'<ds:KeyInfo>{inner}</ds:KeyInfo>')
        return tamper.resign(e, str(apki / 'attacker.key'), digests=False)
    refused(agw, edit(msg, swap), 'EBMS:0101', message_id(msg))


@pytest.mark.parametrize('signer,action', [
    ('selfsigned', SIGNED),        # not the leg's certificate and not trusted
    ('selfsigned', EB + 'SelfSigned'),  # the leg's certificate, but no chain to its anchor
    ('other', EB + 'OtherCa'),     # the sender's name from another CA
], ids=['self-signed-unbound', 'self-signed-bound', 'other-ca-bound'])
def test_42_untrusted_signer(agw, make, signer, action):
    """NEGATIVE-CASES 42 -> EBMS:0101."""
    msg = make(action=action, signer=signer)
    refused(agw, msg, 'EBMS:0101', message_id(msg))


@pytest.mark.parametrize('signer,action', [('expired', EB + 'Expired'),
                                           ('future', EB + 'NotYetValid')],
                         ids=['expired', 'not-yet-valid'])
def test_43_signer_certificate_not_valid_now(agw, make, signer, action):
    """NEGATIVE-CASES 43 -> EBMS:0101: the leg's own certificate, issued by
    its trust anchor, outside its validity period.  (Revocation: the
    configuration has no CRL/OCSP source, so there is nothing to test.)"""
    msg = make(action=action, signer=signer)
    refused(agw, msg, 'EBMS:0101', message_id(msg))


def test_44_trusted_certificate_not_bound_to_leg(agw, make):
    """NEGATIVE-CASES 44 -> EBMS:0101: signed with gateway.crt, which the same
    dev CA issued, on the leg bound to sender.crt."""
    msg = make(signer='gateway')
    refused(agw, msg, 'EBMS:0101', message_id(msg))


# ---- wsu:Timestamp (45, 46) -------------------------------------------------

def _with_timestamp(msg, pki, kind):
    """msg with a signed wsu:Timestamp as kind says, signed again."""
    now = utcnow()
    created, expires = {
        'fresh': (now, now + HOUR), 'expired': (now - 2 * HOUR, now - HOUR),
        'created-in-future': (now + HOUR, now + 2 * HOUR),
        'expires-before-created': (now - datetime.timedelta(minutes=1),
                                   now - datetime.timedelta(minutes=2)),
        'no-created': (now, now + HOUR),
    }[kind]

    def add(e):
        e = tamper.add_signed_timestamp(e, 'TS-1', created, expires)
        if kind == 'no-created':
            e = re.sub(r'<wsu:Created>[^<]*</wsu:Created>', '', e)
        return e
    return resigned(msg, add, pki / 'sender.key')


@pytest.mark.parametrize('kind', ['expired', 'created-in-future', 'expires-before-created',
                                  'no-created'])
def test_45_timestamp_checked(agw, make, pki, kind):
    """NEGATIVE-CASES 45 -> EBMS:0101, with genuinely signed timestamps
    (default skew 300 s)."""
    msg = make()
    refused(agw, _with_timestamp(msg, pki, kind), 'EBMS:0101', message_id(msg))


def test_45_control_fresh_timestamp_accepted(fresh_gw, make, pki):
    accepted(fresh_gw, _with_timestamp(make(), pki, 'fresh'))


def test_45_timestamp_expired_at_verify_at(gateway_factory, apki, make, pki):
    """NEGATIVE-CASES 45 with `serve --verify-at`: a genuinely signed
    timestamp valid for 5 minutes, judged one day later (the certificates
    are valid for two years) -> EBMS:0101; the option is logged loudly."""
    at = tamper.iso(utcnow() + 24 * HOUR)
    gw = gateway_factory(legs=ATTACK_LEGS.replace('{apki}', str(apki))).start('--verify-at', at)
    now = utcnow()
    msg = make()
    bad = resigned(msg, lambda e: tamper.add_signed_timestamp(
        e, 'TS-1', now, now + datetime.timedelta(minutes=5)), pki / 'sender.key')
    refused(gw, bad, 'EBMS:0101', message_id(msg))
    assert any(l.get('level') in ('warn', 'warning') and at[:16] in l.get('msg', '')
               for l in gw.log_lines()), gw.logtext()[:2000]


@pytest.mark.parametrize('kind', ['two-signed-timestamps', 'unsigned-timestamp'])
def test_46_timestamp_duplicated_or_unsigned(agw, make, pki, kind):
    """NEGATIVE-CASES 46 -> EBMS:0103 (signatures otherwise valid)."""
    msg = make()
    now = utcnow()

    def add(e):
        if kind == 'unsigned-timestamp':
            return tamper.add_to_security(e, tamper.timestamp('TS-1', now, now + HOUR))
        e = tamper.add_signed_timestamp(e, 'TS-1', now, now + HOUR)
        return tamper.add_signed_timestamp(e, 'TS-2', now, now + HOUR)
    refused(agw, resigned(msg, add, pki / 'sender.key'), 'EBMS:0103', message_id(msg))



# ---- the inbox (58; 55-57 and 59 are in test_inbox.py) ----------------------

@pytest.mark.parametrize('kind', ['payload-changed', 'attacker-signed', 'wrapped-messaging'])
def test_58_forged_signature_does_not_reserve_victim_id(fresh_gw, make, kind):
    """NEGATIVE-CASES 58: a forgery with the victim's MessageId -> EBMS:0101;
    then the victim's genuine message is accepted as new (one row, no
    duplicate counted)."""
    mid = new_id()
    genuine = make(message_id=mid)
    if kind == 'payload-changed':
        forged = genuine.copy()
        forged.parts[1][1] = b'<Invoice>1000000</Invoice>'
    elif kind == 'attacker-signed':
        forged = make(message_id=mid, signer='selfsigned',
                      payloads=[(b'<Invoice>1000000</Invoice>', 'application/xml')])
    else:
        e = genuine.envelope
        real = element(e, 'eb:Messaging')
        fake = real.replace(f' wsu:Id="{attr(real, "wsu:Id")}"', '')
        forged = edit(genuine, lambda t: tamper.wrap_in_header(once(t, real, fake), real))
    refused(fresh_gw, forged, 'EBMS:0101', mid)
    ans = accepted(fresh_gw, genuine)
    assert ans.ref_to == mid
    assert fresh_gw.store.counts(mid) == (1, 1, 1)
    dup = fresh_gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)
    assert dup[0][0] == 0
    outcomes = [l.get('outcome') for l in fresh_gw.log_lines() if l.get('message_id') == mid]
    assert outcomes == ['error', 'new'], outcomes


@pytest.mark.parametrize('kind', ['payload-changed', 'attacker-signed'])
def test_58_forgery_after_genuine_gets_no_stored_receipt(fresh_gw, make, kind):
    """NEGATIVE-CASES 58, the other order: once the victim's message is
    stored, a forgery with its MessageId is refused (EBMS:0101), not answered
    with the victim's stored Receipt (the signature is checked before the
    inbox looks for duplicates); the row is untouched."""
    mid = new_id()
    genuine = make(message_id=mid)
    receipt = accepted(fresh_gw, genuine)
    if kind == 'payload-changed':
        forged = genuine.copy()
        forged.parts[1][1] = b'<Invoice>1000000</Invoice>'
    else:
        forged = make(message_id=mid, signer='selfsigned')
    ans = al.post(fresh_gw, forged)
    assert ans.error_code == 'EBMS:0101' and ans.body != receipt.body, ans
    assert ans.signed
    assert fresh_gw.store.counts(mid) == (1, 1, 1)
    dup = fresh_gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)
    assert dup[0][0] == 0
