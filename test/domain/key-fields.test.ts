// The history of key fields' values (a device hash, an e-mail domain) against a recount of the
// transactions themselves: earlier transactions, first seen, counts over an hour, a day and a week,
// the amount over a day and the distinct customers over a day and 30 days, strictly before the time
// asked, on random histories (bursts of one customer, ties, days apart, so windows slide and entries
// pass the horizon), added in time order, with late arrivals placed out of order, loaded from a
// floor with the database's totals, and written to a snapshot and read back, then added to again.

import t from 'tap';
import { History } from '../../src/domain/history/history.ts';
import { WINDOW_HORIZON_MS, type EntityTotals } from '../../src/domain/history/horizon.ts';
import { historyBytes, historyFromBytes } from '../../src/domain/history/snapshot.ts';
import type { KeyHistory } from '../../src/domain/history/key-fields.ts';
import { Rng } from '../../src/domain/rng.ts';
import { DAY, generate, HOUR, loadInto, MINUTE, type Tx } from '../support/history-fixtures.ts';

const DEVICES = Array.from({ length: 12 }, (_, i) => `device_hash=d${i}`);
const DOMAINS = ['email_domain=example.com', 'email_domain=mail.test', 'email_domain=a,b=c'];

/** `n` transactions (history-fixtures.ts) carrying key values: a device mostly its customer's own,
 *  sometimes shared; an e-mail domain shared by many; some with none. */
function withKeys(rng: Rng, n: number): Tx[] {
  return generate(rng, n).map((tx) => {
    const keys: string[] = [];
    const r = rng.uniform();
    if (r < 0.8) keys.push(rng.uniform() < 0.7 ? DEVICES[Number(tx.customer_id.slice(1)) % DEVICES.length]! : DEVICES[rng.below(DEVICES.length)]!);
    if (rng.uniform() < 0.6) keys.push(DOMAINS[rng.below(DOMAINS.length)]!);
    return keys.length ? { ...tx, keys } : tx;
  });
}

/** The same figures counted from the transactions. */
function recount(rows: readonly Tx[], entry: string, at: number): KeyHistory {
  const mine = rows.filter((r) => r.keys?.includes(entry) && r.time < at);
  const since = (ms: number) => mine.filter((r) => r.time >= at - ms);
  const customers = (ms: number) => new Set(since(ms).map((r) => r.customer_id)).size;
  return {
    prior_transactions: mine.length,
    is_new: mine.length === 0,
    count_1h: since(HOUR).length,
    count_24h: since(DAY).length,
    count_7d: since(7 * DAY).length,
    amount_24h: since(DAY).reduce((s, r) => s + r.amount, 0),
    distinct_customers_24h: customers(DAY),
    distinct_customers_30d: customers(30 * DAY),
  };
}

/** Every value's figures, asked at `at`, against the recount; the first few differences. */
function compare(h: History, rows: readonly Tx[], at: number): string[] {
  const out: string[] = [];
  for (const entry of [...DEVICES, ...DOMAINS, 'device_hash=never']) {
    const got = h.keyHistory(entry, at);
    const want = recount(rows, entry, at);
    for (const k of Object.keys(want) as (keyof KeyHistory)[]) {
      const same = k === 'amount_24h' ? Math.abs((got[k] as number) - (want[k] as number)) <= 1e-6 * Math.max(1, want[k] as number) : got[k] === want[k];
      if (!same) out.push(`${entry} at ${at} ${k}: ${got[k]} (recount ${want[k]})`);
    }
  }
  return out.slice(0, 5);
}

/** Times a live history is asked at after adding a transaction at `time`: then, and later. */
const asks = (time: number) => [time, time + 1, time + 30 * MINUTE, time + 2 * HOUR, time + 3 * DAY];

