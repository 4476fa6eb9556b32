"""Issue 11 item 9: rotating the gateway's encryption certificate.  A leg lists
up to four <decryption> pairs; partners switch to the new certificate at their
own pace, so for a while some encrypt for the old one and some for the new.
The pair is picked by the xenc:EncryptedKey's key reference (never by trying
each key): a reference naming none of them is EBMS:0102 with nothing stored,
and the log names the reference and the configured fingerprints while the
partner's answer stays the fixed text.  A pair marked retiring is logged and
counted each time a partner still uses it.  Over HTTP against the real binary,
on SQLite and PostgreSQL, with `as4gw push --encrypt` as the sender and, when
../shared is present, recorded AS4.NET and Domibus messages."""
import base64
import gzip
import hashlib
import os
import re
import signal
import uuid

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

import as4msg
import tamper
import test_security_corpus as corpus
from conftest import new_id, run_as4gw, shared_path
from test_ops_http import rewrite_config, scrape, val, wait_log

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
ACTION = 'urn:as4gw:dev:Rotating'
PAYLOAD = b'<?xml version="1.0"?><inv:Invoice xmlns:inv="urn:as4gw:test"/>\n'


def pair(keys, name, retiring=False):
    r = ' retiring="true"' if retiring else ''
    return (f'<decryption{r}><certificate>{keys}/{name}.crt</certificate>'
            f'<key>{keys}/{name}.key</key></decryption>')


def leg(pairs):
    """Encrypted, unsigned leg (push encrypts without signing) with pairs."""
    return f'''
  <pmode id="dev-rotating">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{ACTION}</action>
    <security signing="never" encryption="required">{''.join(pairs)}</security>
  </pmode>
'''


@pytest.fixture
def keys(tmp_path):
    """Three encryption pairs of the gateway: old, new, and one never configured."""
    d = tmp_path / 'enc'
    d.mkdir()
    for name in ('old', 'new', 'stranger'):
        k = tamper.new_rsa_key()
        tamper.save_key(k, d / f'{name}.key')
        tamper.issue_cert(d / f'{name}.crt', f'as4gw-enc-{name}', k)
    return d


def fp(cert_path):
    """The fingerprint prefix the gateway logs: sha256: + 16 hex digits."""
    cert = x509.load_pem_x509_certificate(open(cert_path, 'rb').read())
    return 'sha256:' + cert.fingerprint(hashes.SHA256()).hex()[:16]


def ski_b64(cert_path):
    cert = x509.load_pem_x509_certificate(open(cert_path, 'rb').read())
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    return base64.b64encode(ski).decode()


def push(gw, payload, mid, recipient, *extra):
    return run_as4gw('push', '--url', gw.url, '--from', 'urn:as4gw:dev:sender',
                     '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                     '--action', ACTION, '--message-id', mid, '--payload', str(payload),
                     '--encrypt', '--recipient-cert', str(recipient), *extra)


def built(tmp_path, payload, mid, recipient):
    """(content type, body) of an encrypted message `as4gw push` builds but
    does not send (--write-requests)."""
    out = tmp_path / f'{uuid.uuid4().hex}.req'
    p = run_as4gw('push', '--write-requests', out, '--from', 'urn:as4gw:dev:sender',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                  '--action', ACTION, '--message-id', mid, '--payload', str(payload),
                  '--encrypt', '--recipient-cert', str(recipient))
    assert p.returncode == 0, p.stderr
    data = open(out, 'rb').read()
    ct, n, rest = data.split(b'\n', 2)
    return ct.decode(), rest[:int(n)]


def request_line(gw, mid):
    lines = [ln for ln in gw.log_lines() if ln.get('event') == 'request'
             and ln.get('message_id') == mid]
    assert len(lines) == 1, gw.logtext()[-3000:]
    return lines[0]


def assert_refused_0102(gw, ans, mid, before):
    """EBMS:0102 with the fixed answer, nothing stored; the log line."""
    assert ans.error_code == 'EBMS:0102', ans
    assert b'none of the decryption' not in ans.body and b'sha256:' not in ans.body
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == before
    line = request_line(gw, mid)
    assert line['ebms_code'] == 'EBMS:0102' and line['error'] == 'decryption failed', line
    return line


@pytest.fixture
def payload(tmp_path):
    p = tmp_path / 'invoice.xml'
    p.write_bytes(PAYLOAD)
    return p


