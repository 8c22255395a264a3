// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// Every transaction of the live history, kept column by column: times and amounts in growable
// Float64Arrays, customers, merchants, locations and payment types as indices into interned string
// tables, labels as one byte, and the callers' transaction ids packed as UTF-8 in one buffer. The
// service keeps the whole history in memory for evidence and ring detection, and as columns it
// takes a fraction of the memory of one object per transaction (and of one string per id), with
// far less for the collector to trace.
// Rows are materialised on demand (`at`) as ordinary `Transaction` objects, so readers see
// the transaction type they expect; `at` also makes the store usable wherever an array of
// transactions is read by index (ring detection).

import type { Transaction } from '../../../src/domain/transaction.ts';

/** Interned strings: each distinct value stored once, referred to by its index. */
export class Interned {
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

/** Where a packed value starts, from its offset: stored as `-1 - start` when the row has no value.
 *  Value k ends where value k + 1 starts. */
export function packedStart(offset: number): number {
  return offset < 0 ? -1 - offset : offset;
}

/** Rows of a range in file order, as the batch job's result lines read them (`RecordStore.columns`):
 *  labels 0, 1 or -1 when unknown; ids packed as UTF-8 with `count + 1` offsets (`packedStart`). */
export interface RowColumns {
  amounts: Float64Array;
  labels: Int8Array;
  customers: Int32Array;
  merchants: Int32Array;
  idBytes: Buffer;
  idOffsets: Int32Array;
}

/** The next capacity of a growing column: half again, so a store that has just grown past a
 *  size holds at most a third of its capacity unused (doubling would leave up to half). */
function grown(capacity: number): number {
  return capacity + (capacity >> 1);
}

/** Strings packed end to end as UTF-8 in one growable buffer, read back by index; a missing
 *  value (undefined) is kept apart from the empty string. */
class PackedStrings {
  private bytes = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Start of value k at [k], end at [k + 1]; negative start: no value. */
  private offsets = new Int32Array(1025);
  private count = 0;

  push(value: string | undefined): void {
    if (this.count + 2 > this.offsets.length) {
      const wider = new Int32Array(grown(this.offsets.length));
      wider.set(this.offsets);
      this.offsets = wider;
    }
    const start = this.used;
    if (value !== undefined) {
      const need = start + Buffer.byteLength(value, 'utf8');
      if (need > this.bytes.length) {
        if (need > 0x7fff_ffff) throw new Error('transaction ids exceed 2 GB');
        const wider = Buffer.allocUnsafe(Math.min(0x7fff_ffff, Math.max(need, grown(this.bytes.length))));
        this.bytes.copy(wider, 0, 0, start);
        this.bytes = wider;
      }
      this.used += this.bytes.write(value, start, 'utf8');
    }
    this.offsets[this.count] = value === undefined ? -1 - start : start;
    this.offsets[++this.count] = this.used;
  }

  get(k: number): string | undefined {
    const start = this.offsets[k]!;
    if (start < 0) return undefined;
    return this.bytes.toString('utf8', start, packedStart(this.offsets[k + 1]!));
  }

  /** Values `from` to `to` (exclusive) as stored: all the bytes, and their `to - from + 1` offsets
   *  (views, not copies; valid until the next push). */
  packed(from: number, to: number): { bytes: Buffer; offsets: Int32Array } {
    return { bytes: this.bytes, offsets: this.offsets.subarray(from, to + 1) };
  }
}

const NO_LABEL = -1;

export class RecordStore {
  private capacity: number;
  private count = 0;
  private times: Float64Array;
  private amounts: Float64Array;
  private customers: Int32Array;
  private merchants: Int32Array;
  private locations: Int32Array;
  private paymentTypes: Int32Array;
  private labels: Int8Array;
  /** When each label became known (epoch ms; NaN without a label). */
  private knownAt: Float64Array;
  /** Transaction ids; undefined where the caller gave none. */
  private readonly ids = new PackedStrings();
  private readonly entities = new Interned();
  private readonly places = new Interned();

