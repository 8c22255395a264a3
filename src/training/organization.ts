// An organization's challenger, learned from its own recorded traffic as it was known at a moment:
// the built-in boosters with trees added (kept only when better on validation and on test), or only
// a new calibration. Rows come in as the caller read them (the features stored with each scored
// transaction and the label known then); nothing here reads or writes storage. How and why, with
// the measurements: docs/model.md, "Challengers".

import { gapIntervals, splitIntervals } from './split-intervals.ts';
import { loadModel } from '../addon/addon.ts';
import type { ModelBundle } from '../model/bundle-types.ts';
import { boostersDigest, CustomSettings } from '../model/custom.ts';
import { averagePrecision, expectedCalibrationError, rocAuc } from '../model/metrics.ts';
import type { Channel } from '../domain/channels.ts';
import type { ChannelMatrices } from '../domain/features/extract.ts';
import { fitLogistic, sigmoid, type Logistic } from './logistic.ts';
import { splitByTime, type Split } from './split.ts';
import { DEFAULT_TRAINING, selectSettings, trainChannelBoosters, type TrainOptions } from './train.ts';
import { appendTrees } from './partition.ts';
import { movedFeatures, type MovedFeature } from './feature-drift.ts';

/** Fewest labelled frauds each fitted part must hold: the added trees' training part and the
 *  validation part that chooses their number (own boosters only), and the rows before the test
 *  part that the measured calibration is fitted on. */
export const MIN_FRAUDS = { train: 50, validation: 10, calibration: 10 } as const;
/** The share of the span the test part takes when only the calibration is refitted. */
const RECALIBRATE_TEST_SHARE = 0.3;
/** The share of the span each of the validation and test parts takes for boosters of the
 *  organization's own: npm run train's, which leaves the boosters the most. */
const OWN_SHARE = DEFAULT_TRAINING.validationShare;
/** The most trees the early stopping may keep (as the built-in model's search). */
const MAX_TREES = 1000;

export class TooFewFrauds extends Error {}
/** Boosting on from the built-in model gained nothing on validation: no model is made. */
export class NothingLearned extends Error {}

/** A scored transaction as it counts at `--as-of`: its stored features (every channel's, in the
 *  model's order) and the label known then. */
export interface Counted {
  time: number;
  label: 0 | 1;
  features: Float32Array;
}

/** Each channel's features of `rows`, row-major, as training takes them. */
function channelMatrices(bundle: ModelBundle, rows: readonly Counted[]): ChannelMatrices {
  const out = {} as ChannelMatrices;
  let offset = 0;
  for (const c of bundle.channels) {
    const w = c.features.length;
    const flat = new Float64Array(rows.length * w);
    rows.forEach((r, i) => {
      for (let j = 0; j < w; j++) flat[i * w + j] = r.features[offset + j]!;
    });
    out[c.name] = flat;
    offset += w;
  }
  return out;
}

/** Each channel's raw margin for every row (rows × channels, row-major), by `engines` (the
 *  bundle's own, or boosters trained here, in the channels' order). */
function margins(bundle: ModelBundle, matrices: ChannelMatrices, n: number, engines = bundle.channels.map((c) => c.engine)): Float64Array {
  const k = bundle.channels.length;
  const out = new Float64Array(n * k);
  bundle.channels.forEach((c, j) => {
    const raw = engines[j]!.predictRawBatch(matrices[c.name]);
    raw.forEach((v, i) => {
      out[i * k + j] = v;
    });
  });
  return out;
}

export interface Counts {
  transactions: number;
  frauds: number;
  /** Own boosters: the rows the added trees learned from, and those their number was chosen on. */
  train?: number;
  validation?: number;
  /** The rows before the test part, which the measured calibration was fitted on (the stored
   *  model's is fitted on all `transactions`). */
  calibration: number;
  test: number;
  test_frauds: number;
}

export interface Made {
  settings: CustomSettings;
  /** Its own boosters' texts by channel (none when recalibrated). */
  boosters?: Record<Channel, string>;
  /** Own boosters: the features the added trees left out, as they moved before validation. */
  featuresLeftOut?: MovedFeature[];
  counts: Counts;
  /** Both models on the test part, each figure's 95 % bootstrap interval over its rows, and the
   *  challenger's gain in ranking with its paired interval (both scored on each resample). */
  test: { built_in: Figures; challenger: Figures; challenger_minus_built_in: ReturnType<typeof gapIntervals> };
}

interface Figures {
  average_precision: number | null;
  roc_auc: number | null;
  expected_calibration_error: number;
  mean_score: number;
  fraud_rate: number;
  intervals: ReturnType<typeof splitIntervals>;
}

