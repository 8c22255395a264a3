// The history as it was before its columnar form: kept, unchanged, as the reference the tests hold
// the columnar history to (test/domain/history-reference.test.ts). Not used by the service.
// The transaction history that point-in-time features read: per customer, merchant and channel,
// the times and amounts of earlier transactions in time order; what each customer has used; fraud
// labels as they become known; and the customer–merchant graph (graphology). The structures it is
// built of are beside it, one to a file (series.ts, label-series.ts, first-use.ts,
// customer-merchant-graph.ts, records.ts, under them horizon.ts and sorted.ts).
// Point in time: every query counts only entries strictly before its cut-off, so transactions
// sharing a timestamp never see each other and batch and single scoring agree exactly. A label
// counts only from when it became known (`time + labelDelay` for a labelled dataset, the report's
// time for a live outcome). Processes apply transactions in commit order, which can be a little out
// of time order, so a history with records (`withRecords`) places a late arrival as if it had come
// in time order; one without refuses it. The live service loads a history from a floor, the rest
// as totals (`loadFrom` … `finishLoad`), so loading costs the same however much is stored.

import { UndirectedGraph } from 'graphology';
import { channelOf, type Transaction } from '../../../src/domain/transaction.ts';
import { countNeighbours, customerNode, loadPair, moveCompromised, notePair, notePairLate } from './customer-merchant-graph.ts';
import { distinctBefore, keepEarliest, usedBefore, Usage } from './first-use.ts';
import { HorizonError, WINDOW_HORIZON_MS, type EntityTotals } from '../../../src/domain/history/horizon.ts';
import { LabelSeries } from './label-series.ts';
import { RecordStore } from './records.ts';
import { Series } from './series.ts';
import { append, countBelow, insertSorted, removeSorted } from './sorted.ts';

export const DEFAULT_LABEL_DELAY_MS = 7 * 86_400_000;

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

export class History {
  readonly labelDelay: number;

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

  constructor(labelDelay = DEFAULT_LABEL_DELAY_MS) {
    this.labelDelay = labelDelay;
  }

  /** Adds a transaction; returns its index among the kept records (the order added), or -1 when
   *  records are not kept. One older than the newest (a late arrival) is placed as if it had come
   *  in time order when every transaction is kept (`withRecords` before the first add; see
   *  `addLate`), and refused otherwise; one older than a series' horizon throws a HorizonError.
   *  A refused transaction leaves the history unchanged. */
  add(tx: Transaction): number {
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

    notePair(this.graph, this.merchantCustomerTimes, this.merchantCompromisedTimes, tx.customer_id, tx.merchant_id, tx.time, newPair);
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
  private addLate(tx: Transaction): number {
    const t = tx.time;
    // Refused before anything changes, so a caller can keep the history or load it afresh.
    if (!this.keepRecords || this.records.length !== this.size) {
      throw new Error(
        'history must be added in time order: a late transaction is placed only by a history that keeps every transaction (withRecords() before the first add)',
      );
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

    notePairLate(this.graph, this.merchantCustomerTimes, this.merchantCompromisedTimes, tx.customer_id, tx.merchant_id, t, first);
    if (tx.label === 1) this.refreshCompromised(tx.customer_id);
    return k;
  }

  /** Puts late transaction `k` into an entity's record list and series, both after the entries at
   *  or before its time; the list's records give the series the amounts after it. */
  private placeLate(s: Series, role: 'customer' | 'merchant' | 'channel', key: string, tx: Transaction, k: number, keepFrom: number): void {
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
    moveCompromised(this.graph, this.merchantCompromisedTimes, c, before, after);
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
  relabel(
    tx: Pick<Transaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>,
    from: 0 | 1 | undefined,
    fromKnown: number,
    label: 0 | 1,
    knownAt: number,
  ): void {
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
    loadPair(this.graph, this.merchantCustomerTimes, customerId, key, first);
  }

  /** A label known from the floor on, of a transaction before it. */
  loadLabel(tx: Pick<Transaction, 'customer_id' | 'merchant_id' | 'payment_type' | 'location'>, label: 0 | 1, known: number): void {
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

  private addRecord(tx: Transaction, channel: string, labelKnownAt: number): number {
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
    return countNeighbours(this.graph, this.merchantCustomerTimes, this.merchantCompromisedTimes, merchantId, customerId, t);
  }

  /** Earlier transactions (strictly before `time`) of a transaction's customer, merchant and channel. */
  priors(tx: Transaction, time = tx.time): { customer: number; merchant: number; channel: number } {
    return {
      customer: this.customer(tx.customer_id).countBefore(time),
      merchant: this.merchant(tx.merchant_id).countBefore(time),
      channel: this.channel(channelOf(tx)).countBefore(time),
    };
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
  recent(role: 'customer' | 'merchant' | 'channel', key: string, before: number, n: number): Transaction[] {
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

  /** The features' questions about first uses, answered from the usage maps as the features asked
   *  them of this history. */
  usedBefore(customerId: string, kind: 'merchant' | 'channel' | 'location', key: string, t: number): boolean {
    const u = this.customerUsage(customerId);
    return usedBefore(kind === 'merchant' ? u.merchants : kind === 'channel' ? u.channels : u.locations, key, t);
  }

  distinctBefore(customerId: string, kind: 'merchant' | 'channel' | 'location', t: number): number {
    const u = this.customerUsage(customerId);
    return distinctBefore(kind === 'merchant' ? u.merchants : kind === 'channel' ? u.channels : u.locations, t);
  }

  /** The graph's pairs and compromised times, as the columnar history lists them. */
  forEachPair(each: (customerId: string, merchantId: string, first: number) => void): void {
    this.graph.forEachEdge((_e, a, source, target) => {
      const [c, m] = source.startsWith('c:') ? [source, target] : [target, source];
      each(c.slice(2), m.slice(2), a.first);
    });
  }

  customerCompromisedAt(id: string): number | undefined {
    const c = customerNode(id);
    return this.graph.hasNode(c) ? this.graph.getNodeAttribute(c, 'fraudKnownAt') : undefined;
  }

  customerUsage(id: string): { merchants: Map<string, number>; channels: Map<string, number>; locations: Map<string, number> } {
    return this.usage.get(id) ?? { merchants: new Map(), channels: new Map(), locations: new Map() };
  }
}
