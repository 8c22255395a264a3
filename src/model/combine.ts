// From the four channel boosters' raw scores to what a response says, shared by single and batch
// scoring: the stacked log-odds, the calibrated probability, the cold-start floor, the decision and
// band, each channel's score (its evidence with the others at their average) and attribution
// (its signed share of how far the log-odds moved). docs/integrating.md defines them.

import type { PerChannel } from '../domain/channels.ts';
import type { Decision } from '../domain/rules/decide.ts';
import type { ModelBundle, ModeName } from './bundle-types.ts';

export type ChannelValues = PerChannel<number>;

export interface Combined {
  risk: number;
  cold: boolean;
  decision: Decision;
  band: 'low' | 'medium' | 'high' | 'critical';
  channelScores: ChannelValues;
  attribution: ChannelValues;
}

export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

// Hot-path helpers are module-level functions rather than closures made per call: cheaper.
function calibrated(c: { bias: number; slope: number }, logOdds: number): number {
  return sigmoid(c.bias + c.slope * logOdds);
}

export const DECISIONS = ['approve', 'review', 'block'] as const satisfies readonly Decision[];
export const BANDS = ['low', 'medium', 'high', 'critical'] as const;
export type Band = (typeof BANDS)[number];

/** The decision of a code `combineInto` returns (its index in DECISIONS times 4 plus the band's). */
export const decisionOf = (code: number): Decision => DECISIONS[code >> 2]!;
/** The band of a code `combineInto` returns. */
export const bandOf = (code: number): Band => BANDS[code & 3]!;

/**
 * The numbers of `combine`, written into `out` from `at` on, without making objects (a batch job
 * does this for every row): the risk, each channel's score, then each channel's attribution
 * (`1 + 2 × channels` values). Returns the decision's index in DECISIONS times 4 plus the band's in
 * BANDS.
 */
export function combineInto(bundle: ModelBundle, raw: ArrayLike<number>, cold: boolean, mode: ModeName, out: Float64Array, at: number): number {
  const model = bundle.file;
  const channels = bundle.channels;
  const n = channels.length;
  let z = model.stack.bias;
  let averageZ = model.stack.bias;
  let total = 0;
  for (let k = 0; k < n; k++) {
    const c = channels[k]!;
    const w = model.stack.weights[c.name];
    z += w * raw[k]!;
    averageZ += w * c.expected;
    // How far this channel moved the log-odds, kept in the attribution slot until the total is known.
    const moved = w * (raw[k]! - c.expected);
    out[at + 1 + n + k] = moved;
    total += Math.abs(moved);
  }
  let risk = calibrated(model.calibration, z);
  if (cold) risk = Math.max(risk, model.cold_start.floor);
  out[at] = risk;
  for (let k = 0; k < n; k++) {
    const moved = out[at + 1 + n + k]!;
    out[at + 1 + k] = calibrated(model.calibration, averageZ + moved);
    out[at + 1 + n + k] = total > 0 ? moved / total : 0;
  }
  const t = model.thresholds[mode];
  const b = model.bands;
  const decision = risk >= t.block ? 2 : risk >= t.review ? 1 : 0;
  const band = risk >= b.critical ? 3 : risk >= b.high ? 2 : risk >= b.medium ? 1 : 0;
  return decision * 4 + band;
}

/** `combine`'s numbers, read out before it returns: one buffer, not one per score. */
let scratch = new Float64Array(9);

/** `raw[k]` is channel `bundle.channels[k]`'s raw score; `cold` whether the cold-start rule holds. */
export function combine(bundle: ModelBundle, raw: ArrayLike<number>, cold: boolean, mode: ModeName): Combined {
  const n = bundle.channels.length;
  if (scratch.length < 1 + 2 * n) scratch = new Float64Array(1 + 2 * n);
  const values = scratch;
  const codes = combineInto(bundle, raw, cold, mode, values, 0);
  const channelScores = {} as ChannelValues;
  const attribution = {} as ChannelValues;
  bundle.channels.forEach((c, k) => {
    channelScores[c.name] = values[1 + k]!;
    attribution[c.name] = values[1 + n + k]!;
  });
  return { risk: values[0]!, cold, decision: decisionOf(codes), band: bandOf(codes), channelScores, attribution };
}

/** The cold-start rule: customer, merchant and channel each with fewer than `minPrior` earlier transactions. */
export function isCold(priors: { customer: number; merchant: number; channel: number }, minPrior: number): boolean {
  return priors.customer < minPrior && priors.merchant < minPrior && priors.channel < minPrior;
}
