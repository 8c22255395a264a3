// The organization-scoped data layer on both back ends: two organizations that use the same
// transaction ids, customers and merchants, and every read of one organization's `OrganizationData`
// (its transactions, history, logged decisions, outcomes, ring windows, performance, the imported
// rows a challenger's backtest scores) returns its own rows only, whatever it is asked; outcomes
// set through one never touch the other's; ids are
// unique per organization and inserts keep what is already there; the history load returns rows in
// time order with their labels, and the per-entity totals the database keeps follow inserts and
// outcome changes. And only OrganizationData binds an organization to the statements
// (src/storage/organization-scope.ts), the one scope every part of it is made with.

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';
import type { Db } from '../../src/storage/db.ts';
import type { EntityTotals } from '../../src/domain/history/horizon.ts';
import { pageRows, useRows, type HistoryLoader } from '../../src/storage/history-load.ts';
import type { HistoryRow, NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData, type OrganizationData } from '../../src/storage/organization-data.ts';
import { eachBackend } from '../support/backends.ts';

async function twoOrganizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
}

/** Everything `history.load` hands over, as plain lists. */
async function loaded(data: OrganizationData, now = 0) {
  const got = { floor: Number.NaN, uses: [] as unknown[], transactions: [] as HistoryRow[], labels: [] as unknown[], totals: [] as EntityTotals[] };
  const into: HistoryLoader = {
    start: (floor) => void (got.floor = floor),
    uses: (page) => void got.uses.push(...useRows(page)),
    transactions: (page) => void got.transactions.push(...pageRows(page)),
    labels: (rows) => void got.labels.push(...rows),
    finish: (totals) => void got.totals.push(...(totals ?? [])),
    restore: () => false,
  };
  const { seen } = await data.history.load(now, into);
  return { ...got, seen };
}

const row = (i: number, extra: Partial<NewTransaction> = {}): NewTransaction => ({
  transaction_id: `t-${i}`,
  time: 1_700_000_000_000 + i * 60_000,
  amount: 10 + i,
  customer_id: `c-${i % 2}`,
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'wallet',
  source: 'scored',
  decision: { risk_score: i / 10, risk_band: 'low', decision: i % 2 ? 'review' : 'approve', mode: 'balanced' },
  response: `{"i":${i}}`,
  ...extra,
});

