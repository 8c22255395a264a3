-- A model trained on an organization's own outcomes (npm run train -- --organization) has boosters
-- of its own: one LightGBM model text per channel, kept here beside its settings so that every
-- process scores with the same trees. A model without rows here uses the base model's boosters.
-- Its settings name the boosters' digest, so a model's id (a digest of its settings) changes with
-- its trees.

CREATE TABLE custom_model_boosters (
  model_id   text NOT NULL REFERENCES custom_models (id) ON DELETE CASCADE,
  channel    text NOT NULL,
  model_text text NOT NULL,
  PRIMARY KEY (model_id, channel)
);
