"""One log format per stream (issue 11 item 12): the daemons `serve` and
`deliver` write JSON lines on stderr, and so does their start-up error now
(it was a plain "as4gw: ..." line): exactly one JSON object, level "error",
event "start-failed", and a non-zero exit.  The interactive commands keep
their human text.
"""
import json

import pytest

from conftest import free_port, run_as4gw, write_config

DSN_UNREACHABLE = {
    'sqlite': 'sqlite:/nonexistent-as4gw-dir/as4gw.db',
    'postgresql': 'postgresql://as4gw@127.0.0.1:1/as4gw?connect_timeout=2',
}


def one_json_error(p):
    """stderr is exactly one JSON line saying why the daemon did not start."""
    assert p.returncode not in (0, 2), (p.returncode, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    line = json.loads(lines[0])
    assert line['level'] == 'error'
    assert line['event'] == 'start-failed'
    assert line['msg'] and '\n' not in line['msg']
    return line


def daemon(cmd, config, tmp_path):
    if cmd == 'serve':
        return run_as4gw('serve', '-c', config, timeout=30)
    return run_as4gw('deliver', '-c', config, '--to-dir', tmp_path / 'out',
                     timeout=30)


@pytest.mark.parametrize('cmd', ['serve', 'deliver'])
def test_bad_config_is_one_json_line(cmd, tmp_path):
    bad = tmp_path / 'bad.xml'
    bad.write_text('<as4gw xmlns="urn:as4gw:config:1"><gateway><threads>x'
                   '</threads></gateway></as4gw>')
    line = one_json_error(daemon(cmd, bad, tmp_path))
    assert str(bad) in line['msg']
    line = one_json_error(daemon(cmd, tmp_path / 'missing.xml', tmp_path))
    assert 'could not open file' in line['msg']


@pytest.mark.parametrize('backend', ['sqlite', 'postgresql'])
@pytest.mark.parametrize('cmd', ['serve', 'deliver'])
def test_bad_dsn_is_one_json_line(cmd, backend, tmp_path, pki):
    """A store that cannot be opened (libpq's message has newlines and
    tabs): one JSON line, the message on one line, no password in it."""
    dsn = DSN_UNREACHABLE[backend]
    if backend == 'postgresql':
        dsn = dsn.replace('as4gw@', 'as4gw:s3cret@')
    config = write_config(tmp_path / 'as4gw.xml', pki,
                          listen=f'127.0.0.1:{free_port()}', store=dsn)
    line = one_json_error(daemon(cmd, config, tmp_path))
    assert line['msg'].startswith('store: ')
    assert 's3cret' not in line['msg']


def test_serve_key_mismatch_is_one_json_line(tmp_path, pki):
    """gateway_new refuses a signing key that is not the certificate's."""
    config = write_config(tmp_path / 'as4gw.xml', pki,
                          listen=f'127.0.0.1:{free_port()}',
                          store=f'sqlite:{tmp_path}/as4gw.db',
                          signing_key=f'{pki}/sender.key')
    one_json_error(run_as4gw('serve', '-c', config, timeout=30))


def test_interactive_commands_stay_text(tmp_path):
    """migrate and purge (run by hand or cron) keep the human line."""
    for cmd in ('migrate', 'purge'):
        p = run_as4gw(cmd, '-c', tmp_path / 'missing.xml')
        assert p.returncode == 1
        assert p.stderr.startswith('as4gw: could not open file'), p.stderr
