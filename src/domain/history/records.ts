// Every transaction of a history, kept column by column: times, amounts and when labels became known
// in growable columns of four bytes a value while every value fits exactly (numbers.ts); customers,
// merchants and channels (`payment_type:location`) as numbers in packed string tables of their own;
// labels as one byte; the callers' transaction ids packed as UTF-8 in one buffer, found again by an
// index when asked to. A million transactions are a few dozen megabytes of typed arrays, which the
// collector never looks into, instead of a million objects and strings.
// Rows are materialised on demand (`at`) as ordinary `Transaction` objects, so readers see
// the transaction type they expect; `at` also makes the store usable wherever an array of
// transactions is read by index (ring detection).

import type { Transaction } from '../transaction.ts';
import { channelOf } from '../transaction.ts';
import { IndexColumn, NumberColumn, resized } from './numbers.ts';
import { grown, PackedStrings, StringIndex, StringTable } from './strings.ts';

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

const NO_LABEL = -1;
/** Times are kept as offsets from a week before the first time stored: room for late arrivals. */
const TIME_LEAD_MS = 7 * 86_400_000;

/** Strings of a column of rows as UTF-8 bytes end to end: value i is bytes [ends[i − 1], ends[i])
 *  (from 0 for the first). */
export interface PackedColumn {
  bytes: Uint8Array;
  ends: Int32Array;
}

/** Transactions as columns, as a load reads them from the database: labels 0, 1 or -1 when unknown
 *  (and then `knownAt` NaN). */
export interface TransactionColumns {
  count: number;
  times: Float64Array;
  amounts: Float64Array;
  labels: Int8Array;
  knownAt: Float64Array;
  ids: PackedColumn;
  customers: PackedColumn;
  merchants: PackedColumn;
  locations: PackedColumn;
  paymentTypes: PackedColumn;
  /** Each row's key fields' values (`name=value`), null for none; absent when no row has any. */
  keys?: ReadonlyArray<readonly string[] | null> | undefined;
}

/** Customers' first uses as columns, as a load reads them: kind `m` (merchant), `h` (channel,
 *  `payment_type:location`) or `l` (location) as one ASCII byte each. */
export interface UseColumns {
  count: number;
  customers: PackedColumn;
  kinds: Uint8Array;
  keys: PackedColumn;
  firsts: Float64Array;
}

/** Where value i of a packed column starts (it ends at `ends[i]`). */
export function startOf(c: PackedColumn, i: number): number {
  return i === 0 ? 0 : c.ends[i - 1]!;
}

/** Channels by number, with the location and payment type each is made of (few: a small table).
 *  A channel named only by its key (a loaded first use) learns its parts from its first record. */
class Channels {
  private readonly places: StringTable;

  readonly keys = new StringTable();
  private location = new Int32Array(64).fill(-1);
  private paymentType = new Int32Array(64).fill(-1);
  /** Channel by its payment type's and location's numbers among the places. */
  private readonly byParts = new Map<number, number>();

  constructor(places: StringTable) {
    this.places = places;
    this.keys.names();
  }

  /** The channel of a payment type and a location. */
  id(paymentType: string, location: string): number {
    const c = this.number(channelOf({ payment_type: paymentType, location }));
    if (this.location[c] === -1) {
      this.location[c] = this.places.id(location);
      this.paymentType[c] = this.places.id(paymentType);
    }
    return c;
  }

  /** The channel of a payment type and a location given by their numbers among the places. */
  ofParts(paymentType: number, location: number): number {
    const pair = paymentType * 0x100000 + location;
    let c = this.byParts.get(pair);
    if (c === undefined) {
      c = this.id(this.places.name(paymentType), this.places.name(location));
      this.byParts.set(pair, c);
    }
    return c;
  }

  /** The channel with this key (`payment_type:location`), added if new. */
  number(key: string): number {
    return this.sized(this.keys.id(key));
  }

  /** `number` of a key given as UTF-8 bytes [start, end) of `source`. */
  numberBytes(source: Uint8Array, start: number, end: number): number {
    return this.sized(this.keys.idBytes(source, start, end));
  }

  /** Channel `c`, with room for its parts. */
  private sized(c: number): number {
    if (c >= this.location.length) {
      const widen = (a: Int32Array) => {
        const b = new Int32Array(grown(a.length)).fill(-1);
        b.set(a);
        return b;
      };
      this.location = widen(this.location);
      this.paymentType = widen(this.paymentType);
    }
    return c;
  }

  locationOf(c: number): number {
    return this.location[c]!;
  }

  paymentTypeOf(c: number): number {
    return this.paymentType[c]!;
  }
}

