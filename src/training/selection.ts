// Model selection by prequential validation: which LightGBM settings, and how many trees, judged on
// validation periods only (the test period is never looked at). Used by `npm run train` and by
// `npm run eval:handbook` for both of its models. The search is seeded and random, not a grid: the
// space has nine dimensions, and a few dozen random settings try every dimension at as many
// values, which matters when only a few dimensions decide (Bergstra and Bengio, 2012). Settings in
// `start` (the service's defaults, say) are tried first, so the search never does worse on
// validation than they do; the same seed draws the same settings in the same order. The number of
// trees is chosen by early stopping: each setting is trained once per validation period and scored
// at checkpoints by cutting the model after its first k trees (`sliceTrees`), up to `maxIterations`
// lowered to `shrinkage / learning_rate`, since the validation curves flatten at a similar learning
// rate × trees. Both counts (settings, and setting-checkpoint models) are reported, since the more
// models compared, the more the best validation score flatters the choice (docs/model.md).

import { loadModel } from '../addon/addon.ts';
import { trainLightgbm } from '../addon/lightgbm.ts';
import { averagePrecision } from '../model/metrics.ts';
import { sliceTrees, treeCount } from './partition.ts';
import { Rng } from '../domain/rng.ts';

/** LightGBM parameters (without the number of iterations). */
export type Params = Record<string, string | number | boolean>;

/** One searched parameter: a list to draw from, or a range (log-uniform when `log`). */
export type Dimension = { values: readonly (string | number | boolean)[] } | { low: number; high: number; log?: boolean; integer?: boolean };

export type SearchSpace = Record<string, Dimension>;

/** The space searched by default. Bagging draws a fraction of the rows every iteration
 *  (`bagging_freq` 1); `scale_pos_weight` weighs fraud up (1: unweighted); `max_bin` is how finely
 *  LightGBM may place a split (its histogram bins per feature; 255 is its default). */
export const DEFAULT_SPACE: SearchSpace = {
  num_leaves: { low: 3, high: 63, log: true, integer: true },
  min_data_in_leaf: { low: 10, high: 1000, log: true, integer: true },
  feature_fraction: { low: 0.5, high: 1 },
  bagging_fraction: { low: 0.5, high: 1 },
  lambda_l1: { values: [0, 0.1, 1, 10] },
  lambda_l2: { values: [0, 1, 10, 100] },
  learning_rate: { low: 0.03, high: 0.2, log: true },
  scale_pos_weight: { values: [1, 2, 5, 10] },
  max_bin: { values: [255, 1023, 4095] },
};

/** Fixed alongside every drawn setting. */
export const SPACE_FIXED: Params = { bagging_freq: 1 };

/** `count` settings drawn from `space` with `seed`, rounded so they print and reproduce as text. */
export function drawSettings(space: SearchSpace, count: number, seed: number): Params[] {
  const rng = new Rng(seed);
  const round = (x: number) => Number(x.toPrecision(3));
  return Array.from({ length: count }, () => {
    const p: Params = {};
    for (const [name, d] of Object.entries(space)) {
      if ('values' in d) p[name] = d.values[rng.below(d.values.length)]!;
      else {
        const u = rng.uniform();
        const x = d.log ? Math.exp(Math.log(d.low) + u * (Math.log(d.high) - Math.log(d.low))) : d.low + u * (d.high - d.low);
        p[name] = d.integer ? Math.round(x) : round(x);
      }
    }
    return p;
  });
}

/** A setting's validation score after each of `iterations` trees (ascending), one training to the
 *  largest: higher is better. */
export type Scorer = (params: Params, iterations: readonly number[]) => number[];

export interface SearchOptions {
  /** Random settings to draw (after `start`). */
  settings: number;
  space: SearchSpace;
  /** Seed of the draws. */
  seed: number;
  /** Settings tried before the random ones (e.g. the current defaults). */
  start: readonly Params[];
  /** Added to every setting (e.g. `bagging_freq`). */
  fixed: Params;
  /** Upper bound on the trees of any setting. */
  maxIterations: number;
  /** Trees are also bounded by `shrinkage / learning_rate` (learning rate 0.1 if not set). */
  shrinkage: number;
  /** Checkpoints per setting, evenly spaced up to its maximum (at least one tree apart). */
  checkpoints: number;
  /** Called after each setting. */
  progress: (done: number, total: number, best: Trial) => void;
}

