"""`as4gw push --sign --encrypt --compress` against the real gateway (issue 3,
item 8): the message eDelivery AS4 1.15 specifies on the sending side, the NRR
Receipt check, and the gateway refusing what a leg's policy does not accept.
Every test with a gateway runs on SQLite and PostgreSQL.

The saved request is checked here from the specs with ElementTree (not with
as4gw's code), and, when ../shared is present, by the independent checker
../shared/corpus/tools/as4check.py (Python cryptography), which verifies the
signature and decrypts with the development PKI."""
import hashlib
import http.client
import http.server
import os
import re
import subprocess
import threading
import xml.etree.ElementTree as ET

import pytest

from conftest import DEV_LEG, SIGNED_LEG, free_port, new_id, run_as4gw, shared_path

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
LEG_HEAD = f'''
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>'''
TRUST = ('<signer><certificate>{pki}/sender.crt</certificate></signer>'
         '<trust><anchor>{pki}/ca.crt</anchor></trust>')
# signing and encryption required (decryption: the gateway's signing pair)
SECURE_LEG = f'''
  <pmode id="dev-secure">{LEG_HEAD}
    <action>urn:as4gw:dev:Secure</action>
    <security signing="required" encryption="required">{TRUST}</security>
  </pmode>
'''
# encryption required, never signed
ENCRYPTED_LEG = f'''
  <pmode id="dev-encrypted">{LEG_HEAD}
    <action>urn:as4gw:dev:EncryptedOnly</action>
    <security signing="never" encryption="required"/>
  </pmode>
'''
# signed, but the Receipt carries no NRR (push --sign must not accept that)
NO_NRR_LEG = f'''
  <pmode id="dev-no-nrr">{LEG_HEAD}
    <action>urn:as4gw:dev:NoNrr</action>
    <security signing="required">{TRUST}</security>
    <receipt nonRepudiation="false"/>
  </pmode>
'''
LEGS = DEV_LEG + SIGNED_LEG + SECURE_LEG + ENCRYPTED_LEG + NO_NRR_LEG

NS = {
    'S12': 'http://www.w3.org/2003/05/soap-envelope',
    'eb': 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
    'ebbp': 'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
    'wsse': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
    'wsu': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
    'ds': 'http://www.w3.org/2000/09/xmldsig#',
    'xenc': 'http://www.w3.org/2001/04/xmlenc#',
    'xenc11': 'http://www.w3.org/2009/xmlenc11#',
}
SWA = 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#'
WSU_ID = '{%s}Id' % NS['wsu']

# not canonical on purpose: attribute spacing, an empty element, a redundant
# namespace declaration (the SwA content transform canonicalizes XML parts)
XML_PAYLOAD = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
               b'<inv:Invoice xmlns:inv="urn:as4gw:test"  xmlns:x="urn:unused">\n'
               b'  <inv:Line   n="1" a=\'2\'/>\n</inv:Invoice>\n')
BIN_PAYLOAD = bytes(range(256)) * 40 + b'\r\n--not-a-boundary\r\n' + os.urandom(3000)


def tag(prefix, name):
    return '{%s}%s' % (NS[prefix], name)


@pytest.fixture
def gw(gateway_factory):
    return gateway_factory(legs=LEGS).start()


@pytest.fixture
def payloads(tmp_path):
    x = tmp_path / 'invoice.xml'
    x.write_bytes(XML_PAYLOAD)
    b = tmp_path / 'scan.bin'
    b.write_bytes(BIN_PAYLOAD)
    return [x, b]


def push(url, pki, mid, *extra, action='urn:as4gw:dev:Secure', payloads=(),
         sign=None, encrypt=None, compress=False, gateway_cert=True):
    """Run `as4gw push`; sign/encrypt name the PKI pair / certificate to use."""
    args = ['push', '--url', url, '--from', 'urn:as4gw:dev:sender',
            '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
            '--action', action, '--message-id', mid]
    if gateway_cert:
        args += ['--gateway-cert', f'{pki}/gateway.crt']
    for p in payloads:
        args += ['--payload', str(p)]
    if sign:
        args += ['--sign', '--sign-cert', f'{pki}/{sign}.crt', '--sign-key', f'{pki}/{sign}.key']
    if encrypt:
        args += ['--encrypt', '--recipient-cert', f'{pki}/{encrypt}.crt']
    if compress:
        args.append('--compress')
    return run_as4gw(*args, *extra)


