// Mode thresholds follow their definitions (src/training/thresholds.ts) on a small worked example.

import t from 'tap';
import { checkThreshold, chooseThresholds } from '../../src/training/thresholds.ts';

// Scores descending with labels: 0.9:1 0.8:1 0.7:0 0.6:1 0.5:0 0.4:1 0.3:0 0.2:0 0.1:1 0.05:0
const scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05];
const labels = [1, 1, 0, 1, 0, 1, 0, 0, 1, 0];

t.test('thresholds per mode', async (t) => {
  const m = chooseThresholds(scores, labels, 1);
  // precision at ≥0.9: 1, ≥0.8: 1, ≥0.7: .67, ≥0.6: .75, ≥0.5: .6, ≥0.4: .67 ...
  t.equal(m.high_precision.block, 0.8, 'lowest score with precision >= 0.95');
  t.equal(m.high_precision.review, 0.8, 'lowest score with precision >= 0.80');
  // recall (5 positives) at ≥0.6: .6, ≥0.4: .8, ≥0.1: 1
  t.equal(m.high_recall.block, 0.4, 'highest score keeping recall >= 0.80');
  t.equal(m.high_recall.review, 0.1, 'highest score keeping recall >= 0.95');
  // F1: ≥0.8: .571, ≥0.6: .667, ≥0.4: .727, ≥0.1: .667 → 0.4
  t.equal(m.balanced.block, 0.4, 'maximum F1');
  t.ok(m.balanced.review <= m.balanced.block, 'review never above block');
});

t.test('a review threshold flags at most the review budget of the rows', async (t) => {
  // Recall 0.95 alone would review from 0.1: nine rows of ten.
  const wide = chooseThresholds(scores, labels, 0.8);
  t.equal(wide.high_recall.review, 0.2, 'a budget of 80 %: from 0.2, the eighth row');
  // With 40 %, no lower than 0.6 (the fourth row), and never above block (0.4).
  const m = chooseThresholds(scores, labels, 0.4);
  t.equal(m.high_recall.review, 0.4);
  t.equal(m.high_recall.block, 0.4);
  const c = checkThreshold(scores, labels, { ...m.high_recall, review: 0.1 });
  t.equal(c.review_rate, 0.9, 'the share at or above review');
  t.equal(c.block_rate, 0.6);
  t.equal(c.fraud_caught_per_1000, 400, 'four frauds blocked in ten rows');
  t.match(c.warning, /90\.0 % of transactions to review or block, over 10 %/, 'a review rate over 10 % says so');
  t.equal(checkThreshold(scores, labels, m.balanced).warning === null, checkThreshold(scores, labels, m.balanced).review_rate <= 0.1);
});

t.test('target checks on other data', async (t) => {
  const m = chooseThresholds(scores, labels, 1);
  const hold = checkThreshold(scores, labels, m.high_recall);
  t.equal(hold.recall, 0.8);
  t.equal(hold.meets_target, true);
  const miss = checkThreshold([0.9, 0.85, 0.3], [0, 1, 1], m.high_precision);
  t.equal(miss.precision, 0.5);
  t.equal(miss.meets_target, false, 'precision target not met on this data');
  t.equal(miss.measured, 0.5);
  const balanced = checkThreshold(scores, labels, m.balanced);
  t.equal(balanced.measured, 1, 'on its own validation data the F1-maximising threshold is the best');
});
