"""Payloads stored in chunks (issue 14 items 2 and 3) against the real binary, on
SQLite and PostgreSQL: a final payload longer than STORE_CHUNK_THRESHOLD (8 MiB,
src/store/store.h) is stored as rows of payload_chunk inside the accept transaction
(sqlite 007 / postgresql 008; 1 MiB each on SQLite, 8000 bytes on PostgreSQL: one row
on one page, postgresql 010) and handed over streamed by `as4gw deliver --to-dir`,
`--exec` and `as4gw inbox export`.

Checked here, over HTTP: payloads just below and just above the threshold and one
several chunks long are accepted, stored (chunk rows counted) and come back
byte-identical (SHA-256) through all three hand-offs; `inbox show` prints their
sizes; a retry gets the same Receipt and writes no chunk twice; a drift with a large
payload stores nothing; the purge takes the chunks with their rows; a gateway killed
inside the accept transaction of a large message (fault points store.after-insert,
store.before-commit) leaves no row and no chunk, and the retry is stored whole; `as4gw
migrate` upgrades a database of the previous version whose rows are still delivered.
"""
import hashlib
import json
import os
import random
import signal
import subprocess

import pytest

import as4msg
from conftest import BIN, Gateway, make_dsn, new_id, run_as4gw

MIB = 1 << 20
THRESHOLD = 8 * MIB          # STORE_CHUNK_THRESHOLD
# bytes per chunk row: STORE_CHUNK_BYTES (SQLite), STORE_PG_CHUNK_BYTES (PostgreSQL;
# the keys of these tests are short enough for the full size, store_pg_chunk_len)
CHUNK = {'sqlite': MIB, 'postgresql': 8000}
FAR_FUTURE = '2100-01-01T00:00:00Z'
LIMITS = '<maxBodyBytes>67108864</maxBodyBytes>'


def data(n, seed):
    return random.Random(seed).randbytes(n)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def chunks_for(n, backend):
    return 0 if n <= THRESHOLD else (n + CHUNK[backend] - 1) // CHUNK[backend]


def post(gw, mid, atts):
    cids = tuple(a[0] for a in atts)
    ct, body = as4msg.multipart(as4msg.envelope(mid, cids=cids), atts)
    return gw.post(ct, body)


def chunk_rows(gw, mid=None):
    if mid is None:
        return gw.store.query('SELECT count(*) FROM payload_chunk')[0][0]
    return gw.store.query('SELECT count(*) FROM payload_chunk WHERE message_id = ?',
                          mid)[0][0]


def orphans(gw):
    """Chunk rows without their payload row, payload rows without their inbox row."""
    return (gw.store.query(
        'SELECT count(*) FROM payload_chunk c WHERE NOT EXISTS (SELECT 1 FROM payload p'
        ' WHERE p.from_party = c.from_party AND p.message_id = c.message_id'
        ' AND p.part_no = c.part_no)')[0][0],
        gw.store.query(
        'SELECT count(*) FROM payload p WHERE NOT EXISTS (SELECT 1 FROM inbox i'
        ' WHERE i.from_party = p.from_party AND i.message_id = p.message_id)')[0][0])


def dirname(mid, party='urn:as4gw:dev:sender'):
    return hashlib.sha256(party.encode() + b'\0' + mid.encode()).hexdigest()


def check_dir(d, atts):
    meta = json.loads((d / 'message.json').read_text())
    assert [p['content_id'] for p in meta['parts']] == [a[0] for a in atts]
    for p, a in zip(meta['parts'], atts):
        got = (d / p['file']).read_bytes()
        assert len(got) == len(a[2]) == p['size']
        assert sha(got) == sha(a[2]) == p['sha256']