eachBackend('every read of an organization returns its own rows only', async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  const b = organizationData(db, 'org_b');
  const stored = await a.transactions.insert([0, 1, 2, 3].map((i) => row(i)));
  t.same([...stored.keys()].sort(), ['t-0', 't-1', 't-2', 't-3']);
  // B uses the same ids, customers and merchant, with other amounts.
  await b.transactions.insert([0, 1, 2, 3, 4, 5].map((i) => row(i, { amount: 1000 + i, response: `{"b":${i}}` })));

  t.equal((await loaded(a)).transactions.length, 4);
  t.equal((await loaded(b)).transactions.length, 6);
  t.equal((await a.transactions.get('t-1'))!.amount, 11);
  t.equal(await a.transactions.get('t-5'), undefined, "B's t-5 is not A's");
  t.equal(await a.transactions.response('t-2'), '{"i":2}');
  t.equal(await a.transactions.response('t-5'), undefined);
  const loadA = await loaded(a);
  t.same(
    loadA.transactions.map((r) => r.amount),
    [10, 11, 12, 13],
    "A's history, in time order",
  );
  t.same(
    loadA.totals.map((e) => [e.kind, e.key, e.transactions, e.amountSum]),
    [
      ['customer', 'c-0', 2, 22],
      ['customer', 'c-1', 2, 24],
      ['channel', 'wallet:Lisbon', 4, 46],
      ['merchant', 'm-1', 4, 46],
    ],
    "A's totals",
  );
  t.equal(loadA.uses.length, 6, "A's customers' first uses");
  t.same(
    (await a.transactions.earlier('customer', { customer_id: 'c-1', merchant_id: 'm-1', location: 'Lisbon', payment_type: 'wallet' }, 2e12, 10)).map(
      (r) => r.amount,
    ),
    [13, 11],
    "A's earlier transactions",
  );
  t.same(
    (await a.transactions.earlier('channel', { customer_id: 'c-1', merchant_id: 'm-1', location: 'Lisbon', payment_type: 'wallet' }, 2e12, 2)).map(
      (r) => r.amount,
    ),
    [13, 12],
  );
  const all = (await a.transactions.list({}, 100))!;
  t.same(
    all.rows.map((r) => r.amount),
    [13, 12, 11, 10],
    'newest first, A only',
  );
  t.same(
    (await a.transactions.list({ customer_id: 'c-1' }, 100))!.rows.map((r) => r.amount),
    [13, 11],
  );
  t.same(
    (await a.transactions.list({ merchant_id: 'm-1', decision: 'review' }, 100))!.rows.map((r) => r.amount),
    [13, 11],
  );
  t.same(
    (await a.transactions.list({}, 100, 't-2'))!.rows.map((r) => r.transaction_id),
    ['t-1', 't-0'],
    'a cursor is looked up in A',
  );
  // An entity's summary: A's customer c-1 (t-1, t-3), not B's c-1 (t-1, t-3, t-5).
  const entityA = await a.transactions.entity('customer', 'c-1');
  t.same(
    [entityA!.totals.transactions, entityA!.totals.amount_sum, entityA!.recent.transactions, entityA!.recent.reviewed],
    [2, 24, 2, 2],
    "A's customer, from A's rows",
  );
  t.same(
    entityA!.counterparties.map((c) => [c.id, c.transactions]),
    [['m-1', 2]],
  );
  t.same((await b.transactions.entity('customer', 'c-1'))!.totals.amount_sum, 1001 + 1003 + 1005, "B's customer of the same id is B's");
  t.equal(await a.transactions.entity('merchant', 'm-none'), undefined, 'an entity the organization never saw');
  const oldest = await a.transactions.list({ order: 'oldest' }, 2);
  t.same([oldest!.rows.map((r) => r.transaction_id), oldest!.hasMore], [['t-0', 't-1'], true], 'oldest first');
  t.same(
    (await a.transactions.list({ order: 'oldest' }, 2, 't-1'))!.rows.map((r) => r.transaction_id),
    ['t-2', 't-3'],
    'and its next page',
  );
  t.equal(await a.transactions.list({}, 100, 't-5'), undefined, "B's id is no cursor for A");
  // Logged decisions as rules read them back, and a ring window's rows: A's only.
  t.equal((await a.decisions.get('t-2'))!.amount, 12);
  t.equal(await a.decisions.get('t-5'), undefined, "B's t-5 is no logged decision of A's");
  t.same([await a.decisions.count(0, 2e12), await b.decisions.count(0, 2e12)], [4, 6]);
  t.same(
    (await a.decisions.page({ from: 0, to: 2e12, after: undefined, withFeatures: false })).map((r) => r.amount),
    [10, 11, 12, 13],
  );
  const hour = [1_700_000_000_000, 1_700_000_000_000 + 3_600_000] as const;
  t.same([(await a.rings.window(...hour)).count, (await b.rings.window(...hour)).count], [4, 6], "each window reads its own organization's rows");

  // Outcomes: A's report on t-1 changes A's t-1 only; an id only B has is not found for A.
  const { results } = await a.outcomes.apply([
    { transaction_id: 't-1', label: 1, source: 'chargeback', reported_at_ms: 1_800_000_000_000, reported_by: 'key:k1' },
    { transaction_id: 't-5', label: 1, source: 'chargeback', reported_at_ms: 1_800_000_000_000, reported_by: 'key:k1' },
    { transaction_id: 't-2', label: 0, source: 'review', reported_at_ms: 1, reported_by: 'u1' },
  ]);
  t.same(
    results.map((r) => r.status),
    ['applied', 'not_found', 'invalid'],
  );
  t.equal((await a.transactions.get('t-1'))!.label, 1);
  t.equal((await b.transactions.get('t-1'))!.label, null, "B's t-1 is untouched");
  const changesA = await a.outcomes.changes([(await a.transactions.get('t-1'))!.seq]);
  t.equal([...changesA.values()].flat().length, 1);
  const changesB = await b.outcomes.changes([(await a.transactions.get('t-1'))!.seq]);
  t.equal(changesB.size, 0, "B asking for A's row's changes gets nothing");
  t.same(
    (await a.transactions.list({ outcome: 'fraud' }, 100))!.rows.map((r) => r.transaction_id),
    ['t-1'],
  );
  t.same((await b.transactions.list({ outcome: 'fraud' }, 100))!.rows, []);
  const weeksA = await a.performance.weekly(0, 2e12, 2e12, [0.5]);
  const weeksB = await b.performance.weekly(0, 2e12, 2e12, [0.5]);
  t.same([weeksA[0]!.transactions, weeksB[0]!.transactions], [4, 6]);
  t.same(await b.performance.labelledScores(0, 2e12, 2e12), []);
  t.same(
    (await a.performance.labelledScores(0, 2e12, 2e12)).map((r) => r.label),
    [1],
  );
});

