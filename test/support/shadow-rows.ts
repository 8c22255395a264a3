// Transactions a challenger scored in shadow, as the challengers' report reads them, for the tests
// that check the report (test/app/challengers.test.ts over the API, test/web/models-challengers.test.ts
// on the Models page): made here once, so both read the same kind of history. About one in ten is a
// fraud, reported an hour after it; the challenger separates fraud from legitimate payments better
// than the model that answered, and either blocks at a score of 0.5.

import { Rng } from '../../src/domain/rng.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';

export interface ShadowRow {
  i: number;
  fraud: boolean;
  /** The answering model's score, and the challenger's. */
  active: number;
  challenger: number;
  /** Epoch ms. */
  time: number;
}

/** `old` payments older than the label delay (an hour apart, going back from it), then `young`
 *  ones younger than it (which the report does not count yet). */
export function shadowRows(o: { seed: number; old: number; young?: number; now: number; labelDelay: number }): ShadowRow[] {
  const rng = new Rng(o.seed);
  return Array.from({ length: o.old + (o.young ?? 0) }, (_, i) => {
    const fraud = rng.uniform() < 0.1;
    const active = (fraud ? 0.3 : 0.05) + 0.3 * rng.uniform();
    const challenger = (fraud ? 0.5 : 0.02) + 0.3 * rng.uniform();
    const time = i < o.old ? o.now - o.labelDelay - (i + 1) * 3_600_000 : o.now - o.labelDelay / 2 - i * 1000;
    return { i, fraud, active, challenger, time };
  });
}

/** The rows as an organization's transactions store takes them: answered by `activeModelId`, and
 *  scored in shadow by `challengerId`. */
export function shadowRecords(rows: readonly ShadowRow[], activeModelId: string, challengerId: string): NewTransaction[] {
  const decision = (score: number) => (score >= 0.5 ? 'block' : 'approve');
  return rows.map((r) => ({
    transaction_id: `old-${r.i}`,
    time: r.time,
    amount: 100,
    customer_id: `c${r.i % 50}`,
    merchant_id: 'M1',
    location: 'Lisbon',
    payment_type: 'card_present',
    source: 'scored',
    decision: { risk_score: r.active, risk_band: 'low', decision: decision(r.active), mode: 'balanced' },
    response: '{}',
    decided: {
      model_id: activeModelId,
      model_decision: decision(r.active),
      rule_action: null,
      rule_ids: [],
      rule_errors: [],
      inputs: { cold: false, channel_scores: {}, priors: { customer: 5, merchant: 5, channel: 5 } },
      challengers: [{ model_id: challengerId, risk_score: r.challenger, decision: decision(r.challenger) }],
    },
    label: r.fraud ? 1 : null,
    label_known_ms: r.fraud ? r.time + 3_600_000 : null,
  }));
}
