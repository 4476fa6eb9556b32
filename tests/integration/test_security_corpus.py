"""Issue 3: recorded signed / encrypted / compressed traffic from other AS4
implementations (../shared/corpus), replayed unchanged over HTTP with
`as4gw replay` against the real binary, one gateway per message, on SQLite and
PostgreSQL.

Every case is one row of CASES, written from the corpus README's section 5
table (the number in each comment is the README row) and keys/INDEX.md:

* a P-Mode leg written for the sender (parties, roles, service, action,
  agreement; the leg id equals AgreementRef/@pmode where the message has one)
  with the signer certificate from corpus/keys, its issuer as trust anchor
  (the certificate itself where it is self-signed or its CA is not in the
  corpus) and the decryption key the README names;
* <replay><verifyAt> set to the message's own eb:Timestamp, so expired
  certificates are evaluated when the message was sent (replay mode only);
* positives: a Receipt (with ebbp:NonRepudiationInformation copying every
  ds:Reference of the message for signed ones), one inbox row, payloads
  stored byte for byte equal to the corpus ground truth (extracted/
  decrypted-gunzipped-*.bin, decrypted-*.bin or att-*.bin; a part is
  gunzipped only where its PartProperties declare CompressionType), and the
  same Receipt bytes again on a retry;
* negatives: refused with the ebMS code (or SOAP fault) the README row names,
  the gateway's log line shows that code (and, where the refusal comes after
  P-Mode matching, the matched leg), and nothing is stored.

Where the README or the issue expects something the gateway cannot or must
not do (signals, SOAP 1.1, attachments missing from the capture, damaged
bytes), the row says why and asserts what a correct gateway answers instead.
"""
import gzip
import json
import os
import re
import subprocess
import xml.etree.ElementTree as ET

import pytest

import as4msg
from conftest import BIN, shared_path

CORPUS = 'corpus/messages/'
AS4NET = CORPUS + 'thomsonreuters_eessi-as4.net/source/Eu.EDelivery.AS4.'
PHASE4 = CORPUS + 'phax_phase4/'
DOMIBUS = CORPUS + 'cefedelivery_domibus/'
EBMS = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
HOLODECK_AGR = 'http://agreements.holodeckb2b.org/examples/agreement0'

NS = {
    'S12': 'http://www.w3.org/2003/05/soap-envelope',
    'eb': EBMS,
    'ds': 'http://www.w3.org/2000/09/xmldsig#',
    'ebbp': 'http://docs.oasis-open.org/ebxml-bp/ebbp-signals-2.0',
    'wsse': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
}

# Certificates and keys in corpus/keys (keys/INDEX.md)
ACCESS_POINT_A = '5e320e3a1dda'   # CN=AccessPointA, self-signed (AS4.NET)
ACCESS_POINT_B = '3da5db472d77'   # CN=AccessPointB, self-signed (AS4.NET)
HOLODECK_PARTY_A = '0d512bdcd9f1'  # Holodeck core test PartyA, self-signed
HOLODECK_PARTY_C = '21f569479758'  # Holodeck core test PartyC, self-signed
AS4PROJECT = 'e9060f2d62f6'       # CN=www.AS4Project.com, self-signed ("untrusted")
BRZ_APP = '27ea10b05e2d'          # APP_1000000101, issued by PEPPOL ACCESS POINT TEST CA
PEPPOL_AP_TEST_CA = 'b9189812533f'
PEPPOL_ROOT_TEST_CA = '55ddc8ce5d35'
PH_AS4 = 'f73770bc1e9c'           # phase4 dummy-pw-test.jks ph-as4, self-signed
HELGER_POP000306 = '06dadae737d8'  # Peppol test AP (phase4, 2026)
PEPPOL_AP_TEST_CA_G3 = 'b965544218e0'
GTS_ENTSOG = '92687bfdadaf'       # 21X-NL-A-A0A0A-Z; its QuoVadis CA is not in the corpus


def party(frm, frm_role, to, to_role, service, action, agreement=None,
          agreement_type=None, service_type=None, frm_type=None, to_type=None):
    """One sender's collaboration as the P-Mode leg names it."""
    return dict(frm=frm, frm_role=frm_role, to=to, to_role=to_role, service=service,
                action=action, agreement=agreement, agreement_type=agreement_type,
                service_type=service_type, frm_type=frm_type, to_type=to_type)


# The senders of the corpus (section 5, "origin" and the messages' headers)
HOLODECK_A_TO_AS4NET = party(
    'org:holodeckb2b:example:company:A', 'Sender', 'org:eu:europa:as4:example', 'Receiver',
    'Test', 'StoreMessage', HOLODECK_AGR, service_type='org:holodeckb2b:services')
HOLODECK_A_TO_B = party(
    'org:holodeckb2b:example:company:A', 'Sender', 'org:holodeckb2b:example:company:B',
    'Receiver', 'Examples', 'StoreMessage', HOLODECK_AGR,
    service_type='org:holodeckb2b:services')
AS4NET_TO_HOLODECK_B = party(
    'org:eu:europa:as4:example', 'Sender', 'org:holodeckb2b:example:company:B', 'Receiver',
    EBMS + 'service', EBMS + 'test', HOLODECK_AGR, service_type=EBMS + 'service')
AS4NET_TO_HOLODECK_B_UNTYPED = party(
    'org:eu:europa:as4:example', 'Sender', 'org:holodeckb2b:example:company:B', 'Receiver',
    'http://docs.oasis-open.org/ebxml-msg/ebMS/v3.0/ns/core/200704/service',
    'http://docs.oasis-open.org/ebxml-msg/ebMS/v3.0/ns/core/200704/test', HOLODECK_AGR)
