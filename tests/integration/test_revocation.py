"""Revocation of the signer certificate by CRL (NEGATIVE-CASES 43): a signed
leg whose <trust> lists a CRL of the development CA.  A message signed with a
revoked certificate gets EBMS:0101 and nothing is stored; with a CRL that
revokes nothing the same message gets its Receipt.  The CRLs are made with the
openssl CLI (`openssl ca -revoke` / `-gencrl`) against the development CA."""
import subprocess

import pytest

from conftest import new_id, run_as4gw

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
CRL_LEG = f'''
  <pmode id="dev-crl">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:dev:sender</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:as4gw:dev:SignedOnly</action>
    <security signing="required">
      <signer><certificate>{{pki}}/sender.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor><crl>CRL</crl></trust>
    </security>
  </pmode>
'''


def make_crl(tmp_path, pki, revoke):
    """A PEM CRL of the development CA revoking sender.crt, or nothing."""
    d = tmp_path / 'ca'
    d.mkdir()
    (d / 'index.txt').write_text('')
    (d / 'crlnumber').write_text('01\n')
    cnf = d / 'ca.cnf'
    cnf.write_text(f'''[ca]
default_ca = dev
[dev]
database = {d}/index.txt
crlnumber = {d}/crlnumber
default_md = sha256
default_crl_days = 30
''')
    base = ['openssl', 'ca', '-batch', '-config', str(cnf),
            '-cert', f'{pki}/ca.crt', '-keyfile', f'{pki}/ca.key']
    if revoke:
        subprocess.run(base + ['-revoke', f'{pki}/sender.crt'], check=True,
                       capture_output=True)
    crl = d / 'crl.pem'
    subprocess.run(base + ['-gencrl', '-out', str(crl)], check=True, capture_output=True)
    text = subprocess.run(['openssl', 'crl', '-in', str(crl), '-noout', '-text'],
                          check=True, capture_output=True, text=True).stdout
    assert ('Revoked Certificates:' in text) == revoke, text
    return crl


def push_signed(url, pki, mid):
    return run_as4gw('push', '--url', url, '--from', 'urn:as4gw:dev:sender',
                     '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                     '--action', 'urn:as4gw:dev:SignedOnly', '--message-id', mid,
                     '--gateway-cert', f'{pki}/gateway.crt',
                     '--sign', '--sign-cert', f'{pki}/sender.crt',
                     '--sign-key', f'{pki}/sender.key')


@pytest.mark.parametrize('revoke', [True, False], ids=['revoked', 'not-revoked'])
def test_signer_revoked_by_crl(gateway_factory, pki, tmp_path, revoke):
    crl = make_crl(tmp_path, pki, revoke)
    gw = gateway_factory(legs=CRL_LEG.replace('CRL</crl>', f'{crl}</crl>')).start()
    mid = new_id()
    p = push_signed(gw.url, pki, mid)
    if revoke:
        assert p.returncode == 1
        assert f'failed: {mid}: HTTP 200, error EBMS:0101' in p.stderr, p.stderr
        assert 'certificate revoked' in gw.logtext(), gw.logtext()[-2000:]
        assert gw.store.counts(mid) == (0, 0, 0)
        assert gw.store.totals() == (0, 0, 0)
    else:
        assert p.returncode == 0, p.stderr
        assert f'receipt ok: ref {mid} signature verified' in p.stderr
        assert gw.store.counts(mid) == (1, 0, 1)
