-- The live feed's order without a writers' lock. Every row of the feed (a recorded transaction, an
-- outcome change) carries the id of the database transaction that wrote it, and the feed is read in
-- (xid, seq) order, so writers commit side by side and share their WAL flushes; how a reader never
-- misses a row is src/storage/live-feed.ts's. Rows stored before this migration read as xid 0:
-- they are older than any process's starting position.
ALTER TABLE transactions ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE transactions ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX transactions_feed_idx ON transactions (xid, seq);
ALTER TABLE outcome_changes ADD COLUMN xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE outcome_changes ALTER COLUMN xid SET DEFAULT pg_current_xact_id();
CREATE INDEX outcome_changes_feed_idx ON outcome_changes (xid, seq);

-- Writers of transactions run side by side, so the totals' upserts (migration 009) take their
-- row locks in one order, the key order, in every statement: two writers touching the same
-- customers, merchants or channels wait for each other instead of deadlocking. The statements run
-- in the same sequence in every writer (transactions' unique ids, then entity_totals, then
-- customer_uses), so the order holds across them too.
CREATE OR REPLACE FUNCTION live_totals_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO entity_totals AS e (organization_id, kind, key, transactions, amount_sum, amount_squares, last_ms, labels, frauds, first_fraud_known_ms)
  SELECT organization_id, kind, key, count(*), sum(amount), sum(amount * amount), max(time_ms),
         count(label), coalesce(sum(label), 0), min(label_known_ms) FILTER (WHERE label = 1)
  FROM (SELECT organization_id, 'c' AS kind, customer_id AS key, amount, time_ms, label, label_known_ms FROM added
        UNION ALL
        SELECT organization_id, 'm', merchant_id, amount, time_ms, label, label_known_ms FROM added
        UNION ALL
        SELECT organization_id, 'h', payment_type || ':' || location, amount, time_ms, label, label_known_ms FROM added) AS r
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
        FROM (SELECT organization_id, 'c' AS kind, customer_id AS key, labels, frauds FROM changed
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

