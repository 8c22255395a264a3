// The history survives a restart exactly: what is inserted is read back in time order (ties in
// insertion order) with every value intact, unknown labels included; a batch is stored whole or not
// at all; service facts round-trip as JSON; and reopening the same database (the same PGlite
// directory, or the same PostgreSQL) finds everything.

import t from 'tap';
import { countTransactions, getMeta, insertTransactions, loadTransactions, setMeta, type StoredTransaction } from '../../src/storage/history-store.ts';
import { eachBackend } from './backends.ts';

/** Deterministic rows with awkward values: ties in time, fractional times, every label, odd text. */
function sampleRows(n: number, seed = 1): StoredTransaction[] {
  let state = seed;
  const rand = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const rows: StoredTransaction[] = [];
  for (let i = 0; i < n; i++) {
    rows.push({
      transaction_id: `tx-${i}`,
      // Out of order, with ties, and with fractions that need all 17 digits.
      time: 1_700_000_000_000 + Math.floor(rand() * (n / 3)) * 1000 + (i % 5 === 0 ? rand() : 0),
      amount: rand() * 10_000,
      customer_id: `C${i % 37}`,
      merchant_id: i % 11 === 0 ? `M'${i % 7},"quoted" {brace} \\ é` : `M${i % 7}`,
      location: ['Paris', 'Lyon', 'São Paulo'][i % 3]!,
      payment_type: ['card', 'wallet'][i % 2]!,
      label: i % 3 === 0 ? null : ((i % 3) - 1) as 0 | 1,
      source: i % 4 === 0 ? 'scored' : 'example',
    });
  }
  return rows;
}

/** The order loadTransactions promises: by time, then by insertion order. */
function expectedOrder(inserted: StoredTransaction[]): StoredTransaction[] {
  return inserted.map((r, i) => ({ r, i })).sort((a, b) => a.r.time - b.r.time || a.i - b.i).map((x) => x.r);
}

eachBackend('insert then load returns every row in time order with its values intact', async (t, fx) => {
  const db = await fx.open();
  t.strictSame(await loadTransactions(db), [], 'empty at first');
  t.equal(await countTransactions(db), 0);
  const first = sampleRows(500, 1);
  const second = sampleRows(300, 2).map((r) => ({ ...r, transaction_id: `second-${r.transaction_id}` }));
  await insertTransactions(db, first);
  await insertTransactions(db, second);
  await insertTransactions(db, []);
  t.equal(await countTransactions(db), 800);
  const loaded = await loadTransactions(db);
  t.strictSame(loaded, expectedOrder([...first, ...second]));
  t.ok(loaded.some((r) => r.label === null) && loaded.some((r) => r.label === 0) && loaded.some((r) => r.label === 1));
  const strict = loaded.find((r) => r.transaction_id === 'tx-15')!;
  t.equal(strict.time, first[15]!.time, 'a fractional time is exact to the last bit');
  t.equal(strict.amount, first[15]!.amount, 'an amount is exact to the last bit');
  t.equal(strict.label, null, 'an unknown label stays null');
});

eachBackend('a load spanning several pages keeps the order across page boundaries', async (t, fx) => {
  const db = await fx.open();
  // Many rows share each time so that page boundaries fall inside runs of equal times.
  const rows = Array.from({ length: 230_000 }, (_, i): StoredTransaction => ({
    transaction_id: `t${i}`, time: 1_000 + Math.floor((230_000 - i) / 7), amount: i, customer_id: 'c', merchant_id: 'm',
    location: 'l', payment_type: 'p', label: null, source: 'example',
  }));
  await insertTransactions(db, rows);
  const loaded = await loadTransactions(db);
  t.equal(loaded.length, rows.length);
  let bad = 0;
  const expected = expectedOrder(rows);
  for (let i = 0; i < loaded.length; i++) if (loaded[i]!.transaction_id !== expected[i]!.transaction_id) bad++;
  t.equal(bad, 0, 'every row in its place');
});

eachBackend('a batch is stored whole or not at all', async (t, fx) => {
  const db = await fx.open();
  await insertTransactions(db, sampleRows(10));
  const rows = sampleRows(20_001, 3);
  rows[20_000] = { ...rows[20_000]!, source: 'bogus' as 'example' };
  await t.rejects(insertTransactions(db, rows), { name: 'StorageError', code: 'query_failed' });
  t.equal(await countTransactions(db), 10, 'none of the failed batch, though its first chunks were valid');
  const nan = sampleRows(2);
  nan[1] = { ...nan[1]!, amount: Number.NaN };
  await t.rejects(insertTransactions(db, nan), { name: 'StorageError', code: 'query_failed', message: /tx-1/ });
  t.equal(await countTransactions(db), 10);
});

eachBackend('service facts round-trip as JSON', async (t, fx) => {
  const db = await fx.open();
  t.equal(await getMeta(db, 'example_dataset'), undefined, 'absent is undefined');
  const info = { rows: 300_000, fraud_rate: 0.0123, seeded_at: '2024-01-02T03:04:05.000Z', scenarios: { ring: 12 }, list: [1, 'a', null] };
  await setMeta(db, 'example_dataset', info);
  t.strictSame(await getMeta(db, 'example_dataset'), info);
  await setMeta(db, 'example_dataset', { replaced: true });
  t.strictSame(await getMeta(db, 'example_dataset'), { replaced: true }, 'a second set replaces');
  await setMeta(db, 'a string', '{"not": "parsed"}');
  t.equal(await getMeta(db, 'a string'), '{"not": "parsed"}', 'a string is stored as a JSON string');
  await setMeta(db, 'a number', 42);
  t.equal(await getMeta(db, 'a number'), 42);
  await setMeta(db, 'nothing', null);
  t.equal(await getMeta(db, 'nothing'), null);
  await db.transaction(async (tx) => {
    await setMeta(tx, 'in a transaction', true);
    t.equal(await getMeta(tx, 'in a transaction'), true);
  });
});

eachBackend('reopening the same database loses nothing', async (t, fx) => {
  const db = await fx.open();
  const rows = sampleRows(1000, 4);
  await insertTransactions(db, rows);
  await setMeta(db, 'seeded', { at: 'then' });
  await db.close();

  const reopened = await fx.open();
  t.strictSame(await loadTransactions(reopened), expectedOrder(rows));
  t.strictSame(await getMeta(reopened, 'seeded'), { at: 'then' });
  const more = sampleRows(5, 5).map((r) => ({ ...r, transaction_id: `later-${r.transaction_id}`, source: 'scored' as const, label: null }));
  await insertTransactions(reopened, more);
  await reopened.close();

  const third = await fx.open();
  t.equal(await countTransactions(third), 1005);
});
