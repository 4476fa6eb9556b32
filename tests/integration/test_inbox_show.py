"""`as4gw inbox show` against the real binary on SQLite and PostgreSQL (issue 11,
item 10, README "Finding a message").

"Where is MessageId X" is answered without SQL: the inbox row, its duplicates, the
payloads, the delivery state with attempts, last error and done time, and the
`deliver --to-dir` hand-off directory (deliver_name(), the one rule).  A message is
shown as pushed (state ready), after `deliver --to-dir` (done, done time, the
directory that exists), after a failing `--exec` (attempts 1, the last error and
its time); an unknown id exits 1; two parties that used the same MessageId are both
listed, and `--from` picks one.  On the code before this change the command did not
exist (exit 2) and the delivery table had no last error or done time.
"""
import hashlib
import json
import os
import subprocess
import time

import pytest

import as4msg
from conftest import BIN, DEV_LEG, new_id, run_as4gw
from test_scoped_key import LEG_B, PARTY_A, PARTY_B

PARTS = [('a@t', 'application/xml', b'<Invoice>1</Invoice>'),
         ('b@t', 'image/jpeg', bytes(range(256)) * 40)]


@pytest.fixture
def gw(gateway_factory):
    """A gateway with two unsigned legs: partner A (dev-sample) and partner B."""
    return gateway_factory(legs=DEV_LEG + LEG_B).start()


def push(gw, mid, frm=PARTY_A, parts=PARTS, **kw):
    ct, body = as4msg.multipart(
        as4msg.envelope(mid, frm=frm, cids=tuple(p[0] for p in parts), **kw), parts)
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt, ans
    return ans


def show(gw, mid, *args):
    return run_as4gw('inbox', 'show', '-c', gw.config, *args, mid)