export const SEARCH_DEFAULTS: SearchOptions = {
  settings: 24,
  space: DEFAULT_SPACE,
  seed: 1,
  start: [],
  fixed: SPACE_FIXED,
  maxIterations: 1000,
  shrinkage: 15,
  checkpoints: 25,
  progress: () => {},
};

export interface Trial {
  params: Params;
  /** The early-stopped number of trees: the best checkpoint. */
  iterations: number;
  /** The validation score there. */
  score: number;
  /** The checkpoints and the validation score at each. */
  curve: { iterations: number; score: number }[];
}

export interface Selection {
  /** The best trial's setting and number of trees. */
  params: Params;
  iterations: number;
  score: number;
  /** Every setting tried, in order. */
  trials: Trial[];
  /** Distinct settings tried, and (setting, number of trees) models compared on validation. */
  settingsTried: number;
  modelsCompared: number;
}

/** The checkpoints of a setting: `count` evenly spaced tree counts up to its maximum. */
export function checkpointsFor(params: Params, o: Pick<SearchOptions, 'maxIterations' | 'shrinkage' | 'checkpoints'>): number[] {
  const rate = typeof params.learning_rate === 'number' ? params.learning_rate : 0.1;
  const max = Math.max(1, Math.min(o.maxIterations, Math.ceil(o.shrinkage / rate)));
  const count = Math.min(o.checkpoints, max);
  return [...new Set(Array.from({ length: count }, (_, k) => Math.round(((k + 1) * max) / count)))];
}

/** The settings a search tries, in order: `start`, then `settings` random draws, each with `fixed`. */
export function candidatesOf(o: SearchOptions): Params[] {
  const candidates = [...o.start, ...drawSettings(o.space, o.settings, o.seed)].map((p) => ({ ...p, ...o.fixed }));
  if (candidates.length === 0) throw new Error('search: no settings to try');
  return candidates;
}

/** A setting's trial from its validation score at each checkpoint: the best checkpoint (the fewer
 *  trees on a tie). */
export function trialOf(params: Params, iterations: readonly number[], scores: readonly number[]): Trial {
  if (scores.length !== iterations.length) throw new Error(`search: the scorer returned ${scores.length} scores for ${iterations.length} checkpoints`);
  const curve = iterations.map((n, k) => ({ iterations: n, score: scores[k]! }));
  const top = curve.reduce((a, c) => (c.score > a.score || Number.isNaN(a.score) ? c : a));
  return { params, iterations: top.iterations, score: top.score, curve };
}

/** The best of `trials` (in the order tried; ties go to the earlier setting). */
export function bestOf(trials: readonly Trial[]): Trial {
  return trials.reduce((a, t) => (t.score > a.score ? t : a));
}

/** The search's result from its trials, in the order tried. */
export function selectionOf(trials: Trial[]): Selection {
  const best = bestOf(trials);
  return {
    params: best.params,
    iterations: best.iterations,
    score: best.score,
    trials,
    settingsTried: trials.length,
    modelsCompared: trials.reduce((n, t) => n + t.curve.length, 0),
  };
}

/** The best setting and number of trees by `scorer` over `start` then `settings` random draws.
 *  Ties go to the earlier setting and the fewer trees. */
export function search(scorer: Scorer, options: Partial<SearchOptions> = {}): Selection {
  const o = { ...SEARCH_DEFAULTS, ...options };
  const candidates = candidatesOf(o);
  const trials: Trial[] = [];
  for (const params of candidates) {
    const iterations = checkpointsFor(params, o);
    trials.push(trialOf(params, iterations, scorer(params, iterations)));
    o.progress(trials.length, candidates.length, bestOf(trials));
  }
  return selectionOf(trials);
}

/** A training period and the validation period that follows it (row indices). */
export interface Fold {
  train: readonly number[];
  validation: readonly number[];
}

export interface SelectionData {
  /** Row-major features of the given rows (indices as in `labels`). */
  matrix(rows: readonly number[]): Float64Array;
  width: number;
  labels: ArrayLike<number>;
  /** Categorical columns. */
  categorical?: number[];
  /** Each row's starting raw score (another model's margins), when the boosters learn on from it:
   *  training starts there and validation scores it plus the trees. */
  initScores?: ArrayLike<number>;
}

