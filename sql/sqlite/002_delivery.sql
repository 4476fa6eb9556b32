-- as4gw delivery queue, issue 4 (store.h "The delivery queue").
-- Applied by store_migrate() in its own BEGIN IMMEDIATE transaction.

-- A failed hand-off is retried after a back-off: store_claim takes a 'ready'
-- row only once not_before has passed (ms since the epoch; NULL = at once).
ALTER TABLE delivery ADD COLUMN not_before integer;

-- One index serves the claim query and the queue gauges: the rows not 'done'
-- in created_at order (ready rows, and claimed rows that may have gone
-- stale).  The claim query repeats this WHERE term word for word, which is
-- what lets SQLite use a partial index.  It replaces the two 001 indexes, so
-- the accept transaction maintains one partial index instead of two.
DROP INDEX delivery_ready_idx;
DROP INDEX delivery_claimed_idx;
CREATE INDEX delivery_pending_idx ON delivery (created_at)
	WHERE state IN ('ready', 'claimed');
