// Shared by the history's property tests: a generator of time-ordered transactions over few
// entities (so they repeat, compact past the horizon and meet in pairs all along), probes to score,
// and every question a history can be asked at a time, as comparable answers.

import { DEFAULT_LABEL_DELAY_MS, type History } from '../../src/domain/history/history.ts';
import type { EntityTotals } from '../../src/domain/history/horizon.ts';
import type { History as ReferenceHistory } from './reference-history/history.ts';
import { RecordStore, type PackedColumn, type TransactionColumns } from '../../src/domain/history/records.ts';
import { Series, SeriesStore } from '../../src/domain/history/series.ts';
import { channelOf, type Transaction } from '../../src/domain/transaction.ts';
import { extractOne } from '../../src/domain/features/extract.ts';
import type { Rng } from '../../src/domain/rng.ts';

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const T0 = 1_700_000_000_000;

export type Tx = Transaction & { transaction_id: string };

export const CUSTOMERS = Array.from({ length: 40 }, (_, i) => `c${i}`);
export const MERCHANTS = Array.from({ length: 6 }, (_, i) => `m${i}`);
export const LOCATIONS = ['Lisbon', 'Porto', 'Faro'];
export const PAYMENT_TYPES = ['card_present', 'online'];
export const CHANNELS = PAYMENT_TYPES.flatMap((payment_type) => LOCATIONS.map((location) => channelOf({ payment_type, location })));

/** `n` transactions in time order: bursts (ties and seconds apart), hours apart, now and then days
 *  (about 90 days in all, so every series compacts past its horizon); few entities, so they repeat,
 *  customers joining all along (so pairs first meet all along), bursts of one customer; amounts whose sums round; some
 *  labelled, known after the label delay or at a time of their own. */
export function generate(rng: Rng, n: number): Tx[] {
  const out: Tx[] = [];
  let time = T0;
  for (let i = 0; i < n; i++) {
    const r = rng.uniform();
    time += r < 0.15 ? 0 : r < 0.6 ? rng.below(5_000) : r < 0.97 ? rng.below(2 * HOUR) : rng.below(3 * DAY);
    const amount = rng.uniform() < 0.1 ? Math.round(rng.uniform() * 500_000) / 100 : Math.round(Math.exp(3 + rng.normal()) * 100) / 100;
    // Now and then a burst: the previous payment's customer again, often at the same merchant.
    const previous = out[out.length - 1];
    const burst = previous !== undefined && rng.uniform() < 0.25;
    const tx: Tx = {
      transaction_id: `t${i}`,
      time,
      amount,
      customer_id: burst ? previous.customer_id : CUSTOMERS[rng.below(Math.min(CUSTOMERS.length, 2 + Math.floor(i / 35)))]!,
      merchant_id: burst && rng.uniform() < 0.5 ? previous.merchant_id : MERCHANTS[rng.below(MERCHANTS.length)]!,
      location: LOCATIONS[rng.below(LOCATIONS.length)]!,
      payment_type: PAYMENT_TYPES[rng.below(PAYMENT_TYPES.length)]!,
    };
    if (rng.uniform() < 0.4) {
      tx.label = rng.uniform() < 0.15 ? 1 : 0;
      if (rng.uniform() < 0.5) tx.labelKnownAt = time + rng.below(3 * DAY);
    }
    out.push(tx);
  }
  return out;
}

/** Same numbers, NaN equal to NaN, -0 to 0. */
export function sameNumbers(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!(a[i] === b[i] || (Number.isNaN(a[i]) && Number.isNaN(b[i])))) return false;
  return true;
}

/** Everything a query can ask, at time `q`, as comparable values: one entry per question. */
/** `records: false` leaves out what only a history keeping every record can answer (evidence lists,
 *  how many transactions it holds). */
