// Through the addon, as the service uses it: models trained by LightGBM in the test, evaluated by
// our engine and by LightGBM's own predict / predict_contrib, compared within 1e-9.

import t from 'tap';
import { loadModel } from '../../src/addon/addon.ts';
import { largestDifference as maxDiff, lightgbmReference, trainLightgbm } from '../../src/addon/lightgbm.ts';
import { syntheticMatrix } from '../../src/training/synthetic.ts';

const TOLERANCE = 1e-9;

const cases: { name: string; seed: number; features: number; categorical: number[]; params: Record<string, string | number | boolean>; iterations: number }[] =
  [
    { name: 'binary, NaN and zeros', seed: 21, features: 30, categorical: [], params: { objective: 'binary', num_leaves: 31 }, iterations: 150 },
    {
      name: 'regression, categoricals',
      seed: 22,
      features: 12,
      categorical: [0, 5],
      params: { objective: 'regression', num_leaves: 31, max_cat_to_onehot: 4 },
      iterations: 60,
    },
    {
      name: 'zero_as_missing',
      seed: 23,
      features: 10,
      categorical: [3],
      params: { objective: 'binary', num_leaves: 15, zero_as_missing: true },
      iterations: 40,
    },
    {
      name: 'depth 15',
      seed: 24,
      features: 16,
      categorical: [],
      params: { objective: 'binary', num_leaves: 300, max_depth: 15, min_data_in_leaf: 2 },
      iterations: 8,
    },
  ];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const train = syntheticMatrix({
      seed: c.seed,
      numRows: 4000,
      numFeatures: c.features,
      categorical: c.categorical,
      missingRate: 0.08,
      regression: c.params.objective === 'regression',
    });
    const text = trainLightgbm({
      rows: train.rows,
      numFeatures: c.features,
      labels: train.labels,
      params: { ...c.params, seed: c.seed },
      categorical: c.categorical,
      iterations: c.iterations,
    });
    const ours = loadModel(text);
    const theirs = lightgbmReference(text);
    t.equal(ours.numFeatures, c.features);
    t.equal(ours.numTrees, c.iterations);

    const probe = syntheticMatrix({ seed: c.seed + 1000, numRows: 3000, numFeatures: c.features, categorical: c.categorical, missingRate: 0.1 });
    const rows = probe.rows;
    t.ok(maxDiff(ours.predictRawBatch(rows), theirs.predict(rows, true)) <= TOLERANCE, 'batch raw scores match');
    t.ok(maxDiff(ours.predictBatch(rows), theirs.predict(rows, false)) <= TOLERANCE, 'batch outputs match');
    const contrib = theirs.predictContrib(rows);
    t.ok(maxDiff(ours.shapBatch(rows), contrib) <= TOLERANCE, 'batch SHAP values match');

    const nf = c.features;
    let worstRow = 0;
    let worstShap = 0;
    let worstInto = 0;
    // One output buffer reused for every row, starting with garbage: shapInto must overwrite it.
    const into = new Float64Array(nf + 1).fill(123.5);
    for (let r = 0; r < probe.numRows; r += 13) {
      const row = rows.subarray(r * nf, (r + 1) * nf);
      worstRow = Math.max(worstRow, Math.abs(ours.predictRaw(row) - theirs.predictRawSingle(row)));
      const expected = theirs.predictContribSingle(row);
      worstShap = Math.max(worstShap, maxDiff(ours.shap(row), expected));
      ours.shapInto(row, into);
      worstInto = Math.max(worstInto, maxDiff(into, expected));
    }
    t.ok(worstRow <= TOLERANCE, `single-row raw scores match (worst ${worstRow})`);
    t.ok(worstShap <= TOLERANCE, `single-row SHAP values match (worst ${worstShap})`);
    t.ok(worstInto <= TOLERANCE, `single-row SHAP into a reused buffer matches (worst ${worstInto})`);

    // Efficiency: contributions plus expected value add up to the raw score.
    const row = rows.subarray(0, nf);
    const phi = ours.shap(row);
    t.equal(phi.length, nf + 1);
    t.equal(phi[nf], ours.expectedValue);
    const sum = phi.reduce((a, b) => a + b, 0);
    t.ok(Math.abs(sum - ours.predictRaw(row)) <= 1e-9, 'SHAP values sum to the raw score');
  });
}
