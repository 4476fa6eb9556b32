-- as4gw delivery queue, issue 4 (store.h "The delivery queue").
-- Applied by store_migrate() in its own transaction under the migration lock.

-- A failed hand-off is retried after a back-off: store_claim takes a 'ready'
-- row only once not_before has passed (NULL = at once).
ALTER TABLE delivery ADD COLUMN not_before timestamptz;

-- One index serves the claim query (SELECT ... ORDER BY created_at LIMIT 1
-- FOR UPDATE SKIP LOCKED) and the queue gauges: the rows not 'done' in
-- created_at order (ready rows, and claimed rows that may have gone stale).
-- The claim query repeats this predicate so the planner can use it.  It
-- replaces the two 001 indexes: the accept transaction maintains one partial
-- index instead of two, and the table is small once rows are 'done'.
DROP INDEX delivery_ready_idx;
DROP INDEX delivery_claimed_idx;
CREATE INDEX delivery_pending_idx ON delivery (created_at)
	WHERE state IN ('ready', 'claimed');
