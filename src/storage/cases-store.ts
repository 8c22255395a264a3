// An organization's inboxes and cases (migrations/023_cases.sql), bound to the organization by its
// scope (organization-data.ts). Decisions join the open case of their entity in an inbox, or open
// it: one upsert on the open-case index, so two writers joining the same entity at once (two
// processes recording its decisions) meet on one row and one case. Every change of a case is an
// entry of its timeline, which the database numbers and hash-chains (domain/cases.ts).

import { randomBytes } from 'node:crypto';
import type { Queryable } from './db.ts';
import { feedXid, INBOX_STATE_JSON, parseInboxState } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { autoAssignOpened } from './case-rotation.ts';
import { lockLists, writeAudit, type ListsGone } from './rules-store.ts';
import { CASE_STATUSES, type CaseJoin, type CaseResolution, type CaseStatus, type InboxState } from '../domain/cases.ts';
import type { TimelineEntry } from '../domain/case-timeline.ts';

export type { CaseJoin } from '../domain/cases.ts';

export interface InboxRow {
  id: string;
  name: string;
  group_by: string;
  route: string | null;
  /** The lists the route names (`in_list`), by id. */
  route_list_ids: string[];
  position: number;
  on_block: boolean;
  sla_hours: number;
  members: string[];
  escalation_id: string | null;
  auto_assign_cap: number | null;
  created_at_ms: number;
  created_by: string;
}

export const INBOX_COLUMNS =
  'id, name, group_by, route, route_list_ids, position, on_block, sla_hours, members, escalation_id, auto_assign_cap, created_at_ms, created_by';

export interface CaseRow {
  id: string;
  inbox_id: string;
  entity_kind: 'customer' | 'merchant' | 'key';
  entity_key: string;
  status: CaseStatus;
  resolution: CaseResolution | null;
  assignee: string | null;
  priority: number;
  opened_at_ms: number;
  due_at_ms: number;
  snoozed_until_ms: number | null;
  closed_at_ms: number | null;
  updated_at_ms: number;
}

export const CASE_COLUMNS =
  'id, inbox_id, entity_kind, entity_key, status, resolution, assignee, priority, opened_at_ms, due_at_ms, snoozed_until_ms, closed_at_ms, updated_at_ms';

/** An id of the service's own for a new row, as the other stores make them. */
const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url')}`;

/** Creates an inbox, last among those of the organization. */
export async function createInbox(
  scope: OrganizationScope,
  i: Omit<InboxRow, 'id' | 'position'>,
): Promise<{ inbox: InboxRow; xid: number } | { taken: true } | ListsGone> {
  return scope.db.transaction(async (tx) => {
    await tx.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [scope.organizationId]);
    const listsGone = await lockLists(tx, scope, i.route_list_ids);
    if (listsGone.length) return { listsGone };
    const [taken] = await tx.query('SELECT 1 FROM inboxes WHERE organization_id = $1 AND name = $2 AND deleted_at_ms IS NULL', [scope.organizationId, i.name]);
    if (taken) return { taken: true as const };
    const [inbox] = await tx.query<InboxRow>(
      `INSERT INTO inboxes (id, organization_id, name, group_by, route, route_list_ids, position, on_block, sla_hours, members, escalation_id, auto_assign_cap, created_at_ms, created_by)
       SELECT $1, $2, $3, $4, $5, $13::text[], coalesce(max(position) + 1, 0), $6, $7, $8, $9, $10, $11, $12 FROM inboxes WHERE organization_id = $2
       RETURNING ${INBOX_COLUMNS}`,
      [
        newId('inbox'),
        scope.organizationId,
        i.name,
        i.group_by,
        i.route,
        i.on_block,
        i.sla_hours,
        i.members,
        i.escalation_id,
        i.auto_assign_cap,
        i.created_at_ms,
        i.created_by,
        i.route_list_ids,
      ],
    );
    const { created_at_ms: at, created_by: by, ...settings } = i;
    await writeAudit(tx, scope, 'inbox', { at, by, id: inbox!.id, action: 'created', detail: settings });
    return { inbox: inbox!, xid: await feedXid(tx) };
  });
}

