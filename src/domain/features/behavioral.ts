// Behavioral channel: the customer against their own past (strictly older transactions only):
// how this amount compares with what they usually spend, and whether the merchant, the channel or
// the place is new to them; their recent mean amounts with this payment included. Undefined
// comparisons (no history, no spread) are missing (NaN), and so is whether the place or the channel
// is new when the request did not give them (UNKNOWN): an omitted field says nothing about the
// customer, and training saw such payments of every kind (train.ts), so missing is not evidence.

import type { History } from '../history/history.ts';
import { channelOf, UNKNOWN, type Transaction } from '../transaction.ts';

export const BEHAVIORAL_FEATURES = [
  'customer_prior_count',
  'customer_mean_amount',
  'amount_to_customer_mean',
  'amount_zscore',
  'new_merchant_for_customer',
  'new_channel_for_customer',
  'new_location_for_customer',
  'log_seconds_since_customer_last',
  'customer_distinct_merchants',
  'mean_amount_24h_with_this',
  'mean_amount_7d_with_this',
  'mean_amount_30d_with_this',
] as const;

const DAY = 86_400_000;

export function behavioral(tx: Transaction, history: History, out: Float64Array, at: number): void {
  const series = history.customer(tx.customer_id);
  const { count, mean, std } = series.stats(tx.time);
  const last = series.lastBefore(tx.time);
  out[at] = count;
  out[at + 1] = count > 0 ? mean : Number.NaN;
  out[at + 2] = count > 0 && mean > 0 ? tx.amount / mean : Number.NaN;
  out[at + 3] = count > 1 && std > 0 ? (tx.amount - mean) / std : Number.NaN;
  const customer = tx.customer_id;
  out[at + 4] = history.usedBefore(customer, 'merchant', tx.merchant_id, tx.time) ? 0 : 1;
  const noLocation = tx.location === UNKNOWN;
  out[at + 5] = noLocation || tx.payment_type === UNKNOWN ? Number.NaN : history.usedBefore(customer, 'channel', channelOf(tx), tx.time) ? 0 : 1;
  out[at + 6] = noLocation ? Number.NaN : history.usedBefore(customer, 'location', tx.location, tx.time) ? 0 : 1;
  out[at + 7] = last === undefined ? Number.NaN : Math.log1p((tx.time - last) / 1000);
  out[at + 8] = history.distinctBefore(customer, 'merchant', tx.time);
  // The customer's mean amount over the last day, week and month, this payment included: a run of
  // inflated amounts lifts the short means above the long ones.
  for (let k = 0; k < MEAN_DAYS.length; k++) {
    series.windowInto(tx.time - MEAN_DAYS[k]! * DAY, tx.time, scratch, 0);
    out[at + 9 + k] = (scratch[1]! + tx.amount) / (scratch[0]! + 1);
  }
}

const MEAN_DAYS = [1, 7, 30];
/** A window's count and sum, reused call after call. */
const scratch = new Float64Array(2);
