// Point-in-time features: the batch pass and single scoring agree exactly; nothing at or after a
// transaction's own time leaks into its features; the velocity and behavioral signals show the
// simulator's scenarios.

import t from 'tap';
import { History } from '../../src/domain/history/history.ts';
import type { Transaction } from '../../src/domain/transaction.ts';
import { CHANNEL_FEATURES, extractBatch, extractOne } from '../../src/domain/features/extract.ts';
import type { Channel } from '../../src/domain/channels.ts';
import { simulate } from '../../src/domain/simulate.ts';

const rows: Transaction[] = simulate({ seed: 31, customers: 250, merchants: 50, days: 30, rings: 1 });
const { features } = extractBatch(rows);
const channels = Object.keys(CHANNEL_FEATURES) as Channel[];

function rowOf(channel: Channel, m: Float64Array, i: number): number[] {
  const n = CHANNEL_FEATURES[channel].length;
  return Array.from(m.subarray(i * n, (i + 1) * n));
}

function same(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, k) => Object.is(x, b[k]) || x === b[k]);
}

t.test('scoring a transaction alone after its history gives the batch features', async (t) => {
  const picks = new Set<number>();
  for (let i = 0; i < rows.length; i += Math.floor(rows.length / 40)) picks.add(i);
  // Also members of card-testing bursts and ring payments, where timing matters most.
  rows.forEach((r, i) => {
    if ((r as { scenario?: string }).scenario === 'card_testing' && picks.size < 60) picks.add(i);
  });
  for (const i of picks) {
    const history = new History();
    for (let j = 0; j < i; j++) history.add(rows[j]!);
    const one = extractOne(rows[i]!, history);
    for (const c of channels) {
      t.ok(same(rowOf(c, one[c], 0), rowOf(c, features[c], i)), `row ${i}, ${c}`);
    }
  }
});

t.test('only strictly older transactions count', async (t) => {
  const base = { customer_id: 'C1', merchant_id: 'M1', location: 'Lisbon', payment_type: 'card_present' };
  const txs: Transaction[] = [
    { ...base, time: 1_000, amount: 10 },
    { ...base, time: 2_000, amount: 20 },
    { ...base, time: 2_000, amount: 30 }, // same instant as the previous one
    { ...base, time: 3_000, amount: 40 },
  ];
  const { features: f } = extractBatch(txs);
  const prior = CHANNEL_FEATURES.behavioral.indexOf('customer_prior_count');
  const counts = [0, 1, 2, 3].map((i) => rowOf('behavioral', f.behavioral, i)[prior]);
  t.same(counts, [0, 1, 1, 3], 'equal timestamps do not see each other');
  const first = rowOf('behavioral', f.behavioral, 0);
  t.ok(Number.isNaN(first[CHANNEL_FEATURES.behavioral.indexOf('customer_mean_amount')]!), 'no history: mean is missing');
  t.equal(first[CHANNEL_FEATURES.behavioral.indexOf('new_merchant_for_customer')], 1);
  t.equal(rowOf('behavioral', f.behavioral, 3)[CHANNEL_FEATURES.behavioral.indexOf('new_merchant_for_customer')], 0);
  t.throws(
    () =>
      extractBatch([
        { ...base, time: 9, amount: 1 },
        { ...base, time: 8, amount: 1 },
      ]),
    'out-of-order history is refused',
  );
});

