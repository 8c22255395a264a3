// The retention sweep on each storage back end, on the service's own clock: an organization that
// keeps 30 days loses exactly its transactions older than that (with their outcome changes and
// their places in cases, whose cases stay), but one whose outcome became known since, once, audited by `system` with what was deleted and
// shown as the latest sweep; an organization keeping the default 400 days loses nothing; and the
// features stay those of a history that was never swept (the totals they count survive), compared
// with a twin organization sent the same payments.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

const DAY = 86_400_000;

for (const backend of backends()) {
  t.test(`retention on ${backend.name}`, async (t) => {
    let now = Date.UTC(2026, 6, 1, 12);
    const { live } = await liveFor(t, backend, {}, { dataProtection: { everyMs: 3_600_000, batch: 7, pauseMs: 1 } }, () => now);
    const { app, service } = live.s;
    const kept = await live.organization('Keeps30');
    const twin = await live.organization('Twin');
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, headers: Record<string, string>, payload?: unknown) =>
      app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    const key = (org: Organization) => ({ authorization: `Bearer ${org.key}` });
    const score = async (org: Organization, body: Record<string, unknown>) => {
      const res = await live.score(org, body);
      if (res.statusCode !== 200) throw new Error(res.body);
      return res.json();
    };
    const pay = async (id: string, customer: string) => {
      const body = { transaction_id: id, amount: 40.1 + id.length, customer_id: customer, merchant_id: 'm-1', location: 'FR', payment_type: 'card' };
      const [a] = [await score(kept, body), await score(twin, body)];
      return a;
    };

    // 20 payments 60 days ago, 5 of them with an outcome and one in a case; 6 payments 10 days ago.
    for (let i = 0; i < 20; i++) {
      now += 60_000;
      await pay(`old-${i}`, `c-${i % 4}`);
    }
    for (let i = 0; i < 5; i++)
      for (const org of [kept, twin]) t.equal((await call('POST', `/api/v1/transactions/old-${i}/outcome`, key(org), { outcome: 'fraud' })).statusCode, 200);
    t.equal((await call('POST', `/api/organizations/${kept.id}/inboxes`, kept.owner.headers, { name: 'All', sla_hours: 24 })).statusCode, 201);
    const opened = await call('POST', '/api/v1/cases', key(kept), { transaction_id: 'old-0', reason: 'dispute' });
    t.equal(opened.statusCode, 201, opened.body);
    now += 50 * DAY;
    for (let i = 0; i < 6; i++) {
      now += 60_000;
      await pay(`new-${i}`, `c-${i % 4}`);
    }
    t.equal((await call('POST', '/api/v1/cases', key(kept), { transaction_id: 'new-0', reason: 'dispute' })).statusCode, 200, 'joins the open case');
    now += 10 * DAY;
    // A session of today (the first one has expired on the service's clock).
    kept.owner = await live.signInWith({ sub: 'owner-of-Keeps30', email: 'owner-of-Keeps30@example.com' });

    // A late chargeback: an outcome known today keeps its transaction until the outcome is old too.
    for (const org of [kept, twin]) t.equal((await call('POST', '/api/v1/transactions/old-19/outcome', key(org), { outcome: 'fraud' })).statusCode, 200);
    t.equal((await call('PUT', `/api/organizations/${kept.id}/retention`, kept.owner.headers, { days: 30 })).statusCode, 200);
    await service.dataProtection.run();

    await t.test('exactly what is older than 30 days is deleted', async (t) => {
      const listed = (await call('GET', '/api/v1/transactions?limit=100', key(kept))).json().data.map((x: { transaction_id: string }) => x.transaction_id);
      t.same(listed.sort(), ['new-0', 'new-1', 'new-2', 'new-3', 'new-4', 'new-5', 'old-19'], 'but a transaction with an outcome known since');
      t.equal((await call('GET', '/api/v1/transactions?limit=100', key(twin))).json().data.length, 26, 'the organization keeping 400 days keeps all');
      const retention = (await call('GET', `/api/organizations/${kept.id}/retention`, kept.owner.headers)).json();
      t.match(retention, {
        days: 30,
        last_sweep: { cutoff: new Date(now - 30 * DAY).toISOString(), counts: { transactions: 19, outcome_changes: 5, case_transactions: 1 } },
      });
      const audit = (await call('GET', `/api/organizations/${kept.id}/data-protection/audit`, kept.owner.headers)).json();
      t.match(audit.data[0], { by: 'system', action: 'retention_swept', detail: { days: 30, counts: { transactions: 19 } } });
      const cases = (await call('GET', `/api/organizations/${kept.id}/cases`, kept.owner.headers)).json().data;
      t.equal(cases.length, 1, 'the case stays');
      const detail = (await call('GET', `/api/organizations/${kept.id}/cases/${cases[0].id}`, kept.owner.headers)).json();
      t.same(
        detail.decisions.map((x: { transaction_id: string }) => x.transaction_id),
        ['new-0'],
        'holding only the transaction still kept',
      );
    });

    await t.test('a second pass the same day deletes nothing more and is not audited again', async (t) => {
      await service.dataProtection.run();
      const audit = (await call('GET', `/api/organizations/${kept.id}/data-protection/audit`, kept.owner.headers)).json();
      t.equal(audit.data.filter((e: { action: string }) => e.action === 'retention_swept').length, 1);
    });

    await t.test('features stay those of a history never swept', async (t) => {
      service.tenants.forget(kept.id);
      service.tenants.forget(twin.id);
      now += 60_000;
      const body = { transaction_id: 'probe', amount: 88.8, customer_id: 'c-1', merchant_id: 'm-1', location: 'FR', payment_type: 'card' };
      const [a, b] = [(await live.scoreLoaded(kept, body)).json().risk_score as number, (await live.scoreLoaded(twin, body)).json().risk_score as number];
      t.equal(a, b, `swept ${a}, never swept ${b}`);
    });
  });
}
