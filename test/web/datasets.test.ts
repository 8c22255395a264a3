// The Datasets page end to end in headless Chromium, as a guest: a file with PaySim's header (rows
// made here, deterministic, labelled so that the model cannot rank them) gets a pre-filled mapping
// with example values beside each column and the label among them, is scored after one click, and
// shows the decisions and bands, the metrics and a plain warning that the scores look unreliable;
// the job card comes into view when the job starts, the download is named after the file, and the
// upload and its job are listed as this browser's past uploads (still there after a reload, linking
// back to the results). Screenshots at 1366 and 390 px go to artifacts/screenshots/datasets-*.png.

import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { readCsv } from '../support/csv.ts';
import { start } from '../support/server.ts';
import { accessibilityProblems, launch, listen, noBrowser, SHOTS, watchedPage } from '../support/browser.ts';

const PAYSIM_HEADER = 'step,type,amount,nameOrig,oldbalanceOrg,newbalanceOrig,nameDest,oldbalanceDest,newbalanceDest,isFraud,isFlaggedFraud';
const ROWS = 300;

/** PaySim-shaped rows from a fixed seed. Fraud is put on the largest amounts and on nothing else
 *  the model reads (no history, no pattern), so its ranking on this file is close to chance and
 *  the warning must appear. */
