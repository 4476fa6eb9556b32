"""The as4gw command line against the real binary: push, replay, pmode-check,
migrate, serve start-up refusals and overrides, top-level dispatch.
Every test that involves a store runs on SQLite and PostgreSQL."""
import json
import os
import re
import subprocess
import time

import pytest

import as4msg
from conftest import (BIN, DEV_LEG, SIGNED_LEG, Gateway, Store, free_port, make_dsn,
                      new_id, run_as4gw, write_config)

PAYLOAD = b'<Invoice xmlns="urn:as4gw:test">cli-push-1</Invoice>\n'


def push_args(gw, pki, mid, *extra, payloads=None, action='urn:as4gw:dev:Deliver',
              cert='gateway.crt'):
    """Arguments for `as4gw push` on the DEV leg of gateway gw."""
    args = ['push', '--url', gw.url, '--from', 'urn:as4gw:dev:sender',
            '--to', 'urn:as4gw:dev:gateway', '--service', 'urn:as4gw:dev:service',
            '--action', action, '--message-id', mid]
    if cert is not None:
        args += ['--gateway-cert', f'{pki}/{cert}']
    for p in payloads or ():
        args += ['--payload', str(p)]
    return args + list(extra)


def payload_file(tmp_path, name='invoice.xml', data=PAYLOAD):
    p = tmp_path / name
    p.write_bytes(data)
    return p


def answer_body(stdout):
    """The answer body `push` prints after its "HTTP nnn" line."""
    first, _, rest = stdout.partition('\n')
    assert re.fullmatch(r'HTTP \d{3}', first), stdout[:200]
    return rest


def stored_receipt(store, mid):
    return bytes(store.query('SELECT receipt FROM inbox WHERE message_id = ?', mid)[0][0])


# ---- push -------------------------------------------------------------------

def test_push_end_to_end_verifies_signature_and_stores_one_row(gateway, pki, tmp_path):
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)]))
    assert p.returncode == 0, p.stderr
    assert 'signature verified' in p.stderr
    assert f'receipt ok: ref {mid}' in p.stderr
    assert p.stdout.startswith('HTTP 200\n')
    assert gateway.store.counts(mid) == (1, 1, 1)
    # what push printed is what the gateway stored and will return on a retry
    assert answer_body(p.stdout).encode().rstrip(b'\n') == stored_receipt(gateway.store, mid).rstrip(b'\n')
    content = gateway.store.query('SELECT content, mime_type FROM payload WHERE message_id = ?', mid)
    assert bytes(content[0][0]) == PAYLOAD
    assert content[0][1] == 'application/xml'


def test_push_twice_same_message_id_is_a_retry(gateway, pki, tmp_path):
    """Same --message-id and payload: push derives ConversationId and Content-IDs,
    so the second run is a retry and gets the stored Receipt byte for byte."""
    mid = new_id()
    args = push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)])
    first = run_as4gw(*args)
    assert first.returncode == 0, first.stderr
    second = run_as4gw(*args)
    assert second.returncode == 0, second.stderr
    assert 'signature verified' in second.stderr
    assert second.stdout == first.stdout
    assert answer_body(second.stdout).encode().rstrip(b'\n') == \
        stored_receipt(gateway.store, mid).rstrip(b'\n')
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


def test_push_same_message_id_other_payload_is_drift(gateway, pki, tmp_path):
    mid = new_id()
    first = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)]))
    assert first.returncode == 0, first.stderr
    other = payload_file(tmp_path, 'other.xml', b'<Invoice>other</Invoice>')
    second = run_as4gw(*push_args(gateway, pki, mid, payloads=[other]))
    assert second.returncode == 1
    assert 'EBMS:0004' in second.stderr
    assert gateway.store.counts(mid) == (1, 1, 1)
    content = gateway.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert bytes(content[0][0]) == PAYLOAD
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 0


def test_push_twice_with_pinned_ids_gets_byte_identical_receipt(gateway, pki, tmp_path):
    """The retry guarantee through `push` with ConversationId and Content-ID given."""
    mid = new_id()
    spec = f'{payload_file(tmp_path)};cid=part-1@as4gw-test'
    args = push_args(gateway, pki, mid, '--conversation', 'conv-cli-1', payloads=[spec])
    first = run_as4gw(*args)
    assert first.returncode == 0, first.stderr
    second = run_as4gw(*args)
    assert second.returncode == 0, second.stderr
    assert 'signature verified' in second.stderr
    assert second.stdout == first.stdout
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