function figures(p: ArrayLike<number>, y: ArrayLike<number>, seed: number): Figures {
  const frauds = Array.from(y).filter((v) => v === 1).length;
  const round = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    average_precision: frauds > 0 ? round(averagePrecision(p, y)) : null,
    roc_auc: frauds > 0 && frauds < y.length ? round(rocAuc(p, y)) : null,
    expected_calibration_error: round(expectedCalibrationError(p, y)),
    mean_score: round(Array.from(p).reduce((a, b) => a + b, 0) / Math.max(p.length, 1)),
    fraud_rate: round(frauds / Math.max(y.length, 1)),
    intervals: splitIntervals(p, y, seed),
  };
}

/** A row as the split and the fraud counts see it. */
type Labelled = Pick<Counted, 'time' | 'label'>;

/** The two kinds of an organization's model. */
export type OrganizationModelKind = 'recalibrated' | 'own_boosters';

/** How `rows` are split for a model of `kind`: the parts, the rows its measured calibration is
 *  fitted on, and their counts; TooFewFrauds when a part has too few frauds to fit. */
function planned(bundle: ModelBundle, rows: readonly Labelled[], kind: OrganizationModelKind): { parts: Split; fitted: number[]; counts: Counts } {
  const own = kind === 'own_boosters';
  const parts = split(rows, bundle.file.training.label_delay_ms, own ? OWN_SHARE : RECALIBRATE_TEST_SHARE);
  const fitted = rowsBefore(rows, parts.bounds.validation[1]);
  const counts: Counts = {
    transactions: rows.length,
    frauds: totalFrauds(rows),
    ...(own ? { train: parts.train.length, validation: parts.validation.length } : {}),
    calibration: fitted.length,
    test: parts.test.length,
    test_frauds: fraudsIn(rows, parts.test),
  };
  if (own) enoughFrauds(rows, { train: parts.train, validation: parts.validation }, 'train boosters');
  else enoughFrauds(rows, { calibration: fitted }, 'recalibrate');
  return { parts, fitted, counts };
}

/** The counts a model of `kind` would be made and measured from (rows oldest first), without
 *  making it; TooFewFrauds as making it would. */
export function plannedCounts(bundle: ModelBundle, rows: readonly Labelled[], kind: OrganizationModelKind): Counts {
  return planned(bundle, rows, kind).counts;
}

/** The time split, or TooFewFrauds when the rows span too little time for it. */
function split(rows: readonly Labelled[], gap: number, share: number): Split {
  try {
    return splitByTime(
      Float64Array.from(rows, (r) => r.time),
      { validationShare: share, testShare: share, gap },
    );
  } catch (e) {
    throw new TooFewFrauds(
      `the organization's ${rows.length} transactions older than the label delay (${totalFrauds(rows)} frauds known) ${rows.length ? 'span too little time for three parts separated by the label delay' : 'are none'}: ${(e as Error).message}. Wait for more traffic.`,
    );
  }
}

const fraudsIn = (rows: readonly Labelled[], indices: readonly number[]) => indices.reduce((n, i) => n + rows[i]!.label, 0);

/** Refuses, with every part's count, when a fitted part holds too few labelled frauds. */
function enoughFrauds(rows: readonly Labelled[], parts: Partial<Record<keyof typeof MIN_FRAUDS, readonly number[]>>, what: string): void {
  const names = Object.keys(parts) as (keyof typeof MIN_FRAUDS)[];
  const found = names.map((p) => fraudsIn(rows, parts[p]!));
  if (names.every((p, j) => found[j]! >= MIN_FRAUDS[p])) return;
  const list = (items: readonly (string | number)[]) => items.join(', ').replace(/, ([^,]*)$/, ' and $1');
  throw new TooFewFrauds(
    `too few labelled frauds to ${what} from: ${list(names.map((p, j) => `${found[j]} ${PART_NAMES[p]}`))} (need ${list(names.map((p) => MIN_FRAUDS[p]))}), of ${rows.length} transactions older than the label delay with ${totalFrauds(rows)} frauds known. Report more outcomes, or wait for more traffic.`,
  );
}

const PART_NAMES: Record<keyof typeof MIN_FRAUDS, string> = {
  train: 'in the training part',
  validation: 'in the validation part',
  calibration: 'before the test part',
};

const totalFrauds = (rows: readonly Labelled[]) => rows.reduce((n, r) => n + r.label, 0);

/** A stack (bias, one weight per channel, channels in the bundle's order) and a Platt calibration. */
interface Head {
  stack: Logistic;
  calibration: { bias: number; slope: number };
}

