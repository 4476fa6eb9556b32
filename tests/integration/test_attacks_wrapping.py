"""Generated attacks on what the signature covers (issue 3; NEGATIVE-CASES
28-36): unsigned or partly signed messages, signature wrapping, duplicate
Ids, references outside the message and transforms that must not run, and
XPointer escapes in "#id" references (issue 10 item 8).

Every test runs on SQLite and PostgreSQL and on both sides of the spool
threshold (in memory, and with every body spooled: attacklib.py, issue 14),
with the same answers; the fixtures and helpers are attacklib.py's.
"""
import os
import re
import sys
import time

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        sys.stderr.write(f'\nSKIPPED (loudly): {__name__} needs python3-{_module}\n')
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import attacklib as al  # noqa: E402  (al.post: test_attacks_2_0 wraps it)
import tamper  # noqa: E402
from conftest import new_id  # noqa: E402
from attacklib import (  # noqa: E402
    accepted, edit, last_request_log, message_id, refused, resigned, totals)
from tamper import attr, element, once  # noqa: E402


# ---- signatures: policy (28-30) ---------------------------------------------

@pytest.mark.parametrize('how', ['security-header-stripped', 'never-signed'])
def test_28_unsigned_message_to_signing_leg(agw, make, how):
    """NEGATIVE-CASES 28 -> EBMS:0103."""
    if how == 'never-signed':
        msg = make(signer=None)
    else:
        msg = edit(make(), lambda e: once(e, element(e, 'wsse:Security'), ''))
    refused(agw, msg, 'EBMS:0103', message_id(msg))


@pytest.mark.parametrize('resign', [True, False], ids=['re-signed', 'signature-broken'])
def test_29_signature_not_covering_messaging(agw, make, pki, resign):
    """NEGATIVE-CASES 29 -> EBMS:0103.  Coverage is decided before any
    cryptography (wss_inbound.c), so a valid signature over less and a
    signature broken by the removal get the same answer."""
    msg = make()
    drop = lambda e: once(e, tamper.messaging_ref(e), '')
    bad = resigned(msg, drop, pki / 'sender.key') if resign else edit(msg, drop)
    refused(agw, bad, 'EBMS:0103', message_id(msg))


@pytest.mark.parametrize('resign', [True, False], ids=['re-signed', 'signature-broken'])
def test_30_signature_not_covering_one_payload(agw, make, pki, resign):
    """NEGATIVE-CASES 30 -> EBMS:0103 (two payloads, the second not signed)."""
    msg = make(payloads=[(b'<a>1</a>', 'application/xml'), (os.urandom(300), 'image/png')])
    drop = lambda e: once(e, tamper.reference(e, 'cid:part-2@'), '')
    bad = resigned(msg, drop, pki / 'sender.key') if resign else edit(msg, drop)
    refused(agw, bad, 'EBMS:0103', message_id(msg))


def test_resigning_alone_is_accepted(fresh_gw, make, pki):
    """Control for every re-signed attack: tamper.resign() on an untouched
    message yields a signature the gateway accepts."""
    msg = make(payloads=[(b'<a>1</a>', 'application/xml'), (os.urandom(300), 'image/png')])
    again = resigned(msg, lambda e: e, pki / 'sender.key')
    assert again.envelope == msg.envelope   # RSA PKCS#1 v1.5 is deterministic
    ans = accepted(fresh_gw, again)
    assert fresh_gw.store.counts(message_id(msg)) == (1, 2, 1), ans


# ---- signature wrapping (31-33) ---------------------------------------------

@pytest.mark.parametrize('new_body', [
    '<env:Body><x:Evil xmlns:x="urn:as4gw-test:evil">pay me</x:Evil></env:Body>',
    '<env:Body wsu:Id="body-forged"/>',
], ids=['unnamed-body', 'other-id'])
def test_31_xsw_signed_body_wrapped(agw, make, new_body):
    """NEGATIVE-CASES 31 -> EBMS:0101: the signed Body (its digest still
    right) in a header wrapper, another Body in its place."""
    msg = make()

    def wrap(e):
        body = element(e, 'env:Body')
        e = once(e, body, new_body)
        return tamper.wrap_in_header(e, body)
    refused(agw, edit(msg, wrap), 'EBMS:0101', message_id(msg))


