// The transaction history that point-in-time features read: per customer, merchant and channel,
// the times and amounts of earlier transactions in time order; what each customer has used; fraud
// labels as they become known; and what the graph features count of the customer–merchant graph.
// Everything is kept in columns: the transactions in a record store (records.ts), and each entity's
// entries as lists of transaction numbers in shared typed arrays (series.ts, label-series.ts,
// first-use.ts, customer-merchant-graph.ts, over lists.ts), so an organization's history is a
// few dozen typed arrays however many transactions and entities it holds, and a full collection
// costs the same with a million transactions held as with none. Labels are filed by when they
// became known (known-labels.ts); a load from a floor fills the parts as floor-load.ts says.
// Point in time: every query counts only entries strictly before its cut-off, so transactions
// sharing a timestamp never see each other and batch and single scoring agree exactly; a label
// counts only from when it became known. Processes apply transactions in commit order, which can be
// a little out of time order, so a history with records (`withRecords`) places a late arrival as if
// it had come in time order; one without refuses it.

import { channelOf, type Transaction } from '../transaction.ts';
import { Neighbours } from './customer-merchant-graph.ts';
import { USE_CHANNEL, USE_LOCATION, USE_MERCHANT, Uses, type UseKind } from './first-use.ts';
import { HorizonError, WINDOW_HORIZON_MS, type EntityTotals } from './horizon.ts';
import { finishingLoad, loadUse, loadUseColumns, type LoadTarget } from './floor-load.ts';
import { KnownLabels } from './known-labels.ts';
import { LabelSeries } from './label-series.ts';
import { RecordStore, type TransactionColumns, type UseColumns } from './records.ts';
import { Series, SeriesStore } from './series.ts';
import { KeyFields, type KeyHistory } from './key-fields.ts';

export const DEFAULT_LABEL_DELAY_MS = 7 * 86_400_000;

export type Role = 'customer' | 'merchant' | 'channel';

const USE_KINDS = { merchant: USE_MERCHANT, channel: USE_CHANNEL, location: USE_LOCATION } as const;
const NO_KEYS: readonly number[] = [];

/** Rows a step of `placing` files. */
const PLACE_STEP = 4096;

/** How many of records [0, n) each of `entities` numbers has (`of`: a record's number, or -1 to
 *  leave it out). */
function countsOf(n: number, entities: number, of: (k: number) => number): Int32Array {
  const counts = new Int32Array(entities);
  for (let k = 0; k < n; k++) {
    const e = of(k);
    if (e >= 0) counts[e]!++;
  }
  return counts;
}

export class History {
  readonly labelDelay: number;

  private records = new RecordStore();
  private customers: SeriesStore;
  private merchants: SeriesStore;
  private channels: SeriesStore;
  /** The organization's key fields' values (key-fields.ts). */
  private keys: KeyFields;
  /** Labels by when they became known (known-labels.ts). */
  private readonly labels: KnownLabels;
  /** A loaded history holds every transaction from `floor` on and every label known from it on;
   *  what came before is in totals (`loadFrom`). */
  private floor = -Infinity;
  private readonly uses = new Uses();
  private readonly neighbours: Neighbours;
  private latest = -Infinity;
  size = 0;
  /** A load's rows are kept in the records as they come and filed everywhere else once they are
   *  all in (`placing`): knowing how many entries each customer, merchant and channel gets, their
   *  lists are laid out once at their size, instead of growing (and leaving room behind) as rows
   *  come. Records from `placed` on are not filed yet. */
  private deferring = false;
  private placed = 0;
  /** Records are read back (`recent`, outcomes, late arrivals): asked for before the first add. */
  private keepRecords = false;
  private everyRecord = false;

  constructor(labelDelay = DEFAULT_LABEL_DELAY_MS) {
    this.labelDelay = labelDelay;
    this.customers = new SeriesStore(this.records, true);
    this.merchants = new SeriesStore(this.records, false);
    this.channels = new SeriesStore(this.records, false);
    this.keys = new KeyFields(this.records);
    this.labels = new KnownLabels(this.records);
    this.neighbours = new Neighbours(this.uses);
  }

