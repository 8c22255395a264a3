// Outcomes of an organization's recorded transactions, bound to the organization
// (organization-data.ts makes one for a scope): setting them and reading every change of them back.
// The statements are in outcome-changes.ts.

import type { OutcomeChangeRow } from '../live-rows.ts';
import type { OrganizationScope } from '../organization-scope.ts';
import { applyOutcomes, outcomeChanges, type AppliedOutcome, type OutcomeInput, type OutcomeResult } from '../outcome-changes.ts';
import type { OutboxEvent } from '../webhook-outbox.ts';

export class OrganizationOutcomes {
  constructor(private readonly scope: OrganizationScope) {}

  /** Every outcome change of these transactions (by seq), oldest first (outcome-changes.ts). */
  changes(seqs: readonly number[]): Promise<Map<number, OutcomeChangeRow[]>> {
    return outcomeChanges(this.scope, seqs);
  }

  /** Sets outcomes in one database transaction, in the order given, with the webhook events
   *  `announce` makes of the changes (outcome-changes.ts). */
  apply(
    inputs: readonly OutcomeInput[],
    announce?: (changes: readonly AppliedOutcome[]) => Omit<OutboxEvent, 'organizationId'>[],
  ): Promise<{ results: OutcomeResult[]; xid: number | undefined }> {
    return applyOutcomes(this.scope, inputs, announce);
  }
}
