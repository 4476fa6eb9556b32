"""Tampering helpers for the generated attacks (tests/integration/test_attacks_*.py,
NEGATIVE-CASES 28-58).  They live in the test tree on purpose: the product has no
way to produce a hostile message.

A valid message comes from `as4gw push --sign [--encrypt] --save-request FILE`;
these helpers split its MIME body, edit the root envelope as text (signatures
depend on exact bytes, so only what the attack changes is touched), re-sign
SignedInfo where an attack needs a signature that is cryptographically valid
(the written-from-the-specs signer below: XML-DSig 1.0 4.3, Exclusive XML
Canonicalization 1.0, eDelivery AS4 1.15 1.4.2.6), recover and re-wrap the
content key of an encrypted message (XML Encryption 1.1 5.4, 5.2.4) and
reassemble the body with the same boundary.

Needs python3-lxml (canonicalization) and python3-cryptography (RSA, AES).
"""
import base64
import datetime
import gzip
import hashlib
import os
import re
import socket
import struct
import threading
import zlib

from lxml import etree
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.x509.oid import NameOID

NS = {
    'env': 'http://www.w3.org/2003/05/soap-envelope',
    'eb': 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
    'wsse': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
    'wsu': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
    'ds': 'http://www.w3.org/2000/09/xmldsig#',
    'xenc': 'http://www.w3.org/2001/04/xmlenc#',
    'ec': 'http://www.w3.org/2001/10/xml-exc-c14n#',
}

# Canonicalization (XML-DSig 1.1 6.5; Exclusive C14N 1.0)
EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
EXC_C14N_WC = 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments'
INC_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'
INC_C14N_WC = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments'
C14N11 = 'http://www.w3.org/2006/12/xml-c14n11'
C14N = {  # URI -> (exclusive, with_comments); c14n 1.1 = 1.0 for documents without xml:* attributes
    EXC_C14N: (True, False), EXC_C14N_WC: (True, True),
    INC_C14N: (False, False), INC_C14N_WC: (False, True), C14N11: (False, False),
}
# Digests (XML-DSig 1.1 6.2; RFC 6931)
SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
SHA1 = 'http://www.w3.org/2000/09/xmldsig#sha1'
MD5 = 'http://www.w3.org/2001/04/xmldsig-more#md5'
DIGESTS = {SHA256: 'sha256', SHA1: 'sha1', MD5: 'md5',
           'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
           'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512'}
# Signature methods (XML-DSig 1.1 6.4; RFC 6931)
RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
RSA_SHA512 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512'
RSA_SHA1 = 'http://www.w3.org/2000/09/xmldsig#rsa-sha1'
RSA_MD5 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-md5'
HMAC_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#hmac-sha256'
SIG_HASH = {RSA_SHA256: hashes.SHA256, RSA_SHA512: hashes.SHA512, RSA_SHA1: hashes.SHA1,
            RSA_MD5: hashes.MD5}
# eDelivery AS4 2.0 (RFC 9231 2.3.7: Ed25519 over the octets; XML-DSig 1.1
# 6.4.3 / RFC 6931 2.3.6: ECDSA as raw r || s, each the curve's size)
EDDSA_ED25519 = 'http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519'
ECDSA_HASH = {'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': hashes.SHA256,
              'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': hashes.SHA384,
              'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': hashes.SHA512}
# Transforms that must never run (NEGATIVE-CASES 35)
XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116'
XPATH_FILTER2 = 'http://www.w3.org/2002/06/xmldsig-filter2'
XSLT = 'http://www.w3.org/TR/1999/REC-xslt-19991116'
ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
# Encryption (XML Encryption 1.0/1.1)
RSA_1_5 = 'http://www.w3.org/2001/04/xmlenc#rsa-1_5'
AES128_CBC = 'http://www.w3.org/2001/04/xmlenc#aes128-cbc'
AES128_GCM = 'http://www.w3.org/2009/xmlenc11#aes128-gcm'
SWA = 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#'
ATTACHMENT_COMPLETE = SWA + 'Attachment-Complete'


# ---- MIME -------------------------------------------------------------------

