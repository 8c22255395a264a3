// The decision log on the key surface, over real HTTP with real sign-in and API keys, on each
// storage back end: GET /api/v1/transactions lists the key's organization's transactions with the
// dashboard listing's filters, cursor paging and answer (the same pages as the member's), never
// another organization's (even under the same transaction ids), and needs a key (401 without).
// And a score whose payment_type or location the model does not know says so in its notes, as
// answered and as stored (the record and the listing show the notes the score answered).

import t from 'tap';
import { backends } from '../support/server.ts';
import { liveFor, type Organization } from '../support/accounts.ts';

for (const backend of backends()) {
  t.test(`the key's decision log on ${backend.name}`, async (t) => {
    const { live } = await liveFor(t, backend);
    const { app } = live.s;
    const a = await live.organization('Acme');
    const b = await live.organization('Bolt');
    const asKey = (org: Organization | undefined, url: string, method: 'GET' | 'POST' = 'GET', payload?: object) =>
      app.inject({ method, url, headers: org ? { authorization: `Bearer ${org.key}` } : {}, ...(payload ? { payload } : {}) });
    const asMember = (org: Organization, url: string) => app.inject({ url: `/api/organizations/${org.id}${url}`, headers: org.owner.headers });
    const ids = (page: { data: { transaction_id: string }[] }) => page.data.map((x) => x.transaction_id);

    // Acme: six payments of two customers; Bolt: three, two under Acme's transaction ids.
    for (let k = 1; k <= 6; k++) {
      const res = await live.score(a, {
        amount: 20 + k,
        customer_id: k % 2 ? 'c-odd' : 'c-even',
        merchant_id: 'm-acme',
        location: 'Lisbon',
        payment_type: 'wallet',
        transaction_id: `tx-${k}`,
      });
      t.equal(res.statusCode, 200, res.body);
    }
    for (const id of ['tx-1', 'tx-2', 'tx-bolt'])
      t.equal(
        (await live.score(b, { amount: 99, customer_id: 'c-bolt', merchant_id: 'm-bolt', location: 'Porto', payment_type: 'card_present', transaction_id: id }))
          .statusCode,
        200,
      );

    await t.test('the organization of the key, newest first, and nothing of another', async (t) => {
      const res = await asKey(a, '/api/v1/transactions');
      t.equal(res.statusCode, 200, res.body);
      const page = res.json();
      t.same(ids(page), ['tx-6', 'tx-5', 'tx-4', 'tx-3', 'tx-2', 'tx-1'], "Acme's six, newest first");
      t.equal(page.has_more, false);
      t.ok(
        page.data.every((x: { customer_id: string; merchant_id: string }) => x.customer_id !== 'c-bolt' && x.merchant_id === 'm-acme'),
        "none of Bolt's, though two share Acme's ids",
      );
      t.same(ids((await asKey(b, '/api/v1/transactions')).json()), ['tx-bolt', 'tx-2', 'tx-1'], "Bolt's key lists Bolt's three");
      t.same((await asKey(b, '/api/v1/transactions?customer_id=c-odd')).json(), { data: [], has_more: false }, "Acme's customer is not in Bolt's log");
      const cursor = await asKey(a, '/api/v1/transactions?starting_after=tx-bolt');
      t.equal(cursor.statusCode, 404, "a cursor from another organization's log: 404");
      t.equal(cursor.json().detail.reason, 'not_found');
      t.same(res.json(), (await asMember(a, '/transactions')).json(), "the same answer as the dashboard's listing");
    });

    await t.test('filters and the cursor', async (t) => {
      t.same(ids((await asKey(a, '/api/v1/transactions?customer_id=c-even')).json()), ['tx-6', 'tx-4', 'tx-2']);
      t.same(ids((await asKey(a, '/api/v1/transactions?customer_id=c-even&order=oldest')).json()), ['tx-2', 'tx-4', 'tx-6'], 'oldest first');
      t.same((await asKey(a, '/api/v1/transactions?merchant_id=m-bolt')).json().data, []);
      const reported = await asKey(a, '/api/v1/transactions/tx-3/outcome', 'POST', { outcome: 'fraud', source: 'chargeback' });
      t.equal(reported.statusCode, 200, reported.body);
      t.same(ids((await asKey(a, '/api/v1/transactions?outcome=fraud')).json()), ['tx-3'], 'by outcome');
      t.same(ids((await asKey(a, '/api/v1/transactions?outcome=none&customer_id=c-odd')).json()), ['tx-5', 'tx-1'], 'filters combine');
      t.same(ids((await asKey(b, '/api/v1/transactions?outcome=fraud')).json()), [], "Acme's outcome is not Bolt's");
      const third = (await asKey(a, '/api/v1/transactions?order=oldest')).json().data[2];
      const before = (await asKey(a, `/api/v1/transactions?to=${encodeURIComponent(third.time)}`)).json().data as { transaction_id: string; time: string }[];
      t.ok(before.every((x) => x.time < third.time) && !before.some((x) => x.transaction_id === 'tx-3'), 'to: before that time');
      const since = (await asKey(a, `/api/v1/transactions?from=${encodeURIComponent(third.time)}`)).json().data as { transaction_id: string; time: string }[];
      t.ok(since.every((x) => x.time >= third.time) && since.some((x) => x.transaction_id === 'tx-3'), 'from: at or after that time');

      // Pages of two, each after the previous one's last transaction_id.
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = (await asKey(a, `/api/v1/transactions?limit=2${after ? `&starting_after=${after}` : ''}`)).json();
        seen.push(...ids(page));
        pages++;
        if (!page.has_more) break;
        after = seen[seen.length - 1];
      }
      t.equal(pages, 3);
      t.same(seen, ['tx-6', 'tx-5', 'tx-4', 'tx-3', 'tx-2', 'tx-1'], 'the pages in order, none repeated');
      const bad = await asKey(a, '/api/v1/transactions?limit=101');
      t.equal(bad.statusCode, 422);
      t.equal(bad.json().detail.reason, 'validation_failed');
      t.equal((await asKey(a, '/api/v1/transactions?decision=maybe')).statusCode, 422);
    });

    await t.test('no key, or a wrong one: 401', async (t) => {
      const none = await asKey(undefined, '/api/v1/transactions');
      t.equal(none.statusCode, 401);
      t.type(none.json().detail.reason, 'string');
      t.equal((await app.inject({ url: '/api/v1/transactions', headers: { authorization: 'Bearer sk_test_not_a_key' } })).statusCode, 401);
      t.equal((await app.inject({ url: '/api/v1/transactions', headers: a.owner.headers })).statusCode, 401, "a member's session is not a key");
    });

    await t.test('values the model does not know are named in the notes, as answered and as stored', async (t) => {
      const known = (await app.inject({ url: '/api/risk/known-values' })).json();
      t.ok(known.payment_types.includes('wallet') && !known.payment_types.includes('card'));
      t.ok(known.locations.includes('Lisbon') && !known.locations.includes('Atlantis'));
      const res = await live.score(a, {
        amount: 30,
        customer_id: 'c-odd',
        merchant_id: 'm-acme',
        location: 'Atlantis',
        payment_type: 'card',
        transaction_id: 'tx-unknown',
      });
      t.equal(res.statusCode, 200, res.body);
      const answered: string[] = res.json().notes;
      const typeNote = answered.find((n) => n.startsWith('payment_type "card" '));
      const placeNote = answered.find((n) => n.startsWith('location "Atlantis" '));
      t.equal(
        typeNote,
        'payment_type "card" is not a value the model knows: scored as unknown, like a missing one; map your values onto GET /api/risk/known-values.',
      );
      t.match(placeNote, /^location "Atlantis" is not a value the model knows .*GET \/api\/risk\/known-values\.$/);
      const record = (await asKey(a, '/api/v1/transactions/tx-unknown')).json();
      t.same(record.notes, answered, 'the stored decision shows the notes the score answered');
      t.same((await asKey(a, '/api/v1/transactions?limit=1')).json().data[0].notes, answered, 'and so does the listing');
      const plain = (await asKey(a, '/api/v1/transactions/tx-1')).json();
      t.notOk(
        plain.notes.some((n: string) => n.includes('not a value the model knows')),
        'known values: no such note',
      );

      // Quoted safely and cut: a value with quotes, a backslash and a line break, longer than 40 characters.
      const odd = `x"y\\z\n${'w'.repeat(60)}`;
      const quoted = (await live.score(a, { amount: 31, customer_id: 'c-odd', merchant_id: 'm-acme', location: 'Lisbon', payment_type: odd }))
        .json()
        .notes.find((n: string) => n.startsWith('payment_type '));
      t.equal(
        quoted,
        `payment_type ${JSON.stringify(odd.slice(0, 40))}… is not a value the model knows: scored as unknown, like a missing one; map your values onto GET /api/risk/known-values.`,
      );
      t.notMatch(quoted, /\n/, 'no line break inside the note');
      const missing = (await live.score(a, { amount: 32, customer_id: 'c-odd', merchant_id: 'm-acme' })).json().notes;
      t.notOk(
        missing.some((n: string) => n.includes('not a value the model knows')),
        'a value left out has its own note, not this one',
      );
    });
  });
}
