// The Piscina worker that scores one dataset (batch-score.ts). The model folder is loaded once per
// worker thread, and the native model itself once per process (the addon's registry shares one
// instance across threads). Progress goes back to the job runner through a MessagePort. A warm-up
// task only starts the thread and loads the model, so that a job queued soon after finds it ready.

import type { MessagePort } from 'node:worker_threads';
import { scoreDataset, type BatchSummary } from './batch-score.ts';
import { isProblem, loadModelFolder, type ModelBundle, type ModeName } from '../model/bundle.ts';
import type { ColumnMapping } from '../datasets/csv.ts';

export interface ScoreTask {
  modelDir: string;
  path: string;
  mapping: ColumnMapping;
  mode: ModeName;
  resultPath: string;
  expectedRows: number;
  port: MessagePort;
}

/** Asks the pool for a thread with the model loaded, and nothing else (JobRunner.warm). */
export interface WarmTask {
  warm: true;
  modelDir: string;
}

const bundles = new Map<string, ModelBundle>();

function bundleFor(modelDir: string): ModelBundle {
  let bundle = bundles.get(modelDir);
  if (!bundle) {
    const loaded = loadModelFolder(modelDir);
    if (isProblem(loaded)) throw new Error(loaded.message);
    bundles.set(modelDir, (bundle = loaded));
  }
  return bundle;
}

export default async function scoreTask(task: ScoreTask | WarmTask): Promise<BatchSummary | null> {
  if ('warm' in task) {
    bundleFor(task.modelDir);
    return null;
  }
  const bundle = bundleFor(task.modelDir);
  try {
    return await scoreDataset(bundle, { ...task, progress: (stage, fraction) => task.port.postMessage({ stage, fraction }) });
  } finally {
    task.port.close();
  }
}