def test_push_with_wrong_gateway_cert_fails(gateway, pki, tmp_path):
    """The Receipt is signed by gateway.key, so checking it against sender.crt fails
    (the message itself was accepted: the gateway did its part)."""
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)],
                             cert='sender.crt'))
    assert p.returncode == 1, p.stderr
    assert 'signature not valid' in p.stderr
    assert 'signature verified' not in p.stderr
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_push_unreadable_gateway_cert_is_refused_before_sending(gateway, pki, tmp_path):
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)],
                             cert='no-such.crt'))
    assert p.returncode == 1
    assert 'no-such.crt' in p.stderr
    assert gateway.store.counts(mid) == (0, 0, 0)


def test_push_wrong_action_reports_ebms_0010_and_stores_nothing(gateway, pki, tmp_path):
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)],
                             action='urn:as4gw:dev:NoSuchAction'))
    assert p.returncode == 1
    assert 'EBMS:0010' in p.stderr
    assert 'EBMS:0010' in p.stdout  # the printed answer
    assert gateway.store.counts(mid) == (0, 0, 0)
    assert gateway.store.totals() == (0, 0, 0)


def test_push_two_payloads_two_rows(gateway, pki, tmp_path):
    mid = new_id()
    a = payload_file(tmp_path, 'a.xml', b'<a/>')
    b = payload_file(tmp_path, 'b.bin', bytes(range(256)) * 3)
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[a, b]))
    assert p.returncode == 0, p.stderr
    rows = gateway.store.query(
        'SELECT part_no, mime_type, content FROM payload WHERE message_id = ? ORDER BY part_no', mid)
    assert [(r[0], r[1]) for r in rows] == [(0, 'application/xml'), (1, 'application/octet-stream')]
    assert bytes(rows[0][2]) == b'<a/>' and bytes(rows[1][2]) == bytes(range(256)) * 3
    assert gateway.store.counts(mid) == (1, 2, 1)


def test_push_without_payload_sends_bare_soap(gateway, pki):
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid))
    assert p.returncode == 0, p.stderr
    assert gateway.store.counts(mid) == (1, 0, 1)


def test_push_save_request_then_replay_gets_same_receipt(gateway, pki, tmp_path):
    mid = new_id()
    saved = tmp_path / 'request.mime'
    p = run_as4gw(*push_args(gateway, pki, mid, '--save-request', saved,
                             payloads=[payload_file(tmp_path)]))
    assert p.returncode == 0, p.stderr
    assert saved.exists() and (tmp_path / 'request.mime.ct').exists()
    assert (tmp_path / 'request.mime.ct').read_text().startswith('multipart/related')
    r = run_as4gw('replay', '--url', gateway.url, '--verbose', '--expect', 'receipt', saved)
    assert r.returncode == 0, r.stdout + r.stderr
    head, _, body = r.stdout.partition('\n')
    assert head == f'{saved}: HTTP 200 receipt ref={mid}'
    assert body == answer_body(p.stdout)
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert gateway.store.query('SELECT duplicates FROM inbox WHERE message_id = ?', mid)[0][0] == 1


@pytest.mark.parametrize('args', [
    ['push'],                                                          # nothing
    ['push', '--url', 'http://127.0.0.1:1/as4', '--from', 'a:b'],      # --to missing
    ['push', '--bogus'],
    ['push', '--url', 'http://127.0.0.1:1/as4', '--from', 'urn:a', '--to', 'urn:b',
     '--service', 'urn:s', '--action', 'A', '--message-id', 'has space'],
    ['push', '--url', 'http://127.0.0.1:1/as4', '--from', 'urn:a', '--to', 'urn:b',
     '--service', 'urn:s', '--action', 'A', '--count', '0'],
    ['push', '--url', 'http://127.0.0.1:1/as4', '--from', 'urn:a', '--to', 'urn:b',
     '--service', 'urn:s', '--action', 'A', 'stray-argument'],
])
def test_push_usage_errors_exit_2(args):
    p = run_as4gw(*args)
    assert p.returncode == 2, (args, p.stderr)
    assert p.stderr.strip()


def test_push_help_exits_0():
    p = run_as4gw('push', '--help')
    assert p.returncode == 0
    assert p.stdout.startswith('usage: as4gw push')


