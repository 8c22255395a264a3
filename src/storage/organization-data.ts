// An organization's live data in the database: its recorded transactions with the decisions that
// were answered, their outcomes and every change of them, its entities' totals and its ring
// analyses. Everything that reads live data goes through `organizationData(db, id)`, whose every
// statement is bound to that one organization: a route holds an `OrganizationData` only after
// deciding who the caller is, and cannot ask it for another organization's rows
// (test/storage/live-store.test.ts holds every method to that).
//
// This class is the one place that binds an organization (organization-scope.ts); the statements
// live in one module per concern (each method names its own), each taking the scope this class made.

import type { EarlierTransaction, TransactionEntities } from '../domain/transaction.ts';
import type { Ring } from '../domain/rings.ts';
import type { Db, Queryable } from './db.ts';
import type { NewTransaction, OutcomeChangeRow, TransactionRow } from './live-rows.ts';
import { bindOrganization, type OrganizationScope } from './organization-scope.ts';
import { earlierTransactions, entitySummary, type EntitySummary } from './entity-evidence.ts';
import { loadHistory, type HistoryLoader, type Loaded, type PolicyLoader, type SnapshotUse } from './history-load.ts';
import { snapshotMeta, writeSnapshot, type SnapshotMeta } from './history-snapshots.ts';
import { applyOutcomes, outcomeChanges, type OutcomeInput, type OutcomeResult } from './outcome-changes.ts';
import { storedRings, storeRings, windowRows, type WindowRows } from './rings-store.ts';
import { insertTransactions } from './transaction-insert.ts';
import { countLogged, getTransaction, importedBy, loggedDecision, loggedPage, listTransactions, responseBody, type ListFilters } from './transaction-reads.ts';
import * as lists from './lists-store.ts';
import * as rules from './rules-store.ts';
import type { RuleStatus } from './rule-state.ts';
import type { LoggedDecision } from './decision-inputs.ts';
import type { ItemStay, ListKind } from '../domain/rules/lists.ts';
import { labelledScores, scoredFeatures, weeklyAggregates, type WeekAggregate } from './weekly-aggregates.ts';

export function organizationData(db: Db, organizationId: string): OrganizationData {
  return new OrganizationData(db, organizationId);
}

/** The organization's live data; each method's statements are described where they are written. */
export class OrganizationData {
  private readonly scope: OrganizationScope;

  constructor(
    db: Db,
    readonly organizationId: string,
  ) {
    this.scope = bindOrganization(db, organizationId);
  }

  /** Stores transactions in one database transaction (`into`, when given: the caller's); an id
   *  the organization already has is left as it is (transaction-insert.ts). */
  insert(rows: readonly NewTransaction[], into: Queryable | undefined = undefined): Promise<Map<string, number>> {
    return insertTransactions(this.scope, rows, into);
  }

  /** What a process keeps of the organization's history, in one snapshot: from the stored
   *  snapshot of it when `use` allows one, else from the rows (history-load.ts). */
  loadHistory(now: number, into: HistoryLoader, policy?: PolicyLoader, use?: SnapshotUse): Promise<Loaded> {
    return loadHistory(this.scope, now, into, policy, use);
  }

  /** Stores a snapshot of the organization's history as a process holds it (history-snapshots.ts). */
  writeHistorySnapshot(meta: Omit<SnapshotMeta, 'bytes' | 'pieces'>, pieces: readonly Uint8Array[]): Promise<boolean> {
    return writeSnapshot(this.scope, meta, pieces);
  }

  /** What describes the organization's stored snapshot, if it has one (history-snapshots.ts). */
  historySnapshot(): Promise<SnapshotMeta | undefined> {
    return snapshotMeta(this.scope.db, this.scope);
  }

  /** Up to `limit` of an entity's transactions before `before`, newest first (entity-evidence.ts). */
  earlier(role: 'customer' | 'merchant' | 'channel', entity: TransactionEntities, before: number, limit: number): Promise<EarlierTransaction[]> {
    return earlierTransactions(this.scope, role, entity, before, limit);
  }

  /** A customer's or merchant's summary; undefined when the organization has none of it (entity-evidence.ts). */
  entity(role: 'customer' | 'merchant', id: string): Promise<EntitySummary | undefined> {
    return entitySummary(this.scope, role, id);
  }

  get(transactionId: string): Promise<TransactionRow | undefined> {
    return getTransaction(this.scope, transactionId);
  }

  /** A scored transaction as rules read it back; undefined for an unknown or imported id. */
  loggedDecision(transactionId: string): Promise<LoggedDecision | undefined> {
    return loggedDecision(this.scope, transactionId);
  }

  /** A page of scored transactions in [from, to), in time order after `after` (a backtest's). */
  loggedPage(o: { from: number; to: number; after: [number, number] | undefined; withFeatures: boolean }): Promise<LoggedDecision[]> {
    return loggedPage(this.scope, o);
  }