# below the threshold (stored whole), one byte above (SQLite 9 chunks, PostgreSQL
# 1049), several chunks
BELOW = ('below@t', 'application/octet-stream', data(THRESHOLD, 1))
ABOVE = ('above@t', 'application/octet-stream', data(THRESHOLD + 1, 2))
SEVERAL = ('several@t', 'application/octet-stream', data(20 * MIB + 12345, 3))
SMALL = ('small@t', 'application/xml', b'<Invoice>1</Invoice>')


@pytest.fixture
def big_gateway(backend, tmp_path, pki):
    gw = Gateway(tmp_path, pki, make_dsn(backend, tmp_path), limits=LIMITS).start()
    yield gw
    assert gw.stop() == 0, gw.logtext()[-2000:]


def test_large_payloads_stored_in_chunks_and_handed_over(big_gateway, tmp_path):
    gw = big_gateway
    m1, m2 = new_id(), new_id()
    msgs = {m1: [SMALL, BELOW, ABOVE], m2: [SEVERAL]}
    answers = {}
    for mid, atts in msgs.items():
        ans = post(gw, mid, atts)
        assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
        answers[mid] = ans.body
    b = gw.store.backend
    assert chunk_rows(gw, m1) == chunks_for(len(ABOVE[2]), b) == \
        {'sqlite': 9, 'postgresql': 1049}[b]
    assert chunk_rows(gw, m2) == chunks_for(len(SEVERAL[2]), b) == \
        {'sqlite': 21, 'postgresql': 2623}[b]
    rows = gw.store.query('SELECT part_no, size FROM payload WHERE message_id = ?'
                          ' ORDER BY part_no', m1)
    assert rows == [(0, None), (1, None), (2, THRESHOLD + 1)]
    assert gw.store.query('SELECT max(length(content)) FROM payload_chunk')[0][0] == \
        CHUNK[b]

    # a retry: the same Receipt, no chunk written twice
    again = post(gw, m1, msgs[m1])
    assert again.status == 200 and again.body == answers[m1]
    assert chunk_rows(gw) == chunks_for(len(ABOVE[2]), b) + chunks_for(len(SEVERAL[2]), b)
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', m1) == [(1,)]

    # inbox show: the sizes of the stored payloads
    p = run_as4gw('inbox', 'show', '-c', gw.config, '--json', m1)
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout.splitlines()[0])
    assert [x['size'] for x in row['payloads']] == [len(a[2]) for a in msgs[m1]]

    # inbox export: each payload byte-identical on stdout
    for mid, atts in msgs.items():
        for no, a in enumerate(atts):
            p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, '--part',
                                str(no), mid], capture_output=True, timeout=120)
            assert p.returncode == 0, p.stderr
            assert sha(p.stdout) == sha(a[2])
    p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, '--part', '7', m1],
                       capture_output=True, timeout=60)
    assert p.returncode == 1 and p.stdout == b''

    # deliver --to-dir
    out = tmp_path / 'out'
    p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == 'delivered 2, failed 0'
    for mid, atts in msgs.items():
        check_dir(out / dirname(mid), atts)

    # the purge takes the chunks with their rows
    p = run_as4gw('purge', '-c', gw.config, '--now', FAR_FUTURE)
    assert p.returncode == 0, p.stderr
    assert gw.store.totals() == (0, 0, 0)
    assert chunk_rows(gw) == 0


def test_large_payload_deliver_exec(big_gateway, tmp_path):
    gw = big_gateway
    mid = new_id()
    atts = [ABOVE, SMALL]
    ans = post(gw, mid, atts)
    assert ans.status == 200 and ans.is_receipt, ans
    got = tmp_path / 'got'
    got.mkdir()
    p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--exec', f'cp -R "$1" "{got}/"'],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == 'delivered 1, failed 0'
    check_dir(got / dirname(mid), atts)


