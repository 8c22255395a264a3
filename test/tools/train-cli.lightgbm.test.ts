// `npm run train --data FILE`: trains from a CSV in the dataset format and writes a model folder
// whose boosters load in the engine, whose model.json names every channel's features and whose
// metrics are labelled by split; the same command writes the same bytes.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../src/addon/addon.ts';
import { simulate, toCsv } from '../../src/domain/simulate.ts';
import { tempDir } from '../support/temp.ts';

const dir = tempDir('train-');
const csv = join(dir, 'data.csv');
writeFileSync(csv, toCsv(simulate({ seed: 5, customers: 600, merchants: 120, days: 60, rings: 2 })));

function trainInto(out: string) {
  const r = spawnSync(process.execPath, ['tools/train.ts', '--data', csv, '--out', out, '--iterations', '40', '--settings', '2', '--feature-groups'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return r;
}

t.test('writes a loadable, reproducible model folder', async (t) => {
  const a = join(dir, 'a');
  const run = trainInto(a);
  t.match(
    run.stderr,
    /features.*\n.*selection.*\n(.*selection: \d of 3 settings.*\n){3}.*feature groups.*\n.*training.*\n.*stacking/,
    'progress is shown, stage by stage and setting by setting',
  );
  const model = JSON.parse(readFileSync(join(a, 'model.json'), 'utf8'));
  t.same(
    model.channels.map((c: { name: string }) => c.name),
    ['tabular', 'behavioral', 'velocity', 'graph'],
  );
  for (const c of model.channels) {
    const engine = loadModel(readFileSync(join(a, c.file), 'utf8'));
    t.equal(engine.numFeatures, c.features.length, `${c.name} booster matches its feature list`);
  }
  const metrics = JSON.parse(readFileSync(join(a, 'metrics.json'), 'utf8'));
  t.ok(metrics.splits.validation && metrics.splits.test, 'metrics labelled by split');
  t.equal(metrics.modes.split, 'test');
  t.match(model.training.selection, { settings_tried: 3, random_settings: 2, max_iterations: 40 }, 'model.json says how many settings were tried');
  t.equal(metrics.selection.split, 'validation');
  t.equal(metrics.selection.trials.length, 3, 'metrics.json lists every setting tried');
  t.same(metrics.selection.chosen, { params: model.training.params, iterations: model.training.iterations, unused_features: model.training.unused_features });
  t.same(model.training.unused_features, metrics.selection.feature_groups.unused, 'model.json names the features its trees leave out');

  const b = join(dir, 'b');
  trainInto(b);
  for (const f of ['model.json', 'metrics.json', 'reference.json', 'tabular.txt', 'graph.txt']) {
    t.equal(readFileSync(join(b, f), 'utf8'), readFileSync(join(a, f), 'utf8'), `${f} is byte-identical`);
  }
});
