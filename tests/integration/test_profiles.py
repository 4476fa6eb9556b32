"""Issue 13 items 3-5: per-leg profiles beside each other on one gateway.

A 1.x leg, an eDelivery AS4 2.0 leg and a 2.0-EC leg share the parties and
differ by action.  A 1.x (RSA) message to the 2.0 leg is refused with
EBMS:0103 and nothing is stored, even from a signer the leg trusts (no
downgrade); the 1.x leg beside it still accepts it with an RSA-signed
Receipt; a message to a 2.0 leg gets a Receipt (and an eb:Error) signed with
the leg's own key, whose SignatureMethod and SignatureValue are checked here
with python-cryptography, not with the gateway's code.  `pmode-check` names
each leg's profile and key types; a 2.0 leg whose keys do not fit stops the
start with a JSON line naming it; certs/gen-dev-pki.sh makes the pairs.
Over HTTP against the real binary, on SQLite and PostgreSQL."""
import base64
import json
import os
import re
import stat
import subprocess
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa, x25519
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import tamper
from conftest import SRC, new_id, run_as4gw, write_config

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
DSIG_MORE = 'http://www.w3.org/2001/04/xmldsig-more#'
ED25519 = 'http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519'
ECDSA_SHA256 = DSIG_MORE + 'ecdsa-sha256'
RSA_SHA256 = DSIG_MORE + 'rsa-sha256'
NS = {'ds': 'http://www.w3.org/2000/09/xmldsig#',
      'wsse': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd'}
PAYLOAD = b'<?xml version="1.0"?><inv:Invoice xmlns:inv="urn:as4gw:test"/>\n'

SIGNING_KEYS = '''<signingKeys>
  <signing id="ed25519"><certificate>{pki}/gateway-ed25519.crt</certificate><key>{pki}/gateway-ed25519.key</key></signing>
  <signing id="p256"><certificate>{pki}/gateway-p256.crt</certificate><key>{pki}/gateway-p256.key</key></signing>
</signingKeys>'''


def leg(ident, action, security):
    return f'''
  <pmode id="{ident}">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{action}</action>
    {security}
  </pmode>'''


LEG_1X = leg('one', 'urn:as4gw:dev:Deliver1x', '''<security signing="required">
      <signer><certificate>{pki}/sender.crt</certificate></signer>
      <trust><anchor>{pki}/ca.crt</anchor></trust>
    </security>''')
# the RSA sender is a trusted signer here too: what refuses it is the profile
LEG_20 = leg('two', 'urn:as4gw:dev:Deliver20', '''<security signing="optional" profile="edelivery-2.0">
      <signer><certificate>{pki}/sender.crt</certificate>
        <certificate>{pki}/sender-ed25519.crt</certificate></signer>
      <trust><anchor>{pki}/ca.crt</anchor></trust>
      <decryption><certificate>{pki}/gateway-x25519.crt</certificate><key>{pki}/gateway-x25519.key</key></decryption>
    </security>''')
LEG_20EC = leg('two-ec', 'urn:as4gw:dev:Deliver20EC', '''<security signing="optional" profile="edelivery-2.0-ec">
      <signer><certificate>{pki}/sender.crt</certificate>
        <certificate>{pki}/sender-p256.crt</certificate></signer>
      <trust><anchor>{pki}/ca.crt</anchor></trust>
      <decryption><certificate>{pki}/gateway-p256-ecdh.crt</certificate><key>{pki}/gateway-p256-ecdh.key</key></decryption>
    </security>''')
LEGS = LEG_1X + LEG_20 + LEG_20EC


def config_text(pki, legs=LEGS, keys=SIGNING_KEYS, tmp=None):
    text = open(write_config(tmp / f'{uuid.uuid4().hex}.xml', pki,
                             store=f'sqlite:{tmp}/x.db', legs=legs)).read()
    return text.replace('</signing>\n  </gateway>',
                        '</signing>\n' + keys.replace('{pki}', str(pki)) + '\n  </gateway>')


@pytest.fixture(scope='module')
def can_load(pki, tmp_path_factory):
    """The configuration of these tests loads: Ed25519 and EC signing pairs
    beside the RSA one (a pmode-check first, for a one-line reason)."""
    tmp = tmp_path_factory.mktemp('probe')
    cfg = tmp / 'c.xml'
    cfg.write_text(config_text(pki, tmp=tmp))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    return True


@pytest.fixture
def gw(can_load, gateway_factory, pki):
    return gateway_factory(legs=LEGS,
                           extra_gateway=SIGNING_KEYS.replace('{pki}', str(pki))).start()


def build(tmp_path, action, *extra, mid=None):
    """(message id, content type, body) of a message `as4gw push` builds
    (--write-requests) for action."""
    mid = mid or new_id()
    payload = tmp_path / f'{uuid.uuid4().hex}.xml'
    payload.write_bytes(PAYLOAD)
    out = tmp_path / f'{uuid.uuid4().hex}.req'
    p = run_as4gw('push', '--write-requests', out, '--from', 'urn:as4gw:dev:sender',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                  '--action', action, '--message-id', mid, '--payload', payload, *extra)
    assert p.returncode == 0, p.stderr
    ct, n, rest = open(out, 'rb').read().split(b'\n', 2)
    return mid, ct.decode(), rest[:int(n)]


def rsa_signed(tmp_path, pki, action):
    return build(tmp_path, action, '--sign', '--sign-cert', f'{pki}/sender.crt',
                 '--sign-key', f'{pki}/sender.key')


def verify_signal(body, cert_path):
    """The SignatureMethod of a signed signal, after checking with
    python-cryptography that its SignatureValue verifies over the exclusive
    c14n of SignedInfo with cert_path's key, that every same-document
    reference's digest matches, and that its BinarySecurityToken carries
    that certificate."""
    root = tamper._parse(body.decode('utf-8'))
    sig = root.find('.//ds:Signature', NS)
    assert sig is not None, body[:500]
    si = sig.find('ds:SignedInfo', NS)
    method = si.find('ds:SignatureMethod', NS).get('Algorithm')
    octets = tamper._c14n(si, si.find('ds:CanonicalizationMethod', NS))
    value = base64.b64decode(''.join(sig.find('ds:SignatureValue', NS).text.split()))
    cert = x509.load_pem_x509_certificate(open(cert_path, 'rb').read())
    key = cert.public_key()
    if method == ED25519:
        assert isinstance(key, ed25519.Ed25519PublicKey)
        key.verify(value, octets)
    elif method == ECDSA_SHA256:     # XML-DSig 1.1 6.4.3: raw r || s
        assert isinstance(key, ec.EllipticCurvePublicKey) and len(value) == 64
        key.verify(encode_dss_signature(int.from_bytes(value[:32], 'big'),
                                        int.from_bytes(value[32:], 'big')),
                   octets, ec.ECDSA(hashes.SHA256()))
    elif method == RSA_SHA256:
        assert isinstance(key, rsa.RSAPublicKey)
        key.verify(value, octets, padding.PKCS1v15(), hashes.SHA256())
    else:
        raise AssertionError(f'unexpected SignatureMethod {method}')
    refs = si.findall('ds:Reference', NS)
    assert refs
    for ref in refs:
        assert ref.get('URI').startswith('#')
        assert tamper._digest_of_id_ref(root, ref) == ref.find('ds:DigestValue', NS).text
    bst = root.find('.//wsse:BinarySecurityToken', NS)
    assert base64.b64decode(''.join(bst.text.split())) == cert.public_bytes(
        serialization.Encoding.DER)
    return method


def refused_0103(g, ans, mid, before):
    assert ans.status == 200 and ans.error_code == 'EBMS:0103', ans
    assert g.store.counts(mid) == (0, 0, 0)
    assert g.store.totals() == before
    line = [ln for ln in g.log_lines() if ln.get('event') == 'request'
            and ln.get('message_id') == mid]
    assert len(line) == 1 and line[0]['ebms_code'] == 'EBMS:0103', g.logtext()[-2000:]


@pytest.mark.parametrize('ident,action,cert,method', [
    ('two', 'urn:as4gw:dev:Deliver20', 'gateway-ed25519.crt', ED25519),
    ('two-ec', 'urn:as4gw:dev:Deliver20EC', 'gateway-p256.crt', ECDSA_SHA256),
])
def test_rsa_signature_on_a_2_0_leg_is_refused(gw, tmp_path, pki, ident, action, cert, method):
    """Downgrade: an RSA-signed 1.x message from a signer the leg trusts is
    EBMS:0103, nothing stored; the eb:Error is signed with the leg's key."""
    before = gw.store.totals()
    mid, ct, body = rsa_signed(tmp_path, pki, action)
    ans = gw.post(ct, body)
    refused_0103(gw, ans, mid, before)
    assert verify_signal(ans.body, f'{pki}/{cert}') == method


@pytest.mark.parametrize('action', ['urn:as4gw:dev:Deliver20', 'urn:as4gw:dev:Deliver20EC'])
def test_rsa_oaep_on_a_2_0_leg_is_refused(gw, tmp_path, pki, action):
    """Downgrade: a payload key transported with rsa-oaep (to the gateway's
    RSA certificate) is EBMS:0103 on a 2.0 leg, nothing stored."""
    before = gw.store.totals()
    mid, ct, body = build(tmp_path, action, '--encrypt', '--recipient-cert',
                          f'{pki}/gateway.crt')
    refused_0103(gw, gw.post(ct, body), mid, before)


def test_1x_leg_beside_them_accepts_rsa(gw, tmp_path, pki):
    """The same RSA-signed message to the 1.x leg on the same gateway: an NRR
    Receipt signed with the RSA pair, stored once; a retry gets the same bytes."""
    mid, ct, body = rsa_signed(tmp_path, pki, 'urn:as4gw:dev:Deliver1x')
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    assert b'NonRepudiationInformation' in ans.body
    assert verify_signal(ans.body, f'{pki}/gateway.crt') == RSA_SHA256
    assert gw.store.counts(mid) == (1, 1, 1)
    again = gw.post(ct, body)
    assert again.body == ans.body and gw.store.counts(mid) == (1, 1, 1)


@pytest.mark.parametrize('action,cert,method', [
    ('urn:as4gw:dev:Deliver20', 'gateway-ed25519.crt', ED25519),
    ('urn:as4gw:dev:Deliver20EC', 'gateway-p256.crt', ECDSA_SHA256),
])
def test_receipt_of_a_2_0_leg_is_signed_in_kind(gw, tmp_path, pki, action, cert, method):
    """An unsigned message (signing="optional") to a 2.0 leg: a Receipt signed
    with the leg's key (Ed25519 / ECDSA P-256), stored; a retry, the same bytes."""
    mid, ct, body = build(tmp_path, action)
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    assert verify_signal(ans.body, f'{pki}/{cert}') == method
    assert gw.store.counts(mid) == (1, 1, 1)
    assert gw.post(ct, body).body == ans.body


@pytest.mark.parametrize('action,sender,cert,method', [
    ('urn:as4gw:dev:Deliver20', 'sender-ed25519', 'gateway-ed25519.crt', ED25519),
    ('urn:as4gw:dev:Deliver20EC', 'sender-p256', 'gateway-p256.crt', ECDSA_SHA256),
])
def test_signed_message_of_a_2_0_leg_gets_nrr_in_kind(gw, tmp_path, pki, action, sender, cert,
                                                     method):
    """Signed by the leg's Ed25519 / P-256 sender: an NRR Receipt signed with
    the leg's key, its NRR references those of the message."""
    mid, ct, body = build(tmp_path, action, '--sign', '--sign-cert', f'{pki}/{sender}.crt',
                          '--sign-key', f'{pki}/{sender}.key')
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    assert ans.body.count(b'ebbp:MessagePartNRInformation>') == 2 * 3   # Messaging, Body, payload
    assert verify_signal(ans.body, f'{pki}/{cert}') == method
    assert gw.store.counts(mid) == (1, 1, 1)


def test_error_before_a_leg_is_known_is_signed_with_the_default_pair(gw, tmp_path, pki):
    """No leg matches (EBMS:0010): the eb:Error is signed with <signing>."""
    before = gw.store.totals()
    mid, ct, body = build(tmp_path, 'urn:as4gw:dev:NoSuchAction')
    ans = gw.post(ct, body)
    assert ans.error_code == 'EBMS:0010', ans
    assert verify_signal(ans.body, f'{pki}/gateway.crt') == RSA_SHA256
    assert gw.store.totals() == before


@pytest.mark.parametrize('action,profile,sender,recipient,cert', [
    ('urn:as4gw:dev:Deliver20', 'edelivery-2.0', 'sender-ed25519', 'gateway-x25519',
     'gateway-ed25519'),
    ('urn:as4gw:dev:Deliver20EC', 'edelivery-2.0-ec', 'sender-p256', 'gateway-p256-ecdh',
     'gateway-p256'),
])
def test_push_profile_signed_encrypted_compressed(gw, tmp_path, pki, action, profile, sender,
                                                  recipient, cert):
    """`as4gw push --profile` to the 2.0 legs, as scripts/run suggests:
    signed, encrypted by key agreement to the leg's <decryption> pair,
    compressed; push verifies the Receipt against the leg's key."""
    payload = tmp_path / 'p.xml'
    payload.write_bytes(PAYLOAD)
    mid = new_id()
    p = run_as4gw('push', '--url', gw.url, '--message-id', mid, '--from', 'urn:as4gw:dev:sender',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                  '--action', action, '--payload', payload, '--profile', profile, '--compress',
                  '--sign', '--sign-cert', f'{pki}/{sender}.crt', '--sign-key', f'{pki}/{sender}.key',
                  '--encrypt', '--recipient-cert', f'{pki}/{recipient}.crt',
                  '--gateway-cert', f'{pki}/{cert}.crt')
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr, gw.logtext()[-2000:])
    assert 'signature verified, 3 NRR digests match' in p.stderr, p.stderr
    assert gw.store.counts(mid) == (1, 1, 1)
    stored = gw.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert stored and bytes(stored[0][0]) == PAYLOAD


