#!/usr/bin/python3
"""Build the seed corpora of the libFuzzer drivers in tests/fuzz.

    tests/fuzz/seeds.py OUTDIR

writes OUTDIR/mime, OUTDIR/envelope, OUTDIR/wss, OUTDIR/conf, OUTDIR/trust_dn,
OUTDIR/sbdh, OUTDIR/edifact, OUTDIR/revoc and OUTDIR/agree (one file per seed, named by its SHA-1 as libFuzzer does) and a dictionary OUTDIR/DRIVER.dict
for each, from the recorded AS4 messages in
../shared/corpus (or $AS4GW_SHARED/corpus) and the configuration files of the
source tree (conf/, tests/unit/conf/).  Corpus files are read, never copied
into the repository.  Without ../shared, only the few inputs generated here
are written, and a loud warning says so.

Input formats (see the drivers):
  mime      "Content-Type\\n" + body
  envelope  the SOAP envelope
  wss       ["sign:" | "sign+encrypt:" | "sign+encrypt-complete:" | "canon:"]
            "Content-Type\\n" + body
  conf      a configuration file, or a listen address / CIDR string
  trust_dn  a distinguished name string (ds:X509IssuerName values of the
            corpus, and the forms of tests/unit/test_trust_dn.c)
  sbdh      a payload (a Standard Business Document, or anything else)
  edifact   the first bytes of a payload (an EDIFACT interchange header)
  revoc     what an OCSP responder or a CRL distribution point answered
  agree     an XML document holding an xenc:AgreementMethod (the ENTSOG AS4
            4.0 examples, a ConcatKDF form, the xmlsec X25519 vectors)
"""
import hashlib
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Bodies bigger than this are shrunk (attachments cut) or skipped: libFuzzer
# mutates faster on small inputs and its default max_len is the largest seed.
MAX_SEED = 64 * 1024
MAX_PART_BODY = 2048
SOAP_CT = b'application/soap+xml'

ENVELOPE = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope" '
    'xmlns:eb="http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/" '
    'xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/'
    'oasis-200401-wss-wssecurity-utility-1.0.xsd">'
    '<S12:Header><eb:Messaging S12:mustUnderstand="true" wsu:Id="msg-1">'
    '<eb:UserMessage><eb:MessageInfo>'
    '<eb:Timestamp>2014-06-01T10:00:00.000Z</eb:Timestamp>'
    '<eb:MessageId>fuzz-1@as4gw</eb:MessageId></eb:MessageInfo>'
    '<eb:PartyInfo><eb:From><eb:PartyId type="urn:t">urn:from</eb:PartyId>'
    '<eb:Role>http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator</eb:Role>'
    '</eb:From><eb:To><eb:PartyId type="urn:t">urn:to</eb:PartyId>'
    '<eb:Role>http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder</eb:Role>'
    '</eb:To></eb:PartyInfo><eb:CollaborationInfo>'
    '<eb:AgreementRef type="urn:t" pmode="p">urn:agreement</eb:AgreementRef>'
    '<eb:Service type="urn:t">urn:service</eb:Service><eb:Action>Deliver</eb:Action>'
    '<eb:ConversationId>c-1</eb:ConversationId></eb:CollaborationInfo>'
    '<eb:MessageProperties><eb:Property name="originalSender">x</eb:Property>'
    '</eb:MessageProperties><eb:PayloadInfo>{parts}</eb:PayloadInfo>'
    '</eb:UserMessage></eb:Messaging></S12:Header>'
    '<S12:Body wsu:Id="body-1">{body}</S12:Body></S12:Envelope>')
# KeyInfo naming the certificate fuzz_wss makes (CN and serial in the driver)
OUR_KEYINFO = (
    b'<ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data>'
    b'<ds:X509IssuerSerial><ds:X509IssuerName>CN=as4gw fuzz signer</ds:X509IssuerName>'
    b'<ds:X509SerialNumber>4242</ds:X509SerialNumber></ds:X509IssuerSerial>'
    b'</ds:X509Data></ds:KeyInfo>')
PARTINFO = ('<eb:PartInfo href="cid:{cid}"><eb:PartProperties>'
            '<eb:Property name="MimeType">{mt}</eb:Property>{extra}'
            '</eb:PartProperties></eb:PartInfo>')


def envelope(cids=(), body_payload=False, gzip_cids=()):
    parts = ''.join(PARTINFO.format(
        cid=c, mt='application/xml',
        extra='<eb:Property name="CompressionType">application/gzip</eb:Property>'
        if c in gzip_cids else '') for c in cids)
    body = ''
    if body_payload:
        parts += '<eb:PartInfo/>'
        body = '<p:doc xmlns:p="urn:p">hello</p:doc>'
    return ENVELOPE.format(parts=parts, body=body).encode()


