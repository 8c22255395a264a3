-- All-time totals of each organization's live data, kept by the database as transactions are
-- recorded and their outcomes change, so that a server process loads only what windowed features
-- can reach (each entity's last 31 days) plus these totals, and its start-up and memory do not grow
-- with the history stored before that (src/live/tenants.ts).
--
-- `entity_totals`, per customer ('c'), merchant ('m') and channel ('h', `payment_type:location`):
-- how many transactions, the sum of their amounts and of the squared amounts, the newest time, how
-- many have an outcome and how many of those are fraud, and (customers) when the earliest of their
-- frauds became known. `customer_uses`: when a customer first used each merchant ('m'), channel
-- ('h') and location ('l'). Statement-level triggers keep both in step with `transactions`, so no
-- write path can forget them; the feed lock already serialises the writers, so the upserts do not
-- contend among themselves.

CREATE TABLE entity_totals (
  organization_id      text NOT NULL REFERENCES organizations (id),
  kind                 char(1) NOT NULL CHECK (kind IN ('c', 'm', 'h')),
  key                  text NOT NULL,
  transactions         bigint NOT NULL,
  amount_sum           double precision NOT NULL,
  amount_squares       double precision NOT NULL,
  last_ms              double precision NOT NULL,
  labels               bigint NOT NULL,
  frauds               bigint NOT NULL,
  first_fraud_known_ms double precision NULL,
  PRIMARY KEY (organization_id, kind, key)
);

CREATE TABLE customer_uses (
  organization_id text NOT NULL REFERENCES organizations (id),
  customer_id     text NOT NULL,
  kind            char(1) NOT NULL CHECK (kind IN ('m', 'h', 'l')),
  key             text NOT NULL,
  first_ms        double precision NOT NULL,
  PRIMARY KEY (organization_id, customer_id, kind, key)
);

-- Outcomes learned after the horizon for transactions before it: a load reads them by when they
-- became known.
CREATE INDEX transactions_org_label_known_idx ON transactions (organization_id, label_known_ms) WHERE label IS NOT NULL;
-- A channel's older transactions, for evidence the horizon no longer holds.
CREATE INDEX transactions_org_channel_idx ON transactions (organization_id, payment_type, location, time_ms DESC, seq DESC);

-- What an outcome change replaced, so that a process holding only totals for the transaction can
-- take the old outcome out of them.
ALTER TABLE outcome_changes ADD COLUMN from_known_ms double precision NULL;

CREATE FUNCTION live_totals_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
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
  ON CONFLICT (organization_id, customer_id, kind, key) DO UPDATE SET first_ms = EXCLUDED.first_ms
    WHERE EXCLUDED.first_ms < u.first_ms;
  RETURN NULL;
END $$;

-- An outcome change: its old label leaves the counts and its new one joins them; a customer whose
-- frauds changed has the earliest of them found again (a withdrawn fraud may have been it).
CREATE FUNCTION live_totals_relabelled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
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

CREATE TRIGGER transactions_totals_inserted AFTER INSERT ON transactions
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION live_totals_inserted();
CREATE TRIGGER transactions_totals_relabelled AFTER UPDATE ON transactions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_totals_relabelled();

-- The totals of what is stored already.
INSERT INTO entity_totals (organization_id, kind, key, transactions, amount_sum, amount_squares, last_ms, labels, frauds, first_fraud_known_ms)
SELECT organization_id, kind, key, count(*), sum(amount), sum(amount * amount), max(time_ms),
       count(label), coalesce(sum(label), 0), min(label_known_ms) FILTER (WHERE label = 1)
FROM (SELECT organization_id, 'c' AS kind, customer_id AS key, amount, time_ms, label, label_known_ms FROM transactions
      UNION ALL
      SELECT organization_id, 'm', merchant_id, amount, time_ms, label, label_known_ms FROM transactions
      UNION ALL
      SELECT organization_id, 'h', payment_type || ':' || location, amount, time_ms, label, label_known_ms FROM transactions) AS r
GROUP BY organization_id, kind, key;

INSERT INTO customer_uses (organization_id, customer_id, kind, key, first_ms)
SELECT organization_id, customer_id, kind, key, min(time_ms)
FROM (SELECT organization_id, customer_id, 'm' AS kind, merchant_id AS key, time_ms FROM transactions
      UNION ALL
      SELECT organization_id, customer_id, 'h', payment_type || ':' || location, time_ms FROM transactions
      UNION ALL
      SELECT organization_id, customer_id, 'l', location, time_ms FROM transactions) AS r
GROUP BY organization_id, customer_id, kind, key;
