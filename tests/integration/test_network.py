"""Network legs over HTTP (issue 12 item 1), on SQLite and PostgreSQL.

A <network> leg accepts a signature by any certificate that chains to the
network's anchors (and carries its certificate policy), but only for the
eb:From PartyId its party rule reads in the certificate (Peppol: the CN,
type urn:fdc:peppol.eu:2017:identifiers:ap).  From, Service and Action are
open; To and security stay fixed.  The binding is checked after the
signature verified: a member claiming another member's id, and a
certificate of another CA claiming a member's id, are EBMS:0101 with
nothing stored.  A listed-signer leg beside it works unchanged.

The network PKI (root, AP CA, members; another CA) is generated here with
python3-cryptography under tmp; messages come from `as4gw push --sign`
with each member's key (`--save-request`), POSTed to the real binary.
"""
import datetime
import os
import re
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.x509.oid import NameOID

import tamper
from conftest import (BIN, SIGNED_LEG, SRC, free_port, new_id, run_as4gw, shared_path,
                      write_config)
from tamper import Message

AP = 'urn:fdc:peppol.eu:2017:identifiers:ap'
POLICY = '1.3.6.1.4.1.99999.12.1'
GATEWAY = 'urn:as4gw:dev:gateway'
ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'

NET_LEG = f'''
  <pmode id="net">
    <from/>
    <to role="{ROLE}responder"><partyId>{GATEWAY}</partyId></to>
    <anyService/>
    <anyAction/>
    <security signing="required">
      <network>
        <anchor>{{net}}/bundle.pem</anchor>
        <issuer>CN=Test Network AP CA, O=as4gw network test</issuer>
        <policy>{POLICY}</policy>
        <party type="{AP}" source="cn"/>
      </network>
    </security>
  </pmode>
'''


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, 'as4gw network test')])


def _cert(path, cn, key, issuer=None, issuer_key=None, ca=False, policy=POLICY, san=None):
    """A certificate (PEM at path): CA or member, with policy and SAN."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    b = (x509.CertificateBuilder().subject_name(_name(cn))
         .issuer_name(issuer.subject if issuer is not None else _name(cn))
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=365))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(digital_signature=not ca, key_encipherment=not ca,
                                      content_commitment=False, data_encipherment=False,
                                      key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                      encipher_only=False, decipher_only=False), critical=True))
    if policy is not None and not ca:
        b = b.add_extension(x509.CertificatePolicies([x509.PolicyInformation(
            x509.ObjectIdentifier(policy), None)]), critical=False)
    if san is not None:
        b = b.add_extension(x509.SubjectAlternativeName(san), critical=False)
    cert = b.sign(issuer_key if issuer_key is not None else key, hashes.SHA256())
    with open(path, 'wb') as f:
        f.write(cert.public_bytes(tamper.serialization.Encoding.PEM))
    return cert


@pytest.fixture(scope='module')
def net(tmp_path_factory):
    """The network: root -> AP CA -> members a, b, nopolicy; another root ->
    its member 'evil' with a's CN."""
    d = tmp_path_factory.mktemp('network')
    keys = {n: tamper.new_rsa_key() for n in
            ('root', 'apca', 'a', 'b', 'nopolicy', 'other', 'evil')}
    root = _cert(d / 'root.pem', 'Test Network Root', keys['root'], ca=True)
    apca = _cert(d / 'apca.pem', 'Test Network AP CA', keys['apca'], root, keys['root'],
                 ca=True)
    _cert(d / 'a.crt', 'POP000001', keys['a'], apca, keys['apca'])
    _cert(d / 'b.crt', 'POP000002', keys['b'], apca, keys['apca'])
    _cert(d / 'nopolicy.crt', 'POP000003', keys['nopolicy'], apca, keys['apca'],
          policy=None)
    other = _cert(d / 'other.pem', 'Test Network AP CA', keys['other'], ca=True)
    _cert(d / 'evil.crt', 'POP000001', keys['evil'], other, keys['other'])
    for n, k in keys.items():
        tamper.save_key(k, d / f'{n}.key')
    (d / 'bundle.pem').write_bytes((d / 'apca.pem').read_bytes() + (d / 'root.pem').read_bytes())
    return d


@pytest.fixture
def gw(gateway_factory, net):
    return gateway_factory(legs=NET_LEG.replace('{net}', str(net)) + SIGNED_LEG).start()


