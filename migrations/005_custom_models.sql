-- Custom models of an organization: the built-in boosters with the organization's own stack
-- weights, thresholds and bands (complete values, merged with the base at creation, so a model
-- never changes once made). At most one is active per organization; its API keys score with it.

CREATE TABLE custom_models (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name            text NOT NULL,
  base_model_id   text NOT NULL,
  settings        jsonb NOT NULL,
  active          boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  activated_at    timestamptz NULL
);

CREATE INDEX custom_models_organization_idx ON custom_models (organization_id, created_at);
CREATE UNIQUE INDEX custom_models_one_active_idx ON custom_models (organization_id) WHERE active;
