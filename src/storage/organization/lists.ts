// An organization's lists and their items, bound to the organization (organization-data.ts makes
// one for a scope): creating, reading and deleting lists, adding and removing values, every stay a
// list ever held (a backtest reads the lists as they were) and a list's audit. The statements are
// in lists-store.ts (the audit's in rules-store.ts, which keeps both subjects' changes).

import type { ItemStay, ListKind } from '../../domain/rules/lists.ts';
import {
  addItems,
  allStays,
  createList,
  deleteList,
  getList,
  listItems,
  listLists,
  listNames,
  removeItems,
  type AddResult,
  type ItemRow,
  type ListRow,
} from '../lists-store.ts';
import type { OrganizationScope } from '../organization-scope.ts';
import { auditPage, type AuditEntry } from '../rules-store.ts';

export class OrganizationLists {
  constructor(private readonly scope: OrganizationScope) {}

  /** A new list; undefined when the organization has one of that name. */
  create(l: { id: string; name: string; kind: ListKind; description: string | null; at: number; by: string }): Promise<ListRow | undefined> {
    return createList(this.scope, l);
  }

  all(now: number): Promise<ListRow[]> {
    return listLists(this.scope, now);
  }

  named(name: string, now: number): Promise<ListRow | undefined> {
    return getList(this.scope, name, now);
  }

  /** Names of lists by id, deleted ones included. */
  names(ids: readonly string[]): Promise<Map<string, string>> {
    return listNames(this.scope, ids);
  }

  items(
    listId: string,
    o: { now: number; asOf?: number | undefined; after?: string | undefined; limit: number },
  ): Promise<{ items: ItemRow[]; hasMore: boolean }> {
    return listItems(this.scope, listId, o);
  }

  addItems(
    listId: string,
    values: readonly string[],
    o: { reason: string | null; expiresAt: number | null; at: number; by: string; maxItems: number },
  ): Promise<AddResult | { over: number } | { missing: true }> {
    return addItems(this.scope, listId, values, o);
  }

  removeItems(listId: string, values: readonly string[], at: number, by: string): Promise<{ removed: number; xid: number }> {
    return removeItems(this.scope, listId, values, at, by);
  }

  /** Deletes a list unless an active or shadow rule uses it (checked in the same transaction). */
  delete(listId: string, at: number, by: string): Promise<{ xid: number } | { inUse: string[] } | undefined> {
    return deleteList(this.scope, listId, at, by);
  }

  /** Every stay ever on these lists (backtests read the lists as they were). */
  stays(listIds: readonly string[], onPage: (stays: ItemStay[]) => void): Promise<void> {
    return allStays(this.scope, listIds, onPage);
  }

  /** A page of a list's recorded changes, newest first, after the change numbered `startingAfter`;
   *  undefined for a number that is not one of its changes. */
  auditPage(listId: string, limit: number, startingAfter?: number): Promise<{ entries: AuditEntry[]; hasMore: boolean } | undefined> {
    return auditPage(this.scope, 'list', listId, limit, startingAfter);
  }
}
