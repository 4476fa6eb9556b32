"""Live revocation (issue 12 item 2) against real components on loopback: a
real `openssl ocsp` responder and a small HTTP server for CRLs and canned
OCSP responses (revocpki.py), under security/@revocation require and prefer.

Per scenario the signer certificate's AIA / CRL distribution point names one
of them: good, revoked, unknown (the responder does not know the serial),
down (nothing listens), slow (answers after the exchange timeout), stale
(nextUpdate passed), future (thisUpdate ahead), wrongkey (signed by another
CA), and CRL DP good / revoked.  Checked: the HTTP status, the ebMS code,
the 503's Retry-After, that nothing is stored on a refusal, the warning of
prefer, the metrics, that an answer is cached across a reload, and that a
slow responder does not delay another partner's push."""
import os
import signal
import threading
import time

import pytest

import as4msg
from conftest import new_id, run_as4gw
from revocpki import SCENARIOS, OpenSSLResponder, RevocHTTP, RevocPKI

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'
RETRY_AFTER = 17
TIMEOUT_S = 3
REVOCATION = f'''<revocation><connectTimeoutMs>500</connectTimeoutMs>
  <timeoutSeconds>{TIMEOUT_S}</timeoutSeconds><failureBackoffSeconds>0</failureBackoffSeconds>
  <retryAfterSeconds>{RETRY_AFTER}</retryAfterSeconds></revocation>'''

# what each scenario must give: 'good', 'revoked' or 'unknown'
EXPECT = {'good': 'good', 'revoked': 'revoked', 'unknown': 'unknown', 'down': 'unknown',
          'slow': 'unknown', 'stale': 'unknown', 'future': 'unknown',
          'wrongkey': 'unknown', 'crl_good': 'good', 'crl_revoked': 'revoked'}


def action(s, mode):
    return f'urn:rv:{s}:{mode}'


def legs(d):
    out = []
    for s in SCENARIOS:
        for mode in ('require', 'prefer'):
            out.append(f'''
  <pmode id="rv-{s}-{mode}">
    <from role="{ROLE}initiator"><partyId>urn:rv:sender:{s}</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>{action(s, mode)}</action>
    <security signing="required" revocation="{mode}">
      <signer><certificate>{d}/{s}.crt</certificate></signer>
      <trust><anchor>{d}/ca.crt</anchor></trust>
    </security>
  </pmode>''')
    return ''.join(out)


@pytest.fixture(scope='module')
def rv(tmp_path_factory):
    d = tmp_path_factory.mktemp('revoc')
    p = RevocPKI(d)
    responder = OpenSSLResponder(p).start()
    web = RevocHTTP(p, slow_s=TIMEOUT_S * 4).start()
    p.web = web
    yield p
    responder.stop()
    web.stop()


@pytest.fixture
def gw(gateway_factory, rv):
    g = gateway_factory(legs=legs(rv.d), extra_gateway=REVOCATION).start()
    yield g
    g.stop()


def build(tmp_path, rv, pki, s, mode, mid):
    """A signed push for scenario s (built by as4gw push, sent by the test)."""
    out = tmp_path / f'req-{mid}'
    p = run_as4gw('push', '--write-requests', str(out), '--from', f'urn:rv:sender:{s}',
                  '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
                  '--action', action(s, mode), '--message-id', mid,
                  '--gateway-cert', f'{pki}/gateway.crt', '--sign',
                  '--sign-cert', rv.path(f'{s}.crt'), '--sign-key', rv.path(f'{s}.key'))
    assert p.returncode == 0, p.stderr
    data = out.read_bytes()
    ct, n, rest = data.split(b'\n', 2)
    return ct.decode(), rest[:int(n)]


def push(gw, tmp_path, rv, pki, s, mode, mid=None):
    mid = mid or new_id()
    ct, body = build(tmp_path, rv, pki, s, mode, mid)
    return mid, gw.post(ct, body)


def metric(gw, name):
    text = gw.get('/metrics').body.decode()
    for line in text.splitlines():
        if line.startswith('as4gw_' + name + ' '):
            return float(line.split()[-1])
    return None


@pytest.mark.parametrize('mode', ['require', 'prefer'])
@pytest.mark.parametrize('s', SCENARIOS)
def test_live_revocation(gw, tmp_path, rv, pki, s, mode):
    mid, a = push(gw, tmp_path, rv, pki, s, mode)
    want = EXPECT[s]
    if want == 'good' or (want == 'unknown' and mode == 'prefer'):
        assert a.status == 200 and a.is_receipt, (a, gw.logtext()[-2000:])
        assert gw.store.counts(mid)[0] == 1
        warned = [ln for ln in gw.log_lines() if ln.get('event') == 'revocation_unknown']
        assert bool(warned) == (want == 'unknown'), gw.logtext()[-2000:]
        if want == 'unknown':
            assert warned[0].get('message_id') == mid
            assert metric(gw, 'revocation_fail_open_total') == 1
        return
    if want == 'revoked':
        assert a.status == 200 and a.error_code == 'EBMS:0101', a
        assert 'certificate revoked' in gw.logtext()
    else:
        assert a.status == 503, (a, gw.logtext()[-2000:])
        assert a.headers.get('Retry-After') == str(RETRY_AFTER), a.headers
        assert 'no fresh revocation status' in gw.logtext()
        # a 503 for want of a status is not a store failure
        assert metric(gw, 'store_errors_total') == 0
        assert gw.get('/readyz').status == 200
    assert gw.store.counts(mid) == (0, 0, 0)
    assert gw.store.totals() == (0, 0, 0)


