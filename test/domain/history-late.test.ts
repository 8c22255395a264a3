// Late arrivals: processes sharing an organization's history apply its transactions in the order the
// database committed them, a little out of time order. A history fed that way (each transaction
// displaced by a few positions or seconds) answers every query exactly as one fed the same
// transactions in time order (ties in the order they came): features, series, labels, first uses,
// the customer–merchant graph, evidence lists, and outcomes set afterwards. A transaction older than
// what a series has dropped past its horizon is refused with a HorizonError, and a late one by a
// history that does not keep every record (it could not sum amounts again), leaving the history as
// it was.

import t from 'tap';
import { History } from '../../src/domain/history/history.ts';
import { HorizonError, WINDOW_HORIZON_MS } from '../../src/domain/history/horizon.ts';
import { extractOne } from '../../src/domain/features/extract.ts';
import { Rng } from '../../src/domain/rng.ts';
import { answers, CUSTOMERS, DAY, differences, generate, HOUR, MINUTE, oneSeries, probes, sameNumbers, T0, type Tx } from '../support/history-fixtures.ts';

/** The transactions in an arrival order where each is displaced by up to a few positions
 *  (`positions`) or seconds (`seconds`), and now and then one by up to 60 positions or 10 minutes. */
function arrivalOrder(rng: Rng, rows: Tx[], by: 'positions' | 'seconds'): Tx[] {
  const keyed = rows.map((tx, i) => {
    const far = rng.uniform() < 0.01;
    const key = by === 'positions' ? i + rng.uniform() * (far ? 60 : 5) : tx.time + rng.uniform() * (far ? 10 * MINUTE : 4_000);
    return { tx, key };
  });
  return keyed.sort((a, b) => a.key - b.key).map((k) => k.tx);
}

/** Time order, ties in the order they arrived (a stable sort of the arrival order). */
const timeOrder = (arrival: readonly Tx[]): Tx[] => [...arrival].sort((a, b) => a.time - b.time);

interface Built {
  history: History;
  /** Transaction id → record index. */
  ids: Map<string, number>;
}

function build(rows: readonly Tx[], history = new History().withRecords(), ids = new Map<string, number>()): Built {
  for (const tx of rows) ids.set(tx.transaction_id, history.add(tx));
  return { history, ids };
}

/** How many arrivals exercise each late path: late at all, an earlier first payment of a pair
 *  seen before, a pair first seen late, a late fraud. */
function coverage(arrival: readonly Tx[]): { late: number; earlierFirst: number; newPair: number; lateFraud: number } {
  let newest = -Infinity;
  const firsts = new Map<string, number>();
  const c = { late: 0, earlierFirst: 0, newPair: 0, lateFraud: 0 };
  for (const tx of arrival) {
    const pair = `${tx.customer_id} ${tx.merchant_id}`;
    const first = firsts.get(pair);
    if (tx.time < newest) {
      c.late++;
      if (first === undefined) c.newPair++;
      else if (tx.time < first) c.earlierFirst++;
      if (tx.label === 1) c.lateFraud++;
    }
    if (first === undefined || tx.time < first) firsts.set(pair, tx.time);
    newest = Math.max(newest, tx.time);
  }
  return c;
}

const QUERY_OFFSETS = [0, 1, MINUTE, HOUR, 2 * DAY, 8 * DAY];

