#!/usr/bin/env python3
"""bench/revocation.py — what a cached live revocation check adds to a push.

Two legs for the same signer certificate, one with revocation="off" and one
with revocation="require" (its OCSP answer cached after the first push: a
real `openssl ocsp` responder on loopback, tests/integration/revocpki.py).
Pre-built signed requests are sent alternately to both legs, one at a time;
the script prints the median and p90 latency of each and the difference.

  bench/revocation.py [--bin build-test/as4gw] [-n 200]

Needs python3-cryptography, pytest (it reuses the tests' Gateway fixture class)
and the openssl CLI.  SQLite store in a temp dir.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'integration'))
os.environ.setdefault('AS4GW_SOURCE_DIR', TOP)

ROLE = 'http://docs.oasis-open.org/ebxml-msg/ebms/v3.0/ns/core/200704/'


def leg(d, mode):
    return f'''
  <pmode id="bench-{mode}">
    <from role="{ROLE}initiator"><partyId>urn:rv:sender:good</partyId></from>
    <to role="{ROLE}responder"><partyId>urn:as4gw:dev:gateway</partyId></to>
    <service>urn:as4gw:dev:service</service>
    <action>urn:bench:{mode}</action>
    <security signing="required" revocation="{mode}">
      <signer><certificate>{d}/good.crt</certificate></signer>
      <trust><anchor>{d}/ca.crt</anchor></trust>
    </security>
  </pmode>'''


def build(binary, pki, rv, mode, n, out):
    subprocess.run([binary, 'push', '--write-requests', out, '--count', str(n),
                    '--from', 'urn:rv:sender:good', '--to', 'urn:as4gw:dev:gateway',
                    '--service', 'urn:as4gw:dev:service', '--action', f'urn:bench:{mode}',
                    '--gateway-cert', f'{pki}/gateway.crt', '--sign',
                    '--sign-cert', rv.path('good.crt'), '--sign-key', rv.path('good.key')],
                   check=True, capture_output=True)
    reqs, data = [], open(out, 'rb').read()
    while data:
        ct, ln, data = data.split(b'\n', 2)
        reqs.append((ct.decode(), data[:int(ln)]))
        data = data[int(ln):]
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', default=os.path.join(TOP, 'build-test', 'as4gw'))
    ap.add_argument('-n', type=int, default=200)
    a = ap.parse_args()
    os.environ['AS4GW_BIN'] = a.bin
    import conftest
    from revocpki import OpenSSLResponder, RevocPKI
    tmp = tempfile.mkdtemp(prefix='as4gw-bench-revoc-')
    pki = os.path.join(tmp, 'pki')
    subprocess.run([os.path.join(TOP, 'certs', 'gen-dev-pki.sh'), pki], check=True,
                   capture_output=True)
    os.mkdir(os.path.join(tmp, 'rv'))
    rv = RevocPKI(os.path.join(tmp, 'rv'))
    responder = OpenSSLResponder(rv).start()
    gw = conftest.Gateway(tmp, pki, f'sqlite:{tmp}/as4gw.db',
                          legs=leg(rv.d, 'off') + leg(rv.d, 'require')).start()
    try:
        reqs = {m: build(a.bin, pki, rv, m, a.n + 1, os.path.join(tmp, f'{m}.req'))
                for m in ('off', 'require')}
        for m in reqs:                       # warm up; fills the cache
            assert gw.post(*reqs[m].pop()).status == 200
        times = {'off': [], 'require': []}
        for i in range(a.n):
            for m in ('off', 'require'):
                t0 = time.perf_counter()
                r = gw.post(*reqs[m][i])
                times[m].append((time.perf_counter() - t0) * 1000)
                assert r.status == 200 and r.is_receipt, r
        for m, t in times.items():
            t.sort()
            print(f'revocation={m:8s} median {statistics.median(t):7.2f} ms  '
                  f'p90 {t[int(len(t) * 0.9)]:7.2f} ms  ({len(t)} pushes)')
        d = statistics.median(times['require']) - statistics.median(times['off'])
        print(f'cached check adds {d:+.2f} ms per push (median)')
    finally:
        gw.stop()
        responder.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
