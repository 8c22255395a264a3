// Inbox routes read what rules read, over HTTP on each storage back end: a route naming one of the
// organization's lists (`in_list`) sends the decisions of the customers on it to its inbox, from the
// moment they are added and no longer once removed; a route reading the model's features (the
// features the decision was scored with) sends the decisions they match; the others go to the
// default inbox. A route naming a list that does not exist is refused when saved (422
// `invalid_rule`), and a list a route names cannot be deleted (409 `list_in_use`, naming the inbox)
// until the route stops naming it. Another organization's list of the same name is not read.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`routes read lists and features, on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
    const as = (org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });

    t.equal(
      (await as(shop, 'POST', '/rules', { name: 'review', expression: 'customer_id.startsWith("r-")', action: 'review', status: 'active' })).statusCode,
      201,
    );
    t.equal((await as(shop, 'POST', '/lists', { name: 'vip', kind: 'customer_id' })).statusCode, 201);
    // The other organization's list of the same name holds the customer the shop's does not.
    t.equal((await as(other, 'POST', '/lists', { name: 'vip', kind: 'customer_id' })).statusCode, 201);
    t.equal((await as(other, 'POST', '/lists/vip/items', { values: ['r-later'] })).statusCode, 200);

    const refused = await as(shop, 'POST', '/inboxes', { name: 'Nope', route: 'in_list("no_such_list", customer_id)' });
    t.equal(refused.statusCode, 422, 'a route naming a list that does not exist is refused');
    t.equal(refused.json().detail.reason, 'invalid_rule');

    const vip = (await as(shop, 'POST', '/inboxes', { name: 'VIP', route: 'in_list("vip", customer_id)' })).json();
    const big = (await as(shop, 'POST', '/inboxes', { name: 'Big for them', route: 'features.amount_to_customer_mean > 10.0' })).json();
    const rest = (await as(shop, 'POST', '/inboxes', { name: 'Everything else' })).json();
    t.ok(vip.id && big.id && rest.id, 'three inboxes');
    t.equal((await as(shop, 'POST', '/lists/vip/items', { values: ['r-vip', 'r-gone'] })).statusCode, 200);

    let n = 0;
    const pay = async (customer: string, amount = 50) => {
      const res = await live.score(shop, { transaction_id: `p${++n}`, amount, customer_id: customer, merchant_id: 'm-1' });
      t.equal(res.statusCode, 200);
      const body = res.json();
      t.equal(body.decision, 'review');
      return body;
    };
    const inboxOf = async (customer: string) => {
      const open = (await as(shop, 'GET', '/cases?limit=100')).json().data as { entity: { id: string }; inbox_id: string; status: string }[];
      return open.find((c) => c.entity.id === customer && c.status !== 'closed')?.inbox_id;
    };

    await pay('r-vip');
    t.equal(await inboxOf('r-vip'), vip.id, "a customer on the list: the list's inbox");
    await pay('r-later');
    t.equal(await inboxOf('r-later'), rest.id, "not on this organization's list (only on another's): the default");
    t.equal((await as(shop, 'POST', '/lists/vip/items', { values: ['r-new'] })).statusCode, 200);
    await pay('r-new');
    t.equal(await inboxOf('r-new'), vip.id, 'added to the list: routed by it from then on');
    t.equal((await as(shop, 'DELETE', '/lists/vip/items', { values: ['r-gone'] })).statusCode, 200);
    await pay('r-gone');
    t.equal(await inboxOf('r-gone'), rest.id, 'removed from the list: no longer routed by it');

    // A customer who pays about 20 each time (ordinary amounts for them), then a hundred times that.
    t.equal(
      (await as(shop, 'POST', '/rules', { name: 'review usual', expression: 'customer_id == "usual"', action: 'review', status: 'active' })).statusCode,
      201,
    );
    for (let k = 0; k < 6; k++) await live.score(shop, { transaction_id: `u${k}`, amount: 20 + k, customer_id: 'usual', merchant_id: 'm-1' });
    // Each of those went to review and to the default inbox (a small z-score); the case is closed so
    // that the next decision opens a case of its own.
    const usualCase = (await as(shop, 'GET', '/cases?limit=100')).json().data.find((c: { entity: { id: string } }) => c.entity.id === 'usual');
    t.equal(usualCase.inbox_id, rest.id, 'ordinary amounts for the customer: the default');
    t.equal((await as(shop, 'POST', `/cases/${usualCase.id}/status`, { status: 'closed', resolution: 'inconclusive' })).statusCode, 200);
    await pay('usual', 3000);
    t.equal(await inboxOf('usual'), big.id, 'an amount far above the customer’s own: the route reading the features');

    const inUse = await as(shop, 'DELETE', '/lists/vip');
    t.equal(inUse.statusCode, 409, 'a list a route names is not deleted');
    t.match(inUse.json().detail, { reason: 'list_in_use', inboxes: ['VIP'] });
    t.match(inUse.json().detail.message, /route of the inbox VIP/);
    t.equal((await as(shop, 'PATCH', `/inboxes/${vip.id}`, { route: 'amount > 10000.0' })).statusCode, 200);
    t.equal((await as(shop, 'DELETE', '/lists/vip')).statusCode, 204, 'deleted once no route names it');
  });
}
