"""Issue 14, "test both sides of the threshold": a representative part of
test_attacks.py run again on a gateway that spools every body
(spoolThresholdBytes 0), expecting the same answers as the in-memory path
(test_attacks.py runs them in memory): unsigned, partly signed, wrapped,
tampered and encrypted-and-tampered messages, decryption and decompression
failures, and their positive controls.  After every test the gateway holds no
descriptor into its spool directory.  Both backends."""
import pytest

import test_attacks as ta
from conftest import Gateway, make_dsn, spool_limits, wait_no_spool_fds
# the fixtures of test_attacks.py, shared (pytest finds them by name here)
from test_attacks import apki, fresh_gw, make  # noqa: F401


@pytest.fixture(scope='module', params=['sqlite', 'postgresql'])
def sgw(request, tmp_path_factory, pki, apki):  # noqa: F811
    """test_attacks.py's shared gateway, spooling every body."""
    d = tmp_path_factory.mktemp(f'spool-attack-gw-{request.param}')
    spool = d / 'spool'
    spool.mkdir()
    gw = Gateway(d, pki, make_dsn(request.param, d),
                 legs=ta.ATTACK_LEGS.replace('{apki}', str(apki)),
                 limits=ta.ATTACK_LIMITS + spool_limits(spool)).start()
    gw.spool = str(spool)
    yield gw
    rc = gw.stop()
    assert rc == 0, f'as4gw exited {rc} after SIGTERM: {gw.logtext()[-2000:]}'


@pytest.fixture
def agw(sgw):
    """Each test below on the spooling gateway; then no spool file left."""
    yield sgw
    left = wait_no_spool_fds(sgw, sgw.spool)
    assert not left, f'spool files left open: {left}'


@pytest.mark.parametrize('how', ['security-header-stripped', 'never-signed'])
def test_28_spooled(agw, make, how):  # noqa: F811
    ta.test_28_unsigned_message_to_signing_leg(agw, make, how)


@pytest.mark.parametrize('resign', [True, False], ids=['re-signed', 'signature-broken'])
def test_30_spooled(agw, make, pki, resign):  # noqa: F811
    ta.test_30_signature_not_covering_one_payload(agw, make, pki, resign)


@pytest.mark.parametrize('kind', ['xml-payload', 'binary-payload', 'encrypted-plaintext'])
def test_39_spooled(agw, make, pki, kind):  # noqa: F811
    ta.test_39_attachment_byte_flipped(agw, make, pki, kind)


@pytest.mark.parametrize('kind', ['copied', 'moved'])
def test_50_spooled(agw, make, pki, kind):  # noqa: F811
    ta.test_50_encrypted_data_in_header_wrapper(agw, make, pki, kind)


def test_51_spooled(agw, make, pki):  # noqa: F811
    ta.test_51_unencrypted_payload_where_encryption_required(agw, make, pki)


@pytest.mark.parametrize('kind', ['not-gzip', 'truncated', 'bad-crc', 'corrupt-deflate',
                                  'empty'])
def test_52_spooled(agw, kind):
    ta.test_52_compressed_payload_not_gzip(agw, kind)


def test_52_signed_spooled(agw, make, pki):  # noqa: F811
    ta.test_52_signed_compressed_payload_not_gzip(agw, make, pki)


@pytest.mark.usefixtures('spool_side')
def test_controls_spooled(fresh_gw, make, pki):  # noqa: F811
    """The positive controls through the spool: re-signed, encrypted, gzip."""
    ta.test_resigning_alone_is_accepted(fresh_gw, make, pki)
    ta.test_51_control_encrypted_accepted(fresh_gw, make, pki)
