// The Models page's "Train from {organization}'s data" in headless Chromium, against the real server
// with sign-in through a stand-in identity provider. One organization has 90 days of transactions
// older than the label delay, scored and imported, with stored features and a fraud in five known
// (put in the database, as the import's replay would leave them); another has too little. An owner
// checks a recalibration and boosters of its own from the page: what it would train on (scored and
// imported, their span, the frauds known, the parts of the split) and the command are what
// POST /api/training/jobs answers the same request, shown in the section without the page being
// drawn again, the buttons disabled while the check runs and focus on the result; the other
// organization shows the service's not-enough-data message and fix; a member who is not an owner
// sees the section with no button. axe-core finds no serious or critical problem, nothing scrolls
// sideways at 390 px, and the console stays clean but for the refusals the checks answer.
// Screenshots go to artifacts/screenshots/.

import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { accessibilityProblems, memberApi, noBrowser, SHOTS, signedInMember, watchedPage } from '../support/browser.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { organizationData } from '../../src/storage/organization-data.ts';
import type { NewTransaction } from '../../src/storage/live-rows.ts';

const loaded = loadModelFolder('models/builtin');
if (isProblem(loaded)) throw new Error(loaded.message);
const base = loaded;
const DAY = 86_400_000;
const WIDTH = base.channels.reduce((w, c) => w + c.features.length, 0);
const LABEL_DELAY = base.file.training.label_delay_ms;

/** `n` transactions evenly over `days` days ending a day before the label delay before `now`, every
 *  `fraudEvery`-th a fraud known a day after it; every third one scored, the others imported. */
function history(o: { n: number; days: number; fraudEvery: number; now: number }): NewTransaction[] {
  const newest = o.now - LABEL_DELAY - DAY;
  return Array.from({ length: o.n }, (_, i): NewTransaction => {
    const time = newest - Math.round(((o.n - 1 - i) * o.days * DAY) / (o.n - 1));
    const fraud = i % o.fraudEvery === 0;
    const scored = i % 3 === 0;
    return {
      transaction_id: `h-${i}`,
      time,
      amount: 20 + (i % 37),
      customer_id: `c${i % 60}`,
      merchant_id: `M${i % 9}`,
      location: 'Lisbon',
      payment_type: 'card_present',
      source: scored ? 'scored' : 'import',
      ...(scored
        ? {
            decision: { risk_score: 0.1, risk_band: 'low', decision: 'approve', mode: 'balanced' },
            response: '{}',
            decided: {
              model_id: base.file.id,
              model_decision: 'approve',
              rule_action: null,
              rule_ids: [],
              rule_errors: [],
              inputs: { cold: false, channel_scores: {}, priors: { customer: 5, merchant: 5, channel: 5 } },
            },
          }
        : {}),
      features: Float32Array.from({ length: WIDTH }, (_, k) => ((i + k) % 11) / 11),
      label: fraud ? 1 : null,
      label_known_ms: fraud ? time + DAY : null,
    };
  });
}

const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;
const count = (n: number) => n.toLocaleString('en');
const idKey = (id: string) => id.replace(/[^\w-]/g, '_');
/** The parts' rows as the page words them, a count given only when the plan has it. */
const PARTS: [string, string][] = [
  ['train', 'Training part'],
  ['validation', 'Validation part'],
  ['calibration', 'Before the test part'],
  ['test', 'Test part'],
  ['test_frauds', 'Known frauds in the test part'],
];

