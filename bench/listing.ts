// `npm run bench:listing [-- --quick]`: a page of the decision log (`GET /api/organizations/{id}/
// transactions`, 25 rows, newest first) with each filter, through the real data layer
// (src/storage/organization-data.ts `OrganizationData.transactions.list`), on an organization with
// a million stored transactions (100,000 with --quick) beside another organization's 200,000
// (20,000). The baseline is the same query in the same run with the planner's index scans turned
// off: what the indexes buy. Samples of both alternate; medians. Embedded database by default;
// `DATABASE_URL` set runs it on that PostgreSQL server (in a schema of its own, dropped at the end).
// Then a page of the organization's cases with each filter, on a million cases (listing-cases.ts).
// Last line: one JSON object.

import type { Db, Queryable } from '../src/storage/db.ts';
import { organizationData } from '../src/storage/organization-data.ts';
import type { ListFilters } from '../src/storage/transaction-reads.ts';
import { benchDatabase } from './database.ts';
import { benchmarkCommandLine, quick } from './harness.ts';
import { oneOf } from '../src/command-line.ts';
import { measureCasePages, type CasePagesFigures } from './listing-cases.ts';

const options = benchmarkCommandLine({
  name: 'bench:listing',
  about: "A page of an organization's decision log with each filter, against the same queries without index scans.",
  quick: '100,000 stored transactions beside 20,000 (the full run: 1,000,000 beside 200,000), 30,000 cases (1,000,000), fewer samples',
  options: { only: oneOf(['transactions', 'cases'], 'run only this part (default: both)') },
  notes: ['DATABASE_URL set: runs on that PostgreSQL server, in a schema of its own dropped at the end; unset: the embedded database.'],
});

const ROWS = quick ? 100_000 : 1_000_000;
const OTHER_ROWS = ROWS / 5;
const SAMPLES = quick ? 9 : 21;
const DAY = 86_400_000;

const bench = await benchDatabase('listing');
const { db } = bench;
const log = (line: string) => process.stderr.write(`${line}\n`);
let seconds = 0;
const results: { case: string; rows: number; ms: number; baseline_ms: number; ratio: number }[] = [];
if (options.only !== 'cases') await transactionPages();
let cases: CasePagesFigures | undefined;
if (options.only !== 'transactions') {
  cases = await measureCasePages({ db, quick, log });
  console.log(`\n| A page of 25 cases (${cases.cases.toLocaleString('en')} in the organization, ${db.kind}) | p50 | p99 (goal < 10 ms) | index scans off |`);
  console.log('|---|---|---|---|');
  for (const p of cases.pages) console.log(`| ${p.case} (${p.rows} rows) | ${p.p50_ms} ms | ${p.p99_ms} ms | ${p.baseline_ms} ms |`);
  console.log(`slowest p99: ${cases.slowest_p99_ms} ms (goal: under 10 ms)`);
}