/** The organization's inboxes in routing order. */
export function listInboxes(scope: OrganizationScope): Promise<InboxRow[]> {
  return scope.db.query<InboxRow>(`SELECT ${INBOX_COLUMNS} FROM inboxes WHERE organization_id = $1 AND deleted_at_ms IS NULL ORDER BY position, id`, [
    scope.organizationId,
  ]);
}

/** Decisions to file under their entities' open cases, each with its organization. */
export interface OrganizationJoin {
  organizationId: string;
  join: CaseJoin;
}

/** A joined decision as the join's statement answers it: the case, and whether this opened it. */
export interface JoinedDecision {
  id: string;
  opened: boolean;
  transaction_id: string;
  organization_id: string;
}

/**
 * The statement's part that files decisions under their entities' open cases, as CTEs named `j`,
 * `e`, `up`, `filed` and `told` (one definition, used alone by joinCases and inside the decision
 * log's insert by recorded-group.ts): the open case's row is upserted on the open-case index (its
 * priority the highest of its decisions'), each decision filed under it once, and the timeline told.
 * `joins` are sorted here in key order, so two writers lock the cases they share in the same order;
 * their columns are appended to `params`. `only`, when given, is a relation of
 * (organization_id, transaction_id) the decisions must be in (the rows the insert stored).
 * `JOINED` reads what they did.
 */
export function joinCtes(joins: readonly OrganizationJoin[], params: unknown[], only?: string): string {
  const sorted = [...joins].sort((a, b) => byCaseKey(a.join, b.join));
  const first = params.length + 1;
  params.push(
    sorted.map((x) => x.organizationId),
    ...(['inbox_id', 'entity_kind', 'entity_key', 'transaction_id', 'priority', 'at', 'due', 'actor', 'reason'] as const).map((k) =>
      sorted.map((x) => x.join[k]),
    ),
    sorted.map(() => newId('case')),
  );
  const p = (k: number, type: string) => `$${first + k}::${type}[]`;
  return `j AS (SELECT DISTINCT ON (organization_id, inbox_id, entity_kind, entity_key, transaction_id) j.*
                FROM unnest(${p(0, 'text')}, ${p(1, 'text')}, ${p(2, 'text')}, ${p(3, 'text')}, ${p(4, 'text')}, ${p(5, 'float8')}, ${p(6, 'float8')}, ${p(7, 'float8')}, ${p(8, 'text')}, ${p(9, 'text')}, ${p(10, 'text')})
                     WITH ORDINALITY AS j(organization_id, inbox_id, entity_kind, entity_key, transaction_id, priority, at, due, actor, reason, id, k)
                ${only ? `WHERE EXISTS (SELECT 1 FROM ${only} o WHERE o.organization_id = j.organization_id AND o.transaction_id = j.transaction_id)` : ''}
                ORDER BY organization_id, inbox_id, entity_kind, entity_key, transaction_id, k),
          -- An inbox deleted since the writer's process routed to it (the feed's lag) opens nothing.
          e AS (SELECT DISTINCT ON (organization_id, inbox_id, entity_kind, entity_key) organization_id, inbox_id, entity_kind, entity_key, id, at, due,
                       max(priority) OVER (PARTITION BY organization_id, inbox_id, entity_kind, entity_key) AS priority
                FROM j
                WHERE EXISTS (SELECT 1 FROM inboxes i WHERE i.id = j.inbox_id AND i.organization_id = j.organization_id AND i.deleted_at_ms IS NULL)
                ORDER BY organization_id, inbox_id, entity_kind, entity_key, k),
          up AS (INSERT INTO cases AS c (id, organization_id, inbox_id, entity_kind, entity_key, status, priority, opened_at_ms, due_at_ms, updated_at_ms)
                 SELECT id, organization_id, inbox_id, entity_kind, entity_key, 'open', priority, at, due, at FROM e
                 ORDER BY inbox_id, entity_kind, entity_key
                 ON CONFLICT (organization_id, inbox_id, entity_kind, entity_key) WHERE status <> 'closed'
                 DO UPDATE SET priority = greatest(c.priority, EXCLUDED.priority), updated_at_ms = greatest(c.updated_at_ms, EXCLUDED.updated_at_ms)
                 RETURNING c.id, c.organization_id, c.inbox_id, c.entity_kind, c.entity_key, (xmax = 0) AS opened),
          filed AS (INSERT INTO case_decisions (case_id, organization_id, transaction_id, joined_at_ms)
                    SELECT up.id, up.organization_id, j.transaction_id, j.at FROM j JOIN up USING (organization_id, inbox_id, entity_kind, entity_key)
                    ON CONFLICT DO NOTHING RETURNING case_id, transaction_id, joined_at_ms),
          told AS (INSERT INTO case_timeline (case_id, organization_id, n, at_ms, actor, kind, detail, prev_hash, hash)
                   SELECT up.id, up.organization_id, 0, t.at_ms, t.actor, t.kind, t.detail, '', '' FROM up
                   CROSS JOIN LATERAL (
                     SELECT 0 AS o, j.at::bigint AS at_ms, j.actor, 'opened' AS kind, json_build_object('entity_kind', up.entity_kind, 'entity_key', up.entity_key, 'inbox_id', up.inbox_id)::text AS detail
                     FROM j WHERE up.opened AND j.id = (SELECT e.id FROM e WHERE (e.organization_id, e.inbox_id, e.entity_kind, e.entity_key) = (up.organization_id, up.inbox_id, up.entity_kind, up.entity_key))
                     UNION ALL
                     SELECT j.k, j.at::bigint, j.actor, 'decision_joined', json_build_object('transaction_id', j.transaction_id, 'reason', j.reason)::text
                     FROM j JOIN filed f ON f.case_id = up.id AND f.transaction_id = j.transaction_id
                     WHERE (j.organization_id, j.inbox_id, j.entity_kind, j.entity_key) = (up.organization_id, up.inbox_id, up.entity_kind, up.entity_key)) AS t
                   ORDER BY up.id, t.o)`;
}

