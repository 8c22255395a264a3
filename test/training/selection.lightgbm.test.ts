// Prequential selection: settings drawn reproducibly within the space, checkpoints within each
// setting's maximum, a model cut after k trees scores as the first k trees, early stopping picks a
// checkpoint at or below the maximum, and the same search returns the same choice, whether its
// settings are scored one after another or side by side on worker threads.

import t from 'tap';
import { loadModel } from '../../src/addon/addon.ts';
import { trainLightgbm } from '../../src/addon/lightgbm.ts';
import { sliceTrees, treeCount } from '../../src/training/partition.ts';
import { checkpointScores, checkpointsFor, DEFAULT_SPACE, drawSettings, prequentialScorer, search, type Scorer } from '../../src/training/selection.ts';
import { searchOnThreads } from '../../src/training/parallel-search.ts';
import { syntheticMatrix } from '../../src/training/synthetic.ts';

t.test('settings are drawn reproducibly and within the space', async (t) => {
  const a = drawSettings(DEFAULT_SPACE, 30, 5);
  t.same(drawSettings(DEFAULT_SPACE, 30, 5), a);
  t.notSame(drawSettings(DEFAULT_SPACE, 30, 6), a);
  for (const p of a) {
    for (const [name, d] of Object.entries(DEFAULT_SPACE)) {
      const v = p[name];
      if ('values' in d) t.ok(d.values.includes(v!), `${name} = ${v}`);
      else t.ok(typeof v === 'number' && v >= d.low && v <= d.high && (!d.integer || Number.isInteger(v)), `${name} = ${v}`);
    }
  }
});

t.test('checkpoints: ascending, up to the lower of the maximum and shrinkage / learning rate', async (t) => {
  const o = { maxIterations: 500, shrinkage: 20, checkpoints: 10 };
  t.same(checkpointsFor({ learning_rate: 0.1 }, o), [20, 40, 60, 80, 100, 120, 140, 160, 180, 200]);
  t.equal(checkpointsFor({ learning_rate: 0.02 }, o).at(-1), 500, 'capped by maxIterations');
  t.same(checkpointsFor({ learning_rate: 0.1 }, { ...o, maxIterations: 3 }), [1, 2, 3], 'never more checkpoints than trees');
});

const data = syntheticMatrix({ seed: 11, numRows: 3000, numFeatures: 6 });
const base = { objective: 'binary', seed: 3, num_threads: 1 };

t.test('a model cut after k trees scores as its first k trees, and the slices add up', async (t) => {
  const text = trainLightgbm({ rows: data.rows, numFeatures: 6, labels: data.labels, params: { ...base, num_leaves: 7 }, iterations: 30 });
  t.equal(treeCount(text), 30);
  const full = loadModel(text).predictRawBatch(data.rows);
  const [at10, at30] = checkpointScores(text, data.rows, 6, [10, 30]);
  const first10 = loadModel(sliceTrees(text, 0, 10)).predictRawBatch(data.rows);
  let worst = 0;
  for (let i = 0; i < data.numRows; i++) worst = Math.max(worst, Math.abs(at10![i]! - first10[i]!), Math.abs(at30![i]! - full[i]!));
  t.ok(worst < 1e-9, `checkpoints match the cut and the whole model (${worst})`);
  t.throws(() => sliceTrees(text, 0, 31), /not within the model's 30/);
});

t.test('the search picks the best setting and checkpoint of the scorer', async (t) => {
  // A made-up validation curve: best at 0.05 learning rate, peaking at 120 trees.
  const scorer: Scorer = (p, its) => its.map((n) => -Math.abs(Number(p.learning_rate) - 0.05) - Math.abs(n - 120) / 1000);
  const s = search(scorer, { settings: 20, seed: 2, start: [{ learning_rate: 0.05, num_leaves: 7 }], maxIterations: 400, shrinkage: 20, checkpoints: 40 });
  t.same(s.params, { learning_rate: 0.05, num_leaves: 7, bagging_freq: 1 }, 'the start setting wins');
  t.equal(s.iterations, 120);
  t.equal(s.settingsTried, 21);
  t.equal(
    s.modelsCompared,
    s.trials.reduce((n, x) => n + x.curve.length, 0),
  );
  t.ok(
    s.trials.every((x) => x.iterations <= Math.min(400, Math.ceil(20 / Number(x.params.learning_rate)))),
    'every choice within its maximum',
  );
});

t.test('prequential selection with early stopping: deterministic, a checkpoint at or below the maximum', async (t) => {
  const rows = Array.from({ length: data.numRows }, (_, i) => i);
  const folds = [
    { train: rows.slice(0, 1000), validation: rows.slice(1000, 2000) },
    { train: rows.slice(1000, 2000), validation: rows.slice(2000) },
  ];
  const input = {
    matrix: (r: readonly number[]) => {
      const out = new Float64Array(r.length * 6);
      r.forEach((i, k) => {
        out.set(data.rows.subarray(i * 6, i * 6 + 6), k * 6);
      });
      return out;
    },
    width: 6,
    labels: data.labels,
  };
  const run = () => search(prequentialScorer(input, folds, { base }), { settings: 3, seed: 4, maxIterations: 60, checkpoints: 6 });
  const a = run();
  t.same(run(), a, 'the same search, the same choice and scores');
  t.equal(a.settingsTried, 3);
  t.ok(a.iterations >= 1 && a.iterations <= 60, `${a.iterations} trees chosen of at most 60`);
  const trial = a.trials.find((x) => x.params === a.params)!;
  t.ok(
    trial.curve.some((c) => c.iterations === a.iterations && c.score === a.score),
    'the choice is one of its checkpoints',
  );
  t.ok(
    trial.curve.every((c) => c.score <= a.score),
    'and the best of them',
  );
  t.ok(a.score > 0.5, `validation AP ${a.score.toFixed(3)} above chance`);

  for (const threads of [1, 2]) {
    const parallel = await searchOnThreads(input, folds, base, { settings: 3, seed: 4, maxIterations: 60, checkpoints: 6 }, threads);
    t.same(parallel, a, `on ${threads} worker thread(s): the same trials, scores and choice`);
  }
});
