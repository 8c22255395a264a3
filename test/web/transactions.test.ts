// The analyst's Transactions page in headless Chromium, against the real server with sign-in
// through a stand-in identity provider: a member whose organization scored 32 transactions with its
// API key finds them newest first, pages to the older ones, finds one by id, narrows them with
// each filter (decision, band, outcome, customer, merchant, time range; the rows shown are exactly
// the API's for the same filter), opens one, marks it fraud, and the stored outcome changes through
// the API. Another organization's transaction is not found. At a phone's width the table stacks
// instead of overflowing. Screenshots at 1366 and 390 px go to artifacts/screenshots/.

import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, noBrowser, SHOTS, signedInMember } from '../support/browser.ts';

type Rec = Record<string, any>;

t.test('Transactions: find, filter, open and mark a transaction', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(
    t,
    { sub: 'analyst-1', email: 'analyst@example.com', name: 'Ana Lyst' },
    { SCORE_RATE_PER_MINUTE: 10_000 },
  );
  const org = await member('/api/organizations', 'POST', { name: 'Acme Payments' });
  const other = await member('/api/organizations', 'POST', { name: 'Bystander' });
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'checkout' });
  const otherKey = await member(`/api/organizations/${other.id}/api-keys`, 'POST', { name: 'checkout' });
  const score = (secret: string, body: Rec) =>
    fetch(`${server.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  // A mix of ordinary payments and large ones at new merchants, so that several decisions and
  // bands appear.
  for (let i = 0; i < 32; i++) {
    // Two seconds apart, in halves, for the time-range filter (its form takes whole seconds).
    if (i === 16) await new Promise((resolve) => setTimeout(resolve, 1_100));
    const body = {
      transaction_id: `tx-${i}`,
      amount: i % 4 === 3 ? 4_000 + i * 150 : 20 + i,
      customer_id: `C-${i % 5}`,
      merchant_id: i % 4 === 3 ? `M-new-${i}` : `M-${i % 3}`,
      location: i % 2 ? 'Lisbon' : 'Porto',
      payment_type: i % 4 === 3 ? 'card_not_present' : 'wallet',
    };
    t.equal((await score(key.secret, body)).status, 200);
  }
  t.equal((await score(otherKey.secret, { transaction_id: 'theirs-1', amount: 5, customer_id: 'C-0', merchant_id: 'M-0' })).status, 200);
  const everything: Rec[] = [];
  for (let after: string | undefined; ; ) {
    const p = await member(`/api/organizations/${org.id}/transactions?limit=100${after ? `&starting_after=${after}` : ''}`);
    everything.push(...p.data);
    if (!p.has_more) break;
    after = p.data.at(-1).transaction_id;
  }
  t.equal(everything.length, 32, "the API lists the organization's 32 transactions");

  const shownIds = async () => page.locator('#results tbody tr td:nth-child(2)').allTextContents();
  const apiIds = async (query: string): Promise<string[]> =>
    (await member(`/api/organizations/${org.id}/transactions?limit=100&${query}`)).data.map((r: Rec) => r.transaction_id);
  const goto = async (hash: string) => {
    await page.goto(`${server.base}/${hash}`);
    await page.waitForSelector('#results, #no-results, #not-found, h1:has-text("Transaction ")');
  };

  await t.test('newest first, 25 a page, then the older ones', async (t) => {
    await goto('#/transactions');
    t.equal(await page.locator('h1').textContent(), 'Transactions');
    t.same(
      await shownIds(),
      everything.slice(0, 25).map((r) => r.transaction_id),
      'the newest 25, as the API orders them',
    );
    t.match(await page.locator('#results tbody tr').first().textContent(), /UTC/, 'times say their zone');
    await page.screenshot({ path: `${SHOTS}transactions.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.click('#next-page');
    await page.waitForFunction(() => !document.querySelector('#next-page') && document.querySelector('#first-page'));
    t.same(
      await shownIds(),
      everything.slice(25).map((r) => r.transaction_id),
      'the older 7 on the next page',
    );
  });

  await t.test("find one by id; another organization's id is not found", async (t) => {
    await goto('#/transactions');
    await page.selectOption('#search-kind', 'transaction');
    await page.fill('#search-term', 'tx-7');
    await page.click('#search button[type=submit]');
    await page.waitForSelector('h1:has-text("Transaction tx-7")');
    t.ok(await page.locator('#risk-score').count(), 'its stored score');
    const logged = problems.length;
    // The browser logs the API's 404 for it; that one is expected.
    const expected404 = page.waitForEvent('console', (m) => /status of 404/.test(m.text()));
    await goto(`#/transactions/theirs-1?org=${org.id}`);
    t.equal(await page.locator('#not-found').count(), 1, "the bystander's transaction is not Acme's");
    await expected404;
    const added = problems.splice(logged);
    t.ok(
      added.every((m) => /status of 404/.test(m)),
      `only the expected 404 was logged: ${JSON.stringify(added)}`,
    );
  });

  await t.test('each filter shows exactly what the API lists for it', async (t) => {
    const check = async (what: string, query: string, act: (p: Page) => Promise<void>) => {
      await goto(`#/transactions?org=${org.id}`);
      await act(page);
      await page.waitForFunction((q) => location.hash.includes(q.split('=')[0]!), query);
      const expected = await apiIds(query);
      // Until the filtered page has rendered, the previous one can still be on screen: wait for the
      // rows to be the API's (or for the time-out, and then the assertion below says what differs).
      await page
        .waitForFunction(
          (ids) =>
            JSON.stringify([...document.querySelectorAll('#results tbody tr td:nth-child(2)')].map((td) => td.textContent)) === JSON.stringify(ids) &&
            !!document.querySelector(ids.length ? '#results' : '#no-results'),
          expected.slice(0, 25),
          { timeout: 10_000 },
        )
        .catch(() => {});
      t.same(await shownIds(), expected.slice(0, 25), `${what}: ${expected.length} transactions`);
      return expected;
    };
    const decisions = new Set(everything.map((r) => r.decision));
    for (const d of ['approve', 'review', 'block']) {
      const ids = await check(`decision ${d}`, `decision=${d}`, async (p) => {
        await p.selectOption('#filter-decision', d);
        await p.click('#filters button[type=submit]');
      });
      t.equal(ids.length, everything.filter((r) => r.decision === d).length);
    }
    t.ok(decisions.size >= 2, `the load made several decisions: ${[...decisions].join(', ')}`);
    const band = everything[0]!.risk_band;
    await check(`band ${band}`, `risk_band=${band}`, async (p) => {
      await p.selectOption('#filter-risk_band', band);
      await p.click('#filters button[type=submit]');
    });
    await check('customer C-2', 'customer_id=C-2', async (p) => {
      await p.selectOption('#search-kind', 'customer_id');
      await p.fill('#search-term', 'C-2');
      await p.click('#search button[type=submit]');
    });
    await check('merchant M-1', 'merchant_id=M-1', async (p) => {
      await p.selectOption('#search-kind', 'merchant_id');
      await p.fill('#search-term', 'M-1');
      await p.click('#search button[type=submit]');
    });
    // A time range, to the second, as the form takes it: the later half.
    const second = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    const byId = new Map(everything.map((r) => [r.transaction_id, Date.parse(r.time)]));
    const from = second(byId.get('tx-16')!);
    const to = second(byId.get('tx-31')! + 1_000);
    const ids = await check('a time range', `from=${encodeURIComponent(`${from}Z`)}&to=${encodeURIComponent(`${to}Z`)}`, async (p) => {
      await p.fill('#filter-from', from);
      await p.fill('#filter-to', to);
      await p.click('#filters button[type=submit]');
    });
    t.same([...ids].sort(), Array.from({ length: 16 }, (_, i) => `tx-${16 + i}`).sort(), 'the range holds the later 16');
  });

  await t.test('open one, mark it fraud, and the stored outcome changes', async (t) => {
    await goto(`#/transactions?org=${org.id}&outcome=none`);
    t.equal((await shownIds()).length, 25, 'nothing reported yet');
    await page.click('#results a:text-is("tx-27")');
    await page.waitForSelector('h1:has-text("Transaction tx-27")');
    t.match(await page.locator('#outcome-current').textContent(), /Not reported yet/);
    t.ok((await page.locator('#reasons li').count()) > 0, 'its reasons, in words');
    t.ok((await page.locator('#evidence').count()) === 1, 'the evidence its answer showed');
    await page.selectOption('#outcome-source', 'chargeback');
    await page.click('#mark-fraud');
    await page.waitForFunction(() => document.querySelector('#outcome-current')?.textContent?.startsWith('Fraud'));
    t.match(await page.locator('#outcome-status').textContent(), /Marked fraud/);
    t.equal(await page.locator('#outcome-history tbody tr').count(), 1, 'the change is listed');
    const stored = await (await fetch(`${server.base}/api/v1/transactions/tx-27`, { headers: { authorization: `Bearer ${key.secret}` } })).json();
    t.same([stored.outcome.outcome, stored.outcome.source], ['fraud', 'chargeback'], 'the API reads the outcome the analyst set');
    t.equal(stored.outcome.reported_by, 'analyst-1', 'reported by the member');
    await page.screenshot({ path: `${SHOTS}transaction.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await goto(`#/transactions?org=${org.id}&outcome=fraud`);
    t.same(await shownIds(), ['tx-27'], 'the outcome filter finds it');
  });

  await t.test("a customer's and a merchant's pages, linked from a transaction", async (t) => {
    await goto(`#/transactions/tx-27?org=${org.id}`);
    await page.click('.kv a:text-is("C-2")');
    await page.waitForSelector('h1:has-text("Customer C-2")');
    const mine = everything.filter((r) => r.customer_id === 'C-2');
    t.match(await page.locator('#entity-summary').textContent(), new RegExp(`Transactions${mine.length}, `), `its ${mine.length} transactions`);
    t.match(await page.locator('#entity-summary').textContent(), /1 fraud/, 'the fraud marked on tx-27');
    const merchants = [...new Set(mine.map((r) => r.merchant_id))].sort();
    const listed = await page.locator('#counterparties tbody tr td:first-child').allTextContents();
    t.same([...listed].sort(), merchants, 'the merchants it paid');
    t.same(
      await page.locator('#entity-transactions tbody tr td:nth-child(2)').allTextContents(),
      mine.slice(0, 10).map((r) => r.transaction_id),
      'its newest transactions',
    );
    await page.screenshot({ path: `${SHOTS}customer.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.click(`#counterparties a:text-is("${merchants[0]}")`);
    await page.waitForSelector(`h1:has-text("Merchant ${merchants[0]}")`);
    const paid = everything.filter((r) => r.merchant_id === merchants[0]);
    t.equal(await page.locator('#entity-transactions tbody tr').count(), Math.min(10, paid.length), "the merchant's own transactions");
    await page.click('#entity-all');
    await page.waitForSelector('#results');
    t.same(
      await shownIds(),
      paid.slice(0, 25).map((r) => r.transaction_id),
      'and all of them, filtered, on Transactions',
    );
  });

  await t.test('work through the review queue with the keyboard', async (t) => {
    // Payments of rising amounts at new merchants in the high-recall mode, until four are sent to
    // review (between its review and block thresholds).
    let reviews = 0;
    for (let i = 0; i < 60 && reviews < 4; i++) {
      const res = await score(key.secret, {
        transaction_id: `q-${i}`,
        amount: Math.round(25 * 1.2 ** i),
        customer_id: `C-q${i}`,
        merchant_id: `M-q${i}`,
        location: 'Porto',
        payment_type: 'wallet',
        mode: 'high_recall',
      });
      t.equal(res.status, 200);
      if ((await res.json()).decision === 'review') reviews++;
    }
    const queue = await apiIds('decision=review&outcome=none&order=oldest');
    t.ok(queue.length >= 3, `${queue.length} transactions wait for review`);
    const position = () => page.locator('#review-position').textContent();
    await page.goto(`${server.base}/#/review?org=${org.id}`);
    await page.waitForSelector('#review-position');
    t.match(await position(), new RegExp(`^Transaction ${queue[0]} · ${queue.length} waiting`), 'the oldest first, with how many wait');
    t.ok(await page.locator('#reasons li').count(), 'with its reasons');
    await page.keyboard.press('f');
    await page.waitForFunction((id) => document.querySelector('#review-position')?.textContent?.startsWith(`Transaction ${id} `), queue[1]);
    t.match(await page.locator('#review-status').textContent(), new RegExp(`${queue[0]} marked fraud`), 'F marks it fraud');
    await page.keyboard.press('n');
    await page.waitForFunction((id) => document.querySelector('#review-position')?.textContent?.startsWith(`Transaction ${id} `), queue[2]);
    t.pass('N moves on without an outcome');
    await page.keyboard.press('l');
    await page.waitForFunction(() => /marked legitimate/.test(document.querySelector('#review-status')?.textContent ?? ''));
    await page.screenshot({ path: `${SHOTS}review.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    const outcome = async (id: string) =>
      (await (await fetch(`${server.base}/api/v1/transactions/${id}`, { headers: { authorization: `Bearer ${key.secret}` } })).json()).outcome;
    t.match(await outcome(queue[0]), { outcome: 'fraud', source: 'review', reported_by: 'analyst-1' });
    t.equal(await outcome(queue[1]), null, 'the skipped one has none');
    t.match(await outcome(queue[2]), { outcome: 'legit', source: 'review' });
    t.same(
      await apiIds('decision=review&outcome=none&order=oldest'),
      queue.filter((_, i) => i !== 0 && i !== 2),
      'the marked ones left the queue',
    );
  });

  await t.test("at a phone's width the table stacks instead of overflowing", async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await goto(`#/transactions?org=${org.id}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    t.ok(overflow <= 0, `no sideways scrolling (${overflow} px)`);
    const header = await page.locator('header.top').boundingBox();
    t.ok(header !== null && header.height <= 80, `the header is ${header?.height} px high (at most 80)`);
    await page.screenshot({ path: `${SHOTS}transactions-phone.png` });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await goto(`#/transactions/tx-27?org=${org.id}`);
    await page.screenshot({ path: `${SHOTS}transaction-phone.png` });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
  });

  t.same(problems, [], 'no console errors');
});