for (const [seed, by] of [
  [1, 'positions'],
  [2, 'seconds'],
  [3, 'positions'],
  [4, 'seconds'],
] as const) {
  t.test(`late arrivals answer as time order (seed ${seed}, displaced by ${by})`, async (t) => {
    const rng = new Rng(seed);
    const arrival = arrivalOrder(rng, generate(rng, 1500), by);
    const asked = probes(rng, 30);
    const c = coverage(arrival);
    t.ok(c.late > 100, `${c.late} late arrivals`);
    t.ok(c.earlierFirst > 0 && c.newPair > 0, `${c.earlierFirst} earlier first payments of a pair, ${c.newPair} pairs first seen late`);
    t.ok(c.lateFraud > 0, `${c.lateFraud} late frauds`);

    // Part way through and at the end: the late-fed history against one built in time order from
    // the same transactions.
    const late = build([]);
    let done = 0;
    for (const upTo of [200, 700, 1100, arrival.length]) {
      const next = arrival.slice(done, upTo);
      const indices = next.map((tx) => late.history.add(tx));
      t.same(
        indices,
        next.map((_tx, i) => done + i),
        'add returns the record index, in arrival order',
      );
      for (const tx of next) late.ids.set(tx.transaction_id, done++);
      const ordered = build(timeOrder(arrival.slice(0, upTo)));
      const newest = ordered.history.newest;
      t.equal(late.history.newest, newest, 'newest is the maximum time');
      for (const offset of QUERY_OFFSETS) {
        const q = newest + offset;
        t.same(differences(answers(ordered.history, q, asked), answers(late.history, q, asked)), [], `after ${upTo} arrivals, at newest + ${offset} ms`);
      }
      // Records stay in arrival order.
      t.same(
        next.map((tx) => late.history.transactions.at(late.ids.get(tx.transaction_id)!)!.transaction_id),
        next.map((tx) => tx.transaction_id),
      );
    }
    t.ok(late.history.customer(CUSTOMERS[0]!).held < late.history.customer(CUSTOMERS[0]!).countBefore(Infinity), 'series compacted past the horizon');

    // Outcomes set afterwards, on the same transactions of both.
    const ordered = build(timeOrder(arrival));
    const newest = ordered.history.newest;
    const outcomeRng = new Rng(seed * 101);
    for (let i = 0; i < 12; i++) {
      // Mostly recent transactions (the late ones among them), some older.
      const tx = arrival[arrival.length - 1 - (i < 8 ? outcomeRng.below(100) : outcomeRng.below(1000))]!;
      const r = outcomeRng.uniform();
      const label = r < 0.5 ? 1 : r < 0.8 ? 0 : undefined;
      const knownAt = newest + outcomeRng.below(HOUR);
      ordered.history.setOutcome(ordered.ids.get(tx.transaction_id)!, label, knownAt);
      late.history.setOutcome(late.ids.get(tx.transaction_id)!, label, knownAt);
    }
    for (const offset of [...QUERY_OFFSETS, HOUR + 1]) {
      const q = newest + offset;
      t.same(differences(answers(ordered.history, q, asked), answers(late.history, q, asked)), [], `after outcomes, at newest + ${offset} ms`);
    }
  });
}

t.test('an earlier first payment of a known pair moves the edge and the neighbour counts', async (t) => {
  const base = { location: 'Lisbon', payment_type: 'online' };
  // c1 is compromised (a fraud known at T0 + 10 s); it pays m1 at +100 s, then a payment made at
  // +50 s arrives: the pair's first payment, and so c1's compromised-neighbour time at m1, moves.
  const rows: Tx[] = [
    { ...base, transaction_id: 'a', time: T0, amount: 5, customer_id: 'c1', merchant_id: 'm0', label: 1, labelKnownAt: T0 + 10_000 },
    { ...base, transaction_id: 'b', time: T0 + 20_000, amount: 7, customer_id: 'c2', merchant_id: 'm1' },
    { ...base, transaction_id: 'c', time: T0 + 100_000, amount: 9, customer_id: 'c1', merchant_id: 'm1' },
    { ...base, transaction_id: 'd', time: T0 + 50_000, amount: 11, customer_id: 'c1', merchant_id: 'm1' },
  ];
  const late = build(rows).history;
  const ordered = build(timeOrder(rows)).history;
  t.equal(late.customerUsage('c1').merchants.get('m1'), T0 + 50_000, 'and so does the first use');
  for (const q of [T0 + 60_000, T0 + 100_001]) {
    t.same(late.merchantNeighbours('m1', 'c2', q), { customers: 2, compromised: 1 }, 'c1 is a compromised neighbour from its first payment');
    t.same(late.merchantNeighbours('m1', 'c2', q), ordered.merchantNeighbours('m1', 'c2', q));
    t.same(late.merchantNeighbours('m1', 'c1', q), ordered.merchantNeighbours('m1', 'c1', q), 'a customer is not its own neighbour');
  }
  t.same(
    late.recent('customer', 'c1', T0 + 200_000, 5).map((r) => r.transaction_id),
    ['c', 'd', 'a'],
    'evidence newest first',
  );
  t.same(late.customer('c1').stats(T0 + 200_000), ordered.customer('c1').stats(T0 + 200_000));
});

