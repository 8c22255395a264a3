// A case opened by a member on a transaction (`POST /api/organizations/{id}/cases`, the dashboard's
// "Open case"), over real HTTP (the server listening on loopback, fetch with the session cookie and
// the CSRF header) on each storage back end:
// - without any inbox: 409 `no_inbox`;
// - an analyst opens the case of the transaction's customer (201) whatever its decision, the
//   timeline naming the analyst and the reason; the same transaction again adds nothing (200), and
//   another transaction of the customer joins it (200), from the owner too; an unknown id is 404
//   `not_found`; an empty reason 422; without a session 401;
// - a case the API key opened is the one a member's request joins (one use case behind both);
// - another organization's member opens nothing on this organization's transaction: its URL is 404
//   for them, and this organization's transaction id under their own organization is 404 too.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Member, type Organization } from '../support/accounts.ts';

type Rec = Record<string, any>;

for (const backend of backends()) {
  t.test(`cases opened by members on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');

    /** A member's request over HTTP: status and JSON body. */
    const call = async (who: Member | null, method: string, url: string, body?: unknown): Promise<{ status: number; json: Rec }> => {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { ...(who?.headers ?? {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : {} };
    };
    const open = (who: Member | null, org: Organization, body: unknown) => call(who, 'POST', `/api/organizations/${org.id}/cases`, body);
    const read = async (org: Organization, path: string) => (await call(org.owner, 'GET', `/api/organizations/${org.id}${path}`)).json;

    t.equal(
      (await call(shop.owner, 'POST', `/api/organizations/${shop.id}/members`, { email: 'ana@example.com', role: 'analyst' })).status,
      201,
      'an analyst invited',
    );
    const ana = await live.signIn('ana');
    t.match(
      (await read(shop, '/members')).members.find((m: Rec) => m.user_id === ana.userId),
      { role: 'analyst' },
      'who joins as an analyst at sign-in',
    );

    for (const [org, id] of [
      [shop, 'tx-1'],
      [shop, 'tx-2'],
      [shop, 'tx-3'],
      [other, 'tx-o'],
    ] as const) {
      const res = await live.score(org, { transaction_id: id, amount: 120, customer_id: id === 'tx-3' ? 'c-3' : 'c-1', merchant_id: 'm-1' });
      t.equal(res.statusCode, 200, res.body);
      t.equal(res.json().decision, 'approve', `${id}: approved, so no decision opened a case`);
    }

    await t.test('without an inbox: 409 no_inbox', async (t) => {
      const res = await open(ana, shop, { transaction_id: 'tx-1', reason: 'customer called' });
      t.equal(res.status, 409);
      t.equal(res.json.detail.reason, 'no_inbox');
      t.equal((await read(shop, '/cases')).data.length, 0, 'nothing opened');
    });

    const inbox = await call(shop.owner, 'POST', `/api/organizations/${shop.id}/inboxes`, { name: 'Everything', sla_hours: 4 });
    t.equal(inbox.status, 201);

    let caseId = '';
    await t.test('an analyst opens the case, then it is joined, never twice; the timeline names them', async (t) => {
      const first = await open(ana, shop, { transaction_id: 'tx-1', reason: 'customer called: card lost' });
      t.equal(first.status, 201, JSON.stringify(first.json));
      t.match(first.json, { inbox_id: inbox.json.id, entity: { kind: 'customer', id: 'c-1', field: null }, status: 'open', decision_count: 1 });
      caseId = first.json.id;
      t.equal(Date.parse(first.json.due_at) - Date.parse(first.json.opened_at), 4 * 3_600_000, "due after the inbox's SLA");

      const again = await open(ana, shop, { transaction_id: 'tx-1', reason: 'customer called again' });
      t.equal(again.status, 200, 'the same transaction again: not opened');
      t.equal(again.json.id, caseId);
      t.equal(again.json.decision_count, 1, 'and not added twice');
      const joined = await open(shop.owner, shop, { transaction_id: 'tx-2', reason: 'same customer, second payment' });
      t.equal(joined.status, 200, 'the owner adds another transaction of the customer');
      t.match(joined.json, { id: caseId, decision_count: 2 });

      const detail = await read(shop, `/cases/${caseId}`);
      t.same(
        detail.timeline.map((e: Rec) => [e.kind, e.actor, e.detail]),
        [
          ['opened', ana.userId, { entity_kind: 'customer', entity_key: 'c-1', inbox_id: inbox.json.id }],
          ['decision_joined', ana.userId, { transaction_id: 'tx-1', reason: 'customer called: card lost' }],
          ['decision_joined', shop.owner.userId, { transaction_id: 'tx-2', reason: 'same customer, second payment' }],
        ],
        'who opened it and why, who added what',
      );
      t.same(detail.chain, { intact: true, broken_at: null });
    });

    await t.test("a case a server opened is the one a member's request joins", async (t) => {
      const byKey = await fetch(`${base}/api/v1/cases`, {
        method: 'POST',
        headers: { authorization: `Bearer ${shop.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_id: 'tx-3', reason: 'chargeback 88' }),
      });
      t.equal(byKey.status, 201);
      const opened = (await byKey.json()) as Rec;
      const joined = await open(ana, shop, { transaction_id: 'tx-3', reason: 'looking into it' });
      t.equal(joined.status, 200);
      t.equal(joined.json.id, opened.id);
    });

    await t.test('refusals', async (t) => {
      const unknown = await open(ana, shop, { transaction_id: 'tx-none', reason: 'x' });
      t.equal(unknown.status, 404);
      t.equal(unknown.json.detail.reason, 'not_found');
      const empty = await open(ana, shop, { transaction_id: 'tx-1', reason: '  ' });
      t.equal(empty.status, 422);
      t.equal(empty.json.detail.reason, 'validation_failed');
      t.equal((await open(null, shop, { transaction_id: 'tx-1', reason: 'x' })).status, 401, 'no session');
      const withKey = await fetch(`${base}/api/organizations/${shop.id}/cases`, {
        method: 'POST',
        headers: { authorization: `Bearer ${shop.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ transaction_id: 'tx-1', reason: 'x' }),
      });
      t.equal(withKey.status, 401, "an API key is not a member: the dashboard's route needs a session");
    });

    await t.test("another organization's member opens nothing here", async (t) => {
      const before = await read(shop, `/cases/${caseId}`);
      const theirs = await open(other.owner, shop, { transaction_id: 'tx-1', reason: 'not mine' });
      t.equal(theirs.status, 404, "this organization's URL: not found for them");
      t.equal(theirs.json.detail.reason, 'not_found');
      const underOwn = await open(other.owner, other, { transaction_id: 'tx-1', reason: 'not mine' });
      t.equal(underOwn.status, 404, "this organization's transaction id under their own organization: not found");
      t.equal(underOwn.json.detail.reason, 'not_found');
      t.equal((await open(other.owner, other, { transaction_id: 'tx-o', reason: 'mine' })).status, 409, 'their own transaction: they have no inbox');
      t.same(await read(shop, `/cases/${caseId}`), before, "this organization's case is unchanged");
      t.equal((await read(other, '/cases')).data.length, 0, 'and they have none');
    });
  });
}
