"""Business-level duplicates (issue 12 item 4), over HTTP against the real binary on
SQLite and PostgreSQL (tests/NEGATIVE-CASES-EXTRA.md "business duplicate").

Beside the MessageId the inbox keys a message by the business document it carries:
an EDIFACT interchange's UNB sender, recipient (with their qualifiers) and control
reference, or an SBDH's sender and InstanceIdentifier.  The same document under a
NEW MessageId of the same sending party is, per leg <businessDuplicates>:
  flag    stored and answered with a Receipt, the row marked with the first one's
          MessageId, a warning log line naming both, counted;
  refuse  EBMS:0004 and nothing stored, the log line naming both, counted;
  off     not checked: stored like any message, no key kept.
A retry of the SAME MessageId is the plain duplicate (the stored Receipt bytes),
never a business duplicate; another sending party's document with the same
reference is its own.  Concurrent pushes of one document under several MessageIds
end in one stored message (refuse) or one holder and the rest flagged (flag).
"""
import concurrent.futures
import json
import subprocess

import pytest

import as4msg
from conftest import BIN, new_id, run_as4gw

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
PARTY_A = 'urn:as4gw:dev:sender'
PARTY_B = 'urn:as4gw:dev:partner-b'


def leg(lid, party, action, mode):
    el = f'<businessDuplicates>{mode}</businessDuplicates>' if mode else ''
    return f'''
  <pmode id="{lid}">
    <from role="{ROLE}initiator"><partyId>{party}</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{action}</action>
    <security signing="never" encryption="never"/>
    {el}
  </pmode>
'''


LEGS = (leg('a-flag', PARTY_A, 'urn:as4gw:dev:Flag', 'flag') +
        leg('a-refuse', PARTY_A, 'urn:as4gw:dev:Refuse', 'refuse') +
        leg('a-off', PARTY_A, 'urn:as4gw:dev:Off', 'off') +
        leg('a-default', PARTY_A, 'urn:as4gw:dev:Default', None) +
        leg('b-refuse', PARTY_B, 'urn:as4gw:dev:Refuse', 'refuse'))
ACTION = {'flag': 'urn:as4gw:dev:Flag', 'refuse': 'urn:as4gw:dev:Refuse',
          'off': 'urn:as4gw:dev:Off', 'default': 'urn:as4gw:dev:Default'}


@pytest.fixture
def gw(gateway_factory):
    return gateway_factory(legs=LEGS, threads=8).start()


def interchange(ref, una=True, body=b'UNH+1+INVOIC:D:96A:UN\'BGM+380+1\'UNT+3+1\''):
    """An EDIFACT interchange from 5790000000001 (qualifier 14) to ...002."""
    head = b"UNA:+.? '" if una else b''
    return (head + b'UNB+UNOC:3+5790000000001:14+5790000000002:14+260101:1200+' +
            ref + b"'" + body + b'UNZ+1+' + ref + b"'")


def key_of(ref):
    return f'edifact:5790000000001:14/5790000000002:14/{ref}'


def sbdh(instance, sender='0088:5790000000001'):
    scheme, value = sender.split(':', 1)
    return f'''<?xml version="1.0" encoding="UTF-8"?>
<StandardBusinessDocument xmlns="http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader">
 <StandardBusinessDocumentHeader>
  <HeaderVersion>1.0</HeaderVersion>
  <Sender><Identifier Authority="iso6523-actorid-upis">{scheme}:{value}</Identifier></Sender>
  <Receiver><Identifier Authority="iso6523-actorid-upis">0088:5790000000002</Identifier></Receiver>
  <DocumentIdentification>
   <Standard>urn:oasis:names:specification:ubl:schema:xsd:Invoice-2</Standard>
   <TypeVersion>2.1</TypeVersion>
   <InstanceIdentifier>{instance}</InstanceIdentifier>
   <Type>Invoice</Type>
   <CreationDateAndTime>2026-01-01T12:00:00Z</CreationDateAndTime>
  </DocumentIdentification>
 </StandardBusinessDocumentHeader>
 <Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID></Invoice>
</StandardBusinessDocument>'''.encode()


def push(gw, mid, payload, mode='refuse', frm=PARTY_A, mtype='application/EDIFACT'):
    cid = 'payload-1@as4gw-test'
    ct, body = as4msg.multipart(
        as4msg.envelope(mid, frm=frm, action=ACTION[mode], cids=(cid,)),
        [(cid, mtype, payload)])
    return gw.post(ct, body)


