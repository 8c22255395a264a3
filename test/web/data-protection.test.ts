// The Data protection page in headless Chromium, against the real server, a stand-in identity
// provider and payments scored with the organization's API key. An owner sees the page's link and
// the page; changes the retention period, a value outside 30–3,650 days refused with the service's
// reason (nothing changed); downloads a customer's export, a JSON file named by its time (not by the
// customer) holding the customer's transactions and list entry; erases that customer from the page,
// keeping no list: a confirmation says what goes before anything is asked (Cancel asks nothing),
// then the erasure is listed and followed to done with its counts, by the customer's keyed hash
// only (the page holds the id nowhere), and the API has none of the customer's transactions left
// while another customer's stay. An analyst of the organization sees no link, the retention period
// and no control, and the service refuses them the owners' routes. Another organization's owner
// sees only their own erasures and audit, even when the address names the first organization, and
// the first owner never sees theirs. At a phone's width nothing scrolls sideways; axe-core finds no
// serious or critical problem; no console error. Screenshots go to artifacts/screenshots/.

import { readFileSync } from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { customerHash } from '../../src/app/data-protection/requests.ts';
import { accessibilityProblems, casework, memberApi, noBrowser, SHOTS, watchedPage } from '../support/browser.ts';

const GONE = 'cust-gone-42';
const STAYS = 'cust-stays-7';
/** A time as the dashboard shows it. */
const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

