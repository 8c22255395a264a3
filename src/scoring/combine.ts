// From the four channel boosters' raw scores to what a response says, shared by single and batch
// scoring: the stacked log-odds, the calibrated probability, the cold-start floor, the decision and
// band, each channel's score (its evidence with the others at their average) and attribution
// (its signed share of how far the log-odds moved). docs/api.md defines them.

import type { ModelBundle, ModeName } from '../model/bundle.ts';

export type ChannelValues = Record<'tabular' | 'graph' | 'behavioral' | 'velocity', number>;

export interface Combined {
  risk: number;
  cold: boolean;
  decision: 'approve' | 'review' | 'block';
  band: 'low' | 'medium' | 'high' | 'critical';
  channelScores: ChannelValues;
  attribution: ChannelValues;
}

export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

// Hot-path helpers are module-level functions rather than closures made per call: cheaper, and the
// development loader (tsx) would otherwise re-name every closure on every call.
function calibrated(c: { bias: number; slope: number }, logOdds: number): number {
  return sigmoid(c.bias + c.slope * logOdds);
}

/** `raw[k]` is channel `bundle.channels[k]`'s raw score; `cold` whether the cold-start rule holds. */
export function combine(bundle: ModelBundle, raw: ArrayLike<number>, cold: boolean, mode: ModeName): Combined {
  const model = bundle.file;
  let z = model.stack.bias;
  let averageZ = model.stack.bias;
  const moved: number[] = [];
  bundle.channels.forEach((c, k) => {
    const w = model.stack.weights[c.name];
    z += w * raw[k]!;
    averageZ += w * c.expected;
    moved.push(w * (raw[k]! - c.expected));
  });
  let risk = calibrated(model.calibration, z);
  if (cold) risk = Math.max(risk, model.cold_start.floor);
  const total = moved.reduce((a, b) => a + Math.abs(b), 0);
  const channelScores = {} as ChannelValues;
  const attribution = {} as ChannelValues;
  bundle.channels.forEach((c, k) => {
    channelScores[c.name] = calibrated(model.calibration, averageZ + moved[k]!);
    attribution[c.name] = total > 0 ? moved[k]! / total : 0;
  });
  const t = model.thresholds[mode];
  const b = model.bands;
  return {
    risk,
    cold,
    decision: risk >= t.block ? 'block' : risk >= t.review ? 'review' : 'approve',
    band: risk >= b.critical ? 'critical' : risk >= b.high ? 'high' : risk >= b.medium ? 'medium' : 'low',
    channelScores,
    attribution,
  };
}

/** The cold-start rule: customer, merchant and channel each with fewer than `minPrior` earlier transactions. */
export function isCold(priors: { customer: number; merchant: number; channel: number }, minPrior: number): boolean {
  return priors.customer < minPrior && priors.merchant < minPrior && priors.channel < minPrior;
}
