// Seeded percentile bootstrap: a figure measured on one test set, with the 95 % interval of what
// other test sets of the same kind would have given. A resample draws the sample's units with
// replacement; it is passed to a statistic as the number of times each unit was drawn (all ones is
// the sample itself), so AUC and average precision need no re-sorting per resample: they walk the
// rows once in an order sorted up front, O(rows) a resample.
// Units are rows for AUC and average precision, and cards for card precision@100 (the figure ranks
// cards, and a card's frauds come together); `byGroup` resamples any row statistic by groups.
// `pairedBootstrap` evaluates two statistics on the same resamples (two models on the same test
// rows) and gives the interval of their difference, narrower than two separate intervals suggest.
// An interval says how much the test sample moves a figure, not how much another week, seed or
// training run would (eval-handbook reports the seed spread for that). Training's evaluation, the
// handbook comparison and a challenger's report against the active model (challenger-comparison.ts)
// all draw their intervals here.

import { Rng } from '../domain/rng.ts';

export interface Interval {
  /** The statistic on the sample itself. */
  value: number;
  /** Percentile bounds over the resamples (type-7 quantiles, NaN resamples left out). */
  low: number;
  high: number;
}

export interface BootstrapOptions {
  /** Number of resamples (default 1000). */
  resamples: number;
  /** Coverage of the interval (default 0.95). */
  level: number;
  /** Seed of the resampling (default 1): the same seed, sample and statistic give the same interval. */
  seed: number;
}

export const BOOTSTRAP_DEFAULTS: BootstrapOptions = { resamples: 1000, level: 0.95, seed: 1 };

/** A statistic of a weighted sample: `weights[u]` is how many times unit `u` is in it. */
export type Statistic = (weights: Uint32Array) => number;

/** The type-7 quantile `q` of ascending `sorted` values. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

function interval(value: number, draws: number[], level: number): Interval {
  const sorted = draws.filter((d) => !Number.isNaN(d)).sort((a, b) => a - b);
  return { value, low: quantile(sorted, (1 - level) / 2), high: quantile(sorted, 1 - (1 - level) / 2) };
}

/** Every statistic on the sample and on the same `resamples` resamples of `units` units. */
function resample(units: number, statistics: readonly Statistic[], o: BootstrapOptions): { values: number[]; draws: number[][] } {
  if (!(Number.isInteger(units) && units > 0)) throw new Error(`bootstrap: ${units} units`);
  if (!(Number.isInteger(o.resamples) && o.resamples > 0)) throw new Error(`bootstrap: ${o.resamples} resamples`);
  if (!(o.level > 0 && o.level < 1)) throw new Error(`bootstrap: level ${o.level} is not within (0, 1)`);
  const weights = new Uint32Array(units).fill(1);
  const values = statistics.map((s) => s(weights));
  const draws = statistics.map(() => new Array<number>(o.resamples));
  const rng = new Rng(o.seed);
  for (let r = 0; r < o.resamples; r++) {
    weights.fill(0);
    for (let i = 0; i < units; i++) weights[rng.below(units)]!++;
    statistics.forEach((s, k) => {
      draws[k]![r] = s(weights);
    });
  }
  return { values, draws };
}

/** The statistic with its percentile bootstrap interval over `units` resampled units. */
export function bootstrap(units: number, statistic: Statistic, options: Partial<BootstrapOptions> = {}): Interval {
  const o = { ...BOOTSTRAP_DEFAULTS, ...options };
  const { values, draws } = resample(units, [statistic], o);
  return interval(values[0]!, draws[0]!, o.level);
}

/** Several statistics on the same resamples (one interval each), e.g. two models' figures. */
export function bootstrapAll(units: number, statistics: readonly Statistic[], options: Partial<BootstrapOptions> = {}): Interval[] {
  const o = { ...BOOTSTRAP_DEFAULTS, ...options };
  const { values, draws } = resample(units, statistics, o);
  return values.map((v, k) => interval(v, draws[k]!, o.level));
}