def test_push_unreachable_gateway_exits_1(tmp_path):
    port = free_port()
    p = run_as4gw('push', '--url', f'http://127.0.0.1:{port}/as4', '--from', 'urn:a',
                  '--to', 'urn:b', '--service', 'urn:s', '--action', 'A',
                  '--connect-timeout', '2')
    assert p.returncode == 1
    assert 'failed' in p.stderr


def _maps_libcurl(pid):
    """The lines of /proc/PID/maps that map a libcurl file."""
    with open(f'/proc/{pid}/maps') as f:
        return [line for line in f if 'libcurl' in line]


def test_serve_does_not_map_libcurl_push_still_works(gateway, pki, tmp_path):
    """Issue 5 (idle RSS): as4gw does not link libcurl; only push and replay
    dlopen() it, so a serving gateway never maps it, before or after it has
    answered a push."""
    assert _maps_libcurl(gateway.proc.pid) == []
    mid = new_id()
    p = run_as4gw(*push_args(gateway, pki, mid, payloads=[payload_file(tmp_path)]))
    assert p.returncode == 0, p.stderr
    assert f'receipt ok: ref {mid}' in p.stderr
    assert gateway.store.counts(mid) == (1, 1, 1)
    assert _maps_libcurl(gateway.proc.pid) == []


@pytest.mark.parametrize('cmd', ['push', 'replay'])
def test_client_without_loadable_libcurl_fails_with_one_line(tmp_path, cmd):
    """dlopen("libcurl.so.4") searches LD_LIBRARY_PATH first: a file there
    that is no shared object makes loading fail, as a missing libcurl does.
    Nothing is sent; one line names the library and dlerror()'s reason."""
    libdir = tmp_path / 'lib'
    libdir.mkdir()
    (libdir / 'libcurl.so.4').write_bytes(b'not a shared object\n')
    url = f'http://127.0.0.1:{free_port()}/as4'
    args = (['push', '--url', url, '--from', 'urn:a', '--to', 'urn:b',
             '--service', 'urn:s', '--action', 'A'] if cmd == 'push'
            else ['replay', '--url', url, __file__])
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60,
                       env=env)
    assert p.returncode == 1
    assert p.stdout == ''
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f'as4gw {cmd}: could not load libcurl (libcurl.so.4): ')
    assert str(libdir / 'libcurl.so.4') in lines[0]


# ---- replay -----------------------------------------------------------------

def test_replay_file_with_http_headers(gateway, tmp_path):
    mid = new_id()
    ct, body = as4msg.user_message(mid)
    f = tmp_path / 'recorded.http'
    f.write_bytes(b'POST /as4 HTTP/1.1\r\nHost: partner.example\r\n'
                  + f'Content-Type: {ct}\r\n'.encode()
                  + b'MIME-Version: 1.0\r\nSOAPAction: ""\r\n'
                  + f'Content-Length: {len(body)}\r\n\r\n'.encode() + body)
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', f)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == f'{f}: HTTP 200 receipt ref={mid}\n'
    assert gateway.store.counts(mid) == (1, 1, 1)
    content = gateway.store.query('SELECT content FROM payload WHERE message_id = ?', mid)
    assert bytes(content[0][0]) == b'<Invoice>1</Invoice>'


def test_replay_file_with_folded_header_lines(gateway, tmp_path):
    """Recorded headers may be folded (obs-fold): the Content-Type continues."""
    mid = new_id()
    ct, body = as4msg.user_message(mid)
    first, rest = ct.split('; ', 1)
    f = tmp_path / 'folded.http'
    f.write_bytes(f'Content-Type: {first};\r\n\t{rest}\r\n\r\n'.encode() + body)
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', f)
    assert r.returncode == 0, r.stdout + r.stderr
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_replay_bare_soap_xml_file(gateway, tmp_path):
    mid = new_id()
    f = tmp_path / 'bare.xml'
    f.write_text(as4msg.envelope(mid, cids=()))
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', f)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f'HTTP 200 receipt ref={mid}' in r.stdout
    assert gateway.store.counts(mid) == (1, 0, 1)


def test_replay_bare_multipart_body_sniffs_boundary(gateway, tmp_path):
    mid = new_id()
    _, body = as4msg.user_message(mid)
    f = tmp_path / 'bare.mime'
    f.write_bytes(body)
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', f)
    assert r.returncode == 0, r.stdout + r.stderr
    assert gateway.store.counts(mid) == (1, 1, 1)


