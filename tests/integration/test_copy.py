"""`as4gw copy --from sqlite:FILE --to postgresql://...` (issue 15 item 4):
moving an inbox from the embedded SQLite store into PostgreSQL without
losing the ability to answer retries.  Over the real binary, a real SQLite
file and the shared real PostgreSQL: a SQLite gateway takes a mix (signed
messages, a payload over the chunk threshold stored in payload_chunk, a
flagged business duplicate, unsigned messages with attachments), some are
delivered and some stay pending, a purge run is logged; the gateway stops,
the inbox is copied into a fresh PostgreSQL database and a PostgreSQL
gateway starts on it.  Then every retry (the same request bytes) gets the
byte-identical stored Receipt and is counted as a duplicate, not stored
again; the same MessageId with other content is refused (EBMS:0004) as
before; `inbox export` and `deliver --to-dir` hand out the original bytes;
what was pending is still pending and only that is delivered, with the
attempts and last error of a failed hand-off; every copied column of every
table is compared across the backends.  A payload over the chunk
threshold stored whole (before SQLite migration 007) is stored in chunks.
PostgreSQL's chunk rows are the source's bytes re-cut into rows of one heap
page (8000 bytes, nothing in TOAST), as the PostgreSQL store writes them.
Refusals write nothing: a target with rows (without --merge), a missing
source, a file that is not an as4gw store, a source still open in a
running gateway; a conflict under --merge and a row the target refuses
commit nothing."""
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time

import pytest

import as4msg
from conftest import BIN, Gateway, Store, make_dsn, new_id, run_as4gw

sys.path.insert(0, os.path.dirname(__file__))
import test_business_dup as bd  # noqa: E402  (the flag leg, EDIFACT)
import test_push_security as ps  # noqa: E402  (legs, push helper)

