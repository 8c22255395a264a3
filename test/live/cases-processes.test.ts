// Cases across real server processes (`src/main.ts`) on one PostgreSQL server:
// - two processes opening cases for the same customer at once (POST /api/v1/cases with several of
//   its transactions, and review decisions of it, sent to both) make one case: one 201, the rest
//   200 with its id, every transaction in it once, and one `case.opened` event;
// - both processes sweep for cases past their due time, every fraction of a second: the case is
//   marked breached once, one `case.sla_breached` event and one timeline entry;
// - for an organization no endpoint hears case events from (its decisions' cases open in the insert's
//   own statement), review decisions of a few customers recorded by both processes at once make one
//   case per customer, each with all its decisions once and its chain intact.

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { freshDatabase } from '../support/server.ts';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { Receiver } from '../support/receiver.ts';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';

const url = TEST_DATABASE_URL!;
t.test('cases across two processes', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(url);
  const signIn = await SignIn.start();
  const receiver = await new Receiver().start();
  const servers: ServerProcess[] = [];
  t.teardown(async () => {
    for (const s of servers) await s.stop('SIGKILL');
    await receiver.close();
    await signIn.close();
    await db.drop();
  });
  const SWEEP_SECONDS = 0.2;
  const env = { ...signIn.env, DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', CASE_SLA_SWEEP_SECONDS: String(SWEEP_SECONDS) };
  const a = await spawnServer(env);
  servers.push(a);
  const b = await spawnServer(env);
  servers.push(b);
  const org = await signIn.organization(a.base, 'Twin');
  const member = async (method: string, path: string, body?: unknown) => {
    const { 'content-type': _, ...bare } = org.member;
    const res = await fetch(`${a.base}/api/organizations/${org.id}${path}`, {
      method,
      headers: body === undefined ? bare : org.member,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  t.equal((await member('POST', '/rules', { name: 'review', expression: 'customer_id == "c-1"', action: 'review', status: 'active' })).status, 201);
  // c-2's payments approved whatever the model says: a review would open its case before the test's
  // requests do (its score moves with the seconds between its payments, so with the host's load).
  t.equal((await member('POST', '/rules', { name: 'approve', expression: 'customer_id == "c-2"', action: 'allow', status: 'active' })).status, 201);
  // Due four seconds after opening.
  const inbox = await member('POST', '/inboxes', { name: 'Everything', sla_hours: 4 / 3600 });
  t.equal(inbox.status, 201, JSON.stringify(inbox.json));
  const endpoint = await member('POST', '/webhooks', { url: receiver.url, events: ['case.opened', 'case.sla_breached'] });
  t.equal(endpoint.status, 201);
  const hook = new Webhook(endpoint.json.secret);
  const events = (type: string) =>
    receiver.received
      .map((r) => hook.verify(r.body, r.headers as Record<string, string>) as { type: string; data: { id: string } })
      .filter((e) => e.type === type);
  // Process b learns of the endpoint and the inbox through the live feed within a second (the bound
  // docs/integrating.md states for endpoints).
  await new Promise((r) => setTimeout(r, 1_000));

  const pay = (server: ServerProcess, id: string, customer: string) =>
    withKey(server.base, org.secret, '/api/v1/risk/score', { transaction_id: id, amount: 80, customer_id: customer, merchant_id: 'm-1' });
  // Transactions of another customer, approved, that the servers open cases on.
  for (let i = 0; i < 10; i++) {
    const paid = await pay(a, `d-${i}`, 'c-2');
    t.same([paid.status, paid.json.decision], [200, 'approve'], 'approved: no case opened by a decision');
  }

  let caseId = '';
  await t.test('opening at once from both processes makes one case', async (t) => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => withKey(i % 2 ? a.base : b.base, org.secret, '/api/v1/cases', { transaction_id: `d-${i}`, reason: `dispute ${i}` })),
    );
    t.same(answers.map((x) => x.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201], 'one opened it, the others joined');
    caseId = answers[0]!.json.id;
    t.ok(
      answers.every((x) => x.json.id === caseId),
      'all the same case',
    );
    const detail = await member('GET', `/cases/${caseId}`);
    t.equal(detail.json.decisions.length, 10, 'every transaction once');
    t.same(detail.json.chain, { intact: true, broken_at: null }, 'one chain, however the writers interleaved');

    // Review decisions of one customer recorded by both processes, and a server opening on them.
    const reviews = await Promise.all(Array.from({ length: 8 }, (_, i) => pay(i % 2 ? a : b, `r-${i}`, 'c-1')));
    t.ok(
      reviews.every((x) => x.status === 200 && x.json.decision === 'review'),
      'reviews',
    );
    const opens = await Promise.all(
      [0, 1, 2, 3].map((i) => withKey(i % 2 ? a.base : b.base, org.secret, '/api/v1/cases', { transaction_id: `r-${i}`, reason: 'x' })),
    );
    t.ok(
      opens.every((x) => x.status === 200),
      'the decisions had opened it',
    );
    const listed = await member('GET', '/cases');
    t.same(listed.json.data.map((c: { entity: { id: string } }) => c.entity.id).sort(), ['c-1', 'c-2'], 'one case per customer');
    await receiver.waitFor(2);
    t.same(
      events('case.opened')
        .map((e) => e.data.id)
        .sort(),
      listed.json.data.map((c: { id: string }) => c.id).sort(),
      'one case.opened for each',
    );
  });

  await t.test("an organization without case events: one case per customer from both processes' decisions at once", async (t) => {
    const quiet = await signIn.organization(a.base, 'Quiet');
    const as = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${a.base}/api/organizations/${quiet.id}${path}`, {
        method,
        headers: quiet.member,
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, json: (await res.json()) as any };
    };
    t.equal((await as('POST', '/rules', { name: 'review', expression: 'customer_id.startsWith("q-")', action: 'review', status: 'active' })).status, 201);
    t.equal((await as('POST', '/inboxes', { name: 'All', sla_hours: 24 })).status, 201);
    // Both processes route with the new inbox once the live feed has brought it.
    await new Promise((r) => setTimeout(r, 1_000));
    const customers = ['q-1', 'q-2', 'q-3', 'q-4'];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        withKey(i % 2 ? a.base : b.base, quiet.secret, '/api/v1/risk/score', {
          transaction_id: `q-${i}`,
          amount: 80,
          customer_id: customers[i % customers.length],
          merchant_id: 'm-1',
        }),
      ),
    );
    t.ok(
      answers.every((x) => x.status === 200 && x.json.decision === 'review'),
      'forty reviews',
    );
    const listed = (await as('GET', '/cases?limit=100')).json.data as { id: string; entity: { id: string }; decision_count: number }[];
    t.same(listed.map((c) => c.entity.id).sort(), customers, 'one case per customer');
    for (const c of listed) {
      const detail = (await as('GET', `/cases/${c.id}`)).json;
      t.equal(new Set(detail.decisions.map((d: { transaction_id: string }) => d.transaction_id)).size, 10, `${c.entity.id}: its ten decisions, once each`);
      t.same(detail.chain, { intact: true, broken_at: null }, `${c.entity.id}: its chain intact`);
    }
  });

  await t.test('both processes sweep; each case is marked breached once', async (t) => {
    await receiver.waitFor(4, 20_000);
    const breached = events('case.sla_breached');
    t.same(breached.map((e) => e.data.id).sort(), (await member('GET', '/cases')).json.data.map((c: { id: string }) => c.id).sort(), 'both cases');
    // Every process has swept several times more by now: nothing more was sent.
    await new Promise((r) => setTimeout(r, 10 * SWEEP_SECONDS * 1000));
    t.equal(events('case.sla_breached').length, 2, 'once each');
    const timeline = (await member('GET', `/cases/${caseId}`)).json.timeline as { kind: string }[];
    t.equal(timeline.filter((e) => e.kind === 'sla_breached').length, 1, 'one timeline entry');
    t.equal((await member('GET', '/cases?overdue=true')).json.data.length, 2, 'and the listing says overdue');
  });
});
