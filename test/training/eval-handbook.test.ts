// `npm run eval:handbook -- --data FILE`: the protocol end to end on a small handbook-style CSV:
// the published rows are printed beside ours and the same-data baseline, and the last line is one
// JSON object with every figure labelled as the test split's.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { handbookCsv, simulateHandbook } from '../../src/training/handbook.ts';
import { tempDir } from '../temp.ts';

t.test('runs the protocol on a CSV and ends with JSON', async (t) => {
  const dir = tempDir('hb-');
  const csv = join(dir, 'hb.csv');
  // 140 days from 2018-04-01 reach past the protocol's test week (days 129..135).
  writeFileSync(csv, handbookCsv(simulateHandbook({ seed: 2, customers: 400, terminals: 800, days: 140 })));
  const r = spawnSync(process.execPath, ['--import=tsx', 'src/training/eval-handbook.ts', '--data', csv, '--iterations', '40'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /XGBoost, tuned \(prequential\)\s+0\.869\s+0\.687\s+0\.303/, 'published rows printed');
  t.match(r.stdout, /handbook's 15 features, same data/);
  t.match(r.stderr, /choosing settings by prequential validation/);
  const last = JSON.parse(r.stdout.trim().split('\n').pop()!);
  t.equal(last.split, 'test');
  t.equal(last.data, csv);
  t.ok(last.train.rows > 0 && last.test.rows > 0 && last.test.fraud > 0);
  for (const k of ['roc_auc', 'average_precision', 'card_precision_at_100']) {
    t.ok(last.ours[k] >= 0 && last.ours[k] <= 1, `ours.${k} = ${last.ours[k]}`);
    t.type(last.better_than_every_published[k], 'boolean');
  }
  t.equal(last.ours.card_precision_per_day.length, 7, 'one card precision per test day');
});
