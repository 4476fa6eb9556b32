"""Independent AS4 message builder and answer reader for the integration tests.

Written from the specs (ebMS3 Core 5, AS4 profile 5.1.2), not from the gateway's
code, so the tests do not share the gateway's mistakes.
"""
import datetime
import uuid
import xml.etree.ElementTree as ET

NS = {
    'S12': 'http://www.w3.org/2003/05/soap-envelope',
    'S11': 'http://schemas.xmlsoap.org/soap/envelope/',
    'eb': 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/',
    'wsse': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd',
    'wsu': 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd',
    'ds': 'http://www.w3.org/2000/09/xmldsig#',
}
ROLE_INIT = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/initiator'
ROLE_RESP = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/responder'

# The eb:Timestamp of every envelope built in this test run: fresh (the
# gateway refuses a message older than its retention minus an hour, README
# "Message age") and the same for all, so a message built twice is the same
# bytes, as with the fixed stamp this used to be.
SESSION_TS = datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.000Z')

DEV = dict(frm='urn:as4gw:dev:sender', to='urn:as4gw:dev:gateway',
           service='urn:as4gw:dev:service', action='urn:as4gw:dev:Deliver')


def esc(s):
    return (s.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')
            .replace('"', '&quot;'))


def envelope(message_id, frm=DEV['frm'], to=DEV['to'], service=DEV['service'],
             action=DEV['action'], cids=('payload-1@as4gw-test',), agreement=None,
             conversation='conv-1', extra_header='', props=None, timestamp=None,
             party_type=None, service_type=None, part_props=()):
    """A SOAP 1.2 envelope with one eb:UserMessage referencing cids.  props:
    (name, value) or (name, value, type) MessageProperties; part_props:
    (name, value) added to every PartInfo after MimeType."""
    ts = timestamp or SESSION_TS
    ptype = f' type="{esc(party_type)}"' if party_type else ''
    stype = f' type="{esc(service_type)}"' if service_type else ''
    parts = ''.join(
        f'<eb:PartInfo href="cid:{esc(c)}"><eb:PartProperties>'
        f'<eb:Property name="MimeType">application/xml</eb:Property>' +
        ''.join(f'<eb:Property name="{esc(k)}">{esc(v)}</eb:Property>'
                for k, v in part_props) +
        '</eb:PartProperties></eb:PartInfo>' for c in cids)
    agr = f'<eb:AgreementRef>{esc(agreement)}</eb:AgreementRef>' if agreement else ''
    mprops = ''
    if props:
        mprops = '<eb:MessageProperties>' + ''.join(
            f'<eb:Property name="{esc(p[0])}"'
            + (f' type="{esc(p[2])}"' if len(p) > 2 and p[2] is not None else '')
            + f'>{esc(p[1])}</eb:Property>' for p in props) + \
            '</eb:MessageProperties>'
    payload_info = f'<eb:PayloadInfo>{parts}</eb:PayloadInfo>' if cids else ''
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<S12:Envelope xmlns:S12="{NS["S12"]}" xmlns:eb="{NS["eb"]}" xmlns:wsu="{NS["wsu"]}">'
        f'<S12:Header>{extra_header}<eb:Messaging S12:mustUnderstand="true" wsu:Id="msg-1">'
        '<eb:UserMessage><eb:MessageInfo>'
        f'<eb:Timestamp>{ts}</eb:Timestamp><eb:MessageId>{esc(message_id)}</eb:MessageId>'
        '</eb:MessageInfo><eb:PartyInfo>'
        f'<eb:From><eb:PartyId{ptype}>{esc(frm)}</eb:PartyId><eb:Role>{ROLE_INIT}</eb:Role></eb:From>'
        f'<eb:To><eb:PartyId{ptype}>{esc(to)}</eb:PartyId><eb:Role>{ROLE_RESP}</eb:Role></eb:To>'
        '</eb:PartyInfo><eb:CollaborationInfo>'
        f'{agr}<eb:Service{stype}>{esc(service)}</eb:Service><eb:Action>{esc(action)}</eb:Action>'
        f'<eb:ConversationId>{esc(conversation)}</eb:ConversationId>'
        f'</eb:CollaborationInfo>{mprops}{payload_info}</eb:UserMessage></eb:Messaging>'
        '</S12:Header><S12:Body wsu:Id="body-1"/></S12:Envelope>')


def multipart(root, attachments, boundary=None, start=True):
    """(content_type, body) for a multipart/related message; attachments are
    (content_id, media_type, bytes)."""
    b = boundary or ('MIME_' + uuid.uuid4().hex)
    out = [f'--{b}\r\nContent-Type: application/soap+xml; charset=UTF-8\r\n'
           'Content-ID: <root@as4gw-test>\r\n\r\n'.encode(), root.encode()
           if isinstance(root, str) else root]
    for cid, mtype, data in attachments:
        out.append(f'\r\n--{b}\r\nContent-Type: {mtype}\r\nContent-Transfer-Encoding: binary\r\n'
                   f'Content-ID: <{cid}>\r\n\r\n'.encode())
        out.append(data)
    out.append(f'\r\n--{b}--\r\n'.encode())
    ct = f'multipart/related; boundary="{b}"; type="application/soap+xml"'
    if start:
        ct += '; start="<root@as4gw-test>"'
    return ct, b''.join(out)


def user_message(message_id, payload=b'<Invoice>1</Invoice>', cid='payload-1@as4gw-test',
                 **kw):
    """A complete one-payload push: (content_type, body)."""
    return multipart(envelope(message_id, cids=(cid,), **kw),
                     [(cid, 'application/xml', payload)])


class Answer:
    """An HTTP answer from the gateway, with the ebMS signal decoded."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        self.doc = None
        try:
            self.doc = ET.fromstring(body)
        except ET.ParseError:
            pass

    def _find(self, path):
        return None if self.doc is None else self.doc.find(path, NS)

    @property
    def is_receipt(self):
        return self._find('.//eb:SignalMessage/eb:Receipt') is not None

    @property
    def ref_to(self):
        e = self._find('.//eb:SignalMessage/eb:MessageInfo/eb:RefToMessageId')
        return None if e is None else e.text

    @property
    def error_code(self):
        e = self._find('.//eb:SignalMessage/eb:Error')
        return None if e is None else e.get('errorCode')

    @property
    def error_detail(self):
        """The eb:ErrorDetail text of the eb:Error, or None without one."""
        e = self._find('.//eb:SignalMessage/eb:Error/eb:ErrorDetail')
        return None if e is None else e.text

    @property
    def fault_code(self):
        e = self._find('.//S12:Body/S12:Fault/S12:Code/S12:Value')
        return None if e is None else e.text.split(':')[-1]

    @property
    def signed(self):
        return self._find('.//S12:Header/wsse:Security/ds:Signature') is not None

    def __repr__(self):
        return f'<Answer {self.status} {self.body[:300]!r}>'
