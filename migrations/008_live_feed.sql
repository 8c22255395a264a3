-- The live feed: every change to an organization's live data (a recorded transaction, an outcome
-- change) has a number from one database sequence, the transactions' `seq`. Each server process
-- tails the feed (src/live/tail.ts) to keep its in-memory histories in step with what every other
-- process records; the feed's order, (xid, seq), is migration 011's, and src/storage/live-feed.ts
-- says how a reader resumes without missing a change.
ALTER TABLE outcome_changes ADD COLUMN seq bigint NOT NULL DEFAULT nextval('transactions_seq_seq');
CREATE UNIQUE INDEX outcome_changes_seq_idx ON outcome_changes (seq);
