// The Webhooks page in headless Chromium, against the real server (loopback URLs allowed) and a
// webhook receiver on loopback. From the dashboard alone an owner adds an endpoint and sees its
// signing secret once (copied, and gone after navigating away and back; the receiver verifies a
// delivery with it), sends a test event that arrives and shows "succeeded" in the log; a receiver
// that answers 500 once shows that attempt, its status and its answer (`<b>x</b>`, as literal
// text) in the opened delivery; a delivery is redelivered with the same webhook-id; the endpoint
// is disabled (a test event waits as pending) and enabled (it goes out), shown with the service's
// reason when the service disabled it, edited, its secret rotated (a new one shown once, both
// signing) and deleted; at a phone's width nothing scrolls sideways. A member who is not an owner
// sees the endpoints and sends a test event, with no control to add, change, rotate or delete.
// axe-core finds no serious or critical problem. Screenshots go to artifacts/screenshots/.

import t from 'tap';
import { Webhook } from 'standardwebhooks';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';
import { Receiver, type Received } from '../support/receiver.ts';

t.test('Webhooks from the dashboard', { skip: noBrowser }, async (t) => {
  const receiver = await new Receiver().start();
  t.teardown(() => receiver.close());
  const { server, page, problems, member } = await signedInMember(
    t,
    { sub: 'hook-owner', email: 'hooks@example.com', name: 'Hook Owner' },
    { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
  );
  const org = await member('/api/organizations', 'POST', { name: 'Hookworth' });
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.base });
  const open = async (p: Page, selector: string) => {
    await p.goto(`${server.base}/#/webhooks?org=${org.id}`);
    await p.waitForSelector(selector);
  };
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  const endpoints = async () => (await member(`/api/organizations/${org.id}/webhooks`)).data as Record<string, any>[];
  const verify = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, {
      'webhook-id': String(r.headers['webhook-id']),
      'webhook-timestamp': String(r.headers['webhook-timestamp']),
      'webhook-signature': String(r.headers['webhook-signature']),
    });
  /** The log's row of a delivery, as its cells read. */
  const row = (id: string, p: Page = page) => p.locator(`tr[data-delivery="${id}"] td`).allTextContents();
  /** The id of the newest delivery in the endpoint's log (undefined while it is empty). */
  const top = (endpoint: string, p: Page = page) =>
    p.evaluate((endpoint) => document.querySelector(`#deliveries-${endpoint} tbody tr[data-delivery]`)?.getAttribute('data-delivery') ?? undefined, endpoint);
  /** Waits until the log's newest row is a delivery other than `before` with this status and number of attempts; its id. */
  const newest = async (endpoint: string, before: string | undefined, status: string, attempts: number, p: Page = page) => {
    await p.waitForFunction(
      ({ endpoint, before, status, attempts }) => {
        const line = document.querySelector(`#deliveries-${endpoint} tbody tr[data-delivery]`);
        const cells = line?.querySelectorAll('td');
        return line?.getAttribute('data-delivery') !== before && cells?.[2]?.textContent === status && cells?.[3]?.textContent === String(attempts);
      },
      { endpoint, before, status, attempts },
      { timeout: 20_000 },
    );
    return (await top(endpoint, p))!;
  };

  /** Waits for the receiver's `n`th request; when it does not come, the failure says what the
   *  service's log of the endpoint holds (each delivery's status, attempts, last result, next try). */
  const arrived = (n: number, timeoutMs = 20_000) =>
    receiver.waitFor(n, timeoutMs).catch(async (e: Error) => {
      const log = (await member(`/api/organizations/${org.id}/webhooks/${id}/deliveries`)).data as Record<string, unknown>[];
      throw new Error(`${e.message}; the endpoint's deliveries: ${JSON.stringify(log)}`);
    });

  let secret = '';
  let id = '';
  await t.test('an owner adds an endpoint and sees its secret once', async (t) => {
    await open(page, '#webhook-create');
    t.equal(await page.locator('nav a[aria-current="page"]').textContent(), 'Webhooks', 'Webhooks is in the navigation');
    t.ok(await page.isVisible('#no-webhooks'));
    await page.fill('#webhook-url', `${receiver.url}/hooks`);
    await page.check('#webhook-event-decision-block');
    await page.check('#webhook-event-rule-changed');
    await page.fill('#webhook-description', 'Risk desk <i>team</i>');
    await page.click('#webhook-create-submit');
    await page.waitForSelector('#webhook-secret');
    secret = await text('#webhook-secret-value');
    t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the secret, in a box of its own');
    t.match(await text('#webhook-secret'), /it will not be shown again/);
    t.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-secret', 'focus goes to it');
    await page.click('#webhook-secret-copy');
    await page.waitForFunction(() => document.querySelector('#webhook-secret-copied')?.textContent === 'Copied.');
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the copy button copies it');

    const [stored] = await endpoints();
    id = stored!.id;
    t.match(
      stored,
      { url: `${receiver.url}/hooks`, events: ['decision.block', 'rule.changed'], description: 'Risk desk <i>team</i>', status: 'enabled' },
      'the API reads what the page made',
    );
    t.match(await text(`#webhook-${id}`), /Risk desk <i>team<\/i>/, 'the description as text');
    t.equal(await page.locator(`#webhook-${id} i`).count(), 0, 'not as markup');
    t.match(await text(`#webhook-state-${id}`), /^Enabled/);
    t.same(await page.locator(`#webhook-${id} .webhook-event-names code`).allTextContents(), ['decision.block', 'rule.changed']);
    await page.screenshot({ path: `${SHOTS}webhook-secret.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the new secret: no serious or critical accessibility problem (axe-core)');

    // Away and back, within the dashboard: the secret is nowhere.
    await page.click('nav a[data-page="rules"]');
    await page.waitForSelector('#no-rules');
    await page.click('nav a[data-page="webhooks"]');
    await page.waitForSelector(`#webhook-${id}`);
    t.equal(await page.locator('#webhook-secret').count(), 0, 'not shown again');
    t.notOk((await page.content()).includes(secret.slice(6)), 'no part of the page holds it');
    t.notOk(
      await page.evaluate((s) => JSON.stringify({ ...sessionStorage, ...localStorage }).includes(s) || location.href.includes(s), secret.slice(6)),
      'nor the address or storage',
    );
  });

  let tested = '';
  await t.test('a test event arrives, signed with that secret, and the log shows it succeeded', async (t) => {
    const before = receiver.received.length;
    await page.click(`#webhook-test-${id}`);
    await arrived(before + 1);
    const got = receiver.received[before]!;
    const event = verify(secret, got) as Record<string, any>;
    t.match(event, { type: 'webhook.test', organization_id: org.id, data: { message: /Hookworth/ } }, 'the secret shown verifies it');
    tested = await newest(id, undefined, 'succeeded', 1);
    const cells = await row(tested);
    t.same(cells.slice(0, 6), ['webhook.test', event.id, 'succeeded', '1', 'HTTP 200', '—'], 'its type, id, status, attempts, last result; no next attempt');
    t.match(cells[6], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/, 'delivered at');
  });

  await t.test('a 500 answered once: the failed attempt and its answer, as text, in the opened delivery', async (t) => {
    const before = receiver.received.length;
    receiver.answers = [{ status: 500, body: '<b>x</b>' }];
    await page.click(`#webhook-test-${id}`);
    await arrived(before + 2);
    const retried = await newest(id, tested, 'succeeded', 2);
    await page.click(`#details-${retried}`);
    t.equal(await page.getAttribute(`#details-${retried}`, 'aria-expanded'), 'true');
    const panel = `#delivery-${retried}`;
    await page.waitForSelector(`${panel} table`);
    const attempts = await page.locator(`${panel} tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => c.textContent)));
    t.same(
      attempts.map((a) => [a[0], a[3], a[4], a[5]]),
      [
        ['1', '500', 'http_status', '<b>x</b>'],
        ['2', '200', '—', 'ok'],
      ],
      'both attempts, the first failed with its status',
    );
    t.equal(await page.locator(`${panel} b`).count(), 0, "the receiver's answer is never markup");
    t.match(JSON.parse(await text(`${panel} .webhook-payload`)), { message: /test event/ }, 'the payload, as JSON text');
    await page.screenshot({ path: `${SHOTS}webhook-delivery.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'an opened delivery: no serious or critical accessibility problem (axe-core)');
    await page.click(`#details-${retried}`);
    t.ok(await page.isHidden(panel), 'it closes again');

    // Redeliver the first test event: the same webhook-id, a new delivery on top of the log.
    const n = receiver.received.length;
    const first = (await row(tested))[1]!;
    await page.click(`#redeliver-${tested}`);
    await arrived(n + 1);
    t.equal(receiver.received[n]!.headers['webhook-id'], first, 'the same webhook-id');
    const again = await newest(id, retried, 'succeeded', 1);
    t.equal((await row(again))[1], first);
  });

  await t.test('disabled, a test event waits; enabled, it goes out', async (t) => {
    await page.click(`#webhook-toggle-${id}`);
    await page.waitForFunction((id) => document.getElementById(`webhook-toggle-${id}`)?.textContent === 'Enable', id);
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Enable', 'focus stays on the button');
    t.match(await text(`#webhook-state-${id}`), /^Disabled by an owner since/);
    t.match((await endpoints())[0], { status: 'disabled', disabled_reason: 'disabled_by_user' });
    const before = receiver.received.length;
    const last = await top(id);
    await page.click(`#webhook-test-${id}`);
    const waiting = await newest(id, last, 'pending', 0);
    t.equal((await row(waiting))[5], 'when the endpoint is enabled');
    t.equal(receiver.received.length, before, 'nothing sent while disabled');
    await page.click(`#webhook-toggle-${id}`);
    await arrived(before + 1);
    await page.waitForFunction(() => /^Enabled .*pending deliveries go out/.test(document.querySelector('#webhook-status')?.textContent ?? ''));
    t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Disable', 'focus stays on the button');
    await page.waitForFunction((d) => document.querySelector(`tr[data-delivery="${d}"] td:nth-child(3)`)?.textContent === 'succeeded', waiting, {
      timeout: 20_000,
    });
    t.pass('the waiting delivery went out, and the log follows it');

    // Disabled by the service, as the deliverer does after three days of failures: the reason
    // and its message (as text) on the page.
    await server.s.service.db.query(
      `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'delivery_failing', disabled_message = $2, disabled_at = now() WHERE id = $1`,
      [id, 'Deliveries failed for 3 days; the last: HTTP 503 <em>down</em>'],
    );
    await page.reload();
    await page.waitForSelector(`#webhook-state-${id}`);
    t.match(
      await text(`#webhook-state-${id}`),
      /^Disabled by the service: deliveries failed for three days since .*UTC.*Deliveries failed for 3 days; the last: HTTP 503 <em>down<\/em>$/,
      'the reason and its message',
    );
    t.equal(await page.locator(`#webhook-state-${id} em`).count(), 0, 'the message as text');
    await page.click(`#webhook-toggle-${id}`);
    await page.waitForFunction(() => /^Enabled /.test(document.querySelector('#webhook-status')?.textContent ?? ''));
    t.match((await endpoints())[0], { status: 'enabled', disabled_reason: null, disabled_message: null });
  });

  await t.test('edit, then a member sees the endpoints but no control to change them', async (t) => {
    await page.click(`#webhook-edit-${id}`);
    t.equal(await page.evaluate(() => document.activeElement?.id), `webhook-edit-${id}-url`);
    await page.uncheck(`#webhook-edit-${id}-event-rule-changed`);
    await page.check(`#webhook-edit-${id}-event-outcome-recorded`);
    await page.fill(`#webhook-edit-${id}-description`, 'Risk desk');
    await page.click(`#webhook-edit-${id}-save`);
    await page.waitForFunction(() => /^Saved /.test(document.querySelector('#webhook-status')?.textContent ?? ''));
    t.match((await endpoints())[0], { events: ['decision.block', 'outcome.recorded'], description: 'Risk desk' });
    t.same(await page.locator(`#webhook-${id} .webhook-event-names code`).allTextContents(), ['decision.block', 'outcome.recorded']);

    const memberPage = await watchedPage(page.context().browser()!, problems);
    await server.signIn(memberPage, { sub: 'hook-member', email: 'member@example.com', name: 'Mem Ber' });
    await memberPage.waitForSelector('#who');
    const me = await memberApi(memberPage)('/api/auth/me');
    await server.s.service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [org.id, me.user.id]);
    await open(memberPage, `#webhook-${id}`);
    t.equal(await text(`#webhook-${id} h2`, memberPage), `${receiver.url}/hooks`, 'the member sees the endpoint');
    t.ok(await memberPage.isVisible('#webhook-member-note'));
    for (const control of ['#webhook-create', `#webhook-toggle-${id}`, `#webhook-edit-${id}`, `#webhook-rotate-${id}`, `#webhook-delete-${id}`])
      t.equal(await memberPage.locator(control).count(), 0, `no ${control}`);
    t.ok((await memberPage.locator(`#deliveries-${id} tbody tr[data-delivery]`).count()) >= 4, 'and its deliveries');
    const before = receiver.received.length;
    const last = await top(id, memberPage);
    await memberPage.click(`#webhook-test-${id}`);
    await arrived(before + 1);
    await newest(id, last, 'succeeded', 1, memberPage);
    t.pass('a member sends a test event');
    t.same(await accessibilityProblems(memberPage), [], "a member's view: no serious or critical accessibility problem (axe-core)");
    await memberPage.close();
  });

  await t.test('rotate (a new secret once, both sign for a day), then delete', async (t) => {
    await open(page, `#webhook-${id}`);
    await page.click(`#webhook-rotate-${id}`);
    await page.waitForSelector('#webhook-secret');
    const fresh = await text('#webhook-secret-value');
    t.match(fresh, /^whsec_/);
    t.not(fresh, secret, 'a new secret');
    t.equal(await text('#webhook-secret h3'), 'New signing secret');
    t.match(await text('#webhook-secret'), /previous secret also signs until/);
    t.match(await text(`#webhook-secret-state-${id}`), /^Rotated .*; the previous secret also signs until/);
    const before = receiver.received.length;
    await page.click(`#webhook-test-${id}`);
    await arrived(before + 1);
    t.ok(verify(fresh, receiver.received[before]!), 'the new secret verifies');
    t.ok(verify(secret, receiver.received[before]!), 'and the old one, for now');
    await page.click('#webhook-secret-done');
    t.equal(await page.locator('#webhook-secret').count(), 0, 'put away');
    await page.reload();
    await page.waitForSelector(`#webhook-${id}`);
    t.notOk((await page.content()).includes(fresh.slice(6)), 'and not shown again');

    // At a phone's width, with a delivery opened: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    const shown = (await top(id))!;
    await page.click(`#details-${shown}`);
    await page.waitForSelector(`#delivery-${shown} table`);
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}webhooks-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the page at 390 px: no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 1366, height: 900 });

    await page.click(`#webhook-delete-${id}`);
    await page.waitForSelector('#no-webhooks');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'webhook-list-title');
    t.same(await endpoints(), [], 'deleted');
  });

  t.same(problems, [], 'no console errors');
});