  /** Starts over on another (empty) record store, made for the transactions about to be added. */
  private rebuild(records: RecordStore): void {
    this.records = records;
    this.customers = new SeriesStore(records, true);
    this.merchants = new SeriesStore(records, false);
    this.channels = new SeriesStore(records, false);
    this.keys = new KeyFields(records);
    this.labels.rebuild(records);
  }

  /** Keep every transaction for `recent()` and late arrivals (the service does; training does not
   *  need it); `expected`: how many are about to be added, when known. */
  withRecords(expected = 0): this {
    this.keepRecords = true;
    if (this.size === 0) {
      this.everyRecord = true;
      if (expected > 0) this.rebuild(new RecordStore(expected));
    }
    return this;
  }

  /** Makes room for `expected` transactions before the first is added (a load knows how many). */
  reserve(expected: number): void {
    if (this.size !== 0 || this.records.length !== 0) return;
    const indexed = this.records.indexed;
    this.rebuild(new RecordStore(expected));
    if (indexed) this.records.indexIds();
  }

  /** Time of the newest transaction added (or -Infinity). */
  get newest(): number {
    return this.latest;
  }

  private store(role: Role): SeriesStore {
    return role === 'customer' ? this.customers : role === 'merchant' ? this.merchants : this.channels;
  }

  /** Adds a transaction; returns its index among the kept records (the order added), or -1 when
   *  records are not kept. One older than the newest (a late arrival) is placed as if it had come
   *  in time order when every transaction is kept (`withRecords` before the first add; see
   *  `addLate`), and refused otherwise; one older than a series' horizon throws a HorizonError.
   *  A refused transaction leaves the history unchanged. */
  add(tx: Transaction): number {
    if (this.deferring) {
      this.placeLoaded();
      this.deferring = false;
    }
    if (tx.time < this.latest) return this.addLate(tx);
    this.latest = tx.time;
    const labelled = tx.label === 0 || tx.label === 1;
    const k = this.records.push(tx, labelled ? (tx.labelKnownAt ?? tx.time + this.labelDelay) : Number.NaN);
    this.place(k, tx.keys);
    return this.keepRecords ? k : -1;
  }

  /** Adds rows `from` to `to` (exclusive) of `c` (a load's page, in time order) as `add` would, reading the strings as
   *  bytes: no object or string is made per row. */
  addColumns(c: TransactionColumns, from = 0, to = c.count): void {
    // Key fields' values are not kept by the records: rows with them are filed as they come.
    if (c.keys) this.placeLoaded();
    const defer = this.deferring && !c.keys;
    for (let i = from; i < to; i++) {
      const time = c.times[i]!;
      if (time < this.latest) throw new Error('addColumns() needs its rows in time order, after the newest added');
      this.latest = time;
      const k = this.records.pushRow(c, i);
      if (!defer) {
        this.place(k, c.keys?.[i]);
        this.placed = k + 1;
      }
    }
  }

  /** Files the rows a load has added (`addColumns`) and not filed yet, in steps of a few
   *  thousand: the first time, with each customer's, merchant's and channel's lists laid out at
   *  the size their rows need. */
  *placing(): Generator<void> {
    const r = this.records;
    const n = r.length;
    if (!this.deferring || this.placed === n) return;
    if (this.size === 0) {
      // The first uses are all loaded: packed now, they hold no room the rows' lists could use.
      yield* this.uses.compacting();
      this.customers.layOut(countsOf(n, r.customerIds.size, (k) => r.customer(k)));
      this.merchants.layOut(countsOf(n, r.merchantIds.size, (k) => r.merchant(k)));
      this.channels.layOut(countsOf(n, r.channels.keys.size, (k) => r.channel(k)));
      const labelled = (k: number) => r.label(k) !== undefined;
      this.labels.layOut(
        countsOf(n, r.merchantIds.size, (k) => (labelled(k) ? r.merchant(k) : -1)),
        countsOf(n, r.channels.keys.size, (k) => (labelled(k) ? r.channel(k) : -1)),
      );
      yield;
    }
    while (this.placed < n) {
      const to = Math.min(n, this.placed + PLACE_STEP);
      this.placeRange(this.placed, to);
      this.placed = to;
      yield;
    }
  }

