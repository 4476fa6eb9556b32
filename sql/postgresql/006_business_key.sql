-- as4gw business-level duplicates, issue 12 item 4 (store.h "store_accept",
-- "enum store_business"; README "Business-level duplicates").
-- Applied by store_migrate() in its own transaction under the migration lock.
--
-- business_key: the message's business document key (payload.h: an SBDH
-- InstanceIdentifier, or an EDIFACT interchange's sender, recipient and
-- control reference), NULL when it has none or its leg does not check.
-- business_duplicate_of: NULL for the row that holds the key (the first
-- one stored), the holder's MessageId for a row stored as a flagged
-- business duplicate.  Rows stored before this migration have neither;
-- adding nullable columns without a default rewrites no rows.
ALTER TABLE inbox ADD COLUMN business_key text
	CHECK (business_key IS NULL OR
	octet_length(business_key) BETWEEN 1 AND 1024);
ALTER TABLE inbox ADD COLUMN business_duplicate_of text;

-- One holder per sending party and key: what makes two concurrent accepts
-- of one business document under two MessageIds race-free.  The second
-- INSERT waits for the first to commit, then conflicts (as4gw_accept below
-- then finds the holder and refuses or flags).
CREATE UNIQUE INDEX inbox_business_key_idx ON inbox (from_party, business_key)
	WHERE business_key IS NOT NULL AND business_duplicate_of IS NULL;

DROP FUNCTION as4gw_accept(text, text, text, text, text, text, text, text,
	text, bytea, bytea, bytea, bytea, bigint, text, integer[], text[],
	text[], text[], bytea[]);

-- The accept transaction of 004 (read its comment and 003's), with the
-- business key.  New arguments: p_business_key (NULL: none, nothing
-- checked) and p_business_mode (1 flag, 2 refuse).  New answer:
-- business_duplicate_of, the holder's MessageId when a new row was stored
-- flagged (outcome 1) or refused (outcome 5: nothing written).
--
-- The INSERT has no conflict target: a conflict on either unique index
-- (the inbox key, or a holder of the business key committed by a
-- concurrent call after this call looked) does nothing.  When the inbox
-- key is not the cause, the holder is looked up again (a fresh snapshot:
-- it is visible now) and the call decides on it; three rounds at most (a
-- holder purged in between each time), then outcome 4, which the caller
-- reports as a store failure so the partner retries.  A key already
-- present (a retry of the same MessageId) goes to the duplicate / drift
-- decision of 004 unchanged, whatever its business key.
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
	p_business_key    text,
	p_business_mode   integer,
	OUT outcome       integer,
	OUT receipt       bytea,
	OUT duplicates    bigint,
	OUT field_hashes  bytea,
	OUT business_duplicate_of text)
LANGUAGE plpgsql VOLATILE SECURITY INVOKER
AS $$
DECLARE
	v_at timestamptz := to_timestamp(p_received_at_ms / 1000.0);
	v_holder text;
	v_round integer;
BEGIN
	IF p_receipt IS NOT NULL THEN
		FOR v_round IN 1..3 LOOP
			v_holder := NULL;
			IF p_business_key IS NOT NULL THEN
				SELECT i.message_id INTO v_holder FROM inbox AS i
				WHERE i.from_party = p_from_party
				    AND i.business_key = p_business_key
				    AND i.business_duplicate_of IS NULL
				    AND i.message_id <> p_message_id;
			END IF;
			IF v_holder IS NOT NULL AND p_business_mode = 2 THEN
				EXIT WHEN EXISTS (SELECT 1 FROM inbox AS i
				    WHERE i.from_party = p_from_party
				    AND i.message_id = p_message_id);
				outcome := 5;
				business_duplicate_of := v_holder;
				RETURN;
			END IF;
			INSERT INTO inbox (from_party, message_id, to_party,
			    service, action, conversation_id, agreement_ref,
			    pmode_id, source, content_hash, field_hashes,
			    receipt, received_at, partition_key, business_key,
			    business_duplicate_of)
			VALUES (p_from_party, p_message_id, p_to_party,
			    p_service, p_action, p_conversation_id,
			    p_agreement_ref, p_pmode_id, p_source,
			    p_content_hash, p_field_hashes, p_receipt, v_at,
			    p_partition_key, p_business_key, v_holder)
			ON CONFLICT DO NOTHING;
			IF FOUND THEN
				INSERT INTO payload (from_party, message_id,
				    part_no, content_id, mime_type, properties,
				    content)
				SELECT p_from_party, p_message_id, u.part_no,
				    u.content_id, u.mime_type, u.properties,
				    u.content
				FROM unnest(p_part_no, p_content_id, p_mime_type,
				    p_properties, p_content)
				    AS u (part_no, content_id, mime_type,
				    properties, content);
				INSERT INTO delivery (from_party, message_id,
				    state, attempts, created_at)
				VALUES (p_from_party, p_message_id, 'ready', 0,
				    v_at);
				outcome := 1;
				duplicates := 0;
				business_duplicate_of := v_holder;
				RETURN;
			END IF;
			EXIT WHEN p_business_key IS NULL OR EXISTS (SELECT 1
			    FROM inbox AS i WHERE i.from_party = p_from_party
			    AND i.message_id = p_message_id);
		END LOOP;
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
