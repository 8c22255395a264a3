// Training: point-in-time features for the whole time-ordered dataset (one pass), a time split with
// label-delay gaps, one LightGBM booster per channel trained natively on the train split (together,
// as one interaction-constrained booster partitioned by channel: see partition.ts), the linear
// stack of their log-odds fitted on the first half of validation, and Platt calibration of the
// stacked log-odds fitted on the second half (a stack fitted and calibrated on the same rows would
// look better calibrated than it is). The test split is only scored, never fitted on.
// Optional fields are left out of a seeded share of the training rows (recorded as UNKNOWN, as the
// service records an omitted field), independently of their label, so the model learns that a
// missing location or payment type is not fraud evidence on its own; validation and test stay as
// the data came. Settings and number of trees are chosen first, on validation only
// (selectSettings), then, when asked, the feature groups the boosters leave out, on the same split
// (feature-groups.ts). Deterministic: seeded single-threaded LightGBM and a seeded search.

import { loadModel } from '../addon/addon.ts';
import { trainLightgbm } from '../addon/lightgbm.ts';
import { CHANNEL_FEATURES, extractBatch, type ChannelMatrices } from '../domain/features/extract.ts';
import type { Channel } from '../domain/channels.ts';
import { TABULAR_CATEGORICAL } from '../domain/features/tabular.ts';
import { DEFAULT_LABEL_DELAY_MS, History } from '../domain/history/history.ts';
import { UNKNOWN, type Transaction } from '../domain/transaction.ts';
import { Rng } from '../domain/rng.ts';
import { fitLogistic, sigmoid, type Logistic } from './logistic.ts';
import { interactionConstraints, partitionByChannel } from './partition.ts';
import { searchOnThreads } from './parallel-search.ts';
import { DEFAULT_SPACE, SPACE_FIXED, type Params, type SelectionData } from './selection.ts';
import { chooseUnusedFeatures, type GroupChoice } from './feature-groups.ts';
import { splitByTime, type Split } from './split.ts';

export const CHANNELS = Object.keys(CHANNEL_FEATURES) as Channel[];

export interface TrainOptions {
  seed: number;
  /** With a search: the most trees any setting may have (each is also held to 15 ÷ its learning
   *  rate, selection.ts). Without: the boosters' number of trees. */
  iterations: number;
  /** Random settings the search draws after the defaults; `null` trains `params` with `iterations`
   *  trees as given, without a search. */
  settings: number | null;
  labelDelay: number;
  validationShare: number;
  testShare: number;
  /** Share of training rows whose location, and (independently) whose payment type, is left out. */
  missingShare: number;
  /** Extra LightGBM parameters for every booster. */
  params: Record<string, string | number | boolean>;
  /** Features no tree may split on (computed and served all the same). */
  unusedFeatures: readonly string[];
  /** After the settings search, choose on validation which feature groups the boosters leave out
   *  (feature-groups.ts) instead of `unusedFeatures`. Off for the built-in model: docs/model.md. */
  featureGroups: boolean;
  /** Called with a stage name and a fraction done. */
  progress: (stage: string, fraction: number) => void;
}

export const DEFAULT_TRAINING: TrainOptions = {
  seed: 7,
  iterations: 1000,
  settings: 15,
  labelDelay: DEFAULT_LABEL_DELAY_MS,
  validationShare: 0.2,
  testShare: 0.2,
  missingShare: 0.05,
  params: {},
  unusedFeatures: [],
  featureGroups: false,
  progress: () => {},
};

export interface ChannelBooster {
  channel: Channel;
  features: readonly string[];
  categorical: number[];
  modelText: string;
}

export interface TrainedModel {
  boosters: ChannelBooster[];
  /** Stacked log-odds = stack.bias + Σ stack.weights[c] · raw_c, channels in `CHANNELS` order. */
  stack: Logistic;
  /** Probability = σ(calibration.bias + calibration.weights[0] · stacked log-odds). */
  calibration: Logistic;
}