def pushed(tmp_path, mid, sign_cert, sign_key, frm, service='urn:as4gw:test:any-service',
           action='urn:as4gw:test:AnyAction'):
    """A message signed by `as4gw push` with this key, From frm (TYPE::VALUE)."""
    out = tmp_path / f'{mid.split("@")[0]}.req'
    payload = tmp_path / 'payload.xml'
    payload.write_bytes(b'<Invoice>network</Invoice>')
    p = subprocess.run(
        [BIN, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4', '--from', frm,
         '--to', GATEWAY, '--service', service, '--action', action, '--message-id', mid,
         '--payload', f'{payload};mime=application/xml', '--sign',
         '--sign-cert', str(sign_cert), '--sign-key', str(sign_key),
         '--connect-timeout', '2', '--timeout', '5', '--save-request', str(out)],
        capture_output=True, text=True, timeout=60)
    assert out.exists(), p.stderr
    return Message.load(str(out)).http()


def member(tmp_path, net, mid, who, claims, **kw):
    return pushed(tmp_path, mid, net / f'{who}.crt', net / f'{who}.key', f'{AP}::{claims}', **kw)


def log_of(gw, mid):
    lines = [l for l in gw.log_lines()
             if l.get('event') == 'request' and l.get('message_id') == mid]
    assert lines, gw.logtext()[-2000:]
    return lines[-1]


def accepted(gw, msg, mid):
    ans = gw.post(*msg)
    assert ans.status == 200 and ans.is_receipt, (ans, log_of(gw, mid))
    return ans


def refused(gw, msg, mid, code='EBMS:0101'):
    before = gw.store.totals()
    ans = gw.post(*msg)
    assert ans.status == 200 and ans.error_code == code, (ans, log_of(gw, mid))
    assert gw.store.totals() == before, f'stored: {log_of(gw, mid)}'
    assert gw.store.counts(mid) == (0, 0, 0)
    return log_of(gw, mid)


def test_member_claiming_itself(gw, net, tmp_path):
    """Member A claiming A: Receipt, stored under A's "type:value" and the
    network leg; another member with other Service/Action too (open)."""
    mid = new_id()
    accepted(gw, member(tmp_path, net, mid, 'a', 'POP000001'), mid)
    assert gw.store.counts(mid) == (1, 1, 1)
    row = gw.store.query('SELECT from_party, to_party, pmode_id, service, action FROM inbox '
                         'WHERE message_id = ?', mid)[0]
    assert row == (f'{AP}:POP000001', GATEWAY, 'net', 'urn:as4gw:test:any-service',
                   'urn:as4gw:test:AnyAction'), row
    assert log_of(gw, mid)['from_party'] == f'{AP}:POP000001'
    mid2 = new_id()
    accepted(gw, member(tmp_path, net, mid2, 'b', 'POP000002',
                        service='urn:other:service', action='Other'), mid2)
    assert gw.store.query('SELECT from_party, service, action FROM inbox '
                          'WHERE message_id = ?', mid2)[0] == (
        f'{AP}:POP000002', 'urn:other:service', 'Other')


def test_member_claiming_another(gw, net, tmp_path):
    """A valid signature by member A claiming member B's id: EBMS:0101."""
    mid = new_id()
    line = refused(gw, member(tmp_path, net, mid, 'a', 'POP000002'), mid)
    assert 'bound to the sending party' in line.get('error', '') + line.get('detail', ''), line


def test_other_ca(gw, net, tmp_path):
    """A certificate of another CA (same CN and CA name as the network's):
    EBMS:0101."""
    mid = new_id()
    refused(gw, member(tmp_path, net, mid, 'evil', 'POP000001'), mid)


def test_missing_policy(gw, net, tmp_path):
    """A member of the network's CA without the required certificate
    policy: EBMS:0101."""
    mid = new_id()
    refused(gw, member(tmp_path, net, mid, 'nopolicy', 'POP000003'), mid)


def test_party_type_must_match(gw, net, tmp_path):
    """A member claiming its id with another PartyId type matches no leg."""
    mid = new_id()
    refused(gw, pushed(tmp_path, mid, net / 'a.crt', net / 'a.key', 'urn:x:other::POP000001'),
            mid, 'EBMS:0010')


def test_same_message_id_two_members(gw, net, tmp_path):
    """The inbox key is the sending party plus the MessageId: B's message
    under A's MessageId is B's own row."""
    mid = new_id()
    accepted(gw, member(tmp_path, net, mid, 'a', 'POP000001'), mid)
    accepted(gw, member(tmp_path, net, mid, 'b', 'POP000002'), mid)
    rows = sorted(r[0] for r in gw.store.query('SELECT from_party FROM inbox '
                                               'WHERE message_id = ?', mid))
    assert rows == [f'{AP}:POP000001', f'{AP}:POP000002']


