"""A small test PKI for eDelivery AS4 2.0 and its elliptic-curve variants,
made at test time with python3-cryptography (not certs/gen-dev-pki.sh, so the
tests do not share the product's generator).

A CA (RSA 2048 by default, or ECDSA P-256 / Ed25519: the ENTSOG AS4 4.0
profile 2.2.6.2.2 leaves the CA's algorithm open) issues
- signer certificates: Ed25519 (RFC 8410), ECDSA P-256, P-384, brainpoolP256r1,
  RSA (for the downgrade tests), KeyUsage digitalSignature + nonRepudiation;
- key-agreement certificates: X25519 (it cannot sign, so it cannot be
  self-signed, ENTSOG 2.2.6.2.3), ECDH on P-256, P-384, brainpoolP256r1,
  KeyUsage keyAgreement.
Keys are written as unencrypted PKCS#8 PEM, certificates as PEM.
"""
import datetime
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa, x25519
from cryptography.x509.oid import NameOID

CURVES = {'p256': ec.SECP256R1, 'p384': ec.SECP384R1, 'p521': ec.SECP521R1,
          'brainpoolP256r1': ec.BrainpoolP256R1}


def new_key(kind):
    """A fresh private key of kind: ed25519, x25519, rsa, or a CURVES name."""
    if kind == 'ed25519':
        return ed25519.Ed25519PrivateKey.generate()
    if kind == 'x25519':
        return x25519.X25519PrivateKey.generate()
    if kind == 'rsa':
        return rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return ec.generate_private_key(CURVES[kind]())


def _sign_hash(key):
    """The hash argument of CertificateBuilder.sign for an issuer key."""
    return None if isinstance(key, ed25519.Ed25519PrivateKey) else hashes.SHA256()


class Pair:
    """A private key and its certificate, also on disk as PEM."""

    def __init__(self, key, cert, key_path, cert_path):
        self.key, self.cert = key, cert
        self.key_path, self.cert_path = str(key_path), str(cert_path)

    @property
    def ski(self):
        return self.cert.extensions.get_extension_for_class(
            x509.SubjectKeyIdentifier).value.digest

    def __repr__(self):
        return f'<Pair {self.cert.subject.rfc4514_string()}>'


class Pki:
    """A CA in directory (ca.crt, ca.key) that issues signer and
    key-agreement certificates on request."""

    def __init__(self, directory, ca_kind='rsa', name='as4gw edelivery2 test CA'):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        key = new_key(ca_kind)
        cert = self._cert(name, key.public_key(), None, key, ca=True)
        self.ca = self._save('ca', key, cert)

    def _cert(self, cn, public_key, issuer, issuer_key, ca=False, usage='sign',
              days=(-1, 730)):
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, 'as4gw edelivery2 test')])
        b = (x509.CertificateBuilder().subject_name(name)
             .issuer_name(issuer.subject if issuer is not None else name)
             .public_key(public_key).serial_number(x509.random_serial_number())
             .not_valid_before(now + datetime.timedelta(days=days[0]))
             .not_valid_after(now + datetime.timedelta(days=days[1]))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
             .add_extension(x509.KeyUsage(
                 digital_signature=usage == 'sign' and not ca,
                 content_commitment=usage == 'sign' and not ca,
                 key_encipherment=usage == 'rsa-enc', data_encipherment=False,
                 key_agreement=usage == 'agree', key_cert_sign=ca, crl_sign=ca,
                 encipher_only=False, decipher_only=False), critical=True)
             .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key),
                            critical=False))
        if issuer is not None:
            b = b.add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                issuer.public_key()), critical=False)
        return b.sign(issuer_key, _sign_hash(issuer_key))

    def _save(self, name, key, cert):
        kp, cp = os.path.join(self.dir, name + '.key'), os.path.join(self.dir, name + '.crt')
        with open(kp, 'wb') as f:
            f.write(key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
        with open(cp, 'wb') as f:
            f.write(cert.public_bytes(serialization.Encoding.PEM))
        return Pair(key, cert, kp, cp)

    def issue(self, name, kind, usage):
        """A new key of kind with a certificate for usage ('sign', 'agree',
        'rsa-enc') issued by the CA, saved as name.key / name.crt."""
        key = new_key(kind)
        cert = self._cert(name, key.public_key(), self.ca.cert, self.ca.key, usage=usage)
        return self._save(name, key, cert)

    def signer(self, name, kind):
        """kind: ed25519, p256, p384, brainpoolP256r1, rsa."""
        return self.issue(name, kind, 'sign')

    def agreement(self, name, kind):
        """kind: x25519, p256, p384, brainpoolP256r1."""
        return self.issue(name, kind, 'agree')

    def rsa_decryption(self, name):
        """An RSA pair for rsa-oaep key transport (the 1.x dialect)."""
        return self.issue(name, 'rsa', 'rsa-enc')
