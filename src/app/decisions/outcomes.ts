// Outcomes reported on an organization's transactions (fraud or legitimate, with a source and the
// time it was known), from an API key or a member in the dashboard. The database applies them first
// (every change kept, in one statement per batch, in the live feed's order); every process's live
// tail then files each label under its `reported_at` in that organization's history, so later
// transactions' graph features and evidence see it from then on, in that organization only. The
// reporting process waits until its tail has applied the change before answering, so its own next
// request sees it.

import type { OrganizationOutcomes } from '../../storage/organization-data.ts';
import type { AppliedOutcome, OutcomeResult } from '../../storage/outcome-changes.ts';
import type { OutcomeEvent } from '../../contract/webhooks.ts';
import type { DecisionLog } from '../../live/decision-log.ts';
import type { LiveTail } from '../../live/tail.ts';

export const OUTCOME_SOURCES = ['chargeback', 'review', 'customer_report', 'other'] as const;

export interface OutcomeReport {
  transaction_id: string;
  outcome: 'fraud' | 'legit';
  source?: (typeof OUTCOME_SOURCES)[number] | undefined;
  /** Epoch ms; default now. */
  reported_at?: number | undefined;
}

const label = (l: 0 | 1 | null) => (l === null ? null : l === 1 ? 'fraud' : 'legit');

/** The webhook events of changed outcomes: `outcome.recorded` for each, from any surface; and
 *  `review.decided` for an analyst's verdict, an outcome a member (not a key) reported with the
 *  source `review`. A report that changes nothing is no event. */
export function announceOutcomes(changes: readonly AppliedOutcome[]): { type: 'outcome.recorded' | 'review.decided'; payload: OutcomeEvent }[] {
  return changes.flatMap((c) => {
    const payload: OutcomeEvent = {
      transaction_id: c.transaction_id,
      outcome: label(c.to_label)!,
      previous_outcome: label(c.from_label),
      source: c.source,
      reported_at: new Date(c.reported_at_ms).toISOString(),
      reported_by: c.reported_by,
    };
    const verdict = c.source === 'review' && !c.reported_by.startsWith('key:');
    return [{ type: 'outcome.recorded' as const, payload }, ...(verdict ? [{ type: 'review.decided' as const, payload }] : [])];
  });
}

/** Applies reports in order; a report whose `reported_at` is in the future is `invalid` and
 *  changes nothing. `reportedBy`: a user id, or `key:<api key id>`. */
export async function reportOutcomes(
  log: DecisionLog,
  tail: LiveTail,
  outcomes: OrganizationOutcomes,
  reports: readonly OutcomeReport[],
  reportedBy: string,
  now: number,
): Promise<OutcomeResult[]> {
  // Transactions answered a moment ago may not be stored yet.
  await log.flush();
  const results: (OutcomeResult | undefined)[] = reports.map((r) =>
    r.reported_at !== undefined && r.reported_at > now
      ? { transaction_id: r.transaction_id, status: 'invalid' as const, message: `reported_at ${new Date(r.reported_at).toISOString()} is in the future.` }
      : undefined,
  );
  const valid = reports.filter((_, i) => results[i] === undefined);
  const { results: applied, xid } = await outcomes.apply(
    valid.map((r) => ({
      transaction_id: r.transaction_id,
      label: r.outcome === 'fraud' ? 1 : 0,
      source: r.source ?? 'other',
      reported_at_ms: r.reported_at ?? now,
      reported_by: reportedBy,
    })),
    announceOutcomes,
  );
  if (xid !== undefined) await tail.reach(xid);
  let next = 0;
  return results.map((r) => r ?? applied[next++]!);
}