  /** `expected`: how many transactions are about to be pushed (start-up knows), so the columns
   *  are made once at their size instead of grown and copied on the way. */
  constructor(expected = 0) {
    const n = (this.capacity = Math.max(1024, Math.ceil(expected * 1.05)));
    this.times = new Float64Array(n);
    this.amounts = new Float64Array(n);
    this.customers = new Int32Array(n);
    this.merchants = new Int32Array(n);
    this.locations = new Int32Array(n);
    this.paymentTypes = new Int32Array(n);
    this.labels = new Int8Array(n);
    this.knownAt = new Float64Array(n);
  }

  get length(): number {
    return this.count;
  }

  /** Appends a transaction whose label (if any) became known at `labelKnownAt`; returns its index. */
  push(tx: Transaction, labelKnownAt = Number.NaN): number {
    if (this.count === this.capacity) this.grow();
    const k = this.count++;
    this.times[k] = tx.time;
    this.amounts[k] = tx.amount;
    this.customers[k] = this.entities.id(tx.customer_id);
    this.merchants[k] = this.entities.id(tx.merchant_id);
    this.locations[k] = this.places.id(tx.location);
    this.paymentTypes[k] = this.places.id(tx.payment_type);
    this.labels[k] = tx.label ?? NO_LABEL;
    this.knownAt[k] = tx.label === undefined ? Number.NaN : labelKnownAt;
    this.ids.push(tx.transaction_id);
    return k;
  }

  /** Time of transaction `k` (no object made). */
  time(k: number): number {
    return this.times[k]!;
  }

  /** Fields of transaction `k` one at a time (no object made). */
  amount(k: number): number {
    return this.amounts[k]!;
  }

  customerId(k: number): string {
    return this.entities.values[this.customers[k]!]!;
  }

  merchantId(k: number): string {
    return this.entities.values[this.merchants[k]!]!;
  }

  transactionId(k: number): string | undefined {
    return this.ids.get(k);
  }

  /** Label of transaction `k`, or undefined when its outcome is unknown (no object made). */
  label(k: number): 0 | 1 | undefined {
    const label = this.labels[k]!;
    return label === NO_LABEL ? undefined : (label as 0 | 1);
  }

  /** When the label of transaction `k` became known (NaN without a label). */
  labelKnownAt(k: number): number {
    return this.knownAt[k]!;
  }

  /** Sets (or, with undefined, clears) the label of transaction `k`, known from `knownAt`. */
  setLabel(k: number, label: 0 | 1 | undefined, knownAt: number): void {
    this.labels[k] = label ?? NO_LABEL;
    this.knownAt[k] = label === undefined ? Number.NaN : knownAt;
  }

  location(k: number): string {
    return this.places.values[this.locations[k]!]!;
  }

  paymentType(k: number): string {
    return this.places.values[this.paymentTypes[k]!]!;
  }

  /** Customer and merchant ids, by the index `columns` gives them with. */
  get entityNames(): readonly string[] {
    return this.entities.values;
  }

  /** Transactions `from` to `to` (exclusive) as the stored columns, for the native result lines
   *  (views, not copies; valid until the next push). */
  columns(from: number, to: number): RowColumns {
    const ids = this.ids.packed(from, to);
    return {
      amounts: this.amounts.subarray(from, to),
      labels: this.labels.subarray(from, to),
      customers: this.customers.subarray(from, to),
      merchants: this.merchants.subarray(from, to),
      idBytes: ids.bytes,
      idOffsets: ids.offsets,
    };
  }

  /** Transaction `k` as an object (undefined past the end, like `Array.prototype.at`). */
  at(k: number): Transaction | undefined {
    if (k < 0) k += this.count;
    if (k < 0 || k >= this.count) return undefined;
    const tx: Transaction = {
      time: this.times[k]!,
      amount: this.amounts[k]!,
      customer_id: this.customerId(k),
      merchant_id: this.merchantId(k),
      location: this.location(k),
      payment_type: this.paymentType(k),
    };
    const label = this.label(k);
    if (label !== undefined) {
      tx.label = label;
      const known = this.knownAt[k]!;
      if (!Number.isNaN(known)) tx.labelKnownAt = known;
    }
    const id = this.transactionId(k);
    if (id !== undefined) tx.transaction_id = id;
    return tx;
  }

  private grow(): void {
    this.capacity = grown(this.capacity);
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
    this.knownAt = widen(this.knownAt, (n) => new Float64Array(n));
  }
}
