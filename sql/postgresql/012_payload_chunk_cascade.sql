-- as4gw: the chunks' foreign key gives way to a cascading trigger (issue 14;
-- README "The inbox guarantees").  Applied by store_migrate() in its own
-- transaction under the migration lock.
--
-- The foreign key from payload_chunk to payload (008, deferrable since 011)
-- checked every chunk row on its own: one trigger event, one fetch of the
-- new row and one lookup of its payload row per 8000 bytes.  A 1 GiB payload
-- is 134,218 chunk rows, and at COMMIT those checks were a third of the
-- server's CPU for the accept: COPY writes through a small ring of buffers,
-- so each row was read back from the kernel to be checked (measured with
-- perf on bench/big, 2026-12-03: AfterTriggerFireDeferred 12.7 % of all
-- samples, the server's whole share 36.7 %).
--
-- What the key guarded stays guarded:
--   * no chunk without its payload row: chunk rows are written only inside
--     the transaction that inserts their payload rows (the accept:
--     store_pg_chunk.c, store_pg_early.c; `as4gw copy`: store_copy_cut.c,
--     which also compares the chunk rows with the payloads' lengths before
--     its COMMIT), so a refusal, a rollback or a crash leaves neither; the
--     integration tests and bench/crash --big count orphans after every
--     failure path (test_large_payload.py "orphans").  Only a hand-made
--     INSERT could add one, and the purge never sees it: that is the check
--     given up.
--   * the chunks go with their payload row: the trigger below deletes them
--     when the row is deleted (the purge: inbox -> payload by its foreign
--     key, payload -> payload_chunk here), as ON DELETE CASCADE did.
--   * the primary key on (from_party, message_id, part_no, chunk_no) stays:
--     two requests with one MessageId still meet on it (store_pg_early.c).
-- payload's key columns are never updated (nothing in as4gw does; the
-- key's NO ACTION refused it before): the second trigger keeps it so.
ALTER TABLE payload_chunk
	DROP CONSTRAINT payload_chunk_from_party_message_id_part_no_fkey;

CREATE FUNCTION as4gw_payload_chunk_cascade() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM payload_chunk
	WHERE from_party = OLD.from_party AND message_id = OLD.message_id
	  AND part_no = OLD.part_no;
	RETURN NULL;
END
$$;

CREATE TRIGGER payload_chunk_cascade AFTER DELETE ON payload
	FOR EACH ROW EXECUTE FUNCTION as4gw_payload_chunk_cascade();

CREATE FUNCTION as4gw_payload_key_fixed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the key of a payload row is never changed'
		USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER payload_key_fixed BEFORE UPDATE OF from_party, message_id,
	part_no ON payload FOR EACH ROW
	WHEN (OLD.from_party IS DISTINCT FROM NEW.from_party
	   OR OLD.message_id IS DISTINCT FROM NEW.message_id
	   OR OLD.part_no IS DISTINCT FROM NEW.part_no)
	EXECUTE FUNCTION as4gw_payload_key_fixed();
