"""Peppol receiving checks (issue 12 item 3, README "Peppol") over HTTP
against the real binary on both backends: a consistent Peppol-style
message gets a Receipt; every inconsistency between the SBDH of the one
payload and the ebMS header (originalSender, finalRecipient, Action,
Service), two payloads, a payload that is no SBDH document and a document
type or process the leg does not serve get eb:Error EBMS:0004 and nothing is
stored; the last two carry the Peppol AS4 profile's eb:ErrorDetail
PEPPOL:NOT_SERVICED, every other error no eb:ErrorDetail."""
import gzip

import pytest

import as4msg
from conftest import new_id, run_as4gw

SBDH_NS = 'http://www.unece.org/cefact/namespaces/StandardBusinessDocumentHeader'
AP_TYPE = 'urn:fdc:peppol.eu:2017:identifiers:ap'
PART_SCHEME = 'iso6523-actorid-upis'
DOC_SCHEME = 'busdox-docid-qns'
PROC_SCHEME = 'cenbii-procid-ubl'
INVOICE = ('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##'
           'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1')
CREDIT = ('urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote##'
          'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1')
BILLING = 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0'
ORDERING = 'urn:fdc:peppol.eu:2017:poacc:ordering:01:1.0'
NOT_SERVICED = 'PEPPOL:NOT_SERVICED'
C1, C4 = '0088:c1sender', '0192:c4receiver'
C2, C3 = 'POP000001', 'POP000002'


def leg(ident, doc, extra='', proc=BILLING):
    return f'''
  <pmode id="{ident}">
    <from role="{as4msg.ROLE_INIT}"><partyId type="{AP_TYPE}">{C2}</partyId></from>
    <to role="{as4msg.ROLE_RESP}"><partyId type="{AP_TYPE}">{C3}</partyId></to>
    <service type="{PROC_SCHEME}">{proc}</service>
    <action>{DOC_SCHEME}::{doc}</action>
    <security signing="never" encryption="never"/>
    <peppol>{extra}</peppol>
  </pmode>
'''


# the second leg serves only invoices: a consistent credit note is not served;
# the third serves only the billing process: a consistent ordering invoice is not
SERVED = (f'<documentType scheme="{DOC_SCHEME}">{INVOICE}</documentType>'
          f'<process>{BILLING}</process>')
LEGS = (leg('peppol-invoice', INVOICE) + leg('peppol-credit', CREDIT, SERVED)
        + leg('peppol-ordering', INVOICE, SERVED, proc=ORDERING))


def sbd(sender=C1, receiver=C4, doc=INVOICE, proc=BILLING, proc_scheme=PROC_SCHEME,
        authority=PART_SCHEME, documents='<Invoice xmlns="urn:x"><ID>1</ID></Invoice>'):
    return f'''<?xml version="1.0" encoding="UTF-8"?>
<StandardBusinessDocument xmlns="{SBDH_NS}">
 <StandardBusinessDocumentHeader>
  <HeaderVersion>1.0</HeaderVersion>
  <Sender><Identifier Authority="{authority}">{sender}</Identifier></Sender>
  <Receiver><Identifier Authority="{PART_SCHEME}">{receiver}</Identifier></Receiver>
  <DocumentIdentification>
   <Standard>urn:oasis:names:specification:ubl:schema:xsd:Invoice-2</Standard>
   <TypeVersion>2.1</TypeVersion>
   <InstanceIdentifier>{new_id()}</InstanceIdentifier>
   <Type>Invoice</Type>
   <CreationDateAndTime>2026-12-01T10:00:00Z</CreationDateAndTime>
  </DocumentIdentification>
  <BusinessScope>
   <Scope><Type>DOCUMENTID</Type><InstanceIdentifier>{doc}</InstanceIdentifier><Identifier>{DOC_SCHEME}</Identifier></Scope>
   <Scope><Type>PROCESSID</Type><InstanceIdentifier>{proc}</InstanceIdentifier><Identifier>{proc_scheme}</Identifier></Scope>
   <Scope><Type>COUNTRY_C1</Type><InstanceIdentifier>DE</InstanceIdentifier></Scope>
  </BusinessScope>
 </StandardBusinessDocumentHeader>
 {documents}
</StandardBusinessDocument>
'''.encode()


def push(gw, mid, payloads, doc=INVOICE, props=None, part_props=(), proc=BILLING):
    """Push a Peppol-style message with these payloads (bytes each)."""
    if props is None:
        props = [('originalSender', C1, PART_SCHEME), ('finalRecipient', C4, PART_SCHEME)]
    cids = tuple(f'p{i}@as4gw-test' for i in range(len(payloads)))
    env = as4msg.envelope(mid, frm=C2, to=C3, party_type=AP_TYPE, service=proc,
                          service_type=PROC_SCHEME, action=f'{DOC_SCHEME}::{doc}',
                          cids=cids, props=props, part_props=part_props)
    mtype = 'application/gzip' if part_props else 'application/xml'
    ct, body = as4msg.multipart(env, [(c, mtype, p) for c, p in zip(cids, payloads)])
    return gw.post(ct, body)


