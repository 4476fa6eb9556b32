"""Issue 11 items 6 and 6b: /readyz reflects the ability to accept (a store
that answers a ping but fails every commit is not ready), and a drift is
counted under its code EBMS:0004.  Both backends; the store's commits are
made to fail with a trigger that refuses every inbox row (what a full disk
does to SQLite: reads work, writes fail)."""
import re
import sqlite3

from as4msg import user_message
from conftest import Gateway, make_dsn, new_id


def execute(store, sql):
    if store.backend == 'sqlite':
        con = sqlite3.connect(store.dsn[len('sqlite:'):], timeout=30)
        try:
            con.executescript(sql)
        finally:
            con.close()
        return
    import psycopg2
    con = psycopg2.connect(store.dsn)
    con.autocommit = True
    try:
        with con.cursor() as cur:
            cur.execute(sql)
    finally:
        con.close()


FAIL_ON = {
    'sqlite': "CREATE TRIGGER t_full BEFORE INSERT ON inbox BEGIN "
              "SELECT RAISE(ABORT, 'database or disk is full (test)'); END;",
    'postgresql': "CREATE FUNCTION t_full() RETURNS trigger LANGUAGE plpgsql AS $$ "
                  "BEGIN RAISE EXCEPTION 'disk full (test)'; END $$; "
                  "CREATE TRIGGER t_full BEFORE INSERT ON inbox "
                  "FOR EACH ROW EXECUTE FUNCTION t_full();",
}
FAIL_OFF = {
    'sqlite': 'DROP TRIGGER t_full;',
    'postgresql': 'DROP TRIGGER t_full ON inbox; DROP FUNCTION t_full();',
}


def metric(gw, name, label):
    text = gw.get('/metrics').body.decode()
    m = re.search(rf'^{re.escape(name)}\{{{re.escape(label)}\}} (\d+)$', text, re.M)
    assert m, text
    return int(m.group(1))


def test_readyz_not_ready_while_commits_fail(gateway):
    assert gateway.get('/readyz').status == 200
    execute(gateway.store, FAIL_ON[gateway.store.backend])
    ans = gateway.post(*user_message(new_id()))
    assert ans.status == 503, ans
    assert gateway.store.totals() == (0, 0, 0)
    ready = gateway.get('/readyz')
    assert ready.status == 503 and b'failing' in ready.body, ready
    # the store is back: the next accepted push makes it ready again (or,
    # without traffic, the ping once HTTP_READY_FAIL_MS has passed)
    execute(gateway.store, FAIL_OFF[gateway.store.backend])
    ans = gateway.post(*user_message(new_id()))
    assert ans.status == 200 and ans.is_receipt, ans
    assert gateway.get('/readyz').status == 200


def test_drift_counted_under_its_code(gateway):
    mid = new_id()
    assert gateway.post(*user_message(mid)).is_receipt
    before = metric(gateway, 'as4gw_errors_total', 'code="EBMS:0004"')
    ans = gateway.post(*user_message(mid, payload=b'<Invoice>2</Invoice>'))
    assert ans.error_code == 'EBMS:0004', ans
    assert metric(gateway, 'as4gw_messages_total', 'outcome="drift"') == 1
    assert metric(gateway, 'as4gw_errors_total', 'code="EBMS:0004"') == before + 1


KILL_ON = ("CREATE FUNCTION t_kill() RETURNS trigger LANGUAGE plpgsql AS $$ "
           "BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); "
           "PERFORM pg_sleep(5); RETURN NEW; END $$; "
           "CREATE TRIGGER t_kill BEFORE INSERT ON inbox "
           "FOR EACH ROW EXECUTE FUNCTION t_kill();")
KILL_OFF = 'DROP TRIGGER t_kill ON inbox; DROP FUNCTION t_kill();'


def test_readyz_ready_when_a_push_lost_its_connection(tmp_path, pki):
    """CI failure of stop 16: a push whose PostgreSQL connection went away
    mid-transaction (server restarting) was answered 503, and the ping that
    followed — on a fresh connection to the returned server — made /readyz
    say "store failing commits" for 5 s although every commit worked.  The
    connection is cut here by the server itself (a trigger terminating its
    own backend), deterministically: the push is 503 with nothing stored,
    /readyz stays 200, and the next push is accepted."""
    gateway = Gateway(tmp_path, pki, make_dsn('postgresql', tmp_path)).start()
    try:
        _lost_connection_not_failing(gateway)
    finally:
        assert gateway.stop() == 0


def _lost_connection_not_failing(gateway):
    execute(gateway.store, KILL_ON)
    ans = gateway.post(*user_message(new_id()))
    assert ans.status == 503, ans
    execute(gateway.store, KILL_OFF)
    assert gateway.store.totals() == (0, 0, 0)
    assert [gateway.get('/readyz').status for _ in range(4)] == [200] * 4
    ans = gateway.post(*user_message(new_id()))
    assert ans.status == 200 and ans.is_receipt, ans
    assert gateway.store.totals()[0] == 1
