// Inboxes as their owners manage them (migrations/023_cases.sql, 026_inboxes_attachments.sql):
// one inbox, a change of it, its deletion and its managers' figures, bound to the organization by
// its scope (organization-data.ts). A change or a deletion renews the row's feed position (xid,
// seq) as a rule's does, so every process routes with the new settings (live-feed.ts), is audited
// in policy_audit (subject `inbox`) and answers its transaction id (LiveTail.reach). Changes lock
// the organization's row as making an inbox does, so routing positions are renumbered by one
// writer at a time. A deletion locks the inbox's row FOR UPDATE: a case being opened in it holds
// a key-share lock on that row (its foreign key) until its transaction ends, so the count of its
// open cases taken after the lock misses none.

import { feedXid } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { INBOX_COLUMNS, type InboxRow } from './cases-store.ts';
import { auditOf, lockLists, writeAudit, type AuditRow, type ListsGone } from './rules-store.ts';

/** What a change sets; absent: unchanged. `position`: the inbox's place in routing order (0 first). */
export interface InboxChange {
  name?: string | undefined;
  members?: string[] | undefined;
  route?: string | null | undefined;
  /** The lists the route names, by id (given with `route`). */
  route_list_ids?: string[] | undefined;
  on_block?: boolean | undefined;
  sla_hours?: number | undefined;
  escalation_id?: string | null | undefined;
  auto_assign_cap?: number | null | undefined;
  position?: number | undefined;
}

const COLUMNS: readonly (keyof InboxChange)[] = ['name', 'members', 'route', 'route_list_ids', 'on_block', 'sla_hours', 'escalation_id', 'auto_assign_cap'];

/** One inbox of the organization (not deleted), or undefined. */
export async function getInbox(scope: OrganizationScope, id: string): Promise<InboxRow | undefined> {
  const [row] = await scope.db.query<InboxRow>(`SELECT ${INBOX_COLUMNS} FROM inboxes WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL`, [
    scope.organizationId,
    id,
  ]);
  return row;
}

/** Changes an inbox: undefined when there is none, `taken` when another inbox has the name,
 *  `no_escalation` when the escalation inbox named is not another of the organization's. */
export async function changeInbox(
  scope: OrganizationScope,
  id: string,
  c: InboxChange,
  at: number,
  by: string,
): Promise<{ inbox: InboxRow; xid: number } | 'taken' | 'no_escalation' | ListsGone | undefined> {
  return scope.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [scope.organizationId]);
    const listsGone = await lockLists(tx, scope, c.route_list_ids ?? []);
    if (listsGone.length) return { listsGone };
    const [inbox] = await tx.query<{ id: string }>('SELECT id FROM inboxes WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL FOR UPDATE', [
      scope.organizationId,
      id,
    ]);
    if (!inbox) return undefined;
    if (c.name !== undefined) {
      const [taken] = await tx.query('SELECT 1 FROM inboxes WHERE organization_id = $1 AND name = $2 AND id <> $3 AND deleted_at_ms IS NULL', [
        scope.organizationId,
        c.name,
        id,
      ]);
      if (taken) return 'taken' as const;
    }
    if (c.escalation_id !== undefined && c.escalation_id !== null) {
      const [target] = await tx.query('SELECT 1 FROM inboxes WHERE organization_id = $1 AND id = $2 AND id <> $3 AND deleted_at_ms IS NULL FOR KEY SHARE', [
        scope.organizationId,
        c.escalation_id,
        id,
      ]);
      if (!target) return 'no_escalation' as const;
    }
    const xid = await feedXid(tx);
    const params: unknown[] = [scope.organizationId, id];
    const sets = COLUMNS.filter((k) => c[k] !== undefined).map((k) => {
      params.push(c[k]);
      return `${k} = $${params.length}${k === 'members' || k === 'route_list_ids' ? '::text[]' : ''}`;
    });
    await tx.query(
      `UPDATE inboxes SET ${[...sets, "seq = nextval('transactions_seq_seq')", 'xid = pg_current_xact_id()'].join(', ')} WHERE organization_id = $1 AND id = $2`,
      params,
    );
    if (c.position !== undefined) {
      // The inbox moves to its place; the others keep their order around it. Each inbox whose place
      // changes is written again, so the feed carries its new position too.
      const order = (
        await tx.query<{ id: string; position: number }>(
          'SELECT id, position FROM inboxes WHERE organization_id = $1 AND deleted_at_ms IS NULL ORDER BY position, id',
          [scope.organizationId],
        )
      ).filter((r) => r.id !== id);
      order.splice(Math.min(c.position, order.length), 0, { id, position: -1 });
      const moved = order.flatMap((r, i) => (r.position === i ? [] : [{ id: r.id, position: i }]));
      if (moved.length)
        await tx.query(
          `UPDATE inboxes x SET position = m.position, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
           FROM unnest($2::text[], $3::int[]) AS m(id, position) WHERE x.organization_id = $1 AND x.id = m.id`,
          [scope.organizationId, moved.map((m) => m.id), moved.map((m) => m.position)],
        );
    }
    await writeAudit(tx, scope, 'inbox', { at, by, id, action: 'changed', detail: c });
    const [row] = await tx.query<InboxRow>(`SELECT ${INBOX_COLUMNS} FROM inboxes WHERE organization_id = $1 AND id = $2`, [scope.organizationId, id]);
    return { inbox: row!, xid };
  });
}

