// Fraud labels as they become known, the part of a history the label features read: each
// merchant's and channel's labels filed by when they became known (label-series.ts), and each
// customer's frauds, only ever asked how many were known before a time and when the first was.
// A label counts only from when it became known (`time + labelDelay` for a labelled dataset, the
// report's time for a live outcome), and an outcome can change, so a label is filed and withdrawn
// by that time. A history loaded from a floor (history.ts, `loadFrom`) keeps the labels known
// before it as totals only: a customer's frauds as a count and the earliest time.

import { HorizonError } from './horizon.ts';
import { LabelStore } from './label-series.ts';
import { Lists, widenFloats } from './lists.ts';
import type { RecordStore } from './records.ts';
import { countBelowIn, insertSortedIn, removeSortedIn } from './sorted.ts';

export class KnownLabels {
  /** By merchant and by channel number. */
  merchants: LabelStore;
  channels: LabelStore;
  /** Per customer, the times its held frauds became known (ascending). */
  private readonly customerFrauds = new Lists(0, 1);
  /** Per customer, its frauds known before the floor: how many, and when the earliest became known. */
  private baseCount = new Float64Array(0);
  private baseFirst = new Float64Array(0);
  /** Labels known before this time are held as totals only. */
  private floor = -Infinity;

  constructor(records: RecordStore) {
    this.merchants = new LabelStore(records);
    this.channels = new LabelStore(records);
  }

  /** Starts over on another (empty) record store. */
  rebuild(records: RecordStore): void {
    this.merchants = new LabelStore(records);
    this.channels = new LabelStore(records);
  }

  /** A load begins: labels known from `floor` on are filed one by one, those before it as totals. */
  beginLoad(floor: number): void {
    this.floor = floor;
    this.merchants.beginLoad();
    this.channels.beginLoad();
  }

  /** Room for a load's labels of each merchant and channel before they are filed (LabelStore.layOut). */
  layOut(merchants: Int32Array, channels: Int32Array): void {
    this.merchants.layOut(merchants);
    this.channels.layOut(channels);
  }

  /** The labels filed during a load sorted into place, in steps. */
  *endLoading(): Generator<void> {
    yield* this.merchants.endLoading();
    yield* this.channels.endLoading();
  }

  private ensureCustomer(c: number): void {
    this.baseCount = widenFloats(this.baseCount, c, 0);
    this.baseFirst = widenFloats(this.baseFirst, c, Number.NaN);
  }

  /** Files a label of customer `c`, merchant `m` and channel `ch` under the time it became known:
   *  record `ref`'s (which has it already), or with -1 one of a transaction held only in totals. */
  file(c: number, m: number, ch: number, label: 0 | 1, known: number, ref: number): void {
    if (label === 1) {
      if (known < this.floor) {
        this.ensureCustomer(c);
        const count = this.baseCount[c]!;
        this.baseFirst[c] = count > 0 ? Math.min(this.baseFirst[c]!, known) : known;
        this.baseCount[c] = count + 1;
      } else insertSortedIn(this.customerFrauds, c, known);
    }
    this.merchants.insert(m, known, label, ref);
    this.channels.insert(ch, known, label, ref);
  }

  /** Withdraws a filed label. One of a customer's frauds held only in totals that may have been the
   *  earliest of several is refused (HorizonError, nothing changed): the totals cannot tell the next
   *  earliest, loading afresh can. `latest`: the history's newest time, for the error. */
  unfile(c: number, m: number, ch: number, label: 0 | 1, known: number, ref: number, latest: number): void {
    if (label === 1) {
      if (known < this.floor) {
        const count = c < this.baseCount.length ? this.baseCount[c]! : 0;
        if (count === 0 || (count > 1 && known <= this.baseFirst[c]!)) throw new HorizonError(known, latest, 'an outcome known');
        this.baseCount[c] = count - 1;
        if (count === 1) this.baseFirst[c] = Number.NaN;
      } else removeSortedIn(this.customerFrauds, c, known);
    }
    this.merchants.remove(m, known, label, ref);
    this.channels.remove(ch, known, label, ref);
  }

  /** The earliest known fraud of the customer's (held or in totals), or undefined. */
  earliestFraud(c: number): number | undefined {
    const held = this.customerFrauds.count(c) > 0 ? this.customerFrauds.floats[0]![this.customerFrauds.start[c]!]! : undefined;
    const base = c < this.baseCount.length && this.baseCount[c]! > 0 ? this.baseFirst[c]! : undefined;
    return base === undefined ? held : held === undefined ? base : Math.min(base, held);
  }

  /** The customer's frauds whose labels were known strictly before `t`. */
  customerFraudsBefore(c: number, t: number): number {
    return (c < this.baseCount.length ? this.baseCount[c]! : 0) + countBelowIn(this.customerFrauds, c, t);
  }

  /** Ends a load with a customer's all-time frauds; true when some were known before the floor. */
  setCustomerTotal(c: number, frauds: number, firstKnown: number): boolean {
    const before = frauds - this.customerFrauds.count(c);
    if (before <= 0) return false;
    this.ensureCustomer(c);
    this.baseCount[c] = before;
    this.baseFirst[c] = firstKnown;
    return true;
  }

  /** Ends a load with a merchant's or channel's all-time labels and frauds. */
  setTotal(store: LabelStore, e: number, labels: number, frauds: number): void {
    store.setBase(e, this.floor, labels - store.size(e), frauds - store.heldFrauds(e));
  }

  /** Packs each part to the size of what it holds, in steps. */
  *compacting(): Generator<void> {
    for (const part of [this.merchants, this.channels, this.customerFrauds]) yield* part.compacting();
  }

  get byteLength(): number {
    return this.merchants.byteLength + this.channels.byteLength + this.customerFrauds.byteLength + 2 * this.baseCount.byteLength;
  }
}
