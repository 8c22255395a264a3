-- Challengers: an organization's custom models that score every API-key request in shadow beside
-- the active one (at most three; a model is active or a challenger, never both). Their scores and
-- decisions are kept with the transaction they scored (`challengers`: [{ model_id, risk_score,
-- decision }]), never in the answer. Promotions, rollbacks, deactivations and challenger changes
-- are audited; a rollback undoes the newest promotion not undone yet.

ALTER TABLE custom_models ADD COLUMN challenger boolean NOT NULL DEFAULT false;
ALTER TABLE custom_models ADD CONSTRAINT custom_models_active_or_challenger CHECK (NOT (active AND challenger));
CREATE INDEX custom_models_challengers_idx ON custom_models (organization_id) WHERE challenger;

ALTER TABLE transactions ADD COLUMN challengers jsonb NULL;

CREATE TABLE model_audit (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  at              timestamptz NOT NULL DEFAULT now(),
  by              text NOT NULL,
  action          text NOT NULL CHECK (action IN ('promoted', 'rolled_back', 'deactivated', 'challenger_added', 'challenger_removed')),
  model_id        text NULL,
  previous_model_id text NULL
);
CREATE INDEX model_audit_organization_idx ON model_audit (organization_id, id);