def multipart(root, atts, boundary='MIME_fuzz_seed', start=True, crlf=b'\r\n'):
    """(content_type, body); atts are (cid, content_type, data, cte)."""
    b = boundary.encode()
    out = [b'--' + b + crlf + b'Content-Type: application/soap+xml; charset=UTF-8' + crlf +
           b'Content-ID: <root@fuzz>' + crlf + crlf + root]
    for cid, ct, data, cte in atts:
        hdr = b'Content-Type: ' + ct.encode() + crlf + b'Content-ID: <' + cid.encode() + b'>' + crlf
        if cte:
            hdr += b'Content-Transfer-Encoding: ' + cte.encode() + crlf
        out.append(crlf + b'--' + b + crlf + hdr + crlf + data)
    out.append(crlf + b'--' + b + b'--' + crlf)
    ct = 'multipart/related; boundary="%s"; type="application/soap+xml"' % boundary
    if start:
        ct += '; start="<root@fuzz>"'
    return ct.encode(), b''.join(out)


def generated_messages():
    """A few (content_type, body) messages made here, corpus or not."""
    xml = b'<?xml version="1.0"?>\n<a:doc xmlns:a="urn:a"><a:x b="1"/></a:doc>\n'
    one = envelope(['p1@fuzz'])
    two = envelope(['p1@fuzz', 'p2@fuzz'], gzip_cids=['p2@fuzz'])
    gz = bytes.fromhex('1f8b0800000000000003cb48cdc9c95728cf2fca49e102002d3b08af0c000000')
    return [
        (SOAP_CT, envelope()),
        (SOAP_CT + b'; charset=utf-8', envelope(body_payload=True)),
        multipart(one, [('p1@fuzz', 'application/xml', xml, 'binary')]),
        multipart(two, [('p1@fuzz', 'text/plain', b'line 1\nline 2\n', None),
                        ('p2@fuzz', 'application/octet-stream', gz, 'binary')]),
        multipart(one, [('p1@fuzz', 'application/xml',
                         b'PD94bWwgdmVyc2lvbj0iMS4wIj8+PGEvPg==', 'base64')],
                  start=False, crlf=b'\n'),
        multipart(one, [('p1@fuzz', 'application/xml', xml, 'binary')],
                  boundary='=-weird/boundary==', start=False),
        # attachments that are MIME parts themselves (sign+encrypt-complete)
        multipart(two, [('p1@fuzz', 'application/octet-stream',
                         b'Content-Type: application/xml\r\nContent-ID: <p1@fuzz>\r\n'
                         b'Content-Description: =?utf-8?q?caf=C3=A9?=\r\n\r\n' + xml, 'binary'),
                        ('p2@fuzz', 'application/octet-stream',
                         b'Content-Type: text/plain\r\n\tcharset=us-ascii\r\n'
                         b'Content-Transfer-Encoding: base64\r\n\r\naGVsbG8K', 'binary')]),
        multipart(two, [('p1@fuzz', 'text/plain; charset=iso-8859-1',
                         b'caf=E9 =3D soft=\r\nbreak  \t\r\nend=\r\n', 'quoted-printable'),
                        ('p2@fuzz', 'application/octet-stream', gz, '8bit')]),
    ]


def hostile_envelopes():
    """Small seeds of the hostile XML classes of issue 10 (items 2, 3):
    encodings other than UTF-8 (UTF-7, UTF-16 both orders, a byte that a
    byte scan takes for a quote, a declaration against the bytes) and
    floods of comments, PIs and text nodes."""
    head = ('<S12:Envelope xmlns:S12="http://www.w3.org/2003/05/soap-envelope">'
            '<S12:Header>')
    tail = '</S12:Header><S12:Body/></S12:Envelope>'
    attrs = ''.join(' a%d="1"' % i for i in range(40))
    env16 = envelope().decode().replace('encoding="UTF-8"', 'encoding="UTF-16"')
    return [
        ('<?xml version="1.0" encoding="UTF-7"?>' + head + '<x' +
         ''.join(' a%d+AD0AIg-1+ACI-' % i for i in range(40)) + '/>' + tail).encode(),
        env16.encode('utf-16'),
        b'\xfe\xff' + env16.encode('utf-16-be'),
        ('<?xml version="1.0" encoding="UTF-16"?>' + head + '<x z="\u0122"' + attrs +
         '/>' + tail).encode('utf-16'),
        env16.encode(),
        envelope().decode().replace('encoding="UTF-8"', 'encoding="ISO-8859-1"').encode(),
        (head + '<!---->' * 200 + tail).encode(),
        (head + '<?a?>' * 200 + tail).encode(),
        (head + '<b/>x' * 200 + tail).encode(),
    ]


WSSE = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd'
XENC = 'http://www.w3.org/2001/04/xmlenc#'
DS = 'http://www.w3.org/2000/09/xmldsig#'


def with_security(root, security):
    """root (an envelope()) with a wsse:Security header block holding security."""
    return root.replace(b'<S12:Header>', b'<S12:Header><wsse:Security xmlns:wsse="' +
                        WSSE.encode() + b'">' + security + b'</wsse:Security>', 1)


