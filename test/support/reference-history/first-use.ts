// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// First-use tracking: when each customer first used each merchant, channel and location, kept by
// the history (in time order, late arrivals and loads keeping the earliest) and read by the
// behavioral features as "used before t" and "distinct before t".

import type { Transaction } from '../../../src/domain/transaction.ts';

/** First time a customer used each merchant, channel and location. */
export class Usage {
  readonly merchants = new Map<string, number>();
  readonly channels = new Map<string, number>();
  readonly locations = new Map<string, number>();

  /** Notes a transaction no older than any noted before (the first use stays). */
  note(tx: Transaction, channel: string): void {
    if (!this.merchants.has(tx.merchant_id)) this.merchants.set(tx.merchant_id, tx.time);
    if (!this.channels.has(channel)) this.channels.set(channel, tx.time);
    if (!this.locations.has(tx.location)) this.locations.set(tx.location, tx.time);
  }

  /** Notes a late transaction: it may be an earlier first use. */
  noteLate(tx: Transaction, channel: string): void {
    keepEarliest(this.merchants, tx.merchant_id, tx.time);
    keepEarliest(this.channels, channel, tx.time);
    keepEarliest(this.locations, tx.location, tx.time);
  }
}

/** Keeps the earlier of the first use noted for `key` and `time`. */
export function keepEarliest(map: Map<string, number>, key: string, time: number): void {
  const first = map.get(key);
  if (first === undefined || time < first) map.set(key, time);
}

/** Whether `key` was first used strictly before `time`. */
export function usedBefore(map: Map<string, number>, key: string, time: number): boolean {
  const first = map.get(key);
  return first !== undefined && first < time;
}

/** Distinct keys first used strictly before `time`. */
export function distinctBefore(map: Map<string, number>, time: number): number {
  let n = 0;
  for (const first of map.values()) if (first < time) n++;
  return n;
}
