"""Recorded traffic from other AS4 implementations (../shared/corpus), replayed
unchanged over HTTP with `as4gw replay` and with this test's own HTTP client.

Unsigned positives are accepted under P-Modes written for them; the phase4 and
AS4.NET header negatives are refused with the codes the corpus README names.
Signed/encrypted messages belong to issue 3.

Every test runs on both sides of spoolThresholdBytes (issue 14, conftest
spool_side): in memory, and with every body spooled -- the same answers.
"""
import os
import re
import subprocess

import pytest

from conftest import BIN, shared_path

AS4NET = 'corpus/messages/thomsonreuters_eessi-as4.net/source/'
PHASE4 = 'corpus/messages/phax_phase4/'
ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'

pytestmark = pytest.mark.usefixtures('spool_side')


def leg(pid, frm, frm_role, to, to_role, service, action, agreement=None,
        service_type=None, party_type=None):
    agr = f'<agreement>{agreement}</agreement>' if agreement else ''
    st = f' type="{service_type}"' if service_type else ''
    pt = f' type="{party_type}"' if party_type else ''
    return f'''
  <pmode id="{pid}">{agr}
    <from role="{frm_role}"><partyId{pt}>{frm}</partyId></from>
    <to role="{to_role}"><partyId{pt}>{to}</partyId></to>
    <service{st}>{service}</service>
    <action>{action}</action>
    <security signing="never" encryption="never"/>
  </pmode>'''


EBMS_SVC = 'http://docs.oasis-open.org/ebxml-msg/ebMS/v3.0/ns/core/200704/'
HOLODECK_AGR = 'http://agreements.holodeckb2b.org/examples/agreement0'

# (file, reconstructed Content-Type or None for XML, P-Mode leg, MessageId,
#  {content-id: extracted attachment file} to compare stored payloads with)
POSITIVES = [
    (AS4NET + 'Eu.EDelivery.AS4.IntegrationTests/Resources/as4message.txt',
     leg('8.3.15-pmode', 'org:eu:europa:as4:example', 'Sender',
         'org:holodeckb2b:example:company:B', 'Receiver', EBMS_SVC + 'service',
         EBMS_SVC + 'test', HOLODECK_AGR),
     '78af0557-ea3b-4c8c-b609-09d7c3e42da0@10.124.29.70', 2),
    (AS4NET + 'Eu.EDelivery.AS4.UnitTests/Resources/as4message.txt',
     leg('push-sample', 'org:eu:europa:as4:example', 'Sender',
         'org:holodeckb2b:example:company:B', 'Receiver', EBMS_SVC + 'service',
         EBMS_SVC + 'test', HOLODECK_AGR),
     '78af0557-ea3b-4c8c-b609-09d7c3e42da0@10.124.29.70', 2),
    (AS4NET + 'Eu.EDelivery.AS4.UnitTests/Resources/as4_single_payload.as4',
     leg('8.1.1-pmode', 'org:eu:europa:as4:example', 'Sender',
         'org:holodeckb2b:example:company:B', 'Receiver',
         'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/service',
         'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/test',
         HOLODECK_AGR, service_type='http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/service'),
     'fd85bf2e-2366-408b-b187-010ad63d0070@10.124.29.152', 1),
    (AS4NET + 'Eu.EDelivery.AS4.ComponentTests/Resources/receiveagent_message.as4',
     leg('ComponentTest_ReceiveAgent_Sample1', 'org:eu:europa:as4:example:accesspoint:A',
         'Sender', 'org:eu:europa:as4:example:accesspoint:B', 'Receiver',
         'getting:started', 'eu:sample:01', 'http://agreements.europa.org/agreement',
         service_type='eu:europa:services'),
     'dcba3db3-9e20-44dd-a8b0-2f51ed53aeb0@192.168.1.116', 1),
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap12test/UserMessage12.xml',
     leg('oasis-as4-sample', '5209999001264', 'Seller', '5209999001295', 'Buyer',
         'http://docs.oasis-open.org/ebxml-msg/as4/200902/service',
         'http://docs.oasis-open.org/ebxml-msg/as4/200902/action',
         party_type='urn:oasis:names:tc:ebcore:partyid-type:iso6523:0088'),
     '2011-921@5209999001264.example.com', 1),
]