/** What the search tried and chose (absent when trained without one). */
export interface SettingsSearch {
  metric: string;
  /** Distinct settings tried, and (setting, number of trees) models compared on validation. */
  settings_tried: number;
  models_compared: number;
  /** Every setting in the order tried (the defaults first), its early-stopped trees and score. */
  trials: { params: Params; iterations: number; score: number }[];
  /** The feature groups tried for leaving out, on the same validation split. */
  feature_groups?: GroupChoice;
}

export interface TrainingRun {
  model: TrainedModel;
  /** The searched LightGBM parameters the boosters were trained with, and their number of trees. */
  settings: { params: Params; iterations: number; unusedFeatures: string[] };
  search?: SettingsSearch;
  /** The rows as featurised: the input with optional fields left out of some training rows. */
  rows: Transaction[];
  split: Split;
  /** Each booster's raw score, and the stacked log-odds and calibrated probability, for every row
   *  of each split (indexed like `split.train`, `split.validation`, `split.test`). */
  scores: Record<'train' | 'validation' | 'test', { raw: Record<Channel, Float64Array>; stacked: Float64Array; probability: Float64Array }>;
  labels: Float64Array;
  /** Every row's features (row-major per channel), for evaluation. */
  features: ChannelMatrices;
}

export function gather(matrix: Float64Array, width: number, rows: number[]): Float64Array {
  const out = new Float64Array(rows.length * width);
  rows.forEach((r, i) => {
    out.set(matrix.subarray(r * width, (r + 1) * width), i * width);
  });
  return out;
}

/** Every channel's features side by side (channels in `CHANNELS` order) for the given rows. */
export function combinedMatrix(features: ChannelMatrices, rows: number[]): { matrix: Float64Array; width: number } {
  const widths = CHANNELS.map((c) => CHANNEL_FEATURES[c].length);
  const width = widths.reduce((a, b) => a + b, 0);
  const matrix = new Float64Array(rows.length * width);
  let offset = 0;
  CHANNELS.forEach((c, k) => {
    const w = widths[k]!;
    const part = gather(features[c], w, rows);
    for (let i = 0; i < rows.length; i++) matrix.set(part.subarray(i * w, (i + 1) * w), i * width + offset);
    offset += w;
  });
  return { matrix, width };
}

/** The LightGBM settings every booster starts from: the search's first setting, and what the
 *  searched ones override (docs/model.md, "Settings"). */
export function boosterParams(o: TrainOptions): Record<string, string | number | boolean> {
  return {
    objective: 'binary',
    num_leaves: 7,
    learning_rate: 0.05,
    min_data_in_leaf: 50,
    feature_fraction: 0.9,
    bagging_fraction: 0.8,
    bagging_freq: 1,
    seed: o.seed,
    ...o.params,
  };
}

const GROUPS = CHANNELS.map((name) => ({ name, features: CHANNEL_FEATURES[name] }));
const FEATURE_WIDTH = CHANNELS.reduce((w, c) => w + CHANNEL_FEATURES[c].length, 0);

/** Every channel's features side by side, as the search and the feature groups' choice read them. */
const selectionData = (features: ChannelMatrices, labels: Float64Array): SelectionData => ({
  matrix: (rows) => combinedMatrix(features, rows as number[]).matrix,
  width: FEATURE_WIDTH,
  labels,
  categorical: TABULAR_CATEGORICAL,
});

/** The four channel boosters, fitted on `rows` only: one booster with an interaction constraint per
 *  channel, partitioned by channel (their raw scores add up to the joint booster's). With
 *  `initScores` (every row's, indexed like `labels`), boosting starts from them and the boosters
 *  hold only what is added to them. */