def test_old_and_new_certificate_both_decrypt(gateway_factory, keys, payload, tmp_path):
    """Two pairs: a message for the old certificate and one for the new are
    both decrypted and stored; the retiring one is logged and counted; a
    message for a third certificate is EBMS:0102 and nothing is stored."""
    gw = gateway_factory(legs=leg([pair(keys, 'new'), pair(keys, 'old', retiring=True)]))
    gw.start()
    got = {}
    for name in ('old', 'new'):
        mid = new_id()
        p = push(gw, payload, mid, keys / f'{name}.crt')
        assert p.returncode == 0, (p.stdout, p.stderr, gw.logtext()[-2000:])
        assert gw.store.counts(mid) == (1, 1, 1)
        content = gw.store.query('SELECT content FROM payload WHERE message_id = ?', mid)[0][0]
        assert bytes(content) == PAYLOAD
        got[name] = request_line(gw, mid)
    # the partner still on the old certificate: named in the log, counted
    assert got['old'].get('decryption_retiring') == fp(keys / 'old.crt'), got['old']
    assert 'decryption_retiring' not in got['new'], got['new']
    assert val(scrape(gw), 'as4gw_decryption_retiring_total') == 1

    before = gw.store.totals()
    mid = new_id()
    p = push(gw, payload, mid, keys / 'stranger.crt')
    assert p.returncode == 1
    line = assert_refused_0102(gw, as4msg.Answer(200, {}, _answer(p.stdout)), mid, before)
    # the log names what the EncryptedKey referenced and what is configured
    assert ski_b64(keys / 'stranger.crt') in line['detail'], line
    assert fp(keys / 'new.crt') in line['detail'] and fp(keys / 'old.crt') in line['detail']
    assert val(scrape(gw), 'as4gw_decryption_retiring_total') == 1


def _answer(stdout):
    """The answer body `as4gw push` printed after its status line."""
    first, _, rest = stdout.partition('\n')
    assert re.fullmatch(r'HTTP \d{3}.*', first), stdout[:300]
    return rest.encode().rstrip(b'\n')


def test_reference_to_another_certificate_is_refused(gateway_factory, keys, payload,
                                                     tmp_path):
    """Encrypted for the configured key, but its EncryptedKey names another
    certificate: refused (EBMS:0102), the key is not tried, nothing stored."""
    gw = gateway_factory(legs=leg([pair(keys, 'new')])).start()
    mid = new_id()
    ct, body = built(tmp_path, payload, mid, keys / 'new.crt')
    ours, theirs = ski_b64(keys / 'new.crt'), ski_b64(keys / 'stranger.crt')
    assert body.count(ours.encode()) == 1
    before = gw.store.totals()
    ans = gw.post(ct, body.replace(ours.encode(), theirs.encode()))
    line = assert_refused_0102(gw, ans, mid, before)
    assert theirs in line['detail'] and fp(keys / 'new.crt') in line['detail'], line
    # the untouched message decrypts
    assert gw.post(ct, body).is_receipt
    assert gw.store.counts(mid) == (1, 1, 1)


def test_reload_removing_the_old_pair(gateway_factory, keys, payload, pki):
    """SIGHUP with the old pair removed: messages for the old certificate are
    now EBMS:0102 (nothing stored), those for the new one still decrypt."""
    gw = gateway_factory(legs=leg([pair(keys, 'new'), pair(keys, 'old', retiring=True)]))
    gw.start()
    stored = new_id()
    assert push(gw, payload, stored, keys / 'old.crt').returncode == 0
    assert gw.store.counts(stored) == (1, 1, 1)
    rewrite_config(gw, pki, leg([pair(keys, 'new')]))
    gw.proc.send_signal(signal.SIGHUP)
    wait_log(gw, 'configuration reloaded')
    before = gw.store.totals()
    # a retry of the stored message, still for the old certificate: it can
    # no longer be read, so it is not answered with the stored Receipt
    p = push(gw, payload, stored, keys / 'old.crt')
    assert p.returncode == 1
    assert as4msg.Answer(200, {}, _answer(p.stdout)).error_code == 'EBMS:0102'
    assert gw.store.counts(stored) == (1, 1, 1) and gw.store.totals() == before
    mid = new_id()
    p = push(gw, payload, mid, keys / 'old.crt')
    assert p.returncode == 1
    line = assert_refused_0102(gw, as4msg.Answer(200, {}, _answer(p.stdout)), mid, before)
    assert ski_b64(keys / 'old.crt') in line['detail'], line
    mid = new_id()
    assert push(gw, payload, mid, keys / 'new.crt').returncode == 0
    assert gw.store.counts(mid) == (1, 1, 1)


