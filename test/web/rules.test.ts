// The Rules and Lists pages in headless Chromium, against the real server with sign-in through a
// stand-in identity provider. From the dashboard alone a member creates the list
// blocked_customers, adds a customer (typed, then more read from a CSV file, a big file sent in
// batches of at most 10,000), writes in_list("blocked_customers", customer_id) as an active block
// rule, and that customer's next payment, scored with the organization's API key, is blocked and
// its page names the rule; an allow rule written the same way lets through a payment the built-in
// model blocks. The editor shows a bad expression's problem at its line and column and evaluates a
// good one on a stored transaction with the values it read. A backtest run from the editor reads
// precision and recall that match a count of the outcomes reported through the API, with a per-day
// chart; a draft backtested beside its live version compares the two. The rule's matched
// transactions are one link away, and the Transactions page filters on the rule. The editor's main
// actions work from the keyboard alone; axe-core finds no serious or critical problem on the Rules,
// Lists and backtest views. Screenshots go to artifacts/screenshots/.

import t from 'tap';
import { accessibilityProblems, noBrowser, SHOTS, signedInMember } from '../support/browser.ts';
import { RULE_FIELDS } from '../../src/domain/rules/fields.ts';

type Rec = Record<string, any>;

const DAY = 86_400_000;
/** The dashboard's percentage: one decimal and a space before the sign (web/src/dom.ts). */
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