export function trainChannelBoosters(
  features: ChannelMatrices,
  labels: Float64Array,
  rows: number[],
  o: TrainOptions,
  initScores?: Float64Array,
): ChannelBooster[] {
  const joint = combinedMatrix(features, rows);
  const jointText = trainLightgbm({
    rows: joint.matrix,
    numFeatures: joint.width,
    labels: Float64Array.from(rows, (i) => labels[i]!),
    params: { ...boosterParams(o), interaction_constraints: interactionConstraints(GROUPS, new Set(o.unusedFeatures)) },
    categorical: TABULAR_CATEGORICAL, // the tabular channel comes first
    iterations: o.iterations,
    ...(initScores ? { initScores: Float64Array.from(rows, (i) => initScores[i]!) } : {}),
  });
  const texts = partitionByChannel(jointText, GROUPS);
  return CHANNELS.map((channel, k) => ({
    channel,
    features: CHANNEL_FEATURES[channel],
    categorical: channel === 'tabular' ? TABULAR_CATEGORICAL : [],
    modelText: texts[k]!,
  }));
}

/** The boosters' settings and number of trees, chosen on the validation split: the default
 *  setting, then `o.settings` seeded random draws from selection.ts's space, each trained on the
 *  train split like the model (one constrained booster) and early-stopped at the checkpoint of best
 *  validation average precision of its summed channel scores (plus `initScores`, when boosting
 *  from them). Ties keep the earlier setting. */
export async function selectSettings(
  features: ChannelMatrices,
  labels: Float64Array,
  split: Split,
  o: TrainOptions,
  initScores?: Float64Array,
): Promise<{ settings: TrainingRun['settings']; search: SettingsSearch }> {
  const base: Params = { ...boosterParams(o), interaction_constraints: interactionConstraints(GROUPS, new Set(o.unusedFeatures)) };
  const defaults = Object.fromEntries(Object.keys(DEFAULT_SPACE).flatMap((k) => (k in base ? [[k, base[k]!]] : [])));
  const chosen = await searchOnThreads(
    { ...selectionData(features, labels), ...(initScores ? { initScores } : {}) },
    [{ train: split.train, validation: split.validation }],
    base,
    {
      settings: o.settings ?? 0,
      seed: o.seed,
      start: [defaults],
      fixed: SPACE_FIXED,
      maxIterations: o.iterations,
      progress: (done, total, best) =>
        o.progress(`selection: ${done} of ${total} settings, best validation AP ${best.score.toFixed(4)}`, 0.05 + (0.6 * done) / total),
    },
  );
  return {
    settings: { params: chosen.params, iterations: chosen.iterations, unusedFeatures: [...o.unusedFeatures] },
    search: {
      metric: 'average precision on the validation split of the summed channel scores',
      settings_tried: chosen.settingsTried,
      models_compared: chosen.modelsCompared,
      trials: chosen.trials.map((t) => ({ params: t.params, iterations: t.iterations, score: t.score })),
    },
  };
}

/** The rows with the location, and independently the payment type, replaced by UNKNOWN on a
 *  seeded `share` of those `rows[i]` with `within(i)`. */
export function withMissingFields(rows: readonly Transaction[], share: number, seed: number, within: (i: number) => boolean = () => true): Transaction[] {
  if (share <= 0) return [...rows];
  const rng = new Rng(seed ^ 0x5eed);
  return rows.map((r, i) => {
    if (!within(i)) return r;
    const dropLocation = rng.uniform() < share;
    const dropType = rng.uniform() < share;
    return dropLocation || dropType ? { ...r, ...(dropLocation ? { location: UNKNOWN } : {}), ...(dropType ? { payment_type: UNKNOWN } : {}) } : r;
  });
}

