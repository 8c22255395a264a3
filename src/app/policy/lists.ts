// An organization's lists, as use cases for both surfaces: a member (owner or analyst: access/roles.ts,
// `workLists`) creates, reads and deletes lists, adds and removes their values and reads each
// list's audit (its creation, every add and remove) from the dashboard; an API key adds and removes values (`/api/v1/lists/{name}/items`),
// so a customer's server can block a customer after a chargeback. Every read and write goes
// through the organization's lists (`organizationData(db, id).lists`), bound to the organization
// the caller acts for, so another organization's list is simply not found. A write is answered
// once this process has applied it (the live feed carries it to every other process), so the next
// score here sees it. Each answers in the contract's shape (contract/rules.ts).

import { AppError } from '../errors.ts';
import type { OrganizationCaller } from '../access/organization-caller.ts';
import { requireCapability } from '../access/roles.ts';
import { randomId } from '../access/secrets.ts';
import type { AddResult, List, ListAudit, ListIndex, ListItem, ListPage, RemoveResult } from '../../contract/rules.ts';
import { listValue, valueProblem, type ListKind } from '../../domain/rules/lists.ts';
import type { Db } from '../../storage/db.ts';
import type { ItemRow, ListRow } from '../../storage/lists-store.ts';
import { organizationData } from '../../storage/organization-data.ts';
import type { OrganizationLists } from '../../storage/organization-data.ts';
import type { LiveTail } from '../../live/tail.ts';
import { isoTime, isoTimeOrNull } from '../../domain/iso-time.ts';

/** Most values in one add or remove. */
export const MAX_VALUES_PER_REQUEST = 10_000;

export interface PolicyDeps {
  db: Db;
  /** Waited on after a write, so this process's next score sees it. */
  tail: LiveTail;
  config: { MAX_RULES_PER_ORG: number; MAX_LIST_ITEMS_PER_ORG: number };
  clock?: () => number;
}

const now = (deps: PolicyDeps) => (deps.clock ?? Date.now)();

export function listView(l: ListRow): List {
  return { id: l.id, name: l.name, kind: l.kind, description: l.description, items: l.items, created_at: isoTime(l.created_at_ms), created_by: l.created_by };
}

function itemView(i: ItemRow): ListItem {
  return {
    value: i.value,
    added_at: isoTime(i.added_at_ms),
    added_by: i.added_by,
    reason: i.reason,
    expires_at: isoTimeOrNull(i.expires_at_ms),
    removed_at: isoTimeOrNull(i.removed_at_ms),
    removed_by: i.removed_by,
  };
}

const noList = (name: string) =>
  new AppError('not_found', `No list named ${name} in this organization.`, "Check the name (GET the organization's lists), or create the list first.");

async function namedList(deps: PolicyDeps, lists: OrganizationLists, name: string): Promise<ListRow> {
  const list = await lists.named(name, now(deps));
  if (!list) throw noList(name);
  return list;
}

/** Values trimmed and without repeats, or `validation_failed` naming each that cannot be used. */
function cleanValues(values: readonly string[], kind: ListKind): string[] {
  const fields: { path: string; message: string }[] = [];
  values.forEach((v, k) => {
    const why = valueProblem(v);
    if (why) fields.push({ path: `body.values.${k}`, message: `value ${why}` });
    else if (kind === 'channel' && !listValue(v).includes(':'))
      fields.push({ path: `body.values.${k}`, message: 'a channel is payment_type:location, e.g. card:NG' });
  });
  if (fields.length)
    throw new AppError(
      'validation_failed',
      `${fields.length} value(s) cannot go on the list.`,
      'Send values of at most 200 characters that are not empty after trimming (a channel as payment_type:location).',
      { fields: fields.slice(0, 20) },
    );
  return [...new Set(values.map(listValue))];
}

export async function createList(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  body: { name: string; kind: ListKind; description?: string | undefined },
): Promise<List> {
  requireCapability(caller.role, 'workLists');
  const row = await organizationData(deps.db, caller.organizationId).lists.create({
    id: randomId('list'),
    name: body.name,
    kind: body.kind,
    description: body.description ?? null,
    at: now(deps),
    by: caller.by,
  });
  if (!row)
    throw new AppError('conflict', `This organization has a list named ${body.name} already.`, 'Choose another name, or add the values to the existing list.');
  return listView(row);
}

export async function allLists(deps: PolicyDeps, caller: OrganizationCaller): Promise<ListIndex> {
  return { data: (await organizationData(deps.db, caller.organizationId).lists.all(now(deps))).map(listView) };
}

