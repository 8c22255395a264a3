// Cases opened from a customer's server and the case webhook events, over real HTTP with real
// sign-in and API keys, on each storage back end, delivered to a receiver on loopback that checks
// every signature with the `standardwebhooks` verifier:
// - POST /api/v1/cases without any inbox: 409 `no_inbox`, with a fix naming how to make one;
// - it opens the case of the transaction's customer (201) whatever the decision, the timeline naming
//   the key and the reason; the same transaction again adds nothing (200, one decision, no new
//   entry); another transaction of the customer joins it (200); an unknown id is 404 `not_found`;
//   a reason that is empty or too long is 422;
// - a key of another organization finds nothing of it (404), and opens nothing;
// - `case.opened` (from the route and from a decision), `case.assigned` (assign, claim, next),
//   `case.closed` (with its resolution) and `case.sla_breached` reach a subscribed endpoint, each
//   carrying the case as the API answers it; the SLA sweep marks a case once, however often it runs,
//   with one timeline entry.

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';
import { Receiver } from '../support/receiver.ts';

const timings = { retrySeconds: [0.3], timeoutMs: 800, pollMs: 100, leaseMs: 5_000, jitter: 0 };
const HOUR_MS = 3_600_000;

for (const backend of backends()) {
  t.test(`cases from a server on ${backend.name}`, async (t) => {
    let offset = 0;
    const { live } = await liveFor(t, backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }, { webhooks: timings }, () => Date.now() + offset);
    const { app } = live.s;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    const receiver = await new Receiver().start();
    t.teardown(() => receiver.close());
    type Method = 'GET' | 'POST';
    const as = (org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const open = (org: Organization, body: unknown) =>
      app.inject({ method: 'POST', url: '/api/v1/cases', headers: { authorization: `Bearer ${org.key}` }, payload: body as object });
    const pay = async (org: Organization, id: string, customer: string) => {
      const res = await live.score(org, { transaction_id: id, amount: 120, customer_id: customer, merchant_id: 'm-1' });
      if (res.statusCode !== 200) throw new Error(res.body);
      return res.json().decision as string;
    };
    t.equal(
      (await as(shop, 'POST', '/rules', { name: 'review', expression: 'customer_id.startsWith("r-")', action: 'review', status: 'active' })).statusCode,
      201,
    );
    const hook = await as(shop, 'POST', '/webhooks', {
      url: `${receiver.url}/hooks`,
      events: ['case.opened', 'case.assigned', 'case.closed', 'case.sla_breached'],
    });
    t.equal(hook.statusCode, 201, hook.body);
    const verifier = new Webhook(hook.json().secret);
    /** The events received so far, each signature checked, of one type. */
    const received = (type: string) =>
      receiver.received
        .map(
          (r) =>
            verifier.verify(r.body, {
              'webhook-id': String(r.headers['webhook-id']),
              'webhook-timestamp': String(r.headers['webhook-timestamp']),
              'webhook-signature': String(r.headers['webhook-signature']),
            }) as { type: string; organization_id: string; data: Record<string, any> },
        )
        .filter((e) => e.type === type);

    t.equal(await pay(shop, 'tx-1', 'c-1'), 'approve');
    t.equal(await pay(shop, 'tx-2', 'c-1'), 'approve');
    t.equal(await pay(other, 'tx-o', 'c-1'), 'approve');

    await t.test('without an inbox: 409 no_inbox, saying how to make one', async (t) => {
      const res = await open(shop, { transaction_id: 'tx-1', reason: 'chargeback dispute' });
      t.equal(res.statusCode, 409, res.body);
      t.equal(res.json().detail.reason, 'no_inbox');
      t.match(res.json().detail.fix, /POST \/api\/organizations\/\{id\}\/inboxes/);
    });

    const inbox = await as(shop, 'POST', '/inboxes', { name: 'Everything', sla_hours: 1, members: [shop.owner.userId] });
    t.equal(inbox.statusCode, 201, inbox.body);

    let caseId = '';
    await t.test('opens the case of the customer, then joins it, never twice', async (t) => {
      const first = await open(shop, { transaction_id: 'tx-1', reason: 'chargeback dispute 4471' });
      t.equal(first.statusCode, 201, first.body);
      t.match(first.json(), { inbox_id: inbox.json().id, entity: { kind: 'customer', id: 'c-1', field: null }, status: 'open', overdue: false });
      caseId = first.json().id;
      t.equal(Date.parse(first.json().due_at) - Date.parse(first.json().opened_at), HOUR_MS, "due after the inbox's SLA");

      const again = await open(shop, { transaction_id: 'tx-1', reason: 'chargeback dispute 4471' });
      t.equal(again.statusCode, 200, 'the same transaction again: joined, not opened');
      t.equal(again.json().id, caseId);
      const joined = await open(shop, { transaction_id: 'tx-2', reason: 'same customer, second dispute' });
      t.equal(joined.statusCode, 200);
      t.equal(joined.json().id, caseId);

      const detail = (await as(shop, 'GET', `/cases/${caseId}`)).json();
      t.same(
        detail.decisions.map((d: { transaction_id: string }) => d.transaction_id),
        ['tx-1', 'tx-2'],
        'each transaction once',
      );
      t.same(
        detail.timeline.map((e: { kind: string; actor: string; detail: unknown }) => [e.kind, e.actor, e.detail]),
        [
          ['opened', `key:${shop.keyId}`, { entity_kind: 'customer', entity_key: 'c-1', inbox_id: inbox.json().id }],
          ['decision_joined', `key:${shop.keyId}`, { transaction_id: 'tx-1', reason: 'chargeback dispute 4471' }],
          ['decision_joined', `key:${shop.keyId}`, { transaction_id: 'tx-2', reason: 'same customer, second dispute' }],
        ],
        'who and why, once each',
      );
      t.same(detail.chain, { intact: true, broken_at: null });
      t.equal((await as(shop, 'GET', '/cases')).json().data.length, 1, 'one case');
    });

    await t.test('refusals', async (t) => {
      const unknown = await open(shop, { transaction_id: 'tx-none', reason: 'x' });
      t.equal(unknown.statusCode, 404);
      t.equal(unknown.json().detail.reason, 'not_found');
      for (const reason of ['', '   ', 'x'.repeat(501)]) {
        const res = await open(shop, { transaction_id: 'tx-1', reason });
        t.equal(res.statusCode, 422, `reason of ${reason.length} characters`);
        t.equal(res.json().detail.reason, 'validation_failed');
      }
      t.equal((await open(shop, { transaction_id: 'tx-1' })).statusCode, 422, 'no reason');
      const noKey = await app.inject({ method: 'POST', url: '/api/v1/cases', payload: { transaction_id: 'tx-1', reason: 'x' } });
      t.equal(noKey.statusCode, 401);
    });

    await t.test("another organization's key finds none of it", async (t) => {
      const res = await open(other, { transaction_id: 'tx-1', reason: 'not mine' });
      t.equal(res.statusCode, 404, 'the transaction of another organization: not found');
      t.equal(res.json().detail.reason, 'not_found');
      const own = await open(other, { transaction_id: 'tx-o', reason: 'mine' });
      t.equal(own.statusCode, 409, 'its own transaction: it has no inbox');
      t.equal((await as(shop, 'GET', `/cases/${caseId}`)).json().decisions.length, 2, "the first organization's case is unchanged");
      t.equal((await as(other, 'GET', '/cases')).json().data.length, 0, 'and the other has none');
    });

    await t.test('case events reach the subscribed endpoint, signed', async (t) => {
      // A decision opens a case too.
      t.equal(await pay(shop, 'tx-r', 'r-1'), 'review');
      await receiver.waitFor(2);
      const opened = received('case.opened');
      t.same(
        opened.map((e) => [e.data.entity.id, e.data.status]),
        [
          ['c-1', 'open'],
          ['r-1', 'open'],
        ],
        'from the route and from a decision, once each',
      );
      t.equal(opened[0]!.organization_id, shop.id);
      const listed = (await as(shop, 'GET', '/cases')).json().data.find((c: { id: string }) => c.id === caseId);
      t.equal(opened[0]!.data.id, caseId);
      t.same(Object.keys(opened[0]!.data).sort(), Object.keys(listed).sort(), 'the case as the API answers it');

      const other = (await as(shop, 'GET', '/cases')).json().data.find((c: { entity: { id: string } }) => c.entity.id === 'r-1');
      t.equal((await as(shop, 'POST', `/cases/${caseId}/assign`, { user_id: shop.owner.userId })).statusCode, 200);
      t.equal((await as(shop, 'POST', `/cases/${caseId}/assign`, { user_id: shop.owner.userId })).statusCode, 200, 'the same assignee again');
      t.equal(
        ((await as(shop, 'GET', `/cases/${caseId}`)).json().timeline as { kind: string }[]).filter((e) => e.kind === 'assigned').length,
        1,
        'which the timeline does not tell again',
      );
      t.equal((await as(shop, 'POST', '/cases/next')).json().id, caseId, 'their own case first: nothing claimed');
      t.equal((await as(shop, 'POST', `/cases/${caseId}/assign`, { user_id: null })).statusCode, 200);
      t.equal((await as(shop, 'POST', '/cases/next')).json().id, caseId, 'next claims the unassigned case due first');
      t.equal((await as(shop, 'POST', `/cases/${other.id}/claim`)).statusCode, 200);
      const closed = await as(shop, 'POST', `/cases/${caseId}/status`, { status: 'closed', resolution: 'inconclusive' });
      t.equal(closed.statusCode, 200, closed.body);
      await receiver.waitFor(7);
      const byTime = (e: { data: Record<string, any> }) => e.data.updated_at as string;
      t.same(
        received('case.assigned')
          .sort((x, y) => byTime(x).localeCompare(byTime(y)))
          .map((e) => [e.data.id, e.data.assignee]),
        [
          [caseId, shop.owner.userId],
          [caseId, null],
          [caseId, shop.owner.userId],
          [other.id, shop.owner.userId],
        ],
        'each change of assignee (assign, unassign, next, claim), and only those',
      );
      t.same(
        received('case.closed').map((e) => [e.data.id, e.data.status, e.data.resolution]),
        [[caseId, 'closed', 'inconclusive']],
      );
    });

    await t.test('the SLA sweep marks a case past its due time once', async (t) => {
      const { slaWatch } = live.s.service;
      t.equal(await slaWatch.sweep(), 0, 'nothing is due yet');
      offset = 2 * HOUR_MS;
      t.equal(await slaWatch.sweep(), 1, 'the open case, not the closed one');
      t.equal(await slaWatch.sweep(), 0, 'and only once');
      await receiver.waitFor(8);
      const breached = received('case.sla_breached');
      t.equal(breached.length, 1);
      t.match(breached[0]!.data, { entity: { id: 'r-1' }, status: 'open', overdue: true });
      const timeline = (await as(shop, 'GET', `/cases/${breached[0]!.data.id}`)).json().timeline as { kind: string; actor: string }[];
      t.same(
        timeline.filter((e) => e.kind === 'sla_breached').map((e) => e.actor),
        ['system'],
        'one timeline entry',
      );
    });

    await t.test("an inbox's rotation assigns a new case: case.assigned goes with case.opened", async (t) => {
      const [inbox] = (await as(shop, 'GET', '/inboxes')).json().data as { id: string }[];
      const changed = await app.inject({
        method: 'PATCH',
        url: `/api/organizations/${shop.id}/inboxes/${inbox!.id}`,
        headers: shop.owner.headers,
        payload: { members: [shop.owner.userId], auto_assign: { cap: 5 } },
      });
      t.equal(changed.statusCode, 200, changed.body);
      const before = receiver.received.length;
      t.equal(await pay(shop, 'tx-auto', 'r-auto'), 'review');
      await receiver.waitFor(before + 2);
      const opened = received('case.opened').filter((e) => e.data.entity.id === 'r-auto');
      const assigned = received('case.assigned').filter((e) => e.data.entity.id === 'r-auto');
      t.equal(opened.length, 1);
      t.same(
        assigned.map((e) => [e.data.id, e.data.assignee]),
        [[opened[0]!.data.id, shop.owner.userId]],
        'assigned to the only member, once',
      );
    });
  });
}