AS4NET_EDELIVERY_SAMPLE = party(
    'https://eu.edelivery.as4.sender', 'Sender', 'https://eu.edelivery.as4.receiver',
    'Receiver', 'https://eu.edelivery.as4.service', 'Decryption',
    'https://eu.edelivery.as4.agreement', frm_type='Nothing<String>',
    to_type='Nothing<String>')
PHASE4_MOCK = party(
    'APP_1000000101', EBMS + 'sender', 'APP_1000000101', EBMS + 'responder',
    'QuoteToCollect', 'NewPurchaseOrder', HOLODECK_AGR, service_type='MyServiceTypes')
PH_AS4_CEF = party(
    'ph-as4-sender', EBMS + 'sender', 'ph-as4-receiver', EBMS + 'responder',
    'SRV_SIMPLE_ONEWAY_DYN', 'ACT_SIMPLE_ONEWAY_DYN',
    'urn:as4:agreements:so-that-we-have-a-non-empty-value', service_type='MyServiceTypes')
PEPPOL_PHASE4 = party(
    'POP000306', EBMS + 'initiator', 'POP000306', EBMS + 'responder',
    'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    'busdox-docid-qns::urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##'
    'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0::2.1',
    'urn:fdc:peppol.eu:2017:agreements:tia:ap_provider', service_type='cenbii-procid-ubl',
    frm_type='urn:fdc:peppol.eu:2017:identifiers:ap',
    to_type='urn:fdc:peppol.eu:2017:identifiers:ap')
ENTSOG_GTS = party(
    '21X-NL-A-A0A0A-Z', 'ZSO', '12XBKW-HANDEL--X', 'ZSH', 'A06',
    'http://docs.oasis-open.org/ebxml-msg/as4/200902/action',
    'http://agreements.gu-messaging.com/as4', service_type='http://edigas.org/service',
    frm_type='http://www.entsoe.eu/eic-codes/eic-party-codes-x',
    to_type='http://www.entsoe.eu/eic-codes/eic-party-codes-x')
# a leg no corpus message matches: for refusals that come before P-Mode
# matching (signals, SOAP 1.1, PartInfo without its MIME part)
NOBODY = party('urn:as4gw:test:nobody', None, 'urn:as4gw:test:gateway', None,
               'urn:as4gw:test:service', 'urn:as4gw:test:Nothing')

# ---------------------------------------------------------------------------
# The table.  Keys:
#   row      README section 5 row          file    corpus path
#   expect   'receipt', 'EBMS:0101'..., or 'fault <Code>'
#   pmode    leg id; party: the sender profile above
#   signing / encryption: the leg's policy; signer / anchors / decrypt: keys
#   at       <replay><verifyAt> (the message's eb:Timestamp)
#   mid      eb:MessageId; payloads: {cid: ground truth} where the truth is
#            'decrypted-gunzipped', 'decrypted', 'raw' (att-N) or
#            'gunzip-raw' (att-N gunzipped here: compressed, not encrypted,
#            and the corpus has no gunzipped copy)
#   matched  the refusal comes after P-Mode matching (the log names the leg)
#   reason   what the log line's "error" says (why it was refused)
#   prepare  how to make the file sendable (None: byte for byte)
# ---------------------------------------------------------------------------
ISSUERSERIAL = AS4NET + 'UnitTests/Resources/as4-encrypted-signed-issuerserial.as4'
SIGNED_HOLODECK_UT = AS4NET + 'UnitTests/Resources/signed_holodeck_message.as4'
SIGNED_HOLODECK_CT = AS4NET + 'ComponentTests/Resources/signed_holodeck_message.as4'
ENC_COMPRESSED = AS4NET + 'UnitTests/Resources/as4-encrypted-compressed-message.as4'
MSG_8_1_22 = AS4NET + 'IntegrationTests/Resources/_8_1_22_message.as4'
HOLODECK_AS4MESSAGE = AS4NET + 'UnitTests/Resources/holodeck-as4message.xml'
BUNDLED_ENCRYPTED = AS4NET + 'UnitTests/Resources/as4_bundled_encrypted_message'

HOLODECK_CIDS_8_3_8 = ('b545c3a0-e57f-46aa-862f-381eb4b7009-291596031@CLT-SMOREELS.mshome.net',
                       'b545c3a0-e57f-46aa-862f-381eb4b7009-1650194442@CLT-SMOREELS.mshome.net')
HOLODECK_CIDS_8_3_4 = ('cdcc838c-96ed-414a-b127-0937f5cd654-341439240@CLT-FGHEYSELS.ad.codit.eu',
                       'cdcc838c-96ed-414a-b127-0937f5cd654-445037483@CLT-FGHEYSELS.ad.codit.eu')
HOLODECK_CIDS_8_1_22 = ('3bb59c77-a1bc-4ea5-9159-8152bd8f618-1833056104@CLT-FGHEYSELS.ad.codit.eu',
                        '3bb59c77-a1bc-4ea5-9159-8152bd8f618-335174759@CLT-FGHEYSELS.ad.codit.eu')