def test_large_payload_drift_stores_nothing(big_gateway):
    gw = big_gateway
    mid = new_id()
    assert post(gw, mid, [ABOVE]).is_receipt
    before = (gw.store.totals(), chunk_rows(gw))
    other = ('above@t', 'application/octet-stream', data(THRESHOLD + 1, 99))
    drift = post(gw, mid, [other])
    assert drift.status == 200 and drift.error_code == 'EBMS:0004', drift
    assert (gw.store.totals(), chunk_rows(gw)) == before
    p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, mid],
                       capture_output=True, timeout=60)
    assert p.returncode == 0 and sha(p.stdout) == sha(ABOVE[2])


@pytest.mark.parametrize('point', ['store.after-insert', 'store.before-commit'])
def test_large_payload_killed_in_accept_leaves_nothing(backend, tmp_path, pki,
                                                       monkeypatch, point):
    """A gateway killed (SIGKILL, fault build) inside the accept transaction of a
    message with a chunked payload: no Receipt, and after a restart no row, no chunk,
    no orphan; the partner's retry is stored whole and delivered byte-identical."""
    dsn = make_dsn(backend, tmp_path)
    mid = new_id()
    monkeypatch.setenv('AS4GW_FAULT', point)
    gw = Gateway(tmp_path, pki, dsn, limits=LIMITS).start()
    try:
        try:
            ans = post(gw, mid, [SMALL, ABOVE])
        except OSError:
            ans = None
        if gw.proc.wait(timeout=60) != -signal.SIGKILL:
            pytest.skip('NOT A FAULT BUILD: ' + point + ' did not fire')
        assert ans is None or not ans.is_receipt
    finally:
        gw.stop()
    monkeypatch.delenv('AS4GW_FAULT')
    gw = Gateway(tmp_path, pki, dsn, limits=LIMITS).start()
    try:
        assert gw.store.totals() == (0, 0, 0)
        assert chunk_rows(gw) == 0
        assert orphans(gw) == (0, 0)
        ans = post(gw, mid, [SMALL, ABOVE])
        assert ans.status == 200 and ans.is_receipt, ans
        assert chunk_rows(gw, mid) == chunks_for(len(ABOVE[2]), backend)
        assert orphans(gw) == (0, 0)
        p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, '--part', '1', mid],
                           capture_output=True, timeout=60)
        assert p.returncode == 0 and sha(p.stdout) == sha(ABOVE[2])
    finally:
        assert gw.stop() == 0


# ---- an existing database takes the chunk migration ---------------------------------

OLD = {'sqlite': ['001_inbox.sql', '002_delivery.sql', '003_party_key.sql',
                  '004_delivery_error.sql', '005_business_key.sql', '006_purge_log.sql'],
       'postgresql': ['001_inbox.sql', '002_delivery.sql', '003_accept.sql',
                      '004_party_key.sql', '005_delivery_error.sql',
                      '006_business_key.sql', '007_purge_log.sql']}
SRC = os.environ.get('AS4GW_SOURCE_DIR', os.path.join(os.path.dirname(__file__), '..', '..'))