def issue10_messages():
    """Seeds for the hostile-input classes of issue 10 (NEGATIVE-CASES-EXTRA):
    XML attachment floods (comments, PIs, elements, depth) that a SwA
    content transform parses under the request's limits ("sign:" signs them);
    an AES-CBC EncryptedData, unsigned and under a signature whose
    SignatureValue is not valid (checked before any reference is
    dereferenced); a "#id" reference with XPointer's '^' escape."""
    one = envelope(['p1@fuzz'])
    flood = b'<r>' + b'<a/><!---->' * 300 + b'<?p x?>' * 50 + b'text' * 20 + b'</r>'
    deep = b'<a>' * 100 + b'x' + b'</a>' * 100
    cbc = (b'<xenc:EncryptedKey xmlns:xenc="' + XENC.encode() + b'" Id="EK-1">'
           b'<xenc:EncryptionMethod Algorithm="http://www.w3.org/2009/xmlenc11#rsa-oaep"/>'
           b'<xenc:CipherData><xenc:CipherValue>AAAA</xenc:CipherValue></xenc:CipherData>'
           b'<xenc:ReferenceList><xenc:DataReference URI="#ED-1"/></xenc:ReferenceList>'
           b'</xenc:EncryptedKey><xenc:EncryptedData xmlns:xenc="' + XENC.encode() +
           b'" Id="ED-1" Type="http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#'
           b'Attachment-Content-Only" MimeType="application/xml">'
           b'<xenc:EncryptionMethod Algorithm="' + XENC.encode() + b'aes128-cbc"/>'
           b'<xenc:CipherData><xenc:CipherReference URI="cid:p1@fuzz"><xenc:Transforms>'
           b'<ds:Transform xmlns:ds="' + DS.encode() + b'" Algorithm="http://docs.oasis-open.org'
           b'/wss/oasis-wss-SwAProfile-1.1#Attachment-Ciphertext-Transform"/></xenc:Transforms>'
           b'</xenc:CipherReference></xenc:CipherData></xenc:EncryptedData>')
    sig = (b'<ds:Signature xmlns:ds="' + DS.encode() + b'"><ds:SignedInfo>'
           b'<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/>'
           b'<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
           b'<ds:Reference URI="#{ref}"><ds:Transforms><ds:Transform Algorithm='
           b'"http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms>'
           b'<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
           b'<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo>'
           b'<ds:SignatureValue>AAAA</ds:SignatureValue>' + OUR_KEYINFO + b'</ds:Signature>')
    caret = with_security(one.replace(b'wsu:Id="body-1"', b'wsu:Id="body^^1"'),
                          sig.replace(b'{ref}', b'body^^1'))
    return [
        multipart(one, [('p1@fuzz', 'application/xml', flood, 'binary')]),
        multipart(one, [('p1@fuzz', 'text/xml', deep, 'binary')]),
        multipart(with_security(one, cbc), [('p1@fuzz', 'application/octet-stream',
                                             bytes(range(48)), 'binary')]),
        multipart(with_security(one, cbc + sig.replace(b'{ref}', b'body-1')),
                  [('p1@fuzz', 'application/octet-stream', bytes(range(48)), 'binary')]),
        multipart(caret, [('p1@fuzz', 'application/xml', b'<a/>', 'binary')]),
    ]


def unfold_headers(raw):
    """Header block bytes -> {lower-case name: unfolded value}."""
    out = {}
    name = None
    for line in re.split(rb'\r?\n', raw):
        if line[:1] in (b' ', b'\t') and name is not None:
            out[name] += b' ' + line.strip()
            continue
        m = re.match(rb'([A-Za-z][A-Za-z0-9-]*):(.*)', line)
        if m:
            name = m.group(1).lower()
            out[name] = m.group(2).strip()
    return out


def readme_content_types(corpus):
    """corpus-relative message path -> Content-Type from the README table."""
    cts = {}
    try:
        text = open(os.path.join(corpus, 'README.md'), encoding='utf-8').read()
    except OSError:
        return cts
    for row in text.splitlines():
        if not re.match(r'\| \d+ \|', row):
            continue
        cols = row.split(' | ')
        repo = re.match(r'([^ ]+)/([^ ]+) @', cols[1])
        path = re.match(r'`([^`]+)`', cols[2])
        ct = re.search(r'Content-Type: `([^`]+)`', row)
        if repo and path and ct:
            rel = os.path.join('messages', repo.group(1) + '_' + repo.group(2), path.group(1))
            cts[rel] = re.sub(r'\s*\(reconstructed\)$', '', ct.group(1)).encode()
    return cts


def split_message(rel, data, cts):
    """(content_type, body) of a recorded message, or None."""
    if data.startswith(b'\xef\xbb\xbf'):
        data = data[3:]
    if re.match(rb'[A-Za-z][A-Za-z0-9-]*: ', data):      # HTTP or MIME headers
        m = re.search(rb'\r?\n\r?\n', data)
        if m:
            hdrs = unfold_headers(data[:m.start()])
            if b'content-type' in hdrs:
                return hdrs[b'content-type'], data[m.end():]
    if rel in cts:
        return cts[rel], data
    m = re.match(rb'\s*--([^\r\n]{1,70})\r?\n', data)
    if m and data.count(b'--' + m.group(1).rstrip()) >= 2 and b'-BEGIN ' not in m.group(1):
        b = m.group(1).rstrip()
        return b'multipart/related; boundary="' + b + b'"; type="application/soap+xml"', data
    if re.search(rb'<([A-Za-z0-9_]+:)?Envelope[\s>]', data[:4096]):
        return SOAP_CT, data.lstrip()
    return None


def boundary_of(ct):
    m = re.search(rb'boundary\s*=\s*"?([^";]+)"?', ct, re.I)
    return m.group(1) if m else None


