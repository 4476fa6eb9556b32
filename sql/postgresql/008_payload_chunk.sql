-- as4gw payloads of any size, issue 14 item 2 (store.h "STORE_CHUNK_BYTES",
-- "store_payload_read"; README "The inbox guarantees", "Backend hand-off").
-- Applied by store_migrate() in its own transaction under the migration lock.
--
-- A final payload larger than STORE_CHUNK_THRESHOLD (8 MiB) is stored as
-- chunk rows of STORE_CHUNK_BYTES (1 MiB; the last may be shorter) in
-- chunk_no order 0, 1, 2 ...: a bytea value cannot exceed 1 GB, and one
-- piece at a time is what the gateway sends (COPY, inside the accept
-- transaction) and what a reader holds.  The chunks are written in the
-- same transaction as their inbox, payload and delivery rows, so a
-- rollback or a crash leaves none (PostgreSQL's own WAL recovery); they go
-- with their payload row (ON DELETE CASCADE), so the purge removes them
-- too.  as4gw_accept() is unchanged: it inserts no payload rows for a
-- message whose payloads are streamed, and writes nothing on a duplicate
-- or a drift, so neither ever writes chunks.
--
-- size (new): NULL for a payload stored whole in content (every row
-- stored before this migration); the payload's byte count for one stored
-- in chunks, whose content is then NULL.  A reader:
--   SELECT size, content FROM payload WHERE from_party = $1 AND
--       message_id = $2 AND part_no = $3;
--   -- size NULL: content is the payload; else concatenate
--   SELECT content FROM payload_chunk WHERE from_party = $1 AND
--       message_id = $2 AND part_no = $3 ORDER BY chunk_no;
-- Adding a nullable column rewrites no rows; the CHECK reads every row
-- once (not its TOASTed content).
ALTER TABLE payload ALTER COLUMN content DROP NOT NULL;
ALTER TABLE payload ADD COLUMN size bigint CHECK (size IS NULL OR size >= 0);
ALTER TABLE payload ADD CONSTRAINT payload_content_or_chunks
	CHECK ((content IS NULL) = (size IS NOT NULL));

CREATE TABLE payload_chunk (
	from_party  text    NOT NULL,
	message_id  text    NOT NULL,
	part_no     integer NOT NULL,
	chunk_no    integer NOT NULL CHECK (chunk_no >= 0),
	content     bytea   NOT NULL
	            CHECK (octet_length(content) BETWEEN 1 AND 1048576),
	PRIMARY KEY (from_party, message_id, part_no, chunk_no),
	FOREIGN KEY (from_party, message_id, part_no)
	    REFERENCES payload (from_party, message_id, part_no)
	    ON DELETE CASCADE
);
