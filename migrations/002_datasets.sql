-- Uploaded datasets: the file lives on disk under a random name (stored_name), never the name the
-- caller sent; this row holds what was learned from it. The id is random and unguessable: a guest's
-- dataset is reachable only through it. Owners (user, organization) are added with accounts (migration 004).
-- A deleted or expired dataset keeps its row (so requests for it can answer 410) but not its file.

CREATE TABLE datasets (
  id              text PRIMARY KEY,
  original_name   text NOT NULL,
  stored_name     text NOT NULL UNIQUE,
  size_bytes      bigint NOT NULL,
  rows            integer NOT NULL,
  has_labels      boolean NOT NULL,
  mapping         jsonb NOT NULL,
  validation      jsonb NOT NULL,
  owner_user_id   text NULL,
  organization_id text NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  -- 'deleted' (on request) or 'expired' (by the sweeper); NULL while the file exists.
  removed         text NULL CHECK (removed IN ('deleted', 'expired')),
  removed_at      timestamptz NULL
);

CREATE INDEX datasets_expires_idx ON datasets (expires_at) WHERE removed IS NULL;
