"""Crash consistency (issue 4 item 1) with a small budget: the harness of
crashlib.py kills the real gateway at every fault point (and from outside) on
both store backends, restarts it, re-sends, and checks that nothing
acknowledged is lost, nothing is stored twice or half, every Receipt of a
MessageId is the same bytes, and `as4gw deliver` killed at its fault points
still delivers every message exactly once.  test_crash_big is the
large-payload mode (crashbig.py, issue 14).  bench/crash runs the same with
hundreds of iterations (--big: the large-payload mode).

Needs a fault-injection build (meson -Dfault_injection=true, as scripts/test
builds); skipped loudly otherwise.  AS4GW_CRASH_ITERATIONS changes the budget,
AS4GW_CRASH_SEED replays a run (the seed is printed on failure)."""
import os
import random
import sys

import pytest

import crashbig
import crashlib
from conftest import BIN, PG_DSN

ITERATIONS = int(os.environ.get('AS4GW_CRASH_ITERATIONS', '3'))
MESSAGES = 12   # new MessageIds per iteration (plus repeats and older ones)


def _skip_loudly(why):
    sys.stderr.write(f'\nSKIPPED (loudly): {why}\n')
    pytest.skip(why)


@pytest.fixture(scope='module')
def fault_bin():
    if not crashlib.fault_build(BIN):
        _skip_loudly(f'{BIN} HAS NO FAULT INJECTION: build it with '
                     f'meson setup build-test -Dfault_injection=true')
    return BIN


@pytest.fixture(scope='module')
def signer(fault_bin, pki, tmp_path_factory):
    """Signed pushes too, when tamper.py's signer can be loaded."""
    try:
        return crashlib.Signer(fault_bin, pki, str(tmp_path_factory.mktemp('signer')))
    except ImportError as e:
        sys.stderr.write(f'\nNOTE (loudly): only unsigned messages: {e}\n')
        return None


@pytest.mark.parametrize('mode', crashlib.MODES)
def test_crash_consistency(backend, mode, fault_bin, pki, signer, tmp_path):
    if backend == 'postgresql' and not PG_DSN:
        _skip_loudly('POSTGRESQL NOT AVAILABLE: AS4GW_TEST_PG_DSN not set')
    seed = int(os.environ.get('AS4GW_CRASH_SEED', random.randrange(1 << 30)))
    f = crashlib.run_scenario(fault_bin, pki, str(tmp_path / 'crash'), backend, mode,
                              ITERATIONS, pg_admin_dsn=PG_DSN, seed=seed,
                              messages=MESSAGES, deliver_rounds=max(3, ITERATIONS),
                              signer=signer, log=lambda s: sys.stderr.write(s + '\n'))
    print(f.row())
    why = f'seed {seed} (AS4GW_CRASH_SEED): {f.row()}'
    assert f.violations == [], why + '\n' + '\n'.join(f.violations[:30])
    assert f.iterations == ITERATIONS, why
    # every iteration's kill really happened: the fault fired (its stderr line
    # and SIGKILL), or the external SIGKILL hit a running process
    assert f.missed == 0 and f.kills == ITERATIONS, why
    assert f.lost_answers + f.messages < f.sends, why    # something was re-sent
    assert all(n >= 1 for n in f.deliver_kills.values()), why
    assert f.deliver_missed == 0, why
    assert f.delivered == f.messages == ITERATIONS * MESSAGES, why
    if signer is not None:
        assert f.signed > 0, why


BIG_ITERATIONS = os.environ.get('AS4GW_CRASH_BIG_ITERATIONS')
BIG_MIB = int(os.environ.get('AS4GW_CRASH_BIG_MIB', '16'))


def test_crash_big(backend, fault_bin, pki, tmp_path):
    """The large-payload mode (crashbig.py): one 16 MiB message per iteration
    (above the spool and the chunk thresholds), killed while its body is
    spooled, before COMMIT and after it, in turn; no orphan, nothing left in
    the spool, the retry gets the stored Receipt or is accepted fresh."""
    if backend == 'postgresql' and not PG_DSN:
        _skip_loudly('POSTGRESQL NOT AVAILABLE: AS4GW_TEST_PG_DSN not set')
    seed = int(os.environ.get('AS4GW_CRASH_SEED', random.randrange(1 << 30)))
    modes = crashbig.modes_for(backend)
    iterations = int(BIG_ITERATIONS or len(modes))
    f = crashbig.run_big(fault_bin, pki, str(tmp_path / 'big'), backend, iterations,
                         size=BIG_MIB << 20, pg_admin_dsn=PG_DSN, seed=seed,
                         log=lambda s: sys.stderr.write(s + '\n'))
    print(f.row())
    why = f'seed {seed} (AS4GW_CRASH_SEED): {f.row()}'
    assert f.violations == [], why + '\n' + '\n'.join(f.violations[:30])
    assert f.iterations == iterations and f.kills == iterations, why
    # the kills after COMMIT left the message stored, those before did not
    assert f.unacked_stored == sum(modes[i % len(modes)] in crashbig.COMMITTED
                                   for i in range(iterations)), why
