// A trained model's drift reference (reference.json, read back by src/model/drift.ts): what the
// data it was validated on looked like, per feature (quantile bins, share missing, the range seen)
// and per category, with each feature's importance and a sample of validation rows' raw channel
// scores. Made once by `npm run train`; serving only reads it, so it is made here beside training.

import type { ChannelMatrices } from '../domain/features/extract.ts';
import type { CategoryField, ReferenceFile } from '../model/drift-reference.ts';

/** Quantile bins per feature. */
export const BINS = 10;

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

/** The bin of `v` among quantileBins' `edges`. */
export function binOf(edges: readonly number[], v: number): number {
  let lo = 0;
  let hi = edges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (v <= edges[mid]!) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** The reference file for a trained model: each feature's bins over the reference rows (the
 *  validation split) and its range over `rangeRows`, the categories' shares, and a sample of raw
 *  scores. `importance[c][j]` is feature j of channel c's importance. */
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