export interface ScorerOptions {
  /** Parameters of every booster, below the searched ones (objective, seed, constraints, ...). */
  base: Params;
  /** The validation metric, higher better (default: average precision). */
  metric: (scores: Float64Array, labels: Float64Array) => number;
}

/** The raw scores of `rows` (row-major, `width` wide) after each of `iterations` trees of a model,
 *  added to `start` when given: the model is cut into consecutive slices of trees and each slice
 *  scored once. */
export function checkpointScores(modelText: string, rows: Float64Array, width: number, iterations: readonly number[], start?: Float64Array): Float64Array[] {
  const trees = treeCount(modelText);
  const sum = start ? start.slice() : new Float64Array(rows.length / width);
  let done = 0;
  return iterations.map((n) => {
    const upto = Math.min(n, trees); // a booster that stops early (nothing left to split) has fewer
    if (upto > done) {
      const part = loadModel(sliceTrees(modelText, done, upto)).predictRawBatch(rows);
      for (let i = 0; i < sum.length; i++) sum[i]! += part[i]!;
      done = upto;
    }
    return sum.slice();
  });
}

/** A fold's rows, gathered: row-major matrices and labels. */
export interface PreparedFold {
  train: Float64Array;
  trainLabels: Float64Array;
  validation: Float64Array;
  validationLabels: Float64Array;
  /** The rows' starting raw scores, when the data has them. */
  trainInit?: Float64Array;
  validationInit?: Float64Array;
}

/** The folds' matrices and labels, gathered once for every setting; `alloc`, when given, makes
 *  each array's storage (shared memory, say, for worker threads) and the gathered rows are copied
 *  into it. */
export function prepareFolds(data: SelectionData, folds: readonly Fold[], alloc?: (length: number) => Float64Array): PreparedFold[] {
  if (folds.length === 0) throw new Error('prequentialScorer: no folds');
  const place = (a: Float64Array) => {
    if (!alloc) return a;
    const out = alloc(a.length);
    out.set(a);
    return out;
  };
  const init = data.initScores;
  return folds.map((f) => ({
    train: place(data.matrix(f.train)),
    trainLabels: place(Float64Array.from(f.train, (i) => data.labels[i]!)),
    validation: place(data.matrix(f.validation)),
    validationLabels: place(Float64Array.from(f.validation, (i) => data.labels[i]!)),
    ...(init ? { trainInit: place(Float64Array.from(f.train, (i) => init[i]!)), validationInit: place(Float64Array.from(f.validation, (i) => init[i]!)) } : {}),
  }));
}

/** One setting's mean validation figures over the folds at each checkpoint, one list per metric:
 *  per fold, a booster trained on its training rows up to the last checkpoint and scored at every
 *  checkpoint. */
export function scoreSettingOn(
  folds: readonly PreparedFold[],
  shape: { width: number; categorical?: number[] },
  params: Params,
  iterations: readonly number[],
  metrics: readonly ScorerOptions['metric'][],
): number[][] {
  const sums = metrics.map(() => new Array<number>(iterations.length).fill(0));
  for (const f of folds) {
    const text = trainLightgbm({
      rows: f.train,
      numFeatures: shape.width,
      labels: f.trainLabels,
      params,
      categorical: shape.categorical,
      iterations: iterations[iterations.length - 1]!,
      initScores: f.trainInit,
    });
    checkpointScores(text, f.validation, shape.width, iterations, f.validationInit).forEach((s, k) => {
      metrics.forEach((metric, m) => {
        sums[m]![k]! += metric(s, f.validationLabels);
      });
    });
  }
  return sums.map((list) => list.map((s) => s / folds.length));
}

/** One setting's mean validation score over the folds at each checkpoint (`scoreSettingOn` with one
 *  metric). */
export function scoreSetting(
  folds: readonly PreparedFold[],
  shape: { width: number; categorical?: number[] },
  params: Params,
  iterations: readonly number[],
  metric: ScorerOptions['metric'] = averagePrecision,
): number[] {
  return scoreSettingOn(folds, shape, params, iterations, [metric])[0]!;
}

/** The scorer of prequential validation: `scoreSetting` over the folds, gathered once. */
export function prequentialScorer(data: SelectionData, folds: readonly Fold[], options: Partial<ScorerOptions> = {}): Scorer {
  const prepared = prepareFolds(data, folds);
  return (params, iterations) => scoreSetting(prepared, data, { ...options.base, ...params }, iterations, options.metric);
}
