// The dashboard's own sign-in through `npm run dev:idp` in headless Chromium: the Account page's
// "Sign in" link opens the local identity provider's e-mail form, which sends the browser back to
// /login with a token the server verifies as any provider's (its key set, its issuer); the page then
// shows who is signed in, an organization and a key are made, and the key scores over HTTP.

import t from 'tap';
import { launch, listen, noBrowser, watchedPage } from '../support/browser.ts';
import { start } from '../support/server.ts';
import { spawnDevIdp, withKey } from '../support/processes.ts';
import { tempDir } from '../support/temp.ts';

t.test('sign in from the dashboard with dev:idp', { skip: noBrowser }, async (t) => {
  const idp = await spawnDevIdp(tempDir('web-idp-'));
  const s = await start({ overrides: { AUTHPROVIDER_URL: idp.url, authConfigured: true } });
  const base = await listen(s);
  const browser = await launch();
  t.teardown(async () => {
    await browser.close();
    await s.close();
    await idp.stop();
  });
  const problems: string[] = [];
  const page = await watchedPage(browser, problems);
  await page.goto(`${base}/#/account`);
  await page.click('#sign-in');
  await page.waitForURL(new RegExp(`^${idp.url}/auth/v1/authorize`));
  t.equal(await page.locator('h1').textContent(), 'Sign in', "the provider's sign-in page");
  await page.fill('#email', 'ana@example.com');
  await page.click('button[type=submit]');
  await page.waitForSelector('#who');
  t.match(await page.locator('#who').textContent(), /ana@example\.com/, 'signed in as the e-mail typed');
  t.notMatch(page.url(), /access_token/, 'the token is wiped from the address');

  await page.fill('#org-name', 'Browser shop');
  await page.click('#create-org button[type=submit]');
  await page.waitForSelector('#key-name');
  await page.fill('#key-name', 'first key');
  await page.click('#create-key button[type=submit]');
  const secret = (await page.locator('#new-secret code').textContent()) ?? '';
  t.match(secret, /^sk_test_/, 'a key, shown once');
  const scored = await withKey(base, secret, '/api/v1/risk/score', { transaction_id: 'browser-1', amount: 12, customer_id: 'c-1', merchant_id: 'm-1' });
  t.equal(scored.status, 200, 'which scores');
  t.same(problems, [], 'no console errors');
});
