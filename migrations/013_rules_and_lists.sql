-- Rules and lists: what an organization's operators decide besides the model.
-- Lists hold values of one kind (customer ids, merchant ids, locations, payment types, channels or
-- text). An item is one value's stay on a list (added, by whom, why, until when, removed, by whom);
-- no row is ever deleted, so a list can be read as it was at any past time (a backtest reads it
-- so), and adding a value already on the list ends its stay and starts a new one, so the stays of
-- one value never overlap. Rules are CEL expressions with an action; a rule's versions are
-- immutable, and the rule says which version scoring evaluates (`live_version`) and how (`status`).
-- Every change of a rule or a list is kept in `policy_audit`. Rows carry the writing transaction's
-- id and a feed number, both renewed by every change, so the live feed (src/storage/live-feed.ts)
-- carries each rule's and item's current state to every process.

CREATE TABLE lists (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('customer_id', 'merchant_id', 'location', 'payment_type', 'channel', 'text')),
  description     text NULL,
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL,
  deleted_at_ms   double precision NULL,
  deleted_by      text NULL
);
-- A name names one list at a time; a deleted list's name can be used again.
CREATE UNIQUE INDEX lists_org_name_idx ON lists (organization_id, name) WHERE deleted_at_ms IS NULL;

CREATE TABLE list_items (
  id              bigserial PRIMARY KEY,
  seq             bigint NOT NULL DEFAULT nextval('transactions_seq_seq'),
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id(),
  organization_id text NOT NULL REFERENCES organizations (id),
  list_id         text NOT NULL REFERENCES lists (id),
  value           text NOT NULL,
  added_at_ms     double precision NOT NULL,
  added_by        text NOT NULL,
  reason          text NULL,
  expires_at_ms   double precision NULL,
  removed_at_ms   double precision NULL,
  removed_by      text NULL
);
CREATE UNIQUE INDEX list_items_seq_idx ON list_items (seq);
CREATE INDEX list_items_feed_idx ON list_items (xid, seq);
-- The items on a list now, by value (a page of a list, an item count, the stay a new add ends).
CREATE UNIQUE INDEX list_items_current_idx ON list_items (list_id, value) WHERE removed_at_ms IS NULL;
-- Per organization, for loading what a process keeps and for its item limit.
CREATE INDEX list_items_org_current_idx ON list_items (organization_id) WHERE removed_at_ms IS NULL;

CREATE TABLE rules (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  status          text NOT NULL CHECK (status IN ('draft', 'shadow', 'active', 'disabled')),
  -- The newest version, and the one scoring evaluates while the status is active or shadow.
  version         integer NOT NULL,
  live_version    integer NULL,
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL,
  updated_at_ms   double precision NOT NULL,
  updated_by      text NOT NULL,
  deleted_at_ms   double precision NULL,
  seq             bigint NOT NULL DEFAULT nextval('transactions_seq_seq'),
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id(),
  CHECK (status IN ('draft', 'disabled') OR live_version IS NOT NULL)
);
CREATE UNIQUE INDEX rules_org_name_idx ON rules (organization_id, name) WHERE deleted_at_ms IS NULL;
CREATE INDEX rules_org_idx ON rules (organization_id);
CREATE UNIQUE INDEX rules_seq_idx ON rules (seq);
CREATE INDEX rules_feed_idx ON rules (xid, seq);

CREATE TABLE rule_versions (
  rule_id         text NOT NULL REFERENCES rules (id),
  version         integer NOT NULL,
  organization_id text NOT NULL REFERENCES organizations (id),
  expression      text NOT NULL,
  action          text NOT NULL CHECK (action IN ('allow', 'block', 'review')),
  description     text NULL,
  -- The lists the expression names, by id, as they were when the version was saved.
  list_ids        text[] NOT NULL,
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL,
  PRIMARY KEY (rule_id, version)
);

CREATE TABLE policy_audit (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  at_ms           double precision NOT NULL,
  by              text NOT NULL,
  subject         text NOT NULL CHECK (subject IN ('rule', 'list')),
  subject_id      text NOT NULL,
  action          text NOT NULL,
  detail          jsonb NULL
);
CREATE INDEX policy_audit_subject_idx ON policy_audit (organization_id, subject, subject_id, id);

-- What a scored transaction's rules stage did, beside the response that shows it: the decision
-- the model's thresholds gave, the action of the rule that decided (null: the thresholds decided),
-- the rules that matched (applied or not, shadow included) and those that could not be evaluated.
-- `inputs` holds what the decision saw beyond the columns (src/storage/decision-inputs.ts), so a
-- backtest reads each logged transaction without its response body.
ALTER TABLE transactions ADD COLUMN model_id text NULL;
ALTER TABLE transactions ADD COLUMN model_decision text NULL CHECK (model_decision IN ('approve', 'review', 'block'));
ALTER TABLE transactions ADD COLUMN rule_action text NULL CHECK (rule_action IN ('allow', 'block', 'review'));
ALTER TABLE transactions ADD COLUMN rule_ids text[] NULL;
ALTER TABLE transactions ADD COLUMN rule_errors text[] NULL;
ALTER TABLE transactions ADD COLUMN inputs bytea NULL;
-- Transactions a rule matched, newest first: the listing's rule filter and the 7-day counts read
-- these only (most transactions match no rule, so most are not in it).
CREATE INDEX transactions_org_rules_idx ON transactions (organization_id, time_ms DESC, seq DESC) WHERE rule_ids IS NOT NULL OR rule_errors IS NOT NULL;

-- Backtests of rules are jobs of the durable queue.
ALTER TABLE jobs DROP CONSTRAINT jobs_kind_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_kind_check CHECK (kind IN ('score', 'history_import', 'rings', 'backtest'));
