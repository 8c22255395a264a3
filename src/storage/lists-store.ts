// An organization's lists and their items (migrations/013_rules_and_lists.sql), bound to the
// organization by its scope (organization-data.ts). Items are stays: adding a value starts one,
// removing it (or adding it again) ends the current one, and no row is ever deleted, so a list can
// be read as it was at any past time. Every change is audited (policy_audit: created, items added,
// items removed, deleted). A delete checks the rules that use the list in its own transaction,
// under the list's lock, which a rule being saved takes too (rules-store.ts), so the two never
// cross. Every write queues the live feed's NOTIFY, renews the rows' feed position, and answers
// its database transaction id, so the caller can wait until this process has applied it
// (LiveTail.reach).

import type { Queryable } from './db.ts';
import { isUniqueViolation } from './errors.ts';
import { feedXid } from './live-feed.ts';
import type { OrganizationScope } from './organization-scope.ts';
import { rulesUsingList, writeAudit } from './rules-store.ts';
import { AUDITED_VALUES, type ItemStay, type ListKind } from '../domain/rules/lists.ts';

export interface ListRow {
  id: string;
  name: string;
  kind: ListKind;
  description: string | null;
  created_at_ms: number;
  created_by: string;
  /** Items on the list now (not removed, not expired). */
  items: number;
}

export interface ItemRow {
  value: string;
  added_at_ms: number;
  added_by: string;
  reason: string | null;
  expires_at_ms: number | null;
  removed_at_ms: number | null;
  removed_by: string | null;
}

/** Rows per page when a process loads an organization's items (one JSON value each). */
const ITEM_PAGE_ROWS = 20_000;

const LIST_COLUMNS = `l.id, l.name, l.kind, l.description, l.created_at_ms, l.created_by`;
const itemCount = (now: string) =>
  `(SELECT count(*)::int FROM list_items i WHERE i.list_id = l.id AND i.removed_at_ms IS NULL AND (i.expires_at_ms IS NULL OR i.expires_at_ms > ${now})) AS items`;

/** Ends the current stays of the values $5 on list $2 of organization $1, at $3 by $4. */
const END_STAYS = `UPDATE list_items i SET removed_at_ms = $3, removed_by = $4, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
  FROM unnest($5::text[]) AS v(value)
  WHERE i.organization_id = $1 AND i.list_id = $2 AND i.removed_at_ms IS NULL AND i.value = v.value`;

/** Plans every statement of the write for its own values. PostgreSQL switches a prepared statement
 *  to a generic plan from a connection's sixth use on, and the generic plans of these compare
 *  every item on the list with every value sent, which on a long list is orders of magnitude
 *  slower than a plan made for the values. */
async function planForValues(tx: Queryable): Promise<void> {
  await tx.query(`SET LOCAL plan_cache_mode = force_custom_plan`);
}

/** Whether the list is the organization's and not deleted (locked until the transaction ends, so
 *  a delete and an add do not cross). */
async function ownList(tx: Queryable, scope: OrganizationScope, listId: string): Promise<boolean> {
  const rows = await tx.query(`SELECT 1 FROM lists WHERE organization_id = $1 AND id = $2 AND deleted_at_ms IS NULL FOR UPDATE`, [
    scope.organizationId,
    listId,
  ]);
  return rows.length > 0;
}

async function audit(tx: Queryable, scope: OrganizationScope, at: number, by: string, id: string, action: string, detail: unknown): Promise<void> {
  await writeAudit(tx, scope, 'list', { at, by, id, action, detail });
}

/** Creates a list; undefined when the organization has a list of that name. */
export async function createList(
  scope: OrganizationScope,
  l: { id: string; name: string; kind: ListKind; description: string | null; at: number; by: string },
): Promise<ListRow | undefined> {
  try {
    return await scope.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO lists (id, organization_id, name, kind, description, created_at_ms, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
        l.id,
        scope.organizationId,
        l.name,
        l.kind,
        l.description,
        l.at,
        l.by,
      ]);
      await audit(tx, scope, l.at, l.by, l.id, 'created', { name: l.name, kind: l.kind });
      return { id: l.id, name: l.name, kind: l.kind, description: l.description, created_at_ms: l.at, created_by: l.by, items: 0 };
    });
  } catch (e) {
    if (isUniqueViolation(e)) return undefined;
    throw e;
  }
}

/** The organization's lists, by name, with how many items each has at `now`. */
export function listLists(scope: OrganizationScope, now: number): Promise<ListRow[]> {
  return scope.db.query<ListRow>(
    `SELECT ${LIST_COLUMNS}, ${itemCount('$2')} FROM lists l WHERE l.organization_id = $1 AND l.deleted_at_ms IS NULL ORDER BY l.name`,
    [scope.organizationId, now],
  );
}

