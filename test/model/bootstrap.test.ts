// The seeded percentile bootstrap: the weighted statistics agree with metrics.ts on the sample and
// on an explicitly repeated resample, the same seed gives the same interval, 95 % intervals cover a
// known value about 95 % of the time, and the paired difference of two models is exact and narrower
// than the two separate intervals.

import t from 'tap';
import {
  averagePrecisionStatistic,
  bootstrap,
  bootstrapAll,
  byGroup,
  cardPrecisionStatistic,
  groupIds,
  pairedBootstrap,
  rocAucStatistic,
  type Statistic,
} from '../../src/model/bootstrap.ts';
import { cardPrecisionAtK } from '../../src/training/handbook-protocol.ts';
import { averagePrecision, rocAuc } from '../../src/model/metrics.ts';
import { Rng } from '../../src/domain/rng.ts';

/** Scores of n rows, positives shifted by `d` standard deviations; some scores rounded to tie. */
function sample(seed: number, n: number, rate: number, d: number, round = false) {
  const rng = new Rng(seed);
  const labels = Float64Array.from({ length: n }, () => (rng.uniform() < rate ? 1 : 0));
  const scores = Float64Array.from(labels, (y) => {
    const s = rng.normal() + d * y;
    return round ? Math.round(s * 4) / 4 : s;
  });
  return { scores, labels };
}

const mean =
  (x: Float64Array): Statistic =>
  (w) => {
    let s = 0;
    let n = 0;
    for (let i = 0; i < x.length; i++) {
      s += w[i]! * x[i]!;
      n += w[i]!;
    }
    return s / n;
  };

t.test('the weighted statistics are the metrics on the sample and on a repeated resample', async (t) => {
  const { scores, labels } = sample(1, 400, 0.1, 1, true);
  const auc = rocAucStatistic(scores, labels);
  const ap = averagePrecisionStatistic(scores, labels);
  const ones = new Uint32Array(400).fill(1);
  t.ok(Math.abs(auc(ones) - rocAuc(scores, labels)) < 1e-12, 'AUC on the sample');
  t.ok(Math.abs(ap(ones) - averagePrecision(scores, labels)) < 1e-12, 'AP on the sample');
  const rng = new Rng(9);
  for (let r = 0; r < 5; r++) {
    const w = new Uint32Array(400);
    for (let i = 0; i < 400; i++) w[rng.below(400)]!++;
    const s: number[] = [];
    const y: number[] = [];
    w.forEach((m, i) => {
      for (let k = 0; k < m; k++) {
        s.push(scores[i]!);
        y.push(labels[i]!);
      }
    });
    t.ok(Math.abs(auc(w) - rocAuc(s, y)) < 1e-12, `AUC on resample ${r}`);
    t.ok(Math.abs(ap(w) - averagePrecision(s, y)) < 1e-12, `AP on resample ${r}`);
  }
});

t.test('card precision@k resamples cards, and on the sample is cardPrecisionAtK', async (t) => {
  const rng = new Rng(4);
  const n = 600;
  const cards = Array.from({ length: n }, () => `c${String(rng.below(90)).padStart(2, '0')}`);
  const days = Array.from({ length: n }, () => rng.below(3));
  const scores = Array.from({ length: n }, () => Math.round(rng.uniform() * 20) / 20);
  const labels = scores.map((s) => (rng.uniform() < s / 2 ? 1 : 0));
  const cp = cardPrecisionStatistic(cards, days, scores, labels, 10);
  t.equal(cp.units, new Set(cards).size);
  t.equal(cp.statistic(new Uint32Array(cp.units).fill(1)), cardPrecisionAtK(cards, days, scores, labels, 10).mean);
  // A resample: every drawn card's rows repeated under a distinct id per copy (ids keep their order).
  const { groupOf } = groupIds(cards);
  const w = new Uint32Array(cp.units);
  for (let i = 0; i < cp.units; i++) w[rng.below(cp.units)]!++;
  const c: string[] = [];
  const d: number[] = [];
  const s: number[] = [];
  const y: number[] = [];
  cards.forEach((card, i) => {
    for (let k = 0; k < w[groupOf[i]!]!; k++) {
      c.push(`${card}#${k}`);
      d.push(days[i]!);
      s.push(scores[i]!);
      y.push(labels[i]!);
    }
  });
  t.equal(cp.statistic(w), cardPrecisionAtK(c, d, s, y, 10).mean, 'a card drawn m times fills m places');
});

