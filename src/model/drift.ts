// Drift: whether the transactions a model is asked to score look like those it was trained and
// validated on. The model folder carries a reference (reference.json, made by `npm run train`):
// per feature, the training split's decile bins, missing share, range and importance; the payment
// types and locations seen in training with their shares; and a sample of validation rows' raw
// channel scores, from which each bundle (built-in or custom, which share the boosters) derives the
// score distribution it was validated with. A `DriftCounter` counts rows into the same bins (a
// dataset job, a week of live traffic) and `report` compares with the population stability index:
//
//   PSI = Σ_bins (actual − expected) · ln(actual / expected), shares floored at 1e-4.
//
// Rules of thumb (docs/model.md): below 0.1 no meaningful shift, 0.1–0.25 a moderate one, 0.25 and
// over a major one. The verdict is `shifted` when the score's PSI or a top feature's PSI is ≥ 0.25
// (with at least MIN_ROWS_FOR_PSI rows: below that PSI is mostly sampling noise), when values never
// seen in training cover at least UNSEEN_SHARE of the rows, or when at least OUT_OF_RANGE_SHARE of
// the rows have a top feature outside its training range (trees are flat beyond it: the score no
// longer moves with the value). Top features are the TOP_FEATURES most important among those that
// describe the payment and its parties' activity; all-time counts and rates of known outcomes
// (HISTORY_DEPENDENT_FEATURES) are reported but decide nothing.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { HISTORY_DEPENDENT_FEATURES, type ChannelMatrices } from '../domain/features/extract.ts';
import { UNKNOWN } from '../domain/transaction.ts';
import { combineInto } from './combine.ts';
import type { ModelBundle } from './model.ts';
import { CATEGORY_FIELDS, ReferenceFileSchema, type CategoryField, type DriftReference, type ReferenceFile } from './drift-reference.ts';

export const PSI_MODERATE = 0.1;
export const PSI_MAJOR = 0.25;
export const UNSEEN_SHARE = 0.05;
export const OUT_OF_RANGE_SHARE = 0.05;
export const MIN_ROWS_FOR_PSI = 200;
/** Below this many rows there is no report at all. */
export const MIN_ROWS = 20;
/** Rows a report counts at most: a larger file or week is sampled evenly (every k-th row). PSI over
 *  ten bins is as good as settled at this size. */
export const DRIFT_SAMPLE = 20_000;
/** Features ranked by importance that can decide the verdict. */
export const TOP_FEATURES = 10;
export const BINS = 10;
/** The sentence every surface shows when the verdict is not `ok`. */
export const DRIFT_WARNING = 'these scores are outside what the model was validated on';
const FLOOR = 1e-4;
/** A drift report: the one definition, which the API's reference documents as it is. */
export const DriftReportSchema = z
  .object({
    verdict: z.enum(['ok', 'shifted']).describe(`\`shifted\`: the score or a top feature has PSI ≥ ${PSI_MAJOR}, unseen payment types or locations are on ≥ ${100 * UNSEEN_SHARE} % of rows, or ≥ ${100 * OUT_OF_RANGE_SHARE} % of rows have a top feature outside its training range`),
    reasons: z.array(z.string()).describe('What made it shifted (empty when ok): `score_psi`, `feature_psi:<feature>`, `unseen_categories`, `out_of_range`'),
    warning: z.string().nullable().describe(`When shifted: "${DRIFT_WARNING}", with the reasons; else null`),
    rows: z.number().int().describe(`Rows counted (an even sample of at most ${DRIFT_SAMPLE.toLocaleString('en')})`),
    score_psi: z.number().describe(`Population stability index of the scores against validation (${PSI_MODERATE} moderate, ${PSI_MAJOR} major)`),
    features: z.array(z.object({ feature: z.string(), psi: z.number(), out_of_range_share: z.number() })).describe('Every feature, largest PSI first'),
    unseen_categories: z.object({ payment_type: z.array(z.string()), location: z.array(z.string()) }).describe('Values never seen in training, most frequent first (at most 20 each)'),
    unseen_share: z.number().describe('Share of rows with an unseen payment type or location'),
    out_of_range_share: z.number().describe('Share of rows with a top feature outside its training range'),
    top_features: z.array(z.string()).describe('The features whose PSI and range decide the verdict (by importance; history-dependent ones excluded)'),
  })
  .describe(`Drift against the model's reference (null with fewer than ${MIN_ROWS} rows, or when the model has no reference)`);