def test_pmode_check_names_profiles_and_key_types(can_load, tmp_path, pki):
    cfg = tmp_path / 'c.xml'
    cfg.write_text(config_text(pki, tmp=tmp_path))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    rows = {m.group(1): m.group(2) for m in re.finditer(r'^  ([\w.-]+): (.*)$', p.stdout, re.M)}
    one, two, two_ec = rows['one'], rows['two'], rows['two-ec']
    assert 'profile edelivery-1.x, algorithms rsa-sha256 ' in one, one
    assert 'decryption key types RSA 2048,' in one, one
    assert re.search(r'receipt key default \(RSA 2048, subject [^)]*CN=as4gw-dev-gateway,', one), one
    assert ('profile edelivery-2.0, algorithms eddsa-ed25519 sha256 sha384 sha512 x25519 hkdf '
            'kw-aes128 kw-aes256 aes128-gcm aes256-gcm,') in two, two
    assert 'rsa' not in two.split('profile edelivery-2.0, ')[1].split(', timestamp')[0]
    assert 'decryption key types X25519,' in two, two
    assert re.search(r'receipt key ed25519 \(Ed25519, subject [^)]*CN=as4gw-dev-gateway-ed25519,'
                     r'[^)]*, signs http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519\)', two), two
    assert 'profile edelivery-2.0-ec, algorithms ecdsa-sha256 ' in two_ec, two_ec
    assert 'decryption key types EC P-256,' in two_ec, two_ec
    assert re.search(r'receipt key p256 \(EC P-256, subject [^)]*CN=as4gw-dev-gateway-p256,'
                     r'[^)]*, signs http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256\)', two_ec), two_ec
    assert re.search(r'^  certificate signing ed25519 \S+gateway-ed25519\.crt: subject ',
                     p.stdout, re.M), p.stdout


