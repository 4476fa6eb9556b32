-- as4gw inbox schema for PostgreSQL (DESIGN.md "Inbox schema").
-- Applied by store_migrate() inside one transaction holding the migration
-- advisory lock and recorded in schema_migrations (created by the runner).

-- One row per accepted AS4 MessageId; the primary key is what makes a
-- retried push idempotent and the only coordination several gateway
-- processes sharing this database need (ebMS3 Core 5.2.2.1).
CREATE TABLE inbox (
	message_id        text        NOT NULL PRIMARY KEY
	                  CHECK (char_length(message_id) BETWEEN 1 AND 255),
	from_party        text        NOT NULL,
	to_party          text        NOT NULL,
	service           text        NOT NULL,
	action            text        NOT NULL,
	conversation_id   text        NOT NULL,
	agreement_ref     text,
	pmode_id          text,
	source            text,
	content_hash      bytea       NOT NULL CHECK (octet_length(content_hash) = 32),
	receipt           bytea       NOT NULL,
	received_at       timestamptz NOT NULL,
	processed_at      timestamptz,            -- NULL until the backend hand-off marks it
	partition_key     text        NOT NULL,   -- YYYY-MM of received_at
	duplicates        bigint      NOT NULL DEFAULT 0,
	last_duplicate_at timestamptz
);

-- Retention purge deletes by age.
CREATE INDEX inbox_received_at_idx ON inbox (received_at);

-- The final (decrypted, decompressed) payload bytes, in PartInfo order.
CREATE TABLE payload (
	message_id  text    NOT NULL REFERENCES inbox (message_id) ON DELETE CASCADE,
	part_no     integer NOT NULL CHECK (part_no >= 0),
	content_id  text,                          -- NULL for a payload in the SOAP Body
	mime_type   text,
	properties  text    NOT NULL DEFAULT '{}', -- PartProperties as a JSON object
	content     bytea   NOT NULL,
	PRIMARY KEY (message_id, part_no)
);

-- The hand-off queue to the backend: one row per new message, claimed with
-- SELECT ... FOR UPDATE SKIP LOCKED.
CREATE TABLE delivery (
	message_id  text        NOT NULL PRIMARY KEY
	            REFERENCES inbox (message_id) ON DELETE CASCADE,
	state       text        NOT NULL DEFAULT 'ready'
	            CHECK (state IN ('ready', 'claimed', 'done')),
	attempts    integer     NOT NULL DEFAULT 0,
	claimed_at  timestamptz,
	created_at  timestamptz NOT NULL
);

-- Claiming takes the oldest ready rows; stale claims are found by claimed_at.
CREATE INDEX delivery_ready_idx ON delivery (created_at) WHERE state = 'ready';
CREATE INDEX delivery_claimed_idx ON delivery (claimed_at) WHERE state = 'claimed';
