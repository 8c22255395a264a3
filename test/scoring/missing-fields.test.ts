// Optional fields left out: an established customer's ordinary payment keeps its decision when
// its location and payment type are not given (they are recorded as "unknown", which the model was
// trained to see on a share of payments of every kind, so a missing value is not itself evidence of
// fraud). Fifty payments of customers with at least twenty earlier payments, each scored against the
// same history with and without the two fields, in every mode: at least 90 % keep their decision,
// and none goes from approve to block.

import t from 'tap';
import { History } from '../../src/domain/history/history.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem, MODE_NAMES } from '../../src/model/bundle-types.ts';
import { RingIndex, Scorer } from '../../src/scoring/scorer.ts';
import { simulate } from '../../src/domain/simulate.ts';

const bundle = loadModelFolder('models/builtin');
if (isProblem(bundle)) throw new Error(bundle.message);

t.test("an established customer's ordinary payment keeps its decision without location and payment type", async (t) => {
  const rows = simulate();
  const [from] = (bundle.file.training as unknown as { split_bounds: { test: [number, number] } }).split_bounds.test;
  const history = new History(bundle.file.training.label_delay_ms);
  let next = 0;
  while (rows[next]!.time < from) history.add(rows[next++]!);
  // The first fifty ordinary (legitimate, no fraud scenario) payments of the test weeks whose
  // customer had at least twenty earlier payments, one per customer.
  const chosen = [];
  const customers = new Set<string>();
  for (let i = next; i < rows.length && chosen.length < 50; i++) {
    const r = rows[i]!;
    if (r.label !== 0 || r.scenario !== '' || customers.has(r.customer_id) || history.priors(r).customer < 20) continue;
    customers.add(r.customer_id);
    chosen.push(r);
  }
  t.equal(chosen.length, 50);
  const scorer = new Scorer({ bundle });
  const context = { history, rings: new RingIndex([]) };
  for (const mode of MODE_NAMES) {
    let kept = 0;
    const worse: string[] = [];
    for (const r of chosen) {
      const base = { amount: r.amount, customer_id: r.customer_id, merchant_id: r.merchant_id, mode, explain: false };
      const full = scorer.score({ ...base, location: r.location, payment_type: r.payment_type }, { ...context, at: r.time });
      const bare = scorer.score(base, { ...context, at: r.time });
      if (full.decision === bare.decision) kept++;
      if (process.env.SHOW) console.log(mode, full.risk_score.toFixed(5), bare.risk_score.toFixed(5), full.decision, bare.decision);
      if (full.decision === 'approve' && bare.decision === 'block')
        worse.push(`${r.transaction_id}: ${full.risk_score.toFixed(4)} → ${bare.risk_score.toFixed(4)}`);
    }
    t.ok(kept >= 45, `${mode}: ${kept} of 50 keep their decision`);
    t.same(worse, [], `${mode}: none goes from approve to block`);
  }
});
