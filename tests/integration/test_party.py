"""Party identity over HTTP (issue 10 items 1 and 9), on SQLite and PostgreSQL.

ebMS3 Core 5.2.2.4: all the PartyIds of one eb:From (eb:To) identify one
party.  A leg lists the PartyIds of its parties; a message matches it only
when EVERY one of its From (To) PartyIds is listed.  A partner signing with
its own key cannot add another party's PartyId to borrow its identity
(EBMS:0101), To cannot name a party the sender has no leg for (EBMS:0010),
two legs a message could both match refuse it unless AgreementRef/@pmode
names one, and what is recorded (inbox row, JSON log line, message.json,
AS4GW_FROM) is the leg's canonical party (its first partyId), never the
message's first PartyId.

Signed messages come from `as4gw push --sign --save-request`; their eb:From
is edited as text and signed again with the sender's own key
(tamper.resign), so the signature is valid and only the party rule can
refuse them.
"""
import json
import os
import subprocess

import pytest

import as4msg
import tamper
from conftest import BIN, free_port, new_id, run_as4gw, write_config
from tamper import Message, once

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
PTYPE = 'urn:as4gw:test:party-type'
SENDER = 'urn:as4gw:dev:sender'           # party B: the dev PKI's sender key
SENDER_ALIAS = 'sender-alias'             # B's second PartyId (typed)
PARTY_A = 'urn:as4gw:test:party-a'        # party A: signs with another key
PARTY_C = 'urn:as4gw:test:party-c'        # party C: unsigned leg
GATEWAY = 'urn:as4gw:dev:gateway'
SERVICE = 'urn:as4gw:dev:service'
ACTION = 'urn:as4gw:test:Party'
ROUTE = 'urn:as4gw:test:Route'
AGREEMENT = 'urn:as4gw:test:agreement'
TO = (f'<to role="{ROLE}responder"><partyId>{GATEWAY}</partyId>'
      f'<partyId type="{PTYPE}">gw</partyId></to>')
SIGNED_BY = ('<security signing="required"><signer><certificate>{pki}/%s.crt'
             '</certificate></signer><trust><anchor>{pki}/ca.crt</anchor></trust>'
             '</security>')

LEGS = f'''
  <pmode id="b-signed">
    <from role="{ROLE}initiator"><partyId>{SENDER}</partyId><partyId type="{PTYPE}">{SENDER_ALIAS}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ACTION}</action>
    {SIGNED_BY % 'sender'}
  </pmode>
  <pmode id="c-open">
    <from role="{ROLE}initiator"><partyId>{PARTY_C}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ACTION}</action>
    <security signing="never" encryption="never"/>
  </pmode>
  <pmode id="a-signed">
    <from role="{ROLE}initiator"><partyId>{PARTY_A}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ACTION}</action>
    {SIGNED_BY % 'gateway'}
  </pmode>
  <pmode id="a-route">
    <agreement>{AGREEMENT}</agreement>
    <from role="{ROLE}initiator"><partyId>{PARTY_A}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ROUTE}</action>
    {SIGNED_BY % 'gateway'}
  </pmode>
  <pmode id="r1">
    <agreement>{AGREEMENT}</agreement>
    <from role="{ROLE}initiator"><partyId>{SENDER}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ROUTE}</action>
    <security signing="never" encryption="never"/>
  </pmode>
'''
# a second leg on r1's route, told apart by AgreementRef/@pmode only (item 9;
# bb574aa refused to load it)
R2_LEG = f'''
  <pmode id="r2">
    <agreement>{AGREEMENT}</agreement>
    <from role="{ROLE}initiator"><partyId>{SENDER}</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ROUTE}</action>
    <security signing="never" encryption="never"/>
    <receipt nonRepudiation="false"/>
  </pmode>
'''
# another unsigned party on C's route
D_LEG = f'''
  <pmode id="d-open">
    <from role="{ROLE}initiator"><partyId>urn:as4gw:test:party-d</partyId></from>
    {TO}
    <service>{SERVICE}</service><action>{ACTION}</action>
    <security signing="never" encryption="never"/>
  </pmode>
'''


