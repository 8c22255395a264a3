// The drift verdict, through the dataset job's own code. The matrix it must hold: this service's
// simulator at other seeds, 0.3× to 2× the population and 30 to 90 days is `ok` (by its outcomes
// when labelled, by the checks without outcomes when not); amounts ×10 or every location new,
// without outcomes, is `shifted`; a labelled file on which the model fails is `degraded`. Also the
// built-in test split (ok), a file from another distribution (PaySim-shaped transfers: degraded by
// its random labels, shifted without them) and its plain CSV download. Every direction is tested,
// so each check can fail either way.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractBatch } from '../../src/domain/features/extract.ts';
import { History } from '../../src/domain/history/history.ts';
import { scoreDataset } from '../../src/jobs/batch-score.ts';
import { csvStream } from '../../src/jobs/results.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/bundle-types.ts';
import { DRIFT_WARNING, DriftCounter, psi, PSI_MAJOR, PSI_MODERATE, type DriftReport } from '../../src/model/drift.ts';
import { quantileBins } from '../../src/training/reference.ts';
import { combineInto } from '../../src/model/combine.ts';
import { isColdStart } from '../../src/training/coldstart.ts';
import { DEFAULT_SIMULATION, simulate, toCsv } from '../../src/domain/simulate.ts';
import { Rng } from '../../src/domain/rng.ts';
import { readCsv } from '../support/csv.ts';
import { shuffledLabels, unlabelled } from '../support/drift-files.ts';
import { tempDir } from '../support/temp.ts';

const bundle = loadModelFolder('models/builtin');
if (isProblem(bundle)) throw new Error(bundle.message);
const dir = tempDir('drift-');

async function job(name: string, csv: string, mapping = {}) {
  const path = join(dir, `${name}.csv`);
  writeFileSync(path, csv);
  const resultPath = join(dir, `${name}.ndjson`);
  const rows = csv.trim().split('\n').length - 1;
  const summary = await scoreDataset(bundle as never, { path, mapping, mode: 'balanced', resultPath, expectedRows: rows, progress: () => {} });
  return { summary, resultPath };
}

t.test('quantile bins and PSI', async (t) => {
  const values = Float64Array.from({ length: 1000 }, (_, i) => i);
  const bins = quantileBins(values);
  t.equal(bins.shares.length, 10);
  t.ok(
    bins.shares.every((s) => Math.abs(s - 0.1) < 1e-9),
    'deciles hold a tenth each',
  );
  t.equal(psi(bins.shares, bins.shares), 0, 'the same distribution: 0');
  t.ok(psi(bins.shares, [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0]) > PSI_MAJOR, 'all mass in two bins: a major shift');
  const binary = quantileBins(Float64Array.from({ length: 100 }, (_, i) => (i < 80 ? 0 : 1)));
  t.same(binary.edges, [0], 'a 0/1 feature: two bins');
  t.same(binary.shares, [0.8, 0.2]);
});

t.test('the model ships its reference; the built-in test split is ok', async (t) => {
  t.ok(bundle.reference, 'reference.json loaded with the model');
  const ref = bundle.reference!;
  t.equal(
    ref.features.length,
    bundle.channels.reduce((n, c) => n + c.features.length, 0),
    'every feature',
  );
  t.ok(ref.categories.payment_type.has('card_present'));
  // The test split of the training data: every row's features from the whole history before it.
  const rows = simulate();
  const { features } = extractBatch(rows, new History(bundle.file.training.label_delay_ms));
  const matrices = bundle.channels.map((c) => features[c.name]);
  const raw = bundle.channels.map((c, k) => c.engine.predictRawBatch(matrices[k]!));
  const [from, to] = (bundle.file.training as unknown as { split_bounds: { test: [number, number] } }).split_bounds.test;
  const counter = new DriftCounter(ref);
  const out = new Float64Array(1 + 2 * bundle.channels.length);
  let n = 0;
  rows.forEach((r, i) => {
    if (r.time < from || r.time > to) return;
    n++;
    counter.addRow(matrices, i, r.payment_type, r.location);
    combineInto(
      bundle,
      raw.map((x) => x[i]!),
      isColdStart(features, i, bundle.file.cold_start.min_prior),
      'balanced',
      out,
      0,
    );
    counter.addScore(out[0]!, out[0]! >= bundle.file.thresholds.balanced.review);
  });
  const report = counter.report()!;
  t.ok(n > 40_000, `${n} test rows`);
  t.equal(report.verdict, 'ok', `test split: ${brief(report)}`);
  t.ok(report.score_psi < 0.1, `score PSI ${report.score_psi}`);
  t.equal(report.warning, null);
});

