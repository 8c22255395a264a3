// Which organizations' flagged payments may be webhook events, as a process knows it, on both back
// ends: unknown (every organization asked) until first read; then an endpoint created, disabled,
// re-subscribed or deleted by any writer (here plain SQL, as an operator or another process would)
// reaches the view through the trigger's notification, without anyone calling refresh; and the
// group commit writes no event for an organization the view rules out, while one it lets through
// still gets events only for the endpoints that exist when the statement runs.

import type { Db } from '../../src/storage/db.ts';
import { DecisionSubscriptions } from '../../src/live/decision-subscriptions.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';
import { recordGroup } from '../../src/storage/recorded-group.ts';
import { eachBackend } from '../support/backends.ts';

async function organizations(db: Db): Promise<void> {
  await db.query(`INSERT INTO users (id, email) VALUES ('u1', 'u1@example.com')`);
  await db.query(`INSERT INTO organizations (id, name, stage, created_by) VALUES ('org_a', 'A', 'test', 'u1'), ('org_b', 'B', 'test', 'u1')`);
}

/** Polls `check` until it holds (the notification is asynchronous), up to five seconds. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

const blocked = (id: string): NewTransaction => ({
  transaction_id: id,
  time: 1_700_000_000_000,
  amount: 9000,
  customer_id: 'c-1',
  merchant_id: 'm-1',
  location: 'Lisbon',
  payment_type: 'card',
  source: 'scored',
  decision: { decision: 'block', risk_score: 0.9, risk_band: 'high', mode: 'live' },
  response: JSON.stringify({ transaction_id: id, decision: 'block' }),
});

eachBackend('the view of decision subscriptions follows every change to the endpoints', async (t, fx) => {
  const db = await fx.open();
  await organizations(db);
  const view = new DecisionSubscriptions(db);
  t.teardown(() => view.stop());
  t.ok(view.wants('org_a', 'decision.block'), 'before the first read, every organization is asked');
  await view.start();
  t.notOk(view.wants('org_a', 'decision.block'), 'no endpoint: no event to write');

  await db.query(
    `INSERT INTO webhook_endpoints (id, organization_id, url, events, status, secret_sealed, created_by) VALUES ('we_1', 'org_a', 'https://a.example/h', '{decision.block,job.failed}', 'enabled', 'v1.x', 'u1')`,
  );
  t.ok(await eventually(() => view.wants('org_a', 'decision.block')), 'an endpoint created by any writer is heard of');
  t.notOk(view.wants('org_a', 'decision.review'), 'only the types it subscribes to');
  t.notOk(view.wants('org_b', 'decision.block'), 'and only for its organization');

  await db.query(`UPDATE webhook_endpoints SET status = 'disabled' WHERE id = 'we_1'`);
  t.ok(await eventually(() => !view.wants('org_a', 'decision.block')), 'a disabled endpoint wants nothing');
  await db.query(`UPDATE webhook_endpoints SET status = 'enabled', events = '{decision.review}' WHERE id = 'we_1'`);
  t.ok(await eventually(() => view.wants('org_a', 'decision.review') && !view.wants('org_a', 'decision.block')), 'enabled again with other events');
  await db.query(`DELETE FROM webhook_endpoints WHERE id = 'we_1'`);
  t.ok(await eventually(() => !view.wants('org_a', 'decision.review')), 'a deleted endpoint wants nothing');
});

eachBackend('the group commit writes decision events only where the view and the endpoints both say so', async (t, fx) => {
  const db = await fx.open();
  await organizations(db);
  await db.query(
    `INSERT INTO webhook_endpoints (id, organization_id, url, events, status, secret_sealed, created_by) VALUES ('we_a', 'org_a', 'https://a.example/h', '{decision.block}', 'enabled', 'v1.x', 'u1')`,
  );
  const events = async () =>
    (await db.query<{ organization_id: string; type: string }>(`SELECT organization_id, type FROM webhook_events ORDER BY organization_id`)).map(
      (r) => `${r.organization_id}:${r.type}`,
    );

  await recordGroup(db, [{ organizationId: 'org_a', row: blocked('t1') }], () => false);
  t.same(await events(), [], 'ruled out by the view: no event, even with an endpoint');
  await recordGroup(
    db,
    [
      { organizationId: 'org_a', row: blocked('t2') },
      { organizationId: 'org_b', row: blocked('t3') },
    ],
    () => true,
  );
  t.same(await events(), ['org_a:decision.block'], 'let through: an event only where an enabled endpoint subscribes');
  const stored = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM transactions`);
  t.equal(stored[0]!.n, 3, 'every payment is stored either way');
});