@pytest.fixture
def gw(gateway_factory):
    return gateway_factory(legs=LEGS).start()


def pid(value, ptype=None):
    t = f' type="{ptype}"' if ptype else ''
    return f'<eb:PartyId{t}>{value}</eb:PartyId>'


def set_party(env, which, ids):
    """Replace the PartyIds of eb:From or eb:To (which) by ids, keeping Role."""
    start = env.index(f'<eb:{which}>') + len(f'<eb:{which}>')
    end = env.index('<eb:Role>', start)
    return env[:start] + ''.join(ids) + env[end:]


def signed(tmp_path, pki, mid, from_ids=None, to_ids=None):
    """A message pushed by B (signed with sender.key), From/To edited and
    signed again with B's own key: a valid signature by B."""
    out = tmp_path / f'{mid.split("@")[0]}.req'
    payload = tmp_path / 'payload.xml'
    payload.write_bytes(b'<Invoice>1</Invoice>')
    p = subprocess.run(
        [BIN, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4', '--from', SENDER,
         '--to', GATEWAY, '--service', SERVICE, '--action', ACTION, '--message-id', mid,
         '--payload', f'{payload};mime=application/xml', '--sign',
         '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
         '--connect-timeout', '2', '--timeout', '5', '--save-request', str(out)],
        capture_output=True, text=True, timeout=60)
    assert out.exists(), p.stderr
    msg = Message.load(str(out))
    env = msg.envelope
    if from_ids is not None:
        env = set_party(env, 'From', from_ids)
    if to_ids is not None:
        env = set_party(env, 'To', to_ids)
    if from_ids is not None or to_ids is not None:
        env = tamper.resign(env, str(pki / 'sender.key'))
    msg.envelope = env
    return msg.http()


def unsigned(mid, from_ids, to_ids=(pid(GATEWAY),), action=ACTION, pmode=None,
             agreement=None):
    """An unsigned message with these PartyIds and AgreementRef(@pmode)."""
    env = as4msg.envelope(mid, action=action)
    env = set_party(set_party(env, 'From', from_ids), 'To', to_ids)
    if agreement is not None:
        attr = f' pmode="{pmode}"' if pmode else ''
        env = once(env, '<eb:Service>',
                   f'<eb:AgreementRef{attr}>{agreement}</eb:AgreementRef><eb:Service>')
    return as4msg.multipart(env, [('payload-1@as4gw-test', 'application/xml',
                                   b'<Invoice>1</Invoice>')])


def totals(gw):
    return tuple(gw.store.query('SELECT (SELECT count(*) FROM inbox), '
                                '(SELECT count(*) FROM payload), '
                                '(SELECT count(*) FROM delivery)')[0])


def log_of(gw, mid):
    lines = [l for l in gw.log_lines()
             if l.get('event') == 'request' and l.get('message_id') == mid]
    assert lines, gw.logtext()[-2000:]
    return lines[-1]


def post(gw, msg):
    ct, body = msg
    return gw.post(ct, body)


def refused(gw, msg, mid, code):
    """POST msg: a signed eb:Error with code, and nothing stored."""
    before = totals(gw)
    ans = post(gw, msg)
    assert ans.status == 200 and ans.error_code == code, (ans, log_of(gw, mid))
    assert ans.signed and ans.ref_to == mid, ans
    assert totals(gw) == before, f'stored: {log_of(gw, mid)}'
    assert gw.store.counts(mid) == (0, 0, 0)
    line = log_of(gw, mid)
    assert line['ebms_code'] == code and line['outcome'] == 'error', line
    return line


def accepted(gw, msg, mid):
    ans = post(gw, msg)
    assert ans.status == 200 and ans.is_receipt, (ans, log_of(gw, mid))
    assert gw.store.counts(mid) == (1, 1, 1)
    return ans