t.test('a transaction older than the horizon is refused and changes nothing', async (t) => {
  const history = new History().withRecords();
  const base = { customer_id: 'c1', merchant_id: 'm1', location: 'Lisbon', payment_type: 'online' };
  // 200 payments twelve hours apart (100 days): the series drop what is past the horizon.
  for (let i = 0; i < 200; i++) history.add({ ...base, transaction_id: `t${i}`, time: T0 + i * 12 * HOUR, amount: 10 + (i % 9) });
  const newest = history.newest;
  t.ok(history.customer('c1').held < 200, `the customer's series holds ${history.customer('c1').held} of 200`);
  const before = JSON.stringify([
    history.size,
    history.transactions.length,
    history.customer('c1').window(newest - 30 * DAY, newest + 1),
    history.customer('c1').stats(newest + 1),
    history.recent('customer', 'c1', newest + 1, 50),
  ]);

  const old = { ...base, transaction_id: 'old', time: newest - 40 * DAY, amount: 99 };
  t.throws(() => history.add(old), HorizonError);
  t.throws(() => history.add(old), /older than the history's 31-day horizon/);
  // Another customer, merchant or channel does not matter: one series that dropped its place is enough.
  t.throws(() => history.add({ ...old, customer_id: 'c9', merchant_id: 'm9' }), /horizon/, 'the channel has dropped it');
  const after = JSON.stringify([
    history.size,
    history.transactions.length,
    history.customer('c1').window(newest - 30 * DAY, newest + 1),
    history.customer('c1').stats(newest + 1),
    history.recent('customer', 'c1', newest + 1, 50),
  ]);
  t.equal(after, before, 'the history is unchanged');

  // Entities whose series have dropped nothing take a transaction that old.
  const fresh = {
    customer_id: 'c9',
    merchant_id: 'm9',
    location: 'Porto',
    payment_type: 'card_present',
    transaction_id: 'fresh',
    time: newest - 40 * DAY,
    amount: 3,
  };
  t.equal(history.add(fresh), 200);
  t.same(history.customer('c9').window(-Infinity, newest + 1), { count: 1, sum: 3 });

  // Within the horizon a late one is placed, and answers as in time order.
  const recent = { ...base, transaction_id: 'recent', time: newest - 2 * DAY - 1, amount: 12.34 };
  history.add(recent);
  const ordered = new History().withRecords();
  const all = [
    ...Array.from({ length: 200 }, (_, i) => ({ ...base, transaction_id: `t${i}`, time: T0 + i * 12 * HOUR, amount: 10 + (i % 9) })),
    fresh,
    recent,
  ].sort((a, b) => a.time - b.time);
  for (const tx of all) ordered.add(tx);
  for (const q of [newest, newest + HOUR]) {
    t.same(history.customer('c1').window(q - 7 * DAY, q), ordered.customer('c1').window(q - 7 * DAY, q));
    t.same(history.customer('c1').stats(q), ordered.customer('c1').stats(q));
    for (const [channel, values] of Object.entries(extractOne({ ...base, time: q, amount: 20 }, history))) {
      t.ok(sameNumbers(values, extractOne({ ...base, time: q, amount: 20 }, ordered)[channel as 'graph']), `${channel} features`);
    }
  }
});

t.test('a series placed out of order answers as one filled in order', async (t) => {
  const rng = new Rng(9);
  const entries: [number, number][] = [];
  let time = T0;
  for (let i = 0; i < 3000; i++) {
    time += rng.uniform() < 0.2 ? 0 : rng.below(2 * HOUR);
    entries.push([time, Math.round(rng.uniform() * 100_000) / 100]);
  }
  // Arrival: displaced by up to 8 positions; in order: the same, stably sorted by time.
  const arrival = entries
    .map((e, i) => ({ e, key: i + rng.uniform() * 8 }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.e);
  const inOrder = [...arrival].sort((a, b) => a[0] - b[0]);
  const orderedOne = oneSeries(true);
  const placedOne = oneSeries(true);
  const ordered = orderedOne.series;
  const placed = placedOne.series;
  let newest = -Infinity;
  for (const [time, amount] of inOrder) orderedOne.add(time, amount, time - WINDOW_HORIZON_MS);
  for (const [time, amount] of arrival) {
    newest = Math.max(newest, time);
    placedOne.insert(time, amount, newest - WINDOW_HORIZON_MS);
  }
  t.ok(placed.held < 3000, 'compacted');
  for (const q of [newest, newest + 1, newest + DAY]) {
    for (const back of [-Infinity, HOUR, DAY, 30 * DAY]) t.same(placed.window(q - back, q), ordered.window(q - back, q), `window ${back}`);
    t.same(placed.stats(q), ordered.stats(q));
    t.equal(placed.lastBefore(q), ordered.lastBefore(q));
  }
  t.throws(() => placedOne.add(newest - HOUR, 1), /time order/, 'add only appends');
});

t.test('a history without every record refuses a late transaction', async (t) => {
  const base = { customer_id: 'c1', merchant_id: 'm1', location: 'Lisbon', payment_type: 'online' };
  const without = new History();
  // Records asked for only after the first transaction: not every transaction is kept.
  const late = new History();
  late.add({ ...base, time: T0 - 1, amount: 1 });
  late.withRecords();
  for (const [name, history] of [
    ['no records', without],
    ['records from the second', late],
  ] as const) {
    history.add({ ...base, time: T0, amount: 5 });
    history.add({ ...base, time: T0 + 2_000, amount: 7 });
    const before = JSON.stringify([history.size, history.customer('c1').window(-Infinity, T0 + 3_000)]);
    t.throws(() => history.add({ ...base, time: T0 + 1_000, amount: 6 }), /time order.*withRecords/, name);
    t.equal(JSON.stringify([history.size, history.customer('c1').window(-Infinity, T0 + 3_000)]), before, `${name}: unchanged`);
  }
});
