// The Models page's challengers in headless Chromium, against the real server with sign-in through a
// stand-in identity provider: an owner makes a custom model (put in the database, as
// test/app/challengers.test.ts does) a challenger from the page, and payments scored with the
// organization's key answer as before while the record keeps the challenger's decision; with shadow
// rows older than the label delay in the database, the page shows the report's verdict, evidence,
// figures, changed decisions and weeks as GET …/challengers/report gives them, and with imported
// history, the backtest apart under its own heading, labelled as one; the owner promotes
// from the page (the model history names who) and rolls back (a second rollback shows the service's
// message and fix); a member who is not an owner sees the report and the history with no owner
// button. axe-core finds no serious or critical problem, nothing scrolls sideways at 390 px, and the
// console stays clean. Screenshots go to artifacts/screenshots/.

import t from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';
import { insertCustomModel } from '../../src/storage/models-store.ts';
import { mergeSettings } from '../../src/model/custom.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import { shadowRecords, shadowRows } from '../support/shadow-rows.ts';
import { computeImportedFeatures } from '../../src/jobs/imported-features.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';

const base = loadModelFolder('models/builtin');
if (isProblem(base)) throw new Error(base.message);
const BUILT_IN = base.file.id;
/** Blocks every payment: as a challenger it must change no answer. */
const strict = mergeSettings(base.file, { thresholds: { balanced: { review: 0.000_001, block: 0.000_002 } } });
const lenient = mergeSettings(base.file, { thresholds: { balanced: { review: 0.999_998, block: 0.999_999 } } });

/** The page's numbers: three decimals, or an amount with two; a difference signed, with its interval. */
const shown = (x: number | null, amount: boolean) =>
  (x === null ? '—' : amount ? x.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : x.toFixed(3)).replace(/^-(0[.,0]*)$/, '$1');
const diff = (d: { value: number | null; low: number | null; high: number | null }, amount = false) =>
  `${d.value !== null && d.value > 0 && /[1-9]/.test(shown(d.value, amount)) ? '+' : ''}${shown(d.value, amount)} [${shown(d.low, amount)}, ${shown(d.high, amount)}]`;
const VERDICTS: Record<string, [string, string]> = {
  better: ['Better than the active model', 'better'],
  no_difference: ['No clear difference from the active model', 'no clear difference'],
  worse: ['Worse than the active model', 'worse'],
};