class Message:
    """A multipart/related HTTP body split at its boundary (RFC 2046 5.1.1),
    kept byte-exact: parts are [header block, content] pairs and joining them
    again with the same boundary gives the original bytes back."""

    def __init__(self, content_type, body):
        self.content_type = content_type
        m = re.search(r'boundary="?([^";]+)"?', content_type)
        assert m, content_type
        self.boundary = m.group(1).encode()
        delim = b'\r\n--' + self.boundary
        segs = (b'\r\n' + body).split(delim)
        assert segs[0] == b'' and segs[-1].startswith(b'--'), 'not a simple multipart body'
        self.epilogue = segs[-1]
        self.parts = []
        for seg in segs[1:-1]:
            assert seg.startswith(b'\r\n')
            head, sep, content = seg[2:].partition(b'\r\n\r\n')
            assert sep, 'part without header block'
            self.parts.append([head, content])

    @classmethod
    def load(cls, path):
        """A message saved by `as4gw push --save-request path`."""
        with open(path, 'rb') as f:
            body = f.read()
        with open(path + '.ct') as f:
            ct = f.read().strip()
        return cls(ct, body)

    def http(self):
        """(content_type, body) to POST."""
        out = b''.join(b'\r\n--' + self.boundary + b'\r\n' + h + b'\r\n\r\n' + c
                       for h, c in self.parts)
        return self.content_type, out[2:] + b'\r\n--' + self.boundary + self.epilogue

    @property
    def envelope(self):
        """The root part (as4gw push writes it first) as text."""
        return self.parts[0][1].decode('utf-8')

    @envelope.setter
    def envelope(self, text):
        self.parts[0][1] = text.encode('utf-8')

    def header(self, i, name):
        m = re.search(rb'(?im)^' + name.encode() + rb':\s*(.*?)\s*$', self.parts[i][0])
        return m.group(1).decode() if m else None

    def set_header(self, i, name, value):
        head, n = re.subn(rb'(?im)^(' + name.encode() + rb':)[^\r\n]*',
                          lambda m: m.group(1) + b' ' + value.encode(), self.parts[i][0])
        assert n == 1, (name, self.parts[i][0])
        self.parts[i][0] = head

    def cid(self, i):
        return self.header(i, 'Content-ID').strip('<>')

    def part_index(self, cid):
        return [self.cid(i) for i in range(len(self.parts))].index(cid)

    def copy(self):
        m = Message.__new__(Message)
        m.content_type, m.boundary, m.epilogue = self.content_type, self.boundary, self.epilogue
        m.parts = [list(p) for p in self.parts]
        return m


# ---- envelope text edits ----------------------------------------------------

def once(text, old, new, count=1):
    """Replace old by new where old occurs exactly count times (a tampering
    step that silently does nothing would make a test pass for nothing)."""
    n = text.count(old)
    assert n == count, f'{old[:80]!r} occurs {n} times, expected {count}'
    return text.replace(old, new)


def element(text, qname, nth=0):
    """The nth complete <qname ...>...</qname> (or empty-element tag) in text;
    elements of one name do not nest in the envelopes we edit."""
    pat = re.compile(r'<' + re.escape(qname) + r'(?=[\s/>])[^>]*?(?:/>|>.*?</' +
                     re.escape(qname) + r'>)', re.S)
    found = pat.findall(text)
    assert len(found) > nth, f'no {qname} #{nth}'
    return found[nth]


def attr(fragment, name):
    m = re.search(r'\s' + re.escape(name) + r'="([^"]*)"', fragment)
    return m.group(1) if m else None


def text_of(text, qname, nth=0):
    e = element(text, qname, nth)
    return re.sub(r'^<[^>]*>|</[^>]*>$', '', e)


def references(text):
    """The ds:Reference elements of SignedInfo, in order."""
    si = element(text, 'ds:SignedInfo')
    return re.findall(r'<ds:Reference\b.*?</ds:Reference>', si, re.S)


def reference(text, uri_prefix):
    """The one ds:Reference whose URI starts with uri_prefix."""
    found = [r for r in references(text) if (attr(r, 'URI') or '').startswith(uri_prefix)]
    assert len(found) == 1, (uri_prefix, found)
    return found[0]


def messaging_ref(text):
    return reference(text, '#messaging-')


def body_ref(text):
    return reference(text, '#body-')


def new_reference(uri, transforms=(EXC_C14N,), digest=SHA256):
    ts = ''.join(f'<ds:Transform Algorithm="{t}"/>' for t in transforms)
    return (f'<ds:Reference URI="{uri}"><ds:Transforms>{ts}</ds:Transforms>'
            f'<ds:DigestMethod Algorithm="{digest}"/><ds:DigestValue></ds:DigestValue>'
            '</ds:Reference>')


