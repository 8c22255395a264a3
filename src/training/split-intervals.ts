// The 95 % bootstrap intervals of a split's headline figures (ROC AUC, average precision, recall at
// 1 % false-positive rate, expected calibration error) for metrics.json, and of the stack's gap to
// the single-booster ablation on the same test rows (paired: both are scored on each resample, so
// the interval is of the difference itself). Rows are the resampled units; the weighted statistics
// are bootstrap.ts's. An interval says how much the sample of rows moves a figure, not how much
// another period or another seed would.

import {
  averagePrecisionStatistic,
  bootstrapAll,
  calibrationErrorStatistic,
  pairedBootstrap,
  recallAtFprStatistic,
  rocAucStatistic,
  type Interval,
} from '../model/bootstrap.ts';

const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
const pair = (i: Interval) => [round(i.low), round(i.high)];

/** The headline figures' 95 % intervals on one split: `{ roc_auc: [low, high], … }`. */
export function splitIntervals(probabilities: ArrayLike<number>, labels: ArrayLike<number>, seed: number): Record<string, (number | null)[]> {
  const names = ['roc_auc', 'average_precision', 'recall_at_1pct_fpr', 'expected_calibration_error'];
  const intervals = bootstrapAll(
    labels.length,
    [
      rocAucStatistic(probabilities, labels),
      averagePrecisionStatistic(probabilities, labels),
      recallAtFprStatistic(probabilities, labels),
      calibrationErrorStatistic(probabilities, labels),
    ],
    { seed },
  );
  return Object.fromEntries(names.map((n, k) => [n, pair(intervals[k]!)]));
}

/** The stack's AP and ROC AUC minus the ablation's on the same rows, each with its paired 95 %
 *  interval (negative: the stack is behind). */
export function gapIntervals(
  stack: ArrayLike<number>,
  ablation: ArrayLike<number>,
  labels: ArrayLike<number>,
  seed: number,
): Record<'average_precision' | 'roc_auc', { difference: number | null; interval: (number | null)[] }> {
  const ap = pairedBootstrap(labels.length, averagePrecisionStatistic(stack, labels), averagePrecisionStatistic(ablation, labels), { seed });
  const auc = pairedBootstrap(labels.length, rocAucStatistic(stack, labels), rocAucStatistic(ablation, labels), { seed });
  return {
    average_precision: { difference: round(ap.difference.value), interval: pair(ap.difference) },
    roc_auc: { difference: round(auc.difference.value), interval: pair(auc.difference) },
  };
}
