// The handbook's own 15 features, re-derived from its published description, for a
// same-data baseline in `npm run eval:handbook`: amount, weekend, night (before 06:00); per
// customer over 1, 7 and 30 days including the current transaction, the count and mean amount;
// per terminal over 1, 7 and 30 days shifted back by the label delay, the count and fraud ratio.
// This tells apart what our features add from what the re-implemented data makes easier or harder.

import { countBelow } from '../domain/history/sorted.ts';

const DAY = 86_400_000;

export const HANDBOOK_FEATURES = [
  'amount',
  'is_weekend',
  'is_night',
  'customer_count_1d',
  'customer_mean_1d',
  'customer_count_7d',
  'customer_mean_7d',
  'customer_count_30d',
  'customer_mean_30d',
  'terminal_count_1d',
  'terminal_risk_1d',
  'terminal_count_7d',
  'terminal_risk_7d',
  'terminal_count_30d',
  'terminal_risk_30d',
] as const;

export interface HandbookFeatureRow {
  time: number;
  amount: number;
  customer_id: string;
  terminal_id: string;
  label: 0 | 1;
}

/** Row-major features of `wanted` (indices into the time-ordered `rows`). */
export function handbookFeatures(rows: readonly HandbookFeatureRow[], wanted: readonly number[], delay = 7 * DAY): Float64Array {
  const customers = new Map<string, { times: number[]; prefix: number[] }>();
  const terminals = new Map<string, { times: number[]; frauds: number[] }>();
  for (const r of rows) {
    let c = customers.get(r.customer_id);
    if (!c) customers.set(r.customer_id, (c = { times: [], prefix: [0] }));
    c.times.push(r.time);
    c.prefix.push(c.prefix[c.prefix.length - 1]! + r.amount);
    let t = terminals.get(r.terminal_id);
    if (!t) terminals.set(r.terminal_id, (t = { times: [], frauds: [0] }));
    t.times.push(r.time);
    t.frauds.push(t.frauds[t.frauds.length - 1]! + r.label);
  }
  const w = HANDBOOK_FEATURES.length;
  const out = new Float64Array(wanted.length * w);
  wanted.forEach((i, k) => {
    const r = rows[i]!;
    const o = k * w;
    const date = new Date(r.time);
    out[o] = r.amount;
    out[o + 1] = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 1 : 0;
    out[o + 2] = date.getUTCHours() < 6 ? 1 : 0;
    const c = customers.get(r.customer_id)!;
    const end = countBelow(c.times, r.time + 1); // up to and including the current transaction
    const t = terminals.get(r.terminal_id)!;
    const known = countBelow(t.times, r.time - delay); // terminal windows end one delay back
    [1, 7, 30].forEach((days, j) => {
      const a = countBelow(c.times, r.time - days * DAY);
      out[o + 3 + 2 * j] = end - a;
      out[o + 4 + 2 * j] = end > a ? (c.prefix[end]! - c.prefix[a]!) / (end - a) : 0;
      const b = countBelow(t.times, r.time - delay - days * DAY);
      out[o + 9 + 2 * j] = known - b;
      out[o + 10 + 2 * j] = known > b ? (t.frauds[known]! - t.frauds[b]!) / (known - b) : 0;
    });
  });
  return out;
}