t.test('Rules and lists from the dashboard', { skip: noBrowser }, async (t) => {
  let back = 0;
  const { server, page, problems, member } = await signedInMember(
    t,
    { sub: 'rule-writer', email: 'rules@example.com', name: 'Rue Writer' },
    { SCORE_RATE_PER_MINUTE: 10_000 },
    () => Date.now() - back,
  );
  const org = await member('/api/organizations', 'POST', { name: 'Rulewood' });
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'checkout' });
  const asKey = async (path: string, body: Rec) => {
    const res = await fetch(`${server.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    t.equal(res.status, 200, `${path}: 200`);
    return (await res.json()) as Rec;
  };
  const score = (body: Rec) => asKey('/api/v1/risk/score', { merchant_id: 'm-shop', location: 'Lisbon', payment_type: 'card', ...body });
  const goto = async (hash: string, selector: string) => {
    await page.goto(`${server.base}/${hash}`);
    await page.waitForSelector(selector);
  };
  const text = async (selector: string) => (await page.locator(selector).textContent()) ?? '';

  // Three days of history with outcomes, for the backtest: four customers, c-h1's payments fraud,
  // every third of the others legitimate.
  const history: Rec[] = [];
  for (let k = 0; k < 18; k++) {
    back = (3 - Math.floor(k / 6)) * DAY;
    history.push(await score({ transaction_id: `h-${k}`, amount: 20 + 15 * k, customer_id: `c-h${k % 4}`, merchant_id: `m-${k % 3}` }));
  }
  back = 0;
  const outcomes = history.flatMap((r, k) =>
    k % 4 === 1 ? [{ transaction_id: r.transaction_id, outcome: 'fraud' }] : k % 3 === 0 ? [{ transaction_id: r.transaction_id, outcome: 'legit' }] : [],
  );
  await asKey('/api/v1/outcomes', { outcomes });

  await t.test('a block list made on the Lists page: typed, read from a file, in batches', async (t) => {
    await goto(`#/lists?org=${org.id}`, '#list-create');
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Lists', 'Lists is in the navigation');
    await page.fill('#list-name', 'blocked_customers');
    await page.selectOption('#list-kind', 'customer_id');
    await page.fill('#list-description', 'Chargebacks');
    await page.click('#list-create button[type=submit]');
    await page.waitForSelector('h1:text-is("List blocked_customers")');
    await page.fill('#list-values', '  c-fraud  ');
    await page.fill('#list-reason', 'chargeback');
    await page.click('#list-add');
    await page.waitForFunction(() => /Added 1 value\./.test(document.querySelector('#list-status')?.textContent ?? ''));
    t.equal(await text('#list-count'), '1');

    // A CSV file: its first column, the header left out, a quoted cell undone, blank lines skipped.
    await page.setInputFiles('#list-file', {
      name: 'chargebacks.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('\uFEFFcustomer_id,note\r\nc-up-1,first\r\n"c-up-2",second\r\n\r\nc-up-3\r\n'),
    });
    await page.waitForFunction(() =>
      /^Read 3 values from chargebacks\.csv \(its header “customer_id” left out\)/.test(document.querySelector('#list-status')?.textContent ?? ''),
    );
    t.equal(await page.inputValue('#list-values'), 'c-up-1\nc-up-2\nc-up-3', 'the values fill the box, to check before sending');
    await page.click('#list-add');
    await page.waitForFunction(() => /Added 3 values\./.test(document.querySelector('#list-status')?.textContent ?? ''));
    t.same((await page.locator('#list-items tbody td:first-child').allTextContents()).sort(), ['c-fraud', 'c-up-1', 'c-up-2', 'c-up-3']);
    await page.click('button[aria-label="Remove c-up-3"]');
    await page.waitForFunction(() => document.querySelector('#list-status')?.textContent === 'Removed c-up-3.');
    const stored = await member(`/api/organizations/${org.id}/lists/blocked_customers`);
    t.same(
      stored.data.map((i: Rec) => i.value),
      ['c-fraud', 'c-up-1', 'c-up-2'],
      'the API reads what the page shows',
    );
    t.match(stored.data[0], { value: 'c-fraud', reason: 'chargeback', added_by: String });
    await page.screenshot({ path: `${SHOTS}list.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a list: no serious or critical accessibility problem (axe-core)');

    // A file longer than one request may carry: two batches, every value on the list.
    await goto(`#/lists?org=${org.id}`, '#list-create');
    await page.fill('#list-name', 'big_list');
    await page.selectOption('#list-kind', 'text');
    await page.click('#list-create button[type=submit]');
    await page.waitForSelector('h1:text-is("List big_list")');
    const sent: number[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/lists/big_list/items')) sent.push((JSON.parse(r.postData() ?? '{}').values ?? []).length);
    });
    const many = Array.from({ length: 10_050 }, (_, i) => `v-${i}`);
    await page.setInputFiles('#list-file', { name: 'many.txt', mimeType: 'text/plain', buffer: Buffer.from(`${many.join('\n')}\n`) });
    await page.waitForFunction(() => /^Read 10,050 values from many\.txt/.test(document.querySelector('#list-status')?.textContent ?? ''));
    await page.click('#list-add');
    await page.waitForFunction(() => /Added 10,050 values\./.test(document.querySelector('#list-status')?.textContent ?? ''), undefined, { timeout: 30_000 });
    t.same(sent, [10_000, 50], 'sent in batches of at most 10,000');
    t.equal(await text('#list-count'), '10,050');
    t.equal(await page.locator('#list-next').count(), 1, 'paged');

    await goto(`#/lists?org=${org.id}`, '#list-table');
    t.same(await page.locator('#list-table tbody td:first-child').allTextContents(), ['big_list', 'blocked_customers']);
    await page.screenshot({ path: `${SHOTS}lists.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the Lists page: no serious or critical accessibility problem (axe-core)');
  });

  let blockRule: Rec;
  let blocked: Rec;
  await t.test('an active block rule written in the editor blocks the listed customer', async (t) => {
    await goto(`#/rules?org=${org.id}`, '#no-rules');
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Rules', 'Rules is in the navigation');
    await page.click('#new-rule');
    await page.waitForSelector('#rule-editor');
    await page.fill('#rule-name', 'Blocked customers');
    await page.selectOption('#rule-action', 'block');
    await page.selectOption('#rule-status', 'active');
    await page.fill('#rule-expression', 'in_list("blocked_customers", customer_id)');
    await page.waitForFunction(
      () => document.querySelector('#rule-check-summary')?.textContent === 'No problems: it can be saved. It reads the list blocked_customers.',
    );
    await page.click('#rule-save');
    await page.waitForSelector('h1:text-is("Rule Blocked customers")');
    t.match(await text('#rule-status-now'), /^Active/);
    blockRule = (await member(`/api/organizations/${org.id}/rules`)).data[0];
    t.match(blockRule, { name: 'Blocked customers', action: 'block', status: 'active', version: 1, live_version: 1 });

    blocked = await score({ transaction_id: 'pay-fraud', amount: 40, customer_id: 'c-fraud' });
    t.equal(blocked.decision, 'block', "the listed customer's next payment is blocked");
    t.same(blocked.rules, [{ id: blockRule.id, name: 'Blocked customers', version: 1, action: 'block', status: 'active', applied: true }]);
    t.equal((await score({ transaction_id: 'pay-other', amount: 40, customer_id: 'c-other' })).decision, 'approve', 'another customer is not');

    await goto(`#/transactions/pay-fraud?org=${org.id}`, '#record-rules');
    t.equal(await text('#decision'), 'block');
    t.equal(await text('#decided-by'), 'decided by the rule Blocked customers');
    t.same(
      await page.locator('#record-rules tbody tr td').allTextContents(),
      ['Blocked customers', '1', 'block', 'active', 'yes'],
      'the transaction page names the rule that decided',
    );
    t.match(await text('#record-notes'), /from approve to block/, "with the answer's note");
    await page.screenshot({ path: `${SHOTS}transaction-rules.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a transaction with a rule: no serious or critical accessibility problem (axe-core)');

    // The rule's matches, one link away; and the same filter chosen on Transactions.
    await page.click('#record-rules a:text-is("Blocked customers")');
    await page.waitForSelector('h1:text-is("Rule Blocked customers")');
    t.equal(await text('#rule-matches'), '1 transaction matched');
    await page.click('#rule-matches');
    await page.waitForSelector('#results');
    t.same(await page.locator('#results tbody td:nth-child(2)').allTextContents(), ['pay-fraud'], 'the transactions it matched');
    t.equal(await page.inputValue('#filter-rule_id'), blockRule.id, 'the rule filter says so');
    await page.selectOption('#filter-rule_id', '');
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => !location.hash.includes('rule_id'));
    await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length > 1);
    await page.selectOption('#filter-rule_id', blockRule.id);
    await page.click('#filters button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#results tbody tr').length === 1);
    t.match(await text('#results-title'), /rule Blocked customers/);
  });

  await t.test('the editor: a problem at its line and column, an evaluation on a transaction', async (t) => {
    await goto(`#/rules/new?org=${org.id}`, '#rule-editor');
    // The reference beside the editor lists every field the service declares.
    await page.click('#rule-reference summary');
    const listed = await page.$$eval('#rule-reference .reference-table:first-of-type tbody tr td:first-child', (cells) => cells.map((c) => c.textContent));
    t.same(
      listed,
      RULE_FIELDS.map((f) => f.name),
      "the reference lists the service's fields",
    );
    await page.fill('#rule-expression', 'amount > 10.0 &&\n  custome_id == "x"');
    await page.waitForFunction(() => document.querySelector('#rule-check-summary')?.classList.contains('bad'));
    t.match(await text('#rule-check-summary'), /^1 problem, the first at line 2, column 3: Unknown variable: custome_id/);
    t.equal(await text('#rule-problems li button'), 'Line 2, column 3');
    t.equal(await page.getAttribute('#rule-expression', 'aria-invalid'), 'true');
    t.match(await text('#rule-problems .excerpt'), /^ {2}custome_id == "x"\n {2}\^$/, 'its line, with a caret under the column');
    await page.screenshot({ path: `${SHOTS}rule-problem.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the editor with a problem: no serious or critical accessibility problem (axe-core)');
    await page.click('#rule-problems li button');
    t.same(
      await page.evaluate(() => [document.activeElement?.id, (document.activeElement as HTMLTextAreaElement).selectionStart]),
      ['rule-expression', 'amount > 10.0 &&\n  '.length],
      'its button puts the cursor there',
    );

    const checked = await score({ transaction_id: 'pay-check', amount: 777, customer_id: 'c-check' });
    await page.fill('#rule-expression', 'amount > 500.0 && customer.is_new');
    await page.fill('#rule-transaction', checked.transaction_id);
    await page.waitForFunction(() => document.querySelector('#rule-matched')?.getAttribute('data-matched') === 'true');
    t.equal(await text('#rule-matched'), 'It matches pay-check: this rule would block it.');
    const values = Object.fromEntries(
      await page.locator('#rule-values tbody tr').evaluateAll((rows) => rows.map((r) => [r.children[0]!.textContent, r.children[1]!.textContent])),
    );
    t.same(values, { amount: '777', 'customer.prior_transactions': '0', 'customer.is_new': 'true' }, 'the values it read, as the decision saw them');
    await page.selectOption('#rule-action', 'review');
    await page.waitForFunction(() => /send it to review/.test(document.querySelector('#rule-matched')?.textContent ?? ''));
    t.equal(await page.getAttribute('#rule-expression', 'aria-invalid'), 'false');
  });

  await t.test('an allow rule lets through a payment the model blocks', async (t) => {
    const strict = { mode: 'high_recall', amount: 9_500, customer_id: 'c-new', merchant_id: 'm-new', location: 'Faraway', payment_type: 'card' };
    const before = await score({ transaction_id: 'strict-1', ...strict });
    t.equal(before.decision, 'block', `the model blocks it (risk ${before.risk_score})`);
    await goto(`#/rules/new?org=${org.id}`, '#rule-editor');
    await page.fill('#rule-name', 'Trusted merchant');
    await page.selectOption('#rule-action', 'allow');
    await page.selectOption('#rule-status', 'active');
    await page.fill('#rule-expression', 'merchant_id == "m-new"');
    await page.fill('#rule-transaction', 'strict-1');
    await page.waitForFunction(() => /approve it/.test(document.querySelector('#rule-matched')?.textContent ?? ''));
    await page.click('#rule-save');
    await page.waitForSelector('h1:text-is("Rule Trusted merchant")');
    const allowed = await score({ transaction_id: 'strict-2', ...strict });
    t.equal(allowed.decision, 'approve', 'the allow rule lets it through');
    t.ok(allowed.risk_score >= allowed.block_threshold, `the model's own score still says block (${allowed.risk_score} ≥ ${allowed.block_threshold})`);
    await goto(`#/transactions/strict-2?org=${org.id}`, '#record-rules');
    t.equal(await text('#decision'), 'approve');
    t.same(await page.locator('#record-rules tbody tr td').allTextContents(), ['Trusted merchant', '1', 'allow', 'active', 'yes']);
    t.match(await text('#record-notes'), /from block to approve/);
  });

  await t.test('a backtest run from the editor: precision and recall match the stored outcomes', async (t) => {
    await goto(`#/rules/new?org=${org.id}`, '#rule-editor');
    await page.fill('#rule-expression', 'amount >= 100.0');
    await page.selectOption('#rule-action', 'review');
    await page.waitForFunction(() => document.querySelector('#rule-check-summary')?.classList.contains('ok'));
    await page.click('#rule-backtest');
    await page.waitForSelector('#backtest-figures', { timeout: 20_000 });
    t.equal(await text('h1'), 'Backtest of an unsaved expression');

    // The same count, from the decision log and the outcomes as stored.
    const all: Rec[] = [];
    for (let after: string | undefined; ; ) {
      const p = await member(`/api/organizations/${org.id}/transactions?limit=100${after ? `&starting_after=${after}` : ''}`);
      all.push(...p.data);
      if (!p.has_more) break;
      after = p.data.at(-1).transaction_id;
    }
    const matched = all.filter((r) => r.amount >= 100);
    const fraud = matched.filter((r) => r.outcome?.outcome === 'fraud').length;
    const legit = matched.filter((r) => r.outcome?.outcome === 'legit').length;
    const reported = all.filter((r) => r.outcome?.outcome === 'fraud').length;
    t.ok(fraud > 0 && legit > 0 && reported > fraud, `a mixed count: ${fraud} fraud and ${legit} legitimate matched, ${reported} fraud in all`);
    const figure = async (id: string) => page.locator(`#${id} span`).allTextContents();
    t.same(await figure('backtest-matched'), ['Matched', String(matched.length), `of ${all.length} scanned (${pct(matched.length / all.length)})`]);
    t.same(
      await figure('backtest-precision'),
      ['Precision', pct(fraud / (fraud + legit)), `${fraud} fraud of the ${fraud + legit} matched with an outcome`],
      'precision: fraud among the matched with an outcome',
    );
    t.same(
      await figure('backtest-recall'),
      ['Recall', pct(fraud / reported), `${fraud} of the ${reported} fraud reported in the period`],
      'recall: of all fraud reported',
    );
    t.equal(Number(await page.getAttribute('#backtest-precision', 'data-value')), fraud / (fraud + legit));

    // The per-day chart: a bar a day, adding up to the matches; the same numbers in its table.
    const days = new Set(matched.map((r) => r.time.slice(0, 10)));
    const bars = await page.locator('#backtest-days rect[data-series="matched"]').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-value'))));
    t.equal(bars.length, days.size, `${days.size} days with a match`);
    t.equal(
      bars.reduce((s, v) => s + v, 0),
      matched.length,
      'the bars add up to the matches',
    );
    t.equal(await page.locator('#backtest-days details tbody tr').count(), days.size);
    const fraudBars = await page.locator('#backtest-days rect[data-series="fraud"]').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-value'))));
    t.equal(
      fraudBars.reduce((s, v) => s + v, 0),
      fraud,
    );
    t.ok((await page.locator('#backtest-examples-fraud tbody tr').count()) > 0, 'examples of its fraud');
    t.match(await page.locator('#backtest-examples-fraud tbody tr td:last-child').first().textContent(), /^amount = \d+$/, 'with the values read');
    await page.screenshot({ path: `${SHOTS}backtest.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a backtest: no serious or critical accessibility problem (axe-core)');
  });

  await t.test('keyboard only: write, check, save, shadow, a draft and its backtest', async (t) => {
    await goto(`#/rules/new?org=${org.id}`, '#rule-editor');
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
    const tabTo = async (id: string, key = 'Tab') => {
      for (let i = 0; i < 60 && (await focused()) !== id; i++) await page.keyboard.press(key);
      t.equal(await focused(), id, `Tab reaches #${id}`);
    };
    await tabTo('rule-name');
    await page.keyboard.type('Mid-size');
    await page.keyboard.press('Tab');
    t.equal(await focused(), 'rule-action');
    await page.keyboard.press('ArrowDown');
    t.equal(await page.inputValue('#rule-action'), 'review', 'the action chosen with the arrow keys');
    await tabTo('rule-expression');
    await page.keyboard.type('amount > 50.0 &&');
    await page.waitForFunction(() => document.querySelector('#rule-check-summary')?.classList.contains('bad'));
    await page.keyboard.type(' amount < 200.0');
    await page.waitForFunction(() => document.querySelector('#rule-check-summary')?.classList.contains('ok'));
    await page.keyboard.press('Tab');
    t.equal(await focused(), 'rule-transaction', 'the transaction id comes next');
    await page.keyboard.type(blocked.transaction_id);
    await page.waitForFunction(() => document.querySelector('#rule-matched')?.getAttribute('data-matched') === 'false');
    await page.keyboard.press('Shift+Tab');
    t.equal(await focused(), 'rule-expression');
    await page.keyboard.press('Control+Enter');
    await page.waitForSelector('h1:text-is("Rule Mid-size")');
    const saved = (await member(`/api/organizations/${org.id}/rules`)).data.find((r: Rec) => r.name === 'Mid-size');
    t.match(saved, { action: 'review', status: 'draft', version: 1, expression: 'amount > 50.0 && amount < 200.0' }, 'Ctrl+Enter saved it, as a draft');

    await tabTo('rule-shadow');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /^Shadow/.test(document.querySelector('#rule-status-now')?.textContent ?? ''));
    t.match(await text('#rule-status-message'), /Mid-size is shadow, version 1 live/);
    t.equal(await focused(), 'rule-activate', 'focus stays among the status buttons');

    // A new version kept as a draft while version 1 runs in shadow, then backtested beside it.
    await tabTo('rule-expression');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('amount > 50.0 && amount < 300.0');
    await tabTo('rule-save-draft');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /Saved version 2, a draft: version 1 stays live/.test(document.querySelector('#rule-status-message')?.textContent ?? ''));
    const rule = (await member(`/api/organizations/${org.id}/rules`)).data.find((r: Rec) => r.name === 'Mid-size');
    t.match(rule, { status: 'shadow', version: 2, live_version: 1 });
    await tabTo('rule-backtest');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#backtest-compare', { timeout: 20_000 });
    t.equal(await text('h1'), 'Backtest of Mid-size, version 2');
    const scored = (await member(`/api/organizations/${org.id}/transactions?limit=100`)).data as Rec[];
    const rows = Object.fromEntries(
      await page
        .locator('#backtest-compare tbody tr')
        .evaluateAll((rs) => rs.map((r) => [r.children[0]!.textContent, [r.children[1]!.textContent, r.children[2]!.textContent]])),
    );
    t.same(
      rows.Matched,
      [String(scored.filter((r) => r.amount > 50 && r.amount < 300).length), String(scored.filter((r) => r.amount > 50 && r.amount < 200).length)],
      'the draft beside the live version',
    );
    await page.screenshot({ path: `${SHOTS}backtest-compare.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a backtest with a comparison: no serious or critical accessibility problem (axe-core)');

    await goto(`#/rules?org=${org.id}`, '#rule-list');
    t.same(await page.locator('#rule-list tbody td:first-child').allTextContents(), ['Blocked customers', 'Mid-size', 'Trusted merchant']);
    await page.screenshot({ path: `${SHOTS}rules.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the Rules page: no serious or critical accessibility problem (axe-core)');
    await page.click('#rule-list a:text-is("Mid-size")');
    await page.waitForSelector('#version-list');
    t.same(await page.locator('#version-list tbody td:first-child').allTextContents(), ['2 (draft)', '1 (live)']);
    await page.screenshot({ path: `${SHOTS}rule.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a rule: no serious or critical accessibility problem (axe-core)');
  });

  await t.test("at a phone's width a rule fits", async (t) => {
    await page.setViewportSize({ width: 390, height: 844 });
    await goto(`#/rules/${blockRule.id}?org=${org.id}`, '#rule-editor');
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling on a rule');
    await page.screenshot({ path: `${SHOTS}rule-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'a rule at 390 px: no serious or critical accessibility problem (axe-core)');
  });

  t.same(problems, [], 'no console errors');
});