def add_reference(text, ref):
    return once(text, '</ds:SignedInfo>', ref + '</ds:SignedInfo>')


def security_open_tag(text):
    m = re.search(r'<wsse:Security\b[^>]*>', text)
    assert m
    return m.group(0)


def add_to_security(text, fragment):
    """fragment becomes the first child of wsse:Security (WS-Security 1.1 5)."""
    tag = security_open_tag(text)
    return once(text, tag, tag + fragment)


def wrap_in_header(text, fragment, wrapper='x:Wrapper', ns='urn:as4gw-test:evil'):
    """fragment inside an unknown, not mustUnderstand header block placed
    first in env:Header (the classic signature wrapping hiding place)."""
    w = f'<{wrapper} xmlns:{wrapper.split(":")[0]}="{ns}">{fragment}</{wrapper}>'
    return once(text, '<env:Header>', '<env:Header>' + w)


def iso(t):
    return t.strftime('%Y-%m-%dT%H:%M:%S.') + f'{t.microsecond // 1000:03d}Z'


def timestamp(ts_id, created, expires=None):
    """A wsu:Timestamp (WS-Security 1.1 SOAP Message Security 10)."""
    exp = f'<wsu:Expires>{iso(expires)}</wsu:Expires>' if expires else ''
    return (f'<wsu:Timestamp wsu:Id="{ts_id}"><wsu:Created>{iso(created)}</wsu:Created>'
            f'{exp}</wsu:Timestamp>')


def add_signed_timestamp(text, ts_id, created, expires=None):
    """A wsu:Timestamp first in wsse:Security and a Reference to it; the
    caller re-signs."""
    text = add_to_security(text, timestamp(ts_id, created, expires))
    return add_reference(text, new_reference('#' + ts_id))


# ---- the signer -------------------------------------------------------------

def _parse(text):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    return etree.fromstring(text.encode('utf-8'), parser)


def _c14n(node, method_el):
    alg = method_el.get('Algorithm')
    exclusive, comments = C14N[alg]
    prefixes = None
    inc = method_el.find('ec:InclusiveNamespaces', NS)
    if inc is not None:
        prefixes = inc.get('PrefixList', '').split()
    return etree.tostring(node, method='c14n', exclusive=exclusive, with_comments=comments,
                          inclusive_ns_prefixes=prefixes if exclusive else None)


def _by_id(root, ident):
    found = root.xpath('//*[@wsu:Id=$i or @Id=$i or @xml:id=$i]', namespaces=NS, i=ident)
    assert len(found) == 1, f'id {ident!r} names {len(found)} elements'
    return found[0]


def _digest_of_id_ref(root, ref_el):
    target = _by_id(root, ref_el.get('URI')[1:])
    ts = ref_el.findall('ds:Transforms/ds:Transform', NS)
    c14n = [t for t in ts if t.get('Algorithm') in C14N]
    octets = _c14n(target, c14n[-1])
    alg = ref_el.find('ds:DigestMethod', NS).get('Algorithm')
    return base64.b64encode(hashlib.new(DIGESTS[alg], octets).digest()).decode()


def set_text(text, qname, nth, value):
    """Replace the content of the nth <qname>...</qname>."""
    pat = re.compile(r'(<' + re.escape(qname) + r'(?:\s[^>]*)?>).*?(</' + re.escape(qname) +
                     r'>)|<' + re.escape(qname) + r'(\s[^>]*)?/>', re.S)
    matches = list(pat.finditer(text))
    m = matches[nth]
    if m.group(1) is None:   # <ds:DigestValue/>
        repl = f'<{qname}{m.group(3) or ""}>{value}</{qname}>'
    else:
        repl = m.group(1) + value + m.group(2)
    return text[:m.start()] + repl + text[m.end():]


def load_key(path):
    with open(path, 'rb') as f:
        return serialization.load_pem_private_key(f.read(), None)


def load_cert(path):
    with open(path, 'rb') as f:
        return x509.load_pem_x509_certificate(f.read())