CASES = [
    # ---- accepted -----------------------------------------------------------
    # 126: sign (rsa-sha384, IssuerSerial) + encrypt (rsa-oaep-mgf1p/sha256,
    # aes128-gcm) + gzip, 2 attachments; python verify OK
    dict(row=126, file=ISSUERSERIAL, expect='receipt', pmode='8.3.8-pmode',
         party=HOLODECK_A_TO_AS4NET, signing='required', encryption='required',
         signer=ACCESS_POINT_A, anchors=[ACCESS_POINT_A], decrypt=ACCESS_POINT_B,
         at='2018-12-19T08:56:26.657Z',
         mid='b545c3a0-e57f-46aa-862f-381eb4b70097@CLT-SMOREELS.mshome.net',
         payloads={c: 'decrypted-gunzipped' for c in HOLODECK_CIDS_8_3_8}),
    # 154: signed only (rsa-sha384, SKI), 2 gzip attachments; python verify OK
    dict(row=154, file=SIGNED_HOLODECK_UT, expect='receipt', pmode='8.3.4-pmode',
         party=HOLODECK_A_TO_AS4NET, signing='required', encryption='never',
         signer=ACCESS_POINT_B, anchors=[ACCESS_POINT_B],
         at='2018-01-24T16:12:22.344Z',
         mid='cdcc838c-96ed-414a-b127-0937f5cd6549@CLT-FGHEYSELS.ad.codit.eu',
         payloads={c: 'gunzip-raw' for c in HOLODECK_CIDS_8_3_4}),
    # 110: the ComponentTests copy of row 154; python verify OK
    dict(row=110, file=SIGNED_HOLODECK_CT, expect='receipt', pmode='8.3.4-pmode',
         party=HOLODECK_A_TO_AS4NET, signing='required', encryption='never',
         signer=ACCESS_POINT_B, anchors=[ACCESS_POINT_B],
         at='2018-01-24T16:12:22.344Z',
         mid='cdcc838c-96ed-414a-b127-0937f5cd6549@CLT-FGHEYSELS.ad.codit.eu',
         payloads={c: 'gunzip-raw' for c in HOLODECK_CIDS_8_3_4}),
    # 124: encrypted only (xenc11 rsa-oaep, aes128-gcm) to Holodeck PartyC.  The
    # payloads are gzip but PartInfo declares no CompressionType, so what is
    # stored is the decrypted (still gzipped) bytes
    dict(row=124, file=ENC_COMPRESSED, expect='receipt', pmode='as4net-decryption',
         party=AS4NET_EDELIVERY_SAMPLE, signing='never', encryption='required',
         decrypt=HOLODECK_PARTY_C, at='2018-07-02T05:32:10.1322382Z',
         mid='user-55b50d25-5f75-4d2e-8d75-c4e7fe492169',
         payloads={'flower': 'decrypted', 'xmldoc': 'decrypted'}),
    # 113: encrypted only (rsa-oaep-mgf1p/sha256 to IssuerSerial of
    # AccessPointB), 2 attachments, no CompressionType
    dict(row=113, file=MSG_8_1_22, expect='receipt', pmode='8.1.22-pmode',
         party=HOLODECK_A_TO_AS4NET, signing='never', encryption='required',
         decrypt=ACCESS_POINT_B, at='2018-03-19T13:33:38.170Z',
         mid='3bb59c77-a1bc-4ea5-9159-8152bd8f618b@CLT-FGHEYSELS.ad.codit.eu',
         payloads={c: 'decrypted' for c in HOLODECK_CIDS_8_1_22}),
    # 142: encrypted (to PartyC) UserMessage bundled with a Receipt signal;
    # neither OK nor NEGATIVE in the README.  AS4.NET appended the
    # eb:SignalMessage AFTER eb:UserMessage, but the ebMS3 header schema
    # (eb:Messaging is a sequence SignalMessage*, UserMessage*) puts signals
    # first: schema-invalid -> EBMS:0009, before P-Mode matching and
    # decryption (its payloads would decrypt: decrypted-*.bin)
    dict(row=142, file=BUNDLED_ENCRYPTED, expect='EBMS:0009', pmode='holodeck-bundled',
         party=HOLODECK_A_TO_B, signing='never', encryption='required',
         decrypt=HOLODECK_PARTY_C, at='2016-10-05T16:16:49.068Z',
         mid='30392f3c-bc9c-4a1f-ba5e-5d4d81382eef@CLT-SNEIRINCK',
         reason='not valid against the schema'),

    # ---- named by the issue, but not acceptable ----------------------------
    # 150: holodeck-as4message.xml is a C#-string-escaped text dump (literal
    # \r\n and \"), so it is unescaped in the test's temp dir first (as
    # as4check.py does).  SignedInfo and the two XML references verify, but
    # the JPEG attachment was damaged by the dump (bytes >= 0x80 became U+FFFD,
    # controls became \uXXXX text): its digest cannot match, python verify
    # says FAIL (digest of cid:...).  Under a signing-required leg a correct
    # gateway refuses it with EBMS:0101; accepting it would mean accepting a
    # payload whose signature does not verify.
    dict(row=150, file=HOLODECK_AS4MESSAGE, expect='EBMS:0101', pmode='holodeck-as4message',
         party=HOLODECK_A_TO_AS4NET, signing='required', encryption='optional',
         signer=HOLODECK_PARTY_A, anchors=[HOLODECK_PARTY_A],
         at='2016-09-20T13:21:45.786Z', prepare='unescape-csharp', matched=True,
         mid='2ec50c18-c4bd-42a8-82ed-c6ad3a7f3539@CLT-SMOREELS.ad.codit.eu',
         reason='signature check failed'),

    # ---- security / compression negatives ------------------------------------
    # 106, 114, 138: AS4.NET test 8.4.6, encrypted attachments corrupted:
    # AES-GCM authentication fails -> EBMS:0102
    dict(row=106, file=AS4NET + 'ComponentTests/Resources/receiveagent-wrong-encrypted-message.as4',
         expect='EBMS:0102', pmode='callback-pmode', party=AS4NET_TO_HOLODECK_B,
         signing='never', encryption='required', decrypt=HOLODECK_PARTY_A,
         at='2016-11-02T12:56:00.9899496Z', matched=True,
         mid='fd2929aa-9be2-412c-ace8-828d3c4fbca4@10.124.29.131',
         reason='decryption failed'),
    dict(row=114, file=AS4NET + 'IntegrationTests/Resources/as4-soap-wrong-encrypted-message.txt',
         expect='EBMS:0102', pmode='8.4.6-pmode', party=AS4NET_TO_HOLODECK_B,
         signing='never', encryption='required', decrypt=HOLODECK_PARTY_A,
         at='2016-11-02T12:56:00.9899496Z', matched=True,
         mid='fd2929aa-9be2-412c-ace8-828d3c4fbca4@10.124.29.131',
         reason='decryption failed'),
    dict(row=138, file=AS4NET + 'UnitTests/Resources/as4-soap-wrong-encrypted-message',
         expect='EBMS:0102', pmode='8.1.5-pmode', party=AS4NET_TO_HOLODECK_B,
         signing='never', encryption='required', decrypt=HOLODECK_PARTY_A,
         at='2016-11-02T12:56:00.9899496Z', matched=True,
         mid='fd2929aa-9be2-412c-ace8-828d3c4fbca4@10.124.29.131',
         reason='decryption failed'),
    # 112: signed + encrypted, attachment bytes corrupted in the repository
    # (binary re-encoded as UTF-8): AES-GCM tag fails -> EBMS:0102 (decryption
    # comes before verification: eDelivery signs, then encrypts)
    dict(row=112, file=AS4NET + 'IntegrationTests/Resources/8.1.22-message.as4',
         expect='EBMS:0102', pmode='8.1.22-pmode', party=HOLODECK_A_TO_AS4NET,
         signing='required', encryption='required', signer=ACCESS_POINT_A,
         anchors=[ACCESS_POINT_A], decrypt=ACCESS_POINT_B,
         at='2018-02-07T09:40:12.242Z', matched=True,
         mid='96cece56-30fa-4020-a5b0-e492043408ad@CLT-SMOREELS.mshome.net',
         reason='decryption failed'),
    # 119: AS4.NET test 8.4.4, attachment declared gzip is not gzip -> EBMS:0303
    dict(row=119, file=AS4NET + 'IntegrationTests/Resources/as4message_incorect_compressed.txt',
         expect='EBMS:0303', pmode='8.3.1-pmode', party=HOLODECK_A_TO_AS4NET,
         signing='never', encryption='never', at='2016-10-21T12:50:58.340Z', matched=True,
         mid='1800cc77-b5c0-497f-ab81-cd6a07173275@CLT-SMOREELS.ad.codit.eu',
         reason='invalid gzip data'),
    # 102: CompressionType application/gzip declared, content not gzip
    # (gunzip FAILED in the README) -> EBMS:0303
    dict(row=102, file=AS4NET + 'ComponentTests/Resources/deliveragent-message.as4',
         expect='EBMS:0303', pmode='8.3.1-pmode', party=HOLODECK_A_TO_AS4NET,
         signing='never', encryption='never', at='2017-05-09T09:10:18.949Z', matched=True,
         mid='022bdcf6-60a2-4b38-bf4a-4d648b5e859a@CLT-SMOREELS.ad.codit.eu',
         reason='invalid gzip data'),
    # 90: phase4 WrongCompression.mime: CompressionType application/rar
    # (not application/gzip) -> EBMS:0303; the unsupported CompressionType is
    # refused while reading PartProperties, before P-Mode matching
    dict(row=90, file=PHASE4 + 'phase4-test/src/test/resources/testfiles/WrongCompression.mime',
         expect='EBMS:0303', pmode='mock-pmode-soap12', party=PHASE4_MOCK,
         signing='never', encryption='never', at='2016-12-21T11:01:16.795+01:00',
         mid='c42e883b-aab1-47bf-b2f4-4e89ce309591@ph-as4',
         reason='unsupported CompressionType'),
    # 91: SignatureMethod http://www.randomcrypt.com/random: README "EBMS:0101
    # / policy error"; not on the leg's algorithm allowlist -> EBMS:0103
    dict(row=91, file=PHASE4 + 'phase4-test/src/test/resources/testfiles/WrongSigningAlgorithm.xml',
         expect='EBMS:0103', pmode='mock-pmode-soap12', party=PHASE4_MOCK,
         signing='required', encryption='never', signer=BRZ_APP,
         anchors=[PEPPOL_AP_TEST_CA, PEPPOL_ROOT_TEST_CA],
         at='2016-12-21T11:34:22.462+01:00', matched=True,
         mid='0c5307dc-5f80-49f5-94ac-2422a8e0d595@ph-as4',
         reason='signature algorithm not allowed'),
    # 92: DigestMethod http://www.randomdigest.com/randomdigest (and
    # pretty-printed): not on the allowlist -> EBMS:0103
    dict(row=92, file=PHASE4 + 'phase4-test/src/test/resources/testfiles/WrongSigningDigestAlgorithm.xml',
         expect='EBMS:0103', pmode='mock-pmode-soap12', party=PHASE4_MOCK,
         signing='required', encryption='never', signer=BRZ_APP,
         anchors=[PEPPOL_AP_TEST_CA, PEPPOL_ROOT_TEST_CA],
         at='2016-12-21T11:34:22.462+01:00', matched=True,
         mid='0c5307dc-5f80-49f5-94ac-2422a8e0d595@ph-as4',
         reason='digest algorithm not allowed'),
    # 136: untrusted signer (self-signed CN=www.AS4Project.com); the leg trusts
    # AccessPointA only -> EBMS:0101
    dict(row=136, file=AS4NET + 'UnitTests/Resources/as4-soap-untrusted-signed-message.txt',
         expect='EBMS:0101', pmode='push-sample', party=AS4NET_TO_HOLODECK_B_UNTYPED,
         signing='required', encryption='never', signer=ACCESS_POINT_A,
         anchors=[ACCESS_POINT_A], at='2016-09-23T12:33:21.5950993Z', matched=True,
         mid='cece0a43-8233-447e-b3b8-4239f601097b@10.124.29.131',
         reason='certificate not bound to the sending party'),
    # 136 again, with its own certificate configured as signer and anchor: the
    # SignatureValue itself does not verify (python: FAIL) -> still EBMS:0101
    dict(row=136, variant='own-cert',
         file=AS4NET + 'UnitTests/Resources/as4-soap-untrusted-signed-message.txt',
         expect='EBMS:0101', pmode='push-sample', party=AS4NET_TO_HOLODECK_B_UNTYPED,
         signing='required', encryption='never', signer=AS4PROJECT,
         anchors=[AS4PROJECT], at='2016-09-23T12:33:21.5950993Z', matched=True,
         mid='cece0a43-8233-447e-b3b8-4239f601097b@10.124.29.131',
         reason='signature check failed'),
    # 115: FAIL (SignatureValue), pretty-printed after signing -> EBMS:0101
    # under a signing-required leg that trusts its signer (Holodeck PartyA)
    dict(row=115, file=AS4NET + 'IntegrationTests/Resources/as4-soap-wrong-signed-callback-message.txt',
         expect='EBMS:0101', pmode='8.1.13-pmode', party=AS4NET_TO_HOLODECK_B,
         signing='required', encryption='never', signer=HOLODECK_PARTY_A,
         anchors=[HOLODECK_PARTY_A], at='2016-10-28T12:13:21.3889745Z', matched=True,
         mid='2e0a5701-790a-4a53-a8b7-e7f528fc1b53@10.124.29.131',
         reason='signature check failed'),
    # 146: README: payload in the SOAP Body, Body edited after signing (body
    # digest fails).  Its PartInfo has href="" (an empty reference: neither
    # absent = SOAP Body nor cid:), refused as an unresolvable payload
    # reference -> EBMS:0011 while binding parts, before the signature
    dict(row=146, file=AS4NET + 'UnitTests/Resources/as4_soapattachment.as4',
         expect='EBMS:0011', pmode='CEF-Initiator-CEF-Responder', party=PH_AS4_CEF,
         signing='required', encryption='never', signer=PH_AS4, anchors=[PH_AS4],
         at='2017-09-14T15:07:00.088Z',
         mid='ph-as4@491b3a39-076d-4f43-8a01-1ca99c085d62',
         reason='external payload'),

    # ---- complete captures whose recipient key is not public -----------------
    # PARTIAL in the README: SignedInfo verifies, the encrypted attachments
    # cannot be opened with any key we have.  The leg decrypts with the
    # gateway's own pair, which is not theirs -> EBMS:0102
    # 75: phase4 -> Peppol AP POP000306 (2026), xenc11 rsa-oaep/mgf1sha256
    dict(row=75, file=PHASE4 + 'phase4-peppol-client/src/test/resources/dump-raw.as4out',
         expect='EBMS:0102', pmode='peppol-phase4', party=PEPPOL_PHASE4,
         signing='required', encryption='required', signer=HELGER_POP000306,
         anchors=[PEPPOL_AP_TEST_CA_G3], at='2026-01-29T15:39:03.805Z', matched=True,
         mid='17a7c374-efe3-41e2-ac0d-8a8f47529e47@phase4',
         reason='decryption failed'),
    # 101: AS4.NET c2 -> c3 (minder), rsa-oaep-mgf1p.  Its eb:Service
    # SRV_SIMPLE_TWOWAY has no type and is not a URI (ebMS3 Core 5.2.2.8
    # MUST): EBMS:0003 while reading the header, before P-Mode matching and
    # decryption; no leg can be written for it (pmode-check refuses one)
    dict(row=101, file=AS4NET + 'ComponentTests/Resources/c3_minderreceiveagent_request.as4',
         expect='EBMS:0003', party=NOBODY, signing='never', encryption='never',
         at='2018-06-12T07:45:41.2437373Z',
         mid='5c40387e-ee08-4626-bf61-ebec68de77a0@mindertestbed.org',
         reason='eb:Service has no type'),
    # 153: RSSBus / ENTSOG, xenc11 rsa-oaep/mgf1sha256; signer's QuoVadis CA
    # is not in the corpus, so the signer is its own anchor
    dict(row=153, file=AS4NET + 'UnitTests/Resources/rssbus_message.as4',
         expect='EBMS:0102', pmode='entsog-gts', party=ENTSOG_GTS,
         signing='required', encryption='required', signer=GTS_ENTSOG,
         anchors=[GTS_ENTSOG], at='2018-01-12T10:09:16.735Z', matched=True,
         mid='Bkw-20180112-110916514-LvB0@Bkw',
         reason='decryption failed'),

    # ---- attachments absent from the file: cannot be accepted ----------------
    # PartInfo references a cid: part the capture does not contain -> EBMS:0011
    # (ebMS3 Core 6.6: ExternalPayloadError), found while binding parts, before
    # P-Mode matching and WS-Security
    # 2: Domibus 5.1.6 request root part (attachment lost in the capture)
    dict(row=2, file=CORPUS + 'Basic-Data-Infrastructure_BDI-event-choreography-Edelivery/'
         'README.md.reconstructed/request-envelope.xml', expect='EBMS:0011', party=NOBODY,
         signing='never', encryption='never', at='2025-02-08T17:45:26.000Z',
         mid='7a491929-e644-11ef-a945-0242ac130004@domibus.eu',
         reason='no MIME part for its cid'),
    # 19: Domibus signed (SKI) + encrypted envelope without its attachment
    dict(row=19, file=DOMIBUS + 'Domibus-MSH-test/src/main/resources/dataset/as4/SoapRequest.xml',
         expect='EBMS:0011', party=NOBODY, signing='never', encryption='never',
         at='2017-12-05T11:02:30.000Z',
         mid='a9a491d9-d770-4a6e-a23f-eebdbd229558@domibus.eu',
         reason='no MIME part for its cid'),
    # 100: Holodeck (BRZ Peppol pilot) envelope without its attachment; the
    # file starts with phase4's licence comment before the XML declaration
    # (not well-formed), so extracted/envelope.xml (the stripped copy) is sent
    dict(row=100, file=PHASE4 + 'phase4-test/src/test/resources/unused/holodeck/from-holodeck-1.xml',
         prepare='extracted-envelope',
         expect='EBMS:0011', party=NOBODY, signing='never', encryption='never',
         at='2017-01-10T13:46:53.701Z',
         mid='1d2726f5-e0f2-4a7d-b984-d073d630df29@PC65063.brzg.local',
         reason='no MIME part for its cid'),
    # 144: Flame envelope, both attachments absent; like row 101 its eb:Service
    # SRV_SIMPLE_ONEWAY is untyped and not a URI, which is found first ->
    # EBMS:0003 (ebMS3 Core 5.2.2.8)
    dict(row=144, file=AS4NET + 'UnitTests/Resources/as4_flame_envelope.as4',
         expect='EBMS:0003', party=NOBODY, signing='never', encryption='never',
         at='2017-06-02T14:56:16.048Z',
         mid='b495f1e1-ef0f-4da3-a311-0f5ab6ab27a9@mindertestbed.org',
         reason='eb:Service has no type'),
    # 3: CEF spec example (FAIL (SignatureValue), attachment absent)
    dict(row=3, file=CORPUS + 'OxalisCommunity_Oxalis-AS4/src/test/resources/eDeliveryAS4-example.xml',
         expect='EBMS:0011', party=NOBODY, signing='never', encryption='never',
         at='2017-10-24T09:07:36.000Z',
         mid='8196c8e2-820f-4aec-a1ca-288a4d1d4020@seller.eu',
         reason='no MIME part for its cid'),

    # ---- signals: the README marks them OK / NEGATIVE by their signature, ----
    # but this gateway receives pushed UserMessages only: a signal is
    # refused with EBMS:0004 (ebMS3 Core 6.7.1 "Other") before WS-Security
    # 1: Domibus 5.1.6 signed NRR Receipt (OK)
    dict(row=1, file=CORPUS + 'Basic-Data-Infrastructure_BDI-event-choreography-Edelivery/'
         'README.md.reconstructed/receipt-envelope.xml', expect='EBMS:0004', party=NOBODY,
         signing='never', encryption='never', at='2025-02-08T17:45:28.000Z',
         reason='receipts are not accepted'),
    # 76, 78, 79: real Peppol NRR Receipts (OK); 77: the edited one (NEGATIVE)
    dict(row=76, file=PHASE4 + 'phase4-peppol-client/src/test/resources/external/verify/'
         'dataport1-mustunderstand.as4in', expect='EBMS:0004', party=NOBODY,
         signing='never', encryption='never', at='2022-03-07T16:36:50.994Z',
         reason='receipts are not accepted'),
    dict(row=77, file=PHASE4 + 'phase4-peppol-client/src/test/resources/external/verify/dataport1.as4in',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2022-03-07T16:36:50.994Z',
         reason='receipts are not accepted'),
    dict(row=78, file=PHASE4 + 'phase4-peppol-client/src/test/resources/external/verify/governikus.as4in',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2022-03-07T17:41:28.705Z',
         reason='receipts are not accepted'),
    dict(row=79, file=PHASE4 + 'phase4-peppol-client/src/test/resources/external/verify/helger.as4in',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2022-03-07T17:36:50.173Z',
         reason='receipts are not accepted'),
    # 87: phase4 signed Receipt, SOAP 1.2 (OK)
    dict(row=87, file=PHASE4 + 'phase4-test/src/test/resources/testfiles/TestReceipt12.xml',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2025-12-05T14:03:40.878Z',
         reason='receipts are not accepted'),
    # 105: Receipt with invalid signature (NEGATIVE)
    dict(row=105, file=AS4NET + 'ComponentTests/Resources/receipt_with_invalid_signature.as4',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2017-03-01T16:18:23.462Z',
         reason='receipts are not accepted'),
    # 122: Receipt with a wrong ebbp namespace (NEGATIVE)
    dict(row=122, file=AS4NET + 'UnitTests/Resources/Receipt_InvalidNRI_Namespace.as4',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2017-09-28T12:40:29.711Z',
         reason='receipts are not accepted'),
    # 128: signed Error signal, multihop (OK)
    dict(row=128, file=AS4NET + 'UnitTests/Resources/as4-multihop-message.as4',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2016-11-18T09:56:25Z',
         reason='error signals are not accepted'),
    # 135: signed PullRequest (OK); 141: PullRequest, invalid signature (NEGATIVE)
    dict(row=135, file=AS4NET + 'UnitTests/Resources/as4-soap-signed-pullrequest.xml',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2017-06-12T11:50:36.0562182Z',
         reason='pull requests are not served'),
    dict(row=141, file=AS4NET + 'UnitTests/Resources/as4-soap-wrong-signed-pullrequest.xml',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2017-06-12T11:50:36.0562182Z',
         reason='pull requests are not served'),

    # ---- SOAP 1.1: the AS4 profile (2.1) requires SOAP 1.2 -> VersionMismatch
    # 93: signed UserMessage, SOAP 1.1 (OK)
    dict(row=93, file=PHASE4 + 'phase4-test/src/test/resources/unused/TestMessage11.xml',
         expect='fault VersionMismatch', party=NOBODY, signing='never', encryption='never',
         at='2006-07-25T12:19:05',
         reason='only SOAP 1.2'),
    # 86: signed Receipt, SOAP 1.1 (OK); the "bundled" UserMessage is the copy
    # inside eb:Receipt, so this is a signal: EBMS:0004 (the header is read
    # before the SOAP version is refused)
    dict(row=86, file=PHASE4 + 'phase4-test/src/test/resources/testfiles/TestReceipt11.xml',
         expect='EBMS:0004', party=NOBODY, signing='never', encryption='never',
         at='2017-06-13T13:36:35.320',
         reason='receipts are not accepted'),
    # 80: UserMessage without wsse:Security (NEGATIVE for signed P-Modes);
    # SOAP 1.1, so refused before any P-Mode could require a signature
    dict(row=80, file=PHASE4 + 'phase4-test/src/test/resources/UserMessageWithoutWSSE.xml',
         expect='fault VersionMismatch', party=NOBODY, signing='never', encryption='never',
         at='2006-07-25T12:19:05',
         reason='only SOAP 1.2'),
]


