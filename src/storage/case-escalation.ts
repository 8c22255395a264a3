// A case escalated to its inbox's escalation inbox (migrations/023_cases.sql `escalation_id`), in
// one transaction under the case's row lock. The case moves there unassigned, open, due after the
// new inbox's SLA. When its entity already has an open case there (one open case per inbox and
// entity), it is merged into that case instead: its decisions join that case (which keeps its
// assignee and the sooner of the two due times), and it is closed naming it (`merged_into`), so
// nothing a lead escalates is refused or lost. Both timelines say so.

import type { Queryable } from './db.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { appendTimeline, CASE_COLUMNS, type CaseRow } from './cases-store.ts';
import { retryConflicts } from './errors.ts';

const HOUR_MS = 3_600_000;

/** What escalating answered: the case now carrying the escalated one (itself, or the case it was
 *  merged into), or why not. */
export type Escalation = { case: CaseRow; merged: boolean } | 'closed' | 'no_escalation';

/** Escalates one case of the organization (`reason` on both timelines); undefined when there is
 *  no such case. */
export async function escalateCase(scope: OrganizationScope, id: string, at: number, by: string, reason: string): Promise<Escalation | undefined> {
  // Two cases of one entity escalated into each other's inbox at once each hold their own case and
  // wait for the other's: PostgreSQL ends one, which runs again and finds the other's outcome.
  return retryConflicts(() =>
    scope.db.transaction(async (tx) => {
      const one = (q: Queryable, sql: string, params: unknown[]) => q.query<CaseRow>(sql, params).then((r) => r[0]);
      const c = await one(tx, `SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [scope.organizationId, id]);
      if (!c) return undefined;
      if (c.status === 'closed') return 'closed' as const;
      // The escalation inbox, held against its deletion until this commits.
      const [target] = await tx.query<{ id: string; sla_hours: number }>(
        `SELECT t.id, t.sla_hours FROM inboxes i JOIN inboxes t ON t.id = i.escalation_id AND t.organization_id = i.organization_id
       WHERE i.organization_id = $1 AND i.id = $2 AND t.deleted_at_ms IS NULL FOR KEY SHARE OF t`,
        [scope.organizationId, c.inbox_id],
      );
      if (!target) return 'no_escalation' as const;
      const due = at + target.sla_hours * HOUR_MS;
      const there = await one(
        tx,
        `SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND inbox_id = $2 AND entity_kind = $3 AND entity_key = $4 AND status <> 'closed' FOR UPDATE`,
        [scope.organizationId, target.id, c.entity_kind, c.entity_key],
      );
      if (!there) {
        const moved = await one(
          tx,
          `UPDATE cases SET inbox_id = $3, assignee = NULL, status = 'open', snoozed_until_ms = NULL, due_at_ms = $4, updated_at_ms = greatest(updated_at_ms, $5)
         WHERE organization_id = $1 AND id = $2 RETURNING ${CASE_COLUMNS}`,
          [scope.organizationId, id, target.id, due, at],
        );
        await appendTimeline(
          scope,
          id,
          {
            at,
            actor: by,
            kind: 'escalated',
            detail: { from_inbox: c.inbox_id, to_inbox: target.id, reason, from_assignee: c.assignee, due_at: new Date(due).toISOString() },
          },
          tx,
        );
        return { case: moved!, merged: false };
      }
      const carried = await tx.query<{ transaction_id: string }>(
        `INSERT INTO case_decisions (case_id, organization_id, transaction_id, joined_at_ms)
       SELECT $3, organization_id, transaction_id, $4 FROM case_decisions WHERE organization_id = $1 AND case_id = $2
       ORDER BY joined_at_ms, transaction_id
       ON CONFLICT DO NOTHING RETURNING transaction_id`,
        [scope.organizationId, id, there.id, at],
      );
      const merged = await one(
        tx,
        `UPDATE cases SET priority = greatest(priority, $3), due_at_ms = least(due_at_ms, $4), updated_at_ms = greatest(updated_at_ms, $5)
       WHERE organization_id = $1 AND id = $2 RETURNING ${CASE_COLUMNS}`,
        [scope.organizationId, there.id, c.priority, due, at],
      );
      await appendTimeline(
        scope,
        there.id,
        { at, actor: by, kind: 'merged', detail: { from_case: id, from_inbox: c.inbox_id, reason, transaction_ids: carried.map((r) => r.transaction_id) } },
        tx,
      );
      await tx.query(
        `UPDATE cases SET status = 'closed', resolution = NULL, snoozed_until_ms = NULL, closed_at_ms = $3, merged_into = $4, updated_at_ms = greatest(updated_at_ms, $3)
       WHERE organization_id = $1 AND id = $2`,
        [scope.organizationId, id, at, there.id],
      );
      await appendTimeline(
        scope,
        id,
        { at, actor: by, kind: 'escalated', detail: { from_inbox: c.inbox_id, to_inbox: target.id, reason, merged_into: there.id } },
        tx,
      );
      return { case: merged!, merged: true };
    }),
  );
}
