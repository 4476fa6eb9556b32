"""Generated attacks on compressed payloads (issue 3; NEGATIVE-CASES 52-54):
parts that are not gzip, signed and unsigned, gzip bombs (ratio and size
caps), and wrong compression PartProperties.

Every test runs on SQLite and PostgreSQL and on both sides of the spool
threshold (in memory, and with every body spooled: attacklib.py, issue 14),
with the same answers; the fixtures and helpers are attacklib.py's.
"""
import re
import sys

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        sys.stderr.write(f'\nSKIPPED (loudly): {__name__} needs python3-{_module}\n')
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import tamper  # noqa: E402
from conftest import new_id  # noqa: E402
from attacklib import (  # noqa: E402
    GOOD, accepted, compressed, flip, last_request_log, message_id, refused)


# ---- compression (52-54) ----------------------------------------------------

@pytest.mark.parametrize('kind', ['not-gzip', 'truncated', 'bad-crc', 'bad-isize',
                                  'trailing-garbage', 'corrupt-deflate', 'empty'])
def test_52_compressed_payload_not_gzip(agw, kind):
    """NEGATIVE-CASES 52 -> EBMS:0303."""
    z = tamper.gz(GOOD)
    data = {'not-gzip': GOOD, 'truncated': z[:len(z) // 2], 'bad-crc': flip(z, len(z) - 6),
            'bad-isize': flip(z, len(z) - 2), 'trailing-garbage': z + b'garbage',
            'corrupt-deflate': z[:10] + b'\xff' * 8 + z[18:], 'empty': b''}[kind]
    mid = new_id()
    refused(agw, compressed(mid, data), 'EBMS:0303', mid)


def test_52_control_valid_gzip_is_stored_decompressed(fresh_gw):
    mid = new_id()
    accepted(fresh_gw, compressed(mid, tamper.gz(GOOD)))
    rows = fresh_gw.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert bytes(rows[0][0]) == GOOD


def test_52_signed_compressed_payload_not_gzip(agw, make, pki):
    """NEGATIVE-CASES 52 on a signing leg: the payload replaced by non-gzip
    bytes and the signature made valid for them -> EBMS:0303 (the signature
    passes, decompression fails)."""
    msg = make(compress=True)
    bad = msg.copy()
    bad.parts[1][1] = GOOD
    bad.envelope = tamper.resign(tamper.set_cid_digest(bad.envelope, 'part-1@as4gw-test', GOOD),
                                 str(pki / 'sender.key'), digests=False)
    refused(agw, bad, 'EBMS:0303', message_id(msg))


def _vm_hwm_kib(pid):
    with open(f'/proc/{pid}/status') as f:
        return int(re.search(r'VmHWM:\s+(\d+) kB', f.read()).group(1))


@pytest.mark.parametrize('kind', ['ratio', 'size'])
def test_53_gzip_bomb(agw, bombs, kind):
    """NEGATIVE-CASES 53 -> EBMS:0303 once a cap trips, in under 20 s (the
    gateway's own time), its peak RSS (VmHWM) growing by less than 300 MB."""
    mid = new_id()
    refused(agw, compressed(mid, GOOD), 'EBMS:0303', mid)   # warm up
    before = _vm_hwm_kib(agw.proc.pid)
    mid = new_id()
    refused(agw, compressed(mid, bombs[kind]), 'EBMS:0303', mid)
    assert last_request_log(agw)['ms'] < 20000, last_request_log(agw)
    growth = _vm_hwm_kib(agw.proc.pid) - before
    assert growth < 300 * 1024, f'VmHWM grew by {growth} KiB'
    assert kind in last_request_log(agw).get('error', ''), last_request_log(agw)


@pytest.mark.parametrize('props,code', [
    ((('MimeType', 'application/xml'), ('CompressionType', 'application/x-bzip2')), 'EBMS:0303'),
    ((('CompressionType', 'application/gzip'),), 'EBMS:0303'),   # issue 10 item 10
    ((('MimeType', ''), ('CompressionType', 'application/gzip')), 'EBMS:0009'),
], ids=['unknown-compression-type', 'no-mimetype', 'empty-mimetype'])
def test_54_compression_properties(agw, props, code):
    """NEGATIVE-CASES 54 -> EBMS:0303, also without MimeType (issue 10 item
    10: AS4.NET's conformance suite expects DecompressionFailure there); an
    empty MimeType is already schema-invalid (ebms-header-3_0-200704.xsd:
    Property is a non-empty-string), so it is EBMS:0009 before decompression
    is reached."""
    mid = new_id()
    refused(agw, compressed(mid, tamper.gz(GOOD), props), code, mid)
