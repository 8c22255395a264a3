// The organization-scoped data layer on both back ends: two organizations that use the same
// transaction ids, customers and merchants, and every read method of one organization's
// `OrganizationData` returns its own rows only, whatever it is asked; outcomes set through one never
// touch the other's; ids are unique per organization and inserts keep what is already there; the
// history load returns rows in time order with their labels.

import t from 'tap';
import type { Db } from '../../src/storage/db.ts';
import { organizationData, type NewTransaction } from '../../src/storage/live-store.ts';
import { eachBackend } from './backends.ts';

async function twoOrganizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
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
  const stored = await a.insert([0, 1, 2, 3].map((i) => row(i)));
  t.same([...stored.keys()].sort(), ['t-0', 't-1', 't-2', 't-3']);
  // B uses the same ids, customers and merchant, with other amounts.
  await b.insert([0, 1, 2, 3, 4, 5].map((i) => row(i, { amount: 1000 + i, response: `{"b":${i}}` })));

  t.equal(await a.count(), 4);
  t.equal(await b.count(), 6);
  t.equal((await a.get('t-1'))!.amount, 11);
  t.equal(await a.get('t-5'), undefined, "B's t-5 is not A's");
  t.equal(await a.response('t-2'), '{"i":2}');
  t.equal(await a.response('t-5'), undefined);
  const history: number[] = [];
  await a.forEachHistoryPage((rows) => history.push(...rows.map((r) => r.amount)));
  t.same(history, [10, 11, 12, 13], "A's history, in time order");
  const all = (await a.list({}, 100))!;
  t.same(all.rows.map((r) => r.amount), [13, 12, 11, 10], 'newest first, A only');
  t.same((await a.list({ customer_id: 'c-1' }, 100))!.rows.map((r) => r.amount), [13, 11]);
  t.same((await a.list({ merchant_id: 'm-1', decision: 'review' }, 100))!.rows.map((r) => r.amount), [13, 11]);
  t.same((await a.list({}, 100, 't-2'))!.rows.map((r) => r.transaction_id), ['t-1', 't-0'], 'a cursor is looked up in A');
  t.equal(await a.list({}, 100, 't-5'), undefined, "B's id is no cursor for A");

  // Outcomes: A's report on t-1 changes A's t-1 only; an id only B has is not found for A.
  const results = await a.applyOutcomes([
    { transaction_id: 't-1', label: 1, source: 'chargeback', reported_at_ms: 1_800_000_000_000, reported_by: 'key:k1' },
    { transaction_id: 't-5', label: 1, source: 'chargeback', reported_at_ms: 1_800_000_000_000, reported_by: 'key:k1' },
    { transaction_id: 't-2', label: 0, source: 'review', reported_at_ms: 1, reported_by: 'u1' },
  ]);
  t.same(results.map((r) => r.status), ['applied', 'not_found', 'invalid']);
  t.equal((await a.get('t-1'))!.label, 1);
  t.equal((await b.get('t-1'))!.label, null, "B's t-1 is untouched");
  const changesA = await a.outcomeChanges([(await a.get('t-1'))!.seq]);
  t.equal([...changesA.values()].flat().length, 1);
  const changesB = await b.outcomeChanges([(await a.get('t-1'))!.seq]);
  t.equal(changesB.size, 0, "B asking for A's row's changes gets nothing");
  t.same((await a.list({ outcome: 'fraud' }, 100))!.rows.map((r) => r.transaction_id), ['t-1']);
  t.same((await b.list({ outcome: 'fraud' }, 100))!.rows, []);
  const weeksA = await a.weeklyAggregates(0, 2e12, 2e12, [0.5]);
  const weeksB = await b.weeklyAggregates(0, 2e12, 2e12, [0.5]);
  t.same([weeksA[0]!.transactions, weeksB[0]!.transactions], [4, 6]);
  t.same(await b.labelledScores(0, 2e12, 2e12), []);
  t.same((await a.labelledScores(0, 2e12, 2e12)).map((r) => r.label), [1]);
});

eachBackend('ids are unique per organization; an insert keeps what is there', async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  await a.insert([row(0)]);
  const again = await a.insert([row(0, { amount: 999 }), row(1)]);
  t.same([...again.keys()], ['t-1'], 'only the new id was stored');
  t.equal((await a.get('t-0'))!.amount, 10, 'the first t-0 stands');
  await t.rejects(db.query(`INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source) VALUES ('org_a', 't-0', 0, 1, 'c', 'm', 'l', 'p', 'scored')`), 'the database refuses a duplicate');
  const labelled = await a.insert([row(5, { source: 'import', decision: null, response: null, label: 1, label_known_ms: 123, outcome_source: 'import', outcome_reported_by: 'import:job_1' })]);
  t.same([...labelled.keys()], ['t-5']);
  const pages: { label: 0 | 1 | null; label_known_ms: number | null }[] = [];
  await a.forEachHistoryPage((rows) => pages.push(...rows));
  t.same(pages.map((r) => [r.label, r.label_known_ms]), [[null, null], [null, null], [1, 123]]);
});