t.test("Models: training from an organization's data", { skip: noBrowser }, async (t) => {
  const { server, page, problems, member } = await signedInMember(t, { sub: 'train-owner', email: 'trainer@example.com', name: 'Tra Iner' });
  const { service } = server.s;
  const plenty = await member('/api/organizations', 'POST', { name: 'Plenty' });
  const sparse = await member('/api/organizations', 'POST', { name: 'Sparse' });
  const now = Date.now();
  const rows = history({ n: 900, days: 90, fraudEvery: 5, now });
  for (let i = 0; i < rows.length; i += 300) await organizationData(service.db, plenty.id).transactions.insert(rows.slice(i, i + 300));
  await organizationData(service.db, sparse.id).transactions.insert(history({ n: 30, days: 90, fraudEvery: 15, now }));

  const P = `#training-${idKey(plenty.id)}`;
  const S = `#training-${idKey(sparse.id)}`;
  const text = async (selector: string, p: Page = page) => ((await p.locator(selector).textContent()) ?? '').trim();
  const cells = (selector: string, p: Page = page) =>
    p.locator(`${selector} tbody tr`).evaluateAll((trs) => trs.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent ?? '')));
  const open = async (p: Page, selector: string) => {
    await p.goto(`${server.base}/#/models`);
    await p.waitForSelector(selector);
  };
  /** Runs `act`, which the service refuses with `status`: the browser logs that refusal, and nothing
   *  else may be logged meanwhile. */
  const refused = async <T>(t: Test, p: Page, status: number, act: () => Promise<T>): Promise<T> => {
    const logged = problems.length;
    const seen = p.waitForEvent('console', (m) => m.text().includes(`status of ${status}`));
    const out = await act();
    await seen;
    const added = problems.splice(logged);
    t.ok(
      added.every((m) => m.includes(`status of ${status}`)),
      `only the expected ${status} was logged: ${JSON.stringify(added)}`,
    );
    return out;
  };
  /** What the API answers the owner for `body`: the error's detail. */
  const asked = (t: Test, status: number, body: object) => refused(t, page, status, () => member('/api/training/jobs', 'POST', body)).then((r) => r.detail);
  /** Clicks `button` with the request held until the buttons are seen disabled, then waits for the result. */
  const check = async (t: Test, section: string, button: string, status: number) => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route('**/api/training/jobs', async (route) => {
      await held;
      await route.continue();
    });
    await refused(t, page, status, async () => {
      await page.click(`${section}-${button}`);
      await page.waitForFunction((s) => document.querySelector(`${s}-status`)?.textContent?.startsWith('Checking'), section);
      t.same(
        await page.locator(`${section}-recalibrate, ${section}-own`).evaluateAll((bs) => bs.map((b) => (b as HTMLButtonElement).disabled)),
        [true, true],
        'both buttons disabled while the check runs',
      );
      release();
      await page.waitForFunction((s) => !document.querySelector(`${s}-status`)?.textContent?.startsWith('Checking'), section);
    });
    await page.unroute('**/api/training/jobs');
    t.same(
      await page.locator(`${section}-recalibrate, ${section}-own`).evaluateAll((bs) => bs.map((b) => (b as HTMLButtonElement).disabled)),
      [false, false],
      'enabled again after it',
    );
    t.equal(await page.evaluate(() => document.activeElement?.id), `${section.slice(1)}-result-title`, 'focus on the result');
  };
  /** The plan shown against the API's `plan`, with `as_of` of the page's request at most a minute later. */
  const samePlan = async (t: Test, plan: Record<string, any>) => {
    const data = await text(`${P}-data`);
    const shown = new RegExp(
      '^As of (\\S+ \\S+) UTC, ([\\d,]+) transactions older than the label delay count: ([\\d,]+) scored through the service and ([\\d,]+) imported, ' +
        'from (\\S+ \\S+ UTC) to (\\S+ \\S+ UTC), with ([\\d,]+) frauds known\\.$',
    ).exec(data);
    t.ok(shown, `what it would train on: ${data}`);
    const pageAsOf = Date.parse(`${shown![1]!.replace(' ', 'T')}Z`);
    t.ok(pageAsOf >= Date.parse(plan.as_of) - 1_000 && pageAsOf - Date.parse(plan.as_of) < 60_000, 'counted as of the moment it was asked');
    t.same(
      shown!.slice(2),
      [
        count(plan.counts.transactions),
        count(plan.transactions.scored),
        count(plan.transactions.imported),
        utc(plan.transactions.first),
        utc(plan.transactions.last),
        count(plan.counts.frauds),
      ],
      "transactions, scored and imported, their span and the frauds known: the API's",
    );
    const parts = await cells(`${P}-parts`);
    const want = PARTS.filter(([k]) => plan.counts[k] !== undefined);
    t.same(
      parts.map(([part, n]) => [part!.split(':')[0], n]),
      want.map(([k, part]) => [part, count(plan.counts[k])]),
      "the parts' counts: the API's",
    );
    t.same(await page.locator(`${P}-parts th`).allTextContents(), ['Part', 'Transactions'], 'with column headers');
    t.equal(await text(`${P}-parts-title`), 'The parts, split by time', 'and a title');
    t.equal(await text(`${P}-command`), plan.command, 'the command is the one the API names');
  };

  await t.test('an owner checks a recalibration: the plan on the page is the API’s', async (t) => {
    await open(page, `${P}-recalibrate`);
    t.equal(await text(`${P}-title`), "Train from Plenty's data");
    t.equal(await page.locator(P).getAttribute('aria-labelledby'), `${P.slice(1)}-title`, 'the section is named by its heading');
    t.match(await text(`${P}-about`), /made from the payments scored with its API keys and the history it imported, with the outcomes known now/);
    t.match(await text(`${P}-about`), /Training runs on the server's command line, not from the dashboard/);
    t.same(await page.locator(`${P} button`).allTextContents(), ['Check a recalibration', 'Check boosters of its own'], 'two buttons, nothing else yet');
    t.equal(await page.locator(`${P}-result`).isVisible(), false, 'no result before a check');
    // The page is not drawn again by a check: an element of another section stays the same one.
    await page.evaluate((h) => document.querySelector(h)?.setAttribute('data-kept', 'yes'), `#history-${idKey(plenty.id)}`);

    const detail = await asked(t, 501, { organization_id: plenty.id, recalibrate: true });
    t.match(detail, { reason: 'not_implemented', would_run: { source: 'organization', kind: 'recalibrated', organization_id: plenty.id } });
    const plan = detail.would_run;
    t.match(
      plan.transactions,
      { scored: 300, imported: 600, first: new Date(rows[0]!.time).toISOString(), last: new Date(rows.at(-1)!.time).toISOString() },
      'the API counts what was put in',
    );
    t.equal(plan.counts.frauds, 180);
    t.equal(plan.command, `npm run train -- --organization ${plenty.id} --recalibrate`);

    await check(t, P, 'recalibrate', 501);
    t.equal(await text(`${P}-result-title`), 'A recalibration: every check passed');
    t.match(await text(`${P}-status`), /^Every check passed: Plenty has enough data for a recalibration, 900 transactions with 180 frauds known/);
    await samePlan(t, plan);
    t.notOk(
      await page
        .locator(`${P}-parts`)
        .textContent()
        .then((s) => /Training part|Validation part/.test(s ?? '')),
      'no training or validation part',
    );
    t.equal(await page.locator(`#history-${idKey(plenty.id)}[data-kept]`).count(), 1, 'the rest of the page was not drawn again');
    t.equal(await page.locator(`${P}-result .error`).count(), 0, 'no error');

    // The copy button copies, or without clipboard permission selects the command; the page goes on.
    await page.click(`${P}-copy`);
    await page.waitForFunction((s) => (document.querySelector(`${s}-copied`)?.textContent ?? '') !== '', P);
    const said = await text(`${P}-copied`);
    t.match(said, /^(Copied\.|Selected: press Ctrl\+C)/, `the copy says what it did: ${said}`);
    if (said.startsWith('Selected')) t.equal(await page.evaluate(() => getSelection()?.toString()), plan.command, 'the command selected');
  });

  await t.test('boosters of its own: the training and validation parts too', async (t) => {
    const plan = (await asked(t, 501, { organization_id: plenty.id, recalibrate: false })).would_run;
    t.match(plan, { kind: 'own_boosters', counts: { train: Number, validation: Number } });
    t.equal(plan.command, `npm run train -- --organization ${plenty.id}`);
    await check(t, P, 'own', 501);
    t.equal(await text(`${P}-result-title`), 'Boosters of its own: every check passed');
    await samePlan(t, plan);
    t.equal((await cells(`${P}-parts`)).length, 5, 'five rows');

    await page.screenshot({ path: `${SHOTS}models-training-plan.png`, fullPage: true });
    t.same(await accessibilityProblems(page), [], 'no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 390, height: 844 });
    t.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling at 390 px');
    await page.locator(P).screenshot({ path: `${SHOTS}models-training-plan-phone.png` });
    t.same(await accessibilityProblems(page), [], 'at 390 px: no serious or critical accessibility problem (axe-core)');
    await page.setViewportSize({ width: 1366, height: 900 });
  });

  await t.test("too little data: the service's message and fix", async (t) => {
    const detail = await asked(t, 422, { organization_id: sparse.id, recalibrate: true });
    t.match(detail, { reason: 'not_enough_data', message: /too few labelled frauds to recalibrate from/ });
    await check(t, S, 'recalibrate', 422);
    t.equal(await text(`${S}-result-title`), 'A recalibration: not enough data yet');
    t.equal(await text(`${S}-result .error strong`), detail.message, "the API's detail.message");
    t.equal(await text(`${S}-result .error p`), detail.fix, 'and detail.fix');
    t.match(await text(`${S}-status`), /^Sparse does not have enough data for a recalibration yet/);
    t.equal(await page.locator(`${S}-command`).count(), 0, 'no command');
    t.equal(await text(`${P}-result-title`), 'Boosters of its own: every check passed', "the other organization's result stays");
    await page.locator(S).screenshot({ path: `${SHOTS}models-training-plan-not-enough.png` });
    t.same(await accessibilityProblems(page), [], 'with the error: no serious or critical accessibility problem (axe-core)');
  });

  await t.test('a member who is not an owner sees the section with no button', async (t) => {
    const memberPage = await watchedPage(page.context().browser()!, problems);
    await server.signIn(memberPage, { sub: 'train-analyst', email: 'analyst@example.com', name: 'Ana Lyst' });
    await memberPage.waitForSelector('#who');
    const me = await memberApi(memberPage)('/api/auth/me');
    await service.db.query(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'analyst')`, [plenty.id, me.user.id]);
    await open(memberPage, `${P}-title`);
    t.equal(await text(`${P}-title`, memberPage), "Train from Plenty's data", 'the section is there');
    t.equal(await memberPage.locator(`${P} button`).count(), 0, 'no button in it');
    t.equal(await memberPage.locator('main button').count(), 0, 'no button at all');
    t.match(await text(`${P}-owners`, memberPage), /^Only an owner of Plenty can check this/);
    t.equal(await memberPage.locator(S).count(), 0, 'not the organization it does not belong to');
    t.same(await accessibilityProblems(memberPage), [], "a member's view: no serious or critical accessibility problem (axe-core)");
    await memberPage.close();
  });

  t.same(problems, [], 'no console errors');
});