// The verdict matrix: files from this service's own simulator at other seeds, 0.3× to 2× the default
// population and 30 to 90 days are `ok`, decided by their outcomes when labelled and by the checks
// without outcomes when not; the same with amounts ×10 or every location new, unlabelled, are
// `shifted`; a labelled file on which the model fails (ROC AUC below 0.6) is `degraded`.
const S = DEFAULT_SIMULATION;
const population = (seed: number, scale: number, days: number) =>
  simulate({ seed, customers: Math.round(S.customers * scale), merchants: Math.round(S.merchants * scale), days });
const brief = (d: DriftReport) =>
  JSON.stringify({
    verdict: d.verdict,
    basis: d.basis,
    reasons: d.reasons,
    signals: d.signals,
    score_psi: d.score_psi,
    measured: d.measured && {
      auc: d.measured.roc_auc,
      ap: d.measured.average_precision,
      ece: d.measured.expected_calibration_error,
      allowed: d.measured.allowed,
    },
  });

t.test('own simulator, other seeds, 0.3× to 2× the population, 30 to 90 days: ok', async (t) => {
  const cells: [seed: number, scale: number, days: number][] = [
    [4242, 0.3, 30],
    [777, 0.3, 90],
    [99, 2, 30],
    [31, 0.5, 60],
  ];
  for (const [seed, scale, days] of cells) {
    const rows = population(seed, scale, days);
    const { summary } = await job(`own-${seed}`, toCsv(rows));
    const d = summary.drift!;
    const cell = `seed ${seed}, ${scale}× population, ${days} days`;
    t.equal(d.verdict, 'ok', `${cell}: ${brief(d)}`);
    t.equal(d.basis, 'outcomes', `${cell}: labelled, so its outcomes decide`);
    t.ok(
      d.measured!.average_precision >= d.measured!.allowed!.average_precision_min &&
        d.measured!.expected_calibration_error <= d.measured!.allowed!.expected_calibration_error_max,
      `${cell}: measured within what the test figures allow`,
    );
    t.same(d.signals, [], `${cell}: and nothing the checks without outcomes would call a shift`);
    t.ok(d.score_psi < PSI_MODERATE, `${cell}: score PSI ${d.score_psi}`);
    t.ok(
      d.features.some((f) => !f.in_verdict && f.psi >= PSI_MAJOR),
      `${cell}: history-dependent features moved (${d.features
        .filter((f) => f.psi >= PSI_MAJOR)
        .map((f) => f.feature)
        .join(', ')}) and are left out of the verdict`,
    );
  }
  // Without outcomes, the checks decide, and find nothing.
  for (const [seed, scale, days] of [
    [4242, 0.3, 30],
    [99, 2, 30],
  ] as const) {
    const { summary } = await job(`own-unlabelled-${seed}`, unlabelled(population(seed, scale, days)));
    const d = summary.drift!;
    t.equal(d.verdict, 'ok', `seed ${seed} without labels: ${brief(d)}`);
    t.equal(d.basis, 'scores');
    t.equal(d.measured, null, 'nothing measured');
    t.equal(d.warning, null);
    t.ok(d.estimated.precision! > 0.3 && d.estimated.recall! > 0.5, `an estimate from the calibrated scores: ${JSON.stringify(d.estimated)}`);
  }
});

t.test('the same with amounts ×10, or every location new, without outcomes: shifted', async (t) => {
  const tenfold = population(6, 1, 60).map((r) => ({ ...r, amount: Math.round(r.amount * 1000) / 100 }));
  const amounts = (await job('tenfold', unlabelled(tenfold))).summary.drift!;
  t.equal(amounts.verdict, 'shifted', brief(amounts));
  t.ok(amounts.reasons.includes('feature:amount'), 'the amount moved');
  t.equal(amounts.basis, 'features', 'a feature of the payment itself decided');
  t.ok(amounts.score_psi >= PSI_MODERATE, `the scores moved too (PSI ${amounts.score_psi})`);
  t.match(amounts.warning, DRIFT_WARNING);
  const elsewhere = population(7, 0.5, 30).map((r) => ({ ...r, location: `New ${r.location}` }));
  const places = (await job('elsewhere', unlabelled(elsewhere))).summary.drift!;
  t.equal(places.verdict, 'shifted', brief(places));
  t.equal(places.basis, 'categories');
  t.same(places.reasons, ['unseen_categories']);
  t.equal(places.unseen_share, 1);
  t.ok(
    places.unseen_categories.location.every((l) => l.startsWith('New ')),
    'the new locations are listed',
  );
});