def row(gw, mid):
    return gw.store.query('SELECT from_party, to_party, pmode_id FROM inbox '
                          'WHERE message_id = ?', mid)[0]


# ---- item 1: every PartyId must be the leg's ---------------------------------

def test_control_b_signs_as_itself(gw, tmp_path, pki):
    """Control: B's own message, re-signed untouched, is accepted on B's leg."""
    mid = new_id()
    accepted(gw, signed(tmp_path, pki, mid), mid)
    assert row(gw, mid) == (SENDER, GATEWAY, 'b-signed')


@pytest.mark.parametrize('order', ['a-first', 'b-first'])
def test_b_borrowing_a_on_its_signed_leg(gw, tmp_path, pki, order):
    """From = [A, B] signed by B's own key: B's leg does not list A, A's leg
    is signed by another key: EBMS:0101 (borrowed identity), nothing stored.
    bb574aa stored it as coming from A."""
    mid = new_id()
    ids = [pid(PARTY_A), pid(SENDER)]
    if order == 'b-first':
        ids.reverse()
    line = refused(gw, signed(tmp_path, pki, mid, from_ids=ids), mid, 'EBMS:0101')
    assert 'From mixes the PartyIds of leg' in line['detail'], line
    assert line.get('from_party') is None, line   # no leg: no party recorded


def test_unsigned_leg_borrowing_a_signed_party(gw):
    """From = [A, C] unsigned: C's unsigned leg comes first, but the message
    also claims A, whose leg is signed: EBMS:0101, nothing stored (bb574aa
    took C's leg by order and stored it as coming from A, unsigned)."""
    for ids in ([pid(PARTY_A), pid(PARTY_C)], [pid(PARTY_C), pid(PARTY_A)]):
        mid = new_id()
        line = refused(gw, unsigned(mid, ids), mid, 'EBMS:0101')
        assert 'leg "a-signed"' in line['detail'], line


def test_pmode_picking_the_weaker_leg(gw):
    """From = [A, B] unsigned with AgreementRef/@pmode naming B's unsigned
    leg r1: r1 does not list A, and A's leg on that route is signed:
    EBMS:0101, nothing stored (bb574aa stored it as coming from A)."""
    mid = new_id()
    msg = unsigned(mid, [pid(PARTY_A), pid(SENDER)], action=ROUTE, agreement=AGREEMENT,
                   pmode='r1')
    line = refused(gw, msg, mid, 'EBMS:0101')
    assert 'leg "a-route"' in line['detail'], line


@pytest.fixture
def gw_mixed(gateway_factory):
    return gateway_factory(legs=LEGS + D_LEG).start()


def test_two_unsigned_parties_mixed(gw_mixed):
    """From names two parties whose legs are both unsigned: no identity
    with a bound key is claimed, so no match is all there is: EBMS:0010."""
    mid = new_id()
    line = refused(gw_mixed, unsigned(mid, [pid(PARTY_C), pid('urn:as4gw:test:party-d')]),
                   mid, 'EBMS:0010')
    assert 'From/PartyId differs' in line['detail'], line


def test_several_partyids_of_one_party(gw, tmp_path, pki):
    """From = [B's typed alias, B] and To = [gateway alias, gateway], all
    listed by B's leg: accepted, and recorded as the leg's canonical parties
    (its first partyIds) in the inbox row and the JSON log line, not as the
    message's first PartyIds (bb574aa recorded "type:sender-alias")."""
    mid = new_id()
    msg = signed(tmp_path, pki, mid,
                 from_ids=[pid(SENDER_ALIAS, PTYPE), pid(SENDER)],
                 to_ids=[pid('gw', PTYPE), pid(GATEWAY)])
    accepted(gw, msg, mid)
    assert row(gw, mid) == (SENDER, GATEWAY, 'b-signed')
    line = log_of(gw, mid)
    assert line['from_party'] == SENDER and line['pmode'] == 'b-signed', line
    # the hand-off: message.json and AS4GW_FROM come from the row
    out = tmp_path / 'out'
    p = run_as4gw('deliver', '-c', gw.config, '--to-dir', out, '--once')
    assert p.returncode == 0, p.stderr
    metas = [json.loads((out / d / 'message.json').read_text()) for d in os.listdir(out)]
    assert [(m['message_id'], m['from'], m['to']) for m in metas] == [(mid, SENDER, GATEWAY)]


