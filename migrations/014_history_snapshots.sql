-- A snapshot of each organization's history as a process holds it in memory (its arrays' bytes,
-- src/domain/history/snapshot.ts) with the database snapshot it was built in, so that a process
-- loads the history by reading those bytes and the changes made since, instead of building it
-- again from every row (src/storage/history-snapshots.ts). One per organization, replaced whole.
-- A cache: what the bytes mean is the history code's (`format`), and a process whose code differs,
-- or that finds none, builds from the rows and writes its own. So the tables are unlogged (no
-- write-ahead log for hundreds of megabytes that the rows can rebuild; emptied after a crash) and
-- the bytes are stored uncompressed (arrays of numbers barely compress, and reading them is the
-- point).

CREATE UNLOGGED TABLE history_snapshots (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  format          text NOT NULL,
  label_delay_ms  double precision NOT NULL,
  -- The history holds every transaction from the floor on, the rest as totals.
  floor_ms        double precision NOT NULL,
  -- pg_current_snapshot() of the transaction that read what the history was built from: the
  -- changes it did not see are the ones to apply after the bytes.
  seen            pg_snapshot NOT NULL,
  transactions    bigint NOT NULL,
  bytes           bigint NOT NULL,
  pieces          integer NOT NULL,
  written_at_ms   double precision NOT NULL
);

CREATE UNLOGGED TABLE history_snapshot_pieces (
  organization_id text NOT NULL REFERENCES history_snapshots (organization_id) ON DELETE CASCADE,
  piece           integer NOT NULL,
  bytes           bytea NOT NULL,
  PRIMARY KEY (organization_id, piece)
);
ALTER TABLE history_snapshot_pieces ALTER COLUMN bytes SET STORAGE EXTERNAL;