LEGS = ps.LEGS + bd.leg('a-flag', bd.PARTY_A, 'urn:as4gw:dev:Flag', 'flag')
BIG = (8 << 20) + 12345        # over STORE_CHUNK_THRESHOLD: 9 chunk rows
PG_CHUNK = 8000                # STORE_PG_CHUNK_BYTES (these tests' keys are short)
PG_ROWS = -(-BIG // PG_CHUNK)  # BIG re-cut into PostgreSQL's rows: 1051
LIMITS = f'<maxBodyBytes>{64 << 20}</maxBodyBytes>'
PARTY = 'urn:as4gw:dev:sender'


def sha(b):
    return hashlib.sha256(b).hexdigest()


def read_request(path):
    """(Content-Type, body) of the one message a --write-requests file holds."""
    with open(path, 'rb') as f:
        ct = f.readline().decode().strip()
        n = int(f.readline())
        body = f.read(n)
    assert len(body) == n
    return ct, body


def signed_request(gw, pki, tmp_path, mid, payload):
    """A signed UserMessage built by `as4gw push` (not sent): its bytes."""
    out = tmp_path / f'{mid[:8]}.req'
    p = ps.push(gw.url, pki, mid, '--write-requests', out, '--spool-dir', tmp_path,
                action='urn:as4gw:dev:SignedOnly', payloads=[payload], sign='sender')
    assert p.returncode == 0, p.stderr
    return read_request(out)


# every copied column, times in ms since the epoch, bytes as their SHA-256
MS = {'sqlite': '{}', 'postgresql': '(extract(epoch FROM {}) * 1000)::bigint'}
COLUMNS = {
    'inbox': ('from_party, message_id, to_party, service, action, conversation_id,'
              ' agreement_ref, pmode_id, source, content_hash, field_hashes, receipt,'
              ' @received_at, @processed_at, partition_key, duplicates,'
              ' @last_duplicate_at, business_key, business_duplicate_of'),
    'payload': ('from_party, message_id, part_no, content_id, mime_type, properties,'
                ' size, #content'),
    # compared per part (chunks()): PostgreSQL's rows are re-cut
    'payload_chunk': 'from_party, message_id, part_no, chunk_no, #content',
    'delivery': ('from_party, message_id, state, attempts, @claimed_at, @created_at,'
                 ' @not_before, last_error, @last_error_at, @done_at'),
    'purge_log': ('@started_at, @finished_at, source, outcome, purged, kept, batches,'
                  ' error'),
    'purge_totals': ('source, runs_ok, runs_stopped, runs_failed, purged,'
                     ' @last_ok_at'),
}


def fidelity(store):
    """Every table's rows, column for column, comparable across backends."""
    out = {}
    for table, cols in COLUMNS.items():
        if table == 'payload_chunk':
            out[table] = chunks(store)
            continue
        sel = []
        for c in cols.split(','):
            c = c.strip()
            if c.startswith('@'):
                sel.append(MS[store.backend].format(c[1:]))
            elif c.startswith('#'):     # a chunked payload's SQLite content is b''
                sel.append(f"CASE WHEN size IS NULL THEN {c[1:]} END"
                           if table == 'payload' else c[1:])
            else:
                sel.append(c)
        rows = store.query(f'SELECT {", ".join(sel)} FROM {table}')
        out[table] = sorted(tuple(hashlib.sha256(v).hexdigest()
                                  if isinstance(v, bytes) and len(v) > 64 else v
                                  for v in r) for r in rows)
    return out


def chunks(store):
    """Every chunked part as (party, MessageId, part_no, SHA-256 of its
    bytes): SQLite holds 1 MiB rows, PostgreSQL the same bytes re-cut into
    rows of one page; each side's chunk_no must run 0..n-1 per part."""
    parts = {}
    for f, m, p, n, c in store.query('SELECT from_party, message_id, part_no, chunk_no,'
                                     ' content FROM payload_chunk'
                                     ' ORDER BY 1, 2, 3, 4'):
        nos, h = parts.setdefault((f, m, p), ([], hashlib.sha256()))
        nos.append(n)
        h.update(bytes(c))
    for nos, _ in parts.values():
        assert nos == list(range(len(nos))), nos[:20]
    return sorted(k + (h.hexdigest(),) for k, (_, h) in parts.items())


def pg_chunk_layout(pg):
    """(chunk rows, bytes, longest row, bytes of payload_chunk's TOAST
    table): rows of at most PG_CHUNK bytes, nothing in TOAST (as
    test_pg_chunk_storage checks for the store itself)."""
    return pg.query("SELECT count(*), coalesce(sum(octet_length(content)), 0),"
                    " max(octet_length(content)),"
                    " (SELECT pg_relation_size(reltoastrelid) FROM pg_class"
                    "  WHERE oid = 'payload_chunk'::regclass) FROM payload_chunk")[0]


def copy(*args):
    return run_as4gw('copy', *args, timeout=300)


def pg_has_schema(dsn):
    return Store('postgresql', dsn).query("SELECT to_regclass('inbox') IS NOT NULL")[0][0]


def pg_fresh(tmp_path):
    return make_dsn('postgresql', tmp_path)


def table_counts(store):
    return tuple(store.query(f'SELECT count(*) FROM {t}')[0][0]
                 for t in ('inbox', 'payload', 'payload_chunk', 'delivery', 'purge_log'))


@pytest.fixture(scope='module')
def source(tmp_path_factory, pki):
    """A stopped SQLite gateway's store with the mix: returns a dict of what
    was sent, answered and delivered.  Built once: the tests only read it
    (copy opens it read-only; a test that changes it changes a copy)."""
    tmp_path = tmp_path_factory.mktemp('source')
    sub = tmp_path / 'sqlite'
    sub.mkdir()
    gw = Gateway(sub, pki, make_dsn('sqlite', sub), legs=LEGS, limits=LIMITS).start()
    sent = {}      # mid -> (content_type, body, answer body, payload bytes)
    try:
        for i in range(3):
            mid, data = new_id(), f'<Invoice n="{i}">{"x" * 900}</Invoice>'.encode()
            f = tmp_path / f'small{i}.xml'
            f.write_bytes(data)
            ct, body = signed_request(gw, pki, tmp_path, mid, f)
            sent[mid] = (ct, body, data)
        big_mid, big = new_id(), os.urandom(BIG)
        (tmp_path / 'big.bin').write_bytes(big)
        ct, body = signed_request(gw, pki, tmp_path, big_mid, tmp_path / 'big.bin')
        sent[big_mid] = (ct, body, big)
        for ref in (b'COPY1', b'COPY1'):     # the second: a business duplicate
            mid, data = new_id(), bd.interchange(ref)
            cid = 'payload-1@as4gw-test'
            ct, body = as4msg.multipart(
                as4msg.envelope(mid, frm=bd.PARTY_A, action=bd.ACTION['flag'], cids=(cid,)),
                [(cid, 'application/EDIFACT', data)])
            sent[mid] = (ct, body, data)
        answers = {}
        for mid, (ct, body, _) in sent.items():
            a = gw.post(ct, body)
            assert a.status == 200 and a.is_receipt and a.ref_to == mid, a
            answers[mid] = a.body
        st = gw.store
        assert st.query('SELECT count(*) FROM payload_chunk')[0][0] == 9
        assert st.query('SELECT count(*) FROM inbox WHERE business_duplicate_of'
                        ' IS NOT NULL')[0][0] == 1
        # the two oldest are handed off, the rest stays pending
        out = tmp_path / 'handoff-sqlite'
        p = run_as4gw('deliver', '-c', gw.config, '--to-dir', out, '--max', 2)
        assert p.returncode == 0, p.stderr
        # one failed hand-off: attempts, last error and back-off kept
        p = run_as4gw('deliver', '-c', gw.config, '--exec', 'exit 3', '--once')
        assert p.returncode == 1, p.stderr
        p = run_as4gw('purge', '-c', gw.config)         # one logged run
        assert p.returncode == 0, p.stderr
        states = dict(st.query('SELECT message_id, state FROM delivery'))
        assert sorted(states.values()).count('done') == 2
        assert st.query('SELECT count(*) FROM delivery WHERE last_error IS NOT NULL'
                        ' AND not_before IS NOT NULL') == [(1,)]
        rows = fidelity(st)
        receipts = dict(st.query('SELECT message_id, receipt FROM inbox'))
    finally:
        assert gw.stop() == 0
    return dict(dsn=gw.dsn, path=gw.dsn[len('sqlite:'):], sent=sent, answers=answers,
                states=states, receipts=receipts, big=big_mid, gw=gw, rows=rows)


def test_copy_then_retries_get_the_stored_receipts(source, tmp_path, pki):
    """The whole move: copy, a PostgreSQL gateway on the copy answers every
    retry with the stored Receipt, refuses drift, hands out the same bytes,
    and delivers exactly what was pending."""
    dsn = pg_fresh(tmp_path)
    p = copy('--from', source['dsn'], '--to', dsn)
    assert p.returncode == 0, p.stderr
    assert 'counts verified, committed' in p.stdout, p.stdout
    lines = {ln[:24].strip(): ln[24:].split() for ln in p.stdout.splitlines()[1:]}
    assert lines['inbox rows'] == ['6', '0', '0', '6'], p.stdout
    # 9 SQLite rows of 1 MiB re-cut into PostgreSQL rows of one page each
    assert lines['payload chunk rows'] == ['9', '0', '0', str(PG_ROWS)], p.stdout
    assert lines['chunk bytes'] == [str(BIG), '0', '0', str(BIG)], p.stdout
    assert (f'9 source rows ({BIG} bytes) were re-cut into {PG_ROWS} PostgreSQL rows'
            f' of at most {PG_CHUNK} bytes') in p.stdout, p.stdout
    assert lines['deliveries done'] == ['2', '0', '0', '2'], p.stdout
    assert lines['deliveries ready'] == ['4', '0', '0', '4'], p.stdout
    assert lines['purge log rows'] == ['1', '0', '0', '1'], p.stdout
    assert lines['business duplicates'] == ['1', '0', '0', '1'], p.stdout
    pg = Store('postgresql', dsn)
    assert pg_chunk_layout(pg) == (PG_ROWS, BIG, PG_CHUNK, 0)
    got = fidelity(pg)
    for table, rows in source['rows'].items():
        assert got[table] == rows, table
    assert dict(pg.query('SELECT message_id, receipt FROM inbox')) == source['receipts']
    assert dict(pg.query('SELECT message_id, state FROM delivery')) == source['states']
    assert pg.query("SELECT runs_ok FROM purge_totals WHERE source = 'cli'") == [(1,)]

    sub = tmp_path / 'pg'
    sub.mkdir()
    gw = Gateway(sub, pki, dsn, legs=LEGS, limits=LIMITS).start()
    try:
        before = table_counts(pg)
        for mid, (ct, body, _) in source['sent'].items():
            a = gw.post(ct, body)
            assert a.status == 200 and a.is_receipt, a
            assert a.body == source['answers'][mid]     # byte-identical
            assert a.body == source['receipts'][mid]
        assert table_counts(pg) == before               # nothing stored again
        assert pg.query('SELECT min(duplicates), max(duplicates) FROM inbox') == [(1, 1)]
        # the same MessageId with other content: refused, nothing stored
        mid = next(iter(source['sent']))
        ct, body = as4msg.user_message(mid, payload=b'<Invoice>other</Invoice>',
                                       action='urn:as4gw:dev:SignedOnly')
        a = gw.post(ct, body)
        assert a.status == 200 and not a.is_receipt, a
        ct, body = as4msg.user_message(mid, payload=b'<Invoice>other</Invoice>')
        a = gw.post(ct, body)
        assert a.status == 200 and a.error_code == 'EBMS:0004', a
        assert table_counts(pg) == before
        # the stored bytes, streamed back out of PostgreSQL's chunks
        e = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, source['big']],
                           capture_output=True, timeout=120)
        assert e.returncode == 0, e.stderr
        assert sha(e.stdout) == sha(source['sent'][source['big']][2])
        # only what was pending is handed off, byte for byte; the failed
        # hand-off's back-off (1 s after its first attempt) must be over
        [(wait,)] = pg.query('SELECT extract(epoch FROM not_before)::float8'
                             ' - extract(epoch FROM now())::float8 FROM delivery'
                             ' WHERE not_before IS NOT NULL')
        time.sleep(max(0.0, wait) + 0.05)
        out = tmp_path / 'handoff-pg'
        p = run_as4gw('deliver', '-c', gw.config, '--to-dir', out)
        assert p.returncode == 0, p.stderr
        pending = sorted(m for m, s in source['states'].items() if s != 'done')
        got = {}
        for d in out.iterdir():
            mid = json.loads((d / 'message.json').read_text())['message_id']
            got[mid] = [sha(p.read_bytes()) for p in sorted(d.glob('part-*.bin'))]
        assert sorted(got) == pending
        # the one whose hand-off failed on SQLite: its attempts went along
        [failed] = [r[1] for r in source['rows']['delivery'] if r[7] is not None]
        assert f'delivered {failed} -> ' in p.stdout and '(attempt 2)' in p.stdout, p.stdout
        for mid, hashes in got.items():
            assert hashes == [sha(source['sent'][mid][2])]
        assert pg.query('SELECT state, attempts, last_error FROM delivery'
                        ' WHERE message_id = ?', failed) == [
            ('done', 2, 'command exited with status 3')]
    finally:
        assert gw.stop() == 0