def test_alias_alone_recorded_as_canonical(gw, tmp_path, pki):
    """From = [B's typed alias] only: recorded as B's canonical party."""
    mid = new_id()
    accepted(gw, signed(tmp_path, pki, mid, from_ids=[pid(SENDER_ALIAS, PTYPE)]), mid)
    assert row(gw, mid)[0] == SENDER


def test_partyid_with_the_wrong_type(gw, tmp_path, pki):
    """B's alias value without its type is not B's PartyId: EBMS:0010."""
    mid = new_id()
    msg = signed(tmp_path, pki, mid, from_ids=[pid('urn:as4gw:test:sender-alias'),
                                                pid(SENDER)])
    line = refused(gw, msg, mid, 'EBMS:0010')
    assert 'From/PartyId differs' in line['detail'], line


def test_to_another_party_and_the_gateway(gw, tmp_path, pki):
    """To = [other, gateway]: the leg lists only the gateway's PartyIds:
    EBMS:0010, nothing stored (bb574aa stored it with to_party "other")."""
    mid = new_id()
    msg = signed(tmp_path, pki, mid, to_ids=[pid('urn:as4gw:test:other'), pid(GATEWAY)])
    line = refused(gw, msg, mid, 'EBMS:0010')
    assert 'To/PartyId differs' in line['detail'], line
    mid = new_id()
    line = refused(gw, unsigned(mid, [pid(PARTY_C)],
                                to_ids=[pid('urn:as4gw:test:other'), pid(GATEWAY)]),
                   mid, 'EBMS:0010')
    assert 'To/PartyId differs' in line['detail'], line


# ---- item 1 + 9: legs on one route, told apart by AgreementRef/@pmode ---------

@pytest.fixture
def gw_route(gateway_factory):
    return gateway_factory(legs=LEGS + R2_LEG).start()


def test_ambiguous_legs_refused(gw_route):
    """Two legs on one route load (bb574aa refused the configuration); a
    message without @pmode matches both and is refused, never resolved by
    order."""
    mid = new_id()
    line = refused(gw_route, unsigned(mid, [pid(SENDER)], action=ROUTE,
                                      agreement=AGREEMENT), mid, 'EBMS:0010')
    assert line['detail'] == 'ambiguous: legs r1, r2', line


@pytest.mark.parametrize('leg', ['r1', 'r2'])
def test_pmode_picks_the_leg(gw_route, leg):
    """AgreementRef/@pmode names one of the legs on the route: that leg."""
    mid = new_id()
    accepted(gw_route, unsigned(mid, [pid(SENDER)], action=ROUTE, agreement=AGREEMENT,
                                pmode=leg), mid)
    assert row(gw_route, mid) == (SENDER, GATEWAY, leg)
    assert log_of(gw_route, mid)['pmode'] == leg


def test_route_legs_signing_differently_refused_at_load(tmp_path, pki):
    """Legs on one route that sign differently would let @pmode pick the
    weaker one: the configuration is refused."""
    legs = LEGS + R2_LEG.replace('<security signing="never" encryption="never"/>',
                                 SIGNED_BY % 'sender')
    cfg = write_config(tmp_path / 'as4gw.xml', pki, legs=legs)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode != 0
    assert 'pmode "r2" and pmode "r1"' in p.stderr and 'share a route but sign ' \
        'differently (required, never)' in p.stderr, p.stderr
    ok = run_as4gw('pmode-check', '-c', write_config(tmp_path / 'ok.xml', pki,
                                                     legs=LEGS + R2_LEG))
    assert ok.returncode == 0, ok.stderr
    assert f'{SENDER} or sender-alias (type {PTYPE})' in ok.stdout, ok.stdout