/** Two statistics on the same resamples, and their difference `a − b` resample by resample. */
export function pairedBootstrap(
  units: number,
  a: Statistic,
  b: Statistic,
  options: Partial<BootstrapOptions> = {},
): { a: Interval; b: Interval; difference: Interval } {
  const o = { ...BOOTSTRAP_DEFAULTS, ...options };
  const { values, draws } = resample(units, [a, b], o);
  const difference = draws[0]!.map((x, r) => x - draws[1]![r]!);
  return {
    a: interval(values[0]!, draws[0]!, o.level),
    b: interval(values[1]!, draws[1]!, o.level),
    difference: interval(values[0]! - values[1]!, difference, o.level),
  };
}

/** A row statistic resampled by groups: row `i` gets the weight of group `groupOf[i]` (0-based). */
export function byGroup(groupOf: ArrayLike<number>, rowStatistic: Statistic): Statistic {
  const rowWeights = new Uint32Array(groupOf.length);
  return (weights) => {
    for (let i = 0; i < groupOf.length; i++) rowWeights[i] = weights[groupOf[i]!]!;
    return rowStatistic(rowWeights);
  };
}

/** Dense 0-based ids of `keys` (in order of first appearance) and how many distinct there are. */
export function groupIds(keys: readonly string[]): { groupOf: Uint32Array; groups: number } {
  const ids = new Map<string, number>();
  const groupOf = Uint32Array.from(keys, (k) => {
    let id = ids.get(k);
    if (id === undefined) ids.set(k, (id = ids.size));
    return id;
  });
  return { groupOf, groups: ids.size };
}

/** Rows by descending score (NaN first, as in metrics.ts) and where each run of equal scores ends. */
function descending(scores: ArrayLike<number>): { order: Uint32Array; ends: number[] } {
  const key = Float64Array.from(scores, (s) => (Number.isNaN(s) ? Number.POSITIVE_INFINITY : s));
  const nan = Uint8Array.from(scores, (s) => (Number.isNaN(s) ? 1 : 0));
  const order = Uint32Array.from({ length: key.length }, (_, i) => i).sort((i, j) => key[j]! - key[i]! || nan[j]! - nan[i]!);
  const ends: number[] = [];
  for (let k = 1; k <= order.length; k++) {
    if (k === order.length || key[order[k]!] !== key[order[k - 1]!] || nan[order[k]!] !== nan[order[k - 1]!]) ends.push(k);
  }
  return { order, ends };
}

/** The weight of the positive (label 1) and of every other row. */
function classWeights(labels: ArrayLike<number>, w: Uint32Array): { positives: number; negatives: number } {
  let positives = 0;
  let negatives = 0;
  for (let i = 0; i < labels.length; i++) {
    if (labels[i] === 1) positives += w[i]!;
    else negatives += w[i]!;
  }
  return { positives, negatives };
}

/** ROC AUC of weighted rows (ties between a positive and a negative count one half), as
 *  `rocAuc` in metrics.ts computes it on the rows repeated by their weights. */
export function rocAucStatistic(scores: ArrayLike<number>, labels: ArrayLike<number>): Statistic {
  const { order, ends } = descending(scores);
  return (w) => {
    const { positives, negatives } = classWeights(labels, w);
    if (positives === 0 || negatives === 0) return Number.NaN;
    // From the highest score down: each positive beats the negatives below its group, ties half.
    let area = 0;
    let negativesAbove = 0;
    let start = 0;
    for (const end of ends) {
      let tp = 0;
      let fp = 0;
      for (let k = start; k < end; k++) {
        const i = order[k]!;
        if (labels[i] === 1) tp += w[i]!;
        else fp += w[i]!;
      }
      area += tp * (negatives - negativesAbove - fp + fp / 2);
      negativesAbove += fp;
      start = end;
    }
    return area / (positives * negatives);
  };
}

/** Average precision of weighted rows (Σ ΔRecall · Precision over distinct scores, highest first),
 *  as `averagePrecision` in metrics.ts computes it on the rows repeated by their weights. */
