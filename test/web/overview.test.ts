// The analyst's Overview in headless Chromium: an organization scores transactions over four weeks
// (the service's clock moved back a week at a time) and reports outcomes on some, and the Overview's
// charts and table show exactly the performance endpoint's numbers for every week: volume, review
// and block rates, score quantiles, outcomes, and the chosen mode's precision and recall.
// Screenshots at 1366 and 390 px go to artifacts/screenshots/.

import t from 'tap';
import { accessibilityProblems, noBrowser, SHOTS, signedInMember } from '../support/browser.ts';

type Rec = Record<string, any>;
const WEEK = 7 * 86_400_000;

t.test("Overview: weekly charts with the performance endpoint's numbers", { skip: noBrowser }, async (t) => {
  let back = 0;
  const { server, page, problems, member } = await signedInMember(
    t,
    { sub: 'analyst-2', email: 'overview@example.com', name: 'Ovi' },
    { SCORE_RATE_PER_MINUTE: 10_000 },
    () => Date.now() - back,
  );
  const org = await member('/api/organizations', 'POST', { name: 'Weekly Co' });
  const key = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'checkout' });
  const asKey = (path: string, body: Rec) =>
    fetch(`${server.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  // Four weeks of traffic, more each week, a few large payments at new merchants among them.
  let n = 0;
  for (const weeksAgo of [3, 2, 1, 0]) {
    back = weeksAgo * WEEK;
    for (let i = 0; i < 6 + (3 - weeksAgo) * 5; i++, n++) {
      const large = n % 5 === 4;
      t.equal(
        (
          await asKey('/api/v1/risk/score', {
            transaction_id: `w-${n}`,
            amount: large ? 3_000 + n * 10 : 15 + (n % 40),
            customer_id: `C-${n % 9}`,
            merchant_id: large ? `M-new-${n}` : `M-${n % 4}`,
            location: 'Lisbon',
            payment_type: 'wallet',
          })
        ).status,
        200,
      );
    }
  }
  back = 0;
  const outcomes = Array.from({ length: n }, (_, i) => i)
    .filter((i) => i % 3 === 0)
    .map((i) => ({ transaction_id: `w-${i}`, outcome: i % 5 === 4 ? 'fraud' : 'legit' }));
  t.equal((await asKey('/api/v1/outcomes', { outcomes })).status, 200);
  const report = await member(`/api/organizations/${org.id}/performance?weeks=12`);
  const weeks = report.weeks as Rec[];
  t.equal(weeks.filter((w) => w.transactions > 0).length, 4, 'four weeks with traffic');

  await page.goto(`${server.base}/#/overview?org=${org.id}`);
  await page.waitForSelector('#overview-charts svg');
  t.equal(await page.locator('h1').textContent(), 'Overview');
  t.equal(await page.locator('#overview-charts svg').count(), 5, 'volume, rates, scores, outcomes, precision and recall');
  const values = (series: string) =>
    page.locator(`#overview-charts [data-series="${series}"]`).evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  t.same(
    await values('transactions'),
    weeks.map((w) => w.transactions),
    "the volume bars are the endpoint's counts",
  );
  t.same(
    await values('review'),
    weeks.filter((w) => w.review_rate !== null).map((w) => w.review_rate),
    'the review rates',
  );
  t.same(
    await values('block'),
    weeks.filter((w) => w.block_rate !== null).map((w) => w.block_rate),
    'the block rates',
  );
  t.same(
    await values('median'),
    weeks.filter((w) => w.score_quantiles).map((w) => w.score_quantiles.p50),
    'the median scores',
  );
  t.same(
    await values('with an outcome'),
    weeks.map((w) => w.labelled),
    'the outcomes reported',
  );
  t.same(
    await values('fraud'),
    weeks.map((w) => w.fraud),
    'the frauds among them',
  );
  t.same(
    await values('precision'),
    weeks.filter((w) => w.by_mode.balanced.precision !== null).map((w) => w.by_mode.balanced.precision),
    'precision of the balanced mode',
  );
  const rows = await page.locator('#overview-table tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  t.same(
    rows.map((r) => [r[0], Number(r[1]), Number(r[6]), Number(r[7])]),
    weeks.map((w) => [w.week, w.transactions, w.labelled, w.fraud]),
    'the table: week, transactions, outcomes, fraud',
  );
  const basis: Record<string, string> = {
    outcomes: 'measured on outcomes',
    scores: 'by the scores’ spread',
    categories: 'by unseen values',
    features: 'by the amounts',
  };
  t.same(
    rows.map((r) => r[11]),
    weeks.map((w) => (w.drift ? `${w.drift.verdict} (${basis[w.drift.basis]})` : '—')),
    "the drift column: each week's verdict and what decided it",
  );
  const newest = weeks.at(-1)!;
  t.ok(newest.drift, `this week's ${newest.transactions} transactions have a drift report`);
  t.equal(await page.locator('#overview-drift [data-verdict]').getAttribute('data-verdict'), newest.drift.verdict, "the notice shows this week's verdict");
  t.equal(await page.locator('#overview-drift [data-verdict]').getAttribute('data-basis'), newest.drift.basis, 'and what decided it');
  const notice = (await page.locator('#overview-drift').textContent())!;
  if (newest.drift.verdict === 'shifted')
    t.match(notice, /^Drift: these scores are outside what the model was validated on\.No outcomes to measure with, so the data decides/);
  else if (newest.drift.verdict === 'ok')
    t.match(notice, /^No outcomes to measure with: the scores, payment types, locations and amounts of week \d{4}-W\d\d's traffic look like/);
  t.match(notice, /If the scores are right, about \d+\.\d\d % of these payments are fraud/, 'beside it, what the calibrated scores promise');
  const tooltip = await page.locator('#overview-charts rect[data-series="transactions"] title').last().textContent();
  t.match(tooltip, new RegExp(`transactions ${weeks.at(-1)!.transactions}$`), 'a bar says its number on hover');
  await page.screenshot({ path: `${SHOTS}overview.png`, fullPage: true });
  t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
  await page.selectOption('#overview-mode', 'high_recall');
  await page.waitForFunction(() => location.hash.includes('mode=high_recall') && document.querySelector('#overview-charts svg'));
  await page.waitForSelector('#overview-summary:has-text("high recall")');
  t.same(
    await values('recall'),
    weeks.filter((w) => w.by_mode.high_recall.recall !== null).map((w) => w.by_mode.high_recall.recall),
    'recall of the chosen mode',
  );
  await page.setViewportSize({ width: 390, height: 844 });
  t.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'no sideways scrolling on a phone');
  await page.screenshot({ path: `${SHOTS}overview-phone.png` });
  t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
  t.same(problems, [], 'no console errors');
});