/** What joinCtes' statement did: each decision filed, with its case and whether this opened it. */
export const JOINED = 'SELECT up.id, up.opened, j.transaction_id, j.organization_id FROM up JOIN j USING (organization_id, inbox_id, entity_kind, entity_key)';

/**
 * Each decision joins its entity's open case in its inbox, or opens it, in one statement (so it can
 * ride a transaction of the caller's, `into`), and the cases this opened in inboxes that assign by
 * themselves go to their members (case-rotation.ts). Returns each case touched, and whether this
 * opened it.
 */
export async function joinCases(scope: OrganizationScope, joins: readonly CaseJoin[], into?: Queryable): Promise<JoinedDecision[]> {
  if (joins.length === 0) return [];
  // Opening and assigning are one transaction: the rotation's lock must cover both.
  if (!into) return scope.db.transaction((tx) => joinCases(scope, joins, tx));
  const params: unknown[] = [];
  const rows = await into.query<JoinedDecision>(
    `WITH ${joinCtes(
      joins.map((join) => ({ organizationId: scope.organizationId, join })),
      params,
    )} ${JOINED}`,
    params,
  );
  // Cases this opened in inboxes that assign by themselves go to their members (case-rotation.ts).
  await autoAssignOpened(scope, openedCases(joins, rows), into);
  return rows;
}

/** The cases a join opened, each once, in the key order the join locked them, with its inbox and
 *  when it opened. */