  private placeRange(from: number, to: number): void {
    for (let k = from; k < to; k++) this.place(k, undefined);
  }

  /** `placing` at once. */
  private placeLoaded(): void {
    for (const _ of this.placing());
  }

  /** Files record `k`, the newest, everywhere an in-order transaction goes. */
  private place(k: number, keys: readonly string[] | null | undefined): void {
    const r = this.records;
    const time = r.time(k);
    const c = r.customer(k);
    const m = r.merchant(k);
    const ch = r.channel(k);
    const keepFrom = time - WINDOW_HORIZON_MS;
    this.customers.add(c, k, keepFrom);
    this.merchants.add(m, k, keepFrom);
    this.channels.add(ch, k, keepFrom);
    this.keys.add(k, keys ? this.keys.numbers(keys) : NO_KEYS, c, this.customers, keepFrom);
    const label = r.label(k);
    if (label !== undefined) this.labels.file(c, m, ch, label, r.labelKnownAt(k), k);
    // The pair's first payment exists exactly when the customer has used the merchant before: the
    // neighbour counts are only touched for a new pair (or a fraud), not on every payment.
    const newPair = this.uses.note(c, m, ch, r.channels.locationOf(ch), time);
    if (newPair) this.neighbours.newPair(c, m, time);
    if (label === 1) this.refreshCompromised(c);
    this.size++;
  }

  /**
   * `add` for a transaction older than the newest. Each structure takes it where time order puts
   * it: the series after the entries at or before its time (the records give the series the
   * amounts after it, so its running sums come out as in time order), the customer's first uses
   * and the pair's first payment (and so the merchant's customer and compromised-neighbour times)
   * if it is earlier. Labels are filed by when they became known, which is order-free already.
   * Costs O(entries later than it) in each structure, plus what an in-order fraud costs
   * (refreshCompromised walks the customer's merchants).
   */
  private addLate(tx: Transaction): number {
    const t = tx.time;
    // Refused before anything changes, so a caller can keep the history or load it afresh.
    if (!this.everyRecord) {
      throw new Error(
        'history must be added in time order: a late transaction is placed only by a history that keeps every transaction (withRecords() before the first add)',
      );
    }
    const r = this.records;
    if (
      !this.customers.accepts(r.customerIds.find(tx.customer_id), t) ||
      !this.merchants.accepts(r.merchantIds.find(tx.merchant_id), t) ||
      !this.channels.accepts(r.channels.keys.find(channelOf(tx)), t) ||
      !this.keys.accepts(tx.keys, t)
    ) {
      throw new HorizonError(t, this.latest);
    }
    const labelled = tx.label === 0 || tx.label === 1;
    const known = labelled ? (tx.labelKnownAt ?? t + this.labelDelay) : Number.NaN;
    const k = r.push(tx, known);
    this.size++;
    const c = r.customer(k);
    const m = r.merchant(k);
    const ch = r.channel(k);
    const keepFrom = this.latest - WINDOW_HORIZON_MS;
    this.customers.insert(c, k, keepFrom, this.latest);
    this.merchants.insert(m, k, keepFrom, this.latest);
    this.channels.insert(ch, k, keepFrom, this.latest);
    this.keys.insert(k, tx.keys ? this.keys.numbers(tx.keys) : NO_KEYS, c, this.customers, keepFrom, this.latest);
    if (labelled) this.labels.file(c, m, ch, tx.label!, known, k);
    const first = this.uses.keepEarliest(c, USE_MERCHANT, m, t);
    this.uses.keepEarliest(c, USE_CHANNEL, ch, t);
    this.uses.keepEarliest(c, USE_LOCATION, r.channels.locationOf(ch), t);
    if (!Number.isNaN(first) && first <= t && tx.label !== 1) return k;
    this.neighbours.latePair(c, m, t, first);
    if (tx.label === 1) this.refreshCompromised(c);
    return k;
  }

