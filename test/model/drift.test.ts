// Drift against the model's reference, through the dataset job's own code: the built-in test split
// and a file from the service simulator with another seed are `ok`; a file from another
// distribution (PaySim-shaped mobile-money transfers) is `shifted`, with its unseen payment types
// listed, and its download starts with the warning. Both directions are tested, so the check can
// fail either way.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractBatch } from '../../src/domain/features/extract.ts';
import { History } from '../../src/domain/history/history.ts';
import { scoreDataset } from '../../src/jobs/batch-score.ts';
import { csvStream } from '../../src/jobs/results.ts';
import { loadModelFolder } from '../../src/model/bundle.ts';
import { isProblem } from '../../src/model/model.ts';
import { DRIFT_WARNING, DriftCounter, psi, PSI_MAJOR, quantileBins } from '../../src/model/drift.ts';
import { combineInto } from '../../src/model/combine.ts';
import { isColdStart } from '../../tools/training/coldstart.ts';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { Rng } from '../../src/domain/rng.ts';
import { readCsv } from '../support/csv.ts';
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
  t.ok(bins.shares.every((s) => Math.abs(s - 0.1) < 1e-9), 'deciles hold a tenth each');
  t.equal(psi(bins.shares, bins.shares), 0, 'the same distribution: 0');
  t.ok(psi(bins.shares, [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0]) > PSI_MAJOR, 'all mass in two bins: a major shift');
  const binary = quantileBins(Float64Array.from({ length: 100 }, (_, i) => (i < 80 ? 0 : 1)));
  t.same(binary.edges, [0], 'a 0/1 feature: two bins');
  t.same(binary.shares, [0.8, 0.2]);
});

t.test('the model ships its reference; the built-in test split is ok', async (t) => {
  t.ok(bundle.reference, 'reference.json loaded with the model');
  const ref = bundle.reference!;
  t.equal(ref.features.length, bundle.channels.reduce((n, c) => n + c.features.length, 0), 'every feature');
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
    combineInto(bundle, raw.map((x) => x[i]!), isColdStart(features, i, bundle.file.cold_start.min_prior), 'balanced', out, 0);
    counter.addScore(out[0]!);
  });
  const report = counter.report()!;
  t.ok(n > 40_000, `${n} test rows`);
  t.equal(report.verdict, 'ok', `test split: ${JSON.stringify({ reasons: report.reasons, score_psi: report.score_psi })}`);
  t.ok(report.score_psi < 0.1, `score PSI ${report.score_psi}`);
  t.equal(report.warning, null);
});

t.test('a file from the service simulator with another seed is ok', async (t) => {
  const { summary, resultPath } = await job('other-seed', toCsv(simulate({ seed: 4242 })));
  const drift = summary.drift!;
  t.equal(drift.verdict, 'ok', JSON.stringify({ reasons: drift.reasons, score_psi: drift.score_psi, top: drift.features.slice(0, 3) }));
  t.same(drift.unseen_categories, { payment_type: [], location: [] });
  t.ok(drift.score_psi < PSI_MAJOR);
  const sorted = drift.features.map((f) => f.psi);
  t.same(sorted, [...sorted].sort((a, b) => b - a), 'features sorted by PSI, largest first');
  const download = await text(csvStream(resultPath));
  t.match(download, /^row,transaction_id,/, 'the header is the first line');
});

t.test('a file from another distribution is shifted, with its unseen values and a warning in the job, not in the download', async (t) => {
  // PaySim-shaped: mobile-money transfers, amounts a thousand times the card payments', payment
  // types the model never saw, no location.
  const rng = new Rng(11);
  const types = ['TRANSFER', 'CASH_OUT', 'PAYMENT', 'CASH_IN', 'DEBIT'];
  const lines = ['step,type,amount,nameOrig,nameDest,isFraud'];
  for (let i = 0; i < 3000; i++) {
    const type = types[Math.floor(rng.uniform() * types.length)]!;
    lines.push(`${1 + Math.floor(i / 100)},${type},${(rng.uniform() * 400_000 + 1000).toFixed(2)},C${Math.floor(rng.uniform() * 2500)},M${Math.floor(rng.uniform() * 800)},${rng.uniform() < 0.05 ? 1 : 0}`);
  }
  const { summary, resultPath } = await job('paysim', lines.join('\n') + '\n', { payment_type: 'type', customer_id: 'nameOrig', merchant_id: 'nameDest', label: 'isFraud' });
  const drift = summary.drift!;
  t.equal(drift.verdict, 'shifted');
  t.ok(drift.reasons.includes('unseen_categories') && drift.reasons.includes('out_of_range'), drift.reasons.join(', '));
  t.same([...drift.unseen_categories.payment_type].sort(), [...types].sort(), 'every payment type is unseen');
  t.same(drift.unseen_categories.location, [], 'no location given: missing, not a value never seen');
  t.equal(drift.unseen_share, 1);
  t.ok(drift.features.find((f) => f.feature === 'amount')!.out_of_range_share > 0.9, 'amounts beyond the training range');
  t.match(drift.warning, DRIFT_WARNING);
  const download = await text(csvStream(resultPath));
  t.notMatch(download, /Drift/, 'the warning is not in the file');
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