def test_copy_refuses_a_target_with_rows(source, tmp_path):
    """A second copy into a target that has rows: refused, nothing written;
    --dry-run counts both sides and writes nothing either."""
    dsn = pg_fresh(tmp_path)
    p = copy('--from', source['dsn'], '--to', dsn, '--dry-run')
    assert p.returncode == 0, p.stderr
    assert 'dry run: nothing written' in p.stdout and not pg_has_schema(dsn)
    assert f'a copy re-cuts them into PostgreSQL rows of at most {PG_CHUNK} bytes' \
        in p.stdout, p.stdout
    assert copy('--from', source['dsn'], '--to', dsn).returncode == 0
    pg = Store('postgresql', dsn)
    before = table_counts(pg)
    totals = pg.query('SELECT source, runs_ok, purged FROM purge_totals ORDER BY 1')
    p = copy('--from', source['dsn'], '--to', dsn)
    assert p.returncode == 1
    assert 'the target is not empty (6 inbox rows, 1 purge runs)' in p.stderr, p.stderr
    assert table_counts(pg) == before
    assert pg.query('SELECT source, runs_ok, purged FROM purge_totals ORDER BY 1') == totals
    p = copy('--from', source['dsn'], '--to', dsn, '--dry-run')
    assert p.returncode == 1 and 'would be refused' in p.stderr, p.stderr