export function answers(h: History, q: number, probes: readonly Transaction[], { records = true } = {}): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const series = (s: Series, withStats: boolean) => {
    const v: unknown[] = [];
    for (const back of [-Infinity, 10 * MINUTE, HOUR, DAY, 7 * DAY, 30 * DAY]) {
      const from = q - back;
      v.push(s.window(from, q));
      const into = new Float64Array(2);
      s.windowInto(from, q, into, 0);
      v.push([...into]);
    }
    v.push(s.countBefore(q), s.lastBefore(q));
    if (withStats) v.push(s.stats(q));
    return v;
  };
  const labels = (id: string, get: (id: string) => ReturnType<History['merchantLabelSeries']>) => {
    const s = get(id);
    return [-Infinity, DAY, 7 * DAY, 30 * DAY].map((back) => s.window(q - back, q));
  };
  for (const c of CUSTOMERS) {
    out.set(`customer ${c} series`, series(h.customer(c), true));
    out.set(`customer ${c} known frauds`, h.customerKnownFrauds(c, q));
    const u = h.customerUsage(c);
    out.set(
      `customer ${c} usage`,
      [u.merchants, u.channels, u.locations].map((m) => [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))),
    );
    for (const m of MERCHANTS) out.set(`neighbours ${m} ${c}`, h.merchantNeighbours(m, c, q));
  }
  for (const m of MERCHANTS) {
    out.set(`merchant ${m} series`, series(h.merchant(m), false));
    out.set(
      `merchant ${m} labels`,
      labels(m, (id) => h.merchantLabelSeries(id)),
    );
  }
  for (const ch of CHANNELS) {
    out.set(`channel ${ch} series`, series(h.channel(ch), false));
    out.set(
      `channel ${ch} labels`,
      labels(ch, (id) => h.channelLabelSeries(id)),
    );
  }
  const recent = (role: 'customer' | 'merchant' | 'channel', keys: readonly string[]) => {
    for (const key of keys) {
      for (const before of [q, q - HOUR]) {
        out.set(
          `recent ${role} ${key} ${before - q}`,
          h.recent(role, key, before, 12).map((r) => [r.transaction_id, r.time, r.amount, r.label, r.labelKnownAt]),
        );
      }
    }
  };
  if (records) {
    recent('customer', CUSTOMERS);
    recent('merchant', MERCHANTS);
    recent('channel', CHANNELS);
  }
  probes.forEach((p, i) => {
    const tx = { ...p, time: q };
    const m = extractOne(tx, h);
    out.set(`features of probe ${i}`, [...m.tabular, ...m.behavioral, ...m.velocity, ...m.graph]);
    out.set(`priors of probe ${i}`, h.priors(tx));
  });
  // The graph itself: every pair's first payment, every customer's compromised time.
  const edges: unknown[] = [];
  h.forEachPair((customer, merchant, first) => edges.push([customer, merchant, first]));
  out.set(
    'graph edges',
    edges.sort((a, b) => (String(a) < String(b) ? -1 : 1)),
  );
  out.set(
    'graph nodes',
    CUSTOMERS.map((c) => [c, h.customerCompromisedAt(c)]),
  );
  if (records) out.set('newest and size', [h.newest, h.size]);
  return out;
}

/** The questions whose answers differ (at most a few, with both answers). */
export function differences(a: Map<string, unknown>, b: Map<string, unknown>): string[] {
  const out: string[] = [];
  for (const [question, x] of a) {
    const y = b.get(question);
    const same = question.startsWith('features') ? sameNumbers(x as number[], y as number[]) : JSON.stringify(x) === JSON.stringify(y);
    if (!same) out.push(`${question}: in time order ${JSON.stringify(x)}, late ${JSON.stringify(y)}`);
  }
  return out.slice(0, 5);
}

export function probes(rng: Rng, n: number): Transaction[] {
  const out: Transaction[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      amount: Math.round(Math.exp(3 + rng.normal()) * 100) / 100,
      customer_id: i < CUSTOMERS.length ? CUSTOMERS[i]! : CUSTOMERS[rng.below(CUSTOMERS.length)]!,
      merchant_id: MERCHANTS[rng.below(MERCHANTS.length)]!,
      location: LOCATIONS[rng.below(LOCATIONS.length)]!,
      payment_type: PAYMENT_TYPES[rng.below(PAYMENT_TYPES.length)]!,
      time: 0,
    });
  }
  // A customer and a merchant the history has never seen.
  out.push({ amount: 12.5, customer_id: 'c-new', merchant_id: 'm-new', location: 'Braga', payment_type: 'online', time: 0 });
  return out;
}

/** One entity's series on its own, as the history keeps it (over a record store): `add` appends
 *  in time order, `insert` places a late entry, `series` reads it. */
export function oneSeries(withSquares = false): {
  add(time: number, amount: number, keepFrom?: number): void;
  insert(time: number, amount: number, keepFrom: number, newest?: number): void;
  series: Series;
} {
  const records = new RecordStore();
  const store = new SeriesStore(records, withSquares);
  const push = (time: number, amount: number) => records.push({ time, amount, customer_id: 'c', merchant_id: 'm', location: 'L', payment_type: 'p' });
  return {
    add: (time, amount, keepFrom) => store.add(0, push(time, amount), keepFrom),
    insert: (time, amount, keepFrom, newest) => store.insert(0, push(time, amount), keepFrom, newest),
    series: new Series(store, 0),
  };
}

