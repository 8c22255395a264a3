// An organization's live data in the database: its recorded transactions with the decisions that
// were answered, their outcomes and every change of them, its history as a process loads it, its
// ring analyses, the figures a performance report reads, its lists and rules, its own fields, its
// webhooks, and its members with their invitations and audit.
// Everything that reads or writes live data goes through `organizationData(db, id)`, whose every
// statement is bound to that one organization: a route holds an `OrganizationData` only after
// deciding who the caller is, and cannot ask it for another organization's rows
// (test/storage/live-store.test.ts and policy-store.test.ts hold every method to that).
//
// This is the one place that binds an organization (organization-scope.ts). The statements live in
// one module per aggregate (transaction-reads.ts, lists-store.ts, …), each taking the scope first;
// here each part is those functions with this scope bound, so a signature is written once, where
// the statement is, and no part can be asked for another organization.

import type { Db } from './db.ts';
import { bindOrganization, type OrganizationScope } from './organization-scope.ts';
import { countLogged, getTransaction, importedBy, listTransactions, loggedDecision, loggedPage, responseBody } from './transaction-reads.ts';
import { insertTransactions } from './transaction-insert.ts';
import { backtestPage, countFeatureless, featuredPage, replayPageText, storeImportedFeatures } from './imported-features.ts';
import { earlierTransactions, entitySummary } from './entity-evidence.ts';
import { loadHistory } from './history-load.ts';
import { snapshotMeta, writeSnapshot } from './history-snapshots.ts';
import { applyOutcomes, outcomeChanges } from './outcome-changes.ts';
import { storedRings, storeRings, windowRows } from './rings-store.ts';
import { labelledScores, scoredFeatures, shadowedTransactions, weeklyAggregates } from './weekly-aggregates.ts';
import { declareField, fieldAudit, getField, listFields, retireField } from './fields-store.ts';
import {
  appendTimeline,
  caseDecisionCounts,
  caseDecisionIds,
  caseTimeline,
  changeCase,
  createInbox,
  getCase,
  inboxMembers,
  joinCases,
  listCases,
  listInboxes,
  membersAmong,
  nextCase,
  wakeCases,
} from './cases-store.ts';
import { announceCases, announceOpened, breachCases, caseRouting, openCase } from './case-events.ts';
import { changeInbox, deleteInbox, getInbox, inboxAudit, inboxStats } from './inboxes-store.ts';
import { escalateCase } from './case-escalation.ts';
import { addAttachment, getAttachment, listAttachments } from './case-attachments.ts';
import { addItems, allStays, createList, deleteList, getList, listItems, listLists, listNames, listsHolding, removeItems } from './lists-store.ts';
import {
  auditExport,
  auditSweep,
  customerAggregates,
  customerCaseIds,
  customerListItems,
  customerWebhookEvents,
  dataProtectionAudit,
  eraseCustomer,
  listErasures,
  requestErasure,
  retentionDays,
  setRetentionDays,
  sweepRingWindows,
  sweepTransactions,
  sweepWebhookEvents,
} from './data-protection.ts';
import { changeRole, getMember, invite, listInvitations, listMembers, memberAuditPage, removeMember, withdrawInvitation } from './members-store.ts';
import { auditOf, auditPage, changeRule, countRules, createRule, deleteRule, listRules, ruleVersions, rulesUsingList } from './rules-store.ts';
import {
  changeEndpoint,
  deleteEndpoint,
  endpointSecrets,
  getDelivery,
  getEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  queueTestEvent,
  redeliver,
  rotateEndpointSecret,
} from './webhooks-store.ts';

// biome-ignore lint/suspicious/noExplicitAny: any statement taking the scope first, whatever else it takes
type Statement = (scope: OrganizationScope, ...args: any[]) => unknown;
/** Statements with the scope bound: each takes what its statement takes after the scope. */
type Bound<T extends Record<string, Statement>> = {
  readonly [K in keyof T]: T[K] extends (scope: OrganizationScope, ...args: infer A) => infer R ? (...args: A) => R : never;
};

function bound<T extends Record<string, Statement>>(scope: OrganizationScope, statements: T): Bound<T> {
  return Object.fromEntries(Object.entries(statements).map(([name, run]) => [name, (...args: unknown[]) => run(scope, ...args)])) as Bound<T>;
}

