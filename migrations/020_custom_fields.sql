-- An organization's own fields (src/domain/fields.ts): each declaration names a field its payments
-- may carry, with its type and whether it is a key (a string field whose values have a history of
-- their own). A field is retired, never deleted: a retired field's values stay in the records that
-- carry them, and its name can be declared again. Rows carry the writing transaction's id and a
-- feed number, renewed by every change, so the live feed (src/storage/live-feed.ts) carries each
-- declaration's current state to every process. Every change is kept in `policy_audit`.

CREATE TABLE custom_fields (
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  type            text NOT NULL CHECK (type IN ('string', 'number', 'boolean')),
  description     text NULL,
  key             boolean NOT NULL DEFAULT false,
  created_at_ms   double precision NOT NULL,
  created_by      text NOT NULL,
  retired_at_ms   double precision NULL,
  retired_by      text NULL,
  seq             bigint NOT NULL DEFAULT nextval('transactions_seq_seq'),
  xid             xid8 NOT NULL DEFAULT pg_current_xact_id(),
  PRIMARY KEY (organization_id, name),
  CHECK (NOT key OR type = 'string')
);
CREATE UNIQUE INDEX custom_fields_seq_idx ON custom_fields (seq);
CREATE INDEX custom_fields_feed_idx ON custom_fields (xid, seq);

-- The fields a payment was sent with, as sent (declared or not), beside its decision.
ALTER TABLE transactions ADD COLUMN fields jsonb NULL;

ALTER TABLE policy_audit DROP CONSTRAINT policy_audit_subject_check;
ALTER TABLE policy_audit ADD CONSTRAINT policy_audit_subject_check CHECK (subject IN ('rule', 'list', 'field'));