  /** Brings the graph's compromised time of customer `c` in step with its earliest known fraud. */
  private refreshCompromised(c: number): void {
    this.neighbours.follow(c, this.labels.earliestFraud(c));
  }

  /**
   * Sets the outcome of kept record `k` (needs `withRecords()`): `label` known from `knownAt` on,
   * or no outcome (undefined). The old label, if any, is withdrawn: queries at or after `knownAt`
   * see the new one, as learned then. Live queries never go back in time, so that is all they can
   * tell.
   */
  setOutcome(k: number, label: 0 | 1 | undefined, knownAt: number): void {
    const r = this.records;
    const c = r.customer(k);
    const m = r.merchant(k);
    const ch = r.channel(k);
    const old = r.label(k);
    if (old !== undefined) this.labels.unfile(c, m, ch, old, r.labelKnownAt(k), k, this.latest);
    // The record carries the label its entries read, so it changes between the two.
    r.setLabel(k, label, knownAt);
    if (label !== undefined) this.labels.file(c, m, ch, label, knownAt, k);
    if (old === 1 || label === 1) this.refreshCompromised(c);
  }

  /**
   * Sets the outcome of a transaction this history holds only in its totals (one before a loaded
   * history's floor): its old label (`from`, known at `fromKnown`) is withdrawn and the new one
   * filed, as `setOutcome` does for a kept record. Throws a HorizonError, changing nothing, when
   * the totals cannot follow (see KnownLabels.unfile).
   */
  relabel(
    tx: Pick<Transaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>,
    from: 0 | 1 | undefined,
    fromKnown: number,
    label: 0 | 1,
    knownAt: number,
  ): void {
    const [c, m, ch] = this.records.numbersOf(tx);
    if (from !== undefined) this.labels.unfile(c, m, ch, from, fromKnown, -1, this.latest);
    this.labels.file(c, m, ch, label, knownAt, -1);
    if (from === 1 || label === 1) this.refreshCompromised(c);
  }

  // Loading from a floor (floor-load.ts, which says in what order): the steps.

  /** Starts a load: every transaction from `floor` on and every label known from it on follow. */
  loadFrom(floor: number): this {
    if (this.size !== 0) throw new Error('loadFrom() on a history that has transactions');
    this.floor = floor;
    this.deferring = this.records.length === 0;
    this.labels.beginLoad(floor);
    return this;
  }

  /** What a load fills. */
  private loadTarget(): LoadTarget {
    return {
      records: this.records,
      uses: this.uses,
      neighbours: this.neighbours,
      labels: this.labels,
      series: (kind) => (kind === 'field' ? this.keys.series : this.store(kind)),
      keyIds: this.keys.ids,
      floor: this.floor,
      refreshCompromised: (c) => this.refreshCompromised(c),
    };
  }

  /** When a customer first used a merchant, channel or location (floor-load.ts). */
  loadUse(customerId: string, kind: 'merchant' | 'channel' | 'location', key: string, first: number): void {
    if (this.size !== 0) throw new Error('loadUse() after transactions were added');
    loadUse(this.loadTarget(), customerId, kind, key, first);
  }

  /** `loadUse` for rows `from` to `to` (exclusive) of a load's page of first uses, read as bytes. */
  loadUseColumns(u: UseColumns, from = 0, to = u.count): void {
    if (this.size !== 0) throw new Error('loadUse() after transactions were added');
    loadUseColumns(this.loadTarget(), u, from, to);
  }

