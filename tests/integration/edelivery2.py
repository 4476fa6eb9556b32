"""An independent eDelivery AS4 2.0 sender and receiver for the tests.

Written from the specifications, not from the gateway's C code:
- ENTSOG AS4 profile 4.0 (eDelivery AS4 2.0 algorithms) 2.2.6.2.2-2.2.6.2.5:
  Ed25519 signing, X25519 + HKDF + kw-aes128 + AES-128-GCM, the sample
  Security header, the ECDH-ES AgreementMethod snippet;
- RFC 9231 (xmldsig-more 2021: eddsa-ed25519, x25519, hkdf, HKDFParams),
  RFC 8032 (Ed25519, S < L), RFC 7748 (X25519), RFC 5869 (HKDF),
  RFC 3394 (AES key wrap), RFC 4051/6931 (ecdsa-sha*, hmac-sha*);
- XML Signature 1.1 (ECDSA SignatureValue = raw r || s, 6.4.3; ECKeyValue
  4.5.2.3; DEREncodedKeyValue 4.5.4), XML Encryption 1.1 (AgreementMethod
  5.6, ECDH-ES 5.6.1, ConcatKDF 5.4.1 with hexBinary bit strings whose
  first octet counts the padding bits, aes-gcm 5.2.4 IV || C || T);
- WS-Security 1.1 SwA profile (Attachment-Content-Signature-Transform,
  Attachment-Content-Only, Attachment-Ciphertext-Transform), X.509 token
  profile (X509v3, X509PKIPathv1, SKI, IssuerSerial), AS4 compression.

build() makes a complete multipart AS4 message: compress, sign, then
encrypt (eDelivery order).  Every "where senders differ" form of issue 13 is
an option, and the tamper knobs make the negative cases.  open_message()
(edelivery2_open.py, re-exported here) is
the receiving side (signature check, key agreement, unwrap, AES-GCM, gunzip)
used to prove the builder against the xmlsec vectors and the ENTSOG
examples.  Needs python3-lxml and python3-cryptography (>= 38).
"""
import base64
import gzip
import hashlib
import os
import re
import uuid

from lxml import etree
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, x25519
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature, encode_dss_signature)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.concatkdf import ConcatKDFHash
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.keywrap import aes_key_wrap

import as4msg

NS = {
    'S12': 'http://www.w3.org/2003/05/soap-envelope',
    'eb': as4msg.NS['eb'],
    'wsse': as4msg.NS['wsse'],
    'wsse11': 'http://docs.oasis-open.org/wss/oasis-wss-wssecurity-secext-1.1.xsd',
    'wsu': as4msg.NS['wsu'],
    'ds': 'http://www.w3.org/2000/09/xmldsig#',
    'dsig11': 'http://www.w3.org/2009/xmldsig11#',
    'dsig-more': 'http://www.w3.org/2021/04/xmldsig-more#',
    'xenc': 'http://www.w3.org/2001/04/xmlenc#',
    'xenc11': 'http://www.w3.org/2009/xmlenc11#',
    'ec': 'http://www.w3.org/2001/10/xml-exc-c14n#',
    'ebbp': 'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
}
XMLNS = ' '.join(f'xmlns:{p}="{u}"' for p, u in NS.items()
                 if p in ('wsse', 'wsse11', 'ds', 'dsig11', 'dsig-more', 'xenc', 'xenc11'))

# ---- algorithm URIs ---------------------------------------------------------
MORE = 'http://www.w3.org/2001/04/xmldsig-more#'
MORE21 = 'http://www.w3.org/2021/04/xmldsig-more#'
XENC = NS['xenc']
XENC11 = NS['xenc11']
EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
INC_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315'
ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'
XPATH = 'http://www.w3.org/TR/1999/REC-xpath-19991116'
ED25519 = MORE21 + 'eddsa-ed25519'
ECDSA = {'sha256': MORE + 'ecdsa-sha256', 'sha384': MORE + 'ecdsa-sha384',
         'sha512': MORE + 'ecdsa-sha512'}
RSA_SHA256 = MORE + 'rsa-sha256'
DIGEST = {'sha256': XENC + 'sha256', 'sha384': MORE + 'sha384', 'sha512': XENC + 'sha512'}
DIGEST_NAME = {v: k for k, v in DIGEST.items()}
HMAC = {'sha256': MORE + 'hmac-sha256', 'sha384': MORE + 'hmac-sha384',
        'sha512': MORE + 'hmac-sha512'}
