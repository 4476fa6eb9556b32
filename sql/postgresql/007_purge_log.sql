-- as4gw purge log, issue 11 item 6: every retention purge run — `as4gw
-- purge` (cron) and the background purge of each `serve` — is recorded
-- here, so that any serve process's /metrics counts them all (store.h
-- "store_purge_log").  Applied by store_migrate() in its own transaction
-- under the migration lock.  Numbered 007: postgresql 006 belongs to
-- another change; the runner applies every embedded migration not recorded
-- in schema_migrations, in name order, so the two may arrive in either order.

-- One row per run, the last 1000 only (trimmed by the trigger below).
-- outcome: ok (nothing left to purge), stopped (a signal ended it between
-- batches), failed (error says why).
CREATE TABLE purge_log (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    source      text NOT NULL CHECK (source IN ('cli', 'background')),
    outcome     text NOT NULL CHECK (outcome IN ('ok', 'stopped', 'failed')),
    purged      bigint NOT NULL,
    kept        bigint NOT NULL,
    batches     bigint NOT NULL,
    error       text
);

-- Running totals per source, never trimmed: the counters of /metrics.
CREATE TABLE purge_totals (
    source       text PRIMARY KEY CHECK (source IN ('cli', 'background')),
    runs_ok      bigint NOT NULL DEFAULT 0,
    runs_stopped bigint NOT NULL DEFAULT 0,
    runs_failed  bigint NOT NULL DEFAULT 0,
    purged       bigint NOT NULL DEFAULT 0,
    last_ok_at   timestamptz
);
INSERT INTO purge_totals (source) VALUES ('cli'), ('background');

-- A logged run counts in its source's totals (the row lock orders
-- concurrent runs) and trims the log, in the INSERT's own transaction.
-- Runs with the inserting role's privileges: the gateway's role needs
-- UPDATE on purge_totals and DELETE on purge_log.
CREATE FUNCTION as4gw_purge_logged() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE purge_totals SET
        runs_ok = runs_ok + (NEW.outcome = 'ok')::int,
        runs_stopped = runs_stopped + (NEW.outcome = 'stopped')::int,
        runs_failed = runs_failed + (NEW.outcome = 'failed')::int,
        purged = purged + NEW.purged,
        last_ok_at = CASE WHEN NEW.outcome = 'ok'
            AND (last_ok_at IS NULL OR NEW.finished_at > last_ok_at)
            THEN NEW.finished_at ELSE last_ok_at END
     WHERE source = NEW.source;
    DELETE FROM purge_log WHERE id <= NEW.id - 1000;
    RETURN NULL;
END
$$;

CREATE TRIGGER purge_log_count AFTER INSERT ON purge_log
    FOR EACH ROW EXECUTE FUNCTION as4gw_purge_logged();
