// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// One entity's transactions as the history's windowed features read them: times in time order with
// running sums of the amounts (and of their squares, for customers), so a window's count and sum
// are two searches and a difference. Entries past the horizon are dropped and only their totals
// kept; amounts are not kept, so placing a late entry takes the amounts after it from the caller.

import { countBelow } from './sorted.ts';
import { HorizonError, WINDOW_HORIZON_MS } from '../../../src/domain/history/horizon.ts';

/** Time-ordered times and amounts of one entity, with prefix sums for window sums (and, for the
 *  series whose spread is asked for, prefix sums of squares: only customers' are). Entries older
 *  than the horizon are dropped from the front (see WINDOW_HORIZON_MS): `dropped` of them, the
 *  last at `lastDropped`; the prefix sums stay cumulative from the series' first entry. Amounts are
 *  not kept (only the sums), so a late entry's caller hands over those of the entries after it
 *  (`insert`: the history has them in its records). */
export class Series {
  private times: number[] = [];
  private prefix: number[] = [0];
  private prefixSquares: number[] | undefined;
  private dropped = 0;
  private lastDropped = -Infinity;
  /** Sum and sum of squares of the entries a loaded history holds only as totals (`setBase`): they
   *  come before the first entry the prefix sums start from. */
  private baseSum = 0;
  private baseSquares = 0;

  constructor(withSquares = false) {
    this.prefixSquares = withSquares ? [0] : undefined;
  }

  /** Appends an entry (an older one goes through `insert`); entries older than `keepFrom` may then
   *  be dropped. */
  add(time: number, amount: number, keepFrom = -Infinity): void {
    const times = this.times;
    const last = times.length ? times[times.length - 1]! : this.lastDropped;
    if (time < last) throw new Error('history must be added in time order');
    times.push(time);
    this.prefix.push(this.prefix[this.prefix.length - 1]! + amount);
    const squares = this.prefixSquares;
    if (squares) squares.push(squares[squares.length - 1]! + amount * amount);
    // Compact once at least half the entries are past the horizon (amortised O(1) per entry).
    if (times.length >= 64 && times[times.length >> 1]! < keepFrom) this.dropBefore(keepFrom);
  }

  /** Whether an entry at `time` can still be placed: not at or before an entry already dropped
   *  (appending after the last dropped one when nothing is held is fine). */
  accepts(time: number): boolean {
    return time > this.lastDropped || (this.times.length === 0 && time === this.lastDropped);
  }

  /**
   * Adds an entry at any time it `accepts` (else throws a HorizonError, `newest` naming the
   * history's newest time), after the entries at or before `time`. `after`: the amounts of the
   * entries later than `time`, in order, so that the running sums from there on are summed again in
   * time order: the very values adding in time order gives (adding the amount to each later sum
   * instead could differ in the last bits). Costs O(entries later than `time`); `keepFrom` should
   * come from the newest time, not this entry's.
   */
  insert(time: number, amount: number, keepFrom: number, after: readonly number[], newest = keepFrom + WINDOW_HORIZON_MS): void {
    if (!this.accepts(time)) throw new HorizonError(time, newest);
    const times = this.times;
    let i = times.length;
    while (i > 0 && times[i - 1]! > time) i--;
    const n = times.length + 1;
    if (after.length !== n - 1 - i) throw new Error(`insert needs the amounts of the ${n - 1 - i} entries after the new one, got ${after.length}`);
    times.splice(i, 0, time);
    const prefix = this.prefix;
    const squares = this.prefixSquares;
    // prefix[j] is the total of the first j held entries (plus the dropped ones): the new entry's
    // total goes at i + 1, and every one after it changes.
    prefix.splice(i + 1, 0, prefix[i]! + amount);
    squares?.splice(i + 1, 0, squares[i]! + amount * amount);
    for (let j = i + 1; j < n; j++) {
      const a = after[j - i - 1]!;
      prefix[j + 1] = prefix[j]! + a;
      if (squares) squares[j + 1] = squares[j]! + a * a;
    }
    if (n >= 64 && times[n >> 1]! < keepFrom) this.dropBefore(keepFrom);
  }

