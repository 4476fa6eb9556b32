"""The storage of payload_chunk on PostgreSQL (issue 14; migrations
sql/postgresql/009_payload_chunk_storage.sql, 010_payload_chunk_plain.sql,
012_payload_chunk_cascade.sql): chunks
of 8000 bytes (store_pg_int.h STORE_PG_CHUNK_BYTES), content STORAGE PLAIN and
toast_tuple_target 8160, so that a chunk row is one tuple on one 8 KiB page, never
compressed and never TOASTed (1 MiB chunks TOASTed into some 525 rows each made the
server the bottleneck).  Against the real binary over HTTP:

- a fresh store: the column's attstorage is 'p', the table's toast_tuple_target
  8160; a large payload (compressible on purpose: with the old EXTENDED storage its
  chunks WOULD be compressed) is stored in 8000-byte chunks none of which is
  compressed, one row per heap page, nothing written to the TOAST table, and comes
  back byte-identical (inbox export, deliver --to-dir);
- a database of an older version (migrations up to 008) holding a payload in 1 MiB
  chunks the server compressed and TOASTed: `as4gw migrate` applies 009 and 010,
  rewrites no chunk, and the old payload (1 MiB chunks) and a new one (8000 bytes)
  both come back byte-identical (export, deliver --to-dir);
- 012: payload_chunk has no foreign key (checking it per 8000-byte row was a third
  of the server's CPU for a large accept); a trigger on payload deletes a row's
  chunks with it (by hand and through the purge's inbox -> payload cascade), and
  another refuses a change of a payload row's key.
SQLite has no such setting (no sqlite/ counterpart): these run on PostgreSQL only.
"""
import hashlib
import os
import subprocess

import pytest

import as4msg
from conftest import BIN, Gateway, make_dsn, new_id, run_as4gw

MIB = 1 << 20
CHUNK = 8000                 # STORE_PG_CHUNK_BYTES (these tests' keys are short)
THRESHOLD = 8 * MIB          # STORE_CHUNK_THRESHOLD
LIMITS = '<maxBodyBytes>67108864</maxBodyBytes>'
SENDER = 'urn:as4gw:dev:sender'
SRC = os.environ.get('AS4GW_SOURCE_DIR', os.path.join(os.path.dirname(__file__), '..', '..'))
BEFORE = ['001_inbox.sql', '002_delivery.sql', '003_accept.sql', '004_party_key.sql',
          '005_delivery_error.sql', '006_business_key.sql', '007_purge_log.sql',
          '008_payload_chunk.sql']


