// The simulator: reproducible byte for byte, time-ordered, in the dataset format, and with every
// fraud scenario present in the shape its channel is meant to catch.

import t from 'tap';
import { CSV_COLUMNS, SCENARIOS, simulate, toCsv } from '../../src/domain/simulate.ts';

const small = { customers: 300, merchants: 60, days: 40, rings: 2 };

t.test('the same seed makes the same file; another seed another', async (t) => {
  const a = toCsv(simulate({ ...small, seed: 7 }));
  t.equal(toCsv(simulate({ ...small, seed: 7 })), a);
  t.not(toCsv(simulate({ ...small, seed: 8 })), a);
  t.equal(a.split('\n')[0], CSV_COLUMNS.join(','), 'header is the dataset format plus scenario');
});

t.test('rows are in time order with unique ids and valid values', async (t) => {
  const rows = simulate({ ...small, seed: 11 });
  t.ok(rows.length > 5000, `${rows.length} rows`);
  t.equal(new Set(rows.map((r) => r.transaction_id)).size, rows.length, 'unique transaction ids');
  let ordered = true;
  for (let i = 1; i < rows.length; i++) if (rows[i]!.time < rows[i - 1]!.time) ordered = false;
  t.ok(ordered, 'sorted by time');
  t.ok(
    rows.every((r) => r.amount >= 0 && Number.isFinite(r.amount)),
    'amounts are non-negative numbers',
  );
  t.ok(
    rows.every((r) => (r.label === 1) === (r.scenario !== '')),
    'fraud rows, and only they, name a scenario',
  );
  const fraudRate = rows.filter((r) => r.label === 1).length / rows.length;
  t.ok(fraudRate > 0.003 && fraudRate < 0.05, `fraud rate ${fraudRate.toFixed(4)} is plausible`);
});

t.test('each scenario has its signature', async (t) => {
  const rows = simulate({ ...small, seed: 12 });
  const by = (s: string) => rows.filter((r) => r.scenario === s);
  for (const s of SCENARIOS) t.ok(by(s).length > 0, `${s} present`);

  // Card testing: small card-not-present payments, many per customer within minutes.
  const tests = by('card_testing');
  t.ok(tests.every((r) => r.amount <= 5 && r.payment_type === 'card_not_present'));
  const perCustomer = new Map<string, number[]>();
  for (const r of tests) perCustomer.set(r.customer_id, [...(perCustomer.get(r.customer_id) ?? []), r.time]);
  const burst = [...perCustomer.values()].some((times) => times.length >= 8 && Math.max(...times) - Math.min(...times) <= 24 * 3_600_000);
  t.ok(burst, 'a burst of at least 8 payments from one customer');

  // Rings: mule customers and colluding merchants that appear nowhere else, one channel per ring.
  const ring = by('fraud_ring');
  t.ok(ring.every((r) => r.customer_id.startsWith('R') && r.merchant_id.startsWith('R')));
  const channels = new Map<string, Set<string>>();
  for (const r of ring) {
    const g = r.customer_id.split('C')[0]!;
    channels.set(g, (channels.get(g) ?? new Set()).add(`${r.payment_type}:${r.location}`));
  }
  t.ok(
    [...channels.values()].every((c) => c.size === 1),
    'each ring uses one channel',
  );

  // Account takeover and large amounts are out of the customer's pattern.
  const legit = rows.filter((r) => r.label === 0);
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
  t.ok(median(by('large_amount').map((r) => r.amount)) > 5 * median(legit.map((r) => r.amount)), 'large amounts are large');
  t.ok(median(by('account_takeover').map((r) => r.amount)) > 2 * median(legit.map((r) => r.amount)), 'takeover amounts are high');
});
