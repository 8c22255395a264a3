-- Live data per organization. Every recorded transaction belongs to exactly one organization's
-- history: scored through its API keys (source 'scored', with the decision that was answered) or
-- imported from a labelled upload or the built-in example (source 'import'). The transaction id is
-- unique within an organization, which is what makes a retried score request a replay rather than
-- a second transaction. Migration 001's global history table (the example dataset and anonymous
-- scores) belongs to no organization and is dropped: the public sandbox is built from the
-- simulator in memory and stored nowhere.
--
-- Times are epoch milliseconds as double precision, the unit the engine works in. `seq` is the
-- order in which transactions were recorded, across every process that shares the database.

DROP TABLE transactions;
DELETE FROM service_meta WHERE key = 'example_dataset';

CREATE TABLE transactions (
  seq             bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  transaction_id  text NOT NULL,
  time_ms         double precision NOT NULL,
  amount          double precision NOT NULL,
  customer_id     text NOT NULL,
  merchant_id     text NOT NULL,
  location        text NOT NULL,
  payment_type    text NOT NULL,
  source          text NOT NULL CHECK (source IN ('scored', 'import')),
  -- The import job that brought the row in (source 'import').
  import_job_id   text NULL,
  -- The decision answered (source 'scored'): the exact response body (UTF-8 JSON, raw-deflated by
  -- the service: a fraction of its size, and cheaper to send and store than the text), which an
  -- idempotent replay sends again and the decision record is read from; and the fields listings
  -- filter on.
  response        bytea NULL,
  risk_score      double precision NULL,
  risk_band       text NULL CHECK (risk_band IN ('low', 'medium', 'high', 'critical')),
  decision        text NULL CHECK (decision IN ('approve', 'review', 'block')),
  mode            text NULL,
  -- The current outcome: 1 fraud, 0 legitimate, NULL unknown; features use it from label_known_ms
  -- on (a reported outcome's reported_at; an imported label's time plus the label delay).
  label           smallint NULL CHECK (label IN (0, 1)),
  label_known_ms  double precision NULL,
  outcome_source  text NULL,
  outcome_reported_by text NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT transactions_organization_transaction_id_key UNIQUE (organization_id, transaction_id),
  CHECK ((label IS NULL) = (label_known_ms IS NULL))
);

-- Newest first per organization (the decision log's listing and its time range), and the same
-- order within one customer, one merchant, one decision or among those with an outcome: a page of a
-- filtered listing reads an index from the newest end instead of sorting the organization's
-- transactions. Approvals (most traffic) and transactions without an outcome are left out of the
-- last two: a filter for them finds its page early in the time index, and every scored
-- transaction then updates four indexes, not six.
CREATE INDEX transactions_org_time_idx ON transactions (organization_id, time_ms DESC, seq DESC);
CREATE INDEX transactions_org_customer_idx ON transactions (organization_id, customer_id, time_ms DESC, seq DESC);
CREATE INDEX transactions_org_merchant_idx ON transactions (organization_id, merchant_id, time_ms DESC, seq DESC);
CREATE INDEX transactions_org_flagged_idx ON transactions (organization_id, decision, time_ms DESC, seq DESC) WHERE decision IN ('review', 'block');
CREATE INDEX transactions_org_outcome_idx ON transactions (organization_id, label, time_ms DESC, seq DESC) WHERE label IS NOT NULL;

-- Every change of a transaction's outcome, kept for ever: from what, to what, why, when it was
-- known, and who reported it (a user id, or `key:<api key id>`).
CREATE TABLE outcome_changes (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  transaction_seq bigint NOT NULL REFERENCES transactions (seq),
  from_label      smallint NULL CHECK (from_label IN (0, 1)),
  to_label        smallint NOT NULL CHECK (to_label IN (0, 1)),
  source          text NOT NULL,
  reported_at_ms  double precision NOT NULL,
  reported_by     text NOT NULL,
  recorded_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX outcome_changes_transaction_idx ON outcome_changes (transaction_seq, id);

-- Jobs of more than one kind: dataset scoring, and history imports into an organization (from an
-- upload, or the built-in example, which has no dataset). `params` holds what a kind needs.
ALTER TABLE jobs ADD COLUMN kind text NOT NULL DEFAULT 'score' CHECK (kind IN ('score', 'history_import'));
ALTER TABLE jobs ADD COLUMN params jsonb NULL;
ALTER TABLE jobs ALTER COLUMN dataset_id DROP NOT NULL;
ALTER TABLE jobs ALTER COLUMN mode DROP NOT NULL;