def test_explicit_list_wins_over_the_profile(can_load, tmp_path, pki):
    """BDEW: edelivery-2.0-ec with an explicit brainpool/ConcatKDF list and
    the brainpool pair named for its Receipts."""
    bdew = leg('bdew', 'urn:as4gw:dev:Bdew', '''<security signing="never" profile="edelivery-2.0-ec">
      <decryption><certificate>{pki}/gateway-bp256-ecdh.crt</certificate><key>{pki}/gateway-bp256-ecdh.key</key></decryption>
      <algorithms>ecdsa-sha256 sha256 ecdh-es concatkdf kw-aes128 aes128-gcm</algorithms>
    </security><receipt signingKey="bp256"/>''')
    keys = SIGNING_KEYS.replace('</signingKeys>', '<signing id="bp256"><certificate>{pki}/'
                                'gateway-bp256.crt</certificate><key>{pki}/gateway-bp256.key'
                                '</key></signing></signingKeys>')
    cfg = tmp_path / 'c.xml'
    cfg.write_text(config_text(pki, legs=bdew, keys=keys, tmp=tmp_path))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    row = [ln for ln in p.stdout.splitlines() if ln.startswith('  bdew: ')][0]
    assert ('profile edelivery-2.0-ec, algorithms (listed) ecdsa-sha256 sha256 ecdh-es concatkdf '
            'kw-aes128 aes128-gcm,') in row, row
    assert 'receipt key bp256 (EC brainpoolP256r1, subject' in row, row
    assert 'decryption key types EC brainpoolP256r1,' in row, row


