// `npm run eval:handbook -- --data FILE`: the protocol end to end on a small handbook-style CSV
// with a tiny search: the published rows are printed beside ours and the same-data baseline, and the
// last line is one JSON object with every figure labelled as the test split's, each with its 95 %
// bootstrap interval, the settings tried and the spread over runs. `--help` prints the usage and
// exits 0; an unknown option or a bad value says which in one line, prints the usage, exits 2.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { handbookCsv, simulateHandbook } from '../../src/training/handbook.ts';
import { tempDir } from '../support/temp.ts';

const cli = (args: string[]) => spawnSync(process.execPath, ['tools/eval-handbook.ts', ...args], { encoding: 'utf8' });
const FIGURES = ['roc_auc', 'average_precision', 'card_precision_at_100'];

t.test('runs the protocol on a CSV and ends with JSON', async (t) => {
  const dir = tempDir('hb-');
  const csv = join(dir, 'hb.csv');
  // 140 days from 2018-04-01 reach past the protocol's test week (days 129..135).
  writeFileSync(csv, handbookCsv(simulateHandbook({ seed: 2, customers: 400, terminals: 800, days: 140 })));
  const r = cli(['--data', csv, '--iterations', '40', '--settings', '2', '--resamples', '50']);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /XGBoost, tuned \(prequential\) \(published\)\s+0\.869\s+0\.687\s+0\.303/, 'published rows printed');
  t.match(r.stdout, /handbook's 15 features, our learner\s+0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]/, 'figures with intervals');
  t.match(r.stdout, /our learner on the 15 features matches the tuned XGBoost/);
  t.match(r.stderr, /choosing settings by prequential validation/);
  const last = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.equal(last.split, 'test');
  t.equal(last.data, csv);
  t.same(last.seeds, [], 'a CSV is one dataset, not simulator seeds');
  t.equal(last.bootstrap.level, 0.95);
  t.equal(last.bootstrap.resamples, 50);
  t.same(last.bootstrap.units, { roc_auc: 'rows', average_precision: 'rows', card_precision_at_100: 'cards' });
  t.equal(last.selection.random_settings, 2);
  t.equal(last.selection.max_iterations, 40);
  t.equal(last.runs.length, 1);
  const run = last.runs[0];
  t.ok(run.train.rows > 0 && run.test.rows > 0 && run.test.fraud > 0);
  for (const model of ['ours', 'same_data_baseline']) {
    const m = run[model];
    t.equal(m.settings_tried, 3, `${model}: the service's defaults and 2 random settings`);
    t.ok(m.models_compared >= m.settings_tried, `${model}: ${m.models_compared} (setting, trees) pairs`);
    t.ok(m.chosen.iterations >= 1 && m.chosen.iterations <= 40, `${model}: ${m.chosen.iterations} trees, early-stopped within 40`);
    t.type(m.chosen.validation_average_precision, 'number');
    for (const k of FIGURES) {
      const i = m[k];
      t.ok(i.low <= i.value && i.value <= i.high && i.low >= 0 && i.high <= 1, `${model}.${k}: ${i.value} in [${i.low}, ${i.high}]`);
    }
    t.equal(m.card_precision_per_day.length, 7, 'one card precision per test day');
  }
  for (const k of FIGURES) {
    const d = run.difference[k];
    t.ok(Math.abs(d.value - (run.ours[k].value - run.same_data_baseline[k].value)) < 2e-4, `difference of ${k}`);
    for (const model of ['ours', 'same_data_baseline']) {
      const s = last.summary[model][k];
      const v = run[model][k].value;
      t.same([s.mean, s.min, s.max, s.sd], [v, v, v, 0], `${model}.${k}: one run, no spread`);
    }
    t.type(last.baseline_matches_tuned_xgboost[k], 'boolean');
    t.type(last.better_than_every_published[k], 'boolean');
  }
});

t.test('--help prints the usage and exits 0', async (t) => {
  const r = cli(['--help']);
  t.equal(r.status, 0);
  t.match(r.stdout, /^usage: npm run eval:handbook/);
  t.match(r.stdout, /--quick/);
  t.equal(r.stderr, '');
});

t.test('an unknown option or a bad value: one line saying which, the usage, exit 2', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--bogus'], /^npm run eval:handbook: unknown option --bogus\n/],
    [['--seeds', '0'], /^npm run eval:handbook: --seeds must be a whole number ≥ 1, got "0"/],
    [['--iterations', 'many'], /^npm run eval:handbook: --iterations must be a whole number ≥ 1, got "many"/],
    [['--seed'], /^npm run eval:handbook: --seed needs a value \(N\)/],
    [['--data', 'no-such-file.csv'], /^npm run eval:handbook: --data no-such-file\.csv: no such file/],
    [['--data', 'package.json', '--seeds', '2'], /^npm run eval:handbook: --seed and --seeds choose simulator runs/],
  ];
  for (const [args, message] of cases) {
    const r = cli(args);
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, message, args.join(' '));
    t.match(r.stderr.split('\n')[1]!, /^usage: /, 'then the usage');
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
    t.equal(r.stdout, '');
  }
});
