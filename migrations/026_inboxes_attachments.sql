-- Inboxes as a fraud lead manages them, and files on cases (src/storage/cases-store.ts,
-- src/storage/case-attachments.ts).
-- A change of an inbox is audited in policy_audit (subject 'inbox'), as rules, lists and fields are.
-- Round-robin assignment remembers, per inbox and member, the turn at which the member was last
-- given a case (a number from the feed's sequence, so it orders across processes): ties between
-- members equally loaded go to whoever waited longest.
-- A case escalated into an inbox where its entity already has an open case is merged into that one:
-- it is closed, naming the case that carries its decisions on (`merged_into`).
-- Attachments are stored in the database (bytea), not on a disk: several processes share the
-- database, never a data directory, and the embedded back end keeps its database in its own.
-- Managers' figures read closed cases by their closing time; the index keeps that a range scan.

ALTER TABLE policy_audit DROP CONSTRAINT policy_audit_subject_check;
ALTER TABLE policy_audit ADD CONSTRAINT policy_audit_subject_check CHECK (subject IN ('rule', 'list', 'field', 'inbox'));

ALTER TABLE cases ADD COLUMN merged_into text NULL REFERENCES cases (id);

CREATE INDEX cases_org_inbox_closed_idx ON cases (organization_id, inbox_id, closed_at_ms) WHERE status = 'closed';

CREATE TABLE inbox_turns (
  organization_id text NOT NULL REFERENCES organizations (id),
  inbox_id        text NOT NULL REFERENCES inboxes (id),
  user_id         text NOT NULL,
  turn            bigint NOT NULL,
  PRIMARY KEY (inbox_id, user_id)
);

CREATE TABLE case_attachments (
  id              text PRIMARY KEY,
  case_id         text NOT NULL REFERENCES cases (id),
  organization_id text NOT NULL REFERENCES organizations (id),
  -- Display text only: the file is stored under `id`, never under this name.
  name            text NOT NULL,
  size            integer NOT NULL CHECK (size >= 0 AND size <= 5242880),
  sha256          text NOT NULL,
  content         bytea NOT NULL,
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL
);
CREATE INDEX case_attachments_case_idx ON case_attachments (organization_id, case_id, created_at_ms);
