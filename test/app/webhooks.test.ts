// Webhooks over real HTTP, with real sign-in and API keys, on each storage back end, delivered to a
// receiver on loopback that checks every signature with the `standardwebhooks` verifier:
// - owners manage endpoints; the secret is answered once and in no listing; members read, test and
//   redeliver but may not change; another organization's member finds nothing (404);
// - a blocked score is a `decision.block` event whose data is the response the key was answered;
//   another organization's endpoint never hears of it;
// - failures (500, a timeout, a redirect, which is not followed) are retried in order, each attempt
//   logged; after the give-up time the endpoint is disabled with its reason, and enabling it sends
//   what was pending;
// - after a rotation every delivery carries two signatures, each valid with its own secret, until
//   the overlap ends;
// - URLs that reach private addresses are refused at creation, and at delivery.

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';
import { Receiver } from '../support/receiver.ts';
import { WebhookSender } from '../../src/jobs/webhook-send.ts';

const timings = { retrySeconds: [0.3], timeoutMs: 800, pollMs: 100, leaseMs: 5_000, jitter: 0 };

for (const backend of backends()) {
  t.test(`webhooks on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }, { webhooks: timings });
    const { app } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    const receiver = await new Receiver().start();
    const other = await new Receiver().start();
    t.teardown(() => Promise.all([receiver.close(), other.close()]));
    type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
    const as = (headers: Record<string, string>, org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({ method, url: `/api/organizations/${org.id}/webhooks${path}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    const owner = (org: Organization, method: Method, path: string, payload?: unknown) => as(org.owner.headers, org, method, path, payload);
    const verify = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
      new Webhook(secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      });

    /** A delivery once it is no longer pending (its attempts are recorded after they are sent). */
    const settled = async (org: Organization, path: string) => {
      for (let i = 0; ; i++) {
        const d = (await owner(org, 'GET', path)).json();
        if (d.status !== 'pending' || i >= 100) return d;
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    const created = await owner(a, 'POST', '', { url: `${receiver.url}/hooks`, events: ['decision.block', 'decision.review'], description: 'Risk desk' });
    t.equal(created.statusCode, 201, created.body);
    const endpoint = created.json();
    t.match(endpoint.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'a whsec_ secret, shown once');
    t.match(endpoint, {
      url: `${receiver.url}/hooks`,
      status: 'enabled',
      events: ['decision.block', 'decision.review'],
      description: 'Risk desk',
      created_by: a.owner.userId,
    });
    const secret: string = endpoint.secret;

    await t.test('the secret is in no listing, and other callers see what they may', async (t) => {
      const list = await owner(a, 'GET', '');
      t.equal(list.statusCode, 200);
      t.equal(list.json().data.length, 1);
      t.notOk(list.body.includes(secret.slice(6, 30)), 'no part of the secret in the listing');
      t.notOk('secret' in list.json().data[0]);
      t.notOk((await owner(a, 'GET', `/${endpoint.id}`)).body.includes(secret.slice(6, 30)));
      // A member who is not an owner reads, but may not change.
      const member = await live.signIn('acme-analyst');
      const inviteDb = live.s.service.db;
      await inviteDb.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [a.id, member.userId]);
      t.equal((await as(member.headers, a, 'GET', '')).statusCode, 200, 'a member reads');
      const refused = await as(member.headers, a, 'POST', '', { url: receiver.url, events: ['rule.changed'] });
      t.equal(refused.statusCode, 403);
      t.equal(refused.json().detail.reason, 'forbidden');
      t.equal((await as(member.headers, a, 'PATCH', `/${endpoint.id}`, { status: 'disabled' })).statusCode, 403);
      t.equal((await as(member.headers, a, 'POST', `/${endpoint.id}/rotate`)).statusCode, 403);
      t.equal((await as(member.headers, a, 'DELETE', `/${endpoint.id}`)).statusCode, 403);
      // Another organization's owner: nothing, whichever way it is asked.
      t.equal((await as(b.owner.headers, a, 'GET', '')).statusCode, 404);
      t.equal((await as(b.owner.headers, b, 'GET', `/${endpoint.id}`)).statusCode, 404, "an endpoint id under one's own organization");
      t.equal((await as(b.owner.headers, b, 'GET', `/${endpoint.id}/deliveries`)).statusCode, 404);
      t.equal((await as(b.owner.headers, b, 'POST', `/${endpoint.id}/test`)).statusCode, 404);
      t.same((await owner(b, 'GET', '')).json().data, []);
      const unknown = await owner(a, 'POST', '', { url: receiver.url, events: ['no.such'] });
      t.equal(unknown.statusCode, 422, 'an unknown event type');
      t.equal(unknown.json().detail.fields[0].path, 'body.events.0');
    });

    await t.test('a blocked score is a decision.block event, signed, with the response as its data', async (t) => {
      const bEndpoint = (await owner(b, 'POST', '', { url: other.url, events: ['decision.block'] })).json();
      t.ok(bEndpoint.id);
      for (const org of [a, b]) {
        const rule = await app.inject({
          method: 'POST',
          url: `/api/organizations/${org.id}/rules`,
          headers: org.owner.headers,
          payload: { name: 'Big', expression: 'amount > 5000.0', action: 'block', status: 'active' },
        });
        t.equal(rule.statusCode, 201, rule.body);
      }
      const before = receiver.received.length;
      const approved = (
        await live.score(a, { amount: 40, customer_id: 'c-1', merchant_id: 'm-1', location: 'Lisbon', payment_type: 'card', transaction_id: 'tx-small' })
      ).json();
      t.equal(approved.decision, 'approve');
      const blocked = await live.score(a, {
        amount: 9000,
        customer_id: 'c-1',
        merchant_id: 'm-1',
        location: 'Lisbon',
        payment_type: 'card',
        transaction_id: 'tx-big',
      });
      t.equal(blocked.json().decision, 'block');
      await receiver.waitFor(before + 1);
      const got = receiver.received[before]!;
      t.same(verify(secret, got), JSON.parse(got.body), 'the standardwebhooks verifier accepts it');
      const event = JSON.parse(got.body);
      t.match(event, { type: 'decision.block', organization_id: a.id, id: /^evt_/ });
      t.equal(got.headers['webhook-id'], event.id, 'webhook-id is the event id');
      t.same(event.data, blocked.json(), 'data is the response the key was answered');
      t.equal(got.headers['content-type'], 'application/json');
      // A replay of the same transaction id is not a second event.
      await live.score(a, { amount: 9000, customer_id: 'c-1', merchant_id: 'm-1', location: 'Lisbon', payment_type: 'card', transaction_id: 'tx-big' });
      await new Promise((r) => setTimeout(r, 500));
      t.equal(receiver.received.length, before + 1, 'one event for one transaction');
      t.equal(other.received.length, 0, "Bolt's endpoint hears nothing of Acme's payments");
      await settled(a, `/${endpoint.id}/deliveries/${(await owner(a, 'GET', `/${endpoint.id}/deliveries`)).json().data[0].id}`);
      const log = (await owner(a, 'GET', `/${endpoint.id}/deliveries`)).json();
      t.match(log.data[0], {
        event_id: event.id,
        event_type: 'decision.block',
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
        attempt_log: [{ attempt: 1, status_code: 200, error: null, response_excerpt: 'ok' }],
      });
      t.equal((await as(b.owner.headers, b, 'GET', `/${bEndpoint.id}/deliveries`)).json().data.length, 0);
      // The fields of its own a payment was sent with ride along (the answer does not repeat them).
      const declared = await app.inject({
        method: 'POST',
        url: `/api/organizations/${a.id}/fields`,
        headers: a.owner.headers,
        payload: { name: 'bin_country', type: 'string' },
      });
      t.equal(declared.statusCode, 201, declared.body);
      const fields = { bin_country: 'NG', campaign: 'black-friday' };
      const withFields = await live.score(a, { amount: 9100, customer_id: 'c-2', merchant_id: 'm-1', transaction_id: 'tx-fields', fields });
      t.equal(withFields.json().decision, 'block');
      await receiver.waitFor(before + 2);
      const carried = JSON.parse(receiver.received[before + 1]!.body);
      t.same(carried.data, { ...withFields.json(), fields }, "data is the answer and the payment's fields, declared or not");
    });

    await t.test("outcomes, analysts' verdicts, rule changes and finished jobs are events", async (t) => {
      const ops = await new Receiver().start();
      t.teardown(() => ops.close());
      const created = await owner(a, 'POST', '', {
        url: ops.url,
        events: ['outcome.recorded', 'review.decided', 'rule.changed', 'job.succeeded', 'job.failed'],
      });
      const opsSecret: string = created.json().secret;
      const key = (method: 'POST', url: string, payload: object) => app.inject({ method, url, headers: { authorization: `Bearer ${a.key}` }, payload });
      t.equal((await key('POST', '/api/v1/transactions/tx-big/outcome', { outcome: 'fraud', source: 'chargeback' })).statusCode, 200);
      await ops.waitFor(1);
      t.match(ops.events()[0], {
        type: 'outcome.recorded',
        organization_id: a.id,
        data: { transaction_id: 'tx-big', outcome: 'fraud', previous_outcome: null, source: 'chargeback', reported_by: `key:${a.keyId}` },
      });
      // The same outcome again changes nothing, and is no event.
      await key('POST', '/api/v1/transactions/tx-big/outcome', { outcome: 'fraud', source: 'chargeback' });
      // An analyst's verdict from the dashboard: an outcome and a review decision.
      const verdict = await app.inject({
        method: 'POST',
        url: `/api/organizations/${a.id}/transactions/tx-small/outcome`,
        headers: a.owner.headers,
        payload: { outcome: 'legit', source: 'review' },
      });
      t.equal(verdict.statusCode, 200, verdict.body);
      await ops.waitFor(3);
      t.same(
        ops
          .events()
          .slice(1, 3)
          .map((e) => [e.type, e.data.transaction_id, e.data.outcome, e.data.reported_by]),
        [
          ['outcome.recorded', 'tx-small', 'legit', a.owner.userId],
          ['review.decided', 'tx-small', 'legit', a.owner.userId],
        ],
      );
      const rules = (await app.inject({ url: `/api/organizations/${a.id}/rules`, headers: a.owner.headers })).json().data;
      const changed = await app.inject({
        method: 'PUT',
        url: `/api/organizations/${a.id}/rules/${rules[0].id}`,
        headers: a.owner.headers,
        payload: { status: 'shadow' },
      });
      t.equal(changed.statusCode, 200, changed.body);
      await ops.waitFor(4);
      const history = (await app.inject({ url: `/api/organizations/${a.id}/rules/${rules[0].id}/history`, headers: a.owner.headers })).json().data;
      t.same(ops.events()[3]!.data, { rule_id: rules[0].id, ...history[history.length - 1] }, "rule.changed carries the rule's history entry");
      const backtest = await app.inject({
        method: 'POST',
        url: `/api/organizations/${a.id}/rules/backtests`,
        headers: a.owner.headers,
        payload: { expression: 'amount > 100.0', action: 'review' },
      });
      t.equal(backtest.statusCode, 202, backtest.body);
      await ops.waitFor(5, 60_000);
      const job = (await app.inject({ url: `/api/jobs/${backtest.json().id}`, headers: a.owner.headers })).json();
      t.match(ops.events()[4], { type: 'job.succeeded', data: { id: job.id, kind: 'backtest', status: 'succeeded', organization_id: a.id } });
      t.same(Object.keys(ops.events()[4]!.data).sort(), Object.keys(job).sort(), 'the job as GET /api/jobs/{id} shows it');
      t.equal(ops.received.length, 5, 'nothing else');
      for (const r of ops.received) t.ok(verify(opsSecret, r), 'signed');
    });

    await t.test('failures are retried in order, each attempt logged; a redirect is not followed', async (t) => {
      const before = receiver.received.length;
      receiver.answers = [
        { status: 500, body: 'down\u0000\u001b[31m' },
        { status: 200, delayMs: 2_000 },
        { status: 302, location: `${other.url}/elsewhere` },
      ];
      const first = (await owner(a, 'POST', `/${endpoint.id}/test`)).json();
      const second = (await owner(a, 'POST', `/${endpoint.id}/test`)).json();
      await receiver.waitFor(before + 4);
      const ids = receiver.received.slice(before).map((r) => r.headers['webhook-id']);
      // The 500, the 302 and the 200 of the first event (the attempt that timed out was dropped
      // before its answer), then the second: in order.
      t.same(ids, [first.event_id, first.event_id, first.event_id, second.event_id], 'the second waits for the first');
      t.equal(other.received.length, 0, 'the redirect was not followed');
      const d = await settled(a, `/${endpoint.id}/deliveries/${first.delivery_id}`);
      t.match(d, { status: 'succeeded', attempts: 4, event_type: 'webhook.test' });
      t.same(
        d.attempt_log.map((x: { status_code: number | null; error: string | null }) => [x.status_code, x.error]),
        [
          [500, 'http_status'],
          [null, 'timeout'],
          [302, 'redirect'],
          [200, null],
        ],
      );
      t.equal(d.attempt_log[0].response_excerpt, 'down\ufffd\ufffd[31m', 'control characters never shown raw');
      t.match(d.payload, { message: /test event/ });
    });

    await t.test('redeliver sends the same event again, with the same webhook-id', async (t) => {
      const log = (await owner(a, 'GET', `/${endpoint.id}/deliveries?limit=1`)).json();
      t.equal(log.has_more, true);
      const before = receiver.received.length;
      const again = await owner(a, 'POST', `/${endpoint.id}/deliveries/${log.data[0].id}/redeliver`);
      t.equal(again.statusCode, 202);
      await receiver.waitFor(before + 1);
      t.equal(receiver.received[before]!.headers['webhook-id'], log.data[0].event_id);
      const next = (await owner(a, 'GET', `/${endpoint.id}/deliveries?limit=1&starting_after=${log.data[0].id}`)).json();
      t.equal(next.data.length, 1, 'paging by starting_after');
    });

    await t.test('after a rotation both secrets sign until the overlap ends', async (t) => {
      const rotated = await owner(a, 'POST', `/${endpoint.id}/rotate`);
      t.equal(rotated.statusCode, 200);
      const fresh: string = rotated.json().secret;
      t.not(fresh, secret);
      t.ok(Math.abs(Date.parse(rotated.json().previous_secret_expires_at) - Date.now() - 86_400_000) < 60_000, 'the old secret signs for 24 hours');
      let before = receiver.received.length;
      await owner(a, 'POST', `/${endpoint.id}/test`);
      await receiver.waitFor(before + 1);
      const got = receiver.received[before]!;
      t.equal(String(got.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
      t.ok(verify(secret, got), 'valid with the old secret');
      t.ok(verify(fresh, got), 'valid with the new secret');
      await live.s.service.db.query(`UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [endpoint.id]);
      before = receiver.received.length;
      await owner(a, 'POST', `/${endpoint.id}/test`);
      await receiver.waitFor(before + 1);
      const later = receiver.received[before]!;
      t.equal(String(later.headers['webhook-signature']).split(' ').length, 1, 'one signature once the overlap ended');
      t.ok(verify(fresh, later));
      t.throws(() => verify(secret, later), 'the old secret no longer verifies');
      t.equal((await owner(a, 'GET', `/${endpoint.id}`)).json().previous_secret_expires_at, null);
    });

    await t.test('URLs that reach private addresses are refused when private networks are not allowed', async (t) => {
      const { live: strict } = await liveFor(t, backend);
      const org = await strict.organization('Strict');
      for (const url of [
        'http://example.com/hook',
        'https://127.0.0.1/hook',
        'https://localhost/hook',
        'https://169.254.169.254/latest',
        'https://[::1]/x',
        'https://10.1.2.3/x',
        'https://[fd00:ec2::254]/x',
        'ftp://example.com/x',
        'https://user:pw@example.com/x',
      ]) {
        const res = await strict.s.app.inject({
          method: 'POST',
          url: `/api/organizations/${org.id}/webhooks`,
          headers: org.owner.headers,
          payload: { url, events: ['rule.changed'] },
        });
        t.equal(res.statusCode, 422, url);
        t.equal(res.json().detail.reason, 'invalid_webhook_url', url);
        t.match(res.json().detail.fix, /https/);
      }
      // At delivery, the address the connection resolves is checked again (a name that resolves to
      // loopback now, whatever it resolved to before).
      const sender = new WebhookSender({ allowPrivateNetworks: false }, 2_000, 'test');
      const port = new URL(receiver.url).port;
      const before = receiver.received.length;
      for (const url of [`http://localhost:${port}/x`, `http://127.0.0.1:${port}/x`]) {
        const r = await sender.send(url, { id: 'evt_x', body: '{}' }, [secret]);
        t.equal(r.error, 'address_refused', url);
      }
      sender.close();
      t.equal(receiver.received.length, before, 'nothing reached the receiver');
    });

    await t.test('failing past the give-up time disables the endpoint; enabling it sends what was pending', async (t) => {
      const { live: brief } = await liveFor(t, backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: true }, { webhooks: { ...timings, giveUpAfterSeconds: 0.5 } });
      const org = await brief.organization('Brief');
      const failing = await new Receiver().start();
      t.teardown(() => failing.close());
      failing.answers = Array.from({ length: 100 }, () => ({ status: 503 }));
      const e = (
        await brief.s.app.inject({
          method: 'POST',
          url: `/api/organizations/${org.id}/webhooks`,
          headers: org.owner.headers,
          payload: { url: failing.url, events: ['rule.changed'] },
        })
      ).json();
      const path = `/api/organizations/${org.id}/webhooks/${e.id}`;
      const first = (await brief.s.app.inject({ method: 'POST', url: `${path}/test`, headers: org.owner.headers })).json();
      const second = (await brief.s.app.inject({ method: 'POST', url: `${path}/test`, headers: org.owner.headers })).json();
      let state: { status: string; disabled_reason: string | null; disabled_message: string | null } = {
        status: 'enabled',
        disabled_reason: null,
        disabled_message: null,
      };
      for (let i = 0; i < 100 && state.status === 'enabled'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = (await brief.s.app.inject({ url: path, headers: org.owner.headers })).json();
      }
      t.match(state, { status: 'disabled', disabled_reason: 'delivery_failing', disabled_message: /failed for .*HTTP 503/ });
      const log = (await brief.s.app.inject({ url: `${path}/deliveries`, headers: org.owner.headers })).json().data;
      t.match(
        log.find((d: { id: string }) => d.id === first.delivery_id),
        { status: 'failed' },
      );
      t.match(
        log.find((d: { id: string }) => d.id === second.delivery_id),
        { status: 'pending', attempts: 0 },
        'the later one waited',
      );
      failing.answers = [];
      const seen = failing.received.length;
      const enabled = await brief.s.app.inject({ method: 'PATCH', url: path, headers: org.owner.headers, payload: { status: 'enabled' } });
      t.match(enabled.json(), { status: 'enabled', disabled_reason: null });
      await failing.waitFor(seen + 1);
      t.equal(failing.received[seen]!.headers['webhook-id'], second.event_id, 'the pending delivery goes out once enabled');
    });
  });
}
