-- An imported transaction's point-in-time features (computed after its import: src/jobs/
-- imported-features.ts) live in a table of their own, keyed by the transaction. Written into the
-- transactions row, each batch was an UPDATE of rows the import had just filled: a new version of
-- every row and an entry in each of the table's dozen indexes, which on the embedded database held
-- its one connection 200-300 ms per 500 rows while the organization's scores waited. Here a batch
-- is an INSERT into one index. A scored transaction's features stay in its row (migration 012);
-- readers take either (src/storage/imported-features.ts). Deleting a transaction (an erasure, a
-- retention sweep) deletes its features with it.

CREATE TABLE imported_features (
  seq             bigint PRIMARY KEY REFERENCES transactions (seq) ON DELETE CASCADE,
  organization_id text NOT NULL,
  features        bytea NOT NULL
);

INSERT INTO imported_features (seq, organization_id, features)
  SELECT seq, organization_id, features FROM transactions WHERE source = 'import' AND features IS NOT NULL;
UPDATE transactions SET features = NULL WHERE source = 'import' AND features IS NOT NULL;
