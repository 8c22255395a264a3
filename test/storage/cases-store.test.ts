// Cases in the organization-scoped data layer, on both back ends: decisions of one entity join one
// open case per inbox (opened by the first, joined by the rest, the case's priority the highest of
// theirs), a closed case is not joined again (the next decision opens another), a decision files
// once; the timeline is numbered and hash-chained as it is written, refuses to be changed through
// SQL, and an entry altered behind its back (its trigger disabled) breaks the chain exactly there;
// one organization never reads another's cases. On PostgreSQL, two writers joining the same entity
// at once make one case.

import t from 'tap';
import postgres from 'postgres';
import type { Db } from '../../src/storage/db.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import type { CaseJoin } from '../../src/storage/cases-store.ts';
import { verifyChain } from '../../src/domain/case-timeline.ts';
import { eachBackend } from '../support/backends.ts';
import { openFreshDatabase } from '../support/server.ts';
import { needs } from '../support/components.ts';

async function twoOrganizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
}

const inbox = {
  name: 'Reviews',
  group_by: 'customer',
  route: null,
  route_list_ids: [] as string[],
  on_block: false,
  sla_hours: 24,
  members: ['u1'],
  escalation_id: null,
  auto_assign_cap: null,
  created_at_ms: 1,
  created_by: 'u1',
};
const AT = 1_800_000_000_000;
const join = (inboxId: string, customer: string, tx: string, priority = 1, at = AT): CaseJoin => ({
  inbox_id: inboxId,
  entity_kind: 'customer',
  entity_key: customer,
  transaction_id: tx,
  priority,
  at,
  due: at + 86_400_000,
  actor: 'system',
  reason: 'review',
});

eachBackend('decisions open and join cases, with a chained timeline', async (t, fx) => {
  const db = await fx.open();
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  const b = organizationData(db, 'org_b');
  const made = await a.cases.createInbox(inbox);
  if (!('inbox' in made)) throw new Error('not made');
  const id = made.inbox.id;
  t.same(await a.cases.createInbox(inbox), { taken: true }, 'one inbox of a name');

  const first = await a.cases.join([join(id, 'c1', 't1', 5), join(id, 'c1', 't2', 9), join(id, 'c2', 't3', 2)]);
  const c1 = first.find((r) => r.transaction_id === 't1')!.id;
  t.equal(first.find((r) => r.transaction_id === 't2')!.id, c1, "one case for c1's two decisions");
  t.ok(
    first.every((r) => r.opened),
    'both cases opened by this statement',
  );
  t.not(first.find((r) => r.transaction_id === 't3')!.id, c1, 'c2 has its own');
  const again = await a.cases.join([join(id, 'c1', 't4', 3, AT + 1000), join(id, 'c1', 't4', 3, AT + 1000)]);
  t.same(
    again.map((r) => [r.id, r.opened]),
    [[c1, false]],
    'joined, not opened again (a decision sent twice, once)',
  );
  t.same(await a.cases.decisionIds(c1), ['t1', 't2', 't4'], 'each decision filed once');
  t.match(await a.cases.one(c1), { status: 'open', entity_key: 'c1', priority: 9 }, 'the highest priority of its decisions');

  const timeline = await a.cases.timeline(c1);
  t.same(
    timeline.map((e) => [e.n, e.kind]),
    [
      [1, 'opened'],
      [2, 'decision_joined'],
      [3, 'decision_joined'],
      [4, 'decision_joined'],
    ],
  );
  t.same(verifyChain(timeline), { intact: true, broken_at: null }, 'one unbroken chain');
  await a.cases.append(c1, { at: AT + 2000, actor: 'u1', kind: 'note', detail: { text: 'Called the customer' } });
  t.same(verifyChain(await a.cases.timeline(c1)), { intact: true, broken_at: null }, 'still, with a note');

  await t.rejects(db.query(`UPDATE case_timeline SET detail = '{}' WHERE case_id = $1 AND n = 2`, [c1]), /append-only/, 'an entry cannot be changed');
  await t.rejects(db.query(`DELETE FROM case_timeline WHERE case_id = $1`, [c1]), /append-only/, 'nor removed');
  await db.query('ALTER TABLE case_timeline DISABLE TRIGGER case_timeline_unchanged');
  await db.query(`UPDATE case_timeline SET detail = '{"transaction_id":"t9","reason":"review"}' WHERE case_id = $1 AND n = 3`, [c1]);
  await db.query('ALTER TABLE case_timeline ENABLE TRIGGER case_timeline_unchanged');
  t.same(verifyChain(await a.cases.timeline(c1)), { intact: false, broken_at: 3 }, 'an entry altered behind its back breaks the chain there');

  await db.query(`UPDATE cases SET status = 'closed', resolution = 'fraud' WHERE id = $1`, [c1]);
  const reopened = await a.cases.join([join(id, 'c1', 't5', 1, AT + 5000)]);
  t.ok(reopened[0]!.opened && reopened[0]!.id !== c1, 'a closed case is not joined: the next decision opens another');

  t.equal(await b.cases.one(c1), undefined, 'another organization does not read it');
  t.same(await b.cases.timeline(c1), []);
  t.same(await b.cases.decisionIds(c1), []);
  t.same(await b.cases.inboxes(), []);
  await b.cases.append(c1, { at: AT, actor: 'u1', kind: 'note', detail: {} });
  t.equal((await a.cases.timeline(c1)).length, 5, 'nor appends to it');
});

t.test('two writers joining the same entity at once make one case', { skip: needs('postgres') }, async (t) => {
  const { db, url } = await openFreshDatabase(t);
  await twoOrganizations(db);
  const a = organizationData(db, 'org_a');
  const made = await a.cases.createInbox(inbox);
  if (!('inbox' in made)) throw new Error('not made');
  const id = made.inbox.id;
  // Two connections, each holding its transaction open until both have written.
  const writers = [postgres(url, { max: 1, onnotice: () => {} }), postgres(url, { max: 1, onnotice: () => {} })];
  t.teardown(() => Promise.all(writers.map((w) => w.end())));
  for (let round = 0; round < 10; round++) {
    const customer = `c-${round}`;
    await Promise.all(
      writers.map((w, k) =>
        w.begin(async (tx) => {
          const { joinCases } = await import('../../src/storage/cases-store.ts');
          const q = { query: (sql: string, params?: unknown[]) => tx.unsafe(sql, params as never[]) };
          await joinCases({ db: q, organizationId: 'org_a' } as never, [join(id, customer, `t-${round}-${k}`)], q as never);
        }),
      ),
    );
    const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM cases WHERE entity_key = $1`, [customer]);
    t.equal(n, 1, `round ${round}: one case`);
  }
  t.ok(verifyChain(await a.cases.timeline((await db.query<{ id: string }>(`SELECT id FROM cases WHERE entity_key = 'c-0'`))[0]!.id)).intact, 'and one chain');
});
