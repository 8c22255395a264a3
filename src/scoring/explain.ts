// Reasons from exact TreeSHAP: every channel booster's SHAP values times its stack weight add up to
// the stacked log-odds (ARCHITECTURE.md), so each feature's contribution is exact in log-odds. The
// wording says what a value contributed, never that it caused anything: "X (value) added 0.83 to the
// log-odds of fraud". Features are named for a person, with their value formatted by kind.

import { PAYMENT_TYPE_CODES } from '../engine/features/tabular.ts';

export type Kind = 'money' | 'count' | 'ratio' | 'rate' | 'flag' | 'hour' | 'weekday' | 'seconds_log' | 'payment_type' | 'number';

const TEXT: Record<string, [string, Kind]> = {
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
export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function describe(feature: string): [string, Kind] {
  const known = TEXT[feature];
  if (known) return known;
  const m = /^(customer|merchant|channel)_(count|sum)_(\w+)$/.exec(feature);
  if (m) {
    const window = WINDOW_TEXT[m[3]!] ?? m[3]!;
    return m[2] === 'count' ? [`${ENTITY_TEXT[m[1]!]} payments in ${window}`, 'count'] : [`${ENTITY_TEXT[m[1]!]} total amount in ${window}`, 'money'];
  }
  return [feature, 'number'];
}

export function formatValue(value: number, kind: Kind): string {
  if (Number.isNaN(value)) return 'no history';
  switch (kind) {
    case 'money':
      return value.toFixed(2);
    case 'count':
      return String(Math.round(value));
    case 'ratio':
      return `${value.toFixed(1)}×`;
    case 'rate':
      return `${(value * 100).toFixed(1)} %`;
    case 'flag':
      return value >= 0.5 ? 'yes' : 'no';
    case 'hour': {
      const h = Math.floor(value);
      return `${String(h).padStart(2, '0')}:${String(Math.round((value - h) * 60)).padStart(2, '0')}`;
    }
    case 'weekday':
      return WEEKDAYS[value] ?? String(value);
    case 'seconds_log': {
      const s = Math.expm1(value);
      return s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : s < 172_800 ? `${Math.round(s / 3600)} h` : `${Math.round(s / 86_400)} days`;
    }
    case 'payment_type':
      return PAYMENT_TYPE_CODES[value] ?? 'unknown';
    default:
      return Number.isInteger(value) ? String(value) : value.toFixed(3);
  }
}

export interface Reason {
  text: string;
  direction: 'increases' | 'decreases';
  contribution: number;
  feature: string;
}

/** Name and kind per feature, worked out once (the windowed names need a regular expression). */
const described = new Map<string, [string, Kind]>();

/** A feature's name for a person and how its value is shown. */
export function featureText(feature: string): readonly [string, Kind] {
  let d = described.get(feature);
  if (!d) described.set(feature, (d = describe(feature)));
  return d;
}

/** One feature's reason, from its contribution to the stacked log-odds. The batch job's native
 *  result lines (native/src/lines.rs) word reasons the same way; test/jobs/result-lines.test.ts
 *  holds them to this. */
export function reason(feature: string, value: number, contribution: number): Reason {
  const [name, kind] = featureText(feature);
  const direction = contribution >= 0 ? 'increases' : 'decreases';
  const amount = Math.abs(contribution).toFixed(2);
  return {
    text: `${name} (${formatValue(value, kind)}) ${contribution >= 0 ? 'added' : 'took'} ${amount} ${contribution >= 0 ? 'to' : 'from'} the log-odds of fraud`,
    direction,
    contribution,
    feature,
  };
}

/** True when contribution `a` of feature `fa` ranks before `b` of `fb`: larger magnitude first, ties by name. */
function ranksBefore(a: number, fa: string, b: number, fb: string): boolean {
  const d = Math.abs(a) - Math.abs(b);
  return d > 0 || (d === 0 && fa < fb);
}

/** One channel's part of an explanation: its features' names, stack weight, values and SHAP
 *  values. */
export interface ChannelExplanation {
  features: readonly string[];
  weight: number;
  values: ArrayLike<number>;
  phi: ArrayLike<number>;
}

/** The `n` largest contributions as reasons (ties by feature name), from every channel's features
 *  and exact SHAP values scaled by the channel's stack weight. Keeps a small sorted list of the
 *  best so far instead of sorting every feature: this runs on every explained score. */
export function topReasons(channels: readonly ChannelExplanation[], n: number): Reason[] {
  const top: { feature: string; value: number; contribution: number }[] = [];
  for (const c of channels) {
    for (let j = 0; j < c.features.length; j++) {
      const contribution = c.weight * c.phi[j]!;
      if (contribution === 0) continue;
      const feature = c.features[j]!;
      if (top.length === n && !ranksBefore(contribution, feature, top[n - 1]!.contribution, top[n - 1]!.feature)) continue;
      let i = top.length < n ? top.length : n - 1;
      while (i > 0 && ranksBefore(contribution, feature, top[i - 1]!.contribution, top[i - 1]!.feature)) {
        top[i] = top[i - 1]!;
        i--;
      }
      top[i] = { feature, value: c.values[j]!, contribution };
    }
  }
  return top.map((r) => reason(r.feature, r.value, Math.round(r.contribution * 1e6) / 1e6));
}