def case_id(c):
    return f"row{c['row']}-{c.get('variant') or os.path.basename(c['file'])}"


def key(sha, private=False):
    return shared_path(f"corpus/keys/{sha}{'.key' if private else ''}.pem")


def esc(s):
    return (s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')
            .replace('"', '&quot;'))


def attr(name, value):
    return f' {name}="{esc(value)}"' if value else ''


def leg_xml(c):
    """The P-Mode leg written for this case's sender."""
    p = c['party']
    agr = ''
    if p['agreement']:
        agr = f"<agreement{attr('type', p['agreement_type'])}>{esc(p['agreement'])}</agreement>"
    sec = ''
    if c.get('signer'):
        sec += f"<signer><certificate>{key(c['signer'])}</certificate></signer>"
        sec += '<trust>' + ''.join(f'<anchor>{key(a)}</anchor>' for a in c['anchors']) + '</trust>'
    if c.get('decrypt'):
        sec += (f"<decryption><certificate>{key(c['decrypt'])}</certificate>"
                f"<key>{key(c['decrypt'], private=True)}</key></decryption>")
    return f'''
  <pmode id="{esc(c.get('pmode') or 'corpus-leg')}">{agr}
    <from{attr('role', p['frm_role'])}><partyId{attr('type', p['frm_type'])}>{esc(p['frm'])}</partyId></from>
    <to{attr('role', p['to_role'])}><partyId{attr('type', p['to_type'])}>{esc(p['to'])}</partyId></to>
    <service{attr('type', p['service_type'])}>{esc(p['service'])}</service>
    <action>{esc(p['action'])}</action>
    <security signing="{c['signing']}" encryption="{c['encryption']}">{sec}</security>
    <receipt nonRepudiation="true"/>
  </pmode>'''


