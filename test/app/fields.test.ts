// An organization's own fields, declared over real HTTP on each storage back end: an owner declares
// fields of each type (a string one as a key), reads them back in name order with the limits, and
// a field's audit; a name taken, a key that is not a string, a bad name or type are refused with
// their reason and a fix; a member reads but may not declare or retire (403); retiring keeps the
// field listed as retired, frees its name, and the name can be declared again (with its audit);
// the limits (50 fields, 5 keys) hold, with nothing stored past them; another organization, a
// guest and an API key see none of it. Sent with a payment: a declared field of another type is
// refused naming it, an undeclared one kept and noted, every field kept with the record; a card
// number or an IP address in any field is refused (the sandbox too), never stored or repeated; a
// retired field is no longer checked, and one organization's declarations are not another's.

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`custom fields on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const acme = await live.organization('Acme');
    const other = await live.organization('Other');
    const member = await live.signIn('member-of-acme');
    await live.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [acme.id, member.userId]);

    const fieldsOf = (orgId: string, headers: Record<string, string>, query = '') => app.inject({ url: `/api/organizations/${orgId}/fields${query}`, headers });
    const declare = (orgId: string, headers: Record<string, string>, body: unknown) =>
      app.inject({ method: 'POST', url: `/api/organizations/${orgId}/fields`, headers, payload: body as object });
    const retire = (orgId: string, headers: Record<string, string>, name: string) =>
      app.inject({ method: 'DELETE', url: `/api/organizations/${orgId}/fields/${name}`, headers });

    await t.test('an owner declares fields and reads them back', async (t) => {
      const made = [
        { name: 'email_domain', type: 'string', key: true, description: 'The part of the e-mail address after the @' },
        { name: 'bin_country', type: 'string' },
        { name: 'items', type: 'number', description: 'Items in the basket' },
        { name: 'three_ds_passed', type: 'boolean' },
      ];
      for (const f of made) {
        const res = await declare(acme.id, acme.owner.headers, f);
        t.equal(res.statusCode, 201, `${f.name}: ${res.body}`);
        t.match(res.json(), {
          name: f.name,
          type: f.type,
          key: f.key ?? false,
          description: f.description ?? null,
          declared_by: acme.owner.userId,
          retired_at: null,
        });
      }
      const list = await fieldsOf(acme.id, member.headers);
      t.equal(list.statusCode, 200, 'a member reads them');
      t.same(
        list.json().data.map((f: { name: string; type: string; key: boolean }) => [f.name, f.type, f.key]),
        [
          ['bin_country', 'string', false],
          ['email_domain', 'string', true],
          ['items', 'number', false],
          ['three_ds_passed', 'boolean', false],
        ],
        'by name, each with its type and whether it is a key',
      );
      t.same(list.json().limits, { fields: 50, keys: 5 });
      const audit = await app.inject({ url: `/api/organizations/${acme.id}/fields/email_domain/audit`, headers: member.headers });
      t.same(
        audit.json().data.map((e: { action: string; by: string; detail: unknown }) => [e.action, e.by, e.detail]),
        [['declared', acme.owner.userId, { type: 'string', key: true, description: 'The part of the e-mail address after the @' }]],
      );
    });

    await t.test('refused: a taken name, a key that is not a string, a bad name or type; members may not write', async (t) => {
      const cases: [string, Record<string, string>, unknown, number, string][] = [
        ['a name declared already', acme.owner.headers, { name: 'items', type: 'string' }, 409, 'conflict'],
        ['a number as a key', acme.owner.headers, { name: 'score', type: 'number', key: true }, 422, 'validation_failed'],
        ['a name with capitals', acme.owner.headers, { name: 'Email', type: 'string' }, 422, 'validation_failed'],
        ['a name with a dash', acme.owner.headers, { name: 'e-mail', type: 'string' }, 422, 'validation_failed'],
        ['a name of 41 characters', acme.owner.headers, { name: 'a'.repeat(41), type: 'string' }, 422, 'validation_failed'],
        ['an unknown type', acme.owner.headers, { name: 'when', type: 'date' }, 422, 'validation_failed'],
        ['a field the declaration does not have', acme.owner.headers, { name: 'x', type: 'string', unique: true }, 422, 'validation_failed'],
        ['a member declaring', member.headers, { name: 'device_hash', type: 'string' }, 403, 'forbidden'],
      ];
      for (const [what, headers, body, status, reason] of cases) {
        const res = await declare(acme.id, headers, body);
        t.equal(res.statusCode, status, `${what}: ${status} (${res.body.slice(0, 200)})`);
        t.equal(res.json().detail.reason, reason, `${what}: ${reason}`);
        t.type(res.json().detail.fix, 'string', `${what}: says how to fix it`);
      }
      const refusedRetire = await retire(acme.id, member.headers, 'items');
      t.equal(refusedRetire.statusCode, 403, 'a member retiring: 403');
      t.equal((await retire(acme.id, acme.owner.headers, 'nothing_here')).json().detail.reason, 'not_found', 'retiring a field never declared: not_found');
      t.equal((await fieldsOf(acme.id, acme.owner.headers)).json().data.length, 4, 'nothing refused was stored');
    });

    await t.test('retiring keeps the field as retired; its name may be declared again', async (t) => {
      const res = await retire(acme.id, acme.owner.headers, 'items');
      t.equal(res.statusCode, 200, res.body);
      t.match(res.json(), { name: 'items', retired_by: acme.owner.userId });
      t.ok(Date.parse(res.json().retired_at) > 0, 'with when');
      t.notOk(
        (await fieldsOf(acme.id, acme.owner.headers)).json().data.some((f: { name: string }) => f.name === 'items'),
        'no longer declared',
      );
      const all = (await fieldsOf(acme.id, acme.owner.headers, '?retired=true')).json().data;
      t.ok(
        all.some((f: { name: string; retired_at: string | null }) => f.name === 'items' && f.retired_at !== null),
        'listed with the retired ones',
      );
      t.equal((await retire(acme.id, acme.owner.headers, 'items')).statusCode, 404, 'a retired field is not retired twice');
      const again = await declare(acme.id, acme.owner.headers, { name: 'items', type: 'string', description: 'Now a text' });
      t.equal(again.statusCode, 201, 'declared again');
      t.match(again.json(), { type: 'string', retired_at: null, description: 'Now a text' });
      t.same(
        (await app.inject({ url: `/api/organizations/${acme.id}/fields/items/audit`, headers: acme.owner.headers }))
          .json()
          .data.map((e: { action: string }) => e.action),
        ['declared', 'retired', 'declared_again'],
        'every change audited',
      );
    });

    await t.test('at most 50 fields and 5 keys', async (t) => {
      const org = await live.organization('Busy');
      for (let k = 0; k < 5; k++) t.equal((await declare(org.id, org.owner.headers, { name: `key_${k}`, type: 'string', key: true })).statusCode, 201);
      const sixth = await declare(org.id, org.owner.headers, { name: 'key_5', type: 'string', key: true });
      t.equal(sixth.statusCode, 400, 'a sixth key');
      t.equal(sixth.json().detail.reason, 'limit_reached');
      t.match(sixth.json().detail.message, /5 key fields/);
      t.equal((await declare(org.id, org.owner.headers, { name: 'key_5', type: 'string' })).statusCode, 201, 'the same without key is fine');
      for (let k = 6; k < 50; k++) t.equal((await declare(org.id, org.owner.headers, { name: `f_${k}`, type: 'number' })).statusCode, 201);
      const over = await declare(org.id, org.owner.headers, { name: 'one_more', type: 'boolean' });
      t.equal(over.statusCode, 400, 'a 51st field');
      t.match(over.json().detail.message, /50 fields/);
      t.equal((await fieldsOf(org.id, org.owner.headers)).json().data.length, 50, 'nothing past the limit stored');
      await retire(org.id, org.owner.headers, 'f_6');
      t.equal((await declare(org.id, org.owner.headers, { name: 'one_more', type: 'boolean' })).statusCode, 201, 'a retired field frees its place');
      // Two declarations at once for the last place: one gets it.
      await retire(org.id, org.owner.headers, 'f_7');
      const both = await Promise.all(['race_a', 'race_b'].map((name) => declare(org.id, org.owner.headers, { name, type: 'string' })));
      t.same(both.map((r) => r.statusCode).sort(), [201, 400], 'two at once for one place: one declared, one refused');
    });

    await t.test('sent with a payment: checked against the declarations, kept with the decision', async (t) => {
      const shop = await live.organization('Shop');
      for (const f of [
        { name: 'email_domain', type: 'string', key: true },
        { name: 'basket_items', type: 'number' },
        { name: 'three_ds', type: 'boolean' },
      ])
        t.equal((await declare(shop.id, shop.owner.headers, f)).statusCode, 201);
      const payment = (id: string, fields: Record<string, unknown>) => ({ transaction_id: id, amount: 42, customer_id: 'c-1', merchant_id: 'm-1', fields });
      const record = (id: string) => app.inject({ url: `/api/v1/transactions/${id}`, headers: { authorization: `Bearer ${shop.key}` } });

      const sent = { email_domain: 'example.com', basket_items: 3, three_ds: true, campaign: 'black-friday' };
      const ok = await live.score(shop, payment('p-1', sent));
      t.equal(ok.statusCode, 200, ok.body.slice(0, 300));
      t.ok(
        ok.json().notes.includes('Not declared: fields.campaign: stored, not read by rules.'),
        `an undeclared field is named in the notes: ${JSON.stringify(ok.json().notes)}`,
      );
      t.same((await record('p-1')).json().fields, sent, 'the record keeps every field as sent');
      t.same((await live.score(shop, { ...payment('p-2', {}), fields: undefined })).statusCode, 200);
      t.same((await record('p-2')).json().fields, {}, 'none sent: {}');

      const wrong = await live.score(shop, payment('p-3', { basket_items: '3', three_ds: 'yes' }));
      t.equal(wrong.statusCode, 422, 'a declared field of another type');
      t.equal(wrong.json().detail.reason, 'validation_failed');
      t.same(
        wrong.json().detail.fields.map((f: { path: string }) => f.path),
        ['body.fields.basket_items', 'body.fields.three_ds'],
        'each named',
      );
      t.equal((await record('p-3')).statusCode, 404, 'nothing stored');

      // A card number or an IP address, in any field, declared or not: refused, never stored or repeated.
      for (const [what, fields, reason] of [
        ['a card number in a declared field', { email_domain: '4111 1111 1111 1111' }, 'card_number_refused'],
        ['a card number in an undeclared one', { card: '4111111111111111' }, 'card_number_refused'],
        ['an IPv4 address', { ip: '203.0.113.9' }, 'ip_address_refused'],
        ['an IPv6 address', { email_domain: '2001:db8::1' }, 'ip_address_refused'],
      ] as const) {
        const res = await live.score(shop, payment(`refused-${reason}-${what.length}`, fields));
        t.equal(res.statusCode, 422, `${what}: 422`);
        t.equal(res.json().detail.reason, reason, `${what}: ${reason}`);
        t.match(res.json().detail.fix, /token|BIN|hash/, `${what}: says what to send instead`);
        const value = Object.values(fields)[0]!;
        t.notOk(res.body.includes(value) || res.body.includes(value.replace(/ /g, '')), `${what}: the value is not repeated`);
        t.equal((await record(`refused-${reason}-${what.length}`)).statusCode, 404, `${what}: nothing stored`);
        const guest = await live.guest({ amount: 1, customer_id: 'c', merchant_id: 'm', fields });
        t.equal(guest.json().detail?.reason, reason, `${what}: the public sandbox refuses it too`);
      }
      const [{ n }] = await live.s.service.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM transactions WHERE fields::text LIKE '%4111%' OR fields::text LIKE '%203.0.113%' OR fields::text LIKE '%2001:db8%'`,
      );
      t.equal(n, 0, 'no refused value in the database');

      // The public sandbox reads no fields, and says so.
      const sandbox = await live.guest({ amount: 1, customer_id: 'c', merchant_id: 'm', fields: { email_domain: 'example.com' } });
      t.equal(sandbox.statusCode, 200);
      t.ok(
        sandbox.json().notes.some((n: string) => /public sandbox reads no fields/.test(n)),
        'the sandbox notes it reads none',
      );

      // Declarations reach scoring as they change: retired, a field is not declared any more.
      await retire(shop.id, shop.owner.headers, 'basket_items');
      const after = await live.score(shop, payment('p-4', { basket_items: 'three' }));
      t.equal(after.statusCode, 200, 'a retired field is not checked');
      t.ok(after.json().notes.includes('Not declared: fields.basket_items: stored, not read by rules.'));
      // Another organization's declarations are not this one's.
      const elsewhere = await live.score(other, payment('o-1', { three_ds: 'not a boolean here' }));
      t.equal(elsewhere.statusCode, 200, "Shop's declarations do not apply to Other");
      t.same(
        (await app.inject({ url: '/api/v1/transactions/p-1', headers: { authorization: `Bearer ${other.key}` } })).statusCode,
        404,
        "nor are Shop's records Other's",
      );
    });

    await t.test("a listing filters on a key field's value", async (t) => {
      const desk = await live.organization('Desk');
      t.equal((await declare(desk.id, desk.owner.headers, { name: 'device_hash', type: 'string', key: true })).statusCode, 201);
      t.equal((await declare(desk.id, desk.owner.headers, { name: 'note', type: 'string' })).statusCode, 201);
      const sent: [string, Record<string, unknown> | undefined][] = [
        ['d-1', { device_hash: 'dev-a', note: 'x' }],
        ['d-2', { device_hash: 'dev-b' }],
        ['d-3', { device_hash: 'dev-a' }],
        ['d-4', undefined],
        ['d-5', { device_hash: 'dev-a,dev-b' }],
      ];
      for (const [id, fields] of sent)
        t.equal(
          (await live.score(desk, { transaction_id: id, amount: 10, customer_id: 'c', merchant_id: 'm', ...(fields ? { fields } : {}) })).statusCode,
          200,
        );
      // The same value in another organization is that organization's.
      await live.score(other, { transaction_id: 'o-dev', amount: 10, customer_id: 'c', merchant_id: 'm', fields: { device_hash: 'dev-a' } });
      const list = (query: string, headers = { authorization: `Bearer ${desk.key}` }) => app.inject({ url: `/api/v1/transactions?${query}`, headers });
      const ids = async (query: string) => (await list(query)).json().data.map((r: { transaction_id: string }) => r.transaction_id);
      t.same(await ids('field.device_hash=dev-a'), ['d-3', 'd-1'], 'newest first, the value matched exactly');
      t.same(await ids('field.device_hash=dev-a&order=oldest&limit=1'), ['d-1'], 'with the other filters and paging');
      t.same(await ids(`field.device_hash=${encodeURIComponent('dev-a,dev-b')}`), ['d-5'], 'a value with a comma is one value');
      t.same(await ids('field.device_hash=nothing'), []);
      const member = await app.inject({ url: `/api/organizations/${desk.id}/transactions?field.device_hash=dev-b`, headers: desk.owner.headers });
      t.same(
        member.json().data.map((r: { transaction_id: string }) => r.transaction_id),
        ['d-2'],
        "the dashboard's listing too",
      );
      const notKey = await list('field.note=x');
      t.equal(notKey.statusCode, 422, 'a field that is not a key');
      t.match(notKey.json().detail, { reason: 'validation_failed', fields: [{ path: 'query.field.note' }] });
      t.equal((await list('field.nothing_declared=x')).statusCode, 422, 'a field not declared');
      const unknown = await list('colour=red');
      t.equal(unknown.statusCode, 422, 'any other parameter is still refused');
      t.equal(
        (await app.inject({ url: '/api/v1/transactions?field.device_hash=dev-a', headers: { authorization: `Bearer ${other.key}` } })).statusCode,
        422,
        "Other has no such key field: Desk's is not its",
      );

      // A key value has a page like a customer's.
      const page = (org: typeof desk, name: string, value: string, headers = org.owner.headers) =>
        app.inject({ url: `/api/organizations/${org.id}/fields/${name}/values/${encodeURIComponent(value)}`, headers });
      const devA = await page(desk, 'device_hash', 'dev-a');
      t.equal(devA.statusCode, 200, devA.body.slice(0, 300));
      t.match(devA.json(), {
        role: 'key',
        field: 'device_hash',
        id: 'dev-a',
        totals: { transactions: 2, amount_sum: 20 },
        recent: { transactions: 2 },
        counterparties: [{ role: 'customer', id: 'c', transactions: 2 }],
      });
      t.equal((await page(desk, 'device_hash', 'dev-a,dev-b')).json().totals.transactions, 1, 'a value with a comma is its own');
      t.equal((await page(desk, 'device_hash', 'never-seen')).statusCode, 404, 'a value none carried: 404');
      t.equal((await page(desk, 'note', 'x')).statusCode, 404, 'a field that is not a key: 404');
      t.equal((await page(desk, 'device_hash', 'dev-a', other.owner.headers)).statusCode, 404, "another organization's owner: 404");
      t.equal((await page(desk, 'device_hash', 'dev-a', {})).statusCode, 401, 'a guest: 401');
    });

    await t.test("one organization's fields are never another's", async (t) => {
      t.same((await fieldsOf(other.id, other.owner.headers)).json().data, [], 'another organization has none');
      for (const [what, res] of [
        ["another organization's owner reading", await fieldsOf(acme.id, other.owner.headers)],
        ["another organization's owner declaring", await declare(acme.id, other.owner.headers, { name: 'x', type: 'string' })],
        ["another organization's owner retiring", await retire(acme.id, other.owner.headers, 'bin_country')],
        [
          "another organization's owner reading an audit",
          await app.inject({ url: `/api/organizations/${acme.id}/fields/bin_country/audit`, headers: other.owner.headers }),
        ],
      ] as const)
        t.equal(res.statusCode, 404, `${what}: 404`);
      t.equal((await fieldsOf(acme.id, {})).statusCode, 401, 'a guest: 401');
      t.equal((await fieldsOf(acme.id, { authorization: `Bearer ${acme.key}` })).statusCode, 401, 'an API key is not a session: 401');
      t.ok(
        (await fieldsOf(acme.id, acme.owner.headers)).json().data.some((f: { name: string }) => f.name === 'bin_country'),
        "and Acme's field is still there",
      );
    });
  });
}