def shrink(ct, body):
    """Cut every non-root part's body to MAX_PART_BODY (at a line end)."""
    b = boundary_of(ct)
    if b is None:
        return body
    pieces = re.split(rb'(\r?\n--' + re.escape(b) + rb')', body)
    out = pieces[:1]
    for i in range(1, len(pieces), 2):
        delim, part = pieces[i], pieces[i + 1]
        m = re.search(rb'\r?\n\r?\n', part)
        if i > 1 and m and len(part) - m.end() > MAX_PART_BODY:
            content = part[m.end():m.end() + MAX_PART_BODY]
            nl = content.rfind(b'\n')
            part = part[:m.end()] + (content[:nl + 1] if nl > 0 else content)
        out += [delim, part]
    return b''.join(out)


def root_part(ct, body):
    """The first part's body (the SOAP envelope) of a message."""
    b = boundary_of(ct)
    if b is None or not ct.lower().startswith(b'multipart/'):
        return body
    pieces = re.split(rb'\r?\n--' + re.escape(b) + rb'[^\r\n]*\r?\n', b'\r\n' + body)
    for part in pieces[1:]:
        m = re.search(rb'\r?\n\r?\n', part)
        if m:
            return part[m.end():]
    return None


def corpus_messages(corpus):
    """(rel, content_type, body) of every usable recorded message."""
    cts = readme_content_types(corpus)
    base = os.path.join(corpus, 'messages')
    for dirpath, _, files in sorted(os.walk(base)):
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, corpus)
            if os.path.getsize(path) > 2 * 1024 * 1024:
                continue
            with open(path, 'rb') as fh:
                data = fh.read()
            msg = split_message(rel, data, cts)
            if msg is not None:
                yield rel, msg[0], msg[1]


class Seeds:
    def __init__(self, out):
        self.out = out
        self.count = {}

    def add(self, driver, data):
        if not data or len(data) > MAX_SEED:
            return
        d = os.path.join(self.out, driver)
        os.makedirs(d, exist_ok=True)
        name = hashlib.sha1(data).hexdigest()
        p = os.path.join(d, name)
        if not os.path.exists(p):
            with open(p, 'wb') as fh:
                fh.write(data)
            self.count[driver] = self.count.get(driver, 0) + 1


def add_message(seeds, ct, body, signed):
    body = shrink(ct, body)
    seeds.add('mime', ct + b'\n' + body)
    seeds.add('wss', ct + b'\n' + body)
    root = root_part(ct, body)
    if root is not None:
        seeds.add('envelope', root)
    if not signed:
        seeds.add('wss', b'sign:' + ct + b'\n' + body)
        seeds.add('wss', b'sign+encrypt:' + ct + b'\n' + body)
        if boundary_of(ct) is not None:
            seeds.add('wss', b'sign+encrypt-complete:' + ct + b'\n' + body)
    if boundary_of(ct) is not None:
        seeds.add('wss', b'canon:' + ct + b'\n' + body)
    # signed and encrypted: decryption fails first (the key is not ours);
    # without the xenc elements the signature checks run on the message
    plain = re.sub(rb'(?s)<([A-Za-z0-9_]+:)?(EncryptedKey|EncryptedData)\b.*?</\1\2>', b'', body)
    # the signature's key named by X509IssuerSerial of fuzz_wss's own
    # certificate (fixed name and serial): trust passes, xmlsec runs
    ours = re.sub(rb'(?s)<([A-Za-z0-9_]+:)?KeyInfo\b[^>]*>.*?</\1KeyInfo>', OUR_KEYINFO, plain)
    for variant in ((plain, ours) if ours != plain else (plain,)):
        seeds.add('wss', ct + b'\n' + variant)
        # an envelope recorded without its attachments: stand-ins for
        # its cid: references get it past "attachment not in message"
        cids = sorted(set(re.findall(rb'(?:URI|href)="cid:([^"]{1,200})"', variant)))
        if boundary_of(ct) is None and cids:
            mct, mbody = multipart(variant.lstrip(), [
                (c.decode('latin-1'), 'application/octet-stream', b'stand-in', 'binary')
                for c in cids], start=False)
            seeds.add('wss', mct + b'\n' + mbody)


def conf_seeds(seeds):
    """Configuration files of the tree, also with absolute file paths (so
    the file checks pass and the whole load succeeds), and strings.  The
    fixtures include legs with several partyIds per party and legs on one
    route (party-several.xml, pmode-party.xml, route-pmode.xml; refused:
    party-twice.xml, party-many.xml, route-signing.xml, ambiguous.xml)."""
    for d in ('conf', 'tests/unit/conf'):
        full = os.path.join(TOP, d)
        for f in sorted(os.listdir(full)) if os.path.isdir(full) else []:
            if not f.endswith('.xml'):
                continue
            data = open(os.path.join(full, f), 'rb').read()
            seeds.add('conf', data)
            absolute = re.sub(
                rb'>([^<>/][^<>]*\.(?:pem|crt|cer|crl|der|key))<',
                lambda m: b'>' + os.path.normpath(os.path.join(full, m.group(1).decode())).encode() + b'<',
                data)
            seeds.add('conf', absolute)
    for s in ('127.0.0.1:8080', '[::1]:0', '[fe80::1%eth0]:443', 'gw.example:65535',
              '10.0.0.0/8', '192.0.2.7', '::ffff:192.0.2.0/120', '2001:db8::/32', '::/0'):
        seeds.add('conf', s.encode())


