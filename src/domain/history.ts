// The transaction history that point-in-time features read: per customer, merchant and channel,
// the times and amounts of earlier transactions in time order; what each customer has used; fraud
// labels as they become known; and the customer–merchant graph (graphology) with the time each edge
// first appeared.
//
// Point in time: `features(tx)` must only see transactions strictly older than `tx`. Every query
// takes a cut-off time and counts only entries strictly before it, so transactions sharing a
// timestamp never see each other even when they are already in the history (batch and single
// scoring then agree exactly).
//
// Transactions mostly come in time order, and that path is only appends. Processes sharing one
// organization's history apply its transactions in the order the database committed them, which can
// be a little out of time order, so a transaction older than the newest (a late arrival) is placed
// where time order puts it (after those at the same time) and every structure it touches is brought
// to what adding in time order would have made: afterwards every query answers exactly as if the
// transactions had come in time order, with ties in the order they came. That takes the kept
// records (`withRecords`, as the live service's histories have): the series keep running sums, not
// amounts, and summing again from the late one's place on needs the amounts after it. A history
// without records (training, batch jobs: built from time-ordered data, where a row out of order is a
// mistake) refuses a late arrival. A transaction older than what a series has already dropped past
// its horizon (WINDOW_HORIZON_MS) cannot be placed either: `add` throws a HorizonError and the caller
// loads the history afresh.
//
// A history need not hold every transaction: the live service loads an organization's from a floor
// (its last WINDOW_HORIZON_MS), the transactions from there on in full and everything before as
// per-entity totals the database keeps (all-time counts, sums and first uses; `loadFrom` …
// `finishLoad`), so that loading costs the same however much older history is stored.
//
// Labels are learned late: a transaction's label is usable only from the time it became known. For a
// labelled dataset (training, a backtest, an import) that is `time + labelDelay` (default seven
// days); for an outcome reported on a live transaction it is the report's `reported_at`
// (`labelKnownAt`). The history files each label under that availability time, so a query at time t
// sees exactly the labels known before t. An outcome can change (`setOutcome`): the transaction's
// label is then filed anew under the time of the change. Transactions without a label (scored live,
// outcome unknown) add volume but no label.

import { UndirectedGraph } from 'graphology';
import { RecordStore } from './records.ts';
import { KeyCache } from './key-cache.ts';
import { channelOf, type HistoryTransaction } from './transaction.ts';

export const DEFAULT_LABEL_DELAY_MS = 7 * 86_400_000;

/** An entity's all-time totals, as the database keeps them for a loaded history (`finishLoad`). */
export interface EntityTotals {
  kind: 'customer' | 'merchant' | 'channel';
  key: string;
  transactions: number;
  amountSum: number;
  amountSquares: number;
  /** The newest transaction's time. */
  last: number;
  /** Transactions with an outcome, and the frauds among them. */
  labels: number;
  frauds: number;
  /** When the earliest fraud became known (customers with frauds). */
  firstFraudKnown: number | null;
}

/** The longest look-back of any windowed feature (30 days) plus a day's margin. A series drops
 *  entries older than this before the newest transaction: no query can reach them, since queries
 *  come at or after the newest transaction (a history is scored at its newest), and all-time counts
 *  and sums survive in the series' running totals. A query further back throws instead of answering
 *  wrongly, and so does adding a transaction at or before an entry already dropped (HorizonError):
 *  its place among the dropped entries is gone. */
export const WINDOW_HORIZON_MS = 31 * 86_400_000;

/** A transaction too old to place: at or before entries a series has dropped past the horizon.
 *  The history is unchanged; loading it afresh (in time order) places the transaction. */
export class HorizonError extends Error {
  constructor(time: number, newest: number, what = 'transaction') {
    const at = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : String(t));
    super(
      `${what} at ${at(time)} is older than the history's ${WINDOW_HORIZON_MS / 86_400_000}-day horizon` +
        `${Number.isFinite(newest) ? ` (newest transaction ${at(newest)})` : ''}: it cannot be placed; load the history afresh`,
    );
    this.name = 'HorizonError';
  }
}

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

