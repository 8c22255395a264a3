// The webhook events of cases (`case.opened`, `case.assigned`, `case.closed`, `case.sla_breached`),
// each written into the outbox inside the database transaction of the change that causes it
// (webhook-outbox.ts), its data the case as the API answers it. Also the SLA sweep: an open or
// in-progress case past its due time is marked breached once (`breached_at_ms`, migrations/
// 025_case_events.sql), with a timeline entry and its event in the same transaction, by whichever
// process marks it first; and what a case opened on purpose (a server's request) is routed by:
// the organization's declared fields and inboxes now.

import type { Case } from '../contract/cases.ts';
import type { WebhookEventType } from '../contract/webhooks.ts';
import type { FieldState } from '../domain/fields.ts';
import type { InboxState } from '../domain/cases.ts';
import type { Queryable } from './db.ts';
import { appendTimeline, CASE_COLUMNS, caseDecisionCounts, joinCases, liveInboxStates, type CaseJoin, type CaseRow } from './cases-store.ts';
import { liveFieldStates } from './fields-store.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { writeOutbox } from './webhook-outbox.ts';
import { isoTime, isoTimeOrNull } from '../domain/iso-time.ts';

export type CaseEventType = Extract<WebhookEventType, `case.${string}`>;

/** A case as the API answers it at `at` (whether it is overdue then): the listing's, the detail's
 *  head, the server's answer and every case event's data. */
export function caseAnswer(c: CaseRow, at: number, decisionCount: number): Case {
  const key = c.entity_kind === 'key' ? c.entity_key.indexOf('=') : -1;
  return {
    id: c.id,
    inbox_id: c.inbox_id,
    entity:
      key < 0 ? { kind: c.entity_kind, id: c.entity_key, field: null } : { kind: 'key', id: c.entity_key.slice(key + 1), field: c.entity_key.slice(0, key) },
    status: c.status,
    resolution: c.resolution,
    assignee: c.assignee,
    priority: c.priority,
    decision_count: decisionCount,
    opened_at: isoTime(c.opened_at_ms),
    due_at: isoTime(c.due_at_ms),
    overdue: c.status !== 'closed' && c.due_at_ms < at,
    snoozed_until: isoTimeOrNull(c.snoozed_until_ms),
    closed_at: isoTimeOrNull(c.closed_at_ms),
    updated_at: isoTime(c.updated_at_ms),
  };
}

/** Writes case events in `into` (the transaction of their change), each case as it is after it,
 *  seen at `at`. No endpoint subscribed: nothing is written. */
export async function announceCases(
  scope: OrganizationScope,
  events: readonly { type: CaseEventType; row: CaseRow }[],
  at: number,
  into: Queryable,
): Promise<void> {
  if (events.length === 0) return;
  const counts = await caseDecisionCounts(scope, [...new Set(events.map((e) => e.row.id))], into);
  await writeOutbox(
    into,
    events.map((e) => ({ organizationId: scope.organizationId, type: e.type, payload: caseAnswer(e.row, at, counts.get(e.row.id) ?? 0) })),
  );
}

/** `case.opened` for the cases `ids` just opened in `into` (joinCases answered them `opened`), and
 *  `case.assigned` for those an inbox's rotation gave a member as they opened (case-rotation.ts). */
export async function announceOpened(scope: OrganizationScope, ids: readonly string[], into: Queryable): Promise<void> {
  if (ids.length === 0) return;
  const rows = await into.query<CaseRow>(`SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND id = ANY($2::text[]) ORDER BY id`, [
    scope.organizationId,
    [...ids],
  ]);
  await announceCases(
    scope,
    [
      ...rows.map((row) => ({ type: 'case.opened' as const, row })),
      ...rows.filter((row) => row.assignee !== null).map((row) => ({ type: 'case.assigned' as const, row })),
    ],
    // As it was when it opened: not overdue yet.
    Math.min(...rows.map((r) => r.opened_at_ms)),
    into,
  );
}

/**
 * A case opened on purpose (a server's request): `join` opens its entity's case in its inbox, or
 * joins the open one, through the decisions' own statement (joinCases: one open case per entity,
 * however many writers), with `case.opened` in the same transaction when it opened. A transaction
 * already in the open case joins nothing again. Returns the case as it is after, and whether this
 * opened it.
 */
export async function openCase(scope: OrganizationScope, join: CaseJoin): Promise<{ row: CaseRow; opened: boolean }> {
  return scope.db.transaction(async (tx) => {
    const [joined] = await joinCases(scope, [join], tx);
    if (joined!.opened) await announceOpened(scope, [joined!.id], tx);
    const [row] = await tx.query<CaseRow>(`SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND id = $2`, [scope.organizationId, joined!.id]);
    return { row: row!, opened: joined!.opened };
  });
}

/** Most cases one sweep of an organization marks (the next sweep takes the rest). */
const BREACH_BATCH = 500;

/**
 * Marks the organization's open and in-progress cases past their due time at `at` as breached,
 * each once: a timeline entry (`sla_breached`, by `system`) and a `case.sla_breached` event, in the
 * transaction that marks it. Cases another transaction holds at this moment (another process's
 * sweep, an analyst's change) are skipped, never waited for: the other sweep marks them, or the
 * next one does. Returns the cases marked.
 */
export async function breachCases(scope: OrganizationScope, at: number): Promise<CaseRow[]> {
  return scope.db.transaction(async (tx) => {
    const rows = await tx.query<CaseRow>(
      `UPDATE cases c SET breached_at_ms = $2
       FROM (SELECT id FROM cases
             WHERE organization_id = $1 AND breached_at_ms IS NULL AND status IN ('open', 'in_progress') AND due_at_ms <= $2
             ORDER BY id LIMIT ${BREACH_BATCH} FOR UPDATE SKIP LOCKED) d
       WHERE c.organization_id = $1 AND c.id = d.id AND c.breached_at_ms IS NULL
       RETURNING ${CASE_COLUMNS.split(', ')
         .map((k) => `c.${k}`)
         .join(', ')}`,
      [scope.organizationId, at],
    );
    rows.sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const r of rows) await appendTimeline(scope, r.id, { at, actor: 'system', kind: 'sla_breached', detail: { due_at: isoTime(r.due_at_ms) } }, tx);
    await announceCases(
      scope,
      rows.map((row) => ({ type: 'case.sla_breached' as const, row })),
      at,
      tx,
    );
    return rows;
  });
}

/** The organizations with a case to mark breached at `at` (any organization's: the sweep then
 *  marks each through its own scope). */
export async function organizationsWithBreaches(db: Queryable, at: number): Promise<string[]> {
  const rows = await db.query<{ organization_id: string }>(
    `SELECT DISTINCT organization_id FROM cases WHERE breached_at_ms IS NULL AND status IN ('open', 'in_progress') AND due_at_ms <= $1 ORDER BY organization_id`,
    [at],
  );
  return rows.map((r) => r.organization_id);
}

/** What routes a case opened on purpose: the fields the organization declares and its inboxes, now. */
export async function caseRouting(scope: OrganizationScope): Promise<{ fields: FieldState[]; inboxes: InboxState[] }> {
  const [fields, inboxes] = await Promise.all([liveFieldStates(scope.db, scope), liveInboxStates(scope.db, scope)]);
  return { fields, inboxes };
}
