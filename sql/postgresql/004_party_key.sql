-- as4gw inbox key scoped to the sending party, issue 10 (store.h
-- "store_accept"; README "The inbox guarantees").
-- Applied by store_migrate() in its own transaction under the migration lock.
--
-- The key of an inbox row becomes (from_party, message_id): a MessageId is
-- unique per sending party only, so one partner's row can neither block
-- nor reveal another's.  payload and delivery rows take the party of their
-- inbox row and reference it by both columns.  Rows are kept; the
-- constraints of 001 have PostgreSQL's default names.
--
-- field_hashes (new): the SHA-256 of each compared field of the message,
-- 32 bytes each in payload.h's order; content_hash is then the version 2
-- hash over them.  NULL marks a row stored before this migration: its
-- content_hash is a version 1 hash (payload.h), compared as such.

ALTER TABLE payload ADD COLUMN from_party text;
UPDATE payload AS p SET from_party = i.from_party
FROM inbox AS i WHERE i.message_id = p.message_id;
ALTER TABLE payload ALTER COLUMN from_party SET NOT NULL;

ALTER TABLE delivery ADD COLUMN from_party text;
UPDATE delivery AS d SET from_party = i.from_party
FROM inbox AS i WHERE i.message_id = d.message_id;
ALTER TABLE delivery ALTER COLUMN from_party SET NOT NULL;

ALTER TABLE payload DROP CONSTRAINT payload_message_id_fkey;
ALTER TABLE delivery DROP CONSTRAINT delivery_message_id_fkey;
ALTER TABLE payload DROP CONSTRAINT payload_pkey;
ALTER TABLE delivery DROP CONSTRAINT delivery_pkey;
ALTER TABLE inbox DROP CONSTRAINT inbox_pkey;

ALTER TABLE inbox ADD PRIMARY KEY (from_party, message_id);
ALTER TABLE inbox ADD COLUMN field_hashes bytea
	CHECK (field_hashes IS NULL OR (octet_length(field_hashes) > 0 AND
	octet_length(field_hashes) % 32 = 0));
ALTER TABLE payload ADD PRIMARY KEY (from_party, message_id, part_no);
ALTER TABLE payload ADD FOREIGN KEY (from_party, message_id)
	REFERENCES inbox (from_party, message_id) ON DELETE CASCADE;
ALTER TABLE delivery ADD PRIMARY KEY (from_party, message_id);
ALTER TABLE delivery ADD FOREIGN KEY (from_party, message_id)
	REFERENCES inbox (from_party, message_id) ON DELETE CASCADE;

-- as4gw_accept() of 003 keyed on the MessageId alone: replaced.  A gateway
-- of an older version fails its accepts (503, the partner retries) once
-- this migration has run: upgrade every instance together.
DROP FUNCTION as4gw_accept(text, text, text, text, text, text, text, text,
	text, bytea, bytea, bigint, text, integer[], text[], text[], text[],
	bytea[]);

-- The accept transaction of 003 (read its comment: one round trip, the
-- same decisions in the same order, one row and one NEW under concurrent
-- calls, a duplicate's commit without a WAL flush wait), keyed on
-- (p_from_party, p_message_id).  New arguments: p_content_hash_v1, the
-- version 1 hash of the same message, which matches a row stored before
-- migration 004 (field_hashes NULL) and nothing else; p_field_hashes, the
-- per-field digests stored with a new row.  New answer: field_hashes, the
-- stored row's digests on a drift (NULL for an old row), so the caller can
-- log which field differs.  Another party's row with the same MessageId is
-- never read.
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
	p_content_hash_v1 bytea,
	p_field_hashes    bytea,
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
	OUT duplicates    bigint,
	OUT field_hashes  bytea)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
AS $$
DECLARE
	v_at timestamptz := to_timestamp(p_received_at_ms / 1000.0);
BEGIN
	IF p_receipt IS NOT NULL THEN
		INSERT INTO inbox (from_party, message_id, to_party, service,
		    action, conversation_id, agreement_ref, pmode_id, source,
		    content_hash, field_hashes, receipt, received_at,
		    partition_key)
		VALUES (p_from_party, p_message_id, p_to_party, p_service,
		    p_action, p_conversation_id, p_agreement_ref, p_pmode_id,
		    p_source, p_content_hash, p_field_hashes, p_receipt, v_at,
		    p_partition_key)
		ON CONFLICT (from_party, message_id) DO NOTHING;
		IF FOUND THEN
			INSERT INTO payload (from_party, message_id, part_no,
			    content_id, mime_type, properties, content)
			SELECT p_from_party, p_message_id, u.part_no,
			    u.content_id, u.mime_type, u.properties, u.content
			FROM unnest(p_part_no, p_content_id, p_mime_type,
			    p_properties, p_content)
			    AS u (part_no, content_id, mime_type, properties, content);
			INSERT INTO delivery (from_party, message_id, state,
			    attempts, created_at)
			VALUES (p_from_party, p_message_id, 'ready', 0, v_at);
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
	WHERE i.from_party = p_from_party AND i.message_id = p_message_id
	    AND (i.content_hash = p_content_hash OR (i.field_hashes IS NULL
	    AND i.content_hash = p_content_hash_v1))
	RETURNING i.receipt, i.duplicates INTO receipt, duplicates;
	IF FOUND THEN
		PERFORM set_config('synchronous_commit', 'off', true);
		outcome := 2;
		RETURN;
	END IF;
	SELECT i.field_hashes INTO field_hashes FROM inbox AS i
	WHERE i.from_party = p_from_party AND i.message_id = p_message_id;
	outcome := CASE WHEN FOUND THEN 3 ELSE 4 END;
END
$$;