eachBackend('ids are unique per organization; an insert keeps what is there', async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  await a.transactions.insert([row(0)]);
  const again = await a.transactions.insert([row(0, { amount: 999 }), row(1)]);
  t.same([...again.keys()], ['t-1'], 'only the new id was stored');
  t.equal((await a.transactions.get('t-0'))!.amount, 10, 'the first t-0 stands');
  await t.rejects(
    db.query(
      `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source) VALUES ('org_a', 't-0', 0, 1, 'c', 'm', 'l', 'p', 'scored')`,
    ),
    'the database refuses a duplicate',
  );
  const labelled = await a.transactions.insert([
    row(5, { source: 'import', decision: null, response: null, label: 1, label_known_ms: 123, outcome_source: 'import', outcome_reported_by: 'import:job_1' }),
  ]);
  t.same([...labelled.keys()], ['t-5']);
  t.same(
    (await loaded(a)).transactions.map((r) => [r.label, r.label_known_ms]),
    [
      [null, null],
      [null, null],
      [1, 123],
    ],
  );
});

eachBackend("the database keeps each entity's totals and first uses as transactions are stored and outcomes change", async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  const DAY = 86_400_000;
  const T = 1_700_000_000_000;
  // c-0 pays m-1 on days 0, 10 and 50 (labelled fraud, known a week later, on the first two), and
  // m-2 on day 50 from another place; B's rows never count for A.
  await a.transactions.insert([
    row(0, { time: T, amount: 3, label: 1, label_known_ms: T + 7 * DAY, source: 'import' }),
    row(2, { time: T + 10 * DAY, amount: 4, label: 1, label_known_ms: T + 17 * DAY, source: 'import' }),
  ]);
  await a.transactions.insert([row(4, { time: T + 50 * DAY, amount: 5 }), row(6, { time: T + 50 * DAY, amount: 6, merchant_id: 'm-2', location: 'Porto' })]);
  await organizationData(db, 'org_b').transactions.insert([row(0, { amount: 100 })]);
  const customer = async () => (await loaded(a, T + 50 * DAY)).totals.find((e) => e.kind === 'customer' && e.key === 'c-0')!;
  t.match(await customer(), { transactions: 4, amountSum: 18, amountSquares: 86, last: T + 50 * DAY, labels: 2, frauds: 2, firstFraudKnown: T + 7 * DAY });
  const load = await loaded(a, T + 50 * DAY);
  t.equal(load.floor, T + 50 * DAY - 31 * DAY, 'the floor: 31 days before the newest');
  t.same(
    load.transactions.map((r) => r.transaction_id),
    ['t-4', 't-6'],
    'only the transactions from the floor on',
  );
  t.same(load.labels, [], 'no outcome known from the floor on of an earlier transaction');
  t.same(
    (load.uses as { customer_id: string; kind: string; key: string; first: number }[]).map((u) => [u.kind, u.key, (u.first - T) / DAY]),
    [
      ['channel', 'wallet:Lisbon', 0],
      ['channel', 'wallet:Porto', 50],
      ['location', 'Lisbon', 0],
      ['location', 'Porto', 50],
      ['merchant', 'm-1', 0],
      ['merchant', 'm-2', 50],
    ],
  );

  // The earliest fraud withdrawn: the next one is the earliest; then a fraud reported on day 45.
  await a.outcomes.apply([{ transaction_id: 't-0', label: 0, source: 'review', reported_at_ms: T + 40 * DAY, reported_by: 'u1' }]);
  t.match(await customer(), { labels: 2, frauds: 1, firstFraudKnown: T + 17 * DAY });
  await a.outcomes.apply([{ transaction_id: 't-4', label: 1, source: 'chargeback', reported_at_ms: T + 51 * DAY, reported_by: 'u1' }]);
  t.match(await customer(), { labels: 3, frauds: 2, firstFraudKnown: T + 17 * DAY });
  const after = await loaded(a, T + 50 * DAY);
  t.same(
    after.labels.map((l) => (l as { known: number }).known),
    [T + 40 * DAY],
    "t-0's outcome, known after the floor, comes as a label",
  );
  const merchant = after.totals.find((e) => e.kind === 'merchant' && e.key === 'm-1')!;
  t.match(merchant, { transactions: 3, labels: 3, frauds: 2 });
  // The feed carries what an outcome change replaced.
  const [change] = await db.query<{ from_label: number; from_known_ms: number }>(
    "SELECT from_label, from_known_ms FROM outcome_changes WHERE organization_id = 'org_a' ORDER BY id LIMIT 1",
  );
  t.same(change, { from_label: 1, from_known_ms: T + 7 * DAY });
});

