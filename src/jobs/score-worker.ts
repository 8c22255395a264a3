// The Piscina worker that scores one dataset (batch-score.ts). The model folder is loaded once per
// worker thread, and the native model itself once per process (the addon's registry shares one
// instance across threads). Progress goes back to the job runner through a MessagePort.

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

const bundles = new Map<string, ModelBundle>();

export default async function scoreTask(task: ScoreTask): Promise<BatchSummary> {
  let bundle = bundles.get(task.modelDir);
  if (!bundle) {
    const loaded = loadModelFolder(task.modelDir);
    if (isProblem(loaded)) throw new Error(loaded.message);
    bundles.set(task.modelDir, (bundle = loaded));
  }
  try {
    return await scoreDataset(bundle, { ...task, progress: (stage, fraction) => task.port.postMessage({ stage, fraction }) });
  } finally {
    task.port.close();
  }
}