/** Deletes an inbox (kept for its cases' record, routed to no more): undefined when there is none;
 *  refused, changing nothing, while it has cases not closed or another inbox escalates to it. */
export async function deleteInbox(
  scope: OrganizationScope,
  id: string,
  at: number,
  by: string,
): Promise<{ xid: number } | { openCases: number } | { escalatedFrom: string[] } | undefined> {
  return scope.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [scope.organizationId]);
    const [inbox] = await tx.query('SELECT 1 FROM inboxes WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL FOR UPDATE', [
      scope.organizationId,
      id,
    ]);
    if (!inbox) return undefined;
    const [{ n }] = (await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM cases WHERE organization_id = $1 AND inbox_id = $2 AND status <> 'closed'`, [
      scope.organizationId,
      id,
    ])) as [{ n: number }];
    if (n > 0) return { openCases: n };
    const from = await tx.query<{ name: string }>(
      'SELECT name FROM inboxes WHERE organization_id = $1 AND escalation_id = $2 AND deleted_at_ms IS NULL ORDER BY position, id',
      [scope.organizationId, id],
    );
    if (from.length) return { escalatedFrom: from.map((f) => f.name) };
    const xid = await feedXid(tx);
    await tx.query(
      `UPDATE inboxes SET deleted_at_ms = $3, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id() WHERE organization_id = $1 AND id = $2`,
      [scope.organizationId, id, at],
    );
    await writeAudit(tx, scope, 'inbox', { at, by, id, action: 'deleted', detail: null });
    return { xid };
  });
}

/** An inbox's changes as the audit recorded them. */
export function inboxAudit(scope: OrganizationScope, id: string): Promise<AuditRow[]> {
  return auditOf(scope, 'inbox', id);
}

/** A manager's figures of an inbox at `at`. */
export interface InboxStats {
  open: number;
  in_progress: number;
  snoozed: number;
  overdue: number;
  closed_7d: number;
  closed_30d: number;
  /** Over the cases closed in the last 30 days (merged ones left out); null when none was. */
  median_close_ms: number | null;
  analysts: { user_id: string; open: number; snoozed: number; closed_30d: number }[];
}

const DAY_MS = 86_400_000;

/**
 * An inbox's figures: its cases not closed by status and overdue, those closed in the last 7 and
 * 30 days and the median time they took, and per assignee. Two statements over two index ranges
 * (cases_org_inbox_idx for the cases not closed, cases_org_inbox_closed_idx for those closed in the
 * last 30 days), however many cases the inbox closed before. A case closed by merging it into
 * another (an escalation) was not worked: it is not counted closed.
 */
export async function inboxStats(scope: OrganizationScope, id: string, at: number): Promise<InboxStats> {
  const recent = `(SELECT status, assignee, due_at_ms, closed_at_ms, opened_at_ms FROM cases
                    WHERE organization_id = $1 AND inbox_id = $2 AND status IN ('open', 'in_progress', 'snoozed')
                   UNION ALL
                   SELECT status, assignee, due_at_ms, closed_at_ms, opened_at_ms FROM cases
                    WHERE organization_id = $1 AND inbox_id = $2 AND status = 'closed' AND closed_at_ms >= $3 AND merged_into IS NULL) AS c`;
  const params = [scope.organizationId, id, at - 30 * DAY_MS, at - 7 * DAY_MS, at];
  const [totals, analysts] = await Promise.all([
    scope.db.query<Omit<InboxStats, 'analysts'>>(
      `SELECT count(*) FILTER (WHERE status = 'open')::int AS open, count(*) FILTER (WHERE status = 'in_progress')::int AS in_progress,
              count(*) FILTER (WHERE status = 'snoozed')::int AS snoozed, count(*) FILTER (WHERE status <> 'closed' AND due_at_ms < $5)::int AS overdue,
              count(*) FILTER (WHERE status = 'closed' AND closed_at_ms >= $4)::int AS closed_7d, count(*) FILTER (WHERE status = 'closed')::int AS closed_30d,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY closed_at_ms - opened_at_ms) FILTER (WHERE status = 'closed') AS median_close_ms
       FROM ${recent}`,
      params,
    ),
    scope.db.query<{ user_id: string; open: number; snoozed: number; closed_30d: number }>(
      `SELECT assignee AS user_id, count(*) FILTER (WHERE status IN ('open', 'in_progress'))::int AS open,
              count(*) FILTER (WHERE status = 'snoozed')::int AS snoozed, count(*) FILTER (WHERE status = 'closed')::int AS closed_30d
       FROM ${recent} WHERE assignee IS NOT NULL GROUP BY assignee ORDER BY assignee`,
      params.slice(0, 3),
    ),
  ]);
  const t = totals[0]!;
  return { ...t, median_close_ms: t.median_close_ms === null ? null : Number(t.median_close_ms), analysts };
}