def test_copy_merge_skips_same_and_fails_on_conflict(source, tmp_path):
    """--merge: rows already there with the same content are skipped and
    counted; one with another content hash fails the copy, nothing
    committed (the row deleted from the target stays missing)."""
    dsn = pg_fresh(tmp_path)
    assert copy('--from', source['dsn'], '--to', dsn).returncode == 0
    pg = Store('postgresql', dsn)
    victim, other = sorted(source['sent'])[:2]
    admin(dsn, 'DELETE FROM inbox WHERE message_id = %s', victim)
    admin(dsn, "UPDATE inbox SET content_hash = '\\x" + '00' * 32 +
          "' WHERE message_id = %s", other)
    before = table_counts(pg)
    p = copy('--from', source['dsn'], '--to', dsn, '--merge')
    assert p.returncode == 1
    assert 'conflict' in p.stderr and other in p.stderr, p.stderr
    assert table_counts(pg) == before
    assert pg.query('SELECT count(*) FROM inbox WHERE message_id = %s'.replace('%s', '?'),
                    victim) == [(0,)]
    # the conflict resolved: the merge copies the missing row only
    admin(dsn, 'UPDATE inbox SET content_hash = %s WHERE message_id = %s',
          sqlite_hash(source['path'], other), other)
    p = copy('--from', source['dsn'], '--to', dsn, '--merge')
    assert p.returncode == 0, p.stderr
    assert 'copied 1 inbox rows (5 skipped' in p.stdout, p.stdout
    lines = {ln[:24].strip(): ln[24:].split() for ln in p.stdout.splitlines()[1:]}
    # the purge history is not merged twice: shown as skipped
    assert lines['purge runs (totals)'] == ['1', '1', '1', '1'], p.stdout
    assert pg.query("SELECT runs_ok FROM purge_totals WHERE source = 'cli'") == [(1,)]
    assert dict(pg.query('SELECT message_id, receipt FROM inbox')) == source['receipts']
    assert pg_chunk_layout(pg) == (PG_ROWS, BIG, PG_CHUNK, 0)


