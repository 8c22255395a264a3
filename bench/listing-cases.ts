// bench:listing's cases part: a page of an organization's cases (`GET /api/organizations/{id}/
// cases`, 25, the soonest due first) with each filter analysts use, through the real data layer
// (`OrganizationData.cases.list`), on an organization with a million cases (30,000 with --quick)
// beside another organization's fifth as many. Cases are seeded in SQL, deterministically: five
// inboxes, twenty analysts, most cases closed as they are in a team's second year. Each filter is
// sampled many times for its p99 (goal: under 10 ms); the baseline is the same page with the
// planner's index scans off, a few samples, which must find the same cases.

import type { Db, Queryable } from '../src/storage/db.ts';
import { organizationData } from '../src/storage/organization-data.ts';
import type { CaseFilters } from '../src/storage/cases-store.ts';

const DAY = 86_400_000;

export interface CasePagesFigures {
  cases: number;
  other_organization: number;
  seed_seconds: number;
  pages: { case: string; rows: number; p50_ms: number; p99_ms: number; baseline_ms: number }[];
  slowest_p99_ms: number;
}

async function seed(db: Db, org: string, n: number, now: number): Promise<void> {
  await db.query(
    `INSERT INTO inboxes (id, organization_id, name, group_by, route, position, sla_hours, members, created_at_ms, created_by)
     SELECT $1 || '_inbox_' || i, $1, 'Inbox ' || i, 'customer', CASE WHEN i = 0 THEN NULL ELSE 'amount > ' || (i * 100) || '.0' END, i, 24,
            ARRAY(SELECT 'analyst_' || a FROM generate_series(0, 19) AS a), $2, 'u'
     FROM generate_series(0, 4) AS i`,
    [org, now],
  );
  for (let from = 0; from < n; from += 100_000) {
    const to = Math.min(n, from + 100_000);
    // 80 % closed, 10 % open, 5 % in progress, 5 % snoozed; opened over 90 days, due a day later.
    await db.query(
      `INSERT INTO cases (id, organization_id, inbox_id, entity_kind, entity_key, status, resolution, assignee, priority,
                          opened_at_ms, due_at_ms, snoozed_until_ms, closed_at_ms, updated_at_ms)
       SELECT $1 || '_case_' || i, $1, $1 || '_inbox_' || (i % 5), 'customer', 'C' || i, s.status,
              CASE WHEN s.status = 'closed' THEN (ARRAY['fraud', 'legitimate', 'inconclusive'])[1 + i % 3] END,
              CASE WHEN s.status <> 'open' THEN 'analyst_' || (i / 3) % 20 END,
              ((i * 7919) % 1000) / 10.0, o.at, o.at + ${DAY}::float8,
              CASE WHEN s.status = 'snoozed' THEN $2 + ${DAY}::float8 END,
              CASE WHEN s.status = 'closed' THEN o.at + ${DAY / 2}::float8 END, o.at
       FROM generate_series($3::bigint, $4::bigint - 1) AS i,
            LATERAL (SELECT CASE WHEN (i / 7) % 10 < 8 THEN 'closed' WHEN (i / 7) % 10 = 8 THEN 'open' WHEN (i / 7) % 20 = 9 THEN 'in_progress' ELSE 'snoozed' END AS status) AS s,
            LATERAL (SELECT $2 - 90 * ${DAY}::float8 * (1 - i::float8 / $5) AS at) AS o`,
      [org, now, from, to, n],
    );
  }
}

export async function measureCasePages(o: { db: Db; quick: boolean; log: (line: string) => void }): Promise<CasePagesFigures> {
  const { db, quick } = o;
  const n = quick ? 30_000 : 1_000_000;
  const other = n / 5;
  const samples = quick ? 41 : 201;
  const now = Date.now();
  o.log(`storing ${n.toLocaleString('en')} + ${other.toLocaleString('en')} cases on ${db.kind}…`);
  const t0 = performance.now();
  await db.query(`INSERT INTO users (id, email) VALUES ('u', 'u@example.com') ON CONFLICT DO NOTHING`);
  await db.query(
    `INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_cases', 'cases', 'test', 'u'), ('org_cases_other', 'other', 'test', 'u')`,
  );
  await seed(db, 'org_cases', n, now);
  await seed(db, 'org_cases_other', other, now);
  await db.query('ANALYZE cases');
  const seconds = (performance.now() - t0) / 1000;
  o.log(`stored in ${seconds.toFixed(1)} s`);

  const inbox = 'org_cases_inbox_2';
  const pages: [string, CaseFilters, string?][] = [
    ['the soonest due, no filter', {}],
    ['status=open', { status: 'open' }],
    ['status=closed', { status: 'closed' }],
    ['inbox', { inbox_id: inbox }],
    ['inbox + status=open', { inbox_id: inbox, status: 'open' }],
    ['assignee', { assignee: 'analyst_7' }],
    ['assignee + status=in_progress', { assignee: 'analyst_7', status: 'in_progress' }],
    ['overdue', { overdueAt: now }],
    ['inbox + overdue', { inbox_id: inbox, overdueAt: now }],
    ['assignee + overdue', { assignee: 'analyst_7', overdueAt: now }],
    ['starting_after, half-way down', {}, `org_cases_case_${Math.floor(n / 2)}`],
  ];

  const withoutIndexes = <R>(fn: (data: ReturnType<typeof organizationData>) => Promise<R>): Promise<R> =>
    db.transaction(async (tx: Queryable) => {
      await tx.query('SET LOCAL enable_indexscan = off');
      await tx.query('SET LOCAL enable_bitmapscan = off');
      await tx.query('SET LOCAL enable_indexonlyscan = off');
      return fn(organizationData({ query: tx.query.bind(tx) } as unknown as Db, 'org_cases'));
    });
  const data = organizationData(db, 'org_cases');
  const at = (v: number[], p: number) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(p * v.length))]!;
  const round = (x: number) => Math.round(x * 100) / 100;
  const out: CasePagesFigures['pages'] = [];
  for (const [name, filters, after] of pages) {
    const times: number[] = [];
    let rows = 0;
    let ids = '';
    for (let i = 0; i < samples; i++) {
      const t = performance.now();
      const page = await data.cases.list(filters, 25, after);
      times.push(performance.now() - t);
      rows = page!.rows.length;
      ids = JSON.stringify(page!.rows.map((r) => r.id));
    }
    const base: number[] = [];
    for (let i = 0; i < (quick ? 2 : 3); i++) {
      const t = performance.now();
      const check = await withoutIndexes((d) => d.cases.list(filters, 25, after));
      base.push(performance.now() - t);
      if (JSON.stringify(check!.rows.map((r) => r.id)) !== ids) throw new Error(`${name}: the baseline found other cases`);
    }
    if (rows === 0) throw new Error(`${name}: an empty page measures nothing`);
    out.push({ case: name, rows, p50_ms: round(at(times, 0.5)), p99_ms: round(at(times, 0.99)), baseline_ms: round(at(base, 0.5)) });
  }
  return {
    cases: n,
    other_organization: other,
    seed_seconds: Math.round(seconds * 10) / 10,
    pages: out,
    slowest_p99_ms: Math.max(...out.map((p) => p.p99_ms)),
  };
}