def answer_body(stdout):
    first, _, rest = stdout.partition('\n')
    assert re.fullmatch(r'HTTP \d{3}', first), stdout[:200]
    return rest.encode().rstrip(b'\n')


def stored_receipt(store, mid):
    return bytes(store.query('SELECT receipt FROM inbox WHERE message_id = ?', mid)[0][0])


def stored_payloads(store, mid):
    return [(bytes(r[0]), r[1], r[2]) for r in store.query(
        'SELECT content, mime_type, properties FROM payload WHERE message_id = ? '
        'ORDER BY part_no', mid)]


def split_multipart(content_type, body):
    """[(headers dict lower-case, bytes)] of a multipart/related body."""
    boundary = re.search(r'boundary="?([^";]+)"?', content_type).group(1).encode()
    out = []
    for chunk in body.split(b'--' + boundary)[1:]:
        if chunk.startswith(b'--'):
            break
        head, _, data = chunk[2:].partition(b'\r\n\r\n')
        headers = {}
        for line in head.split(b'\r\n'):
            k, _, v = line.decode().partition(':')
            headers[k.strip().lower()] = v.strip()
        out.append((headers, data[:-2] if data.endswith(b'\r\n') else data))
    return out


def saved_request(path):
    """(envelope root element, {content-id: (headers, bytes)}) of --save-request."""
    ct = open(f'{path}.ct').read().strip()
    parts = split_multipart(ct, open(path, 'rb').read())
    env = ET.fromstring(parts[0][1])
    return env, {h['content-id'].strip('<>'): (h, d) for h, d in parts[1:]}


def signed_references(env):
    si = env.find('S12:Header/wsse:Security/ds:Signature/ds:SignedInfo', NS)
    return [(r.get('URI'), r.find('ds:DigestValue', NS).text) for r in si.findall('ds:Reference', NS)]


def nrr_references(receipt_bytes):
    doc = ET.fromstring(receipt_bytes)
    nri = doc.find('S12:Header/eb:Messaging/eb:SignalMessage/eb:Receipt/'
                   'ebbp:NonRepudiationInformation', NS)
    assert nri is not None, receipt_bytes[:500]
    return [(r.get('URI'), r.find('ds:DigestValue', NS).text)
            for r in nri.findall('ebbp:MessagePartNRInformation/ds:Reference', NS)]


def check_envelope(env, cids, signed=True, encrypted=True, compressed=True):
    """What eDelivery AS4 1.15 wants in the header, read from the XML."""
    sec = env.find('S12:Header/wsse:Security', NS)
    assert sec is not None and sec.get('{%s}mustUnderstand' % NS['S12']) == 'true'
    kids = [c.tag for c in sec]
    if encrypted:
        # the EncryptedKey first, so a streaming receiver can decrypt first
        assert kids[0] == tag('xenc', 'EncryptedKey')
        assert kids[1:1 + len(cids)] == [tag('xenc', 'EncryptedData')] * len(cids)
        ek = sec.find('xenc:EncryptedKey', NS)
        em = ek.find('xenc:EncryptionMethod', NS)
        assert em.get('Algorithm') == NS['xenc11'] + 'rsa-oaep'
        assert em.find('ds:DigestMethod', NS).get('Algorithm') == NS['xenc'] + 'sha256'
        assert em.find('xenc11:MGF', NS).get('Algorithm') == NS['xenc11'] + 'mgf1sha256'
        listed = {d.get('URI') for d in ek.findall('xenc:ReferenceList/xenc:DataReference', NS)}
        targets, types = set(), []
        for ed in sec.findall('xenc:EncryptedData', NS):
            assert '#' + ed.get('Id') in listed
            assert ed.get('Type') == SWA + 'Attachment-Content-Only'
            assert ed.find('xenc:EncryptionMethod', NS).get('Algorithm') == NS['xenc11'] + 'aes128-gcm'
            types.append(ed.get('MimeType'))  # the plaintext's type (what was signed)
            cr = ed.find('xenc:CipherData/xenc:CipherReference', NS)
            assert cr.find('xenc:Transforms/ds:Transform', NS).get('Algorithm') == \
                SWA + 'Attachment-Ciphertext-Transform'
            targets.add(cr.get('URI'))
        assert targets == {'cid:' + c for c in cids}
        assert sorted(types) == (['application/gzip'] * len(cids) if compressed
                                 else ['application/octet-stream', 'application/xml'])
    if not signed:
        assert sec.find('ds:Signature', NS) is None
        return
    assert kids[-2:] == [tag('wsse', 'BinarySecurityToken'), tag('ds', 'Signature')]
    bst = sec.find('wsse:BinarySecurityToken', NS)
    assert bst.get('ValueType').endswith('#X509v3')
    sig = sec.find('ds:Signature', NS)
    si = sig.find('ds:SignedInfo', NS)
    assert si.find('ds:CanonicalizationMethod', NS).get('Algorithm') == \
        'http://www.w3.org/2001/10/xml-exc-c14n#'
    assert si.find('ds:SignatureMethod', NS).get('Algorithm') == \
        'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
    messaging = env.find('S12:Header/eb:Messaging', NS)
    body = env.find('S12:Body', NS)
    want = ['#' + messaging.get(WSU_ID), '#' + body.get(WSU_ID)] + ['cid:' + c for c in cids]
    refs = si.findall('ds:Reference', NS)
    assert [r.get('URI') for r in refs] == want
    for r in refs:
        assert r.find('ds:DigestMethod', NS).get('Algorithm') == NS['xenc'] + 'sha256'
        transforms = [t.get('Algorithm') for t in r.findall('ds:Transforms/ds:Transform', NS)]
        assert transforms == ([SWA + 'Attachment-Content-Signature-Transform']
                              if r.get('URI').startswith('cid:')
                              else ['http://www.w3.org/2001/10/xml-exc-c14n#'])
    ref = sig.find('ds:KeyInfo/wsse:SecurityTokenReference/wsse:Reference', NS)
    assert ref.get('URI') == '#' + bst.get(WSU_ID)


