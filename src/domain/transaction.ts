// A transaction, in one definition: what the history, the features, the simulators, the stored
// rows and the score request all mean by one. Other shapes are derived from it (a stored row adds
// its source and decision; a score request leaves the optional fields out, recorded as UNKNOWN),
// and a transaction's channel, `payment_type:location`, is spelled here only.

import { KEY_CACHE_LIMIT, KeyCache } from './key-cache.ts';

/** What an optional field (location, payment type) is recorded as when it is not given. */
export const UNKNOWN = 'unknown';

export interface Transaction {
  /** Epoch milliseconds. */
  time: number;
  amount: number;
  customer_id: string;
  merchant_id: string;
  location: string;
  payment_type: string;
  /** 1 fraud, 0 legitimate; absent when the outcome is unknown. */
  label?: 0 | 1;
  /** The caller's reference, kept for graph evidence. */
  transaction_id?: string;
  /** When the label became known (epoch ms); absent: `time` plus the history's label delay. */
  labelKnownAt?: number;
  /** The organization's key fields' values it carried, as `name=value` entries (fields.ts keyEntry). */
  keys?: readonly string[] | undefined;
}

/** Who a transaction is between and through what: its customer, its merchant and the parts of its
 *  channel. Every shape that names a transaction's entities takes them from here. */
export type TransactionEntities = Pick<Transaction, 'customer_id' | 'merchant_id' | 'location' | 'payment_type'>;

/** What a transaction moved between whom, without its channel. */
export type TransactionParties = Pick<Transaction, 'amount' | 'customer_id' | 'merchant_id'>;

/** An earlier transaction an organization's history holds only in totals (older than its horizon),
 *  as read from the database for graph evidence. */
export type EarlierTransaction = Pick<Transaction, 'time'> &
  TransactionParties & {
    transaction_id: string;
    label: 0 | 1 | null;
    label_known_ms: number | null;
  };

const channelsByPaymentType = new Map<string, KeyCache>();

/** A transaction's channel: `payment_type:location`, as the API defines it. */
export function channelOf(tx: Pick<Transaction, 'payment_type' | 'location'>): string {
  let byLocation = channelsByPaymentType.get(tx.payment_type);
  if (!byLocation) {
    const paymentType = tx.payment_type;
    if (channelsByPaymentType.size >= KEY_CACHE_LIMIT) channelsByPaymentType.clear();
    channelsByPaymentType.set(paymentType, (byLocation = new KeyCache((location) => `${paymentType}:${location}`)));
  }
  return byLocation.get(tx.location);
}
