"""eDelivery AS4 2.0 and the elliptic-curve profiles end to end (issue 13):
messages from the independent sender in edelivery2.py (written from the
specs, proven in test_edelivery2_builder.py) POSTed to the real binary, on
both backends, beside a 1.x leg on the same gateway.

Legs (one gateway): 2.0 (Ed25519 + X25519/HKDF, profile edelivery-2.0),
2.0-ec (ECDSA P-256 + ECDH-ES/HKDF, edelivery-2.0-ec), BDEW-like (ECDSA
brainpoolP256r1 + ECDH-ES/ConcatKDF, an explicit algorithm list), and a 1.x
leg (RSA, the default list).  The partner's signer certificates and the
gateway's key-agreement pairs come from edelivery2_pki (made at test time).

Positive: 0, 1 and 3 attachments, signed + encrypted + compressed ->
Receipt whose NRR digests are the request's references; a retry gets the
same Receipt bytes; the stored payloads are the original bytes.
Negative, each with nothing stored: the refusal code the issue names.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import edelivery2 as e2  # noqa: E402
from conftest import Gateway, make_dsn  # noqa: E402
from edelivery2_gw import (  # noqa: E402
    GW_PARTY, ONE_X, PAYLOADS, SERVICE, _leg, accepted, e2pki, new_mid, nrr_references,
    receipt_checked, refused, stored)

assert e2pki  # a fixture, used by name

# profile -> (partner PartyId, action, signer kind, key-agreement kind,
# security/@profile, <algorithms>, gateway receipt key id, build options)
PROFILES = {
    '2.0': ('urn:as4gw:e2:partner-20', 'urn:as4gw:e2:Deliver20', 'ed25519', 'x25519',
            'edelivery-2.0', None, 'gw-ed25519', {}),
    '2.0-ec': ('urn:as4gw:e2:partner-ec', 'urn:as4gw:e2:DeliverEc', 'p256', 'p256',
               'edelivery-2.0-ec', None, 'gw-p256', {'ka': 'ecdh-es'}),
    'bdew': ('urn:as4gw:e2:partner-bdew', 'urn:as4gw:e2:DeliverBdew', 'brainpoolP256r1',
             'brainpoolP256r1', None,
             'ecdsa-sha256 sha256 ecdh-es concatkdf kw-aes128 aes128-gcm', 'gw-bp256',
             {'ka': 'ecdh-es', 'kdf': 'concatkdf'}),
}
SIGNED_20 = ('urn:as4gw:e2:partner-20s', 'urn:as4gw:e2:Deliver20Signed')
RECEIPT_KEYS = {'gw-ed25519': 'ed25519', 'gw-p256': 'p256', 'gw-bp256': 'brainpoolP256r1'}
RECEIPT_ALG = {'gw-ed25519': e2.ED25519, 'gw-p256': e2.ECDSA['sha256'],
               'gw-bp256': e2.ECDSA['sha256']}


def _legs(p):
    out = ''
    for prof, (frm, action, skind, akind, profile, algs, rkey, _) in PROFILES.items():
        a = p.agree[akind]
        # every partner signer certificate is listed on every 2.0 leg, so
        # that a signature in another algorithm is refused for the
        # algorithm (EBMS:0103), not for an unknown key
        signers = [p.signers[skind].cert_path] + [
            c.cert_path for k, c in sorted(p.signers.items()) if k != skind]
        # the EC leg holds P-256, P-384 and brainpoolP256r1 pairs: the
        # one RecipientKeyInfo names decrypts
        pairs = [a] + ([p.agree['p384'], p.agree['brainpoolP256r1']] if prof == '2.0-ec' else [])
        leg = _leg('e2-' + prof, frm, action, signers, p.ca.cert_path,
                   [(x.cert_path, x.key_path) for x in pairs], algs)
        if profile:
            leg = leg.replace('<security ', f'<security profile="{profile}" ', 1)
        out += leg.replace('</security>', f'</security><receipt signingKey="{rkey}"/>', 1)
    # a 2.0 leg where encryption is optional: Ed25519 signatures alone
    leg = _leg('e2-2.0-signed', SIGNED_20[0], SIGNED_20[1],
               [p.signers['ed25519'].cert_path, p.signers['rsa'].cert_path], p.ca.cert_path,
               [(p.agree['x25519'].cert_path, p.agree['x25519'].key_path)], None,
               encryption='optional')
    out += leg.replace('<security ', '<security profile="edelivery-2.0" ', 1)
    # the 1.x leg beside them: RSA, the default list, the gateway's RSA
    # pair; the Ed25519 signer is listed too, so that only the algorithm
    # list refuses it
    out += _leg('e2-1x', ONE_X[0], ONE_X[1],
                [p.signers['rsa'].cert_path, p.signers['ed25519'].cert_path], p.ca.cert_path,
                [(p.rsa_enc.cert_path, p.rsa_enc.key_path)], None, encryption='optional')
    return out


def _signing_keys(p):
    return '<signingKeys>' + ''.join(
        f'<signing id="{i}"><certificate>{p.gw_sign[i].cert_path}</certificate>'
        f'<key>{p.gw_sign[i].key_path}</key></signing>' for i in RECEIPT_KEYS) + \
        '</signingKeys>'


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def e2gw(request, tmp_path_factory, e2pki):
    d = tmp_path_factory.mktemp('e2gw-' + request.param)
    e2pki.gw_sign = getattr(e2pki, 'gw_sign', None) or {
        i: e2pki.signer('gateway-' + i, k) for i, k in RECEIPT_KEYS.items()}
    gw = Gateway(d, e2pki.dev, make_dsn(request.param, d), legs=_legs(e2pki),
                 extra_gateway=_signing_keys(e2pki)).start()
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc}: {gw.logtext()[-2000:]}'


def make(p, prof, n=1, mid=None, signer=None, recipient=None, **opts):
    """A 2.0 message for the leg of profile prof (options override the
    profile's)."""
    frm, action, skind, akind, _, _, _, popts = PROFILES[prof]
    o = dict(popts)
    o.update(opts)
    o['env'] = dict(frm=frm, to=GW_PARTY, service=SERVICE, action=action)
    rcpt = recipient if recipient is not None else e2.Recipient(p.agree[akind].cert)
    rcpt = rcpt or None   # False: not encrypted
    return e2.build(mid or new_mid(), PAYLOADS[:n], signer or p.signers[skind], rcpt,
                    ca_cert=p.ca.cert, **o)


def signed_in_kind(p, prof, body):
    """The answer is signed with the leg's receipt key, in its algorithm
    (checked by the independent verifier)."""
    rkey = PROFILES[prof][6]
    root = e2.parse(body)
    alg = root.find('.//ds:SignedInfo/ds:SignatureMethod', e2.NS).get('Algorithm')
    assert alg == RECEIPT_ALG[rkey], alg
    cert, _ = e2.verify_signature(root, certs=[p.gw_sign[rkey].cert])
    assert cert == p.gw_sign[rkey].cert


# ---- positive ----------------------------------------------------------------

@pytest.mark.parametrize('n', [0, 1, 3])
@pytest.mark.parametrize('prof', sorted(PROFILES))
def test_profile_receipt(e2gw, e2pki, prof, n):
    ans = receipt_checked(e2gw, make(e2pki, prof, n), n)
    signed_in_kind(e2pki, prof, ans.body)


# "where senders differ": each accepted form on the 2.0 (or EC) leg
FORMS = {
    'ek-plain-Id': ('2.0', {'ek_id_attr': 'Id'}),
    'rki-in-keyvalue': ('2.0', {'rki_wrap': 'keyvalue'}),
    'rki-issuerserial': ('2.0', {'rki_ref': 'issuerserial'}),
    'rki-bst': ('2.0', {'rki_ref': 'bst'}),
    'rki-x509data-cert': ('2.0', {'rki_ref': 'x509data-cert'}),
    'rki-x509data-ski': ('2.0', {'rki_ref': 'x509data-ski'}),
    'prf-xenc11-ns': ('2.0', {'prf_ns': 'xenc11'}),
    'info-absent': ('2.0', {'info': None}),
    'info-empty': ('2.0', {'info': b''}),
    'salt-absent': ('2.0', {'salt': None}),
    'kw-aes256-keylength-32': ('2.0', {'kw': 256}),
    'signer-pkipath': ('2.0', {'token': 'X509PKIPathv1'}),
    'ec-eckv-bare': ('2.0-ec', {'eckv_wrap': 'bare'}),
    'ec-eckv-in-keyvalue-rki-wrapped': ('2.0-ec', {'rki_wrap': 'keyvalue'}),
    'bdew-pkipath': ('bdew', {'token': 'X509PKIPathv1'}),
    # empty bit strings, each with its padding-count octet
    'bdew-concat-empty-party-info': ('bdew', {'algorithm_id': '00', 'party_u': '00',
                                              'party_v': '00'}),
    # XML Encryption 1.1 5.6.3's own ECDH-ES example: empty hexBinary party infos
    'bdew-concat-xmlenc11-example': ('bdew', {'algorithm_id': '00', 'party_u': '',
                                              'party_v': ''}),
    'bdew-rki-issuerserial-in-keyvalue': ('bdew', {'rki_ref': 'issuerserial',
                                                   'rki_wrap': 'keyvalue'}),
    'ec-p384-sign-and-agree': ('2.0-ec', lambda p: {
        'signer': p.signers['p384'], 'sig_hash': 'sha384',
        'recipient': e2.Recipient(p.agree['p384'].cert)}),
    'ec-brainpool-hkdf': ('2.0-ec', lambda p: {
        'signer': p.signers['brainpoolP256r1'],
        'recipient': e2.Recipient(p.agree['brainpoolP256r1'].cert), 'rki_ref': 'issuerserial'}),
    'ec-p256-kw-aes256-prf-sha384': ('2.0-ec', {'kw': 256, 'prf': 'sha384'}),
}


@pytest.mark.parametrize('form', sorted(FORMS))
def test_sender_forms_accepted(e2gw, e2pki, form):
    prof, opts = FORMS[form]
    if callable(opts):
        opts = opts(e2pki)
    b = make(e2pki, prof, 1, **opts)
    ans = accepted(e2gw, b)
    assert sorted(nrr_references(ans.body)) == sorted(b.references)
    assert stored(e2gw, b.message_id) == PAYLOADS[:1]


# ---- negative ----------------------------------------------------------------

# name -> (profile, options or a function of the pki giving them, ebMS code);
# a part left out of the signature is a policy failure (README: "payload not
# covered" is EBMS:0103), a signature that does not verify EBMS:0101
NEGATIVES = {
    'hkdf-wrong-salt': ('2.0', {'xml_salt': os.urandom(32)}, 'EBMS:0102'),
    'hkdf-wrong-info': ('2.0', {'xml_info': b'not the info used'}, 'EBMS:0102'),
    'hkdf-salt-dropped': ('2.0', {'xml_salt': None}, 'EBMS:0102'),
    'keylength-32-kw-aes128': ('2.0', {'key_length': 32}, 'EBMS:0102'),
    'keylength-in-bits': ('2.0', {'xml_key_length': 128}, 'EBMS:0102'),
    'keylength-16-kw-aes256': ('2.0', {'kw': 256, 'key_length': 16}, 'EBMS:0102'),
    'x25519-small-order-zero': ('2.0', {'small_order': True}, 'EBMS:0102'),
    'x25519-small-order-one': ('2.0', {'small_order': e2.X25519_SMALL_ORDER[1]}, 'EBMS:0102'),
    'x25519-small-order-8': ('2.0', {'small_order': e2.X25519_SMALL_ORDER[2]}, 'EBMS:0102'),
    'ecdh-point-off-curve': ('2.0-ec', {'off_curve': True}, 'EBMS:0102'),
    'brainpool-point-off-curve': ('bdew', {'off_curve': True}, 'EBMS:0102'),
    'concatkdf-algorithmid-changed': ('bdew', {'xml_algorithm_id': '0000'}, 'EBMS:0102'),
    'wrong-recipient-key': ('2.0', lambda p: {'recipient': e2.Recipient(
        p.other_x25519.cert, ref_cert=p.agree['x25519'].cert)}, 'EBMS:0102'),
    'unknown-recipient-cert': ('2.0', lambda p: {'recipient': e2.Recipient(
        p.other_x25519.cert)}, 'EBMS:0102'),
    'ed25519-noncanonical-s': ('2.0', {'ed25519_noncanonical': True}, 'EBMS:0101'),
    'ecdsa-der-signature': ('2.0-ec', {'ecdsa_der': True}, 'EBMS:0101'),
    'bdew-ecdsa-der-signature': ('bdew', {'ecdsa_der': True}, 'EBMS:0101'),
    'untrusted-ed25519-signer': ('2.0', lambda p: {'signer': p.stranger_ed}, 'EBMS:0101'),
    'downgrade-rsa-signature': ('2.0', lambda p: {'signer': p.signers['rsa']}, 'EBMS:0103'),
    'downgrade-rsa-oaep': ('2.0', lambda p: {'ka': 'rsa-oaep', 'recipient': e2.Recipient(
        p.rsa_enc.cert)}, 'EBMS:0103'),
    'ec-leg-x25519': ('2.0-ec', lambda p: {'ka': 'x25519', 'recipient': e2.Recipient(
        p.agree['x25519'].cert)}, 'EBMS:0103'),
    'ec-leg-ed25519-signature': ('2.0-ec', lambda p: {'signer': p.signers['ed25519']},
                                 'EBMS:0103'),
    'bdew-leg-hkdf': ('bdew', {'kdf': 'hkdf'}, 'EBMS:0103'),
    '2.0-leg-concatkdf': ('2.0', {'kdf': 'concatkdf'}, 'EBMS:0103'),
    '2.0-leg-kw-aes192': ('2.0', {'kw': 192}, 'EBMS:0103'),
    'bdew-concatkdf-sha384-not-listed': ('bdew', {'concat_digest': 'sha384'}, 'EBMS:0103'),
    'originator-ed25519-key': ('2.0', {'x25519_raw': bytes.fromhex(
        '302a300506032b6570032100') + bytes(range(32))}, 'EBMS:0102'),
    'ed25519-truncated': ('2.0', {'sig_truncate': True}, 'EBMS:0101'),
    'ecdsa-truncated': ('2.0-ec', {'sig_truncate': True}, 'EBMS:0101'),
    'messaging-not-signed': ('2.0', {'skip_refs': ['#msg-1']}, 'EBMS:0103'),
    'body-not-signed': ('2.0', {'skip_refs': ['#body-1']}, 'EBMS:0103'),
    'attachment-not-signed': ('2.0', {'skip_refs': ['cid:']}, 'EBMS:0103'),
    'ec-messaging-not-signed': ('2.0-ec', {'skip_refs': ['#msg-1']}, 'EBMS:0103'),
    'unencrypted-on-2.0-leg': ('2.0', lambda p: {'recipient': False}, 'EBMS:0103'),
}


@pytest.mark.parametrize('name', sorted(NEGATIVES))
def test_negative(e2gw, e2pki, name):
    prof, opts, code = NEGATIVES[name]
    if callable(opts):
        opts = opts(e2pki)
    ans = refused(e2gw, make(e2pki, prof, 1, **opts), code)
    # the leg is known: its eb:Error is signed in kind, with its receipt key
    signed_in_kind(e2pki, prof, ans.body)


def test_payload_tampered_after_signing(e2gw, e2pki):
    """The 1.x suite's basics on a 2.0 message: an attachment's ciphertext
    flipped (AES-GCM tag) -> 0102; the Messaging header edited after
    signing -> 0101."""
    b = make(e2pki, '2.0', 1)
    body = bytearray(b.body)
    i = body.rindex(b'\r\n--') - 20
    body[i] ^= 1
    refused(e2gw, e2.Built(content_type=b.content_type, body=bytes(body),
                           message_id=b.message_id), 'EBMS:0102')
    b = make(e2pki, '2.0', 1)
    assert b'conv-1' in b.body
    refused(e2gw, e2.Built(content_type=b.content_type,
                           body=b.body.replace(b'conv-1', b'conv-2', 1),
                           message_id=b.message_id), 'EBMS:0101')


def test_1x_leg_beside(e2gw, e2pki):
    """The 1.x leg on the same gateway as the 2.0 legs: RSA signature,
    rsa-oaep, aes128-gcm; its Receipt signed with the RSA pair."""
    frm, action = ONE_X
    b = e2.build(new_mid(), PAYLOADS[:1], e2pki.signers['rsa'], e2.Recipient(e2pki.rsa_enc.cert),
                 ka='rsa-oaep', env=dict(frm=frm, to=GW_PARTY, service=SERVICE, action=action))
    ans = receipt_checked(e2gw, b, 1)
    root = e2.parse(ans.body)
    assert root.find('.//ds:SignatureMethod', e2.NS).get('Algorithm') == e2.RSA_SHA256


def test_2_0_signature_on_1x_leg(e2gw, e2pki):
    frm, action = ONE_X
    b = e2.build(new_mid(), PAYLOADS[:1], e2pki.signers['ed25519'],
                 env=dict(frm=frm, to=GW_PARTY, service=SERVICE, action=action))
    refused(e2gw, b, 'EBMS:0103')


def _signed_20(p, n, **opts):
    frm, action = SIGNED_20
    return e2.build(new_mid(), PAYLOADS[:n], opts.pop('signer', p.signers['ed25519']),
                    ca_cert=p.ca.cert,
                    env=dict(frm=frm, to=GW_PARTY, service=SERVICE, action=action), **opts)


@pytest.mark.parametrize('n', [0, 1, 3])
def test_ed25519_signed_only(e2gw, e2pki, n):
    """Ed25519 alone (a 2.0 leg with encryption optional), compressed
    attachments: Receipt signed with Ed25519, NRR, retry, payloads."""
    ans = receipt_checked(e2gw, _signed_20(e2pki, n), n)
    signed_in_kind(e2pki, '2.0', ans.body)


@pytest.mark.parametrize('case', ['noncanonical', 'truncated', 'messaging-not-signed',
                                  'rsa-downgrade', 'pkipath'])
def test_ed25519_signed_only_cases(e2gw, e2pki, case):
    if case == 'pkipath':
        receipt_checked(e2gw, _signed_20(e2pki, 1, token='X509PKIPathv1'), 1)
        return
    opts, code = {'noncanonical': ({'ed25519_noncanonical': True}, 'EBMS:0101'),
                  'truncated': ({'sig_truncate': True}, 'EBMS:0101'),
                  'messaging-not-signed': ({'skip_refs': ['#msg-1']}, 'EBMS:0103'),
                  'rsa-downgrade': ({'signer': e2pki.signers['rsa']}, 'EBMS:0103')}[case]
    refused(e2gw, _signed_20(e2pki, 1, **opts), code)
