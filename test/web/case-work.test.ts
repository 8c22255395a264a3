// The case work around the cases' pages, in headless Chromium against the real server with sign-in
// through a stand-in identity provider: an owner and an analyst they invite.
// - Inboxes (`#/inboxes`): the owner makes three inboxes through the page (one escalating to
//   another), changes one (its SLA and round-robin), moves it first in routing order and deletes
//   one; each change is what the API then answers. Payments open cases in the inbox moved first; its
//   figures on the page are the stats API's. Deleting an inbox with open cases shows the service's
//   refusal and leaves it. The analyst sees the same figures with no control to change anything.
// - "Open case" on a transaction's page: the analyst opens a case on an approved payment with a
//   reason; the status line links to the case, whose timeline names the analyst and the reason;
//   the same again says it was open already.
// - A case's page: E escalates a case (moved: the page shows it in the escalation inbox); escalating
//   it again, where there is none, shows 422 `no_escalation_inbox` in words; escalating a case whose
//   entity has an open case there shows that case (merged), with the merge on its timeline. A file
//   is attached and downloaded byte for byte, listed and on the timeline; a file over 5 MB is refused
//   before anything is sent. The case's customer is added to a customer list with a reason and an
//   expiry (only lists that hold customer ids are offered), as the lists API then answers.
// axe-core finds no serious or critical problem on each page; at a phone's width nothing scrolls
// sideways; no console error beyond the refusals the test provokes. Screenshots go to
// artifacts/screenshots/ (docs/images/inboxes.png is a copy, shown in docs/analysts.md).

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, casework, noBrowser, SHOTS, watchedPage } from '../support/browser.ts';

type Rec = Record<string, any>;

