-- Scoring jobs: durable rows, claimed by a server process with FOR UPDATE SKIP LOCKED so several
-- processes on one PostgreSQL share the queue without running a job twice. `stage` and `progress`
-- are written by the work itself. A running job whose heartbeat stopped (its process died) is taken
-- up again by the next process to look, up to `max_attempts`, and then failed with its reason.

CREATE TABLE jobs (
  id              text PRIMARY KEY,
  dataset_id      text NOT NULL REFERENCES datasets (id),
  mode            text NOT NULL CHECK (mode IN ('balanced', 'high_precision', 'high_recall')),
  status          text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
  stage           text NOT NULL,
  progress        double precision NOT NULL DEFAULT 0,
  error           text NULL,
  attempts        integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL DEFAULT 3,
  claimed_by      text NULL,
  heartbeat_at    timestamptz NULL,
  owner_user_id   text NULL,
  organization_id text NULL,
  result          jsonb NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz NULL,
  finished_at     timestamptz NULL
);

CREATE INDEX jobs_queue_idx ON jobs (created_at) WHERE status = 'queued';
CREATE INDEX jobs_running_idx ON jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX jobs_organization_idx ON jobs (organization_id, created_at);
