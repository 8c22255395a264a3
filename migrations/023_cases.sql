-- Cases (src/domain/cases.ts): an organization's inboxes, each routing decisions that need a person
-- into cases, one open case per (inbox, entity) at a time, and each case's decisions and timeline.
-- The partial unique index on open cases is what keeps a second case of the same entity from being
-- opened when two processes record its decisions at once: both upsert the same row.
-- The timeline is append-only and hash-chained: a trigger numbers each entry within its case and
-- sets its hash, the SHA-256 (hex) of the previous entry's hash and this entry's content, under a
-- lock on the case's row, so entries appended at once by two writers still form one chain.
-- Inboxes carry the writing transaction's id and a feed number, as rules and fields do, so every
-- process learns their routing through the live feed.

CREATE TABLE inboxes (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  -- 'customer', 'merchant' or 'field:<name>' (a key field).
  group_by        text NOT NULL,
  -- A CEL expression over the decision (the rules' language); NULL: the default, tried last.
  route           text NULL,
  position        integer NOT NULL,
  -- Blocks open cases here too (reviews always do).
  on_block        boolean NOT NULL DEFAULT false,
  sla_hours       double precision NOT NULL CHECK (sla_hours > 0),
  members         text[] NOT NULL DEFAULT '{}',
  escalation_id   text NULL REFERENCES inboxes (id),
  -- Round-robin assignment of new cases among the members, each holding at most this many open.
  auto_assign_cap integer NULL CHECK (auto_assign_cap IS NULL OR auto_assign_cap > 0),
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL,
  deleted_at_ms   double precision NULL,
  seq             bigint NOT NULL DEFAULT nextval('transactions_seq_seq'),
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE UNIQUE INDEX inboxes_name_idx ON inboxes (organization_id, name) WHERE deleted_at_ms IS NULL;
CREATE UNIQUE INDEX inboxes_seq_idx ON inboxes (seq);
CREATE INDEX inboxes_feed_idx ON inboxes (xid, seq);

CREATE TABLE cases (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  inbox_id        text NOT NULL REFERENCES inboxes (id),
  -- 'customer', 'merchant' or 'key' (a key field's value, `name=value`).
  entity_kind     text NOT NULL CHECK (entity_kind IN ('customer', 'merchant', 'key')),
  entity_key      text NOT NULL,
  status          text NOT NULL CHECK (status IN ('open', 'in_progress', 'snoozed', 'closed')),
  resolution      text NULL CHECK (resolution IN ('fraud', 'legitimate', 'inconclusive')),
  assignee        text NULL,
  -- Higher first among cases equally due: from the highest score and amount of its decisions.
  priority        double precision NOT NULL,
  opened_at_ms    double precision NOT NULL,
  due_at_ms       double precision NOT NULL,
  snoozed_until_ms double precision NULL,
  closed_at_ms    double precision NULL,
  updated_at_ms   double precision NOT NULL
);
CREATE UNIQUE INDEX cases_open_entity_idx ON cases (organization_id, inbox_id, entity_kind, entity_key) WHERE status <> 'closed';
CREATE INDEX cases_org_status_idx ON cases (organization_id, status, due_at_ms, id);
CREATE INDEX cases_org_inbox_idx ON cases (organization_id, inbox_id, status, due_at_ms, id);
CREATE INDEX cases_org_assignee_idx ON cases (organization_id, assignee, status, due_at_ms, id) WHERE assignee IS NOT NULL;

CREATE TABLE case_decisions (
  case_id         text NOT NULL REFERENCES cases (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  transaction_id  text NOT NULL,
  joined_at_ms    double precision NOT NULL,
  PRIMARY KEY (case_id, transaction_id)
);
CREATE INDEX case_decisions_transaction_idx ON case_decisions (organization_id, transaction_id);

CREATE TABLE case_timeline (
  case_id         text NOT NULL REFERENCES cases (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  n               integer NOT NULL,
  at_ms           bigint NOT NULL,
  actor           text NOT NULL,
  kind            text NOT NULL,
  -- JSON text, hashed as it is stored.
  detail          text NOT NULL,
  prev_hash       text NOT NULL,
  hash            text NOT NULL,
  PRIMARY KEY (case_id, n)
);

CREATE FUNCTION case_timeline_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  last record;
BEGIN
  -- One appender of the case at a time (rows inserted earlier by this statement are visible here).
  PERFORM 1 FROM cases WHERE id = NEW.case_id FOR UPDATE;
  SELECT n, hash INTO last FROM case_timeline WHERE case_id = NEW.case_id ORDER BY n DESC LIMIT 1;
  NEW.n := coalesce(last.n, 0) + 1;
  NEW.prev_hash := coalesce(last.hash, '');
  NEW.hash := encode(sha256(convert_to(
    NEW.prev_hash || E'\n' || NEW.n || E'\t' || NEW.at_ms || E'\t' || NEW.actor || E'\t' || NEW.kind || E'\t' || NEW.detail, 'UTF8')), 'hex');
  RETURN NEW;
END $$;

CREATE TRIGGER case_timeline_chained BEFORE INSERT ON case_timeline FOR EACH ROW EXECUTE FUNCTION case_timeline_chain();

-- Append-only: an entry is never changed or removed through SQL (an export would show it anyway).
CREATE FUNCTION case_timeline_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the case timeline is append-only';
END $$;

CREATE TRIGGER case_timeline_unchanged BEFORE UPDATE OR DELETE ON case_timeline FOR EACH ROW EXECUTE FUNCTION case_timeline_append_only();
