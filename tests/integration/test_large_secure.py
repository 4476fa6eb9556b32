"""Issue 14 stage SECURE over HTTP against the real binary, on SQLite and
PostgreSQL: large attachments through signature, decryption and gunzip.

A part the gateway spools (spool_want: at or over the spool threshold) is
decrypted in SPOOL_CHUNK pieces into a spool file, the plaintext used only
after the AES-GCM tag verified, and gunzipped in one pass into a spool file
with the caps checked as it goes; a small part keeps the memory path.  The
answers must be the same on both paths, so these tests hold on either:
multi-MiB parts (spooled once the receive stage spools request bodies; the
memory path before that), and, when the configuration schema knows
spoolThresholdBytes, once more with threshold 0 (everything spooled).

- a signed + encrypted + compressed message with a 12 MiB attachment:
  Receipt, and the bytes `deliver --to-dir` hands over are the ones sent;
- the same with the last GCM tag byte flipped (the end of the last chunk):
  EBMS:0102, nothing stored;
- a gzip bomb (10 GiB of zeroes, ~10 MB compressed) in a signed part, the
  signature made valid for it: EBMS:0303, nothing stored;
- the decompression caps are <limits> keys that reach the gunzip.
"""
import glob
import hashlib
import os
import subprocess

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import tamper  # noqa: E402
from conftest import BIN, SRC, Gateway, make_dsn, new_id  # noqa: E402
# the fixtures apki and make are conftest's (attacklib.py's)
from attacklib import (ATTACK_LEGS, accepted, compressed, flip,  # noqa: E402
                       last_request_log, message_id, refused, totals)

SIZE = 12 << 20


def _threshold_limits():
    """'' (the default threshold) and, when the schema has the key, a
    threshold of 0 that spools every part."""
    with open(os.path.join(SRC, 'schemas', 'as4gw-config.xsd')) as f:
        known = 'name="spoolThresholdBytes"' in f.read()
    return [''] + (['<spoolThresholdBytes>0</spoolThresholdBytes>'] if known else [])


@pytest.fixture(scope='module')
def big():
    """12 MiB that gzip cannot shrink: the ciphertext part stays 12 MiB."""
    return os.urandom(SIZE)


@pytest.fixture(scope='module', params=[(b, t) for b in ('sqlite', 'postgresql')
                                        for t in _threshold_limits()],
                ids=lambda p: p[0] + ('-spool0' if p[1] else ''))
def lgw(request, tmp_path_factory, pki, apki):
    """A gateway with the attack legs per backend (and spool threshold)."""
    backend, limits = request.param
    d = tmp_path_factory.mktemp(f'large-{backend}')
    gw = Gateway(d, pki, make_dsn(backend, d),
                 legs=ATTACK_LEGS.replace('{apki}', str(apki)), limits=limits).start()
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc} after SIGTERM: {gw.logtext()[-2000:]}'


def _delivered(gw, out):
    """`as4gw deliver --to-dir out` once: {part file name: bytes}."""
    r = subprocess.run([BIN, 'deliver', '--to-dir', str(out), '-c', gw.config],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    files = {}
    for p in glob.glob(os.path.join(str(out), '*', 'part-*.bin')):
        with open(p, 'rb') as f:
            files[os.path.basename(p)] = f.read()
    return files


def test_large_signed_encrypted_compressed_accepted(lgw, make, pki, big, tmp_path):
    """12 MiB signed + encrypted (AES-128-GCM) + compressed: a Receipt, one
    row stored, and the payload handed over byte for byte."""
    msg = make(encrypt_to=pki / 'gateway.crt', compress=True,
               payloads=((big, 'application/octet-stream'),))
    assert len(msg.parts[1][1]) > SIZE    # the part on the wire: ciphertext
    before = totals(lgw)
    accepted(lgw, msg)
    assert totals(lgw)[0] == before[0] + 1
    files = _delivered(lgw, tmp_path / 'out')
    assert list(files) == ['part-0.bin'], list(files)
    assert hashlib.sha256(files['part-0.bin']).digest() == hashlib.sha256(big).digest()


def test_large_gcm_tag_last_byte(lgw, make, pki, big):
    """The last GCM tag byte flipped (the verification at the end of the
    last chunk fails; the ciphertext is not what is signed, the signature
    still verifies): EBMS:0102, the answer of every decryption failure,
    and nothing stored."""
    mid = new_id()
    msg = make(encrypt_to=pki / 'gateway.crt', compress=True, message_id=mid,
               payloads=((big, 'application/octet-stream'),))
    bad = msg.copy()
    bad.parts[1][1] = flip(bad.parts[1][1], len(bad.parts[1][1]) - 1)
    refused(lgw, bad, 'EBMS:0102', mid)
    line = last_request_log(lgw)
    assert line['error'] == 'decryption failed', line
    assert 'tag' in (line.get('detail') or ''), line


def test_large_gzip_bomb(lgw, make, pki):
    """10 GiB of zeroes in ~10 MB of gzip in a signed part whose signature
    is made valid for it: EBMS:0303 at the ratio cap, nothing stored."""
    msg = make(compress=True)
    bomb = tamper.gzip_bomb(10 << 30, chunk=1 << 22)
    assert len(bomb) > 8 << 20
    bad = msg.copy()
    bad.parts[1][1] = bomb
    bad.envelope = tamper.resign(tamper.set_cid_digest(bad.envelope, 'part-1@as4gw-test', bomb),
                                 str(pki / 'sender.key'), digests=False)
    refused(lgw, bad, 'EBMS:0303', message_id(msg))
    assert 'ratio' in last_request_log(lgw).get('error', ''), last_request_log(lgw)


def test_decompression_cap_is_a_config_key(gateway_factory):
    """<limits><maxDecompressedBytes> (issue 14) reaches the gunzip: 3 MiB
    out of a part against a 2 MiB cap -> EBMS:0303 naming that cap, nothing
    stored; the same part under the default caps is accepted."""
    data = tamper.gz(os.urandom(3 << 20))
    gw = gateway_factory(limits='<maxDecompressedBytes>2097152</maxDecompressedBytes>'
                                '<maxDecompressionRatio>50</maxDecompressionRatio>'
                                '<maxDecompressedTotalBytes>4194304</maxDecompressedTotalBytes>'
                         ).start()
    mid = new_id()
    refused(gw, compressed(mid, data), 'EBMS:0303', mid)
    assert 'exceeds the limit of 2097152 bytes' in last_request_log(gw).get('error', ''), \
        last_request_log(gw)
    assert gw.stop() == 0
    ok = gateway_factory().start()
    accepted(ok, compressed(new_id(), data))
    assert totals(ok)[0] == 1
