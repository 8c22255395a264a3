// Rules over an organization's own fields, end to end on each storage back end: a rule reading
// `fields.<name>` is type-checked against the declarations when it is saved (an undeclared name, a
// comparison of another type, another organization's field: 422 `invalid_rule` with the place);
// scored payments that carry the field are decided by it, one without it is not matched and is no
// rule error; `has(fields.x)` tests presence; `in_list` compares a list with a field; a check on a
// stored transaction shows the values read; a backtest evaluates the decisions that carried the
// field and counts those that did not; a retired field is read no more, and the rule matches no
// more on it.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of backends()) {
  t.test(`rules over custom fields on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const shop = await live.organization('Shop');
    const other = await live.organization('Other');
    type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
    const owner = (org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const payment = (id: string, fields?: Record<string, unknown>) => ({
      transaction_id: id,
      amount: 42,
      customer_id: `c-${id}`,
      merchant_id: 'm-1',
      ...(fields ? { fields } : {}),
    });

    for (const f of [
      { name: 'email_domain', type: 'string', key: true },
      { name: 'basket_items', type: 'number' },
      { name: 'three_ds', type: 'boolean' },
    ])
      t.equal((await owner(shop, 'POST', '/fields', f)).statusCode, 201);
    t.equal((await owner(other, 'POST', '/fields', { name: 'only_other', type: 'string' })).statusCode, 201);
    t.equal((await owner(shop, 'POST', '/lists', { name: 'blocked_domains', kind: 'text' })).statusCode, 201);
    t.equal((await owner(shop, 'POST', '/lists/blocked_domains/items', { values: ['mailinator.com'] })).statusCode, 200);

    await t.test('checked against the declarations when saved', async (t) => {
      const refused: [string, string, RegExp][] = [
        ['an undeclared field', 'fields.shipping_country == "NG"', /fields\.shipping_country is not a declared field/],
        ["another organization's field", 'fields.only_other == "x"', /fields\.only_other is not a declared field/],
        ['a string compared with a number', 'fields.email_domain > 3.0', /no such overload/],
        ['a number in a list', 'in_list("blocked_domains", fields.basket_items)', /no (such )?(matching )?overload/i],
        ['a number field as a condition', 'fields.basket_items', /gives a double/],
      ];
      for (const [what, expression, message] of refused) {
        const res = await owner(shop, 'POST', '/rules', { name: `bad-${what}`, expression, action: 'block', status: 'active' });
        t.equal(res.statusCode, 422, `${what}: ${res.body.slice(0, 200)}`);
        t.equal(res.json().detail.reason, 'invalid_rule', what);
        t.match(res.json().detail.errors[0], { message, line: 1 }, what);
      }
      t.equal((await owner(shop, 'GET', '/rules')).json().data.length, 0, 'nothing saved');
      const check = await owner(shop, 'POST', '/rules/check', { expression: 'has(fields.three_ds) && !fields.three_ds && fields.basket_items >= 10.0' });
      t.same(check.json(), { valid: true, errors: [], lists: [] }, 'a declared field of each type checks');
    });

    await t.test('decided by a rule on a field; a payment without it is not matched, and no error', async (t) => {
      const rules = [
        { name: 'big basket without 3ds', expression: 'fields.basket_items >= 10.0 && !fields.three_ds', action: 'block', status: 'active' },
        { name: 'throwaway mail', expression: 'in_list("blocked_domains", fields.email_domain)', action: 'review', status: 'active' },
        { name: 'says nothing of 3ds', expression: '!has(fields.three_ds)', action: 'review', status: 'shadow' },
      ];
      for (const r of rules) t.equal((await owner(shop, 'POST', '/rules', r)).statusCode, 201, r.name);

      const blocked = (await live.score(shop, payment('f-1', { basket_items: 12, three_ds: false, email_domain: 'example.com' }))).json();
      t.equal(blocked.decision, 'block', 'the block rule decides');
      t.same(
        blocked.rules.map((m: { name: string }) => m.name),
        ['big basket without 3ds'],
      );
      t.notOk(
        blocked.notes.some((n: string) => /could not be evaluated/.test(n)),
        'no rule error',
      );

      const reviewed = (await live.score(shop, payment('f-2', { basket_items: 2, three_ds: true, email_domain: ' mailinator.com' }))).json();
      t.same(
        reviewed.rules.map((m: { name: string }) => m.name),
        ['throwaway mail'],
        'a list compared with a field (trimmed)',
      );
      t.equal(reviewed.decision, 'review');

      const without = (await live.score(shop, payment('f-3'))).json();
      t.same(
        without.rules.map((m: { name: string }) => m.name),
        ['says nothing of 3ds'],
        'without the fields: only the rule on their absence matches (in shadow)',
      );
      t.notOk(
        without.notes.some((n: string) => /could not be evaluated/.test(n)),
        `a missing field is no rule error: ${JSON.stringify(without.notes)}`,
      );

      const wrongType = (await live.score(shop, payment('f-4', { email_domain: 'example.com', basket_items: 30, three_ds: false, extra: 1 }))).json();
      t.equal(wrongType.decision, 'block', 'an undeclared field beside them changes nothing');

      const listed = (await owner(shop, 'GET', '/rules')).json().data;
      t.same(
        listed.map((r: { name: string; errors_7d: number }) => [r.name, r.errors_7d]).sort(),
        [
          ['big basket without 3ds', 0],
          ['says nothing of 3ds', 0],
          ['throwaway mail', 0],
        ],
        'no rule counts an error',
      );
    });

    await t.test('a check on a stored transaction shows the fields read', async (t) => {
      const res = await owner(shop, 'POST', '/rules/check', {
        expression: 'fields.basket_items > 5.0 && fields.email_domain == "example.com"',
        transaction_id: 'f-1',
      });
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      t.match(res.json().evaluation, {
        transaction_id: 'f-1',
        matched: true,
        error: null,
        values: { fields: { basket_items: 12, email_domain: 'example.com' } },
      });
      const missing = await owner(shop, 'POST', '/rules/check', { expression: 'fields.basket_items > 5.0', transaction_id: 'f-3' });
      t.match(missing.json().evaluation, { matched: false, error: null }, `a transaction without it: not matched (${missing.body.slice(0, 300)})`);
    });

    await t.test('a backtest evaluates the decisions that carried the field', async (t) => {
      const res = await owner(shop, 'POST', '/rules/backtests', { expression: 'fields.basket_items >= 10.0', action: 'review' });
      t.equal(res.statusCode, 202, res.body.slice(0, 300));
      let job = res.json();
      for (let k = 0; k < 400 && job.status !== 'succeeded' && job.status !== 'failed'; k++) {
        await sleep(25);
        job = (await app.inject({ url: `/api/jobs/${job.id}`, headers: shop.owner.headers })).json();
      }
      t.equal(job.status, 'succeeded', job.error ?? '');
      t.equal(job.summary.scanned, 4, JSON.stringify(job.summary).slice(0, 600));
      t.equal(job.summary.matched, 2, 'the two payments with 12 and 30 items');
      t.equal(job.summary.without_fields, 1, 'the payment without the field');
      t.equal(job.summary.errors, 0);
      t.ok(
        job.summary.warnings.some((w: string) => /did not carry a field/.test(w)),
        'and says so',
      );
      t.same(job.summary.examples.unknown.map((e: { values: { fields: Record<string, unknown> } }) => e.values.fields.basket_items).sort(), [12, 30]);
    });

    await t.test('a retired field is read no more', async (t) => {
      t.equal((await owner(shop, 'DELETE', '/fields/basket_items')).statusCode, 200);
      const res = await live.score(shop, payment('f-5', { basket_items: 50, three_ds: false }));
      t.equal(res.statusCode, 200, 'sent as before: stored, noted as not declared');
      t.equal(res.json().decision === 'block', false, 'the rule on it no longer blocks');
      t.notOk(
        res.json().rules.some((m: { name: string }) => m.name === 'big basket without 3ds'),
        'nor matches',
      );
      const save = await owner(shop, 'POST', '/rules', { name: 'after', expression: 'fields.basket_items > 1.0', action: 'review', status: 'shadow' });
      t.equal(save.statusCode, 422, 'and a new rule may not read it');
    });

    await t.test("one organization's rules never read another's fields", async (t) => {
      const res = await owner(other, 'POST', '/rules', { name: 'reads shop', expression: 'fields.email_domain == "x"', action: 'block', status: 'active' });
      t.equal(res.statusCode, 422);
      t.match(res.json().detail.errors[0].message, /fields\.email_domain is not a declared field/);
    });
  });
}