/** Row i's stacked log-odds from `raw` (rows × k margins). */
function stackedAt(stack: Logistic, raw: Float64Array, k: number, i: number): number {
  let z = stack.bias;
  for (let j = 0; j < k; j++) z += stack.weights[j]! * raw[i * k + j]!;
  return z;
}

/** The probability a head gives row i of `raw`. */
const probabilityAt = (head: Head, raw: Float64Array, k: number) => (i: number) =>
  sigmoid(head.calibration.bias + head.calibration.slope * stackedAt(head.stack, raw, k, i));

/** The Platt calibration of `stack`'s log-odds fitted on `rows`. */
function fitPlatt(stack: Logistic, raw: Float64Array, k: number, labels: ArrayLike<number>, rows: readonly number[]): Head['calibration'] {
  const platt = fitLogistic(
    Float64Array.from(rows, (i) => stackedAt(stack, raw, k, i)),
    1,
    Float64Array.from(rows, (i) => labels[i]!),
  );
  return { bias: platt.bias, slope: platt.weights[0]! };
}

const rowsBefore = (rows: readonly Labelled[], time: number) => rows.flatMap((r, i) => (r.time < time ? [i] : []));

/** `stack` with its calibration twice: the one measured on the test part (fitted on `fitted`, the
 *  rows before it) and the one stored (fitted on every row). */
function measuredAndStored(
  stack: Logistic,
  raw: Float64Array,
  k: number,
  labels: ArrayLike<number>,
  fitted: readonly number[],
): { measured: Head; stored: Head } {
  return {
    measured: { stack, calibration: fitPlatt(stack, raw, k, labels, fitted) },
    stored: {
      stack,
      calibration: fitPlatt(
        stack,
        raw,
        k,
        labels,
        Array.from(labels, (_, i) => i),
      ),
    },
  };
}

/** The base model's own head. */
function builtInHead(bundle: ModelBundle): Head {
  const f = bundle.file;
  return { stack: { bias: f.stack.bias, weights: bundle.channels.map((c) => f.stack.weights[c.name]) }, calibration: f.calibration };
}

function settingsOf(bundle: ModelBundle, head: Head, boosters?: CustomSettings['boosters']): CustomSettings {
  const f = bundle.file;
  return CustomSettings.parse({
    stack: { bias: head.stack.bias, weights: Object.fromEntries(bundle.channels.map((c, j) => [c.name, head.stack.weights[j]!])) },
    thresholds: Object.fromEntries(Object.entries(f.thresholds).map(([mode, t]) => [mode, { review: t.review, block: t.block }])),
    bands: { medium: f.bands.medium, high: f.bands.high, critical: f.bands.critical },
    calibration: { method: 'platt', ...head.calibration },
    ...(boosters ? { boosters } : {}),
  });
}

/** The built-in model (its margins `baseRaw`) and the new one (`made`) on the test rows. */
function testFigures(
  bundle: ModelBundle,
  baseRaw: Float64Array,
  made: (i: number) => number,
  labels: ArrayLike<number>,
  test: readonly number[],
): Made['test'] {
  const builtIn = probabilityAt(builtInHead(bundle), baseRaw, bundle.channels.length);
  const y = Float64Array.from(test, (i) => labels[i]!);
  const before = Float64Array.from(test, builtIn);
  const after = Float64Array.from(test, made);
  const seed = bundle.file.training.seed;
  return { built_in: figures(before, y, seed), challenger: figures(after, y, seed), challenger_minus_built_in: gapIntervals(after, before, y, seed) };
}

/** The built-in model with its calibration refitted on `rows` (boosters and stack kept): measured
 *  with one fitted on the rows before the test part, stored with one fitted on every row; throws
 *  TooFewFrauds with the counts. */
export function recalibrate(bundle: ModelBundle, rows: readonly Counted[]): Made {
  const { parts, fitted, counts } = planned(bundle, rows, 'recalibrated');
  const labels = Float64Array.from(rows, (r) => r.label);
  const k = bundle.channels.length;
  const raw = margins(bundle, channelMatrices(bundle, rows), rows.length);
  const { measured, stored } = measuredAndStored(builtInHead(bundle).stack, raw, k, labels, fitted);
  return { settings: settingsOf(bundle, stored), counts, test: testFigures(bundle, raw, probabilityAt(measured, raw, k), labels, parts.test) };
}