def check_part_properties(env, cids, compressed):
    infos = env.findall('S12:Header/eb:Messaging/eb:UserMessage/eb:PayloadInfo/eb:PartInfo', NS)
    assert [i.get('href') for i in infos] == ['cid:' + c for c in cids]
    for info, mime in zip(infos, ('application/xml', 'application/octet-stream')):
        props = {p.get('name'): p.text for p in info.findall('eb:PartProperties/eb:Property', NS)}
        want = {'MimeType': mime}
        if compressed:
            want['CompressionType'] = 'application/gzip'
        assert props == want


def independent_check(tmp_path, pki, saved):
    """../shared/corpus/tools/as4check.py verifies the signature (all
    references) and decrypts with the development keys; skips loudly without
    ../shared."""
    tool = shared_path('corpus/tools/as4check.py')
    pool = tmp_path / 'keypool'
    pool.mkdir()
    for name in ('gateway', 'sender'):
        der = subprocess.run(['openssl', 'x509', '-in', f'{pki}/{name}.crt', '-outform', 'DER'],
                             check=True, capture_output=True).stdout
        h = hashlib.sha1(der).hexdigest()[:12]
        (pool / f'{h}.pem').write_bytes(open(f'{pki}/{name}.crt', 'rb').read())
        (pool / f'{h}.key.pem').write_bytes(open(f'{pki}/{name}.key', 'rb').read())
    http_file = tmp_path / 'request.http'
    http_file.write_bytes(b'Content-Type: ' + open(f'{saved}.ct', 'rb').read().strip() +
                          b'\r\n\r\n' + open(saved, 'rb').read())
    p = subprocess.run(['/usr/bin/python3', tool, str(http_file)], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, AS4POOL=str(pool)))
    assert 'PY: OK (SignatureValue + all 4 references)' in p.stdout, p.stdout + p.stderr
    assert "gunzip OK" in p.stdout, p.stdout


# ---- the round trip ----------------------------------------------------------

