// A history's load reads the transactions and first uses as the database stores them, on both back
// ends (one binary COPY each, cut into pages: streamed on PostgreSQL; on the embedded database in
// slices of about 50,000 by time, each in one piece): 100,003 transactions over three slices and
// eleven or more pages, ties in time in the order stored, every kind of label, key fields' values
// on some rows, strings with quotes, backslashes and characters beyond ASCII, and an organization
// id that needs quoting in a statement that takes no parameters. Each is held to a plain SELECT of
// the same rows.

import t from 'tap';
import { pageRows, timeSlices, useRows, type HistoryLoader } from '../../src/storage/history-load.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { eachBackend } from '../support/backends.ts';

const ORG = "org_o'x\\é";
const N = 100_003;
const BASE = 1_700_000_000_000;

eachBackend('a load reads every transaction and first use as stored, in time order', async (t, fx) => {
  const db = await fx.open();
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ($1, 'A', 'test', 'u1'), ('org_other', 'B', 'test', 'u1')`, [ORG]);
  // Two rows a second (ties in time, stored in id order); every 1,000th customer's id needs quoting.
  const insert = (org: string, n: number) =>
    db.query(
      `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, label, label_known_ms, field_keys)
       SELECT $1, 'p-' || i, $2::float8 + (i / 2) * 1000, i * 1.25,
              CASE WHEN i % 1000 = 7 THEN 'o''Brien\\ 🙂 ' || (i % 5) ELSE 'c-' || (i % 97) END,
              'm-' || (i % 13), CASE WHEN i % 2 = 0 THEN 'Lisboa' ELSE 'São Paulo' END, 'card',
              'import', CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN 0 ELSE 1 END,
              CASE WHEN i % 3 = 0 THEN NULL ELSE $2::float8 + i * 1000 + 5 END,
              CASE WHEN i % 10 = 0 THEN ARRAY['device=d' || (i % 7), 'bin=4' || (i % 3)] END
       FROM generate_series(0, $3::int - 1) AS i`,
      [org, BASE, n],
    );
  await insert(ORG, N);
  await insert('org_other', 50);

  const got = { transactions: [] as ReturnType<typeof pageRows>, uses: [] as ReturnType<typeof useRows>, pages: 0 };
  const into: HistoryLoader = {
    start: () => {},
    uses: (page) => void got.uses.push(...useRows(page)),
    transactions: (page) => {
      got.pages++;
      got.transactions.push(...pageRows(page));
    },
    labels: () => {},
    finish: () => {},
    restore: () => false,
  };
  await organizationData(db, ORG).history.load(BASE + N * 1000, into);

  const stored = await db.query<{
    transaction_id: string;
    time_ms: number;
    amount: number;
    customer_id: string;
    merchant_id: string;
    location: string;
    payment_type: string;
    label: number | null;
    label_known_ms: number | null;
    field_keys: string[] | null;
  }>(
    `SELECT transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, label, label_known_ms, field_keys
     FROM transactions WHERE organization_id = $1 ORDER BY time_ms, seq`,
    [ORG],
  );
  t.equal(got.transactions.length, N, 'every transaction, none of the other organization');
  t.ok(got.pages >= 11, `in pages (${got.pages})`);
  const expected = stored.map((r) => ({
    transaction_id: r.transaction_id,
    time: r.time_ms,
    amount: r.amount,
    customer_id: r.customer_id,
    merchant_id: r.merchant_id,
    location: r.location,
    payment_type: r.payment_type,
    label: r.label as 0 | 1 | null,
    label_known_ms: r.label === null ? null : r.label_known_ms,
    keys: r.field_keys,
  }));
  const differing = got.transactions.findIndex((r, i) => JSON.stringify(r) !== JSON.stringify(expected[i]));
  t.equal(
    differing,
    -1,
    differing < 0 ? 'each as stored, in time order then the order stored' : `row ${differing}: ${JSON.stringify(got.transactions[differing])}`,
  );
  t.same(got.transactions[7]?.customer_id, "o'Brien\\ 🙂 2", 'a string with a quote, a backslash and an emoji');
  t.same(got.transactions[10]?.keys, ['device=d3', 'bin=41'], "a row's key values");
  t.equal(got.transactions[11]?.keys, null, 'a row without');

  const uses = await db.query<{ customer_id: string; kind: string; key: string; first_ms: number }>(
    `SELECT customer_id, kind, key, first_ms FROM customer_uses WHERE organization_id = $1 ORDER BY customer_id, kind, key`,
    [ORG],
  );
  const kinds: Record<string, string> = { m: 'merchant', h: 'channel', l: 'location' };
  t.ok(uses.length > 97 * 3, `first uses kept by the database (${uses.length})`);
  t.same(
    got.uses,
    uses.map((u) => ({ customer_id: u.customer_id, kind: kinds[u.kind.trim()], key: u.key, first: u.first_ms })),
    'every first use, as stored',
  );
});

eachBackend('a load whose history fails midway leaves every connection to the next statements', async (t, fx) => {
  const db = await fx.open();
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  await db.query(
    `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source)
     SELECT 'org_a', 'p-' || i, $1::float8 + i, 1, 'c-' || (i % 50), 'm', 'x', 'card', 'import' FROM generate_series(0, 29999) AS i`,
    [BASE],
  );
  let pages = 0;
  const failing: HistoryLoader = {
    start: () => {},
    uses: () => {},
    transactions: () => {
      if (++pages === 2) throw new Error('the history refused a page');
    },
    labels: () => {},
    finish: () => {},
    restore: () => false,
  };
  const data = organizationData(db, 'org_a');
  await t.rejects(data.history.load(BASE + 40_000, failing), /the history refused a page/, "the history's error, as it was");
  // More statements at once than the pool has connections: one left in the middle of its COPY would
  // refuse them.
  const counts = await Promise.all(
    Array.from(
      { length: 12 },
      async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions WHERE organization_id = 'org_a'`))[0]?.n,
    ),
  );
  t.same(counts, Array(12).fill(30_000), 'the next statements are answered, on every connection');
  pages = 10;
  await data.history.load(BASE + 40_000, failing);
  t.equal(pages, 13, 'and a load after it reads every page');
});

t.test('slices of a load on the embedded database: the window cut into equal spans that cover it, the last open', async (t) => {
  t.same(timeSlices(1000, 2000, 50_000), [[1000, undefined]], 'one slice for at most 50,000');
  t.same(timeSlices(1000, null, 500_000), [[1000, undefined]], 'one without a newest time');
  t.same(timeSlices(1000, 1000, 500_000), [[1000, undefined]], 'one when every transaction is at the floor');
  t.same(
    timeSlices(1000, 4000, 150_000),
    [
      [1000, 2000],
      [2000, 3000],
      [3000, undefined],
    ],
    'three spans, each starting where the last ended',
  );
});
