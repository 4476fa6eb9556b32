"""Shared pieces of the eDelivery AS4 2.0 end-to-end tests (test_edelivery2.py,
test_edelivery2_profiles.py): legs, the test PKI fixture, message making and
the judging of answers (a Receipt with the request's references as NRR, a
refusal with nothing stored)."""
import os
import uuid
import xml.etree.ElementTree as ET

import pytest

import edelivery2 as e2
import edelivery2_pki as pk

INIT = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator'
RESP = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder'
GW_PARTY = 'urn:as4gw:dev:gateway'
SERVICE = 'urn:as4gw:e2:service'

ONE_X = ('urn:as4gw:e2:partner-1x', 'urn:as4gw:e2:Deliver1x')

NS = dict(e2.NS, ebbp='http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0')


def _leg(pid, frm, action, signer, ca, decryption, algorithms, encryption='required'):
    signers = ''.join(f'<certificate>{c}</certificate>'
                      for c in (signer if isinstance(signer, list) else [signer]))
    dec = ''.join(f'<decryption><certificate>{c}</certificate><key>{k}</key></decryption>'
                  for c, k in decryption)
    alg = f'<algorithms>{algorithms}</algorithms>' if algorithms else ''
    return f'''
  <pmode id="{pid}">
    <from role="{INIT}"><partyId>{frm}</partyId></from>
    <to role="{RESP}"><partyId>{GW_PARTY}</partyId></to>
    <service>{SERVICE}</service>
    <action>{action}</action>
    <security signing="required" encryption="{encryption}">
      <signer>{signers}</signer>
      <trust><anchor>{ca}</anchor></trust>
      {dec}
      {alg}
    </security>
  </pmode>
'''


@pytest.fixture(scope='module')
def e2pki(tmp_path_factory, pki):
    """The partners' signers and the gateway's key-agreement pairs."""
    p = pk.Pki(tmp_path_factory.mktemp('e2pki'))
    p.signers = {k: p.signer('partner-' + k, k) for k in ('ed25519', 'p256', 'p384',
                                                          'brainpoolP256r1', 'rsa')}
    p.agree = {k: p.agreement('gateway-ka-' + k, k) for k in ('x25519', 'p256', 'p384',
                                                              'brainpoolP256r1')}
    p.rsa_enc = p.rsa_decryption('gateway-rsa-enc')
    p.stranger = pk.Pki(tmp_path_factory.mktemp('e2stranger'), name='stranger CA')
    p.stranger_ed = p.stranger.signer('stranger-ed25519', 'ed25519')
    p.other_x25519 = p.stranger.agreement('stranger-x25519', 'x25519')
    p.dev = pki
    return p


PAYLOADS = [b'<Invoice xmlns="urn:as4gw:e2">' + b'1' * 100 + b'</Invoice>',
            b'<Note>two</Note>', b'<Big>' + os.urandom(3000).hex().encode() + b'</Big>']


def new_mid():
    return f'{uuid.uuid4()}@as4gw-e2'


def totals(gw):
    return gw.store.totals()


def nrr_references(body):
    doc = ET.fromstring(body)
    nri = doc.find('.//eb:SignalMessage/eb:Receipt/ebbp:NonRepudiationInformation', NS)
    assert nri is not None, body[:600]
    return [(r.get('URI'), r.find('ds:DigestValue', NS).text)
            for r in nri.findall('ebbp:MessagePartNRInformation/ds:Reference', NS)]


def accepted(gw, b):
    ans = gw.post(*b.http())
    assert ans.status == 200 and ans.is_receipt, f'{ans!r}\n{gw.logtext()[-1500:]}'
    assert ans.ref_to == b.message_id and ans.signed
    return ans


def refused(gw, b, code):
    before = totals(gw)
    ans = gw.post(*b.http())
    assert ans.status == 200 and ans.error_code == code, f'{ans!r}\n{gw.logtext()[-1500:]}'
    assert ans.ref_to in (b.message_id, None) and ans.signed, ans
    assert totals(gw) == before, 'a refused message was stored'
    return ans


def stored(gw, mid):
    return [bytes(r[0]) for r in gw.store.query(
        'SELECT content FROM payload WHERE message_id = ? ORDER BY part_no', mid)]


def make_on(leg, signer, n=1, recipient=None, **opts):
    frm, action = leg
    return e2.build(new_mid(), PAYLOADS[:n], signer, recipient,
                    env=dict(frm=frm, to=GW_PARTY, service=SERVICE, action=action), **opts)


def receipt_checked(gw, b, n):
    """Receipt with the request's references as NRR, the same Receipt bytes
    for a retry, the original payloads stored once."""
    before = totals(gw)
    ans = accepted(gw, b)
    assert sorted(nrr_references(ans.body)) == sorted(b.references)
    assert len(b.references) == 2 + n
    assert stored(gw, b.message_id) == PAYLOADS[:n]
    after = totals(gw)
    assert after[:2] == (before[0] + 1, before[1] + n)
    again = gw.post(*b.http())
    assert again.status == 200 and again.body == ans.body
    assert totals(gw) == after
    return ans
