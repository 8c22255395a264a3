-- Case events (src/storage/case-events.ts): when an open or in-progress case passed its due time,
-- the SLA sweep marks it, once. Every process sweeps; the first to set `breached_at_ms` (an UPDATE
-- … WHERE breached_at_ms IS NULL) is the one whose `case.sla_breached` event and timeline entry
-- are written, in that same transaction, so several processes announce each breach once.

ALTER TABLE cases ADD COLUMN breached_at_ms double precision NULL;

-- What the sweep reads: the cases not yet marked that are still to be worked, by due time.
CREATE INDEX cases_unbreached_idx ON cases (due_at_ms) WHERE breached_at_ms IS NULL AND status IN ('open', 'in_progress');