def admin(dsn, sql, *args):
    import psycopg2
    con = psycopg2.connect(dsn)
    try:
        with con.cursor() as cur:
            cur.execute(sql, args)
        con.commit()
    finally:
        con.close()


def sqlite_hash(path, mid):
    con = sqlite3.connect(path)
    try:
        return con.execute('SELECT content_hash FROM inbox WHERE message_id = ?',
                           (mid,)).fetchone()[0]
    finally:
        con.close()


def test_copy_refuses_bad_sources_writing_nothing(tmp_path):
    """A missing file, a file that is not an as4gw store, a file that is not
    SQLite at all, the wrong kinds of DSN: a clear error, exit 1 (2 for
    usage), and the target untouched (not even migrated)."""
    dsn = pg_fresh(tmp_path)
    p = copy('--from', f'sqlite:{tmp_path}/missing.db', '--to', dsn)
    assert p.returncode == 1
    assert 'missing.db' in p.stderr and 'No such file' in p.stderr, p.stderr
    other = tmp_path / 'other.db'
    con = sqlite3.connect(other)
    con.execute('CREATE TABLE t (x)')
    con.commit()
    con.close()
    p = copy('--from', f'sqlite:{other}', '--to', dsn)
    assert p.returncode == 1 and 'is not an as4gw sqlite store' in p.stderr, p.stderr
    junk = tmp_path / 'junk.db'
    junk.write_bytes(b'not a database at all' * 100)
    p = copy('--from', f'sqlite:{junk}', '--to', dsn)
    assert p.returncode == 1 and 'junk.db' in p.stderr, p.stderr
    p = copy('--from', dsn, '--to', dsn)
    assert p.returncode == 1 and 'source must be sqlite:FILE' in p.stderr, p.stderr
    p = copy('--from', f'sqlite:{other}', '--to', f'sqlite:{other}')
    assert p.returncode == 1 and 'target must be postgresql' in p.stderr, p.stderr
    assert copy('--from', f'sqlite:{other}').returncode == 2
    p = copy('--help')
    assert p.returncode == 0 and p.stdout.startswith('usage: as4gw copy --from'), p.stdout
    assert 'as4gw copy --from sqlite:FILE --to postgresql://' in run_as4gw('--help').stdout
    assert not pg_has_schema(dsn)


