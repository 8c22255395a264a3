// A process holds only the organizations it has served: another organization's transactions and
// outcomes pass through its live feed without being held (on each back end, with another
// organization's rows written to the database as another process would write them); and two server
// processes on one PostgreSQL, each serving one of two organizations, each hold one, as a load
// balancer hashing API keys onto processes would have them (docs/operating.md).

import t from 'tap';
import { backends, freshDatabase } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { serverPair, SignIn, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

const row = (i: number): NewTransaction => ({
  transaction_id: `elsewhere-${i}`,
  time: Date.now() - 60_000 + i,
  amount: 20 + i,
  customer_id: `c-${i % 3}`,
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'wallet',
  source: 'scored',
  decision: { risk_score: 0.1, risk_band: 'low', decision: 'approve', mode: 'balanced' },
  response: '{}',
});

for (const backend of backends()) {
  t.test(`on ${backend.name}: another organization's changes pass through the feed, unheld`, async (t) => {
    const { live } = await liveFor(t, backend);
    const served = await live.organization('Served');
    const other = await live.organization('Elsewhere');
    for (let i = 0; i < 4; i++)
      t.equal((await live.score(served, { transaction_id: `s-${i}`, amount: 10 + i, customer_id: 'c', merchant_id: 'm' })).statusCode, 200);
    // What another process would have written for the other organization.
    await organizationData(live.s.service.db, other.id).transactions.insert([0, 1, 2, 3, 4].map(row));
    await live.s.service.tail.catchUp();
    const health = (await live.s.app.inject({ url: '/api/health' })).json();
    t.equal(health.organizations_loaded, 1, 'one organization held');
    t.equal(health.transactions_held, 4, "the served organization's transactions only");
    t.same([...live.s.service.tenants.organizations()], [served.id]);
  });
}

const pg = backends().find((b) => b.name === 'postgres');

t.test('two processes serving two organizations each hold one', { skip: needs('postgres') }, async (t) => {
  const db = await freshDatabase(pg!.databaseUrl!);
  const signIn = await SignIn.start();
  const servers: ServerProcess[] = [];
  t.teardown(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await signIn.close();
    await db.drop();
  });
  const { a, b, org: first } = await serverPair({ ...signIn.env, DATABASE_URL: db.url }, servers, signIn, 'first');
  const second = await signIn.organization(a.base, 'second');
  for (let i = 0; i < 6; i++) {
    t.equal(
      (await withKey(a.base, first.secret, '/api/v1/risk/score', { transaction_id: `f-${i}`, amount: 10 + i, customer_id: 'c', merchant_id: 'm' })).status,
      200,
    );
    t.equal(
      (await withKey(b.base, second.secret, '/api/v1/risk/score', { transaction_id: `s-${i}`, amount: 10 + i, customer_id: 'c', merchant_id: 'm' })).status,
      200,
    );
  }
  for (const [name, s] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const health = (await (await fetch(`${s.base}/api/health`)).json()) as { organizations_loaded: number; transactions_held: number };
    t.equal(health.organizations_loaded, 1, `${name} holds one organization`);
    t.equal(health.transactions_held, 6, `${name} holds its own organization's six transactions`);
  }
});