DN_SEEDS = [
    'CN=Test,O=Org,C=BE', 'CN=Test, O=Org, C=BE', 'cn=Test;o=Org ; c=BE',
    'CN=Doe\\, John,O=Org', 'CN=Doe\\2C John', 'CN=say \\"hi\\"', 'CN="Doe, John",O=Org',
    'CN=#0c0454657374,O=Org', 'CN=#1e080054006500730074', 'CN=self+UID=42,O=Org',
    '2.5.4.3=Test,OID.2.5.4.10=Org', '1.2.3.4=foo', 'CN=Caf\\C3\\A9', 'CN=\\ lead',
    'CN=trail\\ ', 'E=a@b.example, S=Brussels', 'ORGANIZATIONIDENTIFIER=VATBE-0123',
]


def dn_seeds(seeds, corpus):
    """Name strings: the forms of the unit test table, and every
    X509IssuerName the recorded envelopes carry."""
    for s in DN_SEEDS:
        seeds.add('trust_dn', s.encode())
    ex = os.path.join(corpus, 'extracted')
    for dirpath, _, files in sorted(os.walk(ex)):
        if 'envelope.xml' not in files:
            continue
        data = open(os.path.join(dirpath, 'envelope.xml'), 'rb').read()
        for m in re.findall(rb'X509IssuerName>([^<]{1,4096})<', data):
            seeds.add('trust_dn', m.strip())


SBDH_NS = 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader'
SBD = ('<?xml version="1.0" encoding="UTF-8"?><StandardBusinessDocument xmlns="%s">'
       '<StandardBusinessDocumentHeader><HeaderVersion>1.0</HeaderVersion>'
       '<Sender><Identifier Authority="iso6523-actorid-upis">0088:a</Identifier></Sender>'
       '<Receiver><Identifier Authority="iso6523-actorid-upis">0088:b</Identifier></Receiver>'
       '<DocumentIdentification><Standard>urn:x</Standard><TypeVersion>2.1</TypeVersion>'
       '<InstanceIdentifier>i-1</InstanceIdentifier><Type>Invoice</Type>'
       '<CreationDateAndTime>2026-12-01T10:00:00Z</CreationDateAndTime></DocumentIdentification>'
       '<BusinessScope><Scope><Type>DOCUMENTID</Type><InstanceIdentifier>urn:d::Invoice##c::2.1'
       '</InstanceIdentifier><Identifier>busdox-docid-qns</Identifier></Scope>'
       '<Scope><Type>PROCESSID</Type><InstanceIdentifier>urn:p</InstanceIdentifier>'
       '<Identifier>cenbii-procid-ubl</Identifier></Scope><Scope><Type>COUNTRY_C1</Type>'
       '<InstanceIdentifier>DE</InstanceIdentifier></Scope></BusinessScope>'
       '</StandardBusinessDocumentHeader>%s</StandardBusinessDocument>')


def sbdh_seeds(seeds, corpus):
    """Generated Standard Business Documents (good, two documents, none)
    and every corpus file that holds one."""
    for doc in ('<Invoice xmlns="urn:i"><ID>1</ID></Invoice>', '', '<a/><b/>'):
        seeds.add('sbdh', (SBD % (SBDH_NS, doc)).encode())
    base = os.path.join(corpus, 'messages')
    for dirpath, _, files in sorted(os.walk(base)) if os.path.isdir(base) else []:
        for f in sorted(files):
            path = os.path.join(dirpath, f)
            if os.path.getsize(path) > MAX_SEED:
                continue
            data = open(path, 'rb').read()
            i = data.find(b'<StandardBusinessDocument ')
            j = data.rfind(b'</StandardBusinessDocument>')
            if 0 <= i < j:
                # the SBD element alone (some sit inside a SOAP Body)
                seeds.add('sbdh', data[i:j + 27])