export function averagePrecisionStatistic(scores: ArrayLike<number>, labels: ArrayLike<number>): Statistic {
  const { order, ends } = descending(scores);
  return (w) => {
    let positives = 0;
    for (let i = 0; i < labels.length; i++) if (labels[i] === 1) positives += w[i]!;
    if (positives === 0) return Number.NaN;
    let ap = 0;
    let tp = 0;
    let fp = 0;
    let start = 0;
    for (const end of ends) {
      let dtp = 0;
      for (let k = start; k < end; k++) {
        const i = order[k]!;
        if (labels[i] === 1) dtp += w[i]!;
        else fp += w[i]!;
      }
      tp += dtp;
      if (dtp > 0) ap += (dtp / positives) * (tp / (tp + fp));
      start = end;
    }
    return ap;
  };
}

/** Recall at the lowest threshold whose false-positive rate stays at or below `fpr`, on weighted
 *  rows (as `recallAtFpr` in metrics.ts computes it on the rows repeated by their weights). */
export function recallAtFprStatistic(scores: ArrayLike<number>, labels: ArrayLike<number>, fpr = 0.01): Statistic {
  const { order, ends } = descending(scores);
  return (w) => {
    const { positives, negatives } = classWeights(labels, w);
    if (positives === 0 || negatives === 0) return Number.NaN;
    let tp = 0;
    let fp = 0;
    let best = 0;
    let start = 0;
    // A group of equal scores is flagged together.
    for (const end of ends) {
      for (let k = start; k < end; k++) {
        const i = order[k]!;
        if (labels[i] === 1) tp += w[i]!;
        else fp += w[i]!;
      }
      if (fp / negatives > fpr) break;
      best = tp / positives;
      start = end;
    }
    return best;
  };
}

/** Expected calibration error over equal-width probability bins on weighted rows (as
 *  `expectedCalibrationError` in metrics.ts). */
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

/** Card precision@k with cards as the resampled units (`units` of them): per test day, each card's
 *  maximum score and whether it had a fraud that day, ranked as `cardPrecisionAtK` ranks them (score
 *  descending, ties by card id); a card drawn m times fills m places. Averaged over the days. */
export function cardPrecisionStatistic(
  cards: readonly string[],
  days: readonly number[],
  scores: ArrayLike<number>,
  labels: ArrayLike<number>,
  k = 100,
): { units: number; statistic: Statistic } {
  const { groupOf, groups } = groupIds(cards);
  const byDay = new Map<number, Map<number, { score: number; fraud: boolean }>>();
  cards.forEach((_, i) => {
    let day = byDay.get(days[i]!);
    if (!day) byDay.set(days[i]!, (day = new Map()));
    const card = groupOf[i]!;
    const prev = day.get(card);
    if (!prev) day.set(card, { score: scores[i]!, fraud: labels[i] === 1 });
    else {
      prev.score = Math.max(prev.score, scores[i]!);
      prev.fraud ||= labels[i] === 1;
    }
  });
  const idOf = new Array<string>(groups);
  groupOf.forEach((g, i) => {
    idOf[g] = cards[i]!;
  });
  const ranked = [...byDay.keys()]
    .sort((a, b) => a - b)
    .map((d) => {
      const list = [...byDay.get(d)!].sort((a, b) => b[1].score - a[1].score || (idOf[a[0]]! < idOf[b[0]]! ? -1 : idOf[a[0]]! > idOf[b[0]]! ? 1 : 0));
      return { card: Uint32Array.from(list, (e) => e[0]), fraud: Uint8Array.from(list, (e) => (e[1].fraud ? 1 : 0)) };
    });
  const statistic: Statistic = (w) => {
    let sum = 0;
    for (const day of ranked) {
      let left = k;
      let hits = 0;
      for (let j = 0; j < day.card.length && left > 0; j++) {
        const take = Math.min(w[day.card[j]!]!, left);
        left -= take;
        if (day.fraud[j]) hits += take;
      }
      sum += hits / k;
    }
    return sum / Math.max(ranked.length, 1);
  };
  return { units: groups, statistic };
}