async function transactionPages(): Promise<void> {
  process.stderr.write(`storing ${ROWS.toLocaleString('en')} + ${OTHER_ROWS.toLocaleString('en')} transactions on ${db.kind}…\n`);

  await db.query(`INSERT INTO users (id, email) VALUES ('u', 'u@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_bench', 'bench', 'test', 'u'), ('org_other', 'other', 'test', 'u')`);
  const now = Date.now();
  // Deterministic rows: 2,000 customers, 400 merchants over 90 days; 90 % approved, 7 % review, 3 %
  // block; 2 % with an outcome, a tenth of those fraud.
  const seed = async (org: string, n: number) => {
    const started = performance.now();
    for (let from = 0; from < n; from += 100_000) {
      const to = Math.min(n, from + 100_000);
      await db.query(
        `INSERT INTO transactions (organization_id, transaction_id, time_ms, amount, customer_id, merchant_id, location, payment_type, source, risk_score, risk_band, decision, mode, label, label_known_ms)
       SELECT $1, 'tx-' || i, $2 - 90 * ${DAY}::float8 * (1 - i::float8 / $4), 10 + (i * 7919) % 500, 'C' || (i * 31) % 2000, 'M' || (i * 17) % 400, 'Lisbon', 'wallet', 'scored',
              ((i * 7) % 100) / 100.0,
              CASE WHEN (i * 7) % 100 >= 97 THEN 'critical' WHEN (i * 7) % 100 >= 90 THEN 'high' WHEN (i * 7) % 100 >= 60 THEN 'medium' ELSE 'low' END,
              CASE WHEN (i * 7) % 100 >= 97 THEN 'block' WHEN (i * 7) % 100 >= 90 THEN 'review' ELSE 'approve' END,
              'balanced',
              CASE WHEN i % 50 = 0 THEN (CASE WHEN i % 500 = 0 THEN 1 ELSE 0 END) END,
              CASE WHEN i % 50 = 0 THEN $2::float8 END
       FROM generate_series($3::bigint, $5::bigint - 1) AS i`,
        [org, now, from, n, to],
      );
    }
    return (performance.now() - started) / 1000;
  };
  seconds = await seed('org_bench', ROWS);
  await seed('org_other', OTHER_ROWS);
  await db.query('ANALYZE transactions');
  process.stderr.write(`stored in ${seconds.toFixed(1)} s\n`);

  const mid = now - 45 * DAY;
  const deep = `tx-${Math.floor(ROWS / 2)}`;
  const cases: [string, ListFilters, string?][] = [
    ['newest 25, no filter', {}],
    ['decision=block', { decision: 'block' }],
    ['decision=review', { decision: 'review' }],
    ['risk_band=critical', { risk_band: 'critical' }],
    ['outcome=fraud', { outcome: 'fraud' }],
    ['outcome=none', { outcome: 'none' }],
    ['customer_id', { customer_id: 'C403' }],
    ['merchant_id', { merchant_id: 'M321' }],
    ['customer_id + decision=review', { customer_id: 'C403', decision: 'review' }],
    ['from/to: one day 45 days ago', { from: mid, to: mid + DAY }],
    ['starting_after, half-way down', {}, deep],
  ];

  /** A data layer whose queries run with index scans off (the baseline), in one transaction. */
  async function withoutIndexes<R>(fn: (data: ReturnType<typeof organizationData>) => Promise<R>): Promise<R> {
    return db.transaction(async (tx: Queryable) => {
      await tx.query('SET LOCAL enable_indexscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      await tx.query('SET LOCAL enable_indexonlyscan = off');
      return fn(organizationData({ query: tx.query.bind(tx) } as unknown as Db, 'org_bench'));
    });
  }

  const data = organizationData(db, 'org_bench');
  const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;
  console.log(`| A page of 25 (${ROWS.toLocaleString('en')} transactions in the organization, ${db.kind}) | indexed | index scans off | ratio |`);
  console.log('|---|---|---|---|');
  for (const [name, filters, after] of cases) {
    const ours: number[] = [];
    const base: number[] = [];
    let rows = 0;
    for (let i = 0; i < SAMPLES; i++) {
      let t = performance.now();
      const page = await data.transactions.list(filters, 25, after);
      ours.push(performance.now() - t);
      rows = page!.rows.length;
      // The baseline scans the table: a few samples are enough to see what it costs.
      if (i < (quick ? 3 : 5)) {
        t = performance.now();
        const check = await withoutIndexes((d) => d.transactions.list(filters, 25, after));
        base.push(performance.now() - t);
        if (JSON.stringify(check!.rows.map((r) => r.seq)) !== JSON.stringify(page!.rows.map((r) => r.seq)))
          throw new Error(`${name}: the baseline found other rows`);
      }
    }
    const r = {
      case: name,
      rows,
      ms: Math.round(median(ours) * 100) / 100,
      baseline_ms: Math.round(median(base) * 10) / 10,
      ratio: Math.round((median(base) / median(ours)) * 10) / 10,
    };
    results.push(r);
    console.log(`| ${name} (${rows} rows) | ${r.ms} ms | ${r.baseline_ms} ms | ${r.ratio}× |`);
  }
}
await bench.close();
const worst = results.length ? Math.max(...results.map((r) => r.ms)) : null;
if (worst !== null) console.log(`\nslowest indexed page: ${worst} ms (goal: milliseconds with a million stored transactions)`);
console.log(
  JSON.stringify({
    benchmark: 'listing',
    quick,
    database: db.kind,
    transactions: ROWS,
    other_organization: OTHER_ROWS,
    seed_seconds: Math.round(seconds * 10) / 10,
    pages: results,
    slowest_ms: worst,
    cases,
    goals: cases ? { case_page_p99_under_10ms: cases.slowest_p99_ms < 10 } : undefined,
  }),
);
process.exit(0);
