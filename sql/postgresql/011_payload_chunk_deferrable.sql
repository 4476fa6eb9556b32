-- as4gw: a large message's chunk rows may go in before its payload rows
-- (issue 14; src/store/store_pg_early.c).  The accept of a message with
-- chunked parts whose content hashes are still being computed (on their own
-- thread, payload_job.c) first COPYs its chunk rows, then waits for the
-- hashes and lets as4gw_accept() decide: the server writes the chunks while
-- the gateway hashes, instead of one after the other.  Its payload rows
-- only follow a NEW, so the chunks' foreign key must be checked at COMMIT:
-- that transaction says SET CONSTRAINTS payload_chunk_from_party_message_id_part_no_fkey
-- DEFERRED.  Every other transaction still checks it per row
-- (INITIALLY IMMEDIATE): nothing else changes, and nothing is re-validated
-- (ALTER CONSTRAINT changes only when the check runs).  Applied by
-- store_migrate() in its own transaction under the migration lock.
ALTER TABLE payload_chunk
	ALTER CONSTRAINT payload_chunk_from_party_message_id_part_no_fkey
	DEFERRABLE INITIALLY IMMEDIATE;
