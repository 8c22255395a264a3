// The webhook deliverer when one of its own database statements never answers, on each back end:
// a lease round whose statement hangs is given up on after a lease's time (and says so in the
// log), and the next round delivers what is due, so one lost answer never stops every delivery of
// the process; nor does it hold the deliverer's stop beyond a lease's time.

import { eachBackend } from '../support/backends.ts';
import { Receiver } from '../support/receiver.ts';
import type { Db } from '../../src/storage/db.ts';
import { WebhookDeliverer } from '../../src/jobs/webhook-deliverer.ts';

const SECRET = `whsec_${Buffer.from('k'.repeat(32)).toString('base64')}`;

/** `db`, except that the first statement whose text matches `hang` never answers. */
function hangingOnce(db: Db, hang: RegExp): { db: Db; hung: () => number } {
  let hung = 0;
  const query: Db['query'] = (text, params) => {
    if (hang.test(text) && hung++ === 0) return new Promise(() => {});
    return db.query(text, params);
  };
  return {
    hung: () => hung,
    db: {
      kind: db.kind,
      query,
      transaction: (fn) => db.transaction(fn),
      ping: () => db.ping(),
      listen: (channel, onNotify, onListening) => db.listen(channel, onNotify, onListening),
      background: () => db.background(),
      close: () => db.close(),
    },
  };
}

eachBackend('a lease round that never answers does not stop deliveries', async (t, fx) => {
  const real = await fx.open();
  const receiver = await new Receiver().start();
  t.teardown(() => receiver.close());
  await real.query(`INSERT INTO users (id, email, name) VALUES ('u1', 'u1@example.com', 'U One')`);
  await real.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1')`);
  await real.query(
    `INSERT INTO webhook_endpoints (id, organization_id, url, events, status, secret_sealed, created_by)
     VALUES ('we_1', 'org_a', $1, '{webhook.test}', 'enabled', 'sealed', 'u1')`,
    [`${receiver.url}/hooks`],
  );
  await real.query(`INSERT INTO webhook_events (id, organization_id, type, payload) VALUES ('evt_1', 'org_a', 'webhook.test', '{}')`);
  await real.query(`INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, status) VALUES ('whd_1', 'org_a', 'we_1', 'evt_1', 'pending')`);

  const { db, hung } = hangingOnce(real, /SET lease_owner = \$1/);
  const logged: string[] = [];
  const leaseMs = 1_000;
  const deliverer = new WebhookDeliverer({
    db,
    policy: { allowPrivateNetworks: true },
    openSecret: () => SECRET,
    log: (m) => logged.push(m),
    timings: { pollMs: 50, leaseMs, timeoutMs: 800, retrySeconds: [0.2], jitter: 0 },
  });
  const started = performance.now();
  await deliverer.start();
  t.teardown(() => deliverer.stop());
  await receiver.waitFor(1, 10_000);
  const after = performance.now() - started;
  t.ok(hung() >= 2, 'the first lease round hung, and a later one answered');
  t.ok(after >= leaseMs, `delivered only once the hung round had had its lease's time (${Math.round(after)} ms)`);
  t.equal(receiver.events()[0]!.id, 'evt_1', 'the pending delivery went out');
  t.match(logged.join('\n'), /looking for deliveries has not answered for \d+ s; looking again beside it/, 'and the log says why it was late');
  // Recorded once the answer is in: the receiver has answered before the record is written.
  let status = '';
  for (const until = performance.now() + 5_000; status !== 'succeeded' && performance.now() < until; ) {
    await new Promise((r) => setTimeout(r, 50));
    [{ status = '' } = {}] = await real.query<{ status: string }>(`SELECT status FROM webhook_deliveries WHERE id = 'whd_1'`);
  }
  t.equal(status, 'succeeded', 'recorded as delivered');
});

eachBackend('a lease round that never answers holds the stop a lease at most', async (t, fx) => {
  const real = await fx.open();
  const { db, hung } = hangingOnce(real, /SET lease_owner = \$1/);
  const leaseMs = 1_000;
  const deliverer = new WebhookDeliverer({
    db,
    policy: { allowPrivateNetworks: true },
    openSecret: () => SECRET,
    log: () => {},
    timings: { pollMs: 50, leaseMs, timeoutMs: 800, retrySeconds: [0.2], jitter: 0 },
  });
  await deliverer.start();
  for (const until = performance.now() + 5_000; hung() === 0 && performance.now() < until; ) await new Promise((r) => setTimeout(r, 10));
  t.equal(hung(), 1, 'a lease round is waiting for an answer that never comes');
  // Without a bound the stop would wait for that answer for ever: ten leases is "not for ever".
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    deliverer.stop().then(() => 'stopped'),
    new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting for the round'), 10 * leaseMs))),
  ]);
  clearTimeout(timer);
  t.equal(stopped, 'stopped', 'the stop does not wait for the round beyond its lease');
});
