// The Account page's members section in headless Chromium, against the real server and a stand-in
// identity provider. From the dashboard alone an owner invites by e-mail with a role (the invitation
// listed; the same e-mail again shows the service's 409 with its fix), withdraws an invitation, and
// the invitee who signs in with that e-mail sees the organization as an analyst: the members and
// invitations without any control to invite, change a role, remove or withdraw. The owner then makes
// the analyst an owner and an analyst again, is refused demoting themselves as the last owner (the
// service's message and fix in the section's status line), and removes the analyst; the latest
// changes are listed. At a phone's width nothing scrolls sideways; axe-core finds no serious or
// critical problem in the owner's and the analyst's view; no console error. Screenshots go to
// artifacts/screenshots/.

import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';

t.test('Members from the Account page', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(t, { sub: 'team-owner', email: 'olive@example.com', name: 'Olive Owner' });
  const org = await member('/api/organizations', 'POST', { name: 'Teamworth' });
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  /** The Account page drawn afresh (it may be the page shown already, drawn before a change). */
  const open = async (p: Page) => {
    await p.goto(`${server.base}/#/account`);
    await p.reload();
    await p.waitForSelector('#members #member-list');
  };
  /** Waits until the section's status line says what matches `re`. */
  const says = (re: RegExp, p: Page = page) =>
    p.waitForFunction((source) => new RegExp(source).test(document.querySelector('#members-status')?.textContent ?? ''), re.source);
  /** Runs `act`, which makes the service refuse with `status` once: the browser logs that refusal,
   *  and nothing else may be logged. */
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
  const rows = (p: Page, table: string) =>
    p.locator(`#${table} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));

  await t.test('an owner invites by e-mail with a role, and withdraws an invitation', async (t) => {
    await open(page);
    t.same(
      (await rows(page, 'member-list')).map((r) => r.slice(0, 2)),
      [['Olive Owner (you)', 'olive@example.com']],
      'the owner, as the provider gave them',
    );
    t.ok(await page.isVisible('#no-invitations'));
    await page.fill('#invite-email', 'Ana.Lyst@Example.com');
    await page.selectOption('#invite-role', 'analyst');
    await page.click('#invite-submit');
    await says(/^Invited ana\.lyst@example\.com as analyst/);
    t.same(
      (await rows(page, 'invitation-list')).map((r) => r.slice(0, 2)),
      [['ana.lyst@example.com', 'analyst']],
      'listed as waiting',
    );
    t.equal(await page.evaluate(() => document.activeElement?.id), 'members-status', 'focus goes to what happened');

    await page.fill('#invite-email', 'ANA.LYST@example.com');
    await refused(409, async () => {
      await page.click('#invite-submit');
      await page.waitForSelector('#members-status .error');
    });
    t.match(await text('#members-status .error strong'), /is invited already, as analyst/, "the service's message");
    t.match(await text('#members-status .error p'), /withdraw the invitation/, 'and its fix');
    t.equal(await text('#members-status .error code'), 'conflict');

    await page.fill('#invite-email', 'dee@example.com');
    await page.selectOption('#invite-role', 'owner');
    await page.click('#invite-submit');
    await says(/^Invited dee@example\.com as owner/);
    t.equal((await rows(page, 'invitation-list')).length, 2);
    await page.click('tr[data-invitation="dee@example.com"] button');
    await says(/^The invitation of dee@example\.com was withdrawn\.$/);
    t.same(
      (await member(`/api/organizations/${org.id}/members`)).invitations.map((i: { email: string }) => i.email),
      ['ana.lyst@example.com'],
      'withdrawn in the service',
    );
    await page.screenshot({ path: `${SHOTS}members.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], "the owner's view: no serious or critical accessibility problem (axe-core)");
  });

  let analyst: Page;
  await t.test('the invitee signs in with that e-mail and sees the members as an analyst, without controls', async (t) => {
    analyst = await watchedPage(page.context().browser()!, problems);
    await server.signIn(analyst, { sub: 'ana', email: 'ana.lyst@EXAMPLE.com', name: 'Ana Lyst' });
    await analyst.waitForSelector('#who');
    const mine = (await memberApi(analyst)('/api/organizations')).organizations as { id: string; role: string }[];
    t.same(
      mine.map((o) => [o.id, o.role]),
      [[org.id, 'analyst']],
      'the invitation was claimed at sign-in',
    );
    await open(analyst);
    t.same(
      (await rows(analyst, 'member-list')).map((r) => r.slice(0, 3)),
      [
        ['Olive Owner', 'olive@example.com', 'owner'],
        ['Ana Lyst (you)', 'ana.lyst@EXAMPLE.com', 'analyst'],
      ],
    );
    t.ok(await analyst.isVisible('#no-invitations'), 'no invitation waits any more');
    for (const control of ['#invite-member', '#member-list select', '#member-list button', '#invitation-list button', '#keys button'])
      t.equal(await analyst.locator(control).count(), 0, `no ${control}`);
    t.match(await text('#members-note', analyst), /^Only owners invite members, change roles and remove members/);
    t.match(await text('#org-summary', analyst), /you are an analyst$/);
    t.same(await accessibilityProblems(analyst), [], "the analyst's view: no serious or critical accessibility problem (axe-core)");
    await analyst.screenshot({ path: `${SHOTS}members-analyst.png`, fullPage: true });
  });

  await t.test('the owner changes roles, is refused leaving the organization without an owner, and removes the analyst', async (t) => {
    await open(page);
    const ana = 'tr[data-member="ana"]';
    await page.selectOption(`${ana} select`, 'owner');
    await page.click(`${ana} button:text("Change role")`);
    await says(/^Ana Lyst is an owner now\.$/);
    t.match((await member(`/api/organizations/${org.id}/members`)).members[1], { user_id: 'ana', role: 'owner' });
    await page.selectOption(`${ana} select`, 'analyst');
    await page.click(`${ana} button:text("Change role")`);
    await says(/^Ana Lyst is an analyst now\.$/);

    const me = 'tr[data-member="team-owner"]';
    await page.selectOption(`${me} select`, 'analyst');
    await refused(409, async () => {
      await page.click(`${me} button:text("Change role")`);
      await page.waitForSelector('#members-status .error');
    });
    t.match(await text('#members-status .error strong'), /^You are the only owner of the organization/, "the service's refusal");
    t.match(await text('#members-status .error p'), /^Make another member an owner first/, 'with its fix');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'members-status', 'focus goes to it');
    t.equal((await member(`/api/organizations/${org.id}`)).role, 'owner', 'still an owner');

    await page.click(`${ana} button:text("Remove")`);
    await says(/^Ana Lyst was removed\.$/);
    t.same(
      (await member(`/api/organizations/${org.id}/members`)).members.map((m: { user_id: string }) => m.user_id),
      ['team-owner'],
    );
    const changes = await page.locator('#members .table-wrap:last-child tbody tr td:nth-child(3)').allTextContents();
    t.same(
      changes.slice(0, 4),
      [
        'removed ana.lyst@EXAMPLE.com (analyst)',
        'made ana.lyst@EXAMPLE.com an analyst (was owner)',
        'made ana.lyst@EXAMPLE.com an owner (was analyst)',
        'ana.lyst@example.com joined as analyst',
      ],
      'the latest changes, newest first',
    );

    await analyst.reload();
    await analyst.waitForSelector('#who');
    t.equal(await analyst.locator('#org-picker').count(), 0, 'the removed analyst has no organization left');
    await analyst.close();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.fill('#invite-email', 'someone.with.a.rather.long.address@example-payments.com');
    await page.click('#invite-submit');
    await says(/^Invited someone/);
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}members-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'the section at 390 px: no serious or critical accessibility problem (axe-core)');
  });

  t.same(problems, [], 'no console errors');
});
