-- One global transaction history (source 'example' or 'scored') and service_meta, small facts about
-- the service's state as JSON. Migration 007 drops this table: live data belongs to one
-- organization (007_live_data.sql). Times are epoch milliseconds as double precision, the unit the
-- engine works in, so the round trip is exact.

CREATE TABLE transactions (
  seq          bigserial PRIMARY KEY,
  transaction_id text NOT NULL,
  time_ms      double precision NOT NULL,
  amount       double precision NOT NULL,
  customer_id  text NOT NULL,
  merchant_id  text NOT NULL,
  location     text NOT NULL,
  payment_type text NOT NULL,
  -- 1 fraud, 0 legitimate, NULL unknown (a scored request whose outcome is not known).
  label        smallint NULL CHECK (label IN (0, 1)),
  source       text NOT NULL CHECK (source IN ('example', 'scored')),
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- Leads with time_ms for time-range reads; seq makes it serve the load order (time_ms, seq) too.
CREATE INDEX transactions_time_ms_idx ON transactions (time_ms, seq);

CREATE TABLE service_meta (
  key   text PRIMARY KEY,
  value jsonb NOT NULL
);
