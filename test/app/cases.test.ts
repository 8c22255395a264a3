// Cases opening themselves, end to end on each storage back end: an owner makes inboxes (a routed
// one for large amounts that takes blocks too, grouped by a key field; a default one by customer);
// each `review` decision opens or joins its entity's case in the inbox its route picks, a `block`
// only where the inbox takes blocks, an `approve` never; the case lists its decisions as their
// records show them and a timeline whose hash chain is intact, and its export says so; the
// listing filters by inbox and status, soonest due first, with cursor paging; a route that does
// not check, a grouping by a field that is not a key, a member who is not the organization's, a
// member making an inbox: refused with their reason; another organization sees none of it.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`cases on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    type Method = 'GET' | 'POST' | 'DELETE';
    const as = (org: Organization, method: Method, path: string, payload?: unknown, headers = org.owner.headers) =>
      app.inject({ method, url: `/api/organizations/${org.id}${path}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

    t.equal((await as(shop, 'POST', '/fields', { name: 'device_hash', type: 'string', key: true })).statusCode, 201);
    t.equal((await as(shop, 'POST', '/fields', { name: 'note', type: 'string' })).statusCode, 201);
    // Rules make the decisions: review what the test says to, block what it says to.
    for (const r of [
      { name: 'review', expression: 'customer_id.startsWith("r-")', action: 'review', status: 'active' },
      { name: 'block', expression: 'customer_id.startsWith("b-")', action: 'block', status: 'active' },
      { name: 'allow', expression: 'customer_id.startsWith("a-")', action: 'allow', status: 'active' },
    ])
      t.equal((await as(shop, 'POST', '/rules', r)).statusCode, 201);

    await t.test('inboxes: made by owners, checked', async (t) => {
      const refused: [unknown, number, string][] = [
        [{ name: 'x', route: 'amount >' }, 422, 'invalid_rule'],
        [{ name: 'x', group_by: 'field:note' }, 422, 'validation_failed'],
        [{ name: 'x', group_by: 'colour' }, 422, 'validation_failed'],
        [{ name: 'x', members: ['somebody-else'] }, 422, 'not_a_member'],
      ];
      for (const [body, status, reason] of refused) {
        const res = await as(shop, 'POST', '/inboxes', body);
        t.equal(res.statusCode, status, res.body.slice(0, 200));
        t.equal(res.json().detail.reason, reason);
      }
      const big = await as(shop, 'POST', '/inboxes', {
        name: 'Large amounts',
        route: 'amount >= 1000.0',
        on_block: true,
        group_by: 'field:device_hash',
        sla_hours: 4,
        members: [shop.owner.userId],
      });
      t.equal(big.statusCode, 201, big.body);
      t.match(big.json(), { name: 'Large amounts', position: 0, on_block: true, sla_hours: 4, members: [shop.owner.userId] });
      t.equal((await as(shop, 'POST', '/inboxes', { name: 'Everything else' })).statusCode, 201);
      t.equal((await as(shop, 'POST', '/inboxes', { name: 'Everything else' })).statusCode, 409, 'a name in use');
      t.same(
        (await as(shop, 'GET', '/inboxes')).json().data.map((i: { name: string; group_by: string }) => [i.name, i.group_by]),
        [
          ['Large amounts', 'field:device_hash'],
          ['Everything else', 'customer'],
        ],
        'in routing order',
      );
      const analyst = await live.signIn('analyst-of-shop');
      await live.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [shop.id, analyst.userId]);
      t.equal((await as(shop, 'POST', '/inboxes', { name: 'Mine' }, analyst.headers)).statusCode, 403, 'a member who is not an owner');
      t.equal((await as(shop, 'GET', '/inboxes', undefined, analyst.headers)).statusCode, 200, 'reads them');
    });

    const inboxes = (await as(shop, 'GET', '/inboxes')).json().data as { id: string; name: string }[];
    const [big, rest] = [inboxes.find((i) => i.name === 'Large amounts')!, inboxes.find((i) => i.name === 'Everything else')!];
    const pay = async (id: string, customer: string, amount: number, device?: string) => {
      const res = await live.score(shop, {
        transaction_id: id,
        amount,
        customer_id: customer,
        merchant_id: 'm-1',
        ...(device ? { fields: { device_hash: device } } : {}),
      });
      if (res.statusCode !== 200) throw new Error(res.body);
      return res.json().decision as string;
    };

    await t.test('decisions open and join cases where the routing says', async (t) => {
      t.equal(await pay('p1', 'r-1', 50), 'review');
      t.equal(await pay('p2', 'r-1', 60), 'review');
      t.equal(await pay('p3', 'r-2', 70), 'review');
      t.equal(await pay('p4', 'b-1', 80), 'block');
      t.equal(await pay('p5', 'a-1', 90), 'approve');
      t.equal(await pay('p6', 'r-3', 5000, 'dev-x'), 'review');
      t.equal(await pay('p7', 'b-2', 7000, 'dev-x'), 'block');
      t.equal(await pay('p8', 'r-4', 3000), 'review');

      const listed = (await as(shop, 'GET', '/cases')).json();
      const byEntity = new Map(listed.data.map((c: { entity: { id: string }; inbox_id: string; id: string }) => [c.entity.id, c]));
      t.same([...byEntity.keys()].sort(), ['dev-x', 'r-1', 'r-2', 'r-4'], 'one case per entity; a block only where the inbox takes blocks; no approve');
      t.same(
        Object.fromEntries(listed.data.map((c: { entity: { id: string }; decision_count: number }) => [c.entity.id, c.decision_count])),
        { 'dev-x': 2, 'r-1': 2, 'r-2': 1, 'r-4': 1 },
        'each listed with how many decisions it groups',
      );
      const dev = byEntity.get('dev-x') as { priority: number };
      t.match(dev, { inbox_id: big.id, entity: { kind: 'key', field: 'device_hash', id: 'dev-x' }, status: 'open' });
      t.ok(dev.priority > 0, 'its priority: the expected loss of its worst decision');
      t.match(byEntity.get('r-1'), { inbox_id: rest.id, entity: { kind: 'customer', id: 'r-1', field: null } });
      t.match(
        byEntity.get('r-4'),
        { inbox_id: big.id, entity: { kind: 'customer', id: 'r-4' } },
        'a large payment without the device: grouped by its customer',
      );

      const devCase = (await as(shop, 'GET', `/cases/${(byEntity.get('dev-x') as { id: string }).id}`)).json();
      t.same(
        devCase.decisions.map((d: { transaction_id: string; decision: string }) => [d.transaction_id, d.decision]),
        [
          ['p6', 'review'],
          ['p7', 'block'],
        ],
        'its decisions, as their records show them',
      );
      t.same(
        devCase.timeline.map((e: { n: number; kind: string; actor: string }) => [e.n, e.kind, e.actor]),
        [
          [1, 'opened', 'system'],
          [2, 'decision_joined', 'system'],
          [3, 'decision_joined', 'system'],
        ],
      );
      t.same(devCase.chain, { intact: true, broken_at: null });
      t.match(
        devCase.entity_summary,
        { role: 'key', id: 'dev-x', field: 'device_hash', totals: { transactions: 2 }, counterparties: [{ role: 'customer' }] },
        "its entity's totals and counterparties, as the key value's page shows them",
      );
      t.same(devCase.lists, [], 'on no list');
      const r1 = (await as(shop, 'GET', `/cases/${(byEntity.get('r-1') as { id: string }).id}`)).json();
      t.match(r1.entity_summary, { role: 'customer', id: 'r-1', totals: { transactions: 2 }, counterparties: [{ role: 'merchant' }] });
      t.equal((await as(shop, 'POST', '/lists', { name: 'watched', kind: 'customer_id' })).statusCode, 201);
      t.equal((await as(shop, 'POST', '/lists', { name: 'shops', kind: 'merchant_id' })).statusCode, 201);
      t.equal((await as(shop, 'POST', '/lists/watched/items', { values: ['r-1'], reason: 'chargebacks' })).statusCode, 200);
      t.equal((await as(shop, 'POST', '/lists/shops/items', { values: ['r-1'] })).statusCode, 200);
      t.match(
        (await as(shop, 'GET', `/cases/${r1.id}`)).json().lists,
        [{ name: 'watched', kind: 'customer_id', reason: 'chargebacks', expires_at: null }],
        'the customer lists it is on (not a merchant list holding the same text)',
      );
      t.equal((await as(shop, 'DELETE', '/lists/watched/items', { values: ['r-1'] })).statusCode, 200);
      t.same((await as(shop, 'GET', `/cases/${r1.id}`)).json().lists, [], 'off the list once removed');
      const exported = (await as(shop, 'GET', `/cases/${devCase.id}/export`)).json();
      t.match(exported, { organization_id: shop.id, case: { id: devCase.id, chain: { intact: true } } });
      t.equal(exported.case.timeline[2].prev_hash, exported.case.timeline[1].hash, 'each entry names the hash before it');
    });

    await t.test('the listing: filters and paging, soonest due first', async (t) => {
      const inBig = (await as(shop, 'GET', `/cases?inbox_id=${big.id}`)).json().data;
      t.equal(inBig.length, 2, 'the routed inbox has two');
      t.ok(
        inBig.every((c: { due_at: string; opened_at: string }) => Date.parse(c.due_at) - Date.parse(c.opened_at) === 4 * 3_600_000),
        'due four hours after opening',
      );
      const first = (await as(shop, 'GET', '/cases?limit=2')).json();
      t.equal(first.data.length, 2);
      t.equal(first.has_more, true);
      const second = (await as(shop, 'GET', `/cases?limit=2&starting_after=${first.data[1].id}`)).json();
      t.equal(second.data.length, 2);
      t.equal(second.has_more, false);
      const all = [...first.data, ...second.data];
      t.same(
        all.map((c: { due_at: string }) => c.due_at),
        [...all.map((c: { due_at: string }) => c.due_at)].sort(),
        'soonest due first',
      );
      t.equal((await as(shop, 'GET', '/cases?status=closed')).json().data.length, 0);
      t.equal((await as(shop, 'GET', '/cases?overdue=true')).json().data.length, 0, 'none overdue yet');
    });

    await t.test('working a case: next, assign, notes, snooze, close with a verdict, reopen', async (t) => {
      const analyst = await live.signIn('analyst-of-shop');
      const next = await as(shop, 'POST', '/cases/next');
      t.equal(next.statusCode, 200, next.body.slice(0, 200));
      const c = next.json();
      t.equal(c.assignee, shop.owner.userId, 'claimed for the caller');
      t.equal(c.entity.id, (await as(shop, 'GET', '/cases')).json().data[0].entity.id, 'the soonest due');
      const nobody = await as(shop, 'POST', `/cases/${c.id}/assign`, { user_id: 'nobody-here' });
      t.equal(nobody.json().detail?.reason, 'not_a_member', nobody.body.slice(0, 300));
      const stranger = await as(shop, 'POST', `/cases/${c.id}/assign`, { user_id: analyst.userId });
      if (c.inbox_id === big.id) t.equal(stranger.statusCode, 422, 'an analyst who does not work this inbox: not_a_member');
      t.equal((await as(shop, 'POST', `/cases/${c.id}/notes`, { text: 'Called the customer: no answer.' })).statusCode, 200);
      const snoozed = await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'snoozed', until: new Date(Date.now() + 3_600_000).toISOString() });
      t.equal(snoozed.statusCode, 200, snoozed.body.slice(0, 200));
      t.equal(snoozed.json().status, 'snoozed');
      t.equal(
        (await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'snoozed', until: new Date(Date.now() - 1000).toISOString() })).statusCode,
        422,
        'until in the past',
      );
      t.equal((await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'closed' })).statusCode, 422, 'closing needs a resolution');

      const closed = await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'closed', resolution: 'fraud' });
      t.equal(closed.statusCode, 200, closed.body.slice(0, 200));
      const body = closed.json();
      t.match(body, { status: 'closed', resolution: 'fraud' });
      t.ok(
        body.decisions.every(
          (d: { outcome: { outcome: string; source: string; reported_by: string } | null }) =>
            d.outcome?.outcome === 'fraud' && d.outcome.source === 'review' && d.outcome.reported_by === shop.owner.userId,
        ),
        'each decision recorded fraud, source review, by the closing member',
      );
      t.same(body.timeline.map((e: { kind: string }) => e.kind).slice(-5), ['assigned', 'note', 'status', 'status', 'outcomes_recorded']);
      t.same(body.chain, { intact: true, broken_at: null });
      const noted = await as(shop, 'POST', `/cases/${c.id}/notes`, { text: 'late' });
      t.equal(noted.statusCode, 409, 'a closed case takes no note');
      t.equal(noted.json().detail.reason, 'case_closed');
      // Reopened and closed as legitimate: outcomes already recorded stay as they were.
      t.equal((await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'open' })).json().status, 'open', 'reopened');
      const again = (await as(shop, 'POST', `/cases/${c.id}/status`, { status: 'closed', resolution: 'legitimate' })).json();
      t.ok(
        again.decisions.every((d: { outcome: { outcome: string } }) => d.outcome.outcome === 'fraud'),
        'decisions with an outcome keep it',
      );
      t.same(again.timeline.at(-1).detail.transaction_ids, [], 'and none is recorded again');
    });

    await t.test('another organization sees none of it', async (t) => {
      const id = (await as(shop, 'GET', '/cases')).json().data[0].id;
      t.same((await as(other, 'GET', '/cases')).json().data, []);
      t.same((await as(other, 'GET', '/inboxes')).json().data, []);
      t.equal((await as(other, 'GET', `/cases/${id}`)).statusCode, 404);
      t.equal((await as(other, 'GET', `/cases/${id}/export`)).statusCode, 404);
      t.equal((await app.inject({ url: `/api/organizations/${shop.id}/cases` })).statusCode, 401, 'a guest: 401');
      t.equal((await as(shop, 'GET', '/cases', undefined, other.owner.headers)).statusCode, 404, "another organization's owner: 404");
      // Its own decisions open cases in its own inboxes only.
      await live.score(other, { transaction_id: 'o1', amount: 10, customer_id: 'r-1', merchant_id: 'm' });
      t.same((await as(other, 'GET', '/cases')).json().data, [], 'no inbox: no case');
    });
  });
}
