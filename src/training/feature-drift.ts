// Which features moved between two periods of an organization's traffic, so that trees learned on
// the earlier one do not split on them. Many features count an entity's whole life (prior counts,
// distinct customers, labels known so far, the share of a merchant's customers with a fraud): in a
// young organization they grow week after week, so a split learned on its first weeks means
// something else by the time the model scores, and the model's probabilities drift with the
// organization's age (measured in docs/model.md). The measure is the population stability index
// of each feature, the earlier period's deciles against the later period's shares, with missing
// values a bin of their own; at the drift check's line of a major shift (PSI_MAJOR, 0.25) or
// above, a feature is left out. Only features are read, never labels.

import { psi } from '../model/drift.ts';
import { PSI_MAJOR } from '../model/drift-limits.ts';
import { binOf, quantileBins } from './reference.ts';

export interface MovedFeature {
  feature: string;
  psi: number;
}

/** The shares of `values` in `edges`' bins, missing values (NaN) in a last bin of their own. */
function shares(edges: readonly number[], values: Float64Array): number[] {
  const counts = new Array<number>(edges.length + 2).fill(0);
  for (const v of values) counts[Number.isNaN(v) ? edges.length + 1 : binOf(edges, v)]!++;
  return counts.map((c) => c / Math.max(values.length, 1));
}

/** The features (named `names`, column j of `column(j, rows)`) whose stability index from the
 *  `before` rows to the `after` rows is `limit` or more, the largest shift first (as the drift
 *  report orders its features). */
export function movedFeatures(
  names: readonly string[],
  column: (j: number, rows: readonly number[]) => Float64Array,
  before: readonly number[],
  after: readonly number[],
  limit = PSI_MAJOR,
): MovedFeature[] {
  return names
    .map((feature, j) => {
      const early = column(j, before);
      const { edges } = quantileBins(early);
      return { feature, psi: psi(shares(edges, early), shares(edges, column(j, after))) };
    })
    .filter((m) => m.psi >= limit)
    .sort((a, b) => b.psi - a.psi || (a.feature < b.feature ? -1 : 1));
}
