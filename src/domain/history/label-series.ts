// Merchants' or channels' fraud labels, filed by the time each became known (labels are learned
// late, and an outcome can change), so a query at time t counts exactly the labels known before t.
// Per entity: its labelled transactions in order of that time (a list of shared columns, lists.ts),
// as their numbers in the record store, which holds each one's label and when it became known; a
// label of a transaction the history holds only in totals (before a loaded history's floor) is
// kept beside them. The count of frauds is kept at every CHECKPOINT-th entry and counted from
// there for the ones between. The History class files and withdraws them.

import { layOutCheckpointed, Lists, trimFloats, usedCounts, widenFloats } from './lists.ts';
import { resized } from './numbers.ts';
import { grown } from './strings.ts';
import type { RecordStore } from './records.ts';
import { WINDOW_HORIZON_MS } from './horizon.ts';

const CHECKPOINT = 16;
const SHIFT = 4;

/** Labels filed during a load, in typed arrays: millions of them in JavaScript arrays would be
 *  copied and traced by the collector as they grow. Each is its entity and its entry (a record's
 *  number, or one kept beside the records): the record store holds the label and when it became
 *  known, so they are read from there when the load ends, not kept twice. */
class PendingLabels {
  count = 0;
  entity = new Int32Array(1024);
  entry = new Int32Array(1024);

  push(e: number, entry: number): void {
    const i = this.count++;
    if (i === this.entity.length) {
      const n = grown(i);
      this.entity = resized(this.entity, n, i);
      this.entry = resized(this.entry, n, i);
    }
    this.entity[i] = e;
    this.entry[i] = entry;
  }
}

/** Pending labels [from, to) into their entity's part of `refs` (`fill`: each entity's next place). */
function group(p: PendingLabels, from: number, to: number, fill: Int32Array, refs: Int32Array): void {
  for (let i = from; i < to; i++) refs[fill[p.entity[i]!]!++] = p.entry[i]!;
}

/** Where each entity's entries start once grouped by entity (a counting sort): entity e's at
 *  [starts[e], starts[e + 1]). */
function entityStarts(entity: Int32Array): Int32Array {
  let entities = 0;
  for (let i = 0; i < entity.length; i++) entities = Math.max(entities, entity[i]! + 1);
  const starts = new Int32Array(entities + 1);
  for (let i = 0; i < entity.length; i++) starts[entity[i]! + 1]!++;
  for (let e = 0; e < entities; e++) starts[e + 1]! += starts[e]!;
  return starts;
}

/** Whether the base labels (all known before the floor) fall in [from, to), given both bounds are
 *  -Infinity or at least the floor: 1 when only `from` is -Infinity, else 0 (or -1 for a reversed
 *  range from -Infinity, which counts negatively like the held entries do). */
function baseIn(from: number, to: number): number {
  return (from === -Infinity ? 1 : 0) - (to === -Infinity ? 1 : 0);
}

/** Sorts `times` ascending and `refs` with them, entries of equal time in the order they came (no
 *  query tells them apart anyway), with no comparison function called per pair: whole-millisecond
 *  times (as every stored time is) are sorted as one number each, the time from the earliest times
 *  the count plus the entry's index, by the typed array's own sort, while those numbers stay exact;
 *  otherwise the times are sorted alone and each entry finds its place by a binary search. */
function sortByTime(times: Float64Array, refs: Int32Array): void {
  const n = times.length;
  if (n < 2) return;
  let min = Infinity;
  let max = -Infinity;
  let whole = true;
  for (let i = 0; i < n; i++) {
    const t = times[i]!;
    if (t < min) min = t;
    if (t > max) max = t;
    if (!Number.isInteger(t)) whole = false;
  }
  const original = Float64Array.from(times);
  const placed = new Int32Array(n);
  if (whole && (max - min + 1) * n <= Number.MAX_SAFE_INTEGER) {
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = (original[i]! - min) * n + i;
    keys.sort();
    for (let j = 0; j < n; j++) {
      const i = keys[j]! % n;
      times[j] = original[i]!;
      placed[j] = refs[i]!;
    }
    refs.set(placed);
    return;
  }
  const sorted = original.sort();
  const taken = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const t = times[i]!;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    placed[lo + taken[lo]!++] = refs[i]!;
  }
  times.set(sorted);
  refs.set(placed);
}

