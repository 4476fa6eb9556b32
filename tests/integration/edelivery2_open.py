"""The receiving side of edelivery2 (re-exported there): what an
eDelivery AS4 2.0 MSH does with a message, written from the same
specifications as the sender (XML Encryption 1.1 5.4.1 / 5.6, RFC 9231,
RFC 7748, SP 800-56A 5.6.2.3, XML Signature 1.1, WS-Security SwA), strict
where they require refusing: all-zero X25519 secrets, points off the curve,
a KeyLength that is not the wrap key's length, non-canonical Ed25519 S,
ECDSA values that are not r || s.  Proven against the xmlsec vectors and
the ENTSOG examples (test_edelivery2_builder.py) before it judges anything.
"""
import base64
import gzip
import hashlib
import re

from lxml import etree
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, x25519
from cryptography.hazmat.primitives.keywrap import aes_key_unwrap

from edelivery2 import (  # noqa: F401  (the vocabulary both sides share)
    Bad, CONCATKDF, CURVE_CLASS, DIGEST_NAME, ECDH_ES, EXC_C14N, GCM_BITS, GZIP,
    HKDF_URI, HMAC_NAME, KW_BITS, NS, OID_CURVE, PKIPATH, RSA_OAEP, SKI_VT, SWA_SIG, X25519,
    agree, by_id, c14n, concatkdf, gcm_open, hkdf, parse, pkipath_certs, verify_octets)

# ---- receiver: key agreement ------------------------------------------------

def _text(el):
    return ''.join(el.itertext()).strip() if el is not None else None


def _b64d(el):
    t = _text(el)
    return None if t is None else base64.b64decode(''.join(t.split()))


def _one(parent, path):
    found = parent.findall(path, NS)
    if len(found) > 1:
        raise Bad(f'{path} more than once')
    return found[0] if found else None


def originator_public(oki):
    """The ephemeral public key in xenc:OriginatorKeyInfo: DEREncodedKeyValue
    (SPKI) or ECKeyValue (bare or in ds:KeyValue); a point not on the
    curve is refused (SP 800-56A 5.6.2.3)."""
    der = _one(oki, 'dsig11:DEREncodedKeyValue')
    if der is not None:
        pub = serialization.load_der_public_key(_b64d(der))
        if isinstance(pub, x25519.X25519PublicKey):
            return pub
        if isinstance(pub, ec.EllipticCurvePublicKey):
            return pub
        raise Bad('DEREncodedKeyValue is not an X25519 or EC key')
    eckv = _one(oki, 'dsig11:ECKeyValue')
    if eckv is None:
        kv = _one(oki, 'ds:KeyValue')
        eckv = _one(kv, 'dsig11:ECKeyValue') if kv is not None else None
    if eckv is None:
        raise Bad('no originator key')
    curve = OID_CURVE.get(eckv.find('dsig11:NamedCurve', NS).get('URI'))
    if curve is None:
        raise Bad('unknown NamedCurve')
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(
            CURVE_CLASS[curve](), _b64d(eckv.find('dsig11:PublicKey', NS)))
    except ValueError as e:
        raise Bad(f'EC point: {e}') from None


def _str_names(strel, cert, root):
    """Does the wsse:SecurityTokenReference strel name cert?"""
    ki = strel.find('wsse:KeyIdentifier', NS)
    if ki is not None and ki.get('ValueType') == SKI_VT:
        ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        return _b64d(ki) == ski
    xc = strel.find('ds:X509Data/ds:X509Certificate', NS)
    if xc is not None:
        return x509.load_der_x509_certificate(_b64d(xc)) == cert
    xs = strel.find('ds:X509Data/ds:X509SKI', NS)
    if xs is not None:
        ski = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest
        return _b64d(xs) == ski
    iser = strel.find('ds:X509Data/ds:X509IssuerSerial', NS)
    if iser is not None:
        return (int(_text(iser.find('ds:X509SerialNumber', NS))) == cert.serial_number and
                _text(iser.find('ds:X509IssuerName', NS)) == cert.issuer.rfc4514_string())
    ref = strel.find('wsse:Reference', NS)
    if ref is not None and root is not None:
        tok = by_id(root, ref.get('URI')[1:])
        return x509.load_der_x509_certificate(_b64d(tok)) == cert
    return False


