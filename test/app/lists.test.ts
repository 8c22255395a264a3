// Lists and the rules that read them, over the service's HTTP API with real sign-in and API keys,
// on each storage back end:
// - A list compared with a field must hold that field's values (or be a `text` list): a rule that
//   compares a merchant list with customer_id is refused 422 `invalid_rule` naming both, when it is
//   saved, changed, checked or backtested; nothing stored changes.
// - Deleting a list and saving a rule that uses it never both succeed: raced many times, either the
//   rule is saved and the delete is 409 `list_in_use`, or the list is deleted and the rule refused;
//   no evaluated rule is ever left naming a deleted list (the same for a rule put live meanwhile).
// - A list's audit (GET .../lists/{name}/audit): its creation and every add and remove, by a member
//   or a key, newest first with cursor paging, and another organization's member gets 404.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`lists on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend, { MAX_RULES_PER_ORG: 1000 });
    const { app } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
    const member = (org: Organization, method: Method, path: string, payload?: unknown) =>
      app.inject({
        method,
        url: `/api/organizations/${org.id}${path}`,
        headers: org.owner.headers,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const asKey = (org: Organization, method: Method, url: string, payload?: unknown) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${org.key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });

    await t.test('a list compared with a field of another kind is refused, naming both', async (t) => {
      for (const [name, kind] of [
        ['merchants', 'merchant_id'],
        ['cities', 'location'],
        ['anything', 'text'],
        ['customers', 'customer_id'],
        ['channels', 'channel'],
      ]) {
        t.equal((await member(a, 'POST', '/lists', { name, kind })).statusCode, 201, `${name} (${kind})`);
      }
      const rulesBefore = (await member(a, 'GET', '/rules')).json().data;
      const refused: [string, RegExp][] = [
        [
          'in_list("merchants", customer_id)',
          /^The list "merchants" holds merchant_id values, but in_list compares it with customer_id: compare it with merchant_id, or use a list of kind customer_id \(or text\) for customer_id\.$/,
        ],
        ['amount > 1.0 && in_list("cities", customer_id)', /"cities" holds location values, but in_list compares it with customer_id/],
        ['in_list("customers", merchant_id)', /"customers" holds customer_id values, but in_list compares it with merchant_id/],
        ['in_list("customers", mode)', /compares it with mode: compare it with customer_id, or use a list of kind text for mode\./],
        ['in_list("channels", location)', /"channels" holds channel values/],
      ];
      for (const [expression, why] of refused) {
        const column = expression.indexOf(', ') + 3;
        const res = await member(a, 'POST', '/rules', { name: `bad ${expression}`.slice(0, 100), expression, action: 'block', status: 'active' });
        t.equal(res.statusCode, 422, `${expression}: 422`);
        t.equal(res.json().detail.reason, 'invalid_rule');
        t.match(res.json().detail.errors[0], { message: why, line: 1, column }, 'where and why');
        const check = (await member(a, 'POST', '/rules/check', { expression })).json();
        t.match(check, { valid: false, errors: [{ message: why }] }, `${expression}: the check says so too`);
        const backtest = await member(a, 'POST', '/rules/backtests', { expression, action: 'block' });
        t.equal(backtest.statusCode, 422, `${expression}: and a backtest is not queued`);
        t.equal(backtest.json().detail.reason, 'invalid_rule');
      }
      t.same((await member(a, 'GET', '/rules')).json().data, rulesBefore, 'no rule stored');
      for (const expression of [
        'in_list("customers", customer_id)',
        'in_list("anything", customer_id) || in_list("anything", location)',
        'in_list("merchants", merchant_id) && in_list("cities", location)',
        'in_list("channels", channel) || in_list("channels", payment_type + ":" + location)',
        'in_list("customers", "c-" + merchant_id)',
        '["a", "b"].exists(x, in_list("merchants", x))',
      ]) {
        const res = await member(a, 'POST', '/rules', { name: `ok ${expression}`.slice(0, 100), expression, action: 'review', status: 'draft' });
        t.equal(res.statusCode, 201, `${expression}: ${res.body}`);
      }
      const saved = (
        await member(a, 'POST', '/rules', { name: 'Customers', expression: 'in_list("customers", customer_id)', action: 'block', status: 'active' })
      ).json();
      const changed = await member(a, 'PUT', `/rules/${saved.id}`, { expression: 'in_list("customers", merchant_id)' });
      t.equal(changed.statusCode, 422, 'a change to a mismatched comparison is refused');
      t.match(changed.json().detail.errors[0].message, /"customers" holds customer_id values, but in_list compares it with merchant_id/);
      t.match((await member(a, 'GET', `/rules/${saved.id}`)).json(), { version: 1, expression: 'in_list("customers", customer_id)' }, 'the rule is unchanged');
    });

    await t.test("a list's audit: every change, newest first, paged, one organization's", async (t) => {
      t.equal((await member(a, 'POST', '/lists', { name: 'watch', kind: 'customer_id' })).statusCode, 201);
      t.equal((await member(a, 'POST', '/lists/watch/items', { values: ['c-1', ' c-2 '], reason: 'chargeback' })).statusCode, 200);
      t.equal((await asKey(a, 'POST', '/api/v1/lists/watch/items', { values: ['c-3', 'c-1'], expires_at: '2099-01-01T00:00:00Z' })).statusCode, 200);
      t.match((await asKey(a, 'DELETE', '/api/v1/lists/watch/items', { values: ['c-2', 'not-there'] })).json(), { removed: 1 });
      t.match((await member(a, 'DELETE', '/lists/watch/items', { values: ['not-there'] })).json(), { removed: 0 }, 'removing nothing');

      const res = await member(a, 'GET', '/lists/watch/audit');
      t.equal(res.statusCode, 200, res.body);
      const all = res.json();
      t.equal(all.has_more, false);
      t.match(
        all.data,
        [
          { action: 'items_removed', by: `key:${a.keyId}`, detail: { count: 1, values: ['c-2'] } },
          {
            action: 'items_added',
            by: `key:${a.keyId}`,
            detail: { count: 2, replaced: 1, values: ['c-3', 'c-1'], reason: null, expires_at_ms: Date.parse('2099-01-01T00:00:00Z') },
          },
          { action: 'items_added', by: a.owner.userId, detail: { count: 2, replaced: 0, values: ['c-1', 'c-2'], reason: 'chargeback', expires_at_ms: null } },
          { action: 'created', by: a.owner.userId, detail: { name: 'watch', kind: 'customer_id' } },
        ],
        'newest first; removing nothing is not a change',
      );
      t.equal(all.data.length, 4);
      const times = all.data.map((e: { at: string }) => Date.parse(e.at));
      t.same(
        times,
        [...times].sort((x, y) => y - x),
        'times newest first',
      );

      const first = (await member(a, 'GET', '/lists/watch/audit?limit=3')).json();
      t.equal(first.has_more, true);
      t.same(first.data, all.data.slice(0, 3));
      const second = (await member(a, 'GET', `/lists/watch/audit?limit=3&starting_after=${first.data[2].id}`)).json();
      t.same(second, { data: all.data.slice(3), has_more: false }, 'the next page after the last id');

      const customers = (await member(a, 'GET', '/lists/customers/audit')).json().data;
      t.equal((await member(a, 'GET', `/lists/watch/audit?starting_after=${customers[0].id}`)).statusCode, 404, "another list's change as the cursor: 404");
      t.equal((await member(a, 'GET', '/lists/watch/audit?starting_after=abc')).statusCode, 422);
      t.equal((await member(a, 'GET', '/lists/watch/audit?limit=101')).statusCode, 422);
      t.equal((await member(a, 'GET', '/lists/nope/audit')).statusCode, 404, 'no such list: 404');

      // Another organization: its member gets 404 for A's list; its own list of the same name has its own audit.
      t.equal(
        (await app.inject({ url: `/api/organizations/${a.id}/lists/watch/audit`, headers: b.owner.headers })).statusCode,
        404,
        "B's member asking for A's list's audit: 404",
      );
      const outsider = await live.signIn('outsider');
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/lists/watch/audit`, headers: outsider.headers })).statusCode, 404, 'a non-member: 404');
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/lists/watch/audit` })).statusCode, 401, 'a guest: 401');
      t.equal((await member(b, 'POST', '/lists', { name: 'watch', kind: 'text' })).statusCode, 201);
      const theirs = (await member(b, 'GET', '/lists/watch/audit')).json();
      t.match(theirs, { data: [{ action: 'created', by: b.owner.userId, detail: { kind: 'text' } }], has_more: false }, "B's own list: only its own change");
      t.equal((await member(b, 'GET', `/lists/watch/audit?starting_after=${all.data[0].id}`)).statusCode, 404, "A's change as B's cursor: 404");
    });

    await t.test('a list is never deleted under a rule saved or put live at the same moment', async (t) => {
      const db = live.s.service.db;
      const dangling = async () =>
        (
          await db.query<{ name: string }>(
            `SELECT r.name FROM rules r JOIN rule_versions v ON v.rule_id = r.id AND v.version = r.live_version JOIN lists l ON l.id = ANY(v.list_ids)
             WHERE r.organization_id = $1 AND r.deleted_at_ms IS NULL AND r.status IN ('active', 'shadow') AND l.deleted_at_ms IS NOT NULL`,
            [a.id],
          )
        ).map((r) => r.name);
      const outcomes = new Map<string, number>();
      const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);
      const rounds = 12;
      for (let k = 0; k < rounds; k++) {
        // A rule saved with the list while the list is deleted.
        t.equal((await member(a, 'POST', '/lists', { name: `race_${k}`, kind: 'customer_id' })).statusCode, 201);
        const [saved, deleted] = await Promise.all([
          member(a, 'POST', '/rules', { name: `race ${k}`, expression: `in_list("race_${k}", customer_id)`, action: 'block', status: 'active' }),
          member(a, 'DELETE', `/lists/race_${k}`),
        ]);
        t.notOk(saved.statusCode === 201 && deleted.statusCode === 204, `round ${k}: not both (${saved.statusCode}, ${deleted.statusCode})`);
        if (saved.statusCode === 201) {
          t.equal(deleted.statusCode, 409, `round ${k}: the rule first, the delete refused`);
          t.equal(deleted.json().detail.reason, 'list_in_use');
          count('save first');
        } else {
          t.equal(deleted.statusCode, 204, `round ${k}: the delete first`);
          t.equal(saved.statusCode, 422, `round ${k}: the rule refused`);
          t.match(saved.json().detail, { reason: 'invalid_rule', errors: [{ message: /no list named "race_\d+"/ }] });
          count('delete first');
        }

        // A disabled rule put live while its list is deleted.
        t.equal((await member(a, 'POST', '/lists', { name: `live_${k}`, kind: 'customer_id' })).statusCode, 201);
        const rule = (
          await member(a, 'POST', '/rules', { name: `dormant ${k}`, expression: `in_list("live_${k}", customer_id)`, action: 'block', status: 'disabled' })
        ).json();
        const [activated, gone] = await Promise.all([member(a, 'PUT', `/rules/${rule.id}`, { status: 'active' }), member(a, 'DELETE', `/lists/live_${k}`)]);
        t.notOk(
          activated.statusCode === 200 && gone.statusCode === 204,
          `round ${k}: not both put live and deleted (${activated.statusCode}, ${gone.statusCode})`,
        );
        if (activated.statusCode === 200) t.equal(gone.json().detail.reason, 'list_in_use');
        else t.match(activated.json().detail, { reason: 'invalid_rule', errors: [{ message: /names the deleted list live_\d+/ }] });
      }
      t.same(await dangling(), [], 'no evaluated rule names a deleted list');
      t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    });
  });
}