def row(gw, mid, frm=PARTY_A):
    """(business_key, business_duplicate_of, receipt) of one inbox row, or None."""
    r = gw.store.query('SELECT business_key, business_duplicate_of, receipt FROM inbox'
                       ' WHERE from_party = ? AND message_id = ?', frm, mid)
    return (r[0][0], r[0][1], bytes(r[0][2])) if r else None


def metric(gw, mode):
    want = f'as4gw_business_duplicates_total{{mode="{mode}"}} '
    for line in gw.get('/metrics').body.decode().splitlines():
        if line.startswith(want):
            return int(line.split()[-1])
    raise AssertionError(f'{want} not in /metrics')


def request_lines(gw, mid):
    return [ln for ln in gw.log_lines()
            if ln.get('event') == 'request' and ln.get('message_id') == mid]


def test_refuse(gw):
    """The same interchange under a new MessageId: EBMS:0004, nothing stored, a
    warning naming both MessageIds; the first one's retry is its plain duplicate,
    the refused one's retry is refused again."""
    m1, m2 = new_id(), new_id()
    a1 = push(gw, m1, interchange(b'REFUSE1'))
    assert a1.status == 200 and a1.is_receipt and a1.ref_to == m1, a1
    assert row(gw, m1)[:2] == (key_of('REFUSE1'), None)
    before = gw.store.totals()
    # the same interchange, re-sent without UNA and with another message body
    a2 = push(gw, m2, interchange(b'REFUSE1', una=False, body=b"UNH+9+X'"))
    assert a2.status == 200 and a2.error_code == 'EBMS:0004', a2
    assert not a2.is_receipt and m1.encode() not in a2.body
    assert gw.store.counts(m2) == (0, 0, 0)
    assert gw.store.totals() == before
    [ln] = request_lines(gw, m2)
    assert ln['level'] == 'warn' and ln['outcome'] == 'business-duplicate', ln
    assert ln['duplicate_of'] == m1 and ln['business_key'] == key_of('REFUSE1')
    assert ln['ebms_code'] == 'EBMS:0004'
    # the first MessageId's retry: the stored Receipt, not a business duplicate
    r1 = push(gw, m1, interchange(b'REFUSE1'))
    assert r1.status == 200 and r1.body == a1.body
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?',
                          m1)[0][0] == 1
    r2 = push(gw, m2, interchange(b'REFUSE1', una=False, body=b"UNH+9+X'"))
    assert r2.error_code == 'EBMS:0004' and gw.store.counts(m2) == (0, 0, 0)
    assert metric(gw, 'refuse') == 2 and metric(gw, 'flag') == 0


def test_flag(gw, tmp_path):
    """The same interchange under a new MessageId: stored, answered with its own
    Receipt, marked with the first one's MessageId (inbox show, message.json), a
    warning naming both; its retry is the plain duplicate and counted once."""
    m1, m2 = new_id(), new_id()
    a1 = push(gw, m1, interchange(b'FLAG1'), mode='flag')
    a2 = push(gw, m2, interchange(b'FLAG1'), mode='flag')
    for mid, a in ((m1, a1), (m2, a2)):
        assert a.status == 200 and a.is_receipt and a.ref_to == mid, a
    assert row(gw, m1)[:2] == (key_of('FLAG1'), None)
    assert row(gw, m2)[:2] == (key_of('FLAG1'), m1)
    assert gw.store.counts(m2) == (1, 1, 1)
    [ln] = request_lines(gw, m2)
    assert ln['level'] == 'warn' and ln['outcome'] == 'new', ln
    assert ln['duplicate_of'] == m1 and ln['business_key'] == key_of('FLAG1')
    [ln] = request_lines(gw, m1)
    assert ln['level'] == 'info' and 'duplicate_of' not in ln
    r2 = push(gw, m2, interchange(b'FLAG1'), mode='flag')
    assert r2.status == 200 and r2.body == a2.body
    assert metric(gw, 'flag') == 1 and metric(gw, 'refuse') == 0
    p = run_as4gw('inbox', 'show', '-c', gw.config, '--json', m2)
    assert p.returncode == 0, p.stderr
    [j] = [json.loads(x) for x in p.stdout.splitlines()]
    assert j['business_key'] == key_of('FLAG1') and j['duplicate_of'] == m1
    text = run_as4gw('inbox', 'show', '-c', gw.config, m2).stdout.splitlines()
    assert f'business_key       {key_of("FLAG1")}' in text
    assert f'duplicate_of       {m1}' in text
    out = tmp_path / 'out'
    d = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                       capture_output=True, text=True, timeout=60)
    assert d.returncode == 0, d.stderr
    docs = {}
    for f in out.glob('*/message.json'):
        j = json.loads(f.read_text())
        docs[j['message_id']] = j
    assert docs[m1]['business_key'] == key_of('FLAG1')
    assert docs[m1]['duplicate_of'] is None
    assert docs[m2]['duplicate_of'] == m1