# libFuzzer dictionaries (-dict=OUTDIR/DRIVER.dict): tokens a mutation
# would hardly guess.  The configuration's come from its XSD.
XML_TOKENS = [
    '<?xml version="1.0" encoding="UTF-8"?>', '<!DOCTYPE', '<![CDATA[', ']]>', '<!--', '-->',
    'xmlns=', 'xmlns:', 'xml:id=', '&amp;', '&#x0;', '/>', '</',
    'encoding="UTF-16"', 'encoding="UTF-7"', 'encoding="ISO-8859-1"', '+AD0-', '+ACI-',
    '<!---->', '<?a?>', '\ufeff', '\u0122',
]
ENVELOPE_TOKENS = XML_TOKENS + [
    'http://www.w3.org/2003/05/soap-envelope', 'http://schemas.xmlsoap.org/soap/envelope/',
    'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
    'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
    'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/multihop/200902/',
    'Envelope', 'Header', 'Body', 'Fault', 'mustUnderstand', 'role',
    'Messaging', 'UserMessage', 'SignalMessage', 'MessageInfo', 'Timestamp', 'MessageId',
    'RefToMessageId', 'PartyInfo', 'From', 'To', 'PartyId', 'Role', 'CollaborationInfo',
    'AgreementRef', 'pmode', 'Service', 'Action', 'ConversationId', 'MessageProperties',
    'Property', 'PayloadInfo', 'PartInfo', 'PartProperties', 'href', 'cid:', 'name',
    'MimeType', 'CompressionType', 'application/gzip', 'Receipt', 'Error', 'PullRequest',
    'mpc', 'type', '2014-06-01T10:00:00.000Z', 'wsu:Id', 'Id', 'id',
]
WSS_TOKENS = ENVELOPE_TOKENS + [
    'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
    'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
    'http://www.w3.org/2000/09/xmldsig#', 'http://www.w3.org/2001/04/xmlenc#',
    'http://www.w3.org/2009/xmlenc11#', 'http://www.w3.org/2001/10/xml-exc-c14n#',
    'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', 'http://www.w3.org/2001/04/xmlenc#sha256',
    'http://www.w3.org/2009/xmlenc11#rsa-oaep', 'http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p',
    'http://www.w3.org/2009/xmlenc11#aes128-gcm', 'http://www.w3.org/2009/xmlenc11#mgf1sha256',
    'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Signature-Transform',
    'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Complete-Signature-Transform',
    'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Ciphertext-Transform',
    'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#Attachment-Content-Only',
    'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3',
    'Security', 'BinarySecurityToken', 'SecurityTokenReference', 'Reference', 'URI',
    'KeyIdentifier', 'ValueType', 'EncodingType', 'Signature', 'SignedInfo',
    'CanonicalizationMethod', 'SignatureMethod', 'Transforms', 'Transform', 'DigestMethod',
    'DigestValue', 'SignatureValue', 'KeyInfo', 'X509Data', 'X509IssuerSerial',
    'EncryptedKey', 'EncryptedData', 'EncryptionMethod', 'CipherData', 'CipherValue',
    'CipherReference', 'ReferenceList', 'DataReference', 'Created', 'Expires', 'Algorithm',
    'InclusiveNamespaces', 'PrefixList', 'sign:', 'sign+encrypt:', 'canon:',
    'http://www.w3.org/2001/04/xmlenc#aes128-cbc', 'http://www.w3.org/2001/04/xmlenc#aes256-cbc',
    '<!---->', '<?p x?>', '^', '^^', 'MimeType=',
    'sign+encrypt-complete:',
    'Content-Description: ', 'Content-Disposition: ', 'Content-Location: ', '=?utf-8?q?',
    '=?utf-8?b?', '?=', 'filename*=', "UTF-8''", 'name*0=', '(comment)', 
]
MIME_TOKENS = [
    'multipart/related', 'boundary=', 'type="application/soap+xml"', 'start=', 'start-info=',
    'application/soap+xml', 'text/xml', 'charset=UTF-8', '\r\n', '\r\n\r\n', '--', '--\r\n',
    'Content-Type: ', 'Content-ID: <', 'Content-Transfer-Encoding: ', 'base64', 'binary',
    '8bit', '7bit', 'quoted-printable', 'cid:', '\r\n\t', '"', '\\',
]

DN_TOKENS = [
    'CN=', 'O=', 'OU=', 'C=', 'L=', 'ST=', 'S=', 'E=', 'EMAILADDRESS=', 'DC=', 'UID=',
    'SERIALNUMBER=', 'ORGANIZATIONIDENTIFIER=', 'OID.', '2.5.4.3=', '1.2.840.113549.1.9.1=',
    ',', ';', '+', '\\', '\\2C', '\\,', '"', '#', '#0c', '#13', '#16', '#1e', '#04', '#30',
    ' ', '\\ ', '\\C3\\A9',
]


def dict_entry(tok):
    out = ''
    for c in tok.encode():
        out += '\\x%02x' % c if c < 0x20 or c >= 0x7f or c in (0x22, 0x5c) else chr(c)
    return '"%s"\n' % out


def write_dicts(out):
    xsd = os.path.join(TOP, 'schemas', 'as4gw-config.xsd')
    conf = list(XML_TOKENS) + ['urn:as4gw:config:1', '<as4gw xmlns="urn:as4gw:config:1">']
    if os.path.exists(xsd):
        text = open(xsd, encoding='utf-8').read()
        conf += sorted(set(re.findall(r'name="([A-Za-z]+)"', text)))
        conf += sorted(set(v for v in re.findall(r'value="([^"]*)"', text) if '\\' not in v))
    conf += ['sqlite:', 'postgresql://', '127.0.0.1:', '[::1]:', '/24', '/128', '::ffff:']
    sbdh = XML_TOKENS + [SBDH_NS, 'StandardBusinessDocument', 'StandardBusinessDocumentHeader',
                         'HeaderVersion', 'Sender', 'Receiver', 'Identifier', 'Authority',
                         'DocumentIdentification', 'Standard', 'TypeVersion',
                         'InstanceIdentifier', 'Type', 'CreationDateAndTime', 'BusinessScope',
                         'Scope', 'DOCUMENTID', 'PROCESSID', 'COUNTRY_C1', '&#9;']
    for name, toks in (('mime', MIME_TOKENS), ('envelope', ENVELOPE_TOKENS),
                       ('wss', WSS_TOKENS + MIME_TOKENS), ('conf', conf),
                       ('trust_dn', DN_TOKENS), ('sbdh', sbdh),
                       ('edifact', EDIFACT_TOKENS),
                       ('revoc', ['-----BEGIN X509 CRL-----\n', '\n-----END X509 CRL-----\n']),
                       ('agree', XML_TOKENS + AGREE_TOKENS)):
        with open(os.path.join(out, name + '.dict'), 'w') as fh:
            fh.writelines(dict_entry(t) for t in dict.fromkeys(toks))