for (const seed of [11, 12, 13]) {
  t.test(`seed ${seed}: in time order, every answer is the recount`, async (t) => {
    const rng = new Rng(seed);
    const rows = withKeys(rng, 1500);
    const h = new History().withRecords();
    let checked = 0;
    const problems: string[] = [];
    rows.forEach((tx, i) => {
      // Asked before it is added, as a score is (strictly before its time: ties excluded).
      if (i % 7 === 0) {
        problems.push(...compare(h, rows.slice(0, i), tx.time));
        checked++;
      }
      h.add(tx);
      if (i % 31 === 0) for (const at of asks(tx.time)) problems.push(...compare(h, rows.slice(0, i + 1), at));
    });
    t.same(problems.slice(0, 5), [], `${checked} points in time and more`);
    t.ok(rows[rows.length - 1]!.time - rows[0]!.time > 2 * WINDOW_HORIZON_MS, 'long enough that entries pass the horizon');
  });

  t.test(`seed ${seed}: late arrivals placed out of order answer as the recount`, async (t) => {
    const rng = new Rng(seed + 100);
    const rows = withKeys(rng, 1200);
    // Each transaction held back by up to two hours now and then, as processes commit out of order.
    const order = rows.map((tx, i) => ({ tx, at: tx.time + (rng.uniform() < 0.2 ? rng.below(2 * HOUR) : 0), i })).sort((a, b) => a.at - b.at || a.i - b.i);
    const h = new History().withRecords();
    const added: Tx[] = [];
    const problems: string[] = [];
    let late = 0;
    for (const [n, { tx }] of order.entries()) {
      if (tx.time < h.newest) late++;
      h.add(tx);
      added.push(tx);
      if (n % 13 === 0) for (const at of asks(h.newest)) problems.push(...compare(h, added, at));
    }
    t.ok(late > 50, `${late} late arrivals`);
    t.same(problems.slice(0, 5), []);
  });

  t.test(`seed ${seed}: loaded from a floor with the totals, and from a snapshot, then added to`, async (t) => {
    const rng = new Rng(seed + 200);
    const rows = withKeys(rng, 1600);
    const stored = rows.slice(0, 1300);
    const after = rows.slice(1300);
    const newest = stored[stored.length - 1]!.time;
    const floor = newest - WINDOW_HORIZON_MS;
    t.ok(stored[0]!.time < floor - 10 * DAY, 'stored history reaches well before the floor');

    const loaded = new History();
    loadWithKeys(loaded, stored, floor);
    const problems: string[] = [];
    for (const at of asks(newest)) problems.push(...compare(loaded, stored, at));
    t.same(problems, [], 'loaded: as the recount');

    const copy = historyFromBytes(historyBytes(loaded).map((p) => p.slice()));
    for (const at of asks(newest)) problems.push(...compare(copy, stored, at));
    t.same(problems, [], 'read back from its snapshot: the same');

    const seen = [...stored];
    for (const [i, tx] of after.entries()) {
      problems.push(...compare(loaded, seen, tx.time), ...compare(copy, seen, tx.time));
      loaded.add(tx);
      copy.add(tx);
      seen.push(tx);
      if (i % 20 === 0) for (const at of asks(tx.time)) problems.push(...compare(copy, seen, at));
    }
    t.same(problems.slice(0, 5), [], 'both, as transactions keep arriving');
  });
}

t.test('a value none carried, and an organization without key fields', async (t) => {
  const h = new History().withRecords();
  h.add({ time: 1000, amount: 5, customer_id: 'c', merchant_id: 'm', location: 'L', payment_type: 'p' });
  t.same(h.keyHistory('device_hash=x', 2000), recount([], 'device_hash=x', 2000));
  const empty = h.byteLength.keys!;
  for (let i = 0; i < 5_000; i++) h.add({ time: 2000 + i, amount: 5, customer_id: `c${i % 50}`, merchant_id: 'm', location: 'L', payment_type: 'p' });
  t.equal(h.byteLength.keys, empty, 'without key values, holds nothing more however many transactions');
});

/** loadInto (history-fixtures.ts) with each key value's totals, as the database keeps them. */
function loadWithKeys(h: History, rows: readonly Tx[], floor: number): void {
  const totals = new Map<string, EntityTotals>();
  for (const tx of rows)
    for (const key of tx.keys ?? []) {
      let e = totals.get(key);
      if (!e)
        totals.set(
          key,
          (e = { kind: 'field', key, transactions: 0, amountSum: 0, amountSquares: 0, last: -Infinity, labels: 0, frauds: 0, firstFraudKnown: null }),
        );
      e.transactions++;
      e.amountSum += tx.amount;
      e.amountSquares += tx.amount * tx.amount;
      e.last = Math.max(e.last, tx.time);
    }
  loadInto(h, rows, floor, [...totals.values()]);
}
