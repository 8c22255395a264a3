// The handbook's protocol: which rows train, which test, which cards count as already known, card
// precision@100 per day with deterministic ties, and its own 15 features computed point in time.

import t from 'tap';
import { cardPrecisionAtK, protocolSplit, type ProtocolRow } from '../../src/training/handbook-protocol.ts';
import { HANDBOOK_FEATURES, handbookFeatures } from '../../src/training/handbook-features.ts';

const o = { trainStart: 10, trainDays: 7, delayDays: 7, testDays: 7 };

t.test('train and test days, and cards known before each test day are removed', async (t) => {
  const rows: ProtocolRow[] = [
    { day: 9, customer_id: 'early', label: 1 }, // fraud before training: not known by the protocol
    { day: 12, customer_id: 'trained', label: 1 }, // fraud in training: known for the whole test
    { day: 18, customer_id: 'delay', label: 1 }, // fraud in the delay period, day 18: known from day 26
    { day: 24, customer_id: 'early', label: 0 },
    { day: 24, customer_id: 'trained', label: 0 },
    { day: 24, customer_id: 'delay', label: 0 },
    { day: 26, customer_id: 'delay', label: 0 },
    { day: 25, customer_id: 'fresh', label: 1 },
    { day: 30, customer_id: 'fresh', label: 1 }, // first fraud day 25 is not yet eight days old on day 30
    { day: 31, customer_id: 'late', label: 0 }, // after the test week
  ];
  const s = protocolSplit(rows, o);
  t.same(s.train, [1], 'only days 10..16 train');
  const kept = s.test.map((i) => `${rows[i]!.customer_id}@${rows[i]!.day}`);
  t.same(kept, ['early@24', 'delay@24', 'fresh@25', 'fresh@30'], 'known cards removed, per test day');
  t.same(s.testDay, [0, 0, 1, 6]);
});

t.test('card precision@k ranks cards by their maximum score of the day', async (t) => {
  const cards = ['a', 'a', 'b', 'c', 'd', 'a'];
  const days = [0, 0, 0, 0, 0, 1];
  const scores = [0.1, 0.9, 0.8, 0.8, 0.2, 0.5];
  const labels = [0, 1, 0, 1, 0, 0];
  // Day 0: a (0.9, fraud), then b and c tie at 0.8: b first by id, so top 2 = {a, b} → 1/2.
  const r = cardPrecisionAtK(cards, days, scores, labels, 2);
  t.same(r.perDay, [0.5, 0]);
  t.equal(r.mean, 0.25);
});

t.test('the handbook features: customer windows include the payment, terminal windows end one delay back', async (t) => {
  const DAY = 86_400_000;
  const rows = [
    { time: 0, amount: 10, customer_id: 'c', terminal_id: 'T', label: 1 as const },
    { time: 2 * DAY, amount: 30, customer_id: 'c', terminal_id: 'T', label: 0 as const },
    { time: 7 * DAY + 3_600_000, amount: 50, customer_id: 'c', terminal_id: 'T', label: 0 as const },
  ];
  const f = handbookFeatures(rows, [2]);
  const at = (name: (typeof HANDBOOK_FEATURES)[number]) => f[HANDBOOK_FEATURES.indexOf(name)];
  t.equal(at('amount'), 50);
  t.equal(at('customer_count_1d'), 1, 'the current payment only');
  t.equal(at('customer_mean_7d'), 40, 'days 2 and 7: (30 + 50) / 2');
  t.equal(at('customer_count_30d'), 3);
  // Terminal windows over [t − 7d − w, t − 7d): for t = 7 days and an hour, the 1-day window holds
  // the payment at time 0 (a fraud), and even the 30-day window holds nothing later.
  t.equal(at('terminal_count_1d'), 1);
  t.equal(at('terminal_risk_1d'), 1);
  t.equal(at('terminal_count_30d'), 1, 'the payment of day 2 is not yet a week old');
});