def test_copy_refuses_a_source_in_use(tmp_path, pki):
    """A gateway still running on the SQLite file (it has taken a message:
    its connections hold the file): refused, naming its process; the
    target untouched."""
    gw = Gateway(tmp_path, pki, make_dsn('sqlite', tmp_path), legs=LEGS).start()
    try:
        mid = new_id()
        assert gw.post(*as4msg.user_message(mid)).is_receipt
        dsn = pg_fresh(tmp_path)
        p = copy('--from', gw.dsn, '--to', dsn)
        assert p.returncode == 1
        assert f'is open in process {gw.proc.pid}' in p.stderr, p.stderr
        assert not pg_has_schema(dsn)
    finally:
        assert gw.stop() == 0


def test_copy_a_row_the_target_refuses_commits_nothing(source, tmp_path):
    """A source row PostgreSQL cannot take (text that is not UTF-8, which
    SQLite stores as it is), in the middle of the pipelined rows: the copy
    fails naming the server's reason and commits nothing."""
    path = tmp_path / 'bad.db'
    con = sqlite3.connect(source['path'])
    con.execute(f"VACUUM INTO '{path}'")
    con.close()
    con = sqlite3.connect(path)
    mid = sorted(source['sent'])[3]
    con.execute("UPDATE inbox SET source = CAST(x'c328ff' AS TEXT) WHERE message_id = ?",
                (mid,))
    con.commit()
    con.close()
    dsn = pg_fresh(tmp_path)
    p = copy('--from', f'sqlite:{path}', '--to', dsn)
    assert p.returncode == 1
    assert 'could not copy rows' in p.stderr and 'UTF8' in p.stderr, p.stderr
    assert table_counts(Store('postgresql', dsn)) == (0, 0, 0, 0, 0)


def test_copy_chunks_a_large_payload_stored_whole_before_chunking(source, tmp_path):
    """A payload over the chunk threshold stored whole (as before SQLite
    migration 007 stored every payload) is read in pieces and stored in
    chunks, as the gateway stores such a payload now: `inbox export` on the
    target gives the same bytes."""
    path = tmp_path / 'old.db'
    con = sqlite3.connect(source['path'])
    con.execute(f"VACUUM INTO '{path}'")
    con.close()
    con = sqlite3.connect(path)
    con.execute('PRAGMA foreign_keys = ON')
    mid = source['big']
    whole = b''.join(r[0] for r in con.execute(
        'SELECT content FROM payload_chunk WHERE message_id = ? ORDER BY chunk_no', (mid,)))
    assert sha(whole) == sha(source['sent'][mid][2])
    con.execute('DELETE FROM payload_chunk WHERE message_id = ?', (mid,))
    con.execute('UPDATE payload SET content = ?, size = NULL WHERE message_id = ?',
                (whole, mid))
    con.commit()
    con.close()
    dsn = pg_fresh(tmp_path)
    p = copy('--from', f'sqlite:{path}', '--to', dsn)
    assert p.returncode == 0, p.stderr
    assert f'stored in {PG_ROWS} chunk rows of {BIG} bytes' in p.stdout, p.stdout
    pg = Store('postgresql', dsn)
    assert pg.query('SELECT size, content IS NULL FROM payload WHERE message_id = ?',
                    mid) == [(BIG, True)]
    assert pg_chunk_layout(pg) == (PG_ROWS, BIG, PG_CHUNK, 0)
    assert chunks(pg) == source['rows']['payload_chunk']
    e = subprocess.run([BIN, 'inbox', 'export', '-c', source['gw'].config, '--db', dsn, mid],
                       capture_output=True, timeout=120)
    assert e.returncode == 0, e.stderr
    assert sha(e.stdout) == sha(source['sent'][mid][2])