def sendable(c, tmp_path):
    """The file to replay: the corpus file itself, or a copy made sendable in
    the test's temp dir (never in the source tree)."""
    path = shared_path(c['file'])
    if c.get('prepare') == 'extracted-envelope':
        return os.path.join(extracted_dir(c), 'envelope.xml')
    if c.get('prepare') != 'unescape-csharp':
        return path
    with open(path, 'rb') as f:
        data = f.read()
    if data.startswith(b'\xef\xbb\xbf'):
        data = data[3:]
    data = data.replace(b'\\r\\n', b'\r\n').replace(b'\\"', b'"')
    out = tmp_path / 'unescaped.as4'
    out.write_bytes(data)
    return str(out)


def replay(gw, path, *extra):
    """`as4gw replay --verbose`: (rc, status line, answer bytes, stderr)."""
    out = subprocess.run([BIN, 'replay', '--url', gw.url, '--verbose', *extra, path],
                         capture_output=True, timeout=120)
    first, _, body = out.stdout.partition(b'\n')
    return (out.returncode, first.decode('utf-8', 'replace'), body,
            out.stderr.decode('utf-8', 'replace'))


def request_lines(gw):
    return [ln for ln in gw.log_lines() if ln.get('event') == 'request']


def diag(gw):
    """The gateway's request log lines (error / detail), for assertion text."""
    return '\n'.join(json.dumps(ln) for ln in request_lines(gw)) or gw.logtext()[-3000:]


