"""eDelivery AS4 2.0 signatures end to end (issue 13): the independent sender
in edelivery2.py (written from the specs, proven in
test_edelivery2_builder.py) signs with Ed25519 (eddsa-ed25519) and with
ECDSA on P-256, P-384 and brainpoolP256r1 (XML-DSig 1.1 raw r || s), in an
X509v3 or X509PKIPathv1 token; the real binary, on both backends, checks
them on legs with explicit algorithm lists beside a 1.x leg: Receipts whose
NRR digests are the request's references, the same Receipt bytes for a
retry, the original payloads stored; DER or truncated signatures, a
non-canonical Ed25519 S, unlisted hashes or keys, parts left out of the
signature and an Ed25519 signature on the 1.x leg refused with nothing
stored.  (Key agreement and the per-leg profiles: test_edelivery2_profiles.py.)
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import edelivery2 as e2  # noqa: E402
from conftest import Gateway, make_dsn  # noqa: E402
from edelivery2_gw import (  # noqa: E402
    ONE_X, _leg, e2pki, make_on, receipt_checked, refused)

assert e2pki  # a fixture, used by name

# ---- elliptic-curve signatures and the 1.x leg (no key agreement) -------------
#
# The ECDSA signatures of the independent sender on the P-256, P-384 and
# brainpoolP256r1 curves (raw r || s), checked by the gateway's verifier on a
# leg with an explicit list; an Ed25519 signature on a 1.x leg; rsa-oaep
# (the 1.x key transport) from the same sender.

EC_LEG = ('urn:as4gw:e2:partner-ecsig', 'urn:as4gw:e2:DeliverEcSig')
ED_LEG = ('urn:as4gw:e2:partner-edsig', 'urn:as4gw:e2:DeliverEdSig')


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def ecgw(request, tmp_path_factory, e2pki):
    d = tmp_path_factory.mktemp('ecgw-' + request.param)
    p = e2pki
    legs = _leg('ec-sign', EC_LEG[0], EC_LEG[1],
                [p.signers[k].cert_path for k in ('p256', 'p384', 'brainpoolP256r1')],
                p.ca.cert_path, [(p.rsa_enc.cert_path, p.rsa_enc.key_path)],
                # no profile attribute: an edelivery-1.x leg with its own
                # list, whose Receipts the default (RSA) pair signs
                'ecdsa-sha256 ecdsa-sha384 sha256 rsa-oaep aes128-gcm',
                encryption='optional')
    legs += _leg('ed-sign', ED_LEG[0], ED_LEG[1], [p.signers['ed25519'].cert_path],
                 p.ca.cert_path, [(p.rsa_enc.cert_path, p.rsa_enc.key_path)],
                 'eddsa-ed25519 sha256 rsa-oaep aes128-gcm', encryption='optional')
    legs += _leg('e2-1x', ONE_X[0], ONE_X[1],
                 [p.signers['rsa'].cert_path, p.signers['ed25519'].cert_path], p.ca.cert_path,
                 [(p.rsa_enc.cert_path, p.rsa_enc.key_path)], None, encryption='optional')
    gw = Gateway(d, p.dev, make_dsn(request.param, d), legs=legs).start()
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc}: {gw.logtext()[-2000:]}'


ECSIG = {'p256-sha256': ('p256', {}), 'p384-sha384': ('p384', {'sig_hash': 'sha384'}),
         'p256-sha384': ('p256', {'sig_hash': 'sha384'}),
         'brainpoolP256r1-sha256': ('brainpoolP256r1', {}),
         'p256-pkipath': ('p256', {'token': 'X509PKIPathv1'}),
         'brainpoolP256r1-pkipath': ('brainpoolP256r1', {'token': 'X509PKIPathv1'})}


@pytest.mark.parametrize('n', [0, 1, 3])
@pytest.mark.parametrize('kind', sorted(ECSIG))
def test_ecdsa_signature_receipt(ecgw, e2pki, kind, n):
    skind, opts = ECSIG[kind]
    receipt_checked(ecgw, make_on(EC_LEG, e2pki.signers[skind], n, ca_cert=e2pki.ca.cert,
                                  **opts), n)


def test_ecdsa_signed_rsa_oaep_encrypted(ecgw, e2pki):
    """ECDSA signature with the 1.x key transport (EncryptedKey Id form)."""
    b = make_on(EC_LEG, e2pki.signers['p256'], 3, e2.Recipient(e2pki.rsa_enc.cert),
                ka='rsa-oaep', ek_id_attr='Id')
    receipt_checked(ecgw, b, 3)


@pytest.mark.parametrize('kind', ['p256', 'brainpoolP256r1', 'p384'])
def test_ecdsa_der_signature_refused(ecgw, e2pki, kind):
    """XML-DSig 1.1 6.4.3 wants r || s; the DER form is refused (EBMS:0101)."""
    b = make_on(EC_LEG, e2pki.signers[kind], 1, ecdsa_der=True,
                sig_hash='sha384' if kind == 'p384' else 'sha256')
    refused(ecgw, b, 'EBMS:0101')


def test_ecdsa_hash_not_listed_refused(ecgw, e2pki):
    """ecdsa-sha512 on a leg that lists ecdsa-sha256/384 only: EBMS:0103."""
    refused(ecgw, make_on(EC_LEG, e2pki.signers['p256'], 1, sig_hash='sha512'), 'EBMS:0103')


def test_ecdsa_wrong_key_refused(ecgw, e2pki):
    """A P-256 signature by a key of the right curve whose certificate the
    leg does not list (same CA): EBMS:0101."""
    other = e2pki.signer('partner-p256-unlisted', 'p256')
    refused(ecgw, make_on(EC_LEG, other, 1), 'EBMS:0101')


@pytest.mark.parametrize('n', [0, 1, 3])
@pytest.mark.parametrize('token', ['X509v3', 'X509PKIPathv1'])
def test_ed25519_signature_receipt(ecgw, e2pki, token, n):
    """Ed25519 (RFC 8032 pure, eddsa-ed25519) from the independent sender
    on a leg that lists it: Receipt with NRR, retry, payloads."""
    receipt_checked(ecgw, make_on(ED_LEG, e2pki.signers['ed25519'], n, token=token,
                                  ca_cert=e2pki.ca.cert), n)


def test_ed25519_signed_rsa_oaep_encrypted(ecgw, e2pki):
    b = make_on(ED_LEG, e2pki.signers['ed25519'], 3, e2.Recipient(e2pki.rsa_enc.cert),
                ka='rsa-oaep')
    receipt_checked(ecgw, b, 3)


ED_REFUSED = {'noncanonical-s': ({'ed25519_noncanonical': True}, 'EBMS:0101'),
              'truncated': ({'sig_truncate': True}, 'EBMS:0101'),
              'messaging-not-signed': ({'skip_refs': ['#msg-1']}, 'EBMS:0103'),
              'attachment-not-signed': ({'skip_refs': ['cid:']}, 'EBMS:0103')}


@pytest.mark.parametrize('case', sorted(ED_REFUSED))
def test_ed25519_refused(ecgw, e2pki, case):
    opts, code = ED_REFUSED[case]
    refused(ecgw, make_on(ED_LEG, e2pki.signers['ed25519'], 1, **opts), code)


def test_ed25519_signature_on_1x_leg(ecgw, e2pki):
    """A 2.0 signature on a leg whose (default) list does not name
    eddsa-ed25519, from a certificate the leg lists: EBMS:0103."""
    refused(ecgw, make_on(ONE_X, e2pki.signers['ed25519'], 1), 'EBMS:0103')


def test_1x_leg_rsa_beside(ecgw, e2pki):
    """The 1.x leg on the same gateway: RSA signature, rsa-oaep, aes128-gcm."""
    b = make_on(ONE_X, e2pki.signers['rsa'], 1, e2.Recipient(e2pki.rsa_enc.cert),
                ka='rsa-oaep', ek_id_attr='Id')
    receipt_checked(ecgw, b, 1)