t.test('deterministic for a seed', async (t) => {
  const { scores, labels } = sample(2, 500, 0.05, 1.5);
  const auc = rocAucStatistic(scores, labels);
  const a = bootstrap(500, auc, { resamples: 200, seed: 3 });
  t.same(bootstrap(500, auc, { resamples: 200, seed: 3 }), a);
  t.not(bootstrap(500, auc, { resamples: 200, seed: 4 }).low, a.low);
  t.equal(a.value, rocAuc(scores, labels));
  t.ok(a.low < a.value && a.value < a.high, `${a.low} < ${a.value} < ${a.high}`);
});

t.test('95 % intervals cover the true value about 95 % of the time', async (t) => {
  // The mean of 100 standard normal draws, 300 times: the interval should hold 0 in ~95 % of them.
  let covered = 0;
  const trials = 300;
  for (let k = 0; k < trials; k++) {
    const rng = new Rng(1000 + k);
    const x = Float64Array.from({ length: 100 }, () => rng.normal());
    const r = bootstrap(100, mean(x), { resamples: 300, seed: k });
    if (r.low <= 0 && 0 <= r.high) covered++;
  }
  t.ok(covered / trials > 0.9 && covered / trials < 0.99, `mean: ${covered} of ${trials}`);
  // ROC AUC of a binormal sample: positives shifted by d, true AUC Φ(d/√2) = Φ(1) for d = √2.
  const truth = 0.8413447460685429;
  covered = 0;
  const aucTrials = 150;
  for (let k = 0; k < aucTrials; k++) {
    const { scores, labels } = sample(5000 + k, 300, 0.3, Math.SQRT2);
    const r = bootstrap(300, rocAucStatistic(scores, labels), { resamples: 300, seed: k });
    if (r.low <= truth && truth <= r.high) covered++;
  }
  t.ok(covered / aucTrials > 0.88 && covered / aucTrials < 0.99, `AUC: ${covered} of ${aucTrials}`);
});

t.test('the paired difference of two models on the same resamples', async (t) => {
  const { scores, labels } = sample(6, 2000, 0.05, 1.2);
  const rng = new Rng(8);
  // A second model: the first one plus a little noise, so the two are strongly correlated.
  const other = scores.map((s) => s + 0.3 * rng.normal());
  const a = averagePrecisionStatistic(scores, labels);
  const b = averagePrecisionStatistic(other, labels);
  const p = pairedBootstrap(2000, a, b, { resamples: 300 });
  t.ok(Math.abs(p.difference.value - (p.a.value - p.b.value)) < 1e-15, 'difference of the values');
  t.same([p.a, p.b], bootstrapAll(2000, [a, b], { resamples: 300 }), 'the same resamples as bootstrapAll');
  const paired = p.difference.high - p.difference.low;
  const separate = p.a.high - p.a.low + (p.b.high - p.b.low);
  t.ok(paired < separate / 2, `paired width ${paired.toFixed(3)} against ${separate.toFixed(3)} from the separate intervals`);
  const self = pairedBootstrap(2000, a, a, { resamples: 50 });
  t.same([self.difference.low, self.difference.value, self.difference.high], [0, 0, 0], 'a model against itself: exactly 0');
});

t.test('byGroup resamples rows by group', async (t) => {
  const x = Float64Array.from([1, 1, 1, 5]);
  const groupOf = [0, 0, 0, 1];
  const s = byGroup(groupOf, mean(x));
  t.equal(s(Uint32Array.from([1, 1])), 2, 'the sample: (1 + 1 + 1 + 5) / 4');
  t.equal(s(Uint32Array.from([0, 2])), 5, 'group 1 twice');
  t.equal(s(Uint32Array.from([2, 0])), 1, 'group 0 twice');
});

t.test('bad arguments are refused', async (t) => {
  const x = Float64Array.from([1, 2]);
  t.throws(() => bootstrap(0, mean(x)), /0 units/);
  t.throws(() => bootstrap(2, mean(x), { resamples: 0 }), /0 resamples/);
  t.throws(() => bootstrap(2, mean(x), { level: 1 }), /level 1/);
});
