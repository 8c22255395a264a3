// Ranking and calibration metrics for binary labels: ROC AUC (with ties counted half), average
// precision (the step-wise area under precision–recall, as scikit-learn computes it), Brier score,
// log loss, and expected calibration error over equal-width bins. Inputs are parallel arrays of
// scores (probabilities for the calibration metrics) and 0/1 labels.

/** Confusion counts when flagging every score ≥ threshold, one point per distinct score. */
export interface CurvePoint {
  threshold: number;
  tp: number;
  fp: number;
}

/** Points at every distinct score, thresholds descending, and the number of positives. */
export function descendingCurve(scores: ArrayLike<number>, labels: ArrayLike<number>): { points: CurvePoint[]; positives: number } {
  const idx = Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  const points: CurvePoint[] = [];
  let tp = 0;
  let fp = 0;
  let i = 0;
  while (i < idx.length) {
    const s = scores[idx[i]!]!;
    while (i < idx.length && scores[idx[i]!] === s) {
      if (labels[idx[i]!] === 1) tp++;
      else fp++;
      i++;
    }
    points.push({ threshold: s, tp, fp });
  }
  return { points, positives: tp };
}

/** ROC AUC; ties between a positive and a negative count one half. NaN without both classes. */
export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const idx = Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[a]! - scores[b]!);
  let positives = 0;
  let rankSum = 0;
  let i = 0;
  while (i < idx.length) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]!] === scores[idx[i]!]) j++;
    const averageRank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) {
      if (labels[idx[k]!] === 1) {
        positives++;
        rankSum += averageRank;
      }
    }
    i = j + 1;
  }
  const negatives = idx.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

/** Average precision: Σ (R_n − R_{n−1}) · P_n over distinct score thresholds, highest first. */
export function averagePrecision(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const { points, positives } = descendingCurve(scores, labels);
  if (positives === 0) return Number.NaN;
  let ap = 0;
  let previousRecall = 0;
  for (const p of points) {
    const recall = p.tp / positives;
    ap += (recall - previousRecall) * (p.tp / (p.tp + p.fp));
    previousRecall = recall;
  }
  return ap;
}

export function brier(probabilities: ArrayLike<number>, labels: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < probabilities.length; i++) s += (probabilities[i]! - labels[i]!) ** 2;
  return s / probabilities.length;
}

export function logLoss(probabilities: ArrayLike<number>, labels: ArrayLike<number>): number {
  const eps = 1e-15;
  let s = 0;
  for (let i = 0; i < probabilities.length; i++) {
    const p = Math.min(1 - eps, Math.max(eps, probabilities[i]!));
    s -= labels[i] === 1 ? Math.log(p) : Math.log(1 - p);
  }
  return s / probabilities.length;
}

/** Per equal-width probability bin: rows, sum of predicted probabilities, sum of labels. */
export function calibrationBins(probabilities: ArrayLike<number>, labels: ArrayLike<number>, bins: number): { count: number[]; predicted: number[]; observed: number[] } {
  const count = new Array<number>(bins).fill(0);
  const predicted = new Array<number>(bins).fill(0);
  const observed = new Array<number>(bins).fill(0);
  for (let i = 0; i < probabilities.length; i++) {
    const b = Math.min(bins - 1, Math.floor(probabilities[i]! * bins));
    count[b]!++;
    predicted[b]! += probabilities[i]!;
    observed[b]! += labels[i]!;
  }
  return { count, predicted, observed };
}

/** Expected calibration error over `bins` equal-width probability bins (weighted by bin size). */
export function expectedCalibrationError(probabilities: ArrayLike<number>, labels: ArrayLike<number>, bins = 10): number {
  const { count, predicted, observed } = calibrationBins(probabilities, labels, bins);
  let ece = 0;
  for (let b = 0; b < bins; b++) if (count[b]! > 0) ece += Math.abs(predicted[b]! - observed[b]!) / probabilities.length;
  return ece;
}

/** Recall at the lowest threshold whose false-positive rate stays at or below `fpr`. */
export function recallAtFpr(scores: ArrayLike<number>, labels: ArrayLike<number>, fpr = 0.01): number {
  const { points, positives } = descendingCurve(scores, labels);
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  let best = 0;
  for (const p of points) {
    if (p.fp / negatives > fpr) break;
    best = p.tp / positives;
  }
  return best;
}