/** Labels filed by the time they became known: entries kept sorted by that time (a label may be
 *  learned at any moment, earlier or later than those already filed: an import's labels become
 *  known a label delay after their transactions, a reported outcome at its `reported_at`), with
 *  running counts of entries and of frauds. Every entry is kept: the all-time counts read them all,
 *  and an outcome that changes removes its old entry. `window(from, to)` is (labels known in
 *  [from, to), frauds among them), as `Series.window` gives it for amounts. */
export class LabelSeries {
  private times: number[] = [];
  /** Frauds among the first k entries at [k]. */
  private frauds: number[] = [0];
  /** A loaded history's labels known before `floor`, held only as counts (`setBase`). */
  private floor = -Infinity;
  private baseLabels = 0;
  private baseFrauds = 0;

  /** Entries held (labels known from the floor on). */
  get size(): number {
    return this.times.length;
  }

  /** Frauds among the held entries. */
  get heldFrauds(): number {
    return this.frauds[this.times.length]!;
  }

  /** `labels` more labels, `frauds` of them fraud, all known before `floor`, which every held
   *  entry is not. */
  setBase(floor: number, labels: number, frauds: number): void {
    this.floor = floor;
    this.baseLabels = labels;
    this.baseFrauds = frauds;
  }

  insert(time: number, label: 0 | 1): void {
    if (time < this.floor) {
      this.baseLabels++;
      this.baseFrauds += label;
      return;
    }
    const times = this.times;
    // After every entry at or before `time` (mostly the end: labels arrive roughly in order).
    let i = times.length;
    while (i > 0 && times[i - 1]! > time) i--;
    if (i === times.length) {
      times.push(time);
      this.frauds.push(this.frauds[i]! + label);
      return;
    }
    times.splice(i, 0, time);
    this.frauds.splice(i + 1, 0, this.frauds[i]! + label);
    if (label) for (let k = i + 2; k < this.frauds.length; k++) this.frauds[k]!++;
  }

  /** Removes one entry filed at `time` with this label (an outcome that changed). */
  remove(time: number, label: 0 | 1): void {
    if (time < this.floor) {
      this.baseLabels--;
      this.baseFrauds -= label;
      return;
    }
    const times = this.times;
    for (let i = countBelow(times, time); i < times.length && times[i] === time; i++) {
      if (this.frauds[i + 1]! - this.frauds[i]! !== label) continue;
      times.splice(i, 1);
      this.frauds.splice(i + 1, 1);
      if (label) for (let k = i + 1; k < this.frauds.length; k++) this.frauds[k]!--;
      return;
    }
    throw new Error('no such label in the history');
  }

  window(from: number, to: number): { count: number; sum: number } {
    const a = this.indexOf(from);
    const b = this.indexOf(to);
    const base = baseIn(from, to);
    return { count: b - a + base * this.baseLabels, sum: this.frauds[b]! - this.frauds[a]! + base * this.baseFrauds };
  }

  windowInto(from: number, to: number, out: Float64Array, at: number): void {
    const a = this.indexOf(from);
    const b = this.indexOf(to);
    const base = baseIn(from, to);
    out[at] = b - a + base * this.baseLabels;
    out[at + 1] = this.frauds[b]! - this.frauds[a]! + base * this.baseFrauds;
  }

  /** Held entries strictly before `t`; a time before the floor cannot be told apart from the base. */
  private indexOf(t: number): number {
    if (t < this.floor && t !== -Infinity) throw new Error(`a label query reached back past the ${WINDOW_HORIZON_MS / 86_400_000}-day horizon`);
    return countBelow(this.times, t);
  }
}

/** Whether the base labels (all known before the floor) fall in [from, to), given both bounds are
 *  -Infinity or at least the floor: 1 when only `from` is -Infinity, else 0 (or -1 for a reversed
 *  range from -Infinity, which counts negatively like the held entries do). */
function baseIn(from: number, to: number): number {
  return (from === -Infinity ? 1 : 0) - (to === -Infinity ? 1 : 0);
}

