// An organization's live data in the database: its recorded transactions with the decisions that
// were answered, their outcomes and every change of them, its history as a process loads it, its
// ring analyses, the figures a performance report reads, its lists and rules, and its webhooks. Everything that
// reads or writes live data goes through `organizationData(db, id)`, whose every statement is bound
// to that one organization: a route holds an `OrganizationData` only after deciding who the caller
// is, and cannot ask it for another organization's rows (test/storage/live-store.test.ts and
// policy-store.test.ts hold every method to that).
//
// This is the one place that binds an organization (organization-scope.ts). Its parts are one
// class per aggregate (organization/*.ts), each made here with that same scope and none able to
// make another, so whichever part a caller reads, it reads this organization only.

import type { Db } from './db.ts';
import { bindOrganization } from './organization-scope.ts';
import { OrganizationDecisions } from './organization/decisions.ts';
import { OrganizationHistory } from './organization/history.ts';
import { OrganizationLists } from './organization/lists.ts';
import { OrganizationOutcomes } from './organization/outcomes.ts';
import { OrganizationPerformance } from './organization/performance.ts';
import { OrganizationRings } from './organization/rings.ts';
import { OrganizationRules } from './organization/rules.ts';
import { OrganizationTransactions } from './organization/transactions.ts';
import { OrganizationWebhooks } from './organization/webhooks.ts';

export function organizationData(db: Db, organizationId: string): OrganizationData {
  return new OrganizationData(db, organizationId);
}

/** The organization's live data, by aggregate; each part's statements are described where they are written. */
export class OrganizationData {
  /** Recorded transactions: insert, read back, list, an entity's evidence and summary. */
  readonly transactions: OrganizationTransactions;
  /** The history a process keeps, and its stored snapshot. */
  readonly history: OrganizationHistory;
  /** Logged decisions as rules read them back (rule checks, backtests). */
  readonly decisions: OrganizationDecisions;
  /** Outcomes set on recorded transactions, and their changes. */
  readonly outcomes: OrganizationOutcomes;
  /** Ring analyses of weekly windows. */
  readonly rings: OrganizationRings;
  /** What a performance report reads, per week. */
  readonly performance: OrganizationPerformance;
  readonly lists: OrganizationLists;
  readonly rules: OrganizationRules;
  /** Webhook endpoints and their deliveries log. */
  readonly webhooks: OrganizationWebhooks;

  constructor(
    db: Db,
    readonly organizationId: string,
  ) {
    const scope = bindOrganization(db, organizationId);
    this.transactions = new OrganizationTransactions(scope);
    this.history = new OrganizationHistory(scope);
    this.decisions = new OrganizationDecisions(scope);
    this.outcomes = new OrganizationOutcomes(scope);
    this.rings = new OrganizationRings(scope);
    this.performance = new OrganizationPerformance(scope);
    this.lists = new OrganizationLists(scope);
    this.rules = new OrganizationRules(scope);
    this.webhooks = new OrganizationWebhooks(scope);
  }
}
