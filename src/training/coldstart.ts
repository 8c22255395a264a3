// Cold start: when the customer, the merchant and the channel each have fewer than `minPrior`
// earlier transactions, the model has no history to judge by, so the score is raised to a floor
// (the path is COLD_START). The floor is the fraud rate of such transactions on validation,
// smoothed toward the overall validation rate so that a few rows cannot set it to 0 or 1.

import { CHANNEL_FEATURES, type ChannelMatrices } from '../domain/features/extract.ts';

export interface ColdStart {
  /** Fewer than this many earlier transactions counts as no history. */
  min_prior: number;
  floor: number;
}

const CUSTOMER = CHANNEL_FEATURES.behavioral.indexOf('customer_prior_count');
const MERCHANT = CHANNEL_FEATURES.velocity.indexOf('merchant_prior_count');
const CHANNEL = CHANNEL_FEATURES.velocity.indexOf('channel_prior_count');

export function isColdStart(features: ChannelMatrices, row: number, minPrior: number): boolean {
  const b = CHANNEL_FEATURES.behavioral.length;
  const v = CHANNEL_FEATURES.velocity.length;
  return (
    features.behavioral[row * b + CUSTOMER]! < minPrior && features.velocity[row * v + MERCHANT]! < minPrior && features.velocity[row * v + CHANNEL]! < minPrior
  );
}

/** The floor from validation rows (indices into `features`) and their labels. */
export function fitColdStart(features: ChannelMatrices, rows: number[], labels: ArrayLike<number>, minPrior = 3, priorWeight = 10): ColdStart {
  let n = 0;
  let frauds = 0;
  let allFrauds = 0;
  for (const i of rows) {
    allFrauds += labels[i]!;
    if (isColdStart(features, i, minPrior)) {
      n++;
      frauds += labels[i]!;
    }
  }
  const base = rows.length ? allFrauds / rows.length : 0;
  return { min_prior: minPrior, floor: (frauds + priorWeight * base) / (n + priorWeight) };
}

/** Probabilities with the floor applied to cold-start rows; also how many rows it touched. */
export function applyColdStart(
  probabilities: Float64Array,
  features: ChannelMatrices,
  rows: number[],
  c: ColdStart,
): { probabilities: Float64Array; cold: number } {
  let cold = 0;
  const out = probabilities.map((p, k) => {
    if (!isColdStart(features, rows[k]!, c.min_prior)) return p;
    cold++;
    return Math.max(p, c.floor);
  });
  return { probabilities: out, cold };
}
