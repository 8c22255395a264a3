// An organization's logged decisions as rules read them back (what each scored transaction's
// decision saw: decision-inputs.ts), bound to the organization (organization-data.ts makes one for
// a scope): one for checking a rule on it, and pages and counts of a period for a backtest. The
// statements are in transaction-reads.ts.

import type { LoggedDecision } from '../decision-inputs.ts';
import type { OrganizationScope } from '../organization-scope.ts';
import { countLogged, loggedDecision, loggedPage } from '../transaction-reads.ts';

export class OrganizationDecisions {
  constructor(private readonly scope: OrganizationScope) {}

  /** A scored transaction as rules read it back; undefined for an unknown or imported id. */
  get(transactionId: string): Promise<LoggedDecision | undefined> {
    return loggedDecision(this.scope, transactionId);
  }

  /** A page of scored transactions in [from, to), in time order after `after` (a backtest's). */
  page(o: { from: number; to: number; after: [number, number] | undefined; withFeatures: boolean }): Promise<LoggedDecision[]> {
    return loggedPage(this.scope, o);
  }

  /** How many scored transactions are in [from, to). */
  count(from: number, to: number): Promise<number> {
    return countLogged(this.scope, from, to);
  }
}
