// Ranking and calibration metrics for binary labels: ROC AUC (with ties counted half), average
// precision (the step-wise area under precision–recall, as scikit-learn computes it), Brier score,
// log loss, and expected calibration error over equal-width bins. Inputs are parallel arrays of
// scores (probabilities for the calibration metrics) and 0/1 labels.

function order(scores: ArrayLike<number>): number[] {
  return Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
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
  const idx = order(scores);
  const positives = idx.reduce((n, i) => n + (labels[i] === 1 ? 1 : 0), 0);
  if (positives === 0) return Number.NaN;
  let tp = 0;
  let seen = 0;
  let ap = 0;
  let previousRecall = 0;
  let i = 0;
  while (i < idx.length) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]!] === scores[idx[i]!]) j++;
    for (let k = i; k <= j; k++) {
      seen++;
      if (labels[idx[k]!] === 1) tp++;
    }
    const recall = tp / positives;
    ap += (recall - previousRecall) * (tp / seen);
    previousRecall = recall;
    i = j + 1;
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

/** Expected calibration error over `bins` equal-width probability bins (weighted by bin size). */
export function expectedCalibrationError(probabilities: ArrayLike<number>, labels: ArrayLike<number>, bins = 10): number {
  const count = new Array<number>(bins).fill(0);
  const predicted = new Array<number>(bins).fill(0);
  const observed = new Array<number>(bins).fill(0);
  for (let i = 0; i < probabilities.length; i++) {
    const b = Math.min(bins - 1, Math.floor(probabilities[i]! * bins));
    count[b]!++;
    predicted[b]! += probabilities[i]!;
    observed[b]! += labels[i]!;
  }
  let ece = 0;
  for (let b = 0; b < bins; b++) if (count[b]! > 0) ece += Math.abs(predicted[b]! - observed[b]!) / probabilities.length;
  return ece;
}

/** Recall at the lowest threshold whose false-positive rate stays at or below `fpr`. */
export function recallAtFpr(scores: ArrayLike<number>, labels: ArrayLike<number>, fpr = 0.01): number {
  const idx = Array.from({ length: scores.length }, (_, i) => i).sort((a, b) => scores[b]! - scores[a]!);
  let positives = 0;
  for (let i = 0; i < labels.length; i++) if (labels[i] === 1) positives++;
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) return Number.NaN;
  let tp = 0;
  let fp = 0;
  let best = 0;
  let i = 0;
  while (i < idx.length) {
    const s = scores[idx[i]!]!;
    while (i < idx.length && scores[idx[i]!] === s) {
      if (labels[idx[i]!] === 1) tp++;
      else fp++;
      i++;
    }
    if (fp / negatives <= fpr) best = tp / positives;
    else break;
  }
  return best;
}
