-- Fraud rings found per organization and weekly window, as soon as the window's result can exist
-- (its end plus the label delay): one `rings` job per organization and window, queued once by
-- whichever process sees the window due first (the primary key decides), run by whichever process
-- claims it, and stored here, where every process reads the latest (src/live/ring-windows.ts).
-- Windows are weeks from Monday 00:00 UTC, the same in every process.

ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('score', 'history_import', 'rings'));

CREATE TABLE ring_windows (
  organization_id text NOT NULL REFERENCES organizations (id),
  window_start    double precision NOT NULL,
  window_end      double precision NOT NULL,
  -- When the result may be used: the window's end plus the label delay.
  published_at    double precision NOT NULL,
  job_id          text NOT NULL,
  -- The flagged groups (src/domain/rings.ts `Ring`), once analysed.
  rings           jsonb NULL,
  analysed_at     timestamptz NULL,
  PRIMARY KEY (organization_id, window_start)
);
