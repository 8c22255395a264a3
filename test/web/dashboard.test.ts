// The dashboard end to end in headless Chromium (Debian's `chromium` driven by playwright-core; no
// downloaded browser) against the real server on a loopback port: score a transaction and see its
// reasons, channel bars, evidence and stages; upload a CSV with wrong headers, fix it with the
// column mapping, watch the job finish, page the results, download them, delete the upload; open
// the evaluation and see its curves drawn; with a test identity provider on loopback, sign in,
// create an organization and a key, revoke it, sign out. Pages load under their
// Content-Security-Policy with no console error. Screenshots of each page are saved in
// artifacts/screenshots/. Skipped outside CI when no Chromium is installed (CI installs it).

import t from 'tap';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { simulate, toCsv } from '../../src/training/simulate.ts';
import { start } from '../server/helpers.ts';
import { launch, listen, noBrowser, SHOTS, signInServer, watchedPage } from './browser.ts';

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
    const page = await open('/#/score');
    await page.fill('#score-amount', '980');
    await page.fill('#score-customer_id', 'C000042');
    await page.fill('#score-merchant_id', 'M00007');
    await page.selectOption('#score-mode', 'high_recall');
    t.match(await page.locator('#score-sandbox').textContent(), /What-if scoring.*public sandbox.*nothing is recorded/, 'the form says it is a what-if that records nothing');
    await page.getByRole('button', { name: 'Score' }).click();
    await page.waitForSelector('#reasons li');
    const reasons = await page.locator('#reasons li').allTextContents();
    t.ok(reasons.length >= 1 && reasons.length <= 5, `${reasons.length} reasons shown`);
    t.ok(reasons.every((r) => /(added|took) [\d.]+ (to|from) the log-odds of fraud/.test(r)), 'worded as contributions');
    t.match(await page.locator('#risk-score').textContent(), /^\d+\.\d\d %$/, 'the score as a percentage');
    t.match(await page.locator('#decision').textContent(), /^(approve|review|block)$/);
    t.equal(await page.locator('.bar[role="img"]').count(), 8, 'channel scores and attribution as bars');
    t.ok((await page.getByText('Entity history').count()) > 0 && (await page.getByText('Stages').count()) > 0, 'entity history and stages');
    t.ok(await page.getByText('Mode high_recall').count(), 'the chosen mode was used');
    await page.screenshot({ path: `${SHOTS}score.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: `${SHOTS}score-phone.png`, fullPage: true });
    await page.close();
  });

  t.test('open the evaluation and see the curves drawn', async (t) => {
    const page = await open('/#/evaluation');
    await page.waitForSelector('#charts svg');
    t.equal(await page.locator('#charts svg').count(), 4, 'ROC, precision-recall, reliability and histograms');
    const curves = await page.locator('#charts polyline.curve').evaluateAll((els) => els.map((e) => (e.getAttribute('points') ?? '').split(' ').length));
    t.ok(curves.length === 3 && curves.every((n) => n > 5), `three curves with points: ${curves.join(', ')}`);
    t.ok((await page.locator('#charts rect.bar-a').count()) > 5, 'histogram bars drawn');
    t.ok((await page.locator('#limitations li').count()) > 0, 'limitations listed');
    t.ok(await page.getByText('Metrics per split').count(), 'metrics per split');
    await page.screenshot({ path: `${SHOTS}evaluation.png`, fullPage: true });
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

  t.test('upload a CSV with wrong headers, map them, score, page, download, delete', async (t) => {
    const rows = simulate({ seed: 21, customers: 120, merchants: 20, days: 6, rings: 0 });
    const csv = toCsv(rows).replace(/^transaction_id,timestamp,amount,customer_id,merchant_id/, 'transaction_id,timestamp,value,payer,payee');
    const page = await open('/#/datasets');
    await page.setInputFiles('#dataset-file', { name: 'transactions.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForSelector('#mapping');
    t.ok(await page.getByText('Missing required column amount.').count(), 'the missing columns are named');
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
    const lines = readFileSync((await download.path())!, 'utf8').trim().split('\r\n');
    t.equal(lines.length, rows.length + 1, 'the download has a header and every row');
    t.match(lines[0], /^row,transaction_id,amount/);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.waitForSelector('#deleted');
    t.pass('deleted');
    await page.close();
  });

  t.test('models and, without sign-in configured, the account page says so', async (t) => {
    const page = await open('/#/models');
    await page.waitForSelector('.model[data-kind="built_in"]');
    t.equal(await page.locator('.model').count(), 1, 'a guest sees the built-in model');
    await page.screenshot({ path: `${SHOTS}models.png`, fullPage: true });
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
    t.equal(signInHref, `${server.idp.url}/auth/v1/authorize?provider=google&redirect_to=${encodeURIComponent(`${base2}/login`)}`, 'sign-in goes to the hosted project, returning to /login');
    const token = await server.signIn(page, { sub: 'user-web', email: 'web@example.com', name: 'Web Tester' });
    await page.waitForSelector('#who');
    t.match(await page.locator('#who').textContent(), /Web Tester/, 'signed in');
    t.notOk(page.url().includes('access_token'), 'the token is wiped from the address');
    t.notOk(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie).then((x) => x.includes(token)), 'and not stored by the page');
    await page.fill('#org-name', 'Acme Payments');
    await page.click('#create-org button[type=submit]');
    await page.waitForSelector('#org-detail h3');
    t.equal(await page.locator('#org-detail h3').first().textContent(), 'Acme Payments', 'organization created');
    await page.fill('#key-name', 'checkout');
    await page.click('#create-key button[type=submit]');
    await page.waitForSelector('#new-secret code');
    const secret = (await page.locator('#new-secret code').textContent())!;
    t.match(secret, /^sk_test_/, 'the secret is shown once');
    const score = (sk: string) => fetch(`${base2}/api/v1/risk/score`, { method: 'POST', headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' }, body: JSON.stringify({ amount: 10, customer_id: 'C000001', merchant_id: 'M00001' }) });
    t.equal((await score(secret)).status, 200, 'the key scores');
    await page.screenshot({ path: `${SHOTS}account.png`, fullPage: true });
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