def show_json(gw, mid, *args):
    p = show(gw, mid, '--json', *args)
    assert p.returncode == 0, (p.stdout, p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


def deliver(gw, *args):
    return subprocess.run([BIN, 'deliver', '-c', gw.config, *[str(a) for a in args]],
                          capture_output=True, text=True, timeout=60)


def name(party, mid):
    return hashlib.sha256(party.encode() + b'\0' + mid.encode()).hexdigest()


def hash_hex(gw, mid, party=PARTY_A):
    rows = gw.store.query('SELECT content_hash FROM inbox WHERE message_id = ?'
                          ' AND from_party = ?', mid, party)
    return bytes(rows[0][0]).hex()


def test_pushed_message_is_shown_ready(gw):
    mid = new_id()
    push(gw, mid)
    [r] = show_json(gw, mid)
    assert r['message_id'] == mid and r['from'] == PARTY_A
    assert r['to'] == 'urn:as4gw:dev:gateway'
    assert r['service'] == 'urn:as4gw:dev:service'
    assert r['action'] == 'urn:as4gw:dev:Deliver'
    assert r['conversation_id'] == 'conv-1' and r['agreement_ref'] is None
    assert r['pmode'] == 'dev-sample' and r['source'] == '127.0.0.1'
    assert r['received_at'].endswith('Z') and r['processed_at'] is None
    assert r['content_hash'] == hash_hex(gw, mid)
    assert r['outcome'] == 'accepted'
    assert r['duplicates'] == 0 and r['last_duplicate_at'] is None
    # the stored MIME type is the PartProperties MimeType (as4msg: application/xml)
    stored = gw.store.query('SELECT part_no, content_id, mime_type FROM payload'
                            ' WHERE message_id = ? ORDER BY part_no', mid)
    assert stored == [(0, 'a@t', 'application/xml'), (1, 'b@t', 'application/xml')]
    assert r['payloads'] == [
        {'part_no': n, 'content_id': cid, 'mime_type': mt, 'size': len(part[2])}
        for (n, cid, mt), part in zip(stored, PARTS)]
    assert (r['state'], r['attempts']) == ('ready', 0)
    assert r['last_error'] is None and r['last_error_at'] is None
    assert r['done_at'] is None and r['claimed_at'] is None
    assert r['handoff_name'] == name(PARTY_A, mid) and r['handoff_path'] is None
    # a retry is counted
    push(gw, mid, timestamp='2026-11-30T10:05:00Z')
    [r] = show_json(gw, mid)
    assert r['duplicates'] == 1 and r['last_duplicate_at'].endswith('Z')
    # the human-readable form says the same
    p = show(gw, mid)
    assert p.returncode == 0 and p.stderr == '', p.stderr
    lines = p.stdout.splitlines()
    assert f'message_id         {mid}' in lines
    assert f'from               {PARTY_A}' in lines
    assert f'content_hash       {hash_hex(gw, mid)}' in lines
    assert 'duplicates         1' in lines
    assert f'payload            0: a@t, application/xml, {len(PARTS[0][2])} bytes' in lines
    assert f'payload            1: b@t, application/xml, {len(PARTS[1][2])} bytes' in lines
    assert 'delivery           ready' in lines and 'attempts           0' in lines
    assert 'last_error         -' in lines and 'done_at            -' in lines
    assert f'hand-off           {name(PARTY_A, mid)} (under the --to-dir directory)' in lines


def test_after_deliver_to_dir_done_with_path(gw, tmp_path):
    mid = new_id()
    push(gw, mid)
    out = tmp_path / 'out'
    p = deliver(gw, '--to-dir', out)
    assert p.returncode == 0, p.stderr
    [r] = show_json(gw, mid, '--to-dir', out)
    assert (r['state'], r['attempts']) == ('done', 1)
    assert r['done_at'].endswith('Z') and r['processed_at'] == r['done_at']
    assert r['last_error'] is None
    path = str(out / name(PARTY_A, mid))
    assert r['handoff_path'] == path and r['handoff_present'] is True
    assert os.path.isdir(path)
    assert json.loads((out / name(PARTY_A, mid) / 'message.json').read_text())[
        'message_id'] == mid
    lines = show(gw, mid, '--to-dir', out).stdout.splitlines()
    assert 'delivery           done' in lines
    assert f'done_at            {r["done_at"]}' in lines
    assert f'hand-off           {path} (present)' in lines
    # another directory: not there
    [r] = show_json(gw, mid, '--to-dir', tmp_path / 'elsewhere')
    assert r['handoff_present'] is False


def test_after_failing_exec_last_error(gw, tmp_path):
    mid = new_id()
    push(gw, mid)
    before = time.time()
    p = deliver(gw, '--exec', 'exit 3')
    assert p.returncode == 1, (p.stdout, p.stderr)
    [r] = show_json(gw, mid)
    assert (r['state'], r['attempts']) == ('ready', 1)
    assert r['last_error'] == 'command exited with status 3'
    assert r['last_error_at'].endswith('Z') and r['not_before'].endswith('Z')
    assert r['done_at'] is None and r['processed_at'] is None
    lines = show(gw, mid).stdout.splitlines()
    assert 'attempts           1' in lines
    assert 'last_error         command exited with status 3' in lines
    assert f'last_error_at      {r["last_error_at"]}' in lines
    assert time.strftime('%Y-%m-%dT', time.gmtime(before)) in r['last_error_at']
    # once delivered, the last error stays for the record
    time.sleep(1.2)
    p = deliver(gw, '--exec', 'true')
    assert p.returncode == 0, (p.stdout, p.stderr)
    [r] = show_json(gw, mid)
    assert (r['state'], r['attempts']) == ('done', 2)
    assert r['last_error'] == 'command exited with status 3'
    assert r['done_at'] >= r['last_error_at']


def test_unknown_id_exits_1(gw):
    mid = new_id()
    p = show(gw, mid)
    assert p.returncode == 1 and p.stdout == ''
    assert f'no message "{mid}" in the inbox' in p.stderr
    push(gw, mid)
    p = show(gw, mid, '--from', PARTY_B)
    assert p.returncode == 1 and p.stdout == '', p.stdout
    assert 'from that party' in p.stderr
    assert show(gw, mid, '--from', PARTY_A).returncode == 0


def test_two_parties_same_message_id_both_listed(gw, tmp_path):
    mid = new_id()
    push(gw, mid, PARTY_A, [('a@t', 'application/xml', b'<A/>')])
    push(gw, mid, PARTY_B, [('b@t', 'application/xml', b'<Bee/>')])
    rows = show_json(gw, mid)
    assert [r['from'] for r in rows] == sorted([PARTY_A, PARTY_B])
    by = {r['from']: r for r in rows}
    assert by[PARTY_A]['pmode'] == 'dev-sample' and by[PARTY_B]['pmode'] == 'partner-b'
    assert by[PARTY_A]['payloads'][0]['size'] == 4
    assert by[PARTY_B]['payloads'][0]['size'] == 6
    assert by[PARTY_A]['handoff_name'] == name(PARTY_A, mid)
    assert by[PARTY_B]['handoff_name'] == name(PARTY_B, mid)
    assert by[PARTY_A]['content_hash'] == hash_hex(gw, mid, PARTY_A)
    assert by[PARTY_B]['content_hash'] == hash_hex(gw, mid, PARTY_B)
    [only_b] = show_json(gw, mid, '--from', PARTY_B)
    assert only_b == by[PARTY_B]
    out = show(gw, mid).stdout
    assert out.count(f'message_id         {mid}') == 2
    assert f'from               {PARTY_A}' in out and f'from               {PARTY_B}' in out


def test_usage(gw):
    mid = new_id()
    for args in (['inbox'], ['inbox', 'bogus'], ['inbox', 'show', mid],
                 ['inbox', 'show', '-c', gw.config],
                 ['inbox', 'show', '-c', gw.config, mid, 'extra'],
                 ['inbox', 'show', '-c', gw.config, '--bogus', mid]):
        p = run_as4gw(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert 'usage: as4gw inbox show' in p.stderr
    p = run_as4gw('inbox', 'show', '--help')
    assert p.returncode == 0 and '--from PARTY' in p.stdout