@pytest.mark.parametrize('compress', [True, False], ids=['compressed', 'uncompressed'])
def test_sign_encrypt_round_trip_nrr_matches_and_originals_stored(gw, pki, payloads, tmp_path,
                                                                  compress):
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = push(gw.url, pki, mid, '--save-request', saved, payloads=payloads, sign='sender',
             encrypt='gateway', compress=compress)
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified, 4 NRR digests match' in p.stderr
    assert gw.store.counts(mid) == (1, 2, 1)
    assert gw.store.totals() == (1, 2, 1)
    rows = stored_payloads(gw.store, mid)
    assert [r[0] for r in rows] == [XML_PAYLOAD, BIN_PAYLOAD]       # the ORIGINAL bytes
    assert [r[1] for r in rows] == ['application/xml', 'application/octet-stream']
    assert all(('CompressionType' in r[2]) == compress for r in rows)
    # what push printed is what was stored
    receipt = stored_receipt(gw.store, mid)
    assert answer_body(p.stdout) == receipt.rstrip(b'\n')
    # the request, read independently
    env, atts = saved_request(saved)
    cids = ['payload-1@as4gw-push', 'payload-2@as4gw-push']
    assert list(atts) == cids
    check_envelope(env, cids, compressed=compress)
    check_part_properties(env, cids, compress)
    for h, data in atts.values():
        assert h['content-type'] == 'application/octet-stream'
        assert XML_PAYLOAD not in data and b'Invoice' not in data and BIN_PAYLOAD[:1024] not in data
    # the Receipt's NRR holds exactly the references that were signed
    assert nrr_references(receipt) == signed_references(env)
    if compress:
        independent_check(tmp_path, pki, saved)


def test_signed_push_again_gets_the_stored_receipt_and_push_says_it_is_a_retry(gw, pki,
                                                                                payloads):
    """A second `push` is a new transmission (new Timestamp, new wsu:Ids, so new
    eb:Messaging and Body digests): the gateway answers with the stored Receipt,
    byte for byte, whose NRR proves the FIRST transmission.  push recognises
    it (issue 11 item 3): signed by the gateway, for this MessageId, and every
    payload digest is the one it signed now -> exit 0, and it says so."""
    mid = new_id()
    kw = dict(payloads=payloads, sign='sender', encrypt='gateway', compress=True)
    first = push(gw.url, pki, mid, **kw)
    assert first.returncode == 0, first.stderr
    second = push(gw.url, pki, mid, **kw)
    assert answer_body(second.stdout) == answer_body(first.stdout)
    assert answer_body(second.stdout) == stored_receipt(gw.store, mid).rstrip(b'\n')
    assert second.returncode == 0, second.stderr
    assert 'earlier transmission' in second.stderr, second.stderr
    assert '2 payload digests match' in second.stderr, second.stderr
    assert gw.store.counts(mid) == (1, 2, 1)
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1
    # without the gateway's certificate the Receipt proves nothing: still a failure
    third = push(gw.url, pki, mid, gateway_cert=False, **kw)
    assert third.returncode == 1
    assert 'no proof of receipt' in third.stderr
    assert '2 of 4 signed digests' in third.stderr, third.stderr


def test_signed_push_again_with_other_payload_is_no_retry(gw, pki, payloads, tmp_path):
    """Same MessageId, other payload bytes: the gateway refuses it as drift
    (EBMS:0004), and push fails — never "an earlier transmission"."""
    mid = new_id()
    first = push(gw.url, pki, mid, payloads=payloads, sign='sender', encrypt='gateway')
    assert first.returncode == 0, first.stderr
    other = tmp_path / 'other.xml'
    other.write_bytes(b'<Invoice xmlns="urn:as4gw:test">other</Invoice>')
    second = push(gw.url, pki, mid, payloads=(other,), sign='sender', encrypt='gateway')
    assert second.returncode == 1
    assert 'earlier transmission' not in second.stderr
    assert 'EBMS:0004' in second.stderr, second.stderr


