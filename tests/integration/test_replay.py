"""The replay cache (src/gateway/gateway_replay.c, issue 5): a retry of the
very same request bytes is answered from the store without parsing and
verifying it again, but only inside the window in which the same bytes would
verify again, and the store still decides.  Each test checks what a partner
sees (status, Receipt bytes, ebMS code) and what is stored (rows, the
duplicate counter)."""
import datetime
import sys
import time

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        sys.stderr.write(f'\nSKIPPED (loudly): test_replay.py needs python3-{_module}\n')
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import tamper  # noqa: E402
from conftest import BIN, free_port  # noqa: E402
from tamper import Message  # noqa: E402

ACTION = 'urn:as4gw:dev:Replay'

# A signing leg without clock skew allowance, so a wsu:Timestamp's Expires
# closes the window at once (the default skew is 300 s).
REPLAY_LEG = f'''
  <pmode id="replay">
    <from><partyId>urn:as4gw:dev:sender</partyId></from>
    <to><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{ACTION}</action>
    <security signing="required">
      <signer><certificate>{{pki}}/sender.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>
      <timestampSkewSeconds>0</timestampSkewSeconds>
    </security>
  </pmode>
'''


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def build(tmp_path, pki, lifetime_s=None):
    """A signed message written by `as4gw push`; with lifetime_s, a signed
    wsu:Timestamp (created a second ago, expiring lifetime_s from now)
    added and the message signed again."""
    import subprocess
    out = tmp_path / f'msg-{time.monotonic_ns()}.req'
    payload = tmp_path / 'payload.xml'
    payload.write_bytes(b'<Invoice>replay</Invoice>')
    args = [BIN, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4',
            '--from', 'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway',
            '--service', 'urn:as4gw:dev:service', '--action', ACTION,
            '--payload', f'{payload};mime=application/xml;cid=part-1@as4gw-test',
            '--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
            '--connect-timeout', '1', '--timeout', '2', '--save-request', str(out)]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.exists(), f'as4gw push wrote no request: {p.stderr}'
    msg = Message.load(str(out))
    if lifetime_s is not None:
        now = utcnow()
        created = now - datetime.timedelta(seconds=1)
        expires = now + datetime.timedelta(seconds=lifetime_s)
        msg.envelope = tamper.resign(
            tamper.add_signed_timestamp(msg.envelope, 'TS-1', created, expires),
            str(pki / 'sender.key'))
    return msg


def message_id(msg):
    return tamper.text_of(msg.envelope, 'eb:MessageId')


def post(gw, msg):
    ct, body = msg.http()
    return gw.request('POST', '/as4', body, {'Content-Type': ct})


def duplicates(gw, mid):
    rows = gw.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)
    return rows[0][0] if rows else None


def outcomes(gw):
    """Per request: its outcome, '+replayed' when the cache answered."""
    return [l.get('outcome') + ('+replayed' if l.get('replayed') else '')
            for l in gw.log_lines() if l.get('event') == 'request']


def execute(store, sql, *args):
    """A write behind the gateway's back (what a purge does)."""
    store.execute(sql, *args)


@pytest.fixture
def rgw(gateway_factory):
    return gateway_factory(legs=REPLAY_LEG).start()


def test_same_bytes_get_the_same_receipt_and_are_counted(rgw, tmp_path, pki):
    """Retries of identical bytes: one row, the stored Receipt byte for
    byte every time, every retry counted."""
    msg = build(tmp_path, pki, lifetime_s=600)
    first = post(rgw, msg)
    assert first.status == 200 and first.is_receipt, first
    for n in range(1, 4):
        again = post(rgw, msg)
        assert again.status == 200 and again.body == first.body, again
        assert duplicates(rgw, message_id(msg)) == n
    assert rgw.store.counts(message_id(msg)) == (1, 1, 1)
    # the first push (verified in full) filled the cache
    assert outcomes(rgw)[-4:] == ['new', 'duplicate+replayed',
                                  'duplicate+replayed', 'duplicate+replayed']


def test_window_closes_with_the_timestamp(rgw, tmp_path, pki):
    """The cache never outlives what verification would accept: once the
    signed wsu:Timestamp has expired (skew 0), the same bytes get
    EBMS:0101 as a first-time sender would, and are not counted."""
    msg = build(tmp_path, pki, lifetime_s=3)
    first = post(rgw, msg)
    assert first.status == 200 and first.is_receipt, first
    again = post(rgw, msg)
    assert again.body == first.body
    assert duplicates(rgw, message_id(msg)) == 1
    assert outcomes(rgw)[-1] == 'duplicate+replayed'
    time.sleep(4.5)
    late = post(rgw, msg)
    assert late.status == 200 and late.error_code == 'EBMS:0101', late
    assert duplicates(rgw, message_id(msg)) == 1
    assert outcomes(rgw)[-1] == 'error'
    assert rgw.store.counts(message_id(msg)) == (1, 1, 1)


def test_purged_row_is_accepted_again(rgw, tmp_path, pki):
    """The store still decides: after the row is gone (a purge), the same
    bytes take the full path and are stored as new again."""
    msg = build(tmp_path, pki, lifetime_s=600)
    first = post(rgw, msg)
    assert first.is_receipt, first
    assert post(rgw, msg).body == first.body
    assert outcomes(rgw)[-1] == 'duplicate+replayed'
    execute(rgw.store, 'DELETE FROM inbox WHERE message_id = ?', message_id(msg))
    assert rgw.store.counts(message_id(msg)) == (0, 0, 0)
    third = post(rgw, msg)
    assert third.status == 200 and third.is_receipt, third
    assert rgw.store.counts(message_id(msg)) == (1, 1, 1)
    assert duplicates(rgw, message_id(msg)) == 0
    assert outcomes(rgw)[-1] == 'new'


def test_other_bytes_of_the_same_message_are_verified(rgw, tmp_path, pki):
    """Bytes that differ from the cached request (here: one flipped bit in
    the signature value) are not answered from the cache: EBMS:0101, and
    the counter does not move."""
    msg = build(tmp_path, pki, lifetime_s=600)
    first = post(rgw, msg)
    assert first.is_receipt, first
    bad = msg.copy()
    sv = tamper.text_of(bad.envelope, 'ds:SignatureValue')
    flipped = ('A' if sv[0] != 'A' else 'B') + sv[1:]
    bad.envelope = tamper.once(bad.envelope, sv, flipped)
    ans = post(rgw, bad)
    assert ans.status == 200 and ans.error_code == 'EBMS:0101', ans
    assert duplicates(rgw, message_id(msg)) == 0