def test_replay_expect_exit_codes(gateway, tmp_path):
    good_mid, bad_mid = new_id(), new_id()
    good = tmp_path / 'good.xml'
    good.write_text(as4msg.envelope(good_mid, cids=()))
    bad = tmp_path / 'bad-action.xml'
    bad.write_text(as4msg.envelope(bad_mid, cids=(), action='urn:as4gw:dev:Nope'))
    junk = tmp_path / 'junk.xml'
    junk.write_text('<not-closed>')

    # an eb:Error is an answer: without --expect that is exit 0
    r = run_as4gw('replay', '--url', gateway.url, bad)
    assert r.returncode == 0, r.stdout
    assert 'error EBMS:0010' in r.stdout
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'error', bad)
    assert r.returncode == 0, r.stdout
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', bad)
    assert r.returncode == 1, r.stdout
    assert gateway.store.counts(bad_mid) == (0, 0, 0)

    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'fault', junk)
    assert r.returncode == 0, r.stdout
    assert 'HTTP 400 fault Sender' in r.stdout
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', junk)
    assert r.returncode == 1

    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'error', good)
    assert r.returncode == 1, r.stdout  # it got a receipt, not an error
    assert gateway.store.counts(good_mid) == (1, 0, 1)
    # several files: one miss makes the run fail, each file still gets its line
    r = run_as4gw('replay', '--url', gateway.url, '--expect', 'receipt', good, bad)
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 2
    assert f'receipt ref={good_mid}' in r.stdout and 'error EBMS:0010' in r.stdout
    assert gateway.store.counts(good_mid) == (1, 0, 1)
    assert gateway.store.counts(bad_mid) == (0, 0, 0)
    assert gateway.store.totals() == (1, 0, 1)


def test_replay_prints_each_error_code_short_description_and_description(gateway, tmp_path):
    """Issue 10 item 12: per file, every eb:Error's code, shortDescription
    and Description (and ErrorDetail when the answer has one), on the
    file's one line; nothing stored."""
    mid = new_id()
    bad = tmp_path / 'bad-action.xml'
    bad.write_text(as4msg.envelope(mid, cids=(), action='urn:as4gw:dev:Nope'))
    r = run_as4gw('replay', '--url', gateway.url, bad)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    m = re.fullmatch(rf'{re.escape(str(bad))}: HTTP 200 error EBMS:0010 '
                     r'ProcessingModeMismatch: (\S.*)', lines[0])
    assert m, lines[0]
    desc = m.group(1)
    # the same text the partner's eb:Error carries
    ans = gateway.post('application/soap+xml', bad.read_bytes())
    assert ans.error_code == 'EBMS:0010'
    assert desc.encode() in ans.body.replace(b'&quot;', b'"').replace(b'&apos;', b"'"), \
        (desc, ans.body[:600])
    assert gateway.store.counts(mid) == (0, 0, 0)


def test_replay_missing_file_and_unreachable_url_exit_1(gateway, tmp_path):
    r = run_as4gw('replay', '--url', gateway.url, tmp_path / 'nope.mime')
    assert r.returncode == 1
    assert 'not sent' in r.stdout
    f = tmp_path / 'x.xml'
    f.write_text(as4msg.envelope(new_id(), cids=()))
    r = run_as4gw('replay', '--url', f'http://127.0.0.1:{free_port()}/as4',
                  '--connect-timeout', '2', f)
    assert r.returncode == 1
    assert 'not sent' in r.stdout
    assert gateway.store.totals() == (0, 0, 0)


def test_replay_unrecognisable_file_is_not_sent(gateway, tmp_path):
    f = tmp_path / 'random.bin'
    f.write_bytes(b'\x00\x01binary garbage')
    r = run_as4gw('replay', '--url', gateway.url, f)
    assert r.returncode == 1
    assert 'Content-Type' in r.stdout and 'not sent' in r.stdout
    assert gateway.store.totals() == (0, 0, 0)


@pytest.mark.parametrize('args', [
    ['replay'],
    ['replay', '--url', 'http://127.0.0.1:1/as4'],              # no FILE
    ['replay', 'file.xml'],                                     # no --url
    ['replay', '--url', 'http://127.0.0.1:1/as4', '--expect', 'maybe', 'f'],
    ['replay', '--url', 'http://127.0.0.1:1/as4', '--bogus', 'f'],
])
def test_replay_usage_errors_exit_2(args):
    p = run_as4gw(*args)
    assert p.returncode == 2, (args, p.stdout, p.stderr)
    assert p.stderr.strip()