def old_database(backend, dsn, mid, payload):
    """The schema of the version before the chunk migration, recorded as the
    migration runner does, with one message stored by it (ready to deliver)."""
    sender = 'urn:as4gw:dev:sender'
    files = [(f, open(os.path.join(SRC, 'sql', backend, f)).read()) for f in OLD[backend]]
    if backend == 'sqlite':
        import sqlite3
        con = sqlite3.connect(dsn[len('sqlite:'):])
        con.execute('CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,'
                    ' applied_at integer NOT NULL)')
        for name, text in files:
            con.executescript(text)
            con.execute('INSERT INTO schema_migrations VALUES (?, 0)', ('sqlite/' + name,))
        at = 1767323045678
        con.execute('INSERT INTO inbox (from_party, message_id, to_party, service, action,'
                    ' conversation_id, pmode_id, content_hash, receipt, received_at,'
                    ' partition_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
                    (sender, mid, 'urn:as4gw:dev:gateway', 'urn:as4gw:dev:service',
                     'urn:as4gw:dev:Deliver', 'conv-1', 'dev-sample', bytes(32), b'r', at,
                     '2026-01'))
        con.execute('INSERT INTO payload (from_party, message_id, part_no, content_id,'
                    ' mime_type, content) VALUES (?, ?, 0, ?, ?, ?)',
                    (sender, mid, 'old@t', 'application/octet-stream', payload))
        con.execute("INSERT INTO delivery (from_party, message_id, state, created_at)"
                    " VALUES (?, ?, 'ready', ?)", (sender, mid, at))
        con.commit()
        con.close()
        return
    import psycopg2
    con = psycopg2.connect(dsn)
    with con.cursor() as cur:
        cur.execute('CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,'
                    ' applied_at timestamptz NOT NULL DEFAULT now())')
        for name, text in files:
            cur.execute(text)
            cur.execute('INSERT INTO schema_migrations (name) VALUES (%s)',
                        ('postgresql/' + name,))
        cur.execute('INSERT INTO inbox (from_party, message_id, to_party, service, action,'
                    ' conversation_id, pmode_id, content_hash, receipt, received_at,'
                    ' partition_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now(), %s)',
                    (sender, mid, 'urn:as4gw:dev:gateway', 'urn:as4gw:dev:service',
                     'urn:as4gw:dev:Deliver', 'conv-1', 'dev-sample', bytes(32), b'r',
                     '2026-01'))
        cur.execute('INSERT INTO payload (from_party, message_id, part_no, content_id,'
                    ' mime_type, content) VALUES (%s, %s, 0, %s, %s, %s)',
                    (sender, mid, 'old@t', 'application/octet-stream', payload))
        cur.execute("INSERT INTO delivery (from_party, message_id, state, created_at)"
                    " VALUES (%s, %s, 'ready', now())", (sender, mid))
    con.commit()
    con.close()


def test_old_database_migrated_rows_still_delivered(backend, tmp_path, pki):
    """`as4gw migrate` applies the chunk migration to a database of the previous
    version: the message stored before is delivered and exported as it was stored,
    and a new large message on the upgraded database goes in chunks."""
    dsn = make_dsn(backend, tmp_path)
    old_mid = new_id()
    old_payload = data(3 * MIB + 7, 11)   # stored whole by the old version
    old_database(backend, dsn, old_mid, old_payload)
    gw = Gateway(tmp_path, pki, dsn, limits=LIMITS)   # writes the config only
    p = run_as4gw('migrate', '-c', gw.config)
    assert p.returncode == 0, p.stderr
    # the chunk migration (PostgreSQL: and its storage settings, 009 and 010,
    # its deferrable foreign key, 011, and the trigger replacing it, 012)
    n = 5 if backend == 'postgresql' else 1
    assert p.stdout == f'migrations applied: {n}\n', p.stdout
    assert gw.store.query('SELECT count(*) FROM payload_chunk')[0][0] == 0
    assert gw.store.query('SELECT size FROM payload WHERE message_id = ?', old_mid) == \
        [(None,)]
    p = run_as4gw('migrate', '-c', gw.config)   # current now: nothing applied
    assert p.returncode == 0, p.stderr
    assert p.stdout == 'no migration to apply: the schema is current\n'
    gw.start()
    try:
        mid = new_id()
        assert post(gw, mid, [ABOVE]).is_receipt
        assert chunk_rows(gw, mid) == chunks_for(len(ABOVE[2]), backend)
        p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, old_mid],
                           capture_output=True, timeout=60)
        assert p.returncode == 0 and p.stdout == old_payload
        out = tmp_path / 'out'
        p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines()[-1] == 'delivered 2, failed 0'
        d = out / dirname(old_mid)
        meta = json.loads((d / 'message.json').read_text())
        assert meta['parts'][0]['sha256'] == sha(old_payload)
        assert (d / 'part-0.bin').read_bytes() == old_payload
        check_dir(out / dirname(mid), [ABOVE])
    finally:
        assert gw.stop() == 0


# ---- a store failure in the middle of the chunks -------------------------------------