def start_failed(tmp_path, pki, legs, keys=''):
    cfg = tmp_path / f'{uuid.uuid4().hex}.xml'
    cfg.write_text(config_text(pki, legs=legs, keys=keys, tmp=tmp_path))
    p = run_as4gw('serve', '-c', cfg, timeout=30)
    assert p.returncode != 0
    events = [json.loads(ln) for ln in p.stderr.splitlines() if ln.startswith('{')]
    failed = [e for e in events if e.get('event') == 'start-failed']
    assert len(failed) == 1, p.stderr
    check = run_as4gw('pmode-check', '-c', cfg)
    assert check.returncode == 1 and check.stdout == '', check
    return json.dumps(failed[0]), check.stderr


@pytest.mark.parametrize('security,receipt,want', [
    # RSA decryption pairs (the default: the signing pair) on a 2.0 leg
    ('<security signing="never" profile="edelivery-2.0"/>', '',
     'pmode \\"bad\\": none of the gateway\'s decryption pairs fits edelivery-2.0'),
    ('<security signing="never" profile="edelivery-2.0"><decryption><certificate>{pki}/gateway.crt'
     '</certificate><key>{pki}/gateway.key</key></decryption></security>', '',
     'pmode \\"bad\\": decryption certificate \\"{pki}/gateway.crt\\" (RSA 2048) does not fit '
     'edelivery-2.0'),
    # no Ed25519 pair for its Receipts; the RSA pair named does not fit
    ('<security signing="never" encryption="never" profile="edelivery-2.0"/>', '',
     'pmode \\"bad\\": no gateway signing pair fits edelivery-2.0: add an Ed25519 pair'),
    ('<security signing="never" encryption="never" profile="edelivery-2.0-ec"/>',
     '<receipt signingKey="default"/>',
     'pmode \\"bad\\": receipt signingKey \\"default\\" (RSA 2048) does not fit edelivery-2.0-ec'),
])
def test_misfit_2_0_leg_stops_the_start(tmp_path, pki, security, receipt, want):
    """Keys that do not fit a 2.0 leg: serve's JSON start-up error names the
    leg, pmode-check refuses the same file (RSA keys only: runs everywhere)."""
    bad = leg('bad', 'urn:as4gw:dev:Bad', security + receipt)
    line, check = start_failed(tmp_path, pki, LEG_1X + bad)
    want = want.replace('{pki}', str(pki))
    assert want in line, line
    assert want.replace('\\"', '"') in check, check


