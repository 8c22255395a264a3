// The history at the size the service seeds it (about 300,000 transactions) is stored and read back
// in seconds on both back ends, and read back exactly. The figures are printed as comments; the
// bound asserted is deliberately loose (ten times the measured time) so that only a pathological
// regression, such as inserting row by row, fails it on a busy machine.

import t from 'tap';
import { insertTransactions, loadTransactions, type StoredTransaction } from '../../src/storage/history-store.ts';
import { eachBackend } from './backends.ts';

const ROWS = 300_000;
const BOUND_MS = 45_000;

function rows(): StoredTransaction[] {
  const out: StoredTransaction[] = [];
  for (let i = 0; i < ROWS; i++) {
    out.push({
      transaction_id: `tx-${i.toString(36)}`,
      time: 1_700_000_000_000 + i * 52_000.25,
      amount: ((i * 7919) % 100_000) / 100,
      customer_id: `C${(i * 31) % 5000}`,
      merchant_id: `M${(i * 17) % 2000}`,
      location: ['Paris', 'Lyon', 'Nice', 'Lille'][i % 4]!,
      payment_type: ['card', 'wallet', 'transfer'][i % 3]!,
      label: i % 10 === 0 ? null : i % 97 === 0 ? 1 : 0,
      source: 'example',
    });
  }
  return out;
}

eachBackend(`${ROWS.toLocaleString('en')} transactions are stored and read back exactly, in seconds`, async (t, fx) => {
  const db = await fx.open();
  const input = rows();
  let started = performance.now();
  await insertTransactions(db, input);
  const insertMs = performance.now() - started;
  started = performance.now();
  const loaded = await loadTransactions(db);
  const loadMs = performance.now() - started;
  t.comment(`${fx.kind}: insert ${Math.round(insertMs)} ms, load ${Math.round(loadMs)} ms for ${ROWS} rows`);

  t.equal(loaded.length, ROWS);
  let mismatched = 0;
  for (let i = 0; i < ROWS; i++) {
    const a = loaded[i]!;
    const b = input[i]!;
    if (
      a.transaction_id !== b.transaction_id || a.time !== b.time || a.amount !== b.amount || a.customer_id !== b.customer_id ||
      a.merchant_id !== b.merchant_id || a.location !== b.location || a.payment_type !== b.payment_type || a.label !== b.label ||
      a.source !== b.source
    ) mismatched++;
  }
  t.equal(mismatched, 0, 'every row identical, in order');
  t.ok(insertMs + loadMs < BOUND_MS, `insert + load under ${BOUND_MS / 1000} s`);
});
