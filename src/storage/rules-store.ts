// An organization's rules and their versions (migrations/013_rules_and_lists.sql), bound to the
// organization by its scope (organization-data.ts). A version, once saved, never changes; the rule
// row says which is newest, which one scoring evaluates (`live_version`) and how (`status`). Every
// change is audited (policy_audit), renews the rule row's feed position so every process reads its
// new state (live-feed.ts), and answers its database transaction id (LiveTail.reach). A save locks
// the lists its versions name, so a list cannot be deleted under a rule being saved.

import type { Queryable } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { feedXid } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { writeOutbox } from './webhook-outbox.ts';
import type { RuleAction } from '../domain/rules/expression.ts';
import { LIVE_VERSION, parseRuleState, RULE_STATE_JSON, type RuleState, type RuleStatus } from './rule-state.ts';

/** A rule with its newest version's text, and its matches and errors since a time. */
export interface RuleRow {
  id: string;
  name: string;
  status: RuleStatus;
  version: number;
  live_version: number | null;
  expression: string;
  action: RuleAction;
  description: string | null;
  created_at_ms: number;
  created_by: string;
  updated_at_ms: number;
  updated_by: string;
  matches: number;
  errors: number;
}

export interface VersionRow {
  version: number;
  expression: string;
  action: RuleAction;
  description: string | null;
  list_ids: string[];
  created_at_ms: number;
  created_by: string;
}

/** A new version's content. */
export interface VersionInput {
  expression: string;
  action: RuleAction;
  description: string | null;
  listIds: readonly string[];
}

const ROW = `r.id, r.name, r.status, r.version, r.live_version, v.expression, v.action, v.description, r.created_at_ms, r.created_by, r.updated_at_ms, r.updated_by`;

/** Records a change of a rule, a list or a field in the organization's policy audit, in the
 *  writing transaction. */