def test_gen_dev_pki_makes_the_2_0_pairs(tmp_path):
    d = tmp_path / 'pki'
    p = subprocess.run([os.path.join(SRC, 'certs', 'gen-dev-pki.sh'), str(d)],
                       capture_output=True, text=True, check=True)
    kinds = {'gateway-ed25519': ed25519.Ed25519PrivateKey,
             'gateway-x25519': x25519.X25519PrivateKey,
             'gateway-p256': ec.EllipticCurvePrivateKey,
             'gateway-p256-ecdh': ec.EllipticCurvePrivateKey,
             'gateway-bp256': ec.EllipticCurvePrivateKey,
             'gateway-bp256-ecdh': ec.EllipticCurvePrivateKey,
             'sender-ed25519': ed25519.Ed25519PrivateKey,
             'sender-p256': ec.EllipticCurvePrivateKey,
             'sender-bp256': ec.EllipticCurvePrivateKey}
    curves = {'p256': 'secp256r1', 'bp256': 'brainpoolP256r1'}
    for name, kind in kinds.items():
        keyfile = d / f'{name}.key'
        assert stat.S_IMODE(os.stat(keyfile).st_mode) == 0o600, name
        key = serialization.load_pem_private_key(keyfile.read_bytes(), None)
        assert isinstance(key, kind), name
        cert = x509.load_pem_x509_certificate((d / f'{name}.crt').read_bytes())
        assert cert.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo) == \
            key.public_key().public_bytes(serialization.Encoding.DER,
                                          serialization.PublicFormat.SubjectPublicKeyInfo), name
        if kind is ec.EllipticCurvePrivateKey:
            assert key.curve.name == curves[name.split('-')[1]], name
        assert f'made: {name}.crt' in p.stdout
        v = subprocess.run(['openssl', 'verify', '-CAfile', str(d / 'ca.crt'), str(d / f'{name}.crt')],
                           capture_output=True, text=True)
        assert v.returncode == 0 and v.stdout.strip().endswith(': OK'), (name, v.stdout, v.stderr)
    # the X25519 certificate can only agree keys; the Ed25519 one only sign
    ku = x509.load_pem_x509_certificate((d / 'gateway-x25519.crt').read_bytes()).extensions \
        .get_extension_for_class(x509.KeyUsage).value
    assert ku.key_agreement and not ku.digital_signature
    # idempotent: a second run keeps every key
    again = subprocess.run([os.path.join(SRC, 'certs', 'gen-dev-pki.sh'), str(d)],
                           capture_output=True, text=True, check=True)
    assert 'made:' not in again.stdout and 'kept: gateway-x25519.key' in again.stdout


