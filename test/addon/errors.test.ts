// Bad models and bad rows through the addon: typed errors with stable codes, never a crash.

import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError, loadModel, loadModelFile } from '../../src/addon/addon.ts';
import * as native from '../../native/index.js';
import { tempDir } from '../support/temp.ts';

// Model files LightGBM wrote (native/examples/write_fixtures.rs), shared with the crate's own tests.
const fixture = (name: string) => readFileSync(new URL(`../../native/tests/fixtures/${name}`, import.meta.url), 'utf8');
const good = fixture('small_binary.txt');

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
  t.same(
    codeOf(() => loadModel(broken)),
    { code: 'model_malformed', line: expectedLine },
  );
  t.equal(codeOf(() => loadModel(good.slice(0, good.indexOf('end of trees') - 20))).code, 'model_malformed');
  t.equal(codeOf(() => loadModel('')).code, 'model_malformed');
});

t.test('unsupported models each have their own code', async (t) => {
  t.equal(codeOf(() => loadModel(good.replace('version=v4', 'version=v1'))).code, 'model_unsupported_version');
  t.equal(codeOf(() => loadModel(good.replace('objective=binary sigmoid:1', 'objective=poisson'))).code, 'model_unsupported_objective');
  t.equal(codeOf(() => loadModel(fixture('multiclass.txt'))).code, 'model_unsupported_multiclass');
  t.equal(codeOf(() => loadModel(fixture('linear_tree.txt'))).code, 'model_unsupported_linear_tree');
  t.equal(codeOf(() => loadModel(fixture('random_forest.txt'))).code, 'model_unsupported_average_output');
});

t.test('the service build has no LightGBM: its LightGBM calls fail with lightgbm_unavailable', async (t) => {
  for (const call of [() => native.LightGbm.fromText(good), () => native.lightgbmTrain(new Float64Array(4), 4, new Float64Array(1), '', '', 1)]) {
    try {
      call();
      t.fail('a LightGBM call answered');
    } catch (err) {
      t.equal((err as { code?: string }).code, 'lightgbm_unavailable');
      t.match((err as Error).message, /npm run build:native -- --lightgbm/, 'the message names the build that has it');
    }
  }
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