def test_default_is_flag(gw):
    p = run_as4gw('pmode-check', '-c', gw.config)
    assert p.returncode == 0, p.stderr
    modes = {ln.split(':')[0].strip(): ln.rsplit(', business duplicates ', 1)[1]
             for ln in p.stdout.splitlines() if ', business duplicates ' in ln}
    assert modes == {'a-flag': 'flag', 'a-refuse': 'refuse', 'a-off': 'off',
                     'a-default': 'flag', 'b-refuse': 'refuse'}, p.stdout
    m1, m2 = new_id(), new_id()
    for mid in (m1, m2):
        a = push(gw, mid, interchange(b'DEFAULT1'), mode='default')
        assert a.status == 200 and a.is_receipt, a
    assert row(gw, m2)[:2] == (key_of('DEFAULT1'), m1)


def test_off(gw):
    """off: both stored with their Receipts, no key kept, nothing logged or counted."""
    m1, m2 = new_id(), new_id()
    for mid in (m1, m2):
        a = push(gw, mid, interchange(b'OFF1'), mode='off')
        assert a.status == 200 and a.is_receipt and a.ref_to == mid, a
        assert row(gw, mid)[:2] == (None, None)
    assert all('duplicate_of' not in ln and 'business_key' not in ln
               for ln in request_lines(gw, m2))
    assert metric(gw, 'flag') == 0 and metric(gw, 'refuse') == 0


def test_other_party_same_reference(gw):
    """The key is scoped like the inbox key: party B's interchange with A's
    reference (same UNB sender even) is B's own document, not a duplicate."""
    m1, m2 = new_id(), new_id()
    a1 = push(gw, m1, interchange(b'SCOPE1'))
    a2 = push(gw, m2, interchange(b'SCOPE1'), frm=PARTY_B)
    assert a1.is_receipt and a2.is_receipt, (a1, a2)
    assert row(gw, m1)[:2] == (key_of('SCOPE1'), None)
    assert row(gw, m2, PARTY_B)[:2] == (key_of('SCOPE1'), None)
    # and another reference of the same party is another document
    m3 = new_id()
    assert push(gw, m3, interchange(b'SCOPE2')).is_receipt
    assert metric(gw, 'refuse') == 0


def test_same_message_id_other_leg_mode(gw):
    """A retry of the same MessageId stays the plain duplicate even when its leg
    refuses business duplicates and another row holds the key."""
    m1, m2 = new_id(), new_id()
    assert push(gw, m1, interchange(b'RETRY1'), mode='flag').is_receipt
    a2 = push(gw, m2, interchange(b'RETRY1'), mode='flag')
    assert a2.is_receipt and row(gw, m2)[1] == m1
    # m2 again, now to the refusing leg of the same party: other content
    # (Action) -> drift, not a business duplicate
    d = push(gw, m2, interchange(b'RETRY1'), mode='refuse')
    assert d.error_code == 'EBMS:0004'
    [*_, ln] = request_lines(gw, m2)
    assert ln['outcome'] == 'drift' and 'duplicate_of' not in ln


