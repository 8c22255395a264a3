// Each customer's, merchant's or channel's transactions as the history's windowed features read
// them: per entity, the numbers of its transactions in time order (a list of shared columns,
// lists.ts), and running sums of their amounts (and, for customers, of the squared amounts) so that
// a window's count and sum are two searches and a difference. Entries past the horizon are dropped
// and only their totals kept.
// The running sums are kept at every CHECKPOINT-th entry only, and the ones between are summed
// again from the nearest checkpoint before them, in time order: exactly the additions that made
// them, so every sum is the very value a running sum kept at every entry would hold, for a sixteenth
// of the memory. The amounts come from the record store, which the series share.

import { layOutCheckpointed, Lists, trimFloats, usedCounts, widenFloats } from './lists.ts';
import type { RecordStore } from './records.ts';
import { HorizonError, WINDOW_HORIZON_MS } from './horizon.ts';

/** Running sums are kept at entries 0, CHECKPOINT, 2 × CHECKPOINT, … */
const CHECKPOINT = 16;
const SHIFT = 4;

/**
 * The series of one role (customers, merchants or channels), entity by entity (by number). An
 * entity's running sums are cumulative from its first entry (dropped ones included); a loaded
 * history's entries before its floor are a base count and sums (`setBase`) in front of them.
 */
export class SeriesStore {
  private readonly records: RecordStore;
  readonly withSquares: boolean;

  /** Per entity, its records in time order (ties in the order added), and with `flagged` a byte
   *  beside each that the owner of the series gives its meaning (key-fields.ts). */
  private readonly entries: Lists;
  /** Per entity, the running sum (and of squares) before entry j × CHECKPOINT, at j. */
  private readonly checkpoints: Lists;
  /** Per entity: entries dropped past the horizon (or held as a base), the last of them, the base's
   *  sum and sum of squares, and the running sums after the last held entry. */
  private dropped = new Float64Array(0);
  private lastDropped = new Float64Array(0);
  private baseSum = new Float64Array(0);
  private baseSquares = new Float64Array(0);
  private total = new Float64Array(0);
  private totalSquares = new Float64Array(0);
  /** Per entity: the time of its middle held entry when `add` last looked (a lower bound of that
   *  time at any later count, until an entry is inserted: then -Infinity). */
  private middle = new Float64Array(0);

  constructor(records: RecordStore, withSquares: boolean, flagged = false) {
    this.records = records;
    this.withSquares = withSquares;
    this.entries = new Lists(1, 0, flagged ? 1 : 0);
    this.checkpoints = new Lists(0, withSquares ? 2 : 1);
  }

  /** The newest time added (`add`) or placed (`insert`). */
  private newest = -Infinity;

  /** Entities made: one past the highest asked for. */
  private made = 0;

  /** Makes entity `e` (and every lower one) exist. */
  private ensure(e: number): void {
    if (e >= this.made) this.made = e + 1;
    if (e < this.dropped.length) return;
    this.dropped = widenFloats(this.dropped, e, 0);
    this.lastDropped = widenFloats(this.lastDropped, e, -Infinity);
    this.baseSum = widenFloats(this.baseSum, e, 0);
    this.total = widenFloats(this.total, e, 0);
    this.middle = widenFloats(this.middle, e, -Infinity);
    if (this.withSquares) {
      this.baseSquares = widenFloats(this.baseSquares, e, 0);
      this.totalSquares = widenFloats(this.totalSquares, e, 0);
    }
    this.entries.ensure(this.dropped.length - 1);
    this.checkpoints.ensure(this.dropped.length - 1);
  }

  /** Lays out the lists of a load's entries before they are added (in time order): `counts[e]`
   *  for entity e (every entity still empty), so that adding them moves no list (Lists.layOut). */
  layOut(counts: Int32Array): void {
    const used = usedCounts(counts);
    if (used.length === 0) return;
    this.ensure(used.length - 1);
    layOutCheckpointed(this.entries, this.checkpoints, used, SHIFT);
  }

  /** Held entries of entity `e`. */
  held(e: number): number {
    return e < 0 ? 0 : this.entries.count(e);
  }

  /** Every entry, held or not. */
  all(e: number): number {
    return e < 0 || e >= this.dropped.length ? 0 : this.dropped[e]! + this.entries.count(e);
  }

  /** Record of held entry i of `e`. */
  record(e: number, i: number): number {
    return this.entries.ints[0]![this.entries.start[e]! + i]!;
  }

  /** The byte beside held entry i of `e` (a flagged series only). */
  flag(e: number, i: number): number {
    return this.entries.bytes[0]![this.entries.start[e]! + i]!;
  }

