// The data-protection statements on both back ends, with two organizations holding the same
// transaction ids and the same customer: an erasure in one deletes that customer's rows there
// only, takes its transactions out of the merchant's totals exactly (counts, sums, the newest time),
// and leaves every row of the other organization as it was; a retention sweep deletes the rows of
// its organization older than the cut-off only, a batch at a time; the erasures and the audit of
// one organization are never read through the other's.

import type { Db } from '../../src/storage/db.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { claimErasure } from '../../src/storage/data-protection.ts';
import { eachBackend } from '../support/backends.ts';

const T = 1_790_000_000_000;
const row = (i: number, customer: string, extra: Partial<NewTransaction> = {}): NewTransaction => ({
  transaction_id: `t-${i}`,
  time: T + i * 60_000,
  amount: 10 + i,
  customer_id: customer,
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'wallet',
  source: 'scored',
  decision: { risk_score: 0.1, risk_band: 'low', decision: 'approve', mode: 'balanced' },
  response: `{"i":${i}}`,
  ...extra,
});

/** Every row of the organization in the tables that name customers, as text. */
async function rowsOf(db: Db, org: string): Promise<string[]> {
  const out: string[] = [];
  for (const table of ['transactions', 'entity_totals', 'customer_uses', 'outcome_changes']) {
    const rows = await db.query<{ r: string }>(`SELECT t::text AS r FROM ${table} t WHERE organization_id = $1 ORDER BY 1`, [org]);
    out.push(...rows.map((x) => `${table}: ${x.r}`));
  }
  return out;
}

eachBackend("an erasure and a sweep touch one organization's rows only", async (t, fx) => {
  const db = await fx.open();
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
  const a = organizationData(db, 'org_a');
  const b = organizationData(db, 'org_b');
  // The same payments in both: the customer `gone` pays last.
  const payments = [row(0, 'kept'), row(1, 'gone'), row(2, 'kept'), row(3, 'gone')];
  await a.transactions.insert(payments);
  await b.transactions.insert(payments);
  const before = await rowsOf(db, 'org_b');

  await a.dataProtection.requestErasure({ id: 'er_1', customerId: 'gone', customerHash: 'h', keepLists: [], by: 'u1', at: T });
  t.same(await b.dataProtection.erasures(10), { rows: [], hasMore: false }, "not in the other organization's erasures");
  const claimed = await claimErasure(db, T + 1, 60_000);
  t.same(claimed, { id: 'er_1', organization_id: 'org_a' });
  t.equal(await claimErasure(db, T + 2, 60_000), undefined, 'claimed once');
  t.equal(await b.dataProtection.erase('er_1', T + 3), undefined, 'the other organization cannot run it');
  const done = await a.dataProtection.erase('er_1', T + 3);
  t.match(done, { status: 'done', counts: { transactions: 2, totals: 3, uses: 3 } });
  t.equal(await a.dataProtection.erase('er_1', T + 4), undefined, 'run once');

  const merchant = await db.query<{ transactions: number; amount_sum: number; last_ms: number }>(
    `SELECT transactions::float8 AS transactions, amount_sum, last_ms FROM entity_totals WHERE organization_id = 'org_a' AND kind = 'm' AND key = 'm-1'`,
  );
  t.same(merchant, [{ transactions: 2, amount_sum: 22, last_ms: T + 2 * 60_000 }], "the merchant's totals as if only `kept` had paid");
  t.notOk(
    (await rowsOf(db, 'org_a')).some((r) => r.includes('gone')),
    'nothing of the customer left',
  );
  t.same(await rowsOf(db, 'org_b'), before, 'the other organization: every row as it was');
  t.same((await b.dataProtection.audit(10)).rows, [], "nor is it in the other organization's audit");

  // Retention: org_b's rows before the cut-off, two at a time; org_a untouched.
  const aRows = await rowsOf(db, 'org_a');
  t.same(await b.dataProtection.sweepTransactions(T + 3 * 60_000, 2), { transactions: 2, outcome_changes: 0, case_transactions: 0 });
  t.same(await b.dataProtection.sweepTransactions(T + 3 * 60_000, 2), { transactions: 1, outcome_changes: 0, case_transactions: 0 });
  const left = await db.query<{ id: string }>(`SELECT transaction_id AS id FROM transactions WHERE organization_id = 'org_b'`);
  t.same(left, [{ id: 't-3' }], 'exactly what is older than the cut-off');
  t.same(await rowsOf(db, 'org_a'), aRows, 'the other organization untouched');
});