def extracted_dir(c):
    return shared_path(c['file'].replace('corpus/messages/', 'corpus/extracted/'))


def ground_truth(c, cid, kind):
    """Bytes the gateway must store for attachment cid (the corpus file names
    carry a possibly truncated Content-ID)."""
    d = extracted_dir(c)
    prefix = {'decrypted-gunzipped': 'decrypted-gunzipped-', 'decrypted': 'decrypted-',
              'raw': 'att-', 'gunzip-raw': 'att-'}[kind]
    found = []
    for name in os.listdir(d):
        if not name.startswith(prefix) or not name.endswith('.bin'):
            continue
        if kind == 'decrypted' and name.startswith('decrypted-gunzipped-'):
            continue
        stem = name[len(prefix):-4]
        if prefix == 'att-':
            stem = stem.split('-', 1)[1]
        if cid.startswith(stem):
            found.append(name)
    assert len(found) == 1, (cid, kind, found)
    with open(os.path.join(d, found[0]), 'rb') as f:
        data = f.read()
    return gzip.decompress(data) if kind == 'gunzip-raw' else data


def signed_references(c):
    """{URI: DigestValue} of the message's own ds:SignedInfo (from extracted/)."""
    env = ET.parse(os.path.join(extracted_dir(c), 'envelope.xml')).getroot()
    sig = env.find('S12:Header/wsse:Security/ds:Signature', NS)
    if sig is None:
        return {}
    return {r.get('URI'): r.find('ds:DigestValue', NS).text.strip()
            for r in sig.findall('ds:SignedInfo/ds:Reference', NS)}


