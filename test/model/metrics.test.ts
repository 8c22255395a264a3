// Metrics against values worked out by hand (and matching scikit-learn's definitions).

import t from 'tap';
import { averagePrecision, brier, descendingCurve, expectedCalibrationError, logLoss, rocAuc } from '../../src/model/metrics.ts';
import { Rng } from '../../src/domain/rng.ts';

t.test('ROC AUC', async (t) => {
  t.equal(rocAuc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]), 0.75);
  t.equal(rocAuc([1, 2, 3], [0, 1, 1]), 1);
  t.equal(rocAuc([0.5, 0.5], [0, 1]), 0.5, 'a tie counts one half');
  t.ok(Number.isNaN(rocAuc([1, 2], [1, 1])), 'one class: undefined');
});

t.test('average precision', async (t) => {
  // sklearn: average_precision_score([0,0,1,1], [0.1,0.4,0.35,0.8]) = 0.8333…
  t.ok(Math.abs(averagePrecision([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) - 5 / 6) < 1e-12);
  t.equal(averagePrecision([3, 2, 1], [1, 1, 0]), 1);
});

t.test('probability metrics', async (t) => {
  t.equal(brier([1, 0], [1, 0]), 0);
  t.equal(brier([0.5, 0.5], [1, 0]), 0.25);
  t.ok(Math.abs(logLoss([0.5, 0.5], [1, 0]) - Math.log(2)) < 1e-12);
  t.ok(Math.abs(expectedCalibrationError([0.05, 0.05, 0.95, 0.95], [0, 0, 1, 1]) - 0.05) < 1e-12);
  t.equal(expectedCalibrationError([0.5, 0.5], [1, 0]), 0, 'well calibrated on average within a bin');
});

// The definitions written plainly: rows sorted by score, ranks averaged over ties.
function plainAuc(scores: number[], labels: number[]): number {
  const idx = scores.map((_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  let positives = 0;
  let rankSum = 0;
  for (let i = 0; i < idx.length; ) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]!] === scores[idx[i]!]) j++;
    for (let k = i; k <= j; k++)
      if (labels[idx[k]!] === 1) {
        positives++;
        rankSum += (i + j) / 2 + 1;
      }
    i = j + 1;
  }
  const negatives = idx.length - positives;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}
function plainCurve(scores: number[], labels: number[]) {
  const distinct = [...new Set(scores)].sort((a, b) => b - a);
  return distinct.map((s) => ({
    threshold: s,
    tp: scores.filter((x, i) => x >= s && labels[i] === 1).length,
    fp: scores.filter((x, i) => x >= s && labels[i] !== 1).length,
  }));
}

t.test('ROC AUC and the curve agree exactly with the plain definitions, ties and all', async (t) => {
  const rng = new Rng(3);
  for (const [n, levels] of [
    [500, 7],
    [2000, 1e9],
    [3000, 40],
  ] as const) {
    // Scores on a few levels (many ties, as the cold-start floor makes) or nearly all distinct.
    const scores = Array.from({ length: n }, () => Math.floor(rng.uniform() * levels) / levels);
    const labels = scores.map((s) => (rng.uniform() < 0.2 + s * 0.5 ? 1 : 0));
    t.equal(rocAuc(scores, labels), plainAuc(scores, labels), `AUC, ${n} rows on ${levels} levels`);
    t.same(descendingCurve(scores, labels).points, plainCurve(scores, labels), `curve, ${n} rows on ${levels} levels`);
  }
  t.same(
    descendingCurve([0.2, 0.9, 0.2], [1, 0, 2]),
    {
      points: [
        { threshold: 0.9, tp: 0, fp: 1 },
        { threshold: 0.2, tp: 1, fp: 2 },
      ],
      positives: 1,
    },
    'any label other than 1 is a negative',
  );
});
