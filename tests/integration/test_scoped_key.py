"""The inbox key is (sending party, MessageId), over HTTP against the real binary on
SQLite and PostgreSQL (issue 10, items 4, 12 and 13; tests/NEGATIVE-CASES-EXTRA.md
"two partners on one MessageId").

Two partners on two legs whose From parties differ send the same MessageId: each
gets its own row and Receipt, and a retry gets back its own stored Receipt bytes;
partner B sending the MessageId first neither blocks partner A nor learns that it
exists.  Within one party a reused MessageId with other content is still drift
(EBMS:0004, nothing stored), and the log line names the first field that differs
while the partner's answer stays generic.  A retry rebuilt with fresh Content-IDs
is a duplicate.  `as4gw deliver --to-dir` gives the two messages two directories.
"""
import hashlib
import json
import os
import subprocess

import pytest

import as4msg
from conftest import BIN, DEV_LEG, new_id

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
PARTY_A = 'urn:as4gw:dev:sender'
PARTY_B = 'urn:as4gw:dev:partner-b'
LEG_B = f'''
  <pmode id="partner-b">
    <from role="{ROLE}initiator"><partyId>{PARTY_B}</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:Deliver</action>
    <security signing="never" encryption="never"/>
  </pmode>
'''


@pytest.fixture
def gw(gateway_factory):
    """A gateway with two unsigned legs: partner A (dev-sample) and partner B."""
    return gateway_factory(legs=DEV_LEG + LEG_B).start()


def push(gw, mid, frm, payload, cid='payload-1@as4gw-test', **kw):
    ct, body = as4msg.multipart(as4msg.envelope(mid, frm=frm, cids=(cid,), **kw),
                                [(cid, 'application/xml', payload)])
    return gw.post(ct, body)


def rows(gw, mid):
    """{party: (receipt, duplicates, pmode)} of the inbox rows of mid."""
    return {r[0]: (bytes(r[1]), r[2], r[3]) for r in gw.store.query(
        'SELECT from_party, receipt, duplicates, pmode_id FROM inbox WHERE message_id = ?',
        mid)}


def payloads(gw, mid):
    return {r[0]: bytes(r[1]) for r in gw.store.query(
        'SELECT from_party, content FROM payload WHERE message_id = ?', mid)}


def deliveries(gw, mid):
    return sorted(r[0] for r in gw.store.query(
        'SELECT from_party FROM delivery WHERE message_id = ?', mid))


def test_squatter_first_does_not_block_or_reveal(gw):
    """B sends X first; A's genuine X (other content) is stored and answered with a
    Receipt, not refused as drift; B's answer was a plain Receipt too, so nothing tells
    either that the other used X.  Retries get each their own stored Receipt bytes."""
    mid = new_id()
    b1 = push(gw, mid, PARTY_B, b'<Squat/>')
    assert b1.status == 200 and b1.is_receipt and b1.ref_to == mid, b1
    a1 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>')
    assert a1.status == 200, a1
    assert a1.error_code is None and a1.is_receipt and a1.ref_to == mid, a1
    assert a1.body != b1.body
    got = rows(gw, mid)
    assert set(got) == {PARTY_A, PARTY_B}
    assert got[PARTY_A] == (a1.body, 0, 'dev-sample')
    assert got[PARTY_B] == (b1.body, 0, 'partner-b')
    assert payloads(gw, mid) == {PARTY_A: b'<Invoice>1</Invoice>', PARTY_B: b'<Squat/>'}
    assert deliveries(gw, mid) == sorted([PARTY_A, PARTY_B])
    # retries (rebuilt: new boundary and timestamp) get their own stored bytes
    a2 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>', timestamp='2026-11-30T10:05:00Z')
    b2 = push(gw, mid, PARTY_B, b'<Squat/>', timestamp='2026-11-30T10:06:00Z')
    assert a2.body == a1.body and b2.body == b1.body
    got = rows(gw, mid)
    assert got[PARTY_A][1] == 1 and got[PARTY_B][1] == 1
    outcomes = [(l.get('pmode'), l.get('outcome')) for l in gw.log_lines()
                if l.get('message_id') == mid]
    assert outcomes == [('partner-b', 'new'), ('dev-sample', 'new'),
                        ('dev-sample', 'duplicate'), ('partner-b', 'duplicate')], outcomes