# (file, expected ebMS code) — refused, nothing stored (corpus README, section 5)
NEGATIVES = [
    (PHASE4 + 'phase4-test/src/test/resources/testfiles/TwoUserMessages.xml', 'EBMS:0003'),
    (PHASE4 + 'phase4-test/src/test/resources/testfiles/UserMessageNoPartyID.xml', 'EBMS:0009'),
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap11test/EmptyMessaging.xml', 'EBMS:0009'),
    # a bare eb:Messaging without an Envelope: not SOAP at all
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap11test/NoMessaging.xml', 'fault Sender'),
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap11test/MessageInfoMissing.xml', 'EBMS:0009'),
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap11test/MessageInfoIDMissing.xml', 'EBMS:0009'),
    (PHASE4 + 'phase4-lib/src/test/resources/external/soap11test/MessageInfoImaginaryTimestamp.xml', 'EBMS:0009'),
    (AS4NET + 'Eu.EDelivery.AS4.ComponentTests/Resources/receiveagent_message_nonexist_attachment.as4', 'EBMS:0011'),
    (AS4NET + 'Eu.EDelivery.AS4.UnitTests/Resources/as4message_external_payloads.as4', 'EBMS:0011'),
    (AS4NET + 'Eu.EDelivery.AS4.IntegrationTests/Resources/as4message_external_payloads.txt', 'EBMS:0011'),
]

# every leg the negatives could otherwise match, so refusals are about the header
ALL_LEGS = ''.join(p[1] for p in POSITIVES[1:])


def recorded_at(path):
    """The message's own eb:Timestamp, the instant to judge it at (`serve
    --verify-at`): recorded years ago, it is older than any retention, and
    the gateway refuses such a message (README "Message age")."""
    with open(path, 'rb') as f:
        m = re.search(rb'<(?:[A-Za-z0-9_-]+:)?Timestamp>\s*([^<\s]+)\s*<', f.read())
    assert m, f'no eb:Timestamp in {path}'
    return m.group(1).decode()


def replay(gw, path, *extra):
    out = subprocess.run([BIN, 'replay', '--url', gw.url, '--verbose', *extra, path],
                         capture_output=True, timeout=60)
    return out.returncode, out.stdout.decode('utf-8', 'replace'), out.stderr.decode('utf-8', 'replace')


@pytest.mark.parametrize('rel,legxml,mid,nparts', POSITIVES,
                         ids=[os.path.basename(p[0]) for p in POSITIVES])
def test_corpus_positive_accepted(gateway_factory, rel, legxml, mid, nparts):
    path = shared_path(rel)
    gw = gateway_factory(legs=legxml).start('--verify-at', recorded_at(path))
    rc, out, err = replay(gw, path)
    assert rc == 0, (out, err)
    assert re.search(r'HTTP 200 receipt ref=' + re.escape(mid), out), (out, err, gw.logtext()[-3000:])
    assert gw.store.counts(mid) == (1, nparts, 1)
    # the retry of the recorded bytes gets the same Receipt and stores nothing new
    rc2, out2, _ = replay(gw, path)
    assert rc2 == 0 and 'receipt ref=' + mid in out2
    assert gw.store.counts(mid) == (1, nparts, 1)
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


def test_corpus_payloads_stored_byte_identical(gateway_factory):
    rel = POSITIVES[0][0]
    path = shared_path(rel)
    extracted = shared_path(rel.replace('corpus/messages/', 'corpus/extracted/'))
    gw = gateway_factory(legs=POSITIVES[0][1]).start('--verify-at', recorded_at(path))
    rc, out, err = replay(gw, path)
    assert rc == 0, (out, err)
    rows = gw.store.query('SELECT content_id, content FROM payload WHERE message_id = ? ORDER BY part_no',
                          POSITIVES[0][2])
    files = {f.split('-', 2)[2][:-4]: f for f in os.listdir(extracted) if f.startswith('att-')}
    assert len(rows) == 2
    for cid, content in rows:
        with open(os.path.join(extracted, files[cid]), 'rb') as f:
            assert bytes(content) == f.read(), cid


@pytest.mark.parametrize('rel,code', NEGATIVES, ids=[os.path.basename(n[0]) for n in NEGATIVES])
def test_corpus_negative_refused(gateway_factory, rel, code):
    path = shared_path(rel)
    gw = gateway_factory(legs=ALL_LEGS).start()
    expect = 'fault' if code.startswith('fault') else 'error'
    rc, out, err = replay(gw, path, '--expect', expect)
    assert rc == 0, (out, err)
    for word in code.split():
        assert word in out, (out, gw.logtext()[-3000:])
    assert gw.store.totals() == (0, 0, 0)
