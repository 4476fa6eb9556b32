"""The age bound (issue 10 item 5, README "Message age"): a message whose
eb:Timestamp is older than the retention minus one hour, or later than now
plus the leg's timestampSkewSeconds, is refused with EBMS:0101 and nothing
is stored -- so a captured message replayed after its row was purged is
refused, not stored and delivered again.  A leg with
<security timestamp="required"> also needs a signed wsu:Timestamp
(EBMS:0103).  Over HTTP against the real binary, on both backends; each
test checks the answer (status, ebMS code), the rows, and the log line."""
import datetime
import subprocess
import sys
import time

import pytest

for _module in ('lxml', 'cryptography'):   # tamper.py needs both
    try:
        __import__(_module)
    except ImportError:
        sys.stderr.write(f'\nSKIPPED (loudly): test_age.py needs python3-{_module}\n')
        pytest.skip(f'PYTHON MODULE ABSENT: {_module} (install python3-{_module})',
                    allow_module_level=True)

import as4msg  # noqa: E402
import tamper  # noqa: E402
from conftest import BIN, DEV_LEG, free_port, new_id, run_as4gw  # noqa: E402
from tamper import Message  # noqa: E402

ACTION = 'urn:as4gw:dev:Age'
TS_ACTION = 'urn:as4gw:dev:AgeTimestamp'


def leg(pid, action, attrs=''):
    return f'''
  <pmode id="{pid}">
    <from><partyId>urn:as4gw:dev:sender</partyId></from>
    <to><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{action}</action>
    <security signing="required"{attrs}>
      <signer><certificate>{{pki}}/sender.crt</certificate></signer>
      <trust><anchor>{{pki}}/ca.crt</anchor></trust>
    </security>
  </pmode>
'''


# retention 30 days (the default), skew 300 s (the default); rows are purged
# whether delivered or not, so a purge empties the inbox
LEGS = DEV_LEG + leg('age', ACTION) + leg('age-ts', TS_ACTION, ' timestamp="required"')
PURGE = '<purge><intervalSeconds>0</intervalSeconds><undelivered>purge</undelivered></purge>'
DAY = datetime.timedelta(days=1)
HOUR = datetime.timedelta(hours=1)


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def signed(tmp_path, pki, action=ACTION, stamp=None, wsu_timestamp=False):
    """A signed one-payload message written by `as4gw push`; with stamp,
    its eb:Timestamp set to that instant (inside the signed eb:Messaging)
    and the message signed again; with wsu_timestamp, a signed
    wsu:Timestamp (created now, expiring in ten minutes) added."""
    out = tmp_path / f'msg-{time.monotonic_ns()}.req'
    payload = tmp_path / 'payload.xml'
    payload.write_bytes(b'<Invoice>age</Invoice>')
    p = subprocess.run(
        [BIN, 'push', '--url', f'http://127.0.0.1:{free_port()}/as4',
         '--from', 'urn:as4gw:dev:sender', '--to', 'urn:as4gw:dev:gateway',
         '--service', 'urn:as4gw:dev:service', '--action', action,
         '--payload', f'{payload};mime=application/xml;cid=part-1@as4gw-test',
         '--sign', '--sign-cert', f'{pki}/sender.crt', '--sign-key', f'{pki}/sender.key',
         '--connect-timeout', '1', '--timeout', '2', '--save-request', str(out)],
        capture_output=True, text=True, timeout=60)
    assert out.exists(), f'as4gw push wrote no request: {p.stderr}'
    msg = Message.load(str(out))
    text = msg.envelope
    if stamp is not None:
        text = tamper.set_text(text, 'eb:Timestamp', 0, tamper.iso(stamp))
    if wsu_timestamp:
        now = utcnow()
        text = tamper.add_signed_timestamp(text, 'TS-1', now - datetime.timedelta(seconds=1),
                                           now + 10 * datetime.timedelta(minutes=1))
    if stamp is not None or wsu_timestamp:
        text = tamper.resign(text, str(pki / 'sender.key'))
    msg.envelope = text
    return msg


def mid_of(msg):
    return tamper.text_of(msg.envelope, 'eb:MessageId')


def post(gw, msg):
    ct, body = msg.http()
    return gw.request('POST', '/as4', body, {'Content-Type': ct})


def last_request(gw):
    lines = [l for l in gw.log_lines() if l.get('event') == 'request']
    assert lines, gw.logtext()[-2000:]
    return lines[-1]