# ---- pmode-check ---------------------------------------------------------------

def test_pmode_check_good_config_lists_legs(tmp_path, pki):
    cfg = write_config(tmp_path / 'ok.xml', pki, store=f'sqlite:{tmp_path}/x.db')
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == f'{cfg}: ok'
    legs = re.findall(r'^  ([\w.-]+): ', p.stdout, re.M)
    assert legs == ['dev-sample', 'dev-signed'], p.stdout
    assert 'urn:as4gw:dev:Deliver' in p.stdout
    assert not os.path.exists(f'{tmp_path}/x.db')  # checking opens no store


def test_pmode_check_shipped_example_config(pki, tmp_path):
    """conf/as4gw.xml is valid once its keys exist (point it at the test PKI)."""
    from conftest import SRC
    text = open(os.path.join(SRC, 'conf', 'as4gw.xml')).read()
    text = text.replace('../certs/dev/', f'{pki}/').replace('../var/', f'{tmp_path}/')
    cfg = tmp_path / 'as4gw.xml'
    cfg.write_text(text)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 0, p.stderr
    assert '  dev-sample: ' in p.stdout


def _bad_configs(tmp_path, pki):
    """(name, config text, a word the one-line message must contain)."""
    good = open(write_config(tmp_path / 'base.xml', pki, store='sqlite:x.db')).read()
    dev, signed = (leg.replace('{pki}', str(pki)) for leg in (DEV_LEG, SIGNED_LEG))
    assert dev in good and signed in good
    dup = dev.replace('urn:as4gw:dev:Deliver', 'urn:as4gw:dev:Other')
    return [
        ('unknown-element', good.replace('<threads>', '<colour>blue</colour><threads>'), 'colour'),
        ('duplicate-pmode-id', good.replace(signed, signed + dup), 'dev-sample'),
        # a leg overlapping dev-sample with another PartyId list (legs that
        # differ only by id load: AgreementRef/@pmode tells them apart)
        ('ambiguous-legs', good.replace(signed, dev.replace('dev-sample', 'dev-again').replace(
            '<partyId>urn:as4gw:dev:sender</partyId>',
            '<partyId>urn:as4gw:dev:sender</partyId><partyId>urn:as4gw:dev:alias</partyId>')),
         'ambiguous'),
        ('missing-signing-key', good.replace(f'{pki}/gateway.key', f'{pki}/missing.key'),
         'missing.key'),
        ('listen-port-70000', good.replace('127.0.0.1:0', '127.0.0.1:70000'), '70000'),
        ('store-scheme', good.replace('sqlite:x.db', 'mysql://db/x'), 'mysql'),
        ('not-well-formed', good.replace('</gateway>', '</gatewy>'), 'well-formed'),
        ('doctype', good.replace('<as4gw ', '<!DOCTYPE as4gw [<!ENTITY e "x">]><as4gw '), 'DTD'),
        ('no-legs', good.replace(dev, '').replace(signed, ''), 'pmode'),
        ('threads-zero', good.replace('<threads>4</threads>', '<threads>0</threads>'), 'threads'),
        ('missing-tls-key', good.replace(
            '<threads>4</threads>',
            f'<threads>4</threads><tls><certificate>{pki}/tls.crt</certificate>'
            f'<key>{pki}/nope-tls.key</key></tls>'), 'nope-tls.key'),
    ]


@pytest.mark.parametrize('case', range(11))
def test_pmode_check_bad_config_one_line(tmp_path, pki, case):
    name, text, word = _bad_configs(tmp_path, pki)[case]
    assert text != open(tmp_path / 'base.xml').read(), name  # the mutation applied
    cfg = tmp_path / f'{name}.xml'
    cfg.write_text(text)
    p = run_as4gw('pmode-check', '-c', cfg)
    assert p.returncode == 1, (name, p.stdout, p.stderr)
    assert p.stdout == ''
    lines = p.stderr.splitlines()
    assert len(lines) == 1, (name, p.stderr)
    assert word in lines[0], (name, lines[0])
    assert str(cfg) in lines[0], (name, lines[0])


def test_pmode_check_missing_file(tmp_path):
    p = run_as4gw('pmode-check', '-c', tmp_path / 'absent.xml')
    assert p.returncode == 1
    assert len(p.stderr.splitlines()) == 1 and 'absent.xml' in p.stderr


