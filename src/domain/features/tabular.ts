// Tabular channel: what the transaction itself says, with no history: its amount, when it happened
// (UTC) and how it was paid. Payment type is integer-coded for LightGBM's categorical splits;
// anything outside the known list is missing (NaN), not a new category.

import type { Transaction } from '../transaction.ts';

export const PAYMENT_TYPE_CODES = ['card_present', 'card_not_present', 'wallet', 'bank_transfer'] as const;

export const TABULAR_FEATURES = ['amount', 'log_amount', 'round_amount', 'hour', 'is_night', 'weekday', 'is_weekend', 'payment_type'] as const;
/** Indices (within this channel) of the categorical features. */
export const TABULAR_CATEGORICAL = [TABULAR_FEATURES.indexOf('payment_type')];

export function tabular(tx: Transaction, out: Float64Array, at: number): void {
  const d = new Date(tx.time);
  const hour = d.getUTCHours() + d.getUTCMinutes() / 60;
  const weekday = d.getUTCDay();
  const code = (PAYMENT_TYPE_CODES as readonly string[]).indexOf(tx.payment_type);
  out[at] = tx.amount;
  out[at + 1] = Math.log1p(tx.amount);
  out[at + 2] = Number.isInteger(Math.round(tx.amount * 100) / 100) ? 1 : 0;
  out[at + 3] = hour;
  out[at + 4] = hour < 6 || hour >= 22 ? 1 : 0;
  out[at + 5] = weekday;
  out[at + 6] = weekday === 0 || weekday === 6 ? 1 : 0;
  out[at + 7] = code >= 0 ? code : Number.NaN;
}
