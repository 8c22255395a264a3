-- A page of cases is read in the list's own order (the soonest due, then the highest priority,
-- then the id) straight from an index, whichever filter an analyst sets: each index leads with the
-- organization, the filter's column and the status, then the order's columns. The list reads one
-- ordered branch per status it shows and merges them (cases-store.ts listCases), so these three
-- indexes serve every combination of status, inbox, assignee and "overdue".
DROP INDEX cases_org_status_idx;
DROP INDEX cases_org_inbox_idx;
DROP INDEX cases_org_assignee_idx;
CREATE INDEX cases_org_status_idx ON cases (organization_id, status, due_at_ms, (-priority), id);
CREATE INDEX cases_org_inbox_idx ON cases (organization_id, inbox_id, status, due_at_ms, (-priority), id);
CREATE INDEX cases_org_assignee_idx ON cases (organization_id, assignee, status, due_at_ms, (-priority), id) WHERE assignee IS NOT NULL;