def resign(text, key_path, digests=True):
    """Make the signature of text valid again for its (possibly edited)
    SignedInfo: the DigestValue of every "#id" Reference (its last c14n
    transform, its DigestMethod) when digests, then the SignatureValue
    (CanonicalizationMethod, SignatureMethod: RSA PKCS#1 v1.5, or
    eddsa-ed25519 / ecdsa-sha* as sign_value() says) with the key at
    key_path.  "cid:" digests are left as they are (the attachment is
    unchanged) unless set with set_cid_digest()."""
    root = _parse(text)
    if digests:
        refs = root.findall('.//ds:Signature/ds:SignedInfo/ds:Reference', NS)
        for i, ref in enumerate(refs):
            if ref.get('URI', '').startswith('#'):
                text = set_text(text, 'ds:DigestValue', i, _digest_of_id_ref(root, ref))
        root = _parse(text)
    si = root.find('.//ds:Signature/ds:SignedInfo', NS)
    octets = _c14n(si, si.find('ds:CanonicalizationMethod', NS))
    alg = si.find('ds:SignatureMethod', NS).get('Algorithm')
    sig = sign_value(load_key(key_path), alg, octets)
    return set_text(text, 'ds:SignatureValue', 0, base64.b64encode(sig).decode())


def sign_value(key, alg, octets):
    """The SignatureValue octets of SignatureMethod alg over octets:
    eddsa-ed25519 (RFC 9231 2.3.7, RFC 8032: deterministic), ecdsa-sha256/
    384/512 (XML-DSig 1.1 6.4.3: r || s, each as long as the curve's order),
    else RSA PKCS#1 v1.5 with SIG_HASH[alg]."""
    if alg == EDDSA_ED25519:
        assert isinstance(key, ed25519.Ed25519PrivateKey), (alg, key)
        return key.sign(octets)
    if alg in ECDSA_HASH:
        assert isinstance(key, ec.EllipticCurvePrivateKey), (alg, key)
        r, s = decode_dss_signature(key.sign(octets, ec.ECDSA(ECDSA_HASH[alg]())))
        n = (key.curve.key_size + 7) // 8
        return r.to_bytes(n, 'big') + s.to_bytes(n, 'big')
    return key.sign(octets, padding.PKCS1v15(), SIG_HASH[alg]())


def set_cid_digest(text, cid, data, digest=SHA256):
    """The DigestValue of the "cid:" Reference for an attachment whose
    content type is neither XML nor text (SwA 1.1 5.4.2: the octets as they
    are) carrying data."""
    refs = references(text)
    i = [attr(r, 'URI') for r in refs].index('cid:' + cid)
    value = base64.b64encode(hashlib.new(DIGESTS[digest], data).digest()).decode()
    return set_text(text, 'ds:DigestValue', i, value)


def rsa_key_value(key):
    """A ds:KeyValue carrying key's public half (XML-DSig 4.4.2.2)."""
    def b64(n):
        return base64.b64encode(n.to_bytes((n.bit_length() + 7) // 8, 'big')).decode()
    pub = key.public_key().public_numbers()
    return (f'<ds:KeyValue><ds:RSAKeyValue><ds:Modulus>{b64(pub.n)}</ds:Modulus>'
            f'<ds:Exponent>{b64(pub.e)}</ds:Exponent></ds:RSAKeyValue></ds:KeyValue>')


# ---- encryption -------------------------------------------------------------

OAEP_SHA256 = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)


def content_key(text, key_path):
    """The AES key of an `as4gw push --encrypt` message: its EncryptedKey
    (xenc11 rsa-oaep, mgf1sha256, sha256) opened with the recipient's key."""
    ek = element(text, 'xenc:EncryptedKey')
    wrapped = base64.b64decode(text_of(ek, 'xenc:CipherValue'))
    return load_key(key_path).decrypt(wrapped, OAEP_SHA256)


def gcm_open(key, data):
    """IV (12) || ciphertext || tag (16), XML Encryption 1.1 5.2.4."""
    return AESGCM(key).decrypt(data[:12], data[12:], None)


def gcm_seal(key, plain):
    iv = os.urandom(12)
    return iv + AESGCM(key).encrypt(iv, plain, None)


def cbc_seal(key, plain):
    """IV (16) || AES-CBC, XML Encryption 1.0 5.2 padding (last octet = count).
    The padding octets are random but never XML white space: a padding-oracle
    test that changes the count makes the receiver keep some of them as
    content, and white space after an XML payload's root element is invisible
    to the signature (the SwA transform canonicalizes XML attachments), so
    such a variant would rightly verify (a CI run on 2026-12-03 drew one)."""
    pad = 16 - len(plain) % 16
    iv = os.urandom(16)
    fill = bytes(b for b in os.urandom(64) if b not in b' \t\r\n')[:pad - 1]
    assert len(fill) == pad - 1
    enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return iv + enc.update(plain + fill + bytes([pad])) + enc.finalize()


def wrap_key(cert_path, key, scheme='oaep'):
    """key encrypted for the certificate: xenc11 rsa-oaep (mgf1sha256,
    sha256) or rsa-1_5."""
    pub = load_cert(cert_path).public_key()
    pad = OAEP_SHA256 if scheme == 'oaep' else padding.PKCS1v15()
    return base64.b64encode(pub.encrypt(key, pad)).decode()


def set_wrapped_key(text, b64):
    ek = element(text, 'xenc:EncryptedKey')
    return once(text, ek, set_text(ek, 'xenc:CipherValue', 0, b64))


# ---- certificates -----------------------------------------------------------

def new_rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def save_key(key, path):
    """key as unencrypted PKCS#8 PEM (what as4gw push --sign-key reads)."""
    with open(path, 'wb') as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))


