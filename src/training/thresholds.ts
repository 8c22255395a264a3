// Decision thresholds per mode, chosen on validation for a stated target (docs/model.md), and the
// check on test of whether each target still holds.
// | mode           | block                                   | review                                  |
// | high_precision | lowest score with precision ≥ 0.95      | lowest score with precision ≥ 0.80      |
// | balanced       | score of maximum F1                      | score of maximum F2                      |
// | high_recall    | highest score keeping recall ≥ 0.80     | highest score keeping recall ≥ 0.95     |
// A threshold t flags scores ≥ t. Where no score reaches a precision target, the threshold is the
// highest score and the test check reports the target as not met. Balanced's check is that F1 at
// its threshold is at least 90 % of the best F1 any threshold achieves (`f1_ratio`). A review
// threshold never sends more than REVIEW_BUDGET of validation traffic to review, since a high
// recall target alone can send more than any review team clears; a mode whose test review rate is
// over REVIEW_WARNING says so.

import { descendingCurve as curve, type CurvePoint } from '../model/metrics.ts';

export type Mode = 'high_precision' | 'balanced' | 'high_recall';
/** The largest share of validation traffic a review threshold may send to review. */
export const REVIEW_BUDGET = 0.05;
/** A test review rate above this swamps a review team: the mode says so. */
export const REVIEW_WARNING = 0.1;
export const MODES: Mode[] = ['balanced', 'high_precision', 'high_recall'];

export interface ModeThresholds {
  review: number;
  block: number;
  /** What the block threshold promises, e.g. `precision >= 0.95`. */
  target: { metric: 'precision' | 'recall' | 'f1_ratio'; value: number };
}

type Point = CurvePoint;

const precision = (p: Point) => (p.tp + p.fp > 0 ? p.tp / (p.tp + p.fp) : 0);
const recall = (p: Point, positives: number) => (positives > 0 ? p.tp / positives : 0);
const fBeta = (p: Point, positives: number, beta: number) => {
  const pr = precision(p);
  const re = recall(p, positives);
  return pr + re > 0 ? ((1 + beta * beta) * pr * re) / (beta * beta * pr + re) : 0;
};

function lowestWithPrecision(points: Point[], target: number): number {
  let best = points[0]?.threshold ?? 1;
  for (const p of points) if (precision(p) >= target) best = p.threshold;
  return best;
}

function highestKeepingRecall(points: Point[], positives: number, target: number): number {
  for (const p of points) if (recall(p, positives) >= target) return p.threshold;
  return points[points.length - 1]?.threshold ?? 0;
}

function argmaxF(points: Point[], positives: number, beta: number): number {
  let best = points[0]?.threshold ?? 1;
  let bestF = -1;
  for (const p of points) {
    const f = fBeta(p, positives, beta);
    if (f > bestF) [best, bestF] = [p.threshold, f];
  }
  return best;
}

/** The lowest threshold that flags at most `share` of the rows. */
function lowestWithin(points: Point[], rows: number, share: number): number {
  let best = points[0]?.threshold ?? 1;
  for (const p of points) {
    if (p.tp + p.fp > share * rows) break;
    best = p.threshold;
  }
  return best;
}

/** Thresholds for every mode, from validation scores and labels. Review never exceeds block, nor
 *  sends more than REVIEW_BUDGET of the rows to review. */
export function chooseThresholds(scores: ArrayLike<number>, labels: ArrayLike<number>, reviewBudget = REVIEW_BUDGET): Record<Mode, ModeThresholds> {
  const { points, positives } = curve(scores, labels);
  const budget = lowestWithin(points, scores.length, reviewBudget);
  const make = (review: number, block: number, target: ModeThresholds['target']): ModeThresholds => ({
    review: Math.min(Math.max(review, budget), block),
    block,
    target,
  });
  return {
    high_precision: make(lowestWithPrecision(points, 0.8), lowestWithPrecision(points, 0.95), { metric: 'precision', value: 0.95 }),
    balanced: make(argmaxF(points, positives, 2), argmaxF(points, positives, 1), { metric: 'f1_ratio', value: 0.9 }),
    high_recall: make(highestKeepingRecall(points, positives, 0.95), highestKeepingRecall(points, positives, 0.8), { metric: 'recall', value: 0.8 }),
  };
}

export interface ModeCheck {
  /** Shares of the rows at or above the review threshold (sent to review or blocked) and at or
   *  above the block threshold: what a mode costs in traffic. */
  review_rate: number;
  block_rate: number;
  precision: number;
  recall: number;
  f1: number;
  /** Fraud blocked per 1,000 transactions (true positives at the block threshold). */
  fraud_caught_per_1000: number;
  /** Set when the review rate is over REVIEW_WARNING: what that means for a review team. */
  warning: string | null;
  /** The target's metric measured at the block threshold, and whether it holds. */
  measured: number;
  meets_target: boolean;
}

/** Precision, recall and F1 at a mode's block threshold on (test) scores, and the target check. */
export function checkThreshold(scores: ArrayLike<number>, labels: ArrayLike<number>, t: ModeThresholds): ModeCheck {
  let tp = 0;
  let fp = 0;
  let positives = 0;
  let reviewed = 0;
  for (let i = 0; i < scores.length; i++) {
    if (labels[i] === 1) positives++;
    if (scores[i]! >= t.review) reviewed++;
    if (scores[i]! >= t.block) {
      if (labels[i] === 1) tp++;
      else fp++;
    }
  }
  const rows = scores.length;
  const p = tp + fp > 0 ? tp / (tp + fp) : 0;
  const r = positives > 0 ? tp / positives : 0;
  const f1 = p + r > 0 ? (2 * p * r) / (p + r) : 0;
  let measured: number;
  if (t.target.metric === 'precision') measured = p;
  else if (t.target.metric === 'recall') measured = r;
  else {
    const { points, positives: n } = curve(scores, labels);
    const best = Math.max(0, ...points.map((q) => fBeta(q, n, 1)));
    measured = best > 0 ? f1 / best : 0;
  }
  return {
    review_rate: rows ? reviewed / rows : 0,
    block_rate: rows ? (tp + fp) / rows : 0,
    precision: p,
    recall: r,
    f1,
    fraud_caught_per_1000: rows ? (1000 * tp) / rows : 0,
    warning:
      rows && reviewed / rows > REVIEW_WARNING
        ? `Sends ${((100 * reviewed) / rows).toFixed(1)} % of transactions to review or block, over ${100 * REVIEW_WARNING} %: more than most review teams can clear.`
        : null,
    measured,
    meets_target: measured >= t.target.value,
  };
}
