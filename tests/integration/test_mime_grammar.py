"""Issue 10 item 14: one owner for MIME headers and cid: URLs.

The PartInfo href and the signature's cid: resolver now decode a cid: URL
with the same decoder (mime_hdr.h): a malformed escape names no part for
either, where mime_find used to read "%zz" literally and accept what the
resolver refused.  Part headers are read with the one header grammar.
Both backends; nothing is stored on a refusal.  Every test also runs with
every body spooled (issue 14, conftest spool_side)."""
import pytest

from as4msg import envelope, multipart
from conftest import new_id

pytestmark = pytest.mark.usefixtures('spool_side')


def assert_nothing_stored(gw):
    assert gw.store.totals() == (0, 0, 0)


def test_cid_with_bad_escape_names_no_part(gateway):
    mid = new_id()
    ct, body = multipart(envelope(mid, cids=('p%zz1@t',)),
                         [('p%zz1@t', 'application/xml', b'<a/>')])
    ans = gateway.post(ct, body)
    assert ans.status == 200 and ans.error_code == 'EBMS:0011', ans
    assert ans.ref_to == mid
    assert_nothing_stored(gateway)


def test_cid_escape_decoded_once(gateway):
    """href "cid:p%201@t" names the part whose Content-ID is "p 1@t"."""
    mid = new_id()
    env = envelope(mid, cids=('p%201@t',))
    ct, body = multipart(env, [('p 1@t', 'application/xml', b'<a/>')])
    ans = gateway.post(ct, body)
    assert ans.status == 200 and ans.is_receipt, ans
    assert gateway.store.totals() == (1, 1, 1)


def test_cid_escape_not_decoded_twice(gateway):
    """"cid:p%2541@t" is "p%41@t", never "pA@t"."""
    mid = new_id()
    ct, body = multipart(envelope(mid, cids=('p%2541@t',)),
                         [('pA@t', 'application/xml', b'<a/>')])
    ans = gateway.post(ct, body)
    assert ans.error_code == 'EBMS:0011', ans
    assert_nothing_stored(gateway)


def test_part_header_continuation_first_is_refused(gateway):
    mid = new_id()
    ct, body = multipart(envelope(mid, cids=('a@t',)), [('a@t', 'application/xml', b'<a/>')])
    body = body.replace(b'Content-Type: application/xml\r\n',
                        b' folded: nothing before\r\nContent-Type: application/xml\r\n', 1)
    ans = gateway.post(ct, body)
    assert ans.status == 400, ans
    assert_nothing_stored(gateway)


def test_part_header_line_without_colon_is_refused(gateway):
    mid = new_id()
    ct, body = multipart(envelope(mid, cids=('a@t',)), [('a@t', 'application/xml', b'<a/>')])
    body = body.replace(b'Content-Type: application/xml\r\n',
                        b'Content-Type application/xml\r\n', 1)
    ans = gateway.post(ct, body)
    assert ans.status == 400, ans
    assert_nothing_stored(gateway)