function openedCases(joins: readonly CaseJoin[], rows: readonly JoinedDecision[]) {
  const sorted = [...joins].sort(byCaseKey);
  const byTransaction = new Map(rows.filter((r) => r.opened).map((r) => [r.transaction_id, r.id]));
  const seen = new Set<string>();
  const out: { case_id: string; inbox_id: string; at: number }[] = [];
  for (const j of sorted) {
    const id = byTransaction.get(j.transaction_id);
    if (id === undefined || seen.has(id)) continue;
    seen.add(id);
    out.push({ case_id: id, inbox_id: j.inbox_id, at: j.at });
  }
  return out;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** The order joins lock their cases in: by inbox, then entity. */
const byCaseKey = (a: CaseJoin, b: CaseJoin): number => cmp(a.inbox_id, b.inbox_id) || cmp(a.entity_kind, b.entity_kind) || cmp(a.entity_key, b.entity_key);

/** One case of the organization, or undefined. */
export async function getCase(scope: OrganizationScope, id: string): Promise<CaseRow | undefined> {
  const [row] = await scope.db.query<CaseRow>(`SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND id = $2`, [scope.organizationId, id]);
  return row;
}

/** The transaction ids of a case's decisions, in the order they joined. */
export async function caseDecisionIds(scope: OrganizationScope, id: string): Promise<string[]> {
  const rows = await scope.db.query<{ transaction_id: string }>(
    'SELECT transaction_id FROM case_decisions WHERE organization_id = $1 AND case_id = $2 ORDER BY joined_at_ms, transaction_id',
    [scope.organizationId, id],
  );
  return rows.map((r) => r.transaction_id);
}

/** How many decisions each of `ids` groups (a case listed says it without reading them). */
export async function caseDecisionCounts(scope: OrganizationScope, ids: readonly string[], into?: Queryable): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await (into ?? scope.db).query<{ case_id: string; n: number | string }>(
    'SELECT case_id, count(*) AS n FROM case_decisions WHERE organization_id = $1 AND case_id = ANY($2::text[]) GROUP BY case_id',
    [scope.organizationId, [...ids]],
  );
  return new Map(rows.map((r) => [r.case_id, Number(r.n)]));
}

/** A case's timeline, in order. */
export async function caseTimeline(scope: OrganizationScope, id: string): Promise<TimelineEntry[]> {
  const rows = await scope.db.query<TimelineEntry & { at_ms: number | string }>(
    'SELECT n, at_ms, actor, kind, detail, prev_hash, hash FROM case_timeline WHERE organization_id = $1 AND case_id = $2 ORDER BY n',
    [scope.organizationId, id],
  );
  return rows.map((r) => ({ ...r, at_ms: Number(r.at_ms) }));
}

/** Appends an entry to a case's timeline (in the caller's transaction, `into`, when given). */
export async function appendTimeline(
  scope: OrganizationScope,
  id: string,
  e: { at: number; actor: string; kind: string; detail: unknown },
  into?: Queryable,
): Promise<void> {
  await (into ?? scope.db).query(
    `INSERT INTO case_timeline (case_id, organization_id, n, at_ms, actor, kind, detail, prev_hash, hash)
     SELECT id, organization_id, 0, $3, $4, $5, $6, '', '' FROM cases WHERE organization_id = $1 AND id = $2`,
    [scope.organizationId, id, Math.round(e.at), e.actor, e.kind, JSON.stringify(e.detail ?? null)],
  );
}

/** The inboxes of the organization now, as a process holds them (a history's load reads them with
 *  its rules). */
export async function liveInboxStates(tx: Queryable, scope: OrganizationScope): Promise<InboxState[]> {
  const rows = await tx.query<{ state: string }>(
    `SELECT ${INBOX_STATE_JSON('x')} AS state FROM inboxes x WHERE x.organization_id = $1 AND x.deleted_at_ms IS NULL`,
    [scope.organizationId],
  );
  return rows.map((r) => parseInboxState(r.state));
}

/** Which of `userIds` are members of the organization. */
export async function membersAmong(scope: OrganizationScope, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await scope.db.query<{ user_id: string }>('SELECT user_id FROM memberships WHERE organization_id = $1 AND user_id = ANY($2::text[])', [
    scope.organizationId,
    [...userIds],
  ]);
  return new Set(rows.map((r) => r.user_id));
}

export interface CaseFilters {
  status?: CaseStatus | undefined;
  inbox_id?: string | undefined;
  assignee?: string | undefined;
  /** Only cases due before this time and not closed (epoch ms). */
  overdueAt?: number | undefined;
}

