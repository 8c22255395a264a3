// Teams over real HTTP on each storage back end, with a stand-in identity provider and signed
// tokens: an owner invites by e-mail with a role; the invitation is claimed at the first sign-in
// with that e-mail verified (compared without case), and not with the e-mail unverified nor with
// another one; an e-mail that is a member's or invited already is 409. Roles are enforced by the
// service: an analyst reads the members, keys and webhooks but cannot change keys, members,
// webhooks, fields, models or active rules (403 `forbidden`, naming who can), and works lists,
// outcomes and rules in shadow. Roles change, members are removed or leave, an invitation is
// withdrawn; the last owner can neither be demoted nor leave (409, with the fix). Every change is
// in the members' audit, newest first, with who and when. Isolation: another organization's owner
// sees and changes none of it (404), a guest is 401, and an API key is not a session (401).

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Member } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`teams on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: true });
    const { app } = live.s;
    const acme = await live.organization('Acme');
    const other = await live.organization('Other');
    const owner = acme.owner;

    type Headers = Record<string, string>;
    const call = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: unknown) =>
      app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
    const members = (orgId: string, who: Member) => call('GET', `/api/organizations/${orgId}/members`, who.headers);
    const invite = (orgId: string, who: Member, body: unknown) => call('POST', `/api/organizations/${orgId}/members`, who.headers, body);
    const myOrganizations = async (who: Member) =>
      (await call('GET', '/api/organizations', who.headers)).json().organizations.map((o: { id: string; role: string }) => [o.id, o.role]);
    const audit = async (orgId: string, who: Member, query = '') =>
      (await call('GET', `/api/organizations/${orgId}/members/audit${query}`, who.headers)).json();

    let bea: Member;
    await t.test('an invitation is claimed at the first sign-in with that e-mail, verified', async (t) => {
      const listed = await members(acme.id, owner);
      t.equal(listed.statusCode, 200, listed.body);
      t.same(
        listed.json().members.map((m: { user_id: string; email: string; role: string }) => [m.user_id, m.email, m.role]),
        [[owner.userId, 'owner-of-Acme@example.com', 'owner']],
      );
      t.same(listed.json().invitations, []);

      const made = await invite(acme.id, owner, { email: 'Bea@Example.com', role: 'analyst' });
      t.equal(made.statusCode, 201, made.body);
      t.match(made.json(), { email: 'bea@example.com', role: 'analyst', invited_by: owner.userId });
      t.ok(Date.parse(made.json().invited_at) > 0);

      const refused: [string, unknown, number, string][] = [
        ['invited already (another case)', { email: 'BEA@example.com', role: 'owner' }, 409, 'conflict'],
        ["a member's e-mail", { email: 'Owner-of-acme@EXAMPLE.com', role: 'analyst' }, 409, 'conflict'],
        ['not an e-mail', { email: 'bea at example', role: 'analyst' }, 422, 'validation_failed'],
        ['the old role name', { email: 'cy@example.com', role: 'member' }, 422, 'validation_failed'],
        ['no role', { email: 'cy@example.com' }, 422, 'validation_failed'],
        ['a field it does not have', { email: 'cy@example.com', role: 'analyst', note: 'x' }, 422, 'validation_failed'],
      ];
      for (const [what, body, status, reason] of refused) {
        const res = await invite(acme.id, owner, body);
        t.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 200)}`);
        t.equal(res.json().detail.reason, reason, what);
        t.type(res.json().detail.fix, 'string', `${what}: with a fix`);
      }
      t.match((await invite(acme.id, owner, { email: 'owner-of-acme@example.com', role: 'analyst' })).json().detail, { user_id: owner.userId });

      const unverified = await live.signInWith({ sub: 'bea', email: 'bea@example.com', emailVerified: false });
      t.same(await myOrganizations(unverified), [], 'not with the e-mail unverified');
      const elsewhere = await live.signInWith({ sub: 'bea-too', email: 'bea@example.org' });
      t.same(await myOrganizations(elsewhere), [], 'not with another e-mail');
      t.equal((await members(acme.id, owner)).json().invitations.length, 1, 'the invitation still waits');

      bea = await live.signInWith({ sub: 'bea', email: 'BEA@example.COM', name: 'Bea Analyst' });
      t.same(await myOrganizations(bea), [[acme.id, 'analyst']], 'claimed at the sign-in with the e-mail verified, compared without case');
      const after = (await members(acme.id, owner)).json();
      t.same(after.invitations, []);
      t.match(after.members[1], { user_id: 'bea', email: 'BEA@example.COM', name: 'Bea Analyst', role: 'analyst' }, 'as the provider gave them');
      t.same(await myOrganizations(await live.signInWith({ sub: 'bea', email: 'bea@example.com' })), [[acme.id, 'analyst']], 'once');
    });

    await t.test('an analyst reads, but cannot change keys, members, webhooks, fields, models or active rules', async (t) => {
      t.equal((await members(acme.id, bea)).statusCode, 200, 'reads the members');
      t.equal((await audit(acme.id, bea)).data.length > 0, true, 'and their audit');
      t.equal((await call('GET', `/api/organizations/${acme.id}/api-keys`, bea.headers)).statusCode, 200, 'reads the keys');
      t.equal((await call('GET', `/api/organizations/${acme.id}/webhooks`, bea.headers)).statusCode, 200, 'reads the webhooks');
      t.equal((await call('GET', `/api/organizations/${acme.id}/fields`, bea.headers)).statusCode, 200, 'reads the fields');

      const webhook = await call('POST', `/api/organizations/${acme.id}/webhooks`, owner.headers, {
        url: 'http://127.0.0.1:9/acme',
        events: ['decision.block'],
      });
      const webhookId = webhook.json().id as string | undefined;
      await call('POST', `/api/organizations/${acme.id}/fields`, owner.headers, { name: 'device', type: 'string' });
      const active = await call('POST', `/api/organizations/${acme.id}/rules`, owner.headers, {
        name: 'big',
        expression: 'amount > 10000.0',
        action: 'block',
        status: 'active',
      });
      t.equal(active.statusCode, 201, `an owner makes an active rule: ${active.body.slice(0, 200)}`);
      const activeId = active.json().id as string;

      const forbidden: [string, 'POST' | 'PATCH' | 'PUT' | 'DELETE', string, unknown?][] = [
        ['create a key', 'POST', `/api/organizations/${acme.id}/api-keys`, { name: 'mine' }],
        ['rotate a key', 'POST', `/api/api-keys/${acme.keyId}/rotate`],
        ['revoke a key', 'POST', `/api/api-keys/${acme.keyId}/revoke`],
        ['invite', 'POST', `/api/organizations/${acme.id}/members`, { email: 'cy@example.com', role: 'analyst' }],
        ['change a role', 'PATCH', `/api/organizations/${acme.id}/members/bea`, { role: 'owner' }],
        ['remove an owner', 'DELETE', `/api/organizations/${acme.id}/members/${owner.userId}`],
        ['add a webhook', 'POST', `/api/organizations/${acme.id}/webhooks`, { url: 'http://127.0.0.1:9/bea', events: ['decision.block'] }],
        ['change a webhook', 'PATCH', `/api/organizations/${acme.id}/webhooks/${webhookId}`, { status: 'disabled' }],
        ['rotate a webhook secret', 'POST', `/api/organizations/${acme.id}/webhooks/${webhookId}/rotate`],
        ['delete a webhook', 'DELETE', `/api/organizations/${acme.id}/webhooks/${webhookId}`],
        ['declare a field', 'POST', `/api/organizations/${acme.id}/fields`, { name: 'channel_hint', type: 'string' }],
        ['retire a field', 'DELETE', `/api/organizations/${acme.id}/fields/device`],
        ['roll back a model', 'POST', `/api/organizations/${acme.id}/models/rollback`],
        [
          'create an active rule',
          'POST',
          `/api/organizations/${acme.id}/rules`,
          { name: 'mine', expression: 'amount > 5.0', action: 'review', status: 'active' },
        ],
        ['change an active rule', 'PUT', `/api/organizations/${acme.id}/rules/${activeId}`, { expression: 'amount > 1.0' }],
        ['rename an active rule', 'PUT', `/api/organizations/${acme.id}/rules/${activeId}`, { name: 'renamed' }],
        ['disable an active rule', 'PUT', `/api/organizations/${acme.id}/rules/${activeId}`, { status: 'disabled' }],
        ['delete an active rule', 'DELETE', `/api/organizations/${acme.id}/rules/${activeId}`],
      ];
      for (const [what, method, url, body] of forbidden) {
        const res = await call(method, url, bea.headers, body);
        t.equal(res.statusCode, 403, `${what}: 403 (${res.body.slice(0, 200)})`);
        t.equal(res.json().detail.reason, 'forbidden', what);
        t.match(res.json().detail.message, /^Only owners of .* may .*; you are an analyst\.$/, `${what}: says who may`);
        t.match(res.json().detail.fix, /owners/, `${what}: the fix names who can`);
      }
      t.match((await call('GET', `/api/organizations/${acme.id}/rules/${activeId}`, owner.headers)).json(), {
        name: 'big',
        status: 'active',
        expression: 'amount > 10000.0',
      });
      t.equal((await call('GET', `/api/organizations/${acme.id}/fields`, owner.headers)).json().data.length, 1, 'nothing refused was stored');
      t.equal((await call('GET', `/api/organizations/${acme.id}/api-keys`, owner.headers)).json().api_keys.length, 1);
      t.same(
        (await call('GET', `/api/organizations/${acme.id}/webhooks`, owner.headers)).json().data.map((w: { status: string }) => w.status),
        ['enabled'],
      );
    });

    await t.test('an analyst works lists, outcomes and rules in shadow', async (t) => {
      const list = await call('POST', `/api/organizations/${acme.id}/lists`, bea.headers, { name: 'suspects', kind: 'customer_id' });
      t.equal(list.statusCode, 201, `creates a list: ${list.body.slice(0, 200)}`);
      const added = await call('POST', `/api/organizations/${acme.id}/lists/suspects/items`, bea.headers, { values: ['c-1'], reason: 'chargeback' });
      t.equal(added.statusCode, 200, `fills it: ${added.body.slice(0, 200)}`);

      const scored = await live.scoreLoaded(acme, {
        amount: 120,
        customer_id: 'c-1',
        merchant_id: 'm-1',
        location: 'Lisbon',
        payment_type: 'wallet',
        transaction_id: 'tx-1',
      });
      t.equal(scored.statusCode, 200, scored.body.slice(0, 200));
      const outcome = await call('POST', `/api/organizations/${acme.id}/transactions/tx-1/outcome`, bea.headers, { outcome: 'fraud', source: 'chargeback' });
      t.equal(outcome.statusCode, 200, `reports an outcome: ${outcome.body.slice(0, 200)}`);

      const shadow = await call('POST', `/api/organizations/${acme.id}/rules`, bea.headers, {
        name: 'suspect customers',
        expression: 'in_list("suspects", customer_id)',
        action: 'review',
        status: 'shadow',
      });
      t.equal(shadow.statusCode, 201, `creates a shadow rule: ${shadow.body.slice(0, 200)}`);
      const id = shadow.json().id as string;
      const changed = await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, bea.headers, {
        expression: 'in_list("suspects", customer_id) && amount > 10.0',
      });
      t.equal(changed.statusCode, 200, 'changes it');
      t.equal(changed.json().version, 2);
      t.equal((await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, bea.headers, { status: 'draft' })).json().status, 'draft', 'back to a draft');
      t.equal((await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, bea.headers, { status: 'active' })).statusCode, 403, 'but does not activate it');
      const activated = await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, owner.headers, { status: 'active' });
      t.equal(activated.json().status, 'active', 'an owner does');
      t.equal(
        (await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, bea.headers, { status: 'shadow' })).statusCode,
        403,
        'then it is an owner’s to change',
      );
      await call('PUT', `/api/organizations/${acme.id}/rules/${id}`, owner.headers, { status: 'shadow' });
      t.equal((await call('DELETE', `/api/organizations/${acme.id}/rules/${id}`, bea.headers)).statusCode, 204, 'a shadow rule is an analyst’s to delete');
      const test = await call('POST', `/api/organizations/${acme.id}/rules/backtests`, bea.headers, { expression: 'amount > 100.0', action: 'review' });
      t.equal(test.statusCode, 202, `backtests a rule: ${test.body.slice(0, 200)}`);
    });

    let cy: Member;
    await t.test('roles change, members leave or are removed, invitations are withdrawn; the last owner stays', async (t) => {
      const promoted = await call('PATCH', `/api/organizations/${acme.id}/members/bea`, owner.headers, { role: 'owner' });
      t.equal(promoted.statusCode, 200, promoted.body);
      t.match(promoted.json(), { user_id: 'bea', role: 'owner' });
      t.same(await myOrganizations(bea), [[acme.id, 'owner']], 'at her next request');
      t.equal((await call('POST', `/api/organizations/${acme.id}/api-keys`, bea.headers, { name: 'bea' })).statusCode, 201, 'an owner now');

      const demoted = await call('PATCH', `/api/organizations/${acme.id}/members/${owner.userId}`, owner.headers, { role: 'analyst' });
      t.equal(demoted.statusCode, 200, 'an owner makes themselves an analyst while another owner remains');
      t.equal((await invite(acme.id, owner, { email: 'cy@example.com', role: 'analyst' })).statusCode, 403, 'and is one');

      for (const [what, method, body] of [
        ['demoting the last owner', 'PATCH', { role: 'analyst' }],
        ['the last owner leaving', 'DELETE', undefined],
      ] as const) {
        const res = await call(method, `/api/organizations/${acme.id}/members/bea`, bea.headers, body);
        t.equal(res.statusCode, 409, `${what}: 409`);
        t.equal(res.json().detail.reason, 'conflict');
        t.match(res.json().detail.message, /^You are the only owner of the organization/);
        t.match(res.json().detail.fix, /Make another member an owner first/, `${what}: with the fix`);
      }
      t.equal((await call('PATCH', `/api/organizations/${acme.id}/members/bea`, bea.headers, { role: 'owner' })).statusCode, 200, 'the same role: fine');

      t.equal((await invite(acme.id, bea, { email: 'cy@example.com', role: 'analyst' })).statusCode, 201);
      t.equal((await invite(acme.id, bea, { email: 'dee@example.com', role: 'owner' })).statusCode, 201);
      const withdrawn = await call('DELETE', `/api/organizations/${acme.id}/invitations/${encodeURIComponent('DEE@example.com')}`, bea.headers);
      t.equal(withdrawn.statusCode, 204, `withdrawn: ${withdrawn.body}`);
      t.equal((await call('DELETE', `/api/organizations/${acme.id}/invitations/dee%40example.com`, bea.headers)).statusCode, 404, 'once');
      t.same(await myOrganizations(await live.signInWith({ sub: 'dee', email: 'dee@example.com' })), [], 'a withdrawn invitation is never claimed');

      cy = await live.signInWith({ sub: 'cy', email: 'cy@example.com' });
      t.same(await myOrganizations(cy), [[acme.id, 'analyst']]);
      t.equal((await call('DELETE', `/api/organizations/${acme.id}/members/${owner.userId}`, cy.headers)).statusCode, 403, 'an analyst removes nobody else');
      t.equal((await call('DELETE', `/api/organizations/${acme.id}/members/cy`, cy.headers)).statusCode, 204, 'but leaves');
      t.same(await myOrganizations(cy), [], 'gone at once');
      t.equal((await members(acme.id, cy)).statusCode, 404, 'and sees nothing of it');

      t.equal((await call('DELETE', `/api/organizations/${acme.id}/members/${owner.userId}`, bea.headers)).statusCode, 204, 'an owner removes a member');
      t.equal((await call('GET', `/api/organizations/${acme.id}`, owner.headers)).statusCode, 404, 'who has no access from then on');
      t.equal((await call('PATCH', `/api/organizations/${acme.id}/members/${owner.userId}`, bea.headers, { role: 'owner' })).statusCode, 404, 'nor a role');
      t.equal((await call('PATCH', `/api/organizations/${acme.id}/members/nobody`, bea.headers, { role: 'owner' })).statusCode, 404);
      t.equal((await call('PATCH', `/api/organizations/${acme.id}/members/bea`, bea.headers, { role: 'member' })).statusCode, 422, 'the old role name');
      t.same(
        (await members(acme.id, bea)).json().members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]),
        [['bea', 'owner']],
      );
    });

    await t.test('every change is audited: who, when, what, newest first', async (t) => {
      const page = await audit(acme.id, bea, '?limit=100');
      t.same(
        page.data.map((e: Record<string, unknown>) => [e.action, e.by, e.user_id, e.email, e.role, e.previous_role]),
        [
          ['removed', 'bea', owner.userId, 'owner-of-Acme@example.com', 'analyst', null],
          ['left', 'cy', 'cy', 'cy@example.com', 'analyst', null],
          ['joined', 'cy', 'cy', 'cy@example.com', 'analyst', null],
          ['invitation_withdrawn', 'bea', null, 'dee@example.com', 'owner', null],
          ['invited', 'bea', null, 'dee@example.com', 'owner', null],
          ['invited', 'bea', null, 'cy@example.com', 'analyst', null],
          ['role_changed', owner.userId, owner.userId, 'owner-of-Acme@example.com', 'analyst', 'owner'],
          ['role_changed', owner.userId, 'bea', 'bea@example.com', 'owner', 'analyst'],
          ['joined', 'bea', 'bea', 'bea@example.com', 'analyst', null],
          ['invited', owner.userId, null, 'bea@example.com', 'analyst', null],
          ['joined', owner.userId, owner.userId, 'owner-of-Acme@example.com', 'owner', null],
        ],
      );
      t.equal(page.has_more, false);
      t.equal(page.data[0].by_email, 'bea@example.com', 'with the e-mail of who made it');
      t.ok(
        page.data.every((e: { at: string }) => Date.parse(e.at) > 0),
        'and when',
      );
      const first = await audit(acme.id, bea, '?limit=4');
      t.equal(first.has_more, true);
      const next = await audit(acme.id, bea, `?limit=4&starting_after=${first.data[3].id}`);
      t.same(
        next.data.map((e: { id: string }) => e.id),
        page.data.slice(4, 8).map((e: { id: string }) => e.id),
        'paged',
      );
      const theirs = (await audit(other.id, other.owner)).data.at(-1).id;
      t.equal(
        (await call('GET', `/api/organizations/${acme.id}/members/audit?starting_after=${theirs}`, bea.headers)).statusCode,
        404,
        "another organization's change is no cursor here",
      );
    });

    await t.test("isolation: another organization's owner, a guest, an API key", async (t) => {
      const stranger = other.owner;
      const refusals: [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', string, unknown?][] = [
        ['list', 'GET', `/api/organizations/${acme.id}/members`],
        ['audit', 'GET', `/api/organizations/${acme.id}/members/audit`],
        ['invite', 'POST', `/api/organizations/${acme.id}/members`, { email: 'x@example.com', role: 'owner' }],
        ['change a role', 'PATCH', `/api/organizations/${acme.id}/members/bea`, { role: 'analyst' }],
        ['remove', 'DELETE', `/api/organizations/${acme.id}/members/bea`],
        ['withdraw', 'DELETE', `/api/organizations/${acme.id}/invitations/cy%40example.com`],
      ];
      for (const [what, method, url, body] of refusals) {
        t.equal((await call(method, url, stranger.headers, body)).statusCode, 404, `another organization's owner: ${what} is 404`);
        t.equal((await call(method, url, {}, body)).statusCode, 401, `a guest: ${what} is 401`);
        t.equal((await call(method, url, { authorization: `Bearer ${acme.key}` }, body)).statusCode, 401, `an API key: ${what} is 401`);
      }
      // Bea, an owner of Acme, in Other's place: nothing of Acme's there, and Acme's invitation
      // e-mail invited in Other is Other's own.
      t.equal((await invite(other.id, stranger, { email: 'bea@example.com', role: 'analyst' })).statusCode, 201, "Acme's member is no member of Other");
      t.equal((await call('PATCH', `/api/organizations/${other.id}/members/bea`, stranger.headers, { role: 'owner' })).statusCode, 404);
      const theirs = (await members(other.id, stranger)).json();
      t.same(
        theirs.members.map((m: { user_id: string }) => m.user_id),
        [stranger.userId],
      );
      t.same(
        theirs.invitations.map((i: { email: string }) => i.email),
        ['bea@example.com'],
      );
      t.same(
        (await audit(other.id, stranger)).data.map((e: { action: string }) => e.action),
        ['invited', 'joined'],
        'its audit is its own',
      );
      t.same(await myOrganizations(bea), [[acme.id, 'owner']], 'an invitation of an existing user waits for their next sign-in');
      t.equal((await call('GET', '/api/v1/organizations/members', { authorization: `Bearer ${acme.key}` })).statusCode, 404, 'the key surface has no members');
    });
  });
}
