"""Hostile SOAP envelopes of issue 10 items 2 and 3, and a benign message of
the same size, shared by tests/integration/test_xml_limits.py and
bench/hostile-xml (standard library only).

Each builder returns (content_type, body) of about `size` bytes, posted as a
bare SOAP envelope.  Sizes stay under the default maxEnvelopeBytes (4 MiB)
so that the parser's own limits are what answers.
"""
import os
import uuid

S12 = 'http://www.w3.org/2003/05/soap-envelope'
HEAD = f'<S12:Envelope xmlns:S12="{S12}"><S12:Header>'
TAIL = '</S12:Header><S12:Body/></S12:Envelope>'
SOAP = 'application/soap+xml'


def _repeat(head, unit, tail, size):
    n = max(1, (size - len(head) - len(tail)) // len(unit))
    return head + unit * n + tail


def _attributes(head, unit, tail, size):
    """head + unit.format(i) for i = 0, 1, ... (distinct names) + tail."""
    out, total, i = [head], len(head) + len(tail), 0
    while total < size:
        a = unit.format(i)
        out.append(a)
        total += len(a)
        i += 1
    out.append(tail)
    return ''.join(out)


def utf7_attributes(size):
    """UTF-7 declared: '=' and '"' are +AD0- and +ACI-, which a byte scan
    does not see; libxml2 decoding UTF-7 sees ~100k distinct attributes on
    one element and checks them pairwise (quadratic)."""
    body = _attributes('<?xml version="1.0" encoding="UTF-7"?>' + HEAD + '<x',
                       ' a{}+AD0AIg-1+ACI-', '/>' + TAIL, size)
    return SOAP, body.encode('ascii')


def utf16_attributes(size):
    """UTF-16LE whose first attribute value holds U+0122 (bytes 22 01): a
    byte scan takes the 0x22 for a quote and misses every later '='."""
    body = _attributes('<?xml version="1.0" encoding="UTF-16"?>' + HEAD +
                       '<x z="\u0122"', ' a{}="1"', '/>' + TAIL, size // 2)
    return SOAP, body.encode('utf-16')


def comments(size):
    """Empty comments: ~200 bytes of tree each, not counted before."""
    return SOAP, _repeat(HEAD, '<!---->', TAIL, size).encode()


def pis(size):
    """Empty processing instructions."""
    return SOAP, _repeat(HEAD, '<?a?>', TAIL, size).encode()


def text_nodes(size):
    """Text between empty elements: as many text nodes as elements, with
    the elements alone under the 100000 node default."""
    return SOAP, _repeat(HEAD, '<b/>' + 'x' * 16, TAIL, size).encode()


def namespaces(size):
    """60 nested elements declaring 63 prefixes each (under maxXmlDepth and
    maxXmlAttributes per element), then prefixed elements: libxml2 scans
    every declaration in scope for each prefix (bounded since issue 10)."""
    levels = 60
    opened = ''.join('<e%d %s>' % (d, ' '.join('xmlns:n%d_%d="urn:x:%d"' % (d, i, i)
                                                 for i in range(63)))
                     for d in range(levels))
    head = HEAD + '<r xmlns:p="urn:p">' + opened
    tail = ''.join('</e%d>' % d for d in reversed(range(levels))) + '</r>' + TAIL
    return SOAP, _repeat(head, '<p:a/>', tail, size).encode()


HOSTILE = {
    'utf7-attributes': utf7_attributes,
    'utf16-attributes': utf16_attributes,
    'comments': comments,
    'pis': pis,
    'text-nodes': text_nodes,
    'namespaces': namespaces,
}


def benign(size, make_message):
    """A valid one-payload push of about `size` bytes (payloads are
    attachments): make_message(message_id, payload) -> (ct, body)."""
    mid = f'{uuid.uuid4()}@hostile-xml'
    ct, body = make_message(mid, b'')
    payload = bytes(range(256)) * (max(0, size - len(body)) // 256 + 1)
    return mid, make_message(mid, payload[:max(0, size - len(body))])


def cpu_seconds(pid):
    """utime + stime of a process, from /proc/PID/stat (in seconds)."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def vm_hwm_kib(pid):
    """Peak resident memory of a process (VmHWM, KiB)."""
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    return 0