# fuzz_edifact: interchange headers (issue 12 item 4), the test table's
# shapes: default and custom service characters, version 4 components.
EDIFACT_SEEDS = [
    b"UNB+UNOA:3+5790000000001:14+5790000000002:14+200101:1200+REF1'UNH+1'",
    b"UNA:+.? 'UNB+UNOC:3+S?+1:ZZ+R:ZZ+20200101:1200+R2++APP'",
    b"UNA|*.\\ ~UNB*UNOY|4*A\\*B|1*C*991231|2359*X~",
    b"UNA:+.? '\r\nUNB+UNOB:1+SENDER+RECIP+010101:0000+7'",
    b"UNB+UNOD:4:2:001+S:14:ROUTE:SUB+R:14:RR+20240229:0930+12345678901234+PW'",
]
EDIFACT_TOKENS = ['UNA', 'UNB', 'UNOA', 'UNOC', 'UNOY', "UNA:+.? '", '?', "'",
                  '+', ':', '\r\n']

# fuzz_agree: xenc:AgreementMethod forms (tests/unit/test_wss_agree_known.c: the
# ENTSOG AS4 4.0 examples, ECDH-ES with ConcatKDF), plus the AgreementMethod
# elements of the xmlsec X25519 vectors under ../shared.
AGREE_NS = ('xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" '
            'xmlns:xenc11="http://www.w3.org/2009/xmlenc11#" '
            'xmlns:ds="http://www.w3.org/2000/09/xmldsig#" '
            'xmlns:dm="http://www.w3.org/2021/04/xmldsig-more#" '
            'xmlns:d11="http://www.w3.org/2009/xmldsig11#" '
            'xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/'
            'oasis-200401-wss-wssecurity-secext-1.0.xsd"')
AGREE_SKI = ('<wsse:SecurityTokenReference><wsse:KeyIdentifier EncodingType="http://docs.'
             'oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary" '
             'ValueType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-'
             'profile-1.0#X509SubjectKeyIdentifier">AAECAwQFBgcICQoLDA0ODxAREhM='
             '</wsse:KeyIdentifier></wsse:SecurityTokenReference>')
AGREE_HKDF = ('<xenc11:KeyDerivationMethod Algorithm="http://www.w3.org/2021/04/xmldsig-more#hkdf">'
              '<dm:HKDFParams><dm:PRF Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha256"/>'
              '<dm:Salt>xWdTey4T6awUJkp0NPZNVTa2JQkWukC0Uk+qaeEpn4Y=</dm:Salt>'
              '<dm:Info>dGVzdC1pbmZvLWRhdGE=</dm:Info><dm:KeyLength>16</dm:KeyLength>'
              '</dm:HKDFParams></xenc11:KeyDerivationMethod>')
AGREE_CONCAT = ('<xenc11:KeyDerivationMethod Algorithm="http://www.w3.org/2009/xmlenc11#ConcatKDF">'
                '<xenc11:ConcatKDFParams AlgorithmID="00123456" PartyUInfo="00ab" PartyVInfo="00">'
                '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
                '</xenc11:ConcatKDFParams></xenc11:KeyDerivationMethod>')
AGREE_X25519 = ('<xenc:OriginatorKeyInfo><d11:DEREncodedKeyValue>MCowBQYDK2VuAyEAX9737D4yIsyDF0tGeaJm4'
                'FrSjy16UzKVdUEFtsrTCy8=</d11:DEREncodedKeyValue></xenc:OriginatorKeyInfo>')
AGREE_P256 = ('<xenc:OriginatorKeyInfo><ds:KeyValue><d11:ECKeyValue><d11:NamedCurve '
              'URI="urn:oid:1.2.840.10045.3.1.7"/><d11:PublicKey>BHKmpxsPuN4MG16aavgwtjDc6pyfZ4jI'
              'pbmu07NyiiQ8urNOwJDKGmtggwNlMhAWf6vInW1jTl6mTr9v2Qa7+uQ=</d11:PublicKey>'
              '</d11:ECKeyValue></ds:KeyValue></xenc:OriginatorKeyInfo>')


def agree_seeds(seeds, shared):
    """AgreementMethod documents: generated forms, and the xmlsec vectors'."""
    for alg, kdm, oki, rki in (
            ('http://www.w3.org/2021/04/xmldsig-more#x25519', AGREE_HKDF, AGREE_X25519, AGREE_SKI),
            ('http://www.w3.org/2021/04/xmldsig-more#x25519', AGREE_CONCAT, AGREE_X25519, AGREE_SKI),
            ('http://www.w3.org/2009/xmlenc11#ECDH-ES', AGREE_HKDF, AGREE_P256,
             '<ds:KeyValue>' + AGREE_SKI + '</ds:KeyValue>'),
            ('http://www.w3.org/2009/xmlenc11#ECDH-ES', AGREE_CONCAT, AGREE_P256, AGREE_SKI)):
        seeds.add('agree', ('<xenc:AgreementMethod %s Algorithm="%s">%s%s<xenc:RecipientKeyInfo>'
                            '%s</xenc:RecipientKeyInfo></xenc:AgreementMethod>'
                            % (AGREE_NS, alg, kdm, oki, rki)).encode())
    d = os.path.join(shared, 'vectors', 'xmlsec', 'aleksey-xmlenc-01')
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.startswith('enc_xdh_') and name.endswith('.xml'):
            seeds.add('agree', open(os.path.join(d, name), 'rb').read())