/** Loads `rows` into `h` from `floor` on, the rest as the totals the database keeps (in the order
 *  recorded); returns the record index of each held transaction. */
export function loadInto(h: History | ReferenceHistory, rows: readonly Tx[], floor: number, more: readonly EntityTotals[] = []): Map<string, number> {
  h.withRecords().loadFrom(floor);
  const uses = new Map<string, number>();
  const totals = new Map<string, EntityTotals>();
  const known = (tx: Tx) => tx.labelKnownAt ?? tx.time + DEFAULT_LABEL_DELAY_MS;
  for (const tx of rows) {
    for (const [kind, key] of [
      ['merchant', tx.merchant_id],
      ['channel', channelOf(tx)],
      ['location', tx.location],
    ] as const) {
      const k = `${tx.customer_id}\u0000${kind}\u0000${key}`;
      uses.set(k, Math.min(uses.get(k) ?? Infinity, tx.time));
    }
    for (const [kind, key] of [
      ['customer', tx.customer_id],
      ['merchant', tx.merchant_id],
      ['channel', channelOf(tx)],
    ] as const) {
      const k = `${kind}\u0000${key}`;
      let e = totals.get(k);
      if (!e) totals.set(k, (e = { kind, key, transactions: 0, amountSum: 0, amountSquares: 0, last: -Infinity, labels: 0, frauds: 0, firstFraudKnown: null }));
      e.transactions++;
      e.amountSum += tx.amount;
      e.amountSquares += tx.amount * tx.amount;
      e.last = Math.max(e.last, tx.time);
      if (tx.label === 0 || tx.label === 1) {
        e.labels++;
        e.frauds += tx.label;
        if (tx.label === 1) e.firstFraudKnown = Math.min(e.firstFraudKnown ?? Infinity, known(tx));
      }
    }
  }
  for (const [k, first] of uses) {
    const [customer, kind, key] = k.split('\u0000') as [string, 'merchant' | 'channel' | 'location', string];
    h.loadUse(customer, kind, key, first);
  }
  const ids = new Map<string, number>();
  const inOrder = [...rows].sort((a, b) => a.time - b.time);
  if ('addColumns' in h) {
    // Ours as the service loads it: the held transactions in pages of columns, then the labels.
    const held = inOrder.filter((tx) => tx.time >= floor);
    for (let from = 0; from < held.length; from += 61) h.addColumns(transactionColumns(held.slice(from, from + 61), h.labelDelay));
    for (const [k, tx] of held.entries()) ids.set(tx.transaction_id, k);
    for (const tx of inOrder) if (tx.time < floor && (tx.label === 0 || tx.label === 1) && known(tx) >= floor) h.loadLabel(tx, tx.label, known(tx));
  } else {
    for (const tx of inOrder) {
      if (tx.time >= floor) ids.set(tx.transaction_id, h.add(tx));
      else if ((tx.label === 0 || tx.label === 1) && known(tx) >= floor) h.loadLabel(tx, tx.label, known(tx));
    }
  }
  h.finishLoad([...totals.values(), ...more]);
  return ids;
}

/** Transactions as a load's page of columns (storage/history-load.ts reads them so). */
export function transactionColumns(txs: readonly Tx[], labelDelay: number): TransactionColumns {
  const packed = (values: readonly string[]): PackedColumn => {
    const ends = new Int32Array(values.length);
    let end = 0;
    for (const [i, v] of values.entries()) {
      end += Buffer.byteLength(v, 'utf8');
      ends[i] = end;
    }
    return { bytes: Buffer.from(values.join(''), 'utf8'), ends };
  };
  const labelled = (tx: Tx) => tx.label === 0 || tx.label === 1;
  const keys = txs.some((tx) => tx.keys?.length) ? txs.map((tx) => tx.keys ?? null) : undefined;
  return {
    count: txs.length,
    times: Float64Array.from(txs, (tx) => tx.time),
    amounts: Float64Array.from(txs, (tx) => tx.amount),
    labels: Int8Array.from(txs, (tx) => (labelled(tx) ? tx.label! : -1)),
    knownAt: Float64Array.from(txs, (tx) => (labelled(tx) ? (tx.labelKnownAt ?? tx.time + labelDelay) : Number.NaN)),
    ids: packed(txs.map((tx) => tx.transaction_id)),
    customers: packed(txs.map((tx) => tx.customer_id)),
    merchants: packed(txs.map((tx) => tx.merchant_id)),
    locations: packed(txs.map((tx) => tx.location)),
    paymentTypes: packed(txs.map((tx) => tx.payment_type)),
    keys,
  };
}
