"""Bad input gets a clear answer and nothing is stored (NEGATIVE-CASES 1-27 that
need no signatures), on SQLite and PostgreSQL."""
import socket
import time

import pytest

import as4msg
from as4msg import envelope, multipart, user_message
from conftest import new_id


def assert_nothing_stored(gw):
    assert gw.store.totals() == (0, 0, 0)


@pytest.mark.parametrize('action,code', [
    ('urn:as4gw:dev:Unknown', 'EBMS:0010'),
])
@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_pmode_mismatch(gateway, action, code):
    mid = new_id()
    ans = gateway.post(*user_message(mid, action=action))
    assert ans.status == 200 and ans.error_code == code and ans.ref_to == mid
    assert ans.signed
    assert_nothing_stored(gateway)
    line = [l for l in gateway.log_lines() if l.get('message_id') == mid][0]
    assert 'Action' in line.get('detail', ''), line


@pytest.mark.parametrize('field', ['frm', 'to', 'service'])
def test_pmode_mismatch_each_field(gateway, field):
    ans = gateway.post(*user_message(new_id(), **{field: 'urn:as4gw:other'}))
    assert ans.error_code == 'EBMS:0010', ans
    assert_nothing_stored(gateway)


def test_signing_required_leg_refuses_unsigned(gateway):
    """NEGATIVE-CASES 28: unsigned where the P-Mode requires signing."""
    ans = gateway.post(*user_message(new_id(), action='urn:as4gw:dev:SignedOnly'))
    assert ans.error_code == 'EBMS:0103', ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_partinfo_without_mime_part(gateway):
    """NEGATIVE-CASES 14."""
    mid = new_id()
    ct, body = multipart(envelope(mid, cids=('a@t', 'missing@t')), [('a@t', 'text/plain', b'x')])
    ans = gateway.post(ct, body)
    assert ans.error_code == 'EBMS:0011', ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_mime_part_without_partinfo(gateway):
    """NEGATIVE-CASES 15."""
    ct, body = multipart(envelope(new_id(), cids=('a@t',)),
                         [('a@t', 'text/plain', b'x'), ('extra@t', 'text/plain', b'y')])
    ans = gateway.post(ct, body)
    assert ans.error_code == 'EBMS:0011', ans
    assert_nothing_stored(gateway)


def test_external_payload_reference(gateway):
    """NEGATIVE-CASES 16."""
    env = envelope(new_id(), cids=()).replace(
        '</eb:CollaborationInfo>',
        '</eb:CollaborationInfo><eb:PayloadInfo><eb:PartInfo href="http://127.0.0.1:9/x"/></eb:PayloadInfo>')
    ans = gateway.post('application/soap+xml', env.encode())
    assert ans.error_code == 'EBMS:0011', ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_duplicate_content_id(gateway):
    """NEGATIVE-CASES 13."""
    ct, body = multipart(envelope(new_id(), cids=('a@t',)),
                         [('a@t', 'text/plain', b'x'), ('a@t', 'text/plain', b'y')])
    ans = gateway.post(ct, body)
    assert ans.error_code == 'EBMS:0007', ans
    assert_nothing_stored(gateway)


@pytest.mark.parametrize('doc', [
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/dtd"> %p;]><x/>',
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    b'<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]><lolz>&lol3;</lolz>',
    b'<?xml version="1.0"?><!DOCTYPE S12:Envelope><S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"/>',
], ids=['xxe-file', 'param-entity-net', 'billion-laughs', 'plain-doctype'])
def test_dtd_refused(gateway, doc):
    """NEGATIVE-CASES 17-20."""
    t0 = time.monotonic()
    ans = gateway.post('application/soap+xml', doc)
    assert time.monotonic() - t0 < 5
    assert ans.status == 400 and ans.fault_code == 'Sender', ans
    assert_nothing_stored(gateway)


@pytest.mark.parametrize('doc', [
    b'<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"><S12:Body>',
    b'not xml at all',
    b'<a>' * 10000 + b'</a>' * 10000,
    b'<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope"><S12:Body><x '
    + b' '.join(b'a%d="1"' % i for i in range(100000)) + b'/></S12:Body></S12:Envelope>',
], ids=['truncated', 'garbage', 'deep', 'many-attributes'])
@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_malformed_or_too_complex_xml(gateway, doc):
    """NEGATIVE-CASES 21-22 and not well-formed input."""
    ans = gateway.post('application/soap+xml', doc)
    assert ans.status == 400 and ans.fault_code == 'Sender', ans
    assert_nothing_stored(gateway)


def test_soap11_envelope_version_mismatch(gateway):
    """NEGATIVE-CASES 23."""
    env = envelope(new_id(), cids=()).replace(as4msg.NS['S12'], as4msg.NS['S11']) \
        .replace('mustUnderstand="true"', 'mustUnderstand="1"')
    ans = gateway.post('text/xml', env.encode())
    assert ans.fault_code == 'VersionMismatch', ans
    assert_nothing_stored(gateway)


def test_no_messaging_header(gateway):
    """NEGATIVE-CASES 24."""
    env = ('<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope">'
           '<S12:Header/><S12:Body/></S12:Envelope>')
    ans = gateway.post('application/soap+xml', env.encode())
    assert ans.error_code == 'EBMS:0009', ans
    assert_nothing_stored(gateway)


def test_two_user_messages(gateway):
    """NEGATIVE-CASES 25."""
    env = envelope(new_id(), cids=())
    um = env[env.index('<eb:UserMessage>'):env.index('</eb:UserMessage>') + len('</eb:UserMessage>')]
    env = env.replace(um, um + um.replace('@as4gw-test', '-2@as4gw-test'))
    ans = gateway.post('application/soap+xml', env.encode())
    assert ans.error_code == 'EBMS:0003', ans
    assert_nothing_stored(gateway)


