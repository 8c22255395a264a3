// The evaluation's numbers shaped for charts: ROC and precision–recall curves (thinned to at most
// `maxPoints` points, always keeping the ends), the reliability curve (mean predicted probability
// against observed fraud rate in equal-width bins, with counts) and score histograms per class.

import { calibrationBins, descendingCurve } from '../model/metrics.ts';

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

function thin<T>(points: T[], maxPoints: number): T[] {
  if (points.length <= maxPoints) return points;
  const step = (points.length - 1) / (maxPoints - 1);
  return Array.from({ length: maxPoints }, (_, i) => points[Math.round(i * step)]!);
}

export function rocCurve(scores: ArrayLike<number>, labels: ArrayLike<number>, maxPoints = 200): { fpr: number; tpr: number; threshold: number }[] {
  const { points, positives } = descendingCurve(scores, labels);
  const negatives = labels.length - positives;
  const curve = [
    { fpr: 0, tpr: 0, threshold: Infinity },
    ...points.map((p) => ({ fpr: r6(p.fp / negatives), tpr: r6(p.tp / positives), threshold: r6(p.threshold) })),
  ];
  return thin(curve, maxPoints).map((p) => (p.threshold === Infinity ? { ...p, threshold: 1 } : p));
}

export function precisionRecallCurve(
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  maxPoints = 200,
): { recall: number; precision: number; threshold: number }[] {
  const { points, positives } = descendingCurve(scores, labels);
  return thin(
    points.map((p) => ({ recall: r6(p.tp / positives), precision: r6(p.tp / (p.tp + p.fp)), threshold: r6(p.threshold) })),
    maxPoints,
  );
}

export function reliabilityCurve(
  probabilities: ArrayLike<number>,
  labels: ArrayLike<number>,
  bins = 10,
): { bin: [number, number]; predicted: number | null; observed: number | null; count: number }[] {
  const { count, predicted, observed } = calibrationBins(probabilities, labels, bins);
  return count.map((n, b) => ({
    bin: [b / bins, (b + 1) / bins],
    predicted: n ? r6(predicted[b]! / n) : null,
    observed: n ? r6(observed[b]! / n) : null,
    count: n,
  }));
}

export function scoreHistograms(
  probabilities: ArrayLike<number>,
  labels: ArrayLike<number>,
  bins = 20,
): { edges: number[]; fraud: number[]; legitimate: number[] } {
  const fraud = new Array<number>(bins).fill(0);
  const legitimate = new Array<number>(bins).fill(0);
  for (let i = 0; i < probabilities.length; i++) {
    const b = Math.min(bins - 1, Math.floor(probabilities[i]! * bins));
    (labels[i] === 1 ? fraud : legitimate)[b]!++;
  }
  return { edges: Array.from({ length: bins + 1 }, (_, i) => r6(i / bins)), fraud, legitimate };
}