AGREE_TOKENS = ['AgreementMethod', 'KeyDerivationMethod', 'HKDFParams', 'PRF', 'Salt', 'Info',
                'KeyLength', 'ConcatKDFParams', 'AlgorithmID', 'PartyUInfo', 'PartyVInfo',
                'SuppPubInfo', 'OriginatorKeyInfo', 'RecipientKeyInfo', 'DEREncodedKeyValue',
                'ECKeyValue', 'NamedCurve', 'PublicKey', 'KeyValue', 'DigestMethod',
                'urn:oid:1.3.36.3.3.2.8.1.1.7', 'urn:oid:1.3.132.0.34', 'urn:oid:1.3.132.0.35',
                'http://www.w3.org/2009/xmlenc11#ECDH-ES', 'http://www.w3.org/2021/04/xmldsig-more#',
                'http://www.w3.org/2001/04/xmldsig-more#hmac-sha384', '00', 'MCowBQYDK2VuAyEA']


def revoc_seeds(seeds):
    """fuzz_revoc: DER and PEM CRLs and OCSP responses (good, revoked, an
    error status) made here by python3-cryptography with a key of their own
    (the driver's CA is another one: they parse deep, then fail to verify)."""
    seeds.add('revoc', b'\x30\x03\x0a\x01\x03')    # OCSPResponse tryLater
    seeds.add('revoc', b'\x30\x03\x0a\x01\x01')    # malformedRequest
    try:
        import datetime
        from cryptography import x509
        from cryptography.x509 import ocsp
        from cryptography.x509.oid import NameOID
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError:
        print('!!!! seeds.py: python3-cryptography missing: fuzz_revoc starts '
              'from two error responses only !!!!', file=sys.stderr)
        return
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'seed CA')])

    def cert(cn, serial):
        return (x509.CertificateBuilder().subject_name(
            x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(name).public_key(key.public_key()).serial_number(serial)
            .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=30))
            .sign(key, hashes.SHA256()))
    ca, leaf = cert('seed CA', 1), cert('seed leaf', 2)
    crl = (x509.CertificateRevocationListBuilder().issuer_name(name)
           .last_update(now).next_update(now + datetime.timedelta(days=1))
           .add_revoked_certificate(x509.RevokedCertificateBuilder().serial_number(2)
                                    .revocation_date(now).build())
           .sign(key, hashes.SHA256()))
    seeds.add('revoc', crl.public_bytes(serialization.Encoding.DER))
    seeds.add('revoc', crl.public_bytes(serialization.Encoding.PEM))
    for status in (ocsp.OCSPCertStatus.GOOD, ocsp.OCSPCertStatus.REVOKED):
        b = ocsp.OCSPResponseBuilder().add_response(
            cert=leaf, issuer=ca, algorithm=hashes.SHA1(), cert_status=status,
            this_update=now, next_update=now + datetime.timedelta(hours=1),
            revocation_time=now if status == ocsp.OCSPCertStatus.REVOKED else None,
            revocation_reason=None).responder_id(ocsp.OCSPResponderEncoding.HASH, ca)
        seeds.add('revoc', b.sign(key, hashes.SHA256()).public_bytes(
            serialization.Encoding.DER))


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: seeds.py OUTDIR')
    seeds = Seeds(sys.argv[1])
    shared = os.environ.get('AS4GW_SHARED') or os.path.join(os.path.dirname(TOP), 'shared')
    corpus = os.path.join(shared, 'corpus')
    for ct, body in generated_messages() + issue10_messages():
        add_message(seeds, ct, body, signed=False)
    for env in hostile_envelopes():
        seeds.add('envelope', env)
    if os.path.isdir(os.path.join(corpus, 'messages')):
        for rel, ct, body in corpus_messages(corpus):
            add_message(seeds, ct, body, signed=b'Security' in (root_part(ct, body) or b''))
        ex = os.path.join(corpus, 'extracted')
        for dirpath, _, files in sorted(os.walk(ex)):
            if 'envelope.xml' in files:
                seeds.add('envelope', open(os.path.join(dirpath, 'envelope.xml'), 'rb').read())
    else:
        print('!!!! seeds.py: %s is absent: the fuzzers start from the few '
              'GENERATED seeds only, not from the recorded corpus !!!!' % corpus,
              file=sys.stderr)
    conf_seeds(seeds)
    dn_seeds(seeds, corpus)
    sbdh_seeds(seeds, corpus)
    for seed in EDIFACT_SEEDS:
        seeds.add('edifact', seed)
    revoc_seeds(seeds)
    agree_seeds(seeds, shared)
    write_dicts(seeds.out)
    print('seeds: ' + ', '.join('%s %d' % kv for kv in sorted(seeds.count.items())))


if __name__ == '__main__':
    main()