/** Boosters of the organization's own, from `rows`: the built-in boosters with trees added that
 *  learn what their calibrated log-odds miss on this organization, trained on the first part from
 *  those log-odds as initial scores with the base model's recipe, their number early-stopped on
 *  the second part (validation average precision), without the features that moved from the
 *  first part to the second (feature-drift.ts).
 *  Each channel's new trees are appended to the built-in channel booster, scaled by
 *  1 / (calibration slope × channel weight), so that with the built-in stack and calibration the
 *  served log-odds are the built-in ones plus the new trees' sum, as trained; the calibration is
 *  then refitted as recalibrate() does. Throws TooFewFrauds, and NothingLearned when the trees do
 *  not beat the built-in model by average precision and ROC AUC both, on validation and on the
 *  test part. */
export async function trainOwn(bundle: ModelBundle, builtInTexts: readonly string[], rows: readonly Counted[]): Promise<Made> {
  const { parts, fitted, counts } = planned(bundle, rows, 'own_boosters');
  const labels = Float64Array.from(rows, (r) => r.label);
  const k = bundle.channels.length;
  const matrices = channelMatrices(bundle, rows);
  const baseRaw = margins(bundle, matrices, rows.length);
  const base = builtInHead(bundle);
  const start = Float64Array.from(rows, (_, i) => base.calibration.bias + base.calibration.slope * stackedAt(base.stack, baseRaw, k, i));
  const training = bundle.file.training as { params?: TrainOptions['params']; unused_features?: string[] };
  const recipe = training.params ?? {};
  const names = bundle.channels.flatMap((c) => c.features);
  const moved = movedFeatures(names, (j, at) => Float64Array.from(at, (i) => rows[i]!.features[j]!), parts.train, parts.validation).map((m) => ({
    feature: m.feature,
    psi: Math.round(m.psi * 1000) / 1000,
  }));
  const unused = [...new Set([...(training.unused_features ?? []), ...moved.map((m) => m.feature)])];
  const o: TrainOptions = {
    ...DEFAULT_TRAINING,
    seed: bundle.file.training.seed,
    labelDelay: bundle.file.training.label_delay_ms,
    params: recipe,
    unusedFeatures: unused,
    iterations: MAX_TREES,
    settings: 0,
  };
  const chosen = await selectSettings(matrices, labels, parts, o, start);
  const trained = trainChannelBoosters(
    matrices,
    labels,
    parts.train,
    { ...o, params: { ...recipe, ...chosen.settings.params }, iterations: chosen.settings.iterations },
    start,
  );
  const texts = bundle.channels.map((c, j) =>
    appendTrees(builtInTexts[j]!, trained.find((b) => b.channel === c.name)!.modelText, 1 / (base.calibration.slope * base.stack.weights[j]!)),
  );
  const raw = margins(
    bundle,
    matrices,
    rows.length,
    texts.map((t) => loadModel(t)),
  );
  // Held to every figure at once: the added trees must rank validation better by AP and by AUC,
  // and the test part too (trees can pass validation by chance; the later weeks then say so).
  const lost = (part: readonly number[]) => {
    const y = Float64Array.from(part, (i) => labels[i]!);
    const alone = Float64Array.from(part, (i) => start[i]!);
    const added = Float64Array.from(part, (i) => stackedAt(base.stack, raw, k, i));
    const checked = [
      { name: 'average precision', f: averagePrecision },
      { name: 'ROC AUC', f: rocAuc },
    ].map(({ name, f }) => ({ name, alone: f(alone, y), added: f(added, y) }));
    return checked.some((c) => !(c.added > c.alone))
      ? checked.map((c) => `${c.name} ${c.alone.toFixed(4)} alone, ${c.added.toFixed(4)} with them`).join('; ')
      : undefined;
  };
  const onValidation = lost(parts.validation);
  if (onValidation) {
    throw new NothingLearned(
      `the added trees (${chosen.settings.iterations}, early-stopped) do not beat the built-in model on the validation part in every figure (${onValidation}): the organization's outcomes teach nothing it does not know yet. Make a --recalibrate challenger instead, or wait for more outcomes.`,
    );
  }
  const onTest = lost(parts.test);
  if (onTest) {
    throw new NothingLearned(
      `the added trees (${chosen.settings.iterations}, early-stopped) beat the built-in model on the validation part but not on the later test part in every figure (${onTest}): what they learned did not hold. Make a --recalibrate challenger instead, or wait for more outcomes.`,
    );
  }
  const { measured, stored } = measuredAndStored(base.stack, raw, k, labels, fitted);
  return {
    settings: settingsOf(bundle, stored, { sha256: boostersDigest(texts), trees: chosen.settings.iterations }),
    boosters: Object.fromEntries(bundle.channels.map((c, j) => [c.name, texts[j]!])) as Record<Channel, string>,
    featuresLeftOut: moved,
    counts,
    test: testFigures(bundle, baseRaw, probabilityAt(measured, raw, k), labels, parts.test),
  };
}