/** A list and a page of its items in value order: those on it now, or at `asOf`. */
export async function listPage(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  name: string,
  q: { asOf?: number | undefined; startingAfter?: string | undefined; limit: number },
): Promise<ListPage> {
  const lists = organizationData(deps.db, caller.organizationId).lists;
  const list = await namedList(deps, lists, name);
  const page = await lists.items(list.id, { now: now(deps), asOf: q.asOf, after: q.startingAfter, limit: q.limit });
  return { list: listView(list), data: page.items.map(itemView), has_more: page.hasMore };
}

export async function addListItems(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  name: string,
  body: { values: readonly string[]; reason?: string | undefined; expires_at?: number | undefined },
): Promise<AddResult> {
  const at = now(deps);
  const lists = organizationData(deps.db, caller.organizationId).lists;
  const list = await namedList(deps, lists, name);
  if (body.expires_at !== undefined && body.expires_at <= at) {
    throw new AppError(
      'validation_failed',
      'expires_at is not in the future.',
      'Send a time after now, or leave expires_at out to keep the values until they are removed.',
      { fields: [{ path: 'body.expires_at', message: 'must be in the future' }] },
    );
  }
  const values = cleanValues(body.values, list.kind);
  const result = await lists.addItems(list.id, values, {
    reason: body.reason ?? null,
    expiresAt: body.expires_at ?? null,
    at,
    by: caller.by,
    maxItems: deps.config.MAX_LIST_ITEMS_PER_ORG,
  });
  if ('missing' in result) throw noList(name);
  if ('over' in result) {
    throw new AppError(
      'limit_reached',
      `The organization's lists would hold ${result.over.toLocaleString('en')} items; at most ${deps.config.MAX_LIST_ITEMS_PER_ORG.toLocaleString('en')} are allowed (MAX_LIST_ITEMS_PER_ORG).`,
      'Remove values that are no longer needed, or ask the operator to raise MAX_LIST_ITEMS_PER_ORG.',
    );
  }
  await deps.tail.reach(result.xid);
  return { list: listView((await lists.named(name, now(deps)))!), added: result.added, replaced: result.replaced };
}

export async function removeListItems(deps: PolicyDeps, caller: OrganizationCaller, name: string, values: readonly string[]): Promise<RemoveResult> {
  requireCapability(caller.role, 'workLists');
  const lists = organizationData(deps.db, caller.organizationId).lists;
  const list = await namedList(deps, lists, name);
  const result = await lists.removeItems(list.id, [...new Set(values.map(listValue))], now(deps), caller.by);
  await deps.tail.reach(result.xid);
  return { list: listView((await lists.named(name, now(deps)))!), removed: result.removed };
}

/** Deletes a list, unless a rule that is evaluated (active or shadow) or an inbox's route names it:
 *  `list_in_use`.
 *  The check and the delete are one transaction, which a rule saved meanwhile cannot cross
 *  (storage/lists-store.ts, deleteList). */
export async function deleteList(deps: PolicyDeps, caller: OrganizationCaller, name: string): Promise<void> {
  requireCapability(caller.role, 'workLists');
  const lists = organizationData(deps.db, caller.organizationId).lists;
  const list = await namedList(deps, lists, name);
  const deleted = await lists.delete(list.id, now(deps), caller.by);
  if (!deleted) throw noList(name);
  if ('inUse' in deleted) {
    const { inUse: users, inboxes } = deleted;
    const named = [
      ...(users.length ? [`${users.length === 1 ? 'the rule' : 'the rules'} ${users.join(', ')}`] : []),
      ...(inboxes.length ? [`the route of ${inboxes.length === 1 ? 'the inbox' : 'the inboxes'} ${inboxes.join(', ')}`] : []),
    ];
    throw new AppError(
      'list_in_use',
      `The list ${name} is used by ${named.join(' and ')}.`,
      users.length
        ? "Disable those rules, or save versions of them that do not use the list (and change those inboxes' routes), then delete it."
        : "Change those inboxes' routes so that they do not use the list, then delete it.",
      { rules: users, inboxes },
    );
  }
  await deps.tail.reach(deleted.xid);
}

/** A page of a list's recorded changes, newest first, after the change `startingAfter` (the last
 *  of the previous page); `not_found` for a list, or a change of it, the organization does not have. */
export async function listAudit(
  deps: PolicyDeps,
  caller: OrganizationCaller,
  name: string,
  q: { startingAfter?: string | undefined; limit: number },
): Promise<ListAudit> {
  const lists = organizationData(deps.db, caller.organizationId).lists;
  const list = await namedList(deps, lists, name);
  const page = await lists.auditPage(list.id, q.limit, q.startingAfter === undefined ? undefined : Number(q.startingAfter));
  if (!page)
    throw new AppError(
      'not_found',
      `starting_after names no change ${q.startingAfter} of the list ${name}.`,
      'Pass the id of the last change of the previous page.',
    );
  return { data: page.entries.map((e) => ({ id: String(e.id), at: isoTime(e.at_ms), by: e.by, action: e.action, detail: e.detail })), has_more: page.hasMore };
}
