// Bad models and bad rows through the addon: typed errors with stable codes, never a crash.

import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError, loadModel, loadModelFile, trainLightgbm } from '../../src/addon/addon.ts';
import { syntheticMatrix } from '../../tools/training/synthetic.ts';
import { tempDir } from '../support/temp.ts';

const data = syntheticMatrix({ seed: 5, numRows: 600, numFeatures: 4 });
const good = trainLightgbm({ rows: data.rows, numFeatures: 4, labels: data.labels, params: { objective: 'binary', num_leaves: 4 }, iterations: 3 });

function codeOf(fn: () => unknown): { code: string; line: number | undefined } {
  try {
    fn();
  } catch (err) {
    if (err instanceof EngineError) return { code: err.code, line: err.line };
    throw err;
  }
  throw new Error('no error was thrown');
}

t.test('malformed model text names the failing line', async (t) => {
  const broken = good.replace('leaf_value=', 'leaf_value=oops ');
  const expectedLine = broken.split('\n').findIndex((l) => l.startsWith('leaf_value=')) + 1;
  t.same(codeOf(() => loadModel(broken)), { code: 'model_malformed', line: expectedLine });
  t.equal(codeOf(() => loadModel(good.slice(0, good.indexOf('end of trees') - 20))).code, 'model_malformed');
  t.equal(codeOf(() => loadModel('')).code, 'model_malformed');
});

t.test('unsupported models each have their own code', async (t) => {
  t.equal(codeOf(() => loadModel(good.replace('version=v4', 'version=v1'))).code, 'model_unsupported_version');
  t.equal(codeOf(() => loadModel(good.replace('objective=binary sigmoid:1', 'objective=poisson'))).code, 'model_unsupported_objective');
  const multi = syntheticMatrix({ seed: 6, numRows: 600, numFeatures: 4 });
  multi.labels.forEach((_, i) => (multi.labels[i] = i % 3));
  const multiclass = trainLightgbm({ rows: multi.rows, numFeatures: 4, labels: multi.labels, params: { objective: 'multiclass', num_class: 3, num_leaves: 4 }, iterations: 2 });
  t.equal(codeOf(() => loadModel(multiclass)).code, 'model_unsupported_multiclass');
  const linear = trainLightgbm({ rows: data.rows, numFeatures: 4, labels: data.labels, params: { objective: 'regression', linear_tree: true, num_leaves: 4 }, iterations: 2 });
  t.equal(codeOf(() => loadModel(linear)).code, 'model_unsupported_linear_tree');
});

t.test('model files: unreadable is model_io, good loads', async (t) => {
  const dir = tempDir('engine-');
  t.equal(codeOf(() => loadModelFile(join(dir, 'missing.txt'))).code, 'model_io');
  writeFileSync(join(dir, 'model.txt'), good);
  t.equal(loadModelFile(join(dir, 'model.txt')).numFeatures, 4);
});

t.test('rows of the wrong width are invalid_input: every engine method throws typed errors, unwrapped', async (t) => {
  const engine = loadModel(good);
  t.equal(codeOf(() => engine.predictRaw(new Float64Array(3))).code, 'invalid_input');
  t.equal(codeOf(() => engine.shap(new Float64Array(5))).code, 'invalid_input');
  t.equal(codeOf(() => engine.shapInto(new Float64Array(5), new Float64Array(6))).code, 'invalid_input');
  t.equal(codeOf(() => engine.shapInto(new Float64Array(4), new Float64Array(4))).code, 'invalid_input', 'an output without room for the expected value');
  const shared = new Float64Array(9);
  t.equal(codeOf(() => engine.shapInto(shared.subarray(0, 4), shared.subarray(3, 8))).code, 'invalid_input', 'an output overlapping the row');
  t.equal(codeOf(() => engine.predictRawBatch(new Float64Array(10))).code, 'invalid_input');
  t.equal(engine.predictRawBatch(new Float64Array(0)).length, 0, 'an empty batch is fine');
});
