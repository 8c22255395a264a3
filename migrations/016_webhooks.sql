-- Webhooks: what leaves the service, written beside the change that causes it.
-- An endpoint belongs to one organization. Its signing secret is kept sealed (AES-256-GCM under a
-- key derived from the service's hashing secret), never in plain text: a stolen database signs
-- nothing. After a rotation the previous secret keeps signing until `previous_secret_expires_at`.
-- An event is written in the same database transaction as its change (the outbox), with one
-- delivery per enabled endpoint subscribed to its type at that moment; a delivery is attempted in
-- the order of `seq` within its endpoint, by whichever process holds the endpoint's lease
-- (`lease_owner` until `lease_until`, claimed with FOR UPDATE SKIP LOCKED), and every attempt is
-- kept for the deliveries log.

CREATE TABLE webhook_endpoints (
  id                         text PRIMARY KEY,
  organization_id            text NOT NULL REFERENCES organizations (id),
  url                        text NOT NULL,
  description                text NULL,
  events                     text[] NOT NULL,
  status                     text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  disabled_reason            text NULL,
  disabled_message           text NULL,
  disabled_at                timestamptz NULL,
  secret_sealed              text NOT NULL,
  previous_secret_sealed     text NULL,
  previous_secret_expires_at timestamptz NULL,
  secret_rotated_at          timestamptz NULL,
  created_by                 text NOT NULL,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  updated_at                 timestamptz NOT NULL DEFAULT now(),
  lease_owner                text NULL,
  lease_until                timestamptz NULL
);
CREATE INDEX webhook_endpoints_organization_idx ON webhook_endpoints (organization_id, created_at);

CREATE TABLE webhook_events (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  type            text NOT NULL,
  payload         json NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_events_organization_idx ON webhook_events (organization_id, created_at);

CREATE TABLE webhook_deliveries (
  seq              bigserial UNIQUE,
  id               text PRIMARY KEY,
  organization_id  text NOT NULL REFERENCES organizations (id),
  endpoint_id      text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id         text NOT NULL REFERENCES webhook_events (id),
  status           text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  first_attempt_at timestamptz NULL,
  last_attempt_at  timestamptz NULL,
  last_status_code integer NULL,
  last_error       text NULL,
  delivered_at     timestamptz NULL,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, seq);

CREATE TABLE webhook_attempts (
  delivery_id      text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt          integer NOT NULL,
  started_at       timestamptz NOT NULL,
  duration_ms      double precision NOT NULL,
  status_code      integer NULL,
  error            text NULL,
  response_excerpt text NULL,
  PRIMARY KEY (delivery_id, attempt)
);

-- Each completed ISO week's drift verdict of an organization, once some endpoint of it subscribes
-- to `drift.verdict_changed`: the first process to store a week's verdict is the one that announces
-- a change from the week before (the insert and the event are one transaction).
CREATE TABLE drift_verdicts (
  organization_id text NOT NULL REFERENCES organizations (id),
  week            text NOT NULL,
  verdict         text NULL,
  reasons         text[] NOT NULL DEFAULT '{}',
  basis           text NULL,
  decided_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, week)
);