  /**
   * Makes this series, loaded with the entries from some time on, stand for the entity's whole
   * history: `count` more entries before all of these, with those amounts' sum and sum of squares,
   * the last of them at `last` (or, if entries are held, any time from the last of them up to the
   * first held entry: a query cannot reach between the two, see `lastBefore`). Only before anything
   * was dropped.
   */
  setBase(count: number, sum: number, squares: number, last: number): void {
    if (this.dropped !== 0) throw new Error('setBase() on a series that dropped entries');
    if (count === 0) return;
    this.dropped = count;
    this.baseSum = sum;
    this.baseSquares = squares;
    this.lastDropped = last;
  }

  private dropBefore(keepFrom: number): void {
    const k = countBelow(this.times, keepFrom);
    this.lastDropped = this.times[k - 1]!;
    this.dropped += k;
    this.times.splice(0, k);
    this.prefix.splice(0, k);
    this.prefixSquares?.splice(0, k);
  }

  /** Number of entries strictly before `time`. */
  countBefore(time: number): number {
    if (time <= this.lastDropped) {
      if (time === -Infinity) return 0;
      throw new Error(`a history query reached back past the ${WINDOW_HORIZON_MS / 86_400_000}-day horizon`);
    }
    return this.dropped + countBelow(this.times, time);
  }

  /** Running total of the first `k` entries (k = 0, or k at least the dropped entries). */
  private sumOf(prefix: number[], base: number, k: number): number {
    return k === 0 ? 0 : base + prefix[k - this.dropped]!;
  }

  /** Sum of the amounts of entries a..b−1 (a ≤ b, each 0 or at least the dropped entries). A window
   *  within the held entries is a difference of held running totals, whatever came before them. */
  private sumBetween(a: number, b: number): number {
    return a === 0 ? this.sumOf(this.prefix, this.baseSum, b) : this.prefix[b - this.dropped]! - this.prefix[a - this.dropped]!;
  }

  /** Count and sum of amounts in [from, to) (to exclusive: strictly older than `to`). */
  window(from: number, to: number): { count: number; sum: number } {
    const a = this.countBefore(from);
    const b = this.countBefore(to);
    return { count: b - a, sum: this.sumBetween(a, b) };
  }

  /** `window(from, to)` written as `out[at]` = count and `out[at + 1]` = sum, with no object made
   *  (feature extraction asks for a dozen windows per transaction). */
  windowInto(from: number, to: number, out: Float64Array, at: number): void {
    const a = this.countBefore(from);
    const b = this.countBefore(to);
    out[at] = b - a;
    out[at + 1] = this.sumBetween(a, b);
  }

  /** Count, mean and standard deviation of all amounts strictly before `time`. */
  stats(time: number): { count: number; mean: number; std: number } {
    const n = this.countBefore(time);
    if (n === 0) return { count: 0, mean: 0, std: 0 };
    if (!this.prefixSquares) throw new Error('stats() needs a series made with squares');
    const mean = this.sumOf(this.prefix, this.baseSum, n) / n;
    const variance = Math.max(0, this.sumOf(this.prefixSquares, this.baseSquares, n) / n - mean * mean);
    return { count: n, mean, std: Math.sqrt(variance) };
  }

  /** Time of the last entry strictly before `time`, or undefined. */
  lastBefore(time: number): number | undefined {
    const n = this.countBefore(time);
    if (n === 0) return undefined;
    return n > this.dropped ? this.times[n - 1 - this.dropped] : this.lastDropped;
  }

  /** Entries held in memory (not dropped past the horizon). */
  get held(): number {
    return this.times.length;
  }

  /** Every entry, held or not. */
  get total(): number {
    return this.dropped + this.times.length;
  }

  /** Sum and sum of squares of the held entries (the squares 0 without them). */
  heldSums(): { sum: number; squares: number } {
    const n = this.times.length;
    const squares = this.prefixSquares;
    return { sum: this.prefix[n]! - this.prefix[0]!, squares: squares ? squares[n]! - squares[0]! : 0 };
  }
}