def test_repeat_resends_the_same_signed_bytes_and_each_receipt_proves_them(gw, pki, payloads):
    """--repeat is a true retry: the same signed bytes, and the stored Receipt's
    NRR matches them every time."""
    mid = new_id()
    p = push(gw.url, pki, mid, '--count', '3', '--repeat', payloads=payloads, sign='sender',
             encrypt='gateway', compress=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count(f'receipt ok: ref {mid} signature verified, 4 NRR digests match') == 3
    assert 'sent 3: 3 ok, 0 failed' in p.stderr
    assert gw.store.counts(mid) == (1, 2, 1)
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 2


def test_replay_saved_signed_encrypted_request_gets_the_same_receipt(gw, pki, payloads, tmp_path):
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = push(gw.url, pki, mid, '--save-request', saved, payloads=payloads, sign='sender',
             encrypt='gateway', compress=True)
    assert p.returncode == 0, p.stderr
    for n in (1, 2):
        r = run_as4gw('replay', '--url', gw.url, '--verbose', '--expect', 'receipt', saved)
        assert r.returncode == 0, r.stdout + r.stderr
        head, _, body = r.stdout.partition('\n')
        assert head == f'{saved}: HTTP 200 receipt ref={mid}'
        assert body.encode().rstrip(b'\n') == answer_body(p.stdout)
        assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == n
    assert gw.store.counts(mid) == (1, 2, 1)
    assert [r[0] for r in stored_payloads(gw.store, mid)] == [XML_PAYLOAD, BIN_PAYLOAD]


# ---- what the secure leg refuses ----------------------------------------------

@pytest.mark.parametrize('sign,encrypt,compress,code', [
    (None, None, False, 'EBMS:0103'),            # neither signed nor encrypted
    (None, None, True, 'EBMS:0103'),
    ('sender', None, True, 'EBMS:0103'),         # signed, not encrypted
    (None, 'gateway', True, 'EBMS:0103'),        # encrypted, not signed
    ('gateway', 'gateway', True, 'EBMS:0101'),   # a valid signature by a key not bound to the leg
    ('sender', 'sender', True, 'EBMS:0102'),     # encrypted for the wrong recipient
    ('sender', 'sender', False, 'EBMS:0102'),
], ids=['plain', 'plain-compressed', 'signed-only', 'encrypted-only', 'unbound-signer',
        'wrong-recipient', 'wrong-recipient-uncompressed'])
def test_secure_leg_refuses_and_stores_nothing(gw, pki, payloads, sign, encrypt, compress, code):
    mid = new_id()
    p = push(gw.url, pki, mid, payloads=payloads, sign=sign, encrypt=encrypt, compress=compress)
    assert p.returncode == 1
    assert f'failed: {mid}: HTTP 200, error {code}' in p.stderr, p.stderr
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == (0, 0, 0)


# ---- a leg that requires signing only --------------------------------------------

@pytest.mark.parametrize('encrypt,compress', [(None, False), (None, True), ('gateway', True)],
                         ids=['sign', 'sign-compress', 'sign-encrypt-compress'])
def test_signed_leg_accepts_sign_alone_and_with_more(gw, pki, payloads, tmp_path, encrypt,
                                                     compress):
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = push(gw.url, pki, mid, '--save-request', saved, action='urn:as4gw:dev:SignedOnly',
             payloads=payloads, sign='sender', encrypt=encrypt, compress=compress)
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified, 4 NRR digests match' in p.stderr
    assert gw.store.counts(mid) == (1, 2, 1)
    assert [r[0] for r in stored_payloads(gw.store, mid)] == [XML_PAYLOAD, BIN_PAYLOAD]
    env, atts = saved_request(saved)
    cids = list(atts)
    check_envelope(env, cids, encrypted=encrypt is not None, compressed=compress)
    check_part_properties(env, cids, compress)
    if encrypt is None:
        types = [h['content-type'] for h, _ in atts.values()]
        assert types == (['application/gzip'] * 2 if compress
                         else ['application/xml', 'application/octet-stream'])
    assert nrr_references(stored_receipt(gw.store, mid)) == signed_references(env)


def test_signed_leg_without_payloads(gw, pki):
    """A bare SOAP message: Messaging and Body are signed, nothing else."""
    mid = new_id()
    p = push(gw.url, pki, mid, action='urn:as4gw:dev:SignedOnly', sign='sender')
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified, 2 NRR digests match' in p.stderr
    assert gw.store.counts(mid) == (1, 0, 1)


@pytest.mark.parametrize('sign,code', [(None, 'EBMS:0103'), ('gateway', 'EBMS:0101')],
                         ids=['unsigned', 'unbound-signer'])
def test_signed_leg_refusals(gw, pki, payloads, sign, code):
    mid = new_id()
    p = push(gw.url, pki, mid, action='urn:as4gw:dev:SignedOnly', payloads=payloads, sign=sign)
    assert p.returncode == 1
    assert f'error {code}' in p.stderr, p.stderr
    assert gw.store.counts(mid) == (0, 0, 0)


def test_encrypted_only_leg_gets_a_plain_receipt(gw, pki, payloads, tmp_path):
    """--encrypt without --sign: a Security header with only the encryption, and
    no NRR check (there is no signature to prove)."""
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = push(gw.url, pki, mid, '--save-request', saved, action='urn:as4gw:dev:EncryptedOnly',
             payloads=payloads, encrypt='gateway', compress=True)
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid} signature verified' in p.stderr
    assert 'NRR' not in p.stderr
    assert [r[0] for r in stored_payloads(gw.store, mid)] == [XML_PAYLOAD, BIN_PAYLOAD]
    env, atts = saved_request(saved)
    check_envelope(env, list(atts), signed=False)


