// Parity with LightGBM without LightGBM: the shipped model's boosters, evaluated and explained by
// our engine (the service's build of the addon, which has no LightGBM in it), against the raw scores
// and predict_contrib LightGBM itself wrote for them on fixed rows (test/fixtures/golden/, written
// by `npm run golden`; src/training/golden.ts says which rows). Within 1e-9, batch and single row.
// The live comparison on freshly trained models is parity.lightgbm.test.ts (npm run test:training).

import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../src/addon/addon.ts';
import { ModelFileSchema } from '../../src/model/bundle-types.ts';
import { largestDifference as maxDiff } from '../../src/addon/lightgbm.ts';
import { sha256 } from '../../src/training/digest.ts';
import { fromJsonRows, GOLDEN_ROWS, type Golden } from '../../src/training/golden.ts';

const TOLERANCE = 1e-9;

const golden = JSON.parse(readFileSync(new URL('../fixtures/golden/builtin.json', import.meta.url), 'utf8')) as Golden;
const dir = golden.model;
const model = ModelFileSchema.parse(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')));

t.same(
  golden.boosters.map((b) => b.file),
  model.channels.map((c) => c.file),
  'one golden entry per booster of the model folder',
);

for (const b of golden.boosters) {
  t.test(`${dir}/${b.file}`, async (t) => {
    const text = readFileSync(join(dir, b.file), 'utf8');
    t.equal(sha256(text), b.sha256, `the golden answers were written for this model text (after retraining: npm run golden -- --model ${dir})`);
    const engine = loadModel(text);
    t.equal(engine.numFeatures, b.num_features);
    t.equal(b.rows.length, GOLDEN_ROWS);
    const nf = b.num_features;
    const rows = fromJsonRows(b.rows);
    t.ok(
      b.rows.flat().some((x) => x === null),
      'the rows include missing values',
    );

    const raw = engine.predictRawBatch(rows);
    t.ok(maxDiff(raw, b.raw) <= TOLERANCE, `batch raw scores (largest difference ${maxDiff(raw, b.raw)})`);
    const contrib = b.contrib.flat();
    const shap = engine.shapBatch(rows);
    t.ok(maxDiff(shap, contrib) <= TOLERANCE, `batch SHAP values (largest difference ${maxDiff(shap, contrib)})`);

    let worstRaw = 0;
    let worstShap = 0;
    for (let r = 0; r < b.rows.length; r++) {
      const row = rows.subarray(r * nf, (r + 1) * nf);
      worstRaw = Math.max(worstRaw, Math.abs(engine.predictRaw(row) - b.raw[r]!));
      worstShap = Math.max(worstShap, maxDiff(engine.shap(row), b.contrib[r]!));
    }
    t.ok(worstRaw <= TOLERANCE, `single-row raw scores (largest difference ${worstRaw})`);
    t.ok(worstShap <= TOLERANCE, `single-row SHAP values (largest difference ${worstShap})`);
    // The rows reach more than one leaf of most trees: a constant answer would not be a test.
    t.ok(new Set(b.raw).size > b.rows.length / 2, 'the rows get many different scores');
  });
}
