// First uses: when each customer first used each merchant, channel and location, kept by the
// history (in time order, late arrivals and loads keeping the earliest) and read by the behavioral
// features as "used before t" and "distinct before t". A customer's first use of a merchant is also
// the customer–merchant pair's first payment, which the graph features count (see
// customer-merchant-graph.ts). Per customer, one list of shared columns (lists.ts): what was used
// (its number, tagged with its kind) and when first; a customer uses a handful of each, so a scan
// finds one.

import { Lists } from './lists.ts';

export const USE_MERCHANT = 0;
export const USE_CHANNEL = 1;
export const USE_LOCATION = 2;
export type UseKind = typeof USE_MERCHANT | typeof USE_CHANNEL | typeof USE_LOCATION;

const tag = (kind: UseKind, key: number) => key * 3 + kind;

/** Per customer (by number): the merchants, channels and locations it used, each with the time of
 *  its first use. */
export class Uses {
  private readonly lists = new Lists(1, 1);

  /** Position in the columns of the customer's use of `key`, or -1. */
  private find(customer: number, kind: UseKind, key: number): number {
    const n = this.lists.count(customer);
    if (n === 0) return -1;
    const s = this.lists.start[customer]!;
    const keys = this.lists.ints[0]!;
    const wanted = tag(kind, key);
    for (let i = s; i < s + n; i++) if (keys[i] === wanted) return i;
    return -1;
  }

  /** When the customer first used `key` (NaN: never). */
  first(customer: number, kind: UseKind, key: number): number {
    if (customer < 0 || key < 0) return Number.NaN;
    const at = this.find(customer, kind, key);
    return at < 0 ? Number.NaN : this.lists.floats[0]![at]!;
  }

  /** Keeps the earlier of the first use noted for `key` and `time`; returns the one noted before
   *  (NaN: none). */
  keepEarliest(customer: number, kind: UseKind, key: number, time: number): number {
    const at = this.find(customer, kind, key);
    if (at >= 0) {
      const first = this.lists.floats[0]![at]!;
      if (time < first) this.lists.floats[0]![at] = time;
      return first;
    }
    const added = this.lists.append(customer);
    this.lists.ints[0]![added] = tag(kind, key);
    this.lists.floats[0]![added] = time;
    return Number.NaN;
  }

  /** Notes a payment no older than any noted before (the first uses stay): the customer's merchant,
   *  channel and location, in one pass over its uses; returns whether the merchant is new to it. */
  note(customer: number, merchant: number, channel: number, location: number, time: number): boolean {
    const n = this.lists.count(customer);
    let seen = 0;
    if (n > 0) {
      const s = this.lists.start[customer]!;
      const keys = this.lists.ints[0]!;
      const m = tag(USE_MERCHANT, merchant);
      const c = tag(USE_CHANNEL, channel);
      const l = tag(USE_LOCATION, location);
      for (let i = s; i < s + n && seen !== 7; i++) {
        const k = keys[i]!;
        if (k === m) seen |= 1;
        else if (k === c) seen |= 2;
        else if (k === l) seen |= 4;
      }
    }
    if (!(seen & 1)) this.append(customer, USE_MERCHANT, merchant, time);
    if (!(seen & 2)) this.append(customer, USE_CHANNEL, channel, time);
    if (!(seen & 4)) this.append(customer, USE_LOCATION, location, time);
    return !(seen & 1);
  }

  /** Adds a use the customer is known not to have yet (a load, whose rows are unique by customer,
   *  kind and key), without looking for it first. */
  append(customer: number, kind: UseKind, key: number, first: number): void {
    const added = this.lists.append(customer);
    this.lists.ints[0]![added] = tag(kind, key);
    this.lists.floats[0]![added] = first;
  }

  /** Whether `key` was first used strictly before `time`. */
  usedBefore(customer: number, kind: UseKind, key: number, time: number): boolean {
    return this.first(customer, kind, key) < time;
  }

  /** Distinct keys of a kind first used strictly before `time`. */
  distinctBefore(customer: number, kind: UseKind, time: number): number {
    if (customer < 0) return 0;
    const n = this.lists.count(customer);
    const s = this.lists.start[customer]!;
    const keys = this.lists.ints[0]!;
    const firsts = this.lists.floats[0]!;
    let count = 0;
    for (let i = s; i < s + n; i++) if (keys[i]! % 3 === kind && firsts[i]! < time) count++;
    return count;
  }

  /** Whether the customer used any merchant (has a pair in the customer–merchant graph). */
  hasMerchants(customer: number): boolean {
    const n = this.lists.count(customer);
    const s = this.lists.start[customer]!;
    const keys = this.lists.ints[0]!;
    for (let i = s; i < s + n; i++) if (keys[i]! % 3 === USE_MERCHANT) return true;
    return false;
  }

  /** Every use of the customer: kind, key and first time. */
  forEach(customer: number, each: (kind: UseKind, key: number, first: number) => void): void {
    const n = this.lists.count(customer);
    const s = this.lists.start[customer]!;
    for (let i = 0; i < n; i++) {
      const t = this.lists.ints[0]![s + i]!;
      each((t % 3) as UseKind, Math.floor(t / 3), this.lists.floats[0]![s + i]!);
    }
  }

  /** Customers there is room for (those past it used nothing). */
  get customers(): number {
    return this.lists.lists;
  }

  /** Packs the lists (see Lists.compact), in steps. */
  compacting(): Generator<void> {
    return this.lists.compacting();
  }

  get byteLength(): number {
    return this.lists.byteLength;
  }
}