/** One list by name. */
export async function getList(scope: OrganizationScope, name: string, now: number): Promise<ListRow | undefined> {
  const [row] = await scope.db.query<ListRow>(
    `SELECT ${LIST_COLUMNS}, ${itemCount('$3')} FROM lists l WHERE l.organization_id = $1 AND l.name = $2 AND l.deleted_at_ms IS NULL`,
    [scope.organizationId, name, now],
  );
  return row;
}

/** A value's place on the organization's lists of `kinds` at `at`: each list it is on then (added,
 *  not removed, not expired), with when it was added, why and until when. A case's page shows its
 *  entity's. */
export async function listsHolding(
  scope: OrganizationScope,
  value: string,
  kinds: readonly ListKind[],
  at: number,
): Promise<{ name: string; kind: ListKind; added_at_ms: number; reason: string | null; expires_at_ms: number | null }[]> {
  return scope.db.query(
    `SELECT l.name, l.kind, i.added_at_ms, i.reason, i.expires_at_ms
     FROM lists l JOIN list_items i ON i.list_id = l.id AND i.value = $2 AND i.removed_at_ms IS NULL
     WHERE l.organization_id = $1 AND l.deleted_at_ms IS NULL AND l.kind = ANY($3::text[])
       AND i.organization_id = $1 AND i.added_at_ms <= $4 AND (i.expires_at_ms IS NULL OR i.expires_at_ms > $4)
     ORDER BY l.name`,
    [scope.organizationId, value, kinds, at],
  );
}

/** Every list the organization has had, deleted ones included: name by id (rules name lists). */
export async function listNames(scope: OrganizationScope, ids: readonly string[]): Promise<Map<string, string>> {
  const rows = await scope.db.query<{ id: string; name: string }>(`SELECT id, name FROM lists WHERE organization_id = $1 AND id = ANY($2::text[])`, [
    scope.organizationId,
    ids,
  ]);
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * A page of a list's items in value order after `after`: those on it at `asOf` (a stay that began
 * at or before it and had not ended), or, without it, those on it now with removed and expired
 * ones left out.
 */
export async function listItems(
  scope: OrganizationScope,
  listId: string,
  o: { now: number; asOf?: number | undefined; after?: string | undefined; limit: number },
): Promise<{ items: ItemRow[]; hasMore: boolean }> {
  const at = o.asOf ?? o.now;
  const current = o.asOf === undefined ? 'AND removed_at_ms IS NULL' : 'AND added_at_ms <= $3 AND (removed_at_ms IS NULL OR removed_at_ms > $3)';
  const rows = await scope.db.query<ItemRow>(
    `SELECT value, added_at_ms, added_by, reason, expires_at_ms, removed_at_ms, removed_by FROM list_items
     WHERE organization_id = $1 AND list_id = $2 ${current} AND (expires_at_ms IS NULL OR expires_at_ms > $3) AND value > $4
     ORDER BY value, added_at_ms DESC LIMIT $5`,
    [scope.organizationId, listId, at, o.after ?? '', o.limit + 1],
  );
  return { items: rows.slice(0, o.limit), hasMore: rows.length > o.limit };
}

/** Items on the organization's lists now (removed ones left out; expired ones too, at `now`). */
export async function countItems(tx: Queryable, scope: OrganizationScope): Promise<number> {
  const [row] = await tx.query<{ n: number }>(`SELECT count(*)::int AS n FROM list_items WHERE organization_id = $1 AND removed_at_ms IS NULL`, [
    scope.organizationId,
  ]);
  return row!.n;
}

/** What adding values did: values that start a stay, and of those how many ended one already on
 *  the list (a new reason or expiry). */
export interface AddResult {
  added: number;
  replaced: number;
  xid: number;
}

/** Adds values (distinct, trimmed) to a list, unless the organization would then hold more than
 *  `maxItems` items: then `over` with the count it would reach, and nothing changes; `missing`
 *  when the organization has no such list (deleted, or another's). */
export async function addItems(
  scope: OrganizationScope,
  listId: string,
  values: readonly string[],
  o: { reason: string | null; expiresAt: number | null; at: number; by: string; maxItems: number },
): Promise<AddResult | { over: number } | { missing: true }> {
  return scope.db
    .transaction(async (tx) => {
      // One writer of an organization's items at a time, so the limit holds between them.
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 13))', [scope.organizationId]);
      await planForValues(tx);
      if (!(await ownList(tx, scope, listId))) return { missing: true as const };
      const xid = await feedXid(tx);
      const ended = await tx.query<{ value: string }>(`${END_STAYS} RETURNING i.value`, [scope.organizationId, listId, o.at, o.by, values]);
      const held = await countItems(tx, scope);
      if (held + values.length > o.maxItems) throw new OverLimit(held + values.length);
      await tx.query(
        `INSERT INTO list_items (organization_id, list_id, value, added_at_ms, added_by, reason, expires_at_ms)
       SELECT $1, $2, v, $3, $4, $5, $6 FROM unnest($7::text[]) AS v`,
        [scope.organizationId, listId, o.at, o.by, o.reason, o.expiresAt, values],
      );
      await audit(tx, scope, o.at, o.by, listId, 'items_added', {
        count: values.length,
        replaced: ended.length,
        values: values.slice(0, AUDITED_VALUES),
        reason: o.reason,
        expires_at_ms: o.expiresAt,
      });
      return { added: values.length, replaced: ended.length, xid };
    })
    .catch((e) => {
      if (e instanceof OverLimit) return { over: e.count };
      throw e;
    });
}

