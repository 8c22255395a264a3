// The history of an organization's key fields' values (a device hash, an e-mail domain): per value,
// its transactions in time order with running sums (a SeriesStore, as a customer's), so its earlier
// transactions, its counts over an hour, a day and a week and its amount over a day are what they
// are for a customer; and the distinct customers it was used by over the last day and 30 days.
// Everything strictly before the time asked, and exactly: a recount of the rows gives the same.
//
// Distinct customers without a set per value: each entry of a value knows (one byte, `next`) whether
// the same customer used the value again later. Over the entries from index `lo` on, the distinct
// customers are the entries whose customer has no earlier entry from `lo` on; `dup` counts the
// others (entries whose previous entry of the same customer is at `lo` or later). Moving `lo` one
// entry on takes that entry's `next` out of `dup`, so each window is kept up to date in O(1) per
// entry, however popular the value (a hot e-mail domain has thousands of customers a day).
// The previous entry of a customer is found on the customer's own series, which holds its few
// transactions. A transaction placed late (out of time order) recounts its values' windows.
//
// Values are `name=value` entries (domain/fields.ts keyEntry), interned once. Which values a record
// carries is not kept beside the record: a value's series holds the record exactly when it does,
// found by the record's time.

import { StringTable } from './strings.ts';
import { SeriesStore } from './series.ts';
import { HorizonError } from './horizon.ts';
import type { RecordStore } from './records.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The windows distinct customers are counted over: a day and 30 days. */
export const DISTINCT_WINDOWS_MS = [DAY_MS, 30 * DAY_MS] as const;

/** A key value's history strictly before a time, as rules read it (`field_history.<name>`). */
export interface KeyHistory {
  prior_transactions: number;
  is_new: boolean;
  count_1h: number;
  count_24h: number;
  count_7d: number;
  amount_24h: number;
  distinct_customers_24h: number;
  distinct_customers_30d: number;
}

/** The history of a value never seen. */
export const NEW_KEY: Readonly<KeyHistory> = Object.freeze({
  prior_transactions: 0,
  is_new: true,
  count_1h: 0,
  count_24h: 0,
  count_7d: 0,
  amount_24h: 0,
  distinct_customers_24h: 0,
  distinct_customers_30d: 0,
});

const W = DISTINCT_WINDOWS_MS.length;

function widenInts(a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  if (size <= a.length) return a;
  const b = new Int32Array(Math.max(size, a.length * 2, 16));
  b.set(a);
  return b;
}

export class KeyFields {
  private readonly records: RecordStore;

  /** The values, `name=value`, by number. */
  readonly ids = new StringTable();
  /** Per value, its records; the byte beside each entry is its `next`: whether the entry's
   *  customer used the value again later. */
  readonly series: SeriesStore;
  /** Whether any record carried a value. */
  private carried = false;
  /** Per value and window (W per value): where the window's entries start, and the entries from
   *  there whose customer has an earlier entry from there on. */
  private lo = new Int32Array(0);
  private dup = new Int32Array(0);

  constructor(records: RecordStore) {
    this.records = records;
    this.series = new SeriesStore(records, false, true);
  }

  /** Whether any record carried a value. */
  get used(): boolean {
    return this.carried;
  }

  private ensure(e: number): void {
    if ((e + 1) * W > this.lo.length) {
      this.lo = widenInts(this.lo, (e + 1) * W);
      this.dup = widenInts(this.dup, (e + 1) * W);
    }
  }

  /** Whether a transaction at `time` with these values can still be placed (see SeriesStore.accepts). */
  accepts(entries: readonly string[] | undefined, time: number): boolean {
    if (!entries) return true;
    for (const v of entries) if (!this.series.accepts(this.ids.find(v), time)) return false;
    return true;
  }

  /** The numbers of `entries` (added if new). */
  numbers(entries: readonly string[]): number[] {
    return entries.map((v) => this.ids.id(v));
  }

  /** The newest entry of value `e`, among the entries of record k's customer `c` before `k`: its
   *  held index in `e`'s series, or -1. A record carries `e` exactly when `e`'s series holds it,
   *  found by its time among `e`'s entries (a customer's own entries are few). */
  private previous(customers: SeriesStore, c: number, k: number, e: number, time: number): number {
    const n = customers.held(c);
    for (let i = n - 1; i >= 0; i--) {
      const r = customers.record(c, i);
      if (r === k) continue;
      const t = this.records.time(r);
      if (t > time) continue;
      if (t === time && r > k) continue;
      const at = this.series.indexOf(e, r);
      if (at >= 0) return at;
    }
    return -1;
  }

  /** Moves window `w` of value `e` to start at held entry `to`. */
  private moveTo(e: number, w: number, to: number): void {
    const at = e * W + w;
    let lo = this.lo[at]!;
    let dup = this.dup[at]!;
    const s = this.series;
    while (lo < to) dup -= s.flag(e, lo++);
    while (lo > to) dup += s.flag(e, --lo);
    this.lo[at] = lo;
    this.dup[at] = dup;
  }

