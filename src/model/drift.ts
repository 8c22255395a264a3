// Drift: whether a model's answers on some data (a dataset job's file, a week of live traffic) can
// be trusted, and why. A `DriftCounter` counts rows into the bins of the model folder's reference
// (reference.json, made by `npm run train`) and `report` gives the verdict:
// - with MIN_OUTCOMES of each outcome, measured performance decides: `degraded` when average
//   precision or calibration error leaves what the test figures (metrics.json) allow, their 95 %
//   bootstrap interval widened by this sample's own noise; otherwise `ok`;
// - without, `shifted` when the scores, unseen categories or a feature of the payment itself move
//   past PSI_MAJOR, UNSEEN_SHARE or OUT_OF_RANGE_SHARE. Features that depend on the history or the
//   period covered (`featureDependence`) are listed with `in_verdict: false`: a short file moves
//   them while the payments stay alike. The score's bins are the bundle's thresholds and band edges,
//   not deciles, since most scores sit where a shift changes no answer.
// PSI = Σ_bins (actual − expected) · ln(actual / expected), shares floored at 1e-4. Detail: docs/model.md.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { featureDependence, type FeatureDependence } from '../domain/features/extract.ts';
import { UNKNOWN } from '../domain/transaction.ts';
import { combineInto } from './combine.ts';
import { averagePrecision, calibrationNoise, expectedCalibrationError, rocAuc } from './metrics.ts';
import type { MetricsFile, ModelBundle } from './bundle-types.ts';
import { ReferenceFileSchema, type DriftReference, type ReferenceFile, type TestFigures } from './drift-reference.ts';
import {
  DEGRADED_WARNING,
  DRIFT_SAMPLE,
  DRIFT_WARNING,
  MIN_OUTCOMES,
  MIN_ROWS,
  MIN_ROWS_FOR_PSI,
  OUT_OF_RANGE_SHARE,
  PSI_MAJOR,
  PSI_MODERATE,
  UNSEEN_SHARE,
} from './drift-limits.ts';

export { DEGRADED_WARNING, DRIFT_SAMPLE, DRIFT_WARNING, MIN_OUTCOMES, MIN_ROWS, MIN_ROWS_FOR_PSI, OUT_OF_RANGE_SHARE, PSI_MAJOR, PSI_MODERATE, UNSEEN_SHARE };

/** Standard normal quantile of the margins (95 %, two-sided). */
const Z = 1.96;
const FLOOR = 1e-4;

/** A drift report. The API's reference documents it field by field (DriftReport,
 *  src/contract/drift.ts, which must keep this shape: it does not compile otherwise). */
export interface DriftReport {
  verdict: 'ok' | 'shifted' | 'degraded';
  /** What decided the verdict: the outcomes when there are enough, else the first check that found
   *  a shift; `scores` when none did. */
  basis: 'outcomes' | 'scores' | 'categories' | 'features';
  /** What made the verdict (empty when ok). */
  reasons: string[];
  /** What the checks without outcomes found, listed even when outcomes decide. */
  signals: string[];
  warning: string | null;
  /** Rows counted (an even sample of at most DRIFT_SAMPLE). */
  rows: number;
  score_psi: number;
  /** Every feature, largest PSI first. */
  features: { feature: string; psi: number; out_of_range_share: number; depends_on: FeatureDependence; in_verdict: boolean }[];
  unseen_categories: { payment_type: string[]; location: string[] };
  unseen_share: number;
  out_of_range_share: number;
  /** What the calibrated scores promise, if they are right (no outcome used). */
  estimated: { fraud_rate: number; flagged_share: number; precision: number | null; recall: number | null };
  /** Measured on the rows' own outcomes; null without MIN_OUTCOMES of each kind. */
  measured: MeasuredPerformance | null;
}

/** Performance measured on outcomes, and what the test figures allow on this many of them (null
 *  when the model has no test figures, and nothing is decided). */
