// Reasons from exact TreeSHAP: every channel booster's SHAP values times its stack weight add up to
// the stacked log-odds (docs/model.md), so each feature's contribution is exact in log-odds. The
// wording says what a value contributed, never that it caused anything: "X (value) added 0.83 to the
// log-odds of fraud". Features are named for a person, with their value formatted by kind.
//
// This module holds what reasons are configured from: each feature's display name and kind of
// value, and the names of payment types and weekdays. Ranking and wording live in the addon
// (native/src/reasons.rs), once for both paths: `topReasons` here (single requests) and the batch
// job's result lines (native/src/lines.rs, set up from `reasonSetup`); so do the kinds of value
// and the directions, whose names come from the addon's generated types and lists.

import { reasonDirections, reasons, type ReasonDirection, type ReasonKind, type Reasons, type ReasonSetup } from '../addon/addon.ts';
import { PAYMENT_TYPE_CODES } from '../domain/features/tabular.ts';

const TEXT: Record<string, [string, ReasonKind]> = {
  amount: ['Amount', 'money'],
  log_amount: ['Amount (log scale)', 'number'],
  round_amount: ['Round amount', 'flag'],
  hour: ['Hour of day (UTC)', 'hour'],
  is_night: ['Night-time payment', 'flag'],
  weekday: ['Day of week', 'weekday'],
  is_weekend: ['Weekend payment', 'flag'],
  payment_type: ['Payment type', 'payment_type'],
  customer_prior_count: ["Customer's earlier payments", 'count'],
  customer_mean_amount: ["Customer's usual amount", 'money'],
  amount_to_customer_mean: ["Amount against the customer's usual", 'ratio'],
  amount_zscore: ["Amount in standard deviations from the customer's usual", 'number'],
  new_merchant_for_customer: ['Merchant new to the customer', 'flag'],
  new_channel_for_customer: ['Channel new to the customer', 'flag'],
  new_location_for_customer: ['Location new to the customer', 'flag'],
  log_seconds_since_customer_last: ["Time since the customer's last payment", 'seconds_log'],
  customer_distinct_merchants: ['Merchants the customer has used', 'count'],
  mean_amount_24h_with_this: ["Customer's mean amount over 24 h, this payment included", 'money'],
  mean_amount_7d_with_this: ["Customer's mean amount over 7 days, this payment included", 'money'],
  mean_amount_30d_with_this: ["Customer's mean amount over 30 days, this payment included", 'money'],
  merchant_prior_count: ["Merchant's earlier payments", 'count'],
  channel_prior_count: ["Channel's earlier payments", 'count'],
  merchant_known_labels: ["Merchant's payments with known outcome", 'count'],
  merchant_known_fraud_rate: ["Merchant's known fraud rate", 'rate'],
  merchant_recent_labels_1d: ["Merchant's outcomes learned in the last day", 'count'],
  merchant_recent_fraud_rate_1d: ["Merchant's fraud rate among outcomes learned in the last day", 'rate'],
  merchant_recent_labels_7d: ["Merchant's outcomes learned in the last 7 days", 'count'],
  merchant_recent_fraud_rate_7d: ["Merchant's fraud rate among outcomes learned in the last 7 days", 'rate'],
  merchant_recent_labels_30d: ["Merchant's outcomes learned in the last 30 days", 'count'],
  merchant_recent_fraud_rate_30d: ["Merchant's fraud rate among outcomes learned in the last 30 days", 'rate'],
  channel_known_labels: ["Channel's payments with known outcome", 'count'],
  channel_known_fraud_rate: ["Channel's known fraud rate", 'rate'],
  customer_known_frauds: ["Customer's known frauds", 'count'],
  merchant_distinct_customers: ["Merchant's distinct customers", 'count'],
  merchant_compromised_customer_share: ["Share of the merchant's customers known to be compromised", 'rate'],
};

const WINDOW_TEXT: Record<string, string> = { '10m': '10 minutes', '1h': 'the last hour', '24h': '24 hours', '7d': '7 days', '30d': '30 days' };
const ENTITY_TEXT: Record<string, string> = { customer: "Customer's", merchant: "Merchant's", channel: "Channel's" };
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A feature's name for a person and how its value is shown (the windowed counts and sums are
 *  named from their parts). */
