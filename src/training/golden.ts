// Golden files: LightGBM's own answers (raw scores and `predict_contrib`) for a model folder's
// boosters on fixed rows, written by LightGBM itself (`npm run golden`, tools/golden.ts) and checked
// against our engine by `npm test` (test/addon/golden.test.ts), so that parity with LightGBM stays
// proven in the build that has no LightGBM in it. Each booster's entry carries the SHA-256 of the
// model text it was written for: a retrained model with stale golden answers fails, naming the
// command that rewrites them.
//
// The rows are what tree evaluation can get wrong: for every numeric feature the values at, just
// above and just below each of the model's split thresholds, between thresholds and beyond both
// ends, zero, negative zero and missing (NaN); for a categorical feature its categories, unseen and
// negative ones and missing. Each row mixes such values over its features, seeded.

import { Rng } from '../domain/rng.ts';

export interface GoldenBooster {
  channel: string;
  file: string;
  sha256: string;
  num_features: number;
  /** Row-major values; null is a missing value (NaN), which JSON cannot hold. */
  rows: (number | null)[][];
  /** LightGBM's raw score per row. */
  raw: number[];
  /** LightGBM's `predict_contrib` per row: one value per feature, then the expected value. */
  contrib: number[][];
}

export interface Golden {
  model: string;
  written_by: string;
  boosters: GoldenBooster[];
}

export const GOLDEN_ROWS = 160;

/** Each numeric feature's split thresholds in the model text (categorical splits excluded). */
function thresholds(text: string, numFeatures: number): number[][] {
  const out: Set<number>[] = Array.from({ length: numFeatures }, () => new Set());
  let features: number[] = [];
  let values: number[] = [];
  const flush = (decisions: number[]) => {
    features.forEach((f, i) => {
      // Bit 0 of decision_type marks a categorical split, whose threshold is an index, not a value.
      if ((decisions[i]! & 1) === 0) out[f]!.add(values[i]!);
    });
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('split_feature=')) features = line.slice(14).split(' ').map(Number);
    else if (line.startsWith('threshold=')) values = line.slice(10).split(' ').map(Number);
    else if (line.startsWith('decision_type=')) flush(line.slice(14).split(' ').map(Number));
  }
  return out.map((s) => [...s].sort((a, b) => a - b));
}

/** Candidate values per feature: what a tree's comparisons and missing-value handling turn on. */
function candidates(text: string, numFeatures: number, categorical: readonly number[]): number[][] {
  const cuts = thresholds(text, numFeatures);
  return cuts.map((ts, f) => {
    if (categorical.includes(f)) return [NaN, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 31, 1000];
    const v = new Set<number>([NaN, 0, -0]);
    ts.forEach((t, i) => {
      const step = Math.max(Math.abs(t) * 1e-9, 1e-12);
      v.add(t)
        .add(t + step)
        .add(t - step);
      if (i + 1 < ts.length) v.add((t + ts[i + 1]!) / 2);
    });
    if (ts.length) v.add(ts[0]! - 1 - Math.abs(ts[0]!)).add(ts.at(-1)! + 1 + Math.abs(ts.at(-1)!));
    return [...v];
  });
}

/** Fixed rows for one booster, the same on every run. */
export function goldenRows(text: string, numFeatures: number, categorical: readonly number[], count = GOLDEN_ROWS, seed = 20261125): Float64Array {
  const values = candidates(text, numFeatures, categorical);
  const rng = new Rng(seed);
  const rows = new Float64Array(count * numFeatures);
  for (let r = 0; r < count; r++) {
    for (let f = 0; f < numFeatures; f++) {
      const vs = values[f]!;
      rows[r * numFeatures + f] = vs[rng.below(vs.length)]!;
    }
  }
  return rows;
}

/** Rows as JSON holds them (NaN as null) and back. */
export const toJsonRows = (rows: Float64Array, nf: number): (number | null)[][] =>
  Array.from({ length: rows.length / nf }, (_, r) => Array.from(rows.subarray(r * nf, (r + 1) * nf), (x) => (Number.isNaN(x) ? null : x)));
export const fromJsonRows = (rows: (number | null)[][]): Float64Array => Float64Array.from(rows.flat(), (x) => (x === null ? NaN : x));

/** The file's text: one row per line, so that a change reads as a diff. */
export function goldenText(g: Golden): string {
  const boosters = g.boosters.map((b) => {
    const lines = (xs: unknown[]) => `[\n      ${xs.map((x) => JSON.stringify(x)).join(',\n      ')}\n    ]`;
    return `    {"channel": ${JSON.stringify(b.channel)}, "file": ${JSON.stringify(b.file)}, "sha256": "${b.sha256}", "num_features": ${b.num_features},\n    "rows": ${lines(b.rows)},\n    "raw": ${lines(b.raw)},\n    "contrib": ${lines(b.contrib)}}`;
  });
  return `{"model": ${JSON.stringify(g.model)}, "written_by": ${JSON.stringify(g.written_by)},\n  "boosters": [\n${boosters.join(',\n')}\n  ]}\n`;
}
