// A model is loaded once per process: eight Piscina workers loading the same file get the same
// copy as the main thread (same instance, one live model), so memory does not grow with workers.

import t from 'tap';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { liveModels, loadModelFile } from '../../src/addon/addon.ts';
import { tempDir } from '../support/temp.ts';

t.test('eight workers share the main thread’s copy', async (t) => {
  // One of the built-in model's boosters, copied so that no other test's load of it is shared.
  const path = join(tempDir('engine-'), 'model.txt');
  copyFileSync(new URL('../../models/builtin/behavioral.txt', import.meta.url), path);

  const main = loadModelFile(path);
  t.equal(liveModels(), 1);
  const expected = main.predictRaw(new Float64Array(main.numFeatures).fill(0.5));

  const workers = 8;
  const pool = new Piscina({ filename: new URL('../support/load-worker.ts', import.meta.url).href, minThreads: workers, maxThreads: workers });
  const barrier = new SharedArrayBuffer(4);
  try {
    const results = await Promise.all(Array.from({ length: workers }, () => pool.run({ path, barrier, workers })));
    t.equal(new Set(results.map((r) => r.threadId)).size, workers, 'each load ran on its own thread');
    for (const r of results) {
      t.ok(r.shared, `worker ${r.threadId} reused the loaded copy`);
      t.equal(r.instanceId, main.instanceId, `worker ${r.threadId} holds the same instance`);
      t.equal(r.live, 1, 'one model alive in the process');
      t.equal(r.score, expected, 'and it scores the same');
    }
  } finally {
    await pool.destroy();
  }
  t.equal(liveModels(), 1);
});
