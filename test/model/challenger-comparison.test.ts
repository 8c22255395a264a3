// The comparison of a challenger with the active model (model/challenger-comparison.ts), held to a
// recount: every figure equals what metrics.ts (and the handbook's card precision) computes on the
// same rows, each interval holds its figure, decisions changed and money at stake are the plain
// counts and sums; the verdict follows the intervals (a recalibrated challenger, identical ranking,
// is "better" on calibration alone; the reverse is "worse"; the same model is "no_difference");
// the same rows give the same report, in this thread or in a worker thread sent them as columns.

import t from 'tap';
import { compareModels, shadowedColumns, shadowedRows, type ShadowedRow } from '../../src/model/challenger-comparison.ts';
import { WorkerPool } from '../../src/jobs/worker-pool.ts';
import { averagePrecision, expectedCalibrationError, rocAuc } from '../../src/model/metrics.ts';
import { Rng } from '../../src/domain/rng.ts';
import { cardPrecisionAtK } from '../../src/training/handbook-protocol.ts';

const DAY = 86_400_000;

function rows(seed: number, n: number, challengerOf: (active: number, fraud: boolean, rng: Rng) => number): ShadowedRow[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const fraud = rng.uniform() < 0.05;
    const active = Math.min(0.999, Math.max(0.001, (fraud ? 0.35 : 0.05) + 0.2 * rng.uniform()));
    const challenger = challengerOf(active, fraud, rng);
    const decide = (s: number) => (s >= 0.4 ? 'block' : s >= 0.2 ? 'review' : 'approve');
    return {
      time: 1_760_000_000_000 + Math.floor(i / 40) * DAY + i,
      amount: 10 + (i % 97),
      card: `c${i % 300}`,
      label: fraud ? 1 : 0,
      active: { score: active, decision: decide(active) },
      challenger: { score: challenger, decision: decide(challenger) },
    };
  });
}

t.test('every figure against a recount', async (t) => {
  const data = rows(7, 4000, (a, _fraud, rng) => Math.min(0.999, Math.max(0.001, a + 0.05 * (rng.uniform() - 0.5))));
  const r = compareModels(data, { resamples: 200 });
  const labels = data.map((d) => d.label);
  const a = data.map((d) => d.active.score);
  const c = data.map((d) => d.challenger.score);
  t.equal(r.transactions, 4000);
  t.equal(r.frauds, labels.filter((l) => l === 1).length);
  t.ok(Math.abs(r.average_precision!.active.value - averagePrecision(a, labels)) < 1e-12);
  t.ok(Math.abs(r.average_precision!.challenger.value - averagePrecision(c, labels)) < 1e-12);
  t.ok(Math.abs(r.roc_auc!.challenger.value - rocAuc(c, labels)) < 1e-12);
  t.ok(Math.abs(r.calibration_error.active.value - expectedCalibrationError(a, labels)) < 1e-12);
  const days = data.map((d) => Math.floor(d.time / DAY));
  const cards = data.map((d) => d.card);
  t.ok(
    Math.abs(r.card_precision_at_k!.challenger.value - cardPrecisionAtK(cards, days, c, labels, 100).mean) < 1e-12,
    'card precision@100 as the handbook counts it',
  );
  const changed = data.filter((d) => d.active.decision !== d.challenger.decision);
  t.equal(r.decisions_changed.count, changed.length);
  t.equal(
    Object.values(r.decisions_changed.by_change).reduce((x, y) => x + y, 0),
    changed.length,
  );
  const blocked = (side: 'active' | 'challenger', label: 0 | 1) =>
    data.filter((d) => d.label === label && d[side].decision === 'block').reduce((s, d) => s + d.amount, 0);
  t.equal(r.money.fraud_blocked.challenger.value, blocked('challenger', 1));
  t.equal(r.money.legit_blocked.active.value, blocked('active', 0));
  for (const f of [r.average_precision!, r.roc_auc!, r.card_precision_at_k!, r.calibration_error, r.money.fraud_blocked]) {
    for (const side of [f.active, f.challenger, f.difference])
      t.ok(side.low <= side.value + 1e-12 && side.value <= side.high + 1e-12, 'the interval holds its figure');
  }
  t.same(compareModels(data, { resamples: 200 }), r, 'the same rows, the same report');
});

t.test('the verdict follows the intervals, never a point estimate', async (t) => {
  // The active model's scores are half of calibrated ones; the challenger's are calibrated: the
  // same ranking (AUC and AP equal), a better calibration.
  const calibrated = rows(11, 6000, () => 0).map((d) => {
    const p = d.label === 1 ? 0.6 : 0.02;
    return { ...d, challenger: { score: p, decision: d.active.decision }, active: { score: p / 2, decision: d.active.decision } };
  });
  const better = compareModels(calibrated, { resamples: 300 });
  t.equal(better.verdict, 'better');
  t.equal(better.roc_auc!.favours, null, 'the same ranking: no difference in AUC');
  t.equal(better.calibration_error.favours, 'challenger');
  t.match(better.evidence, [/^better calibration error -/]);
  const swapped = calibrated.map((d) => ({ ...d, active: d.challenger, challenger: d.active }));
  t.equal(compareModels(swapped, { resamples: 300 }).verdict, 'worse');
  const same = calibrated.map((d) => ({ ...d, challenger: d.active }));
  const none = compareModels(same, { resamples: 300 });
  t.equal(none.verdict, 'no_difference');
  t.match(none.evidence, [/^no figure differs beyond its 95 % interval over 6000 transactions/]);
  const small = compareModels(calibrated.slice(0, 40), { resamples: 300 });
  t.not(small.verdict, 'worse', 'a few rows never turn a better model worse');
});

// The challengers' report compares in a worker thread (jobs/worker-pool.ts), which is sent the rows
// as columns: the comparison there is the one made here, to the last digit.
t.test('a comparison in a worker thread, sent as columns, is the one made in this thread', async (t) => {
  const sample = rows(11, 3_000, (active, fraud, rng) => Math.min(0.999, active + (fraud ? 0.05 : -0.01) + 0.02 * rng.uniform()));
  t.same(shadowedRows(shadowedColumns(sample)), sample, 'the columns give back the rows');
  const pool = new WorkerPool('models/builtin', 1);
  t.teardown(() => pool.destroy());
  t.same(await pool.compare(sample), compareModels(sample), 'the overall comparison');
  t.same(await pool.compare(sample, { resamples: 200 }), compareModels(sample, { resamples: 200 }), "and a week's, with its options");
});