def test_shipped_config_has_the_2_0_legs(can_load, tmp_path, pki):
    """conf/as4gw.xml (scripts/run's configuration) with the test PKI: the
    1.x leg and, beside it, the 2.0 and 2.0-EC legs with keys of their kind."""
    text = open(os.path.join(SRC, 'conf', 'as4gw.xml')).read()
    text = text.replace('../certs/dev/', f'{pki}/').replace('../var/', f'{tmp_path}/')
    cfg = tmp_path / 'as4gw.xml'
    cfg.write_text(text)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    assert re.search(r'^  dev-sample: .*profile edelivery-1\.x', p.stdout, re.M), p.stdout
    assert re.search(r'^  dev-2\.0: .*action urn:as4gw:dev:Deliver20,.*receipt key ed25519 '
                     r'\(Ed25519,.*profile edelivery-2\.0,', p.stdout, re.M), p.stdout
    assert re.search(r'^  dev-2\.0-ec: .*action urn:as4gw:dev:Deliver20EC,.*decryption key types '
                     r'EC P-256,.*receipt key p256 \(EC P-256,', p.stdout, re.M), p.stdout


def test_key_agreement_pair_cannot_be_a_signing_pair(can_load, tmp_path, pki):
    keys = ('<signingKeys><signing id="x"><certificate>{pki}/gateway-x25519.crt</certificate>'
            '<key>{pki}/gateway-x25519.key</key></signing></signingKeys>')
    line, check = start_failed(tmp_path, pki, LEG_1X, keys=keys)
    assert 'signing pair \\"x\\" (X25519) cannot sign' in line, line
    assert 'signing pair "x" (X25519) cannot sign' in check, check