def mid_chunk(backend):
    """A chunk in the middle of ABOVE's (SQLite 4 of 0..8, PostgreSQL 524 of
    0..1048)."""
    return chunks_for(len(ABOVE[2]), backend) // 2


def fail_trigger(backend):
    """A test trigger refusing ABOVE's chunk after the middle one (SQLite 5,
    PostgreSQL 525)."""
    no = mid_chunk(backend) + 1
    if backend == 'sqlite':
        return ["CREATE TRIGGER fail_chunk BEFORE INSERT ON payload_chunk WHEN"
                f" NEW.chunk_no = {no} BEGIN SELECT RAISE(ABORT, 'test: chunk refused'); END"]
    return ["CREATE FUNCTION fail_chunk() RETURNS trigger LANGUAGE plpgsql AS"
            f" $$BEGIN IF NEW.chunk_no = {no} THEN RAISE EXCEPTION 'test: chunk refused';"
            " END IF; RETURN NEW; END$$",
            "CREATE TRIGGER fail_chunk BEFORE INSERT ON payload_chunk"
            " FOR EACH ROW EXECUTE FUNCTION fail_chunk()"]


def execute(gw, statements):
    if gw.dsn.startswith('sqlite:'):
        import sqlite3
        con = sqlite3.connect(gw.dsn[len('sqlite:'):], timeout=30)
        for sql in statements:
            con.execute(sql)
        con.commit()
        con.close()
        return
    import psycopg2
    con = psycopg2.connect(gw.dsn)
    with con.cursor() as cur:
        for sql in statements:
            cur.execute(sql)
    con.commit()
    con.close()


def test_large_payload_store_failure_mid_chunks_leaves_nothing(big_gateway):
    """The database refuses a chunk in the middle of a payload (a test trigger,
    rows before it already sent): the accept rolls back whole — 503 with
    Retry-After, no inbox, payload, delivery or chunk row, no orphan — and the
    partner's retry, once the store works, is stored whole with all its chunks."""
    gw = big_gateway
    execute(gw, fail_trigger(gw.store.backend))
    mid = new_id()
    ans = post(gw, mid, [SMALL, ABOVE])
    assert ans.status == 503 and not ans.is_receipt, ans
    assert int(ans.headers.get('Retry-After', '0')) > 0
    assert gw.store.totals() == (0, 0, 0)
    assert chunk_rows(gw) == 0 and orphans(gw) == (0, 0)
    execute(gw, ['DROP TRIGGER fail_chunk' +
                 ('' if gw.store.backend == 'sqlite' else ' ON payload_chunk')])
    ans = post(gw, mid, [SMALL, ABOVE])
    assert ans.status == 200 and ans.is_receipt, ans
    assert gw.store.totals() == (1, 2, 1)
    assert chunk_rows(gw, mid) == chunks_for(len(ABOVE[2]), gw.store.backend)
    assert orphans(gw) == (0, 0)


def test_missing_chunk_fails_the_hand_off_not_silently(big_gateway, tmp_path):
    """A chunk row gone from the middle (damaged database): deliver hands over
    nothing short — the target fails, no directory (not even a temporary one) is
    left, the row is ready again with the reason — and inbox export fails too."""
    gw = big_gateway
    mid = new_id()
    assert post(gw, mid, [ABOVE]).is_receipt
    no = mid_chunk(gw.store.backend)
    execute(gw, [f"DELETE FROM payload_chunk WHERE chunk_no = {no}"])
    out = tmp_path / 'out'
    p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout.splitlines()[-1] == 'delivered 0, failed 1'
    assert os.listdir(out) == []
    state, err = gw.store.query('SELECT state, last_error FROM delivery'
                                ' WHERE message_id = ?', mid)[0]
    assert state == 'ready' and f'chunk {no} ' in err, err
    p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, mid],
                       capture_output=True, timeout=60)
    assert p.returncode == 1 and b'chunk' in p.stderr