@pytest.fixture
def peppol_gw(gateway_factory):
    return gateway_factory(legs=LEGS).start()


def assert_refused(gw, mid, ans, description=None, detail=None, code='EBMS:0004'):
    """Refused with code, nothing stored; the eb:ErrorDetail is exactly
    detail, after the eb:Description (ebMS3 Core 6.2), or absent for None."""
    assert ans.status == 200, ans
    assert ans.error_code == code, ans
    assert ans.ref_to == mid
    assert ans.signed
    if description is not None:
        d = ans._find('.//eb:SignalMessage/eb:Error/eb:Description')
        assert d is not None and description in d.text, ans
    assert ans.error_detail == detail, ans
    if detail is not None:
        e = ans._find('.//eb:SignalMessage/eb:Error')
        assert [c.tag.split('}')[1] for c in e] == ['Description', 'ErrorDetail'], ans
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == (0, 0, 0)


def test_consistent_message_gets_receipt(peppol_gw):
    mid = new_id()
    ans = push(peppol_gw, mid, [sbd()])
    assert ans.status == 200 and ans.is_receipt, ans
    assert peppol_gw.store.counts(mid) == (1, 1, 1)


def test_participant_ids_compare_case_insensitively(peppol_gw):
    # Peppol Policy for use of Identifiers: participant ids are case-insensitive
    mid = new_id()
    ans = push(peppol_gw, mid, [sbd(sender=C1.upper())])
    assert ans.is_receipt, ans
    assert peppol_gw.store.counts(mid) == (1, 1, 1)


def test_compressed_payload_is_checked_after_gunzip(peppol_gw):
    gz = [('CompressionType', 'application/gzip')]
    mid = new_id()
    ans = push(peppol_gw, mid, [gzip.compress(sbd())], part_props=gz)
    assert ans.is_receipt, ans
    assert peppol_gw.store.counts(mid) == (1, 1, 1)
    # and a compressed inconsistent one is refused on its decompressed SBDH
    gw2_mid = new_id()
    ans = push(peppol_gw, gw2_mid, [gzip.compress(sbd(receiver='0192:other'))],
               part_props=gz)
    assert ans.error_code == 'EBMS:0004', ans
    assert peppol_gw.store.counts(gw2_mid) == (0, 0, 0)
    assert peppol_gw.store.totals() == (1, 1, 1)


CASES = {
    'sender': dict(payloads=[sbd(sender='0088:someoneelse')],
                   description='originalSender does not match'),
    'sender scheme': dict(payloads=[sbd(authority='other-scheme')],
                          description='type of the property does not match'),
    'receiver': dict(payloads=[sbd(receiver='0192:other')],
                     description='finalRecipient does not match'),
    'document type': dict(payloads=[sbd(doc=CREDIT)], description='Action does not match'),
    'process': dict(payloads=[sbd(proc='urn:fdc:peppol.eu:2017:poacc:ordering:01:1.0')],
                    description='Service does not match'),
    'process scheme': dict(payloads=[sbd(proc_scheme='other-procid')],
                           description='Service type does not match'),
    'no originalSender': dict(payloads=[sbd()],
                              props=[('finalRecipient', C4, PART_SCHEME)],
                              description='exactly one originalSender property'),
    'two finalRecipients': dict(payloads=[sbd()],
                                props=[('originalSender', C1, PART_SCHEME),
                                       ('finalRecipient', C4, PART_SCHEME),
                                       ('finalRecipient', '0192:x', PART_SCHEME)],
                                description='exactly one finalRecipient property'),
    'two payloads': dict(payloads=[sbd(), sbd()], description='exactly one payload'),
    'no payload': dict(payloads=[], description='exactly one payload'),
    'not sbdh': dict(payloads=[b'<Invoice xmlns="urn:x"><ID>1</ID></Invoice>'],
                     description='not an SBDH document'),
    'two business documents': dict(
        payloads=[sbd(documents='<Invoice xmlns="urn:x"/><Invoice xmlns="urn:x"/>')],
        description='business document repeated'),
    'dtd': dict(payloads=[b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "e">]>'
                          + sbd().split(b'?>', 1)[1]],
                description='not an SBDH document'),
    'identifier too long': dict(payloads=[sbd(receiver='0192:' + 'x' * 2000)],
                                description='Receiver too long'),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_mismatch_refused_nothing_stored(peppol_gw, case):
    c = CASES[case]
    mid = new_id()
    ans = push(peppol_gw, mid, c['payloads'], props=c.get('props'))
    assert_refused(peppol_gw, mid, ans, c['description'])