@pytest.mark.parametrize('args', [
    ['pmode-check'],
    ['pmode-check', '-c'],
    ['pmode-check', '--bogus', '-c', 'x.xml'],
    ['pmode-check', '-c', 'x.xml', 'extra'],
])
def test_pmode_check_usage_errors_exit_2(args):
    p = run_as4gw(*args)
    assert p.returncode == 2, (args, p.stderr)
    assert 'usage' in p.stderr


# ---- migrate ---------------------------------------------------------------------

def _tables(store):
    if store.backend == 'sqlite':
        rows = store.query("SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        rows = store.query("SELECT table_name FROM information_schema.tables "
                           "WHERE table_schema = current_schema()")
    return {r[0] for r in rows}


def test_migrate_fresh_store_twice(backend, tmp_path, pki):
    dsn = make_dsn(backend, tmp_path)
    # the file's store is unusable: --db must win
    cfg = write_config(tmp_path / 'm.xml', pki, store='sqlite:/nonexistent/dir/x.db')
    p = run_as4gw('migrate', '-c', cfg, '--db', dsn)
    assert p.returncode == 0, p.stderr
    store = Store(backend, dsn)
    assert {'inbox', 'payload', 'delivery', 'schema_migrations'} <= _tables(store)
    applied = store.query('SELECT name FROM schema_migrations ORDER BY name')
    assert applied, 'no migration recorded'
    # it says how many it applied, and that there was nothing to do (issue 11 item 8)
    assert p.stdout == f'migrations applied: {len(applied)}\n'
    p = run_as4gw('migrate', '-c', cfg, '--db', dsn)
    assert p.returncode == 0, p.stderr
    assert p.stdout == 'no migration to apply: the schema is current\n'
    assert store.query('SELECT name FROM schema_migrations ORDER BY name') == applied
    assert store.totals() == (0, 0, 0)


def test_migrate_uses_config_store(tmp_path, pki):
    db = tmp_path / 'from-config.db'
    cfg = write_config(tmp_path / 'm.xml', pki, store=f'sqlite:{db}')
    p = run_as4gw('migrate', '-c', cfg)
    assert p.returncode == 0, p.stderr
    assert 'inbox' in _tables(Store('sqlite', f'sqlite:{db}'))


def test_migrate_unusable_store_exits_1(tmp_path, pki):
    cfg = write_config(tmp_path / 'm.xml', pki, store=f'sqlite:{tmp_path}/ok.db')
    p = run_as4gw('migrate', '-c', cfg, '--db', 'sqlite:/nonexistent/dir/x.db')
    assert p.returncode == 1
    assert len(p.stderr.splitlines()) == 1 and 'x.db' in p.stderr
    p = run_as4gw('migrate', '-c', cfg, '--db', f'postgresql://nobody@127.0.0.1:{free_port()}/x')
    assert p.returncode == 1
    assert p.stderr.startswith('as4gw: store: ')
    assert len(p.stderr.splitlines()) == 1, p.stderr  # libpq's "\n\tIs the server..." joined
    assert not os.path.exists(f'{tmp_path}/ok.db')


def test_migrate_usage_errors_exit_2():
    assert run_as4gw('migrate').returncode == 2
    assert run_as4gw('migrate', '--db', 'sqlite:x.db').returncode == 2
    assert run_as4gw('migrate', '-c', 'x.xml', 'extra').returncode == 2


# ---- serve: start-up refusals and overrides ---------------------------------------

def _serve_fails(cfg, *extra):
    t0 = time.monotonic()
    p = run_as4gw('serve', '-c', cfg, *extra, timeout=20)
    took = time.monotonic() - t0
    assert p.returncode != 0
    assert took < 10, f'serve took {took:.1f}s to refuse'
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    assert len(lines) == 1, p.stderr
    return lines[0]


@pytest.mark.parametrize('mutation,word', [
    (('127.0.0.1:0', '127.0.0.1:70000'), '70000'),
    (('<store>sqlite:', '<store>mysql:'), 'mysql'),
    (('gateway.key', 'absent.key'), 'absent.key'),
    (('</gateway>', '<unknown/></gateway>'), 'unknown'),
])
def test_serve_invalid_config_refused_with_one_line(tmp_path, pki, mutation, word):
    cfg = write_config(tmp_path / 's.xml', pki, store=f'sqlite:{tmp_path}/s.db')
    text = open(cfg).read()
    assert mutation[0] in text
    open(cfg, 'w').write(text.replace(mutation[0], mutation[1]))
    line = _serve_fails(cfg)
    assert word in line, line
    assert not os.path.exists(f'{tmp_path}/s.db')


