-- as4gw payloads of any size, issue 14 item 2 (store.h "STORE_CHUNK_BYTES",
-- "store_payload_read"; README "The inbox guarantees", "Backend hand-off").
-- Applied by store_migrate() in its own BEGIN IMMEDIATE transaction.
--
-- A final payload larger than STORE_CHUNK_THRESHOLD (8 MiB) is stored as
-- chunk rows of STORE_CHUNK_BYTES (1 MiB; the last may be shorter) in
-- chunk_no order 0, 1, 2 ...: a SQLite value cannot exceed about 1 GB
-- (SQLITE_MAX_LENGTH), and one piece at a time is what a writer or a
-- reader holds.  The chunks are written in the same transaction as their
-- inbox, payload and delivery rows, so a rollback or a crash leaves none
-- (SQLite's own WAL recovery); they go with their payload row (ON DELETE
-- CASCADE, foreign keys are on), so the purge removes them too.
--
-- size (new): NULL for a payload stored whole in content (every row
-- stored before this migration); the payload's byte count for one stored
-- in chunks, whose content is then a zero-length blob (SQLite cannot drop
-- the NOT NULL of content without rebuilding the table).  A reader:
--   SELECT size, content FROM payload WHERE from_party = ? AND
--       message_id = ? AND part_no = ?;
--   -- size NULL: content is the payload; else concatenate
--   SELECT content FROM payload_chunk WHERE from_party = ? AND
--       message_id = ? AND part_no = ? ORDER BY chunk_no;
ALTER TABLE payload ADD COLUMN size integer CHECK (size IS NULL OR size >= 0);

CREATE TABLE payload_chunk (
	from_party  text    NOT NULL,
	message_id  text    NOT NULL,
	part_no     integer NOT NULL,
	chunk_no    integer NOT NULL CHECK (chunk_no >= 0),
	content     blob    NOT NULL
	            CHECK (length(content) BETWEEN 1 AND 1048576),
	PRIMARY KEY (from_party, message_id, part_no, chunk_no),
	FOREIGN KEY (from_party, message_id, part_no)
	    REFERENCES payload (from_party, message_id, part_no)
	    ON DELETE CASCADE
);
