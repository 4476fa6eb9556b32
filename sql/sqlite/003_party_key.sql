-- as4gw inbox key scoped to the sending party, issue 10 (store.h
-- "store_accept"; README "The inbox guarantees").
-- Applied by store_migrate() in its own BEGIN IMMEDIATE transaction.
--
-- The key of an inbox row becomes (from_party, message_id): a MessageId is
-- unique per sending party only, so one partner's row can neither block
-- nor reveal another's.  payload and delivery rows carry the party too and
-- reference their inbox row by both columns.  SQLite cannot change a
-- primary key in place: the three tables are rebuilt under new names, the
-- rows copied (payload and delivery rows take the party of their inbox
-- row), the old tables dropped (children first, so no ON DELETE CASCADE
-- fires) and the new ones renamed (which rewrites their foreign keys).
--
-- field_hashes (new): the SHA-256 of each compared field of the message,
-- 32 bytes each in payload.h's order; content_hash is then the version 2
-- hash over them.  NULL marks a row stored before this migration: its
-- content_hash is a version 1 hash (payload.h), compared as such.

CREATE TABLE inbox_v3 (
	from_party        text    NOT NULL,
	message_id        text    NOT NULL
	                  CHECK (length(message_id) BETWEEN 1 AND 255),
	to_party          text    NOT NULL,
	service           text    NOT NULL,
	action            text    NOT NULL,
	conversation_id   text    NOT NULL,
	agreement_ref     text,
	pmode_id          text,
	source            text,
	content_hash      blob    NOT NULL CHECK (length(content_hash) = 32),
	field_hashes      blob    CHECK (field_hashes IS NULL OR
	                  (length(field_hashes) > 0 AND
	                  length(field_hashes) % 32 = 0)),
	receipt           blob    NOT NULL,
	received_at       integer NOT NULL,
	processed_at      integer,
	partition_key     text    NOT NULL,
	duplicates        integer NOT NULL DEFAULT 0,
	last_duplicate_at integer,
	PRIMARY KEY (from_party, message_id)
);

INSERT INTO inbox_v3 (from_party, message_id, to_party, service, action,
    conversation_id, agreement_ref, pmode_id, source, content_hash,
    field_hashes, receipt, received_at, processed_at, partition_key,
    duplicates, last_duplicate_at)
SELECT from_party, message_id, to_party, service, action, conversation_id,
    agreement_ref, pmode_id, source, content_hash, NULL, receipt,
    received_at, processed_at, partition_key, duplicates, last_duplicate_at
FROM inbox;

CREATE TABLE payload_v3 (
	from_party  text    NOT NULL,
	message_id  text    NOT NULL,
	part_no     integer NOT NULL CHECK (part_no >= 0),
	content_id  text,
	mime_type   text,
	properties  text    NOT NULL DEFAULT '{}',
	content     blob    NOT NULL,
	PRIMARY KEY (from_party, message_id, part_no),
	FOREIGN KEY (from_party, message_id)
	    REFERENCES inbox_v3 (from_party, message_id) ON DELETE CASCADE
);

INSERT INTO payload_v3 (from_party, message_id, part_no, content_id,
    mime_type, properties, content)
SELECT i.from_party, p.message_id, p.part_no, p.content_id, p.mime_type,
    p.properties, p.content
FROM payload p JOIN inbox i ON i.message_id = p.message_id;

CREATE TABLE delivery_v3 (
	from_party  text    NOT NULL,
	message_id  text    NOT NULL,
	state       text    NOT NULL DEFAULT 'ready'
	            CHECK (state IN ('ready', 'claimed', 'done')),
	attempts    integer NOT NULL DEFAULT 0,
	claimed_at  integer,
	created_at  integer NOT NULL,
	not_before  integer,
	PRIMARY KEY (from_party, message_id),
	FOREIGN KEY (from_party, message_id)
	    REFERENCES inbox_v3 (from_party, message_id) ON DELETE CASCADE
);

INSERT INTO delivery_v3 (from_party, message_id, state, attempts,
    claimed_at, created_at, not_before)
SELECT i.from_party, d.message_id, d.state, d.attempts, d.claimed_at,
    d.created_at, d.not_before
FROM delivery d JOIN inbox i ON i.message_id = d.message_id;

DROP TABLE payload;
DROP TABLE delivery;
DROP TABLE inbox;
ALTER TABLE inbox_v3 RENAME TO inbox;
ALTER TABLE payload_v3 RENAME TO payload;
ALTER TABLE delivery_v3 RENAME TO delivery;

-- The indexes of 001 and 002, on the new tables.
CREATE INDEX inbox_received_at_idx ON inbox (received_at);
CREATE INDEX delivery_pending_idx ON delivery (created_at)
	WHERE state IN ('ready', 'claimed');