def recipient_key(rki, keys, root=None):
    """The private key of keys ((cert, key) pairs) that xenc:RecipientKeyInfo
    names (its STR bare or in ds:KeyValue, or a bare ds:X509Data with the
    certificate, its SKI or IssuerSerial); a KeyName or an absent
    RecipientKeyInfo take the only key given."""
    strel = None
    if rki is not None:
        strel = _one(rki, 'wsse:SecurityTokenReference')
        kv = _one(rki, 'ds:KeyValue')
        if strel is None and kv is not None:
            strel = _one(kv, 'wsse:SecurityTokenReference')
        if strel is None and _one(rki, 'ds:X509Data') is not None:
            strel = rki     # XML-DSig style: ds:X509Data without an STR
    if strel is None:
        if len(keys) == 1:
            return keys[0][1]
        raise Bad('no recipient key reference')
    for cert, key in keys:
        if cert is not None and _str_names(strel, cert, root):
            return key
    raise Bad('RecipientKeyInfo names none of our keys')


def kdf_params(kdm):
    """The parameters of an xenc11:KeyDerivationMethod as a dict."""
    alg = kdm.get('Algorithm')
    if alg == HKDF_URI:
        p = kdm.find('dsig-more:HKDFParams', NS)
        prf = _one(p, 'dsig-more:PRF')
        if prf is None:
            prf = _one(p, 'xenc11:PRF')
        kl = _one(p, 'dsig-more:KeyLength')
        info = _one(p, 'dsig-more:Info')
        return dict(kdf='hkdf', prf=HMAC_NAME[prf.get('Algorithm')],
                    salt=_b64d(_one(p, 'dsig-more:Salt')),
                    info=None if info is None else _b64d(info) or b'',
                    key_length=None if kl is None else int(_text(kl)))
    if alg == CONCATKDF:
        p = kdm.find('xenc11:ConcatKDFParams', NS)
        return dict(kdf='concatkdf',
                    digest=DIGEST_NAME[p.find('ds:DigestMethod', NS).get('Algorithm')],
                    algorithm_id=p.get('AlgorithmID', ''), party_u=p.get('PartyUInfo', ''),
                    party_v=p.get('PartyVInfo', ''))
    raise Bad(f'key derivation {alg}')


def agreement_params(am):
    """Everything an xenc:AgreementMethod says, parsed (for the ENTSOG
    examples): algorithm, KDF parameters, originator key, recipient STR."""
    out = dict(algorithm=am.get('Algorithm'))
    out.update(kdf_params(am.find('xenc11:KeyDerivationMethod', NS)))
    oki = _one(am, 'xenc:OriginatorKeyInfo')
    out['originator'] = originator_public(oki) if oki is not None else None
    rki = _one(am, 'xenc:RecipientKeyInfo')
    strel = rki.find('.//wsse:SecurityTokenReference', NS) if rki is not None else None
    out['recipient_str'] = strel
    out['recipient_wrapped'] = rki is not None and _one(rki, 'ds:KeyValue') is not None
    return out


def derive_kek(am, keys, kw_bits, originator=None, root=None):
    """The key-encryption key from an xenc:AgreementMethod (XML Encryption
    1.1 5.6): agree with the recipient key, derive with the KDF.  A
    KeyLength that is not the wrap key's length is refused (not read as
    bits)."""
    alg = am.get('Algorithm')
    if alg not in (X25519, ECDH_ES):
        raise Bad(f'agreement {alg}')
    p = kdf_params(am.find('xenc11:KeyDerivationMethod', NS))
    oki = _one(am, 'xenc:OriginatorKeyInfo')
    peer = originator if originator is not None else originator_public(oki)
    priv = recipient_key(_one(am, 'xenc:RecipientKeyInfo'), keys, root)
    if (alg == X25519) != isinstance(priv, x25519.X25519PrivateKey) or \
            (alg == X25519) != isinstance(peer, x25519.X25519PublicKey):
        raise Bad('agreement algorithm does not match the keys')
    z = agree(priv, peer)
    want = kw_bits // 8
    if p['kdf'] == 'hkdf':
        if p['key_length'] is not None and p['key_length'] != want:
            raise Bad(f'KeyLength {p["key_length"]} for a {kw_bits}-bit key wrap')
        return hkdf(z, p['prf'], p['salt'], p['info'], want)
    return concatkdf(z, p['digest'], p['algorithm_id'], p['party_u'], p['party_v'], want)


