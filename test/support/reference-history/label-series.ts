// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// A merchant's or channel's fraud labels, filed by the time each became known (labels are learned
// late, and an outcome can change), with running counts of labels and frauds, so a query at time t
// counts exactly the labels known before t. The History class files and withdraws them.

import { countBelow } from './sorted.ts';
import { WINDOW_HORIZON_MS } from '../../../src/domain/history/horizon.ts';

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