  /** How many scored transactions are in [from, to). */
  countLogged(from: number, to: number): Promise<number> {
    return countLogged(this.scope, from, to);
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

  /** Every outcome change of these transactions (by seq), oldest first (outcome-changes.ts). */
  outcomeChanges(seqs: readonly number[]): Promise<Map<number, OutcomeChangeRow[]>> {
    return outcomeChanges(this.scope, seqs);
  }

  /** Sets outcomes in one database transaction, in the order given (outcome-changes.ts). */
  applyOutcomes(inputs: readonly OutcomeInput[]): Promise<{ results: OutcomeResult[]; xid: number | undefined }> {
    return applyOutcomes(this.scope, inputs);
  }

  /** What one import job stored (transaction-reads.ts). */
  importedBy(jobId: string): Promise<{ imported: number; labelled: number; fraud: number; first: number | null; last: number | null }> {
    return importedBy(this.scope, jobId);
  }

  /** A ring window's transactions, in time order, as text to hand a worker thread as it is
   *  (rings-store.ts). */
  windowRows(from: number, to: number): Promise<{ rows: WindowRows; count: number }> {
    return windowRows(this.scope, from, to);
  }

  /** Stores a window's rings and tells every process (rings-store.ts). */
  storeRings(start: number, rings: readonly Ring[]): Promise<void> {
    return storeRings(this.scope, start, rings);
  }

  /** The rings of the latest `windows` analysed windows (rings-store.ts). */
  storedRings(windows: number): Promise<Ring[]> {
    return storedRings(this.scope, windows);
  }

  /** Scored transactions in [from, to) per `period`-long bucket (weekly-aggregates.ts). */
  weeklyAggregates(from: number, to: number, period: number, quantiles: readonly number[]): Promise<WeekAggregate[]> {
    return weeklyAggregates(this.scope, from, to, period, quantiles);
  }

  /** A bounded sample of the scored transactions' features per bucket (weekly-aggregates.ts). */
  scoredFeatures(from: number, to: number, period: number, strides: readonly number[]): Promise<{ week: number; risk_score: number; decision: string; location: string; payment_type: string; features: Uint8Array }[]> {
    return scoredFeatures(this.scope, from, to, period, strides);
  }

  /** Scores and outcomes of the labelled scored transactions per bucket (weekly-aggregates.ts). */
  labelledScores(from: number, to: number, period: number): Promise<{ week: number; risk_score: number; decision: string; label: 0 | 1 }[]> {
    return labelledScores(this.scope, from, to, period);
  }

  // Lists (lists-store.ts).

  createList(l: { id: string; name: string; kind: ListKind; description: string | null; at: number; by: string }): Promise<lists.ListRow | undefined> {
    return lists.createList(this.scope, l);
  }

  lists(now: number): Promise<lists.ListRow[]> {
    return lists.listLists(this.scope, now);
  }

  listNamed(name: string, now: number): Promise<lists.ListRow | undefined> {
    return lists.getList(this.scope, name, now);
  }

  /** Names of lists by id, deleted ones included. */
  listNames(ids: readonly string[]): Promise<Map<string, string>> {
    return lists.listNames(this.scope, ids);
  }

  listItems(listId: string, o: { now: number; asOf?: number | undefined; after?: string | undefined; limit: number }): Promise<{ items: lists.ItemRow[]; hasMore: boolean }> {
    return lists.listItems(this.scope, listId, o);
  }

  addListItems(listId: string, values: readonly string[], o: { reason: string | null; expiresAt: number | null; at: number; by: string; maxItems: number }): Promise<lists.AddResult | { over: number } | { missing: true }> {
    return lists.addItems(this.scope, listId, values, o);
  }

  removeListItems(listId: string, values: readonly string[], at: number, by: string): Promise<{ removed: number; xid: number }> {
    return lists.removeItems(this.scope, listId, values, at, by);
  }

  /** Deletes a list unless an active or shadow rule uses it (checked in the same transaction). */
  deleteList(listId: string, at: number, by: string): Promise<{ xid: number } | { inUse: string[] } | undefined> {
    return lists.deleteList(this.scope, listId, at, by);
  }

  /** Every stay ever on these lists (backtests read the lists as they were). */
  listStays(listIds: readonly string[], onPage: (stays: ItemStay[]) => void): Promise<void> {
    return lists.allStays(this.scope, listIds, onPage);
  }

  // Rules (rules-store.ts).

  createRule(r: { id: string; name: string; status: RuleStatus; version: rules.VersionInput; at: number; by: string }): Promise<{ xid: number } | 'taken' | rules.ListsGone> {
    return rules.createRule(this.scope, r);
  }

  changeRule(id: string, c: rules.RuleChange, at: number, by: string): Promise<{ xid: number } | 'taken' | rules.ListsGone | undefined> {
    return rules.changeRule(this.scope, id, c, at, by);
  }

  deleteRule(id: string, at: number, by: string): Promise<{ xid: number } | undefined> {
    return rules.deleteRule(this.scope, id, at, by);
  }

  /** The rules (or one) with their matches and errors since `since`. */
  rules(since: number, id?: string): Promise<rules.RuleRow[]> {
    return rules.listRules(this.scope, since, id);
  }

  ruleVersions(id: string): Promise<rules.VersionRow[]> {
    return rules.ruleVersions(this.scope, id);
  }

  rulesUsingList(listId: string): Promise<string[]> {
    return rules.rulesUsingList(this.scope.db, this.scope, listId);
  }

  countRules(): Promise<number> {
    return rules.countRules(this.scope);
  }

  /** Every recorded change of a rule or a list, oldest first. */
  audit(subject: 'rule' | 'list', id: string): Promise<rules.AuditRow[]> {
    return rules.auditOf(this.scope, subject, id);
  }

  /** A page of a rule's or a list's recorded changes, newest first, after the change numbered
   *  `startingAfter`; undefined for a number that is not one of its changes. */
  auditPage(subject: 'rule' | 'list', id: string, limit: number, startingAfter?: number): Promise<{ entries: rules.AuditEntry[]; hasMore: boolean } | undefined> {
    return rules.auditPage(this.scope, subject, id, limit, startingAfter);
  }
}