export async function train(rows: readonly Transaction[], options: Partial<TrainOptions> = {}): Promise<TrainingRun> {
  const o = { ...DEFAULT_TRAINING, ...options };
  if (rows.some((r) => r.label !== 0 && r.label !== 1)) throw new Error('every training row needs a label (0 or 1)');
  const split = splitByTime(
    Float64Array.from(rows, (r) => r.time),
    { validationShare: o.validationShare, testShare: o.testShare, gap: o.labelDelay },
  );
  const inTrain = new Uint8Array(rows.length);
  for (const i of split.train) inTrain[i] = 1;
  const featurised = withMissingFields(rows, o.missingShare, o.seed, (i) => inTrain[i] === 1);
  o.progress('features', 0);
  const { features } = extractBatch(featurised, new History(o.labelDelay));
  const labels = Float64Array.from(featurised, (r) => r.label!);
  const half = Math.floor(split.validation.length / 2);
  const stackRows = split.validation.slice(0, half);
  const calibrationRows = split.validation.slice(half);

  let settings: TrainingRun['settings'] = { params: o.params, iterations: o.iterations, unusedFeatures: [...o.unusedFeatures] };
  let searched: SettingsSearch | undefined;
  if (o.settings !== null) {
    o.progress('selection', 0.05);
    ({ settings, search: searched } = await selectSettings(features, labels, split, o));
    if (o.featureGroups) {
      o.progress('feature groups', 0.65);
      const groups = await chooseUnusedFeatures(
        selectionData(features, labels),
        [{ train: split.train, validation: split.validation }],
        GROUPS,
        { ...boosterParams(o), ...settings.params },
        settings.iterations,
      );
      settings = { ...settings, unusedFeatures: groups.unused };
      searched = { ...searched, feature_groups: groups };
    }
  }
  o.progress('training', 0.7);
  const boosters = trainChannelBoosters(features, labels, split.train, {
    ...o,
    params: { ...o.params, ...settings.params },
    iterations: settings.iterations,
    unusedFeatures: settings.unusedFeatures,
  });
  const engines = boosters.map((b) => loadModel(b.modelText));
  o.progress('stacking', 0.9);

  const rawFor = (indices: number[]) =>
    Object.fromEntries(CHANNELS.map((c, k) => [c, engines[k]!.predictRawBatch(gather(features[c], CHANNEL_FEATURES[c].length, indices))])) as Record<
      Channel,
      Float64Array
    >;
  const columns = (raw: Record<Channel, Float64Array>, n: number) => {
    const x = new Float64Array(n * CHANNELS.length);
    for (let i = 0; i < n; i++)
      CHANNELS.forEach((c, k) => {
        x[i * CHANNELS.length + k] = raw[c][i]!;
      });
    return x;
  };
  const stackRaw = rawFor(stackRows);
  const stack = fitLogistic(
    columns(stackRaw, stackRows.length),
    CHANNELS.length,
    Float64Array.from(stackRows, (i) => labels[i]!),
  );
  const stacked = (raw: Record<Channel, Float64Array>, n: number) =>
    Float64Array.from({ length: n }, (_, i) => CHANNELS.reduce((z, c, k) => z + stack.weights[k]! * raw[c][i]!, stack.bias));
  const calibrationRaw = rawFor(calibrationRows);
  const calibration = fitLogistic(
    stacked(calibrationRaw, calibrationRows.length),
    1,
    Float64Array.from(calibrationRows, (i) => labels[i]!),
  );

  const scoreSplit = (indices: number[]) => {
    const raw = rawFor(indices);
    const z = stacked(raw, indices.length);
    return { raw, stacked: z, probability: z.map((v) => sigmoid(calibration.bias + calibration.weights[0]! * v)) };
  };
  o.progress('scoring', 0.95);
  const run: TrainingRun = {
    model: { boosters, stack, calibration },
    settings,
    ...(searched ? { search: searched } : {}),
    rows: featurised,
    split,
    scores: { train: scoreSplit(split.train), validation: scoreSplit(split.validation), test: scoreSplit(split.test) },
    labels,
    features,
  };
  o.progress('done', 1);
  return run;
}