eachBackend("a challenger's backtest reads its own organization's imported rows with features only", async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const [a, b] = ['org_a', 'org_b'].map((id) => organizationData(db, id)) as [OrganizationData, OrganizationData];
  const T = 1_700_000_000_000;
  const f = (x: number) => Float32Array.of(x, x + 0.5);
  const imported = (i: number, extra: Partial<NewTransaction> = {}) =>
    row(i, { source: 'import', decision: null, response: null, time: T + i * 60_000, features: f(i), ...extra });
  // A: three imported with features (one a fraud known late), one without, one of another width,
  // one scored, one too recent; B: the same ids, imported with features.
  // An import stores its rows without features; the features pass stores theirs afterwards.
  const store = async (data: OrganizationData, rows: NewTransaction[]) => {
    const seqs = await data.transactions.insert(rows.map((r) => (r.source === 'import' ? { ...r, features: null } : r)));
    for (const r of rows)
      if (r.source === 'import' && r.features)
        await data.importedFeatures.store({
          seqs: [seqs.get(r.transaction_id)!],
          bytes: new Uint8Array(r.features.buffer, r.features.byteOffset, r.features.byteLength),
        });
  };
  await store(a, [
    imported(0, { label: 1, label_known_ms: T }),
    imported(1, { label: 1, label_known_ms: T + 99 * 60_000 }),
    imported(2),
    imported(3, { features: null }),
    imported(4, { features: Float32Array.of(1) }),
    row(5, { time: T + 5 * 60_000, features: f(5) }),
    imported(9),
  ]);
  await store(
    b,
    [0, 1, 2, 3, 4, 5, 9].map((i) => imported(i, { amount: 1000 + i, label: 1, label_known_ms: T })),
  );
  const read = (data: OrganizationData, rows: number, before?: [number, number]) =>
    data.importedFeatures.backtest({ to: T + 9 * 60_000, knownBy: T + 60 * 60_000, width: 8, rows, before });
  const page = await read(a, 10);
  t.same(
    page.map((r) => [r.amount, r.label, [...new Float32Array(Uint8Array.from(r.features).buffer)]]),
    [
      [12, 0, [2, 2.5]],
      [11, 0, [1, 1.5]],
      [10, 1, [0, 0.5]],
    ],
    "A's imported rows with features of the width asked, older than `to`, newest first; a fraud known after `knownBy` counts as legitimate",
  );
  const first = (await read(a, 1))[0]!;
  t.same(
    (await read(a, 5, [first.time_ms, first.seq])).map((r) => r.amount),
    [11, 10],
    'the next page',
  );
  t.same(
    (await read(b, 10)).map((r) => [r.amount, r.label]),
    [1005, 1004, 1003, 1002, 1001, 1000].map((amount) => [amount, 1]),
    "B's rows only, with the features B's import stored",
  );
});

// The scope is bound in one place: only OrganizationData makes an OrganizationScope, and the modules
// that hold its statements take one from it (type only), so no caller reaches them with an
// organization id of its own choosing.
t.test('only OrganizationData binds an organization', async (t) => {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const scope = join(root, 'src/storage/organization-scope.ts');
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.name === 'node_modules' ? [] : e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  const uses: string[] = [];
  for (const file of ['src', 'tools', 'bench', 'test'].flatMap((d) => files(join(root, d)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022);
    for (const s of source.statements) {
      if ((!ts.isImportDeclaration(s) && !ts.isExportDeclaration(s)) || !s.moduleSpecifier || !ts.isStringLiteral(s.moduleSpecifier)) continue;
      if (resolve(dirname(file), s.moduleSpecifier.text) !== scope) continue;
      const clause = ts.isImportDeclaration(s) ? s.importClause : undefined;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.every((e) => e.isTypeOnly)));
      if (!typeOnly) uses.push(relative(root, file));
    }
  }
  t.same(uses, ['src/storage/organization-data.ts'], 'files that import more than the OrganizationScope type');
});