t.test('scenario signals are visible', async (t) => {
  const count10m = CHANNEL_FEATURES.velocity.indexOf('customer_count_10m');
  const newChannel = CHANNEL_FEATURES.behavioral.indexOf('new_channel_for_customer');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const scenario = (i: number) => (rows[i] as { scenario?: string }).scenario ?? '';
  const idx = (s: string) => rows.map((_, i) => i).filter((i) => scenario(i) === s);
  const legit = idx('');
  const testing = idx('card_testing');
  const takeover = idx('account_takeover');
  t.ok(mean(testing.map((i) => rowOf('velocity', features.velocity, i)[count10m]!)) > 3, 'card testing: many payments in 10 minutes');
  t.ok(mean(legit.map((i) => rowOf('velocity', features.velocity, i)[count10m]!)) < 0.2, 'legitimate: few');
  t.ok(
    mean(takeover.map((i) => rowOf('behavioral', features.behavioral, i)[newChannel]!)) >
      mean(legit.map((i) => rowOf('behavioral', features.behavioral, i)[newChannel]!)),
    'account takeover: new channels more often than legitimate payments',
  );
});

t.test('fraud labels count only once older than the label delay', async (t) => {
  const day = 86_400_000;
  const tx = (time: number, customer: string, label?: 0 | 1): Transaction => ({
    time,
    amount: 50,
    customer_id: customer,
    merchant_id: 'M1',
    location: 'Porto',
    payment_type: 'wallet',
    label,
  });
  const txs = [tx(0, 'C1', 1), tx(1 * day, 'C2', 0), tx(6 * day, 'C3'), tx(7 * day + 1, 'C4'), tx(8 * day + 1, 'C5')];
  const { features: f } = extractBatch(txs, new History(7 * day));
  const names = CHANNEL_FEATURES.graph;
  const at = (i: number, name: (typeof names)[number]) => rowOf('graph', f.graph, i)[names.indexOf(name)];
  t.equal(at(2, 'merchant_known_labels'), 0, 'day 6: the day-0 fraud is not known yet');
  t.equal(at(3, 'merchant_known_labels'), 1, 'just past 7 days: it is');
  t.ok(at(3, 'merchant_known_fraud_rate')! > at(2, 'merchant_known_fraud_rate')!, 'and raises the merchant rate');
  t.equal(at(4, 'merchant_known_labels'), 2, 'just past day 8: both labels known');
  t.equal(at(3, 'merchant_compromised_customer_share'), 1 / 3, 'one of the three earlier customers is known compromised');
  t.equal(at(2, 'merchant_compromised_customer_share'), 0);
  t.equal(at(4, 'merchant_distinct_customers'), 4);
  // Recent windows count labels by when they became known: [t − w, t).
  t.equal(at(2, 'merchant_recent_labels_1d'), 0);
  t.ok(Number.isNaN(at(2, 'merchant_recent_fraud_rate_1d')!), 'no recent label: missing, not zero');
  t.equal(at(3, 'merchant_recent_labels_1d'), 1, 'the day-0 fraud became known within the last day');
  t.equal(at(3, 'merchant_recent_fraud_rate_1d'), 1);
  t.equal(at(4, 'merchant_recent_labels_1d'), 1, 'day 8: only the day-1 label is less than a day known');
  t.equal(at(4, 'merchant_recent_fraud_rate_1d'), 0);
  t.equal(at(4, 'merchant_recent_labels_7d'), 2);
  t.equal(at(4, 'merchant_recent_fraud_rate_30d'), 0.5);
});

t.test('recent mean amounts include the payment itself', async (t) => {
  const day = 86_400_000;
  const tx = (time: number, amount: number): Transaction => ({ time, amount, customer_id: 'C1', merchant_id: 'M1', location: 'Porto', payment_type: 'wallet' });
  const { features: f } = extractBatch([tx(0, 10), tx(3 * day, 20), tx(3 * day + 1000, 90)], new History(7 * day));
  const names = CHANNEL_FEATURES.behavioral;
  const at = (i: number, name: (typeof names)[number]) => rowOf('behavioral', f.behavioral, i)[names.indexOf(name)];
  t.equal(at(0, 'mean_amount_30d_with_this'), 10, 'a first payment is its own mean');
  t.equal(at(2, 'mean_amount_24h_with_this'), 55, '(20 + 90) / 2');
  t.equal(at(2, 'mean_amount_30d_with_this'), 40, '(10 + 20 + 90) / 3');
});
