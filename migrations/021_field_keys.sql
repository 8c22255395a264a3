-- The values of an organization's key fields a payment carried (src/domain/fields.ts keyEntries),
-- as `name=value` entries, for the fields that were keys when it was recorded: what a listing
-- filters on (?field.<name>=<value>) and what a key value's history is counted from.
ALTER TABLE transactions ADD COLUMN field_keys text[] NULL;
CREATE INDEX transactions_field_keys_idx ON transactions USING gin (field_keys) WHERE field_keys IS NOT NULL;

-- Each key value's all-time totals beside the customers', merchants' and channels' (kind 'f', key
-- `name=value`), kept by the same trigger, so a process loads a value's last 31 days and the count
-- and sum before them. Outcomes are not counted for values (nothing reads them).
ALTER TABLE entity_totals DROP CONSTRAINT entity_totals_kind_check;
ALTER TABLE entity_totals ADD CONSTRAINT entity_totals_kind_check CHECK (kind IN ('c', 'm', 'h', 'f'));

CREATE OR REPLACE FUNCTION live_totals_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO entity_totals AS e (organization_id, kind, key, transactions, amount_sum, amount_squares, last_ms, labels, frauds, first_fraud_known_ms)
  SELECT organization_id, kind, key, count(*), sum(amount), sum(amount * amount), max(time_ms),
         count(label), coalesce(sum(label), 0), min(label_known_ms) FILTER (WHERE label = 1)
  FROM (SELECT organization_id, 'c' AS kind, customer_id AS key, amount, time_ms, label, label_known_ms FROM added
        UNION ALL
        SELECT organization_id, 'm', merchant_id, amount, time_ms, label, label_known_ms FROM added
        UNION ALL
        SELECT organization_id, 'h', payment_type || ':' || location, amount, time_ms, label, label_known_ms FROM added
        UNION ALL
        SELECT organization_id, 'f', unnest(field_keys), amount, time_ms, NULL::int2, NULL::float8 FROM added WHERE field_keys IS NOT NULL) AS r
  GROUP BY organization_id, kind, key
  ORDER BY organization_id, kind, key
  ON CONFLICT (organization_id, kind, key) DO UPDATE SET
    transactions = e.transactions + EXCLUDED.transactions,
    amount_sum = e.amount_sum + EXCLUDED.amount_sum,
    amount_squares = e.amount_squares + EXCLUDED.amount_squares,
    last_ms = greatest(e.last_ms, EXCLUDED.last_ms),
    labels = e.labels + EXCLUDED.labels,
    frauds = e.frauds + EXCLUDED.frauds,
    first_fraud_known_ms = least(e.first_fraud_known_ms, EXCLUDED.first_fraud_known_ms);

  INSERT INTO customer_uses AS u (organization_id, customer_id, kind, key, first_ms)
  SELECT organization_id, customer_id, kind, key, min(time_ms)
  FROM (SELECT organization_id, customer_id, 'm' AS kind, merchant_id AS key, time_ms FROM added
        UNION ALL
        SELECT organization_id, customer_id, 'h', payment_type || ':' || location, time_ms FROM added
        UNION ALL
        SELECT organization_id, customer_id, 'l', location, time_ms FROM added) AS r
  GROUP BY organization_id, customer_id, kind, key
  ORDER BY organization_id, customer_id, kind, key
  ON CONFLICT (organization_id, customer_id, kind, key) DO UPDATE SET first_ms = EXCLUDED.first_ms
    WHERE EXCLUDED.first_ms < u.first_ms;
  RETURN NULL;
END $$;