def test_encrypted_part_without_mimetype_stored_with_its_declared_type(gw, pki, payloads,
                                                                       tmp_path):
    """Issue 10 item 11: a decrypted part whose PartProperties carry no
    MimeType is stored with the media type its EncryptedData declares
    (@MimeType; XML Encryption 1.1 3.1), not as the ciphertext part's
    application/octet-stream.  (The encrypted-only leg: no signature to
    keep valid while the property is taken out.)"""
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = push(f'http://127.0.0.1:{free_port()}/as4', pki, mid, '--save-request', saved,
             '--connect-timeout', '2', action='urn:as4gw:dev:EncryptedOnly',
             payloads=payloads, encrypt='gateway')
    assert saved.exists(), p.stderr
    ct = open(f'{saved}.ct').read().strip()
    body = saved.read_bytes()
    body, n = re.subn(rb'<eb:PartProperties><eb:Property name="MimeType">[^<]*</eb:Property>'
                      rb'</eb:PartProperties>', b'', body)
    assert n == 2, body[:2000]
    env, atts = saved_request(saved)
    assert [h['content-type'] for h, _ in atts.values()] == ['application/octet-stream'] * 2
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt, ans
    rows = stored_payloads(gw.store, mid)
    assert [r[0] for r in rows] == [XML_PAYLOAD, BIN_PAYLOAD]
    assert [r[1] for r in rows] == ['application/xml', 'application/octet-stream'], rows


def test_encrypted_message_to_a_leg_that_never_encrypts_is_refused(gw, pki, payloads):
    mid = new_id()
    p = push(gw.url, pki, mid, action='urn:as4gw:dev:Deliver', payloads=payloads,
             encrypt='gateway')
    assert p.returncode == 1
    assert 'error EBMS:0103' in p.stderr, p.stderr
    assert gw.store.counts(mid) == (0, 0, 0)


# ---- push's own check of the Receipt -------------------------------------------

def test_signed_push_refuses_a_receipt_without_nrr(gw, pki, payloads):
    """The gateway accepted and stored the message, but its Receipt proves
    nothing about what was signed: push must fail."""
    mid = new_id()
    p = push(gw.url, pki, mid, action='urn:as4gw:dev:NoNrr', payloads=payloads, sign='sender')
    assert p.returncode == 1
    assert f'failed: {mid}: no proof of receipt' in p.stderr
    assert 'not a non-repudiation receipt' in p.stderr
    assert gw.store.counts(mid) == (1, 2, 1)


class _TamperProxy(http.server.BaseHTTPRequestHandler):
    """Forwards a POST to the gateway and changes the Receipt it returns."""
    target_port = None
    mutate = None

    def do_POST(self):  # noqa: N802 (http.server naming)
        body = self.rfile.read(int(self.headers['Content-Length']))
        c = http.client.HTTPConnection('127.0.0.1', self.target_port, timeout=30)
        c.request('POST', self.path, body=body,
                  headers={'Content-Type': self.headers['Content-Type']})
        r = c.getresponse()
        data = type(self).mutate(r.read())
        self.send_response(r.status)
        self.send_header('Content-Type', r.getheader('Content-Type'))
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        c.close()

    def log_message(self, *args):
        pass


def _flip_first_payload_digest(receipt):
    """Change the digest of the first cid: reference in the NRR."""
    i = receipt.index(b'URI="cid:')
    j = receipt.index(b'<ds:DigestValue>', i) + len(b'<ds:DigestValue>')
    return receipt[:j] + (b'A' if receipt[j:j + 1] != b'A' else b'B') + receipt[j + 1:]


def _drop_last_nrr_part(receipt):
    i = receipt.rindex(b'<ebbp:MessagePartNRInformation>')
    j = receipt.index(b'</ebbp:MessagePartNRInformation>', i) + \
        len(b'</ebbp:MessagePartNRInformation>')
    return receipt[:i] + receipt[j:]