@pytest.mark.parametrize('mode', ['refuse', 'flag'])
def test_parallel(gw, mode):
    """Twelve MessageIds carrying one interchange pushed at once: refuse stores
    exactly one and refuses the rest naming it; flag stores all, one holder and
    eleven marked with it."""
    ref = f'PAR{mode[:3].upper()}'.encode()
    mids = [new_id() for _ in range(12)]
    with concurrent.futures.ThreadPoolExecutor(len(mids)) as ex:
        answers = list(ex.map(lambda m: push(gw, m, interchange(ref), mode=mode), mids))
    ok = [m for m, a in zip(mids, answers) if a.is_receipt]
    refused = [m for m, a in zip(mids, answers) if a.error_code == 'EBMS:0004']
    assert all(a.status == 200 for a in answers), answers
    keyed = gw.store.query('SELECT message_id, business_duplicate_of FROM inbox'
                           ' WHERE business_key = ?', key_of(ref.decode()))
    holders = [m for m, of in keyed if of is None]
    assert len(holders) == 1
    if mode == 'refuse':
        assert ok == holders and len(refused) == 11
        assert all(gw.store.counts(m) == (0, 0, 0) for m in refused)
        assert metric(gw, 'refuse') == 11
    else:
        assert sorted(ok) == sorted(mids) and not refused
        assert sorted(m for m, of in keyed if of == holders[0]) == \
            sorted(m for m in mids if m != holders[0])
        assert metric(gw, 'flag') == 11


def test_sbdh_instance_identifier(gw):
    """An SBDH's InstanceIdentifier (with its sender) is the key: the same document
    under a new MessageId is refused; another InstanceIdentifier, or the same one
    from another C1 sender, is not."""
    m1, m2, m3, m4 = (new_id() for _ in range(4))
    a1 = push(gw, m1, sbdh('inst-1'), mtype='application/xml')
    assert a1.is_receipt, a1
    # scheme ":" value "/" InstanceIdentifier, each percent-encoded
    assert row(gw, m1)[0] == 'sbdh:iso6523-actorid-upis:0088%3A5790000000001/inst-1'
    a2 = push(gw, m2, sbdh('inst-1'), mtype='application/xml')
    assert a2.error_code == 'EBMS:0004' and gw.store.counts(m2) == (0, 0, 0), a2
    assert push(gw, m3, sbdh('inst-2'), mtype='application/xml').is_receipt
    assert push(gw, m4, sbdh('inst-1', sender='0088:5790000000009'),
                mtype='application/xml').is_receipt


def test_not_a_business_document(gw):
    """Plain XML has no key; a payload that starts like an interchange but whose
    UNB is malformed has none either (stored, the reason in the log line); a
    broken SBDH likewise."""
    m1, m2, m3, m4 = (new_id() for _ in range(4))
    assert push(gw, m1, b'<Invoice>1</Invoice>', mtype='application/xml').is_receipt
    assert push(gw, m2, b'<Invoice>1</Invoice>', mtype='application/xml').is_receipt
    assert row(gw, m2)[:2] == (None, None)
    bad = b"UNB+UNOZ:3+S+R+260101:1200+X'"
    assert push(gw, m3, bad).is_receipt
    assert push(gw, m4, bad).is_receipt
    assert row(gw, m4)[:2] == (None, None)
    [ln] = request_lines(gw, m4)
    assert 'syntax identifier' in ln['business_note'], ln
    m5 = new_id()
    broken = sbdh('inst-9').replace(b'<InstanceIdentifier>inst-9</InstanceIdentifier>', b'')
    assert push(gw, m5, broken, mtype='application/xml').is_receipt
    [ln] = request_lines(gw, m5)
    assert 'InstanceIdentifier' in ln['business_note'], ln


def test_peppol_leg(gateway_factory):
    """On a Peppol leg the key comes from the SBDH its checks read (parsed once):
    the same Standard Business Document under a new MessageId is refused."""
    import test_peppol as tp
    legs = tp.leg('peppol-refuse', tp.INVOICE).replace(
        '</peppol>', '</peppol><businessDuplicates>refuse</businessDuplicates>')
    gw = gateway_factory(legs=legs).start()
    doc = tp.sbd()
    inst = doc.split(b'<InstanceIdentifier>')[1].split(b'<')[0].decode()
    m1, m2 = new_id(), new_id()
    a1 = tp.push(gw, m1, [doc])
    assert a1.status == 200 and a1.is_receipt, a1
    key = f'sbdh:{tp.PART_SCHEME}:{tp.C1.replace(":", "%3A")}/' + \
        inst.replace(':', '%3A').replace('/', '%2F')
    assert gw.store.query('SELECT business_key FROM inbox WHERE message_id = ?',
                          m1) == [(key,)]
    a2 = tp.push(gw, m2, [doc])
    assert a2.status == 200 and a2.error_code == 'EBMS:0004', a2
    assert gw.store.counts(m2) == (0, 0, 0)
    [ln] = request_lines(gw, m2)
    assert ln['duplicate_of'] == m1 and ln['business_key'] == key