def test_same_bytes_retried_by_each_partner(gw):
    """The replay cache (identical request bytes) and the retry hint key on the party:
    each partner's exact retry gets its own Receipt."""
    mid = new_id()
    ct_a, body_a = as4msg.multipart(as4msg.envelope(mid, frm=PARTY_A),
                                    [('payload-1@as4gw-test', 'application/xml', b'<A/>')])
    ct_b, body_b = as4msg.multipart(as4msg.envelope(mid, frm=PARTY_B),
                                    [('payload-1@as4gw-test', 'application/xml', b'<B/>')])
    first = {'a': gw.post(ct_a, body_a), 'b': gw.post(ct_b, body_b)}
    assert all(x.is_receipt for x in first.values()), first
    for _ in range(2):
        assert gw.post(ct_a, body_a).body == first['a'].body
        assert gw.post(ct_b, body_b).body == first['b'].body
    got = rows(gw, mid)
    assert got[PARTY_A][1] == 2 and got[PARTY_B][1] == 2


def test_drift_within_one_party_names_the_field_in_the_log_only(gw):
    mid = new_id()
    a1 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>')
    b1 = push(gw, mid, PARTY_B, b'<Other/>')
    assert a1.is_receipt and b1.is_receipt
    before = gw.store.totals()
    drift = push(gw, mid, PARTY_A, b'<Invoice>2</Invoice>')
    assert drift.status == 200 and drift.error_code == 'EBMS:0004', drift
    assert drift.ref_to == mid
    assert gw.store.totals() == before
    assert rows(gw, mid)[PARTY_A] == (a1.body, 0, 'dev-sample')
    assert payloads(gw, mid)[PARTY_A] == b'<Invoice>1</Invoice>'
    drift2 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>', conversation='conv-2')
    assert drift2.error_code == 'EBMS:0004', drift2
    assert gw.store.totals() == before
    lines = [l for l in gw.log_lines() if l.get('outcome') == 'drift']
    assert len(lines) == 2, lines
    assert 'PartInfo[0] payload bytes' in lines[0]['detail'], lines[0]
    assert 'ConversationId' in lines[1]['detail'], lines[1]
    # the partner's answer names no field
    for ans in (drift, drift2):
        assert b'payload bytes' not in ans.body and b'ConversationId' not in ans.body
    # B's row was neither counted nor touched
    assert rows(gw, mid)[PARTY_B] == (b1.body, 0, 'partner-b')


def test_retry_with_fresh_content_ids_is_a_duplicate(gw):
    """Item 13: PartInfo hrefs are not content; a rebuilt retry may carry new ones."""
    mid = new_id()
    a1 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>', cid='first@sender')
    a2 = push(gw, mid, PARTY_A, b'<Invoice>1</Invoice>', cid='rebuilt@sender')
    assert a1.is_receipt and a2.status == 200 and a2.body == a1.body, a2
    assert rows(gw, mid)[PARTY_A][1] == 1
    assert gw.store.counts(mid) == (1, 1, 1)
    # the stored Content-ID stays the first one
    assert gw.store.query('SELECT content_id FROM payload WHERE message_id = ?',
                          mid) == [('first@sender',)]


def test_deliver_to_dir_gives_each_party_its_directory(gw, tmp_path):
    """README "Backend hand-off": DIR/<hex SHA-256 of party NUL MessageId>/."""
    mid = new_id()
    assert push(gw, mid, PARTY_A, b'<A/>').is_receipt
    assert push(gw, mid, PARTY_B, b'<B/>').is_receipt
    out = tmp_path / 'out'
    p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    names = {party: hashlib.sha256(party.encode() + b'\0' + mid.encode()).hexdigest()
             for party in (PARTY_A, PARTY_B)}
    assert sorted(os.listdir(out)) == sorted(names.values())
    for party, data in ((PARTY_A, b'<A/>'), (PARTY_B, b'<B/>')):
        d = out / names[party]
        meta = json.loads((d / 'message.json').read_text())
        assert meta['message_id'] == mid and meta['from'] == party
        assert (d / 'part-0.bin').read_bytes() == data
    assert gw.store.query("SELECT count(*) FROM delivery WHERE message_id = ?"
                          " AND state = 'done'", mid) == [(2,)]
