// Outcomes learned while the service runs (History.setOutcome): a label set on a transaction already
// in the history, known from a given time, gives later queries exactly the features of a history
// built with that label from the start; a changed outcome replaces the old label; a customer's
// first known fraud moves its merchants' compromised-customer share, and withdrawing it moves the
// share back; labels known at any time (earlier or later than those filed) are counted in order.

import t from 'tap';
import { History } from '../../src/domain/history/history.ts';
import { LabelStore } from '../../src/domain/history/label-series.ts';
import { RecordStore } from '../../src/domain/history/records.ts';
import type { Transaction } from '../../src/domain/transaction.ts';
import { extractOne } from '../../src/domain/features/extract.ts';

const DAY = 86_400_000;
const T0 = 1_700_000_000_000;

/** Customers paying merchants over 20 days, deterministic. */
function traffic(): (Transaction & { transaction_id: string })[] {
  const out: (Transaction & { transaction_id: string })[] = [];
  for (let i = 0; i < 400; i++) {
    out.push({
      transaction_id: `t${i}`,
      time: T0 + i * ((20 * DAY) / 400),
      amount: 10 + (i % 37),
      customer_id: `c${i % 23}`,
      merchant_id: `m${i % 7}`,
      location: i % 3 ? 'Lisbon' : 'Porto',
      payment_type: i % 2 ? 'wallet' : 'card_present',
    });
  }
  return out;
}

const features = (h: History, tx: Transaction) => {
  const m = extractOne(tx, h);
  return [...m.tabular, ...m.behavioral, ...m.velocity, ...m.graph];
};

t.test('an outcome set later equals the label known from the start', async (t) => {
  const rows = traffic();
  const now = rows[rows.length - 1]!.time + 1000;
  const labels = new Map<number, { label: 0 | 1; known: number }>([
    [10, { label: 1, known: now - 5 * DAY }],
    [50, { label: 0, known: now - DAY }],
    [51, { label: 1, known: now - 12 * DAY }],
    [300, { label: 1, known: now - 1000 }],
  ]);
  const live = new History().withRecords();
  for (const r of rows) live.add(r);
  for (const [k, l] of labels) live.setOutcome(k, l.label, l.known);
  const built = new History().withRecords();
  rows.forEach((r, k) => {
    const l = labels.get(k);
    built.add(l ? { ...r, label: l.label, labelKnownAt: l.known } : r);
  });
  for (let c = 0; c < 23; c++) {
    for (const m of [0, 3, 6]) {
      const probe = { time: now, amount: 42, customer_id: `c${c}`, merchant_id: `m${m}`, location: 'Lisbon', payment_type: 'wallet' };
      t.same(features(live, probe), features(built, probe), `c${c} at m${m}`);
    }
  }
});

t.test('a changed outcome replaces the old label; the compromised share follows', async (t) => {
  const rows = traffic();
  const h = new History().withRecords();
  for (const r of rows) h.add(r);
  const now = rows[rows.length - 1]!.time + 1000;
  const probe = { time: now, amount: 42, customer_id: 'new-customer', merchant_id: 'm1', location: 'Lisbon', payment_type: 'wallet' };
  const graph = () => extractOne(probe, h).graph;
  const before = graph();
  t.equal(before[0], 0, 'no labels yet');
  t.equal(before[12], 0, 'nobody compromised');
  // Transaction 1 is c1 at m1: fraud, known two days ago.
  h.setOutcome(1, 1, now - 2 * DAY);
  const fraud = graph();
  t.equal(fraud[0], 1, 'one label at the merchant');
  t.ok(fraud[1]! > before[1]!, 'its known fraud rate rises');
  t.equal(fraud[2], 0, 'not learned in the last day');
  t.equal(fraud[4], 1, 'learned in the last 7 days');
  t.ok(fraud[12]! > 0, "the merchant's compromised-customer share rises");
  h.setOutcome(1, 0, now - 100);
  const legit = graph();
  t.equal(legit[0], 1, 'still one label');
  t.ok(legit[1]! < fraud[1]!, 'now legitimate');
  t.equal(legit[2], 1, 'learned again in the last day');
  t.equal(legit[12], 0, 'nobody compromised any more');
  t.equal(h.transactions.label(1), 0);
  t.equal(h.transactions.labelKnownAt(1), now - 100);
});

t.test('a label series counts labels filed in any order', async (t) => {
  // Labels of transactions the record store does not hold (ref -1), as a loaded history keeps them.
  const s = new LabelStore(new RecordStore());
  s.insert(0, 50, 1, -1);
  s.insert(0, 10, 0, -1);
  s.insert(0, 30, 1, -1);
  s.insert(0, 30, 0, -1);
  s.insert(0, 70, 0, -1);
  t.same(s.window(0, -Infinity, Infinity), { count: 5, sum: 2 });
  t.same(s.window(0, 20, 60), { count: 3, sum: 2 });
  t.same(s.window(0, 31, 60), { count: 1, sum: 1 });
  s.remove(0, 30, 1, -1);
  t.same(s.window(0, 20, 60), { count: 2, sum: 1 });
  t.throws(() => s.remove(0, 30, 1, -1), 'removing a label that is not there fails loudly');
  // Past a few checkpoints, in any order, and withdrawn again.
  const times = Array.from({ length: 200 }, (_, i) => (i * 7919) % 401);
  for (const [i, time] of times.entries()) s.insert(1, time, (i % 3 === 0 ? 1 : 0) as 0 | 1, -1);
  const count = (from: number, to: number) => {
    let n = 0;
    let frauds = 0;
    times.forEach((time, i) => {
      if (time >= from && time < to) {
        n++;
        frauds += i % 3 === 0 ? 1 : 0;
      }
    });
    return { count: n, sum: frauds };
  };
  for (const [from, to] of [
    [-Infinity, Infinity],
    [0, 100],
    [37, 251],
    [400, 401],
  ] as const)
    t.same(s.window(1, from, to), count(from, to), `window [${from}, ${to})`);
  for (let i = 0; i < 200; i += 2) s.remove(1, times[i]!, (i % 3 === 0 ? 1 : 0) as 0 | 1, -1);
  times.forEach((_, i) => {
    if (i % 2 === 0) times[i] = -1;
  });
  t.same(s.window(1, 0, 500), count(0, 500), 'after half are withdrawn');
});