def receipt_references(body):
    doc = ET.fromstring(body)
    nri = doc.find('.//eb:Receipt/ebbp:NonRepudiationInformation', NS)
    if nri is None:
        return None
    return {r.get('URI'): r.find('ds:DigestValue', NS).text.strip()
            for r in nri.findall('ebbp:MessagePartNRInformation/ds:Reference', NS)}


def start_gateway(gateway_factory, c):
    legs = leg_xml(c)
    gw = gateway_factory(legs=legs,
                         extra_gateway=f"<replay><verifyAt>{c['at']}</verifyAt></replay>")
    return gw.start()


POSITIVES = [c for c in CASES if c['expect'] == 'receipt']
NEGATIVES = [c for c in CASES if c['expect'] != 'receipt']


@pytest.mark.parametrize('c', POSITIVES, ids=[case_id(c) for c in POSITIVES])
def test_recorded_message_accepted(gateway_factory, tmp_path, c):
    gw = start_gateway(gateway_factory, c)
    path = sendable(c, tmp_path)
    mid = c['mid']

    rc, line, body, err = replay(gw, path, '--expect', 'receipt')
    assert rc == 0 and f'HTTP 200 receipt ref={mid}' in line, (line, err, diag(gw))
    logged = [ln for ln in request_lines(gw) if ln.get('message_id') == mid]
    assert [ln.get('outcome') for ln in logged] == ['new'], diag(gw)
    assert logged[0].get('pmode') == c['pmode'], diag(gw)

    assert as4msg.Answer(200, {}, body).signed, 'the Receipt is not signed by the gateway'

    # NRR for signed messages: one MessagePartNRInformation per ds:Reference
    # of the message, URI and DigestValue copied (AS4 profile 5.1.8)
    refs = signed_references(c)
    got = receipt_references(body)
    if refs:
        assert got == refs, (got, refs)
    else:
        assert got is None, 'unsigned message answered with an NRR receipt'

    # one inbox row, one delivery row, payloads byte-identical to the truth
    n = len(c['payloads'])
    assert gw.store.counts(mid) == (1, n, 1), diag(gw)
    rows = gw.store.query('SELECT content_id, content FROM payload WHERE message_id = ? '
                          'ORDER BY part_no', mid)
    assert sorted(r[0] for r in rows) == sorted(c['payloads']), rows
    for cid, content in rows:
        truth = ground_truth(c, cid, c['payloads'][cid])
        assert bytes(content) == truth, (
            f'{cid}: stored {len(bytes(content))} bytes, ground truth {len(truth)} bytes')
    stored = bytes(gw.store.query('SELECT receipt FROM inbox WHERE message_id = ?', mid)[0][0])
    assert body.rstrip(b'\n') == stored.rstrip(b'\n')

    # the retry of the recorded bytes: the same Receipt, nothing new stored
    rc2, line2, body2, err2 = replay(gw, path, '--expect', 'receipt')
    assert rc2 == 0 and f'receipt ref={mid}' in line2, (line2, err2, diag(gw))
    assert body2 == body
    assert gw.store.counts(mid) == (1, n, 1)
    assert gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