def compressible(n, seed):
    """n bytes pglz and lz4 shrink to a fraction (a text of repeated lines)."""
    line = b'<Line no="%d">as4gw payload chunk storage, seed %d</Line>\n'
    out = b''.join(line % (i % 97, seed) for i in range(n // 40 + 1))
    return out[:n]


LARGE = ('large@t', 'text/xml', compressible(THRESHOLD + 3 * MIB + 17, 1))


def sha(b):
    return hashlib.sha256(b).hexdigest()


@pytest.fixture
def pg_dsn(tmp_path):
    return make_dsn('postgresql', tmp_path)


def post(gw, mid, atts):
    cids = tuple(a[0] for a in atts)
    ct, body = as4msg.multipart(as4msg.envelope(mid, cids=cids), atts)
    return gw.post(ct, body)


def storage(gw):
    return gw.store.query(
        "SELECT attstorage FROM pg_attribute WHERE attrelid = 'payload_chunk'::regclass"
        " AND attname = 'content'")[0][0]


def reloptions(gw):
    return gw.store.query("SELECT reloptions FROM pg_class WHERE oid = 'payload_chunk'::regclass")[0][0]


def one_page_each(gw):
    """(chunk rows, heap pages holding them, heap pages of the table, bytes of
    its TOAST table): one tuple per page and nothing in TOAST give (n, n, n, 0)."""
    return gw.store.query(
        "SELECT count(*), count(DISTINCT (ctid::text::point)[0]),"
        " pg_relation_size('payload_chunk') / 8192,"
        " (SELECT pg_relation_size(reltoastrelid) FROM pg_class"
        "  WHERE oid = 'payload_chunk'::regclass) FROM payload_chunk")[0]


def deliver(gw, tmp_path, n):
    """deliver --to-dir of the n ready messages: the output directory."""
    out = tmp_path / 'out'
    p = subprocess.run([BIN, 'deliver', '-c', gw.config, '--to-dir', str(out)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == f'delivered {n}, failed 0'
    return out


def delivered(out, mid):
    d = out / hashlib.sha256(SENDER.encode() + b'\0' + mid.encode()).hexdigest()
    return sha((d / 'part-0.bin').read_bytes())


def chunk_compression(gw, mid):
    """[(chunk_no, compression method or None)] of mid's chunks."""
    return gw.store.query('SELECT chunk_no, pg_column_compression(content)'
                          ' FROM payload_chunk WHERE message_id = ? ORDER BY chunk_no', mid)


def no_chunk_key(gw):
    """012: payload_chunk has no foreign key; payload has the trigger that
    deletes a row's chunks with it and the one that keeps its key fixed."""
    keys = gw.store.query("SELECT count(*) FROM pg_constraint"
                          " WHERE conrelid = 'payload_chunk'::regclass AND contype = 'f'")
    trig = gw.store.query("SELECT tgname FROM pg_trigger WHERE tgrelid = 'payload'::regclass"
                          " AND NOT tgisinternal ORDER BY tgname")
    return keys == [(0,)] and trig == [('payload_chunk_cascade',), ('payload_key_fixed',)]


def export(gw, mid):
    p = subprocess.run([BIN, 'inbox', 'export', '-c', gw.config, mid],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_fresh_store_chunks_stored_uncompressed(pg_dsn, tmp_path, pki):
    gw = Gateway(tmp_path, pki, pg_dsn, limits=LIMITS).start()
    try:
        assert storage(gw) == 'p'
        assert reloptions(gw) == ['toast_tuple_target=8160']
        mid = new_id()
        ans = post(gw, mid, [LARGE])
        assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
        got = chunk_compression(gw, mid)
        n = (len(LARGE[2]) + CHUNK - 1) // CHUNK          # 1442
        assert [no for no, _ in got] == list(range(n))
        assert all(method is None for _, method in got), got
        assert gw.store.query('SELECT sum(octet_length(content)), max(octet_length(content))'
                              ' FROM payload_chunk WHERE message_id = ?', mid)[0] == \
            (len(LARGE[2]), CHUNK)
        assert one_page_each(gw) == (n, n, n, 0)
        assert sha(export(gw, mid)) == sha(LARGE[2])
        assert delivered(deliver(gw, tmp_path, 1), mid) == sha(LARGE[2])
        assert no_chunk_key(gw)
    finally:
        assert gw.stop() == 0, gw.logtext()[-2000:]


def test_chunks_go_with_their_payload_row(pg_dsn, tmp_path, pki):
    """012: the trigger that replaced the chunks' foreign key.  Deleting one
    payload row (by hand) deletes its chunks and no other message's; the purge
    (inbox -> payload -> payload_chunk) leaves no chunk; a payload row's key
    cannot be changed (it would strand its chunks)."""
    gw = Gateway(tmp_path, pki, pg_dsn, limits=LIMITS).start()
    try:
        mids = [new_id(), new_id()]
        for mid in mids:
            ans = post(gw, mid, [LARGE])
            assert ans.status == 200 and ans.is_receipt and ans.ref_to == mid, ans
        n = (len(LARGE[2]) + CHUNK - 1) // CHUNK
        assert gw.store.query('SELECT count(*) FROM payload_chunk')[0][0] == 2 * n
        with pytest.raises(Exception, match='never changed'):
            gw.store.execute('UPDATE payload SET part_no = part_no + 1 WHERE message_id = ?',
                    mids[0])
        # an update leaving the key alone is fine
        gw.store.execute('UPDATE payload SET mime_type = mime_type WHERE message_id = ?', mids[0])
        gw.store.execute('DELETE FROM payload WHERE message_id = ?', mids[0])
        assert gw.store.query('SELECT message_id, count(*) FROM payload_chunk'
                              ' GROUP BY message_id') == [(mids[1], n)]
        assert sha(export(gw, mids[1])) == sha(LARGE[2])
        gw.store.execute('DELETE FROM inbox WHERE message_id = ?', mids[1])
        assert gw.store.query('SELECT count(*) FROM payload_chunk')[0][0] == 0
    finally:
        assert gw.stop() == 0, gw.logtext()[-2000:]


def database_008(dsn, mid, payload):
    """The schema up to 008 recorded as the migration runner does, with one message
    whose payload is stored in 1 MiB chunks written under the old EXTENDED storage
    (ready to deliver)."""
    import psycopg2
    con = psycopg2.connect(dsn)
    with con.cursor() as cur:
        cur.execute('CREATE TABLE schema_migrations (name text NOT NULL PRIMARY KEY,'
                    ' applied_at timestamptz NOT NULL DEFAULT now())')
        for name in BEFORE:
            with open(os.path.join(SRC, 'sql', 'postgresql', name)) as f:
                cur.execute(f.read())
            cur.execute('INSERT INTO schema_migrations (name) VALUES (%s)',
                        ('postgresql/' + name,))
        cur.execute('INSERT INTO inbox (from_party, message_id, to_party, service, action,'
                    ' conversation_id, pmode_id, content_hash, receipt, received_at,'
                    ' partition_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, now(), %s)',
                    (SENDER, mid, 'urn:as4gw:dev:gateway', 'urn:as4gw:dev:service',
                     'urn:as4gw:dev:Deliver', 'conv-1', 'dev-sample', bytes(32), b'r',
                     '2026-01'))
        cur.execute('INSERT INTO payload (from_party, message_id, part_no, content_id,'
                    ' mime_type, content, size) VALUES (%s, %s, 0, %s, %s, NULL, %s)',
                    (SENDER, mid, 'old@t', 'text/xml', len(payload)))
        for no, off in enumerate(range(0, len(payload), MIB)):
            cur.execute('INSERT INTO payload_chunk (from_party, message_id, part_no,'
                        ' chunk_no, content) VALUES (%s, %s, 0, %s, %s)',
                        (SENDER, mid, no, payload[off:off + MIB]))
        cur.execute("INSERT INTO delivery (from_party, message_id, state, created_at)"
                    " VALUES (%s, %s, 'ready', now())", (SENDER, mid))
    con.commit()
    con.close()


def test_008_database_takes_the_storage_migrations(pg_dsn, tmp_path, pki):
    old_mid = new_id()
    old_payload = compressible(THRESHOLD + 2 * MIB + 5, 2)
    database_008(pg_dsn, old_mid, old_payload)
    gw = Gateway(tmp_path, pki, pg_dsn, limits=LIMITS)   # writes the config only
    assert storage(gw) == 'x'                          # EXTENDED before
    old = chunk_compression(gw, old_mid)
    # every full chunk compressed by the server (the last, 5 bytes, is too short)
    assert len(old) == 11 and all(m is not None for _, m in old[:-1]), old
    p = run_as4gw('migrate', '-c', gw.config)
    assert p.returncode == 0, p.stderr
    assert p.stdout == 'migrations applied: 4\n', p.stdout    # 009, 010, 011, 012
    assert storage(gw) == 'p'
    assert reloptions(gw) == ['toast_tuple_target=8160']
    # 011 made the chunks' foreign key deferrable, 012 drops it for a
    # cascading trigger on payload (the old chunks go with their row too)
    assert no_chunk_key(gw)
    assert chunk_compression(gw, old_mid) == old       # no chunk rewritten
    assert gw.store.query("SELECT count(*) FROM schema_migrations WHERE name IN"
                          " ('postgresql/009_payload_chunk_storage.sql',"
                          " 'postgresql/010_payload_chunk_plain.sql')")[0][0] == 2
    gw.start()
    try:
        # the 1 MiB chunks of the older version read back whole
        assert gw.store.query('SELECT max(octet_length(content)) FROM payload_chunk'
                              ' WHERE message_id = ?', old_mid)[0][0] == MIB
        assert sha(export(gw, old_mid)) == sha(old_payload)
        mid = new_id()
        ans = post(gw, mid, [LARGE])
        assert ans.status == 200 and ans.is_receipt, ans
        new = chunk_compression(gw, mid)
        assert len(new) == (len(LARGE[2]) + CHUNK - 1) // CHUNK
        assert all(m is None for _, m in new), new
        assert gw.store.query('SELECT max(octet_length(content)) FROM payload_chunk'
                              ' WHERE message_id = ?', mid)[0][0] == CHUNK
        assert sha(export(gw, mid)) == sha(LARGE[2])
        out = deliver(gw, tmp_path, 2)
        assert delivered(out, old_mid) == sha(old_payload)
        assert delivered(out, mid) == sha(LARGE[2])
    finally:
        assert gw.stop() == 0, gw.logtext()[-2000:]