@pytest.mark.parametrize('mutate', [
    lambda e: e.replace('<eb:PartyId>urn:as4gw:dev:sender</eb:PartyId>', '<eb:PartyId></eb:PartyId>'),
    lambda e: e.replace(e[e.index('<eb:MessageId>'):e.index('</eb:MessageId>') + 15], ''),
    lambda e: e.replace(as4msg.SESSION_TS, 'imaginary'),
    lambda e: e.replace('@as4gw-test</eb:MessageId>', 'x' * 300 + '@as4gw-test</eb:MessageId>'),
], ids=['empty-partyid', 'no-messageid', 'bad-timestamp', 'oversized-messageid'])
def test_invalid_header(gateway, mutate):
    """NEGATIVE-CASES 26."""
    ans = gateway.post('application/soap+xml', mutate(envelope(new_id(), cids=())).encode())
    assert ans.error_code == 'EBMS:0009', ans
    assert_nothing_stored(gateway)


def test_unknown_mandatory_header(gateway):
    hdr = '<x:Foo xmlns:x="urn:x" S12:mustUnderstand="true"/>'
    ans = gateway.post(*user_message(new_id(), extra_header=hdr))
    assert ans.status == 500 and ans.fault_code == 'MustUnderstand', ans
    assert_nothing_stored(gateway)


@pytest.mark.parametrize('ctype', ['text/plain', 'application/json', None,
                                   'multipart/mixed; boundary=x'])
@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_wrong_media_type(gateway, ctype):
    """NEGATIVE-CASES 9."""
    _, body = user_message(new_id())
    ans = gateway.post(ctype, body)
    assert ans.status == 415, ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
@pytest.mark.parametrize('boundary', [None, 'x' * 71], ids=['missing', 'too-long'])
def test_bad_boundary(gateway, boundary):
    """NEGATIVE-CASES 10."""
    _, body = user_message(new_id())
    ct = 'multipart/related; type="application/soap+xml"'
    if boundary:
        ct += f'; boundary="{boundary}"'
    ans = gateway.post(ct, body)
    assert ans.status == 400, ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_truncated_multipart(gateway):
    """NEGATIVE-CASES 11."""
    ct, body = user_message(new_id())
    ans = gateway.post(ct, body[:-20])
    assert ans.status == 400, ans
    assert_nothing_stored(gateway)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_start_fallback_root_not_soap(gateway):
    """NEGATIVE-CASES 12 (second half): start names nothing and the first part is not SOAP."""
    b = 'bnd'
    body = (f'--{b}\r\nContent-Type: text/plain\r\nContent-ID: <p@t>\r\n\r\nhello\r\n--{b}--\r\n').encode()
    ans = gateway.post(f'multipart/related; boundary={b}; start="<nothing@t>"', body)
    assert ans.error_code == 'EBMS:0007', ans
    assert_nothing_stored(gateway)


def test_content_length_over_cap(gateway_factory):
    """NEGATIVE-CASES 1: refused before the body is read."""
    gw = gateway_factory(limits='<maxBodyBytes>65536</maxBodyBytes>').start()
    s = socket.create_connection(('127.0.0.1', gw.port), timeout=10)
    s.sendall(b'POST /as4 HTTP/1.1\r\nHost: x\r\nContent-Type: application/soap+xml\r\n'
              b'Content-Length: 10000000\r\n\r\n')
    answer = s.recv(4096)
    s.close()
    assert answer.startswith(b'HTTP/1.1 413'), answer
    assert_nothing_stored(gw)


@pytest.mark.usefixtures('spool_side')   # issue 14: both sides
def test_chunked_body_over_cap(gateway_factory):
    """NEGATIVE-CASES 2."""
    gw = gateway_factory(limits='<maxBodyBytes>65536</maxBodyBytes>').start()

    def chunks():
        for _ in range(100):
            yield b'x' * 4096
    import http.client
    c = http.client.HTTPConnection('127.0.0.1', gw.port, timeout=10)
    try:
        c.request('POST', '/as4', body=chunks(), encode_chunked=True,
                  headers={'Content-Type': 'application/soap+xml', 'Transfer-Encoding': 'chunked'})
        status = c.getresponse().status
    except (ConnectionError, BrokenPipeError):
        status = 'closed'
    assert status in (413, 'closed')
    assert_nothing_stored(gw)


def test_huge_header_and_url(gateway):
    """NEGATIVE-CASES 3 and 4."""
    ans = gateway.request('GET', '/healthz', headers={'X-Big': 'a' * 40960})
    assert ans.status in (431, 413, 400), ans
    ans = gateway.request('GET', '/' + 'a' * 70000)
    assert ans.status in (414, 431, 413, 400), ans


def test_conflicting_content_length(gateway):
    """NEGATIVE-CASES 5."""
    s = socket.create_connection(('127.0.0.1', gateway.port), timeout=10)
    s.sendall(b'POST /as4 HTTP/1.1\r\nHost: x\r\nContent-Type: application/soap+xml\r\n'
              b'Content-Length: 5\r\nContent-Length: 7\r\n\r\nhello12')
    answer = s.recv(4096)
    s.close()
    assert answer.startswith(b'HTTP/1.1 400'), answer
    assert_nothing_stored(gateway)


def test_routes(gateway):
    assert gateway.get('/healthz').status == 200
    assert gateway.get('/readyz').status == 200
    ans = gateway.get('/as4')
    assert ans.status == 405 and ans.headers.get('Allow') == 'POST'
    assert gateway.get('/nope').status == 404