/** A page of the organization's cases, the soonest due first (then the most urgent), after the case
 *  `after` when given; `limit + 1` rows are read to tell whether there are more. Undefined when
 *  `after` is not one of the organization's cases. One ordered branch per status shown, merged:
 *  each branch reads its page straight from an index that leads with the status (migration 024),
 *  so no filter sorts the organization's cases. */
export async function listCases(
  scope: OrganizationScope,
  f: CaseFilters,
  limit: number,
  after?: string,
): Promise<{ rows: CaseRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.organizationId];
  const where = ['organization_id = $1'];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (f.inbox_id !== undefined) add((p) => `inbox_id = ${p}`, f.inbox_id);
  if (f.assignee !== undefined) add((p) => `assignee = ${p}`, f.assignee);
  if (f.overdueAt !== undefined) add((p) => `due_at_ms < ${p}`, f.overdueAt);
  if (after !== undefined) {
    const [cursor] = await scope.db.query<{ due_at_ms: number; priority: number }>(
      'SELECT due_at_ms, priority FROM cases WHERE organization_id = $1 AND id = $2',
      [scope.organizationId, after],
    );
    if (!cursor) return undefined;
    params.push(cursor.due_at_ms, -cursor.priority, after);
    const n = params.length;
    where.push(`(due_at_ms, -priority, id) > ($${n - 2}, $${n - 1}, $${n})`);
  }
  // Overdue: every status but closed.
  const statuses: readonly CaseStatus[] =
    f.status !== undefined
      ? f.overdueAt !== undefined && f.status === 'closed'
        ? []
        : [f.status]
      : CASE_STATUSES.filter((s) => f.overdueAt === undefined || s !== 'closed');
  if (statuses.length === 0) return { rows: [], hasMore: false };
  params.push(limit + 1);
  const n = `$${params.length}`;
  const branch = (status: number) => {
    params.push(statuses[status]);
    return `(SELECT ${CASE_COLUMNS} FROM cases WHERE ${where.join(' AND ')} AND status = $${params.length} ORDER BY due_at_ms, -priority, id LIMIT ${n})`;
  };
  const branches = statuses.map((_, i) => branch(i));
  const sql = branches.length === 1 ? branches[0]! : `SELECT * FROM (${branches.join(' UNION ALL ')}) AS c ORDER BY due_at_ms, -priority, id LIMIT ${n}`;
  const rows = await scope.db.query<CaseRow>(sql, params);
  const hasMore = rows.length > limit;
  return { rows: hasMore ? rows.slice(0, limit) : rows, hasMore };
}

/** A change of a case, decided on the case as it is now (`decide`, under the case's row lock): the
 *  columns to set and the timeline entry telling it, or a reason the change cannot be made. */
export type CaseChange<R> =
  | {
      set: Partial<Pick<CaseRow, 'status' | 'resolution' | 'assignee' | 'snoozed_until_ms' | 'closed_at_ms'>>;
      entry: { kind: string; detail: unknown };
      result?: R;
    }
  | { refuse: R };

/** Changes one case of the organization as `decide` says, in one transaction under the case's row
 *  lock, with its timeline entry (at `at`, by `actor`); undefined when there is no such case.
 *  `after` runs in that transaction with the case as changed (its webhook event rides the change). */