def test_listed_signer_leg_unchanged(gw, pki, tmp_path):
    """The listed-signer leg beside the network leg: its partner is
    accepted, a network member claiming that partner's id is not."""
    mid = new_id()
    accepted(gw, pushed(tmp_path, mid, pki / 'sender.crt', pki / 'sender.key',
                        'urn:as4gw:dev:sender', 'urn:as4gw:dev:service',
                        'urn:as4gw:dev:SignedOnly'), mid)
    assert gw.store.query('SELECT from_party, pmode_id FROM inbox WHERE message_id = ?',
                          mid)[0] == ('urn:as4gw:dev:sender', 'dev-signed')


def test_network_member_cannot_use_listed_leg(gw, net, pki, tmp_path):
    mid = new_id()
    refused(gw, pushed(tmp_path, mid, net / 'a.crt', net / 'a.key', 'urn:as4gw:dev:sender',
                       'urn:as4gw:dev:service', 'urn:as4gw:dev:SignedOnly'), mid)


@pytest.mark.parametrize('legs, says', [
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><service>urn:s</service>'
     '<action>a</action><security signing="never"/></pmode>', 'only a <network> leg'),
    ('<pmode id="x"><from><partyId>p</partyId></from><to><partyId>g</partyId></to>'
     '<anyService/><action>a</action><security signing="never"/></pmode>', 'need a <network>'),
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security signing="optional"><network><anchor>{net}/bundle.pem</anchor>'
     '<party source="cn"/></network></security></pmode>', 'signing="required"'),
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security><signer><certificate>{net}/a.crt</certificate></signer>'
     '<network><anchor>{net}/bundle.pem</anchor><party/></network></security></pmode>',
     'replaces <signer>'),
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security><network><anchor>{net}/bundle.pem</anchor>'
     '<party source="subject"/></network></security></pmode>', '@attribute'),
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security><network><anchor>{net}/bundle.pem</anchor><issuer>not a name</issuer>'
     '<party/></network></security></pmode>', 'not a distinguished name'),
    # two network legs of one party type on one route but other Actions
    # lists that overlap: ambiguous
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security><network><anchor>{net}/bundle.pem</anchor><party type="t"/></network>'
     '</security></pmode>'
     '<pmode id="y"><from/><to><partyId>g</partyId></to><anyService/><action>a</action>'
     '<security><network><anchor>{net}/bundle.pem</anchor><party type="t"/></network>'
     '</security></pmode>', 'ambiguous'),
    # a network leg whose members could claim a listed leg's typed PartyId
    ('<pmode id="x"><from/><to><partyId>g</partyId></to><anyService/><anyAction/>'
     '<security><network><anchor>{net}/bundle.pem</anchor><party type="t"/></network>'
     '</security></pmode>'
     '<pmode id="y"><from><partyId type="t">p</partyId></from><to><partyId>g</partyId></to>'
     '<service>urn:s</service><action>a</action><security signing="never"/></pmode>',
     'ambiguous'),
])
def test_config_refused(tmp_path, pki, net, legs, says):
    """What a network leg may not be: refused at load with a message that
    says why (pmode-check, as serve)."""
    cfg = write_config(tmp_path / 'c.xml', pki, legs=legs.replace('{net}', str(net)))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode != 0 and says in p.stderr + p.stdout, p


# ---- recorded Peppol traffic under a network leg ---------------------------

PEPPOL_TEST_CAS = ['a0627c7d3e96', 'bd77a11e2b21',   # AP TEST CA G2, root TEST CA G2
                   'b965544218e0', '0e9ab7342cd2']   # AP TEST CA G3, root TEST CA G3
DUMP = 'corpus/messages/phax_phase4/phase4-peppol-client/src/test/resources/dump-raw.as4out'


def peppol_bundle(tmp_path):
    """The Peppol test CAs from ../shared/corpus/keys as one bundle (skips
    loudly without ../shared)."""
    out = tmp_path / 'peppol-test-cas.pem'
    out.write_bytes(b''.join(open(shared_path(f'corpus/keys/{k}.pem'), 'rb').read()
                             for k in PEPPOL_TEST_CAS))
    return out


