"""A 1 GiB message end to end (issue 14): a random payload generated here
(never committed), signed + encrypted + compressed and pushed by `as4gw push`
(which streams it from disk), received by the real gateway with its body
spooled, stored in chunk rows, and its stored bytes read back from the
database and checked by SHA-256; afterwards nothing is left in the spool
directory and the gateway holds no descriptor into it.  Correctness only: no
time or memory is asserted (bench/big prints those figures).

Sizes: one 1 GiB case takes far more than a minute on the 2-core
development VM (SQLite 1 GiB: 161-190 s with other work running, load
average 6-13, including push's own gzip and encryption), so SQLite gets the
full 1 GiB and PostgreSQL a smaller payload (256 MiB: 30-39 s), the same path
(spooled body, streamed decryption and gunzip, chunk rows through COPY).
AS4GW_BIG_SQLITE_MIB and AS4GW_BIG_POSTGRESQL_MIB change them."""
import os
import subprocess

import crashbig
import crashlib
from conftest import BIN, PG_DSN, Gateway, make_dsn, new_id

MIB = 1 << 20
SIZES = {'sqlite': int(os.environ.get('AS4GW_BIG_SQLITE_MIB', '1024')) * MIB,
         'postgresql': int(os.environ.get('AS4GW_BIG_POSTGRESQL_MIB', '256')) * MIB}
LEG = crashbig._leg('big-sec', crashbig.ACTION['sec'],
                    '<security signing="required" encryption="required">'
                    '<signer><certificate>{pki}/sender.crt</certificate></signer>'
                    '<trust><anchor>{pki}/ca.crt</anchor></trust></security>')


def _spool_fds(pid, spool):
    fd_dir = f'/proc/{pid}/fd'
    out = []
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(spool + '/'):
            out.append(target)
    return out


def test_big_message(backend, pki, tmp_path):
    size = SIZES[backend]
    spool = str(tmp_path / 'spool')
    os.mkdir(spool)
    limits = (f'<maxBodyBytes>{size + size // 4 + 16 * MIB}</maxBodyBytes>'
              f'<requestDeadlineSeconds>1800</requestDeadlineSeconds>'
              f'<spoolDir>{spool}</spoolDir>')
    gw = Gateway(tmp_path, pki, make_dsn(backend, tmp_path), legs=LEG, limits=limits).start()
    payload = str(tmp_path / 'payload.bin')
    try:
        sha = crashbig.write_random(payload, size, os.urandom)
        mid = new_id()
        r = subprocess.run(
            [BIN, 'push', '--url', gw.url, '--timeout', '1800', '--message-id', mid,
             '--from', crashbig.PARTY, '--to', 'urn:as4gw:dev:gateway',
             '--service', 'urn:as4gw:dev:service', '--action', crashbig.ACTION['sec'],
             '--payload', payload + ';mime=application/octet-stream',
             '--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
             '--encrypt', '--recipient-cert', f'{pki}/gateway.crt', '--compress'],
            capture_output=True, text=True, timeout=1800)
        os.unlink(payload)
        assert r.returncode == 0, r.stdout + r.stderr + gw.logtext()[-2000:]
        assert _spool_fds(gw.proc.pid, spool) == []
        assert gw.proc.poll() is None
    finally:
        assert gw.stop() == 0
        if os.path.exists(payload):
            os.unlink(payload)
    try:
        store = crashbig.BigStore(gw.dsn)
        assert gw.store.counts(mid) == (1, 1, 1)
        assert store.payload_sha(mid) == [sha]
        assert store.has_chunks()
        chunks = store.rows('SELECT count(*) FROM payload_chunk WHERE message_id = ?',
                            mid)[0][0]
        # SQLite: 1 MiB chunks; PostgreSQL: 8000 bytes, one row on one page (010)
        chunk = MIB if backend == 'sqlite' else 8000
        assert chunks == (size + chunk - 1) // chunk
        assert store.orphans() == []
        assert os.listdir(spool) == []
    finally:
        # a GiB per run: not left in pytest's kept temp dirs or the server
        crashlib.drop_store(gw.dsn, PG_DSN)
        if gw.dsn.startswith('sqlite:'):
            for suffix in ('', '-wal', '-shm'):
                if os.path.exists(gw.dsn[len('sqlite:'):] + suffix):
                    os.unlink(gw.dsn[len('sqlite:'):] + suffix)
