"""EBMS:0101 and EBMS:0102 log lines name the certificates involved (issue 11
item 12): the one a signature presented and the ones the leg lists (SHA-256
of the DER in lower-case hex, subject), what an EncryptedKey was made for and
the gateway's decryption certificate.  The partner's answer stays the fixed
generic text and names none of them; nothing is stored.  On SQLite and
PostgreSQL.
"""
import base64

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from conftest import new_id
from test_push_security import LEGS, push


def cert(pki, name):
    with open(f'{pki}/{name}.crt', 'rb') as f:
        return x509.load_pem_x509_certificate(f.read())


def fp(pki, name):
    return cert(pki, name).fingerprint(hashes.SHA256()).hex()


def ski(pki, name):
    ext = cert(pki, name).extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
    return ext.value.digest.hex()


def refusal(gw, mid, code):
    lines = [l for l in gw.log_lines() if l.get('message_id') == mid]
    assert len(lines) == 1, lines
    assert lines[0]['ebms_code'] == code, lines[0]
    return lines[0]['detail']


def check_answer(p, code, *secrets):
    assert p.returncode != 0
    body = p.stdout
    assert code in body, body[:500]
    for s in secrets:
        assert s not in body
    assert 'sha256 ' not in body and 'subject ' not in body


def test_unlisted_signer_is_named_in_the_log_only(gateway_factory, pki, tmp_path):
    """Signed with the gateway's own pair (issued by the leg's CA, but not
    the leg's signer): EBMS:0101; the log names the presented certificate
    and the leg's signer; the answer neither."""
    gw = gateway_factory(legs=LEGS).start()
    payload = tmp_path / 'p.xml'
    payload.write_bytes(b'<a/>')
    mid = new_id()
    p = push(gw.url, pki, mid, payloads=[payload], sign='gateway', encrypt='gateway')
    check_answer(p, 'EBMS:0101', fp(pki, 'gateway'), fp(pki, 'sender'))
    detail = refusal(gw, mid, 'EBMS:0101')
    assert f'presented certificate sha256 {fp(pki, "gateway")}, subject ' in detail, detail
    assert 'CN=as4gw-dev-gateway' in detail, detail
    assert f"the leg's signers: sha256 {fp(pki, 'sender')}, subject " in detail, detail
    assert gw.store.counts(mid) == (0, 0, 0)


def test_wrong_recipient_is_named_in_the_log_only(gateway_factory, pki, tmp_path):
    """Encrypted for the partner's own certificate instead of the gateway's:
    EBMS:0102 with the fixed text; the log names what the EncryptedKey was
    for (its SubjectKeyIdentifier) and the gateway's decryption
    certificate."""
    gw = gateway_factory(legs=LEGS).start()
    payload = tmp_path / 'p.xml'
    payload.write_bytes(b'<a/>')
    mid = new_id()
    p = push(gw.url, pki, mid, payloads=[payload], sign='sender', encrypt='sender')
    check_answer(p, 'EBMS:0102', fp(pki, 'gateway'), ski(pki, 'sender'),
                 base64.b64encode(bytes.fromhex(ski(pki, 'sender'))).decode())
    assert 'decryption failed' in p.stdout
    detail = refusal(gw, mid, 'EBMS:0102')
    # the reference the EncryptedKey carries: the partner's own SKI (base64)
    sender_ski = base64.b64encode(bytes.fromhex(ski(pki, 'sender'))).decode()
    assert f'X509SubjectKeyIdentifier "{sender_ski}"' in detail, detail
    assert f'decryption certificates: sha256 {fp(pki, "gateway")}, subject ' in detail, detail
    assert f'ski {ski(pki, "gateway")}' in detail, detail
    assert gw.store.counts(mid) == (0, 0, 0)