function parts(scope: OrganizationScope) {
  return {
    /** Recorded transactions: insert, read back, list, an entity's evidence and summary, what an
     *  import stored. */
    transactions: bound(scope, {
      insert: insertTransactions,
      get: getTransaction,
      response: responseBody,
      list: listTransactions,
      earlier: earlierTransactions,
      entity: entitySummary,
      importedBy,
    }),
    /** The history a process keeps, and its stored snapshot. */
    history: bound(scope, {
      load: loadHistory,
      snapshot: (s: OrganizationScope) => snapshotMeta(s.db, s),
      writeSnapshot,
    }),
    /** Imported transactions' point-in-time features: the whole history in time order, how many
     *  imported ones have none yet, and theirs stored; and every transaction with features, scored or
     *  imported, as the organization's training reads them; the imported ones a challenger's
     *  backtest scores, newest first. */
    importedFeatures: bound(scope, {
      pageText: replayPageText,
      featureless: countFeatureless,
      store: storeImportedFeatures,
      featured: featuredPage,
      backtest: backtestPage,
    }),
    /** Logged decisions as rules read them back (rule checks, backtests, an organization's training). */
    decisions: bound(scope, { get: loggedDecision, page: loggedPage, count: countLogged }),
    /** Outcomes set on recorded transactions, and their changes. */
    outcomes: bound(scope, { changes: outcomeChanges, apply: applyOutcomes }),
    /** Ring analyses of weekly windows. */
    rings: bound(scope, { window: windowRows, store: storeRings, stored: storedRings }),
    /** What a performance report reads, per week. */
    performance: bound(scope, { weekly: weeklyAggregates, scoredFeatures, labelledScores, shadowed: shadowedTransactions }),
    lists: bound(scope, {
      create: createList,
      all: listLists,
      named: getList,
      names: listNames,
      holding: listsHolding,
      items: listItems,
      addItems,
      removeItems,
      delete: deleteList,
      stays: allStays,
      auditPage: (s: OrganizationScope, listId: string, limit: number, startingAfter?: number) => auditPage(s, 'list', listId, limit, startingAfter),
    }),
    rules: bound(scope, {
      create: createRule,
      change: changeRule,
      delete: deleteRule,
      all: listRules,
      /** One rule with its matches and errors since `since`; undefined when the organization has none of that id. */
      one: async (s: OrganizationScope, id: string, since: number) => (await listRules(s, since, id))[0],
      versions: ruleVersions,
      usingList: (s: OrganizationScope, listId: string) => rulesUsingList(s.db, s, listId),
      count: countRules,
      audit: (s: OrganizationScope, id: string) => auditOf(s, 'rule', id),
    }),
    /** The organization's own fields: declared, read, retired, audited. */
    fields: bound(scope, { declare: declareField, all: listFields, one: getField, retire: retireField, audit: fieldAudit }),
    /** Inboxes, and the cases decisions open or join in them, with their timelines. */
    cases: bound(scope, {
      createInbox,
      inboxes: listInboxes,
      join: joinCases,
      one: getCase,
      decisionIds: caseDecisionIds,
      decisionCounts: caseDecisionCounts,
      timeline: caseTimeline,
      append: appendTimeline,
      list: listCases,
      membersAmong,
      change: changeCase,
      wake: wakeCases,
      next: nextCase,
      inboxMembers,
    }),
    /** Cases opened on purpose, the SLA sweep, and the case events written with a change. */
    caseEvents: bound(scope, { open: openCase, announce: announceCases, opened: announceOpened, breach: breachCases, routing: caseRouting }),
    /** Inboxes as their owners manage them: one, changed, deleted, audited, and their figures. */
    inboxes: bound(scope, { one: getInbox, change: changeInbox, remove: deleteInbox, audit: inboxAudit, stats: inboxStats }),
    /** A case escalated to its inbox's escalation inbox. */
    escalation: bound(scope, { escalate: escalateCase }),
    /** Files attached to cases. */
    attachments: bound(scope, { add: addAttachment, one: getAttachment, list: listAttachments }),
    /** Webhook endpoints and their deliveries log. */
    webhooks: bound(scope, {
      create: insertEndpoint,
      all: listEndpoints,
      one: getEndpoint,
      change: changeEndpoint,
      rotate: rotateEndpointSecret,
      delete: deleteEndpoint,
      secrets: endpointSecrets,
      deliveries: listDeliveries,
      delivery: getDelivery,
      redeliver,
      sendTest: queueTestEvent,
    }),
    /** Members, pending invitations, and every change of them. */
    members: bound(scope, {
      all: listMembers,
      one: getMember,
      invitations: listInvitations,
      invite,
      withdraw: withdrawInvitation,
      changeRole,
      remove: removeMember,
      auditPage: memberAuditPage,
    }),
    /** Retention, a customer's records for an export, erasures, and their audit. */
    dataProtection: bound(scope, {
      retention: retentionDays,
      setRetention: setRetentionDays,
      audit: dataProtectionAudit,
      auditExport,
      listItems: customerListItems,
      caseIds: customerCaseIds,
      webhookEvents: customerWebhookEvents,
      aggregates: customerAggregates,
      requestErasure,
      erasures: listErasures,
      erase: eraseCustomer,
      sweepTransactions,
      sweepWebhookEvents,
      sweepRingWindows,
      auditSweep,
    }),
  };
}

/** The organization's live data, by aggregate (`data.transactions.get(id)`, `data.lists.create(…)`). */
export type OrganizationData = ReturnType<typeof parts> & { readonly organizationId: string };
export type OrganizationTransactions = OrganizationData['transactions'];
export type OrganizationLists = OrganizationData['lists'];
export type OrganizationRules = OrganizationData['rules'];
export type OrganizationOutcomes = OrganizationData['outcomes'];
export type OrganizationPerformance = OrganizationData['performance'];
export type OrganizationWebhooks = OrganizationData['webhooks'];
export type OrganizationFields = OrganizationData['fields'];
export type OrganizationCases = OrganizationData['cases'];
export type OrganizationMembers = OrganizationData['members'];

export function organizationData(db: Db, organizationId: string): OrganizationData {
  return { organizationId, ...parts(bindOrganization(db, organizationId)) };
}
