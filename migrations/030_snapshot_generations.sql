-- A history snapshot's pieces are written before the row that names them (src/storage/
-- history-snapshots.ts): each write stages its pieces under a generation of its own, outside any
-- transaction that holds the organization's snapshot lock (on the embedded database, a piece a
-- statement, so that requests' statements run between them), and then swaps the row to that
-- generation in a short transaction. Readers read the row's generation only; pieces of another
-- (a write that lost the race, or one cut by its process's end) are deleted by the next write.
-- The pieces no longer reference the row: they exist before it.

ALTER TABLE history_snapshot_pieces DROP CONSTRAINT history_snapshot_pieces_organization_id_fkey;
ALTER TABLE history_snapshot_pieces DROP CONSTRAINT history_snapshot_pieces_pkey;
ALTER TABLE history_snapshot_pieces ADD COLUMN generation integer NOT NULL DEFAULT 0;
ALTER TABLE history_snapshot_pieces ADD PRIMARY KEY (organization_id, generation, piece);
ALTER TABLE history_snapshots ADD COLUMN generation integer NOT NULL DEFAULT 0;
