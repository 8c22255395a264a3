// The dashboard end to end in headless Chromium (Debian's `chromium` driven by playwright-core; no
// downloaded browser) against the real server on a loopback port: score a transaction and see its
// reasons, channel bars, evidence and stages; open the evaluation and see its curves drawn. The page
// loads under its Content-Security-Policy with no console error. Screenshots of each page are saved
// in artifacts/screenshots/. Skipped outside CI when no Chromium is installed (CI installs it).

import t from 'tap';
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { start } from '../server/helpers.ts';

const SHOTS = new URL('../../artifacts/screenshots/', import.meta.url).pathname;
const executable = ['/usr/lib/chromium/chromium', '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!executable && process.env.CI === 'true') throw new Error('CI=true but no Chromium is installed: .ci/run installs Debian\'s chromium');

t.test('dashboard in a real browser', { skip: executable ? false : 'no Chromium installed (apt-get install chromium)' }, async (t) => {
  mkdirSync(SHOTS, { recursive: true });
  const s = await start({});
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  const address = s.app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser: Browser = await chromium.launch({ executablePath: executable!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
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
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${base}${path}`);
    return page;
  };

  t.test('score a transaction and see its reasons', async (t) => {
    const page = await open('/#/score');
    await page.fill('#score-amount', '980');
    await page.fill('#score-customer_id', 'C000042');
    await page.fill('#score-merchant_id', 'M00007');
    await page.selectOption('#score-mode', 'high_recall');
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
    t.ok(await page.getByRole('cell', { name: 'test' }).count() >= 0);
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

  t.same(problems, [], 'no console errors or CSP violations');
});
