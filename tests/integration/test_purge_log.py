"""The purge log (issue 11 item 6): purges run by `as4gw purge` were not
counted in a running `serve`'s /metrics (each process counted only its own
background purge).  Every run is now a row of the store's purge_log (bounded:
the last 1000) with running totals per source, and /metrics reads them: runs
by source and outcome, rows purged by source, the last success.  Migrations
sqlite 006 / postgresql 007, applied by name whatever lower numbers are
missing.  On SQLite and PostgreSQL.
"""
import time

import pytest

import as4msg
from conftest import BIN, new_id, run_as4gw

FAR_FUTURE = '2100-01-01T00:00:00Z'
NO_BACKGROUND = ('<purge><intervalSeconds>0</intervalSeconds>'
                 '<undelivered>purge</undelivered></purge>')


def push(gw, mid):
    ct, body = as4msg.multipart(as4msg.envelope(mid, cids=('a@t',)),
                                [('a@t', 'application/xml', b'<a/>')])
    ans = gw.post(ct, body)
    assert ans.status == 200 and ans.is_receipt, ans


def metrics(gw):
    """{sample name with labels: value} of GET /metrics."""
    out = {}
    for line in gw.get('/metrics').body.decode().splitlines():
        if line and not line.startswith('#'):
            name, value = line.rsplit(' ', 1)
            out[name] = float(value)
    return out


def runs(m, source, outcome='ok'):
    return m[f'as4gw_purge_runs_total{{source="{source}",outcome="{outcome}"}}']


def test_cli_purge_is_counted_by_a_running_serve(gateway_factory):
    """`as4gw purge` as its own process: the running serve's /metrics
    shows the run under source="cli", the rows it purged and when it last
    succeeded; the log row says the same.  Before, /metrics had no such
    families and as4gw_purge_last_success_timestamp_seconds stayed 0."""
    gw = gateway_factory(extra_gateway=NO_BACKGROUND).start()
    before = metrics(gw)
    assert runs(before, 'cli') == 0 and runs(before, 'background') == 0
    assert before['as4gw_purge_last_success_timestamp_seconds'] == 0
    for _ in range(3):
        push(gw, new_id())
    t0 = time.time()
    p = run_as4gw('purge', '-c', gw.config, '--now', FAR_FUTURE)
    assert p.returncode == 0, p.stderr
    assert 'purged 3,' in p.stdout
    assert gw.store.totals() == (0, 0, 0)
    m = metrics(gw)
    assert runs(m, 'cli') == 1
    assert runs(m, 'cli', 'failed') == 0 and runs(m, 'background') == 0
    assert m['as4gw_purged_messages_total{source="cli"}'] == 3
    assert m['as4gw_purged_messages_total{source="background"}'] == 0
    assert m['as4gw_purge_source_last_success_timestamp_seconds{source="cli"}'] >= int(t0)
    assert m['as4gw_purge_last_success_timestamp_seconds'] >= int(t0)
    assert m['as4gw_purged_total'] == 0   # this process purged nothing itself
    rows = gw.store.query('SELECT source, outcome, purged, kept, batches, error'
                          ' FROM purge_log')
    assert rows == [('cli', 'ok', 3, 0, 1, None)], rows
    # a second run that finds nothing is counted too
    p = run_as4gw('purge', '-c', gw.config, '--now', FAR_FUTURE)
    assert p.returncode == 0, p.stderr
    m = metrics(gw)
    assert runs(m, 'cli') == 2
    assert m['as4gw_purged_messages_total{source="cli"}'] == 3


def test_background_purge_is_in_the_log_too(gateway_factory):
    """serve's own background purge is recorded under source="background",
    so a second serve on the same store (no background purge of its own)
    shows it."""
    gw = gateway_factory(extra_gateway='<purge><intervalSeconds>1</intervalSeconds>'
                         '<undelivered>purge</undelivered></purge>').start()
    deadline = time.time() + 15
    while time.time() < deadline and gw.store.query(
            "SELECT count(*) FROM purge_log WHERE source = 'background'")[0][0] == 0:
        time.sleep(0.2)
    m = metrics(gw)
    assert runs(m, 'background') >= 1
    assert m['as4gw_purge_source_last_success_timestamp_seconds{source="background"}'] > 0
    assert runs(m, 'cli') == 0


def test_purge_log_is_bounded_and_totals_are_not(gateway):
    """The log keeps the last 1000 runs; the totals count every run."""
    store = gateway.store
    if store.backend == 'sqlite':
        import sqlite3
        con = sqlite3.connect(gateway.dsn[len('sqlite:'):], timeout=30)
        with con:
            for i in range(1005):
                con.execute("INSERT INTO purge_log (started_at, finished_at, source,"
                            " outcome, purged, kept, batches) VALUES"
                            " (?, ?, 'cli', 'ok', 2, 0, 1)", (i, i + 1))
        con.close()
    else:
        import psycopg2
        con = psycopg2.connect(gateway.dsn)
        with con, con.cursor() as cur:
            for i in range(1005):
                cur.execute("INSERT INTO purge_log (started_at, finished_at, source,"
                            " outcome, purged, kept, batches) VALUES"
                            " (now(), now(), 'cli', 'ok', 2, 0, 1)")
        con.close()
    assert store.query('SELECT count(*) FROM purge_log')[0][0] == 1000
    m = metrics(gateway)
    assert runs(m, 'cli') == 1005
    assert m['as4gw_purged_messages_total{source="cli"}'] == 2010


