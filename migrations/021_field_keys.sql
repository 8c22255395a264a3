-- The values of an organization's key fields a payment carried (src/domain/fields.ts keyEntries),
-- as `name=value` entries, for the fields that were keys when it was recorded: what a listing
-- filters on (?field.<name>=<value>) and what a key value's history is counted from.
ALTER TABLE transactions ADD COLUMN field_keys text[] NULL;
CREATE INDEX transactions_field_keys_idx ON transactions USING gin (field_keys) WHERE field_keys IS NOT NULL;