export type DriftReport = z.infer<typeof DriftReportSchema>;

/** Quantile bin edges (distinct, ascending) and each bin's share; bin k holds values ≤ edges[k]
 *  and > edges[k − 1]; the last bin everything above the last edge. */
export function quantileBins(values: Float64Array, bins = BINS): { edges: number[]; shares: number[] } {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort();
  if (sorted.length === 0) return { edges: [], shares: [1] };
  const edges: number[] = [];
  for (let k = 1; k < bins; k++) {
    const v = sorted[Math.ceil((k * sorted.length) / bins) - 1]!;
    if (v < sorted[sorted.length - 1]! && (edges.length === 0 || v > edges[edges.length - 1]!)) edges.push(v);
  }
  const counts = new Array<number>(edges.length + 1).fill(0);
  for (const v of sorted) counts[binOf(edges, v)]!++;
  return { edges, shares: counts.map((c) => c / sorted.length) };
}

function binOf(edges: readonly number[], v: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v <= edges[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** PSI between expected and actual shares (same bins). */
export function psi(expected: readonly number[], actual: readonly number[]): number {
  let s = 0;
  for (let k = 0; k < expected.length; k++) {
    const e = Math.max(expected[k]!, FLOOR);
    const a = Math.max(actual[k]!, FLOOR);
    s += (a - e) * Math.log(a / e);
  }
  return s;
}

/** The reference of a model folder for one bundle, or undefined when the folder has none. */
export function loadReference(dir: string, bundle: ModelBundle, baseModelId = bundle.file.id): DriftReference | undefined {
  let file: ReferenceFile;
  try {
    file = ReferenceFileSchema.parse(JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')));
  } catch {
    return undefined;
  }
  if (file.model_id !== baseModelId) return undefined;
  return prepareReference(file, bundle);
}

export function prepareReference(file: ReferenceFile, bundle: ModelBundle): DriftReference {
  const ranked = file.features
    .filter((f) => !(HISTORY_DEPENDENT_FEATURES as readonly string[]).includes(f.feature))
    .sort((a, b) => b.importance - a.importance)
    .slice(0, TOP_FEATURES)
    .map((f) => f.feature);
  const widths = bundle.channels.map((c) => c.features.length);
  const starts = widths.map((_, k) => widths.slice(0, k).reduce((a, b) => a + b, 0));
  const features = file.features.map((f) => ({ ...f, decides: ranked.includes(f.feature) }));
  const channel = Int32Array.from(file.features, (f) => bundle.channels.findIndex((c) => c.name === f.channel));
  const column = Int32Array.from(file.features, (f, k) => bundle.channels[channel[k]!]!.features.indexOf(f.feature));
  // This bundle's scores on the validation sample, as it would answer them (weights, calibration
  // and cold-start floor included), binned by their own deciles.
  const out = new Float64Array(1 + 2 * bundle.channels.length);
  const scores = Float64Array.from(file.score_sample.raw, (raw, i) => {
    combineInto(bundle, raw, file.score_sample.cold[i] === 1, 'balanced', out, 0);
    return out[0]!;
  });
  const edgeStart = new Int32Array(features.length + 1);
  const binStart = new Int32Array(features.length + 1);
  features.forEach((f, k) => {
    edgeStart[k + 1] = edgeStart[k]! + f.edges.length;
    binStart[k + 1] = binStart[k]! + f.edges.length + 2;
  });
  const flat = {
    channel,
    column,
    offset: Int32Array.from(column, (c, k) => starts[channel[k]!]! + c),
    edgeStart,
    edges: Float64Array.from(features.flatMap((f) => f.edges)),
    binStart,
    min: Float64Array.from(features, (f) => f.min ?? -Infinity),
    max: Float64Array.from(features, (f) => f.max ?? Infinity),
    decides: Uint8Array.from(features, (f) => (f.decides ? 1 : 0)),
  };
  return {
    file,
    features,
    flat,
    widths,
    total: widths.reduce((a, b) => a + b, 0),
    categories: { payment_type: new Set(Object.keys(file.categories.payment_type)), location: new Set(Object.keys(file.categories.location)) },
    score: quantileBins(scores),
  };
}

/** Counts rows into a reference's bins; `report` compares them with it. */
export class DriftCounter {
  private rows = 0;
  /** Every feature's bins one after another (`flat.binStart`): its value bins, then missing. */
  private readonly counts: Float64Array;
  private readonly outOfRange: Float64Array;
  private readonly scoreCounts: Float64Array;
  private readonly unseen = { payment_type: new Map<string, number>(), location: new Map<string, number>() };
  private unseenRows = 0;
  private outOfRangeRows = 0;
  private scored = 0;

  constructor(private readonly reference: DriftReference) {
    const flat = reference.flat;
    this.counts = new Float64Array(flat.binStart[flat.binStart.length - 1]!);
    this.outOfRange = new Float64Array(reference.features.length);
    this.scoreCounts = new Float64Array(reference.score.edges.length + 1);
  }

  /** One row's features (row `row` of each channel's row-major matrix, in the bundle's channel
   *  order) and its optional fields as given. */
  addRow(matrices: readonly Float64Array[], row: number, paymentType: string, location: string): void {
    const flat = this.reference.flat;
    const widths = this.reference.widths;
    let outside = false;
    for (let k = 0; k < flat.channel.length; k++) {
      const c = flat.channel[k]!;
      if (this.tally(k, matrices[c]![row * widths[c]! + flat.column[k]!]!)) outside = true;
    }
    this.finishRow(outside, paymentType, location);
  }

  /** One row's features as stored with a scored transaction: every channel's, one after another
   *  in the bundle's channel order. False (and nothing counted) when the length does not match. */
  addPacked(values: ArrayLike<number>, paymentType: string, location: string): boolean {
    const flat = this.reference.flat;
    if (values.length !== this.reference.total) return false;
    let outside = false;
    for (let k = 0; k < flat.offset.length; k++) if (this.tally(k, values[flat.offset[k]!]!)) outside = true;
    this.finishRow(outside, paymentType, location);
    return true;
  }

  /** Counts feature k's value; true when it is a top feature outside its training range. */
  private tally(k: number, value: number): boolean {
    const flat = this.reference.flat;
    const first = flat.binStart[k]!;
    const last = flat.binStart[k + 1]! - 1; // the missing bin
    if (value !== value) {
      this.counts[last]!++;
      return false;
    }
    // Bin b holds values ≤ edges[b] (and above the edge before); the top bin the rest.
    let b = first;
    const edges = flat.edges;
    for (let e = flat.edgeStart[k]!, end = flat.edgeStart[k + 1]!; e < end && value > edges[e]!; e++) b++;
    this.counts[b]!++;
    if (value < flat.min[k]! || value > flat.max[k]!) {
      this.outOfRange[k]!++;
      return flat.decides[k] === 1;
    }
    return false;
  }

  private finishRow(outside: boolean, paymentType: string, location: string): void {
    this.rows++;
    if (outside) this.outOfRangeRows++;
    // An omitted field is missing, not a new value: its features' missing bins show it.
    const newType = paymentType !== UNKNOWN && !this.reference.categories.payment_type.has(paymentType);
    const newPlace = location !== UNKNOWN && !this.reference.categories.location.has(location);
    if (newType) this.unseen.payment_type.set(paymentType, (this.unseen.payment_type.get(paymentType) ?? 0) + 1);
    if (newPlace) this.unseen.location.set(location, (this.unseen.location.get(location) ?? 0) + 1);
    if (newType || newPlace) this.unseenRows++;
  }

  addScore(score: number): void {
    this.scored++;
    this.scoreCounts[binOf(this.reference.score.edges, score)]!++;
  }

  report(): DriftReport | null {
    const n = this.rows;
    if (n < MIN_ROWS) return null;
    const ref = this.reference;
    const reasons: string[] = [];
    const scorePsi = this.scored > 0 ? psi(ref.score.shares, [...this.scoreCounts].map((c) => c / this.scored)) : 0;
    const enough = n >= MIN_ROWS_FOR_PSI;
    if (enough && scorePsi >= PSI_MAJOR) reasons.push('score_psi');
    const features = ref.features.map((f, k) => {
      const counts = this.counts.subarray(ref.flat.binStart[k]!, ref.flat.binStart[k + 1]!);
      // Missing is a bin of its own on both sides.
      const expected = [...f.shares.map((s) => s * (1 - f.missing)), f.missing];
      const value = psi(expected, [...counts].map((c) => c / n));
      if (enough && f.decides && value >= PSI_MAJOR) reasons.push(`feature_psi:${f.feature}`);
      return { feature: f.feature, psi: round(value), out_of_range_share: round(this.outOfRange[k]! / n) };
    });
    features.sort((a, b) => b.psi - a.psi || (a.feature < b.feature ? -1 : 1));
    const unseenShare = this.unseenRows / n;
    if (unseenShare >= UNSEEN_SHARE) reasons.push('unseen_categories');
    const outOfRangeShare = this.outOfRangeRows / n;
    if (outOfRangeShare >= OUT_OF_RANGE_SHARE) reasons.push('out_of_range');
    const listed = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 20).map(([v]) => v);
    return {
      verdict: reasons.length ? 'shifted' : 'ok',
      reasons,
      warning: reasons.length ? `Drift: ${DRIFT_WARNING} (${reasons.join(', ')}).` : null,
      rows: n,
      score_psi: round(scorePsi),
      features,
      unseen_categories: { payment_type: listed(this.unseen.payment_type), location: listed(this.unseen.location) },
      unseen_share: round(unseenShare),
      out_of_range_share: round(outOfRangeShare),
      top_features: ref.features.filter((f) => f.decides).map((f) => f.feature),
    };
  }
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/** The reference file for a trained model: features over the training rows, categories, and a
 *  validation sample of raw scores. `importance[c][j]` is feature j of channel c's importance. */
export function buildReference(input: {
  modelId: string;
  channels: readonly { name: string; features: readonly string[] }[];
  features: ChannelMatrices;
  referenceRows: readonly number[];
  /** Rows whose range counts as seen (the training and validation splits). */
  rangeRows: readonly number[];
  categories: Record<CategoryField, readonly string[]>;
  importance: readonly (readonly number[])[];
  sample: { raw: number[][]; cold: (0 | 1)[] };
}): ReferenceFile {
  const total = input.importance.flat().reduce((a, b) => a + b, 0) || 1;
  const features: ReferenceFile['features'] = [];
  input.channels.forEach((c, ci) => {
    const width = c.features.length;
    const matrix = (input.features as Record<string, Float64Array>)[c.name]!;
    c.features.forEach((feature, j) => {
      const values = Float64Array.from(input.referenceRows, (r) => matrix[r * width + j]!);
      let missing = 0;
      for (const v of values) if (Number.isNaN(v)) missing++;
      let min = Infinity;
      let max = -Infinity;
      for (const r of input.rangeRows) {
        const v = matrix[r * width + j]!;
        if (v < min) min = v;
        if (v > max) max = v;
      }
      const bins = quantileBins(values);
      features.push({
        feature,
        channel: c.name,
        edges: bins.edges,
        shares: bins.shares.map(round6),
        missing: round6(missing / values.length),
        min: Number.isFinite(min) ? min : null,
        max: Number.isFinite(max) ? max : null,
        importance: round6(input.importance[ci]![j]! / total),
      });
    });
  });
  const shares = (values: readonly string[]) => {
    const counts = new Map<string, number>();
    for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
    return Object.fromEntries([...counts].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, c]) => [k, round6(c / values.length)]));
  };
  return {
    model_id: input.modelId,
    split: 'validation',
    rows: input.referenceRows.length,
    features,
    categories: { payment_type: shares(input.categories.payment_type), location: shares(input.categories.location) },
    score_sample: { raw: input.sample.raw.map((r) => r.map(round6)), cold: input.sample.cold },
  };
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