export async function changeCase<R>(
  scope: OrganizationScope,
  id: string,
  at: number,
  actor: string,
  decide: (c: CaseRow, tx: Queryable) => Promise<CaseChange<R>> | CaseChange<R>,
  after?: (changed: CaseRow, before: CaseRow, tx: Queryable) => Promise<void>,
): Promise<{ case: CaseRow; result?: R } | { refused: R } | undefined> {
  return scope.db.transaction(async (tx) => {
    const [row] = await tx.query<CaseRow>(`SELECT ${CASE_COLUMNS} FROM cases WHERE organization_id = $1 AND id = $2 FOR UPDATE`, [scope.organizationId, id]);
    if (!row) return undefined;
    const change = await decide(row, tx);
    if ('refuse' in change) return { refused: change.refuse };
    const sets = Object.entries(change.set);
    const params: unknown[] = [scope.organizationId, id, at];
    const assignments = sets.map(([k, v]) => {
      params.push(v);
      return `${k} = $${params.length}`;
    });
    const [updated] = await tx.query<CaseRow>(
      `UPDATE cases SET ${[...assignments, 'updated_at_ms = greatest(updated_at_ms, $3)'].join(', ')} WHERE organization_id = $1 AND id = $2 RETURNING ${CASE_COLUMNS}`,
      params,
    );
    await appendTimeline(scope, id, { at, actor, kind: change.entry.kind, detail: change.entry.detail }, tx);
    if (after) await after(updated!, row, tx);
    return { case: updated!, ...(change.result === undefined ? {} : { result: change.result }) };
  });
}

/** Wakes the organization's snoozed cases whose time has come (`at`): open again, each told so. */
export async function wakeCases(scope: OrganizationScope, at: number): Promise<number> {
  const rows = await scope.db.query<{ id: string }>(
    `WITH woken AS (UPDATE cases SET status = 'open', snoozed_until_ms = NULL, updated_at_ms = greatest(updated_at_ms, $2)
                    WHERE organization_id = $1 AND status = 'snoozed' AND snoozed_until_ms <= $2 RETURNING id, organization_id),
          told AS (INSERT INTO case_timeline (case_id, organization_id, n, at_ms, actor, kind, detail, prev_hash, hash)
                   SELECT id, organization_id, 0, $2::bigint, 'system', 'woke', '{}', '', '' FROM woken)
     SELECT id FROM woken`,
    [scope.organizationId, Math.round(at)],
  );
  return rows.length;
}

/** The next case for `userId` (not closed, not snoozed, assigned to them or to nobody in an inbox
 *  they work or that names nobody), the soonest due first, then the most urgent; claimed for them
 *  if it was nobody's. Skips cases another caller is claiming at this moment. */
export async function nextCase(
  scope: OrganizationScope,
  userId: string,
  at: number,
  /** Runs in the claim's transaction with the case claimed (not for a case that was theirs already). */
  onClaim?: (c: CaseRow, tx: Queryable) => Promise<void>,
): Promise<CaseRow | undefined> {
  return scope.db.transaction(async (tx) => {
    const [row] = await tx.query<CaseRow>(
      `SELECT ${CASE_COLUMNS.split(', ')
        .map((c) => `c.${c}`)
        .join(', ')} FROM cases c JOIN inboxes i ON i.id = c.inbox_id
       WHERE c.organization_id = $1 AND c.status IN ('open', 'in_progress')
         AND (c.assignee = $2 OR (c.assignee IS NULL AND ($2 = ANY(i.members) OR cardinality(i.members) = 0)))
       ORDER BY (c.assignee = $2) DESC NULLS LAST, c.due_at_ms, -c.priority, c.id
       LIMIT 1 FOR UPDATE OF c SKIP LOCKED`,
      [scope.organizationId, userId],
    );
    if (!row) return undefined;
    if (row.assignee === userId) return row;
    const [claimed] = await tx.query<CaseRow>(
      `UPDATE cases SET assignee = $3, updated_at_ms = greatest(updated_at_ms, $4) WHERE organization_id = $1 AND id = $2 RETURNING ${CASE_COLUMNS}`,
      [scope.organizationId, row.id, userId, at],
    );
    await appendTimeline(scope, row.id, { at, actor: userId, kind: 'assigned', detail: { from: null, to: userId, claimed: true } }, tx);
    if (onClaim) await onClaim(claimed!, tx);
    return claimed;
  });
}

/** The members of a case's inbox (none: any member of the organization may work it). */
export async function inboxMembers(scope: OrganizationScope, inboxId: string): Promise<string[] | undefined> {
  const [row] = await scope.db.query<{ members: string[] }>('SELECT members FROM inboxes WHERE organization_id = $1 AND id = $2', [
    scope.organizationId,
    inboxId,
  ]);
  return row?.members;
}