def issue_cert(path, cn, key, issuer_cert=None, issuer_key=None, days=(-1, 730), ca=False):
    """A certificate for key (self-signed when no issuer), valid from now +
    days[0] to now + days[1] days, with the extensions gen-dev-pki.sh gives
    its leaf (or CA) certificates; written as PEM to path."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, 'as4gw attack test')])
    issuer_name = issuer_cert.subject if issuer_cert is not None else name
    signing_key = issuer_key if issuer_key is not None else key
    b = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now + datetime.timedelta(days=days[0]))
         .not_valid_after(now + datetime.timedelta(days=days[1]))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
         .add_extension(x509.KeyUsage(digital_signature=not ca, key_encipherment=not ca,
                                      content_commitment=False, data_encipherment=False,
                                      key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                                      encipher_only=False, decipher_only=False), critical=True)
         .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                        critical=False))
    if issuer_cert is not None:
        b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
            issuer_cert.public_key()), critical=False)
    # Ed25519 signs without a separate digest (RFC 8410 3); RSA/EC with SHA-256
    digest = None if isinstance(signing_key, ed25519.Ed25519PrivateKey) else hashes.SHA256()
    cert = b.sign(signing_key, digest)
    with open(path, 'wb') as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert


# ---- compression ------------------------------------------------------------

def gz(data):
    return gzip.compress(data, mtime=0)


def _gf2_times(mat, vec):
    s, i = 0, 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _gf2_square(mat):
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_combine(crc1, crc2, len2):
    """zlib's crc32_combine(): the CRC-32 of A||B from crc(A), crc(B), len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]
    even = _gf2_square(odd)
    odd = _gf2_square(even)
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def gzip_bomb(total, chunk=1 << 24, data=None):
    """A valid one-member gzip file (RFC 1952) of total bytes: data (default
    chunk zero bytes) repeated, built without compressing it all: after a
    full flush deflate starts afresh, so every further copy compresses to
    the same bytes, which are repeated.  Zeros give about total / 1000 bytes."""
    zeros = data if data is not None else bytes(chunk)
    chunk = len(zeros)
    assert total % chunk == 0 and total // chunk >= 3
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    assert again == c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    final = c.flush(zlib.Z_FINISH)[:-8]   # last (empty) block without the trailer
    n = total // chunk
    crc, length = None, 0          # CRC-32 of n chunks by doubling
    base, base_len = zlib.crc32(zeros), chunk
    k = n
    while k:
        if k & 1:
            crc = base if crc is None else crc32_combine(crc, base, base_len)
            length += base_len
        base, base_len = crc32_combine(base, base, base_len), base_len * 2
        k >>= 1
    return first + again * (n - 1) + final + struct.pack('<II', crc, length & 0xffffffff)


# ---- answers and listeners --------------------------------------------------

def normalise(body):
    """An answer with everything that legitimately differs between two
    answers to different requests blanked: MessageIds and Timestamps, Id and
    URI values, digests, signature values and the token."""
    t = body.decode('utf-8')
    for name in ('MessageId', 'Timestamp', 'Created', 'Expires', 'DigestValue',
                 'SignatureValue', 'BinarySecurityToken'):
        t = re.sub(r'(<(?:\w+:)?' + name + r'\b[^>]*>)[^<]*(</(?:\w+:)?' + name + '>)',
                   r'\1\2', t)
    return re.sub(r'\b((?:\w+:)?Id|URI)="[^"]*"', r'\1=""', t)


class Listener:
    """A TCP listener on 127.0.0.1 that counts the connections it gets (a
    gateway that dereferences an http: URI would connect here)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop = True
        self._thread.join()
        self.sock.close()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.port}/'
