-- A changed outcome's totals found by their primary key. The totals' `kind` is char(1); the
-- statement that adds a changed outcome to its customer's, merchant's and channel's totals
-- compared it with a text literal, which makes PostgreSQL compare as text and leaves the primary
-- key (organization_id, kind, key) unusable: every outcome reported read the totals of every
-- organization (36 ms at 50,000 rows, growing with them) while the rows it had locked waited.
-- The same function as migrations/011_feed_order.sql's, with the kind typed.
CREATE OR REPLACE FUNCTION live_totals_relabelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Every row either statement below changes, locked first in key order.
  PERFORM 1 FROM entity_totals e
  JOIN (SELECT n.organization_id, 'c'::char(1) AS kind, n.customer_id AS key FROM old_rows o JOIN new_rows n ON n.seq = o.seq
        WHERE n.label IS DISTINCT FROM o.label OR n.label_known_ms IS DISTINCT FROM o.label_known_ms
        UNION SELECT n.organization_id, 'm', n.merchant_id FROM old_rows o JOIN new_rows n ON n.seq = o.seq WHERE n.label IS DISTINCT FROM o.label
        UNION SELECT n.organization_id, 'h', n.payment_type || ':' || n.location FROM old_rows o JOIN new_rows n ON n.seq = o.seq WHERE n.label IS DISTINCT FROM o.label) AS k
    ON e.organization_id = k.organization_id AND e.kind = k.kind AND e.key = k.key
  ORDER BY e.organization_id, e.kind, e.key
  FOR UPDATE OF e;

  WITH changed AS (
    SELECT n.organization_id, n.customer_id, n.merchant_id, n.payment_type || ':' || n.location AS channel,
           (n.label IS NOT NULL)::int - (o.label IS NOT NULL)::int AS labels, coalesce(n.label, 0) - coalesce(o.label, 0) AS frauds
    FROM old_rows o JOIN new_rows n ON n.seq = o.seq
    WHERE n.label IS DISTINCT FROM o.label)
  UPDATE entity_totals e SET labels = e.labels + d.labels, frauds = e.frauds + d.frauds
  FROM (SELECT organization_id, kind, key, sum(labels) AS labels, sum(frauds) AS frauds
        FROM (SELECT organization_id, 'c'::char(1) AS kind, customer_id AS key, labels, frauds FROM changed
              UNION ALL SELECT organization_id, 'm', merchant_id, labels, frauds FROM changed
              UNION ALL SELECT organization_id, 'h', channel, labels, frauds FROM changed) AS r
        GROUP BY organization_id, kind, key) AS d
  WHERE e.organization_id = d.organization_id AND e.kind = d.kind AND e.key = d.key;

  UPDATE entity_totals e SET first_fraud_known_ms =
    (SELECT min(t.label_known_ms) FROM transactions t WHERE t.organization_id = e.organization_id AND t.customer_id = e.key AND t.label = 1)
  FROM (SELECT DISTINCT n.organization_id, n.customer_id FROM old_rows o JOIN new_rows n ON n.seq = o.seq
        WHERE (n.label = 1 OR o.label = 1) AND (n.label IS DISTINCT FROM o.label OR n.label_known_ms IS DISTINCT FROM o.label_known_ms)) AS d
  WHERE e.organization_id = d.organization_id AND e.kind = 'c' AND e.key = d.customer_id;
  RETURN NULL;
END $$;