@pytest.mark.parametrize('target', ['messaging', 'body'])
@pytest.mark.parametrize('id_attr', ['wsu:Id', 'Id', 'xml:id', 'ID'])
def test_32_duplicate_id_forged_copy_first(agw, make, target, id_attr):
    """NEGATIVE-CASES 32 -> EBMS:0101: a forged element carrying the signed
    element's Id value (as wsu:Id, Id, xml:id or ID; issue 3 item 1),
    placed before it in document order."""
    msg = make()
    e = msg.envelope
    real = element(e, 'eb:Messaging' if target == 'messaging' else 'env:Body')
    ident = attr(real, 'wsu:Id')
    forged = real.replace(f'wsu:Id="{ident}"', f'{id_attr}="{ident}"')
    if target == 'messaging':
        forged = forged.replace('urn:as4gw:dev:sender', 'urn:as4gw:dev:mallory')
    else:
        forged = forged.replace('/>', '><x:Pay xmlns:x="urn:as4gw-test:evil"/></env:Body>')
    assert forged != real
    refused(agw, edit(msg, lambda t: tamper.wrap_in_header(t, forged)), 'EBMS:0101',
            message_id(msg))


@pytest.mark.parametrize('forged_id', [None, 'messaging-forged'], ids=['no-id', 'other-id'])
def test_33_forged_messaging_in_place_signed_one_wrapped(agw, make, forged_id):
    """NEGATIVE-CASES 33 -> EBMS:0101: the signed eb:Messaging in a header
    wrapper, a forged one (other MessageId and payload claim) in its place."""
    msg = make()
    e = msg.envelope
    real = element(e, 'eb:Messaging')
    ident = attr(real, 'wsu:Id')
    forged_mid = new_id()
    forged = real.replace(message_id(msg), forged_mid)
    forged = forged.replace(f' wsu:Id="{ident}"',
                            f' wsu:Id="{forged_id}"' if forged_id else '')
    e = once(e, real, forged)
    e = tamper.wrap_in_header(e, real)
    refused(agw, edit(msg, lambda _: e), 'EBMS:0101', forged_mid)


# ---- references and transforms that must not run (34-36) -------------------

@pytest.mark.parametrize('kind', ['http', 'https', 'file', 'xpointer-id', 'xpointer-root',
                                  'cid-xpointer', 'empty', 'keyinfo-http',
                                  'cipher-reference-http'])
def test_34_reference_uri_outside_the_message(agw, make, pki, tmp_path, kind):
    """NEGATIVE-CASES 34 -> EBMS:0101/0103, with no connection made (a
    listener on 127.0.0.1 counts them) and no file opened (the file: URI
    names a FIFO: opening it for reading would block until a writer comes,
    and a reader present makes a non-blocking writer open succeed)."""
    fifo = tmp_path / 'fifo'
    os.mkfifo(fifo)
    codes = ('EBMS:0101', 'EBMS:0103')
    before = totals(agw)
    with tamper.Listener() as lis:
        if kind == 'cipher-reference-http':
            msg = make(encrypt_to=pki / 'gateway.crt')
            codes = ('EBMS:0102', 'EBMS:0103')
            bad = edit(msg, lambda e: once(e, 'CipherReference URI="cid:part-1@as4gw-test"',
                                           f'CipherReference URI="{lis.url}part"'))
        elif kind == 'keyinfo-http':
            msg = make()
            bad = edit(msg, lambda e: re.sub(r'(<wsse:Reference URI=")#X509-[^"]*',
                                             lambda m: m.group(1) + lis.url + 'cert', e))
        else:
            msg = make()
            ref = tamper.messaging_ref(msg.envelope)
            target = ref if kind != 'cid-xpointer' else tamper.reference(msg.envelope, 'cid:')
            old = attr(target, 'URI')
            new = {'http': lis.url + 'x', 'https': f'https://127.0.0.1:{lis.port}/x',
                   'file': f'file://{fifo}', 'xpointer-id': f"#xpointer(id('{old[1:]}'))",
                   'xpointer-root': '#xpointer(/)', 'cid-xpointer': old + '#xpointer(/)',
                   'empty': ''}[kind]
            bad = edit(msg, lambda e: once(e, f'URI="{old}"', f'URI="{new}"'))
        try:
            ans = al.post(agw, bad, timeout=10)
        except OSError as e:   # no answer: blocked opening the FIFO?
            ans = e
        try:   # a reader on the FIFO (the gateway opened the file)?  This
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)   # also unblocks it
            os.close(fd)
            opened = True
        except OSError:
            opened = False
        assert not opened, f'the gateway opened {fifo}'
        assert not isinstance(ans, OSError), f'no answer: {ans}'
        assert ans.status == 200 and ans.error_code in codes, f'{ans!r}\n{last_request_log(agw)}'
        assert ans.signed
        time.sleep(0.1)
        assert lis.connections == 0, 'the gateway connected to the reference URI'
    assert totals(agw) == before