def assert_refused(gw, ans, code, detail):
    """Refused with code, nothing stored, the reason in the log only."""
    assert ans.status == 200 and ans.error_code == code, (ans, gw.logtext()[-2000:])
    assert gw.store.totals() == (0, 0, 0)
    line = last_request(gw)
    assert line.get('ebms_code') == code and detail in line.get('detail', ''), line
    assert not detail or detail.encode() not in ans.body


@pytest.fixture
def agw(gateway_factory):
    return gateway_factory(legs=LEGS, extra_gateway=PURGE).start()


def test_fresh_signed_message_accepted(agw, tmp_path, pki):
    msg = signed(tmp_path, pki)
    ans = post(agw, msg)
    assert ans.status == 200 and ans.is_receipt, ans
    assert agw.store.counts(mid_of(msg)) == (1, 1, 1)


def test_older_than_retention_refused(agw, tmp_path, pki):
    """31 days old, then just past the bound (30 days minus one hour): the
    signature verifies, the age does not."""
    for age in (31 * DAY, 30 * DAY - HOUR + 5 * datetime.timedelta(minutes=1)):
        ans = post(agw, signed(tmp_path, pki, stamp=utcnow() - age))
        assert_refused(agw, ans, 'EBMS:0101', 'not distinguishable from a replay')


def test_just_inside_retention_accepted(agw, tmp_path, pki):
    msg = signed(tmp_path, pki, stamp=utcnow() - (30 * DAY - HOUR - 5 * datetime.timedelta(minutes=1)))
    ans = post(agw, msg)
    assert ans.status == 200 and ans.is_receipt, (ans, agw.logtext()[-2000:])
    assert agw.store.counts(mid_of(msg)) == (1, 1, 1)


def test_future_beyond_skew_refused(agw, tmp_path, pki):
    ans = post(agw, signed(tmp_path, pki, stamp=utcnow() + datetime.timedelta(minutes=10)))
    assert_refused(agw, ans, 'EBMS:0101', 'is in the future')
    # within the skew (300 s): accepted
    msg = signed(tmp_path, pki, stamp=utcnow() + datetime.timedelta(minutes=2))
    ans = post(agw, msg)
    assert ans.status == 200 and ans.is_receipt, (ans, agw.logtext()[-2000:])
    assert agw.store.counts(mid_of(msg)) == (1, 1, 1)


def test_unsigned_leg_has_the_same_bound(agw):
    """An unsigned leg: the same bound, on a timestamp anyone may write."""
    old = (utcnow() - 40 * DAY).strftime('%Y-%m-%dT%H:%M:%SZ')
    ans = agw.post(*as4msg.user_message(new_id(), timestamp=old))
    assert_refused(agw, ans, 'EBMS:0101', 'h old at')


def test_replay_after_purge_refused(agw, tmp_path, pki):
    """A captured signed message: accepted, its row purged 31 days later,
    the very same bytes replayed then (the gateway judging at that instant,
    `serve --verify-at`) are refused and not stored again."""
    msg = signed(tmp_path, pki)
    first = post(agw, msg)
    assert first.status == 200 and first.is_receipt, first
    assert agw.store.counts(mid_of(msg)) == (1, 1, 1)
    later = tamper.iso(utcnow() + 31 * DAY)
    assert agw.stop() == 0
    p = run_as4gw('purge', '-c', agw.config, '--now', later)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith('purged 1,'), p.stdout
    assert agw.store.totals() == (0, 0, 0)
    agw.start('--verify-at', later)
    ans = post(agw, msg)
    assert_refused(agw, ans, 'EBMS:0101', 'not distinguishable from a replay')
    # the same instant, a message stamped then is accepted: only age refuses
    fresh = signed(tmp_path, pki, stamp=utcnow() + 31 * DAY)
    ans = post(agw, fresh)
    assert ans.status == 200 and ans.is_receipt, (ans, agw.logtext()[-2000:])
    assert agw.store.counts(mid_of(fresh)) == (1, 1, 1)


def test_leg_requiring_wsu_timestamp(agw, tmp_path, pki):
    ans = post(agw, signed(tmp_path, pki, action=TS_ACTION))
    assert_refused(agw, ans, 'EBMS:0103', '')
    assert 'no wsu:Timestamp' in last_request(agw).get('error', ''), last_request(agw)
    msg = signed(tmp_path, pki, action=TS_ACTION, wsu_timestamp=True)
    ans = post(agw, msg)
    assert ans.status == 200 and ans.is_receipt, (ans, agw.logtext()[-2000:])
    assert agw.store.counts(mid_of(msg)) == (1, 1, 1)