@pytest.mark.parametrize('bad', ['duplicate', 'five', 'all-retiring', 'mismatch'])
def test_pairs_checked_at_load(tmp_path, keys, pki, bad):
    """pmode-check (and so serve and its reload) refuses what cannot be a
    rotation: the same certificate twice, more than four pairs, no current
    pair, a key that does not match its certificate."""
    pairs = {'duplicate': [pair(keys, 'new'), pair(keys, 'new')],
             'five': [pair(keys, 'new')] * 5,
             'all-retiring': [pair(keys, 'new', True), pair(keys, 'old', True)],
             'mismatch': [pair(keys, 'new'),
                          f'<decryption><certificate>{keys}/old.crt</certificate>'
                          f'<key>{keys}/stranger.key</key></decryption>']}[bad]
    from conftest import write_config
    cfg = write_config(tmp_path / 'c.xml', pki, store=f'sqlite:{tmp_path}/x.db',
                       legs=leg(pairs))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout == ''
    want = {'duplicate': 'listed twice', 'five': 'decryption',
            'all-retiring': 'at least one must be current',
            'mismatch': 'does not match'}[bad]
    assert want in p.stderr, p.stderr


def test_pmode_check_lists_the_pairs(tmp_path, keys, pki):
    from conftest import write_config
    cfg = write_config(tmp_path / 'c.xml', pki, store=f'sqlite:{tmp_path}/x.db',
                       legs=leg([pair(keys, 'new'), pair(keys, 'old', retiring=True)]))
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    row = [ln for ln in p.stdout.splitlines() if ln.startswith('  dev-rotating:')][0]
    assert (f'decryption pairs key {keys}/new.key (certificate {keys}/new.crt, '
            f'{fp(keys / "new.crt")}), key {keys}/old.key (certificate {keys}/old.crt, '
            f'{fp(keys / "old.crt")}, retiring)') in row, row
    for name, role in (('new', 'decryption'), ('old', r'decryption \(retiring\)')):
        assert re.search(rf'^  certificate pmode dev-rotating {role} {keys}/{name}\.crt: '
                         rf'subject .*CN=as4gw-enc-{name}.*, serial [0-9A-F]+, valid ',
                         p.stdout, re.M), p.stdout


def test_gateway_default_pairs(gateway_factory, keys, payload):
    """<decryptionKeys>: the pairs of every leg without its own (rotating the
    pair legs share, e.g. after the signing pair they used to fall back to)."""
    gw = gateway_factory(legs=leg([]), extra_gateway=(
        '<decryptionKeys>' + pair(keys, 'new') + pair(keys, 'old', True) +
        '</decryptionKeys>'))
    gw.start()
    for name in ('new', 'old'):
        mid = new_id()
        assert push(gw, payload, mid, keys / f'{name}.crt').returncode == 0
        assert gw.store.counts(mid) == (1, 1, 1)
    before = gw.store.totals()
    mid = new_id()
    p = push(gw, payload, mid, keys / 'stranger.crt')
    assert_refused_0102(gw, as4msg.Answer(200, {}, _answer(p.stdout)), mid, before)


# ---- recorded messages from other implementations (../shared) ---------------

def test_asnet_issuerserial_picks_its_pair(gateway_factory, tmp_path):
    """AS4.NET as4-encrypted-signed-issuerserial.as4 (corpus row 126) names
    AccessPointB by X509IssuerSerial: with AccessPointA's pair listed first and
    AccessPointB's second, B's decrypts it, the message is stored with the
    corpus ground truth; with A's alone it is EBMS:0102."""
    c = dict([c for c in corpus.CASES if c['row'] == 126][0])
    other = (f"<decryption><certificate>{corpus.key(corpus.ACCESS_POINT_A)}</certificate>"
             f"<key>{corpus.key(corpus.ACCESS_POINT_A, private=True)}</key></decryption>")
    legs = corpus.leg_xml(c).replace('<decryption>', other + '<decryption>', 1)
    assert legs.count('<decryption>') == 2
    gw = gateway_factory(legs=legs,
                         extra_gateway=f"<replay><verifyAt>{c['at']}</verifyAt></replay>")
    gw.start()
    path = corpus.sendable(c, tmp_path)
    rc, line, body, err = corpus.replay(gw, path, '--expect', 'receipt')
    assert rc == 0 and f"receipt ref={c['mid']}" in line, (line, err, corpus.diag(gw))
    rows = gw.store.query('SELECT content_id, content FROM payload WHERE message_id = ?',
                          c['mid'])
    assert len(rows) == 2
    for cid, content in rows:
        assert bytes(content) == corpus.ground_truth(c, cid, c['payloads'][cid])

    # AccessPointA's pair alone: the IssuerSerial names no configured pair
    legs = corpus.leg_xml(c).replace(
        corpus.leg_xml(c)[corpus.leg_xml(c).index('<decryption>'):
                          corpus.leg_xml(c).index('</decryption>') + 13], other)
    gw2 = gateway_factory(legs=legs,
                          extra_gateway=f"<replay><verifyAt>{c['at']}</verifyAt></replay>")
    gw2.start()
    rc, line, body, err = corpus.replay(gw2, path, '--expect', 'error')
    assert rc == 0 and 'EBMS:0102' in line, (line, err)
    assert gw2.store.totals() == (0, 0, 0)
    req = request_line(gw2, c['mid'])
    assert 'X509IssuerSerial "CN=AccessPointB" 5956198424360021449' in req['detail'], req
    assert fp(corpus.key(corpus.ACCESS_POINT_A)) in req['detail'], req