t.test('a labelled file on which the model fails: degraded, by its outcomes', async (t) => {
  // The service's own transactions with their labels shuffled: the payments look as the model
  // knows them, the outcomes have nothing to do with them.
  const shuffled = shuffledLabels(population(8, 1, 60), 8);
  const labels = shuffled.map((r) => r.label);
  const { summary } = await job('shuffled', toCsv(shuffled));
  const d = summary.drift!;
  t.ok(summary.metrics!.roc_auc < 0.6, `the model fails on it: ROC AUC ${summary.metrics!.roc_auc.toFixed(3)}`);
  t.equal(d.verdict, 'degraded', brief(d));
  t.equal(d.basis, 'outcomes');
  t.ok(d.reasons.includes('average_precision'), d.reasons.join(', '));
  t.same(d.signals, [], 'though nothing without outcomes would have seen it');
  t.match(
    d.warning,
    /^Degraded: measured on this data's outcomes, the model does worse than its test figures allow \(average precision 0\.0\d+ where at least 0\.\d+ is expected/,
  );
  t.equal(d.measured!.fraud, labels.filter((l) => l === 1).length);
});

t.test('a file from another distribution: its unseen values and a warning in the job, not in the download', async (t) => {
  // PaySim-shaped: mobile-money transfers, amounts a thousand times the card payments', payment
  // types the model never saw, no location, labels at random.
  const rng = new Rng(11);
  const types = ['TRANSFER', 'CASH_OUT', 'PAYMENT', 'CASH_IN', 'DEBIT'];
  const lines = ['step,type,amount,nameOrig,nameDest,isFraud'];
  for (let i = 0; i < 3000; i++) {
    const type = types[Math.floor(rng.uniform() * types.length)]!;
    lines.push(
      `${1 + Math.floor(i / 100)},${type},${(rng.uniform() * 400_000 + 1000).toFixed(2)},C${Math.floor(rng.uniform() * 2500)},M${Math.floor(rng.uniform() * 800)},${rng.uniform() < 0.05 ? 1 : 0}`,
    );
  }
  const mapping = { payment_type: 'type', customer_id: 'nameOrig', merchant_id: 'nameDest' };
  const { summary, resultPath } = await job('paysim', `${lines.join('\n')}\n`, { ...mapping, label: 'isFraud' });
  const drift = summary.drift!;
  t.equal(drift.verdict, 'degraded', `its random labels decide: ${brief(drift)}`);
  t.equal(drift.basis, 'outcomes');
  t.ok(drift.signals.includes('unseen_categories') && drift.signals.includes('feature:amount'), `and the shift is listed: ${drift.signals.join(', ')}`);
  t.same([...drift.unseen_categories.payment_type].sort(), [...types].sort(), 'every payment type is unseen');
  t.same(drift.unseen_categories.location, [], 'no location given: missing, not a value never seen');
  t.equal(drift.unseen_share, 1);
  t.ok(drift.features.find((f) => f.feature === 'amount')!.out_of_range_share > 0.9, 'amounts beyond the training range');
  t.match(drift.warning, /^Degraded: /);
  const withoutLabels = (await job('paysim-unlabelled', `${lines.map((l) => l.slice(0, l.lastIndexOf(','))).join('\n')}\n`, mapping)).summary.drift!;
  t.equal(withoutLabels.verdict, 'shifted', 'without its labels: shifted');
  t.equal(withoutLabels.basis, withoutLabels.signals[0] === 'score_psi' ? 'scores' : 'categories', brief(withoutLabels));
  t.match(withoutLabels.warning, DRIFT_WARNING);
  const download = await text(csvStream(resultPath));
  t.notMatch(download, /Drift|Degraded/, 'the warning is not in the file');
  const { header, rows } = await readCsv(download);
  t.same(header.slice(0, 3), ['row', 'transaction_id', 'amount'], 'a CSV parser finds the header on the first line');
  t.equal(rows.length, 3000, 'and every row after it');
  t.equal(rows[0]!.row, '1');
});

t.test('too few rows: no report', async (t) => {
  const counter = new DriftCounter(bundle.reference!);
  t.equal(counter.report(), null);
});

async function text(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