@pytest.mark.parametrize('mutate,why', [
    (_flip_first_payload_digest, '3 of 4 signed digests in its 4 NRR references'),
    (_drop_last_nrr_part, '3 of 4 signed digests in its 3 NRR references'),
], ids=['digest-changed', 'reference-missing'])
def test_signed_push_refuses_a_receipt_whose_nrr_differs(gw, pki, payloads, mutate, why):
    """Through a proxy that alters the NRR (push without --gateway-cert, so the
    NRR comparison itself must catch it; with it, the Receipt signature would)."""
    handler = type('Proxy', (_TamperProxy,), {'target_port': gw.port,
                                              'mutate': staticmethod(mutate)})
    port = free_port()
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', port), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        mid = new_id()
        url = f'http://127.0.0.1:{port}/as4'
        p = push(url, pki, mid, payloads=payloads, sign='sender', encrypt='gateway',
                 compress=True, gateway_cert=False)
        assert p.returncode == 1
        assert f'failed: {mid}: no proof of receipt' in p.stderr
        assert why in p.stderr, p.stderr
        # and with --gateway-cert the altered Receipt fails its signature first
        mid2 = new_id()
        p2 = push(url, pki, mid2, payloads=payloads, sign='sender', encrypt='gateway',
                  compress=True)
        assert p2.returncode == 1
        assert 'receipt signature not valid' in p2.stderr, p2.stderr
    finally:
        srv.shutdown()
        srv.server_close()


# ---- refused before anything is sent -----------------------------------------------

def test_signing_an_xml_payload_with_a_doctype_fails_before_sending(gw, pki, tmp_path):
    """The SwA content transform cannot canonicalize XML with a DOCTYPE (and
    the gateway would refuse it): push fails and sends nothing."""
    bad = tmp_path / 'doctype.xml'
    bad.write_bytes(b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>')
    mid = new_id()
    p = push(gw.url, pki, mid, action='urn:as4gw:dev:SignedOnly', payloads=[bad], sign='sender')
    assert p.returncode == 1
    assert 'could not sign envelope' in p.stderr, p.stderr
    assert p.stdout == ''
    assert gw.store.totals() == (0, 0, 0)


BASE = ['push', '--url', 'http://127.0.0.1:1/as4', '--from', 'urn:a', '--to', 'urn:b',
        '--service', 's', '--action', 'a']


@pytest.mark.parametrize('extra,word', [
    (['--sign'], '--sign needs'),
    (['--sign', '--sign-cert', 'c.pem'], '--sign needs'),
    (['--sign-cert', 'c.pem', '--sign-key', 'k.pem', '--payload', 'x'], '--sign needs'),
    (['--encrypt', '--payload', 'x'], '--encrypt needs'),
    (['--recipient-cert', 'c.pem', '--payload', 'x'], '--encrypt needs'),
    (['--encrypt', '--recipient-cert', 'c.pem'], 'at least one --payload'),
    (['--compress'], 'at least one --payload'),
])
def test_security_usage_errors_exit_2(extra, word):
    p = run_as4gw(*BASE, *extra)
    assert p.returncode == 2, p.stderr
    assert word in p.stderr


def test_security_options_in_help():
    p = run_as4gw('push', '--help')
    assert p.returncode == 0
    for opt in ('--sign', '--sign-cert', '--sign-key', '--encrypt', '--recipient-cert',
                '--compress'):
        assert opt in p.stdout


@pytest.mark.parametrize('which,word', [
    ('key-mismatch', 'does not match certificate'),
    ('recipient-missing', 'could not open certificate'),
    ('recipient-not-pem', 'could not read a PEM certificate'),
])
def test_unusable_keys_fail_before_sending(pki, tmp_path, which, word):
    """Loaded before the first message is built: exit 1, nothing sent (the
    URL points at a closed port, so a send would say so)."""
    payload = tmp_path / 'p.xml'
    payload.write_bytes(XML_PAYLOAD)
    extra = {
        'key-mismatch': ['--sign', '--sign-cert', f'{pki}/sender.crt',
                         '--sign-key', f'{pki}/gateway.key'],
        'recipient-missing': ['--encrypt', '--recipient-cert', f'{tmp_path}/none.crt'],
        'recipient-not-pem': ['--encrypt', '--recipient-cert', f'{pki}/sender.key'],
    }[which]
    url = f'http://127.0.0.1:{free_port()}/as4'
    p = run_as4gw('push', '--url', url, '--from', 'urn:a', '--to', 'urn:b', '--service', 's',
                  '--action', 'a', '--payload', payload, *extra)
    assert p.returncode == 1
    assert word in p.stderr, p.stderr
    assert 'failed:' not in p.stderr