  setFlag(e: number, i: number, v: number): void {
    this.entries.bytes[0]![this.entries.start[e]! + i] = v;
  }

  /** The held index of record `k` among `e`'s entries, or -1 when `e` does not hold it. */
  indexOf(e: number, k: number): number {
    if (e < 0 || e >= this.dropped.length) return -1;
    const t = this.records.time(k);
    const n = this.entries.count(e);
    for (let i = this.heldBelow(e, t); i < n && this.timeAt(e, i) === t; i++) if (this.record(e, i) === k) return i;
    return -1;
  }

  private timeAt(e: number, i: number): number {
    return this.records.time(this.record(e, i));
  }

  /** Held entries of `e` strictly before `t`; the search gallops back from the newest, since
   *  queries mostly ask about recent times. */
  private heldBelow(e: number, t: number): number {
    const n = this.held(e);
    if (n === 0) return 0;
    const col = this.entries.ints[0]!;
    const s = this.entries.start[e]!;
    const records = this.records;
    if (records.time(col[s + n - 1]!) < t) return n;
    let hi = n - 1;
    let step = 1;
    let lo = hi - step;
    while (lo >= 0 && records.time(col[s + lo]!) >= t) {
      hi = lo;
      step *= 2;
      lo = hi - step;
    }
    lo = lo < 0 ? 0 : lo + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (records.time(col[s + mid]!) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The running sum before held entry i (of squares with `squares`), summed from its checkpoint. */
  private prefix(e: number, i: number, squares: boolean): number {
    if (i === this.entries.count(e)) return squares ? this.totalSquares[e]! : this.total[e]!;
    const j = i >> SHIFT;
    let v = this.checkpoints.floats[squares ? 1 : 0]![this.checkpoints.start[e]! + j]!;
    const col = this.entries.ints[0]!;
    const s = this.entries.start[e]!;
    const records = this.records;
    for (let k = j << SHIFT; k < i; k++) {
      const a = records.amount(col[s + k]!);
      v = squares ? v + a * a : v + a;
    }
    return v;
  }

  /** Appends record `k`, no older than any entry added to the store (an older one goes through
   *  `insert`); entries older than `keepFrom` may then be dropped. The history adds in time order
   *  across all entities, so the order is checked against the store's newest time, not the
   *  entity's last entry (a lookup in its list and in the records, per entry). */
  add(e: number, k: number, keepFrom = -Infinity): void {
    const time = this.records.time(k);
    if (time < this.newest) throw new Error('history must be added in time order');
    this.newest = time;
    this.ensure(e);
    const n = this.entries.count(e);
    if (n === 0 && this.checkpoints.count(e) === 0) this.pushCheckpoint(e);
    const at = this.entries.append(e);
    this.entries.ints[0]![at] = k;
    for (const b of this.entries.bytes) b[at] = 0;
    const amount = this.records.amount(k);
    this.total[e] = this.total[e]! + amount;
    if (this.withSquares) this.totalSquares[e] = this.totalSquares[e]! + amount * amount;
    if ((n + 1) % CHECKPOINT === 0) this.pushCheckpoint(e);
    // Compact once at least half the entries are past the horizon (amortised O(1) per entry). The
    // middle entry is looked up (far back in the list and the records) only once the horizon has
    // passed the middle seen last: appending and dropping only ever move the middle to later ones.
    if (n + 1 >= 64 && keepFrom > this.middle[e]!) {
      const middle = this.timeAt(e, (n + 1) >> 1);
      this.middle[e] = middle;
      if (middle < keepFrom) this.dropBefore(e, keepFrom);
    }
  }

  private pushCheckpoint(e: number): void {
    const at = this.checkpoints.append(e);
    this.checkpoints.floats[0]![at] = this.total[e]!;
    if (this.withSquares) this.checkpoints.floats[1]![at] = this.totalSquares[e]!;
  }

  /** Whether an entry at `time` can still be placed: not at or before an entry already dropped
   *  (appending after the last dropped one when nothing is held is fine). */
  accepts(e: number, time: number): boolean {
    if (e < 0 || e >= this.dropped.length) return true;
    const lastDropped = this.lastDropped[e]!;
    return time > lastDropped || (this.entries.count(e) === 0 && time === lastDropped);
  }

  /**
   * Adds record `k` at any time it `accepts` (else throws a HorizonError, `newest` naming the
   * history's newest time), after the entries at or before its time; the running sums from there
   * on are summed again in time order: the very values adding in time order gives. Costs
   * O(entries later than it); `keepFrom` should come from the newest time, not this entry's.
   */
  insert(e: number, k: number, keepFrom: number, newest = keepFrom + WINDOW_HORIZON_MS): void {
    const time = this.records.time(k);
    if (!this.accepts(e, time)) throw new HorizonError(time, newest);
    if (time > this.newest) this.newest = time;
    this.ensure(e);
    let i = this.entries.count(e);
    while (i > 0 && this.timeAt(e, i - 1) > time) i--;
    if (this.checkpoints.count(e) === 0) this.pushCheckpoint(e);
    const at = this.entries.insert(e, i);
    this.middle[e] = -Infinity;
    this.entries.ints[0]![at] = k;
    for (const b of this.entries.bytes) b[at] = 0;
    this.resum(e, i);
    const n = this.entries.count(e);
    if (n >= 64 && this.timeAt(e, n >> 1) < keepFrom) this.dropBefore(e, keepFrom);
  }

  /** Sums the running sums again from held entry `i` on (those before it are unchanged), writing
   *  the checkpoints after it and the totals. */
  private resum(e: number, i: number): void {
    const n = this.entries.count(e);
    let sum = this.prefix(e, i, false);
    let squares = this.withSquares ? this.prefix(e, i, true) : 0;
    const cp = this.checkpoints;
    const keep = (i >> SHIFT) + 1;
    while (cp.count(e) > keep) cp.remove(e, cp.count(e) - 1);
    for (let j = i; j < n; j++) {
      const a = this.records.amount(this.record(e, j));
      sum += a;
      if (this.withSquares) squares += a * a;
      if ((j + 1) % CHECKPOINT === 0) {
        const at = cp.append(e);
        cp.floats[0]![at] = sum;
        if (this.withSquares) cp.floats[1]![at] = squares;
      }
    }
    this.total[e] = sum;
    if (this.withSquares) this.totalSquares[e] = squares;
  }

  /**
   * Makes this entity, loaded with the entries from some time on, stand for its whole history:
   * `count` more entries before all of these, with those amounts' sum and sum of squares, the last
   * of them at `last` (or, if entries are held, any time from the last of them up to the first held
   * entry: a query cannot reach between the two, see `lastBefore`). Only before anything was dropped.
   */
  setBase(e: number, count: number, sum: number, squares: number, last: number): void {
    this.ensure(e);
    if (this.dropped[e] !== 0) throw new Error('setBase() on a series that dropped entries');
    if (count === 0) return;
    this.dropped[e] = count;
    this.baseSum[e] = sum;
    if (this.withSquares) this.baseSquares[e] = squares;
    this.lastDropped[e] = last;
  }

  private dropBefore(e: number, keepFrom: number): void {
    const k = this.heldBelow(e, keepFrom);
    this.lastDropped[e] = this.timeAt(e, k - 1);
    this.dropped[e] = this.dropped[e]! + k;
    // The running sums before the new first entry become its checkpoint; the rest follow from it.
    const sum = this.prefix(e, k, false);
    const squares = this.withSquares ? this.prefix(e, k, true) : 0;
    this.entries.dropFront(e, k);
    const cp = this.checkpoints;
    cp.dropFront(e, cp.count(e));
    const at = cp.append(e);
    cp.floats[0]![at] = sum;
    if (this.withSquares) cp.floats[1]![at] = squares;
    this.resum(e, 0);
  }

  /** Held entries of `e` strictly before `time` (an index into the held entries). */
  heldBefore(e: number, time: number): number {
    return e < 0 || e >= this.dropped.length ? 0 : this.heldBelow(e, time);
  }

  /** Number of entries strictly before `time`. */
  countBefore(e: number, time: number): number {
    if (e < 0 || e >= this.dropped.length) return 0;
    if (time <= this.lastDropped[e]!) {
      if (time === -Infinity) return 0;
      throw new Error(`a history query reached back past the ${WINDOW_HORIZON_MS / 86_400_000}-day horizon`);
    }
    return this.dropped[e]! + this.heldBelow(e, time);
  }

  /** Running total of the first `k` entries (k = 0, or k at least the dropped entries). */
  private sumOf(e: number, k: number, squares: boolean): number {
    return k === 0 ? 0 : (squares ? this.baseSquares[e]! : this.baseSum[e]!) + this.prefix(e, k - this.dropped[e]!, squares);
  }

  /** Sum of the amounts of entries a..b−1 (a ≤ b, each 0 or at least the dropped entries). A window
   *  within the held entries is a difference of held running totals, whatever came before them. */
  private sumBetween(e: number, a: number, b: number): number {
    if (a === 0) return this.sumOf(e, b, false);
    const d = this.dropped[e]!;
    return this.prefix(e, b - d, false) - this.prefix(e, a - d, false);
  }

  /** Count and sum of amounts in [from, to) of entity `e` (to exclusive: strictly older than `to`). */
  window(e: number, from: number, to: number): { count: number; sum: number } {
    const a = this.countBefore(e, from);
    const b = this.countBefore(e, to);
    return { count: b - a, sum: this.sumBetween(e, a, b) };
  }

  /** `window(e, from, to)` written as `out[at]` = count and `out[at + 1]` = sum, with no object made
   *  (feature extraction asks for a dozen windows per transaction). */
  windowInto(e: number, from: number, to: number, out: Float64Array, at: number): void {
    const a = this.countBefore(e, from);
    const b = this.countBefore(e, to);
    out[at] = b - a;
    out[at + 1] = this.sumBetween(e, a, b);
  }

  /** Count, mean and standard deviation of all amounts strictly before `time`. */
  stats(e: number, time: number): { count: number; mean: number; std: number } {
    const n = this.countBefore(e, time);
    if (n === 0) return { count: 0, mean: 0, std: 0 };
    if (!this.withSquares) throw new Error('stats() needs a series made with squares');
    const mean = this.sumOf(e, n, false) / n;
    const variance = Math.max(0, this.sumOf(e, n, true) / n - mean * mean);
    return { count: n, mean, std: Math.sqrt(variance) };
  }

  /** Time of the last entry strictly before `time`, or undefined. */
  lastBefore(e: number, time: number): number | undefined {
    const n = this.countBefore(e, time);
    if (n === 0) return undefined;
    const d = this.dropped[e]!;
    return n > d ? this.timeAt(e, n - 1 - d) : this.lastDropped[e];
  }

  /** Sum and sum of squares of the held entries (the squares 0 without them). */
  heldSums(e: number): { sum: number; squares: number } {
    const n = this.held(e);
    if (n === 0) return { sum: 0, squares: 0 };
    return { sum: this.prefix(e, n, false) - this.prefix(e, 0, false), squares: this.withSquares ? this.prefix(e, n, true) - this.prefix(e, 0, true) : 0 };
  }

  /** Packs the lists (see Lists.compact), in steps. */
  *compacting(): Generator<void> {
    const n = this.made;
    yield* this.entries.compacting(n);
    yield* this.checkpoints.compacting(n);
    this.dropped = trimFloats(this.dropped, n);
    this.lastDropped = trimFloats(this.lastDropped, n);
    this.baseSum = trimFloats(this.baseSum, n);
    this.total = trimFloats(this.total, n);
    this.middle = trimFloats(this.middle, n);
    if (this.withSquares) {
      this.baseSquares = trimFloats(this.baseSquares, n);
      this.totalSquares = trimFloats(this.totalSquares, n);
    }
  }

  get byteLength(): number {
    return this.entries.byteLength + this.checkpoints.byteLength + (this.withSquares ? 7 : 5) * this.dropped.byteLength;
  }
}

/** One entity's series, as the features read it (a view: it holds nothing of its own). */
export class Series {
  private readonly store: SeriesStore | undefined;
  private readonly e: number;

  constructor(store: SeriesStore | undefined, e: number) {
    this.store = store;
    this.e = e;
  }

  countBefore(time: number): number {
    return this.store ? this.store.countBefore(this.e, time) : 0;
  }

  window(from: number, to: number): { count: number; sum: number } {
    return this.store ? this.store.window(this.e, from, to) : { count: 0, sum: 0 };
  }

  windowInto(from: number, to: number, out: Float64Array, at: number): void {
    if (this.store) this.store.windowInto(this.e, from, to, out, at);
    else {
      out[at] = 0;
      out[at + 1] = 0;
    }
  }

  stats(time: number): { count: number; mean: number; std: number } {
    return this.store ? this.store.stats(this.e, time) : { count: 0, mean: 0, std: 0 };
  }

  lastBefore(time: number): number | undefined {
    return this.store ? this.store.lastBefore(this.e, time) : undefined;
  }

  /** Entries held in memory (not dropped past the horizon). */
  get held(): number {
    return this.store ? this.store.held(this.e) : 0;
  }

  /** Every entry, held or not. */
  get total(): number {
    return this.store ? this.store.all(this.e) : 0;
  }

  heldSums(): { sum: number; squares: number } {
    return this.store ? this.store.heldSums(this.e) : { sum: 0, squares: 0 };
  }
}