function paysim(): string {
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const types = ['PAYMENT', 'TRANSFER', 'CASH_OUT', 'DEBIT', 'CASH_IN'];
  const lines = [PAYSIM_HEADER];
  for (let i = 0; i < ROWS; i++) {
    const amount = Math.round((5 + next() * 5000) * 100) / 100;
    const before = Math.round(next() * 20000 * 100) / 100;
    const fraud = amount > 4600 ? 1 : 0;
    const customer = `C${1000000 + Math.floor(next() * 60)}`;
    const merchant = `M${2000000 + Math.floor(next() * 15)}`;
    lines.push(
      [
        1 + Math.floor(i / 25),
        types[Math.floor(next() * types.length)],
        amount.toFixed(2),
        customer,
        before.toFixed(2),
        Math.max(0, before - amount).toFixed(2),
        merchant,
        '0.00',
        amount.toFixed(2),
        fraud,
        0,
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

t.test('datasets page: a PaySim file from upload to results', { skip: noBrowser }, async (t) => {
  const s = await start({});
  const base = await listen(s);
  const browser = await launch();
  t.teardown(async () => {
    await browser.close();
    await s.close();
  });
  const problems: string[] = [];
  const csv = paysim();
  const frauds = csv
    .trim()
    .split('\n')
    .slice(1)
    .filter((l) => l.split(',')[9] === '1').length;
  t.ok(frauds > 10 && frauds < ROWS / 2, `${frauds} of ${ROWS} rows labelled fraud`);

  const page = await watchedPage(browser, problems, 1366);
  /** Screenshots at both widths, with axe-core's serious and critical problems at each. */
  const shoot = async (t: Test, p: Page, name: string) => {
    await p.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
    t.same(await accessibilityProblems(p), [], 'no serious or critical accessibility problem (axe-core)');
    await p.setViewportSize({ width: 390, height: 844 });
    await p.screenshot({ path: `${SHOTS}${name}-phone.png`, fullPage: true });
    t.same(await accessibilityProblems(p), [], 'no serious or critical accessibility problem at 390 px (axe-core)');
    await p.setViewportSize({ width: 1366, height: 900 });
  };
  await page.goto(`${base}/#/datasets`);
  await page.waitForSelector('#dataset-history table, #dataset-history p:not(:has-text("Loading"))');

  await t.test('the page: a heading, plain guidance, a drop zone with nothing nested in it', async (t) => {
    t.equal(await page.locator('h1').textContent(), 'Datasets');
    t.equal(await page.locator('#drop').evaluate((e) => e.tagName), 'BUTTON', 'the drop zone is the button');
    t.equal(await page.locator('#drop').locator('a, button, input, label, select, textarea, [tabindex]').count(), 0, 'no interactive control inside it');
    const text = (await page.locator('main').textContent())!;
    t.notMatch(text, /\/api\//, 'no API paths in the guidance');
    await page.waitForFunction(() => /deleted after \d+ hours/.test(document.querySelector('#dataset-limits')?.textContent ?? ''));
    t.match(await page.locator('#dataset-history').textContent(), /Nothing uploaded yet/);
  });

  await t.test('upload: the suggested mapping, with example values and the label', async (t) => {
    await page.setInputFiles('#dataset-file', { name: 'paysim-sample.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForSelector('#mapping');
    const chosen = await page.evaluate(() =>
      Object.fromEntries([...document.querySelectorAll<HTMLSelectElement>('#mapping select')].map((s) => [s.name, s.value])),
    );
    t.same(
      chosen,
      {
        amount: 'amount',
        customer_id: 'nameOrig',
        merchant_id: 'nameDest',
        transaction_id: '',
        timestamp: '',
        location: '',
        payment_type: 'type',
        label: 'isFraud',
      },
      'pre-filled with the suggestion',
    );
    t.ok(await page.locator('#map-label').isVisible(), 'the label is in the editor');
    t.match(await page.locator('#samples-customer_id').textContent(), /^e\.g\. C1\d{6}, C1\d{6}, C1\d{6}$/, 'example values beside the chosen column');
    t.match(await page.locator('#samples-payment_type').textContent(), /(PAYMENT|TRANSFER|CASH_OUT|DEBIT|CASH_IN)/);
    t.match(await page.locator('#time-note').textContent(), /“step” counts hours/, 'why step is not the time');
    const fileColumns = await page.locator('#file-columns tbody tr').allTextContents();
    t.equal(fileColumns.length, 11, 'every column of the file, with its values');
    t.match(
      fileColumns.find((r) => r.startsWith('isFlaggedFraud')),
      /not used/,
    );
    t.match(
      fileColumns.find((r) => r.startsWith('isFraud')),
      /Fraud label/,
    );
    const guidance = (await page.locator('#what-to-fix').textContent())!;
    t.match(guidance, /could not tell which columns hold the customer and the merchant\./, 'what is wrong, in words');
    t.notMatch(guidance, /\/api\/|POST/, 'no API paths');
    t.match(await page.locator('#what-to-fix .reason-code').textContent(), /validation_failed/, 'the reason code in a muted line');
    await shoot(t, page, 'datasets-paysim-mapping');
  });

  let jobId = '';
  await t.test('accept it, score, see decisions, bands and the warning', async (t) => {
    await page.getByRole('button', { name: 'Apply mapping' }).click();
    await page.waitForSelector('#dataset');
    t.match(await page.locator('#dataset').textContent(), new RegExp(`${ROWS} rows · labelled · valid`));
    await page.waitForSelector('#dataset ~ .card table tbody tr');
    await page.getByRole('button', { name: 'Score this dataset' }).click();
    await page.waitForSelector('#job-card');
    await page.waitForFunction(() => {
      const r = document.querySelector('#job-card')!.getBoundingClientRect();
      return r.top >= 0 && r.top < innerHeight - 40;
    });
    t.pass('the job card is scrolled into view');
    await page.waitForSelector('#results #page-of', { timeout: 180_000 });
    jobId = new URLSearchParams(page.url().split('?')[1]).get('job') ?? '';
    t.match(jobId, /^job_/, 'the address names the job');
    const job = await (await fetch(`${base}/api/jobs/${jobId}`)).json();
    const summary = job.summary;
    const decisions = await page.locator('#summary-decisions td').allTextContents();
    t.same(
      decisions,
      (['approve', 'review', 'block'] as const).map(
        (d) => `${summary.decisions[d].toLocaleString('en')} (${((summary.decisions[d] / ROWS) * 100).toFixed(1)} %)`,
      ),
      'counts and shares per decision',
    );
    const bands = await page.locator('#summary-bands td').allTextContents();
    t.same(
      bands,
      (['low', 'medium', 'high', 'critical'] as const).map(
        (b) => `${summary.bands[b].toLocaleString('en')} (${((summary.bands[b] / ROWS) * 100).toFixed(1)} %)`,
      ),
      'counts and shares per band',
    );
    t.ok(summary.metrics.roc_auc < 0.6, `the model cannot rank this file (ROC AUC ${summary.metrics.roc_auc.toFixed(3)})`);
    const warning = (await page.locator('#unreliable').textContent())!;
    t.match(
      warning,
      /^These scores look unreliable for this file: the model ranks your labelled fraud barely better than chance \(ROC AUC 0\.\d\d, where 0\.5 is a coin toss\)/,
      'the warning in words',
    );
    t.ok(await page.locator('#file-metrics').count(), 'the metrics on the labelled file');
    t.equal(summary.drift.verdict, 'degraded', "the labelled file's outcomes decide: the model fails on it");
    t.equal(summary.drift.basis, 'outcomes');
    const drift = (await page.locator('.drift-warning').textContent())!;
    t.equal(await page.locator('.drift-warning').getAttribute('data-verdict'), 'degraded');
    t.match(drift, /^Degraded: measured on this data's outcomes, the model does worse than its test figures allow\./, 'the verdict says so plainly');
    t.match(
      drift,
      new RegExp(
        `On this file's ${summary.drift.measured.fraud} fraud and ${summary.drift.measured.legit.toLocaleString('en')} legitimate outcomes: average precision 0\\.\\d{3} \\(at least 0\\.\\d{3} expected\\)`,
      ),
      'with the measured figures and what was expected',
    );
    t.match(drift, /payment type (TRANSFER|CASH_OUT|PAYMENT)/, 'and names the payment types the model never saw');
    await shoot(t, page, 'datasets-paysim-results');
  });

  await t.test('the download is named after the file', async (t) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    t.equal(download.suggestedFilename(), 'paysim-sample.scored.csv');
    const res = await fetch(`${base}/api/jobs/${jobId}/download`);
    t.equal(res.headers.get('content-disposition'), 'attachment; filename="paysim-sample.scored.csv"', 'and the service names it so too');
    const body = await res.text();
    t.notMatch(body, /Drift/, 'the drift warning is on the page, not in the file');
    const { header, rows } = await readCsv(body);
    t.same(header.slice(0, 4), ['row', 'transaction_id', 'amount', 'customer_id'], 'a CSV parser reads the header from the first line');
    t.equal(rows.length, ROWS, 'and every row after it');
    t.equal(body.trim().split('\r\n').length, ROWS + 1, 'the header and every row, nothing else');
  });

  await t.test('past uploads list the upload and its job, after a reload too', async (t) => {
    await page.goto(`${base}/#/datasets`);
    await page.reload();
    await page.waitForSelector('#dataset-history table');
    const row = page.locator('#dataset-history tbody tr').first();
    t.match(await row.textContent(), new RegExp(`paysim-sample\\.csv.*${ROWS}.*ready.*balanced · results`));
    t.equal(await row.locator('a.job-link').getAttribute('href'), `#/datasets?job=${jobId}`);
    await row.locator('a.job-link').click();
    await page.waitForSelector('#results #page-of');
    t.match(await page.locator('#job-card h2').textContent(), /Scoring paysim-sample\.csv \(balanced\)/, 'the results again, from the list');
    t.ok(await page.locator('#unreliable').count(), 'with the warning');
    await page.screenshot({ path: `${SHOTS}datasets-history.png`, fullPage: true });
  });

  await page.close();
  // Chromium logs every response that is not 2xx; the upload of a file that needs its columns
  // mapped answers 422 by design (the API's contract), once. Nothing else may be logged.
  const expected = problems.filter((p) => /status of 422 \(Unprocessable Entity\)/.test(p));
  t.equal(expected.length, 1, 'the one 422 of the upload that needed a mapping');
  t.same(
    problems.filter((p) => !expected.includes(p)),
    [],
    'no console errors or CSP violations',
  );
});