t.test('Models: challengers, their report, promotion and rollback', { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(t, { sub: 'model-owner', email: 'owner@example.com', name: 'Model Owner' });
  const { service } = server.s;
  const org = await member('/api/organizations', 'POST', { name: 'Modelworth' });
  const { secret } = await member(`/api/organizations/${org.id}/api-keys`, 'POST', { name: 'server' });
  const ownerId = (await member('/api/auth/me')).user.id as string;
  await insertCustomModel(service.db, { id: 'cm_strict', organizationId: org.id, name: 'strict', baseModelId: BUILT_IN, settings: strict });
  await insertCustomModel(service.db, { id: 'cm_lenient', organizationId: org.id, name: 'lenient', baseModelId: BUILT_IN, settings: lenient });
  const dialogs: string[] = [];
  page.on('dialog', (d) => dialogs.push(d.message()));

  const o = org.id as string;
  const report = `#challengers-${o}`;
  const history = `#history-${o}`;
  const mine = `${report}-cm_strict`;
  const text = async (selector: string, p: Page = page) => (await p.locator(selector).textContent()) ?? '';
  const open = async (p: Page, selector: string) => {
    const url = `${server.base}/#/models`;
    // Already there, the address alone would not draw the page again.
    await (p.url() === url ? p.reload() : p.goto(url));
    await p.waitForSelector(selector);
  };
  const score = async (id: string, customer: string) => {
    const res = await fetch(`${server.base}/api/v1/risk/score`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        transaction_id: id,
        amount: 42.5,
        customer_id: customer,
        merchant_id: 'M-shadow',
        location: 'Lisbon',
        payment_type: 'card_present',
      }),
    });
    t.equal(res.status, 200, `${id} scored`);
    return { body: (await res.json()) as Record<string, any> };
  };
  const models = async () =>
    ((await member('/api/models')).models as { id: string; kind: string; active: boolean; challenger?: boolean }[]).filter((m) => m.kind === 'custom');
  const historyRows = (p: Page = page) =>
    p.locator(`${history} tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)));

  await t.test('an owner makes a model a challenger, and the answers do not change', async (t) => {
    const before = await score('tx-before', 'C-shadow-1');
    await open(page, '#model-cm_strict-challenger');
    t.same(await page.locator('h1').allTextContents(), ['Models'], 'one h1');
    t.match(await text('#model-cm_strict-state'), /^Candidate: neither active nor a challenger/, 'a candidate first');
    t.match(
      await text(`${report}-empty`),
      /No challenger has scored a payment here yet\. To start, an owner makes a custom model a challenger/,
      'the report says how to start',
    );
    t.match(await text(`${history}-empty`), /No promotion, rollback or challenger change yet/);

    await page.click('#model-cm_strict-challenger');
    await page.waitForFunction(() => document.querySelector('#model-cm_strict-challenger')?.textContent === 'Stop challenging');
    t.equal(await page.evaluate(() => document.activeElement?.id), 'model-cm_strict-challenger', 'focus stays on the button');
    t.match(await text('#model-cm_strict-state'), /^Challenger: it scores every payment of its organization in shadow/);
    t.match(await text('#model-cm_strict-status'), /strict is a challenger now/);
    t.match(
      (await models()).find((m) => m.id === 'cm_strict'),
      { challenger: true, active: false },
      'the API says so too',
    );
    t.match(
      await text(`${report}-empty`),
      /strict \(cm_strict\) is a challenger, but no payment scored in shadow is older than the label delay/,
      'no report yet: the payments are too young',
    );
    t.same((await historyRows())[0]?.slice(1), ['Model Owner', 'Made a challenger', 'strict (cm_strict)', 'scores in shadow'], 'the history names who');

    await new Promise((r) => setTimeout(r, 1_100)); // the key's settings are trusted for a second
    for (const [i, customer] of ['C-shadow-2', 'C-shadow-3', 'C-shadow-4'].entries()) {
      const after = await score(`tx-after-${i}`, customer);
      t.same(Object.keys(after.body).sort(), Object.keys(before.body).sort(), 'the answer has the same fields');
      t.same(
        [after.body.model_id, after.body.decision, after.body.mode],
        [before.body.model_id, before.body.decision, before.body.mode],
        'answered and decided by the built-in model as before',
      );
      t.not(after.body.decision, 'block', 'though the challenger blocks everything');
      t.notOk(JSON.stringify(after.body).includes('cm_strict'), 'the challenger is nowhere in it');
    }
    const record = await member(`/api/organizations/${o}/transactions/tx-after-0`);
    t.match(record.challengers, [{ model_id: 'cm_strict', decision: 'block' }], "the record keeps the challenger's decision");
  });

  await t.test("the report on the page is the API's", async (t) => {
    const rows = shadowRows({ seed: 7, old: 380, now: Date.now(), labelDelay: service.labelDelay });
    await organizationData(service.db, o).transactions.insert(shadowRecords(rows, BUILT_IN, 'cm_strict'));
    const api = await member(`/api/organizations/${o}/challengers/report`);
    const c = api.challengers.find((x: { model_id: string }) => x.model_id === 'cm_strict');
    t.equal(c.overall.transactions, 380, 'the API counts the old rows only');
    await open(page, `${mine}-verdict`);

    // The page asked for its own report a moment after the test did: `evaluated_until` (now minus
    // the label delay) may be a second or two later on the page.
    const scope = await text(`${report}-scope`);
    const covers = /from (\S+ \S+) UTC to (\S+ \S+) UTC .* label delay of (\d+) days/.exec(scope);
    t.ok(covers, `what it covers: ${scope}`);
    t.equal(covers![1], api.evaluated_from.slice(0, 19).replace('T', ' '), 'from the start of the first week');
    t.ok(Math.abs(Date.parse(`${covers![2]!.replace(' ', 'T')}Z`) - Date.parse(api.evaluated_until)) < 30_000, 'until the label delay before now');
    t.equal(Number(covers![3]), api.label_delay_days, 'the label delay');
    t.match(await text(`${report}-caveat`), /shaped by the model that decided/, 'the main caveat');
    t.equal(await text(`${mine}-verdict strong`), VERDICTS[c.overall.verdict]![0], `the verdict in words: ${c.overall.verdict}`);
    t.match(await text(`${mine}-verdict`), `over ${c.overall.transactions} transactions (${c.overall.frauds} fraud)`);
    t.same(await page.locator(`${mine}-evidence li`).allTextContents(), c.overall.evidence, 'the evidence lines');

    const figures = await page
      .locator(`${mine}-figures tbody tr`)
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((x) => x.textContent)));
    const want = (
      [
        [c.overall.average_precision, false],
        [c.overall.roc_auc, false],
        [c.overall.card_precision_at_k, false],
        [c.overall.calibration_error, false],
        [c.overall.money.fraud_blocked, true],
        [c.overall.money.legit_blocked, true],
      ] as const
    ).map(([f, amount]) => [
      shown(f.active.value, amount),
      shown(f.challenger.value, amount),
      diff(f.difference, amount),
      f.favours === 'challenger' ? 'the challenger' : f.favours === 'active' ? 'the active model' : 'neither: no clear difference',
    ]);
    t.same(
      figures.map((r) => r[0]),
      [
        'Average precision (AP)',
        'ROC AUC',
        'Card precision@100',
        'Calibration error (lower is better)',
        'Fraud blocked (amount)',
        'Legitimate blocked (amount, lower is better)',
      ],
    );
    t.same(
      figures.map((r) => r.slice(1)),
      want,
      'active, challenger, difference with its interval, favours: as the API says',
    );
    t.same(
      await page.locator(`${mine}-figures th`).allTextContents(),
      ['Figure', 'Active model', 'Challenger', 'Difference [95 % interval]', 'Favours'],
      'with column headers',
    );
    t.match(await text(`${mine}-figures caption`), /difference is the challenger’s minus the active model’s/, 'and a caption');

    const changed = c.overall.decisions_changed;
    t.ok(changed.count > 0);
    t.match(
      await text(`${mine}-changes-count`),
      `${changed.count} of ${c.overall.transactions} decisions (${(changed.share * 100).toFixed(1)} %) would change`,
    );
    const byChange = await page
      .locator(`${mine}-changes tbody tr`)
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((x) => x.textContent)));
    t.same(
      byChange.sort(),
      Object.entries(changed.by_change as Record<string, number>)
        .map(([k, n]) => [k.replace('->', ' → '), String(n)])
        .sort(),
      'the decisions that would change, by change',
    );

    const weeks = await page.locator(`${mine}-weeks tbody tr`).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((x) => x.textContent)));
    t.same(
      weeks,
      c.weeks.map((w: Record<string, any>) => [
        w.week,
        String(w.transactions),
        String(w.frauds),
        VERDICTS[w.verdict]![1],
        w.average_precision ? diff(w.average_precision.difference) : '— (no fraud)',
      ]),
      'each week: transactions, frauds, verdict, AP difference',
    );

    await page.screenshot({ path: `${SHOTS}models-challengers.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at 390 px');
    await page.screenshot({ path: `${SHOTS}models-challengers-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'at 390 px: no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  await t.test('the backtest over imported history, apart and labelled as one', async (t) => {
    // Imported payments older than the label delay, their features replayed as an import's job does.
    const now = Date.now();
    const imported: NewTransaction[] = Array.from({ length: 200 }, (_, i) => ({
      transaction_id: `imp-${i}`,
      time: now - service.labelDelay - (i + 1) * 3_600_000,
      amount: 20 + (i % 37),
      customer_id: `ic-${i % 30}`,
      merchant_id: i % 5 === 0 ? 'im-bad' : `im-${i % 7}`,
      location: 'Lisbon',
      payment_type: 'card_present',
      source: 'import',
      label: i % 5 === 0 && i % 2 === 0 ? 1 : 0,
      label_known_ms: now - (i + 1) * 3_600_000,
    }));
    await organizationData(service.db, o).transactions.insert(imported);
    t.equal(await computeImportedFeatures(service.db, o, service.scorer!.bundle), 200, 'each with its features');
    const c = (await member(`/api/organizations/${o}/challengers/report`)).challengers.find((x: { model_id: string }) => x.model_id === 'cm_strict');
    const b = c.backtest;
    t.match(b, { kind: 'backtest', transactions: 200, comparison: { transactions: 200, frauds: 20 } }, 'the API has it');
    await open(page, `${mine}-backtest-verdict`);
    t.equal(await text(`${mine}-backtest-title`), 'Backtest over imported history (not live traffic)', 'under a heading of its own');
    t.match(
      await text(`${mine}-backtest-scope`),
      `The 200 most recent imported transactions older than the label delay, from ${b.from.slice(0, 19).replace('T', ' ')} UTC to ${b.to.slice(0, 19).replace('T', ' ')} UTC`,
      'what it scored',
    );
    t.match(await text(`${mine}-backtest-caveat`), /not live traffic.*flatter/, 'and why it can flatter a model');
    t.equal(await text(`${mine}-backtest-verdict strong`), VERDICTS[b.comparison.verdict]![0], `its verdict: ${b.comparison.verdict}`);
    t.same(await page.locator(`${mine}-backtest-evidence li`).allTextContents(), b.comparison.evidence, 'its evidence');
    t.equal(await page.locator(`${mine}-backtest-figures tbody tr`).count(), 6, 'its figures');
    t.equal(await text(`${mine}-verdict strong`), VERDICTS[c.overall.verdict]![0], 'the live comparison unchanged beside it');
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
  });

  await t.test('promote from the page, the history says who; roll back', async (t) => {
    await page.click('#model-cm_strict-promote');
    await page.waitForFunction(() => document.querySelector('#model-cm_strict-state')?.textContent?.startsWith('Active'));
    t.match(
      dialogs.at(-1),
      /^Promote strict in Modelworth\? It decides every payment .* from the next request .* in place of the built-in model/,
      'confirmed first, saying when it takes effect',
    );
    t.equal(await page.evaluate(() => document.activeElement?.id), 'model-cm_strict-title', 'focus on the promoted model');
    t.match(await text('#model-cm_strict-status'), /Promoted strict: it decides Modelworth's payments from the next request/);
    t.match(
      (await models()).find((m) => m.id === 'cm_strict'),
      { active: true, challenger: false },
    );
    t.ok(await page.isVisible('#model-cm_strict-deactivate'), 'the active model can be deactivated');
    const audit = (await member(`/api/organizations/${o}/models/audit`)).data;
    t.match(audit[0], { action: 'promoted', by: ownerId, model_id: 'cm_strict', previous_model_id: null });
    const [first] = await historyRows();
    t.same(first?.slice(1), ['Model Owner', 'Promoted', 'strict (cm_strict)', 'in place of the built-in model'], 'the history lists the promotion with who');
    t.equal(first?.[0], `${audit[0].at.slice(0, 19).replace('T', ' ')} UTC`, 'and when');
    t.match(await text(`${mine} > p.muted`), /^Now the active model/, 'the report says the challenger is active now');

    await page.click(`#rollback-${o}`);
    await page.waitForFunction((h) => document.querySelector(`${h} tbody tr td:nth-child(3)`)?.textContent === 'Rolled back', history);
    t.match(dialogs.at(-1), /^Roll back the last promotion in Modelworth\? The model active before it decides again/);
    t.equal(await page.evaluate(() => document.activeElement?.id), `history-${o}-title`, 'focus on the history');
    t.match(await text(`${history}-status`), /Rolled back strict \(cm_strict\): the built-in model decides Modelworth's payments again/);
    t.same((await historyRows())[0]?.slice(1), ['Model Owner', 'Rolled back', 'strict (cm_strict)', 'the built-in model decides again']);
    t.notOk(
      (await models()).some((m) => m.active),
      'no custom model is active',
    );
    t.match(await text('#model-cm_strict-state'), /^Candidate/);

    // Nothing left to undo: the service's message and fix, beside the button that was pressed. The
    // browser logs the API's 409; that one is expected.
    const logged = problems.length;
    const expected409 = page.waitForEvent('console', (m) => /status of 409/.test(m.text()));
    await page.click(`#rollback-${o}`);
    await page.waitForSelector(`${history}-status .error`);
    await expected409;
    const added = problems.splice(logged);
    t.ok(
      added.every((m) => /status of 409/.test(m)),
      `only the expected 409 was logged: ${JSON.stringify(added)}`,
    );
    t.match(
      await text(`${history}-status .error`),
      /There is no promotion to roll back.*See the organization's model history/,
      "the API's detail.message and detail.fix",
    );
    t.equal(await page.evaluate(() => document.activeElement?.id), `rollback-${o}`, 'focus stays on the button');
    t.equal((await historyRows()).length, (await member(`/api/organizations/${o}/models/audit`)).data.length, 'every entry of the history is listed');
  });

  await t.test('a member sees the report and the history, with no owner button', async (t) => {
    const memberPage = await watchedPage(page.context().browser()!, problems);
    await server.signIn(memberPage, { sub: 'model-member', email: 'member@example.com', name: 'Mem Ber' });
    await memberPage.waitForSelector('#who');
    const me = await memberApi(memberPage)('/api/auth/me');
    await service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [o, me.user.id]);
    await open(memberPage, `${mine}-verdict`);
    t.ok((await text(`${mine}-verdict strong`, memberPage)).length > 0, 'the verdict');
    t.ok((await memberPage.locator(`${mine}-figures tbody tr`).count()) === 6, 'the figures');
    t.same(await historyRows(memberPage), await historyRows(), "the same history as the owner's");
    for (const control of [
      '#model-cm_strict-challenger',
      '#model-cm_strict-promote',
      '#model-cm_strict-deactivate',
      '#model-cm_lenient-promote',
      `#rollback-${o}`,
    ])
      t.equal(await memberPage.locator(control).count(), 0, `no ${control}`);
    t.equal(await memberPage.locator('main button').count(), 0, 'no button at all');
    t.match(await text('#model-cm_strict', memberPage), /Only owners of Modelworth make a model a challenger, promote or deactivate it/);
    t.same(await accessibilityProblems(memberPage), [], "a member's view: no serious or critical accessibility problem (axe-core)");
    await memberPage.close();
  });

  t.same(problems, [], 'no console errors');
});