def test_failed_cli_purge_is_logged_as_failed(gateway_factory):
    """A run that fails is a row with outcome failed and its reason, and
    counts as failed: here the store refuses the DELETE (a trigger made for
    the test), the run and the log row stay."""
    gw = gateway_factory(extra_gateway=NO_BACKGROUND).start()
    push(gw, new_id())
    if gw.store.backend == 'sqlite':
        import sqlite3
        con = sqlite3.connect(gw.dsn[len('sqlite:'):], timeout=30)
        with con:
            con.execute("CREATE TRIGGER no_purge BEFORE DELETE ON inbox"
                        " BEGIN SELECT RAISE(ABORT, 'purge refused by test'); END")
        con.close()
    else:
        import psycopg2
        con = psycopg2.connect(gw.dsn)
        with con, con.cursor() as cur:
            cur.execute("CREATE FUNCTION no_purge() RETURNS trigger LANGUAGE plpgsql"
                        " AS $$ BEGIN RAISE EXCEPTION 'purge refused by test'; END $$")
            cur.execute("CREATE TRIGGER no_purge BEFORE DELETE ON inbox"
                        " FOR EACH ROW EXECUTE FUNCTION no_purge()")
        con.close()
    p = run_as4gw('purge', '-c', gw.config, '--now', FAR_FUTURE)
    assert p.returncode == 1
    rows = gw.store.query('SELECT source, outcome, purged, error FROM purge_log')
    assert len(rows) == 1 and rows[0][:3] == ('cli', 'failed', 0), rows
    assert 'purge refused by test' in rows[0][3]
    m = metrics(gw)
    assert runs(m, 'cli', 'failed') == 1 and runs(m, 'cli') == 0
    assert m['as4gw_purge_last_success_timestamp_seconds'] == 0


def test_migrations_apply_by_name_across_a_gap(gateway_factory):
    """Migration numbers may have gaps (sqlite 005 / postgresql 006 belong to
    another change): the runner applies every embedded migration not yet
    recorded, whatever is missing below it or was applied above it.  Here a
    database at the previous version (no purge log) gets only the purge log,
    and one that lacks a lower-numbered migration (simulated: delivery
    history undone) gets that one although a higher one is recorded."""
    gw = gateway_factory(extra_gateway=NO_BACKGROUND)
    sqlite = gw.dsn.startswith('sqlite:')
    purge_log = 'sqlite/006_purge_log.sql' if sqlite else 'postgresql/007_purge_log.sql'
    history = ('sqlite/004_delivery_error.sql' if sqlite
               else 'postgresql/005_delivery_error.sql')
    p = run_as4gw('migrate', '-c', gw.config)
    assert p.returncode == 0, p.stderr
    applied = [r[0] for r in gw.store.query('SELECT name FROM schema_migrations')]
    assert purge_log in applied and history in applied
    undo_log = ['DROP TABLE purge_log', 'DROP TABLE purge_totals']
    if not sqlite:
        undo_log.append('DROP FUNCTION as4gw_purge_logged()')
    undo_history = [f'ALTER TABLE delivery DROP COLUMN {c}'
                    for c in ('last_error', 'last_error_at', 'done_at')]
    for undo, name in ((undo_log, purge_log), (undo_history, history)):
        execute(gw, undo + [f"DELETE FROM schema_migrations WHERE name = '{name}'"])
        p = run_as4gw('migrate', '-c', gw.config)
        assert p.returncode == 0, p.stderr
        assert p.stdout.strip() == 'migrations applied: 1', p.stdout
        assert name in [r[0] for r in gw.store.query('SELECT name FROM schema_migrations')]
    gw.start()
    push(gw, new_id())
    p = run_as4gw('purge', '-c', gw.config, '--now', FAR_FUTURE)
    assert p.returncode == 0, p.stderr
    assert runs(metrics(gw), 'cli') == 1
    assert gw.store.query('SELECT count(*) FROM delivery')[0][0] == 0


def execute(gw, statements):
    """Run DDL/DML directly on the gateway's store, in one transaction."""
    if gw.dsn.startswith('sqlite:'):
        import sqlite3
        con = sqlite3.connect(gw.dsn[len('sqlite:'):], timeout=30)
        with con:
            for s in statements:
                con.execute(s)
        con.close()
        return
    import psycopg2
    con = psycopg2.connect(gw.dsn)
    with con, con.cursor() as cur:
        for s in statements:
            cur.execute(s)
    con.close()