/** Labels filed by the time they became known, entity by entity (by number): a label may be learned
 *  at any moment, earlier or later than those already filed (an import's labels become known a
 *  label delay after their transactions, a reported outcome at its `reported_at`). Every entry is
 *  kept: the all-time counts read them all, and an outcome that changes removes its old entry.
 *  `window(e, from, to)` is (labels known in [from, to), frauds among them). */
export class LabelStore {
  private readonly records: RecordStore;

  /** Per entity: its labelled transactions by when each label became known (ascending): a record's
   *  number, or -1 − n for label n kept beside the records (`otherTimes`, `otherLabels`). */
  private readonly entries = new Lists(1, 0);
  /** Labels of transactions the record store does not hold. */
  private otherTimes = new Float64Array(64);
  private otherLabels = new Int8Array(64);
  private others = 0;
  /** Per entity: frauds among its first j × CHECKPOINT entries, at j. */
  private readonly checkpoints = new Lists(1, 0);
  /** Per entity: a loaded history's labels known before `floor`, held only as counts. */
  private floor = new Float64Array(0);
  private baseLabels = new Float64Array(0);
  private baseFrauds = new Float64Array(0);
  /** Per entity: frauds among the held entries. */
  private frauds = new Float64Array(0);
  /** Labels filed during a load (`beginLoad` … `endLoad`), filed together at its end: a load's
   *  labels come in the order of their transactions, not of when they became known, and filing
   *  each in its place would move every later one. */
  private pending: PendingLabels | undefined;
  /** A load's labels go straight to the end of their entity's list (`layOut` made room for them)
   *  and each list is sorted where it stands when the load ends. */
  private appending = false;

  constructor(records: RecordStore) {
    this.records = records;
  }

  /** During a load, before its labels are filed: room for `counts[e]` labels of entity e, laid out
   *  end to end (Lists.layOut), so that they are filed in their lists as they come instead of being
   *  collected apart and filed again at the end. */
  layOut(counts: Int32Array): void {
    if (!this.pending || this.pending.count > 0 || this.appending) return;
    const used = usedCounts(counts);
    if (used.length === 0) return;
    this.ensure(used.length - 1);
    layOutCheckpointed(this.entries, this.checkpoints, used, SHIFT);
    this.pending = undefined;
    this.appending = true;
  }

  private ensure(e: number): void {
    if (e >= this.made) this.made = e + 1;
    if (e < this.floor.length) return;
    this.floor = widenFloats(this.floor, e, -Infinity);
    this.baseLabels = widenFloats(this.baseLabels, e, 0);
    this.baseFrauds = widenFloats(this.baseFrauds, e, 0);
    this.frauds = widenFloats(this.frauds, e, 0);
    this.entries.ensure(this.floor.length - 1);
    this.checkpoints.ensure(this.floor.length - 1);
  }

  /** Entries held (labels known from the floor on). */
  size(e: number): number {
    return e < 0 ? 0 : this.entries.count(e);
  }

  /** Frauds among the held entries. */
  heldFrauds(e: number): number {
    return e < 0 || e >= this.frauds.length ? 0 : this.frauds[e]!;
  }

  /** `labels` more labels, `frauds` of them fraud, all known before `floor`, which every held
   *  entry is not. */
  setBase(e: number, floor: number, labels: number, frauds: number): void {
    this.ensure(e);
    this.floor[e] = floor;
    this.baseLabels[e] = labels;
    this.baseFrauds[e] = frauds;
  }

  private refAt(e: number, i: number): number {
    return this.entries.ints[0]![this.entries.start[e]! + i]!;
  }

  private timeAt(e: number, i: number): number {
    return this.entryTime(this.refAt(e, i));
  }

