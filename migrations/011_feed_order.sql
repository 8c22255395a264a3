-- The live feed's order without a writers' lock. Every row of the feed (a recorded transaction, an
-- outcome change) carries the id of the database transaction that wrote it, and the feed is read in
-- (xid, seq) order, only below the oldest transaction still running anywhere
-- (pg_snapshot_xmin(pg_current_snapshot())): below that point nothing can still appear, so a reader
-- that has passed a position never misses a row before it, while writers commit side by side and
-- share their WAL flushes (src/storage/live-feed.ts). Rows stored before this migration read as
-- xid 0: they are older than any process's starting position.
ALTER TABLE transactions ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE transactions ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX transactions_feed_idx ON transactions (xid, seq);
ALTER TABLE outcome_changes ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE outcome_changes ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX outcome_changes_feed_idx ON outcome_changes (xid, seq);