DOMIBUS = 'corpus/messages/cefedelivery_domibus/Domibus-MSH/src/test/resources/dataset/as4/'
RED_GW = '220425c3f25e'       # red_gw, Domibus' default receiving gateway
DOMIBUS_LEG = f'''
  <pmode id="domibus-tc1">
    <from role="{ROLE}initiator"><partyId type="urn:oasis:names:tc:ebcore:partyid-type:unregistered">domibus-blue</partyId></from>
    <to role="{ROLE}responder"><partyId type="urn:oasis:names:tc:ebcore:partyid-type:unregistered">domibus-red</partyId></to>
    <service type="tc1">bdx:noprocess</service>
    <action>TC1Leg1</action>
    <security signing="never" encryption="required">{{pairs}}</security>
  </pmode>
'''


def domibus_message(name, payload):
    """The Domibus key-reference test message `name` (its attachment is not in
    the corpus) made sendable: the session key unwrapped with red_gw's key,
    `payload` gzipped and sealed with it (aes128-gcm) as the cid:message
    part, and its ds:Signature (invalid: the file was pretty-printed after
    signing) removed, for a leg that does not require signing."""
    text = open(shared_path(DOMIBUS + name), encoding='utf-8').read()
    key = serialization.load_pem_private_key(
        open(corpus.key(RED_GW, private=True), 'rb').read(), None)
    ek = re.search(r'<xenc:EncryptedKey\b.*?</xenc:EncryptedKey>', text, re.S).group(0)
    cv = re.search(r'<xenc:CipherValue>(.*?)</xenc:CipherValue>', ek, re.S).group(1)
    wrapped = base64.b64decode(re.sub(r'\s|&#xd;', '', cv))
    session = key.decrypt(wrapped, padding.OAEP(mgf=padding.MGF1(hashes.SHA256()),
                                                algorithm=hashes.SHA256(), label=None))
    assert len(session) == 16
    iv = os.urandom(12)
    sealed = iv + AESGCM(session).encrypt(iv, gzip.compress(payload), None)
    text = re.sub(r'<ds:Signature\b.*?</ds:Signature>', '', text, flags=re.S)
    assert '<ds:Signature' not in text
    mid = re.search(r'<eb:MessageId>(.*?)</eb:MessageId>', text).group(1)
    ts = re.search(r'<eb:Timestamp>(.*?)</eb:Timestamp>', text).group(1)
    ct, body = as4msg.multipart(text, [('message', 'application/octet-stream', sealed)])
    return ct, body, mid, ts


@pytest.mark.parametrize('name,ref', [
    ('bst_x509v3_incoming_message.xml', 'token'),
    ('ski_incoming_message.xml', 'X509SubjectKeyIdentifier "7AJeAnEL5EE5l3lLc+EoFpOfJCo="'),
    ('is_incoming_message.xml', 'X509IssuerSerial'),
])
def test_domibus_reference_picks_red_gw(gateway_factory, pki, name, ref):
    """Domibus' key-reference test messages name red_gw by BinarySecurityToken,
    SubjectKeyIdentifier and X509IssuerSerial: with the development gateway's
    pair first and red_gw's second, red_gw's decrypts (payload stored); with
    the development pair alone, EBMS:0102 and the log names the reference."""
    payload = b'<hello>red_gw</hello>\n'
    ct, body, mid, ts = domibus_message(name, payload)
    red = (f'<decryption><certificate>{corpus.key(RED_GW)}</certificate>'
           f'<key>{corpus.key(RED_GW, private=True)}</key></decryption>')
    dev = (f'<decryption><certificate>{pki}/gateway.crt</certificate>'
           f'<key>{pki}/gateway.key</key></decryption>')
    replay_at = f'<replay><verifyAt>{ts}</verifyAt></replay>'
    gw = gateway_factory(legs=DOMIBUS_LEG.replace('{pairs}', dev + red),
                         extra_gateway=replay_at).start()
    ans = gw.post(ct, body)
    assert ans.is_receipt and ans.ref_to == mid, (ans, gw.logtext()[-2000:])
    stored = gw.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert [bytes(r[0]) for r in stored] == [payload]

    gw2 = gateway_factory(legs=DOMIBUS_LEG.replace('{pairs}', dev),
                          extra_gateway=replay_at).start()
    line = assert_refused_0102(gw2, gw2.post(ct, body), mid, (0, 0, 0))
    assert ref in line['detail'] and fp(f'{pki}/gateway.crt') in line['detail'], line