  /** A label known from the floor on, of a transaction before it. */
  loadLabel(tx: Pick<Transaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>, label: 0 | 1, known: number): void {
    if (this.deferring) this.placeLoaded();
    const [c, m, ch] = this.records.numbersOf(tx);
    this.labels.file(c, m, ch, label, known, -1);
    if (label === 1) this.refreshCompromised(c);
  }

  /** Ends a load with each entity's all-time totals. */
  finishLoad(totals: Iterable<EntityTotals>): void {
    for (const _ of this.finishing(totals));
  }

  /** `finishLoad` in steps of a few milliseconds each (a caller can let other work run between
   *  them): the labels filed, the totals set, the parts packed. */
  *finishing(totals: Iterable<EntityTotals>): Generator<void> {
    yield* this.placing();
    this.deferring = false;
    yield* finishingLoad(this.loadTarget(), totals);
    yield;
    yield* this.compacting();
  }

  /** Packs every part into columns the size of what it holds (a load or a bulk build adds entries
   *  as they come, which leaves room behind). */
  compact(): void {
    for (const _ of this.compacting());
  }

  private *compacting(): Generator<void> {
    this.records.trim();
    yield;
    for (const part of [this.customers, this.merchants, this.channels]) yield* part.compacting();
    yield* this.keys.compacting();
    yield* this.labels.compacting();
    yield* this.uses.compacting();
    yield* this.neighbours.compacting();
  }

  /** The merchant's distinct customers whose first payment there is strictly before `t`, and how
   *  many of those were known compromised strictly before `t`, excluding `customer` itself. */
  merchantNeighbours(merchantId: string, customerId: string, t: number): { customers: number; compromised: number } {
    return this.neighbours.count(this.records.merchantIds.find(merchantId), this.records.customerIds.find(customerId), t);
  }

  /** A key field's value's history strictly before `t` (`entry`: `name=value`, fields.ts keyEntry). */
  keyHistory(entry: string, t: number): KeyHistory {
    return this.keys.query(entry, t, this.customers);
  }

  /** Earlier transactions (strictly before `time`) of a transaction's customer, merchant and channel. */
  priors(tx: Transaction, time = tx.time): { customer: number; merchant: number; channel: number } {
    const r = this.records;
    return {
      customer: this.customers.countBefore(r.customerIds.find(tx.customer_id), time),
      merchant: this.merchants.countBefore(r.merchantIds.find(tx.merchant_id), time),
      channel: this.channels.countBefore(r.channels.keys.find(channelOf(tx)), time),
    };
  }

  /** Up to `n` most recent held transactions of an entity strictly older than `before`, newest
   *  first, as indices into `transactions` (needs `withRecords()`). */
  recentIndices(role: Role, key: string, before: number, n: number): number[] {
    const s = this.store(role);
    const e = this.records.numberOf(role, key);
    const out: number[] = [];
    for (let i = s.held(e) - 1; i >= 0 && out.length < n; i--) {
      const k = s.record(e, i);
      if (this.records.time(k) < before) out.push(k);
    }
    return out;
  }

  /** How many more of an entity's earlier transactions than it holds would make `n` (a loaded
   *  history holds none from before its floor, nor any it dropped past its horizon since; evidence
   *  reads those from the database, before `heldSince`). */
  recordsMissing(role: Role, key: string, n: number): number {
    const s = this.store(role);
    const e = this.records.numberOf(role, key);
    const held = s.held(e);
    if (held >= n) return 0;
    return Math.max(0, Math.min(n, s.all(e)) - held);
  }

  /** Before this time a loaded history holds totals only (-Infinity: it holds everything). */
  get heldFrom(): number {
    return this.floor;
  }

  /** Before this time the history holds none of the entity's transactions: the time of the oldest
   *  it holds (every one after it is held, including any it dropped past the horizon since a
   *  load), or its floor when it holds none. */
  heldSince(role: Role, key: string): number {
    const s = this.store(role);
    const e = this.records.numberOf(role, key);
    return s.held(e) > 0 ? this.records.time(s.record(e, 0)) : this.floor;
  }

