// Metrics against values worked out by hand (and matching scikit-learn's definitions).

import t from 'tap';
import { averagePrecision, brier, expectedCalibrationError, logLoss, rocAuc } from '../../src/training/metrics.ts';

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
