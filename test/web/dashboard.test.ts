// The dashboard end to end in headless Chromium (Debian's `chromium` driven by playwright-core; no
// downloaded browser) against the real server on a loopback port: score a transaction and see its
// reasons, channel bars, evidence and stages, the attribution in words, the model's known values
// suggested and a new one noted; upload a CSV with wrong headers, fix it with the column mapping,
// watch the job finish, page the results, download them, delete the upload; open the evaluation and
// see its curves drawn with thresholds marked, tooltips and legends; the models' two titled tables;
// with a test identity provider on loopback, sign in, create an organization and a key, revoke it,
// sign out; a page still loading when the user moves on never covers the next one. Each page has
// one h1, no sideways scrolling at 390 px, no serious or critical axe-core problem, and loads under
// its Content-Security-Policy with no console error. Screenshots of each page are saved in
// artifacts/screenshots/. Skipped outside CI when no Chromium is installed (CI installs it). The analyst's pages and Datasets' own flow have files of their own.

import t from 'tap';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { start } from '../support/server.ts';
import { accessibilityProblems, launch, listen, noBrowser, SHOTS, signInServer, watchedPage } from '../support/browser.ts';

t.test('dashboard in a real browser', { skip: noBrowser }, async (t) => {
  const s = await start({});
  const base = await listen(s);
  const browser = await launch();
  t.teardown(async () => {
    await browser.close();
    await s.close();
  });

  const home = await fetch(`${base}/`);
  t.equal(home.status, 200, 'the dashboard is served at /');
  t.match(home.headers.get('content-security-policy') ?? '', /script-src 'self'/, 'under a Content-Security-Policy');
  t.equal((await fetch(`${base}/login`)).status, 200, '/login (the sign-in return address) serves it too');

  const problems: string[] = [];
  const open = async (path: string, width = 1280): Promise<Page> => {
    const page = await watchedPage(browser, problems, width);
    await page.goto(`${base}${path}`);
    return page;
  };

  t.test('score a transaction and see its reasons', async (t) => {
    const known = (await (await fetch(`${base}/api/risk/known-values`)).json()) as { payment_types: string[]; locations: string[]; sandbox_as_of: string };
    const page = await open('/#/score', 1366);
    t.equal(await page.locator('h1').count(), 1, 'one h1');
    t.equal(await page.locator('h1').textContent(), 'Score a transaction', 'the h1 is the page title');
    t.match(
      await page.locator('#score-sandbox').textContent(),
      /What-if scoring.*public sandbox.*nothing is recorded/,
      'the form says it is a what-if that records nothing',
    );
    t.equal(await page.locator('#score-sandbox strong').first().textContent(), 'What-if scoring: ', 'in bold, first');
    const first = await page.locator('form').evaluate((f) => f.firstElementChild?.id);
    t.equal(first, 'score-sandbox', 'above the fields');
    // The known values are suggested, and free text is still taken.
    await page.waitForFunction(
      () => document.querySelectorAll('#score-payment-types option').length > 0 && document.querySelector('#score-as-of')?.textContent !== '',
    );
    t.equal(await page.locator('#score-payment_type').getAttribute('list'), 'score-payment-types', 'payment type offers a list');
    t.equal(await page.locator('#score-location').getAttribute('list'), 'score-locations', 'location offers a list');
    const values = (sel: string) => page.locator(`${sel} option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    t.same(await values('#score-payment-types'), known.payment_types, "the payment types offered are the model's");
    t.same(await values('#score-locations'), known.locations, "the locations offered are the model's");
    t.ok(known.payment_types.includes('wallet') && known.locations.includes('Lisbon'));
    t.match(
      await page.locator('#score-sandbox').textContent(),
      new RegExp(`scored as of ${known.sandbox_as_of.slice(0, 19).replace('T', ' ')} UTC`),
      'the moment it is scored at, in UTC',
    );
    t.equal(await page.locator('#score-payment_type-note').textContent(), '', 'no note for a known payment type');
    await page.fill('#score-payment_type', 'crypto_voucher');
    t.match(
      await page.locator('#score-payment_type-note').textContent(),
      /New to the model: “crypto_voucher”.*scored as missing/,
      'a new payment type gets a note',
    );
    await page.fill('#score-location', 'Atlantis');
    t.match(
      await page.locator('#score-location-note').textContent(),
      /New to the model: “Atlantis”.*new place for every customer/,
      'a new location gets a note',
    );
    await page.screenshot({ path: `${SHOTS}score-new-values.png` });
    await page.fill('#score-location', 'Porto');
    t.equal(await page.locator('#score-location-note').textContent(), '', 'a known location has none');
    await page.fill('#score-location', 'Lisbon');
    await page.fill('#score-payment_type', 'wallet');
    t.equal(await page.locator('label:has(#score-amount) > span').textContent(), 'Amount (currency units)', 'the amount field says its unit');

    await page.fill('#score-amount', '980');
    await page.fill('#score-customer_id', 'C000042');
    await page.fill('#score-merchant_id', 'M00007');
    await page.selectOption('#score-mode', 'high_recall');
    await page.getByRole('button', { name: 'Score' }).click();
    await page.waitForSelector('#reasons li');
    const reasons = await page.locator('#reasons li').allTextContents();
    t.ok(reasons.length >= 1 && reasons.length <= 5, `${reasons.length} reasons shown`);
    t.ok(
      reasons.every((r) => /(added|took) [\d.]+ (to|from) the log-odds of fraud/.test(r)),
      'worded as contributions',
    );
    t.match(await page.locator('#risk-score').textContent(), /^\d+\.\d\d %$/, 'the score as a percentage');
    t.match(await page.locator('#decision').textContent(), /^(approve|review|block)$/);
    t.equal(await page.locator('.bar[role="img"]').count(), 8, 'channel scores and attribution as bars');
    t.ok((await page.getByText('Entity history').count()) > 0 && (await page.getByText('Stages').count()) > 0, 'entity history and stages');
    t.ok(await page.getByText('Mode high_recall').count(), 'the chosen mode was used');
    t.equal(await page.locator('h1').count(), 1, 'still one h1 with the answer');

    // The attribution in words names the channel with the largest upward share.
    const shares = await page
      .locator('.bar.signed')
      .evaluateAll((bs) => bs.map((b) => (b.getAttribute('aria-label') ?? '').split(': ')).map(([c, v]) => [c!, Number(v)] as const));
    const up = shares.filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]);
    const sentence = (await page.locator('#attribution-summary').textContent())!;
    if (up.length)
      t.match(
        sentence,
        new RegExp(
          `^${up[0]![0].charAt(0).toUpperCase()}${up[0]![0].slice(1)} evidence \\(.*\\) pushed the score up most, ${Math.round(up[0]![1] * 100)} % of the total movement`,
        ),
        `attribution in words: ${sentence}`,
      );
    else t.match(sentence, /^No channel pushed the score up/, `attribution in words: ${sentence}`);
    t.match(
      await page.locator('#score-combine').textContent(),
      /Why the score can exceed every channel score: the stack adds the channels' log-odds together, while each channel score is that channel's evidence alone with the others at their average/,
      'why the score can exceed the channel scores',
    );

    // Units: amounts in the transaction's currency units, times in UTC.
    t.match(await page.locator('#score-amount-shown').textContent(), /980\.00 in the transaction's currency units/, 'the amount with its unit');
    const times = await page.locator('#graph-evidence td[data-label="Time (UTC)"]').allTextContents();
    t.ok(times.length > 0, `${times.length} evidence times`);
    t.ok(
      times.every((x) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/.test(x)),
      'every evidence time says UTC',
    );
    const amounts = await page.locator('#graph-evidence td[data-label="Amount (currency units)"]').allTextContents();
    t.ok(amounts.length === times.length && amounts.every((x) => /^\d{1,3}(,\d{3})*\.\d\d$/.test(x)), 'evidence amounts with two decimals under a unit header');
    t.match(await page.locator('#graph-evidence').textContent(), /Times in UTC; amounts in the transaction's currency units\./);
    if (await page.locator('#related-ring').count())
      t.match(await page.locator('#related-ring').textContent(), /window \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to .* UTC/, 'the ring window in UTC');

    await page.screenshot({ path: `${SHOTS}score.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}score-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem at 390 px (axe-core)');
    await page.close();
  });

  t.test('open the evaluation and see the curves drawn', async (t) => {
    const get = async (path: string) => (await fetch(`${base}${path}`)).json() as Promise<Record<string, any>>;
    const [thresholds, rings] = await Promise.all([get('/api/risk/thresholds'), get('/api/metrics/rings')]);
    const page = await open('/#/evaluation', 1366);
    await page.waitForSelector('#charts svg');
    t.equal(await page.locator('h1').count(), 1, 'one h1');
    t.match(await page.locator('h1').textContent(), /^Evaluation of /, 'the h1 is the page title');
    t.equal(await page.locator('#charts svg').count(), 4, 'ROC, precision-recall, reliability and histograms');
    const curves = await page.locator('#charts polyline.curve').evaluateAll((els) => els.map((e) => (e.getAttribute('points') ?? '').split(' ').length));
    t.ok(curves.length === 3 && curves.every((n) => n > 5), `three curves with points: ${curves.join(', ')}`);
    t.ok((await page.locator('#charts rect.bar-a').count()) > 5, 'histogram bars drawn');
    t.ok((await page.locator('#limitations li').count()) > 0, 'limitations listed');
    t.ok(await page.getByText('Metrics per split').count(), 'metrics per split');
    t.match(await page.locator('#seed-spread').textContent(), /The same pipeline on 3 simulator and training seeds/, 'the spread over seeds');
    t.match(await page.locator('#selection').textContent(), /Settings chosen on the validation split only: 16 settings tried/, 'how the settings were chosen');

    // Larger charts, axis text readable at both widths (its size on screen, after the SVG's scaling).
    // (No named functions inside the callback: tsx would wrap them in a helper the page lacks.)
    const axisPx = () =>
      page.locator('#charts svg').evaluateAll((svgs) =>
        svgs.map((s) => ({
          width: s.getBoundingClientRect().width,
          axis:
            Math.min(...[...s.querySelectorAll('text.axis')].map((e) => parseFloat(getComputedStyle(e).fontSize))) *
            (s.getBoundingClientRect().width / (s as SVGSVGElement).viewBox.baseVal.width),
          label:
            Math.min(...[...s.querySelectorAll('text.label')].map((e) => parseFloat(getComputedStyle(e).fontSize))) *
            (s.getBoundingClientRect().width / (s as SVGSVGElement).viewBox.baseVal.width),
        })),
      );
    for (const c of await axisPx())
      t.ok(
        c.width >= 440 && c.axis >= 14 && c.label >= 14,
        `at 1366 px a chart is ${c.width.toFixed(0)} px wide, tick labels ${c.axis.toFixed(1)} px, axis labels ${c.label.toFixed(1)} px`,
      );
    t.equal(await page.locator('#charts svg text.label').count(), 8, 'both axes of every chart labelled');

    // Tooltips with the values on points and bars.
    const bins = await page.locator('#charts rect.bar-a:not(.swatch)').count();
    t.equal(await page.locator('#charts rect.bar-a:not(.swatch) > title').count(), bins, 'every fraud bar has a tooltip');
    t.equal(await page.locator('#charts rect.bar-b:not(.swatch) > title').count(), bins, 'every legitimate bar has a tooltip');
    t.match(
      await page.locator('#charts rect.bar-a:not(.swatch) > title').first().textContent(),
      /^fraud, score 0 to 0\.05: \d+\.\d % of fraud payments \(\d+\)$/,
      'a bar says its bin, share and count',
    );
    const points = await page.locator('#charts circle.point > title').allTextContents();
    t.ok(
      points.length > 100 &&
        points.some((p) => /^threshold [\d.]+: false positive rate [\d.]+, true positive rate [\d.]+$/.test(p)) &&
        points.some((p) => /^scores [\d.]+ to [\d.]+: predicted [\d.]+, observed [\d.]+ \([\d,]+ payments\)$/.test(p)),
      `${points.length} points with tooltips`,
    );

    // The legend uses the bars' own classes, so its colours are theirs.
    const hist = page.locator('#charts svg').nth(3);
    const fills = await hist.evaluate((s) =>
      ['bar-a', 'bar-b'].map((c) => [
        getComputedStyle(s.querySelector(`rect.swatch.${c}`)!).fill,
        getComputedStyle(s.querySelector(`rect.${c}:not(.swatch)`)!).fill,
      ]),
    );
    t.ok(
      fills.every(([swatch, barFill]) => swatch === barFill),
      `legend swatches in the bars' colours: ${JSON.stringify(fills)}`,
    );
    t.same(
      await hist.locator('.legend-item text').allTextContents(),
      ['fraud', 'legitimate', 'review', 'block'],
      'the legend names the bars and the thresholds',
    );

    // The balanced mode's thresholds marked on all four charts, then another mode's.
    const marked = async (mode: string) => {
      const m = thresholds.modes[mode];
      for (const [kind, value] of [
        ['review', m.review_threshold],
        ['block', m.block_threshold],
      ] as const) {
        const marks = page.locator(`#charts [data-mode="${mode}"][data-kind="${kind}"]`);
        t.equal(await marks.count(), 4, `${mode} ${kind} marked on the four charts`);
        t.same(await marks.evaluateAll((ms) => ms.map((e) => Number(e.getAttribute('data-threshold')))), [value, value, value, value], `at ${value}`);
        t.same(
          await marks.evaluateAll((ms) => ms.map((e) => e.tagName)),
          kind === 'review' ? ['circle', 'circle', 'line', 'line'] : ['rect', 'rect', 'line', 'line'],
          'on the curves as points, on the score axes as lines',
        );
        t.match(
          await marks.first().locator('title').textContent(),
          new RegExp(`${mode.replace('_', ' ')} mode, ${kind} at [\\d.]+ %: false positive rate ≈ [\\d.]+, true positive rate ≈ [\\d.]+`),
          'a mark says its threshold and where the curve is',
        );
      }
    };
    t.equal(await page.locator('#threshold-mode').inputValue(), 'balanced', 'balanced marked first');
    await marked('balanced');
    await page.selectOption('#threshold-mode', 'high_recall');
    await marked('high_recall');
    t.equal(await page.locator('#charts [data-mode="balanced"]').count(), 0, 'only the chosen mode is marked');
    await page.selectOption('#threshold-mode', 'balanced');

    // Rings with their members.
    const groups = rings.live.groups as { ring_id: string; members: number; customer_ids: string[]; merchants: string[] }[];
    t.ok(groups.length > 0, 'the sandbox has flagged rings');
    t.equal(await page.locator('#ring-list tbody tr').count(), groups.length, 'every listed ring is shown');
    const row = page.locator('#ring-list tbody tr').first();
    t.equal(await row.locator('td[data-label="Ring"]').textContent(), groups[0]!.ring_id);
    t.equal(await row.locator('td[data-label="Members"]').textContent(), String(groups[0]!.members));
    t.equal(await row.locator('td[data-label="Customers"]').textContent(), groups[0]!.customer_ids.join(', '), 'its customers by id');
    t.equal(await row.locator('td[data-label="Merchants"]').textContent(), groups[0]!.merchants.join(', '), 'its merchants by id');

    // What the comparisons and the modes mean, including the modes that miss their targets.
    t.match(
      await page.locator('#comparisons-meaning').textContent(),
      /What this compares: .*the stack is the served model.*the ablation is one booster.*amount-only baseline.*logistic-regression baseline.*Higher is better/,
      'a sentence under the comparisons',
    );
    const modesText = (await page.locator('#modes-meaning').textContent())!;
    t.match(modesText, /What a mode is: a pair of thresholds chosen on the validation split.*review.*blocked/, 'a sentence under the modes');
    const missed = Object.entries(thresholds.modes as Record<string, { meets_target: boolean }>)
      .filter(([, v]) => v.meets_target === false)
      .map(([m]) => m.replace('_', ' '));
    t.ok(missed.length > 0, `modes missing their targets on the built-in model: ${missed.join(', ')}`);
    for (const m of missed) t.match(modesText, new RegExp(`${m} \\([a-z_0-9]+ [\\d.]+ against [\\d.]+\\)`, 'i'), `${m} is named as missing its target`);
    t.match(modesText, /not meet (its|their) targets? on the test split/);

    await page.screenshot({ path: `${SHOTS}evaluation.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    for (const c of await axisPx()) t.ok(c.axis >= 11 && c.label >= 11, `at 390 px tick labels ${c.axis.toFixed(1)} px, axis labels ${c.label.toFixed(1)} px`);
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}evaluation-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem at 390 px (axe-core)');
    await page.close();
  });

  t.test('keyboard: the navigation reaches each page', async (t) => {
    const page = await open('/');
    await page.keyboard.press('Tab');
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content', 'a skip link first');
    await page.getByRole('link', { name: 'Evaluation' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('#charts svg');
    t.equal(await page.getByRole('link', { name: 'Evaluation' }).getAttribute('aria-current'), 'page', 'the current page is marked');
    await page.close();
  });

  t.test('a page still loading when the user moves on never covers the page after it', async (t) => {
    const page = await open('/#/score');
    await page.waitForSelector('h1:text("Score a transaction")');
    // The evaluation's data held back until the user is on the next page.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/api/metrics/overview', async (route) => {
      await held;
      await route.continue();
    });
    await page.evaluate(() => (location.hash = '#/evaluation'));
    await page.waitForSelector('text=Loading the evaluation…');
    await page.evaluate(() => (location.hash = '#/models'));
    await page.waitForSelector('h1:text("Models")');
    const answered = page.waitForResponse('**/api/metrics/overview');
    release();
    await answered;
    // Let the evaluation page finish whatever it would draw.
    await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
    t.same(await page.locator('h1').allTextContents(), ['Models'], 'the page shown is the one navigated to last');
    t.equal(await page.locator('#charts').count(), 0, "and none of the evaluation's content");
    await page.close();
  });

  t.test('upload a CSV with wrong headers, map them, score, page, download, delete', async (t) => {
    const rows = simulate({ seed: 21, customers: 120, merchants: 20, days: 6, rings: 0 });
    const csv = toCsv(rows).replace(/^transaction_id,timestamp,amount,customer_id,merchant_id/, 'transaction_id,timestamp,value,payer,payee');
    const page = await open('/#/datasets');
    await page.setInputFiles('#dataset-file', { name: 'transactions.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForSelector('#mapping');
    t.ok(await page.getByText('Amount is required: choose the column that holds it.').count(), 'the missing columns are named');
    await page.screenshot({ path: `${SHOTS}datasets-mapping.png`, fullPage: true });
    await page.selectOption('#map-amount', 'value');
    await page.selectOption('#map-customer_id', 'payer');
    await page.selectOption('#map-merchant_id', 'payee');
    await page.getByRole('button', { name: 'Apply mapping' }).click();
    await page.waitForSelector('#dataset');
    t.match(await page.locator('#dataset').textContent(), new RegExp(`${rows.length} rows · labelled · valid`), 'valid after mapping');
    await page.waitForSelector('#dataset ~ .card table tbody tr');
    await page.getByRole('button', { name: 'Score this dataset' }).click();
    await page.waitForSelector('#results #page-of', { timeout: 180_000 });
    t.equal(await page.locator('#job-progress').getAttribute('value'), '1', 'the progress bar reached the end');
    t.match(await page.locator('#job-stage').textContent(), /^succeeded/);
    const pages = Math.ceil(rows.length / 25);
    t.equal(await page.locator('#page-of').textContent(), `Page 1 of ${pages} (${rows.length.toLocaleString('en')} rows)`);
    t.ok(await page.locator('#file-metrics').count(), 'metrics on the labelled file');
    await page.screenshot({ path: `${SHOTS}datasets-results.png`, fullPage: true });
    await page.click('#next-page');
    await page.waitForFunction(() => document.querySelector('#page-of')?.textContent?.startsWith('Page 2 of'));
    t.pass('the next page of results');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    const lines = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    t.equal(lines.length, rows.length + 1, 'the download has a header and every row, nothing else');
    t.match(lines[0], /^row,transaction_id,amount/);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForSelector('#deleted');
    t.pass('deleted');
    await page.close();
  });

  t.test('models and, without sign-in configured, the account page says so', async (t) => {
    const page = await open('/#/models', 1366);
    await page.waitForSelector('.model[data-kind="built_in"]');
    t.equal(await page.locator('.model').count(), 1, 'a guest sees the built-in model');
    t.equal(await page.locator('h1').count(), 1, 'one h1');
    t.equal(await page.locator('h1').textContent(), 'Models', 'the h1 is the page title');
    const model = page.locator('.model[data-kind="built_in"]');
    const sections = model.locator('section.model-table');
    t.equal(await sections.count(), 2, 'two separate tables');
    t.same(await sections.locator('h3').allTextContents(), ['Stack weights', 'Thresholds per mode'], 'each titled');
    for (let i = 0; i < 2; i++) {
      const s = sections.nth(i);
      t.equal(await s.locator('table').count(), 1, 'one table in each');
      t.equal(await s.getAttribute('aria-labelledby'), await s.locator('h3').getAttribute('id'), 'named by its title');
    }
    t.same(
      await sections.nth(0).locator('tbody td[data-label="Channel"]').allTextContents(),
      ['tabular', 'behavioral', 'velocity', 'graph'],
      'a weight per channel',
    );
    t.same(
      await sections.nth(1).locator('tbody td[data-label="Mode"]').allTextContents(),
      ['balanced', 'high precision', 'high recall'],
      'thresholds per mode',
    );
    await page.screenshot({ path: `${SHOTS}models.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}models-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem at 390 px (axe-core)');
    await page.goto(`${base}/#/account`);
    await page.waitForSelector('#auth-off');
    t.match(await page.locator('#auth-off').textContent(), /not configured/);
    await page.close();
  });

  t.test('sign in through a test identity provider, create an organization and a key, revoke it', async (t) => {
    const server = await signInServer();
    const base2 = server.base;
    t.teardown(() => server.close());
    const page = await watchedPage(browser, problems, 1280);
    await page.goto(`${base2}/#/account`);
    const signInHref = await page.locator('#sign-in').getAttribute('href');
    t.equal(
      signInHref,
      `${server.idp.url}/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent(`${base2}/login`)}`,
      'sign-in goes to the hosted project, returning to /login',
    );
    const token = await server.signIn(page, { sub: 'user-web', email: 'web@example.com', name: 'Web Tester' });
    await page.waitForSelector('#who');
    t.match(await page.locator('#who').textContent(), /Web Tester/, 'signed in');
    t.notOk(page.url().includes('access_token'), 'the token is wiped from the address');
    t.notOk(
      await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie).then((x) => x.includes(token)),
      'and not stored by the page',
    );
    await page.fill('#org-name', 'Acme Payments');
    await page.click('#create-org button[type=submit]');
    await page.waitForSelector('#org-detail h3');
    t.equal(await page.locator('#org-detail h3').first().textContent(), 'Acme Payments', 'organization created');
    await page.fill('#key-name', 'checkout');
    await page.click('#create-key button[type=submit]');
    await page.waitForSelector('#new-secret code');
    const secret = (await page.locator('#new-secret code').textContent())!;
    t.match(secret, /^sk_test_/, 'the secret is shown once');
    const score = (sk: string) =>
      fetch(`${base2}/api/v1/risk/score`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 10, customer_id: 'C000001', merchant_id: 'M00001' }),
      });
    t.equal((await score(secret)).status, 200, 'the key scores');
    await page.screenshot({ path: `${SHOTS}account.png`, fullPage: true });
    t.equal(await page.locator('h1').count(), 1, 'one h1');
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    t.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 0, 'no sideways scrolling at 390 px');
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem at 390 px (axe-core)');
    await page.screenshot({ path: `${SHOTS}account-phone.png`, fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.click('button[data-action="revoke"]');
    await page.waitForFunction(() => document.querySelector('#keys tbody tr td:nth-child(3)')?.textContent?.startsWith('revoked'));
    t.equal(await page.locator('#new-secret').count(), 0, 'the secret is not shown again');
    t.equal((await score(secret)).status, 401, 'the revoked key gets 401');
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    t.pass('signed out');
    await page.close();
  });

  t.same(problems, [], 'no console errors or CSP violations');
});
