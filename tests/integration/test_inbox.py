"""The inbox guarantees over HTTP against the real binary, on SQLite and PostgreSQL
(issue 2, item 8; NEGATIVE-CASES 55-59)."""
import concurrent.futures
import datetime

from as4msg import user_message
from conftest import new_id


def test_new_message_gets_signed_receipt_and_one_row(gateway):
    mid = new_id()
    ans = gateway.post(*user_message(mid))
    assert ans.status == 200, ans
    assert ans.is_receipt, ans
    assert ans.ref_to == mid
    assert ans.signed
    assert ans.headers['Content-Type'].startswith('application/soap+xml')
    assert gateway.store.counts(mid) == (1, 1, 1)
    rows = gateway.store.query('SELECT pmode_id, duplicates, receipt FROM inbox WHERE message_id = ?', mid)
    assert rows[0][0] == 'dev-sample'
    assert rows[0][1] == 0
    assert bytes(rows[0][2]) == ans.body
    content = gateway.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert bytes(content[0][0]) == b'<Invoice>1</Invoice>'


def test_retry_gets_byte_identical_receipt(gateway):
    mid = new_id()
    ct, body = user_message(mid)
    first = gateway.post(ct, body)
    second = gateway.post(ct, body)
    assert first.status == second.status == 200
    assert first.is_receipt
    assert second.body == first.body
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


def test_retry_resigned_with_new_timestamp_is_a_duplicate(gateway):
    """A sender that rebuilds the message (new Timestamp, new MIME boundary) is retrying."""
    mid = new_id()
    # fresh stamps, five minutes apart (a fixed date would age past retention)
    now = datetime.datetime.now(datetime.timezone.utc)
    stamps = [(now - datetime.timedelta(minutes=m)).strftime('%Y-%m-%dT%H:%M:%SZ') for m in (5, 0)]
    first = gateway.post(*user_message(mid, timestamp=stamps[0]))
    second = gateway.post(*user_message(mid, timestamp=stamps[1]))
    assert first.is_receipt and second.body == first.body
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_same_id_other_content_is_drift(gateway):
    mid = new_id()
    first = gateway.post(*user_message(mid, payload=b'<Invoice>1</Invoice>'))
    assert first.is_receipt
    drift = gateway.post(*user_message(mid, payload=b'<Invoice>2</Invoice>'))
    assert drift.status == 200
    assert drift.error_code == 'EBMS:0004', drift
    assert drift.ref_to == mid
    assert drift.signed
    assert gateway.store.counts(mid) == (1, 1, 1)
    content = gateway.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert bytes(content[0][0]) == b'<Invoice>1</Invoice>'
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 0
    # the original is still answered with its receipt
    again = gateway.post(*user_message(mid, payload=b'<Invoice>1</Invoice>'))
    assert again.body == first.body
    drift_lines = [l for l in gateway.log_lines() if l.get('outcome') == 'drift']
    assert drift_lines and drift_lines[0]['message_id'] == mid


def test_refused_then_valid_resend_is_processed_once(gateway):
    """NEGATIVE-CASES 57: a refusal reserves nothing."""
    mid = new_id()
    bad = gateway.post(*user_message(mid, action='urn:as4gw:dev:Unknown'))
    assert bad.error_code == 'EBMS:0010'
    assert gateway.store.counts(mid) == (0, 0, 0)
    good = gateway.post(*user_message(mid))
    assert good.is_receipt and good.ref_to == mid
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_64_concurrent_identical_pushes(gateway_factory):
    """NEGATIVE-CASES 59: one row and 64 identical Receipts.  All 64 senders come
    from 127.0.0.1, so the per-IP connection limit is raised for this test."""
    gateway = gateway_factory(limits='<perIpConnections>128</perIpConnections>').start()
    mid = new_id()
    ct, body = user_message(mid)
    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        answers = list(pool.map(lambda _: gateway.post(ct, body), range(64)))
    assert all(a.status == 200 for a in answers), [a for a in answers if a.status != 200][:1]
    assert all(a.is_receipt for a in answers)
    assert len({a.body for a in answers}) == 1
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 63
    outcomes = [l['outcome'] for l in gateway.log_lines() if l.get('message_id') == mid]
    assert outcomes.count('new') == 1 and outcomes.count('duplicate') == 63


def test_two_payloads_stored_in_order(gateway):
    import as4msg
    mid = new_id()
    cids = ('a@t', 'b@t')
    ct, body = as4msg.multipart(as4msg.envelope(mid, cids=cids),
                                [('a@t', 'application/xml', b'<a/>'),
                                 ('b@t', 'image/jpeg', bytes(range(256)) * 40)])
    ans = gateway.post(ct, body)
    assert ans.is_receipt, ans
    rows = gateway.store.query(
        'SELECT part_no, content_id, content FROM payload WHERE message_id = ? ORDER BY part_no', mid)
    assert [(r[0], r[1]) for r in rows] == [(0, 'a@t'), (1, 'b@t')]
    assert bytes(rows[1][2]) == bytes(range(256)) * 40


def test_log_line_per_request(gateway):
    mid = new_id()
    gateway.post(*user_message(mid))
    lines = [l for l in gateway.log_lines() if l.get('message_id') == mid]
    assert len(lines) == 1
    line = lines[0]
    for key in ('request_id', 'peer', 'from_party', 'pmode', 'outcome', 'ms', 'status'):
        assert key in line, line
    assert line['outcome'] == 'new' and line['pmode'] == 'dev-sample'
    assert line['from_party'] == 'urn:as4gw:dev:sender'
    assert '<Invoice>' not in gateway.logtext()