def unwrap_encrypted_key(ek, keys, originator=None, root=None):
    """The content key in an xenc:EncryptedKey: key agreement + kw-aes*, or
    rsa-oaep (keys hold the RSA pair)."""
    alg = ek.find('xenc:EncryptionMethod', NS).get('Algorithm')
    wrapped = _b64d(ek.find('xenc:CipherData/xenc:CipherValue', NS))
    am = ek.find('ds:KeyInfo/xenc:AgreementMethod', NS)
    if alg in KW_BITS:
        if am is None:
            raise Bad('key wrap without AgreementMethod')
        kek = derive_kek(am, keys, KW_BITS[alg], originator, root)
        try:
            return aes_key_unwrap(kek, wrapped)
        except Exception:
            raise Bad('key unwrap failed') from None
    if alg == RSA_OAEP and am is None:
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(),
                            label=None)
        key = recipient_key(ek.find('ds:KeyInfo', NS), keys, root)
        return key.decrypt(wrapped, oaep)
    raise Bad(f'EncryptedKey method {alg}')


def decrypt_element_vector(xml, keys, originator=None):
    """An xmlsec vector: EncryptedData (CipherValue) whose KeyInfo holds an
    EncryptedKey with an AgreementMethod; returns the plaintext."""
    root = parse(xml)
    ek = root.find('ds:KeyInfo/xenc:EncryptedKey', NS)
    cek = unwrap_encrypted_key(ek, keys, originator, root)
    alg = root.find('xenc:EncryptionMethod', NS).get('Algorithm')
    if alg not in GCM_BITS:
        raise Bad('not aes-gcm')
    # The ConcatKDF vectors wrap a 32-octet key for aes128-gcm; xmlsec
    # uses its first 16 octets (the receiver in the gateway must be strict
    # on messages; this is only to reproduce the vectors).
    return gcm_open(cek[:GCM_BITS[alg] // 8],
                    _b64d(root.find('xenc:CipherData/xenc:CipherValue', NS)))


# ---- receiver: signature ----------------------------------------------------

def _remove_keep_tail(el):
    parent, prev = el.getparent(), el.getprevious()
    if el.tail:
        if prev is not None:
            prev.tail = (prev.tail or '') + el.tail
        else:
            parent.text = (parent.text or '') + el.tail
    parent.remove(el)


def _ref_octets(root, ref, sig_el, attachments):
    """The octets a ds:Reference digests: '#id' (exclusive or inclusive
    c14n by its last c14n transform), '' (the whole document, enveloped
    signature removed, inclusive c14n), 'cid:' (the part's content as is:
    SwA 5.4.2 for non-XML, non-text types)."""
    uri = ref.get('URI')
    algs = [t.get('Algorithm') for t in ref.findall('ds:Transforms/ds:Transform', NS)]
    if uri.startswith('cid:'):
        if algs != [SWA_SIG]:
            raise Bad(f'attachment transforms {algs}')
        return attachments[uri[4:]]
    excl = EXC_C14N in algs
    if uri == '':
        doc = parse(etree.tostring(root))
        sigs = doc.findall('.//ds:Signature', NS)
        for s in sigs:
            _remove_keep_tail(s)
        return c14n(doc.getroottree(), exclusive=False)
    node = by_id(root, uri[1:])
    prefixes = None
    for t in ref.findall('ds:Transforms/ds:Transform', NS):
        inc = t.find('ec:InclusiveNamespaces', NS)
        if inc is not None:
            prefixes = inc.get('PrefixList', '').split()
    return c14n(node, exclusive=excl, prefixes=prefixes)


def signer_certificate(sig_el, root, certs=()):
    """The certificate the ds:Signature's KeyInfo names: a BST reference
    (X509v3, or the last certificate of an X509PKIPathv1), else by SKI or
    IssuerSerial among certs, else the only one of certs."""
    strel = sig_el.find('ds:KeyInfo/wsse:SecurityTokenReference', NS)
    if strel is not None and strel.find('wsse:Reference', NS) is not None:
        tok = by_id(root, strel.find('wsse:Reference', NS).get('URI')[1:])
        der = _b64d(tok)
        if tok.get('ValueType') == PKIPATH:
            return pkipath_certs(der)[-1]
        return x509.load_der_x509_certificate(der)
    if strel is not None:
        for c in certs:
            if _str_names(strel, c, root):
                return c
    if len(certs) == 1:
        return certs[0]
    raise Bad('signer certificate not found')


def verify_signature(root, attachments=None, certs=(), sig_el=None, public_key=None):
    """Check the (first) ds:Signature under root: every Reference digest,
    then the SignatureValue over the canonical SignedInfo.  Returns
    (certificate, [(URI, DigestValue)]); public_key: check with this key
    instead (the certificate is then None)."""
    if sig_el is None:
        sig_el = root if root.tag == f'{{{NS["ds"]}}}Signature' else \
            root.find('.//ds:Signature', NS)
    if sig_el is None:
        raise Bad('not signed')
    si = sig_el.find('ds:SignedInfo', NS)
    refs = []
    for ref in si.findall('ds:Reference', NS):
        dm = DIGEST_NAME[ref.find('ds:DigestMethod', NS).get('Algorithm')]
        octets = _ref_octets(root, ref, sig_el, attachments or {})
        got = hashlib.new(dm, octets).digest()
        if got != _b64d(ref.find('ds:DigestValue', NS)):
            raise Bad(f'digest of {ref.get("URI")!r} does not match')
        refs.append((ref.get('URI'), _text(ref.find('ds:DigestValue', NS))))
    cm = si.find('ds:CanonicalizationMethod', NS)
    inc = cm.find('ec:InclusiveNamespaces', NS)
    octets = c14n(si, exclusive=cm.get('Algorithm') == EXC_C14N,
                  prefixes=inc.get('PrefixList').split() if inc is not None else None)
    cert = signer_certificate(sig_el, root, certs) if public_key is None else None
    verify_octets(public_key or cert.public_key(), octets,
                  _b64d(sig_el.find('ds:SignatureValue', NS)),
                  si.find('ds:SignatureMethod', NS).get('Algorithm'))
    return cert, refs


# ---- receiver: a whole message ----------------------------------------------

def split_mime(content_type, body):
    """[(headers dict, content)] of a multipart/related body."""
    m = re.search(r'boundary="?([^";]+)"?', content_type)
    delim = b'\r\n--' + m.group(1).encode()
    segs = (b'\r\n' + body).split(delim)
    out = []
    for seg in segs[1:-1]:
        head, _, content = seg[2:].partition(b'\r\n\r\n')
        h = {}
        for line in head.decode().split('\r\n'):
            k, _, v = line.partition(':')
            h[k.strip().lower()] = v.strip()
        out.append((h, content))
    return out


class Opened:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def open_message(content_type, body, keys=(), certs=()):
    """Receive a message as an eDelivery 2.0 MSH would: decrypt every
    EncryptedKey's DataReferences (keys: (cert, private key) pairs), check
    the signature over the decrypted parts (certs: candidates when KeyInfo
    is not a BST), gunzip the parts with CompressionType.  Returns an
    Opened with payloads {cid: bytes}, signer, references, root."""
    parts = split_mime(content_type, body)
    root = parse(parts[0][1])
    atts = {h['content-id'].strip('<>'): c for h, c in parts[1:]}
    sec = root.find('S12:Header/wsse:Security', NS)
    for ek in (sec.findall('xenc:EncryptedKey', NS) if sec is not None else []):
        cek = unwrap_encrypted_key(ek, list(keys), root=root)
        for dr in ek.findall('xenc:ReferenceList/xenc:DataReference', NS):
            ed = by_id(root, dr.get('URI')[1:])
            if ed.find('xenc:EncryptionMethod', NS).get('Algorithm') not in GCM_BITS:
                raise Bad('EncryptedData not aes-gcm')
            if len(cek) * 8 != GCM_BITS[ed.find('xenc:EncryptionMethod', NS).get('Algorithm')]:
                raise Bad('content key size')
            cid = ed.find('xenc:CipherData/xenc:CipherReference', NS).get('URI')[4:]
            atts[cid] = gcm_open(cek, atts[cid])
    signer, refs = verify_signature(root, atts, list(certs))
    out = {}
    for pi in root.findall('.//eb:PayloadInfo/eb:PartInfo', NS):
        cid = pi.get('href')[4:]
        ctype = [p.text for p in pi.findall('eb:PartProperties/eb:Property', NS)
                 if p.get('name') == 'CompressionType']
        out[cid] = gzip.decompress(atts[cid]) if ctype == [GZIP] else atts[cid]
    return Opened(payloads=out, signer=signer, references=refs, root=root)