export async function writeAudit(
  tx: Queryable,
  scope: OrganizationScope,
  subject: 'rule' | 'list' | 'field' | 'inbox',
  e: { at: number; by: string; id: string; action: string; detail: unknown },
): Promise<void> {
  await tx.query(`INSERT INTO policy_audit (organization_id, at_ms, by, subject, subject_id, action, detail) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
    scope.organizationId,
    e.at,
    e.by,
    subject,
    e.id,
    e.action,
    e.detail ?? null,
  ]);
}

async function audit(tx: Queryable, scope: OrganizationScope, at: number, by: string, ruleId: string, action: string, detail: unknown): Promise<void> {
  await writeAudit(tx, scope, 'rule', { at, by, id: ruleId, action, detail });
  // Every audited change is a `rule.changed` webhook event in the same transaction: the entry as
  // the rule's history answers it (GET …/rules/{rule_id}/history), with the rule's id.
  await writeOutbox(tx, [
    {
      organizationId: scope.organizationId,
      type: 'rule.changed',
      payload: { rule_id: ruleId, at: new Date(at).toISOString(), by, action, detail: detail ?? null },
    },
  ]);
}

/**
 * Locks the lists a rule version names, for the rest of the transaction, and answers those of them
 * that are deleted (or not the organization's). A list's delete locks its row for update and then
 * looks for the rules that use it (lists-store.ts), so the two cannot cross: whichever locks first
 * commits first, and the other then sees it (a rule saved first stops the delete with
 * `list_in_use`; a list deleted first is missing here, and the rule is refused).
 */
export async function lockLists(tx: Queryable, scope: OrganizationScope, listIds: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(listIds)].sort();
  if (wanted.length === 0) return [];
  const rows = await tx.query<{ id: string }>(
    `SELECT id FROM lists WHERE organization_id = $1 AND id = ANY($2::text[]) AND deleted_at_ms IS NULL ORDER BY id FOR SHARE`,
    [scope.organizationId, wanted],
  );
  const held = new Set(rows.map((r) => r.id));
  return wanted.filter((id) => !held.has(id));
}

/** What a save answers when a list its version names was deleted meanwhile: those lists' ids. */
export interface ListsGone {
  listsGone: string[];
}

/** Thrown inside a save's transaction to roll it back. */
class Gone extends Error {
  readonly ids: string[];

  constructor(ids: string[]) {
    super('lists deleted');
    this.ids = ids;
  }
}

async function insertVersion(tx: Queryable, scope: OrganizationScope, ruleId: string, version: number, v: VersionInput, at: number, by: string): Promise<void> {
  await tx.query(
    `INSERT INTO rule_versions (rule_id, version, organization_id, expression, action, description, list_ids, created_at_ms, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7::text[], $8, $9)`,
    [ruleId, version, scope.organizationId, v.expression, v.action, v.description, v.listIds, at, by],
  );
}

/** Creates a rule with its first version; `taken` when the organization has a rule of that name,
 *  `listsGone` when a list the version names has been deleted (nothing is stored then). */
export async function createRule(
  scope: OrganizationScope,
  r: { id: string; name: string; status: RuleStatus; version: VersionInput; at: number; by: string },
): Promise<{ xid: number } | 'taken' | ListsGone> {
  try {
    return await scope.db.transaction(async (tx) => {
      const gone = await lockLists(tx, scope, r.version.listIds);
      if (gone.length) throw new Gone(gone);
      const xid = await feedXid(tx);
      const live = r.status === 'active' || r.status === 'shadow' ? 1 : null;
      await tx.query(
        `INSERT INTO rules (id, organization_id, name, status, version, live_version, created_at_ms, created_by, updated_at_ms, updated_by) VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $6, $7)`,
        [r.id, scope.organizationId, r.name, r.status, live, r.at, r.by],
      );
      await insertVersion(tx, scope, r.id, 1, r.version, r.at, r.by);
      await audit(tx, scope, r.at, r.by, r.id, 'created', { name: r.name, status: r.status, version: 1 });
      return { xid };
    });
  } catch (e) {
    if (e instanceof Gone) return { listsGone: e.ids };
    if (isUniqueViolation(e)) return 'taken';
    throw e;
  }
}

/** What a change does: a new version, a new status, a new name (each optional). */
export interface RuleChange {
  version?: VersionInput;
  status?: RuleStatus;
  name?: string;
  /** Change nothing of a rule that is active (the caller may not: app/access/roles.ts), as read under
   *  the rule's lock, so a rule activated meanwhile is not changed by whoever read it in shadow. */
  refuseActive?: boolean;
}

/**
 * Changes a rule: a new version (numbered after the newest), a new status, a new name. A new
 * version goes live when the status (given, or kept) is active or shadow, unless the change names
 * status `draft` for a rule that is live: then the live version keeps running and the new one waits
 * as a draft. A status of active or shadow with no new version puts the newest version live.
 * Undefined when the organization has no such rule; `taken` when the name is another rule's;
 * `listsGone` when the new version, or the version the change puts live, names a deleted list;
 * `active` when the rule is active and the change refuses that (nothing changes then).
 */
export async function changeRule(
  scope: OrganizationScope,
  id: string,
  c: RuleChange,
  at: number,
  by: string,
): Promise<{ xid: number } | 'taken' | 'active' | ListsGone | undefined> {
  try {
    return await scope.db.transaction(async (tx) => {
      const [rule] = await tx.query<{ status: RuleStatus; version: number; live_version: number | null }>(
        `SELECT status, version, live_version FROM rules WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL FOR UPDATE`,
        [scope.organizationId, id],
      );
      if (!rule) return undefined;
      if (c.refuseActive && rule.status === 'active') return 'active';
      const xid = await feedXid(tx);
      let { status, version, live_version: live } = rule;
      if (c.version) {
        version += 1;
        await insertVersion(tx, scope, id, version, c.version, at, by);
      }
      const wasLive = status === 'active' || status === 'shadow';
      if (c.status === 'draft' && wasLive && c.version) {
        // A draft beside the live version: both kept, the live one still evaluated.
      } else {
        if (c.status) status = c.status;
        if (status === 'active' || status === 'shadow') live = version;
      }
      // The lists of the version saved and of the one evaluated after the change must still be there.
      const named = [...(c.version?.listIds ?? [])];
      if ((status === 'active' || status === 'shadow') && live !== null && !(c.version && live === version)) {
        const [v] = await tx.query<{ list_ids: string[] }>(`SELECT list_ids FROM rule_versions WHERE organization_id = $1 AND rule_id = $2 AND version = $3`, [
          scope.organizationId,
          id,
          live,
        ]);
        named.push(...(v?.list_ids ?? []));
      }
      const gone = await lockLists(tx, scope, named);
      if (gone.length) throw new Gone(gone);
      await tx.query(
        `UPDATE rules SET status = $3, version = $4, live_version = $5, name = coalesce($6, name), updated_at_ms = $7, updated_by = $8,
                          seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
         WHERE organization_id = $1 AND id = $2`,
        [scope.organizationId, id, status, version, live, c.name ?? null, at, by],
      );
      await audit(tx, scope, at, by, id, c.version ? 'version' : 'changed', { status, version, live_version: live, ...(c.name ? { name: c.name } : {}) });
      return { xid };
    });
  } catch (e) {
    if (e instanceof Gone) return { listsGone: e.ids };
    if (isUniqueViolation(e)) return 'taken';
    throw e;
  }
}

/** Deletes a rule (kept for the record, never evaluated again); undefined when there is none,
 *  `active` when it is active and `refuseActive` (nothing changes then). */
export async function deleteRule(
  scope: OrganizationScope,
  id: string,
  at: number,
  by: string,
  refuseActive = false,
): Promise<{ xid: number } | 'active' | undefined> {
  return scope.db.transaction(async (tx) => {
    const [rule] = await tx.query<{ status: RuleStatus }>(
      `SELECT status FROM rules WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL FOR UPDATE`,
      [scope.organizationId, id],
    );
    if (!rule) return undefined;
    if (refuseActive && rule.status === 'active') return 'active';
    const xid = await feedXid(tx);
    await tx.query(
      `UPDATE rules SET deleted_at_ms = $3, status = 'disabled', updated_at_ms = $3, updated_by = $4, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
       WHERE organization_id = $1 AND id = $2`,
      [scope.organizationId, id, at, by],
    );
    await audit(tx, scope, at, by, id, 'deleted', null);
    return { xid };
  });
}

/** The organization's rules (or one), by name, with their matches and errors since `since`
 *  (epoch ms), counted over the transactions a rule matched or failed on. */
export async function listRules(scope: OrganizationScope, since: number, id?: string): Promise<RuleRow[]> {
  return scope.db.query<RuleRow>(
    `WITH hits AS (
       SELECT h.rule_id, count(*) FILTER (WHERE h.kind = 'm')::int AS matches, count(*) FILTER (WHERE h.kind = 'e')::int AS errors
       FROM transactions t
       CROSS JOIN LATERAL (SELECT unnest(t.rule_ids) AS rule_id, 'm' AS kind UNION ALL SELECT unnest(t.rule_errors), 'e') AS h
       WHERE t.organization_id = $1 AND t.time_ms >= $2 AND (t.rule_ids IS NOT NULL OR t.rule_errors IS NOT NULL)
             ${id === undefined ? '' : 'AND (t.rule_ids @> ARRAY[$3::text] OR t.rule_errors @> ARRAY[$3::text])'}
       GROUP BY h.rule_id)
     SELECT ${ROW}, coalesce(h.matches, 0) AS matches, coalesce(h.errors, 0) AS errors
     FROM rules r JOIN rule_versions v ON v.rule_id = r.id AND v.version = r.version
     LEFT JOIN hits h ON h.rule_id = r.id
     WHERE r.organization_id = $1 AND r.deleted_at_ms IS NULL ${id === undefined ? '' : 'AND r.id = $3'}
     ORDER BY r.name`,
    id === undefined ? [scope.organizationId, since] : [scope.organizationId, since, id],
  );
}

/** A rule's versions, newest first; empty when the organization has no such rule. */
export function ruleVersions(scope: OrganizationScope, id: string): Promise<VersionRow[]> {
  return scope.db.query<VersionRow>(
    `SELECT v.version, v.expression, v.action, v.description, v.list_ids, v.created_at_ms, v.created_by
     FROM rule_versions v JOIN rules r ON r.id = v.rule_id
     WHERE v.organization_id = $1 AND r.organization_id = $1 AND v.rule_id = $2 AND r.deleted_at_ms IS NULL ORDER BY v.version DESC`,
    [scope.organizationId, id],
  );
}

/** The rules scoring evaluates (active and shadow), inside the caller's snapshot `tx`. */
export async function liveRuleStates(tx: Queryable, scope: OrganizationScope): Promise<RuleState[]> {
  const rows = await tx.query<{ state: string }>(
    `SELECT ${RULE_STATE_JSON} AS state FROM rules r ${LIVE_VERSION} WHERE r.organization_id = $1 AND r.deleted_at_ms IS NULL AND r.status IN ('active', 'shadow')`,
    [scope.organizationId],
  );
  return rows.map((r) => parseRuleState(r.state));
}

/** Names of the rules evaluated now (active or shadow) whose live version names the list (inside
 *  the caller's transaction `q` when it holds the list's lock: lists-store.ts, deleteList). */
export async function rulesUsingList(q: Queryable, scope: OrganizationScope, listId: string): Promise<string[]> {
  const rows = await q.query<{ name: string }>(
    `SELECT r.name FROM rules r JOIN rule_versions v ON v.rule_id = r.id AND v.version = r.live_version
     WHERE r.organization_id = $1 AND r.deleted_at_ms IS NULL AND r.status IN ('active', 'shadow') AND $2 = ANY(v.list_ids) ORDER BY r.name`,
    [scope.organizationId, listId],
  );
  return rows.map((r) => r.name);
}

/** How many rules the organization has (deleted ones left out). */
export async function countRules(scope: OrganizationScope): Promise<number> {
  const [row] = await scope.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM rules WHERE organization_id = $1 AND deleted_at_ms IS NULL`, [
    scope.organizationId,
  ]);
  return row!.n;
}