HMAC_NAME = {v: k for k, v in HMAC.items()}
X25519 = MORE21 + 'x25519'
ECDH_ES = XENC11 + 'ECDH-ES'
HKDF_URI = MORE21 + 'hkdf'
CONCATKDF = XENC11 + 'ConcatKDF'
KW = {128: XENC + 'kw-aes128', 192: XENC + 'kw-aes192', 256: XENC + 'kw-aes256'}
KW_BITS = {v: k for k, v in KW.items()}
AES128_GCM = XENC11 + 'aes128-gcm'
AES256_GCM = XENC11 + 'aes256-gcm'
GCM_BITS = {AES128_GCM: 128, AES256_GCM: 256}
RSA_OAEP = XENC11 + 'rsa-oaep'
MGF1_SHA256 = XENC11 + 'mgf1sha256'
SWA = 'http://docs.oasis-open.org/wss/oasis-wss-SwAProfile-1.1#'
SWA_SIG = SWA + 'Attachment-Content-Signature-Transform'
SWA_CONTENT_ONLY = SWA + 'Attachment-Content-Only'
SWA_CIPHER = SWA + 'Attachment-Ciphertext-Transform'
X509 = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#'
X509V3 = X509 + 'X509v3'
PKIPATH = X509 + 'X509PKIPathv1'
SKI_VT = X509 + 'X509SubjectKeyIdentifier'
B64_ET = ('http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0'
          '#Base64Binary')
EK_TOKEN = 'http://docs.oasis-open.org/wss/oasis-wss-soap-message-security-1.1#EncryptedKey'
CURVE_OID = {'secp256r1': '1.2.840.10045.3.1.7', 'secp384r1': '1.3.132.0.34',
             'secp521r1': '1.3.132.0.35', 'brainpoolP256r1': '1.3.36.3.3.2.8.1.1.7'}
OID_CURVE = {'urn:oid:' + v: k for k, v in CURVE_OID.items()}
CURVE_CLASS = {'secp256r1': ec.SECP256R1, 'secp384r1': ec.SECP384R1,
               'secp521r1': ec.SECP521R1, 'brainpoolP256r1': ec.BrainpoolP256R1}
# RFC 8032 5.1: the order L of the Ed25519 base point
ED25519_L = 2 ** 252 + 27742317777372353535851937790883648493
# RFC 7748 / cr.yp.to/ecdh.html: u-coordinates of small order on Curve25519
X25519_SMALL_ORDER = [bytes(32), (1).to_bytes(32, 'little'),
                      bytes.fromhex('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800')]
GZIP = 'application/gzip'


class Bad(Exception):
    """What the receiving side refuses (the gateway's EBMS:0101/0102 cases)."""


def b64(data):
    return base64.b64encode(data).decode()


def _hash(name):
    return {'sha256': hashes.SHA256, 'sha384': hashes.SHA384, 'sha512': hashes.SHA512}[name]()


def new_id(prefix):
    return f'{prefix}-{uuid.uuid4()}'


# ---- canonicalization and signature primitives ------------------------------

def parse(data):
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=False)
    return etree.fromstring(data if isinstance(data, bytes) else data.encode(), parser)


def c14n(node, exclusive=True, prefixes=None, comments=False):
    """Canonical XML 1.0 / Exclusive C14N 1.0 of node's subtree in its
    context.  lxml renders a subelement's default namespace wrongly
    (xmlns="" on its children), so a subelement is first re-rooted in a
    document of its own carrying every namespace in scope (what inclusive
    c14n renders on the apex; exclusive c14n ignores the unused ones)."""
    if isinstance(node, etree._ElementTree) or node.getparent() is None:
        tree = node if isinstance(node, etree._ElementTree) else node.getroottree()
    else:
        text = etree.tostring(node, with_tail=False).decode()
        head = re.match(r'<[^\s>/]+', text).group(0)
        tag_end = _start_tag_end(text)
        decls = ''
        for p, u in node.nsmap.items():
            name = 'xmlns' if p is None else 'xmlns:' + p
            if not re.search(r'\s' + re.escape(name) + r'=', text[:tag_end]):
                decls += f' {name}="{as4msg.esc(u)}"'
        tree = parse(head + decls + text[len(head):]).getroottree()
    return etree.tostring(tree, method='c14n', exclusive=exclusive, with_comments=comments,
                          inclusive_ns_prefixes=prefixes if exclusive else None)