  /** When entry `v`'s label became known. */
  private entryTime(v: number): number {
    return v >= 0 ? this.records.labelKnownAt(v) : this.otherTimes[-1 - v]!;
  }

  private labelAt(e: number, i: number): number {
    const v = this.refAt(e, i);
    return v >= 0 ? this.records.label(v)! : this.otherLabels[-1 - v]!;
  }

  /** The entry for a label: record `ref`'s, or (ref < 0) a new one kept beside the records. */
  private entryFor(ref: number, time: number, label: 0 | 1): number {
    if (ref >= 0) return ref;
    if (this.others === this.otherTimes.length) {
      const times = new Float64Array(this.others * 2);
      times.set(this.otherTimes);
      this.otherTimes = times;
      const labels = new Int8Array(this.others * 2);
      labels.set(this.otherLabels);
      this.otherLabels = labels;
    }
    this.otherTimes[this.others] = time;
    this.otherLabels[this.others] = label;
    return -1 - this.others++;
  }

  /** From now until `endLoad`, labels are collected and filed together. */
  beginLoad(): void {
    this.pending ??= new PendingLabels();
  }

  /** Files the labels collected since `beginLoad`, each entity's in order of when they became
   *  known (those known at the same time in the order filed, as one at a time would place them). */
  endLoad(): void {
    for (const _ of this.endLoading());
  }

  /** `endLoad` in steps of some thousands of labels each. */
  *endLoading(): Generator<void> {
    if (this.appending) {
      this.appending = false;
      yield* this.sortingAppended();
      return;
    }
    const p = this.pending;
    this.pending = undefined;
    if (!p || p.count === 0) return;
    // Grouped by entity (a counting sort), then each entity's in order of time. Entries known at the
    // same time may come in any order among themselves: no query tells them apart.
    // The loops are in plain functions, called a step at a time: a generator's own loop runs
    // unoptimised until it returns (V8 does not replace a running generator's frame), which over a
    // million labels is tens of milliseconds in one step.
    const n = p.count;
    const starts = entityStarts(p.entity.subarray(0, n));
    const entities = starts.length - 1;
    const fill = starts.slice(0, entities);
    const refs = new Int32Array(n);
    for (let from = 0; from < n; from += 4096) {
      group(p, from, Math.min(n, from + 4096), fill, refs);
      yield;
    }
    // The pending labels are in `refs` now: their room is given back before the entries are made.
    p.entity = p.entry = new Int32Array(0);
    this.entries.expect(n);
    this.checkpoints.expect((n >> SHIFT) + entities);
    // Each entity's times, read from its entries, in room for the largest entity's.
    let largest = 0;
    for (let e = 0; e < entities; e++) largest = Math.max(largest, starts[e + 1]! - starts[e]!);
    const times = new Float64Array(largest);
    let filed = 0;
    for (let e = 0; e < entities; e++) {
      const from = starts[e]!;
      const to = starts[e + 1]!;
      if (from === to) continue;
      filed += to - from;
      if (filed >= 4096) {
        filed = 0;
        yield;
      }
      this.fileLoaded(e, refs.subarray(from, to), times.subarray(0, to - from));
    }
  }

  /** Each entity's labels appended during a load sorted where they stand, and counted. */
  private *sortingAppended(): Generator<void> {
    const entities = Math.min(this.made, this.entries.lists);
    let largest = 0;
    for (let e = 0; e < entities; e++) largest = Math.max(largest, this.entries.count(e));
    const times = new Float64Array(largest);
    let sorted = 0;
    for (let e = 0; e < entities; e++) {
      const n = this.entries.count(e);
      if (n === 0) continue;
      sorted += n;
      if (sorted >= 4096) {
        sorted = 0;
        yield;
      }
      this.sortAppended(e, n, times.subarray(0, n));
    }
  }

  private sortAppended(e: number, n: number, times: Float64Array): void {
    const s = this.entries.start[e]!;
    const refs = this.entries.ints[0]!.subarray(s, s + n);
    for (let k = 0; k < n; k++) times[k] = this.entryTime(refs[k]!);
    sortByTime(times, refs);
    this.countSorted(e, n);
  }