export interface MeasuredPerformance {
  rows: number;
  fraud: number;
  legit: number;
  roc_auc: number;
  average_precision: number;
  expected_calibration_error: number;
  precision: number | null;
  recall: number;
  allowed: { average_precision_min: number; expected_calibration_error_max: number } | null;
}

/** Rows' outcomes for the measured check: each row's score, its label (1 fraud, 0 legitimate) and
 *  whether it was flagged (review or block). */
export interface Outcomes {
  scores: ArrayLike<number>;
  labels: ArrayLike<number>;
  flagged: (i: number) => boolean;
  /** The ranking and calibration figures when the caller has them already (a labelled job's
   *  metrics), so that they are not computed twice. */
  figures?: { roc_auc: number; average_precision: number; expected_calibration_error: number };
}

/** Score bin: scores below edges[0], then [edges[k − 1], edges[k]), then at or above the last (a
 *  score equal to a threshold gets that threshold's answer, so it starts a bin). */
function scoreBinOf(edges: readonly number[], v: number): number {
  let b = 0;
  while (b < edges.length && v >= edges[b]!) b++;
  return b;
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

/** The test split's figures in a model's evaluation, or undefined when it lacks them. */
export function testFigures(metrics: MetricsFile): TestFigures | undefined {
  const t = metrics.splits.test;
  const intervals = (t as { intervals?: Record<string, unknown> }).intervals;
  const pair = (v: unknown): [number, number] | undefined =>
    Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'number') ? [v[0], v[1]] : undefined;
  const ap = pair(intervals?.average_precision);
  const ece = pair(intervals?.expected_calibration_error);
  if (!ap || !ece || t.average_precision === null) return undefined;
  return { average_precision: t.average_precision, average_precision_interval: ap, expected_calibration_error_interval: ece };
}