def _xslt_bomb(url):
    return (f'<xsl:stylesheet xmlns:xsl="http://www.w3.org/1999/XSL/Transform" version="1.0">'
            f'<xsl:template match="/"><xsl:copy-of select="document(\'{url}xslt\')"/>'
            '<xsl:call-template name="r"/></xsl:template>'
            '<xsl:template name="r"><xsl:call-template name="r"/><xsl:call-template name="r"/>'
            '</xsl:template></xsl:stylesheet>')


@pytest.mark.parametrize('kind', ['xpath', 'xpath-filter2', 'xslt-bomb', 'enveloped-signature',
                                  'base64'])
def test_35_forbidden_transforms_not_run(agw, make, kind):
    """NEGATIVE-CASES 35 -> EBMS:0103 quickly (the gateway's own time in its
    log line under 1 s), nothing executed (the XSLT would fetch from the
    listener and recurse without end)."""
    msg = make()
    with tamper.Listener() as lis:
        t = {
            'xpath': f'<ds:Transform Algorithm="{tamper.XPATH}"><ds:XPath>'
                     f'count(//. | //@* | //namespace::*) &gt; 0</ds:XPath></ds:Transform>',
            'xpath-filter2': f'<ds:Transform Algorithm="{tamper.XPATH_FILTER2}">'
                             '<f:XPath xmlns:f="http://www.w3.org/2002/06/xmldsig-filter2" '
                             'Filter="union">/</f:XPath></ds:Transform>',
            'xslt-bomb': f'<ds:Transform Algorithm="{tamper.XSLT}">{_xslt_bomb(lis.url)}'
                         '</ds:Transform>',
            'enveloped-signature': f'<ds:Transform Algorithm="{tamper.ENVELOPED}"/>',
            'base64': '<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#base64"/>',
        }[kind]

        def add(e):
            ref = tamper.messaging_ref(e)
            return once(e, ref, ref.replace('<ds:Transforms>', '<ds:Transforms>' + t))
        refused(agw, edit(msg, add), 'EBMS:0103', message_id(msg))
        assert last_request_log(agw)['ms'] < 1000, last_request_log(agw)
        time.sleep(0.1)
        assert lis.connections == 0


@pytest.mark.parametrize('kind', ['6-transforms', '31-references', '2000-references'])
def test_36_too_many_transforms_or_references(agw, make, kind):
    """NEGATIVE-CASES 36 -> EBMS:0103 (limits 5 and 30), for that reason."""
    msg = make()

    def more(e):
        if kind == '6-transforms':
            ref = tamper.messaging_ref(e)
            t = f'<ds:Transform Algorithm="{tamper.EXC_C14N}"/>'
            return once(e, ref, ref.replace(t, t * 6))
        n = int(kind.split('-')[0]) - len(tamper.references(e))
        return tamper.add_reference(e, tamper.body_ref(e) * n)
    refused(agw, edit(msg, more), 'EBMS:0103', message_id(msg))
    assert last_request_log(agw)['ms'] < 1000, last_request_log(agw)
    assert 'too many' in last_request_log(agw).get('error', ''), last_request_log(agw)



def test_id_reference_with_caret_refused(agw, make, pki):
    """Issue 10 item 8: an Id with '^' (XPointer's escape: xmlsec reads
    "#a^^b" as id('a^b') while the coverage check looks up "a^^b") named by
    a re-signed, otherwise valid reference -> EBMS:0103: "#id" references
    are "#" + NCName only."""
    msg = make()
    body_id = attr(element(msg.envelope, 'env:Body'), 'wsu:Id')

    def caret(e):
        e = once(e, f'wsu:Id="{body_id}"', 'wsu:Id="body^^1"')
        return once(e, f'URI="#{body_id}"', 'URI="#body^^1"')
    refused(agw, resigned(msg, caret, pki / 'sender.key'), 'EBMS:0103', message_id(msg))