  /** Files an entity's loaded entries (`times`: room for their times). */
  private fileLoaded(e: number, refs: Int32Array, times: Float64Array): void {
    for (let k = 0; k < refs.length; k++) times[k] = this.entryTime(refs[k]!);
    this.fileSorted(e, times, refs);
  }

  /** Files an entity's loaded labels (`times`, `refs`: a load's, in any order). */
  private fileSorted(e: number, times: Float64Array, refs: Int32Array): void {
    sortByTime(times, refs);
    const n = times.length;
    if (this.entries.count(e) > 0) {
      for (let k = 0; k < n; k++) this.place(e, times[k]!, refs[k]!);
      return;
    }
    this.entries.reserve(e, n, true);
    for (let k = 0; k < n; k++) {
      const at = this.entries.append(e);
      this.entries.ints[0]![at] = refs[k]!;
    }
    this.countSorted(e, n);
  }

  /** The frauds among an entity's `n` entries, filed in order, counted with their checkpoints. */
  private countSorted(e: number, n: number): void {
    if (this.checkpoints.count(e) === 0) {
      const at = this.checkpoints.append(e);
      this.checkpoints.ints[0]![at] = 0;
    }
    let frauds = this.frauds[e]!;
    for (let k = 0; k < n; k++) {
      frauds += this.labelAt(e, k);
      if ((k + 1) % CHECKPOINT === 0) {
        const c = this.checkpoints.append(e);
        this.checkpoints.ints[0]![c] = frauds;
      }
    }
    this.frauds[e] = frauds;
  }

  /** Files the label of record `ref` (or, with -1, of a transaction the records do not hold),
   *  known at `time`. A record's label and time must be in the store already. */
  insert(e: number, time: number, label: 0 | 1, ref: number): void {
    this.ensure(e);
    if (time < this.floor[e]!) {
      this.baseLabels[e]!++;
      this.baseFrauds[e]! += label;
      return;
    }
    if (this.pending) {
      this.pending.push(e, this.entryFor(ref, time, label));
      return;
    }
    if (this.appending) {
      const v = this.entryFor(ref, time, label);
      const at = this.entries.append(e);
      this.entries.ints[0]![at] = v;
      return;
    }
    this.place(e, time, this.entryFor(ref, time, label));
  }

  /** Puts entry `v` (known at `time`) after every entry at or before `time`. */
  private place(e: number, time: number, v: number): void {
    // After every entry at or before `time` (mostly the end: labels arrive roughly in order).
    let i = this.entries.count(e);
    while (i > 0 && this.timeAt(e, i - 1) > time) i--;
    if (this.checkpoints.count(e) === 0) {
      const at = this.checkpoints.append(e);
      this.checkpoints.ints[0]![at] = 0;
    }
    const at = this.entries.insert(e, i);
    this.entries.ints[0]![at] = v;
    this.frauds[e]! += this.labelAt(e, i);
    this.recount(e, i);
  }

  /** Withdraws one label filed at `time` with this label: record `ref`'s (while the record still
   *  has it), or with -1 one of those kept beside the records. */
  remove(e: number, time: number, label: 0 | 1, ref: number): void {
    if (e >= 0 && e < this.floor.length && time < this.floor[e]!) {
      this.baseLabels[e]!--;
      this.baseFrauds[e]! -= label;
      return;
    }
    const n = this.size(e);
    for (let i = n === 0 ? 0 : this.below(e, time); i < n && this.timeAt(e, i) === time; i++) {
      const v = this.refAt(e, i);
      if (ref >= 0 ? v !== ref : v >= 0 || this.otherLabels[-1 - v] !== label) continue;
      this.entries.remove(e, i);
      this.frauds[e]! -= label;
      this.recount(e, i);
      return;
    }
    throw new Error('no such label in the history');
  }

