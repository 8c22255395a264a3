// Webhooks across real server processes (`src/main.ts`) on one PostgreSQL server:
// - an endpoint created through one process receives the events of payments the other scores a
//   second later (the other hears of it by a notification, not by asking at every payment);
// - two processes scoring the same organization deliver each event once: N blocked payments, N
//   events, no duplicate and none missing, when nothing failed;
// - a process killed (SIGKILL) with an event committed and its delivery in flight loses nothing:
//   the other process sends it once the lease lapses, and the log says it was delivered.

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { freshDatabase } from '../support/server.ts';
import { SignIn, spawnServer, withKey, type ServerProcess } from '../support/processes.ts';
import { Receiver } from '../support/receiver.ts';
import { needs, TEST_DATABASE_URL } from '../support/components.ts';

const url = TEST_DATABASE_URL!;
t.test('webhooks across two processes', { skip: needs('postgres') }, async (t) => {
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
  const env = { ...signIn.env, DATABASE_URL: db.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  const a = await spawnServer(env);
  servers.push(a);
  const b = await spawnServer(env);
  servers.push(b);
  const org = await signIn.organization(a.base, 'Twin');
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${a.base}/api/organizations/${org.id}${path}`, { method: 'POST', headers: org.member, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as any };
  };
  t.equal((await post('/rules', { name: 'Big', expression: 'amount > 5000.0', action: 'block', status: 'active' })).status, 201);
  const endpoint = await post('/webhooks', { url: receiver.url, events: ['decision.block'] });
  t.equal(endpoint.status, 201);
  const hook = new Webhook(endpoint.json.secret);
  // Process b learns of the endpoint by the trigger's notification (milliseconds); a second is
  // the bound docs/integrating.md states.
  await new Promise((r) => setTimeout(r, 1_000));

  await t.test('each event is delivered once by one of the processes', async (t) => {
    const n = 200;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        withKey(i % 2 ? a.base : b.base, org.secret, '/api/v1/risk/score', {
          amount: 9000,
          customer_id: `c-${i % 17}`,
          merchant_id: 'm-1',
          location: 'Lisbon',
          payment_type: 'card',
          transaction_id: `tx-${i}`,
        }),
      ),
    );
    t.ok(
      answers.every((x) => x.status === 200 && x.json.decision === 'block'),
      'all blocked',
    );
    await receiver.waitFor(n, 60_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const events = receiver.received.map((r) => hook.verify(r.body, r.headers as Record<string, string>) as { id: string; data: { transaction_id: string } });
    t.equal(events.length, n, 'no event sent twice');
    t.equal(new Set(events.map((e) => e.id)).size, n);
    t.same(new Set(events.map((e) => e.data.transaction_id)), new Set(answers.map((x) => x.json.transaction_id)), 'every blocked payment, once');
  });

  await t.test('SIGKILL with a delivery in flight loses nothing', async (t) => {
    const before = receiver.received.length;
    // The receiver holds the first request long enough for the killed process to be mid-attempt.
    receiver.answers = [{ status: 200, delayMs: 4_000 }];
    const x = await withKey(a.base, org.secret, '/api/v1/risk/score', {
      amount: 9999,
      customer_id: 'c-k',
      merchant_id: 'm-1',
      location: 'Lisbon',
      payment_type: 'card',
      transaction_id: 'tx-killed',
    });
    t.equal(x.json.decision, 'block');
    await new Promise((r) => setTimeout(r, 1_000));
    await a.stop('SIGKILL');
    await b.stop('SIGKILL');
    const c = await spawnServer(env);
    servers.push(c);
    await receiver.waitFor(before + 1, 60_000);
    const got = receiver.received.slice(before).map((r) => JSON.parse(r.body) as { data: { transaction_id: string }; id: string });
    t.ok(
      got.some((e) => e.data.transaction_id === 'tx-killed'),
      'the event arrived after the crash',
    );
    const log = (await (
      await fetch(`${c.base}/api/organizations/${org.id}/webhooks/${endpoint.json.id}/deliveries?limit=1`, { headers: org.member })
    ).json()) as { data: { status: string; event_id: string }[] };
    for (let i = 0; i < 50 && log.data[0]?.status !== 'succeeded'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      Object.assign(
        log,
        await (await fetch(`${c.base}/api/organizations/${org.id}/webhooks/${endpoint.json.id}/deliveries?limit=1`, { headers: org.member })).json(),
      );
    }
    t.match(log.data[0], { status: 'succeeded' }, 'and the log says delivered');
  });
});