export function featureText(feature: string): readonly [string, ReasonKind] {
  const known = TEXT[feature];
  if (known) return known;
  const m = /^(customer|merchant|channel)_(count|sum)_(\w+)$/.exec(feature);
  if (m) {
    const window = WINDOW_TEXT[m[3]!] ?? m[3]!;
    return m[2] === 'count' ? [`${ENTITY_TEXT[m[1]!]} payments in ${window}`, 'count'] : [`${ENTITY_TEXT[m[1]!]} total amount in ${window}`, 'money'];
  }
  return [feature, 'number'];
}

export interface ScoreReason {
  text: string;
  direction: ReasonDirection;
  contribution: number;
  feature: string;
}

/** One channel's part of an explanation: its features' names, stack weight, values and SHAP
 *  values. */
export interface ChannelExplanation {
  features: readonly string[];
  weight: number;
  values: ArrayLike<number>;
  phi: ArrayLike<number>;
}

/** What the addon ranks and words reasons from, for channels with these features and weights. */
export function reasonSetup(channels: readonly { weight: number; features: readonly string[] }[]): ReasonSetup {
  return {
    channels: channels.map((c) => ({
      weight: c.weight,
      features: [...c.features],
      display: c.features.map((f) => featureText(f)[0]),
      kinds: c.features.map((f) => featureText(f)[1]),
    })),
    paymentTypes: [...PAYMENT_TYPE_CODES],
    weekdays: [...WEEKDAYS],
  };
}

/** A channel list's native reasons, the row and result buffers handed to them, and the weights and
 *  feature lists they were set up from. */
interface Prepared {
  reasons: Reasons;
  row: Float64Array;
  out: Float64Array;
  weights: number[];
  features: (readonly string[])[];
}

/** Kept per channel list: the scorer explains every request with one list over reused buffers,
 *  so the setup is made once and each call costs one copy of the row and one native call. */
const prepared = new WeakMap<readonly ChannelExplanation[], Prepared>();

function prepare(channels: readonly ChannelExplanation[]): Prepared {
  const native = reasons(reasonSetup(channels));
  return {
    reasons: native,
    row: new Float64Array(native.rowWidth),
    out: new Float64Array(1),
    weights: channels.map((c) => c.weight),
    features: channels.map((c) => c.features),
  };
}

/** True while the list still has the weights and feature lists `p` was set up from. */
function setUpFor(p: Prepared, channels: readonly ChannelExplanation[]): boolean {
  if (p.weights.length !== channels.length) return false;
  for (let k = 0; k < channels.length; k++) if (!Object.is(p.weights[k], channels[k]!.weight) || p.features[k] !== channels[k]!.features) return false;
  return true;
}

/** The `n` largest contributions as reasons (ties by feature name; zero contributions never),
 *  from every channel's features and exact SHAP values scaled by the channel's stack weight;
 *  each contribution rounded to 1e-6, its text and direction those of the rounded value. */
export function topReasons(channels: readonly ChannelExplanation[], n: number): ScoreReason[] {
  let p = prepared.get(channels);
  if (p === undefined || !setUpFor(p, channels)) prepared.set(channels, (p = prepare(channels)));
  // The row as the addon reads it: per channel, its feature values, then as many SHAP values.
  const row = p.row;
  let at = 0;
  for (const c of channels) {
    const w = c.features.length;
    const { values, phi } = c;
    for (let j = 0; j < w; j++) row[at + j] = values[j]!;
    for (let j = 0; j < w; j++) row[at + w + j] = phi[j]!;
    at += 2 * w;
  }
  if (p.out.length < 1 + 5 * n) p.out = new Float64Array(1 + 5 * n);
  const { reasons: native, out } = p;
  // The texts one after another, and per reason: contribution, channel, feature, end of its
  // text, its direction's index (native/src/bindings/reasons.rs `Reasons.top`).
  const texts = native.top(row, n, out);
  const list: ScoreReason[] = [];
  let from = 0;
  for (let i = 0, o = 1; i < out[0]!; i++, o += 5) {
    const end = out[o + 3]!;
    list.push({
      text: texts.slice(from, end),
      direction: reasonDirections[out[o + 4]!]!,
      contribution: out[o]!,
      feature: channels[out[o + 1]!]!.features[out[o + 2]!]!,
    });
    from = end;
  }
  return list;
}
