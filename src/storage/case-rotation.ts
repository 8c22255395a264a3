// Round-robin assignment of the cases a decision opens (domain/case-rotation.ts), in the group
// commit's database transaction (cases-store.ts joinCases): an inbox with a cap is locked for the
// rest of the transaction (its row, FOR NO KEY UPDATE, in id order, after the cases the commit
// locked in key order), then its members' open cases are counted and each new case given to the
// next member. Two processes opening cases in one inbox at once take turns on that lock, so the
// second counts what the first assigned: nobody goes above the cap. Every assignment is written
// by recordAutoAssignments, the one place an assignment of the rotation happens.

import type { Queryable } from './db.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { nextAssignee, type Rotation } from '../domain/case-rotation.ts';

/** A new case the rotation gave to a member. */
export interface AutoAssignment {
  case_id: string;
  inbox_id: string;
  user_id: string;
  turn: number;
  at: number;
}

/** Gives the cases just opened (`opened`, in the order the commit locked them) in inboxes that
 *  assign by themselves to their members, in the caller's transaction; answers the assignments. */
export async function autoAssignOpened(
  scope: OrganizationScope,
  opened: readonly { case_id: string; inbox_id: string; at: number }[],
  tx: Queryable,
): Promise<AutoAssignment[]> {
  if (opened.length === 0) return [];
  const inboxIds = [...new Set(opened.map((o) => o.inbox_id))].sort();
  const inboxes = await tx.query<{ id: string; members: string[]; auto_assign_cap: number }>(
    `SELECT id, members, auto_assign_cap FROM inboxes
     WHERE organization_id = $1 AND id = ANY($2::text[]) AND auto_assign_cap IS NOT NULL AND cardinality(members) > 0
     ORDER BY id FOR NO KEY UPDATE`,
    [scope.organizationId, inboxIds],
  );
  if (inboxes.length === 0) return [];
  const ids = inboxes.map((i) => i.id);
  const [loads, turns] = await Promise.all([
    tx.query<{ inbox_id: string; assignee: string; n: number }>(
      `SELECT inbox_id, assignee, count(*)::int AS n FROM cases
       WHERE organization_id = $1 AND inbox_id = ANY($2::text[]) AND status IN ('open', 'in_progress') AND assignee IS NOT NULL
       GROUP BY inbox_id, assignee`,
      [scope.organizationId, ids],
    ),
    tx.query<{ inbox_id: string; user_id: string; turn: number }>(
      'SELECT inbox_id, user_id, turn FROM inbox_turns WHERE organization_id = $1 AND inbox_id = ANY($2::text[])',
      [scope.organizationId, ids],
    ),
  ]);
  const rotations = new Map<string, Rotation>();
  for (const i of inboxes) rotations.set(i.id, { members: i.members, cap: i.auto_assign_cap, load: new Map(), turns: new Map(), lastTurn: 0 });
  for (const l of loads) rotations.get(l.inbox_id)!.load.set(l.assignee, l.n);
  for (const t of turns) {
    const r = rotations.get(t.inbox_id)!;
    r.turns.set(t.user_id, Number(t.turn));
    r.lastTurn = Math.max(r.lastTurn, Number(t.turn));
  }
  const assignments: AutoAssignment[] = [];
  for (const o of opened) {
    const r = rotations.get(o.inbox_id);
    const user = r && nextAssignee(r);
    if (user !== undefined) assignments.push({ case_id: o.case_id, inbox_id: o.inbox_id, user_id: user, turn: r!.lastTurn, at: o.at });
  }
  await recordAutoAssignments(scope, assignments, tx);
  return assignments;
}

/** Writes the rotation's assignments: each case's assignee, the member's turn, and an `assigned`
 *  entry (by `system`, `auto: true`) on each case's timeline. The one place the rotation assigns;
 *  its `case.assigned` events go with the cases' `case.opened` (case-events.ts announceOpened). */
export async function recordAutoAssignments(scope: OrganizationScope, assignments: readonly AutoAssignment[], tx: Queryable): Promise<void> {
  if (assignments.length === 0) return;
  await tx.query(
    `WITH a AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[]) WITH ORDINALITY AS a(case_id, inbox_id, user_id, turn, at_ms, k)),
          upd AS (UPDATE cases c SET assignee = a.user_id FROM a WHERE c.organization_id = $1 AND c.id = a.case_id AND c.assignee IS NULL RETURNING c.id),
          turned AS (INSERT INTO inbox_turns (organization_id, inbox_id, user_id, turn)
                     SELECT DISTINCT ON (inbox_id, user_id) $1, inbox_id, user_id, turn FROM a ORDER BY inbox_id, user_id, turn DESC
                     ON CONFLICT (inbox_id, user_id) DO UPDATE SET turn = EXCLUDED.turn)
     INSERT INTO case_timeline (case_id, organization_id, n, at_ms, actor, kind, detail, prev_hash, hash)
     SELECT a.case_id, $1, 0, a.at_ms, 'system', 'assigned', json_build_object('from', NULL, 'to', a.user_id, 'auto', true)::text, '', ''
     FROM a JOIN upd ON upd.id = a.case_id ORDER BY a.k`,
    [
      scope.organizationId,
      assignments.map((a) => a.case_id),
      assignments.map((a) => a.inbox_id),
      assignments.map((a) => a.user_id),
      assignments.map((a) => a.turn),
      assignments.map((a) => Math.round(a.at)),
    ],
  );
}
