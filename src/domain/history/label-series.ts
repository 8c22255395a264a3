// Merchants' or channels' fraud labels, filed by the time each became known (labels are learned
// late, and an outcome can change), so a query at time t counts exactly the labels known before t.
// Per entity: the times and labels in order of that time (a list of shared columns, lists.ts), with
// the count of frauds kept at every CHECKPOINT-th entry and counted from there for the ones
// between. The History class files and withdraws them.

import { Lists, widenFloats } from './lists.ts';
import { WINDOW_HORIZON_MS } from './horizon.ts';

const CHECKPOINT = 8;
const SHIFT = 3;


/** Whether the base labels (all known before the floor) fall in [from, to), given both bounds are
 *  -Infinity or at least the floor: 1 when only `from` is -Infinity, else 0 (or -1 for a reversed
 *  range from -Infinity, which counts negatively like the held entries do). */
function baseIn(from: number, to: number): number {
  return (from === -Infinity ? 1 : 0) - (to === -Infinity ? 1 : 0);
}

/** Sorts `times` ascending and `labels` with them. Whole milliseconds (the usual case) are sorted
 *  as one number each, time × 2 + label, by the typed array's own sort; anything else by index. */
function sortByTime(times: Float64Array, labels: Int8Array): void {
  let whole = true;
  for (const t of times) if (!Number.isSafeInteger(t * 2)) whole = false;
  if (whole) {
    const keys = times.map((t, i) => t * 2 + labels[i]!).sort();
    for (let i = 0; i < keys.length; i++) {
      const label = keys[i]! % 2 === 0 ? 0 : 1;
      labels[i] = label;
      times[i] = (keys[i]! - label) / 2;
    }
    return;
  }
  const order = Uint32Array.from({ length: times.length }, (_, i) => i).sort((a, b) => times[a]! - times[b]!);
  const t = Float64Array.from(order, (i) => times[i]!);
  const l = Int8Array.from(order, (i) => labels[i]!);
  times.set(t);
  labels.set(l);
}

/** Labels filed by the time they became known, entity by entity (by number): a label may be learned
 *  at any moment, earlier or later than those already filed (an import's labels become known a
 *  label delay after their transactions, a reported outcome at its `reported_at`). Every entry is
 *  kept: the all-time counts read them all, and an outcome that changes removes its old entry.
 *  `window(e, from, to)` is (labels known in [from, to), frauds among them). */
export class LabelStore {
  /** Per entity: when each label became known (ascending) and the label. */
  private readonly entries = new Lists(0, 1, 1);
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
  private pending: { entity: number[]; time: number[]; label: number[] } | undefined;

  private ensure(e: number): void {
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

  private timeAt(e: number, i: number): number {
    return this.entries.floats[0]![this.entries.start[e]! + i]!;
  }

  private labelAt(e: number, i: number): number {
    return this.entries.bytes[0]![this.entries.start[e]! + i]!;
  }

  /** From now until `endLoad`, labels are collected and filed together. */
  beginLoad(): void {
    this.pending ??= { entity: [], time: [], label: [] };
  }

  /** Files the labels collected since `beginLoad`, each entity's in order of when they became
   *  known (those known at the same time in the order filed, as one at a time would place them). */
  endLoad(): void {
    for (const _ of this.endLoading());
  }

  /** `endLoad` in steps of some thousands of labels each. */
  *endLoading(): Generator<void> {
    const p = this.pending;
    this.pending = undefined;
    if (!p || p.entity.length === 0) return;
    // Grouped by entity (a counting sort), then each entity's in order of time. Entries known at the
    // same time may come in any order among themselves: no query tells them apart.
    const n = p.entity.length;
    let entities = 0;
    for (const e of p.entity) entities = Math.max(entities, e + 1);
    const starts = new Int32Array(entities + 1);
    for (const e of p.entity) starts[e + 1]!++;
    for (let e = 0; e < entities; e++) starts[e + 1]! += starts[e]!;
    const fill = starts.slice(0, entities);
    const times = new Float64Array(n);
    const labels = new Int8Array(n);
    for (let i = 0; i < n; i++) {
      const at = fill[p.entity[i]!]!++;
      times[at] = p.time[i]!;
      labels[at] = p.label[i]!;
    }
    yield;
    let filed = 0;
    for (let e = 0; e < entities; e++) {
      const from = starts[e]!;
      const to = starts[e + 1]!;
      if (from === to) continue;
      filed += to - from;
      if (filed >= 16_384) {
        filed = 0;
        yield;
      }
      sortByTime(times.subarray(from, to), labels.subarray(from, to));
      if (this.entries.count(e) > 0) {
        for (let k = from; k < to; k++) this.insert(e, times[k]!, labels[k] as 0 | 1);
        continue;
      }
      this.entries.reserve(e, to - from, true);
      if (this.checkpoints.count(e) === 0) {
        const at = this.checkpoints.append(e);
        this.checkpoints.ints[0]![at] = 0;
      }
      let frauds = this.frauds[e]!;
      for (let k = from; k < to; k++) {
        const at = this.entries.append(e);
        this.entries.floats[0]![at] = times[k]!;
        this.entries.bytes[0]![at] = labels[k]!;
        frauds += labels[k]!;
        if ((k - from + 1) % CHECKPOINT === 0) {
          const c = this.checkpoints.append(e);
          this.checkpoints.ints[0]![c] = frauds;
        }
      }
      this.frauds[e] = frauds;
    }
  }

  insert(e: number, time: number, label: 0 | 1): void {
    this.ensure(e);
    if (time < this.floor[e]!) {
      this.baseLabels[e]!++;
      this.baseFrauds[e]! += label;
      return;
    }
    if (this.pending) {
      this.pending.entity.push(e);
      this.pending.time.push(time);
      this.pending.label.push(label);
      return;
    }
    // After every entry at or before `time` (mostly the end: labels arrive roughly in order).
    let i = this.entries.count(e);
    while (i > 0 && this.timeAt(e, i - 1) > time) i--;
    if (this.checkpoints.count(e) === 0) {
      const at = this.checkpoints.append(e);
      this.checkpoints.ints[0]![at] = 0;
    }
    const at = this.entries.insert(e, i);
    this.entries.floats[0]![at] = time;
    this.entries.bytes[0]![at] = label;
    this.frauds[e]! += label;
    this.recount(e, i);
  }

  /** Removes one entry filed at `time` with this label (an outcome that changed). */
  remove(e: number, time: number, label: 0 | 1): void {
    if (e >= 0 && e < this.floor.length && time < this.floor[e]!) {
      this.baseLabels[e]!--;
      this.baseFrauds[e]! -= label;
      return;
    }
    const n = this.size(e);
    for (let i = n === 0 ? 0 : this.below(e, time); i < n && this.timeAt(e, i) === time; i++) {
      if (this.labelAt(e, i) !== label) continue;
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
    const col = this.entries.floats[0]!;
    const s = this.entries.start[e]!;
    const n = this.entries.count(e);
    if (n === 0 || col[s + n - 1]! < t) return n;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (col[s + mid]! < t) lo = mid + 1;
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

  /** Packs the lists (see Lists.compact). */
  compact(): void {
    this.entries.compact();
    this.checkpoints.compact();
  }

  get byteLength(): number {
    return this.entries.byteLength + this.checkpoints.byteLength + 4 * this.floor.byteLength;
  }
}

/** One entity's labels, as the features read them (a view: it holds nothing of its own). */
export class LabelSeries {
  constructor(
    private readonly store: LabelStore,
    private readonly e: number,
  ) {}

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
