// Every transaction of the live history, kept column by column: times and amounts in growable
// Float64Arrays, customers, merchants, locations and payment types as indices into interned string
// tables, labels as one byte, and the callers' transaction ids as strings. The service keeps the
// whole history in memory for evidence and ring detection; as one object per transaction that cost
// about 200 bytes each (50 MB for the example history), as columns it costs about 60.
//
// Rows are materialised on demand (`at`) as ordinary `HistoryTransaction` objects, so readers see
// the same shape as before; `at` also makes the store usable wherever an array of transactions is
// read by index (ring detection).

import type { HistoryTransaction } from './history.ts';

/** Interned strings: each distinct value stored once, referred to by its index. */
class Interned {
  readonly values: string[] = [];
  private readonly index = new Map<string, number>();

  id(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.values.push(value) - 1;
      this.index.set(value, i);
    }
    return i;
  }
}

const NO_LABEL = -1;

export class RecordStore {
  private capacity = 1024;
  private count = 0;
  private times = new Float64Array(this.capacity);
  private amounts = new Float64Array(this.capacity);
  private customers = new Int32Array(this.capacity);
  private merchants = new Int32Array(this.capacity);
  private locations = new Int32Array(this.capacity);
  private paymentTypes = new Int32Array(this.capacity);
  private labels = new Int8Array(this.capacity);
  /** Transaction ids; undefined where the caller gave none. */
  private readonly ids: (string | undefined)[] = [];
  private readonly entities = new Interned();
  private readonly places = new Interned();

  get length(): number {
    return this.count;
  }

  /** Appends a transaction; returns its index. */
  push(tx: HistoryTransaction): number {
    if (this.count === this.capacity) this.grow();
    const k = this.count++;
    this.times[k] = tx.time;
    this.amounts[k] = tx.amount;
    this.customers[k] = this.entities.id(tx.customer_id);
    this.merchants[k] = this.entities.id(tx.merchant_id);
    this.locations[k] = this.places.id(tx.location);
    this.paymentTypes[k] = this.places.id(tx.payment_type);
    this.labels[k] = tx.label ?? NO_LABEL;
    this.ids.push(tx.transaction_id);
    return k;
  }

  /** Time of transaction `k` (no object made). */
  time(k: number): number {
    return this.times[k]!;
  }

  /** Transaction `k` as an object (undefined past the end, like `Array.prototype.at`). */
  at(k: number): HistoryTransaction | undefined {
    if (k < 0) k += this.count;
    if (k < 0 || k >= this.count) return undefined;
    const label = this.labels[k]!;
    const id = this.ids[k];
    const tx: HistoryTransaction = {
      time: this.times[k]!,
      amount: this.amounts[k]!,
      customer_id: this.entities.values[this.customers[k]!]!,
      merchant_id: this.entities.values[this.merchants[k]!]!,
      location: this.places.values[this.locations[k]!]!,
      payment_type: this.places.values[this.paymentTypes[k]!]!,
    };
    if (label !== NO_LABEL) tx.label = label as 0 | 1;
    if (id !== undefined) tx.transaction_id = id;
    return tx;
  }

  private grow(): void {
    this.capacity *= 2;
    const widen = <T extends Float64Array | Int32Array | Int8Array>(a: T, make: (n: number) => T): T => {
      const b = make(this.capacity);
      b.set(a);
      return b;
    };
    this.times = widen(this.times, (n) => new Float64Array(n));
    this.amounts = widen(this.amounts, (n) => new Float64Array(n));
    this.customers = widen(this.customers, (n) => new Int32Array(n));
    this.merchants = widen(this.merchants, (n) => new Int32Array(n));
    this.locations = widen(this.locations, (n) => new Int32Array(n));
    this.paymentTypes = widen(this.paymentTypes, (n) => new Int32Array(n));
    this.labels = widen(this.labels, (n) => new Int8Array(n));
  }
}
