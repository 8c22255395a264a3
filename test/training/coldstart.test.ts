// Cold start: rows whose customer, merchant and channel all lack history get at least the floor,
// which is the smoothed fraud rate of such rows on validation.

import t from 'tap';
import { extractBatch } from '../../src/domain/features/extract.ts';
import type { Transaction } from '../../src/domain/transaction.ts';
import { applyColdStart, fitColdStart, isColdStart } from '../../src/training/coldstart.ts';

const tx = (time: number, c: string, m: string, label: 0 | 1): Transaction => ({
  time,
  amount: 10,
  customer_id: c,
  merchant_id: m,
  location: 'Rome',
  payment_type: `p${m}`,
  label,
});
// Rows 0–3: a new customer, merchant and channel each time; rows 4–7: customer A at merchant 1
// through channel p1:Rome again, which has 1, 2, 3 and 4 earlier transactions.
const rows = [tx(1, 'A', '1', 1), tx(2, 'B', '2', 0), tx(3, 'C', '3', 1), tx(4, 'D', '4', 0), ...[5, 6, 7, 8].map((t) => tx(t, 'A', '1', 0))];
const { features } = extractBatch(rows);

t.test('cold rows are those with no history on all three sides', async (t) => {
  t.same(
    rows.map((_, i) => isColdStart(features, i, 3)),
    [true, true, true, true, true, true, false, false],
    'cold while fewer than 3 earlier',
  );
});

t.test('floor is the smoothed cold-start fraud rate, applied as a minimum', async (t) => {
  const all = rows.map((_, i) => i);
  const labels = rows.map((r) => r.label!);
  const c = fitColdStart(features, all, labels, 3, 10);
  // cold rows: 0–5 (2 frauds of 6); base rate 2/8.
  t.ok(Math.abs(c.floor - (2 + 10 * (2 / 8)) / (6 + 10)) < 1e-12);
  const applied = applyColdStart(new Float64Array(8).fill(0.01), features, all, c);
  t.equal(applied.cold, 6);
  t.equal(applied.probabilities[0], c.floor);
  t.equal(applied.probabilities[7], 0.01, 'rows with history keep their score');
});