def test_cached_answer_and_metrics(gw, tmp_path, rv, pki):
    """The second push of a partner is answered from the cache (no fetch);
    the metrics say so; a dead responder counts as a responder failure."""
    for _ in range(2):
        _, a = push(gw, tmp_path, rv, pki, 'good', 'require')
        assert a.status == 200 and a.is_receipt, a
    text = gw.get('/metrics').body.decode()
    assert 'as4gw_revocation_checks_total{result="good",source="ocsp"} 1' in text, text
    assert 'as4gw_revocation_checks_total{result="good",source="cache"} 1' in text, text
    assert metric(gw, 'revocation_cache_entries') == 1
    assert metric(gw, 'revocation_cache_oldest_age_seconds') is not None
    _, a = push(gw, tmp_path, rv, pki, 'down', 'prefer')
    assert a.status == 200
    assert metric(gw, 'revocation_responder_failures_total') >= 1


def test_cache_survives_reload(gw, tmp_path, rv, pki):
    """The cache is the server's, not the configuration's: after SIGHUP the
    CRL is not fetched again."""
    before = rv.web.hits.get('/ca.crl', 0)
    _, a = push(gw, tmp_path, rv, pki, 'crl_good', 'require')
    assert a.status == 200 and a.is_receipt, a
    assert rv.web.hits.get('/ca.crl', 0) == before + 1
    gw.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while 'configuration reloaded' not in gw.logtext() and time.time() < deadline:
        time.sleep(0.05)
    assert 'configuration reloaded' in gw.logtext()
    _, a = push(gw, tmp_path, rv, pki, 'crl_good', 'require')
    assert a.status == 200 and a.is_receipt, a
    assert rv.web.hits.get('/ca.crl', 0) == before + 1
    text = gw.get('/metrics').body.decode()
    assert 'as4gw_revocation_checks_total{result="good",source="cache"} 1' in text, text


def test_slow_responder_does_not_delay_others(gw, tmp_path, rv, pki):
    """While one partner's responder hangs (until the exchange timeout),
    another partner's pushes are answered at their usual pace: compared as
    a ratio within this run, not against a fixed time."""
    _, a = push(gw, tmp_path, rv, pki, 'good', 'prefer')     # warm the cache
    assert a.status == 200
    slow_req = build(tmp_path, rv, pki, 'slow', 'require', new_id())
    good_reqs = [build(tmp_path, rv, pki, 'good', 'prefer', new_id()) for _ in range(5)]
    hits0 = rv.web.hits.get('/slow', 0)
    res = {}

    def slow():
        t0 = time.monotonic()
        res['answer'] = gw.post(*slow_req)
        res['t'] = time.monotonic() - t0

    th = threading.Thread(target=slow)
    th.start()
    deadline = time.time() + 10
    while rv.web.hits.get('/slow', 0) == hits0 and time.time() < deadline:
        time.sleep(0.01)
    assert rv.web.hits.get('/slow', 0) > hits0, 'the slow responder was not asked'
    times = []
    for ct, body in good_reqs:
        t0 = time.monotonic()
        a = gw.post(ct, body)
        times.append(time.monotonic() - t0)
        assert a.status == 200 and a.is_receipt, a
    th.join()
    assert res['answer'].status == 503, res['answer']
    # five pushes of the other partner took less than a third of the one
    # waiting for the slow responder, which was in flight all along
    assert sum(times) * 3 < res['t'], (times, res['t'])


def test_pmode_check_shows_the_policy(tmp_path, rv, pki):
    cfg = tmp_path / 'ok.xml'
    cfg.write_text(f'''<?xml version="1.0" encoding="UTF-8"?>
<as4gw xmlns="urn:as4gw:config:1"><gateway><listen>127.0.0.1:0</listen>
<signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>
{REVOCATION}</gateway>{legs(rv.d)}</as4gw>''')
    p = run_as4gw('pmode-check', '-c', str(cfg))
    assert p.returncode == 0, p.stderr
    assert 'live revocation required' in p.stdout and 'live revocation preferred' in p.stdout


def test_wrong_policy_word_refused_at_load(tmp_path, rv, pki):
    cfg = tmp_path / 'bad.xml'
    text = legs(rv.d).replace('revocation="require"', 'revocation="always"', 1)
    cfg.write_text(f'''<?xml version="1.0" encoding="UTF-8"?>
<as4gw xmlns="urn:as4gw:config:1"><gateway><listen>127.0.0.1:0</listen>
<signing><certificate>{pki}/gateway.crt</certificate><key>{pki}/gateway.key</key></signing>
</gateway>{text}</as4gw>''')
    p = run_as4gw('pmode-check', '-c', str(cfg))
    assert p.returncode != 0
    assert 'revocation' in p.stderr, p.stderr
