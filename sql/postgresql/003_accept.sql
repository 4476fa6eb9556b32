-- as4gw accept in one round trip, issue 5 (store.h "store_accept").
-- Applied by store_migrate() in its own transaction under the migration lock.
--
-- as4gw_accept() is the whole accept transaction of store_pg.c as one
-- function, called as one statement in its own (implicit) transaction:
-- the gateway pays one database round trip per message instead of five
-- (BEGIN, INSERT inbox, INSERT payload per part, INSERT delivery, COMMIT).
-- The decisions are those of the former statements, in the same order, so
-- concurrent calls for one MessageId still end in one row and one NEW: the
-- INSERT ... ON CONFLICT waits for a concurrent insert of the same key to
-- commit or roll back.  Every statement below takes a fresh snapshot (a
-- VOLATILE function at READ COMMITTED), so the UPDATE after a conflict sees
-- the row that caused it.
--
-- Arguments: the inbox columns; p_receipt NULL is a probe (nothing is
-- inserted); the payload rows as parallel arrays of one element per part
-- (content_id and mime_type elements may be NULL; the caller sends "{}"
-- for missing properties).  A caller may pass empty arrays and insert the
-- payload rows itself in the same transaction (store_pg.c does so for large
-- payloads, streamed with COPY).
--
-- outcome: 1 new (receipt NULL: the caller has it), 2 duplicate (the stored
-- receipt and the counter after the increment), 3 drift (nothing changed),
-- 4 absent (no such row: the answer to a probe; after a conflict in a full
-- call it means the row was purged meanwhile, which the caller reports as a
-- store failure, so the partner retries).
--
-- A duplicate changes only the counter and last_duplicate_at: its commit
-- need not wait for the WAL flush (synchronous_commit off for this
-- transaction only).  The receipt it returns was flushed when the row was
-- committed: a row is visible only after its own commit, and a NEW commits
-- synchronously.
--
-- SECURITY INVOKER with the caller's search_path: the tables are resolved
-- in the schema the caller works in (the unit tests use one schema per
-- test), like the statements it replaces.  The OUT parameters are named
-- like inbox columns, so every column reference below is qualified.
CREATE FUNCTION as4gw_accept(
	p_message_id      text,
	p_from_party      text,
	p_to_party        text,
	p_service         text,
	p_action          text,
	p_conversation_id text,
	p_agreement_ref   text,
	p_pmode_id        text,
	p_source          text,
	p_content_hash    bytea,
	p_receipt         bytea,
	p_received_at_ms  bigint,
	p_partition_key   text,
	p_part_no         integer[],
	p_content_id      text[],
	p_mime_type       text[],
	p_properties      text[],
	p_content         bytea[],
	OUT outcome       integer,
	OUT receipt       bytea,
	OUT duplicates    bigint)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
AS $$
DECLARE
	v_at timestamptz := to_timestamp(p_received_at_ms / 1000.0);
BEGIN
	IF p_receipt IS NOT NULL THEN
		INSERT INTO inbox (message_id, from_party, to_party, service,
		    action, conversation_id, agreement_ref, pmode_id, source,
		    content_hash, receipt, received_at, partition_key)
		VALUES (p_message_id, p_from_party, p_to_party, p_service,
		    p_action, p_conversation_id, p_agreement_ref, p_pmode_id,
		    p_source, p_content_hash, p_receipt, v_at, p_partition_key)
		ON CONFLICT (message_id) DO NOTHING;
		IF FOUND THEN
			INSERT INTO payload (message_id, part_no, content_id,
			    mime_type, properties, content)
			SELECT p_message_id, u.part_no, u.content_id, u.mime_type,
			    u.properties, u.content
			FROM unnest(p_part_no, p_content_id, p_mime_type,
			    p_properties, p_content)
			    AS u (part_no, content_id, mime_type, properties, content);
			INSERT INTO delivery (message_id, state, attempts, created_at)
			VALUES (p_message_id, 'ready', 0, v_at);
			outcome := 1;
			duplicates := 0;
			RETURN;
		END IF;
	END IF;
	-- The row exists (or, in a probe, may): count it if it is the same
	-- message.  The UPDATE waits for a concurrent duplicate's, then counts
	-- on top of it.
	UPDATE inbox AS i
	SET duplicates = i.duplicates + 1, last_duplicate_at = v_at
	WHERE i.message_id = p_message_id AND i.content_hash = p_content_hash
	RETURNING i.receipt, i.duplicates INTO receipt, duplicates;
	IF FOUND THEN
		PERFORM set_config('synchronous_commit', 'off', true);
		outcome := 2;
	ELSIF EXISTS (SELECT 1 FROM inbox AS i
	    WHERE i.message_id = p_message_id) THEN
		outcome := 3;
	ELSE
		outcome := 4;
	END IF;
END
$$;
