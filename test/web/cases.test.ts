// Cases in the dashboard, in headless Chromium against the real server with sign-in through a
// stand-in identity provider. An owner makes an inbox worked by an analyst they invite through the
// members API; payments a rule sends to review open cases. The analyst lists the cases (each with
// its entity, status, assignee and number of decisions, as the API lists them), then works them
// with the keyboard alone: "Next case", then F or L on each, then N for the next; focus follows to
// the status line; the API shows each case closed with its verdict and the outcome recorded on its
// decisions (source review, by the analyst), and the page's timeline has who did what with the
// hash chain intact. The owner claims, notes, assigns, snoozes through the form, closes as
// inconclusive (no outcome), reopens and exports the case as one JSON document. A member of another
// organization cannot open the case: the API refuses and the page shows the refusal. axe-core finds
// no serious or critical problem; at a phone's width nothing scrolls sideways; no console error
// beyond the refusals the test provokes. A case of an inbox with a very short SLA is past its due
// time at once: marked overdue, and found by the overdue filter. Screenshots go to
// artifacts/screenshots/ (docs/images has copies of case.png and cases.png, shown in
// docs/analysts.md).

import { readFileSync } from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, casework, memberApi, noBrowser, SHOTS, watchedPage } from '../support/browser.ts';

type Rec = Record<string, any>;

