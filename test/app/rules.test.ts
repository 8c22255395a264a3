// Rules and lists end to end on each storage back end, over the service's HTTP API with real
// sign-in and real API keys: a member makes a block list and a block rule, and the listed
// customer's next payment is blocked with the rule named in `rules` and `notes`; an allow rule lets
// a payment the model blocks through; shadow rules are recorded and never applied; a rule that
// cannot be evaluated does not match and its error is counted; versions, drafts beside a live
// version, the check endpoint on a stored transaction, the listing's rule filter, replays, lists read
// as they were, bad input refused with nothing stored (a description of white space only too, as the
// reference's pattern says), and one organization never seeing another's rules or lists.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`rules and lists on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    const outsider = await live.signIn('outsider');
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
    let n = 0;
    const pay = (org: Organization, fields: Record<string, unknown> = {}) =>
      live.score(org, {
        amount: 40,
        customer_id: 'c-plain',
        merchant_id: 'm-shop',
        location: 'Lisbon',
        payment_type: 'card',
        transaction_id: `tx-${++n}`,
        ...fields,
      });

    await t.test('from a block list to a blocked payment', async (t) => {
      const created = await member(a, 'POST', '/lists', { name: 'blocked_customers', kind: 'customer_id', description: 'Chargebacks' });
      t.equal(created.statusCode, 201, created.body);
      t.match(created.json(), { name: 'blocked_customers', kind: 'customer_id', items: 0, created_by: a.owner.userId });
      t.equal((await member(a, 'POST', '/lists', { name: 'blocked_customers', kind: 'text' })).json().detail.reason, 'conflict', 'a name is used once');
      const added = await member(a, 'POST', '/lists/blocked_customers/items', { values: ['  c-fraud ', 'c-fraud'], reason: 'chargeback' });
      t.equal(added.statusCode, 200, added.body);
      t.match(added.json(), { added: 1, replaced: 0, list: { items: 1 } }, 'values are trimmed and counted once');

      const before = (await pay(a, { customer_id: 'c-fraud' })).json();
      t.equal(before.decision, 'approve', 'without a rule the model approves');
      t.same(before.rules, [], 'no rule matched');
      t.ok(
        before.stages.some((s: { name: string }) => s.name === 'rules'),
        'the rules stage is timed',
      );

      const rule = await member(a, 'POST', '/rules', {
        name: 'Blocked customers',
        expression: 'in_list("blocked_customers", customer_id)',
        action: 'block',
        status: 'active',
      });
      t.equal(rule.statusCode, 201, rule.body);
      const r = rule.json();
      t.match(r, { name: 'Blocked customers', action: 'block', status: 'active', version: 1, live_version: 1, matches_7d: 0 });

      const blocked = (await pay(a, { customer_id: 'c-fraud' })).json();
      t.equal(blocked.decision, 'block', "the listed customer's next payment is blocked");
      t.same(blocked.rules, [{ id: r.id, name: 'Blocked customers', version: 1, action: 'block', status: 'active', applied: true }]);
      t.ok(
        blocked.notes.some((x: string) => x.includes('"Blocked customers"') && x.includes('from approve to block')),
        'the notes name the rule that changed the decision',
      );
      const other = (await pay(a, { customer_id: 'c-someone' })).json();
      t.equal(other.decision, 'approve', 'another customer is not');
      t.same(other.rules, []);

      // The stored decision carries the rules; the listing filters on them; the 7-day count.
      const record = (await asKey(a, 'GET', `/api/v1/transactions/${blocked.transaction_id}`)).json();
      t.same(record.rules, blocked.rules, 'the record shows the rules as answered');
      t.equal(record.decision, 'block');
      const filtered = (await member(a, 'GET', `/transactions?rule_id=${r.id}`)).json();
      t.same(
        filtered.data.map((x: { transaction_id: string }) => x.transaction_id),
        [blocked.transaction_id],
        'the listing filters on the rule',
      );
      t.equal((await member(a, 'GET', `/rules/${r.id}`)).json().matches_7d, 1, 'its 7-day matches');

      // A replay returns the stored decision and evaluates nothing (the item removed meanwhile).
      const removed = await asKey(a, 'DELETE', '/api/v1/lists/blocked_customers/items', { values: ['c-fraud'] });
      t.match(removed.json(), { removed: 1, list: { items: 0 } });
      const replay = await live.score(a, {
        amount: 40,
        customer_id: 'c-fraud',
        merchant_id: 'm-shop',
        location: 'Lisbon',
        payment_type: 'card',
        transaction_id: blocked.transaction_id,
      });
      t.equal(replay.headers['idempotent-replayed'], 'true');
      t.same(replay.json().rules, blocked.rules, 'the replay answers the stored rules');
      // The model alone decides again (its velocity features may send a customer's fifth payment in
      // a second to review, depending on the hour): no rule matches, nothing blocks it.
      const after = (await pay(a, { customer_id: 'c-fraud' })).json();
      t.same(after.rules, [], 'removed from the list: the rule no longer matches');
      t.not(after.decision, 'block', 'and nothing blocks it');

      // The key adds it back, with an expiry; the list read as it was while the customer was on it.
      t.equal(
        (
          await asKey(a, 'POST', '/api/v1/lists/blocked_customers/items', {
            values: ['c-fraud'],
            reason: 'second chargeback',
            expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          })
        ).statusCode,
        200,
      );
      t.equal((await pay(a, { customer_id: 'c-fraud' })).json().decision, 'block', 'added by the API key: blocked');
      const now = (await member(a, 'GET', '/lists/blocked_customers')).json();
      t.match(now.data, [{ value: 'c-fraud', added_by: `key:${a.keyId}`, reason: 'second chargeback', removed_at: null }]);
      const then = (await member(a, 'GET', `/lists/blocked_customers?as_of=${encodeURIComponent(record.time)}`)).json();
      t.match(then.data, [{ value: 'c-fraud', added_by: a.owner.userId, reason: 'chargeback' }], 'as of the blocked payment: the first stay, since removed');
      t.ok(then.data[0].removed_at, 'with when it was removed');

      // A list an active rule uses cannot be deleted.
      const del = await member(a, 'DELETE', '/lists/blocked_customers');
      t.equal(del.statusCode, 409);
      t.equal(del.json().detail.reason, 'list_in_use');
      t.match(del.json().detail.message, /Blocked customers/);
    });

    await t.test('allow before block before review before the model; shadow rules never decide', async (t) => {
      // A payment the model blocks: the most demanding mode on a large night-time card payment.
      const strict = { mode: 'high_recall', amount: 9_500, customer_id: 'c-new', merchant_id: 'm-new', location: 'Faraway', payment_type: 'card' };
      const model = (await pay(a, strict)).json();
      t.equal(model.decision, 'block', `the model blocks it (risk ${model.risk_score})`);
      const review = (await member(a, 'POST', '/rules', { name: 'Review large', expression: 'amount > 5000.0', action: 'review', status: 'active' })).json();
      const shadowBlock = (await member(a, 'POST', '/rules', { name: 'Shadow small', expression: 'amount < 50.0', action: 'block', status: 'shadow' })).json();
      const reviewed = (await pay(a, strict)).json();
      t.equal(reviewed.decision, 'review', 'a review match decides over the model');
      const allow = await member(a, 'POST', '/rules', { name: 'Trusted merchant', expression: 'merchant_id == "m-new"', action: 'allow', status: 'active' });
      t.equal(allow.statusCode, 201, allow.body);
      const allowed = (await pay(a, strict)).json();
      t.equal(allowed.decision, 'approve', 'an allow rule lets through a payment the model would block');
      t.same(
        allowed.rules.map((m: { name: string; applied: boolean }) => [m.name, m.applied]),
        [
          ['Review large', false],
          ['Trusted merchant', true],
        ],
        'every match listed; only the allow rule applied',
      );
      t.ok(allowed.notes.some((x: string) => x.includes('from block to approve')));
      t.ok(allowed.risk_score >= allowed.block_threshold, `the model's own score still says block (${allowed.risk_score} ≥ ${allowed.block_threshold})`);

      const small = (await pay(a, { amount: 20 })).json();
      t.equal(small.decision, 'approve', 'a shadow block rule does not block');
      t.same(
        small.rules,
        [{ id: shadowBlock.id, name: 'Shadow small', version: 1, action: 'block', status: 'shadow', applied: false }],
        'but its match is recorded',
      );
      // Disabled: no longer evaluated.
      t.equal((await member(a, 'PUT', `/rules/${review.id}`, { status: 'disabled' })).json().status, 'disabled');
      t.same(
        (await pay(a, strict)).json().rules.map((m: { name: string }) => m.name),
        ['Trusted merchant'],
        'a disabled rule is not evaluated',
      );
    });

    await t.test('a rule that cannot be evaluated does not match, and its error is counted', async (t) => {
      const broken = (
        await member(a, 'POST', '/rules', { name: 'Missing value', expression: 'features["no_such_feature"] > 1.0', action: 'block', status: 'active' })
      ).json();
      const res = (await pay(a, { amount: 41 })).json();
      t.equal(res.decision, 'approve');
      t.notOk(
        res.rules.some((m: { id: string }) => m.id === broken.id),
        'it did not match',
      );
      t.ok(
        res.notes.some((x: string) => x.includes('"Missing value" could not be evaluated')),
        'the note says why',
      );
      t.match((await member(a, 'GET', `/rules/${broken.id}`)).json(), { errors_7d: 1, matches_7d: 0 });
      t.equal((await member(a, 'DELETE', `/rules/${broken.id}`)).statusCode, 204);
      t.equal((await member(a, 'GET', `/rules/${broken.id}`)).statusCode, 404, 'deleted');
    });

    await t.test('versions are immutable; a draft waits beside the live version', async (t) => {
      const r = (await member(a, 'POST', '/rules', { name: 'Night', expression: 'hour < 6', action: 'review', status: 'active' })).json();
      const v2 = await member(a, 'PUT', `/rules/${r.id}`, { expression: 'hour < 5 && amount > 100.0' });
      t.match(v2.json(), { version: 2, live_version: 2, status: 'active', expression: 'hour < 5 && amount > 100.0' }, 'a change of an active rule goes live');
      const v3 = await member(a, 'PUT', `/rules/${r.id}`, { expression: 'hour < 4', status: 'draft' });
      t.match(v3.json(), { version: 3, live_version: 2, status: 'active' }, 'a draft waits while version 2 stays live');
      const versions = (await member(a, 'GET', `/rules/${r.id}/versions`)).json().data;
      t.same(
        versions.map((v: { version: number; expression: string }) => [v.version, v.expression]),
        [
          [3, 'hour < 4'],
          [2, 'hour < 5 && amount > 100.0'],
          [1, 'hour < 6'],
        ],
      );
      t.match((await member(a, 'PUT', `/rules/${r.id}`, { status: 'active' })).json(), { version: 3, live_version: 3 }, 'activating puts the newest live');
      t.equal((await member(a, 'PUT', `/rules/${r.id}`, { name: 'Blocked customers' })).json().detail.reason, 'conflict', "another rule's name");
      t.equal((await member(a, 'PUT', `/rules/${r.id}`, { status: 'disabled' })).statusCode, 200);
      const history = (await member(a, 'GET', `/rules/${r.id}/history`)).json().data;
      t.same(
        history.map((h: { action: string; by: string }) => [h.action, h.by]),
        [
          ['created', a.owner.userId],
          ['version', a.owner.userId],
          ['version', a.owner.userId],
          ['changed', a.owner.userId],
          ['changed', a.owner.userId],
        ],
        'every change audited with who made it',
      );
      t.match(history[4].detail, { status: 'disabled' });
      t.equal((await member(b, 'GET', `/rules/${r.id}/history`)).statusCode, 404, 'another organization cannot read it');
    });

    await t.test('check: where an expression is wrong, and what it says of a stored transaction', async (t) => {
      const bad = (await member(a, 'POST', '/rules/check', { expression: 'amount > 10.0 &&\n  custome_id == "x"' })).json();
      t.equal(bad.valid, false);
      t.match(bad.errors, [{ line: 2, column: 3, message: /Unknown variable: custome_id/ }]);
      const tx = (await pay(a, { customer_id: 'c-check', amount: 777 })).json();
      const good = (await member(a, 'POST', '/rules/check', { expression: 'amount > 500.0 && customer.is_new', transaction_id: tx.transaction_id })).json();
      t.match(good, {
        valid: true,
        errors: [],
        evaluation: {
          transaction_id: tx.transaction_id,
          matched: true,
          error: null,
          values: { amount: 777, customer: { prior_transactions: 0, is_new: true } },
        },
      });
      const listed = (
        await member(a, 'POST', '/rules/check', { expression: 'in_list("blocked_customers", customer_id)', transaction_id: tx.transaction_id })
      ).json();
      t.match(listed, { valid: true, lists: ['blocked_customers'], evaluation: { matched: false } });
      t.equal((await member(a, 'POST', '/rules/check', { expression: 'amount > 1.0', transaction_id: 'no-such-tx' })).statusCode, 404);
    });

    await t.test('bad rules and lists are refused with where and why; nothing stored changes', async (t) => {
      const before = (await member(a, 'GET', '/rules')).json().data;
      const cases: [string, RegExp][] = [
        ['amount >', /Unexpected token/],
        ['amount + 1.0', /a rule needs true or false/],
        ['in_list("nope", customer_id)', /no list named "nope"/],
        ['customer.constructor == 1', /constructor/],
        ['this == 1', /Unknown variable: this/],
        ['customer_id.matches("(a+)+b")', /matches\(\) is not available/],
        ['[1, 2].all(x, [1, 2].all(y, x == y))', /inside another comprehension/],
        [`${'('.repeat(40)}true${')'.repeat(40)}`, /maxDepth/],
        [`amount > 1.0 ${'|| amount > 2.0 '.repeat(300)}`, /at most 4000/],
        ['', /empty/],
      ];
      for (const [expression, why] of cases) {
        const res = await member(a, 'POST', '/rules', { name: `bad ${expression.slice(0, 20)}`, expression, action: 'block', status: 'active' });
        t.equal(res.statusCode, 422, `${expression.slice(0, 40)}: 422`);
        t.equal(res.json().detail.reason, 'invalid_rule');
        t.match(res.json().detail.errors[0], { message: why, line: Number, column: Number }, expression.slice(0, 40));
      }
      const r = (await member(a, 'GET', '/rules')).json().data;
      t.same(r, before, 'no rule stored');
      // Probing the runtime at run time fails safely: a missing key, not a prototype.
      const probe = (
        await member(a, 'POST', '/rules/check', {
          expression: 'channel_scores["__proto__"] > 0.0 || channel_scores["constructor"] > 0.0',
          transaction_id: 'tx-1',
        })
      ).json();
      t.match(probe, { valid: true, evaluation: { matched: false, error: /No such key/ } });
      t.equal((await member(a, 'POST', '/lists', { name: 'Bad Name', kind: 'text' })).statusCode, 422);
      t.equal((await member(a, 'POST', '/lists', { name: 'x', kind: 'planet' })).statusCode, 422);
      t.equal((await member(a, 'POST', '/lists/blocked_customers/items', { values: ['   '] })).json().detail.reason, 'validation_failed');
      t.equal(
        (await member(a, 'POST', '/lists/blocked_customers/items', { values: ['x'], expires_at: '2001-01-01T00:00:00Z' })).statusCode,
        422,
        'an expiry in the past',
      );
      t.equal((await member(a, 'POST', '/lists/no_list/items', { values: ['x'] })).statusCode, 404);
    });

    await t.test("one organization never sees another's rules or lists", async (t) => {
      const aRules = (await member(a, 'GET', '/rules')).json().data;
      const someRule = aRules[0];
      t.same((await member(b, 'GET', '/rules')).json().data, [], 'B has no rules');
      t.same((await member(b, 'GET', '/lists')).json().data, [], 'B has no lists');
      const other = (path: string) => app.inject({ url: `/api/organizations/${a.id}${path}`, headers: b.owner.headers });
      t.equal((await other('/rules')).statusCode, 404, "B's member asking for A's rules: 404");
      t.equal((await other('/lists/blocked_customers')).statusCode, 404);
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/rules`, headers: outsider.headers })).statusCode, 404, 'a non-member: 404');
      t.equal((await app.inject({ url: `/api/organizations/${a.id}/lists` })).statusCode, 401, 'a guest: 401');
      t.equal((await member(b, 'GET', `/rules/${someRule.id}`)).statusCode, 404, "A's rule id in B: not found");
      // B's key writes to B's list of the same name only; A's rule does not see it.
      await member(b, 'POST', '/lists', { name: 'blocked_customers', kind: 'customer_id' });
      t.equal((await asKey(b, 'POST', '/api/v1/lists/blocked_customers/items', { values: ['c-b-only'] })).statusCode, 200);
      t.equal((await pay(a, { customer_id: 'c-b-only' })).json().decision, 'approve', "A's block rule does not see B's list");
      t.same((await pay(b, { customer_id: 'c-b-only' })).json().rules, [], 'B has no rule that reads it');
      t.equal((await asKey(a, 'POST', '/api/v1/lists/only_in_b/items', { values: ['x'] })).statusCode, 404);
      t.equal((await app.inject({ method: 'POST', url: '/api/v1/lists/blocked_customers/items', payload: { values: ['x'] } })).statusCode, 401, 'no key: 401');
      // The public sandbox has no rules.
      const guest = (await live.guest({ amount: 40, customer_id: 'c-fraud', merchant_id: 'm-shop' })).json();
      t.equal(guest.rules, undefined, 'no rules in the sandbox');
    });

    await t.test('a description of white space only is refused, as the reference says; around text it is trimmed', async (t) => {
      const c = await live.organization('Described');
      const doc = (await app.inject({ url: '/api/docs/json' })).json();
      const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema.properties.description;
      for (const [path, method] of [
        ['/api/organizations/{id}/rules', 'post'],
        ['/api/organizations/{id}/rules/{rule_id}', 'put'],
        ['/api/organizations/{id}/lists', 'post'],
      ] as const) {
        const documented = body(path, method);
        const strings = [documented, ...(documented.anyOf ?? [])].find((x: { type?: string }) => x.type === 'string');
        const patterns = [strings.pattern, ...(strings.allOf ?? []).map((x: { pattern?: string }) => x.pattern)]
          .filter(Boolean)
          .map((p: string) => new RegExp(p));
        const meets = (x: string) => x.length >= strings.minLength && patterns.every((p: RegExp) => p.test(x));
        t.notOk(meets('\f'), `${method} ${path}: the reference refuses white space only`);
        t.ok(meets('\f Large payments'), `${method} ${path}: and takes text with white space around it`);
      }
      for (const description of ['\f', ' ', '\t\n\u3000\ufeff']) {
        const res = await member(c, 'POST', '/rules', { name: 'Blank', expression: 'amount > 1.0', action: 'review', description });
        t.equal(res.statusCode, 422, `${JSON.stringify(description)}: 422`);
        t.same(res.json().detail.fields, [{ path: 'body.description', message: 'description must not be empty or white space only' }], 'one problem, named');
      }
      t.same((await member(c, 'GET', '/rules')).json().data, [], 'nothing stored');
      const made = await member(c, 'POST', '/rules', { name: 'Described', expression: 'amount > 1.0', action: 'review', description: '\f Large payments \n' });
      t.equal(made.statusCode, 201, made.body);
      t.equal(made.json().description, 'Large payments', 'stored trimmed');
      const id = made.json().id;
      t.equal((await member(c, 'PUT', `/rules/${id}`, { description: '\f' })).statusCode, 422, 'a change to white space only: 422');
      const cleared = await member(c, 'PUT', `/rules/${id}`, { description: null });
      t.equal(cleared.statusCode, 200, cleared.body);
      t.equal(cleared.json().description, null, 'null clears it');
      t.equal((await member(c, 'POST', '/lists', { name: 'blank_list', kind: 'text', description: '\f' })).statusCode, 422, 'a list too');
    });
  });
}
