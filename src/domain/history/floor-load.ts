// Loading a history from a floor (what the live service does, storage/history-load.ts): what
// windowed features can reach is loaded as transactions, the rest as totals, so loading costs the
// same however much is stored. In this order: `History.loadFrom`, every first use (`loadUse`), the
// transactions from the floor on (`add`, in time order), `loadLabel` for the labels known from the
// floor on of transactions before it, then `finishLoad` with each entity's all-time totals.
// Afterwards every query at or after the newest transaction answers as the whole history would
// (running sums up to rounding: the totals were summed in the order recorded, not in time order).
// The History class keeps the steps' names; the work on its parts is here.

import type { Neighbours } from './customer-merchant-graph.ts';
import { USE_CHANNEL, USE_LOCATION, USE_MERCHANT, type Uses } from './first-use.ts';
import type { EntityTotals } from './horizon.ts';
import type { KnownLabels } from './known-labels.ts';
import { startOf, type RecordStore, type UseColumns } from './records.ts';
import type { SeriesStore } from './series.ts';
import type { StringTable } from './strings.ts';

/** The kinds of a stored first use, as the byte the database spells them with. */
const KIND_CHANNEL = 'h'.charCodeAt(0);
const KIND_LOCATION = 'l'.charCodeAt(0);

/** The parts of a history a load fills, as the History class hands them over. */
export interface LoadTarget {
  records: RecordStore;
  uses: Uses;
  neighbours: Neighbours;
  labels: KnownLabels;
  series(kind: EntityTotals['kind']): SeriesStore;
  /** The key fields' values, by number. */
  keyIds: StringTable;
  /** Before this time the history holds totals only. */
  floor: number;
  /** Brings the graph's compromised times in step with the customer's known frauds. */
  refreshCompromised(c: number): void;
}

/** When a customer first used a merchant, channel or location (all-time): each (customer, kind,
 *  key) once, as the database's key for them guarantees, before any transaction is added. */
export function loadUse(h: LoadTarget, customerId: string, kind: 'merchant' | 'channel' | 'location', key: string, first: number): void {
  const r = h.records;
  const c = r.customerIds.id(customerId);
  if (kind === 'channel') {
    h.uses.append(c, USE_CHANNEL, r.channels.number(key), first);
    return;
  }
  if (kind === 'location') {
    h.uses.append(c, USE_LOCATION, r.places.id(key), first);
    return;
  }
  const m = r.merchantIds.id(key);
  h.uses.append(c, USE_MERCHANT, m, first);
  h.neighbours.loadPair(m, first);
}

/** `loadUse` for rows `from` to `to` (exclusive) of a load's page of first uses, read as bytes: no
 *  object or string is made per row. */
export function loadUseColumns(h: LoadTarget, u: UseColumns, from: number, to: number): void {
  const r = h.records;
  for (let i = from; i < to; i++) {
    const c = r.customerIds.idBytes(u.customers.bytes, startOf(u.customers, i), u.customers.ends[i]!);
    const ks = startOf(u.keys, i);
    const ke = u.keys.ends[i]!;
    const first = u.firsts[i]!;
    const kind = u.kinds[i]!;
    if (kind === KIND_CHANNEL) h.uses.append(c, USE_CHANNEL, r.channels.numberBytes(u.keys.bytes, ks, ke), first);
    else if (kind === KIND_LOCATION) h.uses.append(c, USE_LOCATION, r.places.idBytes(u.keys.bytes, ks, ke), first);
    else {
      const m = r.merchantIds.idBytes(u.keys.bytes, ks, ke);
      h.uses.append(c, USE_MERCHANT, m, first);
      h.neighbours.loadPair(m, first);
    }
  }
}

/** The end of a load in steps of a few milliseconds each: the labels filed during it put in order,
 *  then each entity's all-time totals, of which what goes beyond what was loaded came before the
 *  floor. */
export function* finishingLoad(h: LoadTarget, totals: Iterable<EntityTotals>): Generator<void> {
  yield* h.labels.endLoading();
  yield* h.neighbours.finishingLoad();
  const compromised: number[] = [];
  let done = 0;
  for (const t of totals) {
    if (++done % 256 === 0) yield;
    applyTotal(h, t, compromised);
  }
  for (const c of compromised) h.refreshCompromised(c);
}

/** One entity's all-time totals, at the end of a load (a customer with frauds known before the
 *  floor is added to `compromised`). */
function applyTotal(h: LoadTarget, t: EntityTotals, compromised: number[]): void {
  const r = h.records;
  const e =
    t.kind === 'channel'
      ? r.channels.number(t.key)
      : t.kind === 'customer'
        ? r.customerIds.id(t.key)
        : t.kind === 'field'
          ? h.keyIds.id(t.key)
          : r.merchantIds.id(t.key);
  const s = h.series(t.kind);
  const before = t.transactions - s.all(e);
  if (before > 0) {
    const held = s.heldSums(e);
    s.setBase(e, before, t.amountSum - held.sum, t.amountSquares - held.squares, s.held(e) > 0 ? h.floor : t.last);
  }
  if (t.kind === 'field') return;
  if (t.kind === 'customer') {
    if (h.labels.setCustomerTotal(e, t.frauds, t.firstFraudKnown!)) compromised.push(e);
  } else if (t.labels > 0) {
    h.labels.setTotal(t.kind === 'merchant' ? h.labels.merchants : h.labels.channels, e, t.labels, t.frauds);
  }
}