def test_recorded_peppol_usermessage(gateway_factory, tmp_path):
    """The only signed Peppol UserMessage of the corpus (phase4 -> POP000306,
    2026-01-29, corpus row 75) under a network leg with the Peppol test CAs,
    at its own instant: it matches the network leg (open From, Service,
    Action; not EBMS:0010), and is refused at decryption — it is encrypted
    to POP000306's key, which is not public — with EBMS:0102, nothing
    stored.  (No recorded Peppol UserMessage can be accepted end to end: the
    others in the corpus are Receipts, whose certificates test_trust.c
    checks under the same CAs.)"""
    dump = shared_path(DUMP)
    bundle = peppol_bundle(tmp_path)
    leg = f'''
  <pmode id="peppol-network">
    <agreement>urn:fdc:peppol.eu:2017:agreements:tia:ap_provider</agreement>
    <from role="{ROLE}initiator"/>
    <to role="{ROLE}responder"><partyId type="{AP}">POP000306</partyId></to>
    <anyService/>
    <anyAction/>
    <security signing="required" encryption="required">
      <network>
        <anchor>{bundle}</anchor>
        <issuer>CN=PEPPOL ACCESS POINT TEST CA - G3, OU=FOR TEST ONLY, O=OpenPEPPOL AISBL, C=BE</issuer>
        <party type="{AP}" source="cn"/>
      </network>
    </security>
  </pmode>'''
    gw = gateway_factory(legs=leg, extra_gateway='<replay><verifyAt>2026-01-29T15:39:03.805Z'
                         '</verifyAt></replay>').start()
    before = gw.store.totals()
    p = subprocess.run([BIN, 'replay', '--url', gw.url, '--verbose', '--expect', 'error', dump],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, (p.stdout[:500], p.stderr, gw.logtext()[-2000:])
    line = [l for l in gw.log_lines() if l.get('event') == 'request'][-1]
    assert line['ebms_code'] == 'EBMS:0102' and line.get('pmode') == 'peppol-network', line
    assert gw.store.totals() == before


def test_commented_peppol_leg_loads(tmp_path, pki):
    """The commented Peppol receiving leg of conf/as4gw.xml, uncommented
    with test files in place of its paths (the Peppol test CAs, the dev
    gateway pair), loads: `pmode-check` accepts it."""
    bundle = peppol_bundle(tmp_path)
    text = open(os.path.join(SRC, 'conf', 'as4gw.xml')).read()
    leg = text[text.index('<pmode id="peppol-ap-billing">'):]
    leg = leg[:leg.index('</pmode>') + len('</pmode>')]
    leg = re.sub(r'<anchor>[^<]*</anchor>', f'<anchor>{bundle}</anchor>', leg)
    leg = re.sub(r'<certificate>[^<]*</certificate>', f'<certificate>{pki}/gateway.crt'
                 '</certificate>', leg)
    leg = re.sub(r'<key>[^<]*</key>', f'<key>{pki}/gateway.key</key>', leg)
    cfg = write_config(tmp_path / 'peppol.xml', pki, legs=leg)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p
    assert 'peppol-ap-billing' in p.stdout and 'any network member' in p.stdout, p.stdout


# ---- live revocation of network members ------------------------------------

@pytest.fixture(scope='module')
def rv(tmp_path_factory):
    from revocpki import OpenSSLResponder, RevocHTTP, RevocPKI
    p = RevocPKI(tmp_path_factory.mktemp('network-revoc'))
    responder = OpenSSLResponder(p).start()
    web = RevocHTTP(p, slow_s=12).start()
    yield p
    responder.stop()
    web.stop()


def test_revoked_member(gateway_factory, rv, tmp_path):
    """A network leg with revocation="require": a member whose OCSP status is
    good is accepted, a revoked member (valid signature, its own CN) is
    EBMS:0101 with nothing stored."""
    leg = f'''
  <pmode id="net-rv">
    <from/>
    <to role="{ROLE}responder"><partyId>{GATEWAY}</partyId></to>
    <anyService/>
    <anyAction/>
    <security signing="required" revocation="require">
      <network><anchor>{rv.path('ca.crt')}</anchor><party type="urn:rv:member"/></network>
    </security>
  </pmode>'''
    gw = gateway_factory(legs=leg, extra_gateway='<revocation><connectTimeoutMs>500'
                         '</connectTimeoutMs><timeoutSeconds>3</timeoutSeconds></revocation>'
                         ).start()
    mid = new_id()
    accepted(gw, pushed(tmp_path, mid, rv.path('good.crt'), rv.path('good.key'),
                        'urn:rv:member::sender-good'), mid)
    assert gw.store.counts(mid) == (1, 1, 1)
    mid = new_id()
    refused(gw, pushed(tmp_path, mid, rv.path('revoked.crt'), rv.path('revoked.key'),
                       'urn:rv:member::sender-revoked'), mid)