t.test('Case work: inboxes, opening a case from a transaction, escalation, files and lists', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member, org, analyst, ana, score, refused } = await casework(t);
  const inboxes = async () => (await member(`/api/organizations/${org.id}/inboxes`)).data as Rec[];
  const cases = async () => (await member(`/api/organizations/${org.id}/cases?limit=100`)).data as Rec[];
  const says = (p: Page, selector: string, re: RegExp) =>
    p.waitForFunction(({ s, r }) => new RegExp(r).test(document.querySelector(s)?.textContent ?? ''), { s: selector, r: re.source });
  const rows = (p: Page, selector: string) =>
    p.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
  /** Shows `hash` on `p`, read afresh even when `p` shows it already (a same-URL goto does nothing). */
  const visit = async (p: Page, hash: string) => {
    const url = `${server.base}/${hash}`;
    if (p.url() === url) await p.reload();
    else await p.goto(url);
  };

  let senior: Rec = {};
  let first: Rec = {};
  await t.test('the owner makes, changes, moves and deletes inboxes on the page', async (t) => {
    await visit(page, `#/cases?org=${org.id}`);
    await page.waitForSelector('#manage-inboxes');
    await page.click('#manage-inboxes');
    await page.waitForSelector('#no-inboxes');
    t.equal(await page.locator('nav a[aria-current=page]').textContent(), 'Cases', 'the page belongs with Cases');

    const make = async (name: string, sla: string, members: string[], escalation?: string) => {
      await page.fill('#new-inbox-name', name);
      await page.fill('#new-inbox-sla_hours', sla);
      for (const m of members) await page.check(`#new-inbox-form input[name=members][value="${m}"]`);
      if (escalation) await page.selectOption('#new-inbox-escalation', { label: escalation });
      await page.click('#new-inbox-form button[type=submit]');
      await says(page, '#inboxes-page-status', new RegExp(`^Made ${name}: last in routing order\\.$`));
      t.equal(await page.evaluate(() => document.activeElement?.id), 'inboxes-page-status', 'said, and focused');
    };
    await make('Senior', '2', ['olive']);
    await make('First line', '24', ['olive', 'ana'], 'Senior');
    await make('Spare', '48', []);
    [senior, first] = await inboxes();
    t.match(senior, { name: 'Senior', sla_hours: 2, members: ['olive'], escalation_inbox_id: null, auto_assign: null });
    t.match(first, { name: 'First line', sla_hours: 24, members: ['olive', 'ana'], escalation_inbox_id: senior.id, route: null });

    const card = `#inbox-${first.id}`;
    await page.click(`${card} [data-action=edit]`);
    t.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'name', 'Edit opens its form, the name focused');
    await page.fill(`${card} [name=sla_hours]`, '8');
    await page.check(`${card} [name=auto_assign]`);
    await page.fill(`${card} [name=cap]`, '3');
    await page.click(`${card} button[type=submit]`);
    await says(page, '#inboxes-page-status', /^Changed First line: SLA, round-robin\.$/);
    t.match((await inboxes())[1], { name: 'First line', sla_hours: 8, auto_assign: { cap: 3 }, members: ['olive', 'ana'], escalation_inbox_id: senior.id });

    await page.click(`${card} [data-action=move-up]`);
    await says(page, '#inboxes-page-status', /^Moved First line up: now 1st in routing order\.$/);
    t.same(
      (await inboxes()).map((i) => i.name),
      ['First line', 'Senior', 'Spare'],
      'first in routing order',
    );
    t.ok(await page.locator(`${card} [data-action=move-up]`).isDisabled(), 'and cannot go higher');

    const spare = (await inboxes())[2]!;
    await page.click(`#inbox-${spare.id} [data-action=delete]`);
    await says(page, '#inboxes-page-status', /^Deleted Spare\.$/);
    t.same(
      (await inboxes()).map((i) => i.name),
      ['First line', 'Senior'],
    );
    t.equal(await page.locator(`#inbox-${spare.id}`).count(), 0);
  });

  await t.test("the inboxes' figures are the stats API's; an inbox with open cases is not deleted", async (t) => {
    for (const [id, customer] of [
      ['r1-a', 'r-1'],
      ['r1-b', 'r-1'],
      ['r2-a', 'r-2'],
    ] as const)
      t.equal(await score(id, customer), 'review');
    t.equal(await score('a-1', 'a-1'), 'approve');
    t.same(
      (await cases()).map((c) => [c.entity.id, c.inbox_id]),
      [
        ['r-1', first.id],
        ['r-2', first.id],
      ],
      'opened in the inbox moved first',
    );
    await visit(page, `#/inboxes?org=${org.id}`);
    await page.waitForSelector(`#inbox-${first.id} .inbox-figures`);
    const stats = await member(`/api/organizations/${org.id}/inboxes/${first.id}/stats`);
    t.same(
      (await rows(page, `#inbox-${first.id} .inbox-figures .table-wrap:first-child`))[0],
      [stats.open, stats.in_progress, stats.snoozed, stats.overdue, stats.closed_7d, stats.closed_30d].map(String).concat('—'),
      'open, in progress, snoozed, overdue, closed in 7 and 30 days, median time to close',
    );
    t.equal(stats.open, 2);
    const perAnalyst = await rows(page, `#inbox-${first.id} .inbox-figures .table-wrap:nth-child(2)`);
    t.same(
      perAnalyst.map((r) => [r[0], r[1]]).sort(),
      (stats.analysts as Rec[]).map((a) => [a.user_id === 'olive' ? 'Olive Owner (you)' : 'Ana Lyst', String(a.open)]).sort(),
      'per analyst, as the round-robin gave them out',
    );
    t.same(perAnalyst.map((r) => r[1]).sort(), ['1', '1'], 'one each');
    await page.screenshot({ path: `${SHOTS}inboxes.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');

    t.same(
      await refused(page, 409, async () => {
        await page.click(`#inbox-${first.id} [data-action=delete]`);
        await page.waitForSelector('#inboxes-page-status .error');
      }),
      [],
      'only the refusal was logged',
    );
    t.equal(await page.locator('#inboxes-page-status .error strong').textContent(), 'The inbox has 2 cases not closed.', "the service's refusal");
    t.match(await page.locator('#inboxes-page-status .error p').textContent(), /^Close or escalate them first/);
    t.equal((await inboxes()).length, 2, 'the inbox is still there');
  });

  await t.test('the analyst sees the figures with no control to change anything', async (t) => {
    await visit(analyst, `#/inboxes?org=${org.id}`);
    await analyst.waitForSelector(`#inbox-${first.id} .inbox-figures`);
    t.ok(await analyst.isVisible('#inboxes-read-only'));
    t.equal(await analyst.locator('main [data-action], #new-inbox, main form').count(), 0, 'no edit, move or delete, no new inbox');
    t.equal((await rows(analyst, `#inbox-${first.id} .inbox-figures .table-wrap:first-child`))[0]![0], '2', 'the figures');
    t.same(await accessibilityProblems(analyst), [], 'no serious or critical accessibility problem (axe-core)');
  });

  await t.test("the analyst opens a case from a transaction's page", async (t) => {
    await visit(analyst, `#/transactions/a-1?org=${org.id}`);
    await analyst.waitForSelector('#open-case-form');
    await analyst.fill('#open-case-reason', 'customer called: card stolen');
    await analyst.click('#open-case');
    await says(analyst, '#open-case-status', /^Opened the case of customer a-1\.$/);
    t.equal(await analyst.evaluate(() => document.activeElement?.id), 'open-case-status', 'said, and focused');
    const opened = (await cases()).find((c) => c.entity.id === 'a-1')!;
    t.match(opened, { inbox_id: first.id, decision_count: 1 }, 'in the inbox its decision routes to');
    t.equal(await analyst.getAttribute('#opened-case', 'href'), `#/cases/${opened.id}?org=${org.id}`, 'linked');

    await analyst.fill('#open-case-reason', 'second call');
    await analyst.click('#open-case');
    await says(analyst, '#open-case-status', /^In the case of customer a-1, which was open already: 1 decision\.$/);

    await analyst.click('#opened-case');
    await analyst.waitForSelector('#case-timeline');
    t.same(
      (await rows(analyst, '#case-timeline')).filter((r) => r[2] === 'Ana Lyst (you)').map((r) => [r[2], r[3]]),
      [
        ['Ana Lyst (you)', 'Opened in First line'],
        ['Ana Lyst (you)', 'a-1 joined (customer called: card stolen)'],
      ],
      'the timeline names who opened it, and why',
    );
  });

  await t.test('E escalates; where there is no escalation inbox the refusal is said in words; a merge shows the case merged into', async (t) => {
    const r2 = (await cases()).find((c) => c.entity.id === 'r-2')!;
    await visit(analyst, `#/cases/${r2.id}?org=${org.id}`);
    await analyst.waitForSelector('#case-actions');
    await analyst.keyboard.press('e');
    t.equal(await analyst.evaluate(() => document.activeElement?.id), 'escalate-reason', 'E opens the form, its reason focused');
    t.match(await analyst.locator('#escalate-form label').textContent(), /it goes to Senior/);
    await analyst.fill('#escalate-reason', 'over my limit');
    await analyst.keyboard.press('Enter');
    await says(analyst, '#case-status', /^Escalated to Senior: open, unassigned, due /);
    t.match(await ana(`/api/organizations/${org.id}/cases/${r2.id}`), { inbox_id: senior.id, assignee: null, status: 'open' });
    t.match(await analyst.locator('#case-header').textContent(), /InboxSenior/, 'the page shows it in Senior');
    t.equal(await analyst.locator('#case-assigned').textContent(), 'nobody');
    t.equal((await rows(analyst, '#case-timeline')).at(-1)![3], 'Escalated to Senior: over my limit');

    await analyst.keyboard.press('e');
    await analyst.fill('#escalate-reason', 'higher still');
    t.same(
      await refused(analyst, 422, async () => {
        await analyst.keyboard.press('Enter');
        await analyst.waitForSelector('#case-status .error');
      }),
      [],
      'only the refusal was logged',
    );
    t.equal(await analyst.locator('#case-status .error strong').textContent(), "This case's inbox has no escalation inbox.", 'said in words');
    t.match(await analyst.locator('#case-status .error p').textContent(), /^Ask an owner to set one/, 'with its fix');
    t.equal(await analyst.locator('#case-status .error code').textContent(), 'no_escalation_inbox');

    // r-1's case goes to Senior; r-1's next payment opens another in First line, which escalating
    // merges into the first.
    const r1 = (await cases()).find((c) => c.entity.id === 'r-1')!;
    t.equal((await ana(`/api/organizations/${org.id}/cases/${r1.id}/escalate`, 'POST', { reason: 'repeat' })).id, r1.id);
    t.equal(await score('r1-c', 'r-1'), 'review');
    const again = (await cases()).find((c) => c.entity.id === 'r-1' && c.inbox_id === first.id)!;
    t.not(again.id, r1.id);
    await visit(analyst, `#/cases/${again.id}?org=${org.id}`);
    await analyst.waitForSelector('#case-actions');
    await analyst.click('#case-escalate');
    await analyst.fill('#escalate-reason', 'same customer again');
    await analyst.click('#escalate-form button[type=submit]');
    await analyst.waitForFunction((id) => location.hash.startsWith(`#/cases/${id}?`), r1.id);
    await says(analyst, '#case-status', /^Escalated to Senior, into the case of customer r-1 open there, which this is: it now groups 3 decisions;/);
    t.equal(await analyst.evaluate(() => document.activeElement?.id), 'case-status', 'said, and focused');
    t.equal((await rows(analyst, '#case-timeline')).at(-1)![3], 'Merged in an escalated case (same customer again), bringing r1-c');
    t.match(await ana(`/api/organizations/${org.id}/cases/${again.id}`), { status: 'closed', resolution: null });
    await visit(analyst, `#/cases/${again.id}?org=${org.id}`);
    await analyst.waitForSelector('#case-timeline');
    t.equal(await analyst.locator('#case-state').textContent(), 'closed: merged into another case');
    t.equal(await analyst.getAttribute('#case-timeline tbody tr:last-child a', 'href'), `#/cases/${r1.id}?org=${org.id}`, 'linked to the case it went into');
  });

  await t.test('files: attached, listed, downloaded byte for byte; over 5 MB refused before sending', async (t) => {
    const r1 = (await cases()).find((c) => c.entity.id === 'r-1' && c.status !== 'closed')!;
    await visit(analyst, `#/cases/${r1.id}?org=${org.id}`);
    await analyst.waitForSelector('#attachment-form');
    t.ok(await analyst.isVisible('#no-attachments'));
    const content = Buffer.from('Bank statement, 2026-11: three payments the customer does not recognise.\n', 'utf8');
    await analyst.setInputFiles('#attachment-file', { name: 'statement.txt', mimeType: 'text/plain', buffer: content });
    await analyst.click('#attachment-form button[type=submit]');
    await says(analyst, '#case-status', /^Attached statement\.txt \(73 bytes\); the timeline records its SHA-256\.$/);
    const sha = createHash('sha256').update(content).digest('hex');
    t.same(
      (await rows(analyst, '#attachment-list')).map((r) => [r[0], r[1], r[2], r[4]]),
      [['statement.txt', '73 bytes', 'Ana Lyst (you)', sha]],
    );
    t.equal((await rows(analyst, '#case-timeline')).at(-1)![3], `Attached statement.txt (73 bytes, SHA-256 ${sha.slice(0, 12)}…)`);
    const [download] = await Promise.all([analyst.waitForEvent('download'), analyst.click('#attachment-list a')]);
    t.equal(download.suggestedFilename(), 'statement.txt');
    t.same(readFileSync((await download.path())!), content, 'byte for byte');

    let sent = 0;
    analyst.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes('/attachments')) sent++;
    });
    await analyst.setInputFiles('#attachment-file', { name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(5 * 1024 * 1024 + 1) });
    await analyst.click('#attachment-form button[type=submit]');
    await analyst.waitForSelector('#attachment-too-large');
    t.equal(
      await analyst.locator('#attachment-too-large strong').textContent(),
      'scan.pdf is 5,242,881 bytes: a case takes files of at most 5,242,880 bytes (5 MB).',
    );
    t.match(await analyst.locator('#attachment-too-large p').textContent(), /^Nothing was sent\./);
    t.equal(sent, 0, 'nothing was sent');
    t.equal((await ana(`/api/organizations/${org.id}/cases/${r1.id}`)).timeline.filter((e: Rec) => e.kind === 'attachment').length, 1, 'one file on the case');
  });

  await t.test("the case's customer goes on a customer list, with a reason and an expiry", async (t) => {
    t.match(await ana(`/api/organizations/${org.id}/lists`, 'POST', { name: 'blocked_customers', kind: 'customer_id' }), { name: 'blocked_customers' });
    t.match(await ana(`/api/organizations/${org.id}/lists`, 'POST', { name: 'risky_merchants', kind: 'merchant_id' }), { name: 'risky_merchants' });
    t.match(await ana(`/api/organizations/${org.id}/lists`, 'POST', { name: 'watch', kind: 'text' }), { name: 'watch' });
    const r1 = (await cases()).find((c) => c.entity.id === 'r-1' && c.status !== 'closed')!;
    await visit(analyst, `#/cases/${r1.id}?org=${org.id}`);
    await analyst.waitForSelector('#case-list-form');
    t.same(
      await analyst.locator('#case-list option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
      ['blocked_customers', 'watch'],
      'only the lists that hold customer ids, and text',
    );
    await analyst.fill('#case-list-reason', 'confirmed fraud, case r-1');
    await analyst.fill('#case-list-expires', '2099-01-02T03:04:05');
    await analyst.click('#case-list-form button[type=submit]');
    await says(analyst, '#case-status', /^Added customer r-1 to blocked_customers until 2099-01-02 03:04:05 UTC\.$/);
    const listed = await ana(`/api/organizations/${org.id}/lists/blocked_customers`);
    t.match(listed.data, [{ value: 'r-1', added_by: 'ana', reason: 'confirmed fraud, case r-1', expires_at: '2099-01-02T03:04:05.000Z' }]);
    t.equal(await analyst.getAttribute('#case-status a', 'href'), `#/lists/blocked_customers?org=${org.id}`);
    await analyst.reload();
    await analyst.waitForSelector('#case-entity-lists li');
    t.match(
      await analyst.locator('#case-entity-lists').textContent(),
      /^blocked_customers since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, until 2099-01-02 03:04:05 UTC: confirmed fraud, case r-1$/,
      'the case shows the lists its customer is on',
    );
    t.match(await analyst.locator('#case-entity-totals').textContent(), /^\d+ transactions, /, "and the customer's totals");
    await analyst.screenshot({ path: `${SHOTS}case-work.png`, fullPage: true });
    t.same(await accessibilityProblems(analyst), [], 'no serious or critical accessibility problem (axe-core)');
  });

  await t.test("at a phone's width the inboxes and a case's new parts fit", async (t) => {
    const phone = await watchedPage(page.context().browser()!, problems, 390);
    await server.signIn(phone, { sub: 'olive', email: 'olive@example.com', name: 'Olive Owner' });
    await phone.waitForSelector('#who');
    const r1 = (await cases()).find((c) => c.entity.id === 'r-1' && c.status !== 'closed')!;
    for (const [hash, ready] of [
      [`#/inboxes?org=${org.id}`, '#new-inbox'],
      [`#/cases/${r1.id}?org=${org.id}`, '#attachment-list'],
      [`#/transactions/a-1?org=${org.id}`, '#open-case-form'],
    ] as const) {
      await phone.goto(`${server.base}/${hash}`);
      await phone.waitForSelector(ready);
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      t.ok(overflow <= 0, `${hash}: no sideways scrolling (${overflow} px)`);
    }
    await phone.close();
  });

  t.same(problems, [], 'no console errors');
});
