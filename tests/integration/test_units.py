"""The shipped systemd units: systemd-analyze accepts them, and their command
lines are ones the as4gw binary understands."""
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, SRC, run_as4gw, write_config

UNITS = os.path.join(SRC, 'conf', 'systemd')
NAMES = ['as4gw.service', 'as4gw-deliver.service', 'as4gw-purge.service', 'as4gw-purge.timer']


def _exec_lines(text):
    return re.findall(r'^Exec(?:Start|StartPre)=(\S+)(.*)$', text, re.M)


def test_units_verify(tmp_path):
    tool = shutil.which('systemd-analyze')
    if tool is None:
        sys.stderr.write('\nSKIPPED (loudly): systemd-analyze not installed\n')
        pytest.skip('SYSTEMD-ANALYZE NOT AVAILABLE')
    for name in NAMES:
        text = open(os.path.join(UNITS, name)).read()
        # verify against the binary under test instead of /usr/local/bin
        (tmp_path / name).write_text(text.replace('/usr/local/bin/as4gw', BIN))
    r = subprocess.run([tool, 'verify', *[str(tmp_path / n) for n in NAMES]],
                       capture_output=True, text=True, timeout=60)
    problems = [l for l in (r.stdout + r.stderr).splitlines()
                if l.strip() and 'as4gw' in l]
    assert r.returncode == 0 and not problems, r.stdout + r.stderr


def test_unit_command_lines_are_valid(tmp_path, pki):
    """Every ExecStart of the units, with the config path swapped for a real
    file, is accepted by the binary's option parser (--help of the same
    subcommand exits 0, and pmode-check really validates the file)."""
    conf = write_config(tmp_path / 'as4gw.xml', pki, store=f'sqlite:{tmp_path}/db')
    seen = set()
    for name in NAMES:
        text = open(os.path.join(UNITS, name)).read()
        for exe, args in _exec_lines(text):
            assert exe == '/usr/local/bin/as4gw', exe
            argv = args.split()
            seen.add(argv[0])
            r = run_as4gw(argv[0], '--help')
            assert r.returncode == 0, (name, argv, r.stderr)
    assert seen == {'serve', 'pmode-check', 'deliver', 'purge'}
    r = run_as4gw('pmode-check', '-c', conf)
    assert r.returncode == 0, r.stderr


def test_service_reload_is_sighup_and_stop_covers_drain():
    text = open(os.path.join(UNITS, 'as4gw.service')).read()
    assert 'ExecReload=/bin/kill -HUP $MAINPID' in text
    stop = int(re.search(r'^TimeoutStopSec=(\d+)$', text, re.M).group(1))
    assert stop > 120   # requestDeadlineSeconds default: the drain must fit
