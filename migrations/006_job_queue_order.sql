-- The queue's order: jobs are claimed in the order they were queued. `created_at` alone cannot
-- say it: jobs queued within one tick of the clock tie, and the claim would then take them in the
-- order of their random ids. A sequence numbers them as they are inserted, across every process that
-- shares the database.

ALTER TABLE jobs ADD COLUMN queued_order bigserial;
DROP INDEX jobs_queue_idx;
CREATE INDEX jobs_queue_idx ON jobs (queued_order) WHERE status = 'queued';