  /** The same transactions as objects. */
  recent(role: Role, key: string, before: number, n: number): Transaction[] {
    return this.recentIndices(role, key, before, n).map((k) => this.records.at(k)!);
  }

  /** Every transaction added, in the order added (time order, except late arrivals). */
  get transactions(): RecordStore {
    return this.records;
  }

  /** The customer's frauds whose labels were known strictly before `t`. */
  customerKnownFrauds(id: string, t: number): number {
    const c = this.records.customerIds.find(id);
    return c < 0 ? 0 : this.labels.customerFraudsBefore(c, t);
  }

  /** Labels of a merchant's or channel's transactions, filed by when they became known:
   *  `window(-Infinity, t)` gives (labels known before t, frauds among them). */
  merchantLabelSeries(id: string): LabelSeries {
    return new LabelSeries(this.labels.merchants, this.records.merchantIds.find(id));
  }

  channelLabelSeries(key: string): LabelSeries {
    return new LabelSeries(this.labels.channels, this.records.channels.keys.find(key));
  }

  customer(id: string): Series {
    return new Series(this.customers, this.records.customerIds.find(id));
  }

  merchant(id: string): Series {
    return new Series(this.merchants, this.records.merchantIds.find(id));
  }

  channel(key: string): Series {
    return new Series(this.channels, this.records.channels.keys.find(key));
  }

  /** Whether the customer first used this merchant, channel (`payment_type:location`) or location
   *  strictly before `t`. */
  usedBefore(customerId: string, kind: 'merchant' | 'channel' | 'location', key: string, t: number): boolean {
    const r = this.records;
    const k = kind === 'merchant' ? r.merchantIds.find(key) : kind === 'channel' ? r.channels.keys.find(key) : r.places.find(key);
    return this.uses.usedBefore(this.records.customerIds.find(customerId), USE_KINDS[kind], k, t);
  }

  /** The customer's distinct merchants (channels, locations) first used strictly before `t`. */
  distinctBefore(customerId: string, kind: 'merchant' | 'channel' | 'location', t: number): number {
    return this.uses.distinctBefore(this.records.customerIds.find(customerId), USE_KINDS[kind], t);
  }

  /** The customer's first uses by name (for inspection and tests; features ask `usedBefore`). */
  customerUsage(id: string): { merchants: Map<string, number>; channels: Map<string, number>; locations: Map<string, number> } {
    const out = { merchants: new Map<string, number>(), channels: new Map<string, number>(), locations: new Map<string, number>() };
    const r = this.records;
    const c = this.records.customerIds.find(id);
    if (c < 0) return out;
    this.uses.forEach(c, (kind: UseKind, key, first) => {
      if (kind === USE_MERCHANT) out.merchants.set(r.merchantIds.name(key), first);
      else if (kind === USE_CHANNEL) out.channels.set(r.channels.keys.name(key), first);
      else out.locations.set(r.places.name(key), first);
    });
    return out;
  }

  /** When the customer counts as compromised in the graph (its earliest known fraud, once it has
   *  paid a merchant), or undefined. */
  customerCompromisedAt(id: string): number | undefined {
    return this.neighbours.compromised(this.records.customerIds.find(id));
  }

  /** Every customer–merchant pair with its first payment. */
  forEachPair(each: (customerId: string, merchantId: string, first: number) => void): void {
    const r = this.records;
    for (let c = 0; c < this.uses.customers; c++) {
      this.uses.forEach(c, (kind, m, first) => {
        if (kind === USE_MERCHANT) each(r.customerIds.name(c), r.merchantIds.name(m), first);
      });
    }
  }

  /** Bytes held in typed arrays, by part (for the benchmarks and the sizing figures). */
  get byteLength(): Record<string, number> {
    return {
      records: this.records.byteLength,
      series: this.customers.byteLength + this.merchants.byteLength + this.channels.byteLength,
      keys: this.keys.byteLength,
      labels: this.labels.byteLength,
      uses: this.uses.byteLength + this.neighbours.byteLength,
    };
  }
}
