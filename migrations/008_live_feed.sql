-- The live feed: every change to an organization's live data (a recorded transaction, an outcome
-- change) has a position in one database sequence, the transactions' `seq`. Each server process
-- tails the feed in that order (src/live/tail.ts) to keep its in-memory histories in step with what
-- every other process records. Writers take one transaction-scoped advisory lock before drawing
-- positions, so positions become visible in the order they were drawn: a reader that has seen
-- position N has seen every position below it, and can resume from N without missing a change.
ALTER TABLE outcome_changes ADD COLUMN seq bigint NOT NULL DEFAULT nextval('transactions_seq_seq');
CREATE UNIQUE INDEX outcome_changes_seq_idx ON outcome_changes (seq);