  /** Counts the frauds at the checkpoints after held entry `i` again (those before are unchanged). */
  private recount(e: number, i: number): void {
    const n = this.entries.count(e);
    const cp = this.checkpoints;
    const keep = (i >> SHIFT) + 1;
    while (cp.count(e) > keep) cp.remove(e, cp.count(e) - 1);
    let frauds = this.fraudsBefore(e, i);
    for (let j = i; j < n; j++) {
      frauds += this.labelAt(e, j);
      if ((j + 1) % CHECKPOINT === 0) {
        const at = cp.append(e);
        cp.ints[0]![at] = frauds;
      }
    }
  }

  /** Frauds among the first `i` held entries, counted from their checkpoint. */
  private fraudsBefore(e: number, i: number): number {
    if (i === this.entries.count(e)) return this.frauds[e]!;
    const j = i >> SHIFT;
    let v = this.checkpoints.ints[0]![this.checkpoints.start[e]! + j]!;
    for (let k = j << SHIFT; k < i; k++) v += this.labelAt(e, k);
    return v;
  }

  /** Held entries strictly before `t` (a binary search over the ascending times). */
  private below(e: number, t: number): number {
    const n = this.entries.count(e);
    if (n === 0 || this.timeAt(e, n - 1) < t) return n;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.timeAt(e, mid) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Held entries strictly before `t`; a time before the floor cannot be told apart from the base. */
  private indexOf(e: number, t: number): number {
    if (t < this.floor[e]! && t !== -Infinity) throw new Error(`a label query reached back past the ${WINDOW_HORIZON_MS / 86_400_000}-day horizon`);
    return this.below(e, t);
  }

  window(e: number, from: number, to: number): { count: number; sum: number } {
    if (e < 0 || e >= this.floor.length) return { count: 0, sum: 0 };
    const a = this.indexOf(e, from);
    const b = this.indexOf(e, to);
    const base = baseIn(from, to);
    return { count: b - a + base * this.baseLabels[e]!, sum: this.fraudsBefore(e, b) - this.fraudsBefore(e, a) + base * this.baseFrauds[e]! };
  }

  windowInto(e: number, from: number, to: number, out: Float64Array, at: number): void {
    if (e < 0 || e >= this.floor.length) {
      out[at] = 0;
      out[at + 1] = 0;
      return;
    }
    const a = this.indexOf(e, from);
    const b = this.indexOf(e, to);
    const base = baseIn(from, to);
    out[at] = b - a + base * this.baseLabels[e]!;
    out[at + 1] = this.fraudsBefore(e, b) - this.fraudsBefore(e, a) + base * this.baseFrauds[e]!;
  }

  /** Entities made: one past the highest asked for. */
  private made = 0;

  /** Packs the lists (see Lists.compact) and the per-entity arrays to the entities made, in steps. */
  *compacting(): Generator<void> {
    const n = this.made;
    yield* this.entries.compacting(n);
    yield* this.checkpoints.compacting(n);
    this.floor = trimFloats(this.floor, n);
    this.baseLabels = trimFloats(this.baseLabels, n);
    this.baseFrauds = trimFloats(this.baseFrauds, n);
    this.frauds = trimFloats(this.frauds, n);
  }

  get byteLength(): number {
    return this.entries.byteLength + this.checkpoints.byteLength + 4 * this.floor.byteLength + this.otherTimes.byteLength + this.otherLabels.byteLength;
  }
}

/** One entity's labels, as the features read them (a view: it holds nothing of its own). */
export class LabelSeries {
  private readonly store: LabelStore;
  private readonly e: number;

  constructor(store: LabelStore, e: number) {
    this.store = store;
    this.e = e;
  }

  get size(): number {
    return this.store.size(this.e);
  }

  get heldFrauds(): number {
    return this.store.heldFrauds(this.e);
  }

  window(from: number, to: number): { count: number; sum: number } {
    return this.store.window(this.e, from, to);
  }

  windowInto(from: number, to: number, out: Float64Array, at: number): void {
    this.store.windowInto(this.e, from, to, out, at);
  }
}