/** First time a customer used each merchant, channel and location. */
class Usage {
  readonly merchants = new Map<string, number>();
  readonly channels = new Map<string, number>();
  readonly locations = new Map<string, number>();

  /** Notes a transaction no older than any noted before (the first use stays). */
  note(tx: HistoryTransaction, channel: string): void {
    if (!this.merchants.has(tx.merchant_id)) this.merchants.set(tx.merchant_id, tx.time);
    if (!this.channels.has(channel)) this.channels.set(channel, tx.time);
    if (!this.locations.has(tx.location)) this.locations.set(tx.location, tx.time);
  }

  /** Notes a late transaction: it may be an earlier first use. */
  noteLate(tx: HistoryTransaction, channel: string): void {
    keepEarliest(this.merchants, tx.merchant_id, tx.time);
    keepEarliest(this.channels, channel, tx.time);
    keepEarliest(this.locations, tx.location, tx.time);
  }
}

function keepEarliest(map: Map<string, number>, key: string, time: number): void {
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

const EMPTY = new Series();
const EMPTY_LABELS = new LabelSeries();

/** The entity's series, made on first use. */
function series(map: Map<string, Series>, key: string, withSquares = false): Series {
  let s = map.get(key);
  if (!s) map.set(key, (s = new Series(withSquares)));
  return s;
}

function labelSeries(map: Map<string, LabelSeries>, key: string): LabelSeries {
  let s = map.get(key);
  if (!s) map.set(key, (s = new LabelSeries()));
  return s;
}

/** Entries of an ascending array strictly below `t`. Queries mostly ask about recent times (windows
 *  ending now, the last few minutes or days), so the search gallops back from the end first: it
 *  touches the array's tail, which is in cache, instead of probing from the middle of a long array. */
export function countBelow(a: readonly number[] | undefined, t: number): number {
  if (!a) return 0;
  const n = a.length;
  if (n === 0 || a[n - 1]! < t) return n;
  // a[hi] >= t; widen the step until a[lo] < t or the start is passed.
  let hi = n - 1;
  let step = 1;
  let lo = hi - step;
  while (lo >= 0 && a[lo]! >= t) {
    hi = lo;
    step *= 2;
    lo = hi - step;
  }
  // The answer is in (lo, hi]: the first index whose value is >= t.
  lo = lo < 0 ? 0 : lo + 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function append(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Inserts keeping the list ascending (values mostly arrive near the end). */
function insertSorted(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (!list) return void map.set(key, [value]);
  let i = list.length;
  while (i > 0 && list[i - 1]! > value) i--;
  list.splice(i, 0, value);
}

/** Removes one occurrence of `value` from an ascending list. */
function removeSorted(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  const i = list ? countBelow(list, value) : -1;
  if (!list || list[i] !== value) throw new Error('no such entry in the history');
  list.splice(i, 1);
  if (list.length === 0) map.delete(key);
}

/** Node keys of the customer–merchant graph. */
const customerNodes = new KeyCache((id) => `c:${id}`);
const merchantNodes = new KeyCache((id) => `m:${id}`);
export const customerNode = (id: string) => customerNodes.get(id);
export const merchantNode = (id: string) => merchantNodes.get(id);

export class History {
  private readonly customers = new Map<string, Series>();
  private readonly merchants = new Map<string, Series>();
  private readonly channels = new Map<string, Series>();
  /** Labels by availability time: value 1 for fraud, 0 for legitimate. A customer's are only
   *  ever asked how many frauds were known, so only their frauds' availability times are kept. */
  private readonly customerFrauds = new Map<string, number[]>();
  /** A loaded history's customer frauds known before its floor: how many, and when the earliest of
   *  them became known. */
  private readonly customerFraudBase = new Map<string, { count: number; first: number }>();
  /** A loaded history holds every transaction from `floor` on and every label known from it on;
   *  what came before is in totals (`loadFrom`). */
  private floor = -Infinity;
  private readonly merchantLabels = new Map<string, LabelSeries>();
  private readonly channelLabels = new Map<string, LabelSeries>();
  private readonly usage = new Map<string, Usage>();
  /** Customers and merchants; edge attribute `first` = time of their first transaction; customer
   *  attribute `fraudKnownAt` = when their first fraud became known. */
  readonly graph = new UndirectedGraph<{ fraudKnownAt?: number }, { first: number }>();
  private latest = -Infinity;
  size = 0;
  /** Optional record keeping for evidence: every transaction in the order added (time order,
   *  except late arrivals), and per entity the indices of its transactions in time order (ties in
   *  the order added; see `keepRecords`). */
  private records = new RecordStore();
  private readonly recordIndex = { customer: new Map<string, number[]>(), merchant: new Map<string, number[]>(), channel: new Map<string, number[]>() };
  private keepRecords = false;
  /** Per merchant, when each of its customers first paid it (ascending), and when each customer
   *  counts as a known-compromised neighbour: max(first payment there, fraud known) (sorted). They
   *  answer the graph channel's neighbour counts in O(log n) instead of walking the merchant's edges. */
  private readonly merchantCustomerTimes = new Map<string, number[]>();
  private readonly merchantCompromisedTimes = new Map<string, number[]>();

  /** Keep every transaction for `recent()` (the service does; training does not need it);
   *  `expected`: how many are about to be added, when known. */
  withRecords(expected = 0): this {
    this.keepRecords = true;
    if (this.records.length === 0) this.records = new RecordStore(expected);
    return this;
  }

  /** Time of the newest transaction added (or -Infinity). */
  get newest(): number {
    return this.latest;
  }

  constructor(readonly labelDelay = DEFAULT_LABEL_DELAY_MS) {}

  /** Adds a transaction; returns its index among the kept records (the order added), or -1 when
   *  records are not kept. One older than the newest (a late arrival) is placed as if it had come
   *  in time order when every transaction is kept (`withRecords` before the first add; see
   *  `addLate`), and refused otherwise; one older than a series' horizon throws a HorizonError.
   *  A refused transaction leaves the history unchanged. */
  add(tx: HistoryTransaction): number {
    if (tx.time < this.latest) return this.addLate(tx);
    this.latest = tx.time;
    const channel = channelOf(tx);
    const keepFrom = tx.time - WINDOW_HORIZON_MS;
    series(this.customers, tx.customer_id, true).add(tx.time, tx.amount, keepFrom);
    series(this.merchants, tx.merchant_id).add(tx.time, tx.amount, keepFrom);
    series(this.channels, channel).add(tx.time, tx.amount, keepFrom);
    const labelled = tx.label === 0 || tx.label === 1;
    const known = labelled ? (tx.labelKnownAt ?? tx.time + this.labelDelay) : Number.NaN;
    if (labelled) this.fileLabel(tx.customer_id, tx.merchant_id, channel, tx.label!, known);
    let u = this.usage.get(tx.customer_id);
    if (!u) this.usage.set(tx.customer_id, (u = new Usage()));
    // The customer–merchant edge exists exactly when the customer has used the merchant before:
    // the graph is only touched for a new pair (or a fraud), not on every payment.
    const newPair = !u.merchants.has(tx.merchant_id);
    u.note(tx, channel);
    if (!newPair && tx.label !== 1) return this.addRecord(tx, channel, known);

    const c = customerNode(tx.customer_id);
    const m = merchantNode(tx.merchant_id);
    this.graph.mergeNode(c);
    this.graph.mergeNode(m);
    if (newPair) {
      this.graph.addEdge(c, m, { first: tx.time });
      append(this.merchantCustomerTimes, tx.merchant_id, tx.time);
      const fraudKnown = this.graph.getNodeAttribute(c, 'fraudKnownAt');
      if (fraudKnown !== undefined) insertSorted(this.merchantCompromisedTimes, tx.merchant_id, Math.max(tx.time, fraudKnown));
    }
    if (tx.label === 1) this.refreshCompromised(tx.customer_id);
    return this.addRecord(tx, channel, known);
  }

  /**
   * `add` for a transaction older than the newest. Each structure takes it where time order puts
   * it: the series and the per-entity record lists after the entries at or before its time (the
   * records give the series the amounts after it, so its running sums come out as in time order),
   * the customer's first uses and the pair's first payment (the graph edge's `first`, the
   * merchant's customer and compromised-neighbour times) if it is earlier. Labels are filed by
   * when they became known, which is order-free already. Costs O(entries later than it) in each
   * structure, plus what an in-order fraud costs (refreshCompromised walks the customer's edges).
   */
  private addLate(tx: HistoryTransaction): number {
    const t = tx.time;
    // Refused before anything changes, so a caller can keep the history or load it afresh.
    if (!this.keepRecords || this.records.length !== this.size) {
      throw new Error('history must be added in time order: a late transaction is placed only by a history that keeps every transaction (withRecords() before the first add)');
    }
    const channel = channelOf(tx);
    const placeable = (s: Series | undefined) => s === undefined || s.accepts(t);
    if (!placeable(this.customers.get(tx.customer_id)) || !placeable(this.merchants.get(tx.merchant_id)) || !placeable(this.channels.get(channel))) {
      throw new HorizonError(t, this.latest);
    }
    const labelled = tx.label === 0 || tx.label === 1;
    const known = labelled ? (tx.labelKnownAt ?? t + this.labelDelay) : Number.NaN;
    const k = this.records.push(tx, known);
    this.size++;
    const keepFrom = this.latest - WINDOW_HORIZON_MS;
    this.placeLate(series(this.customers, tx.customer_id, true), 'customer', tx.customer_id, tx, k, keepFrom);
    this.placeLate(series(this.merchants, tx.merchant_id), 'merchant', tx.merchant_id, tx, k, keepFrom);
    this.placeLate(series(this.channels, channel), 'channel', channel, tx, k, keepFrom);
    if (labelled) this.fileLabel(tx.customer_id, tx.merchant_id, channel, tx.label!, known);

    let u = this.usage.get(tx.customer_id);
    if (!u) this.usage.set(tx.customer_id, (u = new Usage()));
    const first = u.merchants.get(tx.merchant_id);
    u.noteLate(tx, channel);
    if (first !== undefined && first <= t && tx.label !== 1) return k;

    const c = customerNode(tx.customer_id);
    const m = merchantNode(tx.merchant_id);
    this.graph.mergeNode(c);
    this.graph.mergeNode(m);
    // The customer's compromised time as the graph has it (a fraud of this transaction's joins
    // in refreshCompromised, below).
    const fraudKnown = this.graph.getNodeAttribute(c, 'fraudKnownAt');
    if (first === undefined) {
      this.graph.addEdge(c, m, { first: t });
      insertSorted(this.merchantCustomerTimes, tx.merchant_id, t);
      if (fraudKnown !== undefined) insertSorted(this.merchantCompromisedTimes, tx.merchant_id, Math.max(t, fraudKnown));
    } else if (t < first) {
      // An earlier first payment of a known pair.
      this.graph.setEdgeAttribute(this.graph.edge(c, m)!, 'first', t);
      removeSorted(this.merchantCustomerTimes, tx.merchant_id, first);
      insertSorted(this.merchantCustomerTimes, tx.merchant_id, t);
      if (fraudKnown !== undefined) {
        removeSorted(this.merchantCompromisedTimes, tx.merchant_id, Math.max(first, fraudKnown));
        insertSorted(this.merchantCompromisedTimes, tx.merchant_id, Math.max(t, fraudKnown));
      }
    }
    if (tx.label === 1) this.refreshCompromised(tx.customer_id);
    return k;
  }

  /** Puts late transaction `k` into an entity's record list and series, both after the entries at
   *  or before its time; the list's records give the series the amounts after it. */
  private placeLate(s: Series, role: 'customer' | 'merchant' | 'channel', key: string, tx: HistoryTransaction, k: number, keepFrom: number): void {
    const index = this.recordIndex[role];
    const records = this.records;
    const after: number[] = [];
    const list = index.get(key);
    if (!list) index.set(key, [k]);
    else {
      let i = list.length;
      while (i > 0 && records.time(list[i - 1]!) > tx.time) i--;
      for (let j = i; j < list.length; j++) after.push(records.amount(list[j]!));
      list.splice(i, 0, k);
    }
    s.insert(tx.time, tx.amount, keepFrom, after, this.latest);
  }

  /** Files a label under the time it became known. */
  private fileLabel(customerId: string, merchantId: string, channel: string, label: 0 | 1, known: number): void {
    if (label === 1) {
      if (known < this.floor) {
        const base = this.customerFraudBase.get(customerId);
        if (base) {
          base.count++;
          base.first = Math.min(base.first, known);
        } else this.customerFraudBase.set(customerId, { count: 1, first: known });
      } else insertSorted(this.customerFrauds, customerId, known);
    }
    labelSeries(this.merchantLabels, merchantId).insert(known, label);
    labelSeries(this.channelLabels, channel).insert(known, label);
  }

  /** Withdraws a filed label. One of a customer's frauds held only in totals that may have been the
   *  earliest of several is refused (HorizonError, nothing changed): the totals cannot tell the next
   *  earliest, loading afresh can. */
  private unfileLabel(customerId: string, merchantId: string, channel: string, label: 0 | 1, known: number): void {
    if (label === 1) {
      if (known < this.floor) {
        const base = this.customerFraudBase.get(customerId);
        if (!base || (base.count > 1 && known <= base.first)) throw new HorizonError(known, this.latest, 'an outcome known');
        if (--base.count === 0) this.customerFraudBase.delete(customerId);
      } else removeSorted(this.customerFrauds, customerId, known);
    }
    labelSeries(this.merchantLabels, merchantId).remove(known, label);
    labelSeries(this.channelLabels, channel).remove(known, label);
  }

  /** A customer counts as compromised from its earliest known fraud: keeps the graph's
   *  `fraudKnownAt` and each of its merchants' compromised-neighbour times in step with it. */
  private refreshCompromised(customerId: string): void {
    const c = customerNode(customerId);
    if (!this.graph.hasNode(c)) return;
    const before = this.graph.getNodeAttribute(c, 'fraudKnownAt');
    const held = this.customerFrauds.get(customerId)?.[0];
    const base = this.customerFraudBase.get(customerId)?.first;
    const after = base === undefined ? held : held === undefined ? base : Math.min(base, held);
    if (before === after) return;
    if (after === undefined) this.graph.removeNodeAttribute(c, 'fraudKnownAt');
    else this.graph.setNodeAttribute(c, 'fraudKnownAt', after);
    this.graph.forEachEdge(c, (_e, attributes, source, target) => {
      const merchant = (source === c ? target : source).slice(2);
      if (before !== undefined) removeSorted(this.merchantCompromisedTimes, merchant, Math.max(attributes.first, before));
      if (after !== undefined) insertSorted(this.merchantCompromisedTimes, merchant, Math.max(attributes.first, after));
    });
  }

  /**
   * Sets the outcome of kept record `k` (needs `withRecords()`): `label` known from `knownAt` on,
   * or no outcome (undefined). The old label, if any, is withdrawn: queries at or after `knownAt`
   * see the new one, as learned then. Live queries never go back in time, so that is all they can
   * tell.
   */
  setOutcome(k: number, label: 0 | 1 | undefined, knownAt: number): void {
    const r = this.records;
    const customerId = r.customerId(k);
    const merchantId = r.merchantId(k);
    const channel = channelOf({ payment_type: r.paymentType(k), location: r.location(k) });
    const old = r.label(k);
    if (old !== undefined) this.unfileLabel(customerId, merchantId, channel, old, r.labelKnownAt(k));
    if (label !== undefined) this.fileLabel(customerId, merchantId, channel, label, knownAt);
    r.setLabel(k, label, knownAt);
    if (old === 1 || label === 1) this.refreshCompromised(customerId);
  }

  /**
   * Sets the outcome of a transaction this history holds only in its totals (one before a loaded
   * history's floor): its old label (`from`, known at `fromKnown`) is withdrawn and the new one
   * filed, as `setOutcome` does for a kept record. Throws a HorizonError, changing nothing, when
   * the totals cannot follow (see `unfileLabel`).
   */
  relabel(tx: Pick<HistoryTransaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>, from: 0 | 1 | undefined, fromKnown: number, label: 0 | 1, knownAt: number): void {
    const channel = channelOf(tx);
    if (from !== undefined) this.unfileLabel(tx.customer_id, tx.merchant_id, channel, from, fromKnown);
    this.fileLabel(tx.customer_id, tx.merchant_id, channel, label, knownAt);
    if (from === 1 || label === 1) this.refreshCompromised(tx.customer_id);
  }

  // Loading a history from a floor: what windowed features can reach is loaded as transactions, the
  // rest as totals. In this order: `loadFrom`, every `loadUse`, the transactions from the floor on
  // (`add`, in time order), `loadLabel` for the labels known from the floor on of transactions
  // before it, then `finishLoad` with the all-time totals. Afterwards every query at or after the
  // newest transaction answers as the whole history would (running sums up to rounding: the totals
  // were summed in the order recorded, not in time order).

  /** Starts a load: every transaction from `floor` on and every label known from it on follow. */
  loadFrom(floor: number): this {
    if (this.size !== 0) throw new Error('loadFrom() on a history that has transactions');
    this.floor = floor;
    return this;
  }

  /** When a customer first used a merchant, channel or location (all-time). */
  loadUse(customerId: string, kind: 'merchant' | 'channel' | 'location', key: string, first: number): void {
    let u = this.usage.get(customerId);
    if (!u) this.usage.set(customerId, (u = new Usage()));
    if (kind === 'channel') return void keepEarliest(u.channels, key, first);
    if (kind === 'location') return void keepEarliest(u.locations, key, first);
    if (u.merchants.has(key)) throw new Error('loadUse() of a pair twice');
    u.merchants.set(key, first);
    const c = customerNode(customerId);
    const m = merchantNode(key);
    this.graph.mergeNode(c);
    this.graph.mergeNode(m);
    this.graph.addEdge(c, m, { first });
    // Sorted in finishLoad.
    append(this.merchantCustomerTimes, key, first);
  }

  /** A label known from the floor on, of a transaction before it. */
  loadLabel(tx: Pick<HistoryTransaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>, label: 0 | 1, known: number): void {
    this.fileLabel(tx.customer_id, tx.merchant_id, channelOf(tx), label, known);
    if (label === 1) this.refreshCompromised(tx.customer_id);
  }

  /** Ends a load with each entity's all-time totals: what they count beyond what was loaded is
   *  what came before the floor. */
  finishLoad(totals: Iterable<EntityTotals>): void {
    for (const list of this.merchantCustomerTimes.values()) list.sort((a, b) => a - b);
    const compromised: string[] = [];
    for (const t of totals) {
      const s = t.kind === 'customer' ? series(this.customers, t.key, true) : series(t.kind === 'merchant' ? this.merchants : this.channels, t.key);
      const before = t.transactions - s.total;
      if (before > 0) {
        const held = s.heldSums();
        s.setBase(before, t.amountSum - held.sum, t.amountSquares - held.squares, s.held > 0 ? this.floor : t.last);
      }
      if (t.kind === 'customer') {
        const frauds = t.frauds - (this.customerFrauds.get(t.key)?.length ?? 0);
        if (frauds > 0) {
          this.customerFraudBase.set(t.key, { count: frauds, first: t.firstFraudKnown! });
          compromised.push(t.key);
        }
      } else if (t.labels > 0) {
        const labels = labelSeries(t.kind === 'merchant' ? this.merchantLabels : this.channelLabels, t.key);
        labels.setBase(this.floor, t.labels - labels.size, t.frauds - labels.heldFrauds);
      }
    }
    for (const id of compromised) this.refreshCompromised(id);
  }

  private addRecord(tx: HistoryTransaction, channel: string, labelKnownAt: number): number {
    this.size++;
    if (!this.keepRecords) return -1;
    const k = this.records.push(tx, labelKnownAt);
    append(this.recordIndex.customer, tx.customer_id, k);
    append(this.recordIndex.merchant, tx.merchant_id, k);
    append(this.recordIndex.channel, channel, k);
    return k;
  }

  /** The merchant's distinct customers whose first payment there is strictly before `t`, and how
   *  many of those were known compromised strictly before `t`, excluding `customer` itself. */
  merchantNeighbours(merchantId: string, customerId: string, t: number): { customers: number; compromised: number } {
    const customers = countBelow(this.merchantCustomerTimes.get(merchantId), t);
    let compromised = countBelow(this.merchantCompromisedTimes.get(merchantId), t);
    const c = customerNode(customerId);
    const m = merchantNode(merchantId);
    const known = this.graph.hasNode(c) ? this.graph.getNodeAttribute(c, 'fraudKnownAt') : undefined;
    if (known !== undefined && this.graph.hasNode(m)) {
      const edge = this.graph.edge(c, m);
      if (edge !== undefined && Math.max(this.graph.getEdgeAttribute(edge, 'first'), known) < t) compromised--;
    }
    return { customers, compromised };
  }

  /** Earlier transactions (strictly before `time`) of a transaction's customer, merchant and channel. */
  priors(tx: HistoryTransaction, time = tx.time): { customer: number; merchant: number; channel: number } {
    return { customer: this.customer(tx.customer_id).countBefore(time), merchant: this.merchant(tx.merchant_id).countBefore(time), channel: this.channel(channelOf(tx)).countBefore(time) };
  }

  /** Up to `n` most recent transactions of an entity strictly older than `before`, newest first,
   *  as indices into `transactions` (needs `withRecords()`). */
  recentIndices(role: 'customer' | 'merchant' | 'channel', key: string, before: number, n: number): number[] {
    const list = this.recordIndex[role].get(key);
    if (!list) return [];
    const out: number[] = [];
    for (let i = list.length - 1; i >= 0 && out.length < n; i--) {
      const k = list[i]!;
      if (this.records.time(k) < before) out.push(k);
    }
    return out;
  }

  /** How many more of an entity's earlier transactions than its kept records hold would make `n`
   *  (a loaded history keeps none from before its floor; evidence reads those from the database). */
  recordsMissing(role: 'customer' | 'merchant' | 'channel', key: string, n: number): number {
    const held = this.recordIndex[role].get(key)?.length ?? 0;
    if (held >= n) return 0;
    const all = (role === 'customer' ? this.customer(key) : role === 'merchant' ? this.merchant(key) : this.channel(key)).total;
    return Math.max(0, Math.min(n, all) - held);
  }

  /** Before this time a loaded history holds totals only (-Infinity: it holds everything). */
  get heldFrom(): number {
    return this.floor;
  }

  /** The same transactions as objects. */
  recent(role: 'customer' | 'merchant' | 'channel', key: string, before: number, n: number): HistoryTransaction[] {
    return this.recentIndices(role, key, before, n).map((k) => this.records.at(k)!);
  }

  /** Every transaction kept by `withRecords()`, in the order added (time order, except late
   *  arrivals). */
  get transactions(): RecordStore {
    return this.records;
  }

  /** The customer's frauds whose labels were known strictly before `t`. */
  customerKnownFrauds(id: string, t: number): number {
    return (this.customerFraudBase.get(id)?.count ?? 0) + countBelow(this.customerFrauds.get(id), t);
  }

  /** Labels of a merchant's or channel's transactions, filed by when they became known:
   *  `window(-Infinity, t)` gives (labels known before t, frauds among them). */
  merchantLabelSeries(id: string): LabelSeries {
    return this.merchantLabels.get(id) ?? EMPTY_LABELS;
  }

  channelLabelSeries(key: string): LabelSeries {
    return this.channelLabels.get(key) ?? EMPTY_LABELS;
  }

  customer(id: string): Series {
    return this.customers.get(id) ?? EMPTY;
  }

  merchant(id: string): Series {
    return this.merchants.get(id) ?? EMPTY;
  }

  channel(key: string): Series {
    return this.channels.get(key) ?? EMPTY;
  }

  customerUsage(id: string): { merchants: Map<string, number>; channels: Map<string, number>; locations: Map<string, number> } {
    return this.usage.get(id) ?? { merchants: new Map(), channels: new Map(), locations: new Map() };
  }
}
