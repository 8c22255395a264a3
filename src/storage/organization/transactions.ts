// An organization's recorded transactions, bound to it (organization-data.ts makes one for a scope):
// storing them, reading one back with the exact response it was answered, the decision log's
// listing, an entity's earlier transactions and summary, and what one import job stored. The
// statements are in transaction-insert.ts, transaction-reads.ts and entity-evidence.ts; this class
// only hands them its scope, so no caller names the organization per call.

import type { EarlierTransaction, TransactionEntities } from '../../domain/transaction.ts';
import type { Queryable } from '../db.ts';
import { earlierTransactions, entitySummary, type EntitySummary } from '../entity-evidence.ts';
import type { NewTransaction, TransactionRow } from '../live-rows.ts';
import type { OrganizationScope } from '../organization-scope.ts';
import { insertTransactions } from '../transaction-insert.ts';
import { getTransaction, importedBy, listTransactions, responseBody, type ListFilters } from '../transaction-reads.ts';

export class OrganizationTransactions {
  constructor(private readonly scope: OrganizationScope) {}

  /** Stores transactions in one database transaction (`into`, when given: the caller's); an id
   *  the organization already has is left as it is (transaction-insert.ts). */
  insert(rows: readonly NewTransaction[], into: Queryable | undefined = undefined): Promise<Map<string, number>> {
    return insertTransactions(this.scope, rows, into);
  }

  get(transactionId: string): Promise<TransactionRow | undefined> {
    return getTransaction(this.scope, transactionId);
  }

  /** The exact response body answered for a scored transaction (transaction-reads.ts). */
  response(transactionId: string): Promise<string | undefined> {
    return responseBody(this.scope, transactionId);
  }

  /** The decision log's listing, a page after `startingAfter`; undefined for a cursor the
   *  organization does not have (transaction-reads.ts). */
  list(filters: ListFilters, limit: number, startingAfter?: string): Promise<{ rows: TransactionRow[]; hasMore: boolean } | undefined> {
    return listTransactions(this.scope, filters, limit, startingAfter);
  }

  /** Up to `limit` of an entity's transactions before `before`, newest first (entity-evidence.ts). */
  earlier(role: 'customer' | 'merchant' | 'channel', entity: TransactionEntities, before: number, limit: number): Promise<EarlierTransaction[]> {
    return earlierTransactions(this.scope, role, entity, before, limit);
  }

  /** A customer's or merchant's summary; undefined when the organization has none of it (entity-evidence.ts). */
  entity(role: 'customer' | 'merchant', id: string): Promise<EntitySummary | undefined> {
    return entitySummary(this.scope, role, id);
  }

  /** What one import job stored (transaction-reads.ts). */
  importedBy(jobId: string): Promise<{ imported: number; labelled: number; fraud: number; first: number | null; last: number | null }> {
    return importedBy(this.scope, jobId);
  }
}