/** The reference of a model folder for one bundle, or undefined when the folder has none. */
export function loadReference(dir: string, bundle: ModelBundle, test: TestFigures | undefined, baseModelId = bundle.file.id): DriftReference | undefined {
  let file: ReferenceFile;
  try {
    file = ReferenceFileSchema.parse(JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')));
  } catch {
    return undefined;
  }
  if (file.model_id !== baseModelId) return undefined;
  return prepareReference(file, bundle, test);
}

/** Features that can decide the verdict: those of the payment alone, but its type, whose mix is the
 *  business's and whose new values count as unseen categories. */
const inVerdict = (feature: string) => featureDependence(feature) === 'payment' && feature !== 'payment_type';

export function prepareReference(file: ReferenceFile, bundle: ModelBundle, test: TestFigures | undefined): DriftReference {
  const widths = bundle.channels.map((c) => c.features.length);
  const starts = widths.map((_, k) => widths.slice(0, k).reduce((a, b) => a + b, 0));
  const features = file.features.map((f) => ({ ...f, dependsOn: featureDependence(f.feature), inVerdict: inVerdict(f.feature) }));
  const channel = Int32Array.from(file.features, (f) => bundle.channels.findIndex((c) => c.name === f.channel));
  const column = Int32Array.from(file.features, (f, k) => bundle.channels[channel[k]!]!.features.indexOf(f.feature));
  // This bundle's scores on the validation sample, as it would answer them (weights, calibration
  // and cold-start floor included), over the intervals its thresholds and bands make.
  const t = bundle.file.thresholds;
  const edges = [...new Set([...Object.values(t).flatMap((m) => [m.review, m.block]), ...Object.values(bundle.file.bands)])].sort((a, b) => a - b);
  const out = new Float64Array(1 + 2 * bundle.channels.length);
  const shares = new Array<number>(edges.length + 1).fill(0);
  file.score_sample.raw.forEach((raw, i) => {
    combineInto(bundle, raw, file.score_sample.cold[i] === 1, 'balanced', out, 0);
    shares[scoreBinOf(edges, out[0]!)]! += 1 / file.score_sample.raw.length;
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
    inVerdict: Uint8Array.from(features, (f) => (f.inVerdict ? 1 : 0)),
  };
  return {
    file,
    features,
    flat,
    widths,
    total: widths.reduce((a, b) => a + b, 0),
    categories: { payment_type: new Set(Object.keys(file.categories.payment_type)), location: new Set(Object.keys(file.categories.location)) },
    score: { edges, shares },
    ...(test ? { test } : {}),
  };
}

/** Counts rows into a reference's bins; `report` compares them with it. */
export class DriftCounter {
  private readonly reference: DriftReference;

  private rows = 0;
  /** Every feature's bins one after another (`flat.binStart`): its value bins, then missing. */
  private readonly counts: Float64Array;
  private readonly outOfRange: Float64Array;
  private readonly scoreCounts: Float64Array;
  private readonly unseen = { payment_type: new Map<string, number>(), location: new Map<string, number>() };
  private unseenRows = 0;
  private outOfRangeRows = 0;
  private scored = 0;
  private scoreSum = 0;
  private flagged = 0;
  private flaggedSum = 0;

  constructor(reference: DriftReference) {
    this.reference = reference;
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

  /** Counts feature k's value; true when it is a feature in the verdict beyond its training range. */
  private tally(k: number, value: number): boolean {
    const flat = this.reference.flat;
    const first = flat.binStart[k]!;
    const last = flat.binStart[k + 1]! - 1; // the missing bin
    if (Number.isNaN(value)) {
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
      return flat.inVerdict[k] === 1;
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

  /** One row's calibrated score, and whether its answer flagged it (review or block). */
  addScore(score: number, flagged: boolean): void {
    this.scored++;
    this.scoreSum += score;
    if (flagged) {
      this.flagged++;
      this.flaggedSum += score;
    }
    this.scoreCounts[scoreBinOf(this.reference.score.edges, score)]!++;
  }

  /** The report, with measured performance when `outcomes` (every labelled row, not a sample) hold
   *  enough of both kinds. */
  report(outcomes?: Outcomes): DriftReport | null {
    const n = this.rows;
    if (n < MIN_ROWS) return null;
    const ref = this.reference;
    const signals: string[] = [];
    const scorePsi =
      this.scored > 0
        ? psi(
            ref.score.shares,
            [...this.scoreCounts].map((c) => c / this.scored),
          )
        : 0;
    const enough = n >= MIN_ROWS_FOR_PSI;
    if (enough && scorePsi >= PSI_MAJOR) signals.push('score_psi');
    const unseenShare = this.unseenRows / n;
    if (unseenShare >= UNSEEN_SHARE) signals.push('unseen_categories');
    const features = ref.features.map((f, k) => {
      const counts = this.counts.subarray(ref.flat.binStart[k]!, ref.flat.binStart[k + 1]!);
      // Missing is a bin of its own on both sides.
      const expected = [...f.shares.map((s) => s * (1 - f.missing)), f.missing];
      const value = psi(
        expected,
        [...counts].map((c) => c / n),
      );
      const outside = this.outOfRange[k]! / n;
      return {
        feature: f.feature,
        psi: round(value),
        out_of_range_share: round(outside),
        depends_on: f.dependsOn,
        in_verdict: f.inVerdict,
        moved: f.inVerdict && ((enough && value >= PSI_MAJOR) || outside >= OUT_OF_RANGE_SHARE),
      };
    });
    features.sort((a, b) => b.psi - a.psi || (a.feature < b.feature ? -1 : 1));
    for (const f of features) if (f.moved) signals.push(`feature:${f.feature}`);
    const measured = outcomes ? measure(outcomes, ref.test) : null;
    let verdict: DriftReport['verdict'];
    let basis: DriftReport['basis'];
    let reasons: string[];
    let warning: string | null = null;
    if (measured?.allowed) {
      const { allowed } = measured;
      reasons = [];
      const parts: string[] = [];
      if (measured.average_precision < allowed.average_precision_min) {
        reasons.push('average_precision');
        parts.push(`average precision ${measured.average_precision.toFixed(3)} where at least ${allowed.average_precision_min.toFixed(3)} is expected`);
      }
      if (measured.expected_calibration_error > allowed.expected_calibration_error_max) {
        reasons.push('calibration');
        parts.push(
          `calibration error ${measured.expected_calibration_error.toFixed(4)} where at most ${allowed.expected_calibration_error_max.toFixed(4)} is expected`,
        );
      }
      verdict = reasons.length ? 'degraded' : 'ok';
      basis = 'outcomes';
      if (reasons.length) warning = `Degraded: ${DEGRADED_WARNING} (${parts.join('; ')}).`;
    } else {
      reasons = signals;
      verdict = signals.length ? 'shifted' : 'ok';
      basis = signals[0] === 'unseen_categories' ? 'categories' : signals[0]?.startsWith('feature:') ? 'features' : 'scores';
      if (signals.length) warning = `Drift: ${DRIFT_WARNING} (${signals.join(', ')}).`;
    }
    const listed = (m: Map<string, number>) =>
      [...m]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, 20)
        .map(([v]) => v);
    return {
      verdict,
      basis,
      reasons,
      signals,
      warning,
      rows: n,
      score_psi: round(scorePsi),
      features: features.map(({ moved: _, ...f }) => f),
      unseen_categories: { payment_type: listed(this.unseen.payment_type), location: listed(this.unseen.location) },
      unseen_share: round(unseenShare),
      out_of_range_share: round(this.outOfRangeRows / n),
      estimated: {
        fraud_rate: round(this.scored > 0 ? this.scoreSum / this.scored : 0),
        flagged_share: round(this.scored > 0 ? this.flagged / this.scored : 0),
        precision: this.flagged > 0 ? round(this.flaggedSum / this.flagged) : null,
        recall: this.scoreSum > 0 ? round(this.flaggedSum / this.scoreSum) : null,
      },
      measured,
    };
  }
}

/** Measured performance on the outcomes, and what the test figures allow on this many of them;
 *  null without MIN_OUTCOMES of each kind. */
function measure(o: Outcomes, test: TestFigures | undefined): MeasuredPerformance | null {
  const n = o.labels.length;
  let fraud = 0;
  let flagged = 0;
  let caught = 0;
  for (let i = 0; i < n; i++) {
    fraud += o.labels[i]!;
    if (o.flagged(i)) {
      flagged++;
      caught += o.labels[i]!;
    }
  }
  if (fraud < MIN_OUTCOMES || n - fraud < MIN_OUTCOMES) return null;
  const ap = o.figures?.average_precision ?? averagePrecision(o.scores, o.labels);
  const ece = o.figures?.expected_calibration_error ?? expectedCalibrationError(o.scores, o.labels);
  let allowed: MeasuredPerformance['allowed'] = null;
  if (test) {
    // Average precision on `fraud` frauds varies by about √(AP(1 − AP)/fraud) around the model's
    // own (a binomial approximation); calibration error by what chance gives these scores.
    const apMargin = Z * Math.sqrt((test.average_precision * (1 - test.average_precision)) / fraud);
    allowed = {
      average_precision_min: round(Math.max(0, test.average_precision_interval[0] - apMargin)),
      expected_calibration_error_max: round(test.expected_calibration_error_interval[1] + calibrationNoise(o.scores)),
    };
  }
  return {
    rows: n,
    fraud,
    legit: n - fraud,
    roc_auc: round(o.figures?.roc_auc ?? rocAuc(o.scores, o.labels)),
    average_precision: round(ap),
    expected_calibration_error: round(ece),
    precision: flagged > 0 ? round(caught / flagged) : null,
    recall: round(caught / fraud),
    allowed,
  };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;