/** A change of a rule as the audit recorded it. */
export interface AuditRow {
  at_ms: number;
  by: string;
  action: string;
  detail: Record<string, unknown> | null;
}

/** Every recorded change of one of the organization's rules, lists or fields, oldest first. */
export function auditOf(scope: OrganizationScope, subject: 'rule' | 'list' | 'field' | 'inbox', id: string): Promise<AuditRow[]> {
  return scope.db.query<AuditRow>(
    `SELECT at_ms, by, action, detail FROM policy_audit WHERE organization_id = $1 AND subject = $2 AND subject_id = $3 ORDER BY id`,
    [scope.organizationId, subject, id],
  );
}

/** A change as a page of the audit shows it, with its number (a page's cursor). */
export interface AuditEntry extends AuditRow {
  id: number;
}

/**
 * A page of one rule's or list's recorded changes, newest first, after the change numbered
 * `startingAfter` (the last of the previous page); undefined when that number is not one of its
 * changes in the organization.
 */
export async function auditPage(
  scope: OrganizationScope,
  subject: 'rule' | 'list',
  id: string,
  limit: number,
  startingAfter?: number,
): Promise<{ entries: AuditEntry[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.organizationId, subject, id];
  if (startingAfter !== undefined) {
    const [cursor] = await scope.db.query(`SELECT 1 FROM policy_audit WHERE organization_id = $1 AND subject = $2 AND subject_id = $3 AND id = $4`, [
      ...params,
      startingAfter,
    ]);
    if (!cursor) return undefined;
    params.push(startingAfter);
  }
  params.push(limit + 1);
  const rows = await scope.db.query<AuditEntry>(
    `SELECT id, at_ms, by, action, detail FROM policy_audit WHERE organization_id = $1 AND subject = $2 AND subject_id = $3 ${startingAfter === undefined ? '' : 'AND id < $4'}
     ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return { entries: rows.slice(0, limit), hasMore: rows.length > limit };
}
