-- as4gw business-level duplicates, issue 12 item 4 (store.h "store_accept",
-- "enum store_business"; README "Business-level duplicates").
-- Applied by store_migrate() in its own BEGIN IMMEDIATE transaction.
--
-- business_key: the message's business document key (payload.h: an SBDH
-- InstanceIdentifier, or an EDIFACT interchange's sender, recipient and
-- control reference), NULL when it has none or its leg does not check.
-- business_duplicate_of: NULL for the row that holds the key (the first
-- one stored), the holder's MessageId for a row stored as a flagged
-- business duplicate.  Rows stored before this migration have neither.
ALTER TABLE inbox ADD COLUMN business_key text
	CHECK (business_key IS NULL OR length(business_key) BETWEEN 1 AND 1024);
ALTER TABLE inbox ADD COLUMN business_duplicate_of text;

-- One holder per sending party and key.  The accept transaction looks the
-- holder up through this index and, holding SQLite's write lock, never
-- inserts a second one; the UNIQUE is the database's own guarantee.
CREATE UNIQUE INDEX inbox_business_key_idx ON inbox (from_party, business_key)
	WHERE business_key IS NOT NULL AND business_duplicate_of IS NULL;
