"""Issue 10 items 2 and 3 over HTTP: XML limits hold whatever the encoding
(UTF-8 and UTF-16 only), every node kind counts, the SOAP envelope has its
own byte cap (maxEnvelopeBytes, 413), on SQLite and PostgreSQL.

Each hostile class is refused with a SOAP Sender fault, nothing is stored,
and the gateway's CPU time for it stays within a generous ratio of a benign
message of the same size measured in the same test (a ratio, never an
absolute time).  tests/NEGATIVE-CASES-EXTRA.md, "non-UTF-8 encodings" and
"comment/PI floods".
"""
import pytest

import as4msg
import hostile_xml
from conftest import new_id

SIZE = 1800 * 1000           # the size of the reported UTF-7 attack
RATIO = 20                   # hostile CPU <= RATIO x benign CPU
FLOOR_S = 0.05               # benign CPU below this counts as this (10 ms ticks)


def cpu_of(gw, ct, body):
    """(answer, gateway CPU seconds spent on it)."""
    t0 = hostile_xml.cpu_seconds(gw.proc.pid)
    ans = gw.post(ct, body)
    return ans, hostile_xml.cpu_seconds(gw.proc.pid) - t0


def benign_cpu(gw):
    """CPU of one accepted same-size push (the payload as an attachment)."""
    mid, (ct, body) = hostile_xml.benign(SIZE, as4msg.user_message)
    ans, cpu = cpu_of(gw, ct, body)
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    return cpu


@pytest.mark.parametrize('kind', sorted(hostile_xml.HOSTILE))
def test_hostile_xml_refused_cheaply(gateway, kind):
    """Refused (400 Sender fault), nothing stored, CPU within RATIO x a
    benign message of the same size (bb574aa: 6-22 s for the UTF-7 and
    UTF-16 floods; comments, PIs and text nodes were not counted)."""
    ct, body = hostile_xml.HOSTILE[kind](SIZE)
    gateway.post(*as4msg.user_message(new_id()))            # warm up
    before = gateway.store.totals()
    ans, cpu = cpu_of(gateway, ct, body)
    assert ans.status == 400 and ans.fault_code == 'Sender', ans
    assert gateway.store.totals() == before
    benign = benign_cpu(gateway)
    assert cpu <= RATIO * max(benign, FLOOR_S), \
        f'{kind}: {cpu:.3f} s of CPU, benign {benign:.3f} s'


def test_oversize_envelope_413(gateway):
    """maxEnvelopeBytes (4 MiB): a bigger root part is refused with 413 and
    a SOAP Sender fault before it is parsed, bare or as the root part of a
    multipart message; nothing stored."""
    pad = b'<!--' + b'x' * (4 * 1024 * 1024) + b'-->'
    env = as4msg.envelope(new_id(), cids=()).encode()
    ans = gateway.post('application/soap+xml', env.replace(b'<S12:Header>', b'<S12:Header>' + pad))
    assert ans.status == 413 and ans.fault_code == 'Sender', ans
    mid = new_id()
    ct, body = as4msg.user_message(mid)
    big = body.replace(b'<S12:Header>', b'<S12:Header>' + pad, 1)
    ans = gateway.post(ct, big)
    assert ans.status == 413 and ans.fault_code == 'Sender', ans
    assert gateway.store.totals() == (0, 0, 0)


@pytest.mark.parametrize('declared,charset', [
    ('ISO-8859-1', None),
    ('UTF-7', None),
    ('UTF-16', None),              # declared UTF-16 on UTF-8 bytes
    (None, 'utf-7'),
    (None, 'utf-16'),              # MIME charset UTF-16 on UTF-8 bytes
    (None, 'iso-8859-1'),
])
def test_other_encodings_refused(gateway, declared, charset):
    """SOAP 1.2 is UTF-8 or UTF-16: another encoding in the XML declaration
    or the MIME charset, or one that disagrees with the bytes, is a Sender
    fault; nothing stored."""
    mid = new_id()
    env = as4msg.envelope(mid, cids=('p@t',))
    if declared:
        env = env.replace('encoding="UTF-8"', f'encoding="{declared}"')
    ct, body = as4msg.multipart(env, [('p@t', 'application/xml', b'<a/>')])
    if charset:
        body = body.replace(b'application/soap+xml; charset=UTF-8',
                            f'application/soap+xml; charset={charset}'.encode(), 1)
    ans = gateway.post(ct, body)
    assert ans.status == 400 and ans.fault_code == 'Sender', ans
    assert gateway.store.totals() == (0, 0, 0)


@pytest.mark.parametrize('order', ['utf-16', 'utf-16-be'])
def test_utf16_envelope_accepted(gateway, order):
    """A UTF-16 envelope (with BOM, declared UTF-16, charset=UTF-16) is
    read like its UTF-8 twin: accepted and stored once."""
    mid = new_id()
    env = as4msg.envelope(mid, cids=('p@t',)).replace('encoding="UTF-8"', 'encoding="UTF-16"')
    data = env.encode(order)
    if order == 'utf-16-be':
        data = b'\xfe\xff' + data
    ct, body = as4msg.multipart(data, [('p@t', 'application/xml', b'<a/>')])
    body = body.replace(b'charset=UTF-8', b'charset=UTF-16', 1)
    ans = gateway.post(ct, body)
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_parser_memory_counts_against_request_budget(gateway_factory):
    """libxml2's allocations are counted against requestMemoryBytes: with a
    1 MiB budget, 40000 comments (280 KB of text, ~8 MB of tree, under
    maxXmlNodes) are refused, while a small push still gets its Receipt
    (bb574aa: the tree was outside the budget and the parse went through)."""
    gw = gateway_factory(limits='<requestMemoryBytes>1048576</requestMemoryBytes>').start()
    mid = new_id()
    ans = gw.post(*as4msg.user_message(mid))
    assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
    env = as4msg.envelope(new_id(), cids=())
    env = env.replace('<S12:Header>', '<S12:Header>' + '<!---->' * 40000)
    ans = gw.post('application/soap+xml', env.encode())
    assert ans.status == 400 and ans.fault_code == 'Sender', ans
    assert gw.store.totals() == (1, 1, 1)
    line = [l for l in gw.log_lines() if l.get('status') == 400][-1]
    assert 'memory' in line.get('detail', ''), line