@pytest.mark.parametrize('c', NEGATIVES, ids=[case_id(c) for c in NEGATIVES])
def test_recorded_message_refused(gateway_factory, tmp_path, c):
    gw = start_gateway(gateway_factory, c)
    path = sendable(c, tmp_path)
    fault = c['expect'].startswith('fault ')

    rc, line, body, err = replay(gw, path, '--expect', 'fault' if fault else 'error')
    assert rc == 0, (line, err, body[:2000], diag(gw))
    if fault:
        assert line.endswith(c['expect']), (line, diag(gw))
    else:
        assert re.search(r'HTTP 200 error ' + re.escape(c['expect']) + r'\b', line), \
            (line, diag(gw))
    assert gw.store.totals() == (0, 0, 0)

    logged = request_lines(gw)
    assert len(logged) == 1 and logged[0].get('outcome') == 'error', diag(gw)
    if not fault:
        assert logged[0].get('ebms_code') == c['expect'], diag(gw)
    if c.get('reason'):
        assert c['reason'] in (logged[0].get('error') or ''), diag(gw)
    if c.get('mid'):
        assert logged[0].get('message_id') == c['mid'], diag(gw)
    if c.get('matched'):
        # refused by WS-Security / decompression under the leg written for
        # the sender, not by P-Mode matching
        assert logged[0].get('pmode') == c['pmode'], diag(gw)


def test_table_rows_are_unique():
    """Each README row appears once (a second entry must name its variant)."""
    seen = [(c['row'], c.get('variant')) for c in CASES]
    assert len(seen) == len(set(seen))
    assert all(c['at'] for c in CASES)
