-- The features a scored transaction was scored with: every channel's features in the model's
-- channel order, as little-endian float32 (NaN for a missing value). The organization's weekly
-- performance compares them with the model's reference to report drift on its live traffic.
-- Imported rows and transactions recorded before this column existed have none.
ALTER TABLE transactions ADD COLUMN features bytea NULL;