def test_serve_unusable_store_refused(tmp_path, pki):
    cfg = write_config(tmp_path / 's.xml', pki, store='sqlite:/nonexistent/dir/s.db')
    line = _serve_fails(cfg)
    assert 'store' in line and '/nonexistent/dir/s.db' in line, line


def test_serve_unreachable_postgresql_refused(tmp_path, pki):
    cfg = write_config(tmp_path / 's.xml', pki,
                       store=f'postgresql://nobody@127.0.0.1:{free_port()}/as4gw')
    line = _serve_fails(cfg)
    # serve's start-up error is a JSON log line (issue 11 item 12)
    assert json.loads(line)['msg'].startswith('store: '), line


def test_serve_port_in_use_refused(tmp_path, pki):
    import socket
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        cfg = write_config(tmp_path / 's.xml', pki, listen=f'127.0.0.1:{port}',
                           store=f'sqlite:{tmp_path}/s.db')
        t0 = time.monotonic()
        p = run_as4gw('serve', '-c', cfg, timeout=20)
        assert p.returncode == 1
        assert time.monotonic() - t0 < 10
        assert f'could not listen on 127.0.0.1:{port}' in p.stderr
    finally:
        s.close()


@pytest.mark.parametrize('extra,word', [
    (['--listen', '127.0.0.1:99999'], '--listen'),
    (['--listen', 'no-port'], '--listen'),
    (['--db', 'mysql://x/y'], 'store'),
])
def test_serve_invalid_override_refused(tmp_path, pki, extra, word):
    cfg = write_config(tmp_path / 's.xml', pki, store=f'sqlite:{tmp_path}/s.db')
    line = _serve_fails(cfg, *extra)
    assert word in line, line


def test_serve_listen_and_db_override_the_file(backend, tmp_path, pki):
    """<store> points at an unusable path and <listen> at another port: the
    gateway serves on --listen and stores in --db."""
    good = make_dsn(backend, tmp_path)
    gw = Gateway(tmp_path, pki, 'sqlite:/nonexistent/dir/never.db')
    file_port = gw.port
    gw.port = free_port()
    gw.dsn = good
    gw.start('--listen', f'127.0.0.1:{gw.port}', '--db', good)
    try:
        mid = new_id()
        ans = gw.post(*as4msg.user_message(mid))
        assert ans.status == 200 and ans.is_receipt, ans
        assert gw.store.counts(mid) == (1, 1, 1)
        import socket
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(('127.0.0.1', file_port), timeout=2).close()
        assert not os.path.exists('/nonexistent/dir/never.db')
    finally:
        assert gw.stop() == 0


def test_serve_help_and_usage(tmp_path):
    p = run_as4gw('serve', '--help')
    assert p.returncode == 0 and p.stdout.startswith('usage: as4gw serve')
    p = run_as4gw('serve')
    assert p.returncode == 2 and 'usage' in p.stderr
    p = run_as4gw('serve', '-c', 'x.xml', 'extra')
    assert p.returncode == 2
    p = run_as4gw('serve', '-c', 'x.xml', '--frobnicate')
    assert p.returncode == 2


# ---- top level ----------------------------------------------------------------------

def test_help_lists_commands():
    for flag in ('--help', '-h', 'help'):
        p = run_as4gw(flag)
        assert p.returncode == 0, flag
        for cmd in ('serve', 'push', 'replay', 'pmode-check', 'migrate'):
            assert f'as4gw {cmd}' in p.stdout
        # issue 10 item 12: the replay mode of serve is named at the top level
        serve = [l for l in p.stdout.splitlines() if 'as4gw serve' in l]
        assert serve and '[--verify-at INSTANT]' in serve[0], p.stdout
        assert re.search(r'(?m)^\s+--verify-at: .*as of INSTANT', p.stdout), p.stdout


def test_no_command_and_unknown_command_exit_2():
    p = subprocess.run([BIN], capture_output=True, text=True, timeout=30)
    assert p.returncode == 2 and 'usage' in p.stderr
    p = run_as4gw('frobnicate')
    assert p.returncode == 2
    assert 'unknown command "frobnicate"' in p.stderr
    assert p.stdout == ''