export class RecordStore {
  private capacity: number;
  private count = 0;
  private readonly times: NumberColumn;
  private readonly amounts: NumberColumn;
  private readonly customers: IndexColumn;
  private readonly merchants: IndexColumn;
  private readonly channelColumn: IndexColumn;
  private labels: Int8Array;
  /** When each label became known (epoch ms; NaN without a label). */
  private readonly knownAt: NumberColumn;
  /** Transaction ids; undefined where the caller gave none. */
  private readonly ids: PackedStrings;
  /** Finds a record by its id, once `indexIds` was called. */
  private idIndex: StringIndex | undefined;
  /** Customer ids and merchant ids, each numbered on its own: everything per merchant (its series,
   *  labels, customers) is as many entries as there are merchants, not as there are entities. */
  readonly customerIds: StringTable;
  readonly merchantIds: StringTable;
  /** Locations and payment types (few: kept as strings too, read back without decoding). */
  readonly places = new StringTable();
  readonly channels: Channels;

  /** `expected`: how many transactions are about to be pushed (start-up knows), so the columns
   *  are made once at their size instead of grown and copied on the way. */
  constructor(expected = 0) {
    const n = (this.capacity = Math.max(1024, Math.ceil(expected * 1.05)));
    this.times = new NumberColumn(n, 1, { below: TIME_LEAD_MS });
    this.amounts = new NumberColumn(n, 100, 0);
    this.customers = new IndexColumn(n);
    this.merchants = new IndexColumn(n);
    this.channelColumn = new IndexColumn(n);
    this.labels = new Int8Array(n);
    this.knownAt = new NumberColumn(n, 1, this.times);
    this.ids = new PackedStrings(expected);
    this.customerIds = new StringTable(expected >> 4);
    this.merchantIds = new StringTable(expected >> 8);
    this.places.names();
    this.channels = new Channels(this.places);
  }

  get length(): number {
    return this.count;
  }

  /** From now on, `find` finds a record by its transaction id (the live history's ids are unique
   *  within their organization; of equal ids the first pushed is found). */
  indexIds(): this {
    if (!this.idIndex) {
      this.idIndex = new StringIndex(this.ids, this.capacity);
      for (let k = 0; k < this.count; k++) if (!this.ids.missing(k)) this.idIndex.add(k);
    }
    return this;
  }

  /** Whether `find` finds records by id. */
  get indexed(): boolean {
    return this.idIndex !== undefined;
  }

  /** An entity's number by its role and name (a customer or merchant id, or a channel key), or -1. */
  numberOf(role: 'customer' | 'merchant' | 'channel', key: string): number {
    return role === 'channel' ? this.channels.keys.find(key) : role === 'customer' ? this.customerIds.find(key) : this.merchantIds.find(key);
  }

  /** The numbers of a transaction's customer, merchant and channel, numbered now if new. */
  numbersOf(tx: Pick<Transaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>): [number, number, number] {
    return [this.customerIds.id(tx.customer_id), this.merchantIds.id(tx.merchant_id), this.channels.id(tx.payment_type, tx.location)];
  }

  /** The record with this transaction id, or -1 (needs `indexIds`). */
  find(transactionId: string): number {
    if (!this.idIndex) throw new Error('find() needs indexIds()');
    return this.idIndex.find(transactionId);
  }

  /** Appends a transaction whose label (if any) became known at `labelKnownAt`; returns its index. */
  push(tx: Transaction, labelKnownAt = Number.NaN): number {
    if (this.count === this.capacity) this.grow();
    const k = this.count++;
    this.times.set(k, tx.time);
    this.amounts.set(k, tx.amount);
    this.customers.set(k, this.customerIds.id(tx.customer_id));
    this.merchants.set(k, this.merchantIds.id(tx.merchant_id));
    this.channelColumn.set(k, this.channels.id(tx.payment_type, tx.location));
    this.labels[k] = tx.label ?? NO_LABEL;
    this.knownAt.set(k, tx.label === undefined ? Number.NaN : labelKnownAt);
    this.ids.push(tx.transaction_id);
    if (this.idIndex && tx.transaction_id !== undefined) this.idIndex.add(k);
    return k;
  }

  /** Appends row `i` of `c`; returns its index. */
  pushRow(c: TransactionColumns, i: number): number {
    if (this.count === this.capacity) this.grow();
    const k = this.count++;
    // The first row of a load: room for the ids of as many rows as were reserved, at this page's
    // average length, so that the buffer is not copied as it grows (tens of megabytes at millions).
    if (k === 0 && c.count > 0) this.ids.reserveBytes(Math.ceil(((this.capacity * c.ids.ends[c.count - 1]!) / c.count) * 1.03));
    this.times.set(k, c.times[i]!);
    this.amounts.set(k, c.amounts[i]!);
    this.customers.set(k, this.customerIds.idBytes(c.customers.bytes, startOf(c.customers, i), c.customers.ends[i]!));
    this.merchants.set(k, this.merchantIds.idBytes(c.merchants.bytes, startOf(c.merchants, i), c.merchants.ends[i]!));
    const paymentType = this.places.idBytes(c.paymentTypes.bytes, startOf(c.paymentTypes, i), c.paymentTypes.ends[i]!);
    this.channelColumn.set(k, this.channels.ofParts(paymentType, this.places.idBytes(c.locations.bytes, startOf(c.locations, i), c.locations.ends[i]!)));
    const label = c.labels[i]!;
    this.labels[k] = label;
    this.knownAt.set(k, label === NO_LABEL ? Number.NaN : c.knownAt[i]!);
    this.ids.pushBytes(c.ids.bytes, startOf(c.ids, i), c.ids.ends[i]!);
    this.idIndex?.add(k);
    return k;
  }

