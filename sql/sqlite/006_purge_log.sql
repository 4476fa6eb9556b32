-- as4gw purge log, issue 11 item 6: every retention purge run — `as4gw
-- purge` (cron) and the background purge of each `serve` — is recorded
-- here, so that any serve process's /metrics counts them all (store.h
-- "store_purge_log").  Applied by store_migrate() in its own BEGIN
-- IMMEDIATE transaction.  Numbered 006: sqlite 005 belongs to another
-- change; the runner applies every embedded migration not recorded in
-- schema_migrations, in name order, so the two may arrive in either order.

-- One row per run, the last 1000 only (trimmed by the trigger below).
-- Times are ms since the epoch.  outcome: ok (nothing left to purge),
-- stopped (a signal ended it between batches), failed (error: why).
CREATE TABLE purge_log (
    id          integer PRIMARY KEY AUTOINCREMENT,
    started_at  integer NOT NULL,
    finished_at integer NOT NULL,
    source      text NOT NULL CHECK (source IN ('cli', 'background')),
    outcome     text NOT NULL CHECK (outcome IN ('ok', 'stopped', 'failed')),
    purged      integer NOT NULL,
    kept        integer NOT NULL,
    batches     integer NOT NULL,
    error       text
);

-- Running totals per source, never trimmed: the counters of /metrics.
CREATE TABLE purge_totals (
    source       text PRIMARY KEY CHECK (source IN ('cli', 'background')),
    runs_ok      integer NOT NULL DEFAULT 0,
    runs_stopped integer NOT NULL DEFAULT 0,
    runs_failed  integer NOT NULL DEFAULT 0,
    purged       integer NOT NULL DEFAULT 0,
    last_ok_at   integer
);
INSERT INTO purge_totals (source) VALUES ('cli'), ('background');

-- A logged run counts in its source's totals and trims the log, in the
-- INSERT's own transaction.
CREATE TRIGGER purge_log_count AFTER INSERT ON purge_log
BEGIN
    UPDATE purge_totals SET
        runs_ok = runs_ok + (NEW.outcome = 'ok'),
        runs_stopped = runs_stopped + (NEW.outcome = 'stopped'),
        runs_failed = runs_failed + (NEW.outcome = 'failed'),
        purged = purged + NEW.purged,
        last_ok_at = CASE WHEN NEW.outcome = 'ok'
            AND NEW.finished_at > coalesce(last_ok_at, 0)
            THEN NEW.finished_at ELSE last_ok_at END
     WHERE source = NEW.source;
    DELETE FROM purge_log WHERE id <= NEW.id - 1000;
END;
