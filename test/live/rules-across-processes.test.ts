// Rules and lists across two server processes on one real PostgreSQL: a value an API key adds to a
// list on one process blocks the customer's next payment on the other within the live feed's lag,
// and its removal lets it through again; a rule activated, changed to a new version and disabled on
// one applies on the other within the lag too, and so does a field declared or retired; a key
// field's velocity on either counts the payments both recorded. The other
// process has the organization loaded before each change, so what it learns comes by the feed,
// not by a fresh load.

import t from 'tap';
import { twoProcesses, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

/** Longer than any lag the feed should show here (as in several-processes.test.ts). */
const LAG_BUDGET_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('rules and lists reach every process', { skip: needs('postgres') }, async (t) => {
  const { a, b, org, asMember } = await twoProcesses(t, 'shared');
  let n = 0;
  const pay = async (s: ServerProcess, customer: string) => {
    const res = await withKey(s.base, org.secret, '/api/v1/risk/score', {
      transaction_id: `p-${++n}`,
      amount: 30,
      customer_id: customer,
      merchant_id: 'm-1',
      location: 'Lisbon',
      payment_type: 'card',
    });
    if (res.status !== 200) throw new Error(res.text);
    return res.json as { decision: string; rules: { name: string; version: number; applied: boolean }[] };
  };

  t.equal((await asMember(a, 'POST', '/lists', { name: 'blocked', kind: 'customer_id' })).status, 201);
  const rule = await asMember(a, 'POST', '/rules', { name: 'Blocked', expression: 'in_list("blocked", customer_id)', action: 'block', status: 'active' });
  t.equal(rule.status, 201);
  // B loads the organization (its rules and lists with it) before the changes below.
  t.equal((await pay(b, 'c-ok')).decision, 'approve');

  t.test('a value added on A blocks on B; removed on A, B lets it through', async (t) => {
    t.equal((await withKey(a.base, org.secret, '/api/v1/lists/blocked/items', { values: ['c-bad'] })).status, 200);
    await sleep(LAG_BUDGET_MS);
    const blocked = await pay(b, 'c-bad');
    t.equal(blocked.decision, 'block', 'B blocks the customer A listed');
    t.match(blocked.rules, [{ name: 'Blocked', applied: true }]);
    const removed = await fetch(`${a.base}/api/v1/lists/blocked/items`, {
      method: 'DELETE',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.secret}` },
      body: JSON.stringify({ values: ['c-bad'] }),
    });
    t.equal(removed.status, 200);
    await sleep(LAG_BUDGET_MS);
    t.equal((await pay(b, 'c-bad')).decision, 'approve', 'B lets the customer through once A removed it');
  });

  t.test('a field declared on A is checked on B; retired on A, B no longer checks it', async (t) => {
    const send = (s: ServerProcess, fields: Record<string, unknown>) =>
      withKey(s.base, org.secret, '/api/v1/risk/score', { transaction_id: `f-${++n}`, amount: 30, customer_id: 'c-f', merchant_id: 'm-1', fields });
    t.equal((await send(b, { basket_items: 'three' })).status, 200, 'not declared: accepted');
    t.equal((await asMember(a, 'POST', '/fields', { name: 'basket_items', type: 'number' })).status, 201);
    await sleep(LAG_BUDGET_MS);
    const wrong = await send(b, { basket_items: 'three' });
    t.equal(wrong.status, 422, 'B checks the type A declared');
    t.equal((await send(b, { basket_items: 3 })).status, 200);
    const { 'content-type': _, ...headers } = org.member as Record<string, string>;
    t.equal((await fetch(`${a.base}/api/organizations/${org.id}/fields/basket_items`, { method: 'DELETE', headers })).status, 200);
    await sleep(LAG_BUDGET_MS);
    t.equal((await send(b, { basket_items: 'three' })).status, 200, 'retired on A: B no longer checks it');
  });

  t.test("a key value's velocity counts the payments every process recorded", async (t) => {
    t.equal((await asMember(a, 'POST', '/fields', { name: 'device_hash', type: 'string', key: true })).status, 201);
    await sleep(LAG_BUDGET_MS);
    const send = async (s: ServerProcess, customer: string) => {
      const res = await withKey(s.base, org.secret, '/api/v1/risk/score', {
        transaction_id: `d-${++n}`,
        amount: 10,
        customer_id: customer,
        merchant_id: 'm-1',
        fields: { device_hash: 'dev-shared' },
      });
      if (res.status !== 200) throw new Error(res.text);
      return res.json.field_history.device_hash as { prior_transactions: number; distinct_customers_24h: number; amount_24h: number };
    };
    t.match(await send(a, 'c-1'), { prior_transactions: 0, distinct_customers_24h: 0 });
    t.match(await send(a, 'c-2'), { prior_transactions: 1, distinct_customers_24h: 1 });
    await sleep(LAG_BUDGET_MS);
    t.match(await send(b, 'c-3'), { prior_transactions: 2, distinct_customers_24h: 2, amount_24h: 20 }, "B counts A's two payments");
    await sleep(LAG_BUDGET_MS);
    t.match(await send(a, 'c-1'), { prior_transactions: 3, distinct_customers_24h: 3, amount_24h: 30 }, "and A counts B's");
  });

  t.test('a rule changed on B applies on A', async (t) => {
    const id = rule.json.id;
    t.equal((await pay(a, 'c-vip')).decision, 'approve');
    t.equal((await asMember(b, 'PUT', `/rules/${id}`, { expression: 'in_list("blocked", customer_id) || customer_id == "c-vip"' })).status, 200);
    await sleep(LAG_BUDGET_MS);
    const v2 = await pay(a, 'c-vip');
    t.equal(v2.decision, 'block', "A evaluates B's new version");
    t.match(v2.rules, [{ name: 'Blocked', version: 2 }]);
    t.equal((await asMember(b, 'PUT', `/rules/${id}`, { status: 'shadow' })).status, 200);
    await sleep(LAG_BUDGET_MS);
    const shadow = await pay(a, 'c-vip');
    // The model alone decides now (a customer paying again within seconds may reach review).
    t.not(shadow.decision, 'block', 'shadowed on B: A records it without applying it');
    t.match(shadow.rules, [{ name: 'Blocked', applied: false }]);
    t.equal((await asMember(b, 'PUT', `/rules/${id}`, { status: 'disabled' })).status, 200);
    await sleep(LAG_BUDGET_MS);
    t.same((await pay(a, 'c-vip')).rules, [], 'disabled on B: A no longer evaluates it');
  });
});