def _start_tag_end(text):
    """Offset of the '>' that ends the first start tag (attribute values
    may hold '>')."""
    q = None
    for i, ch in enumerate(text):
        if q:
            if ch == q:
                q = None
        elif ch in '"\'':
            q = ch
        elif ch == '>':
            return i
    raise ValueError('no start tag')


def by_id(root, ident):
    found = root.xpath('//*[@wsu:Id=$i or @Id=$i or @xml:id=$i]', namespaces=NS, i=ident)
    if len(found) != 1:
        raise Bad(f'id {ident!r} names {len(found)} elements')
    return found[0]


def curve_name(key):
    return key.curve.name


def sign_octets(key, octets, alg, der=False, noncanonical=False):
    """The SignatureValue octets of octets under alg: Ed25519 pure (RFC 8032,
    with S + L when noncanonical), ECDSA raw r || s (XML-DSig 1.1 6.4.3; DER
    when der, which is wrong), RSA PKCS#1 v1.5."""
    if alg == ED25519:
        sig = key.sign(octets)
        if noncanonical:
            s = int.from_bytes(sig[32:], 'little') + ED25519_L
            sig = sig[:32] + s.to_bytes(32, 'little')
        return sig
    if alg in ECDSA.values():
        h = _hash({v: k for k, v in ECDSA.items()}[alg])
        sig = key.sign(octets, ec.ECDSA(h))
        if der:
            return sig
        n = (key.curve.key_size + 7) // 8
        r, s = decode_dss_signature(sig)
        return r.to_bytes(n, 'big') + s.to_bytes(n, 'big')
    if alg == RSA_SHA256:
        return key.sign(octets, padding.PKCS1v15(), hashes.SHA256())
    raise ValueError(alg)


def verify_octets(pub, octets, sig, alg):
    """Raise Bad unless sig is alg's signature of octets by pub (strict: an
    ECDSA value must be raw r || s of the curve's size)."""
    try:
        if alg == ED25519:
            if not isinstance(pub, ed25519.Ed25519PublicKey):
                raise Bad('eddsa-ed25519 with a key that is not Ed25519')
            if len(sig) != 64 or int.from_bytes(sig[32:], 'little') >= ED25519_L:
                raise Bad('Ed25519 signature not canonical (RFC 8032 5.1.7)')
            pub.verify(sig, octets)
        elif alg in ECDSA.values():
            if not isinstance(pub, ec.EllipticCurvePublicKey):
                raise Bad('ecdsa with a key that is not EC')
            n = (pub.curve.key_size + 7) // 8
            if len(sig) != 2 * n:
                raise Bad('ECDSA SignatureValue is not r || s')
            der = encode_dss_signature(int.from_bytes(sig[:n], 'big'),
                                       int.from_bytes(sig[n:], 'big'))
            h = _hash({v: k for k, v in ECDSA.items()}[alg])
            pub.verify(der, octets, ec.ECDSA(h))
        elif alg == RSA_SHA256:
            pub.verify(sig, octets, padding.PKCS1v15(), hashes.SHA256())
        else:
            raise Bad(f'signature method {alg}')
    except InvalidSignature:
        raise Bad('signature value does not verify') from None


def signature_uri(key, hash_name='sha256'):
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return ED25519
    if isinstance(key, ec.EllipticCurvePrivateKey):
        return ECDSA[hash_name]
    return RSA_SHA256


# ---- DER helpers ------------------------------------------------------------

