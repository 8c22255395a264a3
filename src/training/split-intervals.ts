// The 95 % bootstrap intervals of a split's headline figures (ROC AUC, average precision, recall at
// 1 % false-positive rate, expected calibration error) for metrics.json, and of the stack's gap to
// the single-booster ablation on the same test rows (paired: both are scored on each resample, so
// the interval is of the difference itself). Rows are the resampled units (bootstrap.ts). An
// interval says how much the sample of rows moves a figure, not how much another period or another
// seed would.

import { averagePrecisionStatistic, bootstrapAll, pairedBootstrap, rocAucStatistic, type Interval, type Statistic } from './bootstrap.ts';

/** Recall at the lowest threshold whose false-positive rate stays at or below `fpr`, on weighted
 *  rows (as `recallAtFpr` in metrics.ts on the rows repeated by their weights). */
export function recallAtFprStatistic(scores: ArrayLike<number>, labels: ArrayLike<number>, fpr = 0.01): Statistic {
  const order = Uint32Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  return (w) => {
    let positives = 0;
    let negatives = 0;
    for (let i = 0; i < labels.length; i++) {
      if (labels[i] === 1) positives += w[i]!;
      else negatives += w[i]!;
    }
    if (positives === 0 || negatives === 0) return Number.NaN;
    let tp = 0;
    let fp = 0;
    let best = 0;
    // A group of equal scores is flagged together.
    for (let k = 0; k < order.length; ) {
      const s = scores[order[k]!]!;
      for (; k < order.length && scores[order[k]!] === s; k++) {
        const i = order[k]!;
        if (labels[i] === 1) tp += w[i]!;
        else fp += w[i]!;
      }
      if (fp / negatives > fpr) break;
      best = tp / positives;
    }
    return best;
  };
}

/** Expected calibration error over equal-width bins on weighted rows. */
export function calibrationErrorStatistic(probabilities: ArrayLike<number>, labels: ArrayLike<number>, bins = 10): Statistic {
  const bin = Uint8Array.from(probabilities as ArrayLike<number>, (p) => Math.min(bins - 1, Math.floor(p * bins)));
  const predicted = new Float64Array(bins);
  const observed = new Float64Array(bins);
  return (w) => {
    predicted.fill(0);
    observed.fill(0);
    let n = 0;
    for (let i = 0; i < bin.length; i++) {
      const weight = w[i]!;
      if (weight === 0) continue;
      n += weight;
      predicted[bin[i]!]! += weight * probabilities[i]!;
      observed[bin[i]!]! += weight * labels[i]!;
    }
    let ece = 0;
    for (let b = 0; b < bins; b++) ece += Math.abs(predicted[b]! - observed[b]!);
    return n ? ece / n : Number.NaN;
  };
}

const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
const pair = (i: Interval) => [round(i.low), round(i.high)];

/** The headline figures' 95 % intervals on one split: `{ roc_auc: [low, high], … }`. */
export function splitIntervals(probabilities: ArrayLike<number>, labels: ArrayLike<number>, seed: number): Record<string, (number | null)[]> {
  const names = ['roc_auc', 'average_precision', 'recall_at_1pct_fpr', 'expected_calibration_error'];
  const intervals = bootstrapAll(labels.length, [rocAucStatistic(probabilities, labels), averagePrecisionStatistic(probabilities, labels), recallAtFprStatistic(probabilities, labels), calibrationErrorStatistic(probabilities, labels)], { seed });
  return Object.fromEntries(names.map((n, k) => [n, pair(intervals[k]!)]));
}

/** The stack's AP and ROC AUC minus the ablation's on the same rows, each with its paired 95 %
 *  interval (negative: the stack is behind). */
export function gapIntervals(stack: ArrayLike<number>, ablation: ArrayLike<number>, labels: ArrayLike<number>, seed: number): Record<'average_precision' | 'roc_auc', { difference: number | null; interval: (number | null)[] }> {
  const ap = pairedBootstrap(labels.length, averagePrecisionStatistic(stack, labels), averagePrecisionStatistic(ablation, labels), { seed });
  const auc = pairedBootstrap(labels.length, rocAucStatistic(stack, labels), rocAucStatistic(ablation, labels), { seed });
  return {
    average_precision: { difference: round(ap.difference.value), interval: pair(ap.difference) },
    roc_auc: { difference: round(auc.difference.value), interval: pair(auc.difference) },
  };
}
