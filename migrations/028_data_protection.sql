-- Data protection (docs/operating.md, "Data protection"): how long an organization keeps recorded
-- data, a customer's data erased on request, and the proof of both.
--
-- `retention_days`: recorded transactions older than this are deleted by the retention sweep,
-- with what refers to them (src/app/data-protection.ts); `retention_swept_at_ms` is when a process
-- last claimed the organization's sweep, so that several processes never sweep it at once.
ALTER TABLE organizations ADD COLUMN retention_days integer NOT NULL DEFAULT 400 CHECK (retention_days BETWEEN 30 AND 3650);
ALTER TABLE organizations ADD COLUMN retention_swept_at_ms double precision NULL;

-- An erasure requested for one customer of one organization. The customer's id is held only while
-- the erasure waits (`pending`) and cleared in the transaction that deletes its rows; afterwards the request
-- is known by `customer_hash`, a keyed hash (HMAC-SHA-256 with the server's secret) that proves
-- which customer it was to whoever knows the id, and reveals nothing to whoever does not.
-- Done, the row takes a new (xid, seq): the live feed carries it, and every process builds the
-- organization's history again without the customer (src/storage/live-feed.ts).
CREATE TABLE erasures (
  id              text PRIMARY KEY,
  seq             bigint NOT NULL DEFAULT nextval('transactions_seq_seq'),
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id(),
  organization_id text NOT NULL REFERENCES organizations (id),
  customer_id     text NULL,
  customer_hash   text NOT NULL,
  keep_lists      text[] NOT NULL DEFAULT '{}',
  status          text NOT NULL CHECK (status IN ('pending', 'done')),
  requested_by    text NOT NULL,
  requested_at_ms double precision NOT NULL,
  claimed_at_ms   double precision NULL,
  done_at_ms      double precision NULL,
  counts          jsonb NULL,
  kept            jsonb NULL,
  -- Once the customer's rows are deleted, what they added to the totals of their merchants,
  -- channels and key values, taken out a few keys per transaction (a score waits for none long).
  totals_left     jsonb NULL,
  CHECK (status = 'pending' OR customer_id IS NULL)
);
CREATE INDEX erasures_feed_idx ON erasures (xid, seq);
CREATE INDEX erasures_organization_idx ON erasures (organization_id, requested_at_ms DESC, id);
CREATE INDEX erasures_pending_idx ON erasures (requested_at_ms) WHERE status = 'pending';

-- Every act of data protection, for the owners' proof: a retention period changed, a retention
-- sweep (its cut-off and what it deleted), a customer's data exported, an erasure requested and
-- done. Customers appear only by their keyed hash.
CREATE TABLE data_protection_audit (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  at_ms           double precision NOT NULL,
  -- A user id, `key:<id>` for an API key, or `system` for the sweep.
  by              text NOT NULL,
  action          text NOT NULL CHECK (action IN ('retention_changed', 'retention_swept', 'customer_exported', 'erasure_requested', 'erasure_done')),
  detail          jsonb NOT NULL
);
CREATE INDEX data_protection_audit_organization_idx ON data_protection_audit (organization_id, id);

-- A case's timeline stays append-only, except in the transaction of an erasure, which rewrites the
-- entries naming the erased customer (and the hash chain after them) and deletes the cases about
-- it, then appends an entry saying so (src/storage/data-protection.ts).
CREATE OR REPLACE FUNCTION case_timeline_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('fraud.erasure', true) = 'on' THEN
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
  END IF;
  RAISE EXCEPTION 'the case timeline is append-only';
END $$;