t.test('Cases: the list, the keyboard loop, a case worked by hand, and another organization', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member, org, analyst, ana, score, refused } = await casework(t);
  const inbox = await member(`/api/organizations/${org.id}/inboxes`, 'POST', { name: 'Disputes', members: ['olive', 'ana'], sla_hours: 24 });
  t.match(inbox, { name: 'Disputes', members: ['olive', 'ana'] });
  // Three customers' cases for the analyst's loop (in the order they open, so the order they are
  // due), one for the owner, and a payment that opens none.
  for (const [id, customer, amount] of [
    ['r1-a', 'r-1', 40],
    ['r1-b', 'r-1', 55],
    ['r2-a', 'r-2', 60],
    ['r3-a', 'r-3', 70],
    ['r3-b', 'r-3', 80],
    ['r4-a', 'r-4', 90],
  ] as const)
    t.equal(await score(id, customer, amount), 'review', `${id} goes to review`);
  await score('a-1', 'a-1', 20);
  const listed = (await member(`/api/organizations/${org.id}/cases`)).data as Rec[];
  t.same(
    listed.map((c) => [c.entity.id, c.decision_count]),
    [
      ['r-1', 2],
      ['r-2', 1],
      ['r-3', 2],
      ['r-4', 1],
    ],
    'four cases, the soonest due first',
  );
  const caseOf = (customer: string) => listed.find((c) => c.entity.id === customer)!.id as string;

  const rows = (p: Page, selector: string) =>
    p.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));

  await t.test('the analyst lists the inboxes and cases, filtered and a page at a time', async (t) => {
    await analyst.goto(`${server.base}/#/cases?org=${org.id}`);
    await analyst.waitForSelector('#case-list');
    t.same(
      (await rows(analyst, '#case-list')).map((r) => [r[0], r[1], r[2], r[5], r[6]]),
      listed.map((c) => [`customer ${c.entity.id}`, 'open', 'nobody', String(c.decision_count), 'Disputes']),
      'entity, status, assignee, decisions and inbox, as the API lists them',
    );
    t.match((await rows(analyst, '#inboxes'))[0], ['Disputes', 'customer', /default/, '24 h', 'Olive Owner, Ana Lyst (you)']);
    await analyst.screenshot({ path: `${SHOTS}cases.png`, fullPage: true });
    t.same(await accessibilityProblems(analyst), [], 'no serious or critical accessibility problem (axe-core)');

    await analyst.goto(`${server.base}/#/cases?org=${org.id}&starting_after=${listed[1].id}`);
    await analyst.waitForFunction(() => document.querySelectorAll('#case-list tbody tr').length === 2);
    t.same(
      (await rows(analyst, '#case-list')).map((r) => r[0]),
      ['customer r-3', 'customer r-4'],
      'the page after the second case',
    );
    t.ok(await analyst.isVisible('#first-page'), 'with a way back to the soonest due');
    await analyst.check('#filter-mine');
    await analyst.click('#case-filters button[type=submit]');
    await analyst.waitForSelector('#no-cases');
    t.match(await analyst.locator('#cases-title').textContent(), /assigned to me/, 'assigned to me: none yet');
  });

  const loop = ['r-1', 'r-2', 'r-3'];
  const verdicts = ['f', 'l', 'f'] as const;
  await t.test('the analyst works three cases with the keyboard alone: Next case, then F or L, then N', async (t) => {
    await analyst.goto(`${server.base}/#/review?org=${org.id}`);
    await analyst.waitForSelector('#take-next-case');
    await analyst.focus('#take-next-case');
    await analyst.keyboard.press('Enter');
    for (let i = 0; i < loop.length; i++) {
      const customer = loop[i]!;
      await analyst.waitForFunction((c) => document.querySelector('#case-title')?.textContent === `Case: customer ${c}`, customer);
      await analyst.waitForFunction(() => document.activeElement?.id === 'case-status');
      t.match(await analyst.locator('#case-status').textContent(), new RegExp(`^Your next case: customer ${customer}, `), `${customer}: said, and focused`);
      t.equal(await analyst.locator('#case-assigned').textContent(), 'Ana Lyst (you)', 'claimed for the analyst');
      t.ok(await analyst.locator('#reasons li').count(), 'its first decision shown with its reasons');
      if (i === 0) {
        await analyst.screenshot({ path: `${SHOTS}case.png`, fullPage: true });
        t.same(await accessibilityProblems(analyst), [], 'no serious or critical accessibility problem (axe-core)');
      }
      await analyst.keyboard.press(verdicts[i]!);
      const verdict = verdicts[i] === 'f' ? 'fraud' : 'legitimate';
      await analyst.waitForFunction((v) => document.querySelector('#case-state')?.textContent === `closed as ${v}`, verdict);
      t.match(
        await analyst.locator('#case-status').textContent(),
        new RegExp(`^Closed as ${verdict}\\. ${verdict === 'fraud' ? 'Fraud' : 'Legitimate'} recorded on `),
      );
      t.equal(await analyst.evaluate(() => document.activeElement?.id), 'case-status', 'focus on what happened');
      t.ok(await analyst.locator('#case-fraud').isDisabled(), 'a closed case offers no verdict');
      await analyst.keyboard.press('n');
    }
    // The owner's case is the analyst's next too (the inbox is theirs): N takes it; the owner takes
    // it back below.
    await analyst.waitForFunction(() => document.querySelector('#case-title')?.textContent === 'Case: customer r-4');
    t.pass('N after the last opens the next waiting case');

    for (let i = 0; i < loop.length; i++) {
      const c = await ana(`/api/organizations/${org.id}/cases/${caseOf(loop[i]!)}`);
      const outcome = verdicts[i] === 'f' ? 'fraud' : 'legit';
      t.match(c, { status: 'closed', resolution: verdicts[i] === 'f' ? 'fraud' : 'legitimate', assignee: 'ana' }, `${loop[i]} closed with its verdict`);
      t.ok(c.decisions.length > 0);
      for (const d of c.decisions)
        t.match(d.outcome, { outcome, source: 'review', reported_by: 'ana' }, `${d.transaction_id}: ${outcome}, recorded by the analyst`);
    }
  });

  await t.test("a closed case's timeline: who did what when, the hash chain intact", async (t) => {
    const id = caseOf('r-1');
    await analyst.goto(`${server.base}/#/cases/${id}?org=${org.id}`);
    await analyst.waitForSelector('#case-timeline');
    const api = await ana(`/api/organizations/${org.id}/cases/${id}`);
    t.same(api.chain, { intact: true, broken_at: null });
    t.match(await analyst.locator('#case-chain').textContent(), new RegExp(`^✓ Hash chain intact: each of the ${api.timeline.length} entries`));
    t.same(
      (await rows(analyst, '#case-timeline')).map((r) => [r[0], r[2], r[3]]),
      [
        ['1', 'the service', 'Opened in Disputes'],
        ['2', 'the service', 'r1-a joined (decision review)'],
        ['3', 'the service', 'r1-b joined (decision review)'],
        ['4', 'Ana Lyst (you)', 'Claimed by Ana Lyst (you)'],
        ['5', 'Ana Lyst (you)', 'Closed as fraud'],
        ['6', 'Ana Lyst (you)', 'Recorded fraud on r1-a, r1-b'],
      ],
    );
    t.same(
      (await rows(analyst, '#case-timeline')).map((r) => r[1]),
      api.timeline.map((e: Rec) => `${e.at.slice(0, 19).replace('T', ' ')} UTC`),
      'each entry with when',
    );
  });

  await t.test('the owner claims, notes, assigns, snoozes, closes as inconclusive, reopens and exports', async (t) => {
    const id = caseOf('r-4');
    await page.goto(`${server.base}/#/cases/${id}?org=${org.id}`);
    await page.waitForSelector('#case-actions');
    const says = (re: RegExp) => page.waitForFunction((s) => new RegExp(s).test(document.querySelector('#case-status')?.textContent ?? ''), re.source);
    await page.keyboard.press('c');
    await says(/^Claimed/);
    t.equal(await page.locator('#case-assigned').textContent(), 'Olive Owner (you)', 'C claims');
    await page.fill('#case-note', 'Called the customer: the card was lost on Tuesday.');
    await page.click('#case-note-form button[type=submit]');
    await says(/^Note added/);
    await page.selectOption('#case-assignee', 'ana');
    await page.click('#case-assign button[type=submit]');
    await says(/^Assigned to Ana Lyst\.$/);
    await page.keyboard.press('s');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'snooze-until', 'S opens the snooze form, its time focused');
    await page.fill('#snooze-until', '2099-01-02T03:04');
    await page.keyboard.press('Enter');
    await says(/^Snoozed until 2099-01-02 03:04:00 UTC\.$/);
    t.equal(await page.locator('#case-state').textContent(), 'snoozed until 2099-01-02 03:04:00 UTC');
    await page.keyboard.press('i');
    await says(/^Closed as inconclusive\. No outcome recorded\./);
    const closed = await member(`/api/organizations/${org.id}/cases/${id}`);
    t.match(closed, { status: 'closed', resolution: 'inconclusive' });
    t.equal(closed.decisions[0].outcome, null, 'inconclusive records no outcome');
    await page.click('#case-reopen');
    await says(/^Reopened\.$/);
    t.equal((await member(`/api/organizations/${org.id}/cases/${id}`)).status, 'open');
    t.same(
      (await rows(page, '#case-timeline')).slice(-6).map((r) => r[3]),
      [
        'Claimed by Olive Owner (you)',
        'Note: Called the customer: the card was lost on Tuesday.',
        'Assigned to Ana Lyst',
        'Snoozed until 2099-01-02 03:04:00 UTC',
        'Closed as inconclusive',
        'Reopened',
      ],
      'each change on the timeline',
    );
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#case-export')]);
    t.equal(download.suggestedFilename(), `case-${id}.json`);
    const exported = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    t.match(exported, { organization_id: org.id, case: { id, status: 'open', chain: { intact: true, broken_at: null } } });
    t.equal(exported.case.timeline.length, (await rows(page, '#case-timeline')).length, 'the export holds the timeline shown');
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
  });

  await t.test("at a phone's width the case and the list fit", async (t) => {
    const phone = await watchedPage(page.context().browser()!, problems, 390);
    await server.signIn(phone, { sub: 'ana', email: 'ana@example.com', name: 'Ana Lyst' });
    await phone.waitForSelector('#who');
    for (const hash of [`#/cases?org=${org.id}`, `#/cases/${caseOf('r-1')}?org=${org.id}`]) {
      await phone.goto(`${server.base}/${hash}`);
      await phone.waitForSelector('#case-list, #case-timeline');
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.ok(overflow <= 0, `${hash}: no sideways scrolling (${overflow} px)`);
    }
    await phone.screenshot({ path: `${SHOTS}case-phone.png` });
    await phone.close();
  });

  await t.test('a member of another organization cannot open the case', async (t) => {
    const stranger = await watchedPage(page.context().browser()!, problems);
    await server.signIn(stranger, { sub: 'mallory', email: 'mallory@example.com', name: 'Mallory' });
    await stranger.waitForSelector('#who');
    const theirs = memberApi(stranger);
    await theirs('/api/organizations', 'POST', { name: 'Elsewhere' });
    const id = caseOf('r-1');
    let direct: Rec = {};
    t.same(
      await refused(stranger, 404, async () => {
        direct = await theirs(`/api/organizations/${org.id}/cases/${id}`);
      }),
      [],
      'only the refusal was logged',
    );
    t.notOk(direct.id, 'the API answers no case');
    t.equal(direct.detail?.reason, 'not_found', 'an organization they are not a member of has no case for them');
    t.same(
      await refused(stranger, 404, async () => {
        await stranger.goto(`${server.base}/#/cases/${id}?org=${org.id}`);
        await stranger.waitForSelector('.error');
      }),
      [],
      'only the refusal was logged',
    );
    t.match(await stranger.locator('.error strong').textContent(), `No case ${id} in this organization.`, "the page shows the service's refusal");
    t.equal(await stranger.locator('.error code').textContent(), 'not_found');
    t.equal(await stranger.locator('#case-header').count(), 0, 'and nothing of the case');
    t.same(await accessibilityProblems(stranger), [], 'no serious or critical accessibility problem (axe-core)');
    await stranger.close();
  });

  await t.test('an overdue case is marked, and found by the overdue filter', async (t) => {
    t.match(await member(`/api/organizations/${org.id}/inboxes`, 'POST', { name: 'Large', route: 'amount >= 1000.0', sla_hours: 0.000_001 }), {
      name: 'Large',
      position: 1,
    });
    // Due 3.6 ms after it opens: past due by the time the page asks.
    t.equal(await score('big-1', 'r-9', 5_000), 'review');
    await analyst.goto(`${server.base}/#/cases?org=${org.id}`);
    await analyst.check('#filter-overdue');
    await analyst.click('#case-filters button[type=submit]');
    await analyst.waitForFunction(() => /overdue/.test(document.querySelector('#cases-title')?.textContent ?? ''));
    const shown = await rows(analyst, '#case-list');
    t.same(
      shown.map((r) => [r[0], r[6]]),
      [['customer r-9', 'Large']],
      'only the case past its due time',
    );
    t.match(shown[0]![4], / UTC · overdue$/, 'marked overdue in words');
    t.equal(await analyst.locator('#case-list .overdue').count(), 1);
  });

  t.same(problems, [], 'no console errors');
});
