-- as4gw delivery history for `as4gw inbox show`, issue 11 item 10 (store.h
-- "store_find", "store_finish_error").
-- Applied by store_migrate() in its own transaction under the migration lock.

-- last_error: why the last hand-off failed (the deliverer's error text,
-- at most STORE_ERROR_MAX bytes), last_error_at: when; kept once the row
-- is done, so an operator sees what was retried.  done_at: when the row was
-- marked 'done' (NULL before, and for rows done before this migration).
-- Adding nullable columns without a default rewrites no rows.
ALTER TABLE delivery ADD COLUMN last_error text;
ALTER TABLE delivery ADD COLUMN last_error_at timestamptz;
ALTER TABLE delivery ADD COLUMN done_at timestamptz;