  /** Files record `k` (the newest, its customer `c` filed already in `customers`) under each of its
   *  values; entries older than `keepFrom` may then be dropped. */
  add(k: number, values: readonly number[], c: number, customers: SeriesStore, keepFrom: number): void {
    if (values.length === 0) return;
    this.carried = true;
    const time = this.records.time(k);
    const s = this.series;
    for (const e of values) {
      this.ensure(e);
      const before = s.held(e);
      // Every later query asks at or after `time`: the windows move on to where such a query's
      // start (only forward: a window left further on is as correct, and this is O(1) amortised).
      for (let w = 0; w < W; w++) {
        const at = e * W + w;
        const from = time - DISTINCT_WINDOWS_MS[w]!;
        let lo = this.lo[at]!;
        let dup = this.dup[at]!;
        while (lo < before && this.records.time(s.record(e, lo)) < from) dup -= s.flag(e, lo++);
        this.lo[at] = lo;
        this.dup[at] = dup;
      }
      const prev = this.previous(customers, c, k, e, time);
      if (prev >= 0) {
        s.setFlag(e, prev, 1);
        // Counted in each window that starts at or before it.
        for (let w = 0; w < W; w++) if (this.lo[e * W + w]! <= prev) this.dup[e * W + w]! += 1;
      }
      s.add(e, k, keepFrom);
      const dropped = before + 1 - s.held(e);
      if (dropped > 0) for (let w = 0; w < W; w++) this.lo[e * W + w] = Math.max(0, this.lo[e * W + w]! - dropped);
    }
  }

  /** Files record `k`, older than the newest (`newest`), under each of its values, where time order
   *  puts it; each value's windows are counted again. Throws a HorizonError, changing nothing, when
   *  a value dropped entries at or after its time. */
  insert(k: number, values: readonly number[], c: number, customers: SeriesStore, keepFrom: number, newest: number): void {
    const time = this.records.time(k);
    for (const e of values) if (!this.series.accepts(e, time)) throw new HorizonError(time, newest);
    if (values.length > 0) this.carried = true;
    const s = this.series;
    for (const e of values) {
      this.ensure(e);
      s.insert(e, k, keepFrom, newest);
      const prev = this.previous(customers, c, k, e, time);
      if (prev >= 0) s.setFlag(e, prev, 1);
      const own = s.indexOf(e, k);
      if (own >= 0) s.setFlag(e, own, this.later(customers, c, k, e, time) ? 1 : 0);
      // The windows from the first held entry: moved where queries need them on the next query.
      let dup = 0;
      for (let i = 0; i < s.held(e); i++) dup += s.flag(e, i);
      for (let w = 0; w < W; w++) {
        this.lo[e * W + w] = 0;
        this.dup[e * W + w] = dup;
      }
    }
  }

  /** Whether customer `c` has an entry of value `e` after record `k` (in time order, ties by record). */
  private later(customers: SeriesStore, c: number, k: number, e: number, time: number): boolean {
    const n = customers.held(c);
    for (let i = n - 1; i >= 0; i--) {
      const r = customers.record(c, i);
      if (r === k) continue;
      const t = this.records.time(r);
      if (t < time) return false;
      if (t === time && r < k) continue;
      if (this.series.indexOf(e, r) >= 0) return true;
    }
    return false;
  }

  /** Value `entry`'s history strictly before `t` (a query no earlier than its newest entry's
   *  window allows: within the horizon). */
  query(entry: string, t: number, customers: SeriesStore): KeyHistory {
    const e = this.ids.find(entry);
    if (e < 0) return NEW_KEY;
    const s = this.series;
    const prior = s.countBefore(e, t);
    const out: KeyHistory = {
      prior_transactions: prior,
      is_new: prior === 0,
      count_1h: s.window(e, t - HOUR_MS, t).count,
      count_24h: 0,
      count_7d: s.window(e, t - 7 * DAY_MS, t).count,
      amount_24h: 0,
      distinct_customers_24h: this.distinct(e, 0, t, customers),
      distinct_customers_30d: this.distinct(e, 1, t, customers),
    };
    const day = s.window(e, t - DAY_MS, t);
    out.count_24h = day.count;
    out.amount_24h = day.sum;
    return out;
  }

  /** Distinct customers of value `e`'s entries in [t − window w, t). */
  private distinct(e: number, w: number, t: number, customers: SeriesStore): number {
    const s = this.series;
    const from = t - DISTINCT_WINDOWS_MS[w]!;
    // Reaching back past what was dropped cannot be answered (as the series' own queries).
    s.countBefore(e, from);
    this.moveTo(e, w, s.heldBefore(e, from));
    const at = e * W + w;
    const lo = this.lo[at]!;
    const held = s.held(e);
    let n = held - lo - this.dup[at]!;
    // Entries at or after `t` (ties with it, in a live history): each counted above when its
    // customer had no earlier entry from `lo` on; those are taken out again, unless an entry of the
    // same customer before `t` stays in the window.
    const hi = s.heldBefore(e, t);
    if (hi < held) {
      const seen = new Set<number>();
      for (let j = hi; j < held; j++) {
        const k = s.record(e, j);
        const c = this.records.customer(k);
        const first = !seen.has(c);
        seen.add(c);
        if (!first) continue;
        // Counted above unless the customer's previous entry is at `lo` or later.
        // Its customer's first entry from `lo` on (an earlier one at `t` would have been seen):
        // counted above, though it is not before `t`, unless its previous entry is in the window.
        const prev = this.previous(customers, c, k, e, this.records.time(k));
        if (prev < 0 || this.records.time(s.record(e, prev)) < from) n -= 1;
      }
    }
    return n;
  }

  /** Packs the parts into arrays the size of what they hold, in steps. */
  *compacting(): Generator<void> {
    yield* this.series.compacting();
    const n = this.ids.size * W;
    this.lo = this.lo.slice(0, n);
    this.dup = this.dup.slice(0, n);
  }

  get byteLength(): number {
    return this.ids.byteLength + this.series.byteLength + this.lo.byteLength + this.dup.byteLength;
  }
}
