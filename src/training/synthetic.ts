// Synthetic feature matrices with a learnable signal, for engine tests and benchmarks: row-major
// Float64Array plus labels, with the values tree evaluation must get right (NaN, exact zeros,
// integer categories). Not the transaction simulator: that one models customers and merchants.

import { Rng } from '../domain/rng.ts';

export interface Matrix {
  rows: Float64Array;
  labels: Float64Array;
  numRows: number;
  numFeatures: number;
}

export interface SyntheticOptions {
  seed: number;
  numRows: number;
  numFeatures: number;
  /** Columns holding integer categories 0..23. */
  categorical?: number[];
  /** Share of NaN values and of exact zeros, each. */
  missingRate?: number;
  regression?: boolean;
}

export function syntheticMatrix(o: SyntheticOptions): Matrix {
  const rng = new Rng(o.seed);
  const cats = new Set(o.categorical ?? []);
  const missing = o.missingRate ?? 0;
  const rows = new Float64Array(o.numRows * o.numFeatures);
  const labels = new Float64Array(o.numRows);
  for (let r = 0; r < o.numRows; r++) {
    let signal = 0;
    for (let f = 0; f < o.numFeatures; f++) {
      let v: number;
      if (cats.has(f)) {
        v = rng.below(24);
        signal += v % 3 === 0 ? 0.8 : -0.2;
      } else {
        const scale = 1 + f * 0.3;
        v = rng.normal() * scale;
        signal += ((f % 2 === 0 ? 0.5 : -0.3) * v) / scale + (f % 5 === 0 ? 0.2 * Math.sin(v) : 0);
      }
      const u = rng.uniform();
      if (u < missing) v = Number.NaN;
      else if (u < 2 * missing) v = 0;
      rows[r * o.numFeatures + f] = v;
    }
    const noise = rng.normal() * 0.7;
    labels[r] = o.regression ? signal * 3 + noise : signal + noise > 0.3 ? 1 : 0;
  }
  return { rows, labels, numRows: o.numRows, numFeatures: o.numFeatures };
}