def test_document_type_not_served(peppol_gw):
    # consistent, but the leg serves invoices only: the Peppol AS4 profile's
    # EBMS:0004 with eb:ErrorDetail PEPPOL:NOT_SERVICED (the Description too)
    mid = new_id()
    ans = push(peppol_gw, mid, [sbd(doc=CREDIT)], doc=CREDIT)
    assert_refused(peppol_gw, mid, ans, NOT_SERVICED, detail=NOT_SERVICED)
    # the log line keeps what was not served; the partner never sees it
    assert b'not served' not in ans.body
    # an invoice (on the invoice leg) is still accepted after the refusal
    mid = new_id()
    assert push(peppol_gw, mid, [sbd()]).is_receipt


def test_process_not_served(peppol_gw):
    # consistent, but the leg serves the billing process only
    mid = new_id()
    ans = push(peppol_gw, mid, [sbd(proc=ORDERING)], proc=ORDERING)
    assert_refused(peppol_gw, mid, ans, NOT_SERVICED, detail=NOT_SERVICED)
    assert b'not served' not in ans.body


def test_other_error_has_no_error_detail(peppol_gw):
    # not a Peppol refusal (no leg for this Action): no eb:ErrorDetail
    mid = new_id()
    ans = push(peppol_gw, mid, [sbd()], doc='busdox-docid-qns::unknown')
    assert_refused(peppol_gw, mid, ans, code='EBMS:0010')


# signed, encrypted (to the gateway's pair) and compressed by `as4gw push`
SECURE_LEG = f'''
  <pmode id="peppol-secure">
    <from role="{as4msg.ROLE_INIT}"><partyId type="{AP_TYPE}">{C2}</partyId></from>
    <to role="{as4msg.ROLE_RESP}"><partyId type="{AP_TYPE}">{C3}</partyId></to>
    <service type="{PROC_SCHEME}">{BILLING}</service>
    <action>{DOC_SCHEME}::{INVOICE}</action>
    <security signing="required" encryption="required">
      <signer><certificate>{{pki}}/sender.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>
    </security>
    <peppol/>
  </pmode>
'''


def push_secure(gw, pki, tmp_path, mid, payload):
    f = tmp_path / f'{mid}.xml'
    f.write_bytes(payload)
    return run_as4gw(
        'push', '--url', gw.url, '--message-id', mid,
        '--from', f'{AP_TYPE}::{C2}', '--to', f'{AP_TYPE}::{C3}',
        '--service', f'{PROC_SCHEME}::{BILLING}', '--action', f'{DOC_SCHEME}::{INVOICE}',
        '--property', f'{PART_SCHEME}::originalSender={C1}',
        '--property', f'{PART_SCHEME}::finalRecipient={C4}',
        '--payload', str(f), '--compress',
        '--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
        '--encrypt', '--recipient-cert', f'{pki}/gateway.crt',
        '--gateway-cert', f'{pki}/gateway.crt')


def test_signed_encrypted_compressed_push_checked_on_the_plaintext(gateway_factory, pki,
                                                                   tmp_path):
    gw = gateway_factory(legs=SECURE_LEG).start()
    mid = new_id()
    p = push_secure(gw, pki, tmp_path, mid, sbd())
    assert p.returncode == 0, p.stdout + p.stderr
    assert gw.store.counts(mid) == (1, 1, 1)
    # the same, but the (encrypted, compressed) SBDH names another receiver
    bad = new_id()
    p = push_secure(gw, pki, tmp_path, bad, sbd(receiver='0192:other'))
    assert p.returncode == 1
    assert 'EBMS:0004' in p.stdout + p.stderr, p.stdout + p.stderr
    assert gw.store.counts(bad) == (0, 0, 0)
    assert gw.store.totals() == (1, 1, 1)


def test_pmode_check_shows_the_peppol_lists(peppol_gw):
    p = run_as4gw('pmode-check', '-c', peppol_gw.config)
    assert p.returncode == 0, p.stderr
    lines = {ln.split(':')[0].strip(): ln for ln in p.stdout.splitlines()}
    assert 'Peppol checks (document types: 0, processes: 0; 0 = any)' in lines['peppol-invoice']
    assert 'Peppol checks (document types: 1, processes: 1; 0 = any)' in lines['peppol-credit']


@pytest.mark.parametrize('prop', ['originalSender', '=v', 'n=', '::n=v', 't::=v', 'n=a\tb'])
def test_push_property_usage_errors_exit_2(prop):
    p = run_as4gw('push', '--url', 'http://127.0.0.1:1/as4', '--from', 'urn:a', '--to',
                  'urn:b', '--service', 's', '--action', 'a', '--property', prop)
    assert p.returncode == 2, p.stderr
    assert 'invalid value' in p.stderr


def test_plain_leg_on_a_peppol_route_refused_at_load(tmp_path, pki):
    # naming the plain leg in AgreementRef/@pmode would skip the checks
    from conftest import write_config
    plain = leg('plain', INVOICE).replace('<peppol></peppol>', '')
    cfg = write_config(tmp_path / 'c.xml', pki, legs=leg('checked', INVOICE) + plain)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 1
    assert 'share a route but only one has <peppol>' in p.stderr
    p = run_as4gw('serve', '-c', cfg, timeout=30)
    assert p.returncode != 0
    assert 'only one has <peppol>' in p.stderr + p.stdout