t.test('Data protection from the dashboard', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member, org, analyst, score, refused } = await casework(t);
  const link = (p: Page) => p.locator('nav a[data-page="data-protection"]');
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  const open = async (p: Page, selector: string, orgId = org.id) => {
    await p.goto(`${server.base}/#/data-protection?org=${orgId}`);
    await p.reload();
    await p.waitForSelector(selector);
  };
  /** Waits until an entry of the audit says who did what (`what` its beginning; the page reads it
   *  again after an action). Any entry, not the newest: the service's own retention sweep may be
   *  audited after it. */
  const audited = async (who: string, what: string, p: Page = page) => {
    await p
      .waitForFunction(
        ([who, what]) =>
          [...document.querySelectorAll('#audit-list tbody tr')].some((tr) => {
            const cells = tr.querySelectorAll('td');
            return cells[1]?.textContent === who && (cells[2]?.textContent ?? '').startsWith(what);
          }),
        [who, what],
      )
      .catch(async (e: Error) => {
        // Said with what the audit does show, so that a failure tells which entry was missing.
        const shown = await rows('#audit-list', p).catch(() => 'the audit could not be read');
        throw new Error(`no audit entry by ${who} starting "${what}" (${e.message.split('\n')[0]}); the audit shows ${JSON.stringify(shown)}`);
      });
    return true;
  };
  /** The rows of a table on the page, as their cells read. */
  const rows = (selector: string, p: Page = page) =>
    p.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));

  await t.test('an owner sees the link and the page, and changes the retention period within its bounds', async (t) => {
    await page.goto(`${server.base}/#/score`);
    await page.reload();
    await link(page).waitFor({ state: 'visible' });
    t.pass("an owner's navigation shows Data protection");
    await link(page).click();
    await page.waitForSelector('#retention-form');
    t.equal(await text('nav a[aria-current="page"]'), 'Data protection', 'the link leads to the page');
    t.match(await text('#retention-period'), /^Recorded transactions are kept 400 days \(the default\)/);
    t.match(await text('#retention-sweep'), /^(No sweep has run for the organization yet|Last sweep: .+ UTC, deleting what was older than .+ UTC: .+)\.$/);
    t.ok(await page.isVisible('#no-erasures'), 'no erasure yet');

    for (const [days, reason] of [
      ['10', 'days is at least 30'],
      ['3651', 'days is at most 3650'],
    ] as const) {
      await page.fill('#retention-days', days);
      const others = await refused(page, 422, async () => {
        await page.click('#retention-save');
        await page.waitForSelector('#retention-status .error');
      });
      t.same(others, [], 'only the refusal was logged');
      t.match(await text('#retention-status .error li'), `days: ${reason}`, `${days} days: refused with the reason`);
      t.equal(await page.getAttribute('#retention-days', 'aria-invalid'), 'true', 'the field is marked');
      t.equal(await page.evaluate(() => document.activeElement?.id), 'retention-status', 'focus goes to the refusal');
      t.equal((await member(`/api/organizations/${org.id}/retention`)).days, 400, 'nothing changed');
    }

    await page.fill('#retention-days', '120');
    await page.click('#retention-save');
    await page.waitForFunction(() =>
      /^Recorded transactions are kept 120 days from now on/.test(document.querySelector('#retention-status')?.textContent ?? ''),
    );
    t.equal(await page.getAttribute('#retention-days', 'aria-invalid'), null, 'no longer marked');
    t.match(await text('#retention-period'), /^Recorded transactions are kept 120 days; the default is 400\./);
    t.equal((await member(`/api/organizations/${org.id}/retention`)).days, 120, 'the service keeps it');
    t.ok(await audited('Olive Owner', 'Changed the retention period from 400 to 120 days'), 'audited, with who');
  });

  const scored = ['dp-1', 'dp-2', 'dp-3'];
  for (const id of scored) await score(id, GONE);
  await score('dp-4', STAYS);
  await member(`/api/organizations/${org.id}/lists`, 'POST', { name: 'blocked_customers', kind: 'customer_id' });
  await member(`/api/organizations/${org.id}/lists/blocked_customers/items`, 'POST', { values: [GONE, STAYS], reason: 'chargebacks' });
  const hash = customerHash(server.s.config.SESSION_SECRET!, org.id, GONE);

  await t.test("an owner downloads a customer's export, named by its time", async (t) => {
    await open(page, '#export');
    await page.fill('#export-customer', GONE);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-submit')]);
    t.match(download.suggestedFilename(), /^customer-export-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/, 'named by the time');
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    t.equal(exported.customer_id, GONE);
    t.same(exported.transactions.map((x: { transaction_id: string }) => x.transaction_id).sort(), scored, "the customer's transactions, no other's");
    t.same(
      exported.lists.map((l: { list: string; value: string }) => [l.list, l.value]),
      [['blocked_customers', GONE]],
      'and its list entry',
    );
    t.match(await text('#export-status'), /^Downloaded customer-export-.*\.json: 3 transactions, 1 list entry, 0 cases, 0 webhook events\.$/);
    t.ok(await audited('Olive Owner', `Exported the records of customer ${hash.slice(0, 12)}…: 3 transactions, 1 list entry`), 'audited by the keyed hash');
  });

  let erasureId = '';
  await t.test('an owner erases the customer from the page, keeping no list, after a confirmation', async (t) => {
    await open(page, '#erase');
    t.ok(await page.isVisible('#erase-keep-blocked_customers'), 'the list of customer ids is offered to keep');
    await page.fill('#erase-customer', GONE);
    await page.click('#erase-review');
    await page.waitForSelector('#erase-confirm');
    t.equal(await text('#erase-confirm-title'), `Erase customer “${GONE}” from Casework? This cannot be undone.`, 'the confirmation names it');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'erase-confirm-title', 'and takes the focus');
    const what = await page.locator('#erase-what li').allTextContents();
    t.match(what[0], /^its transactions/, 'it says what is deleted');
    t.equal(what.at(-1), 'its entries in every list: none is kept.');
    t.ok(await page.isDisabled('#erase-customer'), 'the request cannot change under the confirmation');
    await page.screenshot({ path: `${SHOTS}data-protection-confirm.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the confirmation: no serious or critical accessibility problem (axe-core)');
    t.same((await member(`/api/organizations/${org.id}/erasures`)).data, [], 'nothing asked before the confirmation');

    await page.click('#erase-cancel');
    t.equal(await page.locator('#erase-confirm').count(), 0, 'Cancel closes it');
    t.same((await member(`/api/organizations/${org.id}/erasures`)).data, [], 'and asks nothing');

    await page.click('#erase-review');
    await page.click('#erase-confirm');
    await page.waitForFunction(() => /^Erasure er_\S+ requested/.test(document.querySelector('#erase-status')?.textContent ?? ''));
    erasureId = /^Erasure (er_\S+) requested/.exec(await text('#erase-status'))![1]!;
    t.equal(await page.inputValue('#erase-customer'), '', 'the form is emptied');
    await page.waitForFunction((id) => document.getElementById(`erasure-${id}`)?.textContent === 'Done', erasureId, { timeout: 30_000 });
    const reads: string[] = [];
    const count = (r: { url(): string }) => void (r.url().includes('/erasures') && reads.push(r.url()));
    page.on('request', count);
    await page.waitForTimeout(2500);
    page.off('request', count);
    t.same(reads, [], 'with none pending, the page stops reading the erasures');
    const [row] = await rows('#erasure-list');
    t.equal(row?.[1], 'Olive Owner', 'who asked');
    t.match(row?.[3], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/, 'when it was done');
    t.match(row?.[4], /^3 transactions, 1 list entry, .*totals adjusted/, 'what it erased');
    t.equal(row?.[5], 'No list kept');
    t.equal(row?.[6], hash, 'the customer by its keyed hash');
    t.notOk((await page.content()).includes(GONE), "the page holds the customer's id nowhere");
    t.ok(await audited('the service', `Erased customer ${hash.slice(0, 12)}…: 3 transactions, 1 list entry`), 'audited');

    t.same((await member(`/api/organizations/${org.id}/transactions?customer_id=${GONE}`)).data, [], "the customer's transactions are gone");
    t.same(
      (await member(`/api/organizations/${org.id}/transactions?customer_id=${STAYS}`)).data.map((x: { transaction_id: string }) => x.transaction_id),
      ['dp-4'],
      "another customer's stay",
    );
    t.same(
      (await member(`/api/organizations/${org.id}/lists/blocked_customers`)).data.map((i: { value: string }) => i.value),
      [STAYS],
      'its list entry is gone, the other stays',
    );
    const [listed] = (await member(`/api/organizations/${org.id}/erasures`)).data;
    t.match(listed, { id: erasureId, status: 'done', customer_hash: hash });
    t.notOk(JSON.stringify(listed).includes(GONE), 'the API names it by the hash only');

    await page.setViewportSize({ width: 390, height: 844 });
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}data-protection-phone.png`, fullPage: true });
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.screenshot({ path: `${SHOTS}data-protection.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], "the owner's page: no serious or critical accessibility problem (axe-core)");
  });

  await t.test('an analyst sees no link, the retention period and no control; the service refuses them the rest', async (t) => {
    // The service sweeps a new organization within seconds (then daily): the page says when.
    let sweep: { at: string; cutoff: string } | null = null;
    for (let i = 0; i < 60 && !sweep; i++) {
      sweep = (await member(`/api/organizations/${org.id}/retention`)).last_sweep;
      if (!sweep) await new Promise((r) => setTimeout(r, 500));
    }
    await open(analyst, '#dp-owners-only');
    t.ok(await link(analyst).isHidden(), "an analyst's navigation has no Data protection");
    t.match(await text('#retention-period', analyst), /^Recorded transactions are kept 120 days/, 'every member reads the period');
    t.equal(
      await text('#retention-sweep', analyst),
      `Last sweep: ${utc(sweep!.at)}, deleting what was older than ${utc(sweep!.cutoff)}: nothing.`,
      'and the latest sweep',
    );
    t.match(await text('#dp-owners-only', analyst), /^Only owners of Casework change the retention period, export or erase/);
    for (const control of ['#retention-form', '#export', '#erase', '#erasure-area', '#audit-area', 'button'])
      t.equal(await analyst.locator(`main ${control}`).count(), 0, `no ${control}`);
    const ana = memberApi(analyst);
    const others = await refused(analyst, 403, async () => {
      for (const [path, method, body] of [
        ['retention', 'PUT', { days: 90 }],
        ['erasures', 'GET'],
        ['data-protection/audit', 'GET'],
        [`customers/${STAYS}/export`, 'GET'],
        [`customers/${STAYS}/erasure`, 'POST', {}],
      ] as const)
        t.equal((await ana(`/api/organizations/${org.id}/${path}`, method, body)).detail.reason, 'forbidden', `${method} ${path}: 403`);
    });
    t.same(others, [], 'only the refusals were logged');
    t.same(await accessibilityProblems(analyst), [], "the analyst's view: no serious or critical accessibility problem (axe-core)");
  });

  await t.test("another organization's owner sees only their own erasures and audit", async (t) => {
    const other = await watchedPage(page.context().browser()!, problems);
    await server.signIn(other, { sub: 'oscar', email: 'oscar@example.com', name: 'Oscar Other' });
    await other.waitForSelector('#who');
    const oscar = memberApi(other);
    const elsewhere = await oscar('/api/organizations', 'POST', { name: 'Elsewhere' });
    // The address names the first organization, which is not Oscar's: the page shows his own.
    await open(other, '#erase', org.id);
    t.ok(await link(other).isVisible(), 'an owner of another organization sees the link too');
    t.match(await text('#dp-intro', other), /^Elsewhere: /, 'his own organization');
    t.ok(await other.isVisible('#no-erasures'), 'none of the first organization’s erasures');
    // His organization's own first retention sweep may be audited already (the sweeper claims a new
    // organization within seconds): every row shown must be that, none the first organization's.
    const shown = await other.locator('#audit-list tbody tr').allTextContents();
    t.same(
      shown.filter((r) => !/Swept what was older than/.test(r)),
      [],
      `nor its audit (${shown.length} row(s) of his own sweep)`,
    );
    t.notOk((await other.content()).includes(hash.slice(0, 12)), "nor the erased customer's hash");

    await other.fill('#erase-customer', GONE);
    await other.click('#erase-review');
    await other.click('#erase-confirm');
    await other.waitForFunction(() => /^Erasure er_\S+ requested/.test(document.querySelector('#erase-status')?.textContent ?? ''));
    const theirs = /^Erasure (er_\S+) requested/.exec((await other.locator('#erase-status').textContent()) ?? '')![1]!;
    await other.waitForFunction((id) => document.getElementById(`erasure-${id}`)?.textContent === 'Done', theirs, { timeout: 30_000 });
    t.equal((await rows('#erasure-list', other)).length, 1, 'Oscar lists his one erasure');
    t.notOk((await other.content()).includes(erasureId), "and never the first organization's");
    t.not((await oscar(`/api/organizations/${elsewhere.id}/erasures`)).data[0].customer_hash, hash, 'the same id hashes apart per organization');

    const refusedToOscar = await refused(other, 404, async () => {
      for (const path of ['erasures', 'data-protection/audit'])
        t.equal((await oscar(`/api/organizations/${org.id}/${path}`)).detail.reason, 'not_found', `${path} of the first organization: 404`);
    });
    t.same(refusedToOscar, [], 'only the refusals were logged');

    await open(page, '#erasure-list');
    t.same(
      await page.locator('#erasure-list [id^="erasure-er_"]').evaluateAll((spans) => spans.map((s) => s.id)),
      [`erasure-${erasureId}`],
      'the first owner lists only their own erasure',
    );
    const audit = (await rows('#audit-list')).map((r) => r.join(' '));
    t.notOk(
      audit.some((line) => line.includes(theirs)),
      "and none of the other's audit",
    );
    await other.close();
  });

  t.same(problems, [], 'no console errors');
});