def _der_len(n):
    if n < 0x80:
        return bytes([n])
    b = n.to_bytes((n.bit_length() + 7) // 8, 'big')
    return bytes([0x80 | len(b)]) + b


def pkipath(certs):
    """X509PKIPathv1 token: DER SEQUENCE OF Certificate, the issuer first and
    the signer's own certificate last (X.509 token profile 1.1 3.1)."""
    body = b''.join(c.public_bytes(serialization.Encoding.DER) for c in certs)
    return b'\x30' + _der_len(len(body)) + body


def pkipath_certs(der):
    """The certificates of an X509PKIPathv1 token, in order."""
    if der[0] != 0x30:
        raise Bad('PKIPath is not a SEQUENCE')
    i, n = _der_hdr(der, 0)
    end, out = i + n, []
    while i < end:
        j, m = _der_hdr(der, i)
        out.append(x509.load_der_x509_certificate(der[i:j + m]))
        i = j + m
    return out


def _der_hdr(der, i):
    """(content offset, content length) of the TLV at i."""
    ln = der[i + 1]
    if ln < 0x80:
        return i + 2, ln
    k = ln & 0x7f
    return i + 2 + k, int.from_bytes(der[i + 2:i + 2 + k], 'big')


# ---- key derivation (both sides) --------------------------------------------

def bitstring(hexstr):
    """The octets of an XML Encryption 1.1 5.4.1 ConcatKDFParams attribute:
    hexBinary whose first octet is the count of padding bits (0 for whole
    octets), which is not part of the value."""
    raw = bytes.fromhex(hexstr or '')
    if not raw:
        return b''
    if raw[0] != 0:
        raise Bad('ConcatKDF bit string with padding bits')
    return raw[1:]


def hkdf(secret, prf='sha256', salt=None, info=None, length=16):
    """RFC 5869; salt None: HashLen zero octets; info None: empty."""
    return HKDF(algorithm=_hash(prf), length=length, salt=salt, info=info).derive(secret)


def concatkdf(secret, digest='sha256', algorithm_id='', party_u='', party_v='', length=16):
    """NIST SP 800-56A 5.8.1 single-step KDF as XML Encryption 1.1 5.4.1
    uses it: OtherInfo = AlgorithmID || PartyUInfo || PartyVInfo."""
    other = bitstring(algorithm_id) + bitstring(party_u) + bitstring(party_v)
    return ConcatKDFHash(algorithm=_hash(digest), length=length, otherinfo=other).derive(secret)


def agree(private_key, peer_public):
    """The raw shared secret: X25519 (RFC 7748; all zero refused) or ECDH
    x-coordinate (SP 800-56A 5.7.1.2; the point was checked on loading)."""
    if isinstance(private_key, x25519.X25519PrivateKey):
        try:
            z = private_key.exchange(peer_public)
        except ValueError as e:
            raise Bad(f'X25519: {e}') from None
        if z == bytes(32):
            raise Bad('X25519 shared secret all zero')
        return z
    if peer_public.curve.name != private_key.curve.name:
        raise Bad('ECDH keys on different curves')
    return private_key.exchange(ec.ECDH(), peer_public)


# ---- sender: WS-Security fragments ------------------------------------------

def str_ski(cert):
    ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
    return ('<wsse:SecurityTokenReference><wsse:KeyIdentifier '
            f'EncodingType="{B64_ET}" ValueType="{SKI_VT}">{b64(ski)}</wsse:KeyIdentifier>'
            '</wsse:SecurityTokenReference>')


def str_issuer_serial(cert):
    return ('<wsse:SecurityTokenReference><ds:X509Data><ds:X509IssuerSerial>'
            f'<ds:X509IssuerName>{as4msg.esc(cert.issuer.rfc4514_string())}</ds:X509IssuerName>'
            f'<ds:X509SerialNumber>{cert.serial_number}</ds:X509SerialNumber>'
            '</ds:X509IssuerSerial></ds:X509Data></wsse:SecurityTokenReference>')


def str_bst(bst_id, value_type=X509V3):
    return (f'<wsse:SecurityTokenReference><wsse:Reference URI="#{bst_id}" '
            f'ValueType="{value_type}"/></wsse:SecurityTokenReference>')


def bst(bst_id, certs, value_type=X509V3):
    """A BinarySecurityToken: the first certificate (X509v3) or the path
    (X509PKIPathv1, certs given issuer first)."""
    der = (certs[0].public_bytes(serialization.Encoding.DER) if value_type == X509V3
           else pkipath(certs))
    return (f'<wsse:BinarySecurityToken EncodingType="{B64_ET}" ValueType="{value_type}" '
            f'wsu:Id="{bst_id}">{b64(der)}</wsse:BinarySecurityToken>')


def reference(uri, digest_b64, transform):
    return (f'<ds:Reference URI="{uri}"><ds:Transforms><ds:Transform Algorithm="{transform}"/>'
            f'</ds:Transforms><ds:DigestMethod Algorithm="{DIGEST["sha256"]}"/>'
            f'<ds:DigestValue>{digest_b64}</ds:DigestValue></ds:Reference>')


class Recipient:
    """Who a message is encrypted for: the key-agreement certificate whose
    public key is used (cert), the certificate named in RecipientKeyInfo
    (ref_cert, default cert) and, for rsa-oaep, an RSA certificate."""

    def __init__(self, cert, ref_cert=None):
        self.cert = cert
        self.ref_cert = ref_cert if ref_cert is not None else cert


def originator_key_info(eph_pub, o):
    """xenc:OriginatorKeyInfo content: DEREncodedKeyValue (X25519) or
    ECKeyValue (ECDH-ES), in ds:KeyValue or bare (o['eckv_wrap'])."""
    if isinstance(eph_pub, x25519.X25519PublicKey) or o.get('x25519_raw') is not None:
        der = (o['x25519_raw'] if o.get('x25519_raw') is not None else
               eph_pub.public_bytes(serialization.Encoding.DER,
                                    serialization.PublicFormat.SubjectPublicKeyInfo))
        return f'<dsig11:DEREncodedKeyValue>{b64(der)}</dsig11:DEREncodedKeyValue>'
    point = eph_pub.public_bytes(serialization.Encoding.X962,
                                 serialization.PublicFormat.UncompressedPoint)
    if o.get('off_curve'):
        n = (len(point) - 1) // 2
        y = (int.from_bytes(point[1 + n:], 'big') + 1) % (1 << (8 * n))
        point = point[:1 + n] + y.to_bytes(n, 'big')
    kv = (f'<dsig11:ECKeyValue><dsig11:NamedCurve URI="urn:oid:{CURVE_OID[eph_pub.curve.name]}"/>'
          f'<dsig11:PublicKey>{b64(point)}</dsig11:PublicKey></dsig11:ECKeyValue>')
    return kv if o.get('eckv_wrap') == 'bare' else f'<ds:KeyValue>{kv}</ds:KeyValue>'


def recipient_key_info(rcpt, o, extra_tokens):
    """xenc:RecipientKeyInfo content: an STR by SKI (default), IssuerSerial
    or a BST reference, bare (default) or in ds:KeyValue; or (rki_ref
    'x509data-cert' / 'x509data-ski') a ds:X509Data without an STR."""
    how = o.get('rki_ref', 'ski')
    if how == 'ski':
        s = str_ski(rcpt.ref_cert)
    elif how == 'issuerserial':
        s = str_issuer_serial(rcpt.ref_cert)
    elif how == 'x509data-cert':   # XML-DSig style, no STR (xmlsec, Santuario)
        der = rcpt.ref_cert.public_bytes(serialization.Encoding.DER)
        s = f'<ds:X509Data><ds:X509Certificate>{b64(der)}</ds:X509Certificate></ds:X509Data>'
    elif how == 'x509data-ski':
        ski = rcpt.ref_cert.extensions.get_extension_for_class(
            x509.SubjectKeyIdentifier).value.digest
        s = f'<ds:X509Data><ds:X509SKI>{b64(ski)}</ds:X509SKI></ds:X509Data>'
    else:
        tid = new_id('X509-RCPT')
        extra_tokens.append(bst(tid, [rcpt.ref_cert]))
        s = str_bst(tid)
    return f'<ds:KeyValue>{s}</ds:KeyValue>' if o.get('rki_wrap') == 'keyvalue' else s


def kdm_hkdf(o, kw_bits):
    """(KeyDerivationMethod XML, derive(secret)) for HKDF with o's params;
    xml_salt / xml_info / xml_key_length tamper what is written."""
    prf = o.get('prf', 'sha256')
    salt = o.get('salt', os.urandom(32))
    info = o.get('info', b'as4gw eDelivery AS4 2.0 test')
    length = o.get('key_length', kw_bits // 8)
    xs, xi = o.get('xml_salt', salt), o.get('xml_info', info)
    xl = o.get('xml_key_length', length)
    pns = 'xenc11' if o.get('prf_ns') == 'xenc11' else 'dsig-more'
    xml = (f'<xenc11:KeyDerivationMethod Algorithm="{HKDF_URI}"><dsig-more:HKDFParams>'
           f'<{pns}:PRF Algorithm="{HMAC[prf]}"/>'
           + ('' if xs is None else f'<dsig-more:Salt>{b64(xs)}</dsig-more:Salt>')
           + ('' if xi is None else
              '<dsig-more:Info/>' if xi == b'' else f'<dsig-more:Info>{b64(xi)}</dsig-more:Info>')
           + ('' if xl is None else f'<dsig-more:KeyLength>{xl}</dsig-more:KeyLength>')
           + '</dsig-more:HKDFParams></xenc11:KeyDerivationMethod>')
    return xml, lambda z: hkdf(z, prf, salt, info, length)


def kdm_concat(o, kw_bits):
    digest = o.get('concat_digest', 'sha256')
    aid = o.get('algorithm_id', '00' + KW[kw_bits].encode().hex())
    pu = o.get('party_u', '00' + b'as4gw-test-sender'.hex())
    pv = o.get('party_v', '00' + b'as4gw-test-recipient'.hex())
    length = o.get('key_length', kw_bits // 8)
    xml = (f'<xenc11:KeyDerivationMethod Algorithm="{CONCATKDF}">'
           f'<xenc11:ConcatKDFParams AlgorithmID="{o.get("xml_algorithm_id", aid)}" '
           f'PartyUInfo="{pu}" PartyVInfo="{pv}">'
           f'<ds:DigestMethod Algorithm="{DIGEST[digest]}"/>'
           '</xenc11:ConcatKDFParams></xenc11:KeyDerivationMethod>')
    return xml, lambda z: concatkdf(z, digest, aid, pu, pv, length)


def encrypted_key(cek, rcpt, o, data_ids, extra_tokens):
    """(EncryptedKey XML, its Id).  o['ka']: x25519 (default), ecdh-es or
    rsa-oaep (the 1.x key transport, for the downgrade test)."""
    ek_id = new_id('EK')
    id_attr = 'Id' if o.get('ek_id_attr') == 'Id' else 'wsu:Id'
    ka = o.get('ka', 'x25519')
    kw_bits = o.get('kw', 128)
    if ka == 'rsa-oaep':
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(),
                            label=None)
        wrapped = rcpt.cert.public_key().encrypt(cek, oaep)
        method = (f'<xenc:EncryptionMethod Algorithm="{RSA_OAEP}">'
                  f'<ds:DigestMethod Algorithm="{DIGEST["sha256"]}"/>'
                  f'<xenc11:MGF Algorithm="{MGF1_SHA256}"/></xenc:EncryptionMethod>')
        key_info = f'<ds:KeyInfo>{str_ski(rcpt.ref_cert)}</ds:KeyInfo>'
    else:
        peer = rcpt.cert.public_key()
        if ka == 'x25519':
            eph = x25519.X25519PrivateKey.generate()
        else:
            eph = ec.generate_private_key(type(peer.curve)())
        if o.get('small_order'):
            z = bytes(32)   # what X25519 gives with a small-order point
            o = dict(o, x25519_raw=_x25519_spki(o['small_order']))
        else:
            z = agree(eph, peer)
        kdm, derive = (kdm_concat if o.get('kdf') == 'concatkdf' else kdm_hkdf)(o, kw_bits)
        kek = derive(z)
        wrapped = aes_key_wrap(kek, cek)
        alg = X25519 if ka == 'x25519' else ECDH_ES
        method = f'<xenc:EncryptionMethod Algorithm="{KW[kw_bits]}"/>'
        key_info = (f'<ds:KeyInfo><xenc:AgreementMethod Algorithm="{alg}">{kdm}'
                    f'<xenc:OriginatorKeyInfo>{originator_key_info(eph.public_key(), o)}'
                    '</xenc:OriginatorKeyInfo><xenc:RecipientKeyInfo>'
                    f'{recipient_key_info(rcpt, o, extra_tokens)}</xenc:RecipientKeyInfo>'
                    '</xenc:AgreementMethod></ds:KeyInfo>')
    refs = ''.join(f'<xenc:DataReference URI="#{i}"/>' for i in data_ids)
    return (f'<xenc:EncryptedKey {id_attr}="{ek_id}">{method}{key_info}<xenc:CipherData>'
            f'<xenc:CipherValue>{b64(wrapped)}</xenc:CipherValue></xenc:CipherData>'
            f'<xenc:ReferenceList>{refs}</xenc:ReferenceList></xenc:EncryptedKey>'), ek_id


def _x25519_spki(u):
    """SubjectPublicKeyInfo DER of the X25519 u-coordinate u (RFC 8410)."""
    if u is True:
        u = X25519_SMALL_ORDER[0]
    return bytes.fromhex('302a300506032b656e032100') + u


def encrypted_data(ed_id, ek_id, cid, mime):
    return (f'<xenc:EncryptedData Id="{ed_id}" MimeType="{mime}" Type="{SWA_CONTENT_ONLY}">'
            f'<xenc:EncryptionMethod Algorithm="{AES128_GCM}"/>'
            f'<ds:KeyInfo><wsse:SecurityTokenReference wsse11:TokenType="{EK_TOKEN}">'
            f'<wsse:Reference URI="#{ek_id}"/></wsse:SecurityTokenReference></ds:KeyInfo>'
            f'<xenc:CipherData><xenc:CipherReference URI="cid:{cid}"><xenc:Transforms>'
            f'<ds:Transform Algorithm="{SWA_CIPHER}"/></xenc:Transforms></xenc:CipherReference>'
            '</xenc:CipherData></xenc:EncryptedData>')


# ---- sender: the whole message ----------------------------------------------

class Built:
    """A built message: what to POST and what the tests check against."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def http(self):
        return self.content_type, self.body


def _signed_info(refs, sig_alg, prefixes):
    inc = (f'<ec:InclusiveNamespaces xmlns:ec="{EXC_C14N}" PrefixList="{prefixes}"/>'
           if prefixes else '')
    return (f'<ds:SignedInfo><ds:CanonicalizationMethod Algorithm="{EXC_C14N}">{inc}'
            f'</ds:CanonicalizationMethod><ds:SignatureMethod Algorithm="{sig_alg}"/>'
            + ''.join(refs) + '</ds:SignedInfo>')


def build(message_id, payloads, signer, recipient=None, ca_cert=None, **o):
    """A complete AS4 message (content_type, body in .http()) with payloads
    (list of bytes, or (bytes, MIME type) pairs; the PartInfo MimeType
    property is application/xml in either case, as as4msg.envelope() writes
    it), compressed,
    signed by signer (an edelivery2_pki.Pair or anything with .key/.cert)
    and, when recipient (a Recipient) is given and there are payloads,
    encrypted for it.  Options (o):
      env: dict of as4msg.envelope() keywords (parties, service, action ...)
      compress (True), sig_hash ('sha256', ECDSA), token ('X509v3' or
      'X509PKIPathv1' with ca_cert first in the path), si_prefixes ('S12'),
      ka ('x25519', 'ecdh-es', 'rsa-oaep'), kdf ('hkdf', 'concatkdf'),
      kw (128, 256), prf, salt, info (None: absent, b'': empty),
      key_length, prf_ns ('xenc11'), ek_id_attr ('Id'), rki_wrap
      ('keyvalue'), rki_ref ('ski', 'issuerserial', 'bst', 'x509data-cert',
      'x509data-ski'), eckv_wrap
      ('bare'), algorithm_id / party_u / party_v (ConcatKDF hex);
    tamper knobs: xml_salt, xml_info, xml_key_length, xml_algorithm_id
      (written instead of what was used), small_order (True or a u value),
      off_curve, ecdsa_der, ed25519_noncanonical, sig_alg (override),
      skip_refs (URI prefixes left out of SignedInfo: '#msg-1', '#body-1',
      'cid:'), sig_truncate (last SignatureValue octet dropped)."""
    items = [(p, 'application/xml') if isinstance(p, bytes) else p for p in payloads]
    cids = [f'part-{i + 1}-{uuid.uuid4().hex[:8]}@as4gw-e2' for i in range(len(items))]
    compress = o.get('compress', True)
    wire = [gzip.compress(d, mtime=0) if compress else d for d, _ in items]
    props = (('CompressionType', GZIP),) if compress else ()
    env = as4msg.envelope(message_id, cids=tuple(cids), extra_header='@@SECURITY@@',
                          part_props=props, **o.get('env', {}))
    root = parse(env.replace('@@SECURITY@@', ''))
    refs = [reference('#' + i, b64(hashlib.sha256(c14n(by_id(root, i))).digest()), EXC_C14N)
            for i in ('body-1', 'msg-1')]
    refs += [reference('cid:' + c, b64(hashlib.sha256(w).digest()), SWA_SIG)
             for c, w in zip(cids, wire)]
    refs = [r for r in refs if not any(f'URI="{u}' in r for u in o.get('skip_refs', ()))]
    sig_alg = o.get('sig_alg') or signature_uri(signer.key, o.get('sig_hash', 'sha256'))
    tokens, bst_id = [], new_id('X509')
    if o.get('token') == 'X509PKIPathv1':
        tokens.append(bst(bst_id, ([ca_cert] if ca_cert else []) + [signer.cert], PKIPATH))
        key_ref = str_bst(bst_id, PKIPATH)
    else:
        tokens.append(bst(bst_id, [signer.cert]))
        key_ref = str_bst(bst_id)
    signature = (f'<ds:Signature Id="{new_id("SIG")}">'
                 + _signed_info(refs, sig_alg, o.get('si_prefixes', 'S12'))
                 + '<ds:SignatureValue>@@SIGVAL@@</ds:SignatureValue>'
                 f'<ds:KeyInfo>{key_ref}</ds:KeyInfo></ds:Signature>')
    parts, enc_head, cek = wire, '', None
    if recipient is not None and items:
        cek = os.urandom(16)
        ed_ids = [new_id('ED') for _ in cids]
        extra = []
        ek, ek_id = encrypted_key(cek, recipient, o, ed_ids, extra)
        enc_head = ek + ''.join(encrypted_data(e, ek_id, c, GZIP if compress else m)
                                for e, c, (_, m) in zip(ed_ids, cids, items)) + ''.join(extra)
        parts = [_gcm_seal(cek, w) for w in wire]
    security = (f'<wsse:Security {XMLNS} S12:mustUnderstand="true">{enc_head}'
                + ''.join(tokens) + signature + '</wsse:Security>')
    text = env.replace('@@SECURITY@@', security)
    si = parse(text.replace('@@SIGVAL@@', '')).find('.//ds:SignedInfo', NS)
    octets = c14n(si, prefixes=o.get('si_prefixes', 'S12').split() or None)
    sig = sign_octets(signer.key, octets, sig_alg, der=o.get('ecdsa_der', False),
                      noncanonical=o.get('ed25519_noncanonical', False))
    if o.get('sig_truncate'):
        sig = sig[:-1]
    text = text.replace('@@SIGVAL@@', b64(sig))
    mtype = 'application/octet-stream' if cek else (GZIP if compress else None)
    ct, body = as4msg.multipart(text, [(c, mtype or m, p)
                                       for c, p, (_, m) in zip(cids, parts, items)])
    return Built(content_type=ct, body=body, message_id=message_id, envelope=text,
                 cids=cids, payloads=[d for d, _ in items], cek=cek,
                 references=[(re.search(r'URI="([^"]*)"', r).group(1),
                              re.search(r'<ds:DigestValue>([^<]*)<', r).group(1))
                             for r in refs])


def _gcm_seal(key, plain):
    iv = os.urandom(12)
    return iv + AESGCM(key).encrypt(iv, plain, None)


def gcm_open(key, data):
    """XML Encryption 1.1 5.2.4: IV (12) || ciphertext || tag (16)."""
    try:
        return AESGCM(key).decrypt(data[:12], data[12:], None)
    except Exception:
        raise Bad('AES-GCM authentication failed') from None


# The receiving side lives in edelivery2_open.py (file size); its names are
# this module's too.
from edelivery2_open import (  # noqa: E402,F401
    Opened, agreement_params, decrypt_element_vector, derive_kek, kdf_params, open_message,
    originator_public, recipient_key, signer_certificate, split_mime, unwrap_encrypted_key,
    verify_signature)
