// Piscina worker for the sharing test: waits until every worker has started (so that each task
// runs on its own thread), then loads the model file and reports what it got.

import { threadId } from 'node:worker_threads';
import { liveModels, loadModelFile } from '../../src/addon/addon.ts';

export default function load({ path, barrier, workers }: { path: string; barrier: SharedArrayBuffer; workers: number }) {
  const arrived = new Int32Array(barrier);
  Atomics.add(arrived, 0, 1);
  Atomics.notify(arrived, 0);
  while (Atomics.load(arrived, 0) < workers) Atomics.wait(arrived, 0, Atomics.load(arrived, 0), 50);
  const engine = loadModelFile(path);
  const row = new Float64Array(engine.numFeatures).fill(0.5);
  return {
    threadId,
    shared: engine.shared,
    instanceId: engine.instanceId,
    live: liveModels(),
    score: engine.predictRaw(row),
  };
}
