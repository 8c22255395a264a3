// A customer's erasure across two server processes on one real PostgreSQL: the customer paid through
// both, is on a list an active rule blocks with, and shows in the evidence of other customers'
// scores on both. Asked on A with the organization's key, the erasure is done within seconds;
// then, within a bounded time and without a restart, B (which held the organization loaded since
// before) answers nothing that names the customer: no listing, no evidence in a new score's
// answer, and the customer's list entry is gone from its memory (a new payment is not blocked).

import t from 'tap';
import { getWithKey, twoProcesses, withKey, type ServerProcess } from '../support/processes.ts';
import { needs } from '../support/components.ts';

const GONE = 'cust-gone-k3';
/** How long the other process may take to build the organization's history again. */
const BOUND_MS = 15_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test("an erasure reaches every process's memory", { skip: needs('postgres') }, async (t) => {
  const { a, b, org, asMember } = await twoProcesses(t, 'erasing');
  let n = 0;
  const pay = async (s: ServerProcess, customer: string) => {
    const res = await withKey(s.base, org.secret, '/api/v1/risk/score', {
      transaction_id: `p-${++n}`,
      amount: 30 + n,
      customer_id: customer,
      merchant_id: 'm-1',
      location: 'Lisbon',
      payment_type: 'card',
    });
    if (res.status !== 200) throw new Error(res.text);
    return res.json as { decision: string; rules: { name: string; applied: boolean }[] } & Record<string, unknown>;
  };

  t.equal((await asMember(a, 'POST', '/lists', { name: 'blocked', kind: 'customer_id' })).status, 201);
  t.equal(
    (await asMember(a, 'POST', '/rules', { name: 'Blocked', expression: 'in_list("blocked", customer_id)', action: 'block', status: 'active' })).status,
    201,
  );
  t.equal((await pay(b, 'c-ok')).decision, 'approve', 'B holds the organization from here on');
  for (let i = 0; i < 4; i++) {
    await pay(a, `c-${i}`);
    await pay(i % 2 ? a : b, GONE);
  }
  t.equal((await withKey(a.base, org.secret, '/api/v1/lists/blocked/items', { values: [GONE] })).status, 200);
  await sleep(500);
  t.equal((await pay(b, GONE)).decision, 'block', "B blocks the customer A listed (it is in B's memory)");
  t.match(JSON.stringify(await pay(b, 'c-probe-0')), GONE, "B's evidence for another customer names it");

  const asked = await withKey(a.base, org.secret, `/api/v1/customers/${GONE}/erasure`, {});
  t.equal(asked.status, 202, asked.text);
  let erasure: any;
  for (let i = 0; i < 200; i++) {
    erasure = (await asMember(a, 'GET', '/erasures')).json.data[0];
    if (erasure?.status === 'done') break;
    await sleep(50);
  }
  t.match(erasure, { id: asked.json.id, status: 'done', counts: { transactions: 5, list_items: 1 } }, 'done, on A, within seconds');

  t.same((await getWithKey(b.base, org.secret, `/api/v1/transactions?customer_id=${GONE}`)).json.data, [], "B lists none of the customer's transactions");
  const since = Date.now();
  let probe = '';
  for (let i = 1; Date.now() - since < BOUND_MS; i++) {
    probe = JSON.stringify(await pay(b, `c-probe-${i}`));
    if (!probe.includes(GONE)) break;
    await sleep(100);
  }
  t.notMatch(probe, GONE, `within ${BOUND_MS / 1000} s, B's answers no longer name the customer (${Date.now() - since} ms)`);
  const again = await pay(b, GONE);
  t.not(again.decision, 'block', "the customer's list entry is gone from B's memory too");
  t.same(
    again.rules.filter((r) => r.applied),
    [],
    'no rule applies',
  );
});