/** Thrown inside addItems' transaction to roll it back. */
class OverLimit extends Error {
  readonly count: number;

  constructor(count: number) {
    super('over the item limit');
    this.count = count;
  }
}

/** Ends the stays of these values on a list; answers how many were on it (those are audited). */
export async function removeItems(
  scope: OrganizationScope,
  listId: string,
  values: readonly string[],
  at: number,
  by: string,
): Promise<{ removed: number; xid: number }> {
  return scope.db.transaction(async (tx) => {
    await planForValues(tx);
    const xid = await feedXid(tx);
    const rows = await tx.query<{ value: string }>(`${END_STAYS} RETURNING i.value`, [scope.organizationId, listId, at, by, values]);
    if (rows.length) await audit(tx, scope, at, by, listId, 'items_removed', { count: rows.length, values: rows.slice(0, AUDITED_VALUES).map((r) => r.value) });
    return { removed: rows.length, xid };
  });
}

/** Deletes a list: its current items' stays end, and its name is free again; undefined when the
 *  organization has no such list; `inUse` with the names of the rules evaluated now (active or
 *  shadow) whose live version names it and of the inboxes whose route names it, and nothing
 *  changes. They are read once the list's row is locked, in the same transaction: a rule or an
 *  inbox being saved with the list locks it too (rules-store.ts lockLists), so either it is
 *  committed and seen here, or it finds the list deleted. */
export async function deleteList(
  scope: OrganizationScope,
  listId: string,
  at: number,
  by: string,
): Promise<{ xid: number } | { inUse: string[]; inboxes: string[] } | undefined> {
  return scope.db.transaction(async (tx) => {
    if (!(await ownList(tx, scope, listId))) return undefined;
    const users = await rulesUsingList(tx, scope, listId);
    const inboxes = (
      await tx.query<{ name: string }>(
        'SELECT name FROM inboxes WHERE organization_id = $1 AND deleted_at_ms IS NULL AND $2 = ANY(route_list_ids) ORDER BY name',
        [scope.organizationId, listId],
      )
    ).map((r) => r.name);
    if (users.length || inboxes.length) return { inUse: users, inboxes };
    const xid = await feedXid(tx);
    await tx.query(
      `UPDATE list_items SET removed_at_ms = $3, removed_by = $4, seq = nextval('transactions_seq_seq'), xid = pg_current_xact_id()
       WHERE organization_id = $1 AND list_id = $2 AND removed_at_ms IS NULL`,
      [scope.organizationId, listId, at, by],
    );
    await tx.query(`UPDATE lists SET deleted_at_ms = $3, deleted_by = $4 WHERE organization_id = $1 AND id = $2`, [scope.organizationId, listId, at, by]);
    await audit(tx, scope, at, by, listId, 'deleted', null);
    return { xid };
  });
}

/** The organization's current items (for a process's copy), a page at a time, inside the
 *  caller's snapshot `tx`. */
export async function currentStays(tx: Queryable, scope: OrganizationScope, onPage: (stays: ItemStay[]) => void): Promise<void> {
  await stayPages(tx, scope, 'removed_at_ms IS NULL', [], onPage);
}

/** Every stay, ever, on these lists (a backtest's lists as they were), a page at a time. */
export function allStays(scope: OrganizationScope, listIds: readonly string[], onPage: (stays: ItemStay[]) => void): Promise<void> {
  return stayPages(scope.db, scope, 'list_id = ANY($4::text[])', [listIds], onPage);
}

async function stayPages(q: Queryable, scope: OrganizationScope, where: string, extra: unknown[], onPage: (stays: ItemStay[]) => void): Promise<void> {
  let after = 0;
  type Tuple = [number, string, string, number, number | null, number | null];
  for (;;) {
    const [row] = await q.query<{ page: string | null }>(
      `SELECT json_agg(json_build_array(id, list_id, value, added_at_ms, expires_at_ms, removed_at_ms) ORDER BY id)::text AS page
       FROM (SELECT * FROM list_items WHERE organization_id = $1 AND id > $2 AND ${where} ORDER BY id LIMIT $3) AS p`,
      [scope.organizationId, after, ITEM_PAGE_ROWS, ...extra],
    );
    if (!row?.page) return;
    const tuples = JSON.parse(row.page) as Tuple[];
    onPage(
      tuples.map(([id, list_id, value, added_at_ms, expires_at_ms, removed_at_ms]) => ({ id, list_id, value, added_at_ms, expires_at_ms, removed_at_ms })),
    );
    if (tuples.length < ITEM_PAGE_ROWS) return;
    after = tuples[tuples.length - 1]![0];
  }
}
