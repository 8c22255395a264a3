// A payment's own fields and its key values' pages in headless Chromium, against the real server
// with sign-in through a stand-in identity provider. An organization declares a key field
// (device_hash) and a plain one (basket_items) and scores payments carrying them, one of them with
// a field it never declared and one with none, through its API key. A transaction's page shows the
// fields it was sent with (the key value linked, the undeclared field marked so) and the history its
// decision saw of each key value, as the score answered it; a payment without fields shows nothing
// of them. The key value's link opens its page with its totals, the customers who paid with it and
// its newest transactions; "all the transactions that carried it" opens Transactions filtered on it
// (exactly the API's rows for the same filter), the filter shown as active, kept when another filter
// is applied, and removed by its link. A value with a slash, a space and a percent sign survives the
// address. A value none carried, a field that is not a key and a name never declared each say so; a
// listing filtered on a plain field shows the service's refusal with the filter to remove. A member
// who is not an owner sees the same. axe-core finds no serious or critical problem, nothing scrolls
// sideways at 390 px, and the console stays clear of anything but the API's expected refusals.
// Screenshots go to artifacts/screenshots/.

import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';

type Rec = Record<string, any>;

t.test("A payment's fields and its key values' pages", { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(
    t,
    { sub: 'kv-owner', email: 'keys@example.com', name: 'Key Owner' },
    { SCORE_RATE_PER_MINUTE: 10_000 },
  );
  const org = await member('/api/organizations', 'POST', { name: 'Keystone' });
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'checkout' });
  for (const f of [
    { name: 'device_hash', type: 'string', key: true, description: 'A hash of the device' },
    { name: 'basket_items', type: 'number' },
  ])
    t.equal((await member(`/api/organizations/${org.id}/fields`, 'POST', f)).name, f.name, `declared ${f.name}`);
  const ODD = 'a/b c%d?e';
  const HASH = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
  const sent: Rec[] = [
    { transaction_id: 'k-1', amount: 10, customer_id: 'C-1', fields: { device_hash: 'dev-a', basket_items: 2 } },
    { transaction_id: 'k-2', amount: 20, customer_id: 'C-2', fields: { device_hash: 'dev-a', basket_items: 1, campaign: 'spring' } },
    { transaction_id: 'k-3', amount: 30, customer_id: 'C-3', fields: { device_hash: 'dev-b', basket_items: 3 } },
    { transaction_id: 'k-4', amount: 40, customer_id: 'C-1', fields: { device_hash: 'dev-a', basket_items: 4 } },
    { transaction_id: 'k-5', amount: 50, customer_id: 'C-4' },
    { transaction_id: 'k-6', amount: 60, customer_id: 'C-5', fields: { device_hash: ODD } },
    { transaction_id: 'k-7', amount: 70, customer_id: 'C-5', fields: { device_hash: HASH } },
  ];
  const answers = new Map<string, Rec>();
  for (const s of sent) {
    const res = await fetch(`${server.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ merchant_id: 'M-1', location: 'Lisbon', payment_type: 'wallet', ...s }),
    });
    t.equal(res.status, 200, `scored ${s.transaction_id}`);
    answers.set(s.transaction_id, await res.json());
  }
  const seen = answers.get('k-4')!.field_history.device_hash;
  t.match(seen, { prior_transactions: 2, is_new: false, count_1h: 2, amount_24h: 30, distinct_customers_24h: 2 }, 'k-4 saw dev-a twice before');

  const goto = async (hash: string, selector: string, p: Page = page) => {
    await p.goto(`${server.base}/${hash}`);
    await p.waitForSelector(selector);
  };
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  /** A table's rows under `selector`, as their cells read. */
  const rows = (selector: string, p: Page = page) =>
    p.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((r) => [...r.children].map((c) => c.textContent ?? '')));
  /** A list's terms and descriptions under `selector`, as [term, description] pairs. */
  const pairs = (selector: string, p: Page = page) =>
    p.locator(`${selector} dt`).evaluateAll((dts) => dts.map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? '']));
  const shownIds = (p: Page = page) => p.locator('#results tbody tr td:nth-child(2)').allTextContents();
  const apiIds = async (query: string): Promise<string[]> =>
    (await member(`/api/organizations/${org.id}/transactions?limit=100&${query}`)).data.map((r: Rec) => r.transaction_id);
  /** The API's rows for `query`, once the listing shows them (or after a time-out, and then the
   *  assertion that follows says what differs): until the new view has rendered, the last one, or
   *  "Loading…", can still be on screen. */
  const listed = async (query: string): Promise<string[]> => {
    const expected = await apiIds(query);
    await page
      .waitForFunction(
        (ids) =>
          JSON.stringify([...document.querySelectorAll('#results tbody tr td:nth-child(2)')].map((td) => td.textContent)) === JSON.stringify(ids) &&
          !!document.querySelector(ids.length ? '#results' : '#no-results'),
        expected,
        { timeout: 10_000 },
      )
      .catch(() => {});
    return expected;
  };
  /** Runs `act`, which makes the API refuse with `status` once: the browser logs that refusal, and nothing else may be logged. */
  const refused = async (status: number, act: () => Promise<void>) => {
    const logged = problems.length;
    const expected = page.waitForEvent('console', (m) => new RegExp(`status of ${status}`).test(m.text()));
    await act();
    await expected;
    const added = problems.splice(logged);
    t.ok(
      added.every((m) => new RegExp(`status of ${status}`).test(m)),
      `only the expected ${status} was logged: ${JSON.stringify(added)}`,
    );
  };
  /** The fields table and the key values' history table of a transaction's page. */
  const expectedFields = [
    ['basket_items', '4', 'number'],
    ['device_hash', 'dev-a', 'string, a key'],
  ];
  const money = (x: number) => x.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const expectedHistory = [
    ['Earlier transactions', String(seen.prior_transactions)],
    ['New (never carried before)', 'no'],
    ['In the last hour', String(seen.count_1h)],
    ['In the last 24 h', String(seen.count_24h)],
    ['In the last 7 days', String(seen.count_7d)],
    ['Amount, last 24 h', money(seen.amount_24h)],
    ['Distinct customers, 24 h', String(seen.distinct_customers_24h)],
    ['Distinct customers, 30 days', String(seen.distinct_customers_30d)],
  ];

  await t.test("a transaction's page shows its fields and the history its decision saw", async (t) => {
    await goto(`#/transactions/k-4?org=${org.id}`, 'h1:text-is("Transaction k-4")');
    t.equal(await text('#record-fields h2'), 'Its own fields');
    t.same(await rows('#record-field-values'), expectedFields, 'each field with its value and how it is declared, by name');
    t.equal(
      await page.getAttribute('#record-field-values a:text-is("dev-a")', 'href'),
      `#/fields/device_hash/values/dev-a?org=${org.id}`,
      'the key value links to its page',
    );
    t.equal(await page.locator('#record-field-values a:text-is("4")').count(), 0, 'a plain value is not a link');
    t.equal(
      await page.getAttribute('#record-field-values a:text-is("basket_items")', 'href'),
      `#/fields/basket_items?org=${org.id}`,
      'a field links to its page',
    );
    t.same(await page.locator('#record-field-history h4').allTextContents(), ['device_hash dev-a'], 'a list for each key value it carried');
    t.equal(await page.getAttribute('#record-field-history h4 a', 'href'), `#/fields/device_hash/values/dev-a?org=${org.id}`, 'its value linked to its page');
    t.same(await pairs('#record-field-history'), expectedHistory, 'the numbers the score answered, each said in words');
    const stored = await (await fetch(`${server.base}/api/v1/transactions/k-4`, { headers: { authorization: `Bearer ${key.secret}` } })).json();
    t.same(stored.evidence.field_history, answers.get('k-4')!.field_history, 'the record keeps the histories answered');
    await page.screenshot({ path: `${SHOTS}transaction-fields.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');

    await goto(`#/transactions/k-2?org=${org.id}`, 'h1:text-is("Transaction k-2")');
    t.same(
      await rows('#record-field-values'),
      [
        ['basket_items', '1', 'number'],
        ['campaign', 'spring', 'not declared: stored, not read by rules'],
        ['device_hash', 'dev-a', 'string, a key'],
      ],
      'a field it did not declare is shown too, marked so',
    );
    t.equal(await page.locator('#record-field-values a:text-is("campaign")').count(), 0, 'with no link to a page it does not have');
    t.match(await pairs('#record-field-history'), [['Earlier transactions', '1']], 'k-2 saw dev-a once before');

    await goto(`#/transactions/k-5?org=${org.id}`, 'h1:text-is("Transaction k-5")');
    t.equal(await page.locator('#risk-score').count(), 1, 'its decision is shown');
    t.equal(await page.locator('#record-fields').count(), 0, 'a payment sent without fields shows nothing of them');
  });

  await t.test("the key value's page: its totals, customers and transactions", async (t) => {
    await goto(`#/transactions/k-4?org=${org.id}`, 'h1:text-is("Transaction k-4")');
    await page.click('#record-field-values a:text-is("dev-a")');
    await page.waitForSelector('h1:text-is("device_hash dev-a")');
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Fields', 'it belongs with Fields');
    const summary = await text('#entity-summary');
    t.match(summary, /Transactions3, 70\.00 in all/, 'its three transactions and their amount');
    t.match(summary, /Outcomes reported0, of them 0 fraud/);
    t.same(
      await rows('#counterparties'),
      (await member(`/api/organizations/${org.id}/fields/device_hash/values/dev-a`)).counterparties.map((c: Rec) => [
        c.id,
        String(c.transactions),
        money(c.amount_sum),
        '0',
        '0',
        `${c.last_time.slice(0, 19).replace('T', ' ')} UTC`,
      ]),
      'the customers who paid with it, as the API counts them',
    );
    t.same([...(await page.locator('#counterparties tbody td:first-child').allTextContents())].sort(), ['C-1', 'C-2'], 'C-1 and C-2');
    t.same(await page.locator('#entity-transactions tbody tr td:nth-child(2)').allTextContents(), ['k-4', 'k-2', 'k-1'], 'its newest transactions');
    t.equal(await page.getAttribute('h1 + p a', 'href'), `#/fields/device_hash?org=${org.id}`, 'back to its field');
    await page.screenshot({ path: `${SHOTS}key-value.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');

    await page.click('#counterparties a:text-is("C-1")');
    await page.waitForSelector('h1:text-is("Customer C-1")');
    t.pass("a customer links to the customer's page");
    await page.goBack();
    await page.waitForSelector('h1:text-is("device_hash dev-a")');
    await page.click('#entity-all');
    await page.waitForSelector('#key-filters');
    t.match(await page.evaluate(() => location.hash), /[?&]field\.device_hash=dev-a(&|$)/, 'the filter is in the address');
    const carried = await listed('field.device_hash=dev-a');
    t.same(await shownIds(), carried, "exactly the API's transactions for the filter");
    t.same(carried, ['k-4', 'k-2', 'k-1']);
    t.equal(await text('#results-title'), 'Matching device_hash dev-a');
    t.match(await text('#key-filters li'), /^Carried device_hash dev-a\s*Remove$/, 'shown as an active filter');
    t.same(await accessibilityProblems(page), [], 'the filtered listing: no serious or critical accessibility problem (axe-core)');

    // Another filter keeps it.
    await page.selectOption('#filter-decision', answers.get('k-1')!.decision);
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => location.hash.includes('decision='));
    t.match(await page.evaluate(() => location.hash), /field\.device_hash=dev-a/, 'kept when another filter is applied');
    const both = await listed(`field.device_hash=dev-a&decision=${answers.get('k-1')!.decision}`);
    t.same(await shownIds(), both, 'both filters apply');
    // Removed by its link.
    await page.click('#key-filters a:text-is("Remove")');
    await page.waitForFunction(() => !location.hash.includes('field.') && !document.querySelector('#key-filters'));
    t.match(await page.evaluate(() => location.hash), /decision=/, 'the other filter stays');
    const without = await listed(`decision=${answers.get('k-1')!.decision}`);
    t.same(await shownIds(), without, 'the rows without it');
  });

  await t.test('a value with a slash, a space and a percent sign survives the address', async (t) => {
    await goto(`#/transactions/k-6?org=${org.id}`, 'h1:text-is("Transaction k-6")');
    await page.click(`#record-field-values a:text-is("${ODD}")`);
    await page.waitForSelector(`h1:text-is("device_hash ${ODD}")`);
    t.match(await text('#entity-summary'), /Transactions1, 60\.00 in all/);
    await page.click('#entity-all');
    await page.waitForSelector('#results');
    t.same(await shownIds(), ['k-6'], 'its one transaction, filtered');
  });

  await t.test('what has no page says why', async (t) => {
    await refused(404, () => goto(`#/fields/device_hash/values/never-seen?org=${org.id}`, 'h1:text-is("device_hash never-seen") ~ #not-found'));
    t.match(await text('#not-found'), /^No transaction of Keystone carried device_hash “never-seen”\. Values are matched exactly/, 'a value none carried');
    await refused(404, () => goto(`#/fields/basket_items/values/3?org=${org.id}`, 'h1:text-is("basket_items 3") ~ #not-found'));
    t.match(await text('#not-found'), /^basket_items is not a key field of Keystone: only a key field's values have a page/, 'a field that is not a key');
    t.equal(await page.getAttribute('#not-found a', 'href'), `#/fields/basket_items?org=${org.id}`);
    await refused(404, () => goto(`#/fields/campaign/values/spring?org=${org.id}`, 'h1:text-is("campaign spring") ~ #not-found'));
    t.match(await text('#not-found'), /^campaign is not a key field of Keystone: it has no field of that name/, 'a name never declared');
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');

    await refused(422, () => goto(`#/transactions?org=${org.id}&field.basket_items=3`, '#results-title'));
    t.match(await text('.error'), /field\.basket_items is not one/, "a plain field's filter: the service's refusal");
    await page.click('#key-filters a:text-is("Remove")');
    t.equal((await listed('')).length, sent.length, 'and without it, every transaction');
    t.same(await shownIds(), await apiIds(''));
  });

  await t.test("at a phone's width nothing scrolls sideways", async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [hash, selector, shot] of [
      [`#/transactions/k-4?org=${org.id}`, '#record-field-history', 'transaction-fields-phone'],
      [`#/fields/device_hash/values/dev-a?org=${org.id}`, '#entity-transactions', 'key-value-phone'],
      [`#/transactions?org=${org.id}&field.device_hash=dev-a`, '#results', 'transactions-key-filter-phone'],
      [`#/transactions/k-7?org=${org.id}`, '#record-fields', 'transaction-hash-phone'],
      [`#/fields/device_hash/values/${HASH}?org=${org.id}`, '#entity-transactions', 'key-value-hash-phone'],
      [`#/transactions?org=${org.id}&field.device_hash=${HASH}`, '#results', 'transactions-hash-filter-phone'],
    ] as const) {
      await goto(hash, selector);
      t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${shot}: no sideways scrolling at 390 px`);
      await page.screenshot({ path: `${SHOTS}${shot}.png`, fullPage: true });
      t.same(await accessibilityProblems(page), [], `${shot}: no serious or critical accessibility problem at 390 px (axe-core)`);
    }
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  await t.test('a member who is not an owner sees the same', async (t) => {
    const memberPage = await watchedPage(page.context().browser()!, problems);
    await server.signIn(memberPage, { sub: 'kv-member', email: 'member@example.com', name: 'Mem Ber' });
    await memberPage.waitForSelector('#who');
    const me = await memberApi(memberPage)('/api/auth/me');
    await server.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [org.id, me.user.id]);
    await goto(`#/transactions/k-4?org=${org.id}`, '#record-field-history', memberPage);
    t.same(await rows('#record-field-values', memberPage), expectedFields, 'the fields');
    t.same(await pairs('#record-field-history', memberPage), expectedHistory, 'and their history');
    await memberPage.click('#record-field-values a:text-is("dev-a")');
    await memberPage.waitForSelector('h1:text-is("device_hash dev-a")');
    t.match(await text('#entity-summary', memberPage), /Transactions3, 70\.00 in all/, "the value's page");
    await memberPage.click('#entity-all');
    await memberPage.waitForSelector('#key-filters');
    t.same(await shownIds(memberPage), ['k-4', 'k-2', 'k-1'], 'and its transactions');
    t.same(await accessibilityProblems(memberPage), [], "a member's view: no serious or critical accessibility problem (axe-core)");
    await memberPage.close();
  });

  t.same(problems, [], 'no console errors');
});
