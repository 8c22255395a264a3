-- The service's transaction history: the example dataset stored at first start (source 'example')
-- and every scored request (source 'scored'), read back in time order at each start to rebuild the
-- in-memory history the scorer uses. Times are epoch milliseconds as double precision, the unit the
-- engine works in, so the round trip is exact. service_meta holds small facts about the service's
-- state as JSON, such as when and from what the history was seeded.

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