  /** Time of transaction `k` (no object made). */
  time(k: number): number {
    return this.times.get(k);
  }

  /** Fields of transaction `k` one at a time (no object made). */
  amount(k: number): number {
    return this.amounts.get(k);
  }

  /** Customer of transaction `k`, as its number among `customerIds` (a merchant's: `merchantIds`). */
  customer(k: number): number {
    return this.customers.get(k);
  }

  merchant(k: number): number {
    return this.merchants.get(k);
  }

  /** Channel of transaction `k`, as its number among `channels`. */
  channel(k: number): number {
    return this.channelColumn.get(k);
  }

  customerId(k: number): string {
    return this.customerIds.name(this.customers.get(k));
  }

  merchantId(k: number): string {
    return this.merchantIds.name(this.merchants.get(k));
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
    return this.knownAt.get(k);
  }

  /** Sets (or, with undefined, clears) the label of transaction `k`, known from `knownAt`. */
  setLabel(k: number, label: 0 | 1 | undefined, knownAt: number): void {
    this.labels[k] = label ?? NO_LABEL;
    this.knownAt.set(k, label === undefined ? Number.NaN : knownAt);
  }

  location(k: number): string {
    return this.places.name(this.channels.locationOf(this.channelColumn.get(k)));
  }

  paymentType(k: number): string {
    return this.places.name(this.channels.paymentTypeOf(this.channelColumn.get(k)));
  }

  /** Customer ids then merchant ids, by the index `columns` gives them with (read once every
   *  transaction was pushed: a merchant's index is after every customer's). */
  get entityNames(): readonly string[] {
    return [...this.customerIds.names(), ...this.merchantIds.names()];
  }

  /** Every customer and merchant id as strings, kept from then on (for a reader of every row). */
  materialiseNames(): void {
    this.customerIds.names();
    this.merchantIds.names();
  }

  /** Transactions `from` to `to` (exclusive) as the stored columns, for the native result lines
   *  (views, not copies, valid until the next push; merchants as indices into `entityNames`). */
  columns(from: number, to: number): RowColumns {
    const ids = this.ids.packed(from, to);
    const customers = this.customerIds.size;
    return {
      amounts: this.amounts.float64(from, to),
      labels: this.labels.subarray(from, to),
      customers: this.customers.int32(from, to),
      merchants: this.merchants.int32(from, to).map((m) => m + customers),
      idBytes: ids.bytes,
      idOffsets: ids.offsets,
    };
  }

  /** Transaction `k` as an object (undefined past the end, like `Array.prototype.at`). */
  at(k: number): Transaction | undefined {
    if (k < 0) k += this.count;
    if (k < 0 || k >= this.count) return undefined;
    const tx: Transaction = {
      time: this.times.get(k),
      amount: this.amounts.get(k),
      customer_id: this.customerId(k),
      merchant_id: this.merchantId(k),
      location: this.location(k),
      payment_type: this.paymentType(k),
    };
    const label = this.label(k);
    if (label !== undefined) {
      tx.label = label;
      const known = this.knownAt.get(k);
      if (!Number.isNaN(known)) tx.labelKnownAt = known;
    }
    const id = this.transactionId(k);
    if (id !== undefined) tx.transaction_id = id;
    return tx;
  }

  /** Bytes held by the columns, the ids and the string tables. */
  get byteLength(): number {
    return (
      this.times.byteLength +
      this.amounts.byteLength +
      this.knownAt.byteLength +
      this.customers.byteLength +
      this.merchants.byteLength +
      this.channelColumn.byteLength +
      this.capacity +
      this.ids.byteLength +
      (this.idIndex?.byteLength ?? 0) +
      this.customerIds.byteLength +
      this.merchantIds.byteLength
    );
  }

  /** Shrinks the columns to the records held and a sixteenth more (after a load), when they hold
   *  more than an eighth unused: a load reserves what it needs, and copying its columns to give
   *  back a few percent would stall the process for tens of milliseconds. */
  trim(): void {
    if (this.capacity > 1024 && this.capacity > this.count + (this.count >> 3)) this.resize(Math.max(1024, this.count + (this.count >> 4)));
    this.ids.trim();
  }

  private grow(): void {
    this.resize(grown(this.capacity));
  }

  private resize(capacity: number): void {
    this.capacity = capacity;
    this.times.resize(capacity, this.count);
    this.amounts.resize(capacity, this.count);
    this.customers.resize(capacity, this.count);
    this.merchants.resize(capacity, this.count);
    this.channelColumn.resize(capacity, this.count);
    this.labels = resized(this.labels, capacity, this.count);
    this.knownAt.resize(capacity, this.count);
  }
}
