// Ranking and calibration metrics for binary labels: ROC AUC (with ties counted half), average
// precision (the step-wise area under precision–recall, as scikit-learn computes it), Brier score,
// log loss, and expected calibration error over equal-width bins (with the part of it that chance
// alone explains). Inputs are parallel arrays of scores (probabilities for the calibration metrics)
// and 0/1 labels.

/** Confusion counts when flagging every score ≥ threshold, one point per distinct score. */
export interface CurvePoint {
  threshold: number;
  tp: number;
  fp: number;
}

/** The scores of the positives (label 1) and of every other row, each sorted ascending. Typed-array
 *  sorts: the metrics only need each class's scores in order, and sorting an index array with a
 *  comparator is slow, per metric, in every labelled batch job. */
function scoresByClass(scores: ArrayLike<number>, labels: ArrayLike<number>): { positives: Float64Array; negatives: Float64Array } {
  let p = 0;
  for (let i = 0; i < scores.length; i++) if (labels[i] === 1) p++;
  const positives = new Float64Array(p);
  const negatives = new Float64Array(scores.length - p);
  let a = 0;
  let b = 0;
  for (let i = 0; i < scores.length; i++) {
    if (labels[i] === 1) positives[a++] = scores[i]!;
    else negatives[b++] = scores[i]!;
  }
  // Ascending, NaN last.
  return { positives: positives.sort(), negatives: negatives.sort() };
}

/** Equal scores (NaN equal to NaN, so a walk over sorted scores groups them too). */
function same(a: number, b: number): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

/** Points at every distinct score, thresholds descending, and the number of positives. */
export function descendingCurve(scores: ArrayLike<number>, labels: ArrayLike<number>): { points: CurvePoint[]; positives: number } {
  const { positives, negatives } = scoresByClass(scores, labels);
  const points: CurvePoint[] = [];
  let tp = 0;
  let fp = 0;
  // From the highest score down (NaN, sorted last, comes first), a group of equal scores at a time.
  let i = positives.length - 1;
  let j = negatives.length - 1;
  while (i >= 0 || j >= 0) {
    const a = positives[i];
    const b = negatives[j];
    const s = a === undefined ? b! : b === undefined ? a : a > b || Number.isNaN(a) ? a : b;
    while (i >= 0 && same(positives[i]!, s)) {
      tp++;
      i--;
    }
    while (j >= 0 && same(negatives[j]!, s)) {
      fp++;
      j--;
    }
    points.push({ threshold: s, tp, fp });
  }
  return { points, positives: tp };
}

/** ROC AUC; ties between a positive and a negative count one half. NaN without both classes. */
export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  const { positives, negatives } = scoresByClass(scores, labels);
  if (positives.length === 0 || negatives.length === 0) return Number.NaN;
  // Ranks from 1 in ascending score order; a group of equal scores shares its average rank.
  let rankSum = 0;
  let before = 0;
  let i = 0;
  let j = 0;
  while (i < positives.length || j < negatives.length) {
    const a = positives[i];
    const b = negatives[j];
    const s = a === undefined ? b! : b === undefined ? a : a < b || Number.isNaN(b) ? a : b;
    let inGroup = 0;
    let positivesInGroup = 0;
    while (i < positives.length && same(positives[i]!, s)) {
      positivesInGroup++;
      i++;
    }
    while (j < negatives.length && same(negatives[j]!, s)) {
      inGroup++;
      j++;
    }
    inGroup += positivesInGroup;
    const averageRank = (before + (before + inGroup - 1)) / 2 + 1;
    for (let k = 0; k < positivesInGroup; k++) rankSum += averageRank;
    before += inGroup;
  }
  const p = positives.length;
  return (rankSum - (p * (p + 1)) / 2) / (p * negatives.length);
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
export function calibrationBins(
  probabilities: ArrayLike<number>,
  labels: ArrayLike<number>,
  bins: number,
): { count: number[]; predicted: number[]; observed: number[] } {
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

/** How large the expected calibration error of `probabilities` could be by chance alone if they
 *  were exactly right: per bin, the labels' sum then differs from the probabilities' sum by a
 *  quantity of variance Σ p(1 − p), so `z` standard deviations of it, summed over the bins and
 *  divided by the rows, bound the error that sampling noise makes (z = 1.96: 95 % in each bin). */
export function calibrationNoise(probabilities: ArrayLike<number>, bins = 10, z = 1.96): number {
  const variance = new Array<number>(bins).fill(0);
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i]!;
    variance[Math.min(bins - 1, Math.floor(p * bins))]! += p * (1 - p);
  }
  let bound = 0;
  for (const v of variance) bound += z * Math.sqrt(v);
  return probabilities.length > 0 ? bound / probabilities.length : 0;
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
